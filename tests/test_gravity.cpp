// SPDX-License-Identifier: BSD-3-Clause
// Gravity on the CPU backend: analytic values, -dU/dr, Newton's third law, momentum conservation.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "pardyn/app/backend.hpp"
#include "pardyn/app/config.hpp"
#include "support.hpp"

using namespace pardyn;

namespace {

struct Forces {
  HostParticles hp;
  double potential = 0;
};

// Computes gravity forces and energies of `in` with all_pairs on the CPU.
Forces gravity_forces(const HostParticles& in, Precision prec, double G, double eps) {
  auto& reg = test::registry();
  RunInfo run;
  run.dim = in.dim;
  run.precision = prec;
  auto pot = reg.make_potential(
      "gravity",
      test::params_for(PluginKind::Potential, "gravity",
                       "G = " + std::to_string(G) + "\neps = " + std::to_string(eps)),
      run);
  auto scheme = reg.make_scheme("all_pairs", {}, run);
  ParticleStore s(in.dim, prec, host_memory());
  s.upload(in);
  auto ops = make_cpu_ops();
  ops->zero_forces(s, true, true);
  ForceRequest req;
  req.energy = req.virial = true;
  req.box = &run.box;
  pot->compute(s, scheme->neighbourhood(), req);
  Forces f;
  s.download(f.hp);
  f.potential = ops->reduce(s).potential;
  return f;
}

HostParticles random_particles(int dim, std::size_t n, unsigned seed) {
  HostParticles hp(dim);
  hp.resize(n);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1), m(0.5, 2.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (int d = 0; d < dim; ++d) hp.x[d][i] = u(rng);
    hp.mass[i] = m(rng);
    hp.id[i] = std::int64_t(i);
  }
  return hp;
}

}  // namespace

TEST(Gravity, TwoBodyAnalytic) {
  for (int dim : {2, 3}) {
    HostParticles hp(dim);
    hp.resize(2);
    hp.x[0][1] = 3.0;
    hp.x[1][1] = 4.0;  // distance 5
    hp.mass = {2.0, 3.0};
    const double G = 1.5, eps = 0.5, r2 = 25.0 + eps * eps;
    Forces f = gravity_forces(hp, Precision::Double, G, eps);
    const double a0 = G * 3.0 / std::pow(r2, 1.5);  // magnitude of particle 0's acceleration
    EXPECT_NEAR(f.hp.a[0][0], a0 * 3.0, 1e-14);
    EXPECT_NEAR(f.hp.a[1][0], a0 * 4.0, 1e-14);
    EXPECT_NEAR(f.hp.a[0][1] * 3.0, -f.hp.a[0][0] * 2.0, 1e-14);  // m1 a1 = -m0 a0
    EXPECT_NEAR(f.potential, -G * 2.0 * 3.0 / std::sqrt(r2), 1e-14);
    EXPECT_NEAR(f.hp.epot[0], 0.5 * f.potential, 1e-14);
  }
}

TEST(Gravity, ForceIsMinusEnergyGradient) {
  HostParticles hp = random_particles(3, 20, 7);
  const double eps = 0.05, h = 1e-6;
  Forces f = gravity_forces(hp, Precision::Double, 1.0, eps);
  for (std::size_t i : {0, 5, 13}) {
    for (int d = 0; d < 3; ++d) {
      HostParticles p = hp, m = hp;
      p.x[d][i] += h;
      m.x[d][i] -= h;
      const double dU = (gravity_forces(p, Precision::Double, 1.0, eps).potential -
                         gravity_forces(m, Precision::Double, 1.0, eps).potential) /
                        (2 * h);
      EXPECT_NEAR(-dU, hp.mass[i] * f.hp.a[d][i], 1e-6 * std::max(1.0, std::fabs(dU)))
          << "particle " << i << " axis " << d;
    }
  }
}

TEST(Gravity, NewtonThirdLawAndPrecisions) {
  for (int dim : {2, 3}) {
    HostParticles hp = random_particles(dim, 1000, 11);
    Forces fd = gravity_forces(hp, Precision::Double, 1.0, 0.01);
    Forces ff = gravity_forces(hp, Precision::Float, 1.0, 0.01);
    double net[3] = {0, 0, 0}, scale = 0, err2 = 0, ref2 = 0;
    for (std::size_t i = 0; i < hp.size(); ++i)
      for (int d = 0; d < dim; ++d) {
        net[d] += hp.mass[i] * fd.hp.a[d][i];
        scale += std::fabs(hp.mass[i] * fd.hp.a[d][i]);
        err2 += (ff.hp.a[d][i] - fd.hp.a[d][i]) * (ff.hp.a[d][i] - fd.hp.a[d][i]);
        ref2 += fd.hp.a[d][i] * fd.hp.a[d][i];
      }
    for (int d = 0; d < dim; ++d) EXPECT_LT(std::fabs(net[d]), 1e-13 * scale) << "dim " << dim;
    // float forces agree with double to float rounding (relative RMS)
    EXPECT_LT(std::sqrt(err2 / ref2), 1e-5) << "dim " << dim;
    EXPECT_NEAR(ff.potential, fd.potential, 1e-5 * std::fabs(fd.potential));
  }
}
