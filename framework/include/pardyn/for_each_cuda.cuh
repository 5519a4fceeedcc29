// SPDX-License-Identifier: BSD-3-Clause
// The GPU half of for_each.hpp: the one kernel template that runs a per-particle functor, and its
// launch. Include from .cu files only, and define the launch for each functor the file runs with
// PARDYN_FOR_EACH_CUDA(F) (the CPU side then calls it through for_each_index(Backend, n, f)).
#pragma once

#if !defined(__CUDACC__)
#error "for_each_cuda.cuh holds CUDA kernels: include it only from .cu files"
#endif

#include <cuda_runtime.h>

#include <algorithm>

#include "pardyn/cuda_check.hpp"
#include "pardyn/for_each.hpp"

namespace pardyn::cuda {

namespace detail {
// 256 threads: 8 warps; 8 resident blocks fill an SM's 2048 thread slots on Hopper and Ampere.
constexpr int kForEachThreads = 256;

// A grid-stride loop: each thread takes indices first, first + stride, ...
template <class F>
__global__ void __launch_bounds__(kForEachThreads) for_each_kernel(const F f, std::size_t n) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    f(i);
}

// Enough blocks to fill every SM once (the grid-stride loop takes care of the rest), read from the
// current device once per process.
inline int for_each_max_blocks() {
  static const int blocks = [] {
    int dev = 0, sms = 0, threads_per_sm = 0;
    PARDYN_CUDA_CHECK(cudaGetDevice(&dev));
    PARDYN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    PARDYN_CUDA_CHECK(
        cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
    return std::max(1, sms * std::max(1, threads_per_sm / kForEachThreads));
  }();
  return blocks;
}
}  // namespace detail

// The stream this thread's for_each_index launches go to: the default stream (ordered with every
// other kernel and copy of the backend), unless libpardyn's own code has switched this thread to a
// stream of its own for a while (the tree exchange of a parallel run classifies and packs its
// sources so, beside the walk of the own particles: framework/src/parallel/store_ops.hpp,
// SideWork). Defined in libpardyn (pardyn::core).
cudaStream_t launch_stream();

// Runs f(i) for every i in [0, n) on launch_stream(); returns without waiting for the kernel.
template <class F>
void for_each_index(std::size_t n, const F& f) {
  static_assert(std::is_trivially_copyable_v<F>,
                "a per-particle functor must be trivially copyable: GPU kernels take it by value");
  if (n == 0) return;
  constexpr int threads = detail::kForEachThreads;
  const std::size_t want = (n + threads - 1) / threads;
  const int blocks = int(std::min<std::size_t>(want, std::size_t(detail::for_each_max_blocks())));
  detail::for_each_kernel<F><<<blocks, threads, 0, launch_stream()>>>(f, n);
  PARDYN_CUDA_CHECK_LAUNCH("for_each_kernel");
}

}  // namespace pardyn::cuda

// The GPU loop of functor F, for the CPU side's for_each_index(Backend::Cuda, n, f).
#define PARDYN_FOR_EACH_CUDA(...) \
  template void pardyn::cuda::for_each_index<__VA_ARGS__>(std::size_t, const __VA_ARGS__&);
