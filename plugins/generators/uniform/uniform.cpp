// SPDX-License-Identifier: BSD-3-Clause
// uniform: particles uniformly at random in a rectangular region (2D and 3D), optionally no two
// closer than min_spacing.
//
// Each candidate position is uniform in [region_lo, region_hi); with min_spacing = s > 0 a
// candidate closer than s to a particle kept before it is rejected (random sequential addition,
// random_addition.hpp: in the order of random keys, so that each rank of a parallel run makes its
// own part, the same particles on any number of ranks). Along an axis where the region spans a
// periodic box the distance is the minimum image. Random sequential addition jams: discs (spheres)
// of diameter s cannot cover more than about 54.7% (38.4%) of the plane (space) this way, so a
// request above that fails at once, and one that takes more than max_attempts * count candidates
// fails with the number it managed to place.
//
// Without min_spacing particle i draws from the stream of its chunk (GenerateContext::stream).
// Either way every range of the block is made on its own: each rank makes its part.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "pardyn/generator_support.hpp"
#include "pardyn/plugin_export.hpp"
#include "random_addition.hpp"

namespace pardyn::plugins {
namespace {

// Random sequential addition jamming coverages (Feder 1980; Torquato, Uche & Stillinger 2006).
constexpr double kJamming2D = 0.547;
constexpr double kJamming3D = 0.384;

// Volume of a ball of diameter s in dim dimensions.
double ball_volume(int dim, double s) {
  return dim == 2 ? kPi * s * s / 4.0 : kPi * s * s * s / 6.0;
}

// Where positions may lie along an axis of [lo, hi): in [lo, hi) in double and also after rounding
// to float (a float store): from the smallest float >= lo to the largest float < hi. A position
// drawn beyond them (within a float's rounding of the region's faces) is moved onto them, so that
// no particle rounds onto or past a face (a wall at hi, or a periodic face where it would be the
// image of one at lo). Regions too thin, or beyond float's range, keep [lo, hi) in double.
void safe_interval(double lo, double hi, double& a, double& b) {
  a = lo;
  b = std::nextafter(hi, -std::numeric_limits<double>::infinity());
  const double big = double(std::numeric_limits<float>::max());
  if (!(std::abs(lo) < big && std::abs(hi) < big)) return;
  float fa = float(lo), fb = float(hi);
  if (double(fa) < lo) fa = std::nextafter(fa, std::numeric_limits<float>::infinity());
  if (double(fb) >= hi) fb = std::nextafter(fb, -std::numeric_limits<float>::infinity());
  if (double(fa) <= double(fb)) a = double(fa), b = double(fb);
}

class Uniform final : public Generator {
 public:
  Uniform(const ParamSet& p, const RunInfo& run)
      : context_(p.context.empty() ? std::string("uniform") : p.context),
        count_(p.integer("count")),
        region_lo_(p.reals("region_lo")),
        region_hi_(p.reals("region_hi")),
        min_spacing_(p.real("min_spacing")),
        mass_(p.real("mass")),
        max_attempts_(p.integer("max_attempts")) {
    if (count_ < 1) fail("count = " + std::to_string(count_) + ": give at least 1 particle");
    if (!(mass_ > 0)) fail("mass must be > 0");
    if (!(min_spacing_ >= 0) || !std::isfinite(min_spacing_)) fail("min_spacing must be >= 0");
    if (max_attempts_ < 1) fail("max_attempts must be >= 1");
    check_packing(resolve_region(run.dim, run.box), run.dim);
  }

  // Any range of the block can be made (with a minimum spacing, collectively: random_addition).
  std::int64_t particles(const GenerateContext&) override { return count_; }

  HostParticles generate(const GenerateContext& ctx) override {
    if (!ctx.box) throw Error("internal: uniform generator called without a box");
    const int dim = ctx.dim;
    const Region region = resolve_region(dim, *ctx.box);
    check_packing(region, dim);

    const std::uint64_t n = std::uint64_t(count_);
    const std::uint64_t first = std::min(ctx.first, n), end = ctx.end(n);
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int d = 0; d < dim; ++d) safe_interval(region.lo[d], region.hi[d], lo[d], hi[d]);
    auto particles = [&] {
      HostParticles hp(dim);
      hp.resize(std::size_t(end - first));
      std::fill(hp.mass.begin(), hp.mass.end(), mass_);
      std::fill(hp.type.begin(), hp.type.end(), 0);
      for (int d = 0; d < dim; ++d) std::fill(hp.v[d].begin(), hp.v[d].end(), 0.0);
      return hp;
    };

    if (min_spacing_ == 0) {
      // Particle i: dim numbers from its chunk's stream.
      HostParticles hp = particles();
      for_each_particle(ctx, first, end, [&](std::uint64_t i, std::mt19937_64& rng, bool keep) {
        for (int d = 0; d < dim; ++d) {
          const double x = region.lo[d] + region.length(d) * uniform01(rng);
          if (keep) hp.x[d][std::size_t(i - first)] = std::clamp(x, lo[d], hi[d]);
        }
      });
      return hp;
    }

