// SPDX-License-Identifier: BSD-3-Clause
// galaxy: a central mass and a disk of stars on circular orbits around it (seed 001's initial
// conditions), in 2D and 3D.
//
//   central body  mass M_c = f M at the origin, at rest (f = central_fraction; none if f = 0)
//   stars         count of them, mass m = (1 - f) M / count each;
//                 3D: uniform in a sphere of radius R, then z scaled by `thickness` (an oblate
//                 disk); 2D: uniform in a disk of radius R
//   types         stars 0, the central body `central_type` (the framework adds the block's `type`)
//   velocity      v = spin * |v| * (z x rho_hat), |v|^2 = G M(<r) rho^2 / (r^2 + eps^2)^(3/2)
//                 M(<r) = M_c + m * (number of stars closer to the centre than r), r = |x|,
//                 rho = sqrt(x^2 + y^2) the distance from the rotation axis
//
// This is the circular speed in the field of the enclosed mass treated as a point (a spherical
// approximation, exact for a dominant central mass), softened the way the gravity potential with
// the same eps softens it; stars off the mid-plane feel no vertical support and oscillate through
// it. In 3D the disk is then tilted about the x axis by `tilt`. Finally the whole set is moved to
// its centre-of-mass frame, so the orbits are circular about the central body (or the centre of
// mass), not the origin.
//
// Star i draws its position from the stream of its chunk (GenerateContext::stream); the enclosed
// masses (count_before) and the centre of mass (ExactSum) are taken over the whole block: any range
// of the block is made on its own, the same particles as in the whole block (each rank of a
// parallel run makes its part).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "pardyn/generator_support.hpp"
#include "pardyn/plugin_export.hpp"

#include "../../common/generator_bodies.hpp"

namespace pardyn::plugins {
namespace {

class Galaxy final : public Generator {
 public:
  Galaxy(const ParamSet& p, const RunInfo& run)
      : context_(p.context.empty() ? std::string("galaxy") : p.context),
        count_(p.integer("count")),
        total_mass_(p.real("total_mass")),
        central_fraction_(p.real("central_fraction")),
        radius_(p.real("radius")),
        thickness_(p.real("thickness")),
        eps_(p.real("eps")),
        G_(p.real("G")),
        spin_(p.integer("spin")),
        tilt_deg_(p.real("tilt")),
        central_type_(p.integer("central_type")) {
    if (count_ < 1) fail("count = " + std::to_string(count_) + ": give at least 1 star");
    if (!(total_mass_ > 0)) fail("total_mass must be > 0");
    if (!(central_fraction_ >= 0 && central_fraction_ < 1))
      fail("central_fraction must lie in [0, 1): the stars need some mass (0 = no central body)");
    if (!(radius_ > 0)) fail("radius must be > 0");
    if (!(thickness_ > 0 && thickness_ <= 1)) fail("thickness must lie in (0, 1]");
    if (!(eps_ >= 0)) fail("eps must be >= 0");
    if (!(G_ > 0)) fail("G must be > 0 (use the same G as the gravity potential)");
    if (spin_ != 1 && spin_ != -1)
      fail("spin = " + std::to_string(spin_) +
           ": give +1 (counter-clockwise seen from +z) or -1 (clockwise)");
    if (central_type_ < 0) fail("central_type must be >= 0");
    check_dim(run.dim);
  }

  std::int64_t particles(const GenerateContext&) override {
    return count_ + (central_fraction_ > 0 ? 1 : 0);
  }

