// SPDX-License-Identifier: BSD-3-Clause
// What the thermostat modifiers (berendsen, langevin, velocity_rescale) share: the target temperature
// with an optional linear ramp (a quench or a heating), the relaxation time, the application interval
// and the time elapsed since the last application; for the thermostats that scale all velocities
// by one factor (berendsen, velocity_rescale) also the measurement of the kinetic energy and the
// scaling (ScalingThermostat). Header-only: each thermostat plugin compiles it.
//
// Temperature: k_B = 1 and T = 2 K / dof with the framework's dof (StepContext::dof(): dim N, less dim
// when total momentum is conserved), the same temperature thermo.csv reports.
//
// Target: T0(t) = temperature                                  for t <= ramp_start
//               = temperature + (temperature_end - temperature) (t - ramp_start) / (ramp_end - ramp_start)
//                                                             for ramp_start < t < ramp_end
//               = temperature_end                              for t >= ramp_end
// evaluated at the time the thermostat acts: the end of the step it follows.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/thermostat.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "pardyn/modifier.hpp"
#include "pardyn/params.hpp"
#include "pardyn/registration.hpp"
#include "pardyn/random.hpp"

namespace pardyn {

// A target temperature that is constant or ramps linearly between two times.
struct TemperatureRamp {
  double start = 1.0;       // `temperature`
  double end = 1.0;         // `temperature_end` (equal to start without a ramp)
  double ramp_start = 0.0;  // time the ramp begins
  double ramp_end = 0.0;    // time it reaches `end`; ramp_end == ramp_start is a jump at that time

  double at(double t) const {
    if (t < ramp_start) return start;
    if (t >= ramp_end) return end;
    return start + (end - start) * (t - ramp_start) / (ramp_end - ramp_start);
  }
};

struct ThermostatSettings {
  TemperatureRamp target;
  double tau = 1.0;            // relaxation time
  std::uint64_t interval = 1;  // act every this many steps
  std::uint64_t seed = 0;      // random stream (thermostats with noise); from [simulation] seed
};

// The parameters every thermostat takes, for its schema.
inline Schema thermostat_schema() {
  Schema s;
  s.real("temperature", std::nullopt, "energy",
         "target temperature T0 (k_B = 1), or the ramp's starting value", 0.0)
      .real("temperature_end", -1.0, "energy",
            "target at ramp_end and after: a linear ramp from `temperature` (a quench or a "
            "heating); -1: no ramp")
      .real("ramp_start", 0.0, "time", "time the ramp begins", 0.0)
      .real("ramp_end", 0.0, "time",
            "time the ramp reaches temperature_end (equal to ramp_start: a jump at that time)", 0.0)
      .real("tau", 1.0, "time", "relaxation time of the thermostat", 0.0, std::nullopt, true)
      .integer("interval", std::int64_t(1),
               "act every this many steps, over the time elapsed since the last action", 1,
               double(kMaxSteps));
  return s;
}

// Reads and checks the common parameters; `who` names the plugin in messages, `stream` (a constant
// of each thermostat kind) separates its random numbers from other users of the run's seed.
inline ThermostatSettings thermostat_settings(const ParamSet& p, const RunInfo& run,
                                              const std::string& who, std::uint64_t stream) {
  ThermostatSettings s;
  const std::string where = who + (p.context.empty() ? "" : " (" + p.context + ")");
  s.target.start = p.real("temperature");
  const double end = p.real("temperature_end");
  s.target.ramp_start = p.real("ramp_start");
  s.target.ramp_end = p.real("ramp_end");
  if (end == -1.0) {
    s.target.end = s.target.start;
    s.target.ramp_end = s.target.ramp_start;
  } else if (end < 0) {
    throw Error(where + ": temperature_end = " + format_number(end) +
                " is negative; give a temperature >= 0, or -1 for no ramp");
  } else {
    s.target.end = end;
    if (s.target.ramp_end <= 0)
      throw Error(where +
                  ": temperature_end is given but ramp_end is not; set ramp_end (and "
                  "ramp_start, default 0) to the time the target reaches temperature_end");
    if (s.target.ramp_end < s.target.ramp_start)
      throw Error(where + ": ramp_end = " + format_number(s.target.ramp_end) +
                  " is before ramp_start = " + format_number(s.target.ramp_start) +
                  "; the ramp must end after it starts");
  }
  s.tau = p.real("tau");
  s.interval = static_cast<std::uint64_t>(p.integer("interval"));
  s.seed = mix64(run.seed ^ mix64(stream));
  return s;
}

// The common part of a thermostat: acts every `interval` steps over the time h elapsed since it last
// acted (the sum of the steps taken, StepContext::dt()), with the target at the end of the step just
// taken. A thermostat implements act().
class Thermostat : public Modifier {
 public:
  explicit Thermostat(const ThermostatSettings& s) : s_(s) {}
  void apply(StepContext& ctx) final {
    elapsed_ += ctx.dt();
    if (ctx.step() % s_.interval != 0) return;
    const double h = elapsed_;
    elapsed_ = 0;
    act(ctx, h, s_.target.at(ctx.time() + ctx.dt()));
  }
  // Checkpoints: the time since the last action (the random streams are keyed by step: no state).
  void save(StateOut& out) const override { out.real("elapsed", elapsed_); }
  void load(StateIn& in, StepContext&) override { elapsed_ = in.real("elapsed"); }

