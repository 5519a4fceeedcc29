// SPDX-License-Identifier: BSD-3-Clause
// Scenarios: a TOML file validated against the framework's sections and every plugin's schema before
// anything runs. Errors carry file:line:column, what is wrong and the nearest valid key or the allowed
// values; all of a file's errors are reported at once.
#pragma once

#include <string>
#include <vector>

#include "pardyn/app/registry.hpp"

namespace pardyn {

// A scenario that does not validate: the message lists every problem as "file:line:column: what"
// (what the command line prints); problems() has them one by one, for programs (the Python
// module's pardyn.ScenarioError). line and column are 0 where a problem has no place in the file
// (a value given with --set: file is then the --set argument).
class ScenarioError : public Error {
 public:
  struct Problem {
    std::string file;
    int line = 0, column = 0;
    std::string message;
  };
  ScenarioError(const std::string& what, std::vector<Problem> problems)
      : Error(what), problems_(std::move(problems)) {}
  ~ScenarioError() override;
  const std::vector<Problem>& problems() const { return problems_; }

 private:
  std::vector<Problem> problems_;
};

struct PluginSpec {
  std::string type;
  ParamSet params;
  std::string where;  // "file:line:col" of the section, for messages at run time
};

struct ParticleBlock : PluginSpec {  // type = generator name
  int particle_type = 0;
  double temperature = 0;
  bool uniform_velocities = false;  // velocity_distribution = "uniform" (else Gaussian)
  std::vector<double> offset, velocity;
};

struct PotentialSpec : PluginSpec {
  PluginSpec scheme;
  // No scheme was given: for a long-range law with a short-range part the scheme was chosen by the
  // number of particles (choose_scheme in config.cpp; docs/real-gas.md), else all_pairs.
  bool scheme_auto = false;
};

struct Scenario {
  std::string path;  // the scenario file
  std::string dir;   // its folder
  std::string name;
  int dim = 3;
  Precision precision = Precision::Double;
  std::string backend = "auto";
  std::uint64_t steps = 0;
  double end_time = 0;  // > 0: stop when the simulation time reaches it (steps is then a cap)
  std::uint64_t seed = 1;
  std::string output;                   // output folder
  std::uint64_t progress_interval = 0;  // terminal thermo line every this many steps (0 = auto)
  int threads = 0;
  double gpu_memory_limit = 0;          // GiB per rank's GPU (0: no limit)
  bool balance_by_speed = true;         // parallel all-pairs ring: blocks sized by measured speed
  std::uint64_t balance_interval = 50;  // parallel tree terms: steps between balance checks
  std::vector<double> rank_weights;     // parallel: explicit relative shares per rank
  Box box;
  std::vector<ParticleBlock> particles;
  std::vector<PotentialSpec> potentials;
  PluginSpec integrator;
  // The framework's step control for fixed-step integrators ([integrator] dt_control = ...).
  bool dt_acceleration = false;
  double dt_eta = 0.02, dt_length = 0.01;
  std::vector<PluginSpec> modifiers;
  std::vector<PluginSpec> outputs;
  std::string resolved_toml;       // every key with its value (defaults filled in), as TOML
  std::vector<std::string> notes;  // choices made for the user (an automatic scheme), to print
};

// Reads, overrides (--set "a.b=value"), loads the scenario's plugin_paths into `registry` and
// validates. Throws pardyn::Error listing every problem found.
// A scenario's text from elsewhere than its file (a checkpoint's resolved scenario): `dir` is the
// folder its relative paths are resolved against; `path` names it in messages.
struct ScenarioSource {
  std::string text;
  std::string dir;
};
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       Registry& registry, const ScenarioSource* source = nullptr);

// The run settings a scenario fixes (dimension, precision, box, seed, end time, its folder), set in
// `run`: the one place they are taken from a scenario (the Simulation adds the backend, output
// folder and ranks).
void fill_run_info(RunInfo& run, const Scenario& sc);

// The keys whose values differ between two resolved scenarios (Scenario::resolved_toml), as
// "section.key" or "section[i].key", leaving out those a resumed run may change without breaking
// exactness (simulation.steps, end_time, output, name, progress_interval, plugin_paths, and
// every [[output]]).
std::vector<std::string> scenario_changes(const std::string& before, const std::string& after);

// Validates `toml_text` (key = value lines) against a schema: for tests and embedding programs.
ParamSet parse_params(const Schema& schema, const std::string& toml_text,
                      const std::string& context);

// A plugin's parameters with their defaults, and a value inside its range for each required one
// (a uniform field's g, one value per axis of a `dim`-dimensional run): enough to make the object,
// ask it what it supports (scheme_support) or check it (pardyn check-plugin).
ParamSet sample_params(const Schema& schema, int dim);

// The framework's own section schemas (documented by `pardyn plugins show simulation`).
const Schema& simulation_schema();
const Schema& box_schema();
const Schema& particles_common_schema();
const Schema& integrator_common_schema();

// Which scheme plugins accept a potential plugin, found by asking the code: the potential and each
// scheme are made with their default parameters and the potential's supports() is asked for the
// scheme's neighbourhood. `reason` is empty for a scheme that accepts it, else why not (the
// potential's unsupported_reason(), or why it could not be made with defaults).
struct SchemeSupport {
  std::string scheme;
  bool accepted = false;
  bool unused = false;  // an external law (one particle at a time): every scheme, none used
  std::string reason;
};
std::vector<SchemeSupport> scheme_support(const Registry& registry, const FactoryInfo& potential);

// Edit distance, for "did you mean" hints.
std::size_t edit_distance(const std::string& a, const std::string& b);
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace pardyn
