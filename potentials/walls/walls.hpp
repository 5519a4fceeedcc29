// SPDX-License-Identifier: BSD-3-Clause
// walls: the box faces of every axis whose [box] boundary is "wall" as hard reflecting walls (with
// a restitution coefficient), and optionally a soft wall force near them.
//
// Hard walls (through the framework's boundary hooks, Potential::before_drift and
// Potential::apply_boundaries; the framework makes this potential with its defaults for a box with
// "wall" axes and no walls potential):
//   mode = "mirror": after the drift, a particle beyond a face is mirrored back into the box and its
//                    normal velocity becomes -restitution v_n;
//   mode = "flip":   seed 003's a-priori method: before the drift, a particle whose x + v dt would
//                    cross a face gets v_n = -restitution v_n (mirroring stays on as a backstop).
//   restitution < 1 removes kinetic energy at every bounce (seed 003 drives condensation this way).
//
// Soft walls, with h the distance of a particle from a wall face (each wall axis has two):
//   soft = "lj93":     U(h) = eps [ (2/15) (sigma/h)^9 - (sigma/h)^3 ] - U(rcut)   for h < rcut
//                      F    = eps [ (6/5) (sigma/h)^9 - 3 (sigma/h)^3 ] / h   (away from the face)
//                      rcut = 0 means rcut = (2/5)^(1/6) sigma, the minimum: purely repulsive, with
//                      a force that vanishes continuously there.
//   soft = "harmonic": U(h) = (k/2) (sigma - h)^2, F = k (sigma - h)   for h < sigma.
//   strength is eps (lj93, energy) or k (harmonic, energy/length^2). Energies are per particle (not
//   per unit mass).
#pragma once

#include <cmath>
#include <string>

#include "pardyn/external_potential.hpp"
#include "pardyn/for_each.hpp"
#include "pardyn/math.hpp"
#include "pardyn/registration.hpp"

namespace pardyn::potentials {

// Hard reflecting walls on the box faces of every axis whose boundary is "wall".
struct HardWalls {
  enum class Mode {
    Mirror,  // after the drift: a particle beyond a wall is mirrored back, its normal velocity flipped
    Flip     // before the drift (seed 003's a-priori method): a particle whose drift would cross a
             // wall has its normal velocity flipped instead; Mirror stays on as a backstop
  };
  Mode mode = Mode::Mirror;
  double restitution = 1.0;  // normal velocity after a bounce = -restitution * before (1: elastic)
};

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

// One particle against every wall axis: flip_axis before a drift (Flip), reflect_axis after it.
template <class Real, int Dim, bool Flip>
struct WallBounce {
  ParticleView<Real, Dim> p;
  Real lo[3], hi[3];
  bool wall[3];
  Real e, dt;
  PARDYN_HD PARDYN_INLINE void operator()(std::size_t i) const {
    for (int d = 0; d < Dim; ++d) {
      if (!wall[d]) continue;  // the same for every particle: no divergence
      if constexpr (Flip) flip_axis(p.x[d][i], p.v[d][i], lo[d], hi[d], e, dt);
      else reflect_axis(p.x[d][i], p.v[d][i], lo[d], hi[d], e);
    }
  }
};

struct SoftWalls {
  enum Kind { None = 0, Lj93 = 1, Harmonic = 2 };

  struct Params {
    int kind = None;
    double strength = 1.0, sigma = 1.0, rcut = 0.0;  // rcut: resolved (lj93), sigma (harmonic)
    HardWalls hard;

    static Params from(const ParamSet& p, const RunInfo&) {
      Params q;
      const std::string& soft = p.string("soft");
      q.kind = soft == "lj93" ? Lj93 : soft == "harmonic" ? Harmonic : None;
      q.strength = p.real("strength");
      q.sigma = p.real("sigma");
      q.rcut = p.real("rcut");
      if (q.kind == Lj93 && q.rcut == 0) q.rcut = std::pow(0.4, 1.0 / 6.0) * q.sigma;
      if (q.kind == Harmonic) q.rcut = q.sigma;
      q.hard.mode = p.string("mode") == "flip" ? HardWalls::Mode::Flip : HardWalls::Mode::Mirror;
      q.hard.restitution = p.real("restitution");
      return q;
    }
  };

  template <typename Real>
  struct Evaluator {
    Real lo[3], hi[3];
    int wall[3];  // 1 on axes whose boundary is "wall"
    int kind;
    Real strength, sigma, rcut, shift;

    Evaluator(const Params& p, const Box& box, int dim)
        : kind(p.kind),
          strength(Real(p.strength)),
          sigma(Real(p.sigma)),
          rcut(Real(p.rcut)),
          shift(0) {
      for (int d = 0; d < 3; ++d) {
        lo[d] = Real(box.lo[d]);
        hi[d] = Real(box.hi[d]);
        wall[d] = d < dim && box.boundary[d] == Boundary::Wall;
      }
      if (kind == Lj93) {
        const double s3 = std::pow(p.sigma / p.rcut, 3);
        shift = Real(p.strength * (2.0 / 15.0 * s3 * s3 * s3 - s3));
      }
    }

