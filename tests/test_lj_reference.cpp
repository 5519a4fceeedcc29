// SPDX-License-Identifier: BSD-3-Clause
// The Lennard-Jones fluid reproduces a published reference state point: the NIST Standard Reference
// Simulation Website (SRSW), "Lennard-Jones Fluid Properties", NVT Monte Carlo results
// (https://mmlapps.nist.gov/srs/LJ_PURE/mc.htm, reached from
// https://www.nist.gov/mml/csd/chemical-informatics-group/lennard-jones-fluid-properties):
// 500 particles, LJ potential truncated (not shifted) at 3.0 sigma, with analytic long-range
// corrections, T* = 0.85, rho* = 0.86. The numbers are that table's, as quoted with the same URL by
// the HOOMD-blue validation suite (hoomd/md/pytest/test_lj_equation_of_state.py), in
// tests/data/lj_nist_srsw.csv.
//
// Like with like: the NIST energies and pressures include the analytic long-range (tail)
// corrections for g(r) = 1 beyond rc,
//   U_tail / N = (8/3) pi rho [ (1/3) rc^-9 - rc^-3 ],
//   P_tail     = (16/3) pi rho^2 [ (2/3) rc^-9 - rc^-3 ]   (sigma = epsilon = 1),
// so they are added to the simulation's truncated-potential averages. The pressure is compared as
// rho T0 + <W>/(3V) + P_tail, W the pair virial: Monte Carlo's ideal-gas term is rho T with all N
// particles, while the kinetic temperature of this run has dim (N - 1) degrees of freedom (zero total
// momentum); the configurational part is the same in both ensembles.
//
// The run: 500 particles from an fcc lattice, melted at T = 3 with the Bussi thermostat
// (velocity_rescale; on a GPU also with langevin), quenched by its ramp to T = 0.85, equilibrated,
// then averaged. The standard
// errors of the run come from block averages; the test asserts agreement within 3 combined standard
// deviations (the run's and NIST's), and that the run's error is small enough to mean something.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "pardyn/app/config.hpp"
#include "pardyn/app/simulation.hpp"
#include "support.hpp"

using namespace pardyn;

namespace {

// What the probe observer (tests/support.hpp) records at every observation.
struct Sample {
  double time = 0, potential = 0, kinetic = 0, pressure = 0, volume = 0, temperature = 0;
};

constexpr double kPi = 3.14159265358979323846;

struct MeanError {
  double mean = 0, se = 0;
};
// Mean and its standard error from `blocks` consecutive block means.
MeanError block_mean(const std::vector<double>& x, std::size_t blocks) {
  const std::size_t per = x.size() / blocks;
  std::vector<double> bm(blocks, 0.0);
  for (std::size_t b = 0; b < blocks; ++b) {
    for (std::size_t i = b * per; i < (b + 1) * per; ++i) bm[b] += x[i];
    bm[b] /= double(per);
  }
  MeanError m;
  for (double v : bm) m.mean += v;
  m.mean /= double(blocks);
  double q = 0;
  for (double v : bm) q += (v - m.mean) * (v - m.mean);
  m.se = std::sqrt(q / double(blocks - 1) / double(blocks));
  return m;
}

// (backend, thermostat): the CPU run is the one CI makes; the GPU also checks that Langevin samples
// the same configurations.
using Variant = std::pair<std::string, std::string>;

class LjReference : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    if (GetParam().first == "cuda") PARDYN_SKIP_WITHOUT_GPU();
    if (!test::probe_registry().find(PluginKind::Potential, "lennard_jones"))
      GTEST_SKIP() << "the lennard_jones plugin is not built";
  }
};

}  // namespace

INSTANTIATE_TEST_SUITE_P(Backends, LjReference,
                         ::testing::Values(Variant{"cpu", "velocity_rescale"},
                                           Variant{"cuda", "velocity_rescale"},
                                           Variant{"cuda", "langevin"}),
                         [](const auto& info) {
                           return info.param.first + "_" + info.param.second;
                         });

