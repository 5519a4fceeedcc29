// SPDX-License-Identifier: BSD-3-Clause
// Interactions per second of the GPU all-pairs traversal, and the fraction of the hardware limit.
//
//   bench_all_pairs_cuda [--ipi FILE] [--quick] [--memory N] [N ...]
//
// For each configuration (3D/2D gravity in float/double, 2D `log` in float, forces only), and each N
// (default 16384 65536 262144 1048576), it times the force evaluation with CUDA events (median of
// several runs after a warm-up) and prints N^2/time. It also prints the fraction of the chip's limit
// for the kernel's instruction mix when --ipi names the table written by bench/sass_count.py (the
// instruction counts per interaction read off the disassembly).
//
// The limit per interaction, in SM clock cycles, is the largest of:
//   issue: all instructions / 128    (4 schedulers x 32 lanes per SM and clock)
//   FP32:  FP32 instructions / 128   (FFMA, FADD, FMUL)
//   FP64:  FP64 instructions / 64    (DFMA, DADD, DMUL on the H100's 64 FP64 lanes per SM)
//   MUFU:  special-function instructions / 16
// Interactions per second at most = SMs x clock / that number. The clock is the maximum boost clock
// the driver reports; a chip that clocks lower under load reaches less.
//
// --memory N allocates a 3D float store of N particles on the GPU, runs a kick, a drift and a
// reduction on it, and prints the memory used (100 million must fit on an H100), how many particles
// the GPU has room for, the time of the reduction (median of 5) and the rate of a copy of up to
// 2 GiB to pageable host memory through the staging lanes (median of 3; docs/gpu.md).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <omp.h>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gravity/gravity.hpp"
#include "log/log.hpp"
#include "pardyn/app/backend.hpp"
#include "pardyn/app/cuda.hpp"
#include "pardyn/traversal/all_pairs_cpu.hpp"
#include "pardyn/traversal/all_pairs_cuda.cuh"

using namespace pardyn;

namespace {

struct Mix {
  double total = 0, fp32 = 0, fp64 = 0, mufu = 0;
};
std::map<std::string, Mix> g_mix;  // by configuration name, from sass_count.py

void read_mix(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw Error("cannot read " + path);
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream is(line);
    std::string name;
    Mix m;
    if (is >> name >> m.total >> m.fp32 >> m.fp64 >> m.mufu) g_mix[name] = m;
  }
}

template <class Real, int Dim>
void fill(ParticleStore& s, std::size_t n, unsigned seed) {
  HostParticles hp(Dim);
  hp.resize(n);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::size_t i = 0; i < n; ++i) {
    for (int d = 0; d < Dim; ++d) hp.x[d][i] = u(rng);
    hp.mass[i] = 1.0 / double(n);
    hp.id[i] = std::int64_t(i);
  }
  s.upload(hp);
}

template <class Law, class Real, int Dim, int K = 0, int T = 0, int U = 4>
void run(const char* name, std::size_t n, bool quick) {
  ParticleStore s(Dim, std::is_same_v<Real, float> ? Precision::Float : Precision::Double,
                  cuda::device_memory());
  fill<Real, Dim>(s, n, 7);
  const auto view = s.view<Real, Dim>();
  typename Law::Params prm;
  prm.eps = 0.01;
  const typename Law::template Evaluator<Real> ev(prm);
  Box box;
  auto once = [&] {
    if constexpr (K > 0) cuda::all_pairs_shaped<K, T, U>(ev, view, box);
    else cuda::all_pairs(ev, view, box, false);
  };
  once();
  cuda::synchronize("warm-up");
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  // Repeat so that each sample lasts at least ~20 ms; take the median of the samples.
  std::vector<float> samples;
  int reps = 1;
  for (;;) {
    cudaEventRecord(a);
    for (int r = 0; r < reps; ++r) once();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    if (ms > 20 || reps >= 1024) {
      samples.push_back(ms / reps);
      break;
    }
    reps *= 2;
  }
  for (int k = 0; k < (quick ? 2 : 6); ++k) {
    cudaEventRecord(a);
    for (int r = 0; r < reps; ++r) once();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    samples.push_back(ms / reps);
  }
  cuda::synchronize("timing");
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(samples.begin(), samples.end());
  const double t = samples[samples.size() / 2] * 1e-3;
  const double rate = double(n) * double(n) / t;

  const auto dev = cuda::device_info();
  std::string limit_text = "          -";
  auto it = g_mix.find(name);
  if (it != g_mix.end()) {
    const Mix& m = it->second;
    const double cycles = std::max({m.total / 128.0, m.fp32 / 128.0, m.fp64 / 64.0, m.mufu / 16.0});
    const double limit = dev.multiprocessors * dev.clock_khz * 1e3 / cycles;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%9.3g  %5.1f%%", limit, 100.0 * rate / limit);
    limit_text = buf;
  }
  if constexpr (K > 0)
    std::printf("%-12s %9zu  %10.4g ms  %11.4g  K=%d T=%d U=%d\n", name, n, t * 1e3, rate, K, T, U);
  else
    std::printf("%-12s %9zu  %10.4g ms  %11.4g  %s\n", name, n, t * 1e3, rate, limit_text.c_str());
  std::fflush(stdout);
}

