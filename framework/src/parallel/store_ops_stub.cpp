// SPDX-License-Identifier: BSD-3-Clause
// The device memory of the parallel store operations in a pardyn built without CUDA: no store lives on
// a device there, so none of them is reached; each reports an internal error if it ever is.
#include "store_ops.hpp"

namespace pardyn::parallel::gpu {

namespace {
[[noreturn]] void no_cuda() {
  throw Error("internal: a device store in a pardyn built without CUDA");
}
}  // namespace

void* stage(std::size_t) { no_cuda(); }
void* pinned_alloc(std::size_t) { no_cuda(); }
void pinned_free(void*) {}  // called only on what pinned_alloc returned: never
void* device_alloc(std::size_t) { no_cuda(); }
void copy_async(void*, const void*, std::size_t) { no_cuda(); }
void sync() { no_cuda(); }
void copy_side(void*, const void*, std::size_t) { no_cuda(); }
void sync_side() { no_cuda(); }
SideWork::SideWork(Backend) : on_(false) {}
SideWork::~SideWork() = default;
void SideWork::set(bool) {}
void download(void*, const void*, std::size_t) { no_cuda(); }
std::uint32_t* upload_index(std::uint32_t*, std::size_t&, const std::vector<std::uint32_t>&) {
  no_cuda();
}
void free_device(void*) {}  // called only on what device_alloc returned: never

}  // namespace pardyn::parallel::gpu