TEST_P(LjReference, NistMonteCarloStatePointT085Rho086) {
  const std::string backend = GetParam().first, thermostat = GetParam().second;
  // NIST SRSW NVT-MC, T* = 0.85, rho* = 0.86 (see the top of this file).
  const test::Table nist = test::read_table(test::data_file("lj_nist_srsw.csv"));
  ASSERT_EQ(nist.rows.size(), 1u);
  const std::vector<double>& ref = nist.rows[0];
  const double T0 = ref[nist.col("T")], rho = ref[nist.col("rho")];
  const double U_nist = ref[nist.col("U_per_N")], sU_nist = ref[nist.col("sd_U_per_N")];
  const double P_nist = ref[nist.col("P")], sP_nist = ref[nist.col("sd_P")];
  const int N = 500;  // fcc, 5 x 5 x 5 cells
  const double rc = ref[nist.col("rc")], L = std::cbrt(N / rho);
  const double dt = 0.005, melt_end = 2.0, quench_end = 3.0, average_from = 8.0, end = 38.0;
  // Langevin's friction 1/tau slows diffusion (and so sampling): a weaker coupling than Bussi's.
  const double tau = thermostat == "langevin" ? 0.5 : 0.1;
  const std::uint64_t steps = std::uint64_t(std::llround(end / dt));

  const std::string dir = test::scratch_dir("lj-" + backend + "-" + thermostat);
  char toml[2048];
  std::snprintf(toml, sizeof toml,
                "[simulation]\ndimension = 3\nsteps = %llu\nseed = 11\nbackend = \"%s\"\n"
                "[box]\nlo = [0, 0, 0]\nhi = [%.17g, %.17g, %.17g]\nboundary = [\"periodic\"]\n"
                "[[particles]]\ngenerator = \"lattice\"\nkind = \"fcc\"\ncount = %d\n"
                "temperature = 3.0\n"
                "[[potential]]\ntype = \"lennard_jones\"\nepsilon = 1.0\nsigma = 1.0\n"
                "rcut = %.17g\nshift = false\n"
                "[integrator]\ntype = \"leapfrog\"\ndt = %.17g\n"
                "[[modifier]]\ntype = \"%s\"\ntemperature = 3.0\n"
                "temperature_end = %.17g\nramp_start = %.17g\nramp_end = %.17g\ntau = %.17g\n"
                "[[output]]\ntype = \"probe\"\ninterval = 10\n",
                static_cast<unsigned long long>(steps), backend.c_str(), L, L, L, N, rc, dt,
                thermostat.c_str(), T0, melt_end, quench_end, tau);
  std::ofstream(dir + "/scenario.toml") << toml;
  Scenario sc = load_scenario(dir + "/scenario.toml", {}, test::probe_registry());
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  std::vector<Sample> log;
  {
    test::ProbeScope probe([&](const ObserveContext& ctx) {
      const Thermo& t = *ctx.thermo;
      log.push_back({ctx.time, t.r.potential, t.r.kinetic, t.pressure, t.volume, t.temperature});
    });
    Simulation sim(sc, test::probe_registry(), opt);
    sim.run();
  }

  std::vector<double> u, p, t;
  for (const Sample& s : log) {
    if (s.time < average_from - 1e-9) continue;
    u.push_back(s.potential / N);
    // The pair virial's part of the pressure, W / (3V) = P - 2K / (3V), plus MC's ideal-gas term.
    p.push_back(rho * T0 + s.pressure - 2.0 * s.kinetic / (3.0 * s.volume));
    t.push_back(s.temperature);
  }
  ASSERT_GE(u.size(), 600u);
  const double irc3 = 1.0 / (rc * rc * rc), irc9 = irc3 * irc3 * irc3;
  const double u_tail = 8.0 / 3.0 * kPi * rho * (irc9 / 3.0 - irc3);
  const double p_tail = 16.0 / 3.0 * kPi * rho * rho * (2.0 * irc9 / 3.0 - irc3);
  const MeanError U = block_mean(u, 20), P = block_mean(p, 20), T = block_mean(t, 20);
  const double U_sim = U.mean + u_tail, P_sim = P.mean + p_tail;
  const double sU = std::sqrt(U.se * U.se + sU_nist * sU_nist);
  const double sP = std::sqrt(P.se * P.se + sP_nist * sP_nist);
  std::printf("  %s, %s: T = %.4f +- %.4f (target %.2f)\n", backend.c_str(), thermostat.c_str(),
              T.mean, T.se, T0);
  std::printf("  U/N = %.4f +- %.4f (tail %.4f), NIST %.4f +- %.4f: %+.1f sigma\n", U_sim, U.se,
              u_tail, U_nist, sU_nist, (U_sim - U_nist) / sU);
  std::printf("  P   = %.4f +- %.4f (tail %.4f), NIST %.4f +- %.4f: %+.1f sigma\n", P_sim, P.se,
              p_tail, P_nist, sP_nist, (P_sim - P_nist) / sP);
  // The run resolves the state point: errors well below the differences a wrong potential, cut-off
  // treatment or temperature would make (the tail terms alone are -0.27 and -0.46).
  ASSERT_LT(U.se, 0.01);
  ASSERT_LT(P.se, 0.05);
  EXPECT_NEAR(T.mean, T0, 4 * T.se + 1e-3);
  EXPECT_NEAR(U_sim, U_nist, 3 * sU);
  EXPECT_NEAR(P_sim, P_nist, 3 * sP);
}
