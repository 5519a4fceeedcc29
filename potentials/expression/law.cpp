// SPDX-License-Identifier: BSD-3-Clause
#include "law.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>

#include "formula.hpp"
#include "lower.hpp"

namespace pardyn::expression {

namespace {

using expr::Expr;
using expr::FormulaError;

// Where in the scenario the section is: its context without the trailing " (file:line:col)".
std::string section_of(const ParamSet& ps) {
  std::string c = ps.context.empty() ? "expression" : ps.context;
  const auto open = c.rfind(" (");
  if (open != std::string::npos && c.back() == ')' && c.find(':', open) != std::string::npos)
    c.erase(open);
  return c;
}

// A message about `key`, starting with the place of its value when known.
[[noreturn]] void fail(const ParamSet& ps, const std::string& key, const std::string& what) {
  std::string msg;
  if (const ParamPlace* p = ps.place(key)) {
    msg = p->file;
    if (p->line > 0) msg += ":" + std::to_string(p->line) + ":" + std::to_string(p->column);
    msg += ": ";
  }
  throw Error(msg + "'" + key + "' in " + section_of(ps) + ": " + what);
}

// A message about a character of the formula given as `key`, with a caret under it.
[[noreturn]] void fail_formula(const ParamSet& ps, const std::string& key, const std::string& text,
                               const FormulaError& err) {
  expr::Place place;
  const ParamPlace* p = ps.place(key);
  if (p) place = expr::Place{p->file, p->line, p->column};
  throw Error(expr::report("'" + key + "' in " + section_of(ps), text, err, p ? &place : nullptr));
}

bool identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum((unsigned char)c) || c == '_')) return false;
  return true;
}

const char* const kFunctionNames[] = {"exp", "log",  "sqrt", "pow", "sin",  "cos",   "tanh",
                                      "erf", "erfc", "min",  "max", "step", "select"};

double number_of(const ParamValue& v, bool& ok) {
  ok = true;
  if (auto d = std::get_if<double>(&v)) return *d;
  if (auto i = std::get_if<std::int64_t>(&v)) return double(*i);
  ok = false;
  return 0;
}

// The law's parameters: names, and for each pair of types (a, b) < types their values, mixed.
struct Parameters {
  std::vector<std::string> names;
  int types = 1;
  // value[a][b][p], a, b < types
  std::vector<std::vector<std::vector<double>>> value;
  std::vector<std::vector<double>> rcut;  // [a][b], 0: none
};

