// The GPU half of PairPotential<Law>: include from the plugin's .cu file and end it with
// PARDYN_PAIR_POTENTIAL_CUDA(Law). The same evaluator as on the CPU, in the framework's kernels.
#pragma once

#include "pardyn/pair_potential.hpp"
#include "pardyn/traversal/all_pairs_cuda.cuh"

namespace pardyn::cuda {

template <class Law>
void pair_compute(const typename Law::Params& params, ParticleStore& s, const Neighbourhood& nb,
                  const ForceRequest& req) {
  if (nb.kind != NeighbourhoodKind::AllPairs)
    throw Error(std::string("potential '") + Law::info().name + "' has no GPU traversal for scheme '" +
                to_string(nb.kind) + "'");
  visit(s, [&](auto view) {
    using Real = typename decltype(view)::real;
    const typename Law::template Evaluator<Real> ev(params);
    all_pairs(ev, view, *req.box, req.energy || req.virial);
  });
}

}  // namespace pardyn::cuda

#define PARDYN_PAIR_POTENTIAL_CUDA(Law)                                                        \
  template void pardyn::cuda::pair_compute<Law>(const typename Law::Params&, pardyn::ParticleStore&, \
                                                const pardyn::Neighbourhood&,                  \
                                                const pardyn::ForceRequest&);
