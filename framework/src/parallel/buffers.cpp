// SPDX-License-Identifier: BSD-3-Clause
// Where the parallel engines' buffers live: index lists, message stages and staged bytes, in host
// memory for a CPU store and in device (and pinned host) memory for a GPU store. The one unit of
// the parallel store operations that looks at the backend; their loops are in store_ops.cpp.
#include <algorithm>
#include <cstring>

#include "store_ops.hpp"

namespace pardyn::parallel {

Staged::Staged(const ParticleStore& s, char* host, std::size_t bytes)
    : s_(s),
      host_(host),
      bytes_(bytes),
      data_(s.backend() == Backend::Cuda && bytes ? static_cast<char*>(gpu::stage(bytes)) : host) {}
void Staged::to_device() const {
  if (data_ != host_) s_.memory().copy_from_host(data_, host_, bytes_);
}
void Staged::to_host() const {
  if (data_ != host_) s_.memory().copy_to_host(host_, data_, bytes_);
}

// ---------------------------------------------------------------------------------------------------
struct IndexList::Dev {
  std::uint32_t* ptr = nullptr;
  std::size_t capacity = 0;
  ~Dev() {
    if (ptr) gpu::free_device(ptr);
  }
};
IndexList::IndexList() = default;
IndexList::~IndexList() = default;
IndexList::IndexList(IndexList&&) noexcept = default;
IndexList& IndexList::operator=(IndexList&&) noexcept = default;

std::uint32_t* IndexList::buffer(Backend b, std::size_t n) {
  filled_on_ = b;
  if (b == Backend::Cpu) {
    host.resize(n);
    return host.data();
  }
  if (!dev_) dev_ = std::make_unique<Dev>();
  if (n > dev_->capacity || !dev_->ptr) {
    if (dev_->ptr) gpu::free_device(dev_->ptr);
    dev_->capacity = n + n / 4 + 64;
    dev_->ptr =
        static_cast<std::uint32_t*>(gpu::device_alloc(dev_->capacity * sizeof(std::uint32_t)));
  }
  return dev_->ptr;
}

void IndexList::set_count(std::size_t n) {
  if (filled_on_ == Backend::Cpu) {
    host.resize(n);
    changed();
    return;
  }
  count_ = n;
  device_only_ = true;
  dirty_ = false;
  host.clear();
}

void IndexList::fetch() {
  if (!device_only_) return;
  host.resize(count_);
  if (count_) gpu::download(host.data(), dev_->ptr, count_ * sizeof(std::uint32_t));
  device_only_ = false;
  dirty_ = false;
}

const std::uint32_t* IndexList::device(Backend b) {
  if (b == Backend::Cpu) return host.data();
  if (!dev_) dev_ = std::make_unique<Dev>();
  if (dirty_) {
    dev_->ptr = gpu::upload_index(dev_->ptr, dev_->capacity, host);
    dirty_ = false;
  }
  return dev_->ptr;
}

// A buffer grown to at least `want` bytes (with room to spare), freed only after the device is done
// with it.
template <class Alloc, class Release>
char* grow(char*& p, std::size_t& have, std::size_t want, Alloc alloc, Release release) {
  if (want > have) {
    if (p) {
      gpu::sync();
      release(p);
    }
    have = want + want / 4 + 256;
    p = static_cast<char*>(alloc(have));
  }
  return p;
}

struct Stage::Impl {
  std::vector<double> host_mem;  // CPU backend: the buffer itself
  char* dev = nullptr;
  char* pinned = nullptr;
  std::size_t dev_bytes = 0, pinned_bytes = 0;
  ~Impl() {
    if (dev) gpu::free_device(dev);
    if (pinned) gpu::pinned_free(pinned);
  }
};
Stage::Stage() : impl_(std::make_unique<Impl>()) {}
Stage::~Stage() = default;
Stage::Stage(Stage&&) noexcept = default;
Stage& Stage::operator=(Stage&&) noexcept = default;

char* Stage::device(Backend b, std::size_t bytes) {
  Impl& m = *impl_;
  if (b == Backend::Cpu) {
    if (m.host_mem.size() * 8 < bytes) m.host_mem.resize((bytes + 7) / 8 + (bytes + 7) / 32);
    return reinterpret_cast<char*>(m.host_mem.data());
  }
  return grow(m.dev, m.dev_bytes, bytes, gpu::device_alloc, gpu::free_device);
}

char* Stage::host(Backend b, std::size_t bytes) {
  if (b == Backend::Cpu) return device(b, bytes);
  Impl& m = *impl_;
  return grow(m.pinned, m.pinned_bytes, bytes, gpu::pinned_alloc, gpu::pinned_free);
}

void Stage::to_host(Backend b, std::size_t bytes) {
  if (b == Backend::Cpu || bytes == 0) return;
  gpu::copy_async(host(b, bytes), device(b, bytes), bytes);
}
void Stage::to_device(Backend b, std::size_t bytes) {
  if (b == Backend::Cpu || bytes == 0) return;
  gpu::copy_async(device(b, bytes), host(b, bytes), bytes);
}

void sync(Backend b) {
  if (b == Backend::Cuda) gpu::sync();
}

}  // namespace pardyn::parallel
