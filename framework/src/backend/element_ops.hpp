// SPDX-License-Identifier: BSD-3-Clause
// Internal to libpardyn, part of the backend seam: BackendOps' element-wise operations, each written
// once as a per-particle functor (for_each.hpp) and run by the loop of the backend. cpu_backend.cpp
// derives its operations from ElementOps<CpuLoop, CpuState> and cuda_backend.cu from
// ElementOps<CudaLoop, CudaState>; what stays per backend is the state vectors' storage and the
// reductions.
//
// Each functor loads all components of its particle before storing any, so that several loads are in
// flight on the GPU (the compiler cannot reorder them itself: the arrays might alias as far as it
// knows). mul_add() keeps each backend's rounding of v + a dt as it was (one FMA on the device).
#pragma once

#include <memory>

#include "boundary_ops.hpp"
#include "pardyn/box.hpp"
#include "pardyn/for_each.hpp"
#include "pardyn/backend_ops.hpp"

namespace pardyn::element {

// Below this many particles the CPU runs an element-wise loop (a kick, a drift, a scaling, a sum:
// a few nanoseconds per particle) on one thread. pardyn's OpenMP threads wait passively
// (cli/main.cpp: OMP_WAIT_POLICY=passive), so a parallel loop first wakes a sleeping thread, and
// that costs more than the loop saves below some 30,000 particles (on the 2-core VM: bench/RESULTS.md,
// "The 2D LJ liquid against LAMMPS at 0.70x"). Loops with more work per particle keep
// pardyn::kParallelMin (for_each.hpp) or a bound of their own.
inline constexpr std::size_t kElementParallelMin = 32768;

// y += dy dt on the Dim arrays y, dy of the store: a kick (v += a dt) or a drift (x += v dt).
template <class Real, int Dim>
struct Advance {
  static constexpr bool simd = true;
  Real* y[3];
  const Real* dy[3];
  Real dt;
  template <class View>
  static Advance kick(const View& p, Real dt) {
    return {{p.v[0], p.v[1], p.v[2]}, {p.a[0], p.a[1], p.a[2]}, dt};
  }
  template <class View>
  static Advance drift(const View& p, Real dt) {
    return {{p.x[0], p.x[1], p.x[2]}, {p.v[0], p.v[1], p.v[2]}, dt};
  }
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t i) const {
    Real a[Dim], b[Dim];
    for (int d = 0; d < Dim; ++d) a[d] = y[d][i], b[d] = dy[d][i];
    for (int d = 0; d < Dim; ++d) y[d][i] = mul_add(b[d], dt, a[d]);
  }
};

// v *= f
template <class Real, int Dim>
struct ScaleVelocities {
  static constexpr bool simd = true;
  ParticleView<Real, Dim> p;
  Real f;
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t i) const {
    Real v[Dim];
    for (int d = 0; d < Dim; ++d) v[d] = p.v[d][i];
    for (int d = 0; d < Dim; ++d) p.v[d][i] = v[d] * f;
  }
};

// Positions on periodic axes back into the box, counting the images.
template <class Real, int Dim>
struct WrapPeriodic {
  ParticleView<Real, Dim> p;
  Real lo[3], L[3], invL[3];
  bool periodic[3];
  WrapPeriodic(const ParticleView<Real, Dim>& view, const Box& box) : p(view) {
    for (int d = 0; d < 3; ++d) {
      periodic[d] = d < Dim && box.boundary[d] == Boundary::Periodic;
      // Rounded to Real the same way on every backend.
      lo[d] = periodic[d] ? Real(box.lo[d]) : Real(0);
      L[d] = periodic[d] ? Real(box.length(d)) : Real(0);
      invL[d] = periodic[d] ? Real(1.0 / box.length(d)) : Real(0);
    }
  }
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t i) const {
    for (int d = 0; d < Dim; ++d) {
      if (!periodic[d]) continue;  // the same for every particle: no divergence
      wrap_counting(p.x[d][i], p.image[d][i], lo[d], L[d], invL[d]);
    }
  }
};

// The Langevin velocity update (BackendOps::langevin).
template <class Real, int Dim>
struct Langevin {
  ParticleView<Real, Dim> p;
  double c1, T;
  std::uint64_t seed, step;
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t i) const {
    const Real m = p.mass[i];
    const std::int64_t id = p.id[i];
    for (int d = 0; d < Dim; ++d)
      p.v[d][i] = langevin_velocity(p.v[d][i], m, c1, T, seed, step, id, d);
  }
};

// (x, v) = y + sum_i c[i] k[i] for every component of one particle.
template <class Real, int Dim>
struct Combine {
  Real* out[2 * Dim];
  const Real* base[2 * Dim];
  const Real* k[8][2 * Dim];
  Real c[8];
  int m;
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t j) const {
    for (int comp = 0; comp < 2 * Dim; ++comp) {
      Real acc = base[comp][j];
      for (int i = 0; i < m; ++i) acc = fma(c[i], k[i][comp][j], acc);
      out[comp][j] = acc;
    }
  }
};

