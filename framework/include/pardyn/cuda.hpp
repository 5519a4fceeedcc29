// SPDX-License-Identifier: BSD-3-Clause
// Host-side view of the CUDA backend, usable from plain C++ files (no CUDA headers). Every function
// exists in every build: without CUDA, device_count() is 0 and the others throw pardyn::Error.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "pardyn/plugin.hpp"

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
// Makes device `index` the current one of this process (parallel runs: one GPU per rank). Call
// before anything else touches the GPU.
void select_device(int index);

// Whether code built for `archs` (CMake's CUDA_ARCHITECTURES syntax: "80;90", "90-real",
// "90-virtual") runs on a device of compute capability major.minor: machine code for the same major
// and a minor not above the device's, or PTX for a capability not above the device's.
bool archs_run_on(const std::string& archs, int cc_major, int cc_minor);

// The CUDA backend's memory and element-wise operations (see backend.hpp).
MemoryResource& device_memory();
std::unique_ptr<BackendOps> make_ops();

// Device scratch memory shared by the traversals within one force evaluation: grows as needed and
// is reused across steps, so no kernel allocates per call. Valid until the next call.
void* scratch(std::size_t bytes);

// Waits for the device and turns a pending asynchronous error into a pardyn::Error.
void synchronize(const char* where);

}  // namespace pardyn::cuda
