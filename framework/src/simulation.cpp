#include "pardyn/simulation.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <filesystem>
#include <random>

#include "pardyn/math.hpp"
#include "pardyn/output.hpp"

namespace fs = std::filesystem;

namespace pardyn {

namespace {

// Adds Maxwell-Boltzmann velocities at temperature T (k_B = 1) to particles [b, e): the thermal part has
// zero net momentum and is rescaled to exactly T with dim*(n-1) degrees of freedom.
void add_thermal_velocities(HostParticles& hp, std::size_t b, std::size_t e, double T,
                            std::mt19937_64& rng) {
  const std::size_t n = e - b;
  if (T <= 0 || n < 2) return;
  const int dim = hp.dim;
  std::normal_distribution<double> gauss(0.0, 1.0);
  std::vector<double> u[3];
  double p[3] = {0, 0, 0}, mtot = 0;
  for (int d = 0; d < dim; ++d) u[d].resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double m = hp.mass[b + i];
    mtot += m;
    for (int d = 0; d < dim; ++d) {
      u[d][i] = gauss(rng) * std::sqrt(T / m);
      p[d] += m * u[d][i];
    }
  }
  double k = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < dim; ++d) {
      u[d][i] -= p[d] / mtot;
      k += 0.5 * hp.mass[b + i] * u[d][i] * u[d][i];
    }
  const double target = 0.5 * dim * double(n - 1) * T;
  const double s = k > 0 ? std::sqrt(target / k) : 0.0;
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < dim; ++d) hp.v[d][b + i] += s * u[d][i];
}

void check_generated(const HostParticles& hp, const ParticleBlock& pb, int dim) {
  const std::size_t n = hp.size();
  const std::string who = "generator \"" + pb.type + "\" (" + pb.where + ")";
  if (n == 0) throw Error(who + " produced no particles; check its count");
  for (int d = 0; d < dim; ++d)
    if (hp.x[d].size() != n || (hp.v[d].size() != n && !hp.v[d].empty()))
      throw Error("internal: " + who + " returned arrays of mismatched length");
  for (std::size_t i = 0; i < n; ++i) {
    if (!(hp.mass[i] > 0) || !std::isfinite(hp.mass[i]))
      throw Error(who + ": particle " + std::to_string(i) + " has mass " +
                  std::to_string(hp.mass[i]) + "; masses must be positive and finite");
    for (int d = 0; d < dim; ++d)
      if (!std::isfinite(hp.x[d][i]))
        throw Error(who + ": particle " + std::to_string(i) + " has a non-finite position");
  }
}

}  // namespace

void check_objects(const Scenario& sc, const Registry& registry) {
  RunInfo run;
  run.dim = sc.dim;
  run.precision = sc.precision;
  run.backend = Backend::Cpu;
  run.box = sc.box;
  run.seed = sc.seed;
  run.scenario_dir = sc.dir;
  run.quiet = true;
  run.end_time = sc.end_time;
  for (const auto& pb : sc.particles) registry.make_generator(pb.type, pb.params, run);
  for (const auto& p : sc.potentials) {
    auto pot = registry.make_potential(p.type, p.params, run);
    auto scheme = registry.make_scheme(p.scheme.type, p.scheme.params, run);
    const auto kind = scheme->neighbourhood().kind;
    if (!pot->supports(kind))
      throw Error("potential \"" + p.type + "\" (" + p.where + ") cannot be used with scheme \"" +
                  p.scheme.type + "\"" +
                  (pot->unsupported_reason(kind).empty() ? "" : ": " + pot->unsupported_reason(kind)));
  }
  registry.make_integrator(sc.integrator.type, sc.integrator.params, run);
  for (const auto& m : sc.modifiers) registry.make_modifier(m.type, m.params, run);
  // Observers are not built: their constructors may touch the output folder.
}

