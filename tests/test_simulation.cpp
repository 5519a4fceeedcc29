// SPDX-License-Identifier: BSD-3-Clause
// Whole runs on the CPU backend: orbits, conservation laws, integrator behaviour, outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "pardyn/cuda.hpp"
#include "pardyn/app/simulation.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using namespace pardyn;

namespace {

struct RunResult {
  std::unique_ptr<Simulation> sim;
  Thermo start, end;
  HostParticles final_state;
};

RunResult run_scenario(const std::string& name, const std::string& toml,
                       std::vector<std::string> sets = {}) {
  const std::string dir = test::scratch_dir("sim-" + name);
  const std::string path = dir + "/scenario.toml";
  std::ofstream(path) << toml;
  sets.push_back("simulation.backend=" + test::backend());
  Scenario sc = load_scenario(path, sets, test::registry());
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  RunResult r;
  r.sim = std::make_unique<Simulation>(sc, test::registry(), opt);
  r.start = r.sim->measure();
  r.sim->run();
  r.end = r.sim->measure();
  r.sim->store().download(r.final_state);
  return r;
}

std::string fmt17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Two equal masses on a circular orbit: separation 1, G M = 1, period 2 pi.
std::string two_body(const std::string& integrator, int steps_per_period, int periods, int dim) {
  const std::string dir = test::scratch_dir("two-body-csv-" + integrator + std::to_string(dim));
  const std::string csv = dir + "/two_body.csv";
  std::ofstream f(csv);
  if (dim == 3) f << "x,y,z,vx,vy,vz,mass\n-0.5,0,0,0,-0.5,0,0.5\n0.5,0,0,0,0.5,0,0.5\n";
  else f << "x,y,vx,vy,mass\n-0.5,0,0,-0.5,0.5\n0.5,0,0,0.5,0.5\n";
  const double dt = 2 * M_PI / steps_per_period;
  return "[simulation]\ndimension = " + std::to_string(dim) +
         "\nsteps = " + std::to_string(steps_per_period * periods) +
         "\n[[particles]]\ngenerator = \"file\"\npath = \"" + csv +
         "\"\n[[potential]]\ntype = \"gravity\"\n[integrator]\ntype = \"" + integrator +
         "\"\ndt = " + fmt17(dt) + "\n[[output]]\ntype = \"thermo\"\ninterval = 100\n";
}

// Runs each test once on the CPU and once on the GPU (backends.hpp); runs use test::backend().
class SimulationRun : public test::BackendRun {};

}  // namespace

PARDYN_INSTANTIATE_BACKENDS(SimulationRun);

TEST_P(SimulationRun, TwoBodyCircularOrbitClosesAfterOnePeriod) {
  for (int dim : {2, 3}) {
    RunResult r = run_scenario("two-body", two_body("leapfrog", 4000, 1, dim));
    // back at the start: x = -0.5, 0.5 on the x axis
    EXPECT_NEAR(r.final_state.x[0][0], -0.5, 1e-5) << dim << "D";
    EXPECT_NEAR(r.final_state.x[1][0], 0.0, 1e-5) << dim << "D";
    EXPECT_NEAR(r.final_state.x[0][1], 0.5, 1e-5) << dim << "D";
    EXPECT_NEAR(r.end.total, -0.5 * 0.5 * 1.0 / 2.0 - 0.25 + 0.25, 1.0);  // sanity: bound orbit
    EXPECT_LT(std::fabs(r.end.total - r.start.total), 1e-8 * std::fabs(r.start.total));
    EXPECT_NEAR(r.start.total, 2 * 0.5 * 0.5 * 0.25 - 0.25, 1e-14);  // K = 1/8, U = -1/4
  }
}

