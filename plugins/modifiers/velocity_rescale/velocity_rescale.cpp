// SPDX-License-Identifier: BSD-3-Clause
// velocity_rescale: the stochastic velocity rescaling thermostat of Bussi, Donadio and Parrinello
// (J. Chem. Phys. 126, 014101 (2007)): a global scaling whose kinetic energy follows the exact
// solution of a stochastic differential equation with the canonical distribution as its stationary
// state. The formula is in pardyn/thermostat.hpp (bussi_scale).
#include <cmath>

#include "pardyn/plugin_export.hpp"
#include "pardyn/thermostat.hpp"

namespace pardyn::plugins {
namespace {

class VelocityRescale final : public ScalingThermostat {
 public:
  using ScalingThermostat::ScalingThermostat;

 private:
  double factor(StepContext& ctx, double K, double dof, double h, double T0) override {
    CounterRng rng(settings().seed, ctx.step());
    return bussi_scale(K, 0.5 * dof * T0, dof, h, settings().tau, rng);
  }
};

const char* const kDoc = R"(Stochastic velocity rescaling (Bussi, Donadio, Parrinello,
J. Chem. Phys. 126, 014101 (2007)): after every `interval` steps all velocities are scaled by
alpha = +-sqrt(K'/K), where K' is drawn from the exact solution over the time h since the last
scaling of
  dK = (K0 - K) dt/tau + 2 sqrt(K K0/Nf) dW/sqrt(tau),   K0 = Nf T0/2,
with c = exp(-h/tau), R1 ~ N(0,1) and S ~ chi-squared(Nf - 1):
  K' = c K + (1 - c) K0 (R1^2 + S)/Nf + 2 R1 sqrt(c (1 - c) K K0/Nf).
Nf = dof = dim N, less dim when momentum is conserved (thermo's temperature; k_B = 1). The
kinetic energy then samples the canonical distribution (mean Nf T0/2, variance Nf T0^2/2) while
the dynamics stays close to Newtonian for tau >> dt; tau -> 0 is velocity resampling of the
total K. Conserves a zero total momentum. The random numbers are counter-based, keyed by
([simulation] seed, step): the same on every backend. Particles all at rest are left alone.
A ramp: temperature_end, ramp_start, ramp_end move T0 linearly from `temperature` (before
ramp_start) to temperature_end (after ramp_end); T0 is taken at the end of the step.
Example:
  [[modifier]]
  type = "velocity_rescale"
  temperature = 0.85
  tau = 0.1)";

void register_velocity_rescale(Registrar& r) {
  register_thermostat<VelocityRescale>(
      r, "velocity_rescale", "Bussi-Donadio-Parrinello stochastic velocity rescaling (canonical)",
      kDoc, 0xb0551ull);
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_velocity_rescale)