// The store's array behind state component c: positions first, then velocities.
template <class View>
auto* state_array(const View& p, int c) {
  return c < View::dim ? p.x[c] : p.v[c - View::dim];
}

template <class State>
const State& as_state(const StateVector& y, std::size_t n) {
  const auto* s = dynamic_cast<const State*>(&y);
  if (!s || s->n != n)
    throw Error("internal: a state vector of another backend, precision or size was used");
  return *s;
}

// The element-wise operations of a backend whose loop is Loop (Loop::run(n, f, parallel_min)) and
// whose state vectors are State<Real> (members n and `Real* comp(int c) const`, 2·dim arrays of n).
template <class Loop, template <class> class State>
class ElementOps : public BackendOps {
 public:
  void get_state(const ParticleStore& s, StateVector& y) override {
    visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      const auto& st = as_state<State<Real>>(y, p.n);
      for (int c = 0; c < 2 * decltype(p)::dim; ++c)
        s.memory().copy(st.comp(c), state_array(p, c), p.n * sizeof(Real));
    });
  }
  void set_state(ParticleStore& s, const StateVector& y) override {
    visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      const auto& st = as_state<State<Real>>(y, p.n);
      for (int c = 0; c < 2 * decltype(p)::dim; ++c)
        s.memory().copy(state_array(p, c), st.comp(c), p.n * sizeof(Real));
    });
  }
  void get_derivative(const ParticleStore& s, StateVector& k) override {
    visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      constexpr int Dim = decltype(p)::dim;
      const auto& st = as_state<State<Real>>(k, p.n);
      for (int d = 0; d < Dim; ++d) {
        s.memory().copy(st.comp(d), p.v[d], p.n * sizeof(Real));
        s.memory().copy(st.comp(Dim + d), p.a[d], p.n * sizeof(Real));
      }
    });
  }
  void set_combination(ParticleStore& s, const StateVector& y, int m, const double* c,
                       const StateVector* const* k) override {
    if (m < 0 || m > 8) throw Error("internal: set_combination takes at most 8 terms");
    visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      constexpr int Dim = decltype(p)::dim;
      Combine<Real, Dim> f{};
      const auto& base = as_state<State<Real>>(y, p.n);
      for (int comp = 0; comp < 2 * Dim; ++comp) {
        f.out[comp] = state_array(p, comp);
        f.base[comp] = base.comp(comp);
        for (int i = 0; i < m; ++i) f.k[i][comp] = as_state<State<Real>>(*k[i], p.n).comp(comp);
      }
      for (int i = 0; i < m; ++i) f.c[i] = Real(c[i]);
      f.m = m;
      Loop::run(p.n, f, kElementParallelMin);
    });
  }
  void kick(ParticleStore& s, double dt) override {
    visit(s, [&](auto p) {
      run(p, Advance<RealOf<decltype(p)>, decltype(p)::dim>::kick(p, real(p, dt)));
    });
  }
  void drift(ParticleStore& s, double dt) override {
    visit(s, [&](auto p) {
      run(p, Advance<RealOf<decltype(p)>, decltype(p)::dim>::drift(p, real(p, dt)));
    });
  }
  void scale_velocities(ParticleStore& s, double f) override {
    visit(s, [&](auto p) {
      run(p, ScaleVelocities<RealOf<decltype(p)>, decltype(p)::dim>{p, real(p, f)});
    });
  }
  void zero_forces(ParticleStore& s, bool energy, bool virial) override {
    visit(s, [&](auto p) {
      const std::size_t b = p.n * sizeof(typename decltype(p)::real);
      for (int d = 0; d < decltype(p)::dim; ++d) s.memory().fill_zero(p.a[d], b);
      if (energy) s.memory().fill_zero(p.epot, b);
      if (virial) s.memory().fill_zero(p.virial, b);
    });
  }
  void wrap_periodic(ParticleStore& s, const Box& box) override {
    visit(s, [&](auto p) {
      if (!box.any_periodic(decltype(p)::dim)) return;
      run(p, WrapPeriodic<RealOf<decltype(p)>, decltype(p)::dim>(p, box));
    });
  }
  void langevin(ParticleStore& s, double c1, double T, std::uint64_t seed,
                std::uint64_t step) override {
    visit(s, [&](auto p) {
      // Each particle draws dim normals: worth the team at fewer particles.
      Loop::run(p.n, Langevin<RealOf<decltype(p)>, decltype(p)::dim>{p, c1, T, seed, step},
                kParallelMin / 8);
    });
  }

 private:
  template <class View>
  using RealOf = typename View::real;
  template <class View>
  static RealOf<View> real(const View&, double x) {
    return RealOf<View>(x);
  }
  template <class View, class F>
  static void run(const View& p, const F& f) {
    Loop::run(p.n, f, kElementParallelMin);
  }
};

}  // namespace pardyn::element
