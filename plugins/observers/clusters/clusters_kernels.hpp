// SPDX-License-Identifier: BSD-3-Clause
// The clusters analysis' per-particle work, written once for both backends: functors that the
// framework's loop runs (for_each_index, pardyn/for_each.hpp: OpenMP threads on the host, a kernel
// on the GPU; clusters.cu instantiates them for the GPU). They work on the slots of the cell list
// built for `distance` (slot k: store particle cl.order[k] at cl.positions<Real>()[k]).
//
// The components come from the lock-free union-find of ../common/union_find.hpp (as ECL-CC,
// Jaiganesh & Burtscher 2018): every union hooks the larger of two roots under the smaller with a
// compare-and-swap, so a parent only ever decreases and every component's root ends as its
// smallest slot, whatever the order the threads ran in: the same roots on the CPU and the GPU, and
// from run to run.
//
// Lists of unknown length (the components of min_size, a rank's boundary particles, the pairs
// across ranks) are appended to with an atomic counter: the counter ends as the length even when
// the list had less room (then only the first `cap` entries are written and the caller runs the
// functor again with room for all: Finder::appended). Their order varies from run to run; the
// host sorts them.
#pragma once

#include <cmath>
#include <cstdint>

#include "../../common/atomic.hpp"
#include "../../common/union_find.hpp"
#include "pardyn/box.hpp"
#include "pardyn/cell_list.hpp"
#include "pardyn/core.hpp"

namespace pardyn::plugins::clusters {

// Bins of the size histogram: bin b counts the clusters of 2^b .. 2^(b+1) - 1 particles.
constexpr int kBins = 32;
PARDYN_HD inline int size_bin(std::uint32_t size) {
  int b = 0;
  while (size >>= 1) ++b;
  return b;
}

// A component: the slot of its root and its number of particles.
struct Component {
  std::uint32_t root;
  std::uint32_t size;
};

// A component as the join across ranks sees it: root slot, size, smallest particle id.
struct CompRec {
  std::uint32_t slot;
  std::uint32_t size;
  std::int64_t min_id;
};

// A particle that goes to other ranks (a parallel run's boundary): position, its component's root
// slot, its cell of the coarse grid.
struct Outgoing {
  double x[3];
  std::uint32_t root;
  std::uint32_t cell;
};

// A particle of another rank near this one's: position, that rank, its root slot there.
struct Incoming {
  double x[3];
  std::uint32_t rank;
  std::uint32_t root;
};

// Two components linked across ranks: this rank's root slot, the other rank and its root slot.
struct Edge {
  std::uint32_t own, rank, other;
};

PARDYN_HD PARDYN_INLINE bool has_bit(const std::uint64_t* words, std::size_t bit) {
  return (words[bit >> 6] >> (bit & 63)) & 1u;
}

// Whether two particles are linked: closer than the linking length (range2 = distance^2), with
// the minimum image on periodic axes, in the store's precision. The one test of every pair, on one
// rank and across ranks (symmetric: a and b may come in either order).
template <int Dim, class Real>
PARDYN_HD PARDYN_INLINE bool linked(const Real* a, const Real* b, const PeriodicImage<Real>& img,
                                    Real range2) {
  Real r2 = 0;
  for (int d = 0; d < Dim; ++d) {
    const Real dx = img.wrap(a[d] - b[d], d);
    r2 += dx * dx;
  }
  return r2 < range2;
}

struct InitParents {
  std::uint32_t* parent;
  static constexpr bool simd = true;
  PARDYN_HD void operator()(std::size_t k) const { parent[k] = std::uint32_t(k); }
};

// Slot k joins every later slot closer than the linking length, found in the 3^dim cells around
// its cell (each pair once, from its lower slot).
template <int Dim, class Real>
struct Link {
  CellList cl;
  PeriodicImage<Real> img;
  Real range2;
  std::uint32_t* parent;

