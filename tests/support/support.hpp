// SPDX-License-Identifier: BSD-3-Clause
// Shared helpers for the test suites.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends.hpp"
#include "pardyn/app/registry.hpp"

namespace pardyn::test {

// A box [lo, hi] on every axis, with boundary b on the first dim axes (open beyond them).
Box cube(int dim, double lo, double hi, Boundary b = Boundary::Open);

// The registry with every built-in plugin loaded (once per test program).
Registry& registry();
// A fresh folder for a test's output, under $PARDYN_TEST_TMP (or /tmp), named after the running
// test and `name`.
std::string scratch_dir(const std::string& name);
// A table of numbers from a CSV file: the header's column names and the rows; lines starting with '#'
// are comments. A missing file is a test failure.
struct Table {
  std::vector<std::string> head;
  std::vector<std::vector<double>> rows;
  // The index of column `name` (a test failure, and 0, when there is none).
  int col(const std::string& name) const;
};
Table read_table(const std::string& path);
// The path of tests/data/NAME in the source tree: the reference values the tests compare with.
std::string data_file(const std::string& name);

// A run of the scenario text `toml` as `pardyn run` runs it: the text written to dir/scenario.toml
// (nothing written when toml is empty), the output in dir/out. resume: the output folder of a run
// to continue from its last checkpoint, with the scenario at dir/scenario.toml or, where toml is
// empty, the checkpoint's own; set: changes to the scenario as `--set key=value` makes them.
struct ScenarioRun {
  HostParticles particles;  // the final state
  std::string output;       // the output folder
  std::uint64_t steps = 0;  // the steps done
};
ScenarioRun run_scenario(const std::string& dir, const std::string& toml,
                         const std::string& resume = "", const std::vector<std::string>& set = {});
// A file's whole content ("" when it cannot be read).
std::string slurp(const std::string& path);

// ParamSet with the schema's defaults, overridden by `overrides` (TOML syntax: "key = value" lines).
ParamSet params_for(PluginKind kind, const std::string& name, const std::string& overrides = "");

// One of the test plugins (tests/plugins/<name>), copied into a fresh folder with safe permissions;
// returns the path of the copy.
std::string staged_plugin(const std::string& name);

// The test observer "probe" (key `interval`): it hands every observation of a run to the callback
// of the ProbeScope alive at the time, once per step, and does nothing outside one. It lives in a
// registry of its own (the built-in plugins plus the probe), so other suites never see it.
Registry& probe_registry();
class ProbeScope {
 public:
  // fields: the ParticleStore::Field bits the callback needs in ctx.particles.
  explicit ProbeScope(std::function<void(const ObserveContext&)> record, unsigned fields = 0);
  ~ProbeScope();
  ProbeScope(const ProbeScope&) = delete;
  ProbeScope& operator=(const ProbeScope&) = delete;
};

}  // namespace pardyn::test
