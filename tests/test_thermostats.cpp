// SPDX-License-Identifier: BSD-3-Clause
// Thermostats (berendsen, langevin, velocity_rescale) in whole runs of an ideal gas (no potential:
// the kinetic energy changes only through the thermostat, so what it does is seen undisturbed):
//  - Berendsen relaxes T exactly as T0 + (T_i - T0)(1 - h/tau)^n and follows a ramp;
//  - Bussi and Langevin drive T to T0 and sample the canonical kinetic energy: mean dof T0/2 and
//    variance dof T0^2/2, within the standard errors of block averages of the run itself;
//  - Langevin and Bussi give the same trajectory on the CPU and CUDA backends for the same seed.
// Every run test runs once per backend (Backends/ThermostatRun.*/cpu, /cuda).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "pardyn/app/config.hpp"
#include "pardyn/cuda.hpp"
#include "pardyn/app/simulation.hpp"
#include "pardyn/thermostat.hpp"
#include "support.hpp"

using namespace pardyn;

namespace {

// -------------------------------------------------------------------------------------------------
// What the probe observer records at every observation.
struct Sample {
  std::uint64_t step = 0;
  double time = 0, temperature = 0, kinetic = 0, dof = 0;
};

// An ideal gas of 216 unit masses on a simple cubic lattice in a periodic box of side 6 (3D), with
// Maxwell-Boltzmann velocities at T_i (zero total momentum), advanced by leapfrog.
struct GasRun {
  double T_initial = 2.0;
  std::string modifier;  // the [[modifier]] lines
  double dt = 0.01;
  std::uint64_t steps = 100;
  std::uint64_t probe_interval = 1;
  std::uint64_t seed = 7;
};
constexpr int kGasN = 216;

struct GasOutcome {
  std::vector<Sample> samples;
  HostParticles final_state{3};
};

GasOutcome run_gas(const std::string& name, const GasRun& g, const std::string& backend) {
  const std::string dir = test::scratch_dir("thermo-" + name + "-" + backend);
  char head[512];
  std::snprintf(head, sizeof head,
                "[simulation]\ndimension = 3\nsteps = %llu\nseed = %llu\nbackend = \"%s\"\n"
                "[box]\nlo = [0, 0, 0]\nhi = [6, 6, 6]\nboundary = [\"periodic\"]\n"
                "[[particles]]\ngenerator = \"lattice\"\nkind = \"sc\"\nspacing = 1.0\n"
                "temperature = %.17g\n"
                "[integrator]\ntype = \"leapfrog\"\ndt = %.17g\n"
                "[[output]]\ntype = \"probe\"\ninterval = %llu\n",
                static_cast<unsigned long long>(g.steps), static_cast<unsigned long long>(g.seed),
                backend.c_str(), g.T_initial, g.dt,
                static_cast<unsigned long long>(g.probe_interval));
  std::ofstream(dir + "/scenario.toml") << head << "[[modifier]]\n" << g.modifier << "\n";
  Scenario sc = load_scenario(dir + "/scenario.toml", {}, test::probe_registry());
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  GasOutcome out;
  test::ProbeScope probe([&](const ObserveContext& ctx) {
    out.samples.push_back(
        {ctx.step, ctx.time, ctx.thermo->temperature, ctx.thermo->r.kinetic, ctx.thermo->dof});
  });
  Simulation sim(sc, test::probe_registry(), opt);
  sim.run();
  sim.store().download(out.final_state);
  return out;
}

// Mean and variance of a series with standard errors from non-overlapping block averages (the
// blocks are long compared with the correlation time, so their means are independent).
struct BlockStats {
  double mean = 0, var = 0, se_mean = 0, se_var = 0;
};
BlockStats block_stats(const std::vector<double>& x, std::size_t blocks) {
  BlockStats s;
  const std::size_t per = x.size() / blocks, n = per * blocks;
  for (std::size_t i = 0; i < n; ++i) s.mean += x[i];
  s.mean /= double(n);
  for (std::size_t i = 0; i < n; ++i) s.var += (x[i] - s.mean) * (x[i] - s.mean);
  s.var /= double(n - 1);
  std::vector<double> bm(blocks, 0.0), bv(blocks, 0.0);
  for (std::size_t b = 0; b < blocks; ++b) {
    for (std::size_t i = b * per; i < (b + 1) * per; ++i) bm[b] += x[i];
    bm[b] /= double(per);
    for (std::size_t i = b * per; i < (b + 1) * per; ++i) bv[b] += (x[i] - bm[b]) * (x[i] - bm[b]);
    bv[b] /= double(per - 1);
  }
  auto se = [&](const std::vector<double>& v) {
    double m = 0, q = 0;
    for (double a : v) m += a;
    m /= double(blocks);
    for (double a : v) q += (a - m) * (a - m);
    return std::sqrt(q / double(blocks - 1) / double(blocks));
  };
  s.se_mean = se(bm);
  s.se_var = se(bv);
  return s;
}

// Runs each test once on the CPU and once on the GPU (backends.hpp); runs use test::backend().
class ThermostatRun : public test::BackendRun {};

}  // namespace