  // Particles [first, end) of the block (0: the central body, if any; then the stars). Each star
  // draws its position from its chunk's stream; its place in the order by distance from the centre
  // (the enclosed mass) and the centre of mass are taken over the whole block (every rank's range).
  HostParticles generate(const GenerateContext& ctx) override {
    check_dim(ctx.dim);
    const int dim = ctx.dim;
    const bool central = central_fraction_ > 0;
    const std::uint64_t stars = std::uint64_t(count_);
    const std::uint64_t n = stars + (central ? 1 : 0);
    const std::uint64_t first = std::min(ctx.first, n), end = ctx.end(n);

    HostParticles hp(dim);
    hp.resize(std::size_t(end - first));
    std::fill(hp.type.begin(), hp.type.end(), 0);
    for (int d = 0; d < dim; ++d) {
      std::fill(hp.x[d].begin(), hp.x[d].end(), 0.0);
      std::fill(hp.v[d].begin(), hp.v[d].end(), 0.0);
    }
    const double m_central = central_fraction_ * total_mass_;
    const double m_star = (1.0 - central_fraction_) * total_mass_ / double(stars);

    // This range's stars: their index in hp and their key in the order by distance.
    std::vector<std::size_t> mine;
    std::vector<OrderKey> keys;
    for_each_particle(ctx, first, end, [&](std::uint64_t i, std::mt19937_64& rng, bool keep) {
      const std::size_t k = std::size_t(i - first);
      if (central && i == 0) {  // the central body draws nothing
        if (keep) {
          hp.mass[k] = m_central;
          hp.type[k] = std::int32_t(central_type_);
        }
        return;
      }
      double x[3] = {0, 0, 0};
      draw_star(rng, dim, x);
      if (!keep) return;
      hp.mass[k] = m_star;
      double r2 = 0;
      for (int d = 0; d < dim; ++d) {
        hp.x[d][k] = x[d];
        r2 += x[d] * x[d];
      }
      mine.push_back(k);
      keys.push_back(OrderKey{r2, i});
    });

    // Enclosed mass by the star's place in the order by distance from the centre, over all stars.
    const std::vector<std::uint64_t> place = count_before(ctx.comm, keys);
    for (std::size_t s = 0; s < mine.size(); ++s) {
      const std::size_t i = mine[s];
      const double enclosed = (central ? m_central : 0.0) + m_star * double(place[s]);
      const double rho2 = hp.x[0][i] * hp.x[0][i] + hp.x[1][i] * hp.x[1][i];
      if (rho2 == 0 || enclosed == 0)
        continue;  // on the axis, or the innermost star without a core
      const double soft = keys[s].value + eps_ * eps_;
      const double speed = std::sqrt(G_ * enclosed * rho2 / (soft * std::sqrt(soft)));
      const double rho = std::sqrt(rho2);
      hp.v[0][i] = -double(spin_) * speed * hp.x[1][i] / rho;
      hp.v[1][i] = double(spin_) * speed * hp.x[0][i] / rho;
    }

    if (dim == 3 && tilt_deg_ != 0) {
      const double t = tilt_deg_ * kPi / 180.0, c = std::cos(t), s = std::sin(t);
      for (std::size_t i = 0; i < hp.size(); ++i) {
        rotate_x(hp.x[1][i], hp.x[2][i], c, s);
        rotate_x(hp.v[1][i], hp.v[2][i], c, s);
      }
    }
    to_centre_of_mass_frame(hp, ctx.comm);
    return hp;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw Error(context_ + ": " + what); }
  // A star's position, uniform in the disk (2D) or in the sphere flattened along z by thickness
  // (3D), from the star's stream.
  void draw_star(std::mt19937_64& rng, int dim, double (&x)[3]) const {
    if (dim == 3) {
      random_direction(rng, radius_ * std::cbrt(uniform01(rng)), x);
      x[2] *= thickness_;
    } else {
      const double r = radius_ * std::sqrt(uniform01(rng));
      const double phi = 2.0 * kPi * uniform01(rng);
      x[0] = r * std::cos(phi);
      x[1] = r * std::sin(phi);
    }
  }
  void check_dim(int dim) const {
    if (dim == 2 && tilt_deg_ != 0)
      fail("tilt = " + format_number(tilt_deg_) +
           " needs a 3D run (a 2D disk cannot be tilted); remove it or set dim = 3");
  }
  static void rotate_x(double& y, double& z, double c, double s) {
    const double y1 = c * y - s * z, z1 = s * y + c * z;
    y = y1;
    z = z1;
  }

