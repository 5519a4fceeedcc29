// SPDX-License-Identifier: BSD-3-Clause
// A run changed from outside while it lives (the Python module, docs/python.md): its whole state
// in memory and back (a checkpoint that is never written), and other parameters from a step on.
#include "pardyn/app/simulation.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "simulation_parts.hpp"

namespace pardyn {

namespace {

// "a, b and c"
std::string listed(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t k = 0; k < items.size(); ++k)
    out += (k == 0 ? "" : k + 1 == items.size() ? " and " : ", ") + items[k];
  return out;
}

// A key of scenario_changes() that may change during a run: a law's or a modifier's parameter
// (not its type, not its scheme), or the integrator's dt.
bool changes_live(const std::string& key) {
  if (key == "integrator.dt") return true;
  for (const char* section : {"potential[", "modifier["}) {
    if (key.rfind(section, 0) != 0) continue;
    const std::size_t close = key.find(']');
    const std::string rest = close == std::string::npos ? key : key.substr(close + 1);
    return rest != ".type" && rest.rfind(".scheme.", 0) != 0;
  }
  return false;
}

}  // namespace

void Simulation::set_clock(const checkpoint::Data& d) {
  const auto step = d.integrator.integers.find(kClockStep);
  const auto time = d.integrator.reals.find(kClockTime);
  if (step != d.integrator.integers.end() && time != d.integrator.reals.end() &&
      time->second + double(d.step - std::uint64_t(step->second)) * dt_max_ == d.time) {
    clock_step_ = std::uint64_t(step->second);
    clock_time_ = time->second;
  } else if (double(d.step) * dt_max_ == d.time) {
    clock_step_ = 0;  // a checkpoint of an earlier pardyn, whose dt never changed
    clock_time_ = 0;
  } else {
    clock_step_ = d.step;  // another dt than the state's (pardyn run --resume-changed)
    clock_time_ = d.time;
  }
}

std::shared_ptr<const checkpoint::Data> Simulation::snapshot() {
  if (comm_) throw Error("a snapshot of the state is for serial runs");
  begin_run();
  if (ended_) throw Error("the run has ended" + std::string(failed_ ? " with an error" : ""));
  auto d = std::make_shared<checkpoint::Data>();
  guarded([&] {
    if (particles_changed_) refresh();  // the forces of the particles as they are now
    *d = capture_state("snapshot");
  });
  return d;
}

void Simulation::restore(const checkpoint::Data& d, Registry& registry) {
  if (comm_) throw Error("restoring a state is for serial runs");
  begin_run();
  if (ended_) throw Error("the run has ended" + std::string(failed_ ? " with an error" : ""));
  std::string why;
  bool same_box = true;
  for (int k = 0; k < run_.dim && d.dim == run_.dim; ++k)
    same_box = same_box && d.box.lo[k] == run_.box.lo[k] && d.box.hi[k] == run_.box.hi[k] &&
               d.box.boundary[k] == run_.box.boundary[k];
  if (d.dim != run_.dim)
    why = "it is " + std::to_string(d.dim) + "D, this run " + std::to_string(run_.dim) + "D";
  else if (d.precision != run_.precision)
    why = std::string("it is in ") + to_string(d.precision) + " precision, this run in " +
          to_string(run_.precision);
  else if (d.particles.size() != n_global_)
    why = "it has " + std::to_string(d.particles.size()) + " particles, this run " +
          std::to_string(n_global_);
  else if (!same_box) why = "its box differs from this run's";
  if (!why.empty())
    throw Error("cannot restore the state of step " + std::to_string(d.step) + ": " + why +
                "; restore a state of this run or of its like");
  if (!scenario_changes(d.scenario_toml, scenario_.resolved_toml).empty()) {
    // The parameters the state was taken with (other values of the laws', modifiers' or dt).
    const ScenarioSource text{d.scenario_toml, d.scenario_dir};
    const Scenario then = load_scenario(scenario_.path, {}, registry, &text);
    try {
      reconfigure(then, registry);
    } catch (const Error& e) {
      throw Error("cannot restore the state of step " + std::to_string(d.step) +
                  ", which comes from another run: " + e.what());
    }
  }
  guarded([&] {
    restore_particles(d);
    step_ = d.step;
    time_ = d.time;
    steps_done_ = d.step;
    last_dt_ = d.last_dt;
    force_evals_ = d.force_evaluations;
    last_finite_step_ = d.last_finite_step;
    have_e0_ = d.have_e0;
    e0_ = d.e0;
    std::copy(d.com0, d.com0 + 3, com0_);
    set_clock(d);
    restore_states(d);
    // The forces came with the state; the energies are computed when asked. The state was
    // observed when it was taken: it is not observed again (as a resumed run's first state).
    particles_changed_ = false;
    energy_fresh_ = false;
    observed_now_ = true;
    seen_step_ = ~std::uint64_t(0);
    seen_now_.clear();
    line_now_ = false;
  });
  log_line("state of step " + std::to_string(d.step) + " restored");
}

