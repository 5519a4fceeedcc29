// SPDX-License-Identifier: BSD-3-Clause
#include "lower.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace pardyn::expr {

int Program::push(const Step& s) {
  const auto key = std::make_tuple(int(s.op), s.a, s.b, s.c, s.value, s.index);
  auto it = known_.find(key);
  if (it != known_.end()) return it->second;
  steps.push_back(s);
  const int i = int(steps.size()) - 1;
  known_[key] = i;
  return i;
}

int Program::constant(double v) {
  Step s;
  s.op = StepOp::Const;
  s.value = v;
  return push(s);
}
int Program::coef(int index) {
  Step s;
  s.op = StepOp::Coef;
  s.index = index;
  return push(s);
}
int Program::r2() {
  Step s;
  s.op = StepOp::R2;
  return push(s);
}
int Program::s() {
  Step s;
  s.op = StepOp::S;
  return push(s);
}
int Program::op(StepOp o, int a, int b, int c) {
  Step s;
  s.op = o;
  s.a = a;
  s.b = b;
  s.c = c;
  // Commutative operations in one order, so that a b and b a are one step.
  if ((o == StepOp::Add || o == StepOp::Mul) && s.b < s.a) std::swap(s.a, s.b);
  if (o == StepOp::Fma && s.b < s.a) std::swap(s.a, s.b);
  return push(s);
}

bool needs_odd_r(const Expr& e) {
  if (e->op == Op::Var) return e->index == kVarR;
  if (e->op == Op::Pow && e->args[0]->op == Op::Var && e->args[0]->index == kVarR &&
      e->args[1]->op == Op::Const)
    return std::fmod(e->args[1]->value, 2.0) != 0;
  for (const auto& a : e->args)
    if (needs_odd_r(a)) return true;
  return false;
}

// x^n for n >= 1 by squaring: x^6 = (x^3)^2, x^7 = x^6 x; the steps of x^3 serve x^6 too.
int Program::int_power(int x, long n) {
  if (n == 1) return x;
  if (n % 2 == 0) {
    const int h = int_power(x, n / 2);
    return op(StepOp::Mul, h, h);
  }
  return op(StepOp::Mul, int_power(x, n - 1), x);
}

// r^k from r^2: even k by powers of r^2 or 1/r^2, odd k with one 1/sqrt(r^2).
int Program::r_power(double k, bool odd_r) {
  const bool integer = k == std::floor(k) && std::fabs(k) < 1e6;
  if (odd_r && inv_r_ < 0) inv_r_ = op(StepOp::InvSqrt, r2());
  if (!integer) {
    if (r_ < 0) r_ = odd_r ? op(StepOp::Mul, r2(), inv_r_) : op(StepOp::Sqrt, r2());
    return op(StepOp::Pow, r_, constant(k));
  }
  const long n = long(k);
  if (inv_r2_ < 0 && n < 0)
    inv_r2_ = odd_r ? op(StepOp::Mul, inv_r_, inv_r_) : op(StepOp::Recip, r2());
  if (n % 2 == 0) return n > 0 ? int_power(r2(), n / 2) : int_power(inv_r2_, -n / 2);
  if (inv_r_ < 0) inv_r_ = op(StepOp::InvSqrt, r2());
  if (n > 0) {
    if (r_ < 0) r_ = op(StepOp::Mul, r2(), inv_r_);  // r = r^2 / r
    return n == 1 ? r_ : op(StepOp::Mul, r_, int_power(r2(), (n - 1) / 2));
  }
  return n == -1 ? inv_r_ : op(StepOp::Mul, inv_r_, int_power(inv_r2_, (-n - 1) / 2));
}

