// SPDX-License-Identifier: BSD-3-Clause
// The formula language of expression laws (framework/src/jit/formula.hpp): parsing, errors with the
// characters they concern, simplification, symbolic derivatives against finite differences, and
// the sampled checks of a law's formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "formula.hpp"

using namespace pardyn::expr;

namespace {

const std::vector<std::string> kParams = {"epsilon", "sigma", "kappa", "A"};
const double kValues[] = {1.5, 0.9, 0.8, 2.0};

double eval_at(const std::string& text, double r) {
  Values v;
  v.r = r;
  v.params = kValues;
  return evaluate(parse(text, kParams).tree, v);
}

FormulaError error_of(const std::string& text) {
  try {
    parse(text, kParams);
  } catch (const FormulaError& e) {
    return e;
  }
  ADD_FAILURE() << "\"" << text << "\" parsed without an error";
  return {};
}

std::string underlined(const std::string& text, const FormulaError& e) {
  return text.substr(std::size_t(e.span.begin), std::size_t(e.span.end - e.span.begin));
}

// Whether r appears in e other than in a power r^k with k even (then the code needs no sqrt).
bool odd_r(const Expr& e) {
  if (e->op == Op::Var) return true;
  if (e->op == Op::Pow && e->args[0]->op == Op::Var && e->args[1]->op == Op::Const)
    return std::fmod(e->args[1]->value, 2.0) != 0;
  for (const auto& a : e->args)
    if (odd_r(a)) return true;
  return false;
}

}  // namespace

TEST(Formula, NumbersPrecedenceAndFunctions) {
  EXPECT_DOUBLE_EQ(eval_at("1 + 2*3", 1), 7);
  EXPECT_DOUBLE_EQ(eval_at("2^3^2", 1), 512);  // right-associative
  EXPECT_DOUBLE_EQ(eval_at("-r^2", 3), -9);    // the power binds tighter than the sign
  EXPECT_DOUBLE_EQ(eval_at("2^-1", 1), 0.5);
  EXPECT_DOUBLE_EQ(eval_at("10 - 4 - 3", 1), 3);
  EXPECT_DOUBLE_EQ(eval_at("12 / 4 / 3", 1), 1);
  EXPECT_DOUBLE_EQ(eval_at(".5 + 5. + 1e-3 + 2.5E+1", 1), 30.501);
  EXPECT_DOUBLE_EQ(eval_at("4*epsilon*((sigma/r)^12 - (sigma/r)^6)", 1.1),
                   4 * 1.5 * (std::pow(0.9 / 1.1, 12) - std::pow(0.9 / 1.1, 6)));
  EXPECT_DOUBLE_EQ(eval_at("A*exp(-kappa*r)/r", 2), 2.0 * std::exp(-1.6) / 2);
  EXPECT_NEAR(eval_at("log(r) + sqrt(r) + pow(r, 1.5) + sin(r) + cos(r) + tanh(r)", 0.7),
              std::log(0.7) + std::sqrt(0.7) + std::pow(0.7, 1.5) + std::sin(0.7) + std::cos(0.7) +
                  std::tanh(0.7),
              1e-15);
  EXPECT_NEAR(eval_at("erf(r) + erfc(2*r)", 0.3), std::erf(0.3) + std::erfc(0.6), 1e-15);
  EXPECT_DOUBLE_EQ(eval_at("min(r, 2) + max(r, 2)", 3), 5);
  EXPECT_DOUBLE_EQ(eval_at("step(r - 1)", 1), 1);  // step(0) = 1
  EXPECT_DOUBLE_EQ(eval_at("step(r - 1)", 0.5), 0);
  EXPECT_DOUBLE_EQ(eval_at("select(step(r - 1), 10, 20)", 2), 10);
  EXPECT_DOUBLE_EQ(eval_at("select(0, 10, 20)", 2), 20);
}

