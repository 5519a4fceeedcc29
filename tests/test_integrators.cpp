// SPDX-License-Identifier: BSD-3-Clause
// Integrators in whole runs: measured order of convergence on an eccentric Kepler orbit, closure of
// the figure-eight three-body choreography, bounded energy error of the symplectic methods, and the
// step control of dopri5. Every test runs once per backend (Backends/IntegratorRun.*/cpu, /cuda).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "pardyn/cuda.hpp"
#include "pardyn/app/simulation.hpp"
#include "support.hpp"

using namespace pardyn;

namespace {

// -------------------------------------------------------------------------------------------------
// What the probe observer (tests/support.hpp) records at every observation: time, the last step's
// size, the energy, and optionally the particles, which the built-in observers only write to files.
struct Sample {
  std::uint64_t step = 0;
  double time = 0, dt = 0, energy = 0;
  std::uint64_t rejected = 0;
  std::vector<double> x, v, a;  // particle i, axis d at [i * dim + d]
};

// -------------------------------------------------------------------------------------------------
// Scenarios: 2D point masses read from a CSV file, gravity with G = 1 and no softening.
struct Body {
  double x, y, vx, vy, m;
};

std::string fmt17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

struct RunSpec {
  std::string integrator = "leapfrog";
  std::string keys;  // more [integrator] lines, e.g. "rtol = 1e-8\n"
  double dt = 1e-3;
  std::uint64_t steps = 1000;  // with end_time: the most steps
  double end_time = 0;
  std::uint64_t probe_interval = 0;  // 0: only the first and the last step
  bool probe_particles = false;
  std::vector<std::string> sets;  // more --set overrides, e.g. "simulation.precision=\"float\""
};

struct Outcome {
  HostParticles final_state{2};
  double time = 0;
  std::uint64_t steps = 0, force_evaluations = 0;
  std::vector<Sample> samples;
};

Outcome simulate(const std::string& name, const std::vector<Body>& bodies, const RunSpec& run) {
  const std::string dir = test::scratch_dir("integ-" + name);
  {
    std::ofstream csv(dir + "/bodies.csv");
    csv << "x,y,vx,vy,mass\n";
    for (const Body& b : bodies)
      csv << fmt17(b.x) << ',' << fmt17(b.y) << ',' << fmt17(b.vx) << ',' << fmt17(b.vy) << ','
          << fmt17(b.m) << '\n';
  }
  std::string toml = "[simulation]\ndimension = 2\nsteps = " + std::to_string(run.steps) +
                     "\nend_time = " + fmt17(run.end_time) +
                     "\n[[particles]]\ngenerator = \"file\"\npath = \"" + dir +
                     "/bodies.csv\"\n[[potential]]\ntype = \"gravity\"\neps = 0\n"
                     "[integrator]\ntype = \"" +
                     run.integrator + "\"\ndt = " + fmt17(run.dt) + "\n" + run.keys;
  // Always an explicit output: without one the framework adds VTK frames and a thermo log, which
  // would make these runs of up to 10^5 steps write for longer than they compute.
  const std::uint64_t interval = run.probe_interval ? run.probe_interval : run.steps;
  toml += "[[output]]\ntype = \"probe\"\ninterval = " + std::to_string(interval) + "\n";
  std::ofstream(dir + "/scenario.toml") << toml;
  std::vector<std::string> sets = run.sets;
  sets.push_back("simulation.backend=\"" + test::backend() + "\"");
  Scenario sc = load_scenario(dir + "/scenario.toml", sets, test::probe_registry());
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  Outcome out;
  const bool particles = run.probe_particles;
  test::ProbeScope probe(
      [&](const ObserveContext& ctx) {
        Sample s;
        s.step = ctx.step;
        s.time = ctx.time;
        s.dt = ctx.thermo->dt;
        s.energy = ctx.thermo->total;
        s.rejected = ctx.thermo->rejected_steps;
        if (particles && ctx.particles) {
          const HostParticles& p = *ctx.particles;
          for (std::size_t i = 0; i < p.size(); ++i)
            for (int d = 0; d < p.dim; ++d) {
              s.x.push_back(p.x[d][i]);
              s.v.push_back(p.v[d][i]);
              s.a.push_back(p.a[d][i]);
            }
        }
        out.samples.push_back(std::move(s));
      },
      particles ? ParticleStore::kPosition | ParticleStore::kVelocity | ParticleStore::kAcceleration
                : 0u);
  Simulation sim(sc, test::probe_registry(), opt);
  sim.run();
  out.time = sim.time();
  out.steps = sim.steps_done();
  out.force_evaluations = sim.force_evaluations();
  sim.store().download(out.final_state);
  return out;
}

// -------------------------------------------------------------------------------------------------
// The Kepler problem: two bodies of mass 1/2 (G M = 1) on an orbit of semi-major axis 1, period
// 2 pi, centre of mass at rest at the origin. The analytic solution from Kepler's equation gives
// the exact state at any time.
constexpr double kPi = 3.14159265358979323846;
constexpr double kKeplerPeriod = 2 * kPi;
// Starting at a generic eccentric anomaly, not at an apsis: there symmetry cancels the leading
// error of some methods (symplectic Euler would look second order).
constexpr double kE0 = 2.0;

struct Relative {
  double x, y, vx, vy;
};

// Relative position and velocity (body 2 minus body 1) at time t.
Relative kepler(double e, double t) {
  const double M = kE0 - e * std::sin(kE0) + t;  // mean motion 1
  double E = M;
  for (int i = 0; i < 50; ++i) {
    const double dE = (E - e * std::sin(E) - M) / (1 - e * std::cos(E));
    E -= dE;
    if (std::fabs(dE) < 1e-16) break;
  }
  const double q = std::sqrt(1 - e * e), den = 1 - e * std::cos(E);
  return {std::cos(E) - e, q * std::sin(E), -std::sin(E) / den, q * std::cos(E) / den};
}

std::vector<Body> kepler_bodies(double e) {
  const Relative r = kepler(e, 0);
  return {{-0.5 * r.x, -0.5 * r.y, -0.5 * r.vx, -0.5 * r.vy, 0.5},
          {0.5 * r.x, 0.5 * r.y, 0.5 * r.vx, 0.5 * r.vy, 0.5}};
}

// Energy of the relative orbit with reduced mass 1/4: -G m1 m2 / (2 a) = -1/8.
constexpr double kKeplerEnergy = -0.125;

// Largest distance of either body from where the analytic solution puts it at time t.
double kepler_error(const HostParticles& p, double e, double t) {
  const Relative r = kepler(e, t);
  const double d1 = std::hypot(p.x[0][0] + 0.5 * r.x, p.x[1][0] + 0.5 * r.y);
  const double d2 = std::hypot(p.x[0][1] - 0.5 * r.x, p.x[1][1] - 0.5 * r.y);
  return std::max(d1, d2);
}

// Position error after exactly one period (steps_per_period fixed steps) with eccentricity 0.5.
double one_orbit_error(const std::string& integrator, int steps_per_period) {
  RunSpec run;
  run.integrator = integrator;
  run.dt = kKeplerPeriod / steps_per_period;
  run.steps = std::uint64_t(steps_per_period);
  Outcome o =
      simulate(integrator + "-" + std::to_string(steps_per_period), kepler_bodies(0.5), run);
  return kepler_error(o.final_state, 0.5, o.time);
}

// Least-squares slope of log(error) against log(dt).
double fitted_order(const std::vector<int>& steps, const std::vector<double>& err) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = double(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const double x = std::log(kKeplerPeriod / steps[i]), y = std::log(err[i]);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

// Quintic Hermite interpolation of a position between two samples, from x, v and a at both ends:
// sixth-order accurate, so it does not spoil the comparison of a fifth-order method's end state.
double hermite5(double t0, double t1, double x0, double v0, double a0, double x1, double v1,
                double a1, double t) {
  const double h = t1 - t0, s = (t - t0) / h, s2 = s * s, s3 = s2 * s, s4 = s3 * s, s5 = s4 * s;
  const double h0 = 1 - 10 * s3 + 15 * s4 - 6 * s5, h1 = s - 6 * s3 + 8 * s4 - 3 * s5;
  const double h2 = 0.5 * (s2 - 3 * s3 + 3 * s4 - s5), h3 = 0.5 * (s3 - 2 * s4 + s5);
  const double h4 = -4 * s3 + 7 * s4 - 3 * s5, h5 = 10 * s3 - 15 * s4 + 6 * s5;
  return h0 * x0 + h * h1 * v0 + h * h * h2 * a0 + h * h * h3 * a1 + h * h4 * v1 + h5 * x1;
}

// Runs each test once on the CPU and once on the GPU (backends.hpp); runs use test::backend().
class IntegratorRun : public test::BackendRun {};

}  // namespace

PARDYN_INSTANTIATE_BACKENDS(IntegratorRun);

// 1. The slope of log(position error after one period) against log(dt) is the method's order.
// The step counts are where each method is in its asymptotic regime on this orbit (e = 0.5) and its
// error stays well above round-off (about 1e-12 here).
TEST_P(IntegratorRun, MeasuredOrderOnAKeplerOrbit) {
  struct Case {
    const char* name;
    double order;
    std::vector<int> steps;  // per period
  };
  const Case cases[] = {
      {"euler", 1, {4000, 8000, 16000}},  {"symplectic_euler", 1, {1000, 2000, 4000}},
      {"leapfrog", 2, {500, 1000, 2000}}, {"velocity_verlet", 2, {500, 1000, 2000}},
      {"rk4", 4, {250, 500, 1000}},       {"yoshida4", 4, {500, 1000, 2000}},
      {"ab5", 5, {1000, 2000, 4000}},
  };
  for (const Case& c : cases) {
    std::vector<double> err;
    for (int n : c.steps) err.push_back(one_orbit_error(c.name, n));
    const double slope = fitted_order(c.steps, err);
    std::printf("  %-16s order %.2f (expected %g); errors", c.name, slope, c.order);
    for (double e : err) std::printf(" %.3e", e);
    std::printf(" at %d..%d steps per period\n", c.steps.front(), c.steps.back());
    EXPECT_NEAR(slope, c.order, 0.3) << c.name;
  }
}

// dopri5 controls its step by tolerance: the error after one period falls as rtol falls, and stays
// within a small multiple of the tolerance (the tolerance bounds the error per step; over the ~100
// steps of an orbit the errors add up).
TEST_P(IntegratorRun, Dopri5ErrorFollowsItsTolerance) {
  double previous = 1;
  for (double rtol : {1e-6, 1e-8, 1e-10}) {
    RunSpec run;
    run.integrator = "dopri5";
    run.keys = "rtol = " + fmt17(rtol) + "\natol = " + fmt17(rtol) + "\n";
    run.dt = 1e-3;
    run.steps = 1000000;
    run.end_time = kKeplerPeriod;
    Outcome o = simulate("dopri5-" + fmt17(rtol), kepler_bodies(0.5), run);
    // The last step may end past the period: compare with the analytic state at the final time.
    const double err = kepler_error(o.final_state, 0.5, o.time);
    std::printf(
        "  dopri5 rtol = atol = %.0e: error %.3e after one period, %llu steps, %llu force "
        "evaluations, ended at t - T = %.2e\n",
        rtol, err, (unsigned long long)o.steps, (unsigned long long)o.force_evaluations,
        o.time - kKeplerPeriod);
    EXPECT_GE(o.time, kKeplerPeriod * (1 - 1e-12));
    EXPECT_LT(err, 100 * rtol) << "rtol " << rtol;
    EXPECT_LT(err, previous / 10) << "rtol " << rtol;
    previous = err;
  }
}

// 2. The figure-eight choreography of three equal masses (Chenciner & Montgomery 2000; initial
// conditions from Simo) comes back to its start after one period.
TEST_P(IntegratorRun, FigureEightClosesAfterOnePeriod) {
  const double period = 6.32591398;
  const double vx = -0.93240737, vy = -0.86473146;
  const std::vector<Body> bodies = {{0.97000436, -0.24308753, -vx / 2, -vy / 2, 1},
                                    {-0.97000436, 0.24308753, -vx / 2, -vy / 2, 1},
                                    {0, 0, vx, vy, 1}};
  // Largest distance of a body from its start; x holds (x, y) of each body in turn.
  auto closure = [&](const std::vector<double>& x) {
    double worst = 0;
    for (std::size_t i = 0; i < bodies.size(); ++i)
      worst = std::max(worst, std::hypot(x[2 * i] - bodies[i].x, x[2 * i + 1] - bodies[i].y));
    return worst;
  };
  {
    RunSpec run;
    run.integrator = "yoshida4";
    run.steps = 4000;
    run.dt = period / double(run.steps);
    Outcome o = simulate("figure-eight-yoshida4", bodies, run);
    std::vector<double> x;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      x.push_back(o.final_state.x[0][i]);
      x.push_back(o.final_state.x[1][i]);
    }
    const double err = closure(x);
    std::printf("  yoshida4, 4000 steps: figure eight closes to %.2e\n", err);
    EXPECT_LT(err, 1e-6);
  }
  {
    // dopri5's last step ends past the period: the state at the period is interpolated between the
    // last two steps (quintic Hermite, far more accurate than the tolerance).
    RunSpec run;
    run.integrator = "dopri5";
    run.keys = "rtol = 1e-11\natol = 1e-11\n";
    run.dt = 1e-3;
    run.steps = 1000000;
    run.end_time = period;
    run.probe_interval = 1;
    run.probe_particles = true;
    Outcome o = simulate("figure-eight-dopri5", bodies, run);
    ASSERT_GE(o.samples.size(), 2u);
    const Sample& s0 = o.samples[o.samples.size() - 2];
    const Sample& s1 = o.samples.back();
    ASSERT_LE(s0.time, period);
    ASSERT_GE(s1.time, period * (1 - 1e-12));
    std::vector<double> x(s1.x.size());
    for (std::size_t j = 0; j < x.size(); ++j)
      x[j] =
          hermite5(s0.time, s1.time, s0.x[j], s0.v[j], s0.a[j], s1.x[j], s1.v[j], s1.a[j], period);
    const double err = closure(x);
    std::printf("  dopri5 rtol 1e-11: figure eight closes to %.2e in %llu steps (%llu rejected)\n",
                err, (unsigned long long)o.steps, (unsigned long long)s1.rejected);
    EXPECT_LT(err, 1e-6);
  }
}