// Long: reads `parameters`, `type_rcut`, `pairs` and `mixing` together (they decide each other's
// sizes), each with its own messages.
Parameters read_parameters(const ParamSet& ps) {
  Parameters out;
  std::vector<std::vector<double>> per_type;  // [p] one value or one per type
  for (const auto& e : ps.table("parameters")) {
    const std::string key = "parameters." + e.key;
    if (!identifier(e.key))
      fail(ps, key, "a parameter's name must be a name a formula can use (letters, digits, _)");
    if (e.key == "r")
      fail(ps, key, "r is the distance between the two particles; name the parameter otherwise");
    for (const char* f : kFunctionNames)
      if (e.key == f) fail(ps, key, "'" + e.key + "' is a function of the formula language");
    bool ok;
    const double v = number_of(e.value, ok);
    if (ok) {
      per_type.push_back({v});
    } else if (auto l = std::get_if<std::vector<double>>(&e.value)) {
      if (l->empty() || int(l->size()) > kMaxTypes)
        fail(
            ps, key,
            "give one value, or one per particle type (at most " + std::to_string(kMaxTypes) + ")");
      per_type.push_back(*l);
    } else {
      fail(ps, key, "must be a number, or an array of numbers (one per particle type)");
    }
    for (double x : per_type.back())
      if (!std::isfinite(x)) fail(ps, key, "must be finite");
    out.names.push_back(e.key);
  }
  std::size_t types = 1;
  for (const auto& v : per_type) types = std::max(types, v.size());
  const auto& type_rcut = ps.reals("type_rcut");
  types = std::max(types, type_rcut.size());

  struct PairSpec {
    int i, j;
    std::map<std::string, double> values;
  };
  std::vector<PairSpec> pairs;
  for (const auto& line : ps.strings("pairs")) {
    std::istringstream in(line);
    PairSpec p{};
    const auto bad = [&](const std::string& why) {
      fail(ps, "pairs",
           "entry \"" + line + "\" " + why +
               "; write \"i j name=value ...\", e.g. \"0 1 epsilon=0.5 rcut=2.0\"");
    };
    if (!(in >> p.i >> p.j)) bad("does not start with two type numbers");
    if (p.i < 0 || p.j < 0 || p.i >= kMaxTypes || p.j >= kMaxTypes)
      bad("names a type outside 0.." + std::to_string(kMaxTypes - 1));
    for (std::string tok; in >> tok;) {
      const auto eq = tok.find('=');
      if (eq == std::string::npos || eq == 0) bad("has \"" + tok + "\", not name=value");
      const std::string name = tok.substr(0, eq);
      char* end = nullptr;
      const double v = std::strtod(tok.c_str() + eq + 1, &end);
      if (*end != '\0' || end == tok.c_str() + eq + 1 || !std::isfinite(v))
        bad("has \"" + tok + "\", whose value is not a number");
      if (name != "rcut" && std::find(out.names.begin(), out.names.end(), name) == out.names.end())
        bad("names '" + name + "', which is not in `parameters`");
      p.values[name] = v;
    }
    types = std::max(types, std::size_t(std::max(p.i, p.j) + 1));
    pairs.push_back(std::move(p));
  }
  for (std::size_t k = 0; k < per_type.size(); ++k)
    if (per_type[k].size() != 1 && per_type[k].size() != types)
      fail(ps, "parameters." + out.names[k],
           "has " + std::to_string(per_type[k].size()) + " values but there are " +
               std::to_string(types) + " particle types: give one value, or one per type");
  if (!type_rcut.empty() && type_rcut.size() != types)
    fail(ps, "type_rcut",
         "has " + std::to_string(type_rcut.size()) + " values but there are " +
             std::to_string(types) + " particle types");

  out.types = int(types);
  const std::string mixing = ps.string("mixing");
  out.value.assign(types, std::vector<std::vector<double>>(types));
  out.rcut.assign(types, std::vector<double>(types, ps.real("rcut")));
  for (std::size_t a = 0; a < types; ++a)
    for (std::size_t b = 0; b < types; ++b) {
      for (std::size_t k = 0; k < per_type.size(); ++k) {
        const auto& v = per_type[k];
        const double x = v.size() == 1 ? v[0] : v[a], y = v.size() == 1 ? v[0] : v[b];
        const bool arithmetic =
            mixing == "arithmetic" || (mixing == "lorentz_berthelot" && out.names[k] == "sigma");
        double m;
        if (a == b || x == y) m = x;
        else if (arithmetic) m = 0.5 * (x + y);
        else if (x * y >= 0) m = std::copysign(std::sqrt(x * y), x);
        else
          fail(ps, "parameters." + out.names[k],
               "types " + std::to_string(a) + " and " + std::to_string(b) +
                   " have values of opposite sign, whose geometric mean (mixing = \"" + mixing +
                   "\") is not defined; give the pair in `pairs`, or choose mixing = "
                   "\"arithmetic\"");
        out.value[a][b].push_back(m);
      }
      if (!type_rcut.empty()) out.rcut[a][b] = 0.5 * (type_rcut[a] + type_rcut[b]);
      for (const auto& p : pairs)
        if ((std::size_t(p.i) == a && std::size_t(p.j) == b) ||
            (std::size_t(p.i) == b && std::size_t(p.j) == a))
          for (const auto& [name, v] : p.values) {
            if (name == "rcut") {
              out.rcut[a][b] = v;
              continue;
            }
            const auto it = std::find(out.names.begin(), out.names.end(), name);
            out.value[a][b][std::size_t(it - out.names.begin())] = v;
          }
    }
  return out;
}

// A formula given in the scenario: its key, text and tree.
struct Given {
  std::string key, text;
  Expr tree;
};

