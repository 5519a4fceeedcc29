// SPDX-License-Identifier: BSD-3-Clause
// uniform: particles uniformly at random in a rectangular region (2D and 3D), optionally no two
// closer than min_spacing.
//
// Each candidate position is uniform in [region_lo, region_hi); with min_spacing = s > 0 a
// candidate closer than s to a particle already placed is rejected (random sequential addition).
// The check looks only at the 3^dim neighbouring cells of a grid whose cells are at least s wide,
// so it costs O(1) per candidate. Along an axis where the region spans a periodic box the distance
// is the minimum image. Random sequential addition jams: discs (spheres) of diameter s cannot cover
// more than about 54.7% (38.4%) of the plane (space) this way, so a request above that fails at
// once, and one that takes more than max_attempts * count candidates fails with the number it
// managed to place.
//
// Particle i draws from the stream of its chunk (GenerateContext::stream): without min_spacing any
// range of the block is made on its own (each rank of a parallel run makes its part); with
// min_spacing a candidate depends on every particle placed before it, so the block is made whole
// (on every rank: host memory for the whole block at start-up).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "pardyn/generator_support.hpp"
#include "pardyn/plugin_export.hpp"

namespace pardyn::plugins {
namespace {

// Random sequential addition jamming coverages (Feder 1980; Torquato, Uche & Stillinger 2006).
constexpr double kJamming2D = 0.547;
constexpr double kJamming3D = 0.384;

// Volume of a ball of diameter s in dim dimensions.
double ball_volume(int dim, double s) {
  return dim == 2 ? kPi * s * s / 4.0 : kPi * s * s * s / 6.0;
}

// Cell grid with linked lists of the particles placed so far. Each list node carries its position,
// so a neighbour costs one memory access: near jamming almost every candidate is rejected, and the
// random reads into a grid of millions of cells are what the placement spends its time on.
class Grid {
 public:
  Grid(const Region& r, int dim, double spacing, std::size_t count) : r_(r), dim_(dim) {
    // Cells at least `spacing` wide, but not (many) more cells than particles: for a tiny spacing
    // in a big region the grid would otherwise be mostly empty memory.
    const double max_cells = 4.0 * double(count) + 64.0;
    double side = spacing;
    for (;;) {
      double total = 1;
      for (int d = 0; d < dim_; ++d) {
        n_[d] = std::max<std::int64_t>(1, std::int64_t(std::floor(r_.length(d) / side)));
        total *= double(n_[d]);
      }
      if (total <= max_cells) break;
      side *= 1.25;
    }
    std::size_t cells = 1;
    for (int d = 0; d < dim_; ++d) {
      inv_side_[d] = double(n_[d]) / r_.length(d);
      cells *= std::size_t(n_[d]);
    }
    head_.assign(cells, -1);
    nodes_.reserve(count);
  }

  // Whether a particle at p has no neighbour closer than sqrt(s2).
  bool free(const double p[3], double s2) const {
    std::int64_t c[3] = {0, 0, 0};
    cell_of(p, c);
    // The candidate's own cell first: it holds the most likely conflict.
    const std::size_t own = flat(c);
    if (!cell_free(own, p, s2)) return false;
    // Neighbour cell coordinates along each axis, wrapped once here rather than per cell.
    std::size_t axis[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    int len[3] = {1, 1, 1};
    for (int d = 0; d < dim_; ++d) {
      len[d] = 0;
      if (n_[d] <= 3) {  // every cell of this axis is a neighbour (and none twice)
        for (std::int64_t i = 0; i < n_[d]; ++i) axis[d][len[d]++] = std::size_t(i);
        continue;
      }
      for (std::int64_t i = c[d] - 1; i <= c[d] + 1; ++i) {
        if (r_.wrap[d]) axis[d][len[d]++] = std::size_t((i + n_[d]) % n_[d]);
        else if (i >= 0 && i < n_[d]) axis[d][len[d]++] = std::size_t(i);
      }
    }
    for (int k = 0; k < len[2]; ++k)
      for (int j = 0; j < len[1]; ++j) {
        const std::size_t row = (axis[2][k] * std::size_t(n_[1]) + axis[1][j]) * std::size_t(n_[0]);
        for (int i = 0; i < len[0]; ++i) {
          const std::size_t f = row + axis[0][i];
          if (f != own && !cell_free(f, p, s2)) return false;
        }
      }
    return true;
  }

  void insert(const double p[3]) {
    std::int64_t c[3] = {0, 0, 0};
    cell_of(p, c);
    const std::size_t f = flat(c);
    nodes_.push_back(Node{{p[0], p[1], p[2]}, head_[f]});
    head_[f] = std::int64_t(nodes_.size() - 1);
  }

 private:
  void cell_of(const double p[3], std::int64_t c[3]) const {
    for (int d = 0; d < dim_; ++d)
      c[d] = std::clamp<std::int64_t>(std::int64_t((p[d] - r_.lo[d]) * inv_side_[d]), 0, n_[d] - 1);
  }
  // Row-major index of in-range cell coordinates (x fastest).
  std::size_t flat(const std::int64_t c[3]) const {
    std::size_t f = 0;
    for (int d = dim_ - 1; d >= 0; --d) f = f * std::size_t(n_[d]) + std::size_t(c[d]);
    return f;
  }

  bool cell_free(std::size_t f, const double p[3], double s2) const {
    for (std::int64_t q = head_[f]; q >= 0; q = nodes_[std::size_t(q)].next) {
      const Node& node = nodes_[std::size_t(q)];
      double r2 = 0;
      for (int d = 0; d < dim_; ++d) {
        double dx = p[d] - node.x[d];
        if (r_.wrap[d]) dx -= r_.length(d) * std::nearbyint(dx / r_.length(d));
        r2 += dx * dx;
      }
      if (r2 < s2) return false;
    }
    return true;
  }

  struct Node {
    double x[3];
    std::int64_t next;  // previous particle placed in the same cell, -1 at the end
  };
  Region r_;
  int dim_;
  std::int64_t n_[3] = {1, 1, 1};
  double inv_side_[3] = {0, 0, 0};
  std::vector<std::int64_t> head_;
  std::vector<Node> nodes_;
};

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

