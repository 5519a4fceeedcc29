// SPDX-License-Identifier: BSD-3-Clause
// From a formula's tree (formula.hpp, after hoist()) to straight-line code: a list of steps, each
// an operation on earlier steps, with common subexpressions computed once, powers of r taken from
// r^2 (no square root unless an odd power of r needs one), integer powers by repeated squaring and
// a b + c fused. Two back ends read the same steps: C++ text for a compiler (the CPU, at run
// time), and the interpreter (interpreter.hpp), which needs no compiler.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "formula.hpp"

namespace pardyn::expr {

enum class StepOp : std::uint8_t {
  Const,    // value
  Coef,     // index: coefficient `index` of the pair of types
  R2,       // the input r^2
  S,        // the input s = r^2 + softening^2
  Recip,    // 1 / a
  InvSqrt,  // 1 / sqrt(a)
  Sqrt,
  Neg,
  Add,  // a + b
  Sub,  // a - b
  Mul,  // a * b
  Fma,  // a * b + c
  Exp,
  Log,
  Sin,
  Cos,
  Tanh,
  Erf,
  Erfc,
  Pow,     // a ^ b
  Min,     // b < a ? b : a
  Max,     // b > a ? b : a
  Step,    // a >= 0 ? 1 : 0
  Less,    // a < b ? 1 : 0
  Select,  // a != 0 ? b : c
};

struct Step {
  StepOp op = StepOp::Const;
  int a = -1, b = -1, c = -1;
  double value = 0;
  int index = 0;
};

class Program {
 public:
  std::vector<Step> steps;

  // Each returns the index of a step that computes the value (an existing one when the same
  // step was made before).
  int constant(double v);
  int coef(int index);
  int r2();
  int s();
  int op(StepOp o, int a, int b = -1, int c = -1);

  // Lowers a hoisted tree (no parameters left, only coefficients). `odd_r`: whether the law needs
  // odd powers of r anywhere (then 1/r^2 comes from (1/r)^2 rather than a division).
  int lower(const Expr& e, bool odd_r);

 private:
  int push(const Step& s);
  int r_power(double k, bool odd_r);
  int int_power(int x, long n);
  int r_ = -1, inv_r_ = -1, inv_r2_ = -1;
  std::map<std::tuple<int, int, int, int, double, int>, int> known_;
};

// Whether e holds r other than in even powers (the code then needs 1/sqrt(r^2)).
bool needs_odd_r(const Expr& e);

// The steps as C++ statements `const Real t<i> = ...;` (the coefficients in `c`, the inputs r2 and
// s), for the generated evaluator's body.
std::string emit_cpp(const Program& p);

}  // namespace pardyn::expr
