// SPDX-License-Identifier: BSD-3-Clause
// Internal to libpardyn: what one rank's tree sends another in a parallel run with a tree term
// (locally essential trees; tree_exchange.hpp), computed where the tree lives. Every step is a
// per-node (or per-index) functor run by the loop of the tree's backend (for_each_index), so the
// CPU and the GPU run the same code; tree_let_cuda.cu instantiates the GPU loops.
//
//   - A rank's *region*: the top of its tree as at most kRegionBoxes boxes, nodes split largest
//     (by opening radius) first; leaves are boxes around their nodes' particles, inner boxes the
//     union of their children's. Stored in depth-first pre-order with a skip index, so that the
//     test "does some leaf box lie within r of c" walks it without a stack (RegionBox).
//   - The *sources* a tree sends the rank of a region: a node whose opening sphere (centre of mass,
//     radius sqrt(rcrit2)) misses every box of the region would be accepted by every target there,
//     so it travels as pseudo-particles (quadrupole trees: 2 dim points along the principal axes of
//     its second moments, or its particles when it has at most 2 dim; monopole trees: its
//     descendants two levels down, or its particles where it ends sooner); an opened leaf travels
//     particle by particle. Nodes are classified level by level from the root (a node below an
//     accepted one or a leaf is covered), counted, scanned and packed in node order: the same
//     sources on any backend and thread count.
//   - What travels: (dim + 2) reals per source in the run's precision (position, mass, type).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "pardyn/for_each.hpp"
#include "pardyn/particles.hpp"
#include "pardyn/tree.hpp"
#include "store_ops.hpp"

namespace pardyn::parallel {

constexpr int kRegionBoxes = 4096;

struct RegionBox {
  double centre[3] = {0, 0, 0}, half[3] = {0, 0, 0};  // in 2D the third coordinates are 0
  std::int32_t skip = 0;                              // the box after this one's subtree
  std::int32_t leaf = 0;                              // 1: the particles of one tree node
};

// A rank's region: boxes [0, count) in depth-first pre-order (count 0: no particles).
struct Region {
  std::int32_t count = 0;
  std::int32_t pad = 0;
  RegionBox box[kRegionBoxes];
};

namespace let {

// Node states of a classification against one region.
constexpr std::uint8_t kCovered = 0, kAccepted = 1, kOpenLeaf = 2, kOpened = 3;

// Particles per chunk when the region's leaf boxes are measured.
constexpr int kChunk = 256;

// Whether some leaf box of the region may hold a particle within sqrt(r2) of c: the walk's own
// distance (tree_detail::box_dist2, the test of a group's box), in 3D (in 2D the third
// coordinates are all 0).
PARDYN_HD PARDYN_INLINE bool near(const RegionBox* b, int count, const double* c, double r2) {
  int k = 0;
  while (k < count) {
    if (tree_detail::box_dist2<3>(c, b[k].centre, b[k].half) > r2) k = b[k].skip;
    else if (b[k].leaf) return true;
    else ++k;
  }
  return false;
}

// Eigenvalues and unit eigenvectors (columns of v) of the symmetric 3x3 matrix a (Jacobi).
PARDYN_HD PARDYN_INLINE void eigen3(double (&a)[3][3], double (&lambda)[3], double (&v)[3][3]) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) v[i][j] = i == j ? 1.0 : 0.0;
  for (int sweep = 0; sweep < 50; ++sweep) {
    const double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
    const double diag = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
    if (off <= 1e-30 * diag || off == 0) break;
    for (int p = 0; p < 2; ++p)
      for (int r = p + 1; r < 3; ++r) {
        if (a[p][r] == 0) continue;
        const double theta = (a[r][r] - a[p][p]) / (2 * a[p][r]);
        const double t =
            (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < 3; ++k) {  // a = J^T a J
          const double akp = a[k][p], akr = a[k][r];
          a[k][p] = c * akp - s * akr;
          a[k][r] = s * akp + c * akr;
        }
        for (int k = 0; k < 3; ++k) {
          const double apk = a[p][k], ark = a[r][k];
          a[p][k] = c * apk - s * ark;
          a[r][k] = s * apk + c * ark;
        }
        for (int k = 0; k < 3; ++k) {
          const double vkp = v[k][p], vkr = v[k][r];
          v[k][p] = c * vkp - s * vkr;
          v[k][r] = s * vkp + c * vkr;
        }
      }
  }
  for (int i = 0; i < 3; ++i) lambda[i] = a[i][i];
}

