// SPDX-License-Identifier: BSD-3-Clause
// The grow-only CUDA allocations of libpardyn's engines (the cell-list and tree builders, the
// all-pairs ring, the parallel store operations), written once: memory that grows on demand and is
// kept from call to call, so that no step allocates once the sizes settle. Device memory, or pinned
// host memory (CudaMemory::Pinned: the staging of transfers). Plugins have BackendBuffer
// (pardyn/backend_buffer.hpp), which goes through the store's memory resource instead.
// Internal to libpardyn; host code of .cu files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "pardyn/core.hpp"
#include "pardyn/for_each_cuda.cuh"  // launch_stream()
#include "pardyn/cuda_check.hpp"

namespace pardyn::detail {

enum class CudaMemory { Device, Pinned };

template <CudaMemory M = CudaMemory::Device>
class CudaBuffer {
 public:
  CudaBuffer() = default;
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  ~CudaBuffer() { release(ptr_); }  // unchecked: a destructor must not throw

  // At least `bytes`. A growth asks for an eighth more than needed, and at least a quarter more
  // than before, so that a slowly growing need does not allocate every call. The contents are lost
  // but for the first `keep` bytes of device memory (copied on the launch stream). what: named in
  // the out-of-memory error.
  void* reserve(std::size_t bytes, std::size_t keep = 0, const char* what = "scratch arrays") {
    if (bytes <= size_ && ptr_) return ptr_;
    if constexpr (M == CudaMemory::Pinned) keep = 0;
    const std::size_t want = std::max(bytes + bytes / 8, size_ + size_ / 4) + 256;
    void* old = ptr_;
    if (keep == 0) free_now(old);  // first, so that the old and the new need not fit together
    ptr_ = nullptr;
    size_ = 0;
    ptr_ = allocate(want, what);
    size_ = want;
    if constexpr (M == CudaMemory::Device) {
      if (keep > 0 && old) {
        PARDYN_CUDA_CHECK(
            cudaMemcpyAsync(ptr_, old, keep, cudaMemcpyDeviceToDevice, cuda::launch_stream()));
        free_now(old);
      }
    }
    return ptr_;
  }
  // Room for n elements of T.
  template <class T>
  T* reserve_for(std::size_t n, const char* what) {
    return static_cast<T*>(reserve(n * sizeof(T), 0, what));
  }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t size() const { return size_; }

 private:
  static void* allocate(std::size_t bytes, const char* what) {
    void* p = nullptr;
    if constexpr (M == CudaMemory::Pinned) {
      PARDYN_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
      return p;
    }
    if (cudaMalloc(&p, bytes) == cudaSuccess) return p;
    (void)cudaGetLastError();  // not sticky: clear it, so that the next launch check is not blamed
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    throw Error("the GPU is out of memory for the " + std::string(what) + " (" +
                std::to_string(bytes >> 20) + " MiB asked, " + std::to_string(free_b >> 20) +
                " MiB free); use fewer particles or the CPU backend");
  }
  // Frees p; cudaFree and cudaFreeHost wait for the device, so no kernel or copy still reads it.
  static void free_now(void* p) {
    if (!p) return;
    if constexpr (M == CudaMemory::Device) PARDYN_CUDA_CHECK(cudaFree(p));
    else PARDYN_CUDA_CHECK(cudaFreeHost(p));
  }
  static void release(void* p) {
    if (!p) return;
    if constexpr (M == CudaMemory::Device) (void)cudaFree(p);
    else (void)cudaFreeHost(p);
  }

  void* ptr_ = nullptr;
  std::size_t size_ = 0;
};

// n elements of T in a CudaBuffer.
template <class T>
class CudaArray {
 public:
  T* reserve(std::size_t n, const char* what) { return buf_.template reserve_for<T>(n, what); }
  T* data() const { return buf_.template as<T>(); }

 private:
  CudaBuffer<> buf_;
};

}  // namespace pardyn::detail
