// SPDX-License-Identifier: BSD-3-Clause
// The scheduler: builds every plugin object of a scenario, generates the particles and runs the step
// loop  integrator -> modifiers -> observers, with forces from the force field.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pardyn/app/backend.hpp"
#include "pardyn/app/config.hpp"
#include "pardyn/app/progress.hpp"

namespace pardyn {

namespace checkpoint {
struct Data;
}

namespace parallel {
class Communicator;
class Ring;
class Domain;
}  // namespace parallel

class ForceRunner;

struct RunOptions {
  bool quiet = false;
  std::string output;  // overrides the scenario's output folder when not empty
  // Run on this process alone even when it is one rank of a parallel launch (a reference run
  // inside a parallel test).
  bool serial = false;
  // pardyn run --resume: the checkpoint to continue from and its file. resume_changed: the scenario
  // differs from the checkpoint's in ways that break exactness (allowed by --resume-changed): the
  // drift reference starts afresh and the ranks may differ.
  std::shared_ptr<const checkpoint::Data> resume;
  std::string resume_file;
  bool resume_changed = false;
  // pardyn validate: every object is made and the particles generated (input files read, memory
  // estimated, walls checked), as for a run, but the output folder is not touched; run() must not
  // be called.
  bool check_only = false;
};

// pardyn run --resume WHERE [FILE]: the newest intact checkpoint at WHERE (a file, a run's output
// folder or its checkpoints folder), read, and the scenario to continue with: FILE's when given,
// else the checkpoint's own, with the --set overrides. Anything that would break the exact
// continuation (checkpoint::scenario_changes, another pardyn build) is an Error naming the keys
// unless allow_changes; notes say what was skipped or changed. output_dir: the checkpoint's run
// folder.
struct Resume {
  Scenario scenario;
  std::shared_ptr<const checkpoint::Data> data;
  std::string file;
  std::string output_dir;
  std::vector<std::string> notes;
};
Resume prepare_resume(const std::string& where, const std::string& file,
                      const std::vector<std::string>& overrides, Registry& registry,
                      bool allow_changes);

// The files one output writes (Observer::files()), for the check below.
struct OutputFiles {
  std::string where;  // "[[output]] #2 (thermo)", for messages
  std::string type;
  std::vector<std::string> files;
};
// Refuses names outside the output folder (absolute, "..") and names two outputs share, or one of
// which lies inside a folder of another (the framework's config.toml, log.txt and .pardyn.lock
// included), naming both outputs.
void check_output_files(const std::vector<OutputFiles>& outputs);

// The columns of thermo.csv (the thermo observer's, without its optional ones) with their values:
// step, time, energies, momentum, ..., one energy per potential when there are several, then the
// analyses' columns. For programs that show a row (the Python module's thermo()).
std::vector<std::pair<std::string, double>> thermo_columns(const Thermo& t, const RunInfo& run);

class Simulation final : public StepContext {
 public:
  // Parallel runs with a tree term: the sources this rank received at the last evaluation (the
  // other ranks' particles and pseudo-particles; 0 without a tree exchange).
  std::size_t tree_sources_received() const;
  // What the run decided beyond the scenario's notes (Scenario::notes), e.g. another scheme on
  // several ranks; `pardyn run` shows them as it starts, `pardyn validate` prints them.
  const std::vector<std::string>& notes() const { return notes_; }
  // The scheme of force term k (its neighbourhood, as the last evaluation left it).
  const Scheme& scheme(std::size_t k) const { return *forces_.at(k).scheme; }
  Simulation(const Scenario& sc, const Registry& registry, const RunOptions& opt);
  ~Simulation() override;

  // Runs every step (or until stop() is called, e.g. from a signal handler). Observers always see the
  // final state and are flushed, also when an error ends the run. The same as begin_run(),
  // advance(scenario steps, true), end_run().
  void run();

