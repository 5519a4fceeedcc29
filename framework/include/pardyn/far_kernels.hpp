// SPDX-License-Identifier: BSD-3-Clause
// The far-field kernels of pardyn's long-range laws, written once: the gravity and log laws, the
// long-range part of soft_gas, and expression laws with `long_range = { kernel = ... }` use them.
// Each gives pair() (per unit mass of i, at s = r^2 + soft2) and far() (evaluator.hpp's far-field
// form: phi(s) and its first three derivatives in s, U_ij = m_i m_j phi(s)).
//
//   Gravity:   phi(s) = -G s^-1/2                       (3D Newton; the gravity law)
//   Logarithm: phi(s) = G/2 (ln s - ln r0^2)            (2D Newton; the log law, soft_gas's ln r)
#pragma once

#include <type_traits>

#include "pardyn/math.hpp"

namespace pardyn::far_kernels {

template <class Real>
struct Gravity {
  Real G;
  Gravity() = default;
  // log_r0_2 is the logarithm's; gravity has none.
  PARDYN_HD explicit Gravity(double g, double /*log_r0_2*/ = 0) : G(Real(g)) {}

  PARDYN_HD PARDYN_INLINE void far(Real s, Real& phi, Real& d1, Real& d2, Real& d3) const {
    const Real inv = inv_sqrt(s);
    const Real inv_s = inv * inv;
    phi = -G * inv;
    d1 = Real(0.5) * G * inv * inv_s;
    d2 = Real(-1.5) * d1 * inv_s;
    d3 = Real(-2.5) * d2 * inv_s;
  }
  // fdivr and e per unit mass of i, for a source of mass mj.
  PARDYN_HD PARDYN_INLINE void pair(Real s, Real mj, Real& fdivr, Real& e) const {
    const Real inv = inv_sqrt(s);
    const Real gm_inv = G * mj * inv;  // G m_j / r_soft
    e = -gm_inv;
    fdivr = -gm_inv * inv * inv;
  }
};

template <class Real>
struct Logarithm {
  Real G, log_r0_2;  // log_r0_2 = ln r0^2: where phi = 0
  Logarithm() = default;
  PARDYN_HD Logarithm(double g, double ln_r0_2) : G(Real(g)), log_r0_2(Real(ln_r0_2)) {}

  PARDYN_HD PARDYN_INLINE void far(Real s, Real& phi, Real& d1, Real& d2, Real& d3) const {
    const Real inv_s = reciprocal(s);
    phi = Real(0.5) * G * (ln(s) - log_r0_2);
    d1 = Real(0.5) * G * inv_s;
    d2 = -d1 * inv_s;
    d3 = Real(-2) * d2 * inv_s;
  }
  PARDYN_HD PARDYN_INLINE void pair(Real s, Real mj, Real& fdivr, Real& e) const {
    const Real gm = G * mj;
    fdivr = -gm * reciprocal(s);
    e = Real(0.5) * gm * (ln(s) - log_r0_2);
  }
};

template <class Real, bool Log>
using Kernel = std::conditional_t<Log, Logarithm<Real>, Gravity<Real>>;

}  // namespace pardyn::far_kernels