  PARDYN_HD void operator()(std::size_t k) const {
    const CellParticle<Real>* pos = cl.positions<Real>();
    const CellParticle<Real> xi = pos[k];
    int c[3];
    cl.cell_coords_at<Dim>(xi.c, c);
    for_each_stencil_cell<Dim>(cl, c, 1, [&](std::size_t cell) PARDYN_INLINE_LAMBDA {
      const std::uint32_t end = cl.cell_end[cell];
      for (std::uint32_t j = cl.cell_start[cell] > k ? cl.cell_start[cell] : std::uint32_t(k + 1);
           j < end; ++j)
        if (linked<Dim>(xi.c, pos[j].c, img, range2)) unite(parent, std::uint32_t(k), j);
    });
  }
};

// Every slot's parent becomes its root. Only each slot's own parent is written, and without
// halving (a halving write could put an ancestor back over the root another thread has just
// written), so a parent read meanwhile is always an ancestor, and the root at the end.
struct Flatten {
  std::uint32_t* parent;
  PARDYN_HD void operator()(std::size_t k) const {
    atomic::store(parent + k, root_of(parent, std::uint32_t(k)));
  }
};

// Component sizes: one count per slot onto its root (size zeroed before).
struct CountSizes {
  const std::uint32_t* parent;
  std::uint32_t* size;
  PARDYN_HD void operator()(std::size_t k) const { atomic::add(size + parent[k], 1u); }
};

// One rank: each root's size into the histogram, and the component into `big` when it has at
// least min_size particles. counters (zeroed before): [0] the components of min_size,
// [1 + b] histogram bin b.
struct Select {
  const std::uint32_t* parent;
  const std::uint32_t* size;
  std::uint32_t min_size;
  Component* big;
  std::uint64_t cap;
  std::uint64_t* counters;
  PARDYN_HD void operator()(std::size_t k) const {
    if (parent[k] != k) return;
    const std::uint32_t s = size[k];
    atomic::add(counters + 1 + size_bin(s), 1);
    if (s < min_size) return;
    const std::uint64_t at = atomic::add(counters, 1);
    if (at < cap) big[at] = Component{std::uint32_t(k), s};
  }
};

template <class T>
struct Fill {
  T* p;
  T value;
  static constexpr bool simd = true;
  PARDYN_HD void operator()(std::size_t i) const { p[i] = value; }
};

// id_of_root[big[i].root] = ids[i] (id_of_root filled with -1 before).
struct ScatterIds {
  const Component* big;
  const std::int32_t* ids;
  std::int32_t* id_of_root;
  PARDYN_HD void operator()(std::size_t i) const { id_of_root[big[i].root] = ids[i]; }
};

// Each particle's cluster id, by store index.
struct Label {
  const std::uint32_t* parent;
  const std::int32_t* id_of_root;
  const std::uint32_t* order;
  std::int32_t* labels;
  PARDYN_HD void operator()(std::size_t k) const { labels[order[k]] = id_of_root[parent[k]]; }
};

// --- The join across ranks ----------------------------------------------------------------------

// A coarse grid over the particles of all ranks, of cells at least the linking length wide: two
// linked particles lie in the same or adjacent cells, whichever ranks own them.
struct CoarseGrid {
  int dim = 3;
  int n[3] = {1, 1, 1};
  double lo[3] = {0, 0, 0};
  double inv_w[3] = {0, 0, 0};
  bool periodic[3] = {false, false, false};