// 3. Symplectic methods keep the energy error bounded over 10^5 steps (100 orbits): its largest
// excursion over the last tenth of the run is no larger than over the first tenth. Explicit Euler's
// grows (10^5 steps of 10 orbits, where it stays bound).
TEST_P(IntegratorRun, SymplecticMethodsKeepTheEnergyErrorBounded) {
  auto growth = [](const std::string& name, int steps_per_period) {
    RunSpec run;
    run.integrator = name;
    run.steps = 100000;
    run.dt = kKeplerPeriod / steps_per_period;
    run.probe_interval = 10;
    Outcome o = simulate("energy-" + name, kepler_bodies(0.5), run);
    double first = 0, last = 0;
    const double e0 = o.samples.front().energy;
    for (const Sample& s : o.samples) {
      const double de = std::fabs(s.energy - e0);
      if (s.step <= run.steps / 10) first = std::max(first, de);
      if (s.step >= run.steps - run.steps / 10) last = std::max(last, de);
    }
    EXPECT_NEAR(e0, kKeplerEnergy, 1e-14);
    std::printf("  %-16s max |dE| first 10%% %.3e, last 10%% %.3e: ratio %.3f\n", name.c_str(),
                first, last, last / first);
    return last / first;
  };
  for (const char* name : {"leapfrog", "yoshida4", "symplectic_euler"})
    EXPECT_LT(growth(name, 1000), 2.0) << name;
  EXPECT_GT(growth("euler", 10000), 5.0);
}

