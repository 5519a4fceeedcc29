// SPDX-License-Identifier: BSD-3-Clause
// Error checking for CUDA calls and kernel launches, for .cu files. Every failure becomes a
// pardyn::Error naming the file, the line, the call and CUDA's message.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/cuda_check.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <cuda_runtime_api.h>

#include <string>

#include "pardyn/core.hpp"

namespace pardyn::cuda::detail {
[[noreturn]] inline void fail(cudaError_t e, const char* what, const char* file, int line) {
  std::string msg = std::string("CUDA error at ") + file + ":" + std::to_string(line) + ": " +
                    what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  if (e == cudaErrorMemoryAllocation)
    msg += "; the GPU is out of memory: use fewer particles, float precision, or the CPU backend";
  throw Error(msg);
}
}  // namespace pardyn::cuda::detail

#define PARDYN_CUDA_CHECK(call)                                             \
  do {                                                                      \
    const cudaError_t pardyn_err_ = (call);                                 \
    if (pardyn_err_ != cudaSuccess)                                         \
      ::pardyn::cuda::detail::fail(pardyn_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: reports launch-configuration errors at once (execution errors surface at
// the next synchronising call, which is checked too).
#define PARDYN_CUDA_CHECK_LAUNCH(name)                                                  \
  do {                                                                                  \
    const cudaError_t pardyn_err_ = cudaGetLastError();                                 \
    if (pardyn_err_ != cudaSuccess)                                                     \
      ::pardyn::cuda::detail::fail(pardyn_err_, "launch of " name, __FILE__, __LINE__); \
  } while (0)
