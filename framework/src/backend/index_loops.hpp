// SPDX-License-Identifier: BSD-3-Clause
// Internal to libpardyn: two loops beside for_each_index (pardyn/for_each.hpp), written once per
// backend and run on functors, for the parallel store operations (parallel/store_ops.cpp):
//
//   max_over_index(backend, n, f)            the largest f(i) over [0, n), for a functor with
//                                            PARDYN_HD double operator()(std::size_t i) const
//                                            returning a non-negative measure (a value that is not
//                                            finite makes the result infinity). The GPU rounds each
//                                            value up to the next float and compares float bits, so
//                                            its result may exceed the CPU's by 1e-7 relative:
//                                            callers use it as a conservative bound.
//   select_index(backend, begin, end, f, lists, out, count)
//                                            for each list k < lists (at most kMaxLists): the i of
//                                            [begin, end) with f(i, k) true, in increasing order,
//                                            into out[k] (the backend's memory, room for
//                                            end - begin), and their number into count[k]. f has
//                                            PARDYN_HD bool operator()(std::size_t i, int k) const.
//                                            The GPU fetches all counts with one copy (one wait).
//   exclusive_sum(backend, in, out, n)       out[i] = in[0] + ... + in[i - 1] over [0, n) (backend
//                                            memory); returns the total (one wait on the GPU).
//
// The GPU versions are in index_loops_cuda.cuh; a .cu file instantiates them for each functor with
// PARDYN_MAX_OVER_CUDA(F) and PARDYN_SELECT_CUDA(F). exclusive_sum's is in store_ops_cuda.cu.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "pardyn/for_each.hpp"

namespace pardyn {

namespace cpu {
template <class F>
double max_over_index(std::size_t n, const F& f) {
  double w = 0;
  const std::int64_t m = std::int64_t(n);
#pragma omp parallel for schedule(static) reduction(max : w) if (n > 65536)
  for (std::int64_t i = 0; i < m; ++i) {
    const double v = f(std::size_t(i));
    w = std::isfinite(v) ? std::max(w, v) : std::numeric_limits<double>::infinity();
  }
  return w;
}

template <class F>
void select_index(std::size_t begin, std::size_t end, const F& f, int lists,
                  std::uint32_t* const* out, std::size_t* count) {
  // The tests in parallel (one bit per list), then the lists in order.
  const std::int64_t n = std::int64_t(end - begin);
  std::vector<std::uint8_t> bits(std::size_t(n), 0);
#pragma omp parallel for schedule(static) if (n > 65536)
  for (std::int64_t j = 0; j < n; ++j) {
    std::uint8_t b = 0;
    for (int k = 0; k < lists; ++k)
      if (f(begin + std::size_t(j), k)) b = std::uint8_t(b | (1u << k));
    bits[std::size_t(j)] = b;
  }
  for (int k = 0; k < lists; ++k) count[k] = 0;
  for (std::size_t j = 0; j < bits.size(); ++j)
    for (int k = 0; k < lists; ++k)
      if (bits[j] & (1u << k)) out[k][count[k]++] = std::uint32_t(begin + j);
}

inline std::int64_t exclusive_sum(const std::int64_t* in, std::int64_t* out, std::size_t n) {
  std::int64_t s = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t v = in[i];
    out[i] = s;
    s += v;
  }
  return s;
}
}  // namespace cpu

#if defined(PARDYN_FOR_EACH_HAS_CUDA)
namespace cuda {
template <class F>
double max_over_index(std::size_t n, const F& f);
template <class F>
void select_index(std::size_t begin, std::size_t end, const F& f, int lists,
                  std::uint32_t* const* out, std::size_t* count);
std::int64_t exclusive_sum(const std::int64_t* in, std::int64_t* out, std::size_t n);
}  // namespace cuda
#endif

constexpr int kMaxSelectLists = 4;

namespace detail {
[[noreturn]] inline void no_cuda_loop() {
  throw Error("internal: a loop over a GPU store in a pardyn built without CUDA");
}
}  // namespace detail

template <class F>
double max_over_index(Backend backend, std::size_t n, const F& f) {
  static_assert(std::is_trivially_copyable_v<F>, "a loop functor must be trivially copyable");
  if (n == 0) return 0;
  if (backend == Backend::Cuda) {
#if defined(PARDYN_FOR_EACH_HAS_CUDA)
    return cuda::max_over_index(n, f);
#else
    detail::no_cuda_loop();
#endif
  }
  return cpu::max_over_index(n, f);
}

template <class F>
void select_index(Backend backend, std::size_t begin, std::size_t end, const F& f, int lists,
                  std::uint32_t* const* out, std::size_t* count) {
  static_assert(std::is_trivially_copyable_v<F>, "a loop functor must be trivially copyable");
  if (lists < 1 || lists > kMaxSelectLists)
    throw Error("internal: select_index takes 1 to " + std::to_string(kMaxSelectLists) + " lists");
  if (end <= begin) {
    for (int k = 0; k < lists; ++k) count[k] = 0;
    return;
  }
  if (backend == Backend::Cuda) {
#if defined(PARDYN_FOR_EACH_HAS_CUDA)
    cuda::select_index(begin, end, f, lists, out, count);
    return;
#else
    detail::no_cuda_loop();
#endif
  }
  cpu::select_index(begin, end, f, lists, out, count);
}

inline std::int64_t exclusive_sum(Backend backend, const std::int64_t* in, std::int64_t* out,
                                  std::size_t n) {
  if (n == 0) return 0;
  if (backend == Backend::Cuda) {
#if defined(PARDYN_FOR_EACH_HAS_CUDA)
    return cuda::exclusive_sum(in, out, n);
#else
    detail::no_cuda_loop();
#endif
  }
  return cpu::exclusive_sum(in, out, n);
}

}  // namespace pardyn