// 4. dopri5 shortens its step where the motion is fast (pericentre of an e = 0.9 orbit) and
// lengthens it where it is slow (apocentre), and the energy error stays within its tolerance.
TEST_P(IntegratorRun, Dopri5ShortensItsStepAtPericentre) {
  const double e = 0.9, rtol = 1e-9;
  RunSpec run;
  run.integrator = "dopri5";
  run.keys = "rtol = " + fmt17(rtol) + "\natol = " + fmt17(rtol) + "\n";
  run.dt = 1e-3;
  run.steps = 1000000;
  run.end_time = 2 * kKeplerPeriod;
  run.probe_interval = 1;
  run.probe_particles = true;
  Outcome o = simulate("dopri5-pericentre", kepler_bodies(e), run);
  double dt_peri = 0, dt_apo = 1e300, worst_de = 0;
  const double e0 = o.samples.front().energy;
  for (std::size_t i = 1; i < o.samples.size(); ++i) {
    const Sample& s = o.samples[i];
    // The step that ended here began one step earlier: classify by where it began and ended.
    const Sample& p = o.samples[i - 1];
    const double r0 = std::hypot(p.x[2] - p.x[0], p.x[3] - p.x[1]);
    const double r1 = std::hypot(s.x[2] - s.x[0], s.x[3] - s.x[1]);
    if (std::max(r0, r1) < 2 * (1 - e)) dt_peri = std::max(dt_peri, s.dt);
    if (std::min(r0, r1) > 0.9 * (1 + e)) dt_apo = std::min(dt_apo, s.dt);
    worst_de = std::max(worst_de, std::fabs(s.energy - e0));
  }
  const double final_err = kepler_error(o.final_state, e, o.time);
  std::printf(
      "  dopri5 e = %.1f, rtol %.0e: longest step near pericentre %.3e, shortest near "
      "apocentre %.3e (ratio %.1f); %llu steps, %llu rejected; max |dE/E| %.2e; "
      "position error after two orbits %.2e\n",
      e, rtol, dt_peri, dt_apo, dt_apo / dt_peri, (unsigned long long)o.steps,
      (unsigned long long)o.samples.back().rejected, worst_de / std::fabs(e0), final_err);
  ASSERT_GT(dt_peri, 0) << "no step near pericentre was recorded";
  ASSERT_LT(dt_apo, 1e300) << "no step near apocentre was recorded";
  EXPECT_GT(dt_apo, 10 * dt_peri);
  EXPECT_LT(worst_de / std::fabs(e0), 100 * rtol);
  EXPECT_GT(o.samples.back().time, 2 * kKeplerPeriod * (1 - 1e-12));
}

