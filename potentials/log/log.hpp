// SPDX-License-Identifier: BSD-3-Clause
// log: the 2D logarithmic (Newtonian 2D) attraction with Plummer-type softening.
//
//   U_ij = G m_i m_j ln( sqrt(r^2 + eps^2) / r0 )
//   F_i  = -G m_i m_j (x_i - x_j) / (r^2 + eps^2)
//
// In two dimensions this is what gravity (or a line charge) is: the force falls as 1/r. Parameters:
// G (strength, energy/mass^2), eps (softening length), r0 (the length where U = 0; it shifts the
// energy only). Seed 003 uses it for the long-range attraction of its 2D real gas.
#pragma once

#include "pardyn/evaluator.hpp"
#include "pardyn/far_kernels.hpp"
#include "pardyn/math.hpp"
#include "pardyn/registration.hpp"

namespace pardyn::potentials {

struct Log {
  struct Params {
    double G = 1.0, eps = 0.0, r0 = 1.0;
    static Params from(const ParamSet& p) { return {p.real("G"), p.real("eps"), p.real("r0")}; }
  };

  template <typename Real>
  struct Evaluator {
    static constexpr Range range = Range::LongRange;
    static constexpr Provides provides =
        Provides::Softening | Provides::PerUnitMass | Provides::FarField;
    Real soft2;                           // eps^2: pair() receives r^2 + eps^2
    far_kernels::Logarithm<Real> kernel;  // phi(s) = G/2 (ln s - ln r0^2) (pardyn/far_kernels.hpp)

    explicit Evaluator(const Params& p)
        : soft2(Real(p.eps * p.eps)), kernel(p.G, 2.0 * std::log(p.r0)) {}

    // The far-field form: phi(s) and its derivatives in s.
    PARDYN_HD PARDYN_INLINE void far(Real s, Real& phi, Real& d1, Real& d2, Real& d3) const {
      kernel.far(s, phi, d1, d2, d3);
    }

    PARDYN_HD PARDYN_INLINE void pair(Real r2_soft, Real /*mi*/, Real mj, int, int, Real& fdivr,
                                      Real& e) const {
      kernel.pair(r2_soft, mj, fdivr, e);
    }
  };

  static FactoryInfo info() {
    FactoryInfo f;
    f.name = "log";
    f.summary = "2D logarithmic attraction, U = G m m ln(r_soft/r0): 2D gravity (1/r force)";
    f.doc =
        "U_ij = G m_i m_j ln(sqrt(r^2 + eps^2) / r0);  F_i = -G m_i m_j (x_i - x_j) / (r^2 + "
        "eps^2).\n"
        "The 2D counterpart of Newtonian gravity: the force falls as 1/r. Long range (no "
        "cut-off):\n"
        "scheme \"all_pairs\" (exact), \"tree\" (quadtree) or \"cell_list\" with far zones. r0 "
        "only\n"
        "shifts the zero of the energy.";
    f.dims = kDim2;
    f.schema.real("G", 1.0, "energy/mass^2", "strength", 0.0)
        .real("eps", 0.0, "length", "softening length", 0.0)
        .real("r0", 1.0, "length", "reference length where U = 0", 0.0, std::nullopt, true);
    return f;
  }
};

}  // namespace pardyn::potentials
