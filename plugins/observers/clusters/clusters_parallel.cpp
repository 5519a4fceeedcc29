// SPDX-License-Identifier: BSD-3-Clause
// clusters on several ranks: the join of the ranks' components (join_ranks, clusters.hpp). Each rank
// has found the components of its own particles (Finder::find); a cluster of the whole system may
// hold components of several ranks, linked by pairs of particles of different ranks closer than
// `distance`. The per-particle steps run on each rank's backend (the Finder's, on the GPU for CUDA
// runs); what comes to the host and travels between the ranks is per cell of a coarse grid, per
// boundary particle or per component, never per particle of the rank.
//
// 1. A coarse grid over the box, of cells at least `distance` wide (at most kMaxCells of them):
//    every rank finds the cells its particles occupy (a bitmap over the grid, on its backend) and
//    tells the others (a bitmap over the block of cells that holds them). Two particles closer than
//    `distance` lie in the same or adjacent cells, whatever the ownership (sub-boxes, a Morton
//    split, blocks of the ring).
// 2. A particle with a cell of another rank among its cell's 3^dim neighbours (its own included)
//    is a boundary particle, and its component a boundary component. Of each two ranks that touch
//    so, one (receiver()) receives the other's boundary particles near it: position and root slot.
// 3. The receiver tests them against its own particles on its backend (through its cell list, with
//    the test of the pairs on one rank): each pair closer than `distance` is an edge (own root,
//    sender, sender's root).
// 4. Rank 0 gathers the boundary components (size, smallest particle id), the edges, and, of the
//    other components (complete on their rank), the histogram of their sizes and those of
//    min_size. A union-find over the boundary components joins them; the clusters of min_size are
//    numbered by decreasing size (equal sizes: the smallest particle id first), and every rank
//    gets the ids of its own components. Each rank sends its complete components already in that
//    order (sorted on every rank at once), so rank 0 merges sorted lists instead of sorting them
//    all (measured, 10^8 particles on 4 GPUs: rank 0's numbering took two thirds of an analysis).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>

#include "../../common/messages.hpp"
#include "../../common/union_find.hpp"
#include "clusters.hpp"

