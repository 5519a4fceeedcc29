// SPDX-License-Identifier: BSD-3-Clause
// Damping walls (walls potential, restitution e < 1, no thermostat) cool an ideal gas at the rate
// kinetic theory predicts (issue 13, item 5: the wall-cooled real-gas example rests on this rate).
//
// A 2D ideal gas (no pair forces, so the kinetic energy changes only at the walls) of N unit
// masses, uniform in a square box of side L, with Maxwell velocities of variance s^2 = T / m per
// axis. Each bounce turns the normal velocity v_n into -e v_n and so removes (1 - e^2) m v_n^2 / 2.
//  1. Bookkeeping, exact: the bounces seen between consecutive steps (a sign change of a velocity
//     component) scale it by exactly e, and K0 - K equals the sum of (1 - e^2) m v_n^2 / 2 over
//     them to rounding: no energy leaves any other way, and no bounce is applied twice (the flip
//     mode's mirror backstop).
//  2. Kinetic theory: particles hit a wall at n <|v_n|> / 2 per unit length and time, and the flux
//     weights v_n^2 to a mean of 2 s^2, so each hit removes (1 - e^2) T on average. Over a time t
//     short enough that no particle comes back to a wall it has left (t < L / (e |v_n|) for all
//     but a negligible tail), the number of hits is C = 2N t <|v_n|> / L (dim N components, each
//     hitting once with probability |v_n| t / L) and the energy removed is (1 - e^2) T C. Both are
//     asserted within 4 standard deviations of the sampling statistics, computed below.
// Runs on the CPU backend, in both hard-wall modes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "pardyn/app/config.hpp"
#include "pardyn/app/simulation.hpp"
#include "support.hpp"

using namespace pardyn;

