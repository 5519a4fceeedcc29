// SPDX-License-Identifier: BSD-3-Clause
#include "formula.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>

namespace pardyn::expr {

namespace {

// --- nodes ------------------------------------------------------------------------------------------

std::size_t mix(std::size_t h, std::size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
}

Expr make(Op op, double value, int index, std::vector<Expr> args, Span s) {
  auto n = std::make_shared<Node>();
  n->op = op;
  n->value = value;
  n->index = index;
  n->args = std::move(args);
  n->span = s;
  std::size_t h = std::size_t(op) * 1315423911u;
  if (op == Op::Const) {
    std::uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    h = mix(h, std::size_t(bits));
  }
  h = mix(h, std::size_t(index));
  if (op == Op::Add || op == Op::Mul) {  // in any order: a + b equals b + a
    std::size_t sum = 0;
    for (const auto& a : n->args) sum += mix(0, a->hash);
    h = mix(h, sum);
  } else {
    for (const auto& a : n->args) h = mix(h, a->hash);
  }
  n->hash = h;
  return n;
}

bool is_number(const Expr& e) { return e->op == Op::Const; }
bool is_integer(double v) { return std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e9; }
bool is_r(const Expr& e) { return e->op == Op::Var && e->index == kVarR; }

// A power of r: r itself or r^k with k a number; its exponent in k.
bool r_power(const Expr& e, double& k) {
  if (is_r(e)) return k = 1, true;
  if (e->op == Op::Pow && is_r(e->args[0]) && is_number(e->args[1]))
    return k = e->args[1]->value, true;
  return false;
}

// Folds f over numbers; a non-finite result is left unfolded (the checks then point at it).
bool fold(double v, Span s, Expr& out) {
  if (!std::isfinite(v)) return false;
  out = constant(v, s);
  return true;
}

double apply(Op f, const double* a) {
  switch (f) {
    case Op::Exp: return std::exp(a[0]);
    case Op::Log: return std::log(a[0]);
    case Op::Sqrt: return std::sqrt(a[0]);
    case Op::Sin: return std::sin(a[0]);
    case Op::Cos: return std::cos(a[0]);
    case Op::Tanh: return std::tanh(a[0]);
    case Op::Erf: return std::erf(a[0]);
    case Op::Erfc: return std::erfc(a[0]);
    case Op::Min: return a[1] < a[0] ? a[1] : a[0];
    case Op::Max: return a[1] > a[0] ? a[1] : a[0];
    case Op::Step: return a[0] >= 0 ? 1.0 : 0.0;
    case Op::Select: return a[0] != 0 ? a[1] : a[2];
    case Op::Pow: return std::pow(a[0], a[1]);
    default: return std::nan("");
  }
}

int arity(Op f) {
  switch (f) {
    case Op::Min:
    case Op::Max:
    case Op::Pow: return 2;
    case Op::Select: return 3;
    default: return 1;
  }
}

}  // namespace

const char* function_name(Op f) {
  switch (f) {
    case Op::Exp: return "exp";
    case Op::Log: return "log";
    case Op::Sqrt: return "sqrt";
    case Op::Sin: return "sin";
    case Op::Cos: return "cos";
    case Op::Tanh: return "tanh";
    case Op::Erf: return "erf";
    case Op::Erfc: return "erfc";
    case Op::Min: return "min";
    case Op::Max: return "max";
    case Op::Step: return "step";
    case Op::Select: return "select";
    case Op::Pow: return "pow";
    default: return "?";
  }
}

bool equal(const Expr& a, const Expr& b) {
  if (a == b) return true;
  if (a->hash != b->hash || a->op != b->op || a->index != b->index ||
      a->args.size() != b->args.size())
    return false;
  if (a->op == Op::Const && !(a->value == b->value)) return false;
  if (a->op == Op::Add || a->op == Op::Mul) {  // the same terms (factors) in any order
    std::vector<bool> used(b->args.size(), false);
    for (const auto& x : a->args) {
      bool found = false;
      for (std::size_t j = 0; j < b->args.size() && !found; ++j)
        if (!used[j] && equal(x, b->args[j])) used[j] = found = true;
      if (!found) return false;
    }
    return true;
  }
  for (std::size_t i = 0; i < a->args.size(); ++i)
    if (!equal(a->args[i], b->args[i])) return false;
  return true;
}

bool is_const(const Expr& e, double v) { return e->op == Op::Const && e->value == v; }

bool depends_on_r(const Expr& e) {
  if (e->op == Op::Var) return true;
  for (const auto& a : e->args)
    if (depends_on_r(a)) return true;
  return false;
}

Expr constant(double v, Span s) { return make(Op::Const, v == 0 ? 0.0 : v, 0, {}, s); }
Expr variable(int index, Span s) { return make(Op::Var, 0, index, {}, s); }
Expr parameter(int index, Span s) { return make(Op::Param, 0, index, {}, s); }
Expr coefficient(int index, Span s) { return make(Op::Coef, 0, index, {}, s); }

// The operands of `items` (a sum's terms, a product's factors) with nested nodes of the same `op`
// flattened, in order: each number to number(value), every other operand to other(operand).
template <class Number, class Other>
void flatten(Op op, const std::vector<Expr>& items, Number number, Other other) {
  std::function<void(const Expr&)> put = [&](const Expr& t) {
    if (t->op == op) {
      for (const auto& a : t->args) put(a);
      return;
    }
    if (is_number(t)) number(t->value);
    else other(t);
  };
  for (const auto& t : items) put(t);
}

// A sum: nested sums flattened, numbers added, equal terms (up to a number factor) merged.
Expr add(const std::vector<Expr>& terms, Span s) {
  struct Term {
    double c;
    Expr rest;
  };
  std::vector<Term> out;
  double k = 0;
  flatten(
      Op::Add, terms, [&](double v) { k += v; },
      [&](const Expr& t) {
        double c = 1;
        Expr rest = t;
        if (t->op == Op::Mul && is_number(t->args[0])) {
          c = t->args[0]->value;
          std::vector<Expr> f(t->args.begin() + 1, t->args.end());
          rest = f.size() == 1 ? f[0] : make(Op::Mul, 0, 0, f, t->span);
        }
        for (auto& o : out)
          if (equal(o.rest, rest)) {
            o.c += c;
            return;
          }
        out.push_back({c, rest});
      });
  std::vector<Expr> args;
  for (const auto& t : out) {
    if (t.c == 0) continue;
    args.push_back(t.c == 1 ? t.rest : mul({constant(t.c, s), t.rest}, t.rest->span));
  }
  if (k != 0 || args.empty()) args.push_back(constant(k, s));
  if (args.size() == 1) return args[0];
  return make(Op::Add, 0, 0, std::move(args), s);
}

// A product: nested products flattened, numbers multiplied (first), powers of equal bases merged.
Expr mul(const std::vector<Expr>& factors, Span s) {
  struct Factor {
    Expr base;
    double e;    // exponent, when numeric
    Expr whole;  // the factor itself when its exponent is not a number
  };
  std::vector<Factor> out;
  double k = 1;
  flatten(
      Op::Mul, factors, [&](double v) { k *= v; },
      [&](const Expr& f) {
        Expr base = f;
        double e = 1;
        if (f->op == Op::Pow && is_number(f->args[1])) {
          base = f->args[0];
          e = f->args[1]->value;
        }
        for (auto& o : out)
          if (!o.whole && equal(o.base, base)) {
            o.e += e;
            return;
          }
        out.push_back({base, e, nullptr});
      });
  if (k == 0) return constant(0, s);
  std::vector<Expr> args;
  if (k != 1) args.push_back(constant(k, s));
  for (const auto& f : out) {
    if (f.e == 0) continue;
    Expr p = pow(f.base, constant(f.e), f.base->span);
    if (is_number(p)) {
      k *= p->value;
      if (!args.empty() && is_number(args[0])) args[0] = constant(k, s);
      else args.insert(args.begin(), constant(k, s));
      continue;
    }
    if (p->op == Op::Mul) {  // a power that distributed over a product
      for (const auto& a : p->args) args.push_back(a);
      continue;
    }
    args.push_back(p);
  }
  if (args.empty()) return constant(1, s);
  if (args.size() == 1) return args[0];
  if (args.size() == 2 && is_number(args[0]) && args[0]->value == 1) return args[1];
  // Several numbers may have come back from powers: multiply them once more.
  bool again = false;
  for (std::size_t i = 1; i < args.size(); ++i) again = again || is_number(args[i]);
  if (again) return mul(args, s);
  return make(Op::Mul, 0, 0, std::move(args), s);
}

Expr neg(const Expr& a, Span s) { return mul({constant(-1, s), a}, s); }
Expr sub(const Expr& a, const Expr& b, Span s) { return add({a, neg(b, b->span)}, s); }
Expr div(const Expr& a, const Expr& b, Span s) {
  return mul({a, pow(b, constant(-1, b->span), b->span)}, s);
}

Expr pow(const Expr& a, const Expr& b, Span s) {
  Expr out;
  if (is_number(a) && is_number(b) && fold(std::pow(a->value, b->value), s, out)) return out;
  if (is_number(b)) {
    const double e = b->value;
    if (e == 0) return constant(1, s);
    if (e == 1) return a;
    // (x^c)^e = x^(c e) for integer e, and for x = r > 0 whatever e.
    if (a->op == Op::Pow && is_number(a->args[1]) && (is_integer(e) || is_r(a->args[0])))
      return pow(a->args[0], constant(a->args[1]->value * e), s);
    // (x y)^e = x^e y^e for integer e.
    if (a->op == Op::Mul && is_integer(e)) {
      std::vector<Expr> f;
      for (const auto& x : a->args) f.push_back(pow(x, b, x->span));
      return mul(f, s);
    }
  }
  if (is_const(a, 1)) return constant(1, s);
  return make(Op::Pow, 0, 0, {a, b}, s);
}

Expr call(Op f, const std::vector<Expr>& args, Span s) {
  if (f == Op::Pow) return pow(args[0], args[1], s);
  if (f == Op::Sqrt) return pow(args[0], constant(0.5, s), s);
  bool numbers = true;
  double v[3] = {0, 0, 0};
  for (std::size_t i = 0; i < args.size(); ++i) {
    numbers = numbers && is_number(args[i]);
    if (numbers) v[i] = args[i]->value;
  }
  Expr out;
  if (numbers && fold(apply(f, v), s, out)) return out;
  if (f == Op::Select && is_number(args[0])) return args[0]->value != 0 ? args[1] : args[2];
  if (f == Op::Select && equal(args[1], args[2])) return args[1];
  return make(f, 0, 0, args, s);
}

// --- calculus ---------------------------------------------------------------------------------------

Expr derivative(const Expr& e) {
  const Span s = e->span;
  const auto& a = e->args;
  switch (e->op) {
    case Op::Const:
    case Op::Param:
    case Op::Coef: return constant(0, s);
    case Op::Var:  // d r / d r = 1; d s / d r = 2 r
      return e->index == kVarR ? constant(1, s) : mul({constant(2), variable(kVarR)}, s);
    case Op::Add: {
      std::vector<Expr> t;
      for (const auto& x : a) t.push_back(derivative(x));
      return add(t, s);
    }
    case Op::Mul: {
      std::vector<Expr> t;
      for (std::size_t i = 0; i < a.size(); ++i) {
        Expr d = derivative(a[i]);
        if (is_const(d, 0)) continue;
        std::vector<Expr> f{d};
        for (std::size_t j = 0; j < a.size(); ++j)
          if (j != i) f.push_back(a[j]);
        t.push_back(mul(f, s));
      }
      return add(t, s);
    }
    case Op::Pow: {
      const Expr& u = a[0];
      const Expr& v = a[1];
      if (!depends_on_r(v))  // d u^v = v u^(v-1) u'
        return mul({v, pow(u, add({v, constant(-1)}), s), derivative(u)}, s);
      // d u^v = u^v (v' log u + v u' / u)
      return mul({e, add({mul({derivative(v), call(Op::Log, {u}, s)}, s),
                          mul({v, derivative(u), pow(u, constant(-1), s)}, s)},
                         s)},
                 s);
    }
    case Op::Exp: return mul({e, derivative(a[0])}, s);
    case Op::Log: return mul({derivative(a[0]), pow(a[0], constant(-1), s)}, s);
    case Op::Sin: return mul({call(Op::Cos, a, s), derivative(a[0])}, s);
    case Op::Cos: return mul({constant(-1), call(Op::Sin, a, s), derivative(a[0])}, s);
    case Op::Tanh: return mul({sub(constant(1), pow(e, constant(2), s), s), derivative(a[0])}, s);
    case Op::Erf:
    case Op::Erfc: {
      const double c = (e->op == Op::Erf ? 2 : -2) / std::sqrt(3.14159265358979323846);
      return mul(
          {constant(c), call(Op::Exp, {neg(pow(a[0], constant(2), s), s)}, s), derivative(a[0])},
          s);
    }
    case Op::Min:  // the derivative of the smaller one (of x where x <= y)
      return call(Op::Select,
                  {call(Op::Step, {sub(a[1], a[0], s)}, s), derivative(a[0]), derivative(a[1])}, s);
    case Op::Max:
      return call(Op::Select,
                  {call(Op::Step, {sub(a[0], a[1], s)}, s), derivative(a[0]), derivative(a[1])}, s);
    case Op::Step: return constant(0, s);
    case Op::Select: return call(Op::Select, {a[0], derivative(a[1]), derivative(a[2])}, s);
    default: return constant(0, s);
  }
}

namespace {
// Whether multiplying e by a power of r merges with powers already there (every term has one).
bool holds_r_power(const Expr& e) {
  double k;
  if (r_power(e, k)) return true;
  if (e->op == Op::Mul) {
    for (const auto& f : e->args)
      if (holds_r_power(f)) return true;
    return false;
  }
  if (e->op == Op::Add) {
    for (const auto& t : e->args)
      if (!holds_r_power(t)) return false;
    return true;
  }
  return false;
}
}  // namespace

Expr times_r_power(const Expr& e, double k) {
  if (k == 0) return e;
  const Span s = e->span;
  double have;
  if (r_power(e, have)) return pow(variable(kVarR, s), constant(have + k), s);
  if (e->op == Op::Add) {
    std::vector<Expr> t;
    for (const auto& x : e->args) t.push_back(times_r_power(x, k));
    return add(t, s);
  }
  if (e->op == Op::Mul) {
    std::vector<Expr> f = e->args;
    for (auto& x : f)
      if (holds_r_power(x)) {
        x = times_r_power(x, k);
        return mul(f, s);
      }
  }
  return mul({e, pow(variable(kVarR, s), constant(k), s)}, s);
}

Expr replace(const Expr& e, const Expr& pattern, const Expr& with) {
  if (equal(e, pattern)) return with;
  if (e->args.empty()) return e;
  std::vector<Expr> a;
  bool changed = false;
  for (const auto& x : e->args) {
    a.push_back(replace(x, pattern, with));
    changed = changed || a.back() != x;
  }
  if (!changed) return e;
  switch (e->op) {
    case Op::Add: return add(a, e->span);
    case Op::Mul: return mul(a, e->span);
    case Op::Pow: return pow(a[0], a[1], e->span);
    default: return call(e->op, a, e->span);
  }
}

// --- evaluation -------------------------------------------------------------------------------------

double evaluate(const Expr& e, const Values& v) {
  switch (e->op) {
    case Op::Const: return e->value;
    case Op::Var: return e->index == kVarR ? v.r : v.s;
    case Op::Param: return v.params[e->index];
    case Op::Coef: return v.coefs[e->index];
    case Op::Add: {
      double x = 0;
      for (const auto& a : e->args) x += evaluate(a, v);
      return x;
    }
    case Op::Mul: {
      double x = 1;
      for (const auto& a : e->args) x *= evaluate(a, v);
      return x;
    }
    case Op::Select:  // only the chosen branch
      return evaluate(e->args[0], v) != 0 ? evaluate(e->args[1], v) : evaluate(e->args[2], v);
    default: {
      double a[3] = {0, 0, 0};
      for (std::size_t i = 0; i < e->args.size(); ++i) a[i] = evaluate(e->args[i], v);
      return apply(e->op, a);
    }
  }
}

namespace {
// Evaluates e; the first non-finite subexpression found (in evaluation order) goes to `culprit`.
double trace(const Expr& e, const Values& v, Expr& culprit) {
  if (e->op == Op::Select) {
    const double c = trace(e->args[0], v, culprit);
    if (culprit) return c;
    return trace(c != 0 ? e->args[1] : e->args[2], v, culprit);
  }
  double a[3] = {0, 0, 0};
  double acc = e->op == Op::Mul ? 1 : 0;
  for (std::size_t i = 0; i < e->args.size(); ++i) {
    const double x = trace(e->args[i], v, culprit);
    if (culprit) return x;
    if (i < 3) a[i] = x;
    acc = e->op == Op::Mul ? acc * x : acc + x;
  }
  double x;
  switch (e->op) {
    case Op::Add:
    case Op::Mul: x = acc; break;
    case Op::Const:
    case Op::Var:
    case Op::Param:
    case Op::Coef: x = evaluate(e, v); break;
    default: x = apply(e->op, a);
  }
  if (!std::isfinite(x)) culprit = e;
  return x;
}
}  // namespace

Expr first_non_finite(const Expr& e, const Values& v) {
  Expr culprit;
  trace(e, v, culprit);
  return culprit;
}

namespace {
std::string short_number(double x) {
  std::ostringstream o;
  o.precision(6);
  o << x;
  return o.str();
}

// Why `e` is not finite where its arguments are.
std::string why_not_finite(const Expr& e, const Values& v) {
  double a[3] = {0, 0, 0};
  for (std::size_t i = 0; i < e->args.size() && i < 3; ++i) a[i] = evaluate(e->args[i], v);
  switch (e->op) {
    case Op::Log:
      return a[0] == 0 ? "log of 0" : "log of a negative number (" + short_number(a[0]) + ")";
    case Op::Exp: return "exp(" + short_number(a[0]) + ") overflows";
    case Op::Pow:
      if (a[0] == 0 && a[1] < 0) return "division by zero (0^" + short_number(a[1]) + ")";
      if (a[0] < 0) return "a negative number (" + short_number(a[0]) + ") to a non-integer power";
      return "the power overflows (" + short_number(a[0]) + "^" + short_number(a[1]) + ")";
    case Op::Mul: return "a product overflows or is 0 times infinity";
    case Op::Add: return "a sum overflows or is infinity minus infinity";
    default: return "the value overflows";
  }
}
}  // namespace

bool check_finite(const Expr& e, double rmax, Values v, const std::string& what,
                  FormulaError& problem) {
  for (int k = 1; k <= kSamples; ++k) {
    v.r = rmax * k / kSamples;
    const Expr bad = first_non_finite(e, v);
    if (!bad) continue;
    const double x = evaluate(bad, v);
    problem.message = what + " is " + (std::isnan(x) ? "NaN" : "infinite") +
                      " at r = " + short_number(v.r) + ": " + why_not_finite(bad, v) +
                      " (checked at " + std::to_string(kSamples) +
                      " distances evenly spaced on (0, " + short_number(rmax) + "])";
    problem.span = bad->span;
    return false;
  }
  return true;
}

bool check_force(const Expr& energy, const Expr& force, double rmax, Values v,
                 FormulaError& problem) {
  const Expr minus_du = neg(derivative(energy));
  std::vector<double> f(kSamples + 1), g(kSamples + 1);
  double scale = 0;
  for (int k = 1; k <= kSamples; ++k) {
    v.r = rmax * k / kSamples;
    f[std::size_t(k)] = evaluate(force, v);
    g[std::size_t(k)] = evaluate(minus_du, v);
    if (std::isfinite(f[std::size_t(k)]) && std::isfinite(g[std::size_t(k)]))
      scale = std::max({scale, std::fabs(f[std::size_t(k)]), std::fabs(g[std::size_t(k)])});
  }
  for (int k = 1; k <= kSamples; ++k) {
    const double a = f[std::size_t(k)], b = g[std::size_t(k)];
    if (!std::isfinite(a) || !std::isfinite(b)) continue;
    // Relative to the value where it is large, to the largest sampled force elsewhere.
    if (std::fabs(a - b) <= kForceTolerance * std::max(std::fabs(b), 1e-3 * scale)) continue;
    problem.message =
        "the force is not -dU/dr of the energy: at r = " + short_number(rmax * k / kSamples) +
        " the force is " + short_number(a) + " but -dU/dr = " + short_number(b) +
        " (force is the magnitude -dU/dr, positive for repulsion; leave it out to "
        "have it derived from the energy)";
    problem.span = force->span;
    return false;
  }
  return true;
}

Expr hoist(const Expr& e, std::vector<Expr>& coefs) {
  const auto index_of = [&](const Expr& c) {
    for (std::size_t i = 0; i < coefs.size(); ++i)
      if (equal(coefs[i], c)) return coefficient(int(i), c->span);
    coefs.push_back(c);
    return coefficient(int(coefs.size() - 1), c->span);
  };
  if (!depends_on_r(e)) return is_number(e) ? e : index_of(e);
  if (e->op == Op::Var) return e;  // r or s itself
  const Span s = e->span;
  if (e->op == Op::Add || e->op == Op::Mul) {
    std::vector<Expr> fixed, varying;
    for (const auto& a : e->args) (depends_on_r(a) ? varying : fixed).push_back(a);
    if (e->op == Op::Mul && !fixed.empty() && varying.size() == 1 && varying[0]->op == Op::Add) {
      // K (t1 + t2) = K t1 + K t2: K then joins each term's coefficient (one product less).
      std::vector<Expr> t;
      for (const auto& term : varying[0]->args) {
        std::vector<Expr> f = fixed;
        f.push_back(term);
        t.push_back(mul(f, term->span));
      }
      return hoist(add(t, s), coefs);
    }
    std::vector<Expr> out;
    if (!fixed.empty()) {
      const Expr k = e->op == Op::Add ? add(fixed, s) : mul(fixed, s);
      out.push_back(is_number(k) ? k : index_of(k));
    }
    for (const auto& a : varying) out.push_back(hoist(a, coefs));
    return e->op == Op::Add ? add(out, s) : mul(out, s);
  }
  std::vector<Expr> a;
  for (const auto& x : e->args) a.push_back(hoist(x, coefs));
  if (e->op == Op::Pow) return pow(a[0], a[1], s);
  return call(e->op, a, s);
}

// --- text -------------------------------------------------------------------------------------------

namespace {
std::string number_text(double v) {
  std::ostringstream o;
  o.precision(17);
  o << v;
  std::string t = o.str();
  // The shortest text that reads back as the same double.
  for (int p = 1; p <= 17; ++p) {
    std::ostringstream q;
    q.precision(p);
    q << v;
    if (std::strtod(q.str().c_str(), nullptr) == v) return q.str();
  }
  return t;
}

int precedence(const Expr& e) {
  switch (e->op) {
    case Op::Add: return 1;
    case Op::Mul: return 2;
    case Op::Pow: return 4;
    case Op::Const: return e->value < 0 ? 2 : 5;
    default: return 5;
  }
}

std::string text_of(const Expr& e, const std::vector<std::string>& params) {
  const auto wrap = [&](const Expr& x, int prec) {
    const std::string t = text_of(x, params);
    return precedence(x) < prec ? "(" + t + ")" : t;
  };
  switch (e->op) {
    case Op::Const: return number_text(e->value);
    case Op::Var: return e->index == kVarR ? "r" : "s";
    case Op::Param:
      return std::size_t(e->index) < params.size() ? params[std::size_t(e->index)]
                                                   : "p" + std::to_string(e->index);
    case Op::Coef: return "c" + std::to_string(e->index);
    case Op::Add: {
      std::string t;
      for (std::size_t i = 0; i < e->args.size(); ++i) {
        const Expr& x = e->args[i];
        if (i > 0 && x->op == Op::Mul && is_number(x->args[0]) && x->args[0]->value < 0) {
          t += " - " + text_of(neg(x), params);  // (-c) y written as - c y
        } else if (i > 0 && is_number(x) && x->value < 0) {
          t += " - " + number_text(-x->value);
        } else {
          t += (i ? " + " : "") + wrap(x, 2);
        }
      }
      return t;
    }
    case Op::Mul: {
      std::string t;
      std::size_t i = 0;
      if (is_number(e->args[0]) && e->args[0]->value == -1) {
        t = "-";
        i = 1;
      }
      for (std::size_t j = i; j < e->args.size(); ++j) {
        t += (j > i ? "*" : "") + wrap(e->args[j], 3);
      }
      return t;
    }
    case Op::Pow: {
      if (is_const(e->args[1], 0.5)) return "sqrt(" + text_of(e->args[0], params) + ")";
      const Expr& x = e->args[1];
      return wrap(e->args[0], 5) + "^" + (is_number(x) ? number_text(x->value) : wrap(x, 5));
    }
    default: {
      std::string t = std::string(function_name(e->op)) + "(";
      for (std::size_t i = 0; i < e->args.size(); ++i)
        t += (i ? ", " : "") + text_of(e->args[i], params);
      return t + ")";
    }
  }
}
}  // namespace

std::string to_string(const Expr& e, const std::vector<std::string>& params) {
  return text_of(e, params);
}

std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates) {
  // Edit distance with transpositions ("sigam" is one step from "sigma").
  const auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
      for (std::size_t j = 1; j <= b.size(); ++j) {
        d[i][j] = std::min(
            {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1] ? 1 : 0)});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    return d[a.size()][b.size()];
  };
  std::string best;
  std::size_t bd = std::string::npos;
  for (const auto& c : candidates) {
    const std::size_t d = distance(word, c);
    if (d < bd) bd = d, best = c;
  }
  if (best.empty() || bd >= word.size() || bd > std::max<std::size_t>(1, word.size() / 3))
    return "";
  return best;
}

