// SPDX-License-Identifier: BSD-3-Clause
// soft_gas: seed 003's "three-potential" real-gas model (Balen 2016): a softened ln r attraction
// everywhere plus, inside a critical radius, a 1/r^2 repulsion and a strong ln r attraction.
//
// With d = x_i - x_j, s = r^2 + eps^2 (per unit mass of i, as the seed, whose masses are 1):
//   a_i += -a  m_j d / s                               always         (seed: A d/s, A = -a < 0)
//   a_i += (B / s^2 - a2 / s) m_j d                    if s < rc^2    (seed: B d/s^2 + A2 d/s)
// The pair energy consistent with these forces, shifted so that it is continuous at s = rc^2 and
// zero there:
//   U_ij = m_i m_j [ (a/2) ln(s/rc^2) + H(rc^2 - s) ( (B/2)(1/s - 1/rc^2) + (a2/2) ln(s/rc^2) ) ]
// The shift changes no force. The force itself jumps at s = rc^2 (by m_j (a2/rc^2 - B/rc^4) d): the
// seed's on/off switch, which costs some energy conservation when pairs cross it.
//
// The well: inside rc the net force vanishes at s* = B / (a + a2), where
//   U*/(m_i m_j) = ((a + a2)/2) (ln y + 1 - y),  y = s*/rc^2 < 1  (negative: a well),
// at r* = sqrt(s* - eps^2). Defaults (reduced units, diameter ~ 1): a = 0.01, a2 = 2.99, B = 3,
// rc = 2, eps = 0.1: s* = 1, r* = 0.995, y = 1/4, U* = -0.9544 (unit masses); U = 0 at r = 0.614
// and at the switch r = 1.9975; U(0) = +140.6.
//
// Long range (no cut-off). The far-field form is the long-range term alone, exact for s >= rc^2
// (short2): phi(s) = (a/2) (ln s - ln rc^2), d1 = a/(2s), d2 = -a/(2s^2), d3 = a/s^3. The tree and
// the cell list's far zones treat every pair closer than sqrt(rc^2 - eps^2) exactly (Reach).
#pragma once

#include <cmath>

#include "pardyn/evaluator.hpp"
#include "pardyn/far_kernels.hpp"
#include "pardyn/math.hpp"
#include "pardyn/registration.hpp"

namespace pardyn::potentials {

struct SoftGas {
  struct Params {
    double attraction = 0.01, repulsion = 3.0, core_attraction = 2.99, rc = 2.0, eps = 0.1;
    static Params from(const ParamSet& p) {
      Params q{p.real("attraction"), p.real("repulsion"), p.real("core_attraction"), p.real("rc"),
               p.real("eps")};
      if (!(q.eps < q.rc))
        throw Error((p.context.empty() ? std::string("soft_gas") : p.context) +
                    ": eps must be smaller than rc (the short-range part acts where r^2 + eps^2 < "
                    "rc^2); lower eps or raise rc");
      return q;
    }
  };

  template <typename Real>
  struct Evaluator {
    static constexpr Range range = Range::ShortPlusFar;
    static constexpr Provides provides =
        Provides::Softening | Provides::PerUnitMass | Provides::FarField;
    Real soft2;   // eps^2: pair() and far() receive s = r^2 + eps^2
    Real short2;  // rc^2: for s >= short2 pair() equals the far-field form (far zones, tree)
    Real a, half_a, B, half_B, a2, half_a2, ln_rc2, inv_rc2;

    explicit Evaluator(const Params& p)
        : soft2(Real(p.eps * p.eps)),
          short2(Real(p.rc * p.rc)),
          a(Real(p.attraction)),
          half_a(Real(0.5 * p.attraction)),
          B(Real(p.repulsion)),
          half_B(Real(0.5 * p.repulsion)),
          a2(Real(p.core_attraction)),
          half_a2(Real(0.5 * p.core_attraction)),
          ln_rc2(Real(std::log(p.rc * p.rc))),
          inv_rc2(Real(1.0 / (p.rc * p.rc))) {}