PARDYN_INSTANTIATE_BACKENDS(ThermostatRun);

// Berendsen on an ideal gas: T_{n+1} = T_n lambda^2 = T_n + h/tau (T0 - T_n) exactly, so
// T_n = T0 + (T_i - T0)(1 - h/tau)^n; and, the scaling being deterministic, the kinetic energy does
// not fluctuate (the ensemble is not canonical).
TEST_P(ThermostatRun, BerendsenRelaxesExponentiallyToTheTarget) {
  GasRun g;
  g.modifier = "type = \"berendsen\"\ntemperature = 0.5\ntau = 0.1\n";
  g.steps = 200;
  const GasOutcome o = run_gas("berendsen", g, test::backend());
  ASSERT_EQ(o.samples.size(), 201u);
  EXPECT_NEAR(o.samples[0].temperature, 2.0, 1e-12);
  EXPECT_EQ(o.samples[0].dof, 3.0 * (kGasN - 1));  // momentum is conserved
  for (const Sample& s : o.samples) {
    const double expected = 0.5 + 1.5 * std::pow(1.0 - 0.01 / 0.1, double(s.step));
    ASSERT_NEAR(s.temperature, expected, 1e-10 * expected) << "step " << s.step;
  }
}

// interval = 5: the thermostat acts every 5th step over the 5 steps since it last acted (h = 5 dt), so
// T stays put in between and T_{5k} = T0 + (T_i - T0)(1 - 5 dt/tau)^k.
TEST_P(ThermostatRun, BerendsenWithAnIntervalActsOverTheElapsedTime) {
  GasRun g;
  g.modifier = "type = \"berendsen\"\ntemperature = 0.5\ntau = 0.2\ninterval = 5\n";
  g.steps = 50;
  const GasOutcome o = run_gas("interval", g, test::backend());
  ASSERT_EQ(o.samples.size(), 51u);
  for (const Sample& s : o.samples) {
    const double expected = 0.5 + 1.5 * std::pow(1.0 - 0.05 / 0.2, double(s.step / 5));
    ASSERT_NEAR(s.temperature, expected, 1e-10 * expected) << "step " << s.step;
  }
}

// A ramp with tau = dt: lambda^2 = T0 / T, so after every step T is exactly the target at the end of
// that step: 1.0 until t = 0.2, linear to 0.25 at t = 0.6, 0.25 after.
TEST_P(ThermostatRun, BerendsenFollowsALinearRamp) {
  GasRun g;
  g.T_initial = 1.0;
  g.modifier =
      "type = \"berendsen\"\ntemperature = 1.0\ntemperature_end = 0.25\nramp_start = 0.2\n"
      "ramp_end = 0.6\ntau = 0.01\n";
  g.steps = 100;
  const GasOutcome o = run_gas("ramp", g, test::backend());
  ASSERT_EQ(o.samples.size(), 101u);
  for (const Sample& s : o.samples) {
    const double t = s.time;
    const double expected = t <= 0.2 ? 1.0 : t >= 0.6 ? 0.25 : 1.0 - 0.75 * (t - 0.2) / 0.4;
    ASSERT_NEAR(s.temperature, expected, 1e-10) << "t = " << t;
  }
  EXPECT_NEAR(o.samples[40].temperature, 0.625, 1e-10);  // half-way, t = 0.4
}

