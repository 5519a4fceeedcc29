// yukawa: screened Coulomb (Yukawa) pair potential, truncated at a cut-off.
//
//   U(r)   = A exp(-kappa r) / r                       for r < r_c, 0 beyond
//   F_i    = -dU/dr (x_i - x_j)/r = A exp(-kappa r) (1 + kappa r) / r^3 (x_i - x_j)
//
// Parameters: A (energy x length; > 0 repulsive), kappa (1/length: inverse screening length),
// rcut (length). This file is all the physics: the framework runs it on every backend and scheme.
#pragma once

#include <cmath>

#include "pardyn/evaluator.hpp"
#include "pardyn/math.hpp"
#include "pardyn/plugin.hpp"

struct Yukawa {
  // The validated parameters, in double.
  struct Params {
    double A, kappa, rcut;
    static Params from(const pardyn::ParamSet& p) {
      return {p.real("A"), p.real("kappa"), p.real("rcut")};
    }
  };

  // The evaluator: trivially copyable, built once per force evaluation, called for every pair.
  template <typename Real>
  struct Evaluator {
    Real A, kappa, rcut2;  // a member named rcut2 tells the traversals the law has a cut-off
    explicit Evaluator(const Params& p) : A(Real(p.A)), kappa(Real(p.kappa)), rcut2(Real(p.rcut * p.rcut)) {}

    PARDYN_HD void pair(Real r2, Real /*mi*/, Real /*mj*/, int /*ti*/, int /*tj*/, Real& fdivr,
                        Real& e) const {
      const Real inv_r = pardyn::inv_sqrt(r2);
      const Real r = r2 * inv_r;
      e = A * pardyn::exponential(-kappa * r) * inv_r;       // U(r)
      fdivr = e * (Real(1) + kappa * r) * inv_r * inv_r;  // -U'(r) / r
    }
  };

  // Name, documentation and parameter schema: what `pardyn plugins show yukawa` prints and what
  // every scenario is checked against.
  static pardyn::FactoryInfo info() {
    pardyn::FactoryInfo f;
    f.name = "yukawa";
    f.summary = "screened Coulomb (Yukawa) pair potential with a cut-off";
    f.doc = "U(r) = A exp(-kappa r) / r for r < rcut, 0 beyond.";
    f.schema.real("A", 1.0, "energy*length", "strength (> 0 repulsive, < 0 attractive)")
        .real("kappa", 1.0, "1/length", "inverse screening length", 0.0)
        .real("rcut", 3.0, "length", "cut-off distance", 0.0, std::nullopt, true);
    return f;
  }
};