Given parse_given(const ParamSet& ps, const std::string& key, const std::string& text,
                  const std::vector<std::string>& names) {
  try {
    return Given{key, text, expr::parse(text, names).tree};
  } catch (const FormulaError& e) {
    fail_formula(ps, key, text, e);
  }
}

// long_range = { kernel = "gravity" | "log", strength, softening, r0, radius }: each number or
// formula of the parameters.
struct LongRange {
  bool on = false;
  bool log = false;
  Given strength, softening, r0, radius;
  bool has_radius = false;
};

LongRange read_long_range(const ParamSet& ps, const std::vector<std::string>& names) {
  LongRange lr;
  const ParamTable& t = ps.table("long_range");
  if (t.empty()) return lr;
  lr.on = true;
  const std::vector<std::string> keys = {"kernel", "strength", "softening", "r0", "radius"};
  std::map<std::string, std::string> text{{"softening", "0"}, {"r0", "1"}};
  std::string kernel;
  for (const auto& e : t) {
    const std::string key = "long_range." + e.key;
    if (std::find(keys.begin(), keys.end(), e.key) == keys.end()) {
      const std::string near = expr::nearest_name(e.key, keys);
      fail(ps, key,
           "unknown key" + (near.empty() ? "" : "; did you mean '" + near + "'?") +
               " (long_range takes kernel, strength, softening, r0, radius)");
    }
    if (e.key == "kernel") {
      auto s = std::get_if<std::string>(&e.value);
      if (!s || (*s != "gravity" && *s != "log"))
        fail(ps, key,
             "must be \"gravity\" (phi = -strength / s^(1/2)) or \"log\" (phi = "
             "strength/2 ln(s / r0^2)), s = r^2 + softening^2");
      kernel = *s;
      continue;
    }
    bool ok;
    const double v = number_of(e.value, ok);
    if (ok) {
      std::ostringstream o;
      o.precision(17);
      o << v;
      text[e.key] = o.str();
    } else if (auto s = std::get_if<std::string>(&e.value)) {
      text[e.key] = *s;
    } else {
      fail(ps, key, "must be a number or a formula of the parameters (a string)");
    }
  }
  if (kernel.empty())
    fail(ps, "long_range",
         "needs kernel = \"gravity\" or \"log\": the far-field form the tree "
         "and the cell list's far zones use");
  if (!text.count("strength"))
    fail(ps, "long_range",
         "needs strength: G of the kernel (a number or a formula of the "
         "parameters)");
  lr.log = kernel == "log";
  const auto formula = [&](const std::string& k) {
    Given g = parse_given(ps, "long_range." + k, text[k], names);
    if (expr::depends_on_r(g.tree))
      fail_formula(ps, g.key, g.text,
                   FormulaError{"must not depend on r: it is a constant of the law",
                                {0, int(g.text.size())}});
    return g;
  };
  lr.strength = formula("strength");
  lr.softening = formula("softening");
  lr.r0 = formula("r0");
  if (text.count("radius")) {
    lr.radius = formula("radius");
    lr.has_radius = true;
  }
  return lr;
}

double value_at(const Given& g, const std::vector<double>& params) {
  expr::Values v;
  v.params = params.data();
  return expr::evaluate(g.tree, v);
}

// The checks of one formula on (0, rmax] for one pair of types, with the types in the message.
void check_on(const ParamSet& ps, const Given& g, const Expr& tree, const std::string& what,
              double rmax, const std::vector<double>& params, int types, int a, int b) {
  expr::Values v;
  v.params = params.data();
  FormulaError problem;
  if (!expr::check_finite(tree, rmax, v, what, problem)) {
    if (types > 1)
      problem.message += " (types " + std::to_string(a) + " and " + std::to_string(b) + ")";
    fail_formula(ps, g.key, g.text, problem);
  }
}

}  // namespace

