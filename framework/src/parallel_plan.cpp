// Parallel planning: what a run on several ranks uses (the all-pairs ring, the domain
// decomposition of cell lists) and how far the ghosts reach.
#include "pardyn/app/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "parallel/communicator.hpp"
#include "parallel/domain.hpp"
#include "parallel/ring.hpp"
#include "parallel/tree_exchange.hpp"

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
        lets_.resize(forces_.size());
        lets_[k] = std::make_unique<parallel::TreeExchange>(*comm_, sc.dim);
        morton_ = true;
      }
      if (kind == NeighbourhoodKind::AllPairs) pairs = true;
      if (kind == NeighbourhoodKind::CellList) {
        const double cut = ft.potential->cutoff();
        if (!std::isfinite(cut))
          throw Error(ft.label +
                      ": cell_list far zones (a long-range law) do not run on several "
                      "ranks; use scheme \"all_pairs\" (the all-pairs ring) or run on one rank");
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
        cells = true;
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
    // domain decomposition only with its own), else along a Morton curve for the trees.
    if (domain_) morton_ = false;
  }
}

std::size_t Simulation::tree_sources_received() const {
  std::size_t n = 0;
  for (const auto& l : lets_)
    if (l) n += l->received();
  return n;
}

}  // namespace pardyn
