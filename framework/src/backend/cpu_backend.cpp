// SPDX-License-Identifier: BSD-3-Clause
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <vector>

#include "element_ops.hpp"
#include "pardyn/app/backend.hpp"
#include "pardyn/app/cuda.hpp"
#include "reduction.hpp"

namespace pardyn {

namespace {

using element::kElementParallelMin;

// One accumulator per thread (Acc: add(view, i), merge(other)), merged in thread order:
// deterministic for a given thread count and accurate to a few ulp of the total.
template <class Acc, class View>
Acc sum_particles(const View& p) {
  std::vector<Acc> parts(omp_get_max_threads());
#pragma omp parallel if (p.n > kElementParallelMin)
  {
    Acc& s = parts[omp_get_thread_num()];
#pragma omp for schedule(static)
    for (std::size_t i = 0; i < p.n; ++i) s.add(p, i);
  }
  Acc total;
  for (const auto& s : parts) total.merge(s);
  return total;
}

// The kinetic energy alone (what a thermostat needs at every step).
struct KineticSum {
  CompensatedSum k;
  template <class View>
  void add(const View& p, std::size_t i) {
    double v2 = 0;
    for (int d = 0; d < View::dim; ++d) v2 += double(p.v[d][i]) * double(p.v[d][i]);
    k.add(0.5 * double(p.mass[i]) * v2);
  }
  void merge(const KineticSum& o) { k.add(o.k); }
};
// Every sum of the thermo row (reduction.hpp).
struct AllSums : ParticleSums {
  template <class View>
  void add(const View& p, std::size_t i) {
    add_particle(p, i);
  }
};

template <class Real, int Dim>
double kinetic(const ParticleView<Real, Dim>& p) {
  return sum_particles<KineticSum>(p).k.value();
}

template <class Real, int Dim>
Reductions reduce(const ParticleView<Real, Dim>& p) {
  return sum_particles<AllSums>(p).result(p.n);
}

// 2·dim arrays of n values, one after the other: x_0 .. x_{dim-1}, v_0 .. v_{dim-1}.
template <class Real>
class CpuState final : public StateVector {
 public:
  CpuState(int dim, std::size_t n) : dim(dim), n(n), data(std::size_t(2 * dim) * n) {}
  Real* comp(int c) const { return const_cast<Real*>(data.data()) + std::size_t(c) * n; }
  int dim;
  std::size_t n;
  std::vector<Real> data;
};

// The CPU loop: OpenMP over the particles (for_each.hpp).
struct CpuLoop {
  template <class F>
  static void run(std::size_t n, const F& f, std::size_t parallel_min = kParallelMin) {
    cpu::for_each_index(n, f, parallel_min);
  }
};

class CpuOps final : public element::ElementOps<CpuLoop, CpuState> {
 public:
  std::unique_ptr<StateVector> new_state(const ParticleStore& s) override {
    if (s.precision() == Precision::Float)
      return std::make_unique<CpuState<float>>(s.dim(), s.size());
    return std::make_unique<CpuState<double>>(s.dim(), s.size());
  }
  double rank_error_norm(const ParticleStore& s, const StateVector& y, int m, const double* e,
                         const StateVector* const* k, double atol, double rtol) override {
    return visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      using State = CpuState<Real>;
      const auto& base = element::as_state<State>(y, p.n);
      double worst = 0;
      for (int comp = 0; comp < 2 * decltype(p)::dim; ++comp) {
        const Real* kk[8];
        for (int i = 0; i < m; ++i) kk[i] = element::as_state<State>(*k[i], p.n).comp(comp);
        const Real* y0 = base.comp(comp);
        const Real* y1 = element::state_array(p, comp);
#pragma omp parallel for schedule(static) reduction(max : worst) if (p.n > kElementParallelMin)
        for (std::size_t j = 0; j < p.n; ++j) {
          double err = 0;
          for (int i = 0; i < m; ++i) err = std::fma(e[i], double(kk[i][j]), err);
          const double scale =
              atol + rtol * std::max(std::fabs(double(y0[j])), std::fabs(double(y1[j])));
          worst = std::max(worst, std::fabs(err) / scale);
        }
      }
      return worst;
    });
  }
  Reductions rank_reduce(const ParticleStore& s) override {
    return visit(s, [&](auto p) { return pardyn::reduce(p); });
  }
  double rank_kinetic_energy(const ParticleStore& s) override {
    return visit(s, [&](auto p) { return pardyn::kinetic(p); });
  }
};

}  // namespace

std::unique_ptr<BackendOps> make_cpu_ops() { return std::make_unique<CpuOps>(); }

BackendHandle make_backend(const std::string& name, std::string& note) {
  BackendHandle h;
  const bool want_cuda = name == "cuda";
  if (want_cuda || name == "auto") {
    const bool built = cuda::built_with_cuda();
    const bool device = built && cuda::device_count() > 0;
    if (want_cuda && !built)
      throw Error(
          "backend = \"cuda\" was asked for, but this pardyn was built without CUDA "
          "(no nvcc was found at build time); use backend = \"cpu\" or rebuild with CUDA");
    if (want_cuda && !device)
      throw Error(
          "backend = \"cuda\" but no CUDA device is visible (driver loaded? "
          "CUDA_VISIBLE_DEVICES?); use backend = \"cpu\" or \"auto\"");
    if (device) {
      const cuda::DeviceInfo d = cuda::device_info();
      char mem[32];
      std::snprintf(mem, sizeof mem, "%.1f GiB", double(d.total_memory) / (1024.0 * 1024 * 1024));
      h.backend = Backend::Cuda;
      h.memory = &cuda::device_memory();
      h.ops = cuda::make_ops();
      h.description = "cuda (GPU " + std::to_string(d.id) + ": " + d.name + ", sm_" +
                      std::to_string(d.cc_major) + std::to_string(d.cc_minor) + ", " +
                      std::to_string(d.multiprocessors) + " SMs, " + mem + ")";
      return h;
    }
    note = built ? "backend \"auto\": no CUDA device is visible, running on the CPU"
                 : "backend \"auto\": no CUDA backend in this build, running on the CPU";
  }
  h.backend = Backend::Cpu;
  h.memory = &host_memory();
  h.ops = make_cpu_ops();
  h.description = "cpu (OpenMP, " + std::to_string(omp_get_max_threads()) + " threads)";
  return h;
}

}  // namespace pardyn
