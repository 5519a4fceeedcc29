// SPDX-License-Identifier: BSD-3-Clause
// plummer: a Plummer sphere in virial equilibrium (3D), sampled as in Aarseth, Henon & Wielen
// (1974).
//
//   density    rho(r)  = 3 M / (4 pi a^3) (1 + r^2/a^2)^(-5/2)
//   potential  phi(r)  = -G M / sqrt(r^2 + a^2)
//   mass       M(<r)   = M r^3 / (r^2 + a^2)^(3/2)
//   energies   K = 3 pi G M^2 / (64 a),  W = -3 pi G M^2 / (32 a),  so 2K / |W| = 1
//
// Radii invert the cumulative mass: X uniform in [0, f), r = a (X^(-2/3) - 1)^(-1/2). f =
// `truncation` is the fraction of the (infinite) model that is drawn, so no particle lands absurdly
// far out. Speeds: v = q v_esc(r) with v_esc(r) = sqrt(2 G M / a) (1 + r^2/a^2)^(-1/4) and q drawn
// from g(q) = q^2 (1 - q^2)^(7/2) by von Neumann rejection (max g = 0.0918 < 0.1). Position and
// velocity directions are isotropic and independent. The set is finally moved to its centre-of-mass
// frame.
//
// Particle i draws everything (the rejection loop included) from the stream of its chunk
// (GenerateContext::stream), and the centre of mass is an exact sum over the block: any range of
// the block is made on its own, the same particles as in the whole block (each rank of a parallel
// run makes its part).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "pardyn/generator_support.hpp"
#include "pardyn/plugin_export.hpp"

#include "../../common/generator_bodies.hpp"

namespace pardyn::plugins {
namespace {

class Plummer final : public Generator {
 public:
  Plummer(const ParamSet& p, const RunInfo& run)
      : context_(p.context.empty() ? std::string("plummer") : p.context),
        count_(p.integer("count")),
        total_mass_(p.real("total_mass")),
        a_(p.real("scale_radius")),
        G_(p.real("G")),
        truncation_(p.real("truncation")) {
    check_dim(run.dim);
    if (count_ < 1) fail("count = " + std::to_string(count_) + ": give at least 1 particle");
    if (!(total_mass_ > 0)) fail("total_mass must be > 0");
    if (!(a_ > 0)) fail("scale_radius must be > 0");
    if (!(G_ > 0)) fail("G must be > 0 (use the same G as the gravity potential)");
    if (!(truncation_ > 0 && truncation_ < 1))
      fail("truncation must lie in (0, 1): it is the fraction of the model's mass that is drawn");
  }

  std::int64_t particles(const GenerateContext&) override { return count_; }

  // Particles [first, end): each draws its radius, direction and speed (the rejection loop included)
  // from its chunk's stream; the centre of mass and the mean velocity are summed exactly over the
  // whole block (every rank's range).
  HostParticles generate(const GenerateContext& ctx) override {
    check_dim(ctx.dim);
    const std::uint64_t n = std::uint64_t(count_);
    const std::uint64_t first = std::min(ctx.first, n), end = ctx.end(n);
    HostParticles hp(3);
    hp.resize(std::size_t(end - first));
    const double m = total_mass_ / double(n);
    const double v_centre = std::sqrt(2.0 * G_ * total_mass_ / a_);  // escape speed at r = 0

    for_each_particle(ctx, first, end, [&](std::uint64_t i, std::mt19937_64& rng, bool keep) {
      // X = 0 gives r = 0 through pow(0, -2/3) = inf, which is the right limit.
      const double X = truncation_ * uniform01(rng);
      const double r = a_ / std::sqrt(std::pow(X, -2.0 / 3.0) - 1.0);
      double pos[3];
      random_direction(rng, r, pos);

      double q = 0, y = 0;
      do {
        q = uniform01(rng);
        y = 0.1 * uniform01(rng);
      } while (y > q * q * std::pow(1.0 - q * q, 3.5));
      const double v_esc = v_centre * std::pow(1.0 + (r * r) / (a_ * a_), -0.25);
      double vel[3];
      random_direction(rng, q * v_esc, vel);
      if (!keep) return;
      const std::size_t k = std::size_t(i - first);
      for (int d = 0; d < 3; ++d) {
        hp.x[d][k] = pos[d];
        hp.v[d][k] = vel[d];
      }
      hp.mass[k] = m;
      hp.type[k] = 0;
    });
    to_centre_of_mass_frame(hp, ctx.comm);
    return hp;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw Error(context_ + ": " + what); }
  void check_dim(int dim) const {
    if (dim != 3)
      fail("a Plummer sphere is 3D but the run is " + std::to_string(dim) +
           "D; set dim = 3, or use generator \"galaxy\" or \"uniform\" in 2D");
  }

  std::string context_;
  std::int64_t count_;
  double total_mass_, a_, G_, truncation_;
};

FactoryInfo plummer_info() {
  FactoryInfo f;
  f.kind = PluginKind::Generator;
  f.name = "plummer";
  f.summary = "Plummer sphere in virial equilibrium (Aarseth, Henon & Wielen 1974), 3D";
  f.doc =
      "Plummer sphere of total mass M and scale radius a (3D):\n"
      "  density   rho(r) = 3 M / (4 pi a^3) (1 + r^2/a^2)^(-5/2)\n"
      "  potential phi(r) = -G M / sqrt(r^2 + a^2)\n"
      "  mass      M(<r)  = M r^3 / (r^2 + a^2)^(3/2)        (half-mass radius 1.3048 a)\n"
      "  energies  K = 3 pi G M^2 / (64 a),  W = -3 pi G M^2 / (32 a),  2K/|W| = 1\n"
      "Sampling (Aarseth, Henon & Wielen 1974): X uniform in [0, truncation),\n"
      "  r = a (X^(-2/3) - 1)^(-1/2)   (truncation 0.999 cuts the model at r = 38.7 a);\n"
      "  v = q v_esc(r),  v_esc(r) = sqrt(2 G M / a) (1 + r^2/a^2)^(-1/4),\n"
      "  q drawn from g(q) = q^2 (1 - q^2)^(7/2) by von Neumann rejection;\n"
      "isotropic directions, equal masses M / count. The set is then moved to its centre-of-mass\n"
      "frame (centre of mass at the origin, zero momentum): place and move it with the block's\n"
      "`offset` and `velocity`. The velocities are in equilibrium only under the same G as the\n"
      "gravity potential's: give both the same G, and keep the potential's softening eps << a.";
  f.dims = kDim3;
  f.precisions = kPrecisionAll;
  f.backends = kBackendAll;
  f.schema
      .integer("count", std::nullopt, "number of particles (equal masses total_mass / count)", 1,
               double(kMaxParticles))
      .real("total_mass", 1.0, "mass", "total mass M of the sphere", 0.0, std::nullopt, true)
      .real("scale_radius", 1.0, "length", "Plummer scale radius a (half-mass radius 1.3048 a)",
            0.0, std::nullopt, true)
      .real("G", 1.0, "length^3 mass^-1 time^-2",
            "gravitational constant for the velocities; must equal the gravity potential's G", 0.0,
            std::nullopt, true)
      .real("truncation", 0.999, "1",
            "fraction of the model's mass that is sampled; the outermost rest is cut off", 0.0,
            0.99999, true);
  return f;
}

void register_plummer(Registrar& r) {
  r.add(plummer_info(), Factory<Generator>([](const ParamSet& p, const RunInfo& run) {
          return std::unique_ptr<Generator>(new Plummer(p, run));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_plummer)
