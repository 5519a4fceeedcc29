// SPDX-License-Identifier: BSD-3-Clause
// The GPU half of PairPotential<Law>: include from the plugin's .cu file and end it with
// PARDYN_PAIR_POTENTIAL_CUDA(Law). The same evaluator as on the CPU, in the framework's kernels.
#pragma once

#include "pardyn/pair_potential.hpp"
#include "pardyn/traversal/all_pairs_cuda.cuh"
#include "pardyn/traversal/cell_list_cuda.cuh"
#include "pardyn/traversal/tree_cuda.cuh"

namespace pardyn::cuda {

template <class Law>
void pair_compute(const typename Law::Params& params, ParticleStore& s, const Neighbourhood& nb,
                  const ForceRequest& req) {
  visit(s, [&](auto view) {
    using Real = typename decltype(view)::real;
    const typename Law::template Evaluator<Real> ev(params);
    const bool energy = req.energy || req.virial;
    switch (nb.kind) {
      case NeighbourhoodKind::CellList:
        cell_list_forces(ev, view, *static_cast<const CellList*>(nb.data), *req.box, energy);
        break;
      case NeighbourhoodKind::Tree:
        tree_forces(ev, view, *static_cast<const Tree*>(nb.data), *req.box, energy);
        break;
      default: all_pairs(ev, view, *req.box, energy, 0, static_cast<const SourceBlock*>(nb.data));
    }
  });
}

}  // namespace pardyn::cuda

#define PARDYN_PAIR_POTENTIAL_CUDA(Law)                                                  \
  template void pardyn::cuda::pair_compute<Law>(                                         \
      const typename Law::Params&, pardyn::ParticleStore&, const pardyn::Neighbourhood&, \
      const pardyn::ForceRequest&);
