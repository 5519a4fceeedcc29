// SPDX-License-Identifier: BSD-3-Clause
// The GPU half of PairPotential<Law>: include from the plugin's .cu file and end it with
// PARDYN_PAIR_POTENTIAL_CUDA(Law). The same evaluator as on the CPU, in the framework's kernels.
#pragma once

#include "pardyn/pair_potential.hpp"
#include "pardyn/traversal/all_pairs_cuda.cuh"
#include "pardyn/traversal/cell_list_cuda.cuh"
#include "pardyn/traversal/tree_cuda.cuh"

namespace pardyn::cuda {

// The GPU traversals of evaluator `ev` for one view of a CUDA store, by the neighbourhood's kind:
// what pair_compute runs, and the expression law with its run-time compiled kernels (`ks`,
// launch_cuda.cuh).
template <class Eval, class View, class Kernels = BuiltinKernels>
void pair_forces_cuda(const Eval& ev, const View& view, const Neighbourhood& nb,
                      const ForceRequest& req, const Kernels& ks = {}) {
  const bool energy = req.energy || req.virial;
  switch (nb.kind) {
    case NeighbourhoodKind::CellList:
      cell_list_forces(ev, view, *static_cast<const CellList*>(nb.data), *req.box, energy, ks);
      break;
    case NeighbourhoodKind::Tree:
      tree_forces(ev, view, *static_cast<const Tree*>(nb.data), *req.box, energy, ks);
      break;
    default: all_pairs(ev, view, *req.box, energy, 0, static_cast<const SourceBlock*>(nb.data), ks);
  }
}

template <class Law>
void pair_compute(const typename Law::Params& params, ParticleStore& s, const Neighbourhood& nb,
                  const ForceRequest& req) {
  visit(s, [&](auto view) {
    using Real = typename decltype(view)::real;
    pair_forces_cuda(typename Law::template Evaluator<Real>(params), view, nb, req);
  });
}

}  // namespace pardyn::cuda

#define PARDYN_PAIR_POTENTIAL_CUDA(Law)                                                  \
  template void pardyn::cuda::pair_compute<Law>(                                         \
      const typename Law::Params&, pardyn::ParticleStore&, const pardyn::Neighbourhood&, \
      const pardyn::ForceRequest&);
