// The scheduler: builds every plugin object of a scenario, generates the particles and runs the step
// loop  integrator -> modifiers -> observers, with forces from the force field.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "pardyn/backend.hpp"
#include "pardyn/config.hpp"
#include "pardyn/progress.hpp"

namespace pardyn {

namespace parallel {
class Communicator;
class Ring;
class Domain;
}  // namespace parallel

struct RunOptions {
  bool quiet = false;
  std::string output;  // overrides the scenario's output folder when not empty
  // Run on this process alone even when it is one rank of a parallel launch (a reference run
  // inside a parallel test).
  bool serial = false;
};

// Builds every plugin object of the scenario (as a run would, on the CPU backend) without generating
// particles or writing anything: what `pardyn validate` does after the schema checks.
void check_objects(const Scenario& sc, const Registry& registry);

class Simulation final : public StepContext {
public:
  Simulation(const Scenario& sc, const Registry& registry, const RunOptions& opt);
  ~Simulation() override;

  // Runs every step (or until stop() is called, e.g. from a signal handler). Observers always see the
  // final state and are flushed, also when an error ends the run.
  void run();
  void stop() { stop_requested_ = true; }

  // Computes the forces (and energies) now and returns the global quantities: for tests.
  Thermo measure();

  // StepContext
  ParticleStore& store() override { return *store_; }
  BackendOps& ops() override { return *backend_.ops; }
  const RunInfo& run_info() const { return run_; }
  const RunInfo& run() const override { return run_; }
  void compute_forces() override;
  void compute_stage_forces() override;
  void apply_boundaries() override;
  void drift(double dt) override;
  std::uint64_t step() const override { return step_; }
  double time() const override { return time_; }
  double dt() const override { return integrator_->last_dt(); }
  double dof() const override {
    return double(run_.dim) * (double(n_global_) - (momentum_conserved_ ? 1.0 : 0.0));
  }

  const std::string& output_dir() const { return run_.output_dir; }
  std::uint64_t steps_done() const { return steps_done_; }
  double steps_per_second() const { return progress_ ? progress_->steps_per_second() : 0; }
  std::uint64_t force_evaluations() const { return force_evals_; }
  // Wall time of the step loop alone (after the initial forces and observation), in seconds.
  double loop_seconds() const { return loop_seconds_; }

private:
  struct ForceTerm {
    std::shared_ptr<Potential> potential;
    std::shared_ptr<Scheme> scheme;
    std::string label;
  };
  void generate(const Scenario& sc, const Registry& registry);
  // Keeps this rank's share of the generated particles (parallel runs).
  void distribute(HostParticles& all);
  // Moves particles between ranks so that rank r holds a contiguous share proportional to
  // weights[r] (all-pairs ring; all ranks call it).
  void redistribute(const std::vector<double>& weights);
  bool balance_ring();  // true when the blocks changed
  Reductions reduce_all();  // the backend's sums, over all ranks
  Thermo thermo_now();
  void check_inside_walls();
  void observe(bool final_step);
  bool wants_energy(std::uint64_t step) const;

  Scenario scenario_;
  RunInfo run_;
  BackendHandle backend_;
  std::unique_ptr<ParticleStore> store_;
  std::vector<ForceTerm> forces_;
  std::shared_ptr<Integrator> integrator_;
  std::vector<std::shared_ptr<Modifier>> modifiers_;
  std::vector<std::shared_ptr<Observer>> observers_;
  std::unique_ptr<Progress> progress_;

  std::uint64_t step_ = 0, steps_done_ = 0, force_evals_ = 0;
  std::uint64_t progress_interval_ = 0;
  double time_ = 0;
  bool need_energy_ = true;
  bool have_e0_ = false;
  double e0_ = 0;
  double com0_[3] = {0, 0, 0};
  double last_dt_ = 0;
  double loop_seconds_ = 0;
  double phase_[4] = {0, 0, 0, 0};  // PARDYN_PARALLEL_STATS=2
  std::chrono::steady_clock::time_point phase_t_;
  std::uint64_t last_finite_step_ = 0;
  std::atomic<bool> stop_requested_{false};
  bool has_walls_ = false;
  HardWalls walls_;
  bool momentum_conserved_ = true;
  std::vector<double> term_energy_;           // per potential, from the last energy evaluation
  std::vector<std::size_t> analysis_first_;   // per observer: its first column in Thermo::extra
  bool quiet_ = false;
  // Parallel runs: the communicator (null in a serial run), the all-pairs ring and the domain
  // decomposition of short-range schemes (each null when no term needs it).
  parallel::Communicator* comm_ = nullptr;
  std::unique_ptr<parallel::Ring> ring_;
  std::unique_ptr<parallel::Domain> domain_;
  std::size_t n_global_ = 0;
  bool time_ring_ = false;
};

}  // namespace pardyn