  // Without a minimum spacing each particle is drawn on its own: any range of the block can be made.
  // With one, a candidate depends on every particle placed before it: the block is made whole.
  std::int64_t particles(const GenerateContext&) override {
    return min_spacing_ == 0 ? count_ : -1;
  }

  HostParticles generate(const GenerateContext& ctx) override {
    if (!ctx.box) throw Error("internal: uniform generator called without a box");
    const int dim = ctx.dim;
    const Region region = resolve_region(dim, *ctx.box);
    check_packing(region, dim);

    const std::uint64_t n = std::uint64_t(count_);
    // Without a spacing: particles [first, end); with one: the whole block.
    const std::uint64_t first = min_spacing_ == 0 ? std::min(ctx.first, n) : 0;
    const std::uint64_t end = min_spacing_ == 0 ? ctx.end(n) : n;
    HostParticles hp(dim);
    hp.resize(std::size_t(end - first));
    std::fill(hp.mass.begin(), hp.mass.end(), mass_);
    std::fill(hp.type.begin(), hp.type.end(), 0);
    for (int d = 0; d < dim; ++d) std::fill(hp.v[d].begin(), hp.v[d].end(), 0.0);

    auto draw = [&](std::mt19937_64& rng, double p[3]) {
      for (int d = 0; d < dim; ++d) {
        p[d] = region.lo[d] + region.length(d) * uniform01(rng);
        // lo + L u can round up to hi; keep the half-open interval so periodic images stay
        // distinct.
        if (p[d] >= region.hi[d]) p[d] = region.lo[d];
      }
    };

    if (min_spacing_ == 0) {
      // Particle i: dim numbers from its chunk's stream.
      for_each_particle(ctx, first, end, [&](std::uint64_t i, std::mt19937_64& rng, bool keep) {
        double p[3];
        draw(rng, p);
        if (keep)
          for (int d = 0; d < dim; ++d) hp.x[d][std::size_t(i - first)] = p[d];
      });
      return hp;
    }

    // Random sequential addition: particle i's candidates come from its chunk's stream, until one
    // is free.
    Grid grid(region, dim, min_spacing_, std::size_t(n));
    const double s2 = min_spacing_ * min_spacing_;
    const double budget = double(max_attempts_) * double(n);
    double attempts = 0;
    for_each_particle(ctx, 0, n, [&](std::uint64_t i, std::mt19937_64& rng, bool) {
      double p[3] = {0, 0, 0};
      for (;;) {
        if (attempts >= budget) {
          const double phi = double(i) * ball_volume(dim, min_spacing_) / volume(region, dim);
          fail("placed " + std::to_string(i) + " of " + std::to_string(n) + " particles after " +
               format_number(attempts, 12) +
               " random candidates (max_attempts = " + std::to_string(max_attempts_) +
               " per particle); at min_spacing = " + format_number(min_spacing_) +
               " that covers a packing fraction " + format_number(phi, 3) +
               " of the region, and random placement jams near " +
               format_number(dim == 2 ? kJamming2D : kJamming3D, 3) +
               "; lower min_spacing or count, enlarge the region, or raise max_attempts");
        }
        attempts += 1;
        draw(rng, p);
        if (grid.free(p, s2)) break;
      }
      for (int d = 0; d < dim; ++d) hp.x[d][std::size_t(i)] = p[d];
      grid.insert(p);
    });
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
      "Positions uniform in [region_lo, region_hi) (default: the box); velocities zero (the\n"
      "block's `temperature` adds thermal ones). With min_spacing = s > 0 a candidate closer than "
      "s\n"
      "to a particle already placed is rejected (random sequential addition), checked on a cell "
      "grid\n"
      "at O(1) per candidate; where the region spans a periodic axis of the box, distances are\n"
      "minimum images. Random sequential addition jams at the packing fraction\n"
      "  2D: phi = N (pi s^2 / 4) / A = 0.547       3D: phi = N (pi s^3 / 6) / V = 0.384\n"
      "(A, V: the region grown by s/2 on each side of a non-periodic axis). A request above that "
      "is\n"
      "refused at once; close below it placement slows sharply (a million spheres at phi = 0.3 "
      "take\n"
      "tens of seconds), and after max_attempts * count candidates it stops with the number "
      "placed.\n"
      "For dense packings use `lattice` with a `temperature`.";
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