template <class Law, class Real, int Dim>
void run_cpu(const char* name, std::size_t n) {
  ParticleStore s(Dim, std::is_same_v<Real, float> ? Precision::Float : Precision::Double,
                  host_memory());
  fill<Real, Dim>(s, n, 7);
  const auto view = s.view<Real, Dim>();
  typename Law::Params prm;
  prm.eps = 0.01;
  const typename Law::template Evaluator<Real> ev(prm);
  const auto img = PeriodicImage<Real>::make(Box{});
  cpu::all_pairs<false, false>(ev, view, img);
  int reps = 0;
  const auto t0 = std::chrono::steady_clock::now();
  double el = 0;
  do {
    cpu::all_pairs<false, false>(ev, view, img);
    ++reps;
    el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (el < 1.0);
  std::printf("%-12s %9zu  %10.4g ms  %11.4g  (CPU, %d threads)\n", name, n, el / reps * 1e3,
              double(n) * double(n) * reps / el, omp_get_max_threads());
}

// About a second of kernels, so that the GPU has left its idle clock before anything is timed.
void warm_up() {
  ParticleStore s(3, Precision::Float, cuda::device_memory());
  fill<float, 3>(s, 262144, 1);
  typename potentials::Gravity::Params prm;
  const potentials::Gravity::Evaluator<float> ev(prm);
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1)) {
    cuda::all_pairs(ev, s.view<float, 3>(), Box{}, false);
    cuda::synchronize("warm-up");
  }
}

// Block shapes (targets per thread K, threads per block T) for the kernels the targets name.
void tune(std::size_t n) {
  using potentials::Gravity;
  using potentials::Log;
  std::printf("tuning at N = %zu (default shapes: float K=%d, double K=%d, T=%d)\n", n,
              cuda::AllPairsShape<float, 3>::K, cuda::AllPairsShape<double, 3>::K,
              cuda::AllPairsShape<float, 3>::T);
  run<Gravity, float, 3, 8, 128, 4>("grav3d-f32", n, true);
  run<Gravity, float, 3, 8, 128, 2>("grav3d-f32", n, true);
  run<Gravity, float, 3, 8, 64, 4>("grav3d-f32", n, true);
  run<Gravity, float, 3, 6, 128, 4>("grav3d-f32", n, true);
  run<Gravity, float, 3, 12, 128, 2>("grav3d-f32", n, true);
  run<Log, float, 2, 16, 64, 4>("log2d-f32", n, true);
  run<Log, float, 2, 16, 64, 8>("log2d-f32", n, true);
  run<Log, float, 2, 12, 64, 4>("log2d-f32", n, true);
  run<Log, float, 2, 8, 128, 4>("log2d-f32", n, true);
  run<Log, float, 2, 24, 64, 2>("log2d-f32", n, true);
  run<Gravity, double, 3, 8, 64, 4>("grav3d-f64", n, true);
  run<Gravity, double, 3, 6, 64, 4>("grav3d-f64", n, true);
  run<Gravity, double, 3, 4, 128, 4>("grav3d-f64", n, true);
}

