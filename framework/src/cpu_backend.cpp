#include <omp.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "pardyn/backend.hpp"
#include "pardyn/reduction.hpp"
#include "pardyn/cuda.hpp"

namespace pardyn {

namespace {

// Below this many particles a loop runs on one thread: waking the team costs more than the work.
constexpr std::size_t kParallelMin = 16384;

template <class Real, int Dim>
void kick(const ParticleView<Real, Dim>& p, Real dt) {
  for (int d = 0; d < Dim; ++d) {
    Real* __restrict v = p.v[d];
    const Real* __restrict a = p.a[d];
#pragma omp parallel for simd schedule(static) if (p.n > kParallelMin)
    for (std::size_t i = 0; i < p.n; ++i) v[i] += a[i] * dt;
  }
}

template <class Real, int Dim>
void drift(const ParticleView<Real, Dim>& p, Real dt) {
  for (int d = 0; d < Dim; ++d) {
    Real* __restrict x = p.x[d];
    const Real* __restrict v = p.v[d];
#pragma omp parallel for simd schedule(static) if (p.n > kParallelMin)
    for (std::size_t i = 0; i < p.n; ++i) x[i] += v[i] * dt;
  }
}

// One accumulator per thread, merged in thread order: deterministic for a given thread count and
// accurate to a few ulp of the total.
template <class Real, int Dim>
Reductions reduce(const ParticleView<Real, Dim>& p) {
  std::vector<ParticleSums> parts(omp_get_max_threads());
#pragma omp parallel if (p.n > kParallelMin)
  {
    ParticleSums& s = parts[omp_get_thread_num()];
#pragma omp for schedule(static)
    for (std::size_t i = 0; i < p.n; ++i) s.add_particle(p, i);
  }
  ParticleSums total;
  for (const auto& s : parts) total.merge(s);
  return total.result(p.n);
}

class CpuOps final : public BackendOps {
public:
  void kick(ParticleStore& s, double dt) override {
    visit(s, [&](auto p) { pardyn::kick(p, typename decltype(p)::real(dt)); });
  }
  void drift(ParticleStore& s, double dt) override {
    visit(s, [&](auto p) { pardyn::drift(p, typename decltype(p)::real(dt)); });
  }
  void scale_velocities(ParticleStore& s, double f) override {
    visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      for (int d = 0; d < decltype(p)::dim; ++d) {
        Real* __restrict v = p.v[d];
#pragma omp parallel for simd schedule(static) if (p.n > kParallelMin)
        for (std::size_t i = 0; i < p.n; ++i) v[i] *= Real(f);
      }
    });
  }
  void zero_forces(ParticleStore& s, bool energy, bool virial) override {
    visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      const std::size_t b = p.n * sizeof(Real);
      for (int d = 0; d < decltype(p)::dim; ++d) s.memory().fill_zero(p.a[d], b);
      if (energy) s.memory().fill_zero(p.epot, b);
      if (virial) s.memory().fill_zero(p.virial, b);
    });
  }
  void wrap_periodic(ParticleStore& s, const Box& box) override {
    visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      for (int d = 0; d < decltype(p)::dim; ++d) {
        if (box.boundary[d] != Boundary::Periodic) continue;
        const Real lo = Real(box.lo[d]), L = Real(box.length(d)), invL = Real(1.0 / box.length(d));
        Real* __restrict x = p.x[d];
#pragma omp parallel for simd schedule(static) if (p.n > kParallelMin)
        for (std::size_t i = 0; i < p.n; ++i) x[i] -= L * std::floor((x[i] - lo) * invL);
      }
    });
  }
  Reductions reduce(const ParticleStore& s) override {
    return visit(s, [&](auto p) { return pardyn::reduce(p); });
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
      throw Error("backend = \"cuda\" was asked for, but this pardyn was built without CUDA "
                  "(no nvcc was found at build time); use backend = \"cpu\" or rebuild with CUDA");
    if (want_cuda && !device)
      throw Error("backend = \"cuda\" but no CUDA device is visible (driver loaded? "
                  "CUDA_VISIBLE_DEVICES?); use backend = \"cpu\" or \"auto\"");
    if (device) {
      const cuda::DeviceInfo d = cuda::device_info();
      char mem[32];
      std::snprintf(mem, sizeof mem, "%.1f GiB", double(d.total_memory) / (1024.0 * 1024 * 1024));
      h.backend = Backend::Cuda;
      h.memory = &cuda::device_memory();
      h.ops = cuda::make_ops();
      h.description = "cuda (" + d.name + ", sm_" + std::to_string(d.cc_major) +
                      std::to_string(d.cc_minor) + ", " + std::to_string(d.multiprocessors) +
                      " SMs, " + mem + ")";
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
