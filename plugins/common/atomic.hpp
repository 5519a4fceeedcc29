// SPDX-License-Identifier: BSD-3-Clause
// Atomics on either backend, for functors that the framework's loops run on the host's OpenMP
// threads or on the GPU (for_each.hpp): CUDA's on the device, the GCC builtins (relaxed) between
// the host's threads. load/store: plain reads and writes of words that other threads change
// meanwhile (plain accesses on the device, as CUDA's memory model allows).
#pragma once

#include <cstddef>
#include <cstdint>

#include "pardyn/core.hpp"

namespace pardyn::plugins {

namespace atomic {

template <class T>
PARDYN_HD PARDYN_INLINE T load(const T* p) {
#if defined(__CUDA_ARCH__)
  return *p;
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

template <class T>
PARDYN_HD PARDYN_INLINE void store(T* p, T v) {
#if defined(__CUDA_ARCH__)
  *p = v;
#else
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
#endif
}

// Returns the value before.
PARDYN_HD PARDYN_INLINE std::uint32_t cas(std::uint32_t* p, std::uint32_t expected,
                                          std::uint32_t desired) {
#if defined(__CUDA_ARCH__)
  return atomicCAS(p, expected, desired);
#else
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected;
#endif
}

PARDYN_HD PARDYN_INLINE std::uint64_t add(std::uint64_t* p, std::uint64_t v) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(reinterpret_cast<unsigned long long*>(p), (unsigned long long)v);
#else
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

PARDYN_HD PARDYN_INLINE void add(std::uint32_t* p, std::uint32_t v) {
#if defined(__CUDA_ARCH__)
  atomicAdd(p, v);
#else
  __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

PARDYN_HD PARDYN_INLINE void set_bit(std::uint64_t* words, std::size_t bit) {
  std::uint64_t* w = words + (bit >> 6);
  const std::uint64_t m = std::uint64_t(1) << (bit & 63);
  if (load(w) & m) return;  // most particles find their cell's bit set: no atomic
#if defined(__CUDA_ARCH__)
  atomicOr(reinterpret_cast<unsigned long long*>(w), (unsigned long long)m);
#else
  __atomic_fetch_or(w, m, __ATOMIC_RELAXED);
#endif
}

PARDYN_HD PARDYN_INLINE void min(std::int64_t* p, std::int64_t v) {
  if (load(p) <= v) return;
#if defined(__CUDA_ARCH__)
  atomicMin(reinterpret_cast<long long*>(p), (long long)v);
#else
  std::int64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v < old &&
         !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
#endif
}

}  // namespace atomic

}  // namespace pardyn::plugins