// --- parsing ----------------------------------------------------------------------------------------

namespace {

struct Token {
  enum Kind { Number, Name, Symbol, End } kind = End;
  std::string text;
  double value = 0;
  Span span;
};

const struct {
  const char* name;
  Op op;
} kFunctions[] = {{"exp", Op::Exp},      {"log", Op::Log}, {"sqrt", Op::Sqrt}, {"pow", Op::Pow},
                  {"sin", Op::Sin},      {"cos", Op::Cos}, {"tanh", Op::Tanh}, {"erf", Op::Erf},
                  {"erfc", Op::Erfc},    {"min", Op::Min}, {"max", Op::Max},   {"step", Op::Step},
                  {"select", Op::Select}};

class Parser {
 public:
  Parser(const std::string& text, const std::vector<std::string>& params)
      : text_(text), params_(params) {
    lex();
  }

  Expr formula() {
    if (tokens_.size() == 1)
      throw FormulaError{
          "the formula is empty; write an expression in r, e.g. 4*epsilon*((sigma/"
          "r)^12 - (sigma/r)^6)",
          {0, int(text_.size())}};
    Expr e = expression();
    if (peek().kind != Token::End) {
      const Token& t = peek();
      missing_operator();
      throw FormulaError{
          "unexpected '" + t.text + "'" + (t.text == ")" ? " (no '(' to close)" : std::string()),
          t.span};
    }
    return e;
  }