  // The run in pieces, for programs that step it themselves (the Python module, docs/python.md):
  // begin_run() makes the initial state (boundaries, forces, the step-0 observation; or the resumed
  // one) and opens the outputs; it does nothing when called again. advance(target, to_end) steps up
  // to step `target` (or until stop()); with to_end it is the run's end, as for run(): the final
  // state is observed and the end checkpoint written, and simulation.end_time is honoured; without,
  // only what is due at each step is observed, and the last step's energies are computed (thermo()).
  // Returns the steps done. end_run() observes the final state if that has not happened, writes the
  // end checkpoint, reports the timing and closes the outputs; the destructor does not call it.
  // After an error in any of them the outputs are closed and failed() is true.
  void begin_run();
  std::uint64_t advance(std::uint64_t target, bool to_end);
  void end_run();
  bool begun() const { return begun_; }
  bool ended() const { return ended_; }
  bool failed() const { return failed_; }
  // Forgets a stop() so that the next advance() steps again.
  void clear_stop() {
    stop_requested_ = false;
    stop_signal_ = 0;
    stopped_by_ = 0;
  }
  // Called every step with the step number during advance() (after the step and its observation);
  // returning true stops the run as stop() does. For a program's own polling (Ctrl-C in Python).
  void set_poll(std::function<bool()> poll) { poll_ = std::move(poll); }
  // Adds an observer (a program's own, e.g. a Python callback), before or after begin_run().
  void add_observer(std::shared_ptr<Observer> o);
  // The store's particles were changed from outside (uploaded positions, velocities, masses): the
  // boundaries are applied and the forces recomputed before the next step or thermo().
  // forces = false: only velocities changed (the forces stay, the energies are recomputed).
  void particles_changed(bool forces = true) {
    if (forces) particles_changed_ = true;
    energy_fresh_ = false;
    last_thermo_.step = ~std::uint64_t(0);  // this step's observation is not the state's now
  }
  // The global quantities of the current state, with energies (computed now if the last step did not).
  Thermo thermo();
  // The quantities of every observation so far, one per step (the steps of every output's
  // observations and of the progress lines), kept when keep_history is set.
  void keep_history(bool on) { keep_history_ = on; }
  const std::vector<Thermo>& history() const { return history_; }
  // The integrator and the scenario as made (for programs that inspect them).
  const Integrator& integrator() const { return *integrator_; }
  const Scenario& scenario() const { return scenario_; }
  Backend backend() const { return backend_.backend; }
  // Asks the run to stop after the current step (async-signal-safe: a signal handler may call it);
  // `signal` is the signal that asked (0: none), for the exit status.
  void stop(int signal = 0) {
    stop_signal_ = signal;
    stop_requested_ = true;
  }
  // The signal that stopped the run (SIGINT, SIGTERM); 0 when it ran to its end (or stop() was
  // called without a signal).
  int stopped_by() const { return stopped_by_; }
  // The newest checkpoint this run wrote ("" if none).
  const std::string& last_checkpoint() const { return last_checkpoint_; }
  // A line for the terminal (unless quiet) and log.txt; log_line: for log.txt alone.
  void say(const std::string& line) { progress_->message(line); }
  void log_line(const std::string& line) { progress_->log_only(line); }
  // The step a resumed run started from (0 for a fresh run).
  std::uint64_t first_step() const { return first_step_; }

  // --- The run changed from outside while it lives (the Python module, docs/python.md; serial
  // runs). live_run.cpp.
  // The whole state in memory, what a checkpoint holds: particles with their forces, step, time,
  // the integrator's and modifiers' states, where Verlet lists were built, and the scenario
  // (with the parameters in effect). Begins the run if it has not begun.
  std::shared_ptr<const checkpoint::Data> snapshot();
  // Puts such a state back (of this run, or of another with the same particles, box and plugins)
  // with the parameters it was taken with (reconfigure): the run then continues exactly as the run
  // that took it did. `registry` reads the state's scenario.
  void restore(const checkpoint::Data& state, Registry& registry);
  // Other parameters from now on: `next` is this run's scenario (load_scenario) with other values
  // of [[potential]] or [[modifier]] parameters or of integrator.dt; anything else that differs
  // is refused. The changed laws and modifiers are made anew by their factories (the checks of
  // a run's start); a modifier keeps its state (save, load). Nothing changes on an error.
  void reconfigure(const Scenario& next, const Registry& registry);

