// SPDX-License-Identifier: BSD-3-Clause
// BackendOps: the element-wise operations on the particle store (kick, drift, state vectors, the
// Langevin update) and the reductions over every particle of the run (Reductions), implemented once
// per backend: integrators, modifiers and analyses written against them run on the CPU and the GPU.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/backend_ops.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "pardyn/box.hpp"
#include "pardyn/comm.hpp"
#include "pardyn/core.hpp"
#include "pardyn/particles.hpp"

namespace pardyn {

// Sums over all particles, in double with compensated summation (see compensated.hpp).
struct Reductions {
  std::size_t n = 0;
  double mass = 0;
  double kinetic = 0;
  double potential = 0;
  double virial = 0;
  double momentum[3] = {0, 0, 0};
  double angular_momentum[3] = {0, 0, 0};  // 2D: only [2] (L_z) is used
  double mass_moment[3] = {0, 0, 0};       // sum m x (centre of mass = mass_moment / mass)
  double image_moment[3] = {0, 0, 0};      // sum m image: the unwrapped sum m x adds this times L
  double max_accel = 0;                    // max |a|
  bool finite = true;                      // no NaN/Inf in positions, velocities, accelerations
};

// Particle-shaped vectors for multi-stage integrators: one value per particle and component of the
// state (x, v), i.e. 2·dim arrays of N values in the store's precision, in the backend's memory.
class StateVector {
 public:
  virtual ~StateVector() = default;
};

// Element-wise operations on the particle store, implemented once per backend. Integrators and
// modifiers are written against these so that the same plugin runs on the CPU and the GPU.
//
// In a parallel run each rank's store holds only its own particles. The reductions a plugin acts on
// (reduce, kinetic_energy, error_norm) are therefore taken over every particle of the run, summed
// (or maximised) over the ranks, so that a thermostat or an adaptive step acts on the run's value
// and every rank acts alike; they are collective: every rank calls them together, as it does from
// Integrator::step and Modifier::apply. What a rank holds alone is named as such (rank_*).
class BackendOps {
 public:
  virtual ~BackendOps() = default;
  // --- state vectors (multi-stage integrators) ---
  virtual std::unique_ptr<StateVector> new_state(const ParticleStore& s) = 0;
  virtual void get_state(const ParticleStore& s, StateVector& y) = 0;       // y = (x, v)
  virtual void set_state(ParticleStore& s, const StateVector& y) = 0;       // (x, v) = y
  virtual void get_derivative(const ParticleStore& s, StateVector& k) = 0;  // k = (v, a)
  // (x, v) = y + sum_i c[i] k[i], for m <= 8 terms.
  virtual void set_combination(ParticleStore& s, const StateVector& y, int m, const double* c,
                               const StateVector* const* k) = 0;
  // --- element-wise ---
  virtual void kick(ParticleStore& s, double dt) = 0;   // v += a dt
  virtual void drift(ParticleStore& s, double dt) = 0;  // x += v dt
  virtual void scale_velocities(ParticleStore& s, double factor) = 0;
  virtual void zero_forces(ParticleStore& s, bool energy, bool virial) = 0;
  // Maps positions on periodic axes back into the box.
  virtual void wrap_periodic(ParticleStore& s, const Box& box) = 0;
  // --- thermostats ---
  // Langevin (Ornstein-Uhlenbeck) velocity update: v = c1 v + sqrt((1 - c1^2) T / m) xi, xi a
  // standard normal from a counter-based generator keyed by (seed, step, particle id, axis): the same
  // numbers on every backend and thread count.
  virtual void langevin(ParticleStore& s, double c1, double T, std::uint64_t seed,
                        std::uint64_t step) = 0;

  // --- reductions over every particle of the run (all ranks; collective) ---
  Reductions reduce(const ParticleStore& s);
  // The kinetic energy alone (sum m v^2 / 2, in double): what a thermostat needs at every step,
  // without the other sums of reduce().
  double kinetic_energy(const ParticleStore& s);
  // The scaled error of an embedded Runge-Kutta pair: the largest, over particles and components,
  // of |sum_i e[i] k[i]| / (atol + rtol max(|y|, |(x, v) of the store|)).
  double error_norm(const ParticleStore& s, const StateVector& y, int m, const double* e,
                    const StateVector* const* k, double atol, double rtol);

  // --- the same over this rank's particles alone (what each backend implements) ---
  virtual Reductions rank_reduce(const ParticleStore& s) = 0;
  virtual double rank_kinetic_energy(const ParticleStore& s) { return rank_reduce(s).kinetic; }
  virtual double rank_error_norm(const ParticleStore& s, const StateVector& y, int m,
                                 const double* e, const StateVector* const* k, double atol,
                                 double rtol) = 0;

  // The ranks the reductions run over, set by the framework (null: this process alone).
  Comm* comm() const { return comm_; }
  void set_comm(Comm* comm) { comm_ = comm; }

 private:
  Comm* comm_ = nullptr;
};

// Adds a rank's sums to the other ranks' (in place, on every rank; collective). Nothing without a
// communicator.
inline void sum_over_ranks(Reductions& r, Comm* comm) {
  if (!comm) return;
  double v[17] = {double(r.n), r.mass, r.kinetic, r.potential, r.virial};
  for (int d = 0; d < 3; ++d) {
    v[5 + d] = r.momentum[d];
    v[8 + d] = r.angular_momentum[d];
    v[11 + d] = r.mass_moment[d];
    v[14 + d] = r.image_moment[d];
  }
  comm->sum(v, 17);
  double m[2] = {r.max_accel, r.finite ? 0.0 : 1.0};
  comm->max(m, 2);
  r.n = std::size_t(std::llround(v[0]));
  r.mass = v[1], r.kinetic = v[2], r.potential = v[3], r.virial = v[4];
  for (int d = 0; d < 3; ++d) {
    r.momentum[d] = v[5 + d];
    r.angular_momentum[d] = v[8 + d];
    r.mass_moment[d] = v[11 + d];
    r.image_moment[d] = v[14 + d];
  }
  r.max_accel = m[0];
  r.finite = m[1] == 0.0;
}

inline Reductions BackendOps::reduce(const ParticleStore& s) {
  Reductions r = rank_reduce(s);
  sum_over_ranks(r, comm_);
  return r;
}

inline double BackendOps::kinetic_energy(const ParticleStore& s) {
  double k = rank_kinetic_energy(s);
  if (comm_) comm_->sum(&k, 1);
  return k;
}

inline double BackendOps::error_norm(const ParticleStore& s, const StateVector& y, int m,
                                     const double* e, const StateVector* const* k, double atol,
                                     double rtol) {
  double worst = rank_error_norm(s, y, m, e, k, atol, rtol);
  if (comm_) comm_->max(&worst, 1);
  return worst;
}

}  // namespace pardyn
