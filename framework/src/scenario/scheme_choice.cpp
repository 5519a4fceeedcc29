// SPDX-License-Identifier: BSD-3-Clause
#include "scenario/scheme_choice.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "pardyn/cuda.hpp"

namespace pardyn {

namespace {

// The particles the blocks will generate, when every block says (`count`); 0 when unknown.
std::size_t expected_particles(const Scenario& sc) {
  std::size_t n = 0;
  for (const auto& b : sc.particles) {
    if (!b.params.has("count")) return 0;
    n += std::size_t(std::max<std::int64_t>(0, b.params.integer("count")));
  }
  return n;
}

NeighbourhoodKind kind_of(const std::string& scheme) {
  return scheme == "tree"        ? NeighbourhoodKind::Tree
         : scheme == "cell_list" ? NeighbourhoodKind::CellList
                                 : NeighbourhoodKind::AllPairs;
}

std::string count_text(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2g", x);
  return b;
}

// The one-rank choice for a law without a scheme, and why (empty: all_pairs stays).
//   A cut-off law: the cell list, on every backend (its cost grows as N, all_pairs' as N^2;
//     measured even at a few hundred particles, docs/performance.md).
//   A long-range law with a short-range part (soft_gas): the scheme measured fastest for its
//     number of particles N (the real-gas example scaled at constant density, whole runs, float):
//       GPU (H100): cell_list far zones below 3,000 particles, all_pairs from 3,000 to 12,000,
//                   cell_list to 4,000,000, the tree with theta = 0.7 beyond;
//       CPU (2 cores): all_pairs up to 1,000 particles (where the two are even), cell_list beyond.
//     all_pairs when an axis is periodic (neither approximation sees periodic images) or N is not
//     known before the particles are generated (a file).
//   Other long-range laws (gravity, log): all_pairs, exact (the tree and far zones are
//     approximations a user chooses knowingly).
struct Choice {
  std::string type = "all_pairs", params, why;
};
Choice one_rank_choice(const Potential& pot, std::size_t n, bool periodic, bool gpu) {
  Choice c;
  const Reach reach = pot.reach();
  if (std::isfinite(reach.cutoff)) {
    c.type = "cell_list";
    c.why = "a law with a cut-off (" + format_number(reach.cutoff) + ")";
    return c;
  }
  if (!(reach.short_range > 0)) return {};
  c.why = std::to_string(n) + " particles on the " + (gpu ? "GPU" : "CPU");
  if (periodic) {
    c.why = "a periodic axis";
  } else if (n == 0) {
    c.why = "the number of particles is not known before they are generated";
  } else if (!gpu) {
    if (n > 1000) c.type = "cell_list";
  } else if (n >= 4000000) {
    c.type = "tree";
    c.params = "theta = 0.7";
  } else if (n < 3000 || n > 12000) {
    c.type = "cell_list";
  }
  return c;
}

// What several ranks change in the automatic choice (docs/parallel.md): the cell list runs on a
// domain decomposition, which cuts bounded axes only (a box open on every axis: the all-pairs
// ring); far zones need walls on every axis (the ranks share one grid of the box; else the ring).
// The tree stays: its exchange runs on the devices, and on 2 H100s the 10^7 real gas ran at 94.9
// steps/s on the tree against 85.9 on far zones (docs/parallel.md).
std::string parallel_choice(const std::string& type, bool cutoff, bool walled, bool bounded) {
  if (type == "cell_list" && (cutoff ? !bounded : !walled)) return "all_pairs";
  return type;
}

}  // namespace

void choose_schemes(Scenario& sc, const Registry& registry, int ranks) {
  const std::size_t n = expected_particles(sc);
  bool periodic = false, walled = true, bounded = false;
  for (int d = 0; d < sc.dim; ++d) {
    periodic = periodic || sc.box.boundary[d] == Boundary::Periodic;
    walled = walled && sc.box.boundary[d] == Boundary::Wall;
    bounded = bounded || sc.box.boundary[d] != Boundary::Open;
  }
  const bool gpu = sc.backend == "cuda" ||
                   (sc.backend == "auto" && cuda::built_with_cuda() && cuda::device_count() > 0);
  RunInfo run;
  fill_run_info(run, sc);
  for (auto& ps : sc.potentials) {
    const auto pot = registry.make_potential(ps.type, ps.params, run);
    if (pot->external()) continue;
    const Reach reach = pot->reach();
    if (!ps.scheme_auto) {
      // A cut-off law on all_pairs computes every pair: say what that costs at large N.
      if (ps.scheme.type == "all_pairs" && std::isfinite(reach.cutoff) && n > 5000) {
        double volume = 1;
        for (int d = 0; d < sc.dim; ++d) volume *= sc.box.length(d);
        const double ball = sc.dim == 3 ? 4.18879 * std::pow(reach.cutoff, 3)
                                        : 3.14159 * reach.cutoff * reach.cutoff;
        const double near = std::isfinite(volume) && volume > 0
                                ? 0.5 * double(n) * std::min(double(n), double(n) * ball / volume)
                                : 0.0;
        sc.notes.push_back(
            ps.type + " (" + ps.where + "): scheme \"all_pairs\" computes all " +
            count_text(0.5 * double(n) * double(n - 1)) + " pairs of the " + std::to_string(n) +
            " particles at every step, though the law ends at " + format_number(reach.cutoff) +
            (near > 0 ? " (about " + count_text(near) + " pairs within it)" : "") +
            "; scheme \"cell_list\" computes only the pairs within the cut-off and is many times "
            "faster at this size");
      }
      continue;
    }
    Choice c = one_rank_choice(*pot, n, periodic, gpu);
    if (c.why.empty()) continue;
    std::string type = c.type;
    if (ranks > 1) type = parallel_choice(c.type, std::isfinite(reach.cutoff), walled, bounded);
    if (!pot->supports(kind_of(type))) continue;
    const FactoryInfo* info = registry.find(PluginKind::Scheme, type);
    if (!info) continue;  // a build without that scheme plugin keeps all_pairs
    const std::string params = type == c.type ? c.params : "";
    ps.scheme.type = type;
    ps.scheme.params = parse_params(info->schema, params, type);
    std::string note = ps.type + " (" + ps.where + "): no scheme given, chose \"" + type + "\"" +
                       (params.empty() ? "" : " (" + params + ")") + " for " + c.why;
    if (type != c.type)
      note +=
          " on " + std::to_string(ranks) + " ranks (\"" + c.type + "\" on one rank; " +
          (std::isfinite(reach.cutoff) ? "the domain decomposition needs a bounded axis to cut"
                                       : "far zones on several ranks need walls on every axis") +
          ", docs/parallel.md)";
    sc.notes.push_back(note + "; set [[potential]] scheme to choose another (" +
                       (std::isfinite(reach.cutoff) ? "docs/config.md" : "docs/real-gas.md") + ")");
  }
}

}  // namespace pardyn
