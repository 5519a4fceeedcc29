// SPDX-License-Identifier: BSD-3-Clause
// A modifier that fails the way a bug does (a standard exception, not pardyn::Error): the command
// line must report it as an internal error with exit code 3 (tests/cli/errors.sh).
#include <stdexcept>

#include "pardyn/plugin_export.hpp"

namespace {
class Fails final : public pardyn::Modifier {
 public:
  void apply(pardyn::StepContext&) override {
    throw std::logic_error("test_internal_error: a deliberate bug");
  }
};

void register_fails(pardyn::Registrar& r) {
  pardyn::FactoryInfo f;
  f.name = "test_internal_error";
  f.summary = "throws std::logic_error at the first step (a test of exit code 3)";
  f.backends = pardyn::kCpu | pardyn::kCuda;
  r.add(std::move(f),
        pardyn::Factory<pardyn::Modifier>([](const pardyn::ParamSet&, const pardyn::RunInfo&) {
          return std::unique_ptr<pardyn::Modifier>(new Fails);
        }));
}
}  // namespace

PARDYN_PLUGIN(register_fails)
