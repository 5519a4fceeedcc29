// SPDX-License-Identifier: BSD-3-Clause
// lattice: particles on the sites of a regular lattice filling a rectangular region (2D and 3D).
//
// Kinds, with lattice constant a (`spacing`):
//   square     2D  cell a x a, 1 site           neighbours at a          rho = 1 / a^2
//   hexagonal  2D  cell a x sqrt(3) a, 2 sites  neighbours at a          rho = 2 / (sqrt(3) a^2)
//   sc         3D  cell a^3, 1 site             neighbours at a          rho = 1 / a^3
//   fcc        3D  cell a^3, 4 sites            neighbours at a/sqrt(2)  rho = 4 / a^3
//
// The region holds n_d = floor(L_d / c_d) whole cells along each axis (c_d the cell side); the
// sites sit at fixed fractions inside each cell (1/2 for one-site cells, 1/4 and 3/4 otherwise) and
// the unused margin L_d - n_d c_d is split evenly between both sides. Sites are filled x fastest,
// then y, then z (bottom layer first).
//
// A periodic axis that the region spans must be a whole number of cells, or the lattice would
// leave a gap (or, rounded up, an overlap) at the boundary. A side within kFitTolerance of n whole
// cells is tiled by exactly n cells, the cell stretched by at most that much along the axis, and
// the generator says so (a box printed with a few digits, as LAMMPS prints its box, is 1e-8 off a
// whole number; floor() then lost a layer of cells). Farther off, `fit` decides: "exact" (the
// default) refuses and names the nearest sides that fit, "stretch" stretches the cells to the
// nearest whole number, "gap" keeps floor(L / c) cells and the gap.
//
// The lattice is deterministic: any range of the fill order is made on its own (each rank of a
// parallel run makes its part).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "pardyn/generator_support.hpp"
#include "pardyn/plugin_export.hpp"

namespace pardyn::plugins {
namespace {

struct Kind {
  const char* name;
  int dim;
  double cell[3];                            // cell sides in units of the lattice constant a
  std::vector<std::array<double, 3>> basis;  // site positions in fractions of the cell
};

const Kind& kind_named(const std::string& name) {
  static const Kind kinds[] = {
      {"square", 2, {1, 1, 1}, {{0.5, 0.5, 0}}},
      {"hexagonal", 2, {1, 1.7320508075688772, 1}, {{0.25, 0.25, 0}, {0.75, 0.75, 0}}},
      {"sc", 3, {1, 1, 1}, {{0.5, 0.5, 0.5}}},
      {"fcc",
       3,
       {1, 1, 1},
       {{0.25, 0.25, 0.25}, {0.75, 0.75, 0.25}, {0.75, 0.25, 0.75}, {0.25, 0.75, 0.75}}},
  };
  for (const auto& k : kinds)
    if (name == k.name) return k;
  throw Error("internal: lattice kind '" + name + "' passed the schema but is unknown");
}

// Lattice cells are counted with this much slack so that a region that is an exact multiple of the
// cell (up to rounding) holds the whole number of cells it was meant to.
constexpr double kSlack = 1e-9;
// More sites than this is a mistake in the input (a spacing in the wrong unit), not a simulation.
constexpr double kMaxSites = double(kMaxParticles);
// A periodic side within this fraction of a whole number of cells is fitted to it.
constexpr double kFitTolerance = 1e-4;

struct Plan {
  double lo[3] = {0, 0, 0};
  double hi[3] = {0, 0, 0};
  double a = 0;  // lattice constant
  std::int64_t cells[3] = {1, 1, 1};
  double side[3] = {0, 0, 0};   // cell side along each axis (a * cell, stretched to fit a period)
  double shift[3] = {0, 0, 0};  // half the unused margin along each axis
  std::int64_t sites = 0;       // sites in the region
  std::int64_t count = 0;       // sites that are filled
  std::string note;             // what was fitted, for the user
};

class Lattice final : public Generator {
 public:
  Lattice(const ParamSet& p, const RunInfo& run)
      : context_(p.context.empty() ? std::string("lattice") : p.context),
        kind_(kind_named(p.string("kind"))),
        count_(p.integer("count")),
        spacing_(p.real("spacing")),
        density_(p.real("density")),
        region_lo_(p.reals("region_lo")),
        region_hi_(p.reals("region_hi")),
        mass_(p.real("mass")),
        fit_(p.has("fit") ? p.string("fit") : std::string("exact")),
        tell_(!run.quiet && run.rank == 0) {
    if (!(mass_ > 0)) fail("mass must be > 0");
    if (count_ < 0) fail("count must be >= 0 (0 fills the region)");
    if (spacing_ < 0 || density_ < 0) fail("spacing and density must be >= 0");
    if (spacing_ > 0 && density_ > 0)
      fail("both spacing and density are given; set one of them and leave the other at 0");
    if (double(count_) > kMaxSites)
      fail("count = " + std::to_string(count_) + " is more than the " + format_number(kMaxSites) +
           " sites a lattice may have");
    if (spacing_ == 0 && density_ == 0 && count_ == 0)
      fail(
          "nothing sets the lattice size: give spacing (lattice constant), density, or count "
          "(then the widest lattice that holds count sites is used)");
    // Errors in the region or in the counts are reported before the run starts.
    make_plan(run.dim, run.box);
  }