TEST_P(SimulationRun, LeapfrogIsSecondOrderAndEulerDrifts) {
  // Position error after one period falls 4x when dt halves (2nd order).
  auto err = [](const std::string& integ, int n) {
    RunResult r = run_scenario("order-" + integ + std::to_string(n), two_body(integ, n, 1, 2));
    return std::hypot(r.final_state.x[0][0] + 0.5, r.final_state.x[1][0]);
  };
  const double e1 = err("leapfrog", 200), e2 = err("leapfrog", 400);
  EXPECT_NEAR(std::log2(e1 / e2), 2.0, 0.3) << e1 << " " << e2;
  // Euler: energy drifts far more than leapfrog's at the same step
  RunResult eu = run_scenario("euler-drift", two_body("euler", 400, 2, 3));
  RunResult lf = run_scenario("leapfrog-drift", two_body("leapfrog", 400, 2, 3));
  const double de_eu = std::fabs(eu.end.total - eu.start.total);
  const double de_lf = std::fabs(lf.end.total - lf.start.total);
  EXPECT_GT(de_eu, 100 * de_lf) << de_eu << " vs " << de_lf;
}

TEST_P(SimulationRun, PlummerSphereConservesMomentumAndEnergy) {
  const char* toml = R"(
[simulation]
steps = 400
seed = 3
[[particles]]
generator = "plummer"
count = 512
[[potential]]
type = "gravity"
eps = 0.05
[integrator]
dt = 0.002
[[output]]
type = "thermo"
interval = 50
)";
  RunResult r = run_scenario("plummer", toml);
  const double m = r.end.r.mass;
  double p0 = 0, p1 = 0, l0 = 0, l1 = 0;
  for (int d = 0; d < 3; ++d) {
    p0 += r.start.r.momentum[d] * r.start.r.momentum[d];
    p1 += r.end.r.momentum[d] * r.end.r.momentum[d];
    l0 += r.start.r.angular_momentum[d] * r.start.r.angular_momentum[d];
    l1 += std::pow(r.end.r.angular_momentum[d] - r.start.r.angular_momentum[d], 2);
  }
  const double v_scale = std::sqrt(2 * r.start.r.kinetic / m);
  EXPECT_LT(std::sqrt(p1), 1e-12 * m * v_scale);                   // Newton's third law, exactly
  EXPECT_LT(std::sqrt(l1), 1e-10 * std::max(1.0, std::sqrt(l0)));  // central forces
  EXPECT_LT(std::fabs(r.end.relative_drift), 1e-4) << r.end.relative_drift;
  EXPECT_NEAR(2 * r.start.r.kinetic / std::fabs(r.start.r.potential), 1.0, 0.15);  // virialised
  EXPECT_EQ(r.sim->force_evaluations(), 400u + 3u);  // initial + one per step + two measures
}

TEST_P(SimulationRun, FloatAndDoubleRunsAgree) {
  const char* toml = R"(
[simulation]
steps = 50
[[particles]]
generator = "plummer"
count = 256
[[potential]]
type = "gravity"
eps = 0.05
[integrator]
dt = 0.002
[[output]]
type = "thermo"
)";
  RunResult d = run_scenario("prec-double", toml);
  RunResult f = run_scenario("prec-float", toml, {"simulation.precision=\"float\""});
  double err = 0, ref = 0;
  for (std::size_t i = 0; i < d.final_state.size(); ++i)
    for (int k = 0; k < 3; ++k) {
      err += std::pow(d.final_state.x[k][i] - f.final_state.x[k][i], 2);
      ref += std::pow(d.final_state.x[k][i], 2);
    }
  EXPECT_LT(std::sqrt(err / ref), 1e-5);
  EXPECT_NEAR(f.end.total, d.end.total, 1e-5 * std::fabs(d.end.total));
}

TEST_P(SimulationRun, PeriodicBoxWrapsPositions) {
  const std::string dir = test::scratch_dir("periodic-csv");
  std::ofstream(dir + "/p.csv") << "x,y,vx,vy,mass\n0.9,0.5,1,0,1\n0.1,0.5,-1,0,1\n";
  const std::string toml =
      "[simulation]\ndimension = 2\nsteps = 30\n[box]\nlo = [0, 0]\nhi = [1, 1]\n"
      "boundary = [\"periodic\"]\n[[particles]]\ngenerator = \"file\"\npath = \"" +
      dir + "/p.csv\"\n[integrator]\ndt = 0.01\n[[output]]\ntype = \"thermo\"\n";
  RunResult r = run_scenario("periodic", toml);
  // no potential: free flight 0.3 to the right / left, wrapped into [0, 1)
  EXPECT_NEAR(r.final_state.x[0][0], 0.2, 1e-12);
  EXPECT_NEAR(r.final_state.x[0][1], 0.8, 1e-12);
}

