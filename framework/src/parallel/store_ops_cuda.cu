// SPDX-License-Identifier: BSD-3-Clause
// The parallel engines' store operations on the GPU: the loops of store_functors.hpp's functors
// (every store operation is written once, in store_ops.cpp, and runs these through for_each_index,
// max_over_index and select_index) and the device memory the operations' buffers use. Default stream
// throughout, like the rest of the CUDA backend, so that these kernels are ordered with the
// integrators' and the forces', except while a SideWork moves this thread's loops, copies and
// waits to the side stream (launch_stream()).
#include <cuda_runtime.h>

#include <cub/device/device_scan.cuh>

#include <cstring>

#include "backend/cuda_buffer.cuh"
#include "backend/index_loops_cuda.cuh"
#include "pardyn/cuda_check.hpp"
#include "pardyn/for_each_cuda.cuh"
#include "store_functors.hpp"
#include "store_ops.hpp"

PARDYN_STORE_FUNCTORS(PARDYN_FOR_EACH_CUDA)
PARDYN_STORE_MAX_FUNCTORS(PARDYN_MAX_OVER_CUDA)
PARDYN_STORE_SELECT_FUNCTORS(PARDYN_SELECT_CUDA)

namespace pardyn::parallel::gpu {
namespace {

// Never destroyed: they live until the process ends, after the CUDA runtime has gone.
pardyn::detail::CudaBuffer<>& g_stage = *new pardyn::detail::CudaBuffer<>;

}  // namespace

void* stage(std::size_t bytes) { return g_stage.reserve(bytes, 0, "parallel staging"); }

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
  PARDYN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, cuda::launch_stream()));
}
void sync() { PARDYN_CUDA_CHECK(cudaStreamSynchronize(cuda::launch_stream())); }

namespace {
// Made at the first use, for the device this process runs on (chosen before any copy), with the
// device's highest priority: the block scheduler then starts its kernels (the tree exchange's
// small classification and packing kernels) as soon as the force walk running on the default
// stream frees room on an SM, rather than after every block of the walk has started (measured,
// 10^7 real gas on 2 H100s: at the default priority the side work ran after the walk).
cudaStream_t side_stream() {
  static const cudaStream_t s = [] {
    int least = 0, greatest = 0;
    PARDYN_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t t = nullptr;
    PARDYN_CUDA_CHECK(cudaStreamCreateWithPriority(&t, cudaStreamNonBlocking, greatest));
    return t;
  }();
  return s;
}
}  // namespace

namespace {
thread_local cudaStream_t t_stream = nullptr;  // this thread's work stream: 0 or side_stream()
}  // namespace

namespace {
cudaEvent_t make_event() {
  cudaEvent_t e = nullptr;
  PARDYN_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}
}  // namespace

SideWork::SideWork(Backend b) : on_(b == Backend::Cuda && t_stream == nullptr) {
  if (!on_) return;
  // The side stream waits for what the default stream was given so far (not for what comes after).
  static const cudaEvent_t ready = make_event();
  PARDYN_CUDA_CHECK(cudaEventRecord(ready, 0));
  PARDYN_CUDA_CHECK(cudaStreamWaitEvent(side_stream(), ready, 0));
  t_stream = side_stream();
}
SideWork::~SideWork() {
  if (!on_) return;
  t_stream = nullptr;
  // And the default stream's later work waits for the side stream's (unchecked: a destructor must
  // not throw; a failure shows at the next checked call).
  static const cudaEvent_t done = make_event();
  cudaEventRecord(done, side_stream());
  cudaStreamWaitEvent(0, done, 0);
}
void SideWork::set(bool side) {
  if (on_) t_stream = side ? side_stream() : nullptr;
}

void copy_side(void* dst, const void* src, std::size_t bytes) {
  PARDYN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, side_stream()));
}
void sync_side() { PARDYN_CUDA_CHECK(cudaStreamSynchronize(side_stream())); }

}  // namespace pardyn::parallel::gpu

// index_loops_cuda.cuh's scratch: one growing device buffer per slot.
namespace pardyn::cuda::detail {
void* index_loop_scratch(int slot, std::size_t bytes) {
  // Never destroyed, like g_stage.
  static pardyn::detail::CudaBuffer<>* const buffers = new pardyn::detail::CudaBuffer<>[3];
  return buffers[slot].reserve(bytes, 0, "index loops' scratch");
}
}  // namespace pardyn::cuda::detail

namespace pardyn::cuda {
cudaStream_t launch_stream() { return parallel::gpu::t_stream; }

std::int64_t exclusive_sum(const std::int64_t* in, std::int64_t* out, std::size_t n) {
  std::size_t bytes = 0;
  const cudaStream_t s = launch_stream();
  PARDYN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n, s));
  void* temp = detail::index_loop_scratch(2, bytes);
  PARDYN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, bytes, in, out, n, s));
  std::int64_t last[2] = {0, 0};
  PARDYN_CUDA_CHECK(cudaMemcpyAsync(&last[0], in + n - 1, 8, cudaMemcpyDeviceToHost, s));
  PARDYN_CUDA_CHECK(cudaMemcpyAsync(&last[1], out + n - 1, 8, cudaMemcpyDeviceToHost, s));
  PARDYN_CUDA_CHECK(cudaStreamSynchronize(s));
  return last[0] + last[1];
}
}  // namespace pardyn::cuda
