// SPDX-License-Identifier: BSD-3-Clause
// All-pairs traversal on the GPU, instantiated inside each potential's plugin for its evaluator.
//
// A block of T threads owns T*K target particles: every thread keeps K targets (positions and sums) in
// registers. Sources stream through shared memory in tiles of T particles, each packed into one
// 16-byte (float) or 32-byte (double) record that all threads of the block read at once (a broadcast,
// free of bank conflicts). Every source read from shared memory therefore serves K interactions, and
// the inner loop is the evaluator's arithmetic plus almost nothing.
//
// When N is small, N / (T*K) blocks cannot fill the GPU (seed 002). The source range is then split
// into S chunks (blockIdx.y), each block writes partial sums, and a second kernel adds the S partial
// sums of each particle in a fixed order. The result is deterministic; no atomics are used.
//
// The self pair is masked only in the K tiles that overlap the block's own targets, and the ragged
// last tile is bounded there too. Every other tile runs the unmasked loop.
#pragma once

#if !defined(__CUDACC__)
#error "all_pairs_cuda.cuh holds CUDA kernels: include it only from .cu files"
#endif

// The kernels compile under NVRTC too (run-time compiled laws, docs/formulas.md): there the host
// launchers below are left out, and the standard headers come from pardyn/rtc.
#if !defined(__CUDACC_RTC__)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "pardyn/cuda.hpp"
#include "pardyn/cuda_check.hpp"
#include "pardyn/neighbourhood.hpp"
#include "pardyn/particles.hpp"
#include "pardyn/traversal/launch_cuda.cuh"
#endif
#include "pardyn/box.hpp"
#include "pardyn/evaluator.hpp"
#include "pardyn/particle_view.hpp"

