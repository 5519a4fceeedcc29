// SPDX-License-Identifier: BSD-3-Clause
// table: a pair law read from a table of energies and forces (LAMMPS `pair_style table` files,
// table_file.hpp reads them), interpolated on a grid uniform in s = r^2 between the table's first
// distance and the cut-off, per pair of particle types.
//
// On each interval [s_i, s_i + h] of a sub-table, with u = (r^2 - s_0)/h - i:
//   spline:  F/r = F0 + F1 u + F2 u^2,  U = E0 - h/2 (F0 u + F1/2 u^2 + F2/3 u^3)
//            U is the cubic Hermite through the table's energies with the slopes dU/ds = -(F/r)/2
//            its forces give, at both ends; F/r = -2 dU/ds is its exact derivative (energy
//            conserving), so the force's three numbers also give the energy's terms in u.
//   linear:  F/r = F0 + F1 u,  U = E0 + E1 u
//            (F/r and the energy each linear in r^2 between the grid's points, as LAMMPS's linear)
// Both are one formula (Evaluator::at): F/r = F0 + F1 u + F2 u^2, U = E0 + (E1 - h/2 cubic) u, with
// F2 = 0 and the cubic's weight 0 (linear) or E1 = 0 (spline): no branch per pair. F1 and F2 are
// rounded to float (table.cpp), in double too. A pair costs no square root and no division: the
// grid index, three loads and two fused multiply-adds for the force. The numbers are laid out for
// the code that reads them (table.cpp writes both):
//   GPU: one record per interval, (F0, F1, X, E0) with X = F2 (spline) or E1 (linear), which the
//        weights q and l pick, 16 or 32 bytes aligned to 64 (one cache line). The force's numbers
//        are one read-only 16-byte load: the float record, or in double a second, compact copy
//        of each interval (Force16: F0 in double, F1 and F2 in float; the GPU's pair kernels are
//        bound by their L1 loads, and a second 16-byte load per pair cost a fifth of the step,
//        bench/RESULTS.md);
//   CPU: one column per number, F0, F1, F2, E0, E1, each `stride` long. The loads are gathers in
//        the vectorised pair loops (GCC emulates them: extract each lane's index, load, insert);
//        columns let the three share one index per lane with no scaling, and need no weights.
// The gathers are most of what a pair costs on the CPU beyond lennard_jones's arithmetic
// (docs/potentials.md#table, bench/RESULTS.md). The data (per precision) are an array the evaluator
// points to: host memory on the CPU, the device copies the plugin uploads (table.cpp) on the GPU;
// the evaluator itself stays a small trivially copyable struct, as the law contract asks.
// Distances below the table's first point use the first interval's polynomial (extrapolated); the
// traversal cuts every pair at its sub-table's cut-off.
#pragma once

#include <cstddef>

#include "pardyn/evaluator.hpp"
#include "pardyn/math.hpp"
#include "pardyn/registration.hpp"

namespace pardyn::potentials {

struct Table {
  static constexpr int kMaxTypes = 8;

  static FactoryInfo info();  // table.cpp

  // One sub-table on its grid: s_0, 1/h, the cut-off^2, where its records start in the data (in
  // numbers: 4 per interval) and the index of its last interval.
  struct Grid {
    double s0 = 0, inv_h = 0, rc2 = 0;
    int offset = 0, last = 0;
  };

  // In double on the GPU: an interval's force numbers in one 16-byte load (F1, F2 carry float
  // precision in the double records as well; for linear records F2 is 0).
  struct alignas(16) Force16 {
    double f0;
    float f1, f2;
  };

  // Trivially copyable: the plugin makes a copy pointing at the device's data for a GPU run.
  struct Params {
    int spline = 0;                    // 1: cubic Hermite energy, force its derivative; 0: linear
    int uniform = 1;                   // 1: every pair of types uses grid[0]
    Grid grid[kMaxTypes * kMaxTypes];  // (type i, type j) at i * kMaxTypes + j
    const float* data_f = nullptr;     // the intervals' numbers in float
    const double* data_d = nullptr;    // and in double
    const Force16* force_d = nullptr;  // double on the GPU: the intervals' Force16 (device memory)
    unsigned stride = 0;               // the columns' length (CPU); 0: records (GPU)
  };

  template <typename Real>
  struct Evaluator {
    // A grid in the run's precision: x0 = -s0/h and 1/h (the grid coordinate (r^2 - s0)/h is
    // then one fused multiply-add), top (the last interval's index as the largest Real not above
    // it), the cut-off^2 and the records' offset. (Small: the evaluator is a kernel argument, at
    // most 4 KB with the traversal's others before CUDA 12.1.)
    struct G {
      Real x0, inv_h, top, rc2;
      int offset;
    };

    static constexpr Range range = Range::Cutoff;
    static constexpr Provides provides = Provides::None;

    Real rcut2;  // the largest cut-off^2 over all type pairs
    const Real* data;
    Real q, l;  // the weights of a record's third number: spline 1, 0; linear 0, 1 (GPU, at())
    Real eh;    // spline -1/2, linear 0: the energy's cubic is -h/2 times the force's (at())
    Real lo;    // 0: the grid coordinate's lower clamp (at())
    int uniform;
    unsigned stride;       // Params::stride
    G one;                 // grid[0], read from the evaluator itself on the uniform path
    const Real* one_data;  // and its data
    const Force16* force;  // double on the GPU: Force16 per interval (the records' order)
    const Force16* one_force;
    G grid[kMaxTypes * kMaxTypes];

