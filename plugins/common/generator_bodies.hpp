// SPDX-License-Identifier: BSD-3-Clause
// What the generators of self-gravitating bodies (galaxy, plummer) share, written once:
//   random_direction(g, length, out)   a vector of the given length in an isotropic direction
//   to_centre_of_mass_frame(hp, comm)  the block moved to its centre-of-mass frame
// Host code; header-only, compiled into each plugin.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>

#include "pardyn/generator_support.hpp"

namespace pardyn::plugins {

// out = length * (a direction uniform on the unit sphere): cos(theta) uniform in [-1, 1), then phi
// uniform in [0, 2 pi), two draws from g in that order.
inline void random_direction(std::mt19937_64& g, double length, double out[3]) {
  const double cos_t = 2.0 * uniform01(g) - 1.0;
  const double sin_t = std::sqrt(std::max(0.0, 1.0 - cos_t * cos_t));
  const double phi = 2.0 * kPi * uniform01(g);
  out[0] = length * sin_t * std::cos(phi);
  out[1] = length * sin_t * std::sin(phi);
  out[2] = length * cos_t;
}

// Moves the particles to the frame of their centre of mass (centre of mass at the origin, zero
// momentum). A random sample leaves its centre of mass off the origin and a net momentum that would
// make it drift; once both are removed the block's `offset` and `velocity` are exact. The sums are
// exact (ExactSum) over the whole block (comm: the ranks that hold its other particles), so every
// cut of the block gives the same particles.
inline void to_centre_of_mass_frame(HostParticles& hp, Comm* comm) {
  const std::size_t n = hp.size();
  ExactSum sums[7];  // m x, m v per axis; m
  for (std::size_t i = 0; i < n; ++i) {
    for (int d = 0; d < hp.dim; ++d) {
      sums[d].add(hp.mass[i] * hp.x[d][i]);
      sums[3 + d].add(hp.mass[i] * hp.v[d][i]);
    }
    sums[6].add(hp.mass[i]);
  }
  reduce(comm, sums, 7);
  const double mtot = sums[6].value();
  for (int d = 0; d < hp.dim; ++d) {
    const double cx = sums[d].value() / mtot, cv = sums[3 + d].value() / mtot;
    for (std::size_t i = 0; i < n; ++i) {
      hp.x[d][i] -= cx;
      hp.v[d][i] -= cv;
    }
  }
}

}  // namespace pardyn::plugins
