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
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "pardyn/compensated.hpp"
#include "pardyn/generator_support.hpp"
#include "pardyn/plugin_export.hpp"

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

  HostParticles generate(const GenerateContext& ctx) override {
    check_dim(ctx.dim);
    if (!ctx.rng) throw Error("internal: galaxy generator called without a random generator");
    std::mt19937_64& rng = *ctx.rng;
    const int dim = ctx.dim;
    const bool central = central_fraction_ > 0;
    const std::size_t stars = std::size_t(count_);
    const std::size_t first = central ? 1 : 0;  // index of the first star
    const std::size_t n = stars + first;

    HostParticles hp(dim);
    hp.resize(n);
    std::fill(hp.type.begin(), hp.type.end(), 0);
    for (int d = 0; d < dim; ++d) {
      std::fill(hp.x[d].begin(), hp.x[d].end(), 0.0);
      std::fill(hp.v[d].begin(), hp.v[d].end(), 0.0);
    }
    const double m_central = central_fraction_ * total_mass_;
    const double m_star = (1.0 - central_fraction_) * total_mass_ / double(stars);
    if (central) {
      hp.mass[0] = m_central;
      hp.type[0] = std::int32_t(central_type_);
    }

    for (std::size_t i = first; i < n; ++i) {
      hp.mass[i] = m_star;
      if (dim == 3) {
        const double r = radius_ * std::cbrt(uniform01(rng));
        const double cos_t = 2.0 * uniform01(rng) - 1.0;
        const double sin_t = std::sqrt(std::max(0.0, 1.0 - cos_t * cos_t));
        const double phi = 2.0 * kPi * uniform01(rng);
        hp.x[0][i] = r * sin_t * std::cos(phi);
        hp.x[1][i] = r * sin_t * std::sin(phi);
        hp.x[2][i] = r * cos_t * thickness_;
      } else {
        const double r = radius_ * std::sqrt(uniform01(rng));
        const double phi = 2.0 * kPi * uniform01(rng);
        hp.x[0][i] = r * std::cos(phi);
        hp.x[1][i] = r * std::sin(phi);
      }
    }

    // Enclosed mass by rank: the stars sorted by distance from the centre.
    std::vector<double> r2(n, 0.0);
    for (std::size_t i = first; i < n; ++i)
      for (int d = 0; d < dim; ++d) r2[i] += hp.x[d][i] * hp.x[d][i];
    std::vector<std::size_t> order(stars);
    std::iota(order.begin(), order.end(), first);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return r2[a] < r2[b]; });
    for (std::size_t rank = 0; rank < stars; ++rank) {
      const std::size_t i = order[rank];
      const double enclosed = (central ? m_central : 0.0) + m_star * double(rank);
      const double rho2 = hp.x[0][i] * hp.x[0][i] + hp.x[1][i] * hp.x[1][i];
      if (rho2 == 0 || enclosed == 0)
        continue;  // on the axis, or the innermost star without a core
      const double soft = r2[i] + eps_ * eps_;
      const double speed = std::sqrt(G_ * enclosed * rho2 / (soft * std::sqrt(soft)));
      const double rho = std::sqrt(rho2);
      hp.v[0][i] = -double(spin_) * speed * hp.x[1][i] / rho;
      hp.v[1][i] = double(spin_) * speed * hp.x[0][i] / rho;
    }

    if (dim == 3 && tilt_deg_ != 0) {
      const double t = tilt_deg_ * kPi / 180.0, c = std::cos(t), s = std::sin(t);
      for (std::size_t i = 0; i < n; ++i) {
        rotate_x(hp.x[1][i], hp.x[2][i], c, s);
        rotate_x(hp.v[1][i], hp.v[2][i], c, s);
      }
    }
    to_centre_of_mass_frame(hp);
    return hp;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw Error(context_ + ": " + what); }
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

  // The random star positions leave a centre of mass O(R / sqrt(count)) off the central body and a
  // net momentum that would make the galaxy drift: the block's `offset` and `velocity` are then
  // exact.
  static void to_centre_of_mass_frame(HostParticles& hp) {
    const std::size_t n = hp.size();
    CompensatedSum mtot;
    for (std::size_t i = 0; i < n; ++i) mtot.add(hp.mass[i]);
    for (int d = 0; d < hp.dim; ++d) {
      CompensatedSum sx, sv;
      for (std::size_t i = 0; i < n; ++i) {
        sx.add(hp.mass[i] * hp.x[d][i]);
        sv.add(hp.mass[i] * hp.v[d][i]);
      }
      const double cx = sx.value() / mtot.value(), cv = sv.value() / mtot.value();
      for (std::size_t i = 0; i < n; ++i) {
        hp.x[d][i] -= cx;
        hp.v[d][i] -= cv;
      }
    }
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
