// SPDX-License-Identifier: BSD-3-Clause
// The Modifier plugin kind: acts on the particles after every integrator step (thermostats; see
// thermostat.hpp for the thermostat helpers), through a StepContext (step_context.hpp).
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/modifier.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include "pardyn/step_context.hpp"

namespace pardyn {

class Modifier {
 public:
  virtual ~Modifier() = default;
  virtual void apply(StepContext& ctx) = 0;  // after each integrator step
  // Whether total momentum survives apply() (a Langevin thermostat's random kicks do not).
  virtual bool conserves_momentum() const { return true; }
  // Checkpoints: the modifier's state between steps (see Integrator::save).
  virtual void save(StateOut&) const {}
  virtual void load(StateIn&, StepContext&) {}
};

}  // namespace pardyn