    // The energy of a particle at distance h from one face and the force pushing it away from it.
    PARDYN_HD PARDYN_INLINE void face(Real h, Real& push, Real& e) const {
      if (!(h < rcut)) {
        push = e = Real(0);
        return;
      }
      if (kind == Lj93) {
        const Real ih = reciprocal(h);
        const Real s = sigma * ih, s3 = s * s * s, s9 = s3 * s3 * s3;
        e = strength * fma(Real(2) / Real(15), s9, -s3) - shift;
        push = strength * fma(Real(1.2), s9, Real(-3) * s3) * ih;
      } else {
        const Real depth = rcut - h;
        e = Real(0.5) * strength * depth * depth;
        push = strength * depth;
      }
    }

    PARDYN_HD PARDYN_INLINE void one(const Real (&x)[3], Real, int, Real (&f)[3], Real& e) const {
      if (kind == None) return;
      for (int d = 0; d < 3; ++d) {
        if (!wall[d]) continue;
        Real push, u;
        face(x[d] - lo[d], push, u);
        f[d] += push;
        e += u;
        face(hi[d] - x[d], push, u);
        f[d] -= push;
        e += u;
      }
    }
  };

  static FactoryInfo info() {
    FactoryInfo f;
    f.name = "walls";
    f.summary =
        "hard reflecting walls on the \"wall\" faces of [box] (restitution), optional soft walls";
    f.doc =
        "Acts on every axis whose [box] boundary is \"wall\" (required). Hard walls:\n"
        "  mode = \"mirror\"  a particle that crossed a face is mirrored back, v_n -> -restitution "
        "v_n\n"
        "  mode = \"flip\"    a-priori (Balen 2016): v_n -> -restitution v_n before a drift that "
        "would\n"
        "                   cross a face (mirroring stays as a backstop)\n"
        "restitution = 1 is elastic; below 1 each bounce removes kinetic energy (drives "
        "condensation).\n"
        "Optional soft walls, h = distance from a face, force pushing away from it:\n"
        "  soft = \"lj93\"      U = strength [(2/15)(sigma/h)^9 - (sigma/h)^3] - U(rcut) for h < "
        "rcut;\n"
        "                     rcut = 0: (2/5)^(1/6) sigma, the minimum (purely repulsive)\n"
        "  soft = \"harmonic\"  U = strength/2 (sigma - h)^2 for h < sigma\n"
        "The hard walls stay at the faces. Without a walls potential, \"wall\" boundaries are "
        "elastic\n"
        "mirror walls. Example: mode = \"flip\", restitution = 0.98.";
    f.dims = kDimAll;
    f.schema
        .choice("mode", std::string("mirror"), {"mirror", "flip"},
                "hard-wall method: mirror after the drift, or a-priori velocity flip before it")
        .real("restitution", 1.0, "1", "normal velocity kept in a bounce (1: elastic)", 0.0, 1.0)
        .choice("soft", std::string("none"), {"none", "lj93", "harmonic"},
                "soft wall force near faces")
        .real("strength", 1.0, "energy (lj93), energy/length^2 (harmonic)",
              "soft wall strength: eps (lj93) or k (harmonic)", 0.0)
        .real("sigma", 1.0, "length", "soft wall length: sigma (lj93) or range (harmonic)", 0.0,
              std::nullopt, true)
        .real("rcut", 0.0, "length", "lj93 cut-off; 0 = (2/5)^(1/6) sigma (purely repulsive)", 0.0);
    return f;
  }
};

// The walls potential: the hard walls, on the framework's boundary hooks, plus the soft wall force
// when asked.
class Walls final : public Potential {
 public:
  explicit Walls(const SoftWalls::Params& p) : soft_(p), hard_(p.hard) {}
  bool supports(NeighbourhoodKind) const override { return true; }
  double cutoff() const override { return 0.0; }
  // The hard walls act through the boundary hooks, the soft ones on each particle alone: never a
  // pair law, so no scheme serves it (in a parallel run no all-pairs ring passes the particles
  // around for it).
  bool external() const override { return true; }
  void compute(ParticleStore& s, const Neighbourhood& nb, const ForceRequest& req) override {
    if (soft_.params().kind != SoftWalls::None) soft_.compute(s, nb, req);
  }
  bool enforces_boundaries() const override { return true; }
  void before_drift(ParticleStore& s, const Box& box, double dt) override {
    if (hard_.mode == HardWalls::Mode::Flip) bounce<true>(s, box, dt);
  }
  void apply_boundaries(ParticleStore& s, const Box& box) override { bounce<false>(s, box, 0.0); }
  std::string energy_note() const override {
    return hard_.restitution < 1 ? "the walls of \"walls\" (restitution < 1)" : "";
  }

 private:
  template <bool Flip>
  void bounce(ParticleStore& s, const Box& box, double dt) const {
    visit(s, [&](auto p) {
      using Real = typename decltype(p)::real;
      constexpr int Dim = decltype(p)::dim;
      WallBounce<Real, Dim, Flip> f{};
      f.p = p;
      bool any = false;
      for (int d = 0; d < 3; ++d) {
        f.wall[d] = d < Dim && box.boundary[d] == Boundary::Wall;
        f.lo[d] = Real(box.lo[d]);
        f.hi[d] = Real(box.hi[d]);
        any = any || f.wall[d];
      }
      f.e = Real(hard_.restitution);
      f.dt = Real(dt);
      if (p.n == 0 || !any) return;
      for_each_index(s.backend(), p.n, f);
    });
  }

  ExternalPotential<SoftWalls> soft_;
  HardWalls hard_;
};

}  // namespace pardyn::potentials
