// SPDX-License-Identifier: BSD-3-Clause
// Checkpoints of a run: the whole state written (gathered over the ranks) and read back, and
// `pardyn run --resume`'s preparation (the checkpoint output itself: io/checkpoint_output.hpp).
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
#include "run/force_runner.hpp"
#include "simulation_parts.hpp"
#include "pardyn/cuda.hpp"
#include "pardyn/math.hpp"
#include "pardyn/app/memory.hpp"
#include "pardyn/output.hpp"
#include "parallel/communicator.hpp"
#include "parallel/domain.hpp"
#include "parallel/ring.hpp"
#include "parallel/store_ops.hpp"

namespace fs = std::filesystem;

namespace pardyn {

namespace {

// Per-rank particles as bytes, for the gather of a parallel run's checkpoint.
template <class T>
void put_array(std::vector<char>& b, const std::vector<T>& v) {
  const std::uint64_t n = v.size();
  const char* p = reinterpret_cast<const char*>(&n);
  b.insert(b.end(), p, p + sizeof n);
  p = reinterpret_cast<const char*>(v.data());
  b.insert(b.end(), p, p + n * sizeof(T));
}
template <class T>
void get_array(const std::vector<char>& b, std::size_t& at, std::vector<T>& v) {
  std::uint64_t n = 0;
  if (at + sizeof n > b.size()) throw Error("internal: a malformed checkpoint block from a rank");
  std::memcpy(&n, b.data() + at, sizeof n);
  at += sizeof n;
  if (at + n * sizeof(T) > b.size())
    throw Error("internal: a malformed checkpoint block from a rank");
  v.resize(n);
  std::memcpy(v.data(), b.data() + at, n * sizeof(T));
  at += n * sizeof(T);
}
std::vector<char> pack(const HostParticles& p) {
  std::vector<char> b;
  for (int d = 0; d < p.dim; ++d) {
    put_array(b, p.x[d]);
    put_array(b, p.v[d]);
    put_array(b, p.a[d]);
    put_array(b, p.image[d]);
  }
  put_array(b, p.mass);
  put_array(b, p.type);
  put_array(b, p.id);
  const std::uint64_t labels = p.labels.size();
  put_array(b, std::vector<std::uint64_t>{labels});
  for (const auto& [name, values] : p.labels) {
    put_array(b, std::vector<char>(name.begin(), name.end()));
    put_array(b, values);
  }
  return b;
}
void unpack_append(const std::vector<char>& b, HostParticles& all) {
  HostParticles p(all.dim);
  std::size_t at = 0;
  for (int d = 0; d < p.dim; ++d) {
    get_array(b, at, p.x[d]);
    get_array(b, at, p.v[d]);
    get_array(b, at, p.a[d]);
    get_array(b, at, p.image[d]);
  }
  get_array(b, at, p.mass);
  get_array(b, at, p.type);
  get_array(b, at, p.id);
  std::vector<std::uint64_t> labels;
  get_array(b, at, labels);
  for (std::uint64_t k = 0; k < (labels.empty() ? 0 : labels[0]); ++k) {
    std::vector<char> name;
    std::vector<std::int32_t> values;
    get_array(b, at, name);
    get_array(b, at, values);
    p.labels.emplace_back(std::string(name.begin(), name.end()), std::move(values));
  }
  const std::size_t n0 = all.size();
  all.append(p);
  // append() leaves labels alone: a label every rank has is joined; others are dropped.
  if (n0 == 0) {
    all.labels = p.labels;
  } else {
    std::vector<std::pair<std::string, std::vector<std::int32_t>>> joined;
    for (auto& [name, values] : all.labels)
      for (const auto& [pname, pvalues] : p.labels)
        if (pname == name) {
          values.insert(values.end(), pvalues.begin(), pvalues.end());
          joined.emplace_back(name, std::move(values));
          break;
        }
    all.labels = std::move(joined);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Checkpoints.

namespace {

// StateOut for the checkpoint: values as given; vectors downloaded through a scratch store of the
// run's kind and gathered over the ranks (rank 0 keeps them, component-major).
class StateSaver final : public StateOut {
 public:
  StateSaver(checkpoint::PluginState& out, ParticleStore& store, BackendOps& ops,
             parallel::Communicator* comm)
      : out_(out), store_(store), ops_(ops), comm_(comm) {}
  void real(const std::string& name, double v) override { out_.reals[name] = v; }
  void integer(const std::string& name, std::int64_t v) override { out_.integers[name] = v; }
  void vector(const std::string& name, const StateVector& y) override {
    const int dim = store_.dim();
    const std::size_t n = store_.size();
    ParticleStore tmp(dim, store_.precision(), store_.memory());
    tmp.resize(n);
    ops_.set_state(tmp, y);
    HostParticles h(dim);
    tmp.download(h, ParticleStore::kPosition | ParticleStore::kVelocity);
    std::vector<double> mine;
    mine.reserve(std::size_t(2 * dim) * n);
    for (int c = 0; c < 2 * dim; ++c) {
      const auto& a = c < dim ? h.x[c] : h.v[c - dim];
      mine.insert(mine.end(), a.begin(), a.end());
    }
    if (!comm_) {
      out_.vectors[name] = std::move(mine);
      return;
    }
    std::vector<char> bytes(mine.size() * sizeof(double));
    std::memcpy(bytes.data(), mine.data(), bytes.size());
    const auto all = comm_->gather(bytes);
    if (comm_->rank() != 0) return;
    std::vector<std::size_t> counts;
    for (const auto& b : all) counts.push_back(b.size() / sizeof(double) / std::size_t(2 * dim));
    std::vector<double>& v = out_.vectors[name];
    for (int c = 0; c < 2 * dim; ++c)
      for (std::size_t r = 0; r < all.size(); ++r) {
        const double* p =
            reinterpret_cast<const double*>(all[r].data()) + std::size_t(c) * counts[r];
        v.insert(v.end(), p, p + counts[r]);
      }
  }

 private:
  checkpoint::PluginState& out_;
  ParticleStore& store_;
  BackendOps& ops_;
  parallel::Communicator* comm_;
};

// StateIn from a checkpoint: this rank's part of every vector (particles [offset, offset + n) of
// the saved order).
class StateLoader final : public StateIn {
 public:
  StateLoader(const checkpoint::PluginState& in, const std::string& file, ParticleStore& store,
              BackendOps& ops, std::size_t offset, std::size_t total)
      : in_(in), file_(file), store_(store), ops_(ops), offset_(offset), total_(total) {}
  double real(const std::string& name) override {
    const auto it = in_.reals.find(name);
    if (it == in_.reals.end()) missing(name);
    return it->second;
  }
  std::int64_t integer(const std::string& name) override {
    const auto it = in_.integers.find(name);
    if (it == in_.integers.end()) missing(name);
    return it->second;
  }
  bool has(const std::string& name) const override {
    return in_.reals.count(name) || in_.integers.count(name) || in_.vectors.count(name);
  }
  void vector(const std::string& name, StateVector& y) override {
    const auto it = in_.vectors.find(name);
    if (it == in_.vectors.end()) missing(name);
    const int dim = store_.dim();
    const std::size_t n = store_.size();
    if (it->second.size() != std::size_t(2 * dim) * total_)
      throw Error("checkpoint " + file_ + ": " + in_.type + "'s vector '" + name + "' has " +
                  std::to_string(it->second.size()) + " values, expected " +
                  std::to_string(std::size_t(2 * dim) * total_));
    HostParticles h(dim);
    h.resize(n);
    for (int c = 0; c < 2 * dim; ++c) {
      auto& a = c < dim ? h.x[c] : h.v[c - dim];
      const double* src = it->second.data() + std::size_t(c) * total_ + offset_;
      std::copy(src, src + n, a.begin());
    }
    std::fill(h.mass.begin(), h.mass.end(), 1.0);
    ParticleStore tmp(dim, store_.precision(), store_.memory());
    tmp.upload(h);
    ops_.get_state(tmp, y);
  }

 private:
  [[noreturn]] void missing(const std::string& name) const {
    throw Error("checkpoint " + file_ + ": the saved state of " + in_.type + " has no '" + name +
                "' (written by another version of the plugin?)");
  }
  const checkpoint::PluginState& in_;
  std::string file_;
  ParticleStore& store_;
  BackendOps& ops_;
  std::size_t offset_, total_;
};

}  // namespace

// A resumed run's observers keep what their files hold up to the checkpoint's step. An interrupted
// run observed the step it stopped at whether or not the step was due (its files end with the state
// it stopped in); an observer for which the step was not due keeps its files up to the step before,
// so that the resumed run's files are byte for byte those of a run that never stopped. The time
// bound lies half a step before the checkpoint's (outputs listed by time: run.pvd, fields.pvd).
void Simulation::begin_observers() {
  const bool interrupted = resume_ && resume_->reason == "interrupt";
  for (auto& o : observers_) {
    const bool due = !interrupted || resume_->step % std::max<std::uint64_t>(1, o->interval()) == 0;
    if (!due) {
      run_.resume_step = resume_->step - 1;
      run_.resume_time = resume_->time - 0.5 * resume_->last_dt;
    }
    o->begin(run_);
    if (!due) {
      run_.resume_step = resume_->step;
      run_.resume_time = resume_->time;
    }
  }
}

std::size_t Simulation::rank_offset(const checkpoint::Data& ck) const {
  // Where this rank's particles begin in the checkpoint's order (rank by rank).
  std::size_t offset = 0;
  for (int r = 0; r < (comm_ ? comm_->rank() : 0); ++r)
    offset += std::size_t(ck.rank_counts[std::size_t(r)]);
  return offset;
}

void Simulation::restore_particles(const checkpoint::Data& ck) {
  const HostParticles& all = ck.particles;
  n_global_ = all.size();
  const int ranks = comm_ ? comm_->size() : 1;
  if (ck.ranks != ranks && !resume_changed_)
    throw Error("checkpoint " + resume_file_ + " was written by a run of " +
                std::to_string(ck.ranks) + " rank(s); this one has " + std::to_string(ranks) +
                ": resume it with the same number of ranks" +
                (ck.ranks > 1 ? " (mpirun -np " + std::to_string(ck.ranks) + ")" : "") +
                ", or give --resume-changed to redistribute the particles (not bit for bit)");
  if (ck.ranks != ranks) {
    HostParticles copy = all;
    if (comm_) distribute(copy);
    store_->upload(copy);
    return;
  }
  const int me = comm_ ? comm_->rank() : 0;
  const std::size_t offset = rank_offset(ck);
  const std::size_t n = std::size_t(ck.rank_counts[std::size_t(me)]);
  HostParticles mine(all.dim);
  mine.resize(n);
  auto slice = [&](auto& dst, const auto& src) {
    dst.assign(src.begin() + std::ptrdiff_t(offset), src.begin() + std::ptrdiff_t(offset + n));
  };
  for (int d = 0; d < all.dim; ++d) {
    slice(mine.x[d], all.x[d]);
    slice(mine.v[d], all.v[d]);
    slice(mine.a[d], all.a[d]);
    slice(mine.image[d], all.image[d]);
  }
  slice(mine.mass, all.mass);
  slice(mine.type, all.type);
  slice(mine.id, all.id);
  for (const auto& [name, values] : all.labels) {
    std::vector<std::int32_t> part;
    slice(part, values);
    mine.labels.emplace_back(name, std::move(part));
  }
  store_->upload(mine);
}

void Simulation::restore_states(const checkpoint::Data& ck) {
  const bool exact_ranks = ck.ranks == (comm_ ? comm_->size() : 1);
  const std::size_t offset = exact_ranks ? rank_offset(ck) : 0;
  auto load = [&](const checkpoint::PluginState& st, const std::string& type, auto& object,
                  const std::string& what) {
    if (st.type != type) {
      // Only with --resume-changed (main compares the scenarios first).
      progress_->message("resume: " + what + " is now \"" + type + "\" (was \"" + st.type +
                         "\"): it starts without the saved state");
      return;
    }
    if (!exact_ranks && !st.vectors.empty()) {
      progress_->message("resume: " + what + " \"" + type +
                         "\" starts afresh: its per-particle "
                         "state cannot follow particles to another number of ranks");
      return;
    }
    StateLoader in(st, resume_file_, *store_, *backend_.ops, offset, ck.particles.size());
    object.load(in, *this);
  };
  load(ck.integrator, scenario_.integrator.type, *integrator_, "the integrator");
  for (std::size_t k = 0; k < modifiers_.size(); ++k) {
    if (k >= ck.modifiers.size()) {
      progress_->message("resume: modifier " + std::to_string(k + 1) + " \"" +
                         scenario_.modifiers[k].type + "\" is new: it starts afresh");
      continue;
    }
    load(ck.modifiers[k], scenario_.modifiers[k].type, *modifiers_[k],
         "modifier " + std::to_string(k + 1));
  }
  // Verlet lists: built again from the positions the run that wrote the checkpoint built them
  // from, then the current positions are put back (without a new generation of the store, so the
  // list is kept until particles have moved far enough, exactly as in that run).
  if (domain_ || !exact_ranks) return;
  for (std::size_t k = 0; k < forces_.size() && k < ck.schemes.size(); ++k) {
    if (!ck.schemes[k].vectors.count("built_at")) continue;
    StateLoader in(ck.schemes[k], resume_file_, *store_, *backend_.ops, offset,
                   ck.particles.size());
    forces_[k].runner->rebuild_from(*store_, *backend_.ops,
                                    [&](StateVector& y) { in.vector("built_at", y); });
  }
}

Resume prepare_resume(const std::string& where, const std::string& file,
                      const std::vector<std::string>& overrides, Registry& registry,
                      bool allow_changes) {
  Resume r;
  std::vector<std::string> skipped;
  r.file = checkpoint::find(where, &skipped);
  for (const auto& why : skipped) r.notes.push_back("skipped " + why);
  auto data = std::make_shared<checkpoint::Data>(checkpoint::read(r.file));
  if (file.empty()) {
    ScenarioSource src{data->scenario_toml, data->scenario_dir};
    r.scenario = load_scenario(data->scenario_path, overrides, registry, &src);
  } else {
    r.scenario = load_scenario(file, overrides, registry);
  }
  std::vector<std::string> changed =
      scenario_changes(data->scenario_toml, r.scenario.resolved_toml);
  if (data->pardyn_version != PARDYN_VERSION_STRING || data->build_id != Registry::build_id())
    changed.push_back("the pardyn build (the checkpoint's: " + data->pardyn_version + ", " +
                      data->build_id + ")");
  if (!changed.empty() && !allow_changes) {
    std::string list;
    for (const auto& k : changed) list += "\n  " + k;
    throw Error("--resume " + r.file +
                ": the scenario differs from the checkpoint's in what the "
                "run's exact continuation depends on:" +
                list +
                "\nresume without these changes, or give --resume-changed to continue anyway (not "
                "bit for bit; the energy-drift reference starts afresh)");
  }
  for (const auto& k : changed) r.notes.push_back("changed on resume: " + k);
  r.output_dir = fs::path(r.file).parent_path().parent_path().string();
  r.data = std::move(data);
  return r;
}

void Simulation::carry_state(const Modifier& from, Modifier& to) {
  checkpoint::PluginState st;
  st.type = "the modifier";
  StateSaver out(st, *store_, *backend_.ops, comm_);
  from.save(out);
  StateLoader in(st, "(the state carried to the modifier's new parameters)", *store_, *backend_.ops,
                 0, store_->size());
  to.load(in, *this);
}

// A collective: every rank gathers the same things in the same order.
checkpoint::Data Simulation::capture_state(const char* reason) {
  checkpoint::Data d;
  d.pardyn_version = PARDYN_VERSION_STRING;
  d.build_id = Registry::build_id();
  d.plugin_abi = kPluginAbi;
  d.reason = reason;
  d.scenario_toml = scenario_.resolved_toml;
  d.scenario_path = fs::absolute(scenario_.path).lexically_normal().string();
  d.scenario_dir = scenario_.dir;
  d.output_dir = run_.output_dir;
  d.dim = run_.dim;
  d.box = run_.box;
  d.precision = run_.precision;
  d.backend = to_string(run_.backend);
  d.threads = omp_get_max_threads();
  d.ranks = comm_ ? comm_->size() : 1;
  d.step = step_;
  d.time = time_;
  d.last_dt = last_dt_;
  d.force_evaluations = force_evals_;
  d.last_finite_step = step_;
  d.have_e0 = have_e0_;
  d.e0 = e0_;
  std::copy(com0_, com0_ + 3, d.com0);
  HostParticles mine(run_.dim);
  store_->download(mine, ParticleStore::kPosition | ParticleStore::kVelocity |
                             ParticleStore::kAcceleration | ParticleStore::kType |
                             ParticleStore::kId | ParticleStore::kLabels | ParticleStore::kImage);
  if (comm_) {
    const auto all = comm_->gather(pack(mine));
    d.particles = HostParticles(run_.dim);
    for (const auto& b : all) {
      const std::size_t before = d.particles.size();
      unpack_append(b, d.particles);
      d.rank_counts.push_back(d.particles.size() - before);
    }
  } else {
    d.rank_counts.push_back(mine.size());
    d.particles = std::move(mine);
  }
  d.integrator.type = scenario_.integrator.type;
  StateSaver si(d.integrator, *store_, *backend_.ops, comm_);
  integrator_->save(si);
  // The fixed-step clock (set_clock) goes with the integrator's state.
  d.integrator.integers[kClockStep] = std::int64_t(clock_step_);
  d.integrator.reals[kClockTime] = clock_time_;
  for (std::size_t k = 0; k < modifiers_.size(); ++k) {
    d.modifiers.emplace_back();
    d.modifiers.back().type = scenario_.modifiers[k].type;
    StateSaver sm(d.modifiers.back(), *store_, *backend_.ops, comm_);
    modifiers_[k]->save(sm);
  }
  for (auto& f : forces_) {
    d.schemes.emplace_back();
    checkpoint::PluginState& st = d.schemes.back();
    st.type = "scheme";
    if (StateVector* at = f.runner->built_at(); at && !domain_) {
      StateSaver ss(st, *store_, *backend_.ops, comm_);
      ss.vector("built_at", *at);
    }
  }
  return d;
}

void Simulation::write_checkpoint(const char* reason) {
  struct AddTime {
    double& to;
    std::chrono::steady_clock::time_point from = std::chrono::steady_clock::now();
    ~AddTime() {
      to += std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
    }
  } add_time{timing_.checkpoint};
  // Everything observed so far is on disk before the checkpoint that a resumed run trusts.
  for (auto& o : observers_) o->sync();
  const Reductions r = reduce_all();
  if (!r.finite)
    throw Error("the state has non-finite values (NaN or Inf) at step " + std::to_string(step_) +
                " (it was finite at step " + std::to_string(last_finite_step_) +
                "); no checkpoint is written of it" + non_finite_hint());
  const checkpoint::Data d = capture_state(reason);
  const std::string path = checkpoint::path_for(run_.output_dir, step_);
  parallel::agree(comm_, [&] {
    if (run_.rank != 0) return;
    checkpoint::write(path, d);
    // Keep the newest `keep`.
    auto files = checkpoint::list(run_.output_dir);
    std::error_code ec;
    while (files.size() > ckpt_.keep) {
      fs::remove(files.front().second, ec);
      files.erase(files.begin());
    }
  });
  last_checkpoint_ = path;
  last_checkpoint_step_ = step_;
  have_checkpoint_step_ = true;
  ckpt_clock_ = std::chrono::steady_clock::now();
  // A domain decomposition's ghosts and the Verlet lists over them are chosen again at the next
  // evaluation, as they are in a run resumed from this checkpoint: both continue identically.
  // (Serial runs save where their Verlet lists were built instead: see restore_states.)
  if (domain_) store_->touch();
}

}  // namespace pardyn
