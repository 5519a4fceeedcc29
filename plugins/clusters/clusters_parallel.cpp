// SPDX-License-Identifier: BSD-3-Clause
// clusters on several ranks: the join of the ranks' components (join_ranks, clusters.hpp). Each rank
// has found the components of its own particles; a cluster of the whole system may hold components
// of several ranks, linked by pairs of particles of different ranks closer than `distance`.
//
// 1. A coarse grid over the box, of cells at least `distance` wide (at most kMaxCells of them):
//    every rank tells the others which cells its particles occupy (a bitmap over the block of
//    cells that holds them). Two particles closer than `distance` lie in the same or adjacent
//    cells, whatever the ownership (sub-boxes, a Morton split, blocks of the ring).
// 2. A particle with a cell of another rank among its cell's 3^dim neighbours (its own included)
//    is a boundary particle, and its component a boundary component. Of each two ranks that touch
//    so, one (receiver()) receives the other's boundary particles near it: position and root slot.
// 3. The receiver tests them against its own boundary particles, in the store's precision as the
//    cell list tests its pairs: each pair closer than `distance` is an edge (own root, sender,
//    sender's root).
// 4. Rank 0 gathers the boundary components (size, smallest particle id), the edges, and, of the
//    other components (complete on their rank), the histogram of their sizes and those of
//    min_size. A union-find over the boundary components joins them; the clusters of min_size are
//    numbered by decreasing size (equal sizes: the smallest particle id first), and every rank
//    gets the ids of its own components.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "../common/messages.hpp"
#include "clusters.hpp"

namespace pardyn::plugins::clusters {

namespace {

// The coarse grid: at most this many cells (a rank's bitmap is at most 128 KiB).
constexpr std::size_t kMaxCells = std::size_t(1) << 20;

// A component as rank 0 sees it: root slot on its rank, size, smallest particle id.
struct CompRec {
  std::uint32_t slot;
  std::uint32_t size;
  std::int64_t min_id;
};
// Two components linked across ranks: the receiver's root slot, the sender's rank and root slot.
struct Edge {
  std::uint32_t own, rank, other;
  bool operator<(const Edge& e) const {
    return own != e.own ? own < e.own : rank != e.rank ? rank < e.rank : other < e.other;
  }
  bool operator==(const Edge& e) const {
    return own == e.own && rank == e.rank && other == e.other;
  }
};

// Of two ranks whose particles come within `distance`, the one that receives the other's boundary
// particles and finds the pairs: alternating, so that each rank receives from about half the
// others.
int receiver(int a, int b) {
  const int lo = std::min(a, b), hi = std::max(a, b);
  return (lo + hi) % 2 ? lo : hi;
}

// A cell's coordinates on the grid.
struct Cell {
  int c[3];
};

struct Grid {
  int dim = 3;
  int n[3] = {1, 1, 1};
  double lo[3] = {0, 0, 0};
  double inv_w[3] = {0, 0, 0};
  bool periodic[3] = {false, false, false};

