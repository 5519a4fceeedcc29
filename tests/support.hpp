// Shared helpers for the test suites.
#pragma once

#include <string>

#include "pardyn/registry.hpp"

namespace pardyn::test {

// The registry with every built-in plugin loaded (once per test program).
Registry& registry();
// A fresh folder for a test's output, under $PARDYN_TEST_TMP (or /tmp), named after the running
// test and `name`.
std::string scratch_dir(const std::string& name);
// ParamSet with the schema's defaults, overridden by `overrides` (TOML syntax: "key = value" lines).
ParamSet params_for(PluginKind kind, const std::string& name, const std::string& overrides = "");

}  // namespace pardyn::test