// The sources node i sends in state `state` (kAccepted or kOpenLeaf; none otherwise), to
// out(x, m, type) in the order they travel (x: 3 coordinates, 0 beyond Dim). Monopole trees send
// an accepted node's descendants two levels down: the receiving tree groups the pseudo-particles,
// and a single point hides the extent of the node it stands for (measured, 2D log, theta 0.6: the
// node itself gave 1.5x one rank's RMS force error on 2 ranks, its descendants 1.3x on 3).
template <class Real, int Dim, class Out>
PARDYN_HD PARDYN_INLINE void node_sources(const TreeView<Real, Dim>& t, std::uint8_t state, int i,
                                          Out&& out) {
  auto particles = [&](const TreeLinks& l) {
    for (std::int32_t j = l.begin; j < l.end; ++j) {
      const Real* s = t.src + 4 * std::size_t(j);
      const double x[3] = {double(s[0]), double(s[1]), double(s[2])};
      out(x, double(s[3]), t.type[j]);
    }
  };
  auto point = [&](int node) {
    const Real* c = t.com + 4 * std::size_t(node);
    const double x[3] = {double(c[0]), double(c[1]), double(c[2])};
    out(x, double(c[3]), 0);
  };
  const TreeLinks l = t.links[i];
  if (state == kOpenLeaf) return particles(l);
  if (state != kAccepted) return;
  if (!t.quad) {
    if (l.nchild == 0) return particles(l);
    for (std::int32_t a = l.child; a < l.child + l.nchild; ++a) {
      const TreeLinks la = t.links[a];
      if (la.nchild == 0) {
        particles(la);
        continue;
      }
      for (std::int32_t b = la.child; b < la.child + la.nchild; ++b) {
        const TreeLinks lb = t.links[b];
        if (lb.nchild == 0) particles(lb);
        else point(b);
      }
    }
    return;
  }
  // A node of at most 2 dim particles: those, exact and no more points.
  if (l.end - l.begin <= 2 * Dim) return particles(l);
  const Real* c = t.com + 4 * std::size_t(i);
  const double M = double(c[3]);
  if (!(M != 0)) return;
  // 2 dim points at the centre of mass +- sqrt(dim lambda_k / M) along the principal axes: the
  // node's mass, centre of mass and second moments, and no dipole or octupole.
  constexpr int NQ = kQuadTerms<Dim>;
  const Real* q = t.quad + NQ * std::size_t(i);
  double a[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, lambda[3] = {0, 0, 0}, v[3][3];
  if constexpr (Dim == 3) {
    a[0][0] = q[0], a[1][1] = q[1], a[2][2] = q[2];
    a[0][1] = a[1][0] = q[3], a[0][2] = a[2][0] = q[4], a[1][2] = a[2][1] = q[5];
  } else {
    a[0][0] = q[0], a[1][1] = q[1], a[0][1] = a[1][0] = q[2];
  }
  eigen3(a, lambda, v);
  const double m = M / (2 * Dim);
  for (int k = 0; k < Dim; ++k) {
    const double lk = Dim * lambda[k] / M;
    const double r = std::sqrt(lk > 0 ? lk : 0.0);
    for (int s = -1; s <= 1; s += 2) {
      double x[3];
      for (int d = 0; d < 3; ++d) x[d] = double(c[d]) + s * r * v[d][k];
      out(x, m, 0);
    }
  }
}

// How many sources node_sources() gives, without computing them.
template <class Real, int Dim>
PARDYN_HD PARDYN_INLINE std::int64_t node_source_count(const TreeView<Real, Dim>& t,
                                                       std::uint8_t state, int i) {
  const TreeLinks l = t.links[i];
  if (state == kOpenLeaf) return l.end - l.begin;
  if (state != kAccepted) return 0;
  if (t.quad) {
    if (l.end - l.begin <= 2 * Dim) return l.end - l.begin;
    return t.com[4 * std::size_t(i) + 3] != Real(0) ? 2 * Dim : 0;
  }
  if (l.nchild == 0) return l.end - l.begin;
  std::int64_t n = 0;
  for (std::int32_t a = l.child; a < l.child + l.nchild; ++a) {
    const TreeLinks la = t.links[a];
    if (la.nchild == 0) {
      n += la.end - la.begin;
      continue;
    }
    for (std::int32_t b = la.child; b < la.child + la.nchild; ++b) {
      const TreeLinks lb = t.links[b];
      n += lb.nchild == 0 ? lb.end - lb.begin : 1;
    }
  }
  return n;
}

// --- The functors (for_each_index) ---------------------------------------------------------------

// The region's selection: links and opening radii of nodes ids[k].
template <class Real, int Dim>
struct GatherNodes {
  TreeView<Real, Dim> t;
  const std::int32_t* ids;
  TreeLinks* links;
  double* rcrit2;
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t k) const {
    const std::int32_t i = ids[k];
    links[k] = t.links[i];
    rcrit2[k] = double(t.rcrit2[i]);
  }
};