  std::size_t cells() const { return std::size_t(n[0]) * std::size_t(n[1]) * std::size_t(n[2]); }
  // The cell coordinate along axis d: wrapped on periodic axes, clamped elsewhere (NaN: 0).
  int coord(double x, int d) const {
    double f = (x - lo[d]) * inv_w[d];
    if (periodic[d] && !(f >= 0 && f < double(n[d])))
      f -= double(n[d]) * std::floor(f / double(n[d]));
    f = f >= 0 ? f : 0;
    f = f <= double(n[d]) ? f : double(n[d]);
    const int c = int(f);
    return c >= n[d] ? n[d] - 1 : c;
  }
  Cell cell_of(const HostParticles& hp, std::size_t i) const {
    Cell c{{0, 0, 0}};
    for (int d = 0; d < dim; ++d) c.c[d] = coord(hp.x[d][i], d);
    return c;
  }
  std::size_t index(const int (&c)[3]) const {
    return (std::size_t(c[2]) * std::size_t(n[1]) + std::size_t(c[1])) * std::size_t(n[0]) +
           std::size_t(c[0]);
  }
  // Calls f(cell coordinates) for the cell c and its neighbours, each once (a periodic axis of
  // fewer than 3 cells: all of its cells).
  template <class F>
  void for_each_neighbour(const int (&c)[3], F&& f) const {
    int a[3] = {0, 0, 0}, b[3] = {0, 0, 0};
    for (int d = 0; d < dim; ++d) {
      if (periodic[d] && n[d] < 3) {
        a[d] = 0, b[d] = n[d] - 1;
      } else if (periodic[d]) {
        a[d] = c[d] - 1, b[d] = c[d] + 1;
      } else {
        a[d] = std::max(c[d] - 1, 0), b[d] = std::min(c[d] + 1, n[d] - 1);
      }
    }
    auto wrap = [&](int v, int d) { return v < 0 ? v + n[d] : (v >= n[d] ? v - n[d] : v); };
    for (int k2 = a[2]; k2 <= b[2]; ++k2)
      for (int k1 = a[1]; k1 <= b[1]; ++k1)
        for (int k0 = a[0]; k0 <= b[0]; ++k0) {
          const int w[3] = {wrap(k0, 0), wrap(k1, 1), wrap(k2, 2)};
          f(w);
        }
  }
};

// The grid over the box (periodic axes) or over all ranks' particles (other axes). Collective.
Grid make_grid(Comm& comm, const Box& box, int dim, double distance, const HostParticles& hp,
               std::size_t n) {
  Grid g;
  g.dim = dim;
  double ext[6];
  for (int d = 0; d < dim; ++d) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (std::size_t i = 0; i < n; ++i) {
      lo = std::min(lo, hp.x[d][i]);
      hi = std::max(hi, hp.x[d][i]);
    }
    ext[2 * d] = -lo;
    ext[2 * d + 1] = hi;
  }
  comm.max(ext, std::size_t(2 * dim));
  // Cells a little wider than `distance`, so that rounding cannot put a pair two cells apart.
  const double w = 1.001 * distance;
  double len[3] = {0, 0, 0};
  for (int d = 0; d < dim; ++d) {
    g.periodic[d] = box.boundary[d] == Boundary::Periodic;
    g.lo[d] = g.periodic[d] ? box.lo[d] : -ext[2 * d];
    len[d] = g.periodic[d] ? box.length(d) : ext[2 * d + 1] + ext[2 * d];
    if (!(len[d] > 0) || !std::isfinite(len[d])) len[d] = 0, g.lo[d] = 0;
    g.n[d] = int(std::clamp(std::floor(len[d] / w), 1.0, double(kMaxCells)));
  }
  while (g.cells() > kMaxCells) {
    const double s = std::pow(double(g.cells()) / double(kMaxCells), 1.0 / dim);
    for (int d = 0; d < dim; ++d) g.n[d] = std::max(1, int(double(g.n[d]) / s));
    if (g.cells() > kMaxCells) --*std::max_element(g.n, g.n + dim);
  }
  for (int d = 0; d < dim; ++d) g.inv_w[d] = len[d] > 0 ? double(g.n[d]) / len[d] : 0.0;
  return g;
}

// The cells one rank's particles occupy: a bitmap over the block of cells that holds them, along
// each axis the cells lo, lo + 1, ..., lo + len - 1, wrapped on periodic axes (the shortest arc
// that holds the rank's cells there: a sub-box at a periodic face whose particles stray across it
// keeps a narrow block).
struct Occupancy {
  int lo[3] = {0, 0, 0}, len[3] = {0, 1, 1};  // empty: len[0] == 0
  int n[3] = {1, 1, 1};                       // the grid's cells per axis
  bool periodic[3] = {false, false, false};
  std::vector<std::uint64_t> bits;

