// SPDX-License-Identifier: BSD-3-Clause
// berendsen: weak-coupling thermostat (Berendsen et al., J. Chem. Phys. 81, 3684 (1984)). After each
// step (or every `interval` steps) all velocities are scaled by
//   lambda = sqrt(1 + h / tau (T0 / T - 1)),
// h the time since the last scaling, T the current temperature, T0 the (possibly ramping) target.
// T relaxes to T0 exponentially with time constant tau, but the fluctuations of T are suppressed:
// the ensemble is not canonical. Use it to equilibrate; sample with velocity_rescale or langevin.
#include <algorithm>
#include <cmath>

#include "pardyn/plugin_export.hpp"
#include "pardyn/thermostat.hpp"

namespace pardyn::plugins {
namespace {

class Berendsen final : public ScalingThermostat {
 public:
  using ScalingThermostat::ScalingThermostat;

 private:
  double factor(StepContext&, double K, double dof, double h, double T0) override {
    const double T = 2.0 * K / dof;
    // h > tau with T >> T0 would give lambda^2 < 0: the velocities are then set to zero.
    const double lambda2 = std::max(0.0, 1.0 + h / settings().tau * (T0 / T - 1.0));
    return std::sqrt(lambda2);
  }
};

const char* const kDoc = R"(Berendsen weak-coupling thermostat: after every `interval` steps all
velocities are scaled by
  lambda = sqrt(1 + h/tau (T0/T - 1)),
h = the time since the last scaling (the steps taken, summed), T = 2K/dof the current temperature
(k_B = 1; dof = dim N, less dim when momentum is conserved: thermo's temperature), T0 the target
at the end of the step. T relaxes to T0 as exp(-t/tau), but its fluctuations are suppressed: the
ensemble is NOT canonical. Use it to equilibrate or quench; sample with velocity_rescale or langevin.
A ramp: temperature_end, ramp_start, ramp_end move T0 linearly from `temperature` (before
ramp_start) to temperature_end (after ramp_end). Conserves total momentum (a uniform scaling keeps
a zero total momentum zero). Particles all at rest (T = 0) are left alone.
Example:
  [[modifier]]
  type = "berendsen"
  temperature = 1.0
  tau = 0.5)";

void register_berendsen(Registrar& r) {
  register_thermostat<Berendsen>(
      r, "berendsen",
      "Berendsen weak-coupling thermostat (velocity scaling towards T0; not canonical)", kDoc,
      0xbe7e5d5e11ull);
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_berendsen)