// Bussi and Langevin on an ideal gas started hot (T_i = 2): after 10 tau of equilibration, samples
// 3 tau apart (correlations below e^-3) of the kinetic energy have the canonical mean dof T0/2 and
// variance dof T0^2/2 (K is a sum of dof squared Gaussian velocity components) within 4 standard
// errors of 30 block averages.
TEST_P(ThermostatRun, BussiAndLangevinSampleTheCanonicalKineticEnergy) {
  const double T0 = 0.7;
  struct Case {
    const char* type;
    double dof;
  };
  // Langevin's noise breaks momentum conservation: dof = dim N; Bussi keeps it: dim (N - 1).
  for (const Case c :
       {Case{"velocity_rescale", 3.0 * (kGasN - 1)}, Case{"langevin", 3.0 * kGasN}}) {
    GasRun g;
    g.modifier = std::string("type = \"") + c.type + "\"\ntemperature = 0.7\ntau = 0.1\n";
    const std::uint64_t equilibrate = 100, every = 30, samples = 1500;
    g.steps = equilibrate + every * samples;
    g.probe_interval = every;
    const GasOutcome o = run_gas(c.type, g, test::backend());
    std::vector<double> K;
    for (const Sample& s : o.samples) {
      ASSERT_EQ(s.dof, c.dof) << c.type;
      // Every `every` steps after equilibration (the run's last step is an extra observation).
      if (s.step > equilibrate && s.step % every == 0) K.push_back(s.kinetic);
    }
    ASSERT_EQ(K.size(), samples);
    const BlockStats st = block_stats(K, 30);
    const double mean = 0.5 * c.dof * T0, var = 0.5 * c.dof * T0 * T0;
    std::printf(
        "  %-16s <K> = %.3f +- %.3f (canonical %.3f), var K = %.2f +- %.2f (canonical "
        "%.2f)\n",
        c.type, st.mean, st.se_mean, mean, st.var, st.se_var, var);
    // The test can tell a canonical variance from a wrong one: its error is a few per cent.
    ASSERT_LT(st.se_var, 0.1 * var) << c.type;
    EXPECT_NEAR(st.mean, mean, 4 * st.se_mean) << c.type;
    EXPECT_NEAR(st.var, var, 4 * st.se_var) << c.type;
  }
}

// The relaxation of the mean: for Bussi E[K'] = c K + (1 - c) K0 with c = exp(-h/tau), so <T(t)> =
// T0 + (T_i - T0) exp(-t/tau); for Langevin each v^2 relaxes at twice the rate: exp(-2t/tau). Checked
// at t = tau / 2 on the average of 16 independent runs (seeds), within 5 standard errors.
TEST_P(ThermostatRun, TheMeanTemperatureRelaxesAtTheDocumentedRate) {
  const double T0 = 0.5, tau = 0.1;
  struct Case {
    const char* type;
    double rate;  // in units of 1/tau
  };
  for (const Case c : {Case{"velocity_rescale", 1.0}, Case{"langevin", 2.0}}) {
    std::vector<double> T;
    double Ti = 0;  // thermo's T at step 0: 2 (dof - dim) / dof when the noise makes dof = dim N
    for (std::uint64_t seed = 1; seed <= 16; ++seed) {
      GasRun g;
      g.T_initial = 2.0;
      g.seed = seed;
      g.modifier = std::string("type = \"") + c.type + "\"\ntemperature = 0.5\ntau = 0.1\n";
      g.steps = 5;  // t = 0.05 = tau / 2
      g.probe_interval = 5;
      const GasOutcome o =
          run_gas(std::string(c.type) + "-relax-" + std::to_string(seed), g, test::backend());
      ASSERT_EQ(o.samples.back().step, 5u);
      Ti = o.samples.front().temperature;
      T.push_back(o.samples.back().temperature);
    }
    double m = 0, q = 0;
    for (double t : T) m += t;
    m /= double(T.size());
    for (double t : T) q += (t - m) * (t - m);
    const double se = std::sqrt(q / double(T.size() - 1) / double(T.size()));
    const double expected = T0 + (Ti - T0) * std::exp(-c.rate * 0.05 / tau);
    std::printf("  %-16s <T(tau/2)> = %.4f +- %.4f, expected %.4f\n", c.type, m, se, expected);
    EXPECT_NEAR(m, expected, 5 * se + 1e-12) << c.type;
    // ...and not the other thermostat's rate.
    const double other = T0 + (Ti - T0) * std::exp(-(3.0 - c.rate) * 0.05 / tau);
    EXPECT_GT(std::fabs(m - other), 5 * se) << c.type;
  }
}

