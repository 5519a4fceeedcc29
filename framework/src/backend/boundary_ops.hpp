// SPDX-License-Identifier: BSD-3-Clause
// Per-particle thermostat operations, written once for the CPU and the CUDA backends.
#pragma once

#include "pardyn/core.hpp"
#include "pardyn/random.hpp"

namespace pardyn {

// Langevin velocity update of one component (see BackendOps::langevin).
template <class Real>
PARDYN_HD PARDYN_INLINE Real langevin_velocity(Real v, Real m, double c1, double T,
                                               std::uint64_t seed, std::uint64_t step,
                                               std::int64_t id, int axis) {
  const double xi = normal_from_key(random_key(seed, step, std::uint64_t(id), std::uint64_t(axis)));
  const double sigma = sqrt((1.0 - c1 * c1) * T / double(m));
  return Real(c1 * double(v) + sigma * xi);
}

}  // namespace pardyn
