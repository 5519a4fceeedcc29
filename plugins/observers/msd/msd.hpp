// SPDX-License-Identifier: BSD-3-Clause
// msd: the sums behind the mean-square displacement, on the store's backend (sum_over_index,
// reduce.hpp: bit-reproducible for any number of threads). Each particle's unwrapped position
// x + image L (L the box side on periodic axes, where pardyn counts the particle's wraps in its
// image numbers; box.hpp wrap_counting) is compared with its reference position, found by particle
// id (never by store index, which may change). Only the sums come to the host.
#pragma once

#include <cmath>
#include <cstdint>

#include "pardyn/particles.hpp"

namespace pardyn::plugins::msd {

// Particle types with a column of their own (0 .. kMaxTypes - 1).
constexpr int kMaxTypes = 64;
// The sums of an analysis, at most: dim + types + 1.
constexpr int kMaxSums = 3 + kMaxTypes + 1;

// Particle i's squared displacement from its reference, per axis (dx2[d]), with the unwrapped
// position x + image L; false when its id has no reference. One function for the CPU loop and the
// GPU kernel.
template <class View>
PARDYN_HD PARDYN_INLINE bool squared_displacement(const View& p, std::size_t i, const double* ref,
                                                  std::size_t ids, const double (&L)[3],
                                                  double (&dx2)[3]) {
  const std::int64_t id = p.id[i];
  if (id < 0 || std::size_t(id) >= ids) return false;
#if defined(__CUDA_ARCH__)
  if (isnan(ref[id])) return false;  // an id without a particle at the reference
#else
  if (std::isnan(ref[id])) return false;
#endif
  for (int d = 0; d < View::dim; ++d) {
    const double dx = double(p.x[d][i]) + double(p.image[d][i]) * L[d] -
                      ref[std::size_t(d) * ids + std::size_t(id)];
    dx2[d] = dx * dx;
  }
  return true;
}

// Adds particle i to the sums (Sums::v: acc[d], acc[dim + type], acc[dim + types] for an id
// without a reference). One body for the CPU loop and the GPU kernel.
template <class View>
PARDYN_HD PARDYN_INLINE void add_displacement(const View& p, std::size_t i, const double* ref,
                                              std::size_t ids, const double (&L)[3], int types,
                                              double* acc) {
  constexpr int Dim = View::dim;
  double dx2[3] = {0, 0, 0};
  if (!squared_displacement(p, i, ref, ids, L, dx2)) {
    acc[Dim + types] += 1;
    return;
  }
  double r2 = 0;
  for (int d = 0; d < Dim; ++d) {
    acc[d] += dx2[d];
    r2 += dx2[d];
  }
  const int t = p.type[i];
  if (t >= 0 && t < types) acc[Dim + t] += r2;
}

// The sums of one analysis (what sum_over_index adds up, reduce.hpp): v[d] (d < dim) the sum over
// particles of dx_d^2, v[dim + t] (t < types) the sum over particles of type t of |dx|^2,
// v[dim + types] the particles whose id has no reference (should be 0).
struct Sums {
  double v[kMaxSums] = {};
  PARDYN_HD PARDYN_INLINE void merge(const Sums& o) {
    for (int k = 0; k < kMaxSums; ++k) v[k] += o.v[k];
  }
};

// The displacement of particle i added to the sums: the functor of sum_over_index over the store's
// particles, on either backend. ref: the reference positions [d * ids + id] in the store's memory
// (unwrapped, double; NaN for an id without a particle); L[d]: the box side on periodic axes, 0 on
// the others.
template <class View>
struct Displacement {
  using Acc = Sums;
  View p;
  const double* ref;
  std::size_t ids;
  double L[3];
  int types;
  PARDYN_HD void operator()(std::size_t i, Sums& s) const {
    add_displacement(p, i, ref, ids, L, types, s.v);
  }
};

}  // namespace pardyn::plugins::msd