namespace {

constexpr double kPi = 3.14159265358979323846;

// The gas: 20,000 velocity components, of which ~4,000 hit a wall in the window, so the sampling
// error of the energy removed is ~2% (of the count 1.4%), and a wrong law (1 - e instead of
// 1 - e^2: -47% at e = 0.9, -33% at e = 0.5) or double bounces would be many sigma off.
constexpr int kN = 10000;
constexpr double kL = 100.0;  // box side
constexpr double kT = 1.0;    // s = 1
constexpr double kDt = 0.01;  // a particle at 4 s moves 0.04: the flip mode turns it <= 0.04 early
constexpr int kSteps = 2500;  // t = 25 = L / (4 s): a component hits with probability 0.2

struct Bounces {
  std::uint64_t count = 0;          // bounces seen (component sign changes between two steps)
  double removed = 0;               // sum over them of (1 - e^2) m v_n^2 / 2, v_n before the bounce
  double worst_ratio = 0;           // max | |v_after| / |v_before| - e | over the bounces
  std::uint64_t other_changes = 0;  // components that changed without a sign change
  double K0 = 0, K = 0;             // kinetic energy at step 0 and at the end (thermo, compensated)
  double s2 = 0;                    // <v_n^2> at step 0, over all components (T / m)
  double m1 = 0, m3 = 0, m5 = 0;    // <|v_n|>, <|v_n|^3>, <|v_n|^5> at step 0
  double time = 0;                  // the time at the end
};

Bounces run_gas(const std::string& mode, double e) {
  const std::string dir = test::scratch_dir("wall-cooling-" + mode);
  char toml[1024];
  std::snprintf(toml, sizeof toml,
                "[simulation]\ndimension = 2\nprecision = \"double\"\nsteps = %d\nseed = 13\n"
                "[box]\nlo = [0.0, 0.0]\nhi = [%.17g, %.17g]\nboundary = \"wall\"\n"
                "[[particles]]\ngenerator = \"uniform\"\ncount = %d\ntemperature = %.17g\n"
                "[[potential]]\ntype = \"walls\"\nmode = \"%s\"\nrestitution = %.17g\n"
                "[integrator]\ntype = \"leapfrog\"\ndt = %.17g\n"
                "[[output]]\ntype = \"probe\"\ninterval = 1\n",
                kSteps, kL, kL, kN, kT, mode.c_str(), e, kDt);
  std::ofstream(dir + "/scenario.toml") << toml;
  Scenario sc =
      load_scenario(dir + "/scenario.toml", {"simulation.backend=cpu"}, test::probe_registry());
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";

  Bounces b;
  std::vector<double> prev;  // the previous step's velocity components, axis-major
  double removed_c = 0;      // Kahan compensation of b.removed
  test::ProbeScope probe(
      [&](const ObserveContext& ctx) {
        const HostParticles& p = *ctx.particles;
        const std::size_t n = p.size();
        if (prev.empty()) {
          b.K0 = ctx.thermo->r.kinetic;
          prev.resize(2 * n);
          for (int d = 0; d < 2; ++d)
            for (std::size_t i = 0; i < n; ++i) {
              const double u = std::fabs(p.v[d][i]);
              prev[d * n + i] = p.v[d][i];
              b.m1 += u;
              b.s2 += u * u;
              b.m3 += u * u * u;
              b.m5 += u * u * u * u * u;
            }
          for (double* m : {&b.m1, &b.s2, &b.m3, &b.m5}) *m /= double(2 * n);
          return;
        }
        for (int d = 0; d < 2; ++d)
          for (std::size_t i = 0; i < n; ++i) {
            const double before = prev[d * n + i], after = p.v[d][i];
            prev[d * n + i] = after;
            if (after == before) continue;
            if (after * before >= 0) {
              ++b.other_changes;
              continue;
            }
            ++b.count;
            b.worst_ratio = std::max(b.worst_ratio, std::fabs(std::fabs(after / before) - e));
            const double y = 0.5 * (1 - e * e) * p.mass[i] * before * before - removed_c;
            const double sum = b.removed + y;
            removed_c = (sum - b.removed) - y;
            b.removed = sum;
          }
        b.K = ctx.thermo->r.kinetic;
        b.time = ctx.time;
      },
      ParticleStore::kVelocity | ParticleStore::kMass);
  Simulation sim(sc, test::probe_registry(), opt);
  sim.run();
  return b;
}

void check_cooling(const std::string& mode, double e) {
  const Bounces b = run_gas(mode, e);
  const double M = 2.0 * kN;     // velocity components
  const double q = 1 - e * e;    // fraction of m v_n^2 / 2 a bounce removes
  const double f = b.time / kL;  // a component of speed u hits in the window with probability u f

  // 1. Bookkeeping.
  EXPECT_EQ(b.other_changes, 0u) << mode << ": velocities changed away from the walls";
  EXPECT_LT(b.worst_ratio, 1e-14) << mode << ": a bounce did not scale v_n by e";
  EXPECT_NEAR(b.K0 - b.K, b.removed, 1e-11 * b.K0) << mode;

  // 2. Kinetic theory, with the moments of the Maxwell distribution of variance s^2 (the measured
  // <v_n^2>, which the generator sets to T exactly): <|u|> = sqrt(2/pi) s, <|u|^3> = 2 sqrt(2/pi)
  // s^3, <|u|^5> = 8 sqrt(2/pi) s^5. Per component the hit count is Bernoulli(|u| f), so over M
  // components C has mean M f <|u|> and variance M (f <|u|> - f^2 <|u|>^2) (velocity and position
  // both random), and the energy removed has mean M f q <|u|^3> / 2 and variance
  // M (q/2)^2 (f <|u|^5> - f^2 <|u|^3>^2). The generator's exact temperature and zero momentum only
  // narrow these.
  const double s = std::sqrt(b.s2), c = std::sqrt(2 / kPi);
  const double u1 = c * s, u3 = 2 * c * s * s * s, u5 = 8 * c * std::pow(s, 5);
  const double C = M * f * u1;
  const double sd_C = std::sqrt(M * (f * u1 - f * f * u1 * u1));
  const double E = M * f * 0.5 * q * u3;
  const double sd_E = 0.5 * q * std::sqrt(M * (f * u5 - f * f * u3 * u3));
  // Checks of the premises: the sample's moments are Maxwell's (within 4 sampling errors of the
  // 20,000 components: |u| / s and |u/s|^3 have standard deviations 0.60 and 3.5), and the window
  // is short. A component hits twice only if it is faster than L / (e t) >= 4.4 s: P = 1e-5, so
  // 0.2 of the 20,000 expected; one faster than L / t = 4 s (1.3 expected) hits surely, not with
  // probability u f: both far below the statistical errors.
  EXPECT_NEAR(b.m1 / s, c, 4 * 0.60 / std::sqrt(M)) << mode;
  EXPECT_NEAR(b.m3 / (s * s * s), 2 * c, 4 * 3.5 / std::sqrt(M)) << mode;
  EXPECT_GT(kL / (e * b.time), 4.4 * s) << mode;

  std::printf(
      "  %s, e = %.2f, t = %.1f: %llu bounces (kinetic theory %.0f +- %.0f), energy "
      "removed %.2f = %.1f%% of K0 (theory %.2f +- %.2f); per bounce %.4f (theory "
      "(1 - e^2) T = %.4f)\n",
      mode.c_str(), e, b.time, static_cast<unsigned long long>(b.count), C, sd_C, b.K0 - b.K,
      100 * (b.K0 - b.K) / b.K0, E, sd_E, (b.K0 - b.K) / double(b.count), q * b.s2);
  EXPECT_NEAR(double(b.count), C, 4 * sd_C) << mode;
  EXPECT_NEAR(b.K0 - b.K, E, 4 * sd_E) << mode;
}

}  // namespace

// The walls of examples/real_gas_2d/real_gas_2d_walls.toml: seed 003's a-priori flip, e = 0.5.
TEST(WallCooling, FlipWallsRemoveTheKineticTheoryRate) { check_cooling("flip", 0.5); }

// Mirror walls, with the weaker damping e = 0.9 (the example's earlier value).
TEST(WallCooling, MirrorWallsRemoveTheKineticTheoryRate) { check_cooling("mirror", 0.9); }
