// SPDX-License-Identifier: BSD-3-Clause
// The formula language of `type = "expression"` laws: parsed, checked and differentiated by pardyn
// itself; what reaches a compiler is code pardyn writes from the checked tree, never the user's text.
//
// Grammar (whitespace is free):
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/') unary)*
//   unary   := ('-' | '+') unary | power
//   power   := primary ('^' unary)?          right-associative: 2^3^2 = 2^9; -r^2 = -(r^2)
//   primary := number | name | name '(' expr (',' expr)* ')' | '(' expr ')'
//   number  := digits ['.' digits] [('e' | 'E') ['+' | '-'] digits]   (also .5, 5.)
// Names: `r` (the distance between the two particles), the law's declared parameters, and these
// functions:
//   exp(x) log(x) (natural) sqrt(x) pow(x, y) (= x^y) sin(x) cos(x) tanh(x) erf(x) erfc(x)
//   min(x, y) max(x, y)
//   step(x)          1 where x >= 0, 0 where x < 0 (its derivative is taken as 0)
//   select(c, a, b)  a where c != 0, b where c = 0 (both a and b are evaluated)
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace pardyn::expr {

// A range of characters [begin, end) of a formula's text: what an error points at.
struct Span {
  int begin = 0, end = 0;
};

// A mistake in a formula, with the characters it concerns.
struct FormulaError {
  std::string message;
  Span span;
};

enum class Op : std::uint8_t {
  Const,  // value
  Var,    // index: 0 = r; 1 = s (r^2 + softening^2, made by the law, never parsed)
  Param,  // index: the law's parameter
  Coef,   // index: a value that depends only on the parameters (hoisted, see hoist())
  Add,    // n-ary sum; a - b is a + (-1) b
  Mul,    // n-ary product, its number (if any) first; a / b is a b^-1
  Pow,    // a ^ b; sqrt(a) is a^0.5
  Exp,
  Log,
  Sqrt,
  Sin,
  Cos,
  Tanh,
  Erf,
  Erfc,
  Min,
  Max,
  Step,
  Select,
};

struct Node;
using Expr = std::shared_ptr<const Node>;

struct Node {
  Op op = Op::Const;
  double value = 0;  // Const
  int index = 0;     // Var, Param, Coef
  std::vector<Expr> args;
  Span span;             // where it came from in the formula (made nodes: their origin's)
  std::size_t hash = 0;  // structural, for equality and common subexpressions
};

// Node constructors. The arithmetic ones simplify as they build (constants folded, 0 and 1
// dropped, equal factors and terms merged), so that every tree pardyn handles is in one form.
Expr constant(double v, Span s = {});
Expr variable(int index, Span s = {});
Expr parameter(int index, Span s = {});
Expr coefficient(int index, Span s = {});
Expr add(const std::vector<Expr>& terms, Span s = {});
Expr mul(const std::vector<Expr>& factors, Span s = {});
Expr neg(const Expr& a, Span s = {});
Expr sub(const Expr& a, const Expr& b, Span s = {});
Expr div(const Expr& a, const Expr& b, Span s = {});
Expr pow(const Expr& a, const Expr& b, Span s = {});
Expr call(Op f, const std::vector<Expr>& args, Span s = {});

bool equal(const Expr& a, const Expr& b);
bool is_const(const Expr& e, double v);
// Whether e depends on r (or s).
bool depends_on_r(const Expr& e);

constexpr int kVarR = 0;
constexpr int kVarS = 1;

// A parsed formula: its text, the tree, and the names of the parameters its indices refer to.
struct Formula {
  std::string text;
  Expr tree;
};

// Parses `text`. Names other than r and the functions must be among `params` (their index there);
// anything else throws a FormulaError pointing at it ("did you mean ...").
Formula parse(const std::string& text, const std::vector<std::string>& params);

// d e / d r, simplified.
Expr derivative(const Expr& e);

// e * r^k, with k pushed into sums and merged with the powers of r already there (so that
// -dU/dr / r of a law written in powers of r needs no square root).
Expr times_r_power(const Expr& e, double k);

// Replaces every subexpression equal to `pattern` by `with`.
Expr replace(const Expr& e, const Expr& pattern, const Expr& with);

// Values for evaluation: r (and s), the parameters, the coefficients.
struct Values {
  double r = 0, s = 0;
  const double* params = nullptr;
  const double* coefs = nullptr;
};
double evaluate(const Expr& e, const Values& v);

// The first subexpression (innermost, leftmost) that gives a non-finite value where all its
// arguments are finite, for the message that says what went wrong; null if e is finite.
Expr first_non_finite(const Expr& e, const Values& v);

// The sampled checks of a law's formulas, at the distances r_k = rmax k / kSamples, k = 1 ..
// kSamples, with the parameters (and coefficients) of `v`. Each returns the first problem found:
//   check_finite: a sample where `e` is NaN or infinite, pointing at the subexpression at fault
//                 (`what` names the formula in the message: "the energy");
//   check_force:  a sample where the given force differs from -dU/dr of the energy by more than
//                 kForceTolerance of the largest force magnitude sampled, pointing at all of it.
constexpr int kSamples = 1000;
constexpr double kForceTolerance = 1e-6;
bool check_finite(const Expr& e, double rmax, Values v, const std::string& what,
                  FormulaError& problem);
bool check_force(const Expr& energy, const Expr& force, double rmax, Values v,
                 FormulaError& problem);

// Subexpressions that depend only on the parameters become coefficients: every maximal such
// subtree that is not a plain number, numbered in `coefs` (shared by several calls, so that two
// formulas of one law share their coefficients).
Expr hoist(const Expr& e, std::vector<Expr>& coefs);

// The formula as text, for messages and the documentation (fully parenthesised where needed).
std::string to_string(const Expr& e, const std::vector<std::string>& params);

const char* function_name(Op f);

// The closest of `candidates` to `word` (edit distance), or "" if none is close.
std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates);

// The message of an error in a formula given as the value of `key`: where (file:line:column of
// the character, when the place of the value is known), what, and the formula with a caret under
// the characters concerned.
struct Place {
  std::string file;
  int line = 0, column = 0;  // of the value's first character (the opening quote of a string)
};
std::string report(const std::string& key, const std::string& text, const FormulaError& err,
                   const Place* place);

}  // namespace pardyn::expr