Simulation::Simulation(const Scenario& sc, const Registry& registry, const RunOptions& opt)
    : scenario_(sc), quiet_(opt.quiet) {
  if (sc.threads > 0) omp_set_num_threads(sc.threads);
  std::string note;
  backend_ = make_backend(sc.backend, note);

  run_.dim = sc.dim;
  run_.precision = sc.precision;
  run_.backend = backend_.backend;
  run_.box = sc.box;
  run_.seed = sc.seed;
  run_.output_dir = fs::absolute(opt.output.empty() ? sc.output : opt.output).lexically_normal().string();
  run_.scenario_dir = sc.dir;
  run_.quiet = opt.quiet;
  run_.end_time = sc.end_time;
  progress_ = std::make_unique<Progress>(sc.steps, opt.quiet);
  if (!note.empty()) progress_->message(note);

  // Every object is made (and so every parameter problem a factory finds is reported) before any
  // output is written.
  store_ = std::make_unique<ParticleStore>(sc.dim, sc.precision, *backend_.memory);
  generate(sc, registry);
  for (const auto& p : sc.potentials) {
    ForceTerm ft;
    ft.label = "potential \"" + p.type + "\" (" + p.where + ")";
    ft.potential = registry.make_potential(p.type, p.params, run_);
    ft.scheme = registry.make_scheme(p.scheme.type, p.scheme.params, run_);
    const auto kind = ft.scheme->neighbourhood().kind;
    if (!ft.potential->supports(kind)) {
      const std::string why = ft.potential->unsupported_reason(kind);
      throw Error(ft.label + " cannot be used with scheme \"" + p.scheme.type + "\"" +
                  (why.empty() ? "" : ": " + why));
    }
    if (const HardWalls* w = ft.potential->hard_walls()) {
      if (has_walls_) throw Error(ft.label + ": only one walls potential may be given");
      has_walls_ = true;
      walls_ = *w;
    }
    if (ft.potential->external()) momentum_conserved_ = false;
    forces_.push_back(std::move(ft));
  }
  bool wall_axis = false;
  for (int d = 0; d < sc.dim; ++d) wall_axis = wall_axis || sc.box.boundary[d] == Boundary::Wall;
  if (has_walls_ && !wall_axis)
    throw Error("a walls potential is given but no axis of [box] has boundary \"wall\"; set "
                "boundary = \"wall\" (or one value per axis) in [box]");
  if (wall_axis) {
    has_walls_ = true;  // boundary = "wall" without a walls potential: elastic mirror walls
    momentum_conserved_ = false;
    check_inside_walls();
  }
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
  integrator_ = registry.make_integrator(sc.integrator.type, sc.integrator.params, run_);
  for (const auto& m : sc.modifiers) {
    modifiers_.push_back(registry.make_modifier(m.type, m.params, run_));
    if (!modifiers_.back()->conserves_momentum()) momentum_conserved_ = false;
  }
  for (const auto& o : sc.outputs) {
    observers_.push_back(registry.make_observer(o.type, o.params, run_));
    analysis_first_.push_back(run_.extra_columns.size());
    for (const auto& c : observers_.back()->columns()) run_.extra_columns.push_back(c);
  }

  progress_interval_ = sc.progress_interval ? sc.progress_interval : std::max<std::uint64_t>(1, sc.steps / 10);

  // Output folder: a previous run's frames are removed so that the series is never a mix of two runs.
  make_directories(run_.output_dir);
  std::error_code ec;
  if (fs::exists(fs::path(run_.output_dir) / "frames", ec))
    for (const auto& e : fs::directory_iterator(fs::path(run_.output_dir) / "frames", ec))
      if (e.path().extension() == ".vtp") fs::remove(e.path(), ec);
  write_file_atomic((fs::path(run_.output_dir) / "config.toml").string(), sc.resolved_toml);

  char dt[32];
  std::snprintf(dt, sizeof dt, "%g", integrator_->dt());
  progress_->message("pardyn: " + std::to_string(store_->size()) + " particles, " +
                     std::to_string(sc.dim) + "D, " + to_string(sc.precision) + ", backend " +
                     backend_.description + ", " + std::to_string(sc.steps) + " steps of dt = " + dt);
  progress_->message("output: " + run_.output_dir);
}

Simulation::~Simulation() = default;

