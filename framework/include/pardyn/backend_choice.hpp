// SPDX-License-Identifier: BSD-3-Clause
// The seam between a CPU and a CUDA implementation, written once. A plugin (or a part of libpardyn)
// that runs on both backends says here what it was built for and picks its implementation by the
// backend its particles live on; it never writes `#if PARDYN_PLUGIN_HAS_CUDA` itself.
//
//   kBuiltBackends            kCpu, plus kCuda where this code was built with CUDA (a plugin with
//                             CUDA_SOURCES in a CUDA build): what a plugin that runs on both puts into
//                             FactoryInfo::backends, so that a GPU run of a build without CUDA is
//                             refused when the scenario is read.
//   PARDYN_CUDA_ONLY(f)       f where this code is built with CUDA, nullptr elsewhere: the maker of a
//                             CUDA implementation that only a .cu file defines.
//   BackendChoice<Engine>     a CPU and a CUDA maker of one interface Engine. on(backend) gives the
//                             engine of that backend: made at the first call, made anew when the
//                             backend changes (a store moved to the other backend), refused with
//                             no_cuda_error() where there is no CUDA maker.
//   no_cuda_error(who)        the refusal: "<who>: this build has no CUDA code for it ...; use
//                             backend = \"cpu\", or rebuild pardyn with the CUDA toolkit installed".
//   PARDYN_BUILT_NAME         the plugin's name (PARDYN_PLUGIN_NAME), "pardyn" in libpardyn.
//
// Example (a plugin's analysis with its own engines; most plugins need none: the loops of
// for_each.hpp and reduce.hpp already run on either backend):
//   std::unique_ptr<Counter> make_cpu_counter();
//   std::unique_ptr<Counter> make_cuda_counter();   // defined in counter.cu
//   BackendChoice<Counter> counter_{"rdf", make_cpu_counter, PARDYN_CUDA_ONLY(make_cuda_counter)};
//   ...
//   counter_.on(store.backend()).count(...);
// Host code.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/backend_choice.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <memory>
#include <string>

#include "pardyn/core.hpp"

// Whether this code was built with CUDA: a plugin with CUDA sources (PARDYN_PLUGIN_HAS_CUDA, set by
// pardyn_add_plugin) or libpardyn built with CUDA (PARDYN_CORE_HAS_CUDA, private to it).
#if defined(PARDYN_PLUGIN_HAS_CUDA) || defined(PARDYN_CORE_HAS_CUDA)
#define PARDYN_CUDA_ONLY(...) (__VA_ARGS__)
#define PARDYN_BUILT_WITH_CUDA 1
#else
#define PARDYN_CUDA_ONLY(...) nullptr
#define PARDYN_BUILT_WITH_CUDA 0
#endif
// The name of the code being built, for messages: the plugin's (PARDYN_PLUGIN_NAME, set by
// pardyn_add_plugin), else "pardyn".
#if defined(PARDYN_PLUGIN_NAME)
#define PARDYN_BUILT_NAME PARDYN_PLUGIN_NAME
#else
#define PARDYN_BUILT_NAME "pardyn"
#endif

namespace pardyn {

// Not inline: each unit has its own (internal linkage), as it may be built with or without CUDA.
constexpr unsigned kBuiltBackends = PARDYN_BUILT_WITH_CUDA ? (kCpu | kCuda) : kCpu;

// The refusal of GPU work by code built without CUDA; who: what was asked for ("rdf", "the tree").
inline Error no_cuda_error(const std::string& who) {
  return Error(who +
               ": this build has no CUDA code for it (the CUDA toolkit was not found when pardyn "
               "was built, or the plugin has no CUDA sources); use backend = \"cpu\", or rebuild "
               "pardyn with the CUDA toolkit installed (-DPARDYN_CUDA=ON)");
}

template <class Engine>
class BackendChoice {
 public:
  using Maker = std::unique_ptr<Engine> (*)();

  // who: the name in the message of a refused GPU run (the plugin's name).
  BackendChoice(std::string who, Maker cpu, Maker cuda)
      : who_(std::move(who)), cpu_(cpu), cuda_(cuda) {}

  // The engine of backend b (made now if there is none for b).
  Engine& on(Backend b) {
    if (!engine_ || made_for_ != b) {
      engine_.reset();
      if (b == Backend::Cuda && !cuda_) throw no_cuda_error(who_);
      engine_ = b == Backend::Cuda ? cuda_() : cpu_();
      made_for_ = b;
      ++made_;
    }
    return *engine_;
  }
  // How many engines were made so far (a caller that keeps state per engine sees a change).
  unsigned made() const { return made_; }

 private:
  std::string who_;
  Maker cpu_, cuda_;
  std::unique_ptr<Engine> engine_;
  Backend made_for_ = Backend::Cpu;
  unsigned made_ = 0;
};

}  // namespace pardyn
