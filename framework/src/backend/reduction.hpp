// SPDX-License-Identifier: BSD-3-Clause
// The sums over particles behind Reductions (mass, energies, virial, momentum, angular momentum,
// mass moment, max |a|, finiteness), accumulated per particle with compensated sums in double. One
// definition for every backend: each accumulates its particles into ParticleSums and merges the
// partial sums in a fixed order.
#pragma once

#include <cmath>
#include <cstddef>

#include "pardyn/compensated.hpp"
#include "pardyn/core.hpp"
#include "pardyn/backend_ops.hpp"

namespace pardyn {

struct ParticleSums {
  enum {
    kMass,
    kKin,
    kPot,
    kVir,
    kMom,
    kAng = kMom + 3,
    kMm = kAng + 3,
    kImg = kMm + 3,
    kSums = kImg + 3
  };
  CompensatedSum s[kSums];
  double max_a2 = 0;
  int finite = 1;

  template <class View>
  PARDYN_HD PARDYN_INLINE void add_particle(const View& p, std::size_t i) {
    constexpr int Dim = View::dim;
    const double m = p.mass[i];
    double x[3] = {0, 0, 0}, v[3] = {0, 0, 0}, a2 = 0, v2 = 0;
    for (int d = 0; d < Dim; ++d) {
      x[d] = p.x[d][i];
      v[d] = p.v[d][i];
      const double a = p.a[d][i];
      a2 += a * a;
      v2 += v[d] * v[d];
    }
#if defined(__CUDA_ARCH__)
    if (!isfinite(x[0] + x[1] + x[2] + v2 + a2)) finite = 0;
#else
    if (!std::isfinite(x[0] + x[1] + x[2] + v2 + a2)) finite = 0;
#endif
    max_a2 = fmax(max_a2, a2);  // fmax ignores NaN; the finite flag catches it
    s[kMass].add(m);
    s[kKin].add(0.5 * m * v2);
    s[kPot].add(double(p.epot[i]));
    s[kVir].add(double(p.virial[i]));
    for (int d = 0; d < Dim; ++d) {
      s[kMom + d].add(m * v[d]);
      s[kMm + d].add(m * x[d]);
      if (p.image[d]) s[kImg + d].add(m * double(p.image[d][i]));
    }
    // L = sum m x × v (2D: only the z component)
    s[kAng + 2].add(m * (x[0] * v[1] - x[1] * v[0]));
    if (Dim == 3) {
      s[kAng + 0].add(m * (x[1] * v[2] - x[2] * v[1]));
      s[kAng + 1].add(m * (x[2] * v[0] - x[0] * v[2]));
    }
  }

  PARDYN_HD PARDYN_INLINE void merge(const ParticleSums& o) {
    for (int k = 0; k < kSums; ++k) s[k].add(o.s[k]);
    max_a2 = fmax(max_a2, o.max_a2);
    finite = finite & o.finite;
  }

  Reductions result(std::size_t n) const {
    Reductions r;
    r.n = n;
    r.mass = s[kMass].value();
    r.kinetic = s[kKin].value();
    r.potential = s[kPot].value();
    r.virial = s[kVir].value();
    for (int d = 0; d < 3; ++d) {
      r.momentum[d] = s[kMom + d].value();
      r.angular_momentum[d] = s[kAng + d].value();
      r.mass_moment[d] = s[kMm + d].value();
      r.image_moment[d] = s[kImg + d].value();
    }
    r.max_accel = std::sqrt(max_a2);
    r.finite = finite && std::isfinite(r.kinetic) && std::isfinite(r.potential);
    return r;
  }
};

}  // namespace pardyn
