// SPDX-License-Identifier: BSD-3-Clause
// rk4: the classic fourth-order Runge-Kutta method on the state y = (x, v), whose derivative is
// f(y) = (v, a(x)). Four force evaluations per step; not symplectic, so the energy drifts slowly.
//
//   k1 = f(y)                      (the accelerations valid on entry: no evaluation)
//   k2 = f(y + dt/2 k1)
//   k3 = f(y + dt/2 k2)
//   k4 = f(y + dt k3)
//   y(t + dt) = y + dt/6 (k1 + 2 k2 + 2 k3 + k4)    (then the forces there, for the next k1)
#include "pardyn/plugin_export.hpp"

#include "../../common/fixed_step.hpp"
#include "rk4_step.hpp"

namespace pardyn::plugins {
namespace {

class Rk4 final : public FixedStepIntegrator {
 public:
  using FixedStepIntegrator::FixedStepIntegrator;
  bool particle_state() const override { return true; }

  void step(StepContext& ctx) override {
    // Allocated on the first step, when the store is filled.
    work_.fit(ctx.ops(), ctx.store());
    ctx.ops().get_derivative(ctx.store(), *work_.k[0]);
    rk4_step(ctx, dt_, work_, *work_.k[0]);
  }

 private:
  Rk4Work work_;
};

void register_rk4(Registrar& r) {
  register_fixed_step<Rk4>(
      r, "rk4", "classic 4th-order Runge-Kutta on (x, v): 4 force evaluations per step",
      "k1 = f(y), k2 = f(y + dt/2 k1), k3 = f(y + dt/2 k2), k4 = f(y + dt k3),\n"
      "y += dt/6 (k1 + 2 k2 + 2 k3 + k4), with y = (x, v) and f(y) = (v, a(x)).\n"
      "Fourth order; four force evaluations per step (k1 reuses the previous step's forces).\n"
      "Not symplectic: the energy error drifts, though slowly at small dt. Use it for short,\n"
      "accurate runs and as a reference; for long runs prefer yoshida4 (same order, 3\n"
      "evaluations, no drift), and for close encounters dopri5 (adaptive).\n"
      "Boundaries are applied at every stage; with reflecting walls a stage that bounces is only\n"
      "first order, so use leapfrog there.");
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_rk4)
