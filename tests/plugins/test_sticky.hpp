// SPDX-License-Identifier: BSD-3-Clause
// test_sticky: an out-of-tree long-range law with a short-range part, for the schemes that
// approximate distant particles (tree, cell_list far zones). With s = r^2 + eps^2:
//   U_ij = m_i m_j [ -G / sqrt(s) + k (rs^2 - r^2)^2  if r < rs ]
// Newtonian attraction everywhere plus a repulsive bump inside rs; force and energy are continuous
// at rs. The far-field form is the 1/r term alone, exact for s >= rs^2 + eps^2 = short2.
#pragma once

#include <cmath>

#include "pardyn/evaluator.hpp"
#include "pardyn/math.hpp"
#include "pardyn/registration.hpp"

struct TestSticky {
  struct Params {
    double G, k, rs, eps;
    static Params from(const pardyn::ParamSet& p) {
      return {p.real("G"), p.real("k"), p.real("rs"), p.real("eps")};
    }
  };
  template <typename Real>
  struct Evaluator {
    static constexpr pardyn::Range range = pardyn::Range::ShortPlusFar;
    static constexpr pardyn::Provides provides =
        pardyn::Provides::Softening | pardyn::Provides::PerUnitMass | pardyn::Provides::FarField;
    Real soft2, short2, G, k;
    explicit Evaluator(const Params& p)
        : soft2(Real(p.eps * p.eps)),
          short2(Real(p.rs * p.rs + p.eps * p.eps)),
          G(Real(p.G)),
          k(Real(p.k)) {}
    PARDYN_HD void far(Real s, Real& phi, Real& d1, Real& d2, Real& d3) const {
      const Real inv_s = pardyn::reciprocal(s);
      const Real r = pardyn::inv_sqrt(s);
      phi = -G * r;
      d1 = Real(0.5) * G * r * inv_s;
      d2 = Real(-1.5) * d1 * inv_s;
      d3 = Real(-2.5) * d2 * inv_s;
    }
    PARDYN_HD void pair(Real s, Real, Real mj, int, int, Real& fdivr, Real& e) const {
      const Real r = pardyn::inv_sqrt(s);
      const Real in = s < short2 ? Real(1) : Real(0);
      const Real g = short2 - s;
      fdivr = mj * (-G * r * r * r + in * Real(4) * k * g);
      e = mj * (-G * r + in * k * g * g);
    }
  };
  static pardyn::FactoryInfo info() {
    pardyn::FactoryInfo f;
    f.name = "test_sticky";
    f.summary = "1/r attraction plus a repulsive bump inside rs (test plugin)";
    f.dims = pardyn::kDimAll;
    f.schema.real("G", 1.0, "energy*length/mass^2", "strength of the 1/r attraction", 0.0)
        .real("k", 1.0, "energy/length^4/mass^2", "strength of the bump", 0.0)
        .real("rs", 0.1, "length", "short-range radius", 0.0, std::nullopt, true)
        .real("eps", 0.01, "length", "softening", 0.0);
    return f;
  }
};
