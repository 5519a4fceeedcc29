// SPDX-License-Identifier: BSD-3-Clause
// A plugin's registration unit that forgot pardyn/plugin_export.hpp: PARDYN_PLUGIN must stop the
// compiler saying which header to include (tests/CMakeLists.txt, contract.plugin_export).
#include "pardyn/plugin.hpp"

namespace {
void register_nothing(pardyn::Registrar&) {}
}  // namespace

PARDYN_PLUGIN(register_nothing)
