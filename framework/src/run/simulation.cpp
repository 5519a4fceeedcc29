// SPDX-License-Identifier: BSD-3-Clause
// The scheduler: the run's objects made in order, the step loop and the interface integrators
// call back into (StepContext). Particle set-up, parallel planning, load balance, profiling,
// checkpoints and the output folder have their own files (one job per file).
#include "pardyn/app/simulation.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <limits>
#include <random>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include "io/checkpoint.hpp"
#include "simulation_parts.hpp"
#include "pardyn/app/cuda.hpp"
#include "pardyn/math.hpp"
#include "pardyn/app/memory.hpp"
#include "pardyn/output.hpp"
#include "parallel/communicator.hpp"
#include "parallel/domain.hpp"
#include "parallel/ring.hpp"
#include "parallel/tree_exchange.hpp"
#include "run/force_runner.hpp"
#include "parallel/store_ops.hpp"

namespace fs = std::filesystem;

namespace pardyn {

// A finite cut-off longer than half a periodic side: the minimum image counts every pair once, at
// its nearest image, so the law would be cut at half the side along that axis instead of at its
// cut-off (and particles would miss neighbours they should see twice).
void check_cutoff_in_box(const Potential& pot, const std::string& label, const Box& box, int dim) {
  if (pot.external()) return;
  const double cut = pot.cutoff();
  if (!std::isfinite(cut)) return;
  for (int d = 0; d < dim; ++d) {
    if (box.boundary[d] != Boundary::Periodic || !(cut > 0.5 * box.length(d))) continue;
    throw Error(label + ": its cut-off " + format_number(cut) +
                " is more than half the periodic box "
                "side along " +
                "xyz"[d] + " (" + format_number(box.length(d)) +
                "): the minimum-image convention sees each pair once, at its nearest image, so the "
                "law would end at " +
                format_number(0.5 * box.length(d)) +
                " along that axis and "
                "forces and energies would be wrong; make the box at least " +
                format_number(2 * cut) + " wide along " + "xyz"[d] +
                " (twice the cut-off) or lower "
                "the cut-off");
  }
}

Simulation::Simulation(const Scenario& sc, const Registry& registry, const RunOptions& opt)
    : scenario_(sc), quiet_(opt.quiet) {
  resume_ = opt.resume;
  resume_file_ = opt.resume_file;
  resume_changed_ = opt.resume_changed;
  comm_ = opt.serial ? nullptr : parallel::world();
  const std::string note = start_backend(sc);
  fill_run_info(run_, sc);
  run_.backend = backend_.backend;
  run_.output_dir =
      fs::absolute(opt.output.empty() ? sc.output : opt.output).lexically_normal().string();
  run_.quiet = opt.quiet;
  if (resume_) {
    run_.resume = true;
    run_.resume_step = resume_->step;
    run_.resume_time = resume_->time;
    first_step_ = resume_->step;
  }
  progress_ = std::make_unique<Progress>(sc.steps, opt.quiet || run_.rank != 0);
  if (!note.empty()) progress_->message(note);

  // Every object is made (and so every parameter problem a factory finds is reported) before any
  // output is written. In a parallel run the ranks agree on the outcome before going on, so that an
  // error on one rank is reported once and no rank waits for the others in vain.
  parallel::agree(comm_, [&] {
    store_ = std::make_unique<ParticleStore>(sc.dim, sc.precision, *backend_.memory);
    make_force_terms(sc, registry);
    integrator_ = registry.make_integrator(sc.integrator.type, sc.integrator.params, run_);
    dt_max_ = integrator_->dt();
    plan_parallel(sc);
    make_particles(sc, registry);
    plan_far_ghosts(sc);
    make_runners();
    make_modifiers_and_outputs(sc, registry);
  });

  progress_interval_ =
      sc.progress_interval ? sc.progress_interval : std::max<std::uint64_t>(1, sc.steps / 10);
  timing_.force.assign(forces_.size(), 0.0);
  timing_.cuda = backend_.backend == Backend::Cuda;

  // Output folder: a previous run's frames are removed so that the series is never a mix of two runs.
  // `pardyn validate` stops before it: everything is made and checked, nothing is written.
  if (opt.check_only) {
    parallel::agree(comm_, [&] { build_neighbourhoods(); });
    return;
  }
  parallel::agree(comm_, [&] { prepare_output_folder(sc); });

  char dt[32];
  std::snprintf(dt, sizeof dt, "%g", integrator_->dt());
  std::string ranks;
  if (comm_) {
    std::vector<std::string> how;
    if (domain_)
      how.push_back("domain decomposition: " + domain_->describe() +
                    (domain_->device_links() ? ", ghosts GPU to GPU" : ""));
    if (ring_) how.push_back("all-pairs ring");
    if (std::find(tree_on_ranks_.begin(), tree_on_ranks_.end(), true) != tree_on_ranks_.end())
      how.push_back("tree exchange, the Morton curve cut in " + std::to_string(comm_->size()));
    ranks = ", " + std::to_string(comm_->size()) + " ranks";
    for (std::size_t i = 0; i < how.size(); ++i) ranks += (i ? "; " : " (") + how[i];
    if (!how.empty()) ranks += ")";
  }
  progress_->message("pardyn: " + std::to_string(n_global_) + " particles, " +
                     std::to_string(sc.dim) + "D, " + to_string(sc.precision) + ", backend " +
                     backend_.description + ranks + ", " + std::to_string(sc.steps) +
                     " steps of dt = " + dt);
  progress_->message("output: " + run_.output_dir);
  if (comm_ && std::getenv("PARDYN_PARALLEL_STATS"))
    std::fprintf(stderr, "rank %d of %d: %zu particles, backend %s\n", comm_->rank(), comm_->size(),
                 store_->size(), backend_.description.c_str());
}

// [simulation] gpu_memory_limit: each rank's GPU keeps `gib` GiB free for it and no more. Ranks that
// share a GPU (local ranks take the node's GPUs in turn) share the sum: the first of them takes
// the rest, after every rank has made its CUDA context (which needs memory of its own).
void Simulation::limit_gpu_memory(double gib, std::string& note) {
  const double want = gib * 1073741824.0;
  const int devices = cuda::device_count();
  const int local = comm_ ? comm_->local_rank() : 0, locals = comm_ ? comm_->local_size() : 1;
  const int sharers = locals / devices + (local % devices < locals % devices ? 1 : 0);
  if (comm_) comm_->barrier();
  std::size_t left = 0;
  if (local < devices) left = cuda::cap_memory(std::size_t(want * sharers));
  if (comm_) comm_->barrier();
  if (!comm_ || comm_->rank() == 0)
    note += std::string(note.empty() ? "" : "\n") + "GPU memory limited to " + bytes_text(want) +
            " per rank ([simulation] gpu_memory_limit; " + bytes_text(double(left)) +
            " left free on this GPU" +
            (sharers > 1 ? " for its " + std::to_string(sharers) + " ranks" : "") + ")";
}

// The ranks, threads and the backend of this process; returns the backend's note (a fallback), if
// any. A resumed run that needs exact arithmetic checks they match the checkpoint's.
std::string Simulation::start_backend(const Scenario& sc) {
  if (comm_) {
    run_.rank = comm_->rank();
    run_.ranks = comm_->size();
    run_.comm = comm_;
    // Ranks on one node share its cores unless [simulation] threads says otherwise.
    if (sc.threads == 0 && !std::getenv("OMP_NUM_THREADS"))
      omp_set_num_threads(std::max(1, omp_get_num_procs() / std::max(1, comm_->local_size())));
    if (!sc.rank_weights.empty() && int(sc.rank_weights.size()) != comm_->size())
      throw Error("[simulation] rank_weights has " + std::to_string(sc.rank_weights.size()) +
                  " values but the run has " + std::to_string(comm_->size()) +
                  " ranks; give one weight per rank (or none)");
  }
  if (sc.threads > 0) omp_set_num_threads(sc.threads);
  std::string note;
  // One GPU per rank on each node: the node's ranks take its devices in turn.
  if (comm_ && sc.backend != "cpu" && cuda::device_count() > 0)
    cuda::select_device(comm_->local_rank() % cuda::device_count());
  parallel::agree(comm_, [&] { backend_ = make_backend(sc.backend, note); });
  // The reductions plugins act on (a thermostat's kinetic energy, an adaptive step's error) are
  // over every rank's particles.
  backend_.ops->set_comm(comm_);
  if (sc.gpu_memory_limit > 0 && backend_.backend == Backend::Cuda)
    limit_gpu_memory(sc.gpu_memory_limit, note);

  if (resume_ && !resume_changed_) {
    // The same arithmetic as the run that wrote the checkpoint: backend and CPU thread count.
    if (resume_->backend != to_string(backend_.backend))
      throw Error("checkpoint " + resume_file_ + " was written on the " + resume_->backend +
                  " backend; this run got " + to_string(backend_.backend) +
                  ": set [simulation] backend = \"" + resume_->backend +
                  "\" (or give --resume-changed to continue on this one, not bit for bit)");
    if (backend_.backend == Backend::Cpu && resume_->threads != omp_get_max_threads())
      throw Error(
          "checkpoint " + resume_file_ + " was written by " + std::to_string(resume_->threads) +
          " CPU threads; this run has " + std::to_string(omp_get_max_threads()) +
          ", which sums forces in another order: "
          "set [simulation] threads = " +
          std::to_string(resume_->threads) + " (or OMP_NUM_THREADS), or give --resume-changed");
  }
  return note;
}

// The [[potential]] terms: each law with its scheme, checked against each other and the box.
void Simulation::make_force_terms(const Scenario& sc, const Registry& registry) {
  for (const auto& p : sc.potentials) {
    ForceTerm ft;
    ft.label = "potential \"" + p.type + "\" (" + p.where + ")";
    ft.potential = registry.make_potential(p.type, p.params, run_);
    // The scheme planned for this number of ranks (scenario/scheme_choice.cpp, if none was given).
    ft.scheme = registry.make_scheme(p.scheme.type, p.scheme.params, run_);
    const auto kind = ft.scheme->neighbourhood().kind;
    if (!ft.potential->supports(kind)) {
      const std::string why = ft.potential->unsupported_reason(kind);
      throw Error(ft.label + " cannot be used with scheme \"" + p.scheme.type + "\"" +
                  (why.empty() ? "" : ": " + why));
    }
    check_cutoff_in_box(*ft.potential, ft.label, run_.box, run_.dim);
    if (ft.potential->enforces_boundaries()) {
      if (boundary_) throw Error(ft.label + ": only one walls potential may be given");
      boundary_ = ft.potential;
    }
    if (ft.potential->external()) momentum_conserved_ = false;
    forces_.push_back(std::move(ft));
  }
}

// Thermo's potential labels, the modifiers and the outputs (the checkpoint output taken out of the
// observers), with the outputs' files checked against each other.
void Simulation::make_modifiers_and_outputs(const Scenario& sc, const Registry& registry) {
  // Potential labels for thermo: the type, numbered when a type appears more than once.
  for (std::size_t k = 0; k < sc.potentials.size(); ++k) {
    std::size_t same = 0, index = 0;
    for (std::size_t j = 0; j < sc.potentials.size(); ++j)
      if (sc.potentials[j].type == sc.potentials[k].type) {
        if (j < k) ++index;
        ++same;
      }
    run_.potential_labels.push_back(same > 1 ? sc.potentials[k].type + "_" + std::to_string(index)
                                             : sc.potentials[k].type);
  }
  for (const auto& m : sc.modifiers) {
    modifiers_.push_back(registry.make_modifier(m.type, m.params, run_));
    if (!modifiers_.back()->conserves_momentum()) momentum_conserved_ = false;
  }
  std::vector<OutputFiles> files = framework_files();
  for (std::size_t k = 0; k < sc.outputs.size(); ++k) {
    const auto& o = sc.outputs[k];
    auto obs = registry.make_observer(o.type, o.params, run_);
    files.push_back({output_label(k, o), o.type, obs->files()});
    if (const auto* c = dynamic_cast<const CheckpointOutput*>(obs.get())) {
      if (ckpt_.on)
        throw Error("[[output]] type = \"checkpoint\" (" + o.where +
                    ") is given twice; one checkpoint output takes interval, every_seconds and "
                    "keep together");
      ckpt_.on = true;
      ckpt_.interval = c->steps();
      ckpt_.every_seconds = c->seconds();
      ckpt_.keep = c->keep();
      continue;
    }
    observers_.push_back(std::move(obs));
    analysis_first_.push_back(run_.extra_columns.size());
    for (const auto& c : observers_.back()->columns()) run_.extra_columns.push_back(c);
  }
  check_output_files(files);
  for (std::size_t k = framework_files().size(); k < files.size(); ++k)  // the outputs' own
    for (const auto& f : files[k].files)
      output_names_.push_back(fs::path(f).lexically_normal().string());
}

Simulation::~Simulation() {
  if (lock_fd_ >= 0)
    ::close(lock_fd_);  // the lock goes with it (and with the process, however it ends)
}

// The backend's sums over every rank's particles (BackendOps::reduce; its communicator is the run's).
Reductions Simulation::reduce_all() { return backend_.ops->reduce(*store_); }

bool Simulation::wants_energy(std::uint64_t step) const {
  if (step == scenario_.steps || step % progress_interval_ == 0) return true;
  for (const auto& o : observers_)
    if (step % std::max<std::uint64_t>(1, o->interval()) == 0) return true;
  return false;
}

void Simulation::compute_forces() {
  // A tree's pieces re-dealt between the ranks before the evaluation (never between its passes).
  if (balance_.pending) redeal_morton();
  // The first measurement comes early (step 5), so that a run shorter than balance_interval, or
  // the first balance_interval steps of a long one, do not run on the initial deal's imbalance.
  const std::uint64_t first = std::min<std::uint64_t>(balance_.interval, 5);
  balance_.measure = balance_.interval > 0 && step_ > 0 &&
                     (step_ % balance_.interval == 0 || step_ == first) &&
                     step_ != balance_.measured_step;
  if (!need_energy_) {
    energy_fresh_ = false;
    evaluate_forces();
    ++force_evals_;
    return;
  }
  // Energies in a pass of their own: the accelerations always come from an evaluation without
  // energies, so that how often a run observes never changes its trajectory (force kernels with and
  // without energies may sum in different orders). A resumed run that observes at other steps, or
  // an extended one, therefore continues bit for bit. Costs one more evaluation per observed step.
  need_energy_ = false;
  evaluate_forces();
  need_energy_ = true;
  energy_fresh_ = true;
  if (!energy_store_ || energy_store_->capacity() != store_->capacity()) {
    energy_store_ = std::make_unique<ParticleStore>(run_.dim, run_.precision, store_->memory());
    energy_store_->reserve(store_->capacity());
  }
  store_->swap_accelerations(*energy_store_);
  evaluate_forces();
  store_->swap_accelerations(*energy_store_);
  ++force_evals_;
}

// One force evaluation: the communication the terms share, then each term through its runner
// (run/force_runner.hpp), with the energies split per term when there are several.
void Simulation::evaluate_forces() {
  // PARDYN_PARALLEL_STATS=2: the time of each part, the device synchronised after each (slower).
  static const bool phases = [] {
    const char* e = std::getenv("PARDYN_PARALLEL_STATS");
    return e && e[0] == '2';
  }();
  auto mark = [&](int k) {
    if (!phases) return;
    if (backend_.backend == Backend::Cuda) cuda::synchronize("phase statistics");
    const auto now = std::chrono::steady_clock::now();
    if (k >= 0) phase_[k] += std::chrono::duration<double>(now - phase_t_).count();
    phase_t_ = now;
  };
  mark(-1);
  timing_.lap(&timing_.integrate);  // the integrator's work since its last evaluation
  communicate();
  mark(0);
  // A first term that sets the store's forces itself (on the domain's work store) spares zeroing.
  const bool set_by_first = !forces_.empty() && forces_[0].runner->sets_forces();
  if (!set_by_first) backend_.ops->zero_forces(*store_, need_energy_, need_energy_);
  ForceRequest req;
  req.energy = need_energy_;
  req.virial = need_energy_;
  req.box = &run_.box;
  std::size_t k = 0;
  Evaluation ev{*store_, *backend_.ops, req, false, false, false, false, 0.0, {}};
  ev.only = forces_.size() == 1;
  ev.time_ring = time_ring_;
  ev.lap = [&](Phase p) {
    switch (p) {
      case Phase::Neighbour:
        mark(1);
        timing_.lap(&timing_.neighbour);
        break;
      case Phase::Force:
        mark(2);
        timing_.lap(&timing_.force[k]);
        break;
      case Phase::Comm:
        mark(3);
        timing_.lap(&timing_.comm);
        break;
    }
  };
  // With several potentials, each one's energy is the growth of the total it leaves behind.
  const bool split = need_energy_ && forces_.size() > 1;
  if (need_energy_) term_energy_.assign(forces_.size(), 0.0);
  double before = 0;
  ev.measure = balance_.measure;
  balance_.measure = false;
  for (k = 0; k < forces_.size(); ++k) {
    ev.first = k == 0 && set_by_first;
    forces_[k].runner->compute(ev);
    if (split) {
      // This rank's share: thermo_now() adds the terms' energies over the ranks.
      const double now = backend_.ops->rank_reduce(*store_).potential;
      term_energy_[k] = now - before;
      before = now;
      timing_.lap(&timing_.output);  // the energies' split is for thermo
    }
  }
  if (ev.measure) judge_balance(ev.work_seconds);
}

void Simulation::communicate() {
  // Parallel short range: particles that left their sub-box move first, then the ghosts come.
  if (domain_) {
    domain_->prepare(*store_);
    timing_.lap(&timing_.comm);
  }
}

void Simulation::build_neighbourhoods() {
  apply_boundaries();
  if (domain_) domain_->prepare(*store_);
  for (auto& f : forces_) f.runner->build(*store_, *backend_.ops);
}

void Simulation::check_inside_walls() {
  HostParticles hp(run_.dim);
  store_->download(hp, ParticleStore::kPosition);
  for (int d = 0; d < run_.dim; ++d) {
    if (run_.box.boundary[d] != Boundary::Wall) continue;
    for (std::size_t i = 0; i < hp.size(); ++i)
      if (hp.x[d][i] < run_.box.lo[d] || hp.x[d][i] > run_.box.hi[d])
        throw Error("particle " + std::to_string(i) + " starts outside the walled box: its " +
                    "xyz"[d] + " = " + format_number(hp.x[d][i]) + " is not in [" +
                    format_number(run_.box.lo[d]) + ", " + format_number(run_.box.hi[d]) +
                    "]; generate the particles inside [box] (a generator's region, or the block's "
                    "offset)");
  }
}

void Simulation::drift(double dt) {
  if (boundary_) boundary_->before_drift(*store_, run_.box, dt);
  backend_.ops->drift(*store_, dt);
  apply_boundaries();
}

void Simulation::compute_stage_forces() {
  const bool energy = need_energy_;
  need_energy_ = false;
  compute_forces();
  need_energy_ = energy;
}

void Simulation::apply_boundaries() {
  if (run_.box.any_periodic(run_.dim)) backend_.ops->wrap_periodic(*store_, run_.box);
  if (boundary_) boundary_->apply_boundaries(*store_, run_.box);
}

Thermo Simulation::thermo_now() {
  Thermo t;
  t.step = step_;
  t.time = time_;
  t.r = reduce_all();
  t.total = t.r.kinetic + t.r.potential;
  double com[3] = {0, 0, 0};
  // The centre of mass of the unwrapped positions: a particle that crosses a periodic face moves
  // the centre of mass by its own displacement, not by a box length back.
  for (int d = 0; d < run_.dim; ++d) {
    const double moment = t.r.mass_moment[d] + t.r.image_moment[d] * run_.box.length(d);
    com[d] = t.r.mass > 0 ? moment / t.r.mass : 0.0;
  }
  if (!have_e0_) {
    e0_ = t.total;
    std::copy(com, com + 3, com0_);
    have_e0_ = true;
  }
  t.com_drift = std::sqrt(sq(com[0] - com0_[0]) + sq(com[1] - com0_[1]) + sq(com[2] - com0_[2]));
  t.dt = last_dt_;
  t.rejected_steps = integrator_->rejected_steps();
  t.initial_total = e0_;
  t.relative_drift = e0_ != 0 ? (t.total - e0_) / std::fabs(e0_) : t.total - e0_;
  const double dof = this->dof();
  t.dof = dof;
  t.temperature = dof > 0 ? 2.0 * t.r.kinetic / dof : 0.0;
  t.force_evaluations = force_evals_;
  bool open = false;
  t.volume = 1;
  for (int d = 0; d < run_.dim; ++d) {
    t.volume *= run_.box.length(d);
    open = open || run_.box.boundary[d] == Boundary::Open;
  }
  t.pressure = open ? std::nan("") : (2.0 * t.r.kinetic + t.r.virial) / (run_.dim * t.volume);
  t.potential_terms = forces_.size() == 1 ? std::vector<double>{t.r.potential} : term_energy_;
  if (comm_ && forces_.size() > 1 && !t.potential_terms.empty())
    comm_->sum(t.potential_terms.data(), t.potential_terms.size());
  t.extra.assign(run_.extra_columns.size(), std::nan(""));
  return t;
}

Thermo Simulation::measure() {
  need_energy_ = true;
  compute_forces();
  return thermo_now();
}

void Simulation::observe(bool final_step) {
  if (seen_step_ != step_) {
    seen_now_.clear();
    line_now_ = false;
    seen_step_ = step_;
  }
  // Each observer sees a step once (a run stepped in pieces may ask for the final observation of a
  // step that was observed as a regular one).
  std::vector<Observer*> due;
  for (auto& o : observers_)
    if ((final_step || step_ % std::max<std::uint64_t>(1, o->interval()) == 0) &&
        std::find(seen_now_.begin(), seen_now_.end(), o.get()) == seen_now_.end())
      due.push_back(o.get());
  const bool line = (final_step || step_ % progress_interval_ == 0) && !line_now_;
  if (final_step) observed_now_ = true;
  if (due.empty() && !line) return;
  seen_now_.insert(seen_now_.end(), due.begin(), due.end());
  line_now_ = line_now_ || line;

  const bool cuda = backend_.backend == Backend::Cuda;
  if (cuda) cuda::synchronize("timing");
  auto t0 = std::chrono::steady_clock::now();
  Thermo t = thermo_now();
  // Analyses (cluster counts, ...) run on the backend before the host copy: their per-particle
  // labels travel with it.
  for (std::size_t k = 0; k < observers_.size(); ++k)
    if (!observers_[k]->columns().empty() ||
        std::find(due.begin(), due.end(), observers_[k].get()) != due.end())
      observers_[k]->analyse(*this, t, analysis_first_[k]);
  if (cuda) cuda::synchronize("timing");
  const auto t1 = std::chrono::steady_clock::now();
  timing_.analysis += std::chrono::duration<double>(t1 - t0).count();
  struct AddOutput {
    Timing& timing;
    std::chrono::steady_clock::time_point from;
    ~AddOutput() {
      timing.output +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
    }
  } add_output{timing_, t1};
  if (!t.r.finite) throw Error(non_finite_message());
  last_finite_step_ = step_;
  unsigned fields = 0;
  for (auto* o : due) fields |= o->fields();
  std::shared_ptr<HostParticles> host;
  if (fields) {
    host = std::make_shared<HostParticles>(run_.dim);
    store_->download(*host, fields);
  }
  if (keep_history_) {
    if (!history_.empty() && history_.back().step == t.step) history_.back() = t;
    else history_.push_back(t);
  }
  last_thermo_ = t;
  ObserveContext ctx{step_, time_, &run_, host.get(), &t, host};
  for (auto* o : due) o->observe(ctx);
  if (line) progress_->thermo_line(t, run_.dim);
}

std::vector<std::pair<std::string, double>> thermo_columns(const Thermo& t, const RunInfo& run) {
  std::vector<std::pair<std::string, double>> c;
  c.reserve(24 + t.extra.size());
  c.emplace_back("step", double(t.step));
  c.emplace_back("time", t.time);
  c.emplace_back("kinetic", t.r.kinetic);
  c.emplace_back("potential", t.r.potential);
  c.emplace_back("total", t.total);
  c.emplace_back("relative_drift", t.relative_drift);
  if (run.dim == 2) {
    c.emplace_back("px", t.r.momentum[0]);
    c.emplace_back("py", t.r.momentum[1]);
    c.emplace_back("lz", t.r.angular_momentum[2]);
  } else {
    const char* p[3] = {"px", "py", "pz"};
    const char* l[3] = {"lx", "ly", "lz"};
    for (int d = 0; d < 3; ++d) c.emplace_back(p[d], t.r.momentum[d]);
    for (int d = 0; d < 3; ++d) c.emplace_back(l[d], t.r.angular_momentum[d]);
  }
  c.emplace_back("temperature", t.temperature);
  c.emplace_back("force_evaluations", double(t.force_evaluations));
  c.emplace_back("dt", t.dt);
  c.emplace_back("rejected_steps", double(t.rejected_steps));
  c.emplace_back("com_drift", t.com_drift);
  c.emplace_back("pressure", t.pressure);
  if (run.potential_labels.size() > 1)
    for (std::size_t k = 0; k < run.potential_labels.size(); ++k)
      c.emplace_back("potential_" + run.potential_labels[k],
                     k < t.potential_terms.size() ? t.potential_terms[k] : std::nan(""));
  for (std::size_t k = 0; k < run.extra_columns.size(); ++k)
    c.emplace_back(run.extra_columns[k], k < t.extra.size() ? t.extra[k] : std::nan(""));
  return c;
}

void Simulation::run() {
  begin_run();
  advance(scenario_.steps, true);
  end_run();
}

void Simulation::add_observer(std::shared_ptr<Observer> o) {
  if (ended_) throw Error("add an observer before the run has ended");
  analysis_first_.push_back(run_.extra_columns.size());
  for (const auto& c : o->columns()) run_.extra_columns.push_back(c);
  observers_.push_back(o);
  if (begun_) guarded([&] { o->begin(run_); });
}

void Simulation::refresh() {
  particles_changed_ = false;
  store_->touch();
  apply_boundaries();
  if (has_walls_) check_inside_walls();
  need_energy_ = true;
  compute_forces();
  observed_now_ = false;
}

Thermo Simulation::thermo() {
  begin_run();
  if (ended_) throw Error("the run has ended" + std::string(failed_ ? " with an error" : ""));
  Thermo t;
  guarded([&] {
    if (particles_changed_) refresh();
    if (!energy_fresh_) {
      need_energy_ = true;
      compute_forces();
    }
    // The observation of this step, with its analyses' columns, when there was one; else the
    // quantities now (the analyses' columns NaN: they run only at observations).
    t = seen_step_ == step_ && !seen_now_.empty() && last_thermo_.step == step_ ? last_thermo_
                                                                                : thermo_now();
  });
  return t;
}

void Simulation::begin_run() {
  if (begun_) return;
  if (ended_) throw Error("the run has ended");
  begun_ = true;
  guarded([&] {
    begin_observers();
    if (resume_) {
      // The state after step s of the run that wrote the checkpoint: particles and their forces
      // (restored in the constructor), the clocks and counters, the plugins' states. Nothing is
      // observed at step s again: the files already hold it.
      const checkpoint::Data& ck = *resume_;
      step_ = ck.step;
      time_ = ck.time;
      set_clock(ck);
      last_dt_ = ck.last_dt;
      force_evals_ = ck.force_evaluations;
      last_finite_step_ = ck.last_finite_step;
      if (!resume_changed_) {
        have_e0_ = ck.have_e0;
        e0_ = ck.e0;
        std::copy(ck.com0, ck.com0 + 3, com0_);
      }
      restore_states(ck);
      last_checkpoint_ = resume_file_;
      last_checkpoint_step_ = ck.step;
      have_checkpoint_step_ = true;
      observed_now_ = true;
      resume_.reset();  // the particles may be many: free them before stepping
      progress_->message("resumed from " + last_checkpoint_ + " at step " + std::to_string(step_) +
                         ", time " + format_value(time_));
    } else {
      particles_changed_ = false;  // the first forces are computed here
      need_energy_ = true;
      apply_boundaries();
      if (has_walls_) check_inside_walls();
      // (Not with a tree term: resized blocks would undo the Morton curve's compact pieces.)
      time_ring_ =
          ring_ && !morton_ && scenario_.balance_by_speed && scenario_.rank_weights.empty();
      compute_forces();
      if (time_ring_) {
        time_ring_ = false;
        if (balance_ring()) compute_forces();
      }
      step_ = 0;
      // Step 0's observation comes before the loop: the closing breakdown's sections, which add up
      // to the loop's time, leave it out.
      const double analysis = timing_.analysis, output = timing_.output;
      observe(scenario_.steps == 0);
      timing_.analysis = analysis;
      timing_.output = output;
    }
    loop_first_ = step_;
    ckpt_clock_ = std::chrono::steady_clock::now();
    progress_->start(step_);
  });
}

// Long: the step loop itself (step control, integrator, modifiers, observation, checkpoints, stop
// requests) in the order each step runs them.
std::uint64_t Simulation::advance(std::uint64_t target, bool to_end) {
  begin_run();
  if (ended_) throw Error("the run has ended" + std::string(failed_ ? " with an error" : ""));
  const std::uint64_t first = step_;
  guarded([&] {
    const double dt_max = dt_max_;
    const bool control = scenario_.dt_acceleration && !integrator_->adaptive();
    const double end_time = to_end ? scenario_.end_time : 0.0;
    const auto loop_start = std::chrono::steady_clock::now();
    bool already_done = first >= target || (end_time > 0 && time_ >= end_time * (1 - 1e-12));
    if (to_end && already_done && first > 0 && first == loop_first_)
      progress_->message("the checkpoint is at step " + std::to_string(first) +
                         ", where the scenario ends: nothing to do (extend the run with --set "
                         "simulation.steps=M)");
    for (std::uint64_t s = first + 1; s <= target && !already_done; ++s) {
      if (particles_changed_) refresh();
      step_ = s;
      observed_now_ = false;
      energy_fresh_ = false;
      if (control) {
        // dt = eta sqrt(length / max|a|), reduced on the backend (on the GPU for CUDA runs).
        const double amax = reduce_all().max_accel;
        const double dt =
            amax > 0 ? scenario_.dt_eta * std::sqrt(scenario_.dt_length / amax) : dt_max;
        integrator_->set_dt(std::min(dt_max, dt));
      }
      const bool last =
          s == target || (end_time > 0 && time_ + integrator_->dt() >= end_time * (1 - 1e-12));
      need_energy_ = wants_energy(s) || last;
      // Phase timing (the closing breakdown): every step on the CPU; on the GPU every 8th step
      // without observation, with the device synchronised between phases.
      timing_.sample = backend_.backend != Backend::Cuda || (!need_energy_ && s % 8 == 5);
      if (timing_.sample) ++timing_.sampled;
      timing_.lap(nullptr);
      integrator_->step(*this);  // its force evaluations go to their own sections
      timing_.lap(&timing_.integrate);
      for (auto& m : modifiers_) m->apply(*this);
      timing_.lap(&timing_.modifiers);
      timing_.sample = false;
      last_dt_ = integrator_->last_dt();
      // A fixed step's time is step x dt, exactly as a user writes it (a running sum drifts:
      // 1.9999999999999793 after 1000 steps of 0.002); adaptive or controlled steps add up.
      if (!control && !integrator_->adaptive())
        time_ = clock_time_ + double(s - clock_step_) * dt_max;
      else time_ += last_dt_;
      steps_done_ = s;
      const bool finished = end_time > 0 && time_ >= end_time * (1 - 1e-12);
      bool stopping = stop_requested_.load() || finished;
      int signal = stop_requested_.load() ? stop_signal_.load() : 0;
      bool seconds_due =
          ckpt_.on && ckpt_.every_seconds > 0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - ckpt_clock_).count() >=
              ckpt_.every_seconds;
      if (comm_) {
        // A signal reaches the ranks at slightly different times: they stop at the same step (and
        // agree on the wall-clock checkpoints, whose clocks differ).
        double v[3] = {stopping ? 1.0 : 0.0, double(signal), seconds_due ? 1.0 : 0.0};
        comm_->max(v, 3);
        stopping = v[0] > 0;
        signal = int(v[1]);
        seconds_due = v[2] > 0;
      }
      const bool at_end = to_end && s == scenario_.steps;
      const bool final_step = at_end || stopping;
      // An interrupted run's checkpoint holds this step's forces as the integrator left them,
      // before the energies of the final observation are computed.
      if (ckpt_.on && stopping && !finished && !at_end) write_checkpoint("interrupt");
      if (stopping && !need_energy_) {
        need_energy_ = true;  // the final observation needs energies
        compute_forces();
      }
      observe(final_step);
      const bool wrote = have_checkpoint_step_ && last_checkpoint_step_ == s;
      if (ckpt_.on && !wrote) {
        if (final_step) write_checkpoint("end");
        else if (ckpt_.interval && s % ckpt_.interval == 0) write_checkpoint("interval");
        else if (seconds_due) write_checkpoint("seconds");
      }
      progress_->update(s, end_time > 0 ? time_ / end_time : -1.0);
      if (finished) break;
      if (!stopping && poll_ && poll_()) {
        stop();
        stopping = true;
        // The checkpoint first (this step's forces as the integrator left them, the analyses'
        // state before the extra observation; rewritten if this step had one, so that it says
        // "interrupt"), then the final observation (energies first).
        if (ckpt_.on) write_checkpoint("interrupt");
        if (!energy_fresh_) {
          need_energy_ = true;
          compute_forces();
        }
        if (!observed_now_) observe(true);
      }
      if (stopping) {
        stopped_by_ = signal;
        progress_->message("stopped at step " + std::to_string(s) +
                           " on request; output is complete up to it" +
                           (last_checkpoint_.empty() ? "" : "; checkpoint: " + last_checkpoint_));
        break;
      }
    }
    loop_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - loop_start).count();
  });
  return step_ - first;
}