void memory_test(std::size_t n) {
  const auto before = cuda::device_info();
  ParticleStore s(3, Precision::Float, cuda::device_memory());
  s.resize(n);  // zero-filled: positions 0, masses 0 (the operations below do not care)
  auto ops = cuda::make_ops();
  ops->kick(s, 0.1);
  ops->drift(s, 0.1);
  const Reductions r = ops->reduce(s);
  cuda::synchronize("memory test");
  const auto after = cuda::device_info();
  std::printf(
      "memory: %zu particles (3D float) use %.2f GiB of the GPU (%zu bytes/particle in the "
      "store); %.1f of %.1f GiB free now; reduce saw %zu particles\n",
      n, double(before.free_memory - after.free_memory) / (1 << 30), s.bytes_per_particle(),
      double(after.free_memory) / (1 << 30), double(after.total_memory) / (1 << 30), r.n);
  const double used = double(before.free_memory - after.free_memory);
  std::printf("memory: room for about %.2g particles of %zu bytes in the %.1f GiB free before\n",
              double(before.free_memory) / (used / double(n)), s.bytes_per_particle(),
              double(before.free_memory) / (1 << 30));
  auto seconds = [](auto t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  // The sums thermo needs (energies, momenta, angular momentum, temperature; compensated, double).
  std::vector<double> reduce_s;
  for (int k = 0; k < 5; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    ops->reduce(s);
    cuda::synchronize("memory test");
    reduce_s.push_back(seconds(t0));
  }
  std::printf("reduce: %.3f ms for %zu particles, %.0f us per 10^6 (median of 5)\n",
              1e3 * median(reduce_s), n, 1e6 * median(reduce_s) / (double(n) / 1e6));
  // A copy to pageable host memory, as an output's fields come down (the staging lanes).
  const std::size_t bytes = std::min(std::size_t(2) << 30, n * 12);
  MemoryResource& mem = cuda::device_memory();
  void* dev = mem.allocate(bytes);
  mem.fill_zero(dev, bytes);
  cuda::synchronize("memory test");
  std::vector<char> host(bytes, 1);  // touched, as a run's reused host buffers are
  std::vector<double> copy_s;
  for (int k = 0; k < 3; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    mem.copy_to_host(host.data(), dev, bytes);
    copy_s.push_back(seconds(t0));
  }
  mem.deallocate(dev);
  std::printf("copy to host: %.2f GB in %.3f s, %.1f GB/s (median of 3)\n", bytes / 1e9,
              median(copy_s), bytes / 1e9 / median(copy_s));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<std::size_t> sizes;
    bool quick = false;
    std::string only;  // --only NAME: one configuration (for profilers)
    for (int i = 1; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--ipi") && i + 1 < argc) read_mix(argv[++i]);
      else if (!std::strcmp(argv[i], "--quick")) quick = true;
      else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
      else if (!std::strcmp(argv[i], "--tune")) {
        warm_up();
        tune(argc > i + 1 ? std::stoul(argv[i + 1]) : 262144);
        return 0;
      } else if (!std::strcmp(argv[i], "--memory") && i + 1 < argc) {
        memory_test(std::stoul(argv[++i]));
        return 0;
      } else sizes.push_back(std::stoul(argv[i]));
    }
    if (cuda::device_count() == 0) {
      std::printf("no CUDA device: nothing to measure\n");
      return 0;
    }
    if (sizes.empty()) sizes = {16384, 65536, 262144, 1048576};
    warm_up();
    const auto dev = cuda::device_info();
    std::printf("%s, sm_%d%d, %d SMs, max clock %.0f MHz\n", dev.name.c_str(), dev.cc_major,
                dev.cc_minor, dev.multiprocessors, dev.clock_khz / 1e3);
    std::printf("%-12s %9s  %13s  %11s  %9s  %6s\n", "config", "N", "time/eval", "int/s", "limit",
                "of it");
    for (auto n : sizes) {
      using potentials::Gravity;
      using potentials::Log;
      auto want = [&](const char* name) { return only.empty() || only == name; };
      if (want("grav3d-f32")) run<Gravity, float, 3>("grav3d-f32", n, quick);
      if (want("grav3d-f64")) run<Gravity, double, 3>("grav3d-f64", n, quick);
      if (want("grav2d-f32")) run<Gravity, float, 2>("grav2d-f32", n, quick);
      if (want("grav2d-f64")) run<Gravity, double, 2>("grav2d-f64", n, quick);
      if (want("log2d-f32")) run<Log, float, 2>("log2d-f32", n, quick);
    }
    if (!only.empty()) return 0;
    run_cpu<potentials::Gravity, float, 3>("grav3d-f32", 32768);
    run_cpu<potentials::Gravity, double, 3>("grav3d-f64", 32768);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_all_pairs_cuda: %s\n", e.what());
    return 1;
  }
}
