// All-pairs traversal on the CPU: OpenMP over blocks of target particles, cache blocking over tiles of
// source particles, and an inner loop over the tile that the compiler vectorises (one SIMD lane per
// source). Instantiated inside each potential's plugin for its evaluator; nothing here is virtual.
#pragma once

#include <algorithm>
#include <cstddef>

#include "pardyn/box.hpp"
#include "pardyn/evaluator.hpp"
#include "pardyn/particles.hpp"

namespace pardyn::cpu {

namespace detail {

// Sums the interaction of target i with sources [jb, je). Diagonal: the tile contains i itself, which is
// masked out (the only tile that needs the mask, so the others run without it).
template <bool Energy, bool Periodic, bool Diagonal, class Eval, class Real, int Dim>
PARDYN_INLINE void tile_sum(const Eval& ev, const ParticleView<Real, Dim>& p,
                            const PeriodicImage<Real>& img, std::size_t i, std::size_t jb,
                            std::size_t je, Real (&acc)[Dim], Real& epot, Real& vir) {
  const Real xi0 = p.x[0][i], xi1 = p.x[1][i], xi2 = Dim == 3 ? p.x[2][i] : Real(0);
  const Real mi = p.mass[i];
  const int ti = p.type[i];
  const Real* __restrict x0 = p.x[0];
  const Real* __restrict x1 = p.x[1];
  const Real* __restrict x2 = Dim == 3 ? p.x[2] : p.x[0];
  const Real* __restrict m = p.mass;
  const std::int32_t* __restrict t = p.type;
  const int self = static_cast<int>(i - jb);
  const int len = static_cast<int>(je - jb);
  x0 += jb, x1 += jb, x2 += jb, m += jb, t += jb;

  Real s0 = 0, s1 = 0, s2 = 0, se = 0, sw = 0;
#pragma omp simd reduction(+ : s0, s1, s2, se, sw)
  for (int j = 0; j < len; ++j) {
    Real d0 = xi0 - x0[j], d1 = xi1 - x1[j], d2 = Dim == 3 ? xi2 - x2[j] : Real(0);
    if constexpr (Periodic) {
      d0 = img.wrap(d0, 0);
      d1 = img.wrap(d1, 1);
      if constexpr (Dim == 3) d2 = img.wrap(d2, 2);
    }
    const Real r2 = pair_r2<Dim>(ev, d0, d1, d2);
    Real fdivr, e;
    ev.pair(r2, mi, m[j], ti, t[j], fdivr, e);
    bool keep = true;
    if constexpr (Diagonal) keep = j != self;
    if constexpr (EvaluatorTraits<Eval>::has_cutoff) keep = keep && true_r2(ev, r2) < ev.rcut2;
    fdivr = keep ? fdivr : Real(0);
    s0 += fdivr * d0;
    s1 += fdivr * d1;
    if constexpr (Dim == 3) s2 += fdivr * d2;
    if constexpr (Energy) {
      se += keep ? e : Real(0);
      sw += fdivr * true_r2(ev, r2);
    }
  }
  acc[0] += s0;
  acc[1] += s1;
  if constexpr (Dim == 3) acc[2] += s2;
  if constexpr (Energy) {
    epot += se;
    vir += sw;
  }
}

}  // namespace detail

// Adds the evaluator's forces (as accelerations), and with Energy the per-particle potential energy and
// virial, of all pairs to the store's arrays.
template <bool Energy, bool Periodic, class Eval, class Real, int Dim>
void all_pairs(const Eval& ev, const ParticleView<Real, Dim>& p, const PeriodicImage<Real>& img) {
  const std::size_t n = p.n;
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
    for (std::size_t jb = 0; jb < n; jb += kTile) {
      const std::size_t je = std::min(n, jb + kTile);
      for (std::size_t i = ib; i < ie; ++i) {
        const std::size_t k = i - ib;
        if (i >= jb && i < je)
          detail::tile_sum<Energy, Periodic, true>(ev, p, img, i, jb, je, acc[k], ep[k], vr[k]);
        else
          detail::tile_sum<Energy, Periodic, false>(ev, p, img, i, jb, je, acc[k], ep[k], vr[k]);
      }
    }
    for (std::size_t i = ib; i < ie; ++i)
      add_to_particle<Eval, Energy>(p, i, acc[i - ib], ep[i - ib], vr[i - ib]);
  }
}

// Adds the forces of `ns` source particles that are not in the store (the all-pairs ring of a
// parallel run: records {x, y, z, m} / {x, y, m, 0} and types) on every particle of the store. No
// pair is skipped: none of the sources is a target.
template <bool Energy, bool Periodic, class Eval, class Real, int Dim>
void all_pairs_sources(const Eval& ev, const ParticleView<Real, Dim>& p, const PeriodicImage<Real>& img,
                       const Real* rec, const std::int32_t* types, std::size_t ns) {
  const std::int64_t n = std::int64_t(p.n);
  const int len = int(ns);
#pragma omp parallel for schedule(dynamic, 64) if (n > 64)
  for (std::int64_t ii = 0; ii < n; ++ii) {
    const std::size_t i = std::size_t(ii);
    const Real xi0 = p.x[0][i], xi1 = p.x[1][i], xi2 = Dim == 3 ? p.x[Dim - 1][i] : Real(0);
    const Real mi = p.mass[i];
    const int ti = p.type[i];
    Real s0 = 0, s1 = 0, s2 = 0, se = 0, sw = 0;
#pragma omp simd reduction(+ : s0, s1, s2, se, sw)
    for (int j = 0; j < len; ++j) {
      const Real* r = rec + 4 * std::size_t(j);
      Real d0 = xi0 - r[0], d1 = xi1 - r[1], d2 = Dim == 3 ? xi2 - r[2] : Real(0);
      if constexpr (Periodic) {
        d0 = img.wrap(d0, 0);
        d1 = img.wrap(d1, 1);
        if constexpr (Dim == 3) d2 = img.wrap(d2, 2);
      }
      const Real r2 = pair_r2<Dim>(ev, d0, d1, d2);
      Real fdivr, e;
      ev.pair(r2, mi, r[Dim], ti, types[j], fdivr, e);
      bool keep = true;
      if constexpr (EvaluatorTraits<Eval>::has_cutoff) keep = true_r2(ev, r2) < ev.rcut2;
      fdivr = keep ? fdivr : Real(0);
      s0 += fdivr * d0;
      s1 += fdivr * d1;
      if constexpr (Dim == 3) s2 += fdivr * d2;
      if constexpr (Energy) {
        se += keep ? e : Real(0);
        sw += fdivr * true_r2(ev, r2);
      }
    }
    Real acc[Dim];
    acc[0] = s0;
    acc[1] = s1;
    if constexpr (Dim == 3) acc[Dim - 1] = s2;
    add_to_particle<Eval, Energy>(p, i, acc, se, sw);
  }
}

}  // namespace pardyn::cpu