  Occupancy() = default;
  explicit Occupancy(const Grid& g) {
    for (int d = 0; d < 3; ++d) n[d] = g.n[d], periodic[d] = g.periodic[d];
  }
  bool empty() const { return len[0] == 0; }
  std::size_t extent(int d) const { return std::size_t(len[d]); }
  std::size_t size() const { return empty() ? 0 : extent(0) * extent(1) * extent(2); }
  // Coordinate c's place along axis d of the block (outside: < 0 or >= len[d]).
  int offset(int c, int d) const {
    const int o = c - lo[d];
    return periodic[d] && o < 0 ? o + n[d] : o;
  }
  // The coordinate of place l along axis d.
  int coordinate(int l, int d) const {
    const int c = lo[d] + l;
    return c >= n[d] ? c - n[d] : c;
  }
  bool inside_axis(int c, int d) const {
    const int o = offset(c, d);
    return o >= 0 && o < len[d];
  }
  bool has(const int (&c)[3]) const {
    int o[3];
    for (int d = 0; d < 3; ++d) {
      o[d] = offset(c[d], d);
      if (o[d] < 0 || o[d] >= len[d]) return false;
    }
    const std::size_t k =
        (std::size_t(o[2]) * extent(1) + std::size_t(o[1])) * extent(0) + std::size_t(o[0]);
    return (bits[k >> 6] >> (k & 63)) & 1u;
  }
  std::size_t local(const int (&c)[3]) const {
    return (std::size_t(offset(c[2], 2)) * extent(1) + std::size_t(offset(c[1], 1))) * extent(0) +
           std::size_t(offset(c[0], 0));
  }
};

// The block along axis d that holds the coordinates marked in `used` (n of them): from the
// smallest to the largest, or on a periodic axis the complement of the widest gap between them.
void block_axis(const std::vector<char>& used, bool periodic, int& lo, int& len) {
  const int n = int(used.size());
  int first = -1, last = -1, gap = 0, gap_end = 0, run = 0;
  for (int c = 0; c < n; ++c) {
    if (!used[std::size_t(c)]) {
      ++run;
      continue;
    }
    if (first < 0) first = c;
    if (run > gap && first != c) gap = run, gap_end = c;
    last = c, run = 0;
  }
  lo = first, len = last - first + 1;
  const int around = first + (n - 1 - last);  // the gap across the periodic face
  if (periodic && gap > around) lo = gap_end, len = n - gap;
}

Occupancy occupancy(const Grid& g, const std::vector<Cell>& cells) {
  Occupancy o(g);
  if (cells.empty()) return o;
  for (int d = 0; d < 3; ++d) {
    std::vector<char> used(std::size_t(g.n[d]), 0);
    for (const Cell& c : cells) used[std::size_t(c.c[d])] = 1;
    block_axis(used, g.periodic[d], o.lo[d], o.len[d]);
  }
  o.bits.assign((o.size() + 63) / 64, 0);
  for (const Cell& c : cells) {
    const std::size_t b = o.local(c.c);
    o.bits[b >> 6] |= std::uint64_t(1) << (b & 63);
  }
  return o;
}

// Every rank's occupancy, on every rank (the same message to all: an allgather). Collective.
std::vector<Occupancy> exchange_occupancy(Comm& comm, const Grid& g, Occupancy mine) {
  Out out;
  out.put(mine.lo, 3);
  out.put(mine.len, 3);
  out.put(mine.bits.data(), mine.bits.size());
  const auto got = allgather(comm, out.take());
  std::vector<Occupancy> all(got.size(), Occupancy(g));
  for (std::size_t r = 0; r < got.size(); ++r) {
    if (int(r) == comm.rank()) {
      all[r] = std::move(mine);
      continue;
    }
    In in(got[r], "clusters");
    in.get(all[r].lo, 3);
    in.get(all[r].len, 3);
    all[r].bits.resize((all[r].size() + 63) / 64);
    in.get(all[r].bits.data(), all[r].bits.size());
  }
  return all;
}

// The other ranks each of this rank's occupied cells neighbours: for the cell of local index k in
// this rank's block, ranks[first[k] .. first[k + 1]).
struct Targets {
  std::vector<std::uint32_t> first;
  std::vector<int> ranks;
};

// A rank whose block meets this rank's cells' neighbourhoods, and per axis d, for each place l
// along this rank's block, whether the cells around coordinate own.coordinate(l, d) meet that
// rank's block along d (axis[d][l]): most cells of a sub-box are far from the others and are
// skipped without looking at any bits.
struct Near {
  int rank;
  std::vector<char> axis[3];
};

std::vector<Near> near_ranks(const Grid& g, const std::vector<Occupancy>& occ, int me) {
  const Occupancy& own = occ[std::size_t(me)];
  std::vector<Near> near;
  for (int r = 0; r < int(occ.size()); ++r) {
    const Occupancy& o = occ[std::size_t(r)];
    if (r == me || o.empty() || own.empty()) continue;
    Near m{r, {}};
    bool meets = true;
    for (int d = 0; d < 3; ++d) {
      bool any = false;
      for (int l = 0; l < own.len[d]; ++l) {
        const int c = own.coordinate(l, d);
        bool hit = d >= g.dim || (g.periodic[d] && g.n[d] < 3);
        for (int s = -1; s <= 1 && !hit; ++s) {
          int w = c + s;
          if (g.periodic[d]) w = w < 0 ? w + g.n[d] : (w >= g.n[d] ? w - g.n[d] : w);
          hit = w >= 0 && w < g.n[d] && o.inside_axis(w, d);
        }
        m.axis[d].push_back(hit);
        any = any || hit;
      }
      meets = meets && any;
    }
    if (meets) near.push_back(std::move(m));
  }
  return near;
}

// The ranks near the occupied cell at places l of this rank's block, onto t.ranks.
void add_targets(const Grid& g, const std::vector<Occupancy>& occ, const std::vector<Near>& near,
                 const Occupancy& own, const std::size_t (&l)[3], Targets& t) {
  const int c[3] = {own.coordinate(int(l[0]), 0), own.coordinate(int(l[1]), 1),
                    own.coordinate(int(l[2]), 2)};
  for (const Near& m : near) {
    if (!m.axis[0][l[0]] || !m.axis[1][l[1]] || !m.axis[2][l[2]]) continue;
    const Occupancy& o = occ[std::size_t(m.rank)];
    bool touches = false;
    g.for_each_neighbour(c, [&](const int(&w)[3]) { touches = touches || o.has(w); });
    if (touches) t.ranks.push_back(m.rank);
  }
}

Targets targets(const Grid& g, const std::vector<Occupancy>& occ, int me) {
  const Occupancy& own = occ[std::size_t(me)];
  const std::vector<Near> near = near_ranks(g, occ, me);
  Targets t;
  t.first.assign(own.size() + 1, 0);
  std::size_t k = 0, l[3];
  for (l[2] = 0; l[2] < own.extent(2); ++l[2])
    for (l[1] = 0; l[1] < own.extent(1); ++l[1])
      for (l[0] = 0; l[0] < own.extent(0); ++l[0], ++k) {
        t.first[k] = std::uint32_t(t.ranks.size());
        if ((own.bits[k >> 6] >> (k & 63)) & 1u) add_targets(g, occ, near, own, l, t);
      }
  t.first[own.size()] = std::uint32_t(t.ranks.size());
  return t;
}

// This rank's components: size and smallest particle id by root slot; which are boundary ones.
struct Local {
  std::vector<std::uint32_t> size;
  std::vector<std::int64_t> min_id;
  std::vector<char> boundary;
  std::vector<CompRec> boundary_comps;   // the boundary components, by slot
  std::vector<CompRec> inner_big;        // the others (complete on this rank) of min_size
  std::uint64_t inner_hist[kBins] = {};  // the sizes of the others
};

void local_components(const HostParticles& hp, const std::vector<std::uint32_t>& root,
                      const std::vector<char>& is_boundary, std::uint32_t min_size, Local& l) {
  const std::size_t n = root.size();
  l.size.assign(n, 0);
  l.min_id.assign(n, std::numeric_limits<std::int64_t>::max());
  l.boundary.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t r = root[i];
    ++l.size[r];
    l.min_id[r] = std::min(l.min_id[r], hp.id[i]);
    if (is_boundary[i]) l.boundary[r] = 1;
  }
  for (std::uint32_t k = 0; k < n; ++k) {
    if (!l.size[k]) continue;  // not a root
    const CompRec c{k, l.size[k], l.min_id[k]};
    if (l.boundary[k]) {
      l.boundary_comps.push_back(c);
    } else {
      ++l.inner_hist[size_bin(c.size)];
      if (c.size >= min_size) l.inner_big.push_back(c);
    }
  }
}