TEST_P(SimulationRun, WritesConfigThermoAndFrames) {
  const char* toml = R"(
[simulation]
steps = 20
[[particles]]
generator = "plummer"
count = 100
[[potential]]
type = "gravity"
eps = 0.05
[integrator]
dt = 0.001
[[output]]
type = "vtk"
interval = 10
[[output]]
type = "thermo"
interval = 5
)";
  RunResult r = run_scenario("outputs", toml);
  const fs::path out = r.sim->output_dir();
  EXPECT_TRUE(fs::exists(out / "config.toml"));
  EXPECT_TRUE(fs::exists(out / "run.pvd"));
  EXPECT_TRUE(fs::exists(out / "frames" / "000000.vtp"));
  EXPECT_TRUE(fs::exists(out / "frames" / "000002.vtp"));
  EXPECT_FALSE(fs::exists(out / "frames" / "000003.vtp"));
  std::ifstream th(out / "thermo.csv");
  std::string line;
  int rows = 0;
  while (std::getline(th, line)) ++rows;
  EXPECT_EQ(rows, 1 + 5);  // header + steps 0, 5, 10, 15, 20
}

TEST_P(SimulationRun, NonFiniteStateStopsWithAClearError) {
  const std::string dir = test::scratch_dir("nan-csv");
  // two particles at the same place with no softening: infinite force
  std::ofstream(dir + "/c.csv")
      << "x,y,z,vx,vy,vz,mass\n0,0,0,0,0,0,1\n0,0,0,0,0,0,1\n1,0,0,0,0,0,1\n";
  const std::string toml =
      "[simulation]\nsteps = 10\n[[particles]]\ngenerator = \"file\"\npath = \"" + dir +
      "/c.csv\"\n[[potential]]\ntype = \"gravity\"\n[[output]]\ntype = \"thermo\"\ninterval = 1\n";
  try {
    run_scenario("nan", toml);
    FAIL() << "a NaN state was not detected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite values"), std::string::npos) << e.what();
  }
}

TEST_P(SimulationRun, EndTimeStopsTheRun) {
  // Fixed dt = 2 pi / 400: end_time = 1.0 is reached after ceil(400 / 2 pi) = 64 steps.
  RunResult r =
      run_scenario("end-time", two_body("leapfrog", 400, 10, 3), {"simulation.end_time=1.0"});
  EXPECT_EQ(r.sim->steps_done(), 64u);
  EXPECT_NEAR(r.end.time, 64 * 2 * M_PI / 400, 1e-12);
}

TEST_P(SimulationRun, AccelerationCriterionSetsTheStep) {
  // Two bodies of mass 0.5 at distance 1: |a| = 0.5 for both, so dt = eta sqrt(length / 0.5).
  RunResult r = run_scenario("dt-control", two_body("leapfrog", 4, 25, 3),
                             {"integrator.dt_control=\"acceleration\"", "integrator.dt_eta=0.01",
                              "integrator.dt_length=1.0"});
  // The leapfrog orbit's separation (and so |a|) varies by ~1e-4 with this step, and dt with it.
  const double dt = 0.01 * std::sqrt(2.0);  // well below the fixed dt = pi/2, which caps it
  EXPECT_NEAR(r.end.time, 100 * dt, 1e-3 * 100 * dt);
  EXPECT_NEAR(r.end.dt, dt, 1e-3 * dt);
  // A circular orbit keeps |a| constant: the energy stays as with a fixed step of that size.
  EXPECT_LT(std::fabs(r.end.total - r.start.total), 1e-7);
}

TEST_P(SimulationRun, AdaptiveIntegratorEndsExactlyOnEndTime) {
  RunResult r =
      run_scenario("dopri5-end", two_body("dopri5", 10, 10, 2), {"simulation.end_time=2.5"});
  EXPECT_NEAR(r.end.time, 2.5, 1e-12);
  EXPECT_LT(r.sim->steps_done(), 100u);  // dt = 2 pi / 10 tried first, adapted: not 100 steps
}

