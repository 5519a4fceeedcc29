// SPDX-License-Identifier: BSD-3-Clause
// Internal to libpardyn: the tree's build steps that the CPU engine (tree.cpp) and the GPU engine
// (tree_cuda.cu) share: Morton keys, the split of a node's particle range into its children, and a
// node's multipoles. Plain structs and host/device functions; the engines only supply the loops
// (OpenMP or kernels).
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>

#include "pardyn/core.hpp"
#include "pardyn/particles.hpp"
#include "pardyn/tree.hpp"

namespace pardyn::tree_build {

// The engines behind TreeBuilder: one per backend. build() rebuilds everything from the store's
// current positions and fills `out` (pointers into the engine's memory, valid until the next
// build).
class TreeEngine {
 public:
  virtual ~TreeEngine() = default;
  virtual void build(const ParticleStore& s, const TreeOptions& p, Tree& out) = 0;
};
// The dispatch of an engine whose build_impl<Real, Dim>(view, options, out) serves every precision
// and dimension.
template <class Engine>
class TypedEngine : public TreeEngine {
 public:
  void build(const ParticleStore& s, const TreeOptions& p, Tree& out) override {
    visit(s, [&](auto view) {
      using View = decltype(view);
      static_cast<Engine*>(this)->template build_impl<typename View::real, View::dim>(view, p, out);
    });
  }
};
std::unique_ptr<TreeEngine> make_cpu_engine();
// tree_cuda.cu; in a build without CUDA, cuda_stub.cpp's stand-in says that this pardyn has no GPU.
std::unique_ptr<TreeEngine> make_cuda_engine();

// What a build of n particles starts from: the tree's kind and options (with no particles, the
// finished empty tree).
template <class Real, int Dim>
Tree tree_header(std::size_t n, Backend backend, const TreeOptions& opt) {
  if (n > std::size_t(0x7fffffff))
    throw Error("scheme \"tree\" handles at most 2^31 - 1 particles");
  Tree t;
  t.dim = Dim;
  t.precision = sizeof(Real) == 4 ? Precision::Float : Precision::Double;
  t.backend = backend;
  t.n = std::int32_t(n);
  t.theta = opt.theta;
  t.quadrupole = opt.quadrupole;
  t.leaf_size = opt.leaf_size;
  t.built = n == 0;
  return t;
}

// Bits of a key per axis: 21 in 3D (63-bit keys), 31 in 2D (62-bit keys). The finest cell is the
// bounding cube / 2^B: two particles closer than that share a key and end in one leaf.
template <int Dim>
constexpr int kBits = Dim == 3 ? 21 : 31;

// The bounding cube the keys refer to.
struct Frame {
  double lo[3] = {0, 0, 0};
  double side = 1;
  double theta = 0.5;
  double short_range = 0;
};

PARDYN_HD PARDYN_INLINE std::uint64_t spread3(std::uint64_t v) {
  v &= 0x1fffff;
  v = (v | v << 32) & 0x1f00000000ffffULL;
  v = (v | v << 16) & 0x1f0000ff0000ffULL;
  v = (v | v << 8) & 0x100f00f00f00f00fULL;
  v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
  v = (v | v << 2) & 0x1249249249249249ULL;
  return v;
}
PARDYN_HD PARDYN_INLINE std::uint64_t compact3(std::uint64_t v) {
  v &= 0x1249249249249249ULL;
  v = (v ^ (v >> 2)) & 0x10c30c30c30c30c3ULL;
  v = (v ^ (v >> 4)) & 0x100f00f00f00f00fULL;
  v = (v ^ (v >> 8)) & 0x1f0000ff0000ffULL;
  v = (v ^ (v >> 16)) & 0x1f00000000ffffULL;
  v = (v ^ (v >> 32)) & 0x1fffffULL;
  return v;
}
PARDYN_HD PARDYN_INLINE std::uint64_t spread2(std::uint64_t v) {
  v &= 0xffffffffULL;
  v = (v | v << 16) & 0x0000ffff0000ffffULL;
  v = (v | v << 8) & 0x00ff00ff00ff00ffULL;
  v = (v | v << 4) & 0x0f0f0f0f0f0f0f0fULL;
  v = (v | v << 2) & 0x3333333333333333ULL;
  v = (v | v << 1) & 0x5555555555555555ULL;
  return v;
}
PARDYN_HD PARDYN_INLINE std::uint64_t compact2(std::uint64_t v) {
  v &= 0x5555555555555555ULL;
  v = (v ^ (v >> 1)) & 0x3333333333333333ULL;
  v = (v ^ (v >> 2)) & 0x0f0f0f0f0f0f0f0fULL;
  v = (v ^ (v >> 4)) & 0x00ff00ff00ff00ffULL;
  v = (v ^ (v >> 8)) & 0x0000ffff0000ffffULL;
  v = (v ^ (v >> 16)) & 0x00000000ffffffffULL;
  return v;
}

// The key of a point: its cell coordinates at the finest level, interleaved (x in the lowest bit).
template <int Dim>
PARDYN_HD PARDYN_INLINE std::uint64_t morton(const double (&x)[3], const Frame& f) {
  constexpr double cells = double(1ULL << kBits<Dim>);
  const double scale = cells / f.side;
  std::uint64_t q[3] = {0, 0, 0};
  for (int d = 0; d < Dim; ++d) {
    double c = (x[d] - f.lo[d]) * scale;
    c = c < 0 ? 0 : (c > cells - 1 ? cells - 1 : c);
    q[d] = std::uint64_t(c);
  }
  if constexpr (Dim == 3) return spread3(q[0]) | spread3(q[1]) << 1 | spread3(q[2]) << 2;
  else return spread2(q[0]) | spread2(q[1]) << 1;
}

PARDYN_HD PARDYN_INLINE int clz64(std::uint64_t v) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(v));
#else
  return v ? __builtin_clzll(v) : 64;