// Long: the whole reading of a law, in order: parameters, formulas, form, per-pair checks and
// coefficients, code.
Law make_law(const ParamSet& ps) {
  Law law;
  law.label = section_of(ps);
  law.engine = ps.string("engine");
  const Parameters par = read_parameters(ps);
  const LongRange lr = read_long_range(ps, par.names);
  const std::string energy_text = ps.string("energy"), force_text = ps.string("force");
  const bool has_energy = energy_text.find_first_not_of(" \t") != std::string::npos;
  const bool has_force = force_text.find_first_not_of(" \t") != std::string::npos;
  if (!has_energy && !lr.on)
    fail(ps, "energy",
         "is required: the pair energy U(r) as a formula, e.g. energy = "
         "\"4*epsilon*((sigma/r)^12 - (sigma/r)^6)\" (docs/formulas.md)");
  if (has_force && !has_energy)
    fail(ps, "force",
         "needs `energy` too (the energy is what thermo and the conservation checks "
         "report)");
  bool cutoff = ps.real("rcut") > 0 || !ps.reals("type_rcut").empty();
  for (const auto& row : par.rcut)
    for (double rc : row) cutoff = cutoff || rc > 0;
  Form form;
  if (lr.on) {
    if (cutoff)
      fail(ps, "rcut",
           "a law with long_range has no cut-off: its `energy` acts inside "
           "long_range.radius and the kernel everywhere; remove rcut");
    if (has_energy && !lr.has_radius)
      fail(ps, "long_range",
           "needs radius: the distance within which `energy` acts (the "
           "short-range part; the kernel acts everywhere)");
    if (!has_energy && lr.has_radius)
      fail(ps, "long_range.radius", "is the range of `energy`, which is not given");
    form = has_energy ? (lr.log ? Form::ShortLog : Form::ShortGravity)
                      : (lr.log ? Form::Log : Form::Gravity);
  } else {
    form = cutoff ? Form::Cutoff : Form::Plain;
  }
  law.params.form = form;
  const int T = par.types;
  if (cutoff)
    for (int a = 0; a < T; ++a)
      for (int b = 0; b < T; ++b)
        if (!(par.rcut[a][b] > 0))
          fail(ps, ps.real("rcut") > 0 ? "pairs" : "rcut",
               "types " + std::to_string(a) + " and " + std::to_string(b) +
                   " have no cut-off; give every pair one (rcut, type_rcut or pairs)");

  // The kernel's constants: the same for every pair of types (the far field sums masses alone).
  if (lr.on) {
    const auto same = [&](const Given& g, double& out) {
      out = value_at(g, par.value[0][0]);
      for (int a = 0; a < T; ++a)
        for (int b = 0; b < T; ++b) {
          const double x = value_at(g, par.value[a][b]);
          if (!std::isfinite(x))
            fail_formula(ps, g.key, g.text, FormulaError{"is not finite", {0, int(g.text.size())}});
          if (x != out)
            fail_formula(ps, g.key, g.text,
                         FormulaError{"differs between types 0 and " + std::to_string(b) +
                                          ": the far field needs one value for all pairs",
                                      {0, int(g.text.size())}});
        }
    };
    double soft, r0;
    same(lr.strength, law.params.strength);
    same(lr.softening, soft);
    law.params.soft2 = soft * soft;
    if (lr.log) {
      same(lr.r0, r0);
      if (!(r0 > 0))
        fail_formula(ps, lr.r0.key, lr.r0.text,
                     FormulaError{"must be > 0", {0, int(lr.r0.text.size())}});
      law.params.log_r0_2 = 2 * std::log(r0);
    }
  }

  std::vector<std::string> summary;
  if (has_formula(form)) {
    const Given energy = parse_given(ps, "energy", energy_text, par.names);
    Given force;
    Expr f;  // -dU/dr
    if (has_force) {
      force = parse_given(ps, "force", force_text, par.names);
      f = force.tree;
    } else {
      f = expr::neg(expr::derivative(energy.tree));
    }
    // Per pair of types: where the formulas must be finite, the shift, the cut-off or radius.
    std::vector<std::vector<double>> reach(std::size_t(T),
                                           std::vector<double>(std::size_t(T), 0.0));
    std::vector<std::vector<double>> shift = reach;
    for (int a = 0; a < T; ++a)
      for (int b = 0; b < T; ++b) {
        const auto& pv = par.value[a][b];
        double rmax = 100;  // a long-range formula without a kernel: checked on (0, 100]
        if (form == Form::Cutoff) rmax = par.rcut[a][b];
        if (lr.on) {
          rmax = value_at(lr.radius, pv);
          if (!(rmax > 0) || !std::isfinite(rmax))
            fail_formula(ps, lr.radius.key, lr.radius.text,
                         FormulaError{"is " + expr::to_string(expr::constant(rmax), {}) +
                                          (T > 1 ? " for types " + std::to_string(a) + " and " +
                                                       std::to_string(b)
                                                 : std::string()) +
                                          "; it must be > 0",
                                      {0, int(lr.radius.text.size())}});
        }
        reach[a][b] = rmax;
        check_on(ps, energy, energy.tree, "the energy", rmax, pv, T, a, b);
        if (has_force) {
          check_on(ps, force, force.tree, "the force", rmax, pv, T, a, b);
          expr::Values v;
          v.params = pv.data();
          FormulaError problem;
          if (!expr::check_force(energy.tree, force.tree, rmax, v, problem)) {
            if (T > 1)
              problem.message += " (types " + std::to_string(a) + " and " + std::to_string(b) + ")";
            fail_formula(ps, force.key, force.text, problem);
          }
        } else {
          check_on(ps, energy, f, "-dU/dr (the force)", rmax, pv, T, a, b);
        }
        if (ps.boolean("shift") && form != Form::Plain) {
          expr::Values v;
          v.params = pv.data();
          v.r = rmax;
          shift[a][b] = expr::evaluate(energy.tree, v);
        }
      }

    // The trees the code computes: U and -dU/dr / r, in s where a softening makes r^2 + eps^2.
    Expr u = energy.tree;
    Expr fdivr = expr::times_r_power(f, -1);
    if (lr.on && law.params.soft2 > 0) {
      const Expr pattern = expr::add({expr::pow(expr::variable(expr::kVarR), expr::constant(2)),
                                      expr::pow(lr.softening.tree, expr::constant(2))});
      u = expr::replace(u, pattern, expr::variable(expr::kVarS));
      fdivr = expr::replace(fdivr, pattern, expr::variable(expr::kVarS));
    }
    std::vector<Expr> coefs;
    const Expr uh = expr::hoist(u, coefs), fh = expr::hoist(fdivr, coefs);
    summary.push_back("U(r) = " + expr::to_string(uh, par.names));
    summary.push_back("-dU/dr / r = " + expr::to_string(fh, par.names));
    for (std::size_t k = 0; k < coefs.size(); ++k)
      summary.push_back("c" + std::to_string(k) + " = " + expr::to_string(coefs[k], par.names));

    // Columns of the coefficient table beyond the formulas' own: the shift and the reach.
    const int nformula = int(coefs.size());
    const bool shifted = ps.boolean("shift") && form != Form::Plain;
    const int k_shift = shifted ? nformula : -1;
    const int k_reach = nformula + (shifted ? 1 : 0);
    bool uniform_reach = true;
    for (const auto& row : reach)
      for (double x : row) uniform_reach = uniform_reach && x == reach[0][0];
    const bool masked = lr.on || !uniform_reach;  // a cut-off per pair, or the radius
    const int ncoef = k_reach + (masked ? 1 : 0);
    if (ncoef > kMaxCoefs)
      fail(ps, "energy",
           "the formulas need " + std::to_string(ncoef) + " constants per pair of types; at most " +
               std::to_string(kMaxCoefs) + " fit: simplify them");
    law.params.ncoef = ncoef;

    // The table: kMaxTypes^2 sets, types at or beyond T as type T-1.
    std::vector<double> table(std::size_t(kMaxTypes * kMaxTypes * ncoef));
    double rc2max = 0;
    for (int a = 0; a < kMaxTypes; ++a)
      for (int b = 0; b < kMaxTypes; ++b) {
        const int ta = std::min(a, T - 1), tb = std::min(b, T - 1);
        expr::Values v;
        v.params = par.value[ta][tb].data();
        double* row = table.data() + std::size_t((a * kMaxTypes + b) * ncoef);
        for (int k = 0; k < nformula; ++k) row[k] = expr::evaluate(coefs[std::size_t(k)], v);
        if (shifted) row[k_shift] = shift[ta][tb];
        const double r2 = reach[ta][tb] * reach[ta][tb];
        if (masked) row[k_reach] = r2;
        rc2max = std::max(rc2max, r2);
        for (int k = 0; k < ncoef; ++k)
          if (!std::isfinite(row[k]))
            fail(ps, "parameters",
                 "a constant of the formulas, " +
                     (k < nformula ? expr::to_string(coefs[std::size_t(k)], par.names)
                                   : std::string("U at the cut-off")) +
                     ", is not finite for types " + std::to_string(ta) + " and " +
                     std::to_string(tb));
      }
    law.params.uniform = true;
    for (std::size_t i = 0; i < table.size(); ++i)
      law.params.uniform = law.params.uniform && table[i] == table[i % std::size_t(ncoef)];
    if (law.params.uniform) table.resize(std::size_t(ncoef));
    law.params.coef_d = table;
    law.params.coef_f.assign(table.begin(), table.end());
    if (form == Form::Cutoff) law.params.rcut2 = rc2max;
    if (lr.on) law.params.short2 = rc2max + law.params.soft2;

    // The code: U (shifted) and fdivr, zero beyond the pair's cut-off or radius.
    expr::Program prog;
    const bool odd = expr::needs_odd_r(uh) || expr::needs_odd_r(fh);
    int e = prog.lower(uh, odd);
    int fr = prog.lower(fh, odd);
    if (shifted) e = prog.op(expr::StepOp::Sub, e, prog.coef(k_shift));
    if (masked) {
      const int in = prog.op(expr::StepOp::Less, prog.r2(), prog.coef(k_reach));
      const int zero = prog.constant(0);
      e = prog.op(expr::StepOp::Select, in, e, zero);
      fr = prog.op(expr::StepOp::Select, in, fr, zero);
    }
    law.body = expr::emit_cpp(prog) + "  fdivr = t" + std::to_string(fr) + ";\n  e = t" +
               std::to_string(e) + ";\n";
    law.program_d = std::make_shared<expr::Interpreted<double>>(prog, fr, e);
    law.program_f = std::make_shared<expr::Interpreted<float>>(prog, fr, e);
    law.params.program_d = law.program_d.get();
    law.params.program_f = law.program_f.get();
  }
  if (lr.on)
    summary.push_back(std::string("far field: ") + (lr.log ? "log" : "gravity") +
                      " kernel, strength " + lr.strength.text + ", softening " + lr.softening.text);
  for (const auto& s : summary) law.summary += s + "\n";
  return law;
}

