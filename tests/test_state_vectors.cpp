// SPDX-License-Identifier: BSD-3-Clause
// The backends' state-vector operations (multi-stage integrators): exact results on the CPU, and the
// same results on the GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "pardyn/app/backend.hpp"
#include "pardyn/app/cuda.hpp"
#include "support.hpp"

using namespace pardyn;

namespace {

HostParticles random_state(int dim, std::size_t n, unsigned seed) {
  HostParticles hp(dim);
  hp.resize(n);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::size_t i = 0; i < n; ++i) {
    for (int d = 0; d < dim; ++d) hp.x[d][i] = u(rng), hp.v[d][i] = u(rng);
    hp.mass[i] = 1;
  }
  return hp;
}

// Runs the same sequence of state operations on one backend and returns the final particles and
// the error norm it computed.
struct Outcome {
  HostParticles hp;
  double norm = 0;
};
Outcome exercise(Backend backend, Precision prec, int dim, std::size_t n) {
  MemoryResource& mem = backend == Backend::Cuda ? cuda::device_memory() : host_memory();
  auto ops = backend == Backend::Cuda ? cuda::make_ops() : make_cpu_ops();
  ParticleStore s(dim, prec, mem);
  // Accelerations are set through a second upload: a = the positions of another random set.
  HostParticles a_src = random_state(dim, n, 9);
  HostParticles hp = random_state(dim, n, 3);
  s.upload(a_src);
  auto k1 = ops->new_state(s);
  ops->get_state(s, *k1);  // k1 = (x', v') of the other set
  s.upload(hp);
  auto y0 = ops->new_state(s), k2 = ops->new_state(s);
  ops->get_state(s, *y0);
  ops->get_derivative(s, *k2);  // (v, a = 0)
  const StateVector* ks[2] = {k1.get(), k2.get()};
  const double c[2] = {0.25, -1.5};
  ops->set_combination(s, *y0, 2, c, ks);  // (x, v) = y0 + 0.25 k1 - 1.5 k2
  const double e[2] = {1e-3, 2e-3};
  Outcome out;
  out.norm = ops->error_norm(s, *y0, 2, e, ks, 1e-6, 1e-3);
  s.download(out.hp);
  ops->set_state(s, *y0);  // back to the start
  HostParticles back;
  s.download(back);
  for (int d = 0; d < dim; ++d)
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(back.x[d][i], prec == Precision::Double ? hp.x[d][i] : double(float(hp.x[d][i])));
      EXPECT_EQ(back.v[d][i], prec == Precision::Double ? hp.v[d][i] : double(float(hp.v[d][i])));
    }
  return out;
}

}  // namespace

TEST(StateVectors, CombinationAndErrorNormOnTheCpu) {
  for (int dim : {2, 3}) {
    const std::size_t n = 1001;
    const Outcome o = exercise(Backend::Cpu, Precision::Double, dim, n);
    const HostParticles hp = random_state(dim, n, 3), k1 = random_state(dim, n, 9);
    double norm = 0;
    for (int d = 0; d < dim; ++d)
      for (std::size_t i = 0; i < n; ++i) {
        // x = x0 + 0.25 x1 - 1.5 v0;  v = v0 + 0.25 v1 - 1.5 * 0 (a = 0)
        const double x = hp.x[d][i] + 0.25 * k1.x[d][i] - 1.5 * hp.v[d][i];
        const double v = hp.v[d][i] + 0.25 * k1.v[d][i];
        EXPECT_NEAR(o.hp.x[d][i], x, 1e-15);
        EXPECT_NEAR(o.hp.v[d][i], v, 1e-15);
        const double ex = std::fabs(1e-3 * k1.x[d][i] + 2e-3 * hp.v[d][i]) /
                          (1e-6 + 1e-3 * std::max(std::fabs(hp.x[d][i]), std::fabs(x)));
        const double ev = std::fabs(1e-3 * k1.v[d][i]) /
                          (1e-6 + 1e-3 * std::max(std::fabs(hp.v[d][i]), std::fabs(v)));
        norm = std::max({norm, ex, ev});
      }
    EXPECT_NEAR(o.norm, norm, 1e-12 * norm) << dim << "D";
  }
}

TEST(StateVectors, CudaMatchesCpu) {
  PARDYN_SKIP_WITHOUT_GPU();
  for (Precision prec : {Precision::Float, Precision::Double})
    for (int dim : {2, 3}) {
      const std::size_t n = 100003;
      const Outcome c = exercise(Backend::Cpu, prec, dim, n);
      const Outcome g = exercise(Backend::Cuda, prec, dim, n);
      const double tol = prec == Precision::Float ? 1e-6 : 1e-15;
      for (int d = 0; d < dim; ++d)
        for (std::size_t i = 0; i < n; i += 97) {
          EXPECT_NEAR(g.hp.x[d][i], c.hp.x[d][i], tol * 4);
          EXPECT_NEAR(g.hp.v[d][i], c.hp.v[d][i], tol * 4);
        }
      EXPECT_NEAR(g.norm, c.norm, 1e-5 * c.norm);
    }
}
