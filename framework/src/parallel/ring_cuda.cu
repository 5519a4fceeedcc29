// SPDX-License-Identifier: BSD-3-Clause
// The GPU half of the all-pairs ring: pinned host buffers for the blocks in transit, their device
// copies on a second stream (so that a copy overlaps the kernel on the previous block), and events
// that order each copy before the kernel that reads it and after the kernel that last read its
// buffer.
#include <cuda_runtime.h>

#include <cstring>

#include "backend/cuda_buffer.cuh"
#include "pardyn/cuda_check.hpp"
#include "ring.hpp"
#include "store_ops.hpp"

namespace pardyn::parallel {
namespace {

using pardyn::detail::CudaBuffer;
using pardyn::detail::CudaMemory;
constexpr const char* kRing = "all-pairs ring's blocks";

class CudaRingBackend final : public RingBackend {
 public:
  CudaRingBackend() {
    PARDYN_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking));
    for (int b = 0; b < 2; ++b) {
      PARDYN_CUDA_CHECK(cudaEventCreateWithFlags(&copied_[b], cudaEventDisableTiming));
      PARDYN_CUDA_CHECK(cudaEventCreateWithFlags(&used_[b], cudaEventDisableTiming));
      PARDYN_CUDA_CHECK(cudaEventRecord(copied_[b], copy_));
      PARDYN_CUDA_CHECK(cudaEventRecord(used_[b], 0));
    }
  }
  ~CudaRingBackend() override {
    cudaDeviceSynchronize();
    for (auto* e : timers_) cudaEventDestroy(e);
    for (int b = 0; b < 2; ++b) cudaEventDestroy(copied_[b]), cudaEventDestroy(used_[b]);
    cudaStreamDestroy(copy_);
  }

  const char* pack_local(const ParticleStore& s, std::size_t bytes) override {
    char* dev = static_cast<char*>(local_dev_.reserve(bytes, 0, kRing));
    const std::size_t rec = 4 * (s.precision() == Precision::Float ? 4 : 8);
    parallel::pack_sources(s, dev, reinterpret_cast<std::int32_t*>(dev + s.size() * rec));
    char* host = static_cast<char*>(local_host_.reserve(bytes, 0, kRing));
    if (bytes) PARDYN_CUDA_CHECK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
    return host;
  }
  char* host_buffer(int which, std::size_t bytes) override {
    // Its last copy to the device must be done before it is overwritten.
    PARDYN_CUDA_CHECK(cudaEventSynchronize(copied_[which]));
    bytes_[which] = bytes;
    return static_cast<char*>(host_[which].reserve(bytes, 0, kRing));
  }
  SourceBlock make_block(int which, std::size_t n, std::size_t rec) override {
    const std::size_t bytes = bytes_[which];
    char* dev = static_cast<char*>(dev_[which].reserve(bytes, 0, kRing));
    // Not before the kernels that last read this device buffer are done; the next kernel (default
    // stream) not before the copy is.
    PARDYN_CUDA_CHECK(cudaStreamWaitEvent(copy_, used_[which], 0));
    if (bytes)
      PARDYN_CUDA_CHECK(
          cudaMemcpyAsync(dev, host_[which].as<char>(), bytes, cudaMemcpyHostToDevice, copy_));
    PARDYN_CUDA_CHECK(cudaEventRecord(copied_[which], copy_));
    PARDYN_CUDA_CHECK(cudaStreamWaitEvent(0, copied_[which], 0));
    SourceBlock blk;
    blk.n = n;
    blk.pos = dev;
    blk.type = reinterpret_cast<const std::int32_t*>(dev + n * rec);
    return blk;
  }
  void begin_compute() override {
    cudaEvent_t e;
    PARDYN_CUDA_CHECK(cudaEventCreate(&e));
    PARDYN_CUDA_CHECK(cudaEventRecord(e, 0));
    timers_.push_back(e);
  }
  void end_compute() override {
    cudaEvent_t e;
    PARDYN_CUDA_CHECK(cudaEventCreate(&e));
    PARDYN_CUDA_CHECK(cudaEventRecord(e, 0));
    timers_.push_back(e);
  }
  void computed(int which) override { PARDYN_CUDA_CHECK(cudaEventRecord(used_[which], 0)); }
  double total_seconds() override {
    double t = 0;
    if (!timers_.empty()) PARDYN_CUDA_CHECK(cudaEventSynchronize(timers_.back()));
    for (std::size_t k = 0; k + 1 < timers_.size(); k += 2) {
      float ms = 0;
      PARDYN_CUDA_CHECK(cudaEventElapsedTime(&ms, timers_[k], timers_[k + 1]));
      t += 1e-3 * ms;
    }
    for (auto* e : timers_) cudaEventDestroy(e);
    timers_.clear();
    return t;
  }

 private:
  cudaStream_t copy_ = nullptr;
  cudaEvent_t copied_[2] = {}, used_[2] = {};
  CudaBuffer<CudaMemory::Pinned> host_[2], local_host_;
  CudaBuffer<> dev_[2], local_dev_;
  std::size_t bytes_[2] = {0, 0};
  std::vector<cudaEvent_t> timers_;
};

}  // namespace

std::unique_ptr<RingBackend> make_cuda_ring_backend() {
  return std::make_unique<CudaRingBackend>();
}

}  // namespace pardyn::parallel