 private:
  void lex() {
    std::size_t i = 0;
    const std::size_t n = text_.size();
    while (i < n) {
      const unsigned char c = static_cast<unsigned char>(text_[i]);
      if (std::isspace(c)) {
        ++i;
        continue;
      }
      Token t;
      const std::size_t b = i;
      if (std::isdigit(c) || (c == '.' && i + 1 < n && std::isdigit((unsigned char)text_[i + 1]))) {
        while (i < n && std::isdigit((unsigned char)text_[i])) ++i;
        if (i < n && text_[i] == '.') {
          ++i;
          while (i < n && std::isdigit((unsigned char)text_[i])) ++i;
        }
        if (i < n && (text_[i] == 'e' || text_[i] == 'E')) {
          std::size_t j = i + 1;
          if (j < n && (text_[j] == '+' || text_[j] == '-')) ++j;
          if (j < n && std::isdigit((unsigned char)text_[j])) {
            i = j;
            while (i < n && std::isdigit((unsigned char)text_[i])) ++i;
          } else {
            throw FormulaError{"the exponent of this number has no digits (write e.g. 1e-3)",
                               {int(b), int(j)}};
          }
        }
        t.kind = Token::Number;
        t.text = text_.substr(b, i - b);
        t.value = std::strtod(t.text.c_str(), nullptr);
        if (!std::isfinite(t.value))
          throw FormulaError{"the number " + t.text + " is too large for a double",
                             {int(b), int(i)}};
        if (i < n && (std::isalpha((unsigned char)text_[i]) || text_[i] == '_')) {
          std::size_t j = i;
          while (j < n && (std::isalnum((unsigned char)text_[j]) || text_[j] == '_')) ++j;
          throw FormulaError{"a number followed by a name: write " + t.text + "*" +
                                 text_.substr(i, j - i) + " for a product",
                             {int(b), int(j)}};
        }
      } else if (std::isalpha(c) || c == '_') {
        while (i < n && (std::isalnum((unsigned char)text_[i]) || text_[i] == '_')) ++i;
        t.kind = Token::Name;
        t.text = text_.substr(b, i - b);
      } else if (std::strchr("+-*/^(),", c)) {
        if (c == '*' && i + 1 < n && text_[i + 1] == '*')
          throw FormulaError{"'**' is not an operator here: write ^ for a power (r^2)",
                             {int(i), int(i + 2)}};
        ++i;
        t.kind = Token::Symbol;
        t.text = std::string(1, char(c));
      } else {
        std::size_t len = 1;
        if (c >= 0x80)  // the whole UTF-8 character
          while (i + len < n && (static_cast<unsigned char>(text_[i + len]) & 0xC0) == 0x80) ++len;
        const std::string ch = text_.substr(i, len);
        std::string hint;
        if (c == '[' || c == '{') hint = " (use ( ) for grouping)";
        else if (c == ';') hint = " (a formula is one expression)";
        else if (c == '=' || c == '<' || c == '>') hint = " (comparisons: use step() or select())";
        throw FormulaError{"'" + ch + "' is not part of the formula language" + hint,
                           {int(i), int(i + len)}};
      }
      t.span = {int(b), int(i)};
      tokens_.push_back(t);
    }
    Token end;
    end.span = {int(n), int(n)};
    tokens_.push_back(end);
  }