void Simulation::end_run() {
  if (ended_) return;
  if (!begun_) {
    ended_ = true;
    return;
  }
  guarded([&] {
    // A run stepped in pieces (advance without to_end) has not observed its final state yet.
    if (particles_changed_) refresh();
    if (!observed_now_) {
      if (!energy_fresh_) {
        need_energy_ = true;
        compute_forces();
      }
      observe(true);
    }
    if (ckpt_.on && !(have_checkpoint_step_ && last_checkpoint_step_ == step_))
      write_checkpoint("end");
    if (std::getenv("PARDYN_PARALLEL_STATS") && std::getenv("PARDYN_PARALLEL_STATS")[0] == '2')
      std::fprintf(
          stderr,
          "rank %d: loop %.4f s: prepare %.4f, zero + neighbours %.4f, forces %.4f, add %.4f s\n",
          run_.rank, loop_seconds_, phase_[0], phase_[1], phase_[2], phase_[3]);
    progress_->finish(steps_done_);
    report_timing(steps_done_ > loop_first_ ? steps_done_ - loop_first_ : 0);
  });
  ended_ = true;
  for (auto& o : observers_) o->end();
}

std::string Simulation::non_finite_message() {
  std::string head =
      "the state has non-finite values (NaN or Inf) at step " + std::to_string(step_);
  if (step_ > 0) head += " (it was finite at step " + std::to_string(last_finite_step_) + ")";
  // What happened: the particles of this rank, on the host.
  HostParticles hp(run_.dim);
  store_->download(hp, ParticleStore::kPosition | ParticleStore::kVelocity |
                           ParticleStore::kAcceleration | ParticleStore::kMass |
                           ParticleStore::kId);
  const int dim = run_.dim;
  auto where = [&](std::size_t i) {
    std::string s = "(";
    for (int d = 0; d < dim; ++d) s += (d ? ", " : "") + format_number(hp.x[d][i]);
    return s + ")";
  };
  // Two particles at one place: a law without softening divides by their distance, 0.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < hp.size(); ++i) {
    bool finite = true;
    for (int d = 0; d < dim; ++d) finite = finite && std::isfinite(hp.x[d][i]);
    if (finite) order.push_back(i);
  }
  auto key = [&](std::size_t i, int d) { return hp.x[d][i]; };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    for (int d = 0; d < dim; ++d)
      if (key(a, d) != key(b, d)) return key(a, d) < key(b, d);
    return a < b;
  });
  for (std::size_t k = 1; k < order.size(); ++k) {
    const std::size_t a = order[k - 1], b = order[k];
    bool same = true;
    for (int d = 0; d < dim; ++d) same = same && hp.x[d][a] == hp.x[d][b];
    if (!same) continue;
    return head + ": particles " + std::to_string(hp.id[a]) + " and " + std::to_string(hp.id[b]) +
           " are at the same place " + where(a) +
           ", where the force between them is infinite (a law without softening divides by their "
           "distance, 0)" +
           (step_ == 0
                ? "; place them apart (the [[particles]] blocks or the file that made them) "
                  "or give the law a softening (eps > 0)"
                : "; lower dt (they met in one step) or give the law a softening (eps > 0)") +
           non_finite_hint();
  }
  // The first particle with a non-finite position, else velocity, else acceleration.
  std::string who, what;
  for (const char* kind : {"position", "velocity", "acceleration"}) {
    const std::vector<double>* v = kind[0] == 'p' ? hp.x : kind[0] == 'v' ? hp.v : hp.a;
    for (std::size_t i = 0; i < hp.size() && who.empty(); ++i)
      for (int d = 0; d < dim && who.empty(); ++d)
        if (i < v[d].size() && !std::isfinite(v[d][i])) {
          who = "; particle " + std::to_string(hp.id[i]) + " has a non-finite " + kind;
          what = kind;
        }
    if (!who.empty()) break;
  }
  if (step_ == 0) {
    if (what == "acceleration")
      return head + ", before any step" + who +
             ": the forces of the initial positions overflow; are particles too close for a law "
             "without softening? Space them out or give the law a softening (eps > 0)";
    if (!what.empty())
      return head + ", before any step" + who +
             ": check the [[particles]] blocks (temperature, velocity, offset) and the generator's "
             "sizes";
    return head +
           ", before any step: every position, velocity and force is finite but the energy "
           "sums overflow (velocities, masses, forces or potential parameters near 1e154 "
           "or more); check the [[particles]] blocks and the [[potential]] parameters";
  }
  return head + who +
         "; the time step is probably too large for the closest encounters: lower dt or raise the "
         "softening" +
         non_finite_hint();
}

std::string Simulation::non_finite_hint() const {
  if (last_checkpoint_.empty()) return "";
  return "; the last checkpoint, " + last_checkpoint_ + " (step " +
         std::to_string(last_checkpoint_step_) +
         "), holds a finite state: continue from it with a smaller step, e.g. `pardyn run "
         "--resume " +
         last_checkpoint_ + " --resume-changed --set integrator.dt=...`";
}

}  // namespace pardyn
