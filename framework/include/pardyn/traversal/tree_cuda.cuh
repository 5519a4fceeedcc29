// SPDX-License-Identifier: BSD-3-Clause
// Barnes-Hut tree walk on the GPU, instantiated inside each potential's plugin for its evaluator.
//
// One warp per walk group of the tree (up to 32 particles of one node, or of sibling nodes:
// neighbours in space, consecutive along the Morton curve; see TreeGroup in tree.hpp): the warp
// walks the tree once for the whole group, testing nodes against the group's bounding box, and
// every lane then sums the same interaction list for its own particle (the design of Bonsai, and
// what beats a walk per thread: one walk serves 32 targets, and the list is read from shared memory
// as broadcasts).
//   - The walk is depth first with a stack of nodes to open in shared memory. Each step pops up to
//     32 / 2^Dim nodes and tests all their children at once, one child per lane: accepted children
//     (far from the group) join the far list, opened leaves put their particles on the near list,
//     opened internal nodes are pushed.
//   - When a list holds 32 entries the warp flushes it: each lane stages one entry (a node's centre
//     of mass, mass and quadrupole, or a particle) in shared memory, and every lane adds all 32 to
//     its sums: far entries through the law's far() (evaluator.hpp's far_multipole), near ones through
//     pair().
//   - Results go to the store index of each target (perm), so the store is never reordered.
// Everything is warp-synchronous: lanes past the group's last particle walk with a real one and
// store nothing.
// The targets and their groups are the tree's own particles, or another tree's (Tree::targets: a
// parallel run's own particles walking the tree over what other ranks sent).
#pragma once

#if !defined(__CUDACC__)
#error "tree_cuda.cuh holds CUDA kernels: include it only from .cu files"
#endif

// The kernel compiles under NVRTC too (run-time compiled laws, docs/formulas.md): there the host
// launchers below are left out, and the standard headers come from pardyn/rtc.
#if !defined(__CUDACC_RTC__)
#include <cuda_runtime.h>

#include <algorithm>

#include "pardyn/cuda.hpp"
#include "pardyn/cuda_check.hpp"
#include "pardyn/particles.hpp"
#include "pardyn/traversal/launch_cuda.cuh"
#endif
#include "pardyn/box.hpp"
#include "pardyn/evaluator.hpp"
#include "pardyn/particle_view.hpp"
#include "pardyn/traversal/pair_sum.hpp"
#include "pardyn/tree.hpp"

namespace pardyn::cuda {

namespace tree_walk_detail {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kWarps = 4;    // warps per block
constexpr int kStack = 512;  // nodes to open, per warp

template <class Real>
struct alignas(4 * sizeof(Real)) Quad4 {
  Real c[4];
};

template <class Real>
PARDYN_INLINE __device__ Quad4<Real> load4(const Real* a, int i) {
  Quad4<Real> q;
  if constexpr (sizeof(Real) == 4) {
    const float4 v = __ldg(reinterpret_cast<const float4*>(a) + i);
    q.c[0] = v.x, q.c[1] = v.y, q.c[2] = v.z, q.c[3] = v.w;
  } else {
    const double2 u = __ldg(reinterpret_cast<const double2*>(a) + 2 * std::size_t(i));
    const double2 v = __ldg(reinterpret_cast<const double2*>(a) + 2 * std::size_t(i) + 1);
    q.c[0] = u.x, q.c[1] = u.y, q.c[2] = v.x, q.c[3] = v.y;
  }
  return q;
}

PARDYN_INLINE __device__ TreeLinks load_links(const TreeLinks* l, int i) {
  const int4 v = __ldg(reinterpret_cast<const int4*>(l) + i);
  return TreeLinks{v.x, v.y, v.z, v.w};
}

template <class Real, int Dim, bool Quad>
struct WarpShared {
  int stack[kStack];
  int far[64];
  int near[64];
  Quad4<Real> node[32];
  Real quad[32][Quad ? kQuadTerms<Dim> : 1];
  Quad4<Real> part[32];
  int ptype[32];
  int pidx[32];
};

// Long: one warp's walk, list flushes and pair sums share registers and the warp's shared memory;
// split into calls, nvcc's register allocation (and so the occupancy) is no longer one decision.
template <class Eval, class Real, int Dim, bool Energy, bool Quad>
__global__ void __launch_bounds__(kWarps * 32)
    tree_walk_kernel(const Eval ev, const ParticleView<Real, Dim> p, const TreeView<Real, Dim> t) {
  constexpr int NQ = kQuadTerms<Dim>;
  constexpr int C = 1 << Dim;  // children per node at most
  constexpr int P = 32 / C;    // nodes opened per step at most
  // Multi-node pops only while the stack has room for a deep single-node descent afterwards.
  constexpr int kRoomy = kStack - (C - 1) * (Dim == 3 ? 21 : 31) - C - 32;
  __shared__ WarpShared<Real, Dim, Quad> shared[kWarps];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  WarpShared<Real, Dim, Quad>& sh = shared[warp];
  const int group = blockIdx.x * kWarps + warp;
  if (group >= t.ngroups) return;  // the whole warp
  const TreeGroup grp = t.groups[group];
  const int k = min(grp.begin + lane, grp.end - 1);
  const Quad4<Real> me = load4(t.tsrc, k);
  const int ti = __ldg(t.ttype + k);
  const int self = t.foreign ? -1 : k;  // the source that is the target itself
  const unsigned lt = (1u << lane) - 1;

  // The group's bounding box.
  Real centre[3] = {0, 0, 0}, half[3] = {0, 0, 0};
#pragma unroll
  for (int d = 0; d < Dim; ++d) {
    Real lo = me.c[d], hi = me.c[d];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      lo = min(lo, __shfl_xor_sync(kFull, lo, o));
      hi = max(hi, __shfl_xor_sync(kFull, hi, o));
    }
    centre[d] = Real(0.5) * (lo + hi);
    half[d] = Real(0.5) * (hi - lo);
  }

