// SPDX-License-Identifier: BSD-3-Clause
// leapfrog: kick-drift-kick (velocity Verlet). Second order, symplectic and time-reversible: the
// energy error stays bounded instead of drifting. One force evaluation per step.
//
//   v(t + dt/2) = v(t) + a(t) dt/2
//   x(t + dt)   = x(t) + v(t + dt/2) dt
//   v(t + dt)   = v(t + dt/2) + a(t + dt) dt/2
#include "pardyn/plugin_export.hpp"

#include "../../common/fixed_step.hpp"

namespace pardyn::plugins {
namespace {

class Leapfrog final : public FixedStepIntegrator {
 public:
  using FixedStepIntegrator::FixedStepIntegrator;
  void step(StepContext& ctx) override {
    auto& ops = ctx.ops();
    ops.kick(ctx.store(), 0.5 * dt_);
    ctx.drift(dt_);
    ctx.compute_forces();
    ops.kick(ctx.store(), 0.5 * dt_);
  }
};

const char* const kDoc =
    "v += a dt/2;  x += v dt;  (forces at the new x);  v += a dt/2.\n"
    "Second order, symplectic, time-reversible: the energy error oscillates but does not drift.\n"
    "One force evaluation per step. The default integrator. `leapfrog` and `velocity_verlet`\n"
    "are two names of this same method (kick-drift-kick leapfrog is velocity Verlet).";

void register_leapfrog(Registrar& r) {
  register_fixed_step<Leapfrog>(
      r, "leapfrog", "kick-drift-kick leapfrog (velocity Verlet): 2nd order, symplectic", kDoc);
  // The name most molecular dynamics users look for.
  register_fixed_step<Leapfrog>(
      r, "velocity_verlet", "velocity Verlet: an alias of leapfrog (2nd order, symplectic)", kDoc);
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_leapfrog)
