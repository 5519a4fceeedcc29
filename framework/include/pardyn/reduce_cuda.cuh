// SPDX-License-Identifier: BSD-3-Clause
// The GPU half of reduce.hpp: the sum and the histogram kernels and their launches. Include from
// .cu files only, and instantiate them for each functor the file runs with PARDYN_SUM_CUDA(F) and
// PARDYN_HISTOGRAM_CUDA(F) (the CPU side then calls them through sum_over_index(Backend, ...) and
// histogram_over_index(Backend, ...)). Their device memory is the backend's scratch
// (pardyn/cuda.hpp), which stays allocated from call to call.
#pragma once

#if !defined(__CUDACC__)
#error "reduce_cuda.cuh holds CUDA kernels: include it only from .cu files"
#endif

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "pardyn/cuda.hpp"
#include "pardyn/cuda_check.hpp"
#include "pardyn/reduce.hpp"

namespace pardyn::cuda {

namespace detail {

constexpr int kReduceThreads = 256;  // 8 warps
constexpr int kReduceWarps = kReduceThreads / 32;
constexpr std::size_t kSumMaxBlocks = 1024;
constexpr std::size_t kHistogramMaxBlocks = 4096;
constexpr std::size_t kSharedEntries = 12288;  // 48 KiB of 32-bit counts

// v of the lane `offset` above, word by word (any trivially copyable type).
template <class T>
__device__ PARDYN_INLINE T shuffle_down(const T& v, int offset) {
  constexpr int words = int((sizeof(T) + 3) / 4);
  unsigned in[words] = {}, out[words];
  memcpy(in, &v, sizeof(T));
#pragma unroll
  for (int k = 0; k < words; ++k) out[k] = __shfl_down_sync(0xffffffffu, in[k], offset);
  T o;
  memcpy(&o, out, sizeof(T));
  return o;
}

// Merges the 32 lanes' accumulators by a fixed tree; lane 0 ends with the warp's.
template <class Acc>
__device__ PARDYN_INLINE void warp_merge(Acc& a) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) a.merge(shuffle_down(a, offset));
}

// The block's sum of its threads' a (thread 0 gets it): warps, then the warps' sums by warp 0.
template <class Acc>
__device__ PARDYN_INLINE Acc block_merge(Acc a) {
  // Raw storage: an Acc with default member initialisers cannot be a __shared__ variable.
  __shared__ alignas(Acc) unsigned char raw[kReduceWarps * sizeof(Acc)];
  Acc* warps = reinterpret_cast<Acc*>(raw);
  warp_merge(a);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warps[warp] = a;
  __syncthreads();
  if (warp == 0) {
    a = lane < kReduceWarps ? warps[lane] : Acc{};
    warp_merge(a);
  }
  return a;
}

template <class F>
__global__ void __launch_bounds__(kReduceThreads)
    sum_kernel(const F f, std::size_t n, typename F::Acc* __restrict__ partial) {
  typename F::Acc a{};
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    f(i, a);
  a = block_merge(a);
  if (threadIdx.x == 0) partial[blockIdx.x] = a;
}

// One block: out = the blocks' partial sums merged (thread t takes blocks t, t + 256, ... in order,
// then the block's tree).
template <class Acc>
__global__ void __launch_bounds__(kReduceThreads)
    merge_partials_kernel(const Acc* __restrict__ partial, int blocks, Acc* __restrict__ out) {
  Acc a{};
  for (int b = threadIdx.x; b < blocks; b += kReduceThreads) a.merge(partial[b]);
  a = block_merge(a);
  if (threadIdx.x == 0) *out = a;
}

// What a GPU histogram functor counts into: a block's 32-bit histogram in shared memory, or the
// global 64-bit one.
struct SharedCounts {
  unsigned* h;
  __device__ PARDYN_INLINE void add(int e) const { atomicAdd(h + e, 1u); }
};
struct GlobalCounts {
  unsigned long long* h;
  __device__ PARDYN_INLINE void add(int e) const { atomicAdd(h + e, 1ull); }
};

