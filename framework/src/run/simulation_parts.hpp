// SPDX-License-Identifier: BSD-3-Clause
// What simulation.cpp's units share (particle_setup.cpp, output_folder.cpp, run_checkpoint.cpp,
// live_run.cpp): the framework's own files, the cut-off check, Simulation::guarded (the checkpoint
// output's marker class: io/checkpoint_output.hpp).
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "io/checkpoint_output.hpp"
#include "pardyn/app/simulation.hpp"

namespace pardyn {

// A finite cut-off longer than half a periodic side is refused (the minimum image would cut the
// law at half the side), naming the potential by `label`.
void check_cutoff_in_box(const Potential& pot, const std::string& label, const Box& box, int dim);

// The fixed-step clock (Simulation::set_clock) in a saved state, among the integrator's values.
constexpr const char* kClockStep = "pardyn.clock_step";
constexpr const char* kClockTime = "pardyn.clock_time";

// "[[output]] #2 (thermo, scenario.toml:40:1)" for messages.
inline std::string output_label(std::size_t k, const PluginSpec& o) {
  return "[[output]] #" + std::to_string(k + 1) + " (" + o.type +
         (o.where.empty() ? std::string() : ", " + o.where) + ")";
}

// Runs f; on an exception the outputs are closed (the run has failed) and it is rethrown.
template <typename F>
void Simulation::guarded(F&& f) {
  try {
    f();
  } catch (...) {
    failed_ = true;
    ended_ = true;
    progress_->finish(steps_done_);
    try {
      throw;
    } catch (const std::exception& e) {
      progress_->log_only(std::string("error: ") + e.what());
    } catch (...) {}
    try {
      for (auto& o : observers_) o->end();
    } catch (...) {}
    throw;
  }
}

inline std::vector<OutputFiles> framework_files() {
  return {{"pardyn (the resolved configuration)", "pardyn", {"config.toml"}},
          {"pardyn (the run's log)", "pardyn", {"log.txt"}},
          {"pardyn (the folder's lock)", "pardyn", {".pardyn.lock"}},
          {"pardyn (the list of the run's files)", "pardyn", {".pardyn.files"}}};
}

}  // namespace pardyn