  PARDYN_HD std::size_t cells() const {
    return std::size_t(n[0]) * std::size_t(n[1]) * std::size_t(n[2]);
  }
  // The cell coordinate along axis d: wrapped on periodic axes, clamped elsewhere (NaN: 0).
  PARDYN_HD int coord(double x, int d) const {
    double f = (x - lo[d]) * inv_w[d];
    if (periodic[d] && !(f >= 0 && f < double(n[d]))) f -= double(n[d]) * floor(f / double(n[d]));
    f = f >= 0 ? f : 0;
    f = f <= double(n[d]) ? f : double(n[d]);
    const int c = int(f);
    return c >= n[d] ? n[d] - 1 : c;
  }
  PARDYN_HD std::size_t index(const int (&c)[3]) const {
    return (std::size_t(c[2]) * std::size_t(n[1]) + std::size_t(c[1])) * std::size_t(n[0]) +
           std::size_t(c[0]);
  }
  template <int Dim, class Real>
  PARDYN_HD std::size_t index_of(const Real* x) const {
    int c[3] = {0, 0, 0};
    for (int d = 0; d < Dim; ++d) c[d] = coord(double(x[d]), d);
    return index(c);
  }
};

// The cells of the coarse grid that this rank's particles occupy (bits, zeroed before), and the
// smallest particle id of each component (min_id, by root slot: filled with the largest int64
// before).
template <int Dim, class Real>
struct Occupy {
  const CellParticle<Real>* pos;
  CoarseGrid g;
  const std::uint32_t* parent;
  const std::uint32_t* order;
  const std::int64_t* id;  // by store index
  std::uint64_t* bits;
  std::int64_t* min_id;
  PARDYN_HD void operator()(std::size_t k) const {
    atomic::set_bit(bits, g.index_of<Dim>(pos[k].c));
    atomic::min(min_id + parent[k], id[order[k]]);
  }
};

// A particle in a `boundary` cell (one with another rank's cells around it) marks its component
// (flag, by root slot: zeroed before); one in a `send` cell (one whose neighbours of other ranks
// receive from this rank) is appended to `out`, counted by *count (zeroed before).
template <int Dim, class Real>
struct MarkBoundary {
  const CellParticle<Real>* pos;
  CoarseGrid g;
  const std::uint32_t* parent;
  const std::uint64_t* boundary;
  const std::uint64_t* send;
  std::uint32_t* flag;
  Outgoing* out;
  std::uint64_t cap;
  std::uint64_t* count;
  PARDYN_HD void operator()(std::size_t k) const {
    const std::size_t cell = g.index_of<Dim>(pos[k].c);
    if (!has_bit(boundary, cell)) return;
    const std::uint32_t root = parent[k];
    if (!atomic::load(flag + root)) atomic::store(flag + root, 1u);
    if (!has_bit(send, cell)) return;
    const std::uint64_t at = atomic::add(count, 1);
    if (at >= cap) return;
    Outgoing o{{0, 0, 0}, root, std::uint32_t(cell)};
    for (int d = 0; d < Dim; ++d) o.x[d] = double(pos[k].c[d]);
    out[at] = o;
  }
};

// The particles of this rank linked to the incoming particle i (found through this rank's cell
// list: a particle beyond its grid counts in the edge cell, which keeps every pair within reach)
// give an edge each, appended to `edges`, counted by *count (zeroed before).
template <int Dim, class Real>
struct LinkIncoming {
  CellList cl;
  PeriodicImage<Real> img;
  Real range2;
  const std::uint32_t* parent;
  const Incoming* in;
  Edge* edges;
  std::uint64_t cap;
  std::uint64_t* count;
  PARDYN_HD void operator()(std::size_t i) const {
    const CellParticle<Real>* pos = cl.positions<Real>();
    const Incoming p = in[i];
    Real x[3] = {0, 0, 0};
    for (int d = 0; d < Dim; ++d) x[d] = Real(p.x[d]);
    int c[3];
    cl.cell_coords_at<Dim>(x, c);
    for_each_stencil_cell<Dim>(cl, c, 1, [&](std::size_t cell) PARDYN_INLINE_LAMBDA {
      for (std::uint32_t j = cl.cell_start[cell]; j < cl.cell_end[cell]; ++j) {
        if (!linked<Dim>(x, pos[j].c, img, range2)) continue;
        const std::uint64_t at = atomic::add(count, 1);
        if (at < cap) edges[at] = Edge{parent[j], p.rank, p.root};
      }
    });
  }
};

// This rank's components for the join: those with a particle in a boundary cell (flag) are
// appended to `boundary`; of the others (complete on this rank), the sizes go to the histogram and
// those of min_size to `inner`. counters (zeroed before): [0] boundary, [1] inner, [2 + b] bin b.
struct Records {
  const std::uint32_t* parent;
  const std::uint32_t* size;
  const std::int64_t* min_id;
  const std::uint32_t* flag;
  std::uint32_t min_size;
  CompRec* boundary;
  std::uint64_t boundary_cap;
  CompRec* inner;
  std::uint64_t inner_cap;
  std::uint64_t* counters;
  PARDYN_HD void operator()(std::size_t k) const {
    if (parent[k] != k) return;
    const CompRec r{std::uint32_t(k), size[k], min_id[k]};
    if (flag[k]) {
      const std::uint64_t at = atomic::add(counters, 1);
      if (at < boundary_cap) boundary[at] = r;
      return;
    }
    atomic::add(counters + 2 + size_bin(r.size), 1);
    if (r.size < min_size) return;
    const std::uint64_t at = atomic::add(counters + 1, 1);
    if (at < inner_cap) inner[at] = r;
  }
};

}  // namespace pardyn::plugins::clusters
