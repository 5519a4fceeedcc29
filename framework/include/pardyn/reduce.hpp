// SPDX-License-Identifier: BSD-3-Clause
// Two loops beside for_each_index (for_each.hpp), written once per backend: a sum and a histogram
// over the indices [0, n), for plugins' analyses. The order in which partial results are merged
// depends only on n, never on the number of OpenMP threads or on the GPU: a sum is the same to the
// last bit with 1 thread or 64, and from run to run on the GPU (the CPU and the GPU add in different
// orders, so their sums may differ in the last bits; histograms count integers and agree exactly).
//
//   sum_over_index(backend, n, f)
//       f is a trivially copyable functor with a type F::Acc and
//           PARDYN_HD void operator()(std::size_t i, typename F::Acc& acc) const;
//       that adds the terms of index i to acc. Acc is trivially copyable, its value-initialised
//       state (Acc{}) is zero, and it has PARDYN_HD void merge(const Acc& other), which adds other's
//       sums into it (a CompensatedSum or a plain double per sum, a max, a count). Returns the
//       total.
//         CPU: [0, n) in blocks of kSumBlock indices; each block summed in index order from Acc{}
//              (the blocks spread over the OpenMP threads), then the blocks' sums merged in block
//              order on the calling thread.
//         GPU: a grid of min(ceil(n / 256), 1024) blocks of 256 threads (a function of n only); each
//              thread sums its indices (i, i + grid, ...), a block merges its threads by a fixed
//              tree (warp shuffles, then the warps), and one block merges the blocks' sums by the same
//              tree. One Acc comes to the host.
//   histogram_over_index(backend, n, f, entries, hist)
//       f is a trivially copyable functor with
//           template <class Counts> PARDYN_HD void operator()(std::size_t i, Counts& c) const;
//       that calls c.add(e) once for each count of index i in the entry e of [0, entries). Adds the
//       counts to hist[0 .. entries) (host memory, 64-bit).
//         CPU: one histogram per thread (fewer threads where the copies would pass 2^23 entries),
//              the items spread over the threads in chunks of 16 (their work may vary), the
//              histograms added at the end.
//         GPU: one thread per index; a block counts into a 32-bit histogram in shared memory where
//              it fits (entries <= 12288) and adds it to the global one at the end, else it counts
//              into the global one with 64-bit atomics. Only the histogram comes to the host.
//
// The GPU loops are in reduce_cuda.cuh: a .cu file of the plugin instantiates them for each functor
// with PARDYN_SUM_CUDA(F) and PARDYN_HISTOGRAM_CUDA(F). Example (docs/plugins.md):
//   struct Sums { double x2 = 0; PARDYN_HD void merge(const Sums& o) { x2 += o.x2; } };
//   struct SquareX { using Acc = Sums; const double* x;
//                    PARDYN_HD void operator()(std::size_t i, Sums& s) const { s.x2 += x[i] * x[i]; } };
//   const double total = sum_over_index(store.backend(), n, SquareX{x}).x2;
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "pardyn/backend_choice.hpp"
#include "pardyn/for_each.hpp"

namespace pardyn {

// Indices per block of the CPU sum: the blocks, not the threads, fix the order of the additions.
constexpr std::size_t kSumBlock = 4096;
// Item chunk of the CPU histogram loop (schedule(dynamic)).
constexpr std::size_t kHistogramChunk = 16;
// Entries of all the CPU histogram loop's per-thread copies together, at most.
constexpr std::size_t kHistogramCopies = std::size_t(1) << 23;

namespace detail {
template <class F>
void check_sum_functor() {
  static_assert(std::is_trivially_copyable_v<F>,
                "a sum functor must be trivially copyable: GPU kernels take it by value");
  static_assert(std::is_trivially_copyable_v<typename F::Acc>,
                "a sum's accumulator (F::Acc) must be trivially copyable: blocks exchange it");
}

// What the CPU histogram functor counts into.
struct HostCounts {
  std::uint64_t* h;
  void add(int e) const { ++h[e]; }
};
}  // namespace detail

namespace cpu {
template <class F>
typename F::Acc sum_over_index(std::size_t n, const F& f) {
  detail::check_sum_functor<F>();
  using Acc = typename F::Acc;
  const std::size_t blocks = (n + kSumBlock - 1) / kSumBlock;
  std::vector<Acc> part(blocks, Acc{});
  const std::int64_t nb = std::int64_t(blocks);
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (std::int64_t b = 0; b < nb; ++b) {
    Acc acc{};
    const std::size_t end = std::min(n, std::size_t(b + 1) * kSumBlock);
    for (std::size_t i = std::size_t(b) * kSumBlock; i < end; ++i) f(i, acc);
    part[std::size_t(b)] = acc;
  }
  Acc total{};
  for (const Acc& p : part) total.merge(p);
  return total;
}

template <class F>
void histogram_over_index(std::size_t n, const F& f, std::size_t entries, std::uint64_t* hist) {
  static_assert(std::is_trivially_copyable_v<F>,
                "a histogram functor must be trivially copyable: GPU kernels take it by value");
  const int threads = int(std::max<std::size_t>(
      1, std::min<std::size_t>(std::size_t(omp_get_max_threads()),
                               kHistogramCopies / std::max<std::size_t>(entries, 1))));
  std::vector<std::uint64_t> part(std::size_t(threads) * entries, 0);
  const std::int64_t m = std::int64_t(n);
#pragma omp parallel num_threads(threads) if (n > kHistogramChunk)
  {
    const detail::HostCounts c{part.data() + std::size_t(omp_get_thread_num()) * entries};
#pragma omp for schedule(dynamic, kHistogramChunk)
    for (std::int64_t i = 0; i < m; ++i) f(std::size_t(i), c);
  }
  for (int t = 0; t < threads; ++t)
    for (std::size_t e = 0; e < entries; ++e) hist[e] += part[std::size_t(t) * entries + e];
}
}  // namespace cpu

#if defined(PARDYN_FOR_EACH_HAS_CUDA)
namespace cuda {
// Defined in reduce_cuda.cuh; a .cu file instantiates them with PARDYN_SUM_CUDA(F) and
// PARDYN_HISTOGRAM_CUDA(F).
template <class F>
typename F::Acc sum_over_index(std::size_t n, const F& f);
template <class F>
void histogram_over_index(std::size_t n, const F& f, std::size_t entries, std::uint64_t* hist);
}  // namespace cuda
#endif

// The sum of f over [0, n) by the loop of `backend` (see the top of this file).
template <class F>
typename F::Acc sum_over_index(Backend backend, std::size_t n, const F& f) {
  detail::check_sum_functor<F>();
  if (n == 0) return typename F::Acc{};
  if (backend == Backend::Cuda) {
#if defined(PARDYN_FOR_EACH_HAS_CUDA)
    return cuda::sum_over_index(n, f);
#else
    throw no_cuda_error(PARDYN_BUILT_NAME);
#endif
  }
  return cpu::sum_over_index(n, f);
}

// Adds the counts of f over [0, n) to hist[0 .. entries) (host memory) by the loop of `backend`.
template <class F>
void histogram_over_index(Backend backend, std::size_t n, const F& f, std::size_t entries,
                          std::uint64_t* hist) {
  if (n == 0 || entries == 0) return;
  if (backend == Backend::Cuda) {
#if defined(PARDYN_FOR_EACH_HAS_CUDA)
    cuda::histogram_over_index(n, f, entries, hist);
    return;
#else
    throw no_cuda_error(PARDYN_BUILT_NAME);
#endif
  }
  cpu::histogram_over_index(n, f, entries, hist);
}

}  // namespace pardyn