namespace pardyn::cuda {

// One source particle in shared memory: x, y, z, m (3D) or x, y, m, - (2D).
template <class Real>
struct alignas(4 * sizeof(Real)) Source {
  Real c[4];
};

template <class Real, int Dim>
PARDYN_INLINE __device__ Real source_mass(const Source<Real>& s) {
  return Dim == 3 ? s.c[3] : s.c[2];
}

// Threads per block and targets per thread. K trades registers for fewer shared-memory reads per
// interaction; the values were chosen by measurement on an H100 (`bench_all_pairs_cuda --tune`,
// bench/RESULTS.md): the differences between good shapes are a few percent.
template <class Real, int Dim>
struct AllPairsShape {
  static constexpr bool single = sizeof(Real) == 4;
  static constexpr int T = (single && Dim == 3) ? 128 : 64;
  // 3D double: 6, as 8 spills registers in the energy variant.
  static constexpr int K = single ? (Dim == 2 ? 16 : 8) : (Dim == 3 ? 6 : 8);
  static constexpr int U = (single && Dim == 2) ? 8 : 4;  // sources per unrolled inner-loop step
};
// No minimum blocks per SM in __launch_bounds__: even "1" lets ptxas take 186 registers for the 3D
// float kernel instead of 96, halving the resident warps and costing 6% (measured on an H100).

template <class Eval, class Real, int Dim>
struct AllPairsArgs {
  Eval ev;
  ParticleView<Real, Dim> p;
  PeriodicImage<Real> img;
  Real* partial;  // S > 1: sums per split, [S][Dim + 2][n]; nullptr when S == 1
  int n;
  int chunk;  // sources per split, a multiple of T
  // Sources from outside the store (the all-pairs ring): ns records and types; null: the store's
  // own particles are the sources (self pairs skipped).
  const Source<Real>* ext = nullptr;
  const std::int32_t* ext_type = nullptr;
  int ns = 0;
};

namespace detail {

template <class Eval, class Real, int Dim, bool Energy, bool Periodic, bool Bounded, int K, int T,
          int U>
PARDYN_INLINE __device__ void sweep_tile(const AllPairsArgs<Eval, Real, Dim>& a,
                                         const Source<Real>* __restrict__ src,
                                         const int* __restrict__ styp, int count, int jbase,
                                         const int (&idx)[K], const Real (&xi)[K][Dim],
                                         const Real (&mi)[K], const int (&ti)[K],
                                         Real (&acc)[K][Dim], Real (&ep)[K], Real (&vr)[K]) {
  const Eval& ev = a.ev;
#pragma unroll(U)
  for (int jj = 0; jj < (Bounded ? count : T); ++jj) {
    const Source<Real> s = src[jj];
    const int tj = styp[jj];
    const Real mj = source_mass<Real, Dim>(s);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      Real d0 = xi[k][0] - s.c[0];
      Real d1 = xi[k][1] - s.c[1];
      Real d2 = Dim == 3 ? xi[k][Dim - 1] - s.c[2] : Real(0);
      if constexpr (Periodic) {
        d0 = a.img.wrap(d0, 0);
        d1 = a.img.wrap(d1, 1);
        if constexpr (Dim == 3) d2 = a.img.wrap(d2, 2);
      }
      const Real r2 = pair_r2<Dim>(ev, d0, d1, d2);
      Real fdivr, e;
      ev.pair(r2, mi[k], mj, ti[k], tj, fdivr, e);
      if constexpr (Bounded || EvaluatorTraits<Eval>::has_cutoff) {
        bool keep = true;
        // The self pair exists only when the store's own particles are the sources (a ragged last
        // tile of an external block is bounded too, but holds no target).
        if constexpr (Bounded) keep = a.ext != nullptr || jbase + jj != idx[k];
        if constexpr (EvaluatorTraits<Eval>::has_cutoff) keep = keep && true_r2(ev, r2) < ev.rcut2;
        fdivr = keep ? fdivr : Real(0);
        e = keep ? e : Real(0);
      }
      acc[k][0] = fma(fdivr, d0, acc[k][0]);
      acc[k][1] = fma(fdivr, d1, acc[k][1]);
      if constexpr (Dim == 3) acc[k][Dim - 1] = fma(fdivr, d2, acc[k][Dim - 1]);
      if constexpr (Energy) {
        ep[k] += e;
        vr[k] = fma(fdivr, true_r2(ev, r2), vr[k]);
      }
    }
  }
}

// Loads source j into a packed record (a zero record past the end; it is never used).
template <class Real, int Dim>
PARDYN_INLINE __device__ Source<Real> load_source(const ParticleView<Real, Dim>& p,
                                                  const Source<Real>* ext,
                                                  const std::int32_t* ext_type, int j, int end,
                                                  int& type) {
  Source<Real> s{};
  type = 0;
  if (ext != nullptr) {
    if (j < end) {
      s = ext[j];
      type = ext_type[j];
    }
    return s;
  }
  if (j < end) {
    s.c[0] = p.x[0][j];
    s.c[1] = p.x[1][j];
    s.c[2] = Dim == 3 ? p.x[Dim - 1][j] : p.mass[j];
    s.c[3] = Dim == 3 ? p.mass[j] : Real(0);
    type = p.type[j];
  }
  return s;
}

template <class Eval, class Real, int Dim, bool Energy, bool Periodic, int K, int T, int U>
__global__ void __launch_bounds__(T) all_pairs_kernel(const AllPairsArgs<Eval, Real, Dim> a) {
  // Two tile buffers: while the block computes on one, the next tile's loads from global memory are
  // in flight in registers; they land in the other buffer, and one barrier per tile suffices.
  __shared__ Source<Real> src[2][T];
  __shared__ int styp[2][T];
  const int n = a.n;
  const auto& p = a.p;
  const int base = blockIdx.x * (T * K);

  int idx[K], ti[K];
  Real xi[K][Dim], mi[K], acc[K][Dim], ep[K], vr[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    idx[k] = base + k * T + threadIdx.x;
    const int i = min(idx[k], n - 1);  // past the end: compute for a real particle, store nothing
#pragma unroll
    for (int d = 0; d < Dim; ++d) {
      xi[k][d] = p.x[d][i];
      acc[k][d] = Real(0);
    }
    mi[k] = p.mass[i];
    ti[k] = p.type[i];
    ep[k] = vr[k] = Real(0);
  }

  const int nsrc = a.ext != nullptr ? a.ns : n;
  const int j0 = blockIdx.y * a.chunk;
  const int j1 = min(nsrc, j0 + a.chunk);
  int type;
  src[0][threadIdx.x] = load_source(p, a.ext, a.ext_type, j0 + threadIdx.x, j1, type);
  styp[0][threadIdx.x] = type;
  __syncthreads();
  int buf = 0;
  for (int jt = j0; jt < j1; jt += T) {
    int next_type;
    const Source<Real> next =
        load_source(p, a.ext, a.ext_type, jt + T + threadIdx.x, j1, next_type);
    const int count = min(T, j1 - jt);
    const bool diagonal = a.ext == nullptr && jt < base + T * K && jt + T > base;
    if (count == T && !diagonal)
      sweep_tile<Eval, Real, Dim, Energy, Periodic, false, K, T, U>(a, src[buf], styp[buf], T, jt,
                                                                    idx, xi, mi, ti, acc, ep, vr);
    else
      sweep_tile<Eval, Real, Dim, Energy, Periodic, true, K, T, U>(
          a, src[buf], styp[buf], count, jt, idx, xi, mi, ti, acc, ep, vr);
    buf ^= 1;
    src[buf][threadIdx.x] = next;
    styp[buf][threadIdx.x] = next_type;
    __syncthreads();
  }

#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int i = idx[k];
    if (i >= n) continue;
    if (a.partial == nullptr) {
      add_to_particle<Eval, Energy>(p, i, acc[k], ep[k], vr[k]);
    } else {
      Real* out = a.partial + std::size_t(blockIdx.y) * (Dim + 2) * n;
#pragma unroll
      for (int d = 0; d < Dim; ++d) out[std::size_t(d) * n + i] = acc[k][d];
      if constexpr (Energy) {
        out[std::size_t(Dim) * n + i] = ep[k];
        out[std::size_t(Dim + 1) * n + i] = vr[k];
      }
    }
  }
}

