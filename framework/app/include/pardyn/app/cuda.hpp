// SPDX-License-Identifier: BSD-3-Clause
// What the application (libpardyn, the pardyn program, the tests and benchmarks) does with the CUDA
// backend and plugins do not: choosing the device, checking a plugin's architectures, and making the
// backend's memory and operations. The rest of the host-side view is the SDK's pardyn/cuda.hpp.
// Every function exists in every build: without CUDA they throw pardyn::Error.
#pragma once

#include <memory>
#include <string>

#include "pardyn/backend_ops.hpp"
#include "pardyn/cuda.hpp"
#include "pardyn/particles.hpp"

namespace pardyn::cuda {

// Makes device `index` the current one of this process (parallel runs: one GPU per rank). Call
// before anything else touches the GPU.
void select_device(int index);

// Whether code built for `archs` (CMake's CUDA_ARCHITECTURES syntax: "80;90", "90-real",
// "90-virtual") runs on a device of compute capability major.minor: machine code for the same major
// and a minor not above the device's, or PTX for a capability not above the device's.
bool archs_run_on(const std::string& archs, int cc_major, int cc_minor);

// The CUDA backend's memory and element-wise operations (pardyn/app/backend.hpp).
MemoryResource& device_memory();
std::unique_ptr<BackendOps> make_ops();

}  // namespace pardyn::cuda
