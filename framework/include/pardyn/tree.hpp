// SPDX-License-Identifier: BSD-3-Clause
// The tree neighbourhood: what TreeBuilder builds (for the `tree` scheme, and in parallel runs over
// what other ranks sent) and the tree walks (traversal/tree_cpu.hpp, traversal/tree_cuda.cuh)
// read. Plain structs and pointers, so that the same data serves the CPU and the GPU, and
// host/device functions for what both walks compute (the opening test and a node's far-field
// contribution).
//
// The tree is an octree (3D) or quadtree (2D) over the particles sorted along a Morton curve:
//   - `perm[k]` is the store index of the k-th particle along the curve; the store itself is never
//     permuted (integrators keep per-particle state across force evaluations), the walk writes each
//     target's result to perm[k];
//   - `src` holds the sorted particles as 4 values each: x, y, z (0 in 2D), mass; `type` their
//   types;
//   - nodes are numbered level by level from the root (node 0); the children of a node are
//     contiguous: links[i] = {first child, child count (0 for a leaf), first particle, end
//     particle};
//   - com[i] = centre of mass (x, y, z), mass; rcrit2[i] = the squared opening radius
//     (l / theta + delta)^2 with l the edge of the node's cell and delta the distance from the
//     cell's centre to the centre of mass (Barnes 1994: a node whose mass sits off-centre opens
//     earlier);
//   - groups: the walk groups (TreeGroup below), in curve order, covering every particle once;
//   - levels (host memory): where each level's nodes begin;
//   - quad[i] (when built with quadrupoles) the second moments about the centre of mass,
//     Q = sum m (x - X)(x - X)^T: xx, yy, zz, xy, xz, yz in 3D; xx, yy, xy in 2D (kQuadTerms).
// A node is used as a whole for a target (or a group of targets) whose distance to the centre of
// mass exceeds sqrt(rcrit2); otherwise it is opened; an opened leaf interacts particle by particle
// through the law's exact pair().
//
// Device-clean (docs/plugins.md): the structure and the walks' shared functions are plain data and
// host/device functions; the builder and the host-side checks are left out of run-time compiled
// device code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#if !defined(__CUDACC_RTC__)
#include <memory>
#include <string>
#endif

#include "pardyn/box.hpp"
#include "pardyn/core.hpp"
#include "pardyn/evaluator.hpp"

namespace pardyn {

class ParticleStore;  // pardyn/particles.hpp

struct alignas(16) TreeLinks {
  std::int32_t child;   // first child
  std::int32_t nchild;  // 0: a leaf
  std::int32_t begin;   // particles [begin, end) in curve order
  std::int32_t end;
};

// A walk group: sorted particles [begin, end) that walk the tree together (one GPU warp). Groups
// are whole nodes of at most kTreeGroup particles, or runs of such sibling nodes packed up to
// kTreeGroup, so a group's bounding box never exceeds its parent's cell (32 consecutive particles
// along the curve could straddle two distant cells and open the whole tree).
struct TreeGroup {
  std::int32_t begin;
  std::int32_t end;
};
constexpr int kTreeGroup = 32;

// Typed view of a Tree for one precision and dimension (what the walks use).
template <class Real, int Dim>
struct TreeView {
  // The sources: the nodes and the particles along the curve.
  std::int32_t n = 0;  // particles
  std::int32_t nodes = 0;
  const Real* src = nullptr;  // [n][4]
  const std::int32_t* type = nullptr;
  const TreeLinks* links = nullptr;
  const Real* com = nullptr;     // [nodes][4]
  const Real* rcrit2 = nullptr;  // [nodes]
  const Real* quad = nullptr;    // [nodes][kQuadTerms<Dim>], or null (monopoles only)
  // The targets, in their walk groups: the tree's own particles, or those of Tree::targets.
  std::int32_t targets = 0;
  const std::int32_t* perm = nullptr;  // the store index of each target
  const Real* tsrc = nullptr;          // [targets][4], as src
  const std::int32_t* ttype = nullptr;
  const TreeGroup* groups = nullptr;
  std::int32_t ngroups = 0;
  bool foreign = false;  // the targets are not among the sources (no self-pair to leave out)
};

struct Tree {
  int dim = 3;
  Precision precision = Precision::Double;
  Backend backend = Backend::Cpu;  // where the arrays live
  std::int32_t n = 0;
  std::int32_t nodes = 0;
  int depth = 0;  // levels below the root
  double theta = 0.5;
  bool quadrupole = false;
  int leaf_size = 16;  // a node of at most this many particles was not split
  bool built = false;
  // Host memory: the nodes of level l (0: the root) are [levels[l], levels[l + 1]), l <= depth.
  const std::int32_t* levels = nullptr;
  const std::int32_t* perm = nullptr;
  const void* src = nullptr;
  const std::int32_t* type = nullptr;
  const TreeLinks* links = nullptr;
  const void* com = nullptr;
  const void* rcrit2 = nullptr;
  const void* quad = nullptr;
  const TreeGroup* groups = nullptr;
  std::int32_t ngroups = 0;
  // Optional: the walk takes its targets from another tree (its sorted particles, their store
  // indices and its walk groups; same backend, dimension and precision), and this tree's particles
  // are sources only (a parallel run's tree over what other ranks sent, walked by the rank's own
  // particles). Null: the targets are this tree's own particles.
  const Tree* targets = nullptr;

#if !defined(__CUDACC_RTC__)
  template <class Real, int Dim>
  TreeView<Real, Dim> view() const {
    constexpr Precision want = std::is_same_v<Real, float> ? Precision::Float : Precision::Double;
    if (!built) throw Error("internal: the tree walk ran before the tree scheme built the tree");
    if (Dim != dim || want != precision)
      throw Error("internal: the tree was built for " + std::to_string(dim) + "D " +
                  to_string(precision) + " and is walked as " + std::to_string(Dim) + "D " +
                  to_string(want));
    TreeView<Real, Dim> v;
    v.n = n;
    v.nodes = nodes;
    v.src = static_cast<const Real*>(src);
    v.type = type;
    v.links = links;
    v.com = static_cast<const Real*>(com);
    v.rcrit2 = static_cast<const Real*>(rcrit2);
    v.quad = quadrupole ? static_cast<const Real*>(quad) : nullptr;
    const Tree& t = targets ? *targets : *this;
    if (targets && (!t.built || t.dim != dim || t.precision != precision || t.backend != backend))
      throw Error("internal: a tree's targets from a tree of another kind");
    v.targets = t.n;
    v.perm = t.perm;
    v.tsrc = static_cast<const Real*>(t.src);
    v.ttype = t.type;
    v.groups = t.groups;
    v.ngroups = t.ngroups;
    v.foreign = targets != nullptr;
    return v;
  }
#endif
};

// How a tree is built (the `tree` scheme's parameters, and the law's short-range radius).
struct TreeOptions {
  double theta = 0.5;
  bool quadrupole = true;
  int leaf_size = 16;
  // Reach::short_range (0: none): a node is used as a whole only where none of its particles can
  // be closer than this to the target.
  double short_range = 0;
};

#if !defined(__CUDACC_RTC__)
// Builds trees on the backend of the store it is given (the `tree` scheme's work, and the
// parallel runs' trees over what other ranks sent). Keeps its arrays from build to build.
class TreeBuilder {
 public:
  TreeBuilder();
  ~TreeBuilder();
  TreeBuilder(const TreeBuilder&) = delete;
  TreeBuilder& operator=(const TreeBuilder&) = delete;

