// SPDX-License-Identifier: BSD-3-Clause
// Host-side view of the CUDA backend for plugins and the SDK's CUDA traversals, usable from plain
// C++ files (no CUDA headers): whether there is a GPU, what it is, the traversals' scratch memory,
// and the check for asynchronous errors. Every function exists in every build: without CUDA,
// device_count() is 0 and the others throw pardyn::Error. (What only the application calls, such
// as choosing the device or making the backend's operations, is in pardyn/app/cuda.hpp.)
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/cuda.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <cstddef>
#include <string>

#include "pardyn/core.hpp"

namespace pardyn::cuda {

// True when this libpardyn was built with the CUDA backend.
bool built_with_cuda();
// Number of usable CUDA devices (0 without a driver, without a device, or without CUDA support).
int device_count();

struct DeviceInfo {
  int id = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0;
  int clock_khz = 0;             // maximum SM clock
  std::size_t total_memory = 0;  // bytes
  std::size_t free_memory = 0;
  std::size_t l2_bytes = 0;
  std::size_t shared_per_block_optin = 0;
};
DeviceInfo device_info();
// Device scratch memory shared by the traversals within one force evaluation: grows as needed and
// is reused across steps, so no kernel allocates per call. Valid until the next call.
void* scratch(std::size_t bytes);

// Waits for the device and turns a pending asynchronous error into a pardyn::Error.
void synchronize(const char* where);

}  // namespace pardyn::cuda