  const Token& peek() const { return tokens_[pos_]; }
  bool accept(const char* sym) {
    if (peek().kind == Token::Symbol && peek().text == sym) {
      ++pos_;
      return true;
    }
    return false;
  }
  Span from(Span b) const { return {b.begin, tokens_[pos_ > 0 ? pos_ - 1 : 0].span.end}; }

  // An operand right after another one ("2 r", "r (1 + r)"): a product without its '*'.
  void missing_operator() const {
    const Token& t = peek();
    if (t.kind == Token::Name || t.kind == Token::Number || t.text == "(")
      throw FormulaError{"missing operator before '" + t.text + "' (write * for a product)",
                         t.span};
  }

  [[noreturn]] void missing_operand(const Token& after) const {
    const Token& t = peek();
    if (t.kind == Token::End)
      throw FormulaError{"the formula ends after '" + after.text + "': an operand is missing",
                         after.span};
    throw FormulaError{"'" + t.text + "' where an operand (a number, a name or '(') belongs",
                       t.span};
  }

  Expr expression() {
    const Span b = peek().span;
    Expr e = term();
    for (;;) {
      const Token op = peek();
      if (accept("+")) e = add({e, term_after(op)}, from(b));
      else if (accept("-")) e = sub(e, term_after(op), from(b));
      else return e;
    }
  }
  Expr term_after(const Token& op) {
    if (!starts_operand()) missing_operand(op);
    return term();
  }
  Expr term() {
    const Span b = peek().span;
    Expr e = unary();
    for (;;) {
      const Token op = peek();
      if (accept("*")) {
        if (!starts_operand()) missing_operand(op);
        e = mul({e, unary()}, from(b));
      } else if (accept("/")) {
        if (!starts_operand()) missing_operand(op);
        e = div(e, unary(), from(b));
      } else {
        return e;
      }
    }
  }
  bool starts_operand() const {
    const Token& t = peek();
    return t.kind == Token::Number || t.kind == Token::Name ||
           (t.kind == Token::Symbol && (t.text == "(" || t.text == "-" || t.text == "+"));
  }
  Expr unary() {
    const Token t = peek();
    if (accept("-")) {
      if (!starts_operand()) missing_operand(t);
      Expr a = unary();
      return neg(a, {t.span.begin, a->span.end});
    }
    if (accept("+")) {
      if (!starts_operand()) missing_operand(t);
      return unary();
    }
    if (!starts_operand()) missing_operand(t);
    return power();
  }
  Expr power() {
    const Span b = peek().span;
    Expr base = primary();
    const Token op = peek();
    if (accept("^")) {
      if (!starts_operand()) missing_operand(op);
      return pow(base, unary(), from(b));
    }
    return base;
  }
  Expr primary() {
    const Token t = peek();
    if (t.kind == Token::Number) {
      ++pos_;
      return constant(t.value, t.span);
    }
    if (accept("(")) {
      Expr e = expression();
      if (!accept(")")) {
        missing_operator();
        throw FormulaError{peek().kind == Token::End
                               ? "missing ')' to close this '('"
                               : "expected ')' to close the '(' here, not '" + peek().text + "'",
                           peek().kind == Token::End ? t.span : peek().span};
      }
      return rebased(e, from(t.span));
    }
    // A name.
    ++pos_;
    const bool called = peek().kind == Token::Symbol && peek().text == "(";
    if (called) return function(t);
    if (t.text == "r") return variable(kVarR, t.span);
    for (std::size_t i = 0; i < params_.size(); ++i)
      if (params_[i] == t.text) return parameter(int(i), t.span);
    for (const auto& f : kFunctions)
      if (t.text == f.name)
        throw FormulaError{"'" + t.text + "' is a function: write " + t.text + "(...)", t.span};
    std::vector<std::string> names{"r"};
    names.insert(names.end(), params_.begin(), params_.end());
    const std::string near = nearest_name(t.text, names);
    std::string known = "r";
    for (const auto& p : params_) known += ", " + p;
    throw FormulaError{"unknown name '" + t.text + "'" +
                           (near.empty() ? "" : "; did you mean '" + near + "'?") +
                           " (the formula knows " + known +
                           (params_.empty() ? "; declare parameters in `parameters`" : "") + ")",
                       t.span};
  }
  Expr function(const Token& name) {
    Op op = Op::Const;
    for (const auto& f : kFunctions)
      if (name.text == f.name) op = f.op;
    if (op == Op::Const) {
      std::string what = "unknown function '" + name.text + "'";
      if (name.text == "r") what = "'r' is the distance, not a function (write r*(...))";
      for (const auto& p : params_)
        if (p == name.text)
          what = "'" + p + "' is a parameter, not a function (write " + p + "*(...))";
      if (what.rfind("unknown", 0) == 0) {
        std::vector<std::string> fns;
        for (const auto& f : kFunctions) fns.push_back(f.name);
        const std::string near = nearest_name(name.text, fns);
        what += near.empty() ? "; the functions are exp, log, sqrt, pow, sin, cos, tanh, erf, "
                               "erfc, min, max, step, select"
                             : "; did you mean '" + near + "'?";
      }
      throw FormulaError{what, name.span};
    }
    accept("(");
    std::vector<Expr> args;
    if (!accept(")")) {
      for (;;) {
        if (!starts_operand()) missing_operand(tokens_[pos_ - 1]);
        args.push_back(expression());
        if (accept(",")) continue;
        if (accept(")")) break;
        missing_operator();
        throw FormulaError{peek().kind == Token::End
                               ? "missing ')' to close the arguments of " + name.text + "("
                               : "expected ',' or ')' in the arguments of " + name.text +
                                     "(, not '" + peek().text + "'",
                           peek().kind == Token::End ? name.span : peek().span};
      }
    }
    const Span s = from(name.span);
    if (int(args.size()) != arity(op)) {
      const int n = arity(op);
      throw FormulaError{std::string(name.text) + " takes " + std::to_string(n) + " argument" +
                             (n > 1 ? "s" : "") + ", not " + std::to_string(args.size()),
                         s};
    }
    return call(op, args, s);
  }
  // The same tree with the span of its parentheses (what an error about it then underlines).
  static Expr rebased(const Expr& e, Span s) {
    auto n = std::make_shared<Node>(*e);
    n->span = s;
    return n;
  }

