// SPDX-License-Identifier: BSD-3-Clause
// An integer parameter counted in steps (an output's `interval`, an analysis's `start`), built once
// for every plugin that takes one. Host code; header-only, compiled into each plugin.
#pragma once

#include <cstdint>
#include <string>

#include "pardyn/core.hpp"
#include "pardyn/params.hpp"

namespace pardyn::plugins {

// An integer parameter counted in steps (the unit shows in `pardyn plugins show`): default `def`,
// at least `min`, at most kMaxSteps.
inline ParamSpec steps_param(const std::string& name, std::int64_t def, double min,
                             const std::string& doc) {
  ParamSpec p;
  p.name = name;
  p.type = ParamType::Int;
  p.unit = "steps";
  p.doc = doc;
  p.default_value = def;
  p.min = min;
  p.max = double(kMaxSteps);
  return p;
}

}  // namespace pardyn::plugins