std::string formula_struct(const Law& law) {
  // One set of coefficients for every pair of types: read from the evaluator itself, the same
  // address for every pair, so that the vectorised loops of the traversals load it once rather than
  // gather it per pair (as lennard_jones's uniform path).
  const std::string coefs = law.params.uniform ? "k.c" : "k.of(ti, tj)";
  return R"(struct Generated {
  template <class Real>
  PARDYN_HD PARDYN_INLINE static void formula(const Coefs<Real>& k, Real r2, Real s, int ti,
                                              int tj, Real& fdivr, Real& e) {
    const Real* __restrict c = )" +
         coefs + R"(;
    (void)c, (void)r2, (void)s, (void)ti, (void)tj;
)" + law.body +
         R"(  }
};
)";
}

FactoryInfo law_info() {
  FactoryInfo f;
  f.name = "expression";
  f.summary = "a pair law from a formula: energy = \"...\" in r and your parameters";
  f.doc = R"DOC(A pair law written as a formula (docs/formulas.md):
  energy = "4*epsilon*((sigma/r)^12 - (sigma/r)^6)"
  parameters = { epsilon = 1.0, sigma = 1.0 }
  rcut = 2.5
The force is -dU/dr, derived symbolically (or give `force`, which is then checked against it).
pardyn parses the formula itself and writes the code: it is compiled once with the system's C++
compiler into the same CPU loops as the built-in laws, at their speed (cached in
$XDG_CACHE_HOME/pardyn or ~/.cache/pardyn), or interpreted where there is no compiler (engine;
3-8 times slower). On the GPU (backend = "cuda") NVRTC compiles the GPU traversals with the
formula inlined, on first use, into the same cache.

The language. Numbers (1, 2.5, 1e-3), r (the distance), the parameters, + - * / ^ (power,
right-associative; -r^2 = -(r^2)), parentheses, and the functions
  exp log (natural) sqrt pow(x, y) sin cos tanh erf erfc min(x, y) max(x, y)
  step(x)          1 where x >= 0, else 0
  select(c, a, b)  a where c != 0, else b
Every formula is checked before the run: syntax, names (with a suggestion for a misspelt one),
finite values at 1000 distances on (0, rcut] for every pair of types (on (0, radius] with
long_range; (0, 100] for a long-range formula without it), and a given force against -dU/dr.

Parameters: `parameters` names the constants of the formulas, each a number or one number per
particle type (at most 8 types); unlike types are mixed by `mixing` (lorentz_berthelot: a
parameter named sigma by the arithmetic mean, every other by the geometric mean; geometric;
arithmetic), and `pairs` sets a pair's values: "0 1 epsilon=0.5 sigma=1.1 rcut=2.0".

Cut-off: rcut (or type_rcut per type, mixed as (rc_i + rc_j)/2): U = 0 beyond; shift = true
subtracts U(rcut) (truncated and shifted). Without rcut the law is long-range (all_pairs only).

Long range with a far field: long_range = { kernel = "gravity" | "log", strength = "...",
softening = "...", r0 = "...", radius = "..." } adds the kernel
  gravity: U = -strength m_i m_j / sqrt(r^2 + softening^2)
  log:     U = strength/2 m_i m_j ln((r^2 + softening^2) / r0^2)
for every pair, and `energy` (then per m_i m_j, as the kernel) acts for r < radius. The tree and
the cell list's far zones use the kernel for distant particles and keep pairs within radius
exact. The real gas (soft_gas) as a formula:
  parameters = { a = 0.01, B = 3.0, a2 = 2.99, rc = 2.0, eps = 0.1 }
  energy = "B/2*(1/(r^2 + eps^2) - 1/rc^2) + a2/2*log((r^2 + eps^2)/rc^2)"
  long_range = { kernel = "log", strength = "a", softening = "eps", r0 = "rc",
                 radius = "sqrt(rc^2 - eps^2)" }
strength, softening, r0 and radius are numbers or formulas of the parameters.

Schemes (which the lines above cannot tell without the law's keys): all_pairs always; cell_list
with rcut or long_range; tree with long_range.)DOC";
  f.dims = kDimAll;
  f.schema
      .string("energy", "",
              "the pair energy U(r): a formula in r and the parameters (energy units; per m_i m_j "
              "with long_range)")
      .string("force", "",
              "-dU/dr as a formula (optional: derived from energy when empty, checked against it "
              "when given)")
      .table("parameters", ParamTable{},
             "the formulas' constants: name = value, or name = [value per particle type]")
      .choice("mixing", std::string("lorentz_berthelot"),
              {"lorentz_berthelot", "geometric", "arithmetic"},
              "how per-type values of unlike types are combined (lorentz_berthelot: sigma "
              "arithmetic, others geometric)")
      .strings("pairs", std::vector<std::string>{},
               "explicit values of a pair of types: \"i j name=value ... [rcut=value]\"")
      .real("rcut", 0.0, "length", "cut-off distance (0: none, a long-range law)", 0.0)
      .reals("type_rcut", std::vector<double>{}, "length",
             "cut-off of each particle type, mixed as (rc_i + rc_j)/2", 0, kMaxTypes)
      .boolean("shift", true,
               "subtract U at the cut-off (or radius) so that the energy is continuous there")
      .table("long_range", ParamTable{},
             "a far-field kernel: { kernel = \"gravity\" | \"log\", strength, softening, r0, "
             "radius }")
      .choice("engine", std::string("auto"), {"auto", "compiled", "interpreted"},
              "how the CPU runs the formula: compiled at run time with the system's C++ "
              "compiler (cached), or interpreted (no compiler; slower); auto: compiled where a "
              "compiler is found");
  return f;
}

}  // namespace pardyn::expression
