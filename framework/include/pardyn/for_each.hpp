// SPDX-License-Identifier: BSD-3-Clause
// The per-particle loop of each backend: a per-particle operation is written once, as a functor,
// and run by the loop of the backend where the particles live (as ExternalPotential's evaluators).
//
// A functor F is a struct that is trivially copyable (it is passed to GPU kernels by value, so it
// holds views and values, never host containers) with
//     PARDYN_HD void operator()(std::size_t i) const;
// which does the work of index i. The loop calls it once for every i in [0, n), in no particular
// order and concurrently: a call may write only what belongs to its own i. Optional member:
//     static constexpr bool simd = true;  // the CPU loop is `omp parallel for simd` (straight-line
//                                         // arithmetic on arrays, e.g. a kick)
//
//   cpu::for_each_index(n, f)       the CPU loop (OpenMP); needs no nvcc.
//   cuda::for_each_index(n, f)      the GPU loop (for_each_cuda.cuh, a grid-stride kernel), declared
//                                   here in builds with CUDA; a .cu file defines it for each functor
//                                   with PARDYN_FOR_EACH_CUDA(F).
//   for_each_index(backend, n, f)   the one that runs where `backend` says.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/for_each.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <cstddef>
#include <string>
#include <type_traits>

#include "pardyn/core.hpp"

// Whether this code has GPU loops to call: a plugin with CUDA sources (PARDYN_PLUGIN_HAS_CUDA, set
// by pardyn_add_plugin) or libpardyn itself built with CUDA (PARDYN_CORE_HAS_CUDA, private to it).
#if defined(PARDYN_PLUGIN_HAS_CUDA) || defined(PARDYN_CORE_HAS_CUDA)
#define PARDYN_FOR_EACH_HAS_CUDA 1
#endif

namespace pardyn {

// Below this many indices a CPU loop runs on one thread: waking the team costs more than the work.
constexpr std::size_t kParallelMin = 4096;

namespace detail {
template <class F, class = void>
struct simd_of : std::false_type {};
template <class F>
struct simd_of<F, std::void_t<decltype(F::simd)>> : std::bool_constant<F::simd> {};
}  // namespace detail

namespace cpu {
template <class F>
void for_each_index(std::size_t n, const F& f, std::size_t parallel_min = kParallelMin) {
  static_assert(std::is_trivially_copyable_v<F>,
                "a per-particle functor must be trivially copyable: GPU kernels take it by value");
  if constexpr (detail::simd_of<F>::value) {
#pragma omp parallel for simd schedule(static) if (n > parallel_min)
    for (std::size_t i = 0; i < n; ++i) f(i);
  } else {
#pragma omp parallel for schedule(static) if (n > parallel_min)
    for (std::size_t i = 0; i < n; ++i) f(i);
  }
}
}  // namespace cpu

#if defined(PARDYN_FOR_EACH_HAS_CUDA)
namespace cuda {
// Defined in for_each_cuda.cuh; a .cu file instantiates it for F with PARDYN_FOR_EACH_CUDA(F).
template <class F>
void for_each_index(std::size_t n, const F& f);
}  // namespace cuda
#endif

// Runs f on every index of [0, n) with the loop of `backend`.
template <class F>
void for_each_index(Backend backend, std::size_t n, const F& f,
                    std::size_t parallel_min = kParallelMin) {
  if (backend == Backend::Cuda) {
#if defined(PARDYN_FOR_EACH_HAS_CUDA)
    cuda::for_each_index(n, f);
    return;
#else
    throw Error(
        "a per-particle operation on a GPU store in code built without CUDA (a plugin "
        "without CUDA sources?); use backend = \"cpu\"");
#endif
  }
  cpu::for_each_index(n, f, parallel_min);
}

// a b + c, rounded as each backend's element-wise kernels always have: one FMA on the device, and
// on the host what the C++ build makes of the expression (the CPU results stay as they were).
template <class Real>
PARDYN_HD PARDYN_INLINE Real mul_add(Real a, Real b, Real c) {
#if defined(__CUDA_ARCH__)
  return fma(a, b, c);
#else
  return a * b + c;
#endif
}

}  // namespace pardyn
