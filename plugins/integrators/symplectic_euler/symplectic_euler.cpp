// SPDX-License-Identifier: BSD-3-Clause
// symplectic_euler: the semi-implicit (symplectic) Euler method, kick then drift. First order like
// explicit Euler, but symplectic: the energy error stays bounded instead of drifting. One force
// evaluation per step.
//
//   v(t + dt) = v(t) + a(x(t)) dt
//   x(t + dt) = x(t) + v(t + dt) dt
#include "pardyn/plugin_export.hpp"

#include "../../common/fixed_step.hpp"

namespace pardyn::plugins {
namespace {

class SymplecticEuler final : public FixedStepIntegrator {
 public:
  using FixedStepIntegrator::FixedStepIntegrator;
  void step(StepContext& ctx) override {
    auto& ops = ctx.ops();
    ops.kick(ctx.store(), dt_);  // with a(t), valid on entry
    ctx.drift(dt_);              // with the new velocities: this is what makes it symplectic
    ctx.compute_forces();
  }
};

void register_symplectic_euler(Registrar& r) {
  register_fixed_step<SymplecticEuler>(
      r, "symplectic_euler",
      "symplectic (semi-implicit) Euler, kick then drift: 1st order, symplectic",
      "v += a(x) dt;  x += v dt;  (forces at the new x).\n"
      "First order, symplectic (not time-reversible): the energy error oscillates with an\n"
      "amplitude proportional to dt but does not drift, unlike explicit Euler. One force\n"
      "evaluation per step. Its positions are leapfrog's and its velocities leapfrog's half-step\n"
      "ones, so leapfrog costs the same and is one order better: use this one for teaching or\n"
      "comparisons.");
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_symplectic_euler)