void Simulation::generate(const Scenario& sc, const Registry& registry) {
  HostParticles all(sc.dim);
  int block = 0;
  for (const auto& pb : sc.particles) {
    // Each block has its own stream, so adding a block does not change the others.
    std::seed_seq seq{std::uint64_t(sc.seed), std::uint64_t(block++), std::uint64_t(0x9e3779b9)};
    std::mt19937_64 rng(seq);
    auto gen = registry.make_generator(pb.type, pb.params, run_);
    GenerateContext ctx{sc.dim, &sc.box, &rng, sc.dir};
    HostParticles hp = gen->generate(ctx);
    hp.dim = sc.dim;
    const std::size_t n = hp.size();
    check_generated(hp, pb, sc.dim);
    for (int d = 0; d < sc.dim; ++d) {
      if (hp.v[d].empty()) hp.v[d].assign(n, 0.0);
      for (std::size_t i = 0; i < n; ++i) {
        if (!pb.offset.empty()) hp.x[d][i] += pb.offset[d];
        if (!pb.velocity.empty()) hp.v[d][i] += pb.velocity[d];
      }
    }
    if (hp.type.size() != n) hp.type.assign(n, 0);
    // A generator may give some particles their own type (the galaxy's central body); the block's
    // type is added to it.
    for (auto& t : hp.type) t += pb.particle_type;
    add_thermal_velocities(hp, 0, n, pb.temperature, rng);
    all.append(hp);
  }
  for (std::size_t i = 0; i < all.size(); ++i) all.id[i] = std::int64_t(i);
  store_->upload(all);
}

bool Simulation::wants_energy(std::uint64_t step) const {
  if (step == scenario_.steps || step % progress_interval_ == 0) return true;
  for (const auto& o : observers_)
    if (step % std::max<std::uint64_t>(1, o->interval()) == 0) return true;
  return false;
}

void Simulation::compute_forces() {
  backend_.ops->zero_forces(*store_, need_energy_, need_energy_);
  ForceRequest req;
  req.energy = need_energy_;
  req.virial = need_energy_;
  req.box = &run_.box;
  // With several potentials, each one's energy is the growth of the total it leaves behind.
  const bool split = need_energy_ && forces_.size() > 1;
  if (need_energy_) term_energy_.assign(forces_.size(), 0.0);
  double before = 0;
  for (std::size_t k = 0; k < forces_.size(); ++k) {
    auto& f = forces_[k];
    // An external potential acts on each particle alone: no neighbourhood to build for it.
    if (!f.potential->external()) f.scheme->update(*store_, run_.box, f.potential->cutoff());
    f.potential->compute(*store_, f.scheme->neighbourhood(), req);
    if (split) {
      const double now = backend_.ops->reduce(*store_).potential;
      term_energy_[k] = now - before;
      before = now;
    }
  }
  ++force_evals_;
}

void Simulation::check_inside_walls() {
  HostParticles hp(run_.dim);
  store_->download(hp, ParticleStore::kPosition);
  for (int d = 0; d < run_.dim; ++d) {
    if (run_.box.boundary[d] != Boundary::Wall) continue;
    for (std::size_t i = 0; i < hp.size(); ++i)
      if (hp.x[d][i] < run_.box.lo[d] || hp.x[d][i] > run_.box.hi[d])
        throw Error("particle " + std::to_string(i) + " starts outside the walled box: its " +
                    "xyz"[d] + " = " + std::to_string(hp.x[d][i]) + " is not in [" +
                    std::to_string(run_.box.lo[d]) + ", " + std::to_string(run_.box.hi[d]) +
                    "]; generate the particles inside [box] (a generator's region, or the block's "
                    "offset)");
  }
}

void Simulation::drift(double dt) {
  if (has_walls_ && walls_.mode == HardWalls::Mode::Flip)
    backend_.ops->flip_at_walls(*store_, run_.box, walls_.restitution, dt);
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
  if (has_walls_) backend_.ops->reflect_walls(*store_, run_.box, walls_.restitution);
}