TEST(Formula, SyntaxErrorsPointAtTheirCharacters) {
  struct Case {
    std::string text, message, underlined;
  };
  const std::vector<Case> cases = {
      {"4*epsilon*((sigma/r)^12", "missing ')' to close this '('", "("},
      {"2r", "write 2*r for a product", "2r"},
      {"2 r", "missing operator before 'r'", "r"},
      {"r**2", "write ^ for a power", "**"},
      {"r +", "ends after '+'", "+"},
      {"r + * 2", "'*' where an operand", "*"},
      {"exp(r", "missing ')' to close the arguments of exp(", "exp"},
      {"4*sigam/r", "unknown name 'sigam'; did you mean 'sigma'?", "sigam"},
      {"expp(-r)", "unknown function 'expp'; did you mean 'exp'?", "expp"},
      {"sigma(r + 1)", "'sigma' is a parameter, not a function", "sigma"},
      {"exp", "'exp' is a function", "exp"},
      {"[r]", "'[' is not part of the formula language (use ( ) for grouping)", "["},
      {"r < 1", "comparisons: use step() or select()", "<"},
      {"", "the formula is empty", ""},
      {"1e + r", "the exponent of this number has no digits", "1e"},
      {"pow(r)", "pow takes 2 arguments, not 1", "pow(r)"},
      {"r)", "unexpected ')' (no '(' to close)", ")"},
      {"1e999*r", "too large for a double", "1e999"},
      {"r \xce\xbb", "'\xce\xbb' is not part of the formula language", "\xce\xbb"},
  };
  for (const auto& c : cases) {
    const FormulaError e = error_of(c.text);
    EXPECT_NE(e.message.find(c.message), std::string::npos)
        << "\"" << c.text << "\": " << e.message;
    EXPECT_EQ(underlined(c.text, e), c.underlined) << "\"" << c.text << "\": " << e.message;
  }
}

TEST(Formula, ReportHasThePlaceAndACaret) {
  const std::string text = "4*epsilon*((sigam/r)^12 - (sigma/r)^6)";
  const FormulaError e = error_of(text);
  Place where{"scenario.toml", 7, 10};  // the opening quote of the value at column 10
  const std::string msg = report("'energy' in [[potential]] #1", text, e, &where);
  // 'sigam' starts at character 12 of the formula: column 10 + 1 + 12.
  EXPECT_EQ(msg, "scenario.toml:7:23: 'energy' in [[potential]] #1: " + e.message + "\n    " +
                     text + "\n                ^~~~~");
  // Without a place (a value from the command line) the message is the same without it.
  EXPECT_EQ(report("energy", "r + x", error_of("r + x"), nullptr).rfind("energy: unknown", 0), 0u);
}

// Symbolic derivatives against central differences, for every construct of the language.
TEST(Formula, DerivativesMatchFiniteDifferences) {
  const std::vector<std::string> laws = {
      "4*epsilon*((sigma/r)^12 - (sigma/r)^6)",
      "A*exp(-kappa*r)/r",
      "epsilon*(exp(-2*kappa*(r - sigma)) - 2*exp(-kappa*(r - sigma)))",
      "A*exp(-r/sigma) - epsilon/r^6 + kappa*erfc(r)/r",
      "3/2*(1/(r^2 + 0.01) - 1/4) + 2.99/2*log((r^2 + 0.01)/4)",
      "sqrt(r^2 + sigma^2) + pow(r, kappa) + r^r + sin(r)*cos(2*r) + tanh(r/sigma) + erf(r)",
      "min(r, 1.3)^2 + max(r, 1.3)^3 + step(r - 1.2)*r + select(step(1.25 - r), r^2, 3*r)",
      "2^r + kappa^(r/2)",
  };
  for (const auto& text : laws) {
    const Formula f = parse(text, kParams);
    const Expr d = derivative(f.tree);
    for (double r : {0.35, 0.71, 1.05, 1.19, 1.31, 2.2}) {
      Values v;
      v.params = kValues;
      const double h = 1e-6 * r;
      v.r = r + h;
      const double up = evaluate(f.tree, v);
      v.r = r - h;
      const double down = evaluate(f.tree, v);
      v.r = r;
      const double fd = (up - down) / (2 * h);
      const double exact = evaluate(d, v);
      EXPECT_NEAR(exact, fd, 1e-6 * std::max(1.0, std::fabs(fd)))
          << text << " at r = " << r << ": d/dr = " << to_string(d, kParams);
    }
  }
}

// -dU/dr / r of a law written in powers of r is a sum of even powers of r: the evaluator's code
// then works with r^2 alone (no square root), as a hand-written Lennard-Jones does.
TEST(Formula, ForceOverRInEvenPowers) {
  const Formula lj = parse("4*epsilon*((sigma/r)^12 - (sigma/r)^6)", kParams);
  const Expr fdivr = times_r_power(neg(derivative(lj.tree)), -1);
  EXPECT_FALSE(odd_r(fdivr)) << to_string(fdivr, kParams);
  EXPECT_FALSE(odd_r(lj.tree)) << to_string(lj.tree, kParams);
  Values v;
  v.params = kValues;
  v.r = 1.1;
  const double s6 = std::pow(0.9 / 1.1, 6);
  EXPECT_NEAR(evaluate(fdivr, v), 24 * 1.5 * (2 * s6 * s6 - s6) / (1.1 * 1.1), 1e-12);
  // A softened distance: d/dr of (r^2 + sigma^2)^-1/2 over r has no odd power either.
  const Formula soft = parse("-A/sqrt(r^2 + sigma^2)", kParams);
  EXPECT_FALSE(odd_r(times_r_power(derivative(soft.tree), -1)));
}