    AdditionSetup setup;
    setup.region = region;
    setup.dim = dim;
    setup.spacing = min_spacing_;
    setup.count = n;
    setup.max_attempts = double(max_attempts_);
    for (int d = 0; d < dim; ++d) setup.lo[d] = lo[d], setup.hi[d] = hi[d];
    const std::vector<double> x =
        random_addition(setup, ctx, first, end, [&](const AdditionStalled& s) {
          const double phi = double(s.kept) * ball_volume(dim, min_spacing_) / volume(region, dim);
          fail("placed " + std::to_string(s.kept) + " of " + std::to_string(n) +
               " particles after " + format_number(s.candidates, 12) +
               " random candidates (max_attempts = " + std::to_string(max_attempts_) +
               " per particle); at min_spacing = " + format_number(min_spacing_) +
               " that covers a packing fraction " + format_number(phi, 3) +
               " of the region, and random placement jams near " +
               format_number(dim == 2 ? kJamming2D : kJamming3D, 3) +
               "; lower min_spacing or count, enlarge the region, or raise max_attempts");
        });
    HostParticles hp = particles();  // after the candidates are freed: a lower peak of memory
    for (std::size_t i = 0; i < hp.size(); ++i)
      for (int d = 0; d < dim; ++d) hp.x[d][i] = x[i * std::size_t(dim) + std::size_t(d)];
    return hp;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw Error(context_ + ": " + what); }

  // The volume the particles' exclusion balls can occupy: a ball whose centre is inside the region
  // may stick out by s/2 on each side of an axis that does not wrap.
  double volume(const Region& r, int dim) const {
    double v = 1;
    for (int d = 0; d < dim; ++d) v *= r.length(d) + (r.wrap[d] ? 0.0 : min_spacing_);
    return v;
  }

  // Fails at once when the requested packing is beyond what random placement can reach.
  void check_packing(const Region& r, int dim) const {
    if (min_spacing_ == 0) return;
    const double ball = ball_volume(dim, min_spacing_);
    const double phi = double(count_) * ball / volume(r, dim);
    const double jam = dim == 2 ? kJamming2D : kJamming3D;
    if (phi > jam) {
      const double most = std::floor(jam * volume(r, dim) / ball);
      fail("count = " + std::to_string(count_) + " particles at min_spacing = " +
           format_number(min_spacing_) + " would cover a packing fraction " +
           format_number(phi, 3) + " of the region, but random placement jams near " +
           format_number(jam, 3) + " (at most about " + format_number(most, 12) +
           " particles); lower min_spacing or count, enlarge the region, or use generator "
           "\"lattice\" for dense packings");
    }
  }

  Region resolve_region(int dim, const Box& box) const {
    return pardyn::resolve_region(dim, box, region_lo_, region_hi_, context_);
  }

  std::string context_;
  std::int64_t count_;
  std::vector<double> region_lo_, region_hi_;
  double min_spacing_, mass_;
  std::int64_t max_attempts_;
};

FactoryInfo uniform_info() {
  FactoryInfo f;
  f.kind = PluginKind::Generator;
  f.name = "uniform";
  f.summary = "particles uniformly at random in a region, optionally with a minimum spacing";
  f.doc =
      "Positions uniform in [region_lo, region_hi) (default: the box), never on or past a face\n"
      "of the region in double or float; velocities zero (the block's `temperature` adds thermal\n"
      "ones). With min_spacing = s > 0 a candidate closer than s to a particle kept before it is\n"
      "rejected (random sequential addition), in the order of random keys so that each rank of a\n"
      "parallel run makes its part (the same particles on any number of ranks), at O(1) per\n"
      "candidate; where the region spans a periodic axis of the box, distances are minimum\n"
      "images. Random sequential addition jams at the packing fraction\n"
      "  2D: phi = N (pi s^2 / 4) / A = 0.547       3D: phi = N (pi s^3 / 6) / V = 0.384\n"
      "(A, V: the region grown by s/2 on each side of a non-periodic axis). A request above that\n"
      "is refused at once; close below it placement slows sharply, and after max_attempts * count\n"
      "candidates it stops with the number placed. For dense packings use `lattice` with a\n"
      "`temperature`. docs/generators.md says how the ranks share the work.";
  f.dims = kDimAll;
  f.precisions = kPrecisionAll;
  f.backends = kBackendAll;
  f.schema.integer("count", std::nullopt, "number of particles", 1, double(kMaxParticles))
      .reals("region_lo", std::vector<double>{}, "length",
             "lower corner of the region, one value per axis; empty = the box's lower corner", 0, 3)
      .reals("region_hi", std::vector<double>{}, "length",
             "upper corner of the region, one value per axis; empty = the box's upper corner", 0, 3)
      .real("min_spacing", 0.0, "length", "smallest distance between two particles; 0 = no limit",
            0.0)
      .real("mass", 1.0, "mass", "mass of each particle", 0.0, std::nullopt, true)
      .integer("max_attempts", std::int64_t(1000),
               "random candidates per particle, on average, before giving up", 1, 1e9);
  return f;
}

void register_uniform(Registrar& r) {
  r.add(uniform_info(), Factory<Generator>([](const ParamSet& p, const RunInfo& run) {
          return std::unique_ptr<Generator>(new Uniform(p, run));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_uniform)
