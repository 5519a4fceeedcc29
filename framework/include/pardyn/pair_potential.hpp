// SPDX-License-Identifier: BSD-3-Clause
// PairPotential<Law>: turns a pair law (evaluator.hpp) into a Potential plugin object by instantiating
// the framework's traversal templates for it, in the plugin that includes this header.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/pair_potential.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <cmath>
#include <memory>

#include "pardyn/evaluator.hpp"
#include "pardyn/law_potential.hpp"
#include "pardyn/params.hpp"
#include "pardyn/potential.hpp"
#include "pardyn/registration.hpp"
#include "pardyn/traversal/all_pairs_cpu.hpp"
#include "pardyn/cell_list.hpp"
#include "pardyn/traversal/cell_list_cpu.hpp"
#include "pardyn/traversal/tree_cpu.hpp"

namespace pardyn {

#if defined(PARDYN_PLUGIN_HAS_CUDA)
namespace cuda {
// Defined in the plugin's .cu file by PARDYN_PAIR_POTENTIAL_CUDA(Law) (pair_potential_cuda.cuh).
template <class Law>
void pair_compute(const typename Law::Params& params, ParticleStore& s, const Neighbourhood& nb,
                  const ForceRequest& req);
}  // namespace cuda
#endif

// The CPU traversals of pair law Law for one view (one dimension and precision) of a CPU store:
// what PairPotential::compute() runs for the store's view; a law compiled at run time for one
// dimension and precision (the expression law) calls it alone, without the other views' code.
template <class Law, class View>
void pair_forces_cpu(const typename Law::Params& params, const View& view, const Neighbourhood& nb,
                     const ForceRequest& req) {
  using Real = typename View::real;
  const typename Law::template Evaluator<Real> ev(params);
  const auto img = PeriodicImage<Real>::make(*req.box);
  const bool periodic = req.box->any_periodic(View::dim);
  const bool energy = req.energy || req.virial;
  if (nb.kind == NeighbourhoodKind::CellList) {
    cpu::cell_list_forces(ev, view, *static_cast<const CellList*>(nb.data), *req.box, energy);
    return;
  }
  if (nb.kind == NeighbourhoodKind::Tree) {
    cpu::tree_forces(ev, view, *static_cast<const Tree*>(nb.data), *req.box, energy);
    return;
  }
  if (nb.data) {  // a block of another rank (all-pairs ring)
    const auto& blk = *static_cast<const SourceBlock*>(nb.data);
    const auto* rec = static_cast<const Real*>(blk.pos);
    dispatch_variant(energy, periodic, [&](auto e, auto per) {
      cpu::all_pairs_sources<decltype(e)::value, decltype(per)::value>(ev, view, img, rec, blk.type,
                                                                       blk.n);
    });
    return;
  }
  dispatch_variant(energy, periodic, [&](auto e, auto per) {
    cpu::all_pairs<decltype(e)::value, decltype(per)::value>(ev, view, img);
  });
}

template <class Law>
class PairPotential final : public Potential {
 public:
  using Params = typename Law::Params;

  explicit PairPotential(const Params& p) : params_(p) {}

  using Traits = EvaluatorTraits<typename Law::template Evaluator<double>>;
  // The contract's checks (evaluator.hpp) for both precisions, before anything uses the evaluator.
  static_assert(sizeof(PairLawContract<typename Law::template Evaluator<float>>) > 0 &&
                sizeof(PairLawContract<typename Law::template Evaluator<double>>) > 0);

  // All-pairs always; a cell list for cut-off laws and for long-range laws with a far field (exact
  // near cells, far cells by their moments); a tree for laws with a far field (a law with a
  // short-range part too: the tree opens every node that could hold a partner within its
  // short-range radius, see reach()).
  bool supports(NeighbourhoodKind k) const override {
    switch (k) {
      case NeighbourhoodKind::AllPairs: return true;
      case NeighbourhoodKind::CellList: return Traits::has_cutoff || Traits::has_far_field;
      case NeighbourhoodKind::Tree: return Traits::has_far_field;
    }
    return false;
  }
  std::string unsupported_reason(NeighbourhoodKind k) const override {
    if (k == NeighbourhoodKind::Tree && Traits::has_cutoff)
      return std::string("potential '") + Law::info().name +
             "' has a cut-off and no far-field form (far() in its evaluator, see "
             "docs/plugins.md); use scheme \"cell_list\" (or \"all_pairs\")";
    if (k == NeighbourhoodKind::Tree)
      return std::string("potential '") + Law::info().name +
             "' has no far-field form (far() in its evaluator, see docs/plugins.md), so a tree "
             "cannot approximate distant particles; use scheme \"all_pairs\"";
    return std::string("potential '") + Law::info().name +
           "' is long-range without a far-field form; a cell list would cut it off. Use scheme "
           "\"all_pairs\"";
  }

  // The cut-off and the short-range radius (evaluator.hpp's short_range_radius).
  Reach reach() const override {
    return Reach{cutoff(), short_range_radius(typename Law::template Evaluator<double>(params_))};
  }

  double cutoff() const override {
    if constexpr (Traits::has_cutoff)
      return std::sqrt(typename Law::template Evaluator<double>(params_).rcut2);
    else return std::numeric_limits<double>::infinity();
  }

  void compute(ParticleStore& s, const Neighbourhood& nb, const ForceRequest& req) override {
    if (!supports(nb.kind)) throw Error(unsupported_reason(nb.kind));
    if (s.backend() == Backend::Cuda)
      return law_on_gpu<Law>(PARDYN_CUDA_ONLY(&cuda::pair_compute<Law>), params_, s, nb, req);
    visit(s, [&](auto view) { pair_forces_cpu<Law>(params_, view, nb, req); });
  }

 private:
  Params params_;
};

template <class Law>
void register_pair_potential(Registrar& r) {
  r.add(law_potential_info<Law>(), Factory<Potential>([](const ParamSet& ps, const RunInfo&) {
          return std::unique_ptr<Potential>(new PairPotential<Law>(Law::Params::from(ps)));
        }));
}

}  // namespace pardyn

// The whole registration of a plugin that holds one pair law (law_potential.hpp).
#define PARDYN_PAIR_POTENTIAL_PLUGIN(Law) PARDYN_LAW_PLUGIN(::pardyn::register_pair_potential, Law)
