// SPDX-License-Identifier: BSD-3-Clause
// One pair as every pair traversal sees it, written once for the CPU and the GPU loops (all_pairs,
// the cell list's Verlet lists and stencils, the tree's near lists): the law's terms for a
// separation (pair_terms), and the pair added to a target's running sums (add_pair). Host/device:
// the loops differ in how they walk the sources, not in what they do with a pair.
//
// Plain scalars in and out, no struct: GCC then still unswitches a CPU SIMD loop on a law's
// loop-invariant fast path and vectorises both copies (with the terms in a struct it did neither:
// lennard_jones' Verlet and stencil loops stayed scalar).
#pragma once

#include "pardyn/box.hpp"
#include "pardyn/evaluator.hpp"

namespace pardyn {

// d = x_i - x_j from two position records (a member `c` of x, y[, z], ...: a cell list's
// CellParticle, a tree walk's staged source); d2 = 0 in 2D. The records themselves, not pointers to
// their coordinates: nvcc then loads an aligned record in one vector load.
template <int Dim, class Rec, class Real>
PARDYN_HD PARDYN_INLINE void separation(const Rec& xi, const Rec& xj, Real& d0, Real& d1,
                                        Real& d2) {
  d0 = xi.c[0] - xj.c[0];
  d1 = xi.c[1] - xj.c[1];
  d2 = Dim == 3 ? xi.c[2] - xj.c[2] : Real(0);
}

// The law's terms for the pair (i, j) at separation d = x_i - x_j (Periodic: d is turned into its
// minimum image first): r^2 as the law wants it (pair_r2: its softening folded in), and the force
// on i over r and the pair energy from its pair(). Returns whether the pair is inside the law's
// cut-off (always, for a law without one).
template <bool Periodic, int Dim, class Eval, class Real>
PARDYN_HD PARDYN_INLINE bool pair_terms(const Eval& ev, const PeriodicImage<Real>& img, Real mi,
                                        Real mj, int ti, int tj, Real& d0, Real& d1, Real& d2,
                                        Real& r2, Real& fdivr, Real& e) {
  if constexpr (Periodic) {
    d0 = img.wrap(d0, 0);
    d1 = img.wrap(d1, 1);
    if constexpr (Dim == 3) d2 = img.wrap(d2, 2);
  }
  r2 = pair_r2<Dim>(ev, d0, d1, d2);
  ev.pair(r2, mi, mj, ti, tj, fdivr, e);
  if constexpr (EvaluatorTraits<Eval>::has_cutoff) return true_r2(ev, r2) < ev.rcut2;
  return true;
}

// c + a b: fused (one rounding) where Fused, as the GPU loops sum; else a multiply and an add, as
// the CPU loops' SIMD reductions sum.
template <bool Fused, class Real>
PARDYN_HD PARDYN_INLINE Real mul_add(Real a, Real b, Real c) {
  if constexpr (Fused) return fma(a, b, c);
  else return c + a * b;
}

// Adds the pair (pair_terms' d, r2, fdivr, e) to a target's sums where keep: s0..s2 its
// acceleration (or force, for a per-unit-mass law) over the axes, se its energy, sw its virial. A
// pair that is not kept adds exact zeros, so that a SIMD lane is masked without a branch.
template <bool Energy, bool Fused, int Dim, class Eval, class Real>
PARDYN_HD PARDYN_INLINE void add_pair(const Eval& ev, bool keep, Real fdivr, Real e, Real r2,
                                      Real d0, Real d1, Real d2, Real& s0, Real& s1, Real& s2,
                                      Real& se, Real& sw) {
  fdivr = keep ? fdivr : Real(0);
  s0 = mul_add<Fused>(fdivr, d0, s0);
  s1 = mul_add<Fused>(fdivr, d1, s1);
  if constexpr (Dim == 3) s2 = mul_add<Fused>(fdivr, d2, s2);
  if constexpr (Energy) {
    se += keep ? e : Real(0);
    sw = mul_add<Fused>(fdivr, true_r2(ev, r2), sw);
  }
}

// A SIMD loop's partial sums added to the target's: s0..s2 to acc, se to ep, sw to vir. acc has
// three entries (s2 is 0 in 2D), or Dim.
template <bool Energy, class Real, int N>
PARDYN_HD PARDYN_INLINE void add_sums(Real s0, Real s1, Real s2, Real se, Real sw, Real (&acc)[N],
                                      Real& ep, Real& vir) {
  // acc[2] in 2D too where it exists: leaving s2 unread changed which of the cell list's SIMD loops
  // GCC 12 unswitched and vectorised (two of lennard_jones' stencil variants stayed scalar).
  acc[0] += s0;
  acc[1] += s1;
  if constexpr (N == 3) acc[2] += s2;
  if constexpr (Energy) {
    ep += se;
    vir += sw;
  }
}

}  // namespace pardyn