// Coefficients: every subexpression of the parameters alone becomes one, and a constant factor of a
// sum joins its terms' coefficients.
TEST(Formula, HoistLeavesPowersOfRAndCoefficients) {
  const Formula lj = parse("4*epsilon*((sigma/r)^12 - (sigma/r)^6)", kParams);
  std::vector<Expr> coefs;
  const Expr h = hoist(lj.tree, coefs);
  // c0 r^-12 + c1 r^-6 (the sign in c1), nothing else.
  EXPECT_EQ(to_string(h, kParams), "c0*r^-12 + c1*r^-6");
  ASSERT_EQ(coefs.size(), 2u);
  Values v;
  v.params = kValues;
  EXPECT_NEAR(evaluate(coefs[0], v), 4 * 1.5 * std::pow(0.9, 12), 1e-14);
  EXPECT_NEAR(evaluate(coefs[1], v), -4 * 1.5 * std::pow(0.9, 6), 1e-14);
  // The hoisted tree gives the same values with the coefficients' values.
  std::vector<double> c;
  for (const auto& x : coefs) c.push_back(evaluate(x, v));
  v.coefs = c.data();
  v.r = 1.3;
  EXPECT_NEAR(evaluate(h, v), evaluate(lj.tree, v), 1e-14);
  // The softened distance s = r^2 + sigma^2 of a law with long_range stays s (not r) through it.
  const Expr soft = parse("A/(r^2 + sigma^2)", kParams).tree;
  const Expr in_s =
      replace(soft, add({pow(variable(kVarR), constant(2)), pow(parameter(1), constant(2))}),
              variable(kVarS));
  EXPECT_EQ(to_string(in_s, kParams), "A*s^-1");
  std::vector<Expr> c2;
  EXPECT_EQ(to_string(hoist(in_s, c2), kParams), "c0*s^-1");
}

TEST(Formula, NonFiniteValuesArePointedAt) {
  Values v;
  v.params = kValues;
  FormulaError problem;
  const std::string text = "A/r + log(r - 1)";
  const Formula f = parse(text, kParams);
  EXPECT_FALSE(check_finite(f.tree, 2.5, v, "the energy", problem));
  EXPECT_NE(problem.message.find("the energy is NaN at r = 0.0025: log of a negative number"),
            std::string::npos)
      << problem.message;
  EXPECT_EQ(underlined(text, problem), "log(r - 1)");
  const std::string text2 = "exp(r^2)";
  EXPECT_FALSE(check_finite(parse(text2, kParams).tree, 40, v, "the energy", problem));
  EXPECT_NE(problem.message.find("exp("), std::string::npos) << problem.message;
  EXPECT_TRUE(check_finite(parse("4*epsilon*((sigma/r)^12 - (sigma/r)^6)", kParams).tree, 2.5, v,
                           "the energy", problem));
  // A select that keeps the bad branch away from the samples is fine.
  EXPECT_TRUE(check_finite(parse("select(step(r - 1), log(r - 0.5), 0)", kParams).tree, 2.5, v,
                           "the energy", problem));
}

TEST(Formula, GivenForceMustBeTheDerivative) {
  Values v;
  v.params = kValues;
  FormulaError problem;
  const Expr u = parse("4*epsilon*((sigma/r)^12 - (sigma/r)^6)", kParams).tree;
  const std::string right = "24*epsilon/r*(2*(sigma/r)^12 - (sigma/r)^6)";
  EXPECT_TRUE(check_force(u, parse(right, kParams).tree, 2.5, v, problem)) << problem.message;
  const std::string wrong = "24*epsilon/r*((sigma/r)^12 - (sigma/r)^6)";
  EXPECT_FALSE(check_force(u, parse(wrong, kParams).tree, 2.5, v, problem));
  EXPECT_NE(problem.message.find("the force is not -dU/dr of the energy"), std::string::npos);
  EXPECT_EQ(underlined(wrong, problem), wrong);
  // The sign: the force is -dU/dr (positive when repulsive), not dU/dr.
  EXPECT_FALSE(check_force(u, parse("-(" + right + ")", kParams).tree, 2.5, v, problem));
}

TEST(Formula, PrintsReadably) {
  EXPECT_EQ(to_string(parse("4*epsilon*((sigma/r)^12 - (sigma/r)^6)", kParams).tree, kParams),
            "4*epsilon*(sigma^12*r^-12 - sigma^6*r^-6)");
  EXPECT_EQ(to_string(parse("sqrt(r^2 + 1) - 2", kParams).tree, kParams), "sqrt(r^2 + 1) - 2");
}