// The same seed gives the same trajectory on the CPU and on the GPU: Langevin's noise is
// counter-based per (seed, step, particle, axis), Bussi's per (seed, step).
TEST(Thermostats, LangevinAndBussiAreTheSameOnCpuAndCuda) {
  PARDYN_SKIP_WITHOUT_GPU();
  for (const char* type : {"langevin", "velocity_rescale"}) {
    GasRun g;
    g.modifier = std::string("type = \"") + type + "\"\ntemperature = 0.5\ntau = 0.05\n";
    g.steps = 300;
    g.probe_interval = 300;
    const GasOutcome cpu = run_gas(std::string(type) + "-same", g, "cpu");
    const GasOutcome gpu = run_gas(std::string(type) + "-same", g, "cuda");
    ASSERT_EQ(cpu.final_state.size(), gpu.final_state.size());
    double worst = 0;
    for (std::size_t i = 0; i < cpu.final_state.size(); ++i) {
      ASSERT_EQ(cpu.final_state.id[i], gpu.final_state.id[i]);
      for (int d = 0; d < 3; ++d) {
        worst = std::fmax(worst, std::fabs(cpu.final_state.v[d][i] - gpu.final_state.v[d][i]));
        worst = std::fmax(worst, std::fabs(cpu.final_state.x[d][i] - gpu.final_state.x[d][i]));
      }
    }
    std::printf("  %-16s largest CPU-GPU difference after 300 steps: %.3g\n", type, worst);
    EXPECT_LT(worst, 1e-12) << type;
  }
}

// The target ramp itself, as documented in thermostat.hpp.
TEST(Thermostats, TemperatureRampIsLinearBetweenItsTimes) {
  TemperatureRamp r{2.0, 0.5, 1.0, 3.0};
  EXPECT_EQ(r.at(0.0), 2.0);
  EXPECT_EQ(r.at(1.0), 2.0);
  EXPECT_DOUBLE_EQ(r.at(2.0), 1.25);
  EXPECT_DOUBLE_EQ(r.at(2.5), 0.875);
  EXPECT_EQ(r.at(3.0), 0.5);
  EXPECT_EQ(r.at(10.0), 0.5);
  TemperatureRamp jump{2.0, 0.5, 1.0, 1.0};  // ramp_end == ramp_start: a jump
  EXPECT_EQ(jump.at(0.999), 2.0);
  EXPECT_EQ(jump.at(1.0), 0.5);
}

// The gamma/chi-squared draws of the Bussi thermostat: mean k and variance 2k, for k below 2 (the
// shape < 1 branch of Marsaglia-Tsang) and above.
TEST(Thermostats, CounterRngChiSquaredHasTheRightMoments) {
  for (double k : {1.0, 3.0, 644.0}) {
    const int n = 200000;
    double m = 0, q = 0;
    std::vector<double> x(n);
    for (int i = 0; i < n; ++i) {
      CounterRng rng(99, std::uint64_t(i));
      x[i] = rng.chi_squared(k);
      m += x[i];
    }
    m /= n;
    for (double a : x) q += (a - m) * (a - m);
    q /= n - 1;
    // Standard errors: sqrt(2k/n) for the mean; for the variance, sqrt((mu4 - var^2)/n) with
    // mu4 = 12 k (k + 4) for chi-squared(k).
    const double se_m = std::sqrt(2 * k / n), se_v = std::sqrt((12 * k * (k + 4) - 4 * k * k) / n);
    EXPECT_NEAR(m, k, 5 * se_m) << "k = " << k;
    EXPECT_NEAR(q, 2 * k, 5 * se_v) << "k = " << k;
  }
}

// Bad ramps are refused with a message that names the key and says what to do.
TEST(Thermostats, BadRampsAreRefusedWithAClearMessage) {
  RunInfo run;
  for (const char* type : {"berendsen", "langevin", "velocity_rescale"}) {
    try {
      test::registry().make_modifier(
          type,
          test::params_for(PluginKind::Modifier, type, "temperature = 1.0\ntemperature_end = 0.5"),
          run);
      ADD_FAILURE() << type << ": a ramp without ramp_end was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("ramp_end"), std::string::npos) << e.what();
    }
    try {
      test::registry().make_modifier(
          type,
          test::params_for(
              PluginKind::Modifier, type,
              "temperature = 1.0\ntemperature_end = 0.5\nramp_start = 2\nramp_end = 1"),
          run);
      ADD_FAILURE() << type << ": a ramp ending before it starts was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("ramp_start"), std::string::npos) << e.what();
    }
    EXPECT_THROW(test::params_for(PluginKind::Modifier, type, "tau = 1.0"), Error)
        << type << ": temperature is required";
  }
}
