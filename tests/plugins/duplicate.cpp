// SPDX-License-Identifier: BSD-3-Clause
// A plugin that registers a name the built-in plugins already use.
#include "pardyn/plugin_export.hpp"

namespace {
class Nothing final : public pardyn::Scheme {
 public:
  void update(pardyn::ParticleStore&, const pardyn::Box&, const pardyn::Reach&) override {}
  pardyn::Neighbourhood neighbourhood() const override { return {}; }
};
void register_duplicate(pardyn::Registrar& r) {
  pardyn::FactoryInfo f;
  f.name = "all_pairs";
  f.summary = "a second all_pairs";
  r.add(std::move(f),
        pardyn::Factory<pardyn::Scheme>([](const pardyn::ParamSet&, const pardyn::RunInfo&) {
          return std::unique_ptr<pardyn::Scheme>(new Nothing);
        }));
}
}  // namespace
PARDYN_PLUGIN(register_duplicate)
