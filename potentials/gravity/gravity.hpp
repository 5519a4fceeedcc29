// SPDX-License-Identifier: BSD-3-Clause
// gravity: Newtonian gravity with Plummer softening, in 2D and 3D.
//
//   U_ij = -G m_i m_j / sqrt(r^2 + eps^2)
//   F_i  = -G m_i m_j (x_i - x_j) / (r^2 + eps^2)^(3/2)
//
// Parameters: G (gravitational constant, length^3 mass^-1 time^-2; 1 in code units) and eps (softening
// length). In 2D the same 1/r^2 law acts within the plane (for the 2D logarithmic law, use `log`).
#pragma once

#include "pardyn/evaluator.hpp"
#include "pardyn/far_kernels.hpp"
#include "pardyn/math.hpp"
#include "pardyn/registration.hpp"

namespace pardyn::potentials {

struct Gravity {
  struct Params {
    double G = 1.0;
    double eps = 0.0;
    static Params from(const ParamSet& p) { return {p.real("G"), p.real("eps")}; }
  };

  template <typename Real>
  struct Evaluator {
    static constexpr Range range = Range::LongRange;
    static constexpr Provides provides =
        Provides::Softening | Provides::PerUnitMass | Provides::FarField;
    Real soft2;                         // eps^2: the traversal hands pair() r^2 + eps^2
    far_kernels::Gravity<Real> kernel;  // phi(s) = -G s^-1/2 (pardyn/far_kernels.hpp)

    explicit Evaluator(const Params& p) : soft2(Real(p.eps * p.eps)), kernel(p.G) {}

    // The far-field form (tree, cell far zones): phi(s) and its derivatives in s.
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
    f.name = "gravity";
    f.summary = "Newtonian gravity with Plummer softening (2D and 3D)";
    f.doc =
        "U_ij = -G m_i m_j / sqrt(r^2 + eps^2);  F_i = -G m_i m_j (x_i - x_j) / (r^2 + "
        "eps^2)^(3/2).\n"
        "Long range (no cut-off): scheme \"all_pairs\" (exact), \"tree\" (Barnes-Hut, large N) or\n"
        "\"cell_list\" with far zones. eps = 0 is exact Newton: two particles at the same "
        "position\n"
        "then give an infinite force.";
    f.dims = kDimAll;
    f.schema.real("G", 1.0, "length^3 mass^-1 time^-2", "gravitational constant", 0.0)
        .real("eps", 0.0, "length", "Plummer softening length", 0.0);
    return f;
  }
};

}  // namespace pardyn::potentials