  std::int64_t particles(const GenerateContext& ctx) override {
    if (!ctx.box) throw Error("internal: lattice generator called without a box");
    const Plan plan = make_plan(ctx.dim, *ctx.box);
    if (tell_ && !plan.note.empty()) std::printf("%s\n", plan.note.c_str());
    told_ = true;
    return plan.count;
  }

  // Sites [first, end) of the fill order: site s is basis site s % B of cell s / B, cells x fastest.
  HostParticles generate(const GenerateContext& ctx) override {
    if (!ctx.box) throw Error("internal: lattice generator called without a box");
    const Plan plan = make_plan(ctx.dim, *ctx.box);
    if (tell_ && !told_ && !plan.note.empty()) std::printf("%s\n", plan.note.c_str());
    const int dim = ctx.dim;
    const std::uint64_t count = std::uint64_t(plan.count);
    const std::uint64_t first = std::min(ctx.first, count), end = ctx.end(count);
    HostParticles hp(dim);
    hp.resize(static_cast<std::size_t>(end - first));

    const double* side = plan.side;
    const std::uint64_t sites = kind_.basis.size();
    for (std::uint64_t s = first; s < end; ++s) {
      const std::size_t n = std::size_t(s - first);
      const auto& b = kind_.basis[std::size_t(s % sites)];
      const std::uint64_t cell = s / sites;
      const std::uint64_t cx = std::uint64_t(plan.cells[0]), cy = std::uint64_t(plan.cells[1]);
      const std::uint64_t idx[3] = {cell % cx, (cell / cx) % cy, cell / (cx * cy)};
      for (int d = 0; d < dim; ++d) {
        hp.x[d][n] = plan.lo[d] + plan.shift[d] + (double(idx[d]) + b[d]) * side[d];
        hp.v[d][n] = 0.0;
      }
      hp.mass[n] = mass_;
      hp.type[n] = 0;
    }
    return hp;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw Error(context_ + ": " + what); }

  // Sites of lattice constant a in the region, and the cells per axis.
  std::int64_t sites_for(double a, const Plan& p, int dim, std::int64_t cells[3]) const {
    double total = double(kind_.basis.size());
    for (int d = 0; d < dim; ++d) {
      const double n = std::floor((p.hi[d] - p.lo[d]) / (a * kind_.cell[d]) + kSlack);
      total *= n;
      cells[d] = n > kMaxSites ? std::int64_t(kMaxSites) : std::int64_t(n);
    }
    return total > kMaxSites ? std::int64_t(kMaxSites) + 1 : std::int64_t(total);
  }

  // The widest lattice constant whose lattice holds at least count_ sites in the region: the number
  // of sites only grows as a shrinks, so bisect, then widen a to the point where the cell counts
  // found would just stop fitting (the region is then a whole number of cells along the tightest
  // axis).
  double fit_spacing(const Plan& p, int dim) const {
    double volume = 1, cell_volume = 1;
    for (int d = 0; d < dim; ++d) {
      volume *= p.hi[d] - p.lo[d];
      cell_volume *= kind_.cell[d];
    }
    std::int64_t cells[3] = {1, 1, 1};
    double hi =
        std::pow(double(kind_.basis.size()) * volume / (double(count_) * cell_volume), 1.0 / dim);
    double lo = hi;
    while (sites_for(lo, p, dim, cells) < count_) {
      hi = lo;
      lo *= 0.5;
    }
    if (lo != hi)
      for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; ++it) {
        const double mid = 0.5 * (lo + hi);
        (sites_for(mid, p, dim, cells) >= count_ ? lo : hi) = mid;
      }
    sites_for(lo, p, dim, cells);
    double a = std::numeric_limits<double>::infinity();
    for (int d = 0; d < dim; ++d)
      a = std::min(a, (p.hi[d] - p.lo[d]) / (double(cells[d]) * kind_.cell[d]));
    return sites_for(a, p, dim, cells) >= count_ ? a : lo;
  }