  // Computes the forces (and energies) now and returns the global quantities: for tests.
  Thermo measure();
  // What making the particles held on this rank's host (for tests; PARDYN_PARALLEL_STATS prints it),
  // in particles: the part of the run it generated (ids [first, first + generated)), its share
  // after the exchange by position (domain decomposition), the most particles its host arrays held
  // at once while they were made and distributed, the particles it sent to and received from other
  // ranks, and those of blocks made whole (generators without ranges) on it.
  struct SetupStats {
    std::size_t first = 0, generated = 0, share = 0, peak = 0, sent = 0, received = 0, whole = 0;
  };
  const SetupStats& setup_stats() const { return setup_stats_; }

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
    // How the term runs (run/force_runner.hpp: local, external, domain, far zones, ring, tree
    // exchange), chosen once the run is planned (make_runners).
    std::shared_ptr<ForceRunner> runner;
  };
  // The constructor's steps, in order (simulation.cpp; parallel_plan.cpp: plan_parallel;
  // particle_setup.cpp: make_particles; output_folder.cpp: prepare_output_folder).
  std::string start_backend(const Scenario& sc);  // ranks, threads, backend; returns its note
  void limit_gpu_memory(double gib, std::string& note);
  void make_force_terms(const Scenario& sc, const Registry& registry);
  void plan_parallel(const Scenario& sc);  // the ring and the domain decomposition (parallel runs)
  void make_particles(const Scenario& sc, const Registry& registry);
  // Far zones under the domain decomposition: how far their ghosts reach (the particles known).
  void plan_far_ghosts(const Scenario& sc);
  // Each term's runner, from the plan (the last step of planning: the particles are known).
  void make_runners();
  void make_modifiers_and_outputs(const Scenario& sc, const Registry& registry);
  void prepare_output_folder(const Scenario& sc);  // rank 0
  void generate(const Scenario& sc, const Registry& registry);
  // Keeps this rank's share of the generated particles (parallel runs).
  void distribute(HostParticles& all);
  // Domain decomposition: sends each of this rank's particles to the rank whose sub-box holds it
  // (all ranks together); ids stay in increasing order.
  void exchange_by_position(HostParticles& mine);
  // Moves particles between ranks so that rank r holds a contiguous share proportional to
  // weights[r] (all-pairs ring; all ranks call it).
  void redistribute(const std::vector<double>& weights);
  bool balance_ring();  // true when the blocks changed
  // Load balance of tree terms on several ranks (load_balance.cpp): at step 5 and then every
  // balance_interval steps one evaluation measures each rank's build and walk time; when the
  // slowest rank is more than 10% above
  // the mean, the Morton curve is re-dealt by the ranks' speeds before the next evaluation.
  struct Balance {
    std::uint64_t interval = 0;  // steps between measurements (0: off)
    std::uint64_t measured_step = ~std::uint64_t(0);
    bool measure = false;   // this evaluation measures
    bool pending = false;   // re-deal before the next evaluation
    bool log_only = false;  // the domain decomposition: measured and logged, never re-dealt
    std::vector<double> weights;
    std::uint64_t redeals = 0;
    // The last re-deal: the weights before it and the imbalance that made it (-1: none to judge);
    // measurements to let pass before the next re-deal (doubled each time one is undone).
    std::vector<double> before;
    double redealt_at = -1;
    std::uint64_t hold = 0, skip = 0;
  } balance_;
  void judge_balance(double work_seconds);
  void redeal_morton();
  Reductions reduce_all();  // the backend's sums, over all ranks
  Thermo thermo_now();
  void check_inside_walls();
  // pardyn validate: the state at the start of a run (boundaries applied) and every scheme's
  // structure built over it, which is where a scheme checks what it needs of the law and the box.
  void build_neighbourhoods();
  // The communication every term of an evaluation shares (the domain decomposition's migration
  // and ghosts), before the terms run.
  void communicate();
  void observe(bool final_step);
  bool wants_energy(std::uint64_t step) const;
  void evaluate_forces();      // one evaluation of every term (energies when need_energy_)
  void lock_output_folder();   // one run per output folder at a time (rank 0)
  void replace_earlier_run();  // a fresh run removes what an earlier one wrote (rank 0)
  void report_timing(std::uint64_t steps);  // the closing breakdown (docs/performance.md)
  // Checkpoints (checkpoint.hpp): the whole state to a file (collective), and back.
  void write_checkpoint(const char* reason);
  void restore_particles(const checkpoint::Data& ck);
  void restore_states(const checkpoint::Data& ck);
  void begin_observers();  // begin() each observer; resumed: what of its files each one keeps
  std::size_t rank_offset(const checkpoint::Data& ck) const;  // this rank's first particle in it
  std::string non_finite_hint() const;
  // The whole state as a checkpoint holds it (collective in a parallel run).
  checkpoint::Data capture_state(const char* reason);
  // A modifier's state (save) given to another object of its kind (load), in memory.
  void carry_state(const Modifier& from, Modifier& to);
  // Fixed-step time is clock_time_ + (step - clock_step_) x dt: from step 0 unless dt changed
  // during the run (reconfigure). A saved state (restore, resume) brings its clock (kept with
  // the integrator's state), unless the dt now is another one: the time then goes on from the
  // state's.
  void set_clock(const checkpoint::Data& state);
  // The error for a non-finite state: what happened (two particles at one place, the first particle
  // with a non-finite value) and what to do.
  std::string non_finite_message();