  // Rebuilds everything from the store's current positions; the result (pointers into the
  // builder's memory) is valid until the next build.
  const Tree& build(const ParticleStore& s, const TreeOptions& opt);
  const Tree& tree() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The tree cannot represent periodic images (that needs Ewald sums): both the scheme and the walks
// refuse a box with a periodic axis with this message.
inline std::string tree_periodic_message() {
  return "scheme \"tree\" does not support periodic boundaries (a Barnes-Hut tree sees no periodic "
         "images); use open or wall boundaries, or scheme \"all_pairs\"";
}

// What both walks (tree_cpu.hpp, tree_cuda.cuh) check before they start, and the choice of their
// compile-time variant: calls walk(energy, quadrupole, view) with the two flags as
// std::bool_constant, on a tree built on `where` whose targets are the n particles of the store,
// for law evaluator Eval (which must have a far field: walk is not instantiated otherwise).
template <class Eval, class Real, int Dim, class Walk>
void dispatch_tree_walk(const Tree& tree, std::size_t n, const Box& box, Backend where, bool energy,
                        Walk&& walk) {
  if constexpr (!EvaluatorTraits<Eval>::has_far_field) {
    throw Error("internal: a tree walk for a law without a far field");
  } else {
    if (box.any_periodic(Dim)) throw Error(tree_periodic_message());
    if (tree.backend != where)
      throw Error(std::string("internal: a tree built for the ") + to_string(tree.backend) +
                  " backend walked on the " + to_string(where) + " backend");
    const auto t = tree.view<Real, Dim>();
    if (std::size_t(t.targets) != n)
      throw Error("internal: the tree's walk has " + std::to_string(t.targets) +
                  " targets, the store " + std::to_string(n) + " particles");
    if (t.targets == 0 || t.n == 0) return;
    dispatch_variant(energy, t.quad != nullptr, [&](auto e, auto q) { walk(e, q, t); });
  }
}

#endif  // !__CUDACC_RTC__

namespace tree_detail {

// Squared distance from point c to the axis-aligned box centre +- half (0 inside).
template <int Dim, class Real>
PARDYN_HD PARDYN_INLINE Real box_dist2(const Real* c, const Real* centre, const Real* half) {
  Real d2 = 0;
  for (int d = 0; d < Dim; ++d) {
    Real t = c[d] - centre[d];
    t = t < 0 ? -t : t;
    t = t - half[d];
    t = t > 0 ? t : Real(0);
    d2 += t * t;
  }
  return d2;
}

}  // namespace tree_detail
}  // namespace pardyn
