// SPDX-License-Identifier: BSD-3-Clause
// A device array that grows on demand, for plugins' CUDA code (.cu files only). Every CUDA call is
// checked (pardyn/cuda_check.hpp): a failure is a pardyn::Error with the file and line.
#pragma once

#if !defined(__CUDACC__)
#error "device_buffer.cuh holds CUDA code: include it only from .cu files"
#endif

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "pardyn/cuda_check.hpp"

namespace pardyn::plugins {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (p_) (void)cudaFree(p_);
  }
  // Room for n elements (the contents are kept only while no growth is needed).
  T* get(std::size_t n) {
    if (n > cap_) {
      if (p_) PARDYN_CUDA_CHECK(cudaFree(p_));
      p_ = nullptr;
      cap_ = 0;
      PARDYN_CUDA_CHECK(cudaMalloc(&p_, std::max<std::size_t>(n, 1) * sizeof(T)));
      cap_ = n;
    }
    return p_;
  }
  T* data() const { return p_; }

 private:
  T* p_ = nullptr;
  std::size_t cap_ = 0;
};

}  // namespace pardyn::plugins
