// SPDX-License-Identifier: BSD-3-Clause
// table: a pair law read from a table of energies and forces (LAMMPS `pair_style table` files,
// table_file.hpp reads them), interpolated on a grid uniform in s = r^2 between the table's first
// distance and the cut-off, per pair of particle types.
//
// Each interval [s_i, s_i + h] of a sub-table holds four numbers c0..c3; with u = (r^2 - s_0)/h - i:
//   linear:  U = c0 + c1 u,                 F/r = c2 + c3 u
//            (energy and F/r each linear in r^2 between the grid's points, as LAMMPS's linear)
//   spline:  U = c0 + c1 u + c2 u^2 + c3 u^3  (cubic Hermite: the table's energies, and the
//            slopes dU/ds = -(F/r)/2 its forces give, at both ends),
//            F/r = -2 dU/ds = -2/h (c1 + 2 c2 u + 3 c3 u^2): the force is the exact derivative of
//            the energy (energy conserving).
// The data (per precision) are an array the evaluator points to: host memory on the CPU, the
// device copy the plugin uploads (table.cpp, BackendBuffer) on the GPU; the evaluator itself stays a
// small trivially copyable struct, as the law contract asks. Distances below the table's first
// point use the first interval's polynomial (extrapolated); the traversal cuts every pair at its
// sub-table's cut-off.
#pragma once

#include "pardyn/evaluator.hpp"
#include "pardyn/math.hpp"
#include "pardyn/registration.hpp"

namespace pardyn::potentials {

struct Table {
  static constexpr int kMaxTypes = 8;

  static FactoryInfo info();  // table.cpp

  // One sub-table on its grid: s_0, 1/h, the cut-off^2, where its intervals start in the data (in
  // numbers: 4 per interval) and the index of its last interval.
  struct Grid {
    double s0 = 0, inv_h = 0, rc2 = 0;
    int offset = 0, last = 0;
  };

  // Trivially copyable: the plugin makes a copy pointing at the device's data for a GPU run.
  struct Params {
    int spline = 0;                    // 1: cubic Hermite energy, force its derivative; 0: linear
    int uniform = 1;                   // 1: every pair of types uses grid[0]
    Grid grid[kMaxTypes * kMaxTypes];  // (type i, type j) at i * kMaxTypes + j
    const float* data_f = nullptr;     // the intervals' numbers in float
    const double* data_d = nullptr;    // and in double
  };

  template <typename Real>
  struct Evaluator {
    struct G {
      Real s0, inv_h, rc2;
      int offset, last;
    };

    static constexpr Range range = Range::Cutoff;
    static constexpr Provides provides = Provides::None;

    Real rcut2;  // the largest cut-off^2 over all type pairs
    const Real* data;
    int spline, uniform;
    G one;  // grid[0], read from the evaluator itself on the uniform path
    G grid[kMaxTypes * kMaxTypes];

    explicit Evaluator(const Params& p) : spline(p.spline), uniform(p.uniform) {
      if constexpr (sizeof(Real) == sizeof(float)) data = reinterpret_cast<const Real*>(p.data_f);
      else data = reinterpret_cast<const Real*>(p.data_d);
      double rc2 = 0;
      for (int k = 0; k < kMaxTypes * kMaxTypes; ++k) {
        const Grid& g = p.grid[k];
        grid[k] = G{Real(g.s0), Real(g.inv_h), Real(g.rc2), g.offset, g.last};
        rc2 = rc2 < g.rc2 ? g.rc2 : rc2;
      }
      one = grid[0];
      rcut2 = Real(uniform ? p.grid[0].rc2 : rc2);
    }

    PARDYN_HD PARDYN_INLINE void pair(Real r2, Real /*mi*/, Real /*mj*/, int ti, int tj,
                                      Real& fdivr, Real& e) const {
      if (uniform) {  // the same grid for every lane of a vectorised loop; the traversal cuts
        at(one.s0, one.inv_h, one.offset, one.last, r2, fdivr, e);
        return;
      }
      const G& g = grid[type_index(ti) * kMaxTypes + type_index(tj)];
      Real en, f;
      at(g.s0, g.inv_h, g.offset, g.last, r2, f, en);
      const bool inside = r2 < g.rc2;
      e = inside ? en : Real(0);
      fdivr = inside ? f : Real(0);
    }

   private:
    // The interpolation on one grid at r^2.
    PARDYN_HD PARDYN_INLINE void at(Real s0, Real inv_h, int offset, int last, Real r2, Real& f,
                                    Real& en) const {
      const Real x = (r2 - s0) * inv_h;
      int i = int(x);
      i = i < 0 ? 0 : (i > last ? last : i);
      const Real u = x - Real(i);
      Real c[4];
      load4(data + offset + 4 * i, c);
      if (spline) {
        en = fma(fma(fma(c[3], u, c[2]), u, c[1]), u, c[0]);
        f = Real(-2) * inv_h * fma(fma(Real(3) * c[3], u, Real(2) * c[2]), u, c[1]);
      } else {
        en = fma(c[1], u, c[0]);
        f = fma(c[3], u, c[2]);
      }
    }

    // An interval's four numbers: on the GPU one 16-byte read-only load (two for double; the
    // intervals are 4-number aligned and device allocations 256-byte aligned), on the CPU four
    // loads (gathers in the vectorised loops; those of an unused energy drop out).
    PARDYN_HD PARDYN_INLINE static void load4(const Real* p, Real (&c)[4]) {
#if defined(__CUDA_ARCH__)
      if constexpr (sizeof(Real) == sizeof(float)) {
        const float4 v = __ldg(reinterpret_cast<const float4*>(p));
        c[0] = v.x, c[1] = v.y, c[2] = v.z, c[3] = v.w;
      } else {
        const double2 a = __ldg(reinterpret_cast<const double2*>(p));
        const double2 b = __ldg(reinterpret_cast<const double2*>(p) + 1);
        c[0] = a.x, c[1] = a.y, c[2] = b.x, c[3] = b.y;
      }
#else
      for (int k = 0; k < 4; ++k) c[k] = p[k];
#endif
    }

    // Types beyond the table share the last row (negative ones too: they wrap to large unsigned).
    PARDYN_HD PARDYN_INLINE static int type_index(int t) {
      return unsigned(t) < unsigned(kMaxTypes) ? t : kMaxTypes - 1;
    }
  };
};

}  // namespace pardyn::potentials
