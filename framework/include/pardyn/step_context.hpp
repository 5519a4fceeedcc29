// SPDX-License-Identifier: BSD-3-Clause
// What integrators, modifiers and analyses see of the running simulation at a step (StepContext:
// the store, the backend's operations, force evaluations, boundaries), and the checkpoint streams
// (StateOut, StateIn) through which they save and restore what they keep between steps.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/step_context.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <cstdint>
#include <string>

#include "pardyn/backend_ops.hpp"
#include "pardyn/particles.hpp"
#include "pardyn/run_info.hpp"

namespace pardyn {

// What integrators and modifiers see of the running simulation.
class StepContext {
 public:
  virtual ~StepContext() = default;
  virtual ParticleStore& store() = 0;
  virtual BackendOps& ops() = 0;
  virtual const RunInfo& run() const = 0;
  // Evaluates the whole force field at the current positions into the store's accelerations (and, on
  // steps where an observer needs them, energies and virials). Counted as one force evaluation.
  virtual void compute_forces() = 0;
  // The same for an intermediate stage of a multi-stage method: forces only, never energies, which
  // are wanted only at the step's final state. Integrators call compute_forces() for that one.
  virtual void compute_stage_forces() { compute_forces(); }
  // Wraps periodic axes and applies boundary conditions after positions changed.
  virtual void apply_boundaries() = 0;
  // x += v dt with the boundaries: the boundary potential's before_drift() before (a-priori wall
  // flips), apply_boundaries() after. Integrators that drift use this rather than ops().drift() so
  // that boundaries work with every integrator.
  virtual void drift(double dt) {
    ops().drift(store(), dt);
    apply_boundaries();
  }
  virtual std::uint64_t step() const = 0;  // the step being taken (1 for the first)
  virtual double time() const = 0;         // simulation time at the start of this step
  // The size of this step; in Modifier::apply(), the step the integrator has just taken (thermostats
  // need it for their relaxation factors).
  virtual double dt() const = 0;
  // Degrees of freedom of the temperature T = 2 K / dof (k_B = 1), as thermo reports it: dim N, less
  // dim when total momentum is conserved (no walls, external fields or Langevin noise).
  virtual double dof() const = 0;
};

// Checkpoints (docs/checkpoints.md): what an integrator or modifier keeps from one step to the next,
// saved by name and restored before the first step of a resumed run, so that the run continues bit
// for bit. Values are saved exactly (doubles, 64-bit integers, state vectors in the store's
// precision); the framework gathers state vectors over the ranks of a parallel run.
class StateOut {
 public:
  virtual ~StateOut() = default;
  virtual void real(const std::string& name, double v) = 0;
  virtual void integer(const std::string& name, std::int64_t v) = 0;
  // A particle-shaped vector of the current store (StateVector of BackendOps::new_state).
  virtual void vector(const std::string& name, const StateVector& y) = 0;
};
class StateIn {
 public:
  virtual ~StateIn() = default;
  // Each throws an Error naming the checkpoint file when the value is missing.
  virtual double real(const std::string& name) = 0;
  virtual std::int64_t integer(const std::string& name) = 0;
  // Fills y (made by BackendOps::new_state for the current store) with the saved vector.
  virtual void vector(const std::string& name, StateVector& y) = 0;
  virtual bool has(const std::string& name) const = 0;
};

}  // namespace pardyn