// Sends this rank's boundary particles to the ranks that receive them (position, root slot);
// returns what this rank receives. Collective. local: each particle's cell, by its index in this
// rank's block.
std::vector<std::vector<char>> send_boundary(Comm& comm, const Grid& g, const Targets& t,
                                             const HostParticles& hp,
                                             const std::vector<std::uint32_t>& root,
                                             const std::vector<std::uint32_t>& local) {
  const int me = comm.rank();
  std::vector<Out> out(std::size_t(comm.size()));
  for (std::size_t i = 0; i < root.size(); ++i) {
    const std::uint32_t k = local[i];
    for (std::uint32_t m = t.first[k]; m < t.first[k + 1]; ++m) {
      const int r = t.ranks[m];
      if (receiver(me, r) != r) continue;
      for (int d = 0; d < g.dim; ++d) out[std::size_t(r)].put(hp.x[d][i]);
      out[std::size_t(r)].put(root[i]);
    }
  }
  std::vector<std::vector<char>> send(out.size());
  for (std::size_t r = 0; r < out.size(); ++r) send[r] = out[r].take();
  return comm.alltoallv(std::move(send));
}

// The pairs closer than `distance` between the received particles and this rank's boundary
// particles, in precision Real, with the minimum image on periodic axes (the cell list's test).
template <class Real>
std::vector<Edge> link(const Grid& g, const Box& box, double distance, const HostParticles& hp,
                       const std::vector<std::uint32_t>& root,
                       const std::vector<std::pair<std::uint32_t, std::uint32_t>>& by_cell,
                       const std::vector<std::vector<char>>& got) {
  const PeriodicImage<Real> img = PeriodicImage<Real>::make(box);
  const Real range2 = Real(distance * distance);
  std::vector<Edge> edges;
  for (std::size_t a = 0; a < got.size(); ++a) {
    In in(got[a], "clusters");
    while (!in.done()) {
      double x[3] = {0, 0, 0};
      in.get(x, std::size_t(g.dim));
      const auto other = in.get<std::uint32_t>();
      int c[3] = {0, 0, 0};
      for (int d = 0; d < g.dim; ++d) c[d] = g.coord(x[d], d);
      g.for_each_neighbour(c, [&](const int(&w)[3]) {
        const std::uint32_t cell = std::uint32_t(g.index(w));
        auto it = std::lower_bound(by_cell.begin(), by_cell.end(), std::make_pair(cell, 0u));
        for (; it != by_cell.end() && it->first == cell; ++it) {
          Real r2 = 0;
          for (int d = 0; d < g.dim; ++d) {
            const Real dx = img.wrap(Real(hp.x[d][it->second]) - Real(x[d]), d);
            r2 += dx * dx;
          }
          if (r2 < range2) edges.push_back(Edge{root[it->second], std::uint32_t(a), other});
        }
      });
    }
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  return edges;
}

// What rank 0 numbers the clusters from: every rank's summary.
struct Summary {
  std::uint64_t n = 0;
  std::uint64_t hist[kBins] = {};
  std::vector<CompRec> boundary_comps, inner_big;
  std::vector<Edge> edges;
};

std::vector<char> pack_summary(std::size_t n, const Local& l, const std::vector<Edge>& edges) {
  Out out;
  out.put(std::uint64_t(n));
  out.put(l.inner_hist, kBins);
  out.put(std::uint64_t(l.boundary_comps.size()));
  out.put(std::uint64_t(l.inner_big.size()));
  out.put(std::uint64_t(edges.size()));
  out.put(l.boundary_comps.data(), l.boundary_comps.size());
  out.put(l.inner_big.data(), l.inner_big.size());
  out.put(edges.data(), edges.size());
  return out.take();
}

Summary unpack_summary(const std::vector<char>& bytes) {
  In in(bytes, "clusters");
  Summary s;
  s.n = in.get<std::uint64_t>();
  in.get(s.hist, kBins);
  s.boundary_comps.resize(std::size_t(in.get<std::uint64_t>()));
  s.inner_big.resize(std::size_t(in.get<std::uint64_t>()));
  s.edges.resize(std::size_t(in.get<std::uint64_t>()));
  in.get(s.boundary_comps.data(), s.boundary_comps.size());
  in.get(s.inner_big.data(), s.inner_big.size());
  in.get(s.edges.data(), s.edges.size());
  return s;
}

// Rank 0: the union-find over all ranks' boundary components (indexed rank by rank, each rank's in
// slot order) joined by the edges. Returns each one's set (its root index).
std::vector<std::uint32_t> join_edges(const std::vector<Summary>& all,
                                      const std::vector<std::size_t>& offset) {
  std::vector<std::uint32_t> parent(offset.back());
  std::iota(parent.begin(), parent.end(), 0u);
  auto root = [&](std::uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  auto index = [&](std::size_t r, std::uint32_t slot) {
    const auto& c = all[r].boundary_comps;
    const auto it = std::lower_bound(c.begin(), c.end(), slot,
                                     [](const CompRec& a, std::uint32_t s) { return a.slot < s; });
    if (it == c.end() || it->slot != slot)
      throw Error("clusters: rank " + std::to_string(r) +
                  " sent a particle of a component it did not report (internal error)");
    return std::uint32_t(offset[r] + std::size_t(it - c.begin()));
  };
  for (std::size_t r = 0; r < all.size(); ++r)
    for (const Edge& e : all[r].edges) {
      std::uint32_t a = root(index(r, e.own)), b = root(index(e.rank, e.other));
      if (a == b) continue;
      if (a < b) std::swap(a, b);
      parent[a] = b;
    }
  for (std::uint32_t k = 0; k < parent.size(); ++k) parent[k] = root(k);
  return parent;
}

// A cluster of min_size on rank 0: size, smallest particle id, and what it is (< boundary count:
// a set of joined boundary components, by root index; else boundary count + the index of a
// component complete on its rank among all ranks' inner_big).
struct Candidate {
  std::uint64_t size;
  std::int64_t min_id;
  std::size_t ref;
};

// Rank 0: numbers the clusters and makes every rank's answer (the totals, then the ids of its
// boundary components and of its inner_big, -1 for those in no cluster of min_size).
std::vector<std::vector<char>> number_clusters(const std::vector<Summary>& all,
                                               std::uint32_t min_size, Joined& out) {
  std::vector<std::size_t> offset(all.size() + 1, 0), inner(all.size() + 1, 0);
  for (std::size_t r = 0; r < all.size(); ++r) {
    offset[r + 1] = offset[r] + all[r].boundary_comps.size();
    inner[r + 1] = inner[r] + all[r].inner_big.size();
    out.n += all[r].n;
    for (int b = 0; b < kBins; ++b) out.hist[b] += all[r].hist[b];
  }
  const std::vector<std::uint32_t> set = join_edges(all, offset);
  const std::size_t m = offset.back();
  std::vector<std::uint64_t> size(m, 0);
  std::vector<std::int64_t> min_id(m, std::numeric_limits<std::int64_t>::max());
  for (std::size_t r = 0; r < all.size(); ++r)
    for (std::size_t k = 0; k < all[r].boundary_comps.size(); ++k) {
      const CompRec& c = all[r].boundary_comps[k];
      const std::uint32_t s = set[offset[r] + k];
      size[s] += c.size;
      min_id[s] = std::min(min_id[s], c.min_id);
    }
  std::vector<Candidate> cand;
  for (std::size_t k = 0; k < m; ++k)
    if (set[k] == k) {
      ++out.hist[size_bin(std::uint32_t(size[k]))];
      if (size[k] >= min_size) cand.push_back(Candidate{size[k], min_id[k], k});
    }
  for (std::size_t r = 0; r < all.size(); ++r)
    for (std::size_t k = 0; k < all[r].inner_big.size(); ++k)
      cand.push_back(
          Candidate{all[r].inner_big[k].size, all[r].inner_big[k].min_id, m + inner[r] + k});
  std::sort(cand.begin(), cand.end(), [](const Candidate& a, const Candidate& b) {
    return a.size != b.size ? a.size > b.size : a.min_id < b.min_id;
  });
  std::vector<std::int32_t> id(m + inner.back(), -1);
  for (std::size_t c = 0; c < cand.size(); ++c) {
    id[cand[c].ref] = std::int32_t(c);
    out.clustered += cand[c].size;
  }
  out.n_clusters = cand.size();
  out.largest = cand.empty() ? 0 : cand[0].size;
  std::vector<std::vector<char>> answer(all.size());
  for (std::size_t r = 0; r < all.size(); ++r) {
    Out o;
    const std::uint64_t totals[4] = {out.n, out.n_clusters, out.largest, out.clustered};
    o.put(totals, 4);
    for (std::size_t k = 0; k < all[r].boundary_comps.size(); ++k) o.put(id[set[offset[r] + k]]);
    o.put(id.data() + m + inner[r], all[r].inner_big.size());
    answer[r] = o.take();
  }
  return answer;
}

// Every rank: the answer of rank 0 into `out` (totals; big and id_of_big by root slot).
void read_answer(const std::vector<char>& bytes, const Local& l, Joined& out) {
  In in(bytes, "clusters");
  std::uint64_t totals[4];
  in.get(totals, 4);
  out.n = totals[0], out.n_clusters = totals[1], out.largest = totals[2], out.clustered = totals[3];
  for (const auto* list : {&l.boundary_comps, &l.inner_big})
    for (const CompRec& c : *list) {
      const auto id = in.get<std::int32_t>();
      if (id < 0) continue;
      out.big.push_back(Component{c.slot, c.size});
      out.id_of_big.push_back(id);
    }
}

}  // namespace

void join_ranks(Comm& comm, const Box& box, Precision precision, double distance,
                std::uint32_t min_size, const HostParticles& hp,
                const std::vector<std::uint32_t>& root_of_index, Joined& out) {
  out = Joined();
  const std::size_t n = root_of_index.size();
  const Grid g = make_grid(comm, box, hp.dim, distance, hp, n);
  std::vector<Cell> cells(n);
  for (std::size_t i = 0; i < n; ++i) cells[i] = g.cell_of(hp, i);
  const std::vector<Occupancy> occ = exchange_occupancy(comm, g, occupancy(g, cells));
  const Occupancy& own = occ[std::size_t(comm.rank())];
  const Targets t = targets(g, occ, comm.rank());
  // Boundary particles: those with another rank's cell among their neighbours, sorted by cell.
  std::vector<std::uint32_t> local(n);
  std::vector<char> is_boundary(n, 0);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> by_cell;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t k = local[i] = std::uint32_t(own.local(cells[i].c));
    if (t.first[k] == t.first[k + 1]) continue;
    is_boundary[i] = 1;
    by_cell.emplace_back(std::uint32_t(g.index(cells[i].c)), std::uint32_t(i));
  }
  std::sort(by_cell.begin(), by_cell.end());
  const auto got = send_boundary(comm, g, t, hp, root_of_index, local);
  const std::vector<Edge> edges =
      precision == Precision::Float
          ? link<float>(g, box, distance, hp, root_of_index, by_cell, got)
          : link<double>(g, box, distance, hp, root_of_index, by_cell, got);
  Local l;
  local_components(hp, root_of_index, is_boundary, min_size, l);
  const auto summaries = comm.gather(pack_summary(n, l, edges));
  std::vector<std::vector<char>> answer(std::size_t(comm.size()));
  if (comm.rank() == 0) {
    std::vector<Summary> all;
    for (const auto& s : summaries) all.push_back(unpack_summary(s));
    answer = number_clusters(all, min_size, out);
  }
  const auto back = comm.alltoallv(std::move(answer));
  read_answer(back[0], l, out);
}

}  // namespace pardyn::plugins::clusters