namespace pardyn::plugins::clusters {

namespace {

// The coarse grid: at most this many cells (a rank's bitmap is at most 128 KiB).
constexpr std::size_t kMaxCells = std::size_t(1) << 20;

bool edge_less(const Edge& a, const Edge& b) {
  return a.own != b.own ? a.own < b.own : a.rank != b.rank ? a.rank < b.rank : a.other < b.other;
}
bool same_edge(const Edge& a, const Edge& b) {
  return a.own == b.own && a.rank == b.rank && a.other == b.other;
}

// Of two ranks whose particles come within `distance`, the one that receives the other's boundary
// particles and finds the pairs: alternating, so that each rank receives from about half the
// others.
int receiver(int a, int b) {
  const int lo = std::min(a, b), hi = std::max(a, b);
  return (lo + hi) % 2 ? lo : hi;
}

// Calls f(cell coordinates) for the cell c of g and its neighbours, each once (a periodic axis of
// fewer than 3 cells: all of its cells).
template <class F>
void for_each_neighbour(const CoarseGrid& g, const int (&c)[3], F&& f) {
  int a[3] = {0, 0, 0}, b[3] = {0, 0, 0};
  for (int d = 0; d < g.dim; ++d) {
    if (g.periodic[d] && g.n[d] < 3) {
      a[d] = 0, b[d] = g.n[d] - 1;
    } else if (g.periodic[d]) {
      a[d] = c[d] - 1, b[d] = c[d] + 1;
    } else {
      a[d] = std::max(c[d] - 1, 0), b[d] = std::min(c[d] + 1, g.n[d] - 1);
    }
  }
  auto wrap = [&](int v, int d) { return v < 0 ? v + g.n[d] : (v >= g.n[d] ? v - g.n[d] : v); };
  for (int k2 = a[2]; k2 <= b[2]; ++k2)
    for (int k1 = a[1]; k1 <= b[1]; ++k1)
      for (int k0 = a[0]; k0 <= b[0]; ++k0) {
        const int w[3] = {wrap(k0, 0), wrap(k1, 1), wrap(k2, 2)};
        f(w);
      }
}

// The coordinates of the cell of index k.
void coords_of(const CoarseGrid& g, std::size_t k, int (&c)[3]) {
  c[0] = int(k % std::size_t(g.n[0]));
  c[1] = int(k / std::size_t(g.n[0]) % std::size_t(g.n[1]));
  c[2] = int(k / (std::size_t(g.n[0]) * std::size_t(g.n[1])));
}

// The grid over the box (periodic axes) or over the cell lists of all ranks (other axes: the box
// on walled axes, the particles' extent on open ones). Collective.
CoarseGrid make_grid(Comm& comm, const Box& box, int dim, double distance, const Finder* f) {
  CoarseGrid g;
  g.dim = dim;
  double ext[6];
  for (int d = 0; d < dim; ++d) {
    ext[2 * d] = ext[2 * d + 1] = -std::numeric_limits<double>::infinity();
    if (!f) continue;
    const CellList& cl = f->list();
    ext[2 * d] = -cl.origin[d];
    ext[2 * d + 1] = cl.origin[d] + double(cl.cells[d]) * cl.width[d];
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
  explicit Occupancy(const CoarseGrid& g) {
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

// Calls f(c, k) for every cell set in `cells` (a bitmap over the whole grid, x fastest): c its
// coordinates, k its index (none: `cells` empty). Row by row, a word at a time.
template <class F>
void for_each_set_cell(const CoarseGrid& g, const std::vector<std::uint64_t>& cells, F&& f) {
  if (cells.empty()) return;
  const std::size_t n0 = std::size_t(g.n[0]);
  std::size_t begin = 0;
  for (int c2 = 0; c2 < g.n[2]; ++c2)
    for (int c1 = 0; c1 < g.n[1]; ++c1, begin += n0) {
      const std::size_t end = begin + n0, first = begin >> 6, last = (end - 1) >> 6;
      for (std::size_t w = first; w <= last; ++w) {
        std::uint64_t b = cells[w];
        if (w == first) b &= ~std::uint64_t(0) << (begin & 63);
        if (w == last && (end & 63)) b &= (std::uint64_t(1) << (end & 63)) - 1;
        for (; b; b &= b - 1) {
          const std::size_t k = w * 64 + std::size_t(__builtin_ctzll(b));
          const int c[3] = {int(k - begin), c1, c2};
          f(c, k);
        }
      }
    }
}

// The occupancy of the cells set in `cells` (a bitmap over the whole grid).
Occupancy occupancy(const CoarseGrid& g, const std::vector<std::uint64_t>& cells) {
  Occupancy o(g);
  std::vector<char> used[3];
  for (int d = 0; d < 3; ++d) used[d].assign(std::size_t(g.n[d]), 0);
  bool any = false;
  for_each_set_cell(g, cells, [&](const int(&c)[3], std::size_t) {
    for (int d = 0; d < 3; ++d) used[d][std::size_t(c[d])] = 1;
    any = true;
  });
  if (!any) return o;
  for (int d = 0; d < 3; ++d) block_axis(used[d], g.periodic[d], o.lo[d], o.len[d]);
  o.bits.assign((o.size() + 63) / 64, 0);
  for_each_set_cell(g, cells, [&](const int(&c)[3], std::size_t) {
    const std::size_t b = o.local(c);
    o.bits[b >> 6] |= std::uint64_t(1) << (b & 63);
  });
  return o;
}

// Every rank's occupancy, on every rank (the same message to all: an allgather). Collective.
std::vector<Occupancy> exchange_occupancy(Comm& comm, const CoarseGrid& g, Occupancy mine) {
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

std::vector<Near> near_ranks(const CoarseGrid& g, const std::vector<Occupancy>& occ, int me) {
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
void add_targets(const CoarseGrid& g, const std::vector<Occupancy>& occ,
                 const std::vector<Near>& near, const Occupancy& own, const std::size_t (&l)[3],
                 Targets& t) {
  const int c[3] = {own.coordinate(int(l[0]), 0), own.coordinate(int(l[1]), 1),
                    own.coordinate(int(l[2]), 2)};
  for (const Near& m : near) {
    if (!m.axis[0][l[0]] || !m.axis[1][l[1]] || !m.axis[2][l[2]]) continue;
    const Occupancy& o = occ[std::size_t(m.rank)];
    bool touches = false;
    for_each_neighbour(g, c, [&](const int(&w)[3]) { touches = touches || o.has(w); });
    if (touches) t.ranks.push_back(m.rank);
  }
}

Targets targets(const CoarseGrid& g, const std::vector<Occupancy>& occ, int me) {
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

// This rank's components as rank 0 needs them (Finder::components).
struct Local {
  std::vector<CompRec> boundary_comps;   // the boundary components, by slot
  std::vector<CompRec> inner_big;        // the others (complete on this rank) of min_size, in the
                                         // clusters' order (numbered_before)
  std::uint64_t inner_hist[kBins] = {};  // the sizes of the others
};

// The cells of this rank's block that have another rank's cells around them (boundary), and those
// of them whose particles go to another rank (send: that rank is the pair's receiver()), as
// bitmaps over the whole grid.
void boundary_cells(const CoarseGrid& g, const Occupancy& own, const Targets& t, int me,
                    std::vector<std::uint64_t>& boundary, std::vector<std::uint64_t>& send) {
  const std::size_t words = (g.cells() + 63) / 64;
  boundary.assign(words, 0);
  send.assign(words, 0);
  std::size_t k = 0;
  int l[3];
  for (l[2] = 0; l[2] < own.len[2]; ++l[2])
    for (l[1] = 0; l[1] < own.len[1]; ++l[1])
      for (l[0] = 0; l[0] < own.len[0]; ++l[0], ++k) {
        if (t.first[k] == t.first[k + 1]) continue;
        const int c[3] = {own.coordinate(l[0], 0), own.coordinate(l[1], 1),
                          own.coordinate(l[2], 2)};
        const std::size_t cell = g.index(c);
        const std::uint64_t bit = std::uint64_t(1) << (cell & 63);
        boundary[cell >> 6] |= bit;
        for (std::uint32_t m = t.first[k]; m < t.first[k + 1]; ++m)
          if (receiver(me, t.ranks[std::size_t(m)]) == t.ranks[std::size_t(m)])
            send[cell >> 6] |= bit;
      }
}

// Sends this rank's boundary particles in send cells to the ranks that receive them (position,
// root slot); returns what this rank receives and adds what it sent to `sent`. Collective.
std::vector<Incoming> send_boundary(Comm& comm, const CoarseGrid& g, const Occupancy& own,
                                    const Targets& t, const std::vector<Outgoing>& outgoing,
                                    std::uint64_t& sent) {
  const int me = comm.rank();
  std::vector<Out> out(std::size_t(comm.size()));
  for (const Outgoing& o : outgoing) {
    int c[3];
    coords_of(g, o.cell, c);
    const std::size_t k = own.local(c);
    for (std::uint32_t m = t.first[k]; m < t.first[k + 1]; ++m) {
      const int r = t.ranks[m];
      if (receiver(me, r) != r) continue;
      out[std::size_t(r)].put(o.x, std::size_t(g.dim));
      out[std::size_t(r)].put(o.root);
    }
  }
  std::vector<std::vector<char>> send(out.size());
  for (std::size_t r = 0; r < out.size(); ++r) {
    send[r] = out[r].take();
    if (int(r) != me) sent += send[r].size();
  }
  const auto got = comm.alltoallv(std::move(send));
  std::vector<Incoming> in;
  for (std::size_t a = 0; a < got.size(); ++a) {
    In msg(got[a], "clusters");
    while (!msg.done()) {
      Incoming p{{0, 0, 0}, std::uint32_t(a), 0};
      msg.get(p.x, std::size_t(g.dim));
      p.root = msg.get<std::uint32_t>();
      in.push_back(p);
    }
  }
  return in;
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

// Rank 0: the union-find (../common/union_find.hpp, the one the Finder's functors use) over all
// ranks' boundary components (indexed rank by rank, each rank's in slot order) joined by the edges.
// Returns each one's set (its root index: the smallest index of the set).
std::vector<std::uint32_t> join_edges(const std::vector<Summary>& all,
                                      const std::vector<std::size_t>& offset) {
  std::vector<std::uint32_t> parent(offset.back());
  std::iota(parent.begin(), parent.end(), 0u);
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
    for (const Edge& e : all[r].edges)
      unite(parent.data(), index(r, e.own), index(e.rank, e.other));
  flatten(parent.data(), parent.size());
  return parent;
}

// The order in which the clusters are numbered: larger first, equal sizes by smallest particle id.
bool numbered_before(std::uint64_t size_a, std::int64_t id_a, std::uint64_t size_b,
                     std::int64_t id_b) {
  return size_a != size_b ? size_a > size_b : id_a < id_b;
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
  // The joined boundary clusters, sorted here; every rank's complete ones came sorted: a merge of
  // these lists (a heap of their heads) numbers them all.
  std::vector<Candidate> joined;
  for (std::size_t k = 0; k < m; ++k)
    if (set[k] == k) {
      ++out.hist[size_bin(std::uint32_t(size[k]))];
      if (size[k] >= min_size) joined.push_back(Candidate{size[k], min_id[k], k});
    }
  const auto before = [](const Candidate& a, const Candidate& b) {
    return numbered_before(a.size, a.min_id, b.size, b.min_id);
  };
  std::sort(joined.begin(), joined.end(), before);
  const std::size_t lists = all.size() + 1;  // every rank's complete clusters, then the joined
  auto head = [&](std::size_t list, std::size_t k) {
    if (list == all.size()) return joined[k];
    const CompRec& c = all[list].inner_big[k];
    return Candidate{c.size, c.min_id, m + inner[list] + k};
  };
  auto length = [&](std::size_t list) {
    return list == all.size() ? joined.size() : all[list].inner_big.size();
  };
  struct Head {
    Candidate c;
    std::size_t list, k;
  };
  const auto later = [&](const Head& a, const Head& b) { return before(b.c, a.c); };
  std::priority_queue<Head, std::vector<Head>, decltype(later)> heads(later);
  for (std::size_t list = 0; list < lists; ++list)
    if (length(list)) heads.push(Head{head(list, 0), list, 0});
  std::vector<std::int32_t> id(m + inner.back(), -1);
  std::size_t numbered = 0;
  while (!heads.empty()) {
    const Head h = heads.top();
    heads.pop();
    if (numbered == 0) out.largest = h.c.size;
    id[h.c.ref] = std::int32_t(numbered++);
    out.clustered += h.c.size;
    if (h.k + 1 < length(h.list)) heads.push(Head{head(h.list, h.k + 1), h.list, h.k + 1});
  }
  out.n_clusters = numbered;
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

void join_ranks(Comm& comm, const Box& box, int dim, double distance, std::uint32_t min_size,
                Finder* finder, Joined& out, JoinStats* stats) {
  JoinStats none;
  JoinStats& st = stats ? *stats : none;
  out = Joined();
  const std::size_t n = finder ? finder->list().n : 0;
  const CoarseGrid g = make_grid(comm, box, dim, distance, finder);
  st.lap(JoinStats::kGrid, finder);
  std::vector<std::uint64_t> cells;
  if (finder) finder->occupy(g, cells);
  Occupancy mine = occupancy(g, cells);
  st.lap(JoinStats::kOccupy, finder);
  st.sent += mine.bits.size() * sizeof(std::uint64_t) * std::size_t(comm.size() - 1);
  const std::vector<Occupancy> occ = exchange_occupancy(comm, g, std::move(mine));
  const Occupancy& own = occ[std::size_t(comm.rank())];
  const Targets t = targets(g, occ, comm.rank());
  std::vector<std::uint64_t> boundary, send;
  boundary_cells(g, own, t, comm.rank(), boundary, send);
  st.lap(JoinStats::kExchange, finder);
  std::vector<Outgoing> outgoing;
  if (finder) finder->boundary(g, boundary, send, outgoing);
  st.lap(JoinStats::kBoundary, finder);
  const std::vector<Incoming> incoming = send_boundary(comm, g, own, t, outgoing, st.sent);
  st.lap(JoinStats::kExchange, finder);
  std::vector<Edge> edges;
  if (finder) finder->link(incoming, edges);
  std::sort(edges.begin(), edges.end(), edge_less);
  edges.erase(std::unique(edges.begin(), edges.end(), same_edge), edges.end());
  st.lap(JoinStats::kLink, finder);
  Local l;
  if (finder) finder->components(min_size, l.boundary_comps, l.inner_big, l.inner_hist);
  const auto by_slot = [](const CompRec& a, const CompRec& b) { return a.slot < b.slot; };
  std::sort(l.boundary_comps.begin(), l.boundary_comps.end(), by_slot);
  std::sort(l.inner_big.begin(), l.inner_big.end(), [](const CompRec& a, const CompRec& b) {
    return numbered_before(a.size, a.min_id, b.size, b.min_id);
  });
  st.lap(JoinStats::kComponents, finder);
  std::vector<char> summary = pack_summary(n, l, edges);
  if (comm.rank()) st.sent += summary.size();
  const auto summaries = comm.gather(summary);
  std::vector<std::vector<char>> answer(std::size_t(comm.size()));
  if (comm.rank() == 0) {
    std::vector<Summary> all;
    for (const auto& s : summaries) all.push_back(unpack_summary(s));
    answer = number_clusters(all, min_size, out);
    for (std::size_t r = 1; r < answer.size(); ++r) st.sent += answer[r].size();
  }
  const auto back = comm.alltoallv(std::move(answer));
  read_answer(back[0], l, out);
  st.lap(JoinStats::kNumber, finder);
}

}  // namespace pardyn::plugins::clusters