  const std::string& text_;
  const std::vector<std::string>& params_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
};

}  // namespace

Formula parse(const std::string& text, const std::vector<std::string>& params) {
  Parser p(text, params);
  auto root = std::make_shared<Node>(*p.formula());
  root->span = {0, int(text.size())};  // what a message about the whole formula underlines
  return Formula{text, root};
}

std::string report(const std::string& key, const std::string& text, const FormulaError& err,
                   const Place* place) {
  std::string msg;
  const int b = std::max(0, std::min(err.span.begin, int(text.size())));
  const int e = std::max(b, std::min(err.span.end, int(text.size())));
  if (place && !place->file.empty()) {
    msg = place->file;
    if (place->line > 0)
      msg += ":" + std::to_string(place->line) + ":" + std::to_string(place->column + 1 + b);
    msg += ": ";
  }
  msg += key + ": " + err.message + "\n    " + text + "\n    ";
  // The caret counts characters, not bytes (UTF-8 continuation bytes take no column).
  auto columns = [&](int from, int to) {
    int c = 0;
    for (int i = from; i < to; ++i)
      if ((static_cast<unsigned char>(text[std::size_t(i)]) & 0xC0) != 0x80) ++c;
    return c;
  };
  msg += std::string(std::size_t(columns(0, b)), ' ') + "^";
  const int width = columns(b, e);
  if (width > 1) msg += std::string(std::size_t(width - 1), '~');
  return msg;
}

}  // namespace pardyn::expr
