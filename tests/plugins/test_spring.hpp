// SPDX-License-Identifier: BSD-3-Clause
// test_spring: U = k r^2 / 2 for r < rcut (0 beyond), F_i = -k (x_i - x_j).
#pragma once

#include "pardyn/evaluator.hpp"
#include "pardyn/registration.hpp"

struct TestSpring {
  struct Params {
    double k, rcut;
    static Params from(const pardyn::ParamSet& p) { return {p.real("k"), p.real("rcut")}; }
  };
  template <typename Real>
  struct Evaluator {
    static constexpr pardyn::Range range = pardyn::Range::Cutoff;
    static constexpr pardyn::Provides provides = pardyn::Provides::None;
    Real k, rcut2;
    explicit Evaluator(const Params& p) : k(Real(p.k)), rcut2(Real(p.rcut * p.rcut)) {}
    PARDYN_HD void pair(Real r2, Real, Real, int, int, Real& fdivr, Real& e) const {
      fdivr = -k;
      e = Real(0.5) * k * r2;
    }
  };
  static pardyn::FactoryInfo info() {
    pardyn::FactoryInfo f;
    f.name = "test_spring";
    f.summary = "U = k r^2 / 2 for r < rcut (test plugin)";
    f.schema.real("k", 1.0, "energy/length^2", "spring constant", 0.0)
        .real("rcut", 1e30, "length", "cut-off", 0.0, std::nullopt, true);
    return f;
  }
};
