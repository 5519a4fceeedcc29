// SPDX-License-Identifier: BSD-3-Clause
// The CUDA backend's entry points in a build without CUDA: code that asks about the GPU links and
// learns there is none; anything that would need one says why it cannot run.
// (archs_run_on is pure string logic and lives in cuda_archs.cpp, shared by both builds.)
#include <string>

#include "neighbourhood/cell_list_impl.hpp"
#include "pardyn/app/backend.hpp"
#include "pardyn/app/cuda.hpp"
#include "parallel/ring.hpp"

namespace pardyn::cuda {

namespace {
[[noreturn]] void no_cuda(const char* what) {
  throw Error(std::string("this pardyn was built without CUDA, so ") + what +
              " is not available; use backend = \"cpu\", or rebuild pardyn with the CUDA toolkit "
              "installed (-DPARDYN_CUDA=ON)");
}
}  // namespace

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

// The GPU engines of the cell list and the all-pairs ring (the tree's is chosen by BackendChoice,
// pardyn/backend_choice.hpp, which says why a build without CUDA has none).
namespace pardyn::detail {
std::unique_ptr<CellEngine> make_cuda_cell_engine() { cuda::no_cuda("the cell list on the GPU"); }
}  // namespace pardyn::detail

namespace pardyn::parallel {
std::unique_ptr<RingBackend> make_cuda_ring_backend() {
  cuda::no_cuda("the all-pairs ring on the GPU");
}
}  // namespace pardyn::parallel
