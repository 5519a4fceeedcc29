// SPDX-License-Identifier: BSD-3-Clause
// euler: the explicit (forward) Euler method. First order and not symplectic: the energy drifts
// linearly in time. Kept as the baseline of integrator comparisons (seed 001).
//
//   x(t + dt) = x(t) + v(t) dt
//   v(t + dt) = v(t) + a(t) dt
#include "pardyn/plugin_export.hpp"

#include "../../common/fixed_step.hpp"

namespace pardyn::plugins {
namespace {

class Euler final : public FixedStepIntegrator {
 public:
  using FixedStepIntegrator::FixedStepIntegrator;
  void step(StepContext& ctx) override {
    auto& ops = ctx.ops();
    ctx.drift(dt_);              // with v(t)
    ops.kick(ctx.store(), dt_);  // with a(t), still in the store
    ctx.compute_forces();
  }
};

void register_euler(Registrar& r) {
  register_fixed_step<Euler>(
      r, "euler", "explicit Euler: 1st order, energy drifts (a baseline)",
      "x += v dt;  v += a(x_old) dt.  First order, not symplectic: the energy error grows\n"
      "linearly with time. One force evaluation per step. Use it only as a baseline.");
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_euler)
