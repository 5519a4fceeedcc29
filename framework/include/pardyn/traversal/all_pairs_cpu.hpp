// SPDX-License-Identifier: BSD-3-Clause
// All-pairs traversal on the CPU: OpenMP over blocks of target particles, cache blocking over tiles of
// source particles, and an inner loop over the tile that the compiler vectorises (one SIMD lane per
// source). Instantiated inside each potential's plugin for its evaluator; nothing here is virtual.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/traversal/all_pairs_cpu.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <algorithm>
#include <cstddef>
#include <vector>

#include "pardyn/box.hpp"
#include "pardyn/evaluator.hpp"
#include "pardyn/particles.hpp"
#include "pardyn/traversal/pair_sum.hpp"

namespace pardyn::cpu {

namespace detail {

// Sums the interaction of target i of p with sources [jb, je) of q. Diagonal: the tile contains i
// itself (q is p), which is masked out (the only tile that needs the mask, so the others run
// without it).
template <bool Energy, bool Periodic, bool Diagonal, class Eval, class Real, int Dim>
PARDYN_INLINE void tile_sum(const Eval& ev, const ParticleView<Real, Dim>& p,
                            const ParticleView<Real, Dim>& q, const PeriodicImage<Real>& img,
                            std::size_t i, std::size_t jb, std::size_t je, Real (&acc)[Dim],
                            Real& epot, Real& vir) {
  const Real xi0 = p.x[0][i], xi1 = p.x[1][i], xi2 = Dim == 3 ? p.x[2][i] : Real(0);
  const Real mi = p.mass[i];
  const int ti = p.type[i];
  const Real* __restrict x0 = q.x[0];
  const Real* __restrict x1 = q.x[1];
  const Real* __restrict x2 = Dim == 3 ? q.x[2] : q.x[0];
  const Real* __restrict m = q.mass;
  const std::int32_t* __restrict t = q.type;
  const int self = static_cast<int>(i - jb);
  const int len = static_cast<int>(je - jb);
  x0 += jb, x1 += jb, x2 += jb, m += jb, t += jb;

  Real s0 = 0, s1 = 0, s2 = 0, se = 0, sw = 0;
#pragma omp simd reduction(+ : s0, s1, s2, se, sw)
  for (int j = 0; j < len; ++j) {
    Real d0 = xi0 - x0[j], d1 = xi1 - x1[j], d2 = Dim == 3 ? xi2 - x2[j] : Real(0), r2, fdivr, e;
    bool keep = true;
    if constexpr (Diagonal) keep = j != self;
    keep = pair_terms<Periodic, Dim>(ev, img, mi, m[j], ti, t[j], d0, d1, d2, r2, fdivr, e) && keep;
    add_pair<Energy, false, Dim>(ev, keep, fdivr, e, r2, d0, d1, d2, s0, s1, s2, se, sw);
  }
  add_sums<Energy>(s0, s1, s2, se, sw, acc, epot, vir);
}

}  // namespace detail

// Adds the forces of q's particles on p's (as accelerations; with Energy the per-particle potential
// energy and virial) to p's arrays. Self: q is p, and each particle's pair with itself is skipped;
// otherwise q is a block of sources that are not in the store (the all-pairs ring of a parallel
// run), and no pair is skipped.
template <bool Energy, bool Periodic, bool Self, class Eval, class Real, int Dim>
void all_pairs_between(const Eval& ev, const ParticleView<Real, Dim>& p,
                       const ParticleView<Real, Dim>& q, const PeriodicImage<Real>& img) {
  const std::size_t n = p.n, ns = q.n;
  // Source tile: positions, masses and types of kTile particles, ~16 KiB, stays in L1 while a block of
  // kBlock targets sweeps it.
  constexpr std::size_t kTile = 16384 / ((Dim + 1) * sizeof(Real) + sizeof(std::int32_t));
  constexpr std::size_t kBlock = 64;
  const std::size_t nblocks = (n + kBlock - 1) / kBlock;

#pragma omp parallel for schedule(dynamic, 4) if (nblocks > 1)
  for (std::size_t b = 0; b < nblocks; ++b) {
    const std::size_t ib = b * kBlock, ie = std::min(n, ib + kBlock);
    Real acc[kBlock][Dim] = {};
    Real ep[kBlock] = {}, vr[kBlock] = {};
    for (std::size_t jb = 0; jb < ns; jb += kTile) {
      const std::size_t je = std::min(ns, jb + kTile);
      for (std::size_t i = ib; i < ie; ++i) {
        const std::size_t k = i - ib;
        if (Self && i >= jb && i < je)
          detail::tile_sum<Energy, Periodic, true>(ev, p, q, img, i, jb, je, acc[k], ep[k], vr[k]);
        else
          detail::tile_sum<Energy, Periodic, false>(ev, p, q, img, i, jb, je, acc[k], ep[k], vr[k]);
      }
    }
    for (std::size_t i = ib; i < ie; ++i)
      add_to_particle<Eval, Energy>(p, i, acc[i - ib], ep[i - ib], vr[i - ib]);
  }
}

// All pairs of the store's particles.
template <bool Energy, bool Periodic, class Eval, class Real, int Dim>
void all_pairs(const Eval& ev, const ParticleView<Real, Dim>& p, const PeriodicImage<Real>& img) {
  all_pairs_between<Energy, Periodic, true>(ev, p, p, img);
}

// The sources of a SourceBlock (records {x, y, z, m} / {x, y, m, 0} and types, host memory) on the
// store's particles: laid out as the loop above reads them, then swept by it.
template <bool Energy, bool Periodic, class Eval, class Real, int Dim>
void all_pairs_sources(const Eval& ev, const ParticleView<Real, Dim>& p,
                       const PeriodicImage<Real>& img, const Real* rec, const std::int32_t* types,
                       std::size_t ns) {
  std::vector<Real> soa(std::size_t(Dim + 1) * ns);
  ParticleView<Real, Dim> q;
  q.n = ns;
  for (int d = 0; d < Dim; ++d) q.x[d] = soa.data() + std::size_t(d) * ns;
  q.mass = soa.data() + std::size_t(Dim) * ns;
  q.type = const_cast<std::int32_t*>(types);
  for (std::size_t j = 0; j < ns; ++j) {
    for (int d = 0; d < Dim; ++d) q.x[d][j] = rec[4 * j + d];
    q.mass[j] = rec[4 * j + Dim];
  }
  all_pairs_between<Energy, Periodic, false>(ev, p, q, img);
}

}  // namespace pardyn::cpu
