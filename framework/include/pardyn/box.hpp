// SPDX-License-Identifier: BSD-3-Clause
// The simulation box: bounds and a boundary condition per axis.
#pragma once

#include <cmath>
#include <cstdint>

#include "pardyn/core.hpp"

namespace pardyn {

enum class Boundary { Open, Periodic, Wall };

inline const char* to_string(Boundary b) {
  switch (b) {
    case Boundary::Periodic: return "periodic";
    case Boundary::Wall: return "wall";
    default: return "open";
  }
}

struct Box {
  double lo[3] = {0, 0, 0};
  double hi[3] = {1, 1, 1};
  Boundary boundary[3] = {Boundary::Open, Boundary::Open, Boundary::Open};

  double length(int d) const { return hi[d] - lo[d]; }
  // Whether one of the first dim axes has boundary b.
  bool any_axis(Boundary b, int dim) const {
    for (int d = 0; d < dim; ++d)
      if (boundary[d] == b) return true;
    return false;
  }
  bool any_periodic(int dim) const { return any_axis(Boundary::Periodic, dim); }
};

// A coordinate mapped back into [lo, lo + L) on a periodic axis: x - L floor((x - lo) / L), as one
// fused multiply-add, identically on every backend.
template <typename Real>
PARDYN_HD PARDYN_INLINE Real wrap_into_box(Real x, Real lo, Real L, Real invL) {
#if defined(__CUDA_ARCH__)
  return fma(-L, floor((x - lo) * invL), x);
#else
  return std::fma(-L, std::floor((x - lo) * invL), x);
#endif
}

// wrap_into_box that also counts the wrap in the particle's image number (image += the number of box
// lengths taken off), so that x + image * L is the unwrapped coordinate. The same arithmetic as
// wrap_into_box: a particle that stays inside is left exactly as it was. A non-finite coordinate
// leaves the image alone; a count beyond +-2^30 is clamped there.
template <typename Real>
PARDYN_HD PARDYN_INLINE void wrap_counting(Real& x, std::int32_t& image, Real lo, Real L,
                                           Real invL) {
#if defined(__CUDA_ARCH__)
  const Real k = floor((x - lo) * invL);
  if (!(k >= Real(1) || k <= Real(-1))) return;  // inside, or NaN
  x = fma(-L, k, x);
  const double limit = 1073741824.0;
  const double sum = fmin(fmax(double(image) + double(k), -limit), limit);
#else
  const Real k = std::floor((x - lo) * invL);
  if (!(k >= Real(1) || k <= Real(-1))) return;
  x = std::fma(-L, k, x);
  const double limit = 1073741824.0;
  const double sum = std::fmin(std::fmax(double(image) + double(k), -limit), limit);
#endif
  image = std::int32_t(sum);
}

// What a kernel needs of the box, in the run's precision: lengths of periodic axes (0 for the others).
template <typename Real>
struct PeriodicImage {
  Real L[3];
  Real invL[3];

  static PeriodicImage make(const Box& b) {
    PeriodicImage p{};
    for (int d = 0; d < 3; ++d) {
      bool per = b.boundary[d] == Boundary::Periodic;
      p.L[d] = per ? Real(b.length(d)) : Real(0);
      p.invL[d] = per ? Real(1.0 / b.length(d)) : Real(0);
    }
    return p;
  }
  // Minimum-image separation along axis d; a no-op on open axes (L = 0).
  PARDYN_HD Real wrap(Real dx, int d) const { return dx - L[d] * nearbyint_(dx * invL[d]); }

 private:
  PARDYN_HD static Real nearbyint_(Real x) {
#if defined(__CUDA_ARCH__)
    return rint(x);
#else
    return std::nearbyint(x);
#endif
  }
};

}  // namespace pardyn