// Long: one case per node of the tree, powers and sums with their special forms.
int Program::lower(const Expr& e, bool odd_r) {
  switch (e->op) {
    case Op::Const: return constant(e->value);
    case Op::Coef: return coef(e->index);
    case Op::Param: throw std::logic_error("internal: a parameter left in a hoisted formula");
    case Op::Var:
      if (e->index == kVarS) return s();
      return r_power(1, odd_r);
    case Op::Pow: {
      const Expr& base = e->args[0];
      const Expr& ex = e->args[1];
      if (ex->op != Op::Const) return op(StepOp::Pow, lower(base, odd_r), lower(ex, odd_r));
      const double k = ex->value;
      if (base->op == Op::Var && base->index == kVarR) return r_power(k, odd_r);
      const int x = lower(base, odd_r);
      const bool integer = k == std::floor(k) && std::fabs(k) < 1e6;
      if (integer) {
        const long n = long(k);
        return n > 0 ? int_power(x, n) : int_power(op(StepOp::Recip, x), -n);
      }
      const double twice = 2 * k;
      if (twice == std::floor(twice) && std::fabs(twice) < 1e6) {  // half-integer
        const long m = long(twice);                                // odd
        if (m > 0) {
          const int root = op(StepOp::Sqrt, x);
          return m == 1 ? root : op(StepOp::Mul, int_power(x, (m - 1) / 2), root);
        }
        return int_power(op(StepOp::InvSqrt, x), -m);  // x^(-m/2) = (1/sqrt x)^m
      }
      return op(StepOp::Pow, x, constant(k));
    }
    case Op::Mul: {
      std::size_t i = 0;
      double k = 1;
      if (e->args[0]->op == Op::Const) k = e->args[0]->value, i = 1;
      int acc = -1;
      for (; i < e->args.size(); ++i) {
        const int f = lower(e->args[i], odd_r);
        acc = acc < 0 ? f : op(StepOp::Mul, acc, f);
      }
      if (acc < 0) return constant(k);
      if (k == 1) return acc;
      if (k == -1) return op(StepOp::Neg, acc);
      return op(StepOp::Mul, constant(k), acc);
    }
    case Op::Add: {
      int acc = -1;
      for (const auto& t : e->args) {
        if (acc < 0) {
          acc = lower(t, odd_r);
          continue;
        }
        if (t->op == Op::Mul && t->args[0]->op == Op::Const && t->args[0]->value == -1) {
          std::vector<Expr> rest(t->args.begin() + 1, t->args.end());
          acc = op(StepOp::Sub, acc, lower(mul(rest), odd_r));
        } else if (t->op == Op::Mul) {  // x y + acc as one fused step
          std::vector<Expr> rest(t->args.begin() + 1, t->args.end());
          acc = op(StepOp::Fma, lower(t->args[0], odd_r), lower(mul(rest), odd_r), acc);
        } else if (t->op == Op::Const && t->value < 0) {
          acc = op(StepOp::Sub, acc, constant(-t->value));
        } else {
          acc = op(StepOp::Add, acc, lower(t, odd_r));
        }
      }
      return acc;
    }
    case Op::Exp: return op(StepOp::Exp, lower(e->args[0], odd_r));
    case Op::Log: return op(StepOp::Log, lower(e->args[0], odd_r));
    case Op::Sin: return op(StepOp::Sin, lower(e->args[0], odd_r));
    case Op::Cos: return op(StepOp::Cos, lower(e->args[0], odd_r));
    case Op::Tanh: return op(StepOp::Tanh, lower(e->args[0], odd_r));
    case Op::Erf: return op(StepOp::Erf, lower(e->args[0], odd_r));
    case Op::Erfc: return op(StepOp::Erfc, lower(e->args[0], odd_r));
    case Op::Sqrt: return op(StepOp::Sqrt, lower(e->args[0], odd_r));
    case Op::Min: return op(StepOp::Min, lower(e->args[0], odd_r), lower(e->args[1], odd_r));
    case Op::Max: return op(StepOp::Max, lower(e->args[0], odd_r), lower(e->args[1], odd_r));
    case Op::Step: return op(StepOp::Step, lower(e->args[0], odd_r));
    case Op::Select:
      return op(StepOp::Select, lower(e->args[0], odd_r), lower(e->args[1], odd_r),
                lower(e->args[2], odd_r));
  }
  throw std::logic_error("internal: a formula node the code generator does not know");
}

namespace {
std::string literal(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  std::string t = b;
  if (t.find_first_of(".eEn") == std::string::npos) t += ".0";  // a double literal
  return "Real(" + t + ")";
}
}  // namespace

std::string emit_cpp(const Program& p) {
  std::string out;
  const auto t = [](int i) { return "t" + std::to_string(i); };
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const Step& s = p.steps[i];
    std::string x;
    switch (s.op) {
      case StepOp::Const: x = literal(s.value); break;
      case StepOp::Coef: x = "c[" + std::to_string(s.index) + "]"; break;
      case StepOp::R2: x = "r2"; break;
      case StepOp::S: x = "s"; break;
      case StepOp::Recip: x = "reciprocal(" + t(s.a) + ")"; break;
      case StepOp::InvSqrt: x = "inv_sqrt(" + t(s.a) + ")"; break;
      case StepOp::Sqrt: x = "fn_sqrt(" + t(s.a) + ")"; break;
      case StepOp::Neg: x = "-" + t(s.a); break;
      case StepOp::Add: x = t(s.a) + " + " + t(s.b); break;
      case StepOp::Sub: x = t(s.a) + " - " + t(s.b); break;
      case StepOp::Mul: x = t(s.a) + " * " + t(s.b); break;
      case StepOp::Fma: x = "fma(" + t(s.a) + ", " + t(s.b) + ", " + t(s.c) + ")"; break;
      case StepOp::Exp: x = "exponential(" + t(s.a) + ")"; break;
      case StepOp::Log: x = "ln(" + t(s.a) + ")"; break;
      case StepOp::Sin: x = "fn_sin(" + t(s.a) + ")"; break;
      case StepOp::Cos: x = "fn_cos(" + t(s.a) + ")"; break;
      case StepOp::Tanh: x = "fn_tanh(" + t(s.a) + ")"; break;
      case StepOp::Erf: x = "fn_erf(" + t(s.a) + ")"; break;
      case StepOp::Erfc: x = "fn_erfc(" + t(s.a) + ")"; break;
      case StepOp::Pow: x = "fn_pow(" + t(s.a) + ", " + t(s.b) + ")"; break;
      case StepOp::Min: x = t(s.b) + " < " + t(s.a) + " ? " + t(s.b) + " : " + t(s.a); break;
      case StepOp::Max: x = t(s.b) + " > " + t(s.a) + " ? " + t(s.b) + " : " + t(s.a); break;
      case StepOp::Step: x = t(s.a) + " >= Real(0) ? Real(1) : Real(0)"; break;
      case StepOp::Less: x = t(s.a) + " < " + t(s.b) + " ? Real(1) : Real(0)"; break;
      case StepOp::Select: x = t(s.a) + " != Real(0) ? " + t(s.b) + " : " + t(s.c); break;
    }
    out += "  const Real " + t(int(i)) + " = " + x + ";\n";
  }
  return out;
}

}  // namespace pardyn::expr
