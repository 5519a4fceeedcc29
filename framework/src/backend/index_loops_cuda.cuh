// SPDX-License-Identifier: BSD-3-Clause
// The GPU half of index_loops.hpp: a grid-stride maximum (float bits and atomicMax) and cub's
// selection over a counting iterator. Include from .cu files of libpardyn only; instantiate with
// PARDYN_MAX_OVER_CUDA(F) and PARDYN_SELECT_CUDA(F).
#pragma once

#if !defined(__CUDACC__)
#error "index_loops_cuda.cuh holds CUDA kernels: include it only from .cu files"
#endif

#include <cuda_runtime.h>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstring>

#include "index_loops.hpp"
#include "pardyn/cuda_check.hpp"

namespace pardyn::cuda {

namespace detail {
// Device scratch reused from call to call (index_loops.cu): slot 0 the maximum's word, slot 1 the
// selection's count, slot 2 cub's temporary storage.
void* index_loop_scratch(int slot, std::size_t bytes);

template <class F>
__global__ void __launch_bounds__(256) max_kernel(const F f, std::size_t n, unsigned int* bits) {
  float w = 0;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    // Rounded up to a float, compared as unsigned bits (non-negative floats order like their
    // bits); a NaN or an infinity becomes infinity.
    const double v = f(i);
    float x = float(v);
    if (!(v == v) || isinf(v)) x = INFINITY;
    w = fmaxf(w, x * 1.0000001f);
  }
  for (int o = 16; o; o >>= 1) w = fmaxf(w, __shfl_xor_sync(0xffffffffu, w, o));
  if ((threadIdx.x & 31) == 0) atomicMax(bits, __float_as_uint(w));
}

template <class F>
struct AsPredicate {
  F f;
  int k;
  __device__ bool operator()(std::uint32_t i) const { return f(std::size_t(i), k); }
};
}  // namespace detail

template <class F>
double max_over_index(std::size_t n, const F& f) {
  auto* bits = static_cast<unsigned int*>(detail::index_loop_scratch(0, sizeof(unsigned int)));
  PARDYN_CUDA_CHECK(cudaMemsetAsync(bits, 0, sizeof(unsigned int), 0));
  const std::size_t want = (n + 255) / 256;
  const int blocks = int(std::min<std::size_t>(want, 2048));
  detail::max_kernel<F><<<blocks, 256>>>(f, n, bits);
  PARDYN_CUDA_CHECK_LAUNCH("max_kernel");
  unsigned int h = 0;
  PARDYN_CUDA_CHECK(cudaMemcpy(&h, bits, sizeof h, cudaMemcpyDeviceToHost));
  float v;
  std::memcpy(&v, &h, sizeof v);
  return double(v);
}

// One cub selection per list on the default stream, then every count in one copy: each wait costs
// (measured: two ranks sharing one H100 lost 4 % of their LJ steps/s to a second wait per slab).
template <class F>
void select_index(std::size_t begin, std::size_t end, const F& f, int lists,
                  std::uint32_t* const* out, std::size_t* count) {
  auto* counts = static_cast<unsigned long long*>(
      detail::index_loop_scratch(1, kMaxSelectLists * sizeof(unsigned long long)));
  const thrust::counting_iterator<std::uint32_t> first{std::uint32_t(begin)};
  const long long n = (long long)(end - begin);
  for (int k = 0; k < lists; ++k) {
    const detail::AsPredicate<F> pred{f, k};
    std::size_t bytes = 0;
    PARDYN_CUDA_CHECK(
        cub::DeviceSelect::If(nullptr, bytes, first, out[k], counts + k, n, pred, cudaStream_t(0)));
    void* temp = detail::index_loop_scratch(2, bytes);
    PARDYN_CUDA_CHECK(
        cub::DeviceSelect::If(temp, bytes, first, out[k], counts + k, n, pred, cudaStream_t(0)));
  }
  unsigned long long h[kMaxSelectLists] = {};
  PARDYN_CUDA_CHECK(cudaMemcpy(h, counts, std::size_t(lists) * sizeof(unsigned long long),
                               cudaMemcpyDeviceToHost));
  for (int k = 0; k < lists; ++k) count[k] = std::size_t(h[k]);
}

}  // namespace pardyn::cuda

#define PARDYN_MAX_OVER_CUDA(...) \
  template double pardyn::cuda::max_over_index<__VA_ARGS__>(std::size_t, const __VA_ARGS__&);
#define PARDYN_SELECT_CUDA(...)                          \
  template void pardyn::cuda::select_index<__VA_ARGS__>( \
      std::size_t, std::size_t, const __VA_ARGS__&, int, std::uint32_t* const*, std::size_t*);