template <class F, bool Shared>
__global__ void __launch_bounds__(kReduceThreads)
    histogram_kernel(const F f, std::size_t n, int entries, unsigned long long* __restrict__ hist) {
  extern __shared__ unsigned sub[];
  if (Shared) {
    for (int e = threadIdx.x; e < entries; e += blockDim.x) sub[e] = 0;
    __syncthreads();
  }
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    if (Shared) {
      const SharedCounts c{sub};
      f(i, c);
    } else {
      const GlobalCounts c{hist};
      f(i, c);
    }
  }
  if (Shared) {
    __syncthreads();
    for (int e = threadIdx.x; e < entries; e += blockDim.x)
      if (sub[e]) atomicAdd(hist + e, (unsigned long long)sub[e]);
  }
}

}  // namespace detail

template <class F>
typename F::Acc sum_over_index(std::size_t n, const F& f) {
  using Acc = typename F::Acc;
  constexpr int threads = detail::kReduceThreads;
  const int blocks = int(std::min<std::size_t>((n + threads - 1) / threads, detail::kSumMaxBlocks));
  // The blocks' partial sums, then the total, in the scratch memory.
  const std::size_t slot = (sizeof(Acc) + 255) / 256 * 256;
  char* mem = static_cast<char*>(scratch(slot * (std::size_t(blocks) + 1)));
  Acc* partial = reinterpret_cast<Acc*>(mem + slot);
  Acc* total = reinterpret_cast<Acc*>(mem);
  detail::sum_kernel<F><<<blocks, threads>>>(f, n, partial);
  PARDYN_CUDA_CHECK_LAUNCH("sum_kernel");
  detail::merge_partials_kernel<Acc><<<1, threads>>>(partial, blocks, total);
  PARDYN_CUDA_CHECK_LAUNCH("merge_partials_kernel");
  Acc out;
  PARDYN_CUDA_CHECK(cudaMemcpy(&out, total, sizeof(Acc), cudaMemcpyDeviceToHost));
  return out;
}

template <class F>
void histogram_over_index(std::size_t n, const F& f, std::size_t entries, std::uint64_t* hist) {
  static_assert(std::is_trivially_copyable_v<F>,
                "a histogram functor must be trivially copyable: GPU kernels take it by value");
  constexpr int threads = detail::kReduceThreads;
  const int blocks =
      int(std::min<std::size_t>((n + threads - 1) / threads, detail::kHistogramMaxBlocks));
  auto* d = static_cast<unsigned long long*>(scratch(entries * sizeof(unsigned long long)));
  PARDYN_CUDA_CHECK(cudaMemsetAsync(d, 0, entries * sizeof(unsigned long long), 0));
  if (entries <= detail::kSharedEntries) {
    detail::histogram_kernel<F, true>
        <<<blocks, threads, entries * sizeof(unsigned)>>>(f, n, int(entries), d);
    PARDYN_CUDA_CHECK_LAUNCH("histogram_kernel (shared histogram)");
  } else {
    detail::histogram_kernel<F, false><<<blocks, threads>>>(f, n, int(entries), d);
    PARDYN_CUDA_CHECK_LAUNCH("histogram_kernel (global histogram)");
  }
  std::vector<unsigned long long> host(entries);
  PARDYN_CUDA_CHECK(
      cudaMemcpy(host.data(), d, entries * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  for (std::size_t e = 0; e < entries; ++e) hist[e] += host[e];
}

}  // namespace pardyn::cuda

// The GPU loops of functor F, for the CPU side's sum_over_index / histogram_over_index(Backend::Cuda).
#define PARDYN_SUM_CUDA(...)                                                    \
  template typename __VA_ARGS__::Acc pardyn::cuda::sum_over_index<__VA_ARGS__>( \
      std::size_t, const __VA_ARGS__&);
#define PARDYN_HISTOGRAM_CUDA(...)                                                               \
  template void pardyn::cuda::histogram_over_index<__VA_ARGS__>(std::size_t, const __VA_ARGS__&, \
                                                                std::size_t, std::uint64_t*);