// Adds the S partial sums of each particle, in split order.
template <class Eval, class Real, int Dim, bool Energy>
__global__ void all_pairs_finish(const AllPairsArgs<Eval, Real, Dim> a, int splits) {
  const int n = a.n;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    Real acc[Dim] = {}, ep = 0, vr = 0;
    for (int s = 0; s < splits; ++s) {
      const Real* in = a.partial + std::size_t(s) * (Dim + 2) * n;
#pragma unroll
      for (int d = 0; d < Dim; ++d) acc[d] += in[std::size_t(d) * n + i];
      if constexpr (Energy) {
        ep += in[std::size_t(Dim) * n + i];
        vr += in[std::size_t(Dim + 1) * n + i];
      }
    }
    add_to_particle<Eval, Energy>(a.p, i, acc, ep, vr);
  }
}

// The GPU's multiprocessor count, read once (cudaGetDeviceProperties costs ~0.5 ms per call).
#if !defined(__CUDACC_RTC__)
inline int multiprocessors() {
  static const int sms = std::max(1, device_info().multiprocessors);
  return sms;
}

// The number of source splits S for `blocks` target blocks on a GPU that holds `resident` blocks at
// once: the blocks x S work items run in waves of `resident`, so S is chosen (up to one tile per split)
// to fill at least two waves and to make the last wave as full as possible.
inline int choose_splits(int blocks, int resident, int max_splits) {
  int best = 1;
  double best_eff = -1;
  for (int s = 1; s <= max_splits; ++s) {
    const long items = long(blocks) * s;
    const long waves = (items + resident - 1) / resident;
    double eff = double(items) / double(waves * resident);
    if (items < 2L * resident) eff *= double(items) / (2.0 * resident);  // too few to fill the GPU
    if (eff > best_eff + 0.02) best = s, best_eff = eff;                 // prefer fewer splits
    if (items >= 16L * resident) break;
  }
  return best;
}

// How many blocks of `kernel` (T threads) the whole GPU holds at once, asked of the runtime at
// each launch (it keeps the kernel's attributes: microseconds, against an all-pairs kernel's
// milliseconds). Not cached here: a static in this header is one object for every plugin of the
// process, and a cache keyed by kernel addresses outlived the plugins that held those kernels
// (a crash in a test that loads plugins one after another, found on the GPU).
inline int resident_blocks(const void* kernel, int T) {
  int per_sm = 0;
  PARDYN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, T, 0));
  return std::max(1, per_sm) * multiprocessors();
}

// The kernels' descriptors (launch_cuda.cuh). A group holds the shape's kernels, with and without
// energies, and the finishing kernels, of one kind of box (periodic or not): what a run launches.
template <class Eval, class Real, int Dim, bool Periodic>
struct AllPairsGroup {
  static constexpr const char* header = "pardyn/traversal/all_pairs_cuda.cuh";
  static constexpr const char* id = Periodic ? "all_pairs_periodic" : "all_pairs";
  static void names(const std::string& eval, std::vector<std::string>& out);
};
template <class Eval, class Real, int Dim, bool Energy, bool Periodic, int K, int T, int U>
struct AllPairsMain {
  using Group = AllPairsGroup<Eval, Real, Dim, Periodic>;
  static auto address() { return &all_pairs_kernel<Eval, Real, Dim, Energy, Periodic, K, T, U>; }
  static std::string name(const std::string& eval) {
    return kernel_name(
        "pardyn::cuda::detail::all_pairs_kernel",
        {eval, real_name<Real>(), std::to_string(Dim), bool_name(Energy), bool_name(Periodic),
         std::to_string(K), std::to_string(T), std::to_string(U)});
  }
};
// The finishing kernel (the same for both kinds of box), in the group of the box's kind.
template <class Eval, class Real, int Dim, bool Energy, bool Periodic>
struct AllPairsFinish {
  using Group = AllPairsGroup<Eval, Real, Dim, Periodic>;
  static auto address() { return &all_pairs_finish<Eval, Real, Dim, Energy>; }
  static std::string name(const std::string& eval) {
    return kernel_name("pardyn::cuda::detail::all_pairs_finish",
                       {eval, real_name<Real>(), std::to_string(Dim), bool_name(Energy)});
  }
};
template <class Eval, class Real, int Dim, bool Periodic>
void AllPairsGroup<Eval, Real, Dim, Periodic>::names(const std::string& eval,
                                                     std::vector<std::string>& out) {
  using S = AllPairsShape<Real, Dim>;
  for (const bool energy : {false, true})
    dispatch_variant(energy, false, [&](auto e, auto) {
      constexpr bool E = decltype(e)::value;
      out.push_back(AllPairsMain<Eval, Real, Dim, E, Periodic, S::K, S::T, S::U>::name(eval));
      out.push_back(AllPairsFinish<Eval, Real, Dim, E, Periodic>::name(eval));
    });
}

