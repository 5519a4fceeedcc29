// SPDX-License-Identifier: BSD-3-Clause
// Cell-list traversal on the GPU, instantiated inside each potential's plugin for its evaluator.
// One thread per sorted slot (neighbouring threads hold neighbouring particles, so their reads of
// neighbours hit the same cache lines), a full list or stencil (no atomics: each thread sums its
// own target and writes it to store index order[k]):
//   - Verlet list: the list is transposed (neighbour m of slot k at nl[m * pitch + k]), so a warp's
//     index reads are one coalesced line per step;
//   - stencil: the 3^dim cells around the slot's cell, every evaluation;
//   - far zones: the stencil over `near` rings, exact, then the cell pyramid (cell_far.hpp).
#pragma once

#if !defined(__CUDACC__)
#error "cell_list_cuda.cuh holds CUDA kernels: include it only from .cu files"
#endif

// The kernels compile under NVRTC too (run-time compiled laws, docs/formulas.md): there the host
// launchers below are left out, and the standard headers come from pardyn/rtc.
#if !defined(__CUDACC_RTC__)
#include <cuda_runtime.h>

#include "pardyn/cuda_check.hpp"
#include "pardyn/particles.hpp"
#include "pardyn/traversal/launch_cuda.cuh"
#endif
#include "pardyn/box.hpp"
#include "pardyn/cell_list.hpp"
#include "pardyn/evaluator.hpp"
#include "pardyn/particle_view.hpp"
#include "pardyn/traversal/cell_far.hpp"
#include "pardyn/traversal/pair_sum.hpp"