// The bounding box (lo[3], hi[3]) of chunk c of the region's leaves: leaf L covers the particles
// [begin[L], end[L]) in chunks [first[L], first[L + 1]) of kChunk particles.
template <class Real, int Dim>
struct ChunkBoxes {
  TreeView<Real, Dim> t;
  const std::int32_t* begin;
  const std::int32_t* end;
  const std::int32_t* first;  // leaves + 1 entries
  int leaves;
  double* out;  // 6 per chunk
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t c) const {
    int lo = 0, hi = leaves;  // the last leaf with first[leaf] <= c
    while (hi - lo > 1) {
      const int m = (lo + hi) / 2;
      if (std::size_t(first[m]) <= c) lo = m;
      else hi = m;
    }
    const std::int32_t b = begin[lo] + std::int32_t(c - std::size_t(first[lo])) * kChunk;
    const std::int32_t e = b + kChunk < end[lo] ? b + kChunk : end[lo];
    double* o = out + 6 * c;
    for (int d = 0; d < 3; ++d) o[d] = o[3 + d] = 0;
    for (int d = 0; d < Dim; ++d) {
      double l = double(t.src[4 * std::size_t(b) + d]), h = l;
      for (std::int32_t j = b + 1; j < e; ++j) {
        const double x = double(t.src[4 * std::size_t(j) + d]);
        l = x < l ? x : l;
        h = x > h ? x : h;
      }
      o[d] = l;
      o[3 + d] = h;
    }
  }
};

// Leaf L's box from its chunks' boxes.
struct LeafBoxes {
  const double* chunks;
  const std::int32_t* first;
  int dim;
  double* out;  // 6 per leaf
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t leaf) const {
    double* o = out + 6 * leaf;
    const double* c0 = chunks + 6 * std::size_t(first[leaf]);
    for (int d = 0; d < 6; ++d) o[d] = c0[d];
    for (std::int32_t c = first[leaf] + 1; c < first[leaf + 1]; ++c)
      for (int d = 0; d < dim; ++d) {
        const double* b = chunks + 6 * std::size_t(c);
        o[d] = b[d] < o[d] ? b[d] : o[d];
        o[3 + d] = b[3 + d] > o[3 + d] ? b[3 + d] : o[3 + d];
      }
  }
};

// One level of the classification: the children of the nodes [first, first + n) of the level
// above get their states (with `root`, node 0 alone).
template <class Real, int Dim>
struct Classify {
  TreeView<Real, Dim> t;
  const RegionBox* region;
  int count;
  std::uint8_t* state;
  std::int32_t first;
  bool root;
  PARDYN_HD PARDYN_INLINE std::uint8_t of(std::int32_t i) const {
    const Real* c = t.com + 4 * std::size_t(i);
    const double x[3] = {double(c[0]), double(c[1]), double(c[2])};
    if (!near(region, count, x, double(t.rcrit2[i]))) return kAccepted;
    return t.links[i].nchild == 0 ? kOpenLeaf : kOpened;
  }
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t k) const {
    if (root) {
      state[0] = of(0);
      return;
    }
    const std::int32_t p = first + std::int32_t(k);
    const TreeLinks l = t.links[p];
    const bool open = state[p] == kOpened;
    for (std::int32_t c = l.child; c < l.child + l.nchild; ++c) state[c] = open ? of(c) : kCovered;
  }
};

