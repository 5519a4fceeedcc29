// SPDX-License-Identifier: BSD-3-Clause
// What the potentials made from a law share (PairPotential<Law>, pair_potential.hpp;
// ExternalPotential<Law>, external_potential.hpp; a plugin's own class around a law, such as walls):
// the law's FactoryInfo as a potential, the call of its GPU code or the refusal of a plugin built
// without it, and the registration of a plugin that holds one law. Host code.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/law_potential.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "pardyn/backend_choice.hpp"
#include "pardyn/core.hpp"
#include "pardyn/registration.hpp"

namespace pardyn {

// The law's info() (name, documentation, schema) as a potential, on the backends this plugin was
// built for (backend_choice.hpp: the GPU too where it has CUDA sources).
template <class Law>
FactoryInfo law_potential_info() {
  FactoryInfo info = Law::info();
  info.kind = PluginKind::Potential;
  info.backends = kBuiltBackends;
  return info;
}

// Runs the law's GPU code: gpu is PARDYN_CUDA_ONLY(the function its .cu file defines), nullptr in
// a plugin built without CUDA, which refuses the GPU instead.
template <class Law, class Gpu, class... Args>
void law_on_gpu(Gpu gpu, Args&&... args) {
  if constexpr (std::is_same_v<Gpu, std::nullptr_t>)
    throw Error(std::string("potential '") + Law::info().name +
                "' was built without CUDA support; use backend = \"cpu\"");
  else gpu(std::forward<Args>(args)...);
}

}  // namespace pardyn

// The whole registration of a plugin that holds one law: register_fn<Law> (register_pair_potential,
// register_external_potential) is its register function. Its .cpp file includes
// pardyn/plugin_export.hpp too, for PARDYN_PLUGIN (see that header).
#define PARDYN_LAW_PLUGIN(register_fn, Law)                                 \
  namespace {                                                               \
  void pardyn_register_law(::pardyn::Registrar& r) { register_fn<Law>(r); } \
  }                                                                         \
  PARDYN_PLUGIN(pardyn_register_law)