#endif
}

// The depth of the smallest cell holding keys[b..e) (sorted): the number of leading digits
// (Dim bits each) that the first and the last key share; kBits when all keys are equal.
template <int Dim>
PARDYN_HD PARDYN_INLINE int common_depth(const std::uint64_t* keys, int b, int e) {
  const std::uint64_t x = keys[b] ^ keys[e - 1];
  if (x == 0) return kBits<Dim>;
  const int high = 63 - clz64(x);  // highest differing bit
  return (Dim * kBits<Dim> - 1 - high) / Dim;
}

// Splits the sorted range keys[b..e) of a cell at `depth` into its non-empty children (by the next
// digit). Writes the ranges' starts to first[0..count) (the end of each is the next start, the last
// ends at e) and returns their number (at least 2 when the keys differ).
template <int Dim>
PARDYN_HD PARDYN_INLINE int split(const std::uint64_t* keys, int b, int e, int depth,
                                  int (&first)[1 << Dim]) {
  const int shift = Dim * (kBits<Dim> - depth - 1);
  const std::uint64_t prefix = (keys[b] >> (shift + Dim)) << (shift + Dim);
  int count = 0;
  int lo = b;
  for (int v = 0; v < (1 << Dim); ++v) {
    // first index in [lo, e) with key >= prefix | (v + 1) << shift: the end of child v
    int hi = e;
    if (v + 1 < (1 << Dim)) {
      const std::uint64_t limit = prefix | (std::uint64_t(v + 1) << shift);
      int l = lo, h = e;
      while (l < h) {
        const int m = (l + h) >> 1;
        if (keys[m] < limit) l = m + 1;
        else h = m;
      }
      hi = l;
    }
    if (hi > lo) first[count++] = lo;
    lo = hi;
  }
  return count;
}

// Number of children a node gets: 0 makes it a leaf (at most leaf_size particles, or all in one
// finest cell).
template <int Dim>
PARDYN_HD PARDYN_INLINE int plan(const std::uint64_t* keys, const TreeLinks& lk, int leaf_size,
                                 int& depth) {
  depth = common_depth<Dim>(keys, lk.begin, lk.end);
  if (lk.end - lk.begin <= leaf_size || depth >= kBits<Dim>) return 0;
  int first[1 << Dim];
  return split<Dim>(keys, lk.begin, lk.end, depth, first);
}

// Writes the children of node `node` (planned with `count` > 0) at nodes [child, child + count).
template <int Dim>
PARDYN_HD PARDYN_INLINE void emit(const std::uint64_t* keys, TreeLinks* links, int node, int depth,
                                  int child) {
  TreeLinks lk = links[node];
  int first[1 << Dim];
  const int count = split<Dim>(keys, lk.begin, lk.end, depth, first);
  for (int c = 0; c < count; ++c) {
    TreeLinks k;
    k.child = 0;
    k.nchild = 0;
    k.begin = first[c];
    k.end = c + 1 < count ? first[c + 1] : lk.end;
    links[child + c] = k;
  }
  lk.child = child;
  lk.nchild = count;
  links[node] = lk;
}

// The walk groups that node `node` starts (TreeGroup in tree.hpp): a node of more than kTreeGroup
// particles packs runs of its children that have at most kTreeGroup together; an oversized leaf
// (coincident particles) is cut into pieces; a small root is one group. Returns their number and,
// with `out`, writes them there.
PARDYN_HD PARDYN_INLINE int node_groups(const TreeLinks* links, int node, TreeGroup* out) {
  constexpr int G = kTreeGroup;
  const TreeLinks lk = links[node];
  int g = 0;
  auto add = [&](int b, int e) {
    if (out) out[g] = TreeGroup{b, e};
    ++g;
  };
  if (lk.end - lk.begin <= G) {
    if (node == 0) add(lk.begin, lk.end);
    return g;
  }
  if (lk.nchild == 0) {
    for (int b = lk.begin; b < lk.end; b += G) add(b, b + G < lk.end ? b + G : lk.end);
    return g;
  }
  int gb = -1, ge = -1;
  for (int c = 0; c < lk.nchild; ++c) {
    const TreeLinks ch = links[lk.child + c];
    if (ch.end - ch.begin > G) {  // a big child starts its own groups
      if (gb >= 0) add(gb, ge);
      gb = -1;
      continue;
    }
    if (gb >= 0 && ch.end - gb > G) {
      add(gb, ge);
      gb = -1;
    }
    if (gb < 0) gb = ch.begin;
    ge = ch.end;
  }
  if (gb >= 0) add(gb, ge);
  return g;
}