  std::string context_;
  std::int64_t count_;
  double total_mass_, central_fraction_, radius_, thickness_, eps_, G_;
  std::int64_t spin_;
  double tilt_deg_;
  std::int64_t central_type_;
};

FactoryInfo galaxy_info() {
  FactoryInfo f;
  f.kind = PluginKind::Generator;
  f.name = "galaxy";
  f.summary = "central mass and a rotating disk of stars on circular orbits (after a Habr article)";
  f.doc =
      "A central body and a disk of `count` stars on circular orbits about it, after the Habr "
      "article\n"
      "\"The N-body problem, or how to blow up a galaxy without leaving the kitchen\":\n"
      "  central body  mass f M (f = central_fraction) at rest at the centre; none when f = 0\n"
      "  stars         mass (1 - f) M / count each; 3D: uniform in a sphere of radius R with z\n"
      "                scaled by `thickness`; 2D: uniform in a disk of radius R\n"
      "  velocity      v = spin |v| (z_hat x rho_hat),\n"
      "                |v|^2 = G M(<r) rho^2 / (r^2 + eps^2)^(3/2),\n"
      "                M(<r) = f M + (number of stars closer than r) (1 - f) M / count,\n"
      "                r = |x|, rho = sqrt(x^2 + y^2)  (mid-plane, eps = 0: v^2 = G M(<r) / r)\n"
      "Give G and eps the values of the gravity potential. The enclosed mass acts as a point "
      "(exact\n"
      "for a dominant central body); stars off the mid-plane have no vertical support and "
      "oscillate\n"
      "through it. In 3D the disk is then tilted by `tilt` degrees about the x axis, and the set "
      "is\n"
      "moved to its centre-of-mass frame (the central body recoils by O(R / sqrt(count)) (1 - "
      "f)).\n"
      "Particle 0 of the block is the central body, with type = block `type` + central_type; the\n"
      "stars have the block's `type`. The article used f = 0.999, 0.99 and 0.1; 0.5 grows long "
      "tidal\n"
      "tails. A collision: two [[particles]] blocks with generator = \"galaxy\", offset = [-R, 0, "
      "0] /\n"
      "[R, 0, 0] and velocity = [0, -u, 0] / [0, u, 0] (the article: u = v(R) / 3).";
  f.dims = kDimAll;
  f.precisions = kPrecisionAll;
  f.backends = kBackendAll;
  f.schema
      .integer("count", std::nullopt, "number of stars (the central body is extra)", 1,
               double(kMaxParticles - 1))
      .real("total_mass", 1.0, "mass", "mass M of the galaxy, central body and stars together", 0.0,
            std::nullopt, true)
      .real("central_fraction", 0.5, "1",
            "fraction f of total_mass in the central body; 0 = no central body", 0.0, 0.999999)
      .real("radius", 1.0, "length", "radius R of the stellar disk", 0.0, std::nullopt, true)
      .real("thickness", 0.3, "1", "3D: the disk's height over its radius (z scale); unused in 2D",
            0.0, 1.0, true)
      .real("eps", 0.0, "length",
            "softening for the circular speeds; give the gravity potential's eps", 0.0)
      .real("G", 1.0, "length^3 mass^-1 time^-2",
            "gravitational constant for the velocities; must equal the gravity potential's G", 0.0,
            std::nullopt, true)
      .integer("spin", std::int64_t(1),
               "sense of rotation: +1 counter-clockwise seen from +z, -1 clockwise", -1, 1)
      .real("tilt", 0.0, "degree", "3D: rotation of the disk about the x axis", -180.0, 180.0)
      .integer("central_type", std::int64_t(1),
               "type of the central body, added to the block's `type` (0 = that of the stars)", 0,
               1 << 20);
  return f;
}

void register_galaxy(Registrar& r) {
  r.add(galaxy_info(), Factory<Generator>([](const ParamSet& p, const RunInfo& run) {
          return std::unique_ptr<Generator>(new Galaxy(p, run));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_galaxy)
