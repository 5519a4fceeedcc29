// SPDX-License-Identifier: BSD-3-Clause
// uniform_field: a constant acceleration field acting on every particle (gravity near a surface).
//
//   a_i = g          F_i = m_i g          U_i = -m_i g . x_i
//
// Parameter: g (length/time^2), one value per axis, e.g. g = [0, -1] in 2D pulls towards -y. The
// energy is measured from the origin (x = 0). On a periodic axis a component of g drives a flow
// whose energy jumps when a particle wraps: put the field along a wall or open axis when energy
// should be conserved.
#pragma once

#include <string>

#include "pardyn/external_potential.hpp"
#include "pardyn/math.hpp"
#include "pardyn/registration.hpp"

namespace pardyn::potentials {

struct UniformField {
  struct Params {
    double g[3] = {0, 0, 0};
    static Params from(const ParamSet& p, const RunInfo& run) {
      const auto& g = p.reals("g");
      if (g.size() != std::size_t(run.dim))
        throw Error((p.context.empty() ? std::string("uniform_field") : p.context) + ": g has " +
                    std::to_string(g.size()) + " values but the run is " + std::to_string(run.dim) +
                    "D; give one value per axis, e.g. g = " +
                    (run.dim == 2 ? "[0.0, -1.0]" : "[0.0, 0.0, -1.0]"));
      Params q;
      for (std::size_t d = 0; d < g.size(); ++d) q.g[d] = g[d];
      return q;
    }
  };

  template <typename Real>
  struct Evaluator {
    static constexpr bool per_unit_mass = true;
    Real g[3];

    Evaluator(const Params& p, const Box&, int dim) {
      for (int d = 0; d < 3; ++d) g[d] = d < dim ? Real(p.g[d]) : Real(0);
    }

    PARDYN_HD PARDYN_INLINE void one(const Real (&x)[3], Real, int, Real (&f)[3], Real& e) const {
      f[0] = g[0];
      f[1] = g[1];
      f[2] = g[2];
      e = -fma(g[2], x[2], fma(g[1], x[1], g[0] * x[0]));
    }
  };

  static FactoryInfo info() {
    FactoryInfo f;
    f.name = "uniform_field";
    f.summary = "constant acceleration field (uniform gravity): a_i = g, U_i = -m_i g.x_i";
    f.doc =
        "Every particle feels the same acceleration g: a_i = g, F_i = m_i g, U_i = -m_i g . x_i\n"
        "(the energy's zero is at the origin). g has one value per axis. An external field: the\n"
        "scheme is not used and total momentum is not conserved. Combine it with [box] boundary =\n"
        "\"wall\" (and the `walls` potential for restitution) to keep particles in a container.\n"
        "Example (2D, downward): g = [0.0, -1.0].";
    f.dims = kDimAll;
    f.schema.reals("g", std::nullopt, "length/time^2",
                   "the acceleration, one value per axis (e.g. [0.0, -1.0] in 2D)", 2, 3);
    return f;
  }
};

}  // namespace pardyn::potentials
