// SPDX-License-Identifier: BSD-3-Clause
// The framework's own output, [[output]] type = "checkpoint" (docs/checkpoints.md): its marker class
// and its registration, which every Registry makes at its start (loader/registry.cpp). The scheduler
// takes the marker out of the observers and writes the checkpoints itself (run/run_checkpoint.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pardyn/observer.hpp"
#include "pardyn/registration.hpp"

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

// Registers the framework's own outputs (the checkpoint output) with a registry.
void register_builtin_outputs(Registrar& r);

}  // namespace pardyn