// ---------------------------------------------------------------------------------------------------
// Boundaries and the thermodynamic quantities of issue 4.

namespace {
std::string free_gas(const std::string& boundary, int dim, int count,
                     const std::string& extra = "") {
  return "[simulation]\ndimension = " + std::to_string(dim) +
         "\nsteps = 400\nseed = 7\n[box]\nlo = " + (dim == 2 ? "[0, 0]" : "[0, 0, 0]") +
         "\nhi = " + (dim == 2 ? "[1, 1]" : "[1, 1, 1]") + "\nboundary = \"" + boundary +
         "\"\n[[particles]]\ngenerator = \"uniform\"\ncount = " + std::to_string(count) +
         "\ntemperature = 4.0\n[integrator]\ndt = 0.01\n" + extra;
}
}  // namespace

TEST_P(SimulationRun, ElasticWallsKeepEveryParticleInsideAndConserveEnergy) {
  for (int dim : {2, 3}) {
    // No forces: a particle crosses the unit box in ~0.5 time units, so 4 time units bounce every
    // particle off the walls several times.
    RunResult r = run_scenario("walls" + std::to_string(dim), free_gas("wall", dim, 500));
    const auto& x = r.final_state.x;
    for (int d = 0; d < dim; ++d)
      for (std::size_t i = 0; i < r.final_state.size(); ++i) {
        ASSERT_GE(x[d][i], 0.0) << "particle " << i << " left through the lower wall, axis " << d;
        ASSERT_LE(x[d][i], 1.0) << "particle " << i << " left through the upper wall, axis " << d;
      }
    // Elastic mirror walls only flip velocity components: kinetic energy is unchanged to rounding.
    EXPECT_NEAR(r.end.r.kinetic, r.start.r.kinetic, 1e-12 * r.start.r.kinetic);
    // Walls break momentum conservation: the temperature counts dim N degrees of freedom.
    EXPECT_EQ(r.end.dof, double(dim) * 500);
  }
}

TEST_P(SimulationRun, IdealGasPressureIsTwoKineticOverDimVolume) {
  for (int dim : {2, 3}) {
    RunResult r = run_scenario("ideal" + std::to_string(dim), free_gas("periodic", dim, 400));
    // No forces, so no virial: P V = N T exactly, with T counted over dim (N - 1) dof (momentum is
    // conserved in a periodic box).
    EXPECT_EQ(r.end.dof, double(dim) * 399);
    EXPECT_NEAR(r.end.pressure, 2 * r.end.r.kinetic / (dim * 1.0), 1e-12 * r.end.pressure);
    EXPECT_NEAR(r.end.pressure * 1.0, 399.0 * r.end.temperature, 1e-9 * r.end.pressure);
  }
  // An open axis has no volume: the pressure is reported as NaN, not as a made-up number.
  RunResult open = run_scenario("ideal-open", free_gas("open", 3, 50));
  EXPECT_TRUE(std::isnan(open.end.pressure));
}