 protected:
  virtual void act(StepContext& ctx, double h, double T0) = 0;
  const ThermostatSettings& settings() const { return s_; }

 private:
  ThermostatSettings s_;
  double elapsed_ = 0;
};

// A thermostat that scales all velocities by one factor (berendsen, velocity_rescale): act() takes
// the kinetic energy K and the degrees of freedom, leaves particles all at rest alone (they cannot
// be scaled to a temperature), and scales the velocities by factor(ctx, K, dof, h, T0).
class ScalingThermostat : public Thermostat {
 public:
  using Thermostat::Thermostat;

 protected:
  virtual double factor(StepContext& ctx, double K, double dof, double h, double T0) = 0;

 private:
  void act(StepContext& ctx, double h, double T0) final {
    const double dof = ctx.dof();
    const double K = ctx.ops().kinetic_energy(ctx.store());
    if (!(K > 0) || !(dof > 0)) return;  // particles at rest cannot be scaled to a temperature
    ctx.ops().scale_velocities(ctx.store(), factor(ctx, K, dof, h, T0));
  }
};

// Registers thermostat class T (constructed from ThermostatSettings) as a modifier plugin taking the
// common parameters; `stream` separates its random numbers from other users of the run's seed.
template <class T>
void register_thermostat(Registrar& r, const std::string& name, const std::string& summary,
                         const std::string& doc, std::uint64_t stream) {
  FactoryInfo f;
  f.kind = PluginKind::Modifier;
  f.name = name;
  f.summary = summary;
  f.doc = doc;
  f.backends = kCpu | kCuda;  // thermostats act only through BackendOps
  f.schema = thermostat_schema();
  r.add(std::move(f), Factory<Modifier>([name, stream](const ParamSet& p, const RunInfo& run) {
          return std::unique_ptr<Modifier>(new T(thermostat_settings(p, run, name, stream)));
        }));
}

// Bussi-Donadio-Parrinello stochastic velocity rescaling (J. Chem. Phys. 126, 014101 (2007), appendix):
// the exact solution over a time h of  dK = (K0 - K) dt/tau + 2 sqrt(K K0 / Nf) dW / sqrt(tau)  for
// the kinetic energy K with Nf degrees of freedom and target K0 = Nf T0 / 2. With c = exp(-h / tau),
// R1 a standard normal and S a chi-squared variate with Nf - 1 degrees of freedom,
//   K' = c K + (1 - c) K0 (R1^2 + S) / Nf + 2 R1 sqrt(c (1 - c) K K0 / Nf)
// and the velocities are scaled by alpha = sign * sqrt(K' / K), sign = -1 when
// R1 + sqrt(c Nf K / ((1 - c) K0)) < 0 (the paper's choice, which makes the map exact).
// The random numbers come from counter-based draws keyed by (seed, step): any backend and a resumed
// run draw the same ones.
class CounterRng {
 public:
  CounterRng(std::uint64_t seed, std::uint64_t step) : seed_(seed), step_(step) {}
  double uniform() { return uniform_open(mix64(random_key(seed_, step_, counter_++, 1))); }
  double normal() { return normal_from_key(random_key(seed_, step_, counter_++, 2)); }
  // Gamma(shape, 1) by Marsaglia and Tsang's method (ACM TOMS 26, 363 (2000)); shape > 0.
  double gamma(double shape) {
    if (shape < 1.0) return gamma(shape + 1.0) * std::pow(uniform(), 1.0 / shape);
    const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x, v;
      do {
        x = normal();
        v = 1.0 + c * x;
      } while (v <= 0.0);
      v = v * v * v;
      const double u = uniform();
      if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
      if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
    }
  }
  // Sum of k squared standard normals (chi-squared with k degrees of freedom), k >= 0.
  double chi_squared(double k) { return k > 0 ? 2.0 * gamma(0.5 * k) : 0.0; }

 private:
  std::uint64_t seed_, step_, counter_ = 0;
};

// The velocity scale factor of one Bussi step (see above); K > 0, K0 >= 0, Nf >= 1, h >= 0.
inline double bussi_scale(double K, double K0, double Nf, double h, double tau, CounterRng& rng) {
  const double c = std::exp(-h / tau);
  const double r1 = rng.normal();
  const double s = rng.chi_squared(Nf - 1.0);
  const double knew = c * K + (1.0 - c) * K0 * (r1 * r1 + s) / Nf +
                      2.0 * r1 * std::sqrt(c * (1.0 - c) * K * K0 / Nf);
  double alpha = std::sqrt(std::fmax(knew, 0.0) / K);
  if ((1.0 - c) * K0 > 0 && r1 + std::sqrt(c * Nf * K / ((1.0 - c) * K0)) < 0) alpha = -alpha;
  return alpha;
}

}  // namespace pardyn