// The cost in force evaluations per step that each plugin documents, and the alias.
TEST_P(IntegratorRun, ForceEvaluationsPerStepAsDocumented) {
  struct Case {
    const char* name;
    std::uint64_t per_step;
  };
  const std::uint64_t steps = 20;
  for (const Case& c : {Case{"euler", 1}, Case{"symplectic_euler", 1}, Case{"leapfrog", 1},
                        Case{"velocity_verlet", 1}, Case{"rk4", 4}, Case{"yoshida4", 3}}) {
    RunSpec run;
    run.integrator = c.name;
    run.steps = steps;
    Outcome o = simulate(std::string("evals-") + c.name, kepler_bodies(0.5), run);
    EXPECT_EQ(o.force_evaluations, 1 + c.per_step * steps) << c.name;  // 1: the initial forces
  }
  {
    RunSpec run;
    run.integrator = "ab5";
    run.steps = steps;
    Outcome o = simulate("evals-ab5", kepler_bodies(0.5), run);
    EXPECT_EQ(o.force_evaluations, 1 + 4 * 4 + (steps - 4)) << "ab5: 4 RK4 starter steps, then 1";
  }
  {
    RunSpec run;
    run.integrator = "dopri5";
    run.keys = "rtol = 1e-12\natol = 1e-12\n";
    run.dt = 1.0;  // far too long: the first steps are rejected
    run.steps = steps;
    run.probe_interval = 1;
    Outcome o = simulate("evals-dopri5", kepler_bodies(0.5), run);
    const std::uint64_t rejected = o.samples.back().rejected;
    EXPECT_GT(rejected, 0u);
    EXPECT_EQ(o.force_evaluations, 1 + 6 * (steps + rejected)) << "dopri5: FSAL, 6 per try";
  }
  // velocity_verlet is leapfrog under another name: the same trajectory, bit for bit.
  RunSpec run;
  run.steps = 100;
  Outcome lf = simulate("alias-leapfrog", kepler_bodies(0.5), run);
  run.integrator = "velocity_verlet";
  Outcome vv = simulate("alias-velocity-verlet", kepler_bodies(0.5), run);
  for (int d = 0; d < 2; ++d)
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(lf.final_state.x[d][i], vv.final_state.x[d][i]);
      EXPECT_EQ(lf.final_state.v[d][i], vv.final_state.v[d][i]);
    }
}

