// SPDX-License-Identifier: BSD-3-Clause
// What simulation.cpp's units share (particle_setup.cpp, output_folder.cpp, run_checkpoint.cpp):
// the checkpoint output's marker class and the framework's own files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pardyn/app/simulation.hpp"

namespace pardyn {

// [[output]] type = "checkpoint": a marker the scheduler recognises and takes out of the observers;
// it writes the checkpoints itself (it alone sees the integrator's and modifiers' states).
class CheckpointOutput final : public Observer {
 public:
  CheckpointOutput(std::uint64_t interval, double seconds, std::size_t keep)
      : interval_(interval), seconds_(seconds), keep_(keep) {}
  std::uint64_t interval() const override { return interval_ ? interval_ : ~std::uint64_t(0); }
  void observe(const ObserveContext&) override {}
  std::vector<std::string> files() const override { return {"checkpoints/"}; }
  std::uint64_t steps() const { return interval_; }
  double seconds() const { return seconds_; }
  std::size_t keep() const { return keep_; }

 private:
  std::uint64_t interval_;
  double seconds_;
  std::size_t keep_;
};

// "[[output]] #2 (thermo, scenario.toml:40:1)" for messages.
inline std::string output_label(std::size_t k, const PluginSpec& o) {
  return "[[output]] #" + std::to_string(k + 1) + " (" + o.type +
         (o.where.empty() ? std::string() : ", " + o.where) + ")";
}

inline std::vector<OutputFiles> framework_files() {
  return {{"pardyn (the resolved configuration)", "pardyn", {"config.toml"}},
          {"pardyn (the run's log)", "pardyn", {"log.txt"}},
          {"pardyn (the folder's lock)", "pardyn", {".pardyn.lock"}},
          {"pardyn (the list of the run's files)", "pardyn", {".pardyn.files"}}};
}

}  // namespace pardyn