    explicit Evaluator(const Params& p)
        : q(p.spline ? 1 : 0),
          l(p.spline ? 0 : 1),
          eh(p.spline ? -0.5 : 0),
          lo(0),
          uniform(p.uniform),
          stride(p.stride),
          force(p.force_d) {
      if constexpr (sizeof(Real) == sizeof(float)) data = reinterpret_cast<const Real*>(p.data_f);
      else data = reinterpret_cast<const Real*>(p.data_d);
      double rc2 = 0;
      for (int k = 0; k < kMaxTypes * kMaxTypes; ++k) {
        const Grid& g = p.grid[k];
        Real top = Real(g.last);
        while (double(top) > g.last) top = std::nextafter(top, Real(0));  // float, n > 2^24
        grid[k] = G{Real(-g.s0 * g.inv_h), Real(g.inv_h), top, Real(g.rc2), g.offset};
        rc2 = rc2 < g.rc2 ? g.rc2 : rc2;
      }
      one = grid[0];
      one_data = data + (stride ? one.offset / 4 : one.offset);
      one_force = force ? force + one.offset / 4 : nullptr;
      rcut2 = Real(uniform ? p.grid[0].rc2 : rc2);
    }

    PARDYN_HD PARDYN_INLINE void pair(Real r2, Real /*mi*/, Real /*mj*/, int ti, int tj,
                                      Real& fdivr, Real& e) const {
      if (uniform) {  // the same grid for every lane of a vectorised loop; the traversal cuts
        at(one, one_data, one_force, 0, r2, fdivr, e);
        return;
      }
      const G& g = grid[type_index(ti) * kMaxTypes + type_index(tj)];
      Real en, f;
      at(g, data, force, unsigned(g.offset), r2, f, en);
      const bool inside = r2 < g.rc2;
      e = inside ? en : Real(0);
      fdivr = inside ? f : Real(0);
    }

   private:
    // The interpolation on grid g (its records from data + offset, its columns' rows from
    // offset / 4) at r^2. The index is clamped in floating point (a NaN r^2 reads the first
    // interval) and no branch is taken: GCC vectorises a pair loop only if every load in it is
    // unconditional (it cannot predicate emulated gathers). The lower clamp is against the member lo, not the literal 0: GCC makes x > lo ? x : lo one
    // vmaxps, but x > 0 ? x : 0 a comparison and a mask.
    PARDYN_HD PARDYN_INLINE void at(const G& g, const Real* data, const Force16* force16,
                                    unsigned offset, Real r2, Real& f, Real& en) const {
      const Real x = fma(r2, g.inv_h, g.x0);
      Real xc = x > lo ? x : lo;
      xc = xc < g.top ? xc : g.top;
      const int i = int(xc);
      const Real u = x - Real(i);
      Real c[5];  // F0, F1, F2, E0, E1
#if defined(__CUDA_ARCH__)
      // The force from one 16-byte read-only load: the float record, or the interval's Force16 in
      // double. The energy's numbers (the record's last two) come with a second load, which a step
      // without energies leaves out.
      const unsigned k = offset + 4u * unsigned(i);  // unsigned: no sign extension per thread
      Real x2;                                       // the record's third number
      if constexpr (sizeof(Real) == sizeof(float)) {
        const float4 v = __ldg(reinterpret_cast<const float4*>(data + k));
        c[0] = v.x, c[1] = v.y, x2 = v.z, c[3] = v.w;
        c[2] = q * x2;
      } else {
        const double2 a =
            __ldg(reinterpret_cast<const double2*>(force16 + (offset / 4u + unsigned(i))));
        const long long bits = __double_as_longlong(a.y);
        c[0] = a.x;
        c[1] = __int_as_float(int(bits & 0xffffffff));
        c[2] = __int_as_float(int(bits >> 32));  // 0 in linear Force16
        const double2 b = __ldg(reinterpret_cast<const double2*>(data + k) + 1);
        x2 = b.x, c[3] = b.y;
      }
      c[4] = l * x2;
#else
      // One base per column and one index, so that GCC extracts each lane's index once for all
      // the loads (data[k + 1] would need it again: unsigned k + 1 may wrap); a step without
      // energies drops the last two loads.
      const unsigned k = offset / 4u + unsigned(i);  // unsigned: no sign extension per lane
      for (int n = 0; n < 5; ++n) c[n] = (data + n * std::size_t(stride))[k];
      (void)force16;
#endif
      f = fma(fma(c[2], u, c[1]), u, c[0]);
      const Real third = Real(1) / Real(3);
      const Real cubic = fma(fma(third * c[2], u, Real(0.5) * c[1]), u, c[0]);
      en = fma(fma(eh / g.inv_h, cubic, c[4]), u, c[3]);  // a division for energies only
    }

    // Types beyond the table share the last row (negative ones too: they wrap to large unsigned).
    PARDYN_HD PARDYN_INLINE static int type_index(int t) {
      return unsigned(t) < unsigned(kMaxTypes) ? t : kMaxTypes - 1;
    }
  };
};

}  // namespace pardyn::potentials
