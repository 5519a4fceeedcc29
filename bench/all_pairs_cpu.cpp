// SPDX-License-Identifier: BSD-3-Clause
// Interactions per second of the CPU all-pairs traversal with the gravity evaluator, 2D/3D x
// float/double, forces only and forces + energies.
//
//   bench_all_pairs_cpu [N ...]      (default N = 2048 8192 32768)
//
// Prints one line per configuration: N, dim, precision, energy, seconds per evaluation, 1e9
// interactions/s (N^2 / time; the self pair is counted as seed 001 and the CUDA samples do).
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "gravity/gravity.hpp"
#include "pardyn/traversal/all_pairs_cpu.hpp"

using namespace pardyn;

template <class Real, int Dim>
void run(std::size_t n, bool energy) {
  ParticleStore s(Dim, std::is_same_v<Real, float> ? Precision::Float : Precision::Double,
                  host_memory());
  HostParticles hp(Dim);
  hp.resize(n);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::size_t i = 0; i < n; ++i) {
    for (int d = 0; d < Dim; ++d) hp.x[d][i] = u(rng);
    hp.mass[i] = 1.0 / double(n);
  }
  s.upload(hp);
  auto view = s.view<Real, Dim>();
  potentials::Gravity::Params prm{1.0, 0.01};
  const potentials::Gravity::Evaluator<Real> ev(prm);
  const auto img = PeriodicImage<Real>::make(Box{});
  auto once = [&] {
    if (energy) cpu::all_pairs<true, false>(ev, view, img);
    else cpu::all_pairs<false, false>(ev, view, img);
  };
  once();  // warm-up
  int reps = 0;
  const auto t0 = std::chrono::steady_clock::now();
  double el = 0;
  do {
    once();
    ++reps;
    el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (el < 1.0);
  const double per = el / reps;
  std::printf("%8zu  %dD  %-6s  %-7s  %10.4g s  %8.3f\n", n, Dim,
              std::is_same_v<Real, float> ? "float" : "double", energy ? "E+F" : "F", per,
              double(n) * double(n) / per * 1e-9);
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::stoul(argv[i]));
  if (sizes.empty()) sizes = {2048, 8192, 32768};
  std::printf("CPU all-pairs gravity, %d OpenMP threads\n", omp_get_max_threads());
  std::printf("%8s  %2s  %-6s  %-7s  %12s  %8s\n", "N", "", "prec", "terms", "time/eval",
              "1e9 int/s");
  for (auto n : sizes) {
    run<float, 3>(n, false);
    run<double, 3>(n, false);
    run<float, 2>(n, false);
    run<double, 2>(n, false);
    run<double, 3>(n, true);
  }
}