  Real acc[3] = {0, 0, 0}, ep = 0, vir = 0;

  auto flush_far = [&](int cnt) {
    if (lane < cnt) {
      const int node = sh.far[lane];
      sh.node[lane] = load4(t.com, node);
      if constexpr (Quad)
#pragma unroll
        for (int q = 0; q < NQ; ++q) sh.quad[lane][q] = __ldg(t.quad + NQ * std::size_t(node) + q);
    }
    __syncwarp();
#pragma unroll 4
    for (int j = 0; j < cnt; ++j) {
      const Quad4<Real> c = sh.node[j];
      const Real d[3] = {me.c[0] - c.c[0], me.c[1] - c.c[1], Dim == 3 ? me.c[2] - c.c[2] : Real(0)};
      far_multipole<Dim, Quad, Energy>(ev, d, c.c[3], Quad ? sh.quad[j] : nullptr, acc, ep, vir);
    }
    __syncwarp();
  };
  auto flush_near = [&](int cnt) {
    if (lane < cnt) {
      const int j = sh.near[lane];
      sh.part[lane] = load4(t.src, j);
      sh.ptype[lane] = __ldg(t.type + j);
      sh.pidx[lane] = j;
    }
    __syncwarp();
#pragma unroll 4
    for (int jj = 0; jj < cnt; ++jj) {
      const Quad4<Real> s = sh.part[jj];
      Real d0, d1, d2, r2, fdivr, e;
      separation<Dim>(me, s, d0, d1, d2);
      const bool keep = pair_terms<false, Dim>(ev, PeriodicImage<Real>{}, me.c[3], s.c[3], ti,
                                               sh.ptype[jj], d0, d1, d2, r2, fdivr, e) &&
                        sh.pidx[jj] != self;
      add_pair<Energy, true, Dim>(ev, keep, fdivr, e, r2, d0, d1, d2, acc[0], acc[1], acc[2], ep,
                                  vir);
    }
    __syncwarp();
  };
  // Drops the first 32 entries of a list after a flush.
  auto shift_down = [&](int* list, int cnt) {
    const int v = lane < cnt - 32 ? list[32 + lane] : 0;
    __syncwarp();
    if (lane < cnt - 32) list[lane] = v;
    __syncwarp();
  };