template <class Real, int Dim>
struct CountSources {
  TreeView<Real, Dim> t;
  const std::uint8_t* state;
  std::int64_t* count;
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t i) const {
    count[i] = node_source_count(t, state[i], int(i));
  }
};

// Node i's sources at offset[i] of out, (Dim + 2) reals each: position, mass, type.
template <class Real, int Dim>
struct PackSources {
  TreeView<Real, Dim> t;
  const std::uint8_t* state;
  const std::int64_t* offset;
  Real* out;
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t i) const {
    const std::uint8_t s = state[i];
    if (s != kAccepted && s != kOpenLeaf) return;
    Real* o = out + std::size_t(offset[i]) * (Dim + 2);
    node_sources(t, s, int(i), [&](const double* x, double m, std::int32_t type) {
      for (int d = 0; d < Dim; ++d) o[d] = Real(x[d]);
      o[Dim] = Real(m);
      o[Dim + 1] = Real(type);
      o += Dim + 2;
    });
  }
};

// Sources (as PackSources writes them) into particles [at, at + n) of p: positions, masses, types,
// ids -1.
template <class Real, int Dim>
struct UnpackSources {
  ParticleView<Real, Dim> p;
  std::size_t at;
  const Real* in;
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t k) const {
    const Real* r = in + k * (Dim + 2);
    const std::size_t i = at + k;
    for (int d = 0; d < Dim; ++d) p.x[d][i] = r[d];
    p.mass[i] = r[Dim];
    p.type[i] = std::int32_t(r[Dim + 1]);
    p.id[i] = -1;
  }
};

}  // namespace let

// The steps above with their scratch, on the backend where the tree lives.
class TreeLet {
 public:
  TreeLet();
  ~TreeLet();
  TreeLet(const TreeLet&) = delete;
  TreeLet& operator=(const TreeLet&) = delete;

  // This rank's region, from the top of t: downloads the links and opening radii of the tree's
  // top levels in one copy (and of region nodes below them one copy per level) and the boxes of
  // the region's leaves.
  void region(const Tree& t, Region& out);
  // The sources t sends the rank of region r: their number; pack() then writes them to `out`
  // ((dim + 2) reals each in t's precision, t's backend memory), until the next count().
  std::size_t count(const Tree& t, const Region& r);
  void pack(const Tree& t, void* out);

 private:
  struct Node;
  std::vector<Node> select(const Tree& t);
  std::vector<std::array<double, 6>> boxes(const Tree& t, const std::vector<Node>& rn);

  Stage ids_, nodes_, radii_, leaves_, chunks_, boxes_, region_, state_, counts_, offsets_;
  std::vector<TreeLinks> top_links_;  // select(): the tree's top levels
  std::vector<double> top_radii_;
  std::size_t counted_ = 0;  // nodes classified by the last count()
};

// Writes m sources (as pack() writes them, backend memory) into the store at [at, at + m).
void unpack_sources(ParticleStore& to, std::size_t at, const void* in, std::size_t m);

}  // namespace pardyn::parallel

// The GPU loops of the functors above, for tree_let_cuda.cu.
#define PARDYN_TREE_LET_FUNCTORS_RD(X, T) \
  X(T<float, 2>) X(T<float, 3>) X(T<double, 2>) X(T<double, 3>)
#define PARDYN_TREE_LET_FUNCTORS(X)                                      \
  PARDYN_TREE_LET_FUNCTORS_RD(X, ::pardyn::parallel::let::GatherNodes)   \
  PARDYN_TREE_LET_FUNCTORS_RD(X, ::pardyn::parallel::let::ChunkBoxes)    \
  PARDYN_TREE_LET_FUNCTORS_RD(X, ::pardyn::parallel::let::Classify)      \
  PARDYN_TREE_LET_FUNCTORS_RD(X, ::pardyn::parallel::let::CountSources)  \
  PARDYN_TREE_LET_FUNCTORS_RD(X, ::pardyn::parallel::let::PackSources)   \
  PARDYN_TREE_LET_FUNCTORS_RD(X, ::pardyn::parallel::let::UnpackSources) \
  X(::pardyn::parallel::let::LeafBoxes)