  Plan make_plan(int dim, const Box& box) const {
    if (dim != kind_.dim) {
      const char* use = dim == 2 ? "\"square\" or \"hexagonal\"" : "\"sc\" or \"fcc\"";
      fail(std::string("kind = \"") + kind_.name + "\" is a " + std::to_string(kind_.dim) +
           "D lattice but the run is " + std::to_string(dim) + "D; use kind = " + use);
    }
    Plan p;
    resolve_region(dim, box, p);

    const char* how = "";
    if (spacing_ > 0) {
      p.a = spacing_;
      how = "spacing";
    } else if (density_ > 0) {
      double cell_volume = 1;
      for (int d = 0; d < dim; ++d) cell_volume *= kind_.cell[d];
      p.a = std::pow(double(kind_.basis.size()) / (density_ * cell_volume), 1.0 / dim);
      how = "density";
    } else {
      p.a = fit_spacing(p, dim);
      how = "count";
    }

    p.sites = sites_for(p.a, p, dim, p.cells);
    for (int d = 0; d < 3; ++d) p.side[d] = p.a * kind_.cell[d];
    if (p.sites > 0 && p.sites <= std::int64_t(kMaxSites)) fit_periods(dim, box, how, p);
    if (p.sites > std::int64_t(kMaxSites))
      fail("the region would hold more than " + format_number(kMaxSites) +
           " sites at lattice constant " + format_number(p.a) +
           "; check spacing/density (and their units)");
    if (p.sites == 0)
      fail("the region is smaller than one lattice cell (lattice constant " + format_number(p.a) +
           " from " + how + "); lower spacing, raise density, or enlarge region_lo/region_hi");
    if (count_ > p.sites)
      fail(
          "count = " + std::to_string(count_) + " but only " + std::to_string(p.sites) +
          " sites of a " + kind_.name + " lattice with constant " + format_number(p.a) +
          " fit in the region; lower count, lower spacing or raise density, or enlarge the region");
    p.count = count_ > 0 ? count_ : p.sites;
    for (int d = 0; d < dim; ++d)
      p.shift[d] = 0.5 * ((p.hi[d] - p.lo[d]) - double(p.cells[d]) * p.side[d]);
    return p;
  }

  // Periodic axes spanned by the region: a whole number of cells (see the top of the file).
  void fit_periods(int dim, const Box& box, const char* how, Plan& p) const {
    static const char axis[] = "xyz";
    std::string stretched, refused;
    for (int d = 0; d < dim; ++d) {
      const double L = p.hi[d] - p.lo[d];
      const bool spans =
          std::abs(p.lo[d] - box.lo[d]) <= 1e-12 * L && std::abs(p.hi[d] - box.hi[d]) <= 1e-12 * L;
      if (box.boundary[d] != Boundary::Periodic || !spans || fit_ == "gap") continue;
      const double c = p.a * kind_.cell[d], r = L / c;
      const double n = std::max(1.0, std::round(r));
      if (std::abs(r - n) > kFitTolerance * r && fit_ == "exact") {
        const double below = std::max(1.0, std::floor(r)), above = std::ceil(r);
        refused +=
            std::string(refused.empty() ? "" : "; ") + "the periodic side " + axis[d] + " = " +
            format_number(L) + " holds " + format_number(r) + " cells of " + format_number(c) +
            ": use " + format_number(below * c) + " (" + format_number(below) + " cells)" +
            (above > below
                 ? " or " + format_number(above * c) + " (" + format_number(above) + " cells)"
                 : std::string());
        continue;
      }
      p.cells[d] = std::int64_t(n);
      p.side[d] = L / n;
      if (std::abs(p.side[d] - c) > 1e-12 * c) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%+.3g", p.side[d] / c - 1);
        stretched += std::string(stretched.empty() ? "" : ", ") + axis[d] + " by " + buf + " (" +
                     format_number(n) + " cells)";
      }
    }
    if (!refused.empty())
      fail(refused + ". A periodic side must be a whole number of lattice cells (" + kind_.name +
           ", a = " + format_number(p.a) + " from " + how +
           "), or the lattice leaves a gap at the boundary. Change the box, spacing or density, "
           "or set fit = \"stretch\" (stretch the cells to the nearest whole number) or fit = "
           "\"gap\" (keep the gap)");
    double sites = double(kind_.basis.size());
    for (int d = 0; d < dim; ++d) sites *= double(p.cells[d]);
    p.sites = std::int64_t(std::min(sites, kMaxSites + 1));
    if (!stretched.empty())
      p.note = context_ + ": the lattice (" + kind_.name + ", a = " + format_number(p.a) +
               ") fits the periodic box with its cells stretched along " + stretched + ": " +
               std::to_string(p.sites) + " sites";
  }

