// SPDX-License-Identifier: BSD-3-Clause
// Parallel planning: what a run on several ranks uses (the all-pairs ring, the domain
// decomposition of cell lists) and how far the ghosts reach.
#include "pardyn/app/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "neighbourhood/cell_list_impl.hpp"
#include "parallel/communicator.hpp"
#include "parallel/domain.hpp"
#include "parallel/ring.hpp"
#include "parallel/tree_exchange.hpp"
#include "run/force_runner.hpp"

namespace pardyn {

// Parallel runs: the all-pairs ring for all-pairs terms, a domain decomposition for cell lists.
void Simulation::plan_parallel(const Scenario& sc) {
  if (comm_) {
    double width = 0, trigger = std::numeric_limits<double>::infinity();
    bool cells = false, pairs = false;
    for (std::size_t k = 0; k < forces_.size(); ++k) {
      const auto& ft = forces_[k];
      if (ft.potential->external()) continue;
      const auto kind = ft.scheme->neighbourhood().kind;
      if (kind == NeighbourhoodKind::Tree) {
        // Locally essential trees: each rank's tree, what the others need of it sent to them.
        tree_on_ranks_.resize(forces_.size(), false);
        tree_on_ranks_[k] = true;
        morton_ = true;
      }
      if (kind == NeighbourhoodKind::AllPairs) pairs = true;
      if (kind == NeighbourhoodKind::CellList) {
        const double cut = ft.potential->cutoff();
        cells = true;
        if (!std::isfinite(cut)) {
          // Far zones: the ranks share the pyramid's coarse levels; the ghosts' reach is set once
          // the particles are known (plan_far_ghosts).
          for (int d = 0; d < sc.dim; ++d)
            if (sc.box.boundary[d] != Boundary::Wall)
              throw Error(ft.label +
                          ": cell_list far zones on several ranks need walled axes (the ranks "
                          "share one grid over the box), and axis " +
                          std::string(1, "xyz"[d]) + " is " +
                          (sc.box.boundary[d] == Boundary::Open ? "open" : "periodic") +
                          ". Give the box walls (boundary = \"wall\"), use scheme \"tree\" (open "
                          "axes) or \"all_pairs\" (periodic ones), or run on one rank");
          far_reach_.resize(forces_.size(), 0.0);
          far_reach_[k] = -1;  // to be planned
          continue;
        }
        double skin = 0;
        const ParamSet& ps = sc.potentials[k].scheme.params;
        if (ps.has("skin")) skin = ps.real("skin");
        // Ghosts reach one skin beyond the cut-off: they are chosen again (and particles
        // migrate) when the Verlet list would be rebuilt anyway (measured on 2 H200s, LJ 16M: 1
        // skin 207 steps/s, 2 skins 199, 3 skins 200; PARDYN_GHOST_MARGIN sets the factor).
        double factor = 1;
        if (const char* e = std::getenv("PARDYN_GHOST_MARGIN"))
          factor = std::max(1.0, std::atof(e));
        const double margin = std::max(factor * skin, 0.1 * cut);
        width = std::max(width, cut + margin);
        trigger = std::min(trigger, 0.5 * margin);
      }
    }
    if (cells) {
      if (integrator_->particle_state())
        throw Error(
            "integrator \"" + sc.integrator.type +
            "\" keeps per-particle state between "
            "force evaluations, which particles moving between ranks (the cell list's "
            "domain decomposition) would break; use leapfrog, yoshida4, symplectic_euler or "
            "euler, or run on one rank");
      domain_ = std::make_unique<parallel::Domain>(*comm_, sc.box, sc.dim, width, trigger,
                                                   backend_.backend);
    }
    if (pairs) ring_ = std::make_unique<parallel::Ring>(*comm_, backend_.backend);
    // Ownership: the sub-boxes when there are any (the tree exchange works with any split, the
    // domain decomposition only with its own), else along a Morton curve for the trees, re-dealt
    // by measured speed unless the shares are fixed (or the integrator keeps per-particle state,
    // which cannot follow particles to other ranks).
    if (domain_) morton_ = false;
    if (morton_ && sc.balance_by_speed && sc.rank_weights.empty() && !integrator_->particle_state())
      balance_.interval = sc.balance_interval;
    // The domain's sub-boxes stay as they are cut: their ranks' work is measured and logged alone
    // (the imbalance over time in log.txt), never acted on.
    if (domain_ && sc.balance_interval > 0) {
      balance_.interval = sc.balance_interval;
      balance_.log_only = true;
    }
  }
}

namespace {
// Far zones on several ranks: at most about this many cells in the first pyramid level the ranks sum
// together (kSumTerms doubles each, every evaluation); the levels below come from the ghosts,
// which reach (rings + 1) of that level's cells. Fewer shared cells mean wider ghost layers.
// PARDYN_FAR_SHARED_CELLS sets another number (docs/parallel.md).
constexpr double kSharedCells = 32768;

// The scheme's parameter `name` (an integer, a real), or the default when it is not given.
double real_param(const ParamSet& p, const char* name, double fallback) {
  return p.has(name) ? p.real(name) : fallback;
}
int int_param(const ParamSet& p, const char* name, int fallback) {
  return p.has(name) ? int(p.integer(name)) : fallback;
}
}  // namespace

// The ghosts of far zones reach (rings + 1) cells of the first shared level, the first level with
// at most about kSharedCells cells over the box (but always the exact near zone), as far as the sub-boxes allow.
void Simulation::plan_far_ghosts(const Scenario& sc) {
  if (!domain_ || far_reach_.empty()) return;
  double width = domain_->width(), trigger = domain_->trigger();
  double volume = 1;
  for (int d = 0; d < sc.dim; ++d) volume *= sc.box.length(d);
  for (std::size_t k = 0; k < far_reach_.size(); ++k) {
    if (far_reach_[k] == 0) continue;
    const ParamSet& ps = sc.potentials[k].scheme.params;
    CellListOptions o;
    o.cell_size = real_param(ps, "cell_size", o.cell_size);
    o.near = int_param(ps, "near", o.near);
    o.rings = int_param(ps, "rings", o.rings);
    o.max_cells = std::size_t(int_param(ps, "max_cells", 0));
    o.short_range = forces_[k].potential->reach().short_range;
    const double w = detail::far_cell_width(sc.box, sc.dim, n_global_, o);
    const double near_reach = (o.near + 1) * w * (1 + 1e-6);
    double shared = kSharedCells;
    if (const char* e = std::getenv("PARDYN_FAR_SHARED_CELLS"))
      shared = std::max(1.0, std::atof(e));
    const double want = std::pow(volume / shared, 1.0 / sc.dim);
    int level = 0;  // the first level whose cells are at least `want` wide
    while (std::ldexp(w, level) < want) ++level;
    double reach = near_reach;
    for (; level >= 1; --level) {
      const double r = (o.rings + 1) * std::ldexp(w, level) * (1 + 1e-6);
      if (domain_->fits(1.1 * r)) {
        reach = std::max(reach, r);
        break;
      }
    }
    far_reach_[k] = reach;
    width = std::max(width, 1.1 * reach);
    trigger = std::min(trigger, 0.05 * reach);
  }
  domain_->widen(width, trigger);
}

// Each term's runner: where its neighbourhood is built and its forces computed.
void Simulation::make_runners() {
  for (std::size_t k = 0; k < forces_.size(); ++k) {
    ForceTerm& f = forces_[k];
    Potential& pot = *f.potential;
    Scheme& scheme = *f.scheme;
    const auto kind = scheme.neighbourhood().kind;
    if (pot.external()) f.runner = make_external_runner(pot, scheme);
    else if (domain_ && kind == NeighbourhoodKind::CellList)
      f.runner = make_domain_runner(pot, scheme, *domain_, run_.box, comm_,
                                    k < far_reach_.size() ? far_reach_[k] : 0.0);
    else if (ring_ && kind == NeighbourhoodKind::AllPairs) f.runner = make_ring_runner(pot, *ring_);
    else if (k < tree_on_ranks_.size() && tree_on_ranks_[k])
      f.runner = make_tree_runner(
          pot, scheme, std::make_unique<parallel::TreeExchange>(*comm_, run_.dim), run_.box);
    else f.runner = make_local_runner(pot, scheme, run_.box);
  }
}

std::size_t Simulation::tree_sources_received() const {
  std::size_t n = 0;
  for (const auto& f : forces_)
    if (const auto* x = f.runner ? tree_exchange_of(*f.runner) : nullptr) n += x->received();
  return n;
}

}  // namespace pardyn