// Centre of mass, mass, second moments and opening radius of one node, from its particles (a leaf)
// or from its children (done before it: the builders go from the deepest level up).
template <class Real, int Dim, bool Quad>
PARDYN_HD PARDYN_INLINE void moments(int node, const TreeLinks* links, const std::uint64_t* keys,
                                     const int* depths, const Real* src, Real* com, Real* quad,
                                     Real* rcrit2, const Frame& f) {
  constexpr int NQ = kQuadTerms<Dim>;
  const TreeLinks lk = links[node];
  const bool leaf = lk.nchild == 0;
  const int first = leaf ? lk.begin : lk.child;
  const int last = leaf ? lk.end : lk.child + lk.nchild;
  const Real* item = leaf ? src : com;  // both 4 values per entry: position, mass
  // Sums relative to the first entry, so that float keeps its digits far from the origin.
  Real ref[3] = {item[4 * std::size_t(first)], item[4 * std::size_t(first) + 1],
                 Dim == 3 ? item[4 * std::size_t(first) + 2] : Real(0)};
  Real M = 0, sx[3] = {0, 0, 0};
  for (int j = first; j < last; ++j) {
    const Real m = item[4 * std::size_t(j) + 3];
    M += m;
    for (int d = 0; d < Dim; ++d) sx[d] += m * (item[4 * std::size_t(j) + d] - ref[d]);
  }
  // The node's cell: its depth and the first particle's key give its corner.
  const int depth = depths[node];
  const std::uint64_t key = keys[lk.begin];
  std::uint64_t q[3];
  if constexpr (Dim == 3) {
    q[0] = compact3(key), q[1] = compact3(key >> 1), q[2] = compact3(key >> 2);
  } else {
    q[0] = compact2(key), q[1] = compact2(key >> 1), q[2] = 0;
  }
  const double edge = f.side / double(1ULL << depth);
  double centre[3] = {0, 0, 0};
  for (int d = 0; d < Dim; ++d)
    centre[d] = f.lo[d] + (double(q[d] >> (kBits<Dim> - depth)) + 0.5) * edge;
  Real X[3] = {0, 0, 0};
  for (int d = 0; d < Dim; ++d) X[d] = M > 0 ? ref[d] + sx[d] / M : Real(centre[d]);
  if constexpr (Quad) {
    Real Q[NQ];
    for (int k = 0; k < NQ; ++k) Q[k] = 0;
    for (int j = first; j < last; ++j) {
      const Real m = item[4 * std::size_t(j) + 3];
      Real y[3] = {0, 0, 0};
      for (int d = 0; d < Dim; ++d) y[d] = item[4 * std::size_t(j) + d] - X[d];
      if constexpr (Dim == 3) {
        Q[0] += m * y[0] * y[0], Q[1] += m * y[1] * y[1], Q[2] += m * y[2] * y[2];
        Q[3] += m * y[0] * y[1], Q[4] += m * y[0] * y[2], Q[5] += m * y[1] * y[2];
      } else {
        Q[0] += m * y[0] * y[0], Q[1] += m * y[1] * y[1], Q[2] += m * y[0] * y[1];
      }
      if (!leaf)  // parallel axis theorem: the children's own moments about their centres
        for (int k = 0; k < NQ; ++k) Q[k] += quad[NQ * std::size_t(j) + k];
    }
    for (int k = 0; k < NQ; ++k) quad[NQ * std::size_t(node) + k] = Q[k];
  }
  double delta2 = 0;
  for (int d = 0; d < Dim; ++d) delta2 += (double(X[d]) - centre[d]) * (double(X[d]) - centre[d]);
  double r = edge / f.theta + std::sqrt(delta2);
  if (f.short_range > 0) {
    // Every particle of the node lies in its cell, so within `corner` of the centre of mass: a
    // target farther than corner + short_range from it is beyond the law's short range for all of
    // them. The margin covers the rounding of positions to the cell (keys) and of Real.
    double corner2 = 0;
    for (int d = 0; d < Dim; ++d) {
      const double c = std::fabs(double(X[d]) - centre[d]) + 0.5 * edge;
      corner2 += c * c;
    }
    const double need = (std::sqrt(corner2) + f.short_range) * (1 + 1e-5) + 1e-6 * edge;
    r = r > need ? r : need;
  }
  rcrit2[node] = Real(r * r);
  for (int d = 0; d < 3; ++d) com[4 * std::size_t(node) + d] = X[d];
  com[4 * std::size_t(node) + 3] = M;
}

}  // namespace pardyn::tree_build
