// SPDX-License-Identifier: BSD-3-Clause
// all_pairs: every particle interacts with every other one, O(N^2). Builds nothing; the potential's
// all-pairs traversal does the work.
#include "pardyn/plugin_export.hpp"

namespace pardyn::plugins {
namespace {

class AllPairs final : public Scheme {
 public:
  void update(ParticleStore&, const Box&, const Reach&) override {}
  Neighbourhood neighbourhood() const override { return {NeighbourhoodKind::AllPairs, nullptr}; }
};

void register_all_pairs(Registrar& r) {
  FactoryInfo f;
  f.name = "all_pairs";
  f.summary = "every pair of particles, O(N^2): exact, for long-range laws and small N";
  f.doc =
      "Each particle interacts with every other particle. Exact for long-range laws (gravity) and\n"
      "correct for cut-off laws (pairs beyond the cut-off contribute nothing). Cost grows as N^2.\n"
      "Periodic axes use the minimum-image convention.";
  f.backends = kCpu | kCuda;
  r.add(std::move(f), Factory<Scheme>([](const ParamSet&, const RunInfo&) {
          return std::unique_ptr<Scheme>(new AllPairs);
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_all_pairs)