  int sp = 0, nfar = 0, nnear = 0;
  bool active = lane == 0;  // the first step tests the root alone
  int node = 0;
  for (;;) {
    bool is_far = false, is_open = false, is_leaf = false;
    TreeLinks lk{0, 0, 0, 0};
    if (active) {
      const Quad4<Real> c = load4(t.com, node);
      lk = load_links(t.links, node);
      const Real d2 = tree_detail::box_dist2<Dim>(c.c, centre, half);
      is_far = d2 > __ldg(t.rcrit2 + node);
      is_leaf = !is_far && lk.nchild == 0;
      is_open = !is_far && lk.nchild != 0;
    }
    const unsigned mf = __ballot_sync(kFull, is_far);
    if (is_far) sh.far[nfar + __popc(mf & lt)] = node;
    nfar += __popc(mf);
    const unsigned mo = __ballot_sync(kFull, is_open);
    if (is_open) sh.stack[sp + __popc(mo & lt)] = node;
    sp += __popc(mo);
    unsigned ml = __ballot_sync(kFull, is_leaf);
    while (ml) {
      const int from = __ffs(ml) - 1;
      ml &= ml - 1;
      const int b = __shfl_sync(kFull, lk.begin, from), e = __shfl_sync(kFull, lk.end, from);
      for (int off = b; off < e; off += 32) {
        const int cnt = min(32, e - off);
        if (lane < cnt) sh.near[nnear + lane] = off + lane;
        nnear += cnt;
        __syncwarp();
        if (nnear >= 32) {
          flush_near(32);
          shift_down(sh.near, nnear);
          nnear -= 32;
        }
      }
    }
    __syncwarp();
    if (nfar >= 32) {
      flush_far(32);
      shift_down(sh.far, nfar);
      nfar -= 32;
    }
    if (sp == 0) break;
    // Pop up to P nodes; lane l tests child l % C of popped node l / C.
    const int npop = sp + 32 <= kRoomy ? min(sp, P) : 1;
    const int entry = lane / C, child = lane % C;
    active = false;
    if (entry < npop) {
      const TreeLinks parent = load_links(t.links, sh.stack[sp - 1 - entry]);
      active = child < parent.nchild;
      node = parent.child + child;
    }
    sp -= npop;
    __syncwarp();
  }
  if (nfar > 0) flush_far(nfar);
  if (nnear > 0) flush_near(nnear);
  if (grp.begin + lane < grp.end)
    add_to_particle<Eval, Energy>(p, std::size_t(__ldg(t.perm + k)), acc, ep, vir);
}

#if !defined(__CUDACC_RTC__)
// The walk's descriptors (launch_cuda.cuh).
template <class Eval, class Real, int Dim>
struct Group {
  static constexpr const char* header = "pardyn/traversal/tree_cuda.cuh";
  static constexpr const char* id = "tree";
  static void names(const std::string& eval, std::vector<std::string>& out);
};
template <class Eval, class Real, int Dim, bool Energy, bool Quad>
struct Walk {
  using Group = tree_walk_detail::Group<Eval, Real, Dim>;
  static auto address() { return &tree_walk_kernel<Eval, Real, Dim, Energy, Quad>; }
  static std::string name(const std::string& eval) {
    return kernel_name(
        "pardyn::cuda::tree_walk_detail::tree_walk_kernel",
        {eval, real_name<Real>(), std::to_string(Dim), bool_name(Energy), bool_name(Quad)});
  }
};
template <class Eval, class Real, int Dim>
void Group<Eval, Real, Dim>::names(const std::string& eval, std::vector<std::string>& out) {
  dispatch_all_variants([&](auto e, auto q) {
    out.push_back(Walk<Eval, Real, Dim, decltype(e)::value, decltype(q)::value>::name(eval));
  });
}

template <class Eval, class Real, int Dim, bool Energy, bool Quad, class Kernels>
void launch(const Eval& ev, const ParticleView<Real, Dim>& p, const TreeView<Real, Dim>& t,
            const Kernels& ks) {
  const int blocks = (t.ngroups + kWarps - 1) / kWarps;
  launch_kernel<Walk<Eval, Real, Dim, Energy, Quad>>(ks, dim3(blocks), dim3(kWarps * 32),
                                                     "tree_walk_kernel", ev, p, t);
}
#endif  // !__CUDACC_RTC__
}  // namespace tree_walk_detail
#if !defined(__CUDACC_RTC__)
// Adds the evaluator's accelerations (and with `energy` the per-particle energies and virials) from
// a tree built on the GPU, to the store's particles: the tree's own, or Tree::targets'.
template <class Eval, class View, class Kernels = BuiltinKernels>
void tree_forces(const Eval& ev, const View& p, const Tree& tree, const Box& box, bool energy,
                 const Kernels& ks = {}) {
  using Real = typename View::real;
  dispatch_tree_walk<Eval, Real, View::dim>(
      tree, p.n, box, Backend::Cuda, energy, [&](auto e, auto q, const auto& t) {
        tree_walk_detail::launch<Eval, Real, View::dim, decltype(e)::value, decltype(q)::value>(
            ev, p, t, ks);
      });
}
#endif  // !__CUDACC_RTC__
}  // namespace pardyn::cuda