  void resolve_region(int dim, const Box& box, Plan& p) const {
    const Region r = pardyn::resolve_region(dim, box, region_lo_, region_hi_, context_);
    std::copy(r.lo, r.lo + 3, p.lo);
    std::copy(r.hi, r.hi + 3, p.hi);
  }

  std::string context_;
  const Kind& kind_;
  std::int64_t count_;
  double spacing_, density_;
  std::vector<double> region_lo_, region_hi_;
  double mass_;
  std::string fit_;
  bool tell_;
  bool told_ = false;  // the note was printed (by particles())
};

FactoryInfo lattice_info() {
  FactoryInfo f;
  f.kind = PluginKind::Generator;
  f.name = "lattice";
  f.summary = "particles on a square, hexagonal (2D), simple cubic or fcc (3D) lattice";
  f.doc =
      "Particles on the sites of a lattice with constant a, filling a rectangular region:\n"
      "  square     2D  cell a x a, 1 site           neighbours at a          rho = 1 / a^2\n"
      "  hexagonal  2D  cell a x sqrt(3) a, 2 sites  neighbours at a          rho = 2 / (sqrt(3) "
      "a^2)\n"
      "  sc         3D  cell a^3, 1 site             neighbours at a          rho = 1 / a^3\n"
      "  fcc        3D  cell a^3, 4 sites            neighbours at a/sqrt(2)  rho = 4 / a^3\n"
      "The lattice constant comes from exactly one of:\n"
      "  spacing > 0                 a = spacing\n"
      "  density > 0                 a from rho, e.g. fcc a = (4 / rho)^(1/3)\n"
      "  spacing = density = 0       the largest a whose lattice holds `count` sites in the "
      "region\n"
      "count = 0 fills every site; count > 0 fills the first count sites, x fastest, then y, then "
      "z\n"
      "(bottom layer first), and more than fit is an error. The region (default: the box) holds\n"
      "floor(L / cell) whole cells per axis, the unused margin split evenly on both sides. Sites "
      "sit\n"
      "at 1/2 of a one-site cell and at 1/4, 3/4 of the others, so a periodic box whose sides are\n"
      "whole numbers of cells is tiled exactly across its boundaries. A periodic side within 1e-4\n"
      "of a whole number of cells is fitted to it exactly (the cells stretched by at most 1e-4\n"
      "along it; the run says so). Farther off, `fit` decides: \"exact\" refuses and names the\n"
      "nearest sides that fit, \"stretch\" stretches the cells to the nearest whole number,\n"
      "\"gap\" keeps the whole cells that fit and a gap at the boundary. Velocities are zero; the\n"
      "block's `temperature` adds thermal ones.";
  f.dims = kDimAll;
  f.precisions = kPrecisionAll;
  f.backends = kBackendAll;
  f.schema
      .choice("kind", std::nullopt, {"square", "hexagonal", "sc", "fcc"},
              "lattice: square or hexagonal in 2D, sc (simple cubic) or fcc in 3D")
      .integer("count", std::int64_t(0), "number of particles; 0 = one on every site of the region",
               0, double(kMaxParticles))
      .real("spacing", 0.0, "length",
            "lattice constant a (fcc: cube side); 0 = derive it from density or count", 0.0)
      .real("density", 0.0, "length^-dim",
            "number density; used when spacing = 0 to derive the lattice constant", 0.0)
      .reals(
          "region_lo", std::vector<double>{}, "length",
          "lower corner of the filled region, one value per axis; empty = the box's lower corner",
          0, 3)
      .reals(
          "region_hi", std::vector<double>{}, "length",
          "upper corner of the filled region, one value per axis; empty = the box's upper corner",
          0, 3)
      .real("mass", 1.0, "mass", "mass of each particle", 0.0, std::nullopt, true)
      .choice("fit", std::string("exact"), {"exact", "stretch", "gap"},
              "a periodic side that is not a whole number of cells (beyond 1e-4): refuse (exact), "
              "stretch the cells to fit, or leave a gap");
  return f;
}

void register_lattice(Registrar& r) {
  r.add(lattice_info(), Factory<Generator>([](const ParamSet& p, const RunInfo& run) {
          return std::unique_ptr<Generator>(new Lattice(p, run));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_lattice)