// com_drift follows particles through periodic faces: free flight crosses the unit box many times,
// the image counts make x + image * L the unwrapped coordinate, and the centre of mass moves by
// exactly P t / M (zero here: the generator removes the mean velocity), not by box lengths.
TEST_P(SimulationRun, ComDriftFollowsParticlesThroughPeriodicFaces) {
  for (int dim : {2, 3}) {
    const std::string dir = test::scratch_dir("com-drift-" + std::to_string(dim));
    const std::string path = dir + "/scenario.toml";
    // 400 steps of 0.01 at temperature 4: a typical particle travels ~8 box lengths.
    std::ofstream(path) << free_gas("periodic", dim, 300) << "[[output]]\ntype = \"thermo\"\n";
    Scenario sc = load_scenario(path, {"simulation.backend=" + test::backend()}, test::registry());
    RunOptions opt;
    opt.quiet = true;
    opt.output = dir + "/out";
    Simulation sim(sc, test::registry(), opt);
    HostParticles start(dim), end(dim);
    sim.store().download(start);
    const Thermo t0 = sim.measure();
    sim.run();
    sim.store().download(end);
    const Thermo t1 = sim.measure();
    const double t = 4.0;
    int wrapped = 0;
    for (int d = 0; d < dim; ++d)
      for (std::size_t i = 0; i < end.size(); ++i) {
        // Free flight: the unwrapped end is start + v t.
        const double unwrapped = end.x[d][i] + end.image[d][i] * 1.0;
        ASSERT_NEAR(unwrapped, start.x[d][i] + start.v[d][i] * t, 1e-9)
            << dim << "D particle " << i << " axis " << d << " (image " << end.image[d][i] << ")";
        wrapped += end.image[d][i] != 0;
      }
    EXPECT_GT(wrapped, int(end.size()));  // most particles crossed faces on several axes
    double p2 = 0;
    for (int d = 0; d < dim; ++d) p2 += t1.r.momentum[d] * t1.r.momentum[d];
    const double expected = std::sqrt(p2) * t / t1.r.mass;
    EXPECT_NEAR(t1.com_drift, expected, 1e-11) << dim << "D";
    EXPECT_LT(t1.com_drift, 1e-11) << dim << "D: the generator starts the gas at rest";
    EXPECT_EQ(t0.com_drift, 0.0);
  }
}

// A Lennard-Jones liquid in a periodic box: momentum stays zero to round-off, so the centre of mass
// stays put, however many particles cross the faces (this read 0.026 after 1000 steps when the
// wrapped positions were averaged).
TEST_P(SimulationRun, ComDriftOfAPeriodicLiquidStaysAtRoundOff) {
  const std::string toml = R"([simulation]
dimension = 2
steps = 1000
seed = 11
[box]
lo = [0, 0]
hi = [12, 12]
boundary = "periodic"
[[particles]]
generator = "uniform"
count = 100
min_spacing = 0.9
temperature = 1.5
[[potential]]
type = "lennard_jones"
rcut = 2.5
[integrator]
dt = 0.004
[[output]]
type = "thermo"
interval = 100
)";
  RunResult r = run_scenario("com-liquid", toml);
  int wrapped = 0;
  for (int d = 0; d < 2; ++d)
    for (std::size_t i = 0; i < r.final_state.size(); ++i)
      wrapped += r.final_state.image[d][i] != 0;
  EXPECT_GT(wrapped, 10);  // the test means something only if particles crossed faces
  EXPECT_LT(r.end.com_drift, 1e-10);
}

TEST_P(SimulationRun, EachPotentialReportsItsOwnEnergy) {
  // Two copies of gravity, the second twice as strong: its share of U is exactly twice the first's.
  const std::string toml =
      "[simulation]\ndimension = 3\nsteps = 0\n[[particles]]\ngenerator = \"plummer\"\ncount = 64\n"
      "[[potential]]\ntype = \"gravity\"\neps = 0.05\n[[potential]]\ntype = \"gravity\"\nG = 2.0\n"
      "eps = 0.05\n";
  RunResult r = run_scenario("two-terms", toml);
  ASSERT_EQ(r.end.potential_terms.size(), 2u);
  EXPECT_LT(r.end.potential_terms[0], 0.0);
  EXPECT_NEAR(r.end.potential_terms[1], 2 * r.end.potential_terms[0],
              1e-6 * std::fabs(r.end.potential_terms[0]));
  EXPECT_NEAR(r.end.potential_terms[0] + r.end.potential_terms[1], r.end.r.potential,
              1e-9 * std::fabs(r.end.r.potential));
}

TEST(SimulationErrors, ParticlesOutsideAWalledBoxAreRefused) {
  const std::string dir = test::scratch_dir("outside-walls");
  std::ofstream(dir + "/p.csv") << "x,y,vx,vy,mass\n0.5,0.5,0,0,1\n1.5,0.5,0,0,1\n";
  const std::string path = dir + "/s.toml";
  std::ofstream(path) << "[simulation]\ndimension = 2\nsteps = 1\n[box]\nlo = [0, 0]\nhi = [1, 1]\n"
                         "boundary = \"wall\"\n[[particles]]\ngenerator = \"file\"\npath = \"" +
                             dir + "/p.csv\"\n";
  Scenario sc = load_scenario(path, {}, test::registry());
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  try {
    Simulation sim(sc, test::registry(), opt);
    FAIL() << "a particle outside the walls was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("outside the walled box"), std::string::npos) << e.what();
  }
}