// A step driven below dt_min (a head-on collision of point masses) stops the run with an error that
// says when and what to do, instead of grinding on with ever smaller steps.
TEST_P(IntegratorRun, Dopri5StepBelowDtMinIsAnError) {
  RunSpec run;
  run.integrator = "dopri5";
  run.keys = "dt_min = 1e-9\n";
  run.steps = 1000000;
  run.end_time = 10;
  try {
    simulate("dopri5-collision", {{-0.5, 0, 0, 0, 0.5}, {0.5, 0, 0, 0, 0.5}}, run);
    FAIL() << "the collision did not stop the run";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("dt_min"), std::string::npos) << msg;
    EXPECT_NE(msg.find("at time"), std::string::npos) << msg;
    EXPECT_NE(msg.find("soften"), std::string::npos) << msg;
  }
}

// In float a relative tolerance below round-off can never be met: refused before the run starts.
TEST_P(IntegratorRun, Dopri5RefusesATolerancePrecisionCannotMeet) {
  RunSpec run;
  run.integrator = "dopri5";
  run.keys = "rtol = 1e-8\n";
  run.sets = {"simulation.precision=\"float\""};
  try {
    simulate("dopri5-float-rtol", kepler_bodies(0.5), run);
    FAIL() << "rtol = 1e-8 in float was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rtol"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("float"), std::string::npos) << e.what();
  }
  run.keys = "rtol = 1e-5\natol = 1e-5\n";
  run.steps = 50;
  Outcome o = simulate("dopri5-float", kepler_bodies(0.5), run);
  EXPECT_EQ(o.steps, 50u);
}
