// Per-particle boundary and thermostat operations, written once for the CPU and the CUDA backends.
#pragma once

#include "pardyn/core.hpp"
#include "pardyn/random.hpp"

namespace pardyn {

// Hard wall on one axis after a drift: a coordinate beyond [lo, hi] is mirrored back into the box and
// the velocity component points inwards, scaled by the restitution e. A particle that crossed the
// whole box in one step (a blown-up run) is still put inside: it lands on the far face.
template <class Real>
PARDYN_HD PARDYN_INLINE void reflect_axis(Real& x, Real& v, Real lo, Real hi, Real e) {
  if (x < lo) {
    x = lo + (lo - x);
    v = e * (v < Real(0) ? -v : v);
    if (x > hi) x = hi;
  } else if (x > hi) {
    x = hi - (x - hi);
    v = -e * (v > Real(0) ? v : -v);
    if (x < lo) x = lo;
  }
}

// Seed 003's a-priori wall: if the drift of dt would take the particle beyond a face it moves
// towards, its velocity component is reversed (and scaled by e) before the drift.
template <class Real>
PARDYN_HD PARDYN_INLINE void flip_axis(Real x, Real& v, Real lo, Real hi, Real e, Real dt) {
  const Real next = x + v * dt;
  if ((next < lo && v < Real(0)) || (next > hi && v > Real(0))) v = -e * v;
}

// Langevin velocity update of one component (see BackendOps::langevin).
template <class Real>
PARDYN_HD PARDYN_INLINE Real langevin_velocity(Real v, Real m, double c1, double T, std::uint64_t seed,
                                               std::uint64_t step, std::int64_t id, int axis) {
  const double xi = normal_from_key(random_key(seed, step, std::uint64_t(id), std::uint64_t(axis)));
  const double sigma = sqrt((1.0 - c1 * c1) * T / double(m));
  return Real(c1 * double(v) + sigma * xi);
}

}  // namespace pardyn
