// SPDX-License-Identifier: BSD-3-Clause
// The parallel engines' store operations on the GPU: the loops of store_functors.hpp's functors
// (every store operation is written once, in store_ops.cpp, and runs these through for_each_index,
// max_over_index and select_index) and the device memory the operations' buffers use. Default stream
// throughout, like the rest of the CUDA backend, so that these kernels are ordered with the
// integrators' and the forces'.
#include <cuda_runtime.h>

#include <cub/device/device_scan.cuh>

#include <cstring>

#include "../index_loops_cuda.cuh"
#include "pardyn/cuda_check.hpp"
#include "pardyn/for_each_cuda.cuh"
#include "store_functors.hpp"
#include "store_ops.hpp"

PARDYN_STORE_FUNCTORS(PARDYN_FOR_EACH_CUDA)
PARDYN_STORE_MAX_FUNCTORS(PARDYN_MAX_OVER_CUDA)
PARDYN_STORE_SELECT_FUNCTORS(PARDYN_SELECT_CUDA)

namespace pardyn::parallel::gpu {
namespace {

// A device buffer that grows and is reused (one per purpose).
struct Buffer {
  void* p = nullptr;
  std::size_t bytes = 0;
  void* get(std::size_t want) {
    if (want > bytes) {
      if (p) PARDYN_CUDA_CHECK(cudaFree(p));
      bytes = want + want / 4 + 256;
      PARDYN_CUDA_CHECK(cudaMalloc(&p, bytes));
    }
    return p;
  }
};
Buffer g_stage;

}  // namespace

void* stage(std::size_t bytes) { return g_stage.get(bytes); }

void free_device(void* p) { cudaFree(p); }

std::uint32_t* upload_index(std::uint32_t* dev, std::size_t& capacity,
                            const std::vector<std::uint32_t>& host) {
  if (host.size() > capacity || !dev) {
    if (dev) PARDYN_CUDA_CHECK(cudaFree(dev));
    capacity = host.size() + host.size() / 4 + 64;
    PARDYN_CUDA_CHECK(cudaMalloc(&dev, capacity * sizeof(std::uint32_t)));
  }
  if (!host.empty())
    PARDYN_CUDA_CHECK(
        cudaMemcpy(dev, host.data(), host.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  return dev;
}

void download(void* dst, const void* src, std::size_t bytes) {
  PARDYN_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

void* pinned_alloc(std::size_t bytes) {
  void* p = nullptr;
  PARDYN_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
  return p;
}
void pinned_free(void* p) { cudaFreeHost(p); }
void* device_alloc(std::size_t bytes) {
  void* p = nullptr;
  PARDYN_CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}
void copy_async(void* dst, const void* src, std::size_t bytes) {
  PARDYN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, 0));
}
void sync() { PARDYN_CUDA_CHECK(cudaStreamSynchronize(0)); }

namespace {
// Made at the first use, for the device this process runs on (chosen before any copy).
cudaStream_t side_stream() {
  static const cudaStream_t s = [] {
    cudaStream_t t = nullptr;
    PARDYN_CUDA_CHECK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
    return t;
  }();
  return s;
}
}  // namespace
void copy_side(void* dst, const void* src, std::size_t bytes) {
  PARDYN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, side_stream()));
}
void sync_side() { PARDYN_CUDA_CHECK(cudaStreamSynchronize(side_stream())); }

}  // namespace pardyn::parallel::gpu

// index_loops_cuda.cuh's scratch: one growing device buffer per slot.
namespace pardyn::cuda::detail {
void* index_loop_scratch(int slot, std::size_t bytes) {
  static parallel::gpu::Buffer buffers[3];
  return buffers[slot].get(bytes);
}
}  // namespace pardyn::cuda::detail

namespace pardyn::cuda {
std::int64_t exclusive_sum(const std::int64_t* in, std::int64_t* out, std::size_t n) {
  std::size_t bytes = 0;
  PARDYN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n, cudaStream_t(0)));
  void* temp = detail::index_loop_scratch(2, bytes);
  PARDYN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, bytes, in, out, n, cudaStream_t(0)));
  std::int64_t last[2] = {0, 0};
  PARDYN_CUDA_CHECK(cudaMemcpyAsync(&last[0], in + n - 1, 8, cudaMemcpyDeviceToHost, 0));
  PARDYN_CUDA_CHECK(cudaMemcpyAsync(&last[1], out + n - 1, 8, cudaMemcpyDeviceToHost, 0));
  PARDYN_CUDA_CHECK(cudaStreamSynchronize(0));
  return last[0] + last[1];
}
}  // namespace pardyn::cuda
