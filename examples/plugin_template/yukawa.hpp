// SPDX-License-Identifier: BSD-3-Clause
// yukawa: screened Coulomb (Yukawa) pair potential, truncated and shifted at a cut-off.
//
//   U(r)   = A exp(-kappa r) / r - U_c                 for r < r_c, 0 beyond
//   U_c    = A exp(-kappa r_c) / r_c                    (shift = true; 0 with shift = false)
//   F_i    = -dU/dr (x_i - x_j)/r = A exp(-kappa r) (1 + kappa r) / r^3 (x_i - x_j)
//
// The shift makes U continuous at r_c: without it every pair that crosses r_c changes the total
// energy by U(r_c), and the energy drifts by the same amount whatever the time step (see "A law with
// a cut-off" in docs/plugins.md). The force is unchanged by the shift.
//
// Parameters: A (energy x length; > 0 repulsive), kappa (1/length: inverse screening length),
// rcut (length), shift. This file is all the physics: the framework runs it on every backend and
// scheme it supports.
#pragma once

#include <cmath>

#include "pardyn/evaluator.hpp"
#include "pardyn/math.hpp"
#include "pardyn/registration.hpp"

struct Yukawa {
  // The validated parameters, in double.
  struct Params {
    double A, kappa, rcut;
    bool shift;
    static Params from(const pardyn::ParamSet& p) {
      return {p.real("A"), p.real("kappa"), p.real("rcut"), p.boolean("shift")};
    }
  };

  // The evaluator: trivially copyable, built once per force evaluation, called for every pair.
  template <typename Real>
  struct Evaluator {
    // The contract (evaluator.hpp): a cut-off law, so it has `Real rcut2`; no softening, no far
    // field, and pair() returns forces and energies (not per unit mass). A mistake here is a
    // compile error that says what to add.
    static constexpr pardyn::Range range = pardyn::Range::Cutoff;
    static constexpr pardyn::Provides provides = pardyn::Provides::None;
    Real A, kappa, rcut2;  // rcut2: the squared cut-off; the traversals skip pairs beyond it
    Real uc;               // U at the cut-off (0 without the shift), computed once in double
    explicit Evaluator(const Params& p)
        : A(Real(p.A)),
          kappa(Real(p.kappa)),
          rcut2(Real(p.rcut * p.rcut)),
          uc(p.shift ? Real(p.A * std::exp(-p.kappa * p.rcut) / p.rcut) : Real(0)) {}

    PARDYN_HD void pair(Real r2, Real /*mi*/, Real /*mj*/, int /*ti*/, int /*tj*/, Real& fdivr,
                        Real& e) const {
      const Real inv_r = pardyn::inv_sqrt(r2);
      const Real r = r2 * inv_r;
      const Real u = A * pardyn::exponential(-kappa * r) * inv_r;  // A exp(-kappa r) / r
      fdivr = u * (Real(1) + kappa * r) * inv_r * inv_r;           // -U'(r) / r
      e = u - uc;                                                  // U(r), shifted
    }
  };

  // Name, documentation and parameter schema: what `pardyn plugins show yukawa` prints and what
  // every scenario is checked against. The arguments after the documentation are the range:
  // real(name, default, unit, doc, min, max, min_exclusive); std::nullopt for no bound.
  static pardyn::FactoryInfo info() {
    pardyn::FactoryInfo f;
    f.name = "yukawa";
    f.summary = "screened Coulomb (Yukawa) pair potential with a cut-off, energy shifted";
    f.doc =
        "U(r) = A exp(-kappa r) / r - U(rcut) for r < rcut, 0 beyond (shift = false: without\n"
        "the - U(rcut)). F_i = A exp(-kappa r) (1 + kappa r) / r^3 (x_i - x_j).";
    f.schema.real("A", 1.0, "energy*length", "strength (> 0 repulsive, < 0 attractive)")
        .real("kappa", 1.0, "1/length", "inverse screening length", 0.0)
        .real("rcut", 3.0, "length", "cut-off distance", 0.0, std::nullopt, true)
        .boolean("shift", true, "subtract U(rcut) so that the energy is continuous at the cut-off");
    return f;
  }
};