    // phi(s) = (a/2) ln(s / rc^2) and its derivatives in s: the long-range term alone, the log
    // law's kernel (pardyn/far_kernels.hpp).
    PARDYN_HD PARDYN_INLINE void far(Real s, Real& phi, Real& d1, Real& d2, Real& d3) const {
      far_kernels::Logarithm<Real>{a, ln_rc2}.far(s, phi, d1, d2, d3);
    }

    PARDYN_HD PARDYN_INLINE void pair(Real s, Real /*mi*/, Real mj, int, int, Real& fdivr,
                                      Real& e) const {
      const Real inv_s = reciprocal(s);
      const Real l = ln(s) - ln_rc2;  // ln(s / rc^2)
      // Short-range part, masked (not branched) so that SIMD lanes and GPU threads stay together.
      const Real in = s < short2 ? Real(1) : Real(0);
      const Real f_short = fma(B, inv_s, -a2) * inv_s;
      const Real e_short = fma(half_B, inv_s - inv_rc2, half_a2 * l);
      fdivr = mj * fma(in, f_short, -a * inv_s);
      e = mj * fma(in, e_short, half_a * l);
    }
  };

  static FactoryInfo info() {
    FactoryInfo f;
    f.name = "soft_gas";
    f.summary =
        "Balen's (2016) real gas: ln r attraction + (inside rc) 1/r^2 repulsion and strong ln r";
    f.doc =
        "The three-potential model of R. Balen, 2016, \"Numerical simulations of a real gas on a\n"
        "graphics card\" (MSc thesis, University of Zagreb). With d = x_i - x_j and s = r^2 + "
        "eps^2:\n"
        "  a_i += -attraction m_j d / s                                   (always)\n"
        "  a_i += (repulsion / s^2 - core_attraction / s) m_j d            (only if s < rc^2)\n"
        "Energy, continuous and zero at s = rc^2 (a = attraction, B = repulsion, a2 = "
        "core_attraction):\n"
        "  U_ij = m_i m_j [ (a/2) ln(s/rc^2) + (s < rc^2) ((B/2)(1/s - 1/rc^2) + (a2/2) "
        "ln(s/rc^2)) ]\n"
        "The force jumps at s = rc^2 (Balen's switch). The well: s* = B / (a + a2),\n"
        "r* = sqrt(s* - eps^2), U* = m_i m_j ((a + a2)/2)(ln y + 1 - y), y = s*/rc^2. The "
        "defaults\n"
        "give r* = 0.995, U* = -0.954 (unit masses); U = 0 at r = 0.614 and r = 1.9975, U(0) = "
        "+140.6.\n"
        "Long range: scheme \"all_pairs\" (exact), or \"cell_list\" (far zones) and \"tree\", "
        "which\n"
        "approximate distant particles by the far-field form (the ln r term) and keep every pair\n"
        "closer than sqrt(rc^2 - eps^2) exact. 2D as in the thesis; 3D works the same way.\n"
        "Example: attraction = 0.01, repulsion = 3.0, core_attraction = 2.99, rc = 2.0, eps = 0.1.";
    f.dims = kDimAll;
    f.schema
        .real("attraction", 0.01, "energy/mass^2",
              "|A|: long-range ln r attraction, acts everywhere", 0.0)
        .real("repulsion", 3.0, "energy*length^2/mass^2", "B: 1/r^2 repulsion inside rc", 0.0)
        .real("core_attraction", 2.99, "energy/mass^2", "|A2|: strong ln r attraction inside rc",
              0.0)
        .real("rc", 2.0, "length",
              "critical radius: the short-range part acts where r^2+eps^2 < rc^2", 0.0,
              std::nullopt, true)
        .real("eps", 0.1, "length", "softening length", 0.0);
    return f;
  }
};

}  // namespace pardyn::potentials