  Scenario scenario_;
  RunInfo run_;
  BackendHandle backend_;
  std::unique_ptr<ParticleStore> store_;
  std::unique_ptr<ParticleStore>
      energy_store_;  // holds the accelerations while energies are computed
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
  std::atomic<int> stop_signal_{0};
  int stopped_by_ = 0;
  // The checkpoint output ([[output]] type = "checkpoint"), if any.
  struct CheckpointPlan {
    bool on = false;
    std::uint64_t interval = 0;  // steps (0: none by count)
    double every_seconds = 0;    // wall clock (0: none by time)
    std::size_t keep = 2;
  } ckpt_;
  std::string last_checkpoint_;
  std::uint64_t last_checkpoint_step_ = 0;
  bool have_checkpoint_step_ = false;
  std::chrono::steady_clock::time_point ckpt_clock_;
  std::shared_ptr<const checkpoint::Data> resume_;
  std::string resume_file_;
  bool resume_changed_ = false;
  std::uint64_t first_step_ = 0;
  int lock_fd_ = -1;                       // <output>/.pardyn.lock, held while the run lives
  std::vector<std::string> output_names_;  // what the outputs write (Observer::files()), normalised
  double dt_max_ = 0;  // the scenario's dt (fixed-step times are step x dt_max_, see set_clock)
  std::uint64_t clock_step_ = 0;
  double clock_time_ = 0;
  // Where the loop's time goes (docs/performance.md): seconds per phase, summed over the steps
  // whose phases are timed (sample), and over every observation and checkpoint.
  struct Timing {
    bool sample = false;
    bool cuda = false;
    std::uint64_t sampled = 0;
    std::chrono::steady_clock::time_point last;
    std::vector<double> force;  // per potential
    double neighbour = 0, comm = 0, integrate = 0, modifiers = 0;
    double analysis = 0, output = 0, checkpoint = 0;
    // Adds the time since the last lap to *bucket (none: restarts the clock), on sampled steps.
    void lap(double* bucket);
  } timing_;
  // The run in pieces (begin_run, advance, end_run).
  bool begun_ = false, ended_ = false, failed_ = false;
  bool particles_changed_ = false;
  bool energy_fresh_ = false;  // the store's energies are those of the current state
  bool observed_now_ = false;  // the current step had its final observation
  std::uint64_t seen_step_ = ~std::uint64_t(0);  // the step of seen_now_
  std::vector<Observer*> seen_now_;              // the observers that saw seen_step_
  bool line_now_ = false;                        // its thermo line was printed
  Thermo last_thermo_;                           // the last observation's quantities
  bool keep_history_ = false;
  std::vector<Thermo> history_;
  std::function<bool()> poll_;
  std::uint64_t loop_first_ = 0;  // the step the stepping started from (timing report)
  // Runs f; on an exception the outputs are closed (failed_) and it is rethrown.
  template <typename F>
  void guarded(F&& f);
  void refresh();           // after particles_changed(): boundaries and forces of the new state
  bool has_walls_ = false;  // some axis of the box has boundary "wall"
  // The potential that enforces the box's boundaries (the walls plugin), if any: one of forces_, or
  // made with its defaults for a box with "wall" axes.
  std::shared_ptr<Potential> boundary_;
  bool momentum_conserved_ = true;
  std::vector<double> term_energy_;          // per potential, from the last energy evaluation
  std::vector<std::size_t> analysis_first_;  // per observer: its first column in Thermo::extra
  bool quiet_ = false;
  // Parallel runs: the communicator (null in a serial run), the all-pairs ring and the domain
  // decomposition of short-range schemes (each null when no term needs it).
  parallel::Communicator* comm_ = nullptr;
  std::unique_ptr<parallel::Ring> ring_;
  std::unique_ptr<parallel::Domain> domain_;
  // Per force term: whether it is a tree exchanged between the ranks (locally essential trees);
  // `morton_` deals the particles along a Morton curve (a tree term without a domain).
  std::vector<bool> tree_on_ranks_;
  bool morton_ = false;
  // Per force term: the ghosts' reach of cell-list far zones under the domain decomposition (they
  // use the whole box and sum the coarse pyramid levels over the ranks), else 0.
  std::vector<double> far_reach_;
  std::vector<std::string> notes_;  // notes()
  std::size_t n_global_ = 0;
  bool time_ring_ = false;
  SetupStats setup_stats_;
};

}  // namespace pardyn