namespace pardyn::cuda {

namespace detail {

template <class Eval, class Real, int Dim, bool Energy, bool Periodic>
PARDYN_INLINE __device__ void cl_pair(const Eval& ev, const PeriodicImage<Real>& img,
                                      const CellParticle<Real>& xi, Real mi, int ti,
                                      const CellParticle<Real>& xj, int tj, bool keep,
                                      Real (&acc)[3], Real& ep, Real& vr) {
  Real d0, d1, d2, r2, fdivr, e;
  separation<Dim>(xi, xj, d0, d1, d2);
  const bool in_range = pair_terms<Periodic, Dim>(ev, img, mi, record_mass<Dim>(xj), ti, tj, d0, d1,
                                                  d2, r2, fdivr, e);
  keep = keep && in_range;
  add_pair<Energy, true, Dim>(ev, keep, fdivr, e, r2, d0, d1, d2, acc[0], acc[1], acc[2], ep, vr);
}

template <class Eval, class Real, int Dim, bool Energy, bool Periodic>
__global__ void __launch_bounds__(128)
    cl_verlet_kernel(const Eval ev, const ParticleView<Real, Dim> p, const CellList cl,
                     const PeriodicImage<Real> img) {
  const std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (k >= cl.n) return;
  const CellParticle<Real>* __restrict__ pos = cl.positions<Real>();
  const std::int32_t* __restrict__ type = cl.type;
  const std::uint32_t* __restrict__ nl = cl.nl + k;
  const std::size_t pitch = cl.nl_col;
  const CellParticle<Real> xi = pos[k];
  const Real mi = record_mass<Dim>(xi);
  const int ti = type[k];
  const int cnt = int(cl.nl_count[k]);
  Real acc[3] = {0, 0, 0}, ep = 0, vr = 0;
#pragma unroll 4
  for (int m = 0; m < cnt; ++m) {
    const std::uint32_t j = __ldg(nl + std::size_t(m) * pitch);
    cl_pair<Eval, Real, Dim, Energy, Periodic>(ev, img, xi, mi, ti, pos[j], type[j], true, acc, ep,
                                               vr);
  }
  add_to_particle<Eval, Energy>(p, cl.order[k], acc, ep, vr);
}

// Sums the pair interactions of target xi (slot k) with the slots [jb, je) of one cell. The
// positions and types come in as __restrict__ parameters, not through the stencil's lambda: nvcc
// forgets the __restrict__ of a pointer that a lambda captures, and the loads then lose
// ld.global.nc (the read-only path) in some instantiations.
template <class Eval, class Real, int Dim, bool Energy, bool Periodic>
PARDYN_INLINE __device__ void cl_cell_sum(const Eval& ev, const PeriodicImage<Real>& img,
                                          const CellParticle<Real>* __restrict__ pos,
                                          const std::int32_t* __restrict__ type, std::uint32_t k,
                                          const CellParticle<Real>& xi, Real mi, int ti,
                                          std::uint32_t jb, std::uint32_t je, Real (&acc)[3],
                                          Real& ep, Real& vr) {
  for (std::uint32_t j = jb; j < je; ++j)
    cl_pair<Eval, Real, Dim, Energy, Periodic>(ev, img, xi, mi, ti, pos[j], type[j], j != k, acc,
                                               ep, vr);
}

// The exact part: the cells `rings` around slot k's cell (for_each_stencil_cell, cell_list.hpp).
template <class Eval, class Real, int Dim, bool Energy, bool Periodic>
PARDYN_INLINE __device__ void cl_stencil(const Eval& ev, const CellList& cl,
                                         const PeriodicImage<Real>& img, std::uint32_t k,
                                         const CellParticle<Real>& xi, int ti, int rings,
                                         Real (&acc)[3], Real& ep, Real& vr) {
  const CellParticle<Real>* __restrict__ pos = cl.positions<Real>();
  const std::int32_t* __restrict__ type = cl.type;
  const Real mi = record_mass<Dim>(xi);
  int c[3];
  cl.cell_coords_at<Dim>(xi.c, c);
  for_each_stencil_cell<Dim>(cl, c, rings, [&](std::size_t nb) PARDYN_INLINE_LAMBDA {
    const std::uint32_t je = cl.cell_end[nb];
    cl_cell_sum<Eval, Real, Dim, Energy, Periodic>(ev, img, pos, type, k, xi, mi, ti,
                                                   cl.cell_start[nb], je, acc, ep, vr);
  });
}

template <class Eval, class Real, int Dim, bool Energy, bool Periodic>
__global__ void __launch_bounds__(128)
    cl_stencil_kernel(const Eval ev, const ParticleView<Real, Dim> p, const CellList cl,
                      const PeriodicImage<Real> img) {
  const std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (k >= cl.n) return;
  const CellParticle<Real> xi = cl.positions<Real>()[k];
  Real acc[3] = {0, 0, 0}, ep = 0, vr = 0;
  cl_stencil<Eval, Real, Dim, Energy, Periodic>(ev, cl, img, std::uint32_t(k), xi, cl.type[k], 1,
                                                acc, ep, vr);
  add_to_particle<Eval, Energy>(p, cl.order[k], acc, ep, vr);
}

constexpr int kFarThreads = 128;

// Far zones: the exact stencil over `near` rings, then the pyramid (cell_far.hpp). Threads of a
// warp hold consecutive slots, mostly of one cell, so they read the same cells' moments.
template <class Eval, class Real, int Dim, bool Energy, bool Quad>
__global__ void __launch_bounds__(kFarThreads)
    cl_far_kernel(const Eval ev, const ParticleView<Real, Dim> p, const CellList cl) {
  const std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (k >= cl.n) return;
  const CellParticle<Real> xi = cl.positions<Real>()[k];
  Real acc[3] = {0, 0, 0}, ep = 0, vr = 0;
  cl_stencil<Eval, Real, Dim, Energy, false>(ev, cl, PeriodicImage<Real>{}, std::uint32_t(k), xi,
                                             cl.type[k], cl.near, acc, ep, vr);
  int c0[3];
  cl.cell_coords_at<Dim>(xi.c, c0);
  cell_far_sum<Energy, Quad, Eval, Real, Dim>(ev, cl, xi.c, c0, acc, ep, vr);
  add_to_particle<Eval, Energy>(p, cl.order[k], acc, ep, vr);
}

#if !defined(__CUDACC_RTC__)
inline unsigned cl_blocks(std::size_t n, int threads) {
  return unsigned((n + threads - 1) / threads);
}

// The kernels' descriptors (launch_cuda.cuh): the cell list's two groups, the Verlet list and
// stencil kernels (cl_launch) and the far zones' (cell_list_forces with cl.far).
template <class Real, int Dim>
std::vector<std::string> cl_args(const std::string& eval, bool a, bool b) {
  return {eval, real_name<Real>(), std::to_string(Dim), bool_name(a), bool_name(b)};
}
template <class Eval, class Real, int Dim>
struct ClGroup {
  static constexpr const char* header = "pardyn/traversal/cell_list_cuda.cuh";
  static constexpr const char* id = "cell_list";
  static void names(const std::string& eval, std::vector<std::string>& out);
};
template <class Eval, class Real, int Dim>
struct ClFarGroup {
  static constexpr const char* header = "pardyn/traversal/cell_list_cuda.cuh";
  static constexpr const char* id = "cell_far";
  static void names(const std::string& eval, std::vector<std::string>& out);
};
template <class Eval, class Real, int Dim, bool Energy, bool Periodic>
struct ClVerlet {
  using Group = ClGroup<Eval, Real, Dim>;
  static auto address() { return &cl_verlet_kernel<Eval, Real, Dim, Energy, Periodic>; }
  static std::string name(const std::string& eval) {
    return kernel_name("pardyn::cuda::detail::cl_verlet_kernel",
                       cl_args<Real, Dim>(eval, Energy, Periodic));
  }
};
template <class Eval, class Real, int Dim, bool Energy, bool Periodic>
struct ClStencil {
  using Group = ClGroup<Eval, Real, Dim>;
  static auto address() { return &cl_stencil_kernel<Eval, Real, Dim, Energy, Periodic>; }
  static std::string name(const std::string& eval) {
    return kernel_name("pardyn::cuda::detail::cl_stencil_kernel",
                       cl_args<Real, Dim>(eval, Energy, Periodic));
  }
};
template <class Eval, class Real, int Dim, bool Energy, bool Quad>
struct ClFar {
  using Group = ClFarGroup<Eval, Real, Dim>;
  static auto address() { return &cl_far_kernel<Eval, Real, Dim, Energy, Quad>; }
  static std::string name(const std::string& eval) {
    return kernel_name("pardyn::cuda::detail::cl_far_kernel",
                       cl_args<Real, Dim>(eval, Energy, Quad));
  }
};
template <class Eval, class Real, int Dim>
void ClGroup<Eval, Real, Dim>::names(const std::string& eval, std::vector<std::string>& out) {
  dispatch_all_variants([&](auto e, auto per) {
    out.push_back(ClVerlet<Eval, Real, Dim, decltype(e)::value, decltype(per)::value>::name(eval));
    out.push_back(ClStencil<Eval, Real, Dim, decltype(e)::value, decltype(per)::value>::name(eval));
  });
}
template <class Eval, class Real, int Dim>
void ClFarGroup<Eval, Real, Dim>::names(const std::string& eval, std::vector<std::string>& out) {
  dispatch_all_variants([&](auto e, auto q) {
    out.push_back(ClFar<Eval, Real, Dim, decltype(e)::value, decltype(q)::value>::name(eval));
  });
}

template <class Eval, class Real, int Dim, bool Energy, bool Periodic, class Kernels>
void cl_launch(const Eval& ev, const ParticleView<Real, Dim>& p, const CellList& cl,
               const PeriodicImage<Real>& img, const Kernels& ks) {
  const dim3 grid(cl_blocks(cl.n, 128)), block(128);
  if (cl.verlet)
    launch_kernel<ClVerlet<Eval, Real, Dim, Energy, Periodic>>(ks, grid, block, "cl_verlet_kernel",
                                                               ev, p, cl, img);
  else
    launch_kernel<ClStencil<Eval, Real, Dim, Energy, Periodic>>(
        ks, grid, block, "cl_stencil_kernel", ev, p, cl, img);
}
#endif  // !__CUDACC_RTC__

}  // namespace detail

#if !defined(__CUDACC_RTC__)
// Adds the evaluator's accelerations (and, with energy, per-particle energies and virials) over the
// cell list to the store's arrays.
template <class Eval, class Real, int Dim, class Kernels = BuiltinKernels>
void cell_list_forces(const Eval& ev, const ParticleView<Real, Dim>& p, const CellList& cl,
                      const Box& box, bool energy, const Kernels& ks = {}) {
  if (!check_cell_list(ev, cl, p.n)) return;
  if constexpr (EvaluatorTraits<Eval>::has_far_field) {
    if (cl.far) {
      const dim3 grid(detail::cl_blocks(cl.n, detail::kFarThreads)), block(detail::kFarThreads);
      dispatch_variant(energy, cl.cell_quad != nullptr, [&](auto e, auto q) {
        launch_kernel<detail::ClFar<Eval, Real, Dim, decltype(e)::value, decltype(q)::value>>(
            ks, grid, block, "cl_far_kernel", ev, p, cl);
      });
      return;
    }
  }
  const auto img = PeriodicImage<Real>::make(box);
  const bool periodic = box.any_periodic(Dim);
  dispatch_variant(energy, periodic, [&](auto e, auto per) {
    detail::cl_launch<Eval, Real, Dim, decltype(e)::value, decltype(per)::value>(ev, p, cl, img,
                                                                                 ks);
  });
}
#endif  // !__CUDACC_RTC__

}  // namespace pardyn::cuda