template <class Eval, class Real, int Dim, bool Energy, bool Periodic,
          int K = AllPairsShape<Real, Dim>::K, int T = AllPairsShape<Real, Dim>::T,
          int U = AllPairsShape<Real, Dim>::U, class Kernels = BuiltinKernels>
void launch_all_pairs(const Eval& ev, const ParticleView<Real, Dim>& p,
                      const PeriodicImage<Real>& img, int forced_splits,
                      const SourceBlock* blk = nullptr, const Kernels& ks = {}) {
  using Main = AllPairsMain<Eval, Real, Dim, Energy, Periodic, K, T, U>;
  using Args = AllPairsArgs<Eval, Real, Dim>;
  const int n = int(p.n);
  const int blocks = (n + T * K - 1) / (T * K);
  const int resident = resident_blocks(ks.template get<Main, Args>(), T);
  const int nsrc = blk ? int(blk->n) : n;
  const int max_splits = std::max(1, (nsrc + T - 1) / T);  // one tile per split at most
  int splits = forced_splits;
  // PARDYN_ALL_PAIRS_SPLITS fixes the split count too: for tests of both code paths and tuning.
  if (splits <= 0)
    if (const char* env = std::getenv("PARDYN_ALL_PAIRS_SPLITS")) splits = std::atoi(env);
  if (splits <= 0) splits = choose_splits(blocks, resident, max_splits);
  splits = std::min(splits, max_splits);
  int chunk = (nsrc + splits - 1) / splits;
  chunk = (chunk + T - 1) / T * T;
  splits = (nsrc + chunk - 1) / chunk;

  Args a{ev, p, img, nullptr, n, chunk};
  if (blk) {
    a.ext = static_cast<const Source<Real>*>(blk->pos);
    a.ext_type = blk->type;
    a.ns = nsrc;
  }
  if (splits > 1)
    a.partial = static_cast<Real*>(scratch(std::size_t(splits) * (Dim + 2) * n * sizeof(Real)));
  launch_kernel<Main>(ks, dim3(blocks, splits), dim3(T), "all_pairs_kernel", a);
  if (splits > 1) {
    const int fb = std::min((n + 255) / 256, 4 * multiprocessors());
    launch_kernel<AllPairsFinish<Eval, Real, Dim, Energy, Periodic>>(ks, dim3(fb), dim3(256),
                                                                     "all_pairs_finish", a, splits);
  }
}

#endif  // !__CUDACC_RTC__

}  // namespace detail

#if !defined(__CUDACC_RTC__)
// Adds the evaluator's accelerations (and, with energy, per-particle energies and virials) of all
// pairs to the store's arrays. forced_splits > 0 fixes the number of source splits (benchmarks).
// With a SourceBlock (the all-pairs ring), the block's particles are the sources instead.
template <class Eval, class Real, int Dim, class Kernels = BuiltinKernels>
void all_pairs(const Eval& ev, const ParticleView<Real, Dim>& p, const Box& box, bool energy,
               int forced_splits = 0, const SourceBlock* blk = nullptr, const Kernels& ks = {}) {
  if (p.n == 0 || (blk && blk->n == 0)) return;
  if (p.n > std::size_t(0x7fffffff) || (blk && blk->n > std::size_t(0x7fffffff)))
    throw Error("all_pairs on the GPU handles at most 2^31 - 1 particles per device");
  const auto img = PeriodicImage<Real>::make(box);
  const bool periodic = box.any_periodic(Dim);
  const int fs = forced_splits;
  dispatch_variant(energy, periodic, [&](auto e, auto per) {
    using S = AllPairsShape<Real, Dim>;
    detail::launch_all_pairs<Eval, Real, Dim, decltype(e)::value, decltype(per)::value, S::K, S::T,
                             S::U>(ev, p, img, fs, blk, ks);
  });
}

// The same with a given shape (K targets per thread, T threads, U sources unrolled): for tuning.
template <int K, int T, int U, class Eval, class Real, int Dim>
void all_pairs_shaped(const Eval& ev, const ParticleView<Real, Dim>& p, const Box& box) {
  detail::launch_all_pairs<Eval, Real, Dim, false, false, K, T, U>(
      ev, p, PeriodicImage<Real>::make(box), 0);
}

#endif  // !__CUDACC_RTC__

}  // namespace pardyn::cuda
