// SPDX-License-Identifier: BSD-3-Clause
// Cell-list traversal on the CPU (OpenMP), instantiated inside each potential's plugin for its
// evaluator. Three forms, after what the builder made (cell_list.hpp):
//   - Verlet list, half (the default): each pair once, Newton's third law, per-thread sums;
//     full: each slot sums over its whole row (a SIMD loop whose loads are gathers);
//   - stencil: each slot sums over the contiguous slots of the 3^dim cells around its cell (a SIMD
//     loop over each cell's slots, the self pair masked);
//   - far zones: the stencil over `near` rings, exact, plus the other cells through the moments of
//     the cell pyramid and the law's far() form (cell_far.hpp).
// Every target's sums go to store index order[k]; no atomics anywhere.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/traversal/cell_list_cpu.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pardyn/box.hpp"
#include "pardyn/cell_list.hpp"
#include "pardyn/traversal/cell_far.hpp"
#include "pardyn/evaluator.hpp"
#include "pardyn/particles.hpp"
#include "pardyn/traversal/pair_sum.hpp"

namespace pardyn::cpu {

namespace detail {

// The pair of two slots of the sorted records (pair_sum.hpp's pair_terms).
template <bool Periodic, int Dim, class Eval, class Real>
PARDYN_INLINE bool slot_pair(const Eval& ev, const PeriodicImage<Real>& img,
                             const CellParticle<Real>& xi, int ti, const CellParticle<Real>& xj,
                             int tj, Real& d0, Real& d1, Real& d2, Real& r2, Real& fdivr, Real& e) {
  separation<Dim>(xi, xj, d0, d1, d2);
  return pardyn::pair_terms<Periodic, Dim>(ev, img, record_mass<Dim>(xi), record_mass<Dim>(xj), ti,
                                           tj, d0, d1, d2, r2, fdivr, e);
}

// Sums the pair interactions of target xi (slot k) with the slots [jb, je) of one cell.
template <bool Energy, bool Periodic, class Eval, class Real, int Dim>
PARDYN_INLINE void cell_sum(const Eval& ev, const CellParticle<Real>* __restrict pos,
                            const std::int32_t* __restrict type, const PeriodicImage<Real>& img,
                            const CellParticle<Real>& xi, int ti, std::uint32_t k, std::uint32_t jb,
                            std::uint32_t je, Real (&acc)[3], Real& ep, Real& vr) {
  Real s0 = 0, s1 = 0, s2 = 0, se = 0, sw = 0;
#pragma omp simd reduction(+ : s0, s1, s2, se, sw)
  for (std::uint32_t j = jb; j < je; ++j) {
    Real d0, d1, d2, r2, fdivr, e;
    const bool keep =
        slot_pair<Periodic, Dim>(ev, img, xi, ti, pos[j], type[j], d0, d1, d2, r2, fdivr, e) &&
        j != k;
    add_pair<Energy, false, Dim>(ev, keep, fdivr, e, r2, d0, d1, d2, s0, s1, s2, se, sw);
  }
  add_sums<Energy>(s0, s1, s2, se, sw, acc, ep, vr);
}

template <bool Energy, bool Periodic, class Eval, class Real, int Dim>
void verlet_forces(const Eval& ev_shared, const ParticleView<Real, Dim>& p, const CellList& cl,
                   const PeriodicImage<Real>& im) {
  const std::int64_t n = std::int64_t(cl.n);
  const CellParticle<Real>* __restrict pos = cl.positions<Real>();
  const std::int32_t* __restrict type = cl.type;
#pragma omp parallel
  {
    // A copy per thread: its members are then loop invariants the compiler can hoist a law's
    // branches on (a "one parameter set" fast path), which it cannot prove of shared memory.
    const Eval ev = ev_shared;
#pragma omp for schedule(static)
    for (std::int64_t k = 0; k < n; ++k) {
      const CellParticle<Real> xi = pos[k];
      const int ti = type[k];
      const std::uint32_t* __restrict row = cl.nl + std::size_t(k) * cl.nl_row;
      const int cnt = int(cl.nl_count[k]);
      Real s0 = 0, s1 = 0, s2 = 0, se = 0, sw = 0;
#pragma omp simd reduction(+ : s0, s1, s2, se, sw)
      for (int m = 0; m < cnt; ++m) {
        const std::uint32_t j = row[m];
        Real d0, d1, d2, r2, fdivr, e;
        const bool keep =
            slot_pair<Periodic, Dim>(ev, im, xi, ti, pos[j], type[j], d0, d1, d2, r2, fdivr, e);
        add_pair<Energy, false, Dim>(ev, keep, fdivr, e, r2, d0, d1, d2, s0, s1, s2, se, sw);
      }
      const Real acc[3] = {s0, s1, s2};
      add_to_particle<Eval, Energy>(p, cl.order[k], acc, se, sw);
    }
  }
}

// Half list: each pair once, with Newton's third law. The rows are cut into cl.scratch_threads
// fixed ranges; a range's forces (not accelerations), for the row's owner and, through a scatter,
// for its partners, go into its own slice of cl.scratch, whichever thread of the team
// (cl.team) runs it; a second pass adds the slices in their order and writes each particle once. The pair's force on j is minus its
// force on i, as for every pair potential.
//
// A row goes in chunks: the chunk's neighbours are copied whole (one 16- or 32-byte record each)
// into a contiguous buffer, padded to whole vectors with masked copies of the target (no scalar
// remainder loop), swept by one SIMD loop that leaves each pair's force as a 4-vector, and the
// forces are scattered onto the partners one vector add each.
// Long: one OpenMP region whose per-thread stack buffers (the chunk, its forces, the slice) feed the
// SIMD sweep, the transposed scatter and the merge of the slices: the hot loop stays whole.
template <bool Energy, bool Periodic, class Eval, class Real, int Dim>
void verlet_half_forces(const Eval& ev_shared, const ParticleView<Real, Dim>& p, const CellList& cl,
                        const PeriodicImage<Real>& im) {
  constexpr bool kPerUnitMass = EvaluatorTraits<Eval>::per_unit_mass;
  constexpr int kChunk = 64;
  // Chunks are padded to a multiple of one AVX2 vector (8 floats, 4 doubles): a 2D half list holds
  // ~10 partners, so padding doubles to 8 wasted ~40% of the pair work (measured: 2D LJ, double).
  constexpr int kLanes = 32 / int(sizeof(Real));
  // Per particle, its sums side by side (one cache line): forces, then energy and virial.
  constexpr int kComp = Energy ? 8 : 4;
  // A force as one vector (x, y, z, 0): a partner's update is one load, one subtraction, one store.
  typedef Real Quad __attribute__((vector_size(4 * sizeof(Real))));
  const std::int64_t n = std::int64_t(cl.n);
  const std::size_t stride = std::size_t(kComp) * cl.n;
  Real* const scratch = static_cast<Real*>(cl.scratch);
  const CellParticle<Real>* __restrict pos = cl.positions<Real>();
  const std::int32_t* __restrict type = cl.type;
  const bool one_type = cl.one_type;
  // The rows are cut into `parts` fixed ranges, range r summed into buffer r, whichever thread runs
  // it, and the buffers added in their order: the forces do not depend on the team's size, which
  // HalfListTeam (cell_list.hpp) picks from the loop's times (energy calls, slower, are not timed).
  const int parts = cl.scratch_threads;
  HalfListTeam* const tuner = cl.team;
  const int threads = tuner ? tuner->next(!Energy) : parts;
  const double t0 = tuner && !Energy ? omp_get_wtime() : 0.0;
#pragma omp parallel num_threads(threads)
  {
    const Eval ev = ev_shared;  // per thread, as in verlet_forces
    alignas(64) Real b0[kChunk], b1[kChunk], b2[kChunk], be[kChunk], bw[kChunk];
    alignas(64) CellParticle<Real> nb[kChunk];
    alignas(64) std::int32_t nt[kChunk];
    // One type: every partner's type is that type, once for all rows.
    if (one_type && n > 0)
      for (int m = 0; m < kChunk; ++m) nt[m] = type[0];
    const int team = omp_get_num_threads();
    for (int r = omp_get_thread_num(); r < parts; r += team) {
      Real* __restrict F = scratch + std::size_t(r) * stride;
      std::fill(F, F + stride, Real(0));  // only the thread of range r writes here
      const std::int64_t k_end = n * (r + 1) / parts;
      for (std::int64_t k = n * r / parts; k < k_end; ++k) {
        const CellParticle<Real> xi = pos[k];
        const Real mi = record_mass<Dim>(xi);
        const int ti = type[k];
        const std::uint32_t* __restrict row = cl.nl + std::size_t(k) * cl.nl_row;
        const int cnt = int(cl.nl_count[k]);
        Real s0 = 0, s1 = 0, s2 = 0, se = 0, sw = 0;
        // Padding lanes: the target one unit away along x (a finite pair, masked out below).
        CellParticle<Real> pad = xi;
        pad.c[0] += Real(1);
        for (int mb = 0; mb < cnt; mb += kChunk) {
          const int len = cnt - mb < kChunk ? cnt - mb : kChunk;
          const int lenv = (len + kLanes - 1) & ~(kLanes - 1);
          const std::uint32_t* __restrict js = row + mb;
          if (one_type) {
#pragma GCC unroll 4
            for (int m = 0; m < len; ++m) nb[m] = pos[js[m]];
          } else {
            for (int m = 0; m < len; ++m) {
              nb[m] = pos[js[m]];
              nt[m] = type[js[m]];
            }
            for (int m = len; m < lenv; ++m) nt[m] = ti;
          }
          for (int m = len; m < lenv; ++m) nb[m] = pad;
#pragma omp simd reduction(+ : s0, s1, s2, se, sw)
          for (int m = 0; m < lenv; ++m) {
            Real d0, d1, d2, r2, fdivr, e;
            const bool keep =
                slot_pair<Periodic, Dim>(ev, im, xi, ti, nb[m], nt[m], d0, d1, d2, r2, fdivr, e) &&
                m < len;
            const Real f = keep ? (kPerUnitMass ? fdivr * mi : fdivr) : Real(0);  // force / r
            b0[m] = f * d0;
            b1[m] = f * d1;
            b2[m] = Dim == 3 ? f * d2 : Real(0);
            s0 += b0[m];
            s1 += b1[m];
            s2 += b2[m];
            if constexpr (Energy) {
              be[m] = keep ? (kPerUnitMass ? e * mi : e) : Real(0);
              bw[m] = f * true_r2(ev, r2);
              se += be[m];
              sw += bw[m];
            }
          }
          // Four pairs at a time: their (x, y, z) rows transposed into one force vector per pair.
          for (int m = 0; m < len; m += 4) {
            Quad x, y, z, col[4];
            std::memcpy(&x, b0 + m, sizeof x);
            std::memcpy(&y, b1 + m, sizeof y);
            std::memcpy(&z, b2 + m, sizeof z);
            const Quad zero = {};
            const Quad xy01 = __builtin_shufflevector(x, y, 0, 4, 1, 5);
            const Quad xy23 = __builtin_shufflevector(x, y, 2, 6, 3, 7);
            const Quad z01 = __builtin_shufflevector(z, zero, 0, 4, 1, 5);
            const Quad z23 = __builtin_shufflevector(z, zero, 2, 6, 3, 7);
            col[0] = __builtin_shufflevector(xy01, z01, 0, 1, 4, 5);
            col[1] = __builtin_shufflevector(xy01, z01, 2, 3, 6, 7);
            col[2] = __builtin_shufflevector(xy23, z23, 0, 1, 4, 5);
            col[3] = __builtin_shufflevector(xy23, z23, 2, 3, 6, 7);
            const int q = len - m < 4 ? len - m : 4;
            for (int t = 0; t < q; ++t) {
              Real* Fj = F + std::size_t(js[m + t]) * kComp;
              Quad a;
              std::memcpy(&a, Fj, sizeof a);
              a -= col[t];
              std::memcpy(Fj, &a, sizeof a);
              if constexpr (Energy) {
                Fj[4] += be[m + t];
                Fj[5] += bw[m + t];
              }
            }
          }
        }
        Real* __restrict Fk = F + std::size_t(k) * kComp;
        Fk[0] += s0;
        Fk[1] += s1;
        if constexpr (Dim == 3) Fk[2] += s2;
        if constexpr (Energy) {
          Fk[4] += se;
          Fk[5] += sw;
        }
      }
    }  // range r
#pragma omp barrier
    // (every range is complete)
#pragma omp for schedule(static)
    for (std::int64_t k = 0; k < n; ++k) {
      Real sum[kComp];
      for (int c = 0; c < kComp; ++c) sum[c] = 0;
      for (int t = 0; t < parts; ++t)
        for (int c = 0; c < kComp; ++c) sum[c] += scratch[std::size_t(t) * stride + k * kComp + c];
      const std::uint32_t i = cl.order[k];
      const Real inv_m = Real(1) / p.mass[i];
      for (int d = 0; d < Dim; ++d) p.a[d][i] += sum[d] * inv_m;
      if constexpr (Energy) {
        p.epot[i] += Real(0.5) * sum[4];
        p.virial[i] += Real(0.5) * sum[5];
      }
    }
  }
  if (tuner && !Energy) tuner->done(omp_get_wtime() - t0);
}

// Stencil (no list) and far zones: each slot visits the cells `rings` around its own exactly
// (for_each_stencil_cell, cell_list.hpp: its order is the order of the sums); with Far, the other
// cells act through the pyramid's moments (cell_far.hpp; Quad: with quadrupoles).
template <bool Energy, bool Periodic, bool Far, bool Quad = false, class Eval, class Real, int Dim>
void stencil_forces(const Eval& ev_shared, const ParticleView<Real, Dim>& p, const CellList& cl,
                    const PeriodicImage<Real>& im) {
  const std::int64_t ncell = std::int64_t(cl.ncells);
  const CellParticle<Real>* __restrict pos = cl.positions<Real>();
  const std::int32_t* __restrict type = cl.type;
  const int rings = Far ? cl.near : 1;
#pragma omp parallel
  {
    const Eval ev = ev_shared;  // per thread, as in verlet_forces
#pragma omp for schedule(dynamic, 16)
    for (std::int64_t c = 0; c < ncell; ++c) {
      const std::uint32_t kb = cl.cell_start[c], ke = cl.cell_end[c];
      if (kb == ke) continue;
      int cc[3];
      cl.cell_coords(std::size_t(c), cc);
      const CellStencil st = stencil_around<Dim>(cl, cc, rings);  // once for the cell's slots
      for (std::uint32_t k = kb; k < ke; ++k) {
        const CellParticle<Real> xi = pos[k];
        const int ti = type[k];
        Real acc[3] = {0, 0, 0}, ep = 0, vr = 0;
        for_each_stencil_cell<Dim>(cl, st, [&](std::size_t nb) PARDYN_INLINE_LAMBDA {
          cell_sum<Energy, Periodic, Eval, Real, Dim>(
              ev, pos, type, im, xi, ti, k, cl.cell_start[nb], cl.cell_end[nb], acc, ep, vr);
        });
        if constexpr (Far)
          cell_far_sum<Energy, Quad, Eval, Real, Dim>(ev, cl, xi.c, cc, acc, ep, vr);
        add_to_particle<Eval, Energy>(p, cl.order[k], acc, ep, vr);
      }
    }
  }
}

}  // namespace detail

// Adds the evaluator's accelerations (and, with energy, per-particle energies and virials) over the
// cell list to the store's arrays.
template <class Eval, class Real, int Dim>
void cell_list_forces(const Eval& ev, const ParticleView<Real, Dim>& p, const CellList& cl,
                      const Box& box, bool energy) {
  if (!check_cell_list(ev, cl, p.n)) return;
  const bool periodic = box.any_periodic(Dim);
  const auto img = PeriodicImage<Real>::make(box);
  if constexpr (EvaluatorTraits<Eval>::has_far_field) {
    if (cl.far) {
      dispatch_variant(energy, cl.cell_quad != nullptr, [&](auto e, auto q) {
        detail::stencil_forces<decltype(e)::value, false, true, decltype(q)::value>(ev, p, cl, img);
      });
      return;
    }
  }
  if (cl.verlet && cl.half) {
    dispatch_variant(energy, periodic, [&](auto e, auto per) {
      detail::verlet_half_forces<decltype(e)::value, decltype(per)::value>(ev, p, cl, img);
    });
    return;
  }
  if (cl.verlet) {
    dispatch_variant(energy, periodic, [&](auto e, auto per) {
      detail::verlet_forces<decltype(e)::value, decltype(per)::value>(ev, p, cl, img);
    });
    return;
  }
  dispatch_variant(energy, periodic, [&](auto e, auto per) {
    detail::stencil_forces<decltype(e)::value, decltype(per)::value, false>(ev, p, cl, img);
  });
}

}  // namespace pardyn::cpu
