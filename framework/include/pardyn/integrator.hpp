// SPDX-License-Identifier: BSD-3-Clause
// The Integrator plugin kind: advances the particles by one step through a StepContext
// (step_context.hpp), fixed-step or adaptive, with its checkpoint state.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/integrator.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <cstdint>

#include "pardyn/step_context.hpp"

namespace pardyn {

class Integrator {
 public:
  virtual ~Integrator() = default;
  // Advances the state by one step; forces in the store are valid for the current positions on entry
  // and must be valid for the new positions on exit.
  virtual void step(StepContext& ctx) = 0;
  // The step the next call to step() will take (for adaptive methods, the current estimate).
  virtual double dt() const = 0;
  // The step the last call to step() took (adaptive methods: the accepted step).
  virtual double last_dt() const { return dt(); }
  // Sets the step of a fixed-step method (the framework's acceleration criterion uses it). Adaptive
  // methods choose their own and ignore it.
  virtual void set_dt(double) {}
  // Whether the method controls its step itself (the framework then leaves dt alone).
  virtual bool adaptive() const { return false; }
  // Whether the method keeps per-particle values between force evaluations (state vectors: Runge-
  // Kutta stages, a multistep history). Such a method cannot run where particles move between ranks
  // during a step (domain decomposition); the framework refuses that combination.
  virtual bool particle_state() const { return false; }
  // Rejected steps so far (adaptive methods), reported in thermo.
  virtual std::uint64_t rejected_steps() const { return 0; }
  // Checkpoints: everything step() keeps between calls besides the store (the step a method chose,
  // a multistep history, counters). load() is called on a fresh object, with the store already
  // holding the saved particles and accelerations; ctx gives it the store and the backend's
  // operations to allocate state vectors.
  virtual void save(StateOut&) const {}
  virtual void load(StateIn&, StepContext&) {}
};

}  // namespace pardyn