// Long: every refusal before the first change, then the changes, so that an error changes nothing.
void Simulation::reconfigure(const Scenario& next, const Registry& registry) {
  if (comm_) throw Error("parameters can change during a run only in a serial run");
  if (ended_) throw Error("the run has ended" + std::string(failed_ ? " with an error" : ""));
  const auto changed = scenario_changes(scenario_.resolved_toml, next.resolved_toml);
  std::vector<std::string> fixed;
  for (const auto& key : changed)
    if (!changes_live(key)) fixed.push_back(key);
  if (next.steps != scenario_.steps) fixed.push_back("simulation.steps");
  if (next.end_time != scenario_.end_time) fixed.push_back("simulation.end_time");
  if (next.progress_interval != scenario_.progress_interval)
    fixed.push_back("simulation.progress_interval");
  for (std::size_t k = 0; k < std::max(next.outputs.size(), scenario_.outputs.size()); ++k)
    if (k >= next.outputs.size() || k >= scenario_.outputs.size() ||
        next.outputs[k].type != scenario_.outputs[k].type ||
        next.outputs[k].params.values() != scenario_.outputs[k].params.values())
      fixed.push_back("output[" + std::to_string(k) + "]");
  if (next.potentials.size() != scenario_.potentials.size() ||
      next.modifiers.size() != scenario_.modifiers.size())
    fixed.push_back("the [[potential]] and [[modifier]] sections");
  if (!fixed.empty())
    throw Error(listed(fixed) +
                " cannot change during a run, only the parameters of the [[potential]] and "
                "[[modifier]] sections and integrator.dt; start a new run for the rest");

  // The new objects, checked as at the start of a run.
  std::vector<std::shared_ptr<Potential>> laws(forces_.size());
  for (std::size_t k = 0; k < forces_.size(); ++k) {
    const PotentialSpec& p = next.potentials[k];
    if (p.params.values() == scenario_.potentials[k].params.values()) continue;
    auto law = registry.make_potential(p.type, p.params, run_);
    const auto kind = forces_[k].scheme->neighbourhood().kind;
    if (!law->supports(kind)) {
      const std::string why = law->unsupported_reason(kind);
      throw Error(forces_[k].label + " cannot be used with scheme \"" + p.scheme.type + "\"" +
                  (why.empty() ? "" : ": " + why));
    }
    check_cutoff_in_box(*law, forces_[k].label, run_.box, run_.dim);
    laws[k] = std::move(law);
  }
  std::vector<std::shared_ptr<Modifier>> mods(modifiers_.size());
  for (std::size_t k = 0; k < modifiers_.size(); ++k) {
    const PluginSpec& m = next.modifiers[k];
    if (m.params.values() == scenario_.modifiers[k].params.values()) continue;
    mods[k] = registry.make_modifier(m.type, m.params, run_);
    carry_state(*modifiers_[k], *mods[k]);
  }
  const bool new_dt = std::find(changed.begin(), changed.end(), "integrator.dt") != changed.end();
  if (new_dt) {
    if (integrator_->adaptive())
      throw Error("integrator \"" + scenario_.integrator.type +
                  "\" chooses the size of its steps itself: its dt is only the first; change "
                  "its tolerances (rtol, atol) in a new run instead");
    // The factory's own checks of the value, on an object that is then dropped.
    (void)registry.make_integrator(next.integrator.type, next.integrator.params, run_);
    const double dt = next.integrator.params.real("dt"), before = integrator_->dt();
    integrator_->set_dt(dt);
    if (integrator_->dt() != dt) {
      integrator_->set_dt(before);
      throw Error("integrator \"" + scenario_.integrator.type +
                  "\" cannot change its step during a run; start a new run with this dt");
    }
    // Times go on from this step by the new dt (set_clock).
    clock_step_ = step_;
    clock_time_ = time_;
    dt_max_ = dt;
  }

  bool new_law = false;
  for (std::size_t k = 0; k < forces_.size(); ++k) {
    if (!laws[k]) continue;
    if (boundary_ == forces_[k].potential) boundary_ = laws[k];
    forces_[k].potential = std::move(laws[k]);
    new_law = true;
  }
  for (std::size_t k = 0; k < modifiers_.size(); ++k) {
    if (mods[k]) modifiers_[k] = std::move(mods[k]);
  }
  if (new_law) {
    make_runners();  // the runners hold the laws they compute
    // Another energy function: the drift reference starts afresh at the next observation, and
    // the forces (with the neighbourhoods, whose reach may have changed) are computed anew.
    have_e0_ = false;
    particles_changed(true);
  }
  const std::string output = scenario_.output;
  scenario_ = next;
  scenario_.output = output;
  if (!changed.empty())
    log_line("step " + std::to_string(step_) + ": new values of " + listed(changed));
}

}  // namespace pardyn
