// SPDX-License-Identifier: BSD-3-Clause
// Barnes-Hut tree walk on the CPU (OpenMP), instantiated inside each potential's plugin for its
// evaluator. The same scheme as the GPU walk (tree_cuda.cuh): the targets are taken in the tree's
// walk groups (up to 32 particles of one node or of sibling nodes, close together); one walk per
// group, with the opening test against the group's bounding box, collects an interaction list of
// nodes (far field) and of leaf particles (exact pair()), which every target of the group then
// sums. A group walk accepts a node only if it is far enough from every target of the group, so
// each target is at least as accurate as with its own walk. The targets and their groups are the
// tree's own particles, or another tree's (Tree::targets: a parallel run's own particles walking
// the tree over what other ranks sent).
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/traversal/tree_cpu.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <algorithm>
#include <cstddef>
#include <vector>

#include "pardyn/box.hpp"
#include "pardyn/evaluator.hpp"
#include "pardyn/particles.hpp"
#include "pardyn/traversal/pair_sum.hpp"
#include "pardyn/tree.hpp"

namespace pardyn::cpu {

namespace tree_cpu_detail {

// The bounding box of the group's targets [b, e): its centre and half-widths.
template <class Real, int Dim>
void group_box(const TreeView<Real, Dim>& t, int b, int e, Real (&centre)[3], Real (&half)[3]) {
  Real lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  for (int d = 0; d < Dim; ++d) lo[d] = hi[d] = t.tsrc[4 * std::size_t(b) + d];
  for (int i = b + 1; i < e; ++i)
    for (int d = 0; d < Dim; ++d) {
      lo[d] = std::min(lo[d], t.tsrc[4 * std::size_t(i) + d]);
      hi[d] = std::max(hi[d], t.tsrc[4 * std::size_t(i) + d]);
    }
  for (int d = 0; d < Dim; ++d) {
    centre[d] = Real(0.5) * (lo[d] + hi[d]);
    half[d] = Real(0.5) * (hi[d] - lo[d]);
  }
}

// The walk for a group's box: a node far enough from the whole group goes to the far list, an
// opened leaf's particles to the near list, an opened internal node's children onto the stack.
template <class Real, int Dim>
void interaction_lists(const TreeView<Real, Dim>& t, const Real (&centre)[3], const Real (&half)[3],
                       std::vector<std::int32_t>& stack, std::vector<std::int32_t>& far_list,
                       std::vector<std::int32_t>& near_list) {
  far_list.clear();
  near_list.clear();
  stack.clear();
  stack.push_back(0);
  while (!stack.empty()) {
    const int node = stack.back();
    stack.pop_back();
    const TreeLinks lk = t.links[node];
    const Real d2 = tree_detail::box_dist2<Dim>(t.com + 4 * std::size_t(node), centre, half);
    if (d2 > t.rcrit2[node]) {
      far_list.push_back(node);
    } else if (lk.nchild == 0) {
      for (int j = lk.begin; j < lk.end; ++j) near_list.push_back(j);
    } else {
      for (int c = lk.nchild - 1; c >= 0; --c) stack.push_back(lk.child + c);
    }
  }
}

template <bool Energy, bool Quad, class Eval, class Real, int Dim>
void walk(const Eval& ev, const ParticleView<Real, Dim>& p, const TreeView<Real, Dim>& t) {
  const int groups = t.ngroups;
  constexpr int NQ = kQuadTerms<Dim>;
  const PeriodicImage<Real> open{};  // a tree's box has no periodic axes
#pragma omp parallel if (groups > 16)
  {
    std::vector<std::int32_t> stack, far_list, near_list;
    stack.reserve(256);
    far_list.reserve(4096);
    near_list.reserve(4096);
#pragma omp for schedule(dynamic, 8)
    for (int g = 0; g < groups; ++g) {
      const int b = t.groups[g].begin, e = t.groups[g].end;
      Real centre[3], half[3];
      group_box(t, b, e, centre, half);
      interaction_lists(t, centre, half, stack, far_list, near_list);
      for (int i = b; i < e; ++i) {
        const Real* xi = t.tsrc + 4 * std::size_t(i);
        const Real mi = xi[3];
        const int ti = t.ttype[i];
        const int self = t.foreign ? -1 : i;  // the source that is the target itself
        Real acc[3] = {0, 0, 0}, ep = 0, vir = 0;
        for (const int node : far_list) {
          const Real* c = t.com + 4 * std::size_t(node);
          const Real d[3] = {xi[0] - c[0], xi[1] - c[1], Dim == 3 ? xi[2] - c[2] : Real(0)};
          far_multipole<Dim, Quad, Energy>(
              ev, d, c[3], Quad ? t.quad + NQ * std::size_t(node) : nullptr, acc, ep, vir);
        }
        Real s0 = 0, s1 = 0, s2 = 0, se = 0, sw = 0;
        const int nn = int(near_list.size());
        const std::int32_t* nl = near_list.data();
#pragma omp simd reduction(+ : s0, s1, s2, se, sw)
        for (int k = 0; k < nn; ++k) {
          const int j = nl[k];
          const Real* xj = t.src + 4 * std::size_t(j);
          Real d0 = xi[0] - xj[0], d1 = xi[1] - xj[1], d2 = Dim == 3 ? xi[2] - xj[2] : Real(0);
          Real r2, fdivr, e;
          const bool keep = pair_terms<false, Dim>(ev, open, mi, xj[3], ti, t.type[j], d0, d1, d2,
                                                   r2, fdivr, e) &&
                            j != self;
          add_pair<Energy, false, Dim>(ev, keep, fdivr, e, r2, d0, d1, d2, s0, s1, s2, se, sw);
        }
        add_sums<Energy>(s0, s1, s2, se, sw, acc, ep, vir);
        add_to_particle<Eval, Energy>(p, std::size_t(t.perm[i]), acc, ep, vir);
      }
    }
  }
}

}  // namespace tree_cpu_detail

// Adds the evaluator's accelerations (and with `energy` the per-particle energies and virials) from
// a tree built on the CPU, to the store's particles: the tree's own, or Tree::targets'.
template <class Eval, class View>
void tree_forces(const Eval& ev, const View& p, const Tree& tree, const Box& box, bool energy) {
  dispatch_tree_walk<Eval, typename View::real, View::dim>(
      tree, p.n, box, Backend::Cpu, energy, [&](auto e, auto q, const auto& t) {
        tree_cpu_detail::walk<decltype(e)::value, decltype(q)::value>(ev, p, t);
      });
}

}  // namespace pardyn::cpu