Thermo Simulation::thermo_now() {
  Thermo t;
  t.step = step_;
  t.time = time_;
  t.r = backend_.ops->reduce(*store_);
  t.total = t.r.kinetic + t.r.potential;
  double com[3] = {0, 0, 0};
  for (int d = 0; d < 3; ++d) com[d] = t.r.mass > 0 ? t.r.mass_moment[d] / t.r.mass : 0.0;
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
  t.extra.assign(run_.extra_columns.size(), std::nan(""));
  return t;
}

Thermo Simulation::measure() {
  need_energy_ = true;
  compute_forces();
  return thermo_now();
}

void Simulation::observe(bool final_step) {
  std::vector<Observer*> due;
  for (auto& o : observers_)
    if (final_step || step_ % std::max<std::uint64_t>(1, o->interval()) == 0) due.push_back(o.get());
  const bool line = final_step || step_ % progress_interval_ == 0;
  if (due.empty() && !line) return;

  Thermo t = thermo_now();
  // Analyses (cluster counts, ...) run on the backend before the host copy: their per-particle
  // labels travel with it.
  for (std::size_t k = 0; k < observers_.size(); ++k)
    if (!observers_[k]->columns().empty() || std::find(due.begin(), due.end(), observers_[k].get()) != due.end())
      observers_[k]->analyse(*this, t, analysis_first_[k]);
  if (!t.r.finite)
    throw Error("the state has non-finite values (NaN or Inf) at step " + std::to_string(step_) +
                " (it was finite at step " + std::to_string(last_finite_step_) +
                "); the time step is probably too large for the closest encounters: lower dt or "
                "raise the softening");
  last_finite_step_ = step_;
  unsigned fields = 0;
  for (auto* o : due) fields |= o->fields();
  std::shared_ptr<HostParticles> host;
  if (fields) {
    host = std::make_shared<HostParticles>(run_.dim);
    store_->download(*host, fields);
  }
  ObserveContext ctx{step_, time_, &run_, host.get(), &t, host};
  for (auto* o : due) o->observe(ctx);
  if (line) progress_->thermo_line(t, run_.dim);
}

void Simulation::run() {
  for (auto& o : observers_) o->begin(run_);
  auto end_observers = [&] {
    for (auto& o : observers_) o->end();
  };
  try {
    need_energy_ = true;
    apply_boundaries();
    compute_forces();
    step_ = 0;
    observe(scenario_.steps == 0);
    const double dt_max = integrator_->dt();
    const bool control = scenario_.dt_acceleration && !integrator_->adaptive();
    const double end_time = scenario_.end_time;
    for (std::uint64_t s = 1; s <= scenario_.steps; ++s) {
      step_ = s;
      if (control) {
        // dt = eta sqrt(length / max|a|), reduced on the backend (on the GPU for CUDA runs).
        const double amax = backend_.ops->reduce(*store_).max_accel;
        const double dt = amax > 0 ? scenario_.dt_eta * std::sqrt(scenario_.dt_length / amax) : dt_max;
        integrator_->set_dt(std::min(dt_max, dt));
      }
      const bool last = s == scenario_.steps ||
                        (end_time > 0 && time_ + integrator_->dt() >= end_time * (1 - 1e-12));
      need_energy_ = wants_energy(s) || last;
      integrator_->step(*this);
      for (auto& m : modifiers_) m->apply(*this);
      last_dt_ = integrator_->last_dt();
      time_ += last_dt_;
      steps_done_ = s;
      const bool finished = end_time > 0 && time_ >= end_time * (1 - 1e-12);
      const bool stopping = stop_requested_.load() || finished;
      if (stopping && !need_energy_) {
        need_energy_ = true;  // the final observation needs energies
        compute_forces();
      }
      observe(s == scenario_.steps || stopping);
      progress_->update(s, end_time > 0 ? time_ / end_time : -1.0);
      if (finished) break;
      if (stopping) {
        progress_->message("stopped at step " + std::to_string(s) +
                           " on request; output is complete up to it");
        break;
      }
    }
    progress_->finish(steps_done_);
  } catch (...) {
    progress_->finish(steps_done_);
    try {
      end_observers();
    } catch (...) {
    }
    throw;
  }
  end_observers();
}

}  // namespace pardyn
