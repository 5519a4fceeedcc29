// SPDX-License-Identifier: BSD-3-Clause
// An expression law as its [[potential]] section gives it, checked and turned into what runs it:
// the evaluators' parameters (coefficients per pair of types), the formula part as C++ statements
// (compiled at run time) and as an interpreter program. See expression_eval.hpp for the forms and
// docs/formulas.md for the TOML.
#pragma once

#include <memory>
#include <string>

#include "expression_eval.hpp"
#include "interpreter.hpp"
#include "pardyn/registration.hpp"

namespace pardyn::expression {

struct Law {
  Params params;
  // The body of Impl::formula(k, r2, s, ti, tj, fdivr, e): statements on `c` (the pair's
  // coefficients), r2 and s that set fdivr and e. Empty for the kernel-only forms.
  std::string body;
  std::shared_ptr<const expr::Interpreted<double>> program_d;
  std::shared_ptr<const expr::Interpreted<float>> program_f;
  std::string engine;  // "auto", "compiled", "interpreted"
  std::string label;   // "[[potential]] #1 (expression)", for messages
  // The law as pardyn read it: energy and fdivr after simplification, with their coefficients.
  std::string summary;
};

// Checks the parameters (every formula, on every pair of types) and builds the law. Errors name the
// key, its place in the scenario (file:line:column of the character at fault) and show the formula
// with a caret under it.
Law make_law(const ParamSet& ps);

// The formula part as C++, `struct Generated` whose formula() is the Impl::formula of
// expression_eval.hpp: the code compiled at run time, for the CPU and the GPU alike.
std::string formula_struct(const Law& law);

// The plugin's name, summary, documentation of the formula language and parameter schema.
FactoryInfo law_info();

}  // namespace pardyn::expression
