// SPDX-License-Identifier: BSD-3-Clause
#include "walls.hpp"

#include "pardyn/plugin_export.hpp"

namespace {
void register_walls(pardyn::Registrar& r) {
  using pardyn::potentials::SoftWalls;
  r.add(pardyn::law_potential_info<SoftWalls>(),
        pardyn::Factory<pardyn::Potential>(
            [](const pardyn::ParamSet& ps, const pardyn::RunInfo& run) {
              return std::unique_ptr<pardyn::Potential>(
                  new pardyn::potentials::Walls(SoftWalls::Params::from(ps, run)));
            }));
}
}  // namespace

PARDYN_PLUGIN(register_walls)
