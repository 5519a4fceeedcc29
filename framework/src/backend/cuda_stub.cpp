// SPDX-License-Identifier: BSD-3-Clause
// The CUDA backend's entry points in a build without CUDA: code that asks about the GPU links and
// learns there is none; anything that would need one says why it cannot run.
// (archs_run_on is pure string logic and lives in cuda_archs.cpp, shared by both builds.)
// The GPU engines of the cell list and the all-pairs ring have their stubs in their own layers
// (neighbourhood/cell_list_stub.cpp, parallel/ring_stub.cpp), which say why through no_cuda.
#include "cuda_stub.hpp"

#include <string>

#include "pardyn/app/backend.hpp"
#include "pardyn/app/cuda.hpp"

namespace pardyn::cuda {

void no_cuda(const char* what) {
  throw Error(std::string("this pardyn was built without CUDA, so ") + what +
              " is not available; use backend = \"cpu\", or rebuild pardyn with the CUDA toolkit "
              "installed (-DPARDYN_CUDA=ON)");
}

bool built_with_cuda() { return false; }
int device_count() { return 0; }
DeviceInfo device_info() { no_cuda("the GPU device query"); }
void select_device(int) { no_cuda("GPU selection"); }
std::size_t cap_memory(std::size_t) { no_cuda("a GPU memory limit"); }
MemoryResource& device_memory() { no_cuda("GPU memory"); }
std::unique_ptr<BackendOps> make_ops() { no_cuda("the CUDA backend"); }
void* scratch(std::size_t) { no_cuda("GPU scratch memory"); }
void synchronize(const char*) { no_cuda("GPU synchronisation"); }

}  // namespace pardyn::cuda
