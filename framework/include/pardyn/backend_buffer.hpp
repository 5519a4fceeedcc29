// SPDX-License-Identifier: BSD-3-Clause
// The one grow-only array of plugins' backend work: an array in a backend's memory (the store's
// MemoryResource: host RAM for the CPU backend, device memory for CUDA) that grows on demand and is
// kept from call to call, for the functors of for_each.hpp and reduce.hpp that need arrays on
// whichever backend the run uses (a reference, a list, counters). Host code; no CUDA needed: the
// memory resource does the CUDA calls (each checked). Example:
//   BackendBuffer<double> ref_;
//   const double* r = ref_.upload(store.memory(), host_values);  // a copy in the store's memory
//   std::uint64_t* c = counts_.zeroed(store.memory(), 8);         // 8 zeroed counters
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "pardyn/particles.hpp"

namespace pardyn {

template <class T>
class BackendBuffer {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  BackendBuffer() = default;
  BackendBuffer(const BackendBuffer&) = delete;
  BackendBuffer& operator=(const BackendBuffer&) = delete;
  ~BackendBuffer() { release(); }

  // Room for n elements in m (the contents are kept only while no growth is needed).
  T* get(MemoryResource& m, std::size_t n) {
    if (&m != mem_ || n > cap_) {
      release();
      p_ = static_cast<T*>(m.allocate(std::max<std::size_t>(n, 1) * sizeof(T)));
      mem_ = &m;
      cap_ = n;
    }
    return p_;
  }
  // n zeroed elements.
  T* zeroed(MemoryResource& m, std::size_t n) {
    T* p = get(m, n);
    m.fill_zero(p, n * sizeof(T));
    return p;
  }
  // A copy of v.
  T* upload(MemoryResource& m, const std::vector<T>& v) {
    T* p = get(m, v.size());
    m.copy_from_host(p, v.data(), v.size() * sizeof(T));
    return p;
  }
  // The first n elements, into out.
  void download(std::vector<T>& out, std::size_t n) const {
    out.resize(n);
    if (n) mem_->copy_to_host(out.data(), p_, n * sizeof(T));
  }
  T* data() const { return p_; }
  std::size_t capacity() const { return cap_; }
  // The memory it was last given (null before the first get).
  const MemoryResource* memory() const { return mem_; }

 private:
  void release() {
    if (p_) mem_->deallocate(p_);
    p_ = nullptr;
    cap_ = 0;
  }

  MemoryResource* mem_ = nullptr;
  T* p_ = nullptr;
  std::size_t cap_ = 0;
};

}  // namespace pardyn
