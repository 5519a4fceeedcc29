// SPDX-License-Identifier: BSD-3-Clause
// For the stubs of a build without CUDA (backend/cuda_stub.cpp, neighbourhood/cell_list_stub.cpp,
// parallel/ring_stub.cpp): one message for whatever would need a GPU.
#pragma once

namespace pardyn::cuda {

// Throws an Error: "this pardyn was built without CUDA, so <what> is not available; use
// backend = "cpu", or rebuild pardyn with the CUDA toolkit installed (-DPARDYN_CUDA=ON)".
[[noreturn]] void no_cuda(const char* what);

}  // namespace pardyn::cuda
