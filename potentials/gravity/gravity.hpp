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
#include "pardyn/math.hpp"
#include "pardyn/plugin.hpp"

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
    Real G, soft2;  // soft2 = eps^2: the traversal hands pair() r^2 + eps^2

    explicit Evaluator(const Params& p) : G(Real(p.G)), soft2(Real(p.eps * p.eps)) {}

    // phi(s) = -G s^-1/2 and its derivatives in s (the far-field form: tree, cell far zones).
    PARDYN_HD PARDYN_INLINE void far(Real s, Real& phi, Real& d1, Real& d2, Real& d3) const {
      const Real inv = inv_sqrt(s);
      const Real inv_s = inv * inv;
      phi = -G * inv;
      d1 = Real(0.5) * G * inv * inv_s;
      d2 = Real(-1.5) * d1 * inv_s;
      d3 = Real(-2.5) * d2 * inv_s;
    }

    PARDYN_HD PARDYN_INLINE void pair(Real r2_soft, Real /*mi*/, Real mj, int, int, Real& fdivr,
                                      Real& e) const {
      const Real inv = inv_sqrt(r2_soft);
      const Real gm_inv = G * mj * inv;  // G m_j / r_soft
      e = -gm_inv;
      fdivr = -gm_inv * inv * inv;
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
