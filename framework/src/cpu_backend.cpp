#include <omp.h>

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <vector>

#include "pardyn/backend.hpp"
#include "pardyn/boundary_ops.hpp"
#include "pardyn/reduction.hpp"
#include "pardyn/cuda.hpp"

namespace pardyn {

namespace {

// Below this many particles a loop runs on one thread: waking the team costs more than the work.
constexpr std::size_t kParallelMin = 4096;

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

// One accumulator per thread (Acc: add(view, i), merge(other)), merged in thread order:
// deterministic for a given thread count and accurate to a few ulp of the total.
template <class Acc, class View>
Acc sum_particles(const View& p) {
  std::vector<Acc> parts(omp_get_max_threads());
#pragma omp parallel if (p.n > kParallelMin)
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
  Real* comp(int c) { return data.data() + std::size_t(c) * n; }
  const Real* comp(int c) const { return data.data() + std::size_t(c) * n; }
  int dim;
  std::size_t n;
  std::vector<Real> data;
};

template <class Real>
const CpuState<Real>& as_state(const StateVector& y, std::size_t n) {
  const auto* s = dynamic_cast<const CpuState<Real>*>(&y);
  if (!s || s->n != n)
    throw Error("internal: a state vector of another backend, precision or size was used");
  return *s;
}
template <class Real>
CpuState<Real>& as_state(StateVector& y, std::size_t n) {
  return const_cast<CpuState<Real>&>(as_state<Real>(static_cast<const StateVector&>(y), n));
}

// The store's array behind state component c: positions first, then velocities.
template <class View>
auto* state_array(const View& p, int c) {
  return c < View::dim ? p.x[c] : p.v[c - View::dim];
}

class CpuOps final : public BackendOps {
public:
  std::unique_ptr<StateVector> new_state(const ParticleStore& s) override {
    if (s.precision() == Precision::Float)
      return std::make_unique<CpuState<float>>(s.dim(), s.size());
    return std::make_unique<CpuState<double>>(s.dim(), s.size());
  }
  void get_state(const ParticleStore& s, StateVector& y) override {
    visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      auto& st = as_state<Real>(y, p.n);
      for (int c = 0; c < 2 * decltype(p)::dim; ++c)
        std::copy(state_array(p, c), state_array(p, c) + p.n, st.comp(c));
    });
  }
  void set_state(ParticleStore& s, const StateVector& y) override {
    visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      const auto& st = as_state<Real>(y, p.n);
      for (int c = 0; c < 2 * decltype(p)::dim; ++c)
        std::copy(st.comp(c), st.comp(c) + p.n, state_array(p, c));
    });
  }
  void get_derivative(const ParticleStore& s, StateVector& k) override {
    visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      constexpr int Dim = decltype(p)::dim;
      auto& st = as_state<Real>(k, p.n);
      for (int d = 0; d < Dim; ++d) {
        std::copy(p.v[d], p.v[d] + p.n, st.comp(d));
        std::copy(p.a[d], p.a[d] + p.n, st.comp(Dim + d));
      }
    });
  }
  void set_combination(ParticleStore& s, const StateVector& y, int m, const double* c,
                       const StateVector* const* k) override {
    if (m < 0 || m > 8) throw Error("internal: set_combination takes at most 8 terms");
    visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      const auto& base = as_state<Real>(y, p.n);
      const Real* kk[8];
      Real cc[8];
      for (int comp = 0; comp < 2 * decltype(p)::dim; ++comp) {
        for (int i = 0; i < m; ++i) {
          kk[i] = as_state<Real>(*k[i], p.n).comp(comp);
          cc[i] = Real(c[i]);
        }
        const Real* __restrict y0 = base.comp(comp);
        Real* __restrict out = state_array(p, comp);
#pragma omp parallel for schedule(static) if (p.n > kParallelMin)
        for (std::size_t j = 0; j < p.n; ++j) {
          Real acc = y0[j];
          for (int i = 0; i < m; ++i) acc = std::fma(cc[i], kk[i][j], acc);
          out[j] = acc;
        }
      }
    });
  }
  double error_norm(const ParticleStore& s, const StateVector& y, int m, const double* e,
                    const StateVector* const* k, double atol, double rtol) override {
    return visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      const auto& base = as_state<Real>(y, p.n);
      double worst = 0;
      for (int comp = 0; comp < 2 * decltype(p)::dim; ++comp) {
        const Real* kk[8];
        for (int i = 0; i < m; ++i) kk[i] = as_state<Real>(*k[i], p.n).comp(comp);
        const Real* y0 = base.comp(comp);
        const Real* y1 = state_array(p, comp);
#pragma omp parallel for schedule(static) reduction(max : worst) if (p.n > kParallelMin)
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
        std::int32_t* __restrict image = p.image[d];
#pragma omp parallel for schedule(static) if (p.n > kParallelMin)
        for (std::size_t i = 0; i < p.n; ++i) wrap_counting(x[i], image[i], lo, L, invL);
      }
    });
  }
  Reductions reduce(const ParticleStore& s) override {
    return visit(s, [&](auto p) { return pardyn::reduce(p); });
  }
  double kinetic_energy(const ParticleStore& s) override {
    return visit(s, [&](auto p) { return pardyn::kinetic(p); });
  }
  void reflect_walls(ParticleStore& s, const Box& box, double e) override {
    visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      for (int d = 0; d < decltype(p)::dim; ++d) {
        if (box.boundary[d] != Boundary::Wall) continue;
        const Real lo = Real(box.lo[d]), hi = Real(box.hi[d]);
        Real* __restrict x = p.x[d];
        Real* __restrict v = p.v[d];
#pragma omp parallel for schedule(static) if (p.n > kParallelMin)
        for (std::size_t i = 0; i < p.n; ++i) reflect_axis(x[i], v[i], lo, hi, Real(e));
      }
    });
  }
  void flip_at_walls(ParticleStore& s, const Box& box, double e, double dt) override {
    visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      for (int d = 0; d < decltype(p)::dim; ++d) {
        if (box.boundary[d] != Boundary::Wall) continue;
        const Real lo = Real(box.lo[d]), hi = Real(box.hi[d]);
        const Real* __restrict x = p.x[d];
        Real* __restrict v = p.v[d];
#pragma omp parallel for schedule(static) if (p.n > kParallelMin)
        for (std::size_t i = 0; i < p.n; ++i) flip_axis(x[i], v[i], lo, hi, Real(e), Real(dt));
      }
    });
  }
  void langevin(ParticleStore& s, double c1, double T, std::uint64_t seed,
                std::uint64_t step) override {
    visit(s, [&](auto p) {
      for (int d = 0; d < decltype(p)::dim; ++d) {
        auto* __restrict v = p.v[d];
#pragma omp parallel for schedule(static) if (p.n > kParallelMin / 8)
        for (std::size_t i = 0; i < p.n; ++i)
          v[i] = langevin_velocity(v[i], p.mass[i], c1, T, seed, step, p.id[i], d);
      }
    });
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
      h.description = "cuda (GPU " + std::to_string(d.id) + ": " + d.name + ", sm_" + std::to_string(d.cc_major) +
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