// With a fixed step the time is step x dt exactly, in thermo.csv as in the run (a running sum of
// 0.002 drifts to 1.9999999999999793 after 1000 steps).
TEST(Simulation, FixedStepTimesAreExactMultiplesOfDt) {
  const std::string dir = test::scratch_dir("exact-time");
  std::ofstream(dir + "/s.toml")
      << "[simulation]\ndimension = 2\nsteps = 1000\nbackend = \"cpu\"\n[box]\nlo = [0, 0]\n"
         "hi = [20, 20]\nboundary = \"periodic\"\n[[particles]]\ngenerator = \"lattice\"\n"
         "kind = \"square\"\ncount = 100\nspacing = 1.0\ntemperature = 0.5\n[integrator]\n"
         "type = \"leapfrog\"\ndt = 0.002\n[[output]]\ntype = \"thermo\"\ninterval = 250\n";
  Scenario sc = load_scenario(dir + "/s.toml", {}, test::registry());
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  {
    Simulation sim(sc, test::registry(), opt);
    sim.run();
    EXPECT_EQ(sim.time(), 1000 * 0.002);
  }
  std::ifstream f(dir + "/out/thermo.csv");
  std::string line;
  std::getline(f, line);
  int rows = 0;
  while (std::getline(f, line)) {
    const auto c1 = line.find(','), c2 = line.find(',', c1 + 1);
    const double step = std::stod(line.substr(0, c1)),
                 t = std::stod(line.substr(c1 + 1, c2 - c1 - 1));
    EXPECT_EQ(t, step * 0.002) << line.substr(0, c2);
    ++rows;
  }
  EXPECT_EQ(rows, 5);
}

// velocity_distribution = "uniform": each thermal component uniform (kurtosis 1.8, a Gaussian's 3),
// bounded by about sqrt(3 T / m); either way the temperature is exact and the net momentum zero.
TEST(Simulation, ThermalVelocitiesGaussianOrUniform) {
  for (const std::string dist : {"gaussian", "uniform"}) {
    const std::string dir = test::scratch_dir("velocities-" + dist);
    std::ofstream(dir + "/s.toml")
        << "[simulation]\ndimension = 3\nsteps = 0\nbackend = \"cpu\"\n[[particles]]\n"
           "generator = \"uniform\"\ncount = 20000\ntemperature = 2.0\nvelocity_distribution = \""
        << dist << "\"\n[integrator]\ntype = \"leapfrog\"\ndt = 0.001\n";
    Scenario sc = load_scenario(dir + "/s.toml", {}, test::registry());
    RunOptions opt;
    opt.quiet = true;
    opt.output = dir + "/out";
    Simulation sim(sc, test::registry(), opt);
    HostParticles hp;
    sim.store().download(hp);
    double m2 = 0, m4 = 0, vmax = 0, p = 0, k = 0;
    for (std::size_t i = 0; i < hp.size(); ++i) {
      for (int d = 0; d < 3; ++d) {
        const double v = hp.v[d][i];
        m2 += v * v;
        m4 += v * v * v * v;
        vmax = std::max(vmax, std::fabs(v) / std::sqrt(2.0 / hp.mass[i]));
        k += 0.5 * hp.mass[i] * v * v;
      }
      p += hp.mass[i] * hp.v[0][i];
    }
    const double n = 3.0 * double(hp.size());
    const double kurtosis = (m4 / n) / ((m2 / n) * (m2 / n));
    EXPECT_NEAR(2.0 * k / (3.0 * (double(hp.size()) - 1)), 2.0, 1e-9) << dist;
    EXPECT_NEAR(p, 0.0, 1e-9) << dist;
    if (dist == "uniform") {
      EXPECT_NEAR(kurtosis, 1.8, 0.05);
      EXPECT_LT(vmax, std::sqrt(3.0) * 1.02);
    } else {
      EXPECT_NEAR(kurtosis, 3.0, 0.15);
      EXPECT_GT(vmax, 3.0);
    }
  }
}
