// SPDX-License-Identifier: BSD-3-Clause
// The Observer plugin kind: what observers and analyses receive at an observation step (Thermo,
// ObserveContext) and the interface they implement (files, thermo columns, analyses run on the
// backend through a StepContext).
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/observer.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pardyn/backend_ops.hpp"
#include "pardyn/particles.hpp"
#include "pardyn/run_info.hpp"
#include "pardyn/step_context.hpp"

namespace pardyn {

// Global quantities at an observation step.
struct Thermo {
  std::uint64_t step = 0;
  double time = 0;
  Reductions r;
  double total = 0;           // kinetic + potential
  double initial_total = 0;   // total energy at step 0
  double relative_drift = 0;  // (E - E0) / |E0|
  double temperature = 0;     // 2 K / (dof k_B), k_B = 1
  std::uint64_t force_evaluations = 0;
  double dt = 0;                     // the last step's size
  std::uint64_t rejected_steps = 0;  // adaptive integrators: steps tried and rejected so far
  double com_drift = 0;              // distance of the centre of mass from where it was at step 0
  double dof = 0;                    // degrees of freedom of the temperature: dim N, less dim when
                                     // momentum is conserved (no walls, fields or Langevin noise)
  double volume = 0;                 // box volume (area in 2D)
  double pressure = 0;  // virial pressure (2 K + W) / (dim V); NaN when an axis is open
  std::vector<double> potential_terms;  // potential energy of each [[potential]] (RunInfo order)
  std::vector<double> extra;            // values of RunInfo::extra_columns, in that order
};

struct ObserveContext {
  std::uint64_t step = 0;
  double time = 0;
  const RunInfo* run = nullptr;
  const HostParticles* particles = nullptr;  // host copy of the fields the observer asked for
  const Thermo* thermo = nullptr;
  // The same host copy, owned jointly: an observer that writes in the background keeps this instead
  // of copying the particles (the framework makes a fresh copy for every observation step).
  std::shared_ptr<const HostParticles> shared_particles;
};

class Observer {
 public:
  virtual ~Observer() = default;
  virtual std::uint64_t interval() const = 0;    // observe every this many steps (and at step 0)
  virtual unsigned fields() const { return 0; }  // ParticleStore::Field bits it needs on the host
  virtual void begin(const RunInfo&) {}
  // Analyses: columns this observer adds to thermo, and the computation behind them, run on the
  // backend (device data, the store's extra fields) at this observer's steps before the host copy.
  // analyse() fills t.extra[first + k] for its k-th column (first: where its columns start).
  virtual std::vector<std::string> columns() const { return {}; }
  virtual void analyse(StepContext&, Thermo& /*t*/, std::size_t /*first*/) {}
  virtual void observe(const ObserveContext& ctx) = 0;
  // Called once after the last step (or when the run stops on an error); must flush everything.
  virtual void end() {}
  // Makes everything observed so far durable (background writes finished, files flushed): called
  // before a checkpoint is written, so that a run resumed from it finds every row and frame up to
  // the checkpoint's step.
  virtual void sync() {}
  // The files and folders it writes, as given in its parameters (a relative path is relative to the
  // run's output folder): "run.pvd", "frames/" (a trailing '/' marks a folder it owns). Known before
  // begin(), so that `pardyn validate` refuses outputs that share a name or write outside the output
  // folder.
  virtual std::vector<std::string> files() const { return {}; }
};

}  // namespace pardyn
