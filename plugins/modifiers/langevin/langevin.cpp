// SPDX-License-Identifier: BSD-3-Clause
// langevin: a Langevin thermostat applied as an exact Ornstein-Uhlenbeck velocity update after each
// step (or every `interval` steps), the "O" part of a splitting such as BAOAB/OBABO:
//   v <- c1 v + sqrt((1 - c1^2) T0 / m) xi,   c1 = exp(-h / tau),
// h the time since the last update, xi a standard normal per particle and axis from a counter-based
// generator keyed by (seed, step, particle id, axis): the CPU and the GPU draw the same numbers.
#include <cmath>

#include "pardyn/plugin_export.hpp"
#include "pardyn/thermostat.hpp"

namespace pardyn::plugins {
namespace {

class Langevin final : public Thermostat {
 public:
  using Thermostat::Thermostat;
  // The random kicks change the total momentum.
  bool conserves_momentum() const override { return false; }

 private:
  void act(StepContext& ctx, double h, double T0) override {
    ctx.ops().langevin(ctx.store(), std::exp(-h / settings().tau), T0, settings().seed, ctx.step());
  }
};

const char* const kDoc = R"(Langevin thermostat: after every `interval` steps each velocity
component gets the exact Ornstein-Uhlenbeck update over the time h since the last one,
  v <- c1 v + sqrt((1 - c1^2) T0/m) xi,   c1 = exp(-h/tau),
i.e. friction gamma = 1/tau and the matching noise (k_B = 1), applied after the integrator's step
(the O of an OBABO-like splitting with the integrator as BAB). With leapfrog this samples the
canonical ensemble at T0, with the usual O(dt^2) configurational error of the splitting.
xi is a standard normal from a counter-based generator keyed by ([simulation] seed, step,
particle id, axis): the CPU and the CUDA backends, and any number of threads, draw the same
numbers. Total momentum is not conserved, so the temperature's dof is dim N.
A ramp: temperature_end, ramp_start, ramp_end move T0 linearly from `temperature` (before
ramp_start) to temperature_end (after ramp_end); T0 is taken at the end of the step.
Example:
  [[modifier]]
  type = "langevin"
  temperature = 0.85
  tau = 1.0)";

void register_langevin(Registrar& r) {
  register_thermostat<Langevin>(
      r, "langevin", "Langevin thermostat: exact Ornstein-Uhlenbeck velocity update (canonical)",
      kDoc, 0x1a6e5171ull);
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_langevin)
