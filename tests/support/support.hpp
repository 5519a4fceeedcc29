// SPDX-License-Identifier: BSD-3-Clause
// Shared helpers for the test suites.
#pragma once

#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "pardyn/app/registry.hpp"

namespace pardyn::test {

// A box [lo, hi] on every axis, with boundary b on the first dim axes (open beyond them).
Box cube(int dim, double lo, double hi, Boundary b = Boundary::Open);

// The registry with every built-in plugin loaded (once per test program).
Registry& registry();
// A fresh folder for a test's output, under $PARDYN_TEST_TMP (or /tmp), named after the running
// test and `name`.
std::string scratch_dir(const std::string& name);
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

// The backend a BackendRun test runs on ("cpu" or "cuda"; "cpu" outside such a test), for its
// scenarios' simulation.backend.
const std::string& backend();

// Runs each test of a suite once on the CPU and once on the GPU (skipped, saying so, without one):
//   class IntegratorRun : public test::BackendRun {};
//   INSTANTIATE_TEST_SUITE_P(Backends, IntegratorRun, ::testing::Values("cpu", "cuda"), ...);
// and the tests run their scenarios on test::backend().
class BackendRun : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override;
  void TearDown() override;
};

}  // namespace pardyn::test
