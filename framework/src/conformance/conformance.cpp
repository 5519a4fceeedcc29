// SPDX-License-Identifier: BSD-3-Clause
#include "conformance/conformance.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "pardyn/app/backend.hpp"
#include "pardyn/app/config.hpp"
#include "pardyn/app/cuda.hpp"
#include "pardyn/particles.hpp"

namespace pardyn::conformance {

const char* to_string(Status s) {
  switch (s) {
    case Status::Pass: return "pass";
    case Status::Fail: return "FAIL";
    case Status::Skip: return "skip";
  }
  return "?";
}

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::string num(double x) { return format_number(x, 2); }

}  // namespace

Forces evaluate(const Registry& reg, const std::string& law, const ParamSet& params,
                const HostParticles& in, const Box& box, Precision prec, Backend backend,
                const std::string& scheme) {
  const FactoryInfo* si = reg.find(PluginKind::Scheme, scheme);
  if (!si) throw Error("no scheme named " + scheme);
  return evaluate(reg, law, params, in, box, prec, backend, scheme,
                  sample_params(si->schema, in.dim));
}

Forces evaluate(const Registry& reg, const std::string& law, const ParamSet& params,
                const HostParticles& in, const Box& box, Precision prec, Backend backend,
                const std::string& scheme, const ParamSet& scheme_params) {
  RunInfo run;
  run.dim = in.dim;
  run.precision = prec;
  run.backend = backend;
  run.box = box;
  run.quiet = true;
  auto pot = reg.make_potential(law, params, run);
  auto sch = reg.make_scheme(scheme, scheme_params, run);
  MemoryResource& mem = backend == Backend::Cuda ? cuda::device_memory() : host_memory();
  auto ops = backend == Backend::Cuda ? cuda::make_ops() : make_cpu_ops();
  ParticleStore s(in.dim, prec, mem);
  s.upload(in);
  ops->zero_forces(s, true, true);
  ForceRequest req;
  req.energy = req.virial = true;
  req.box = &run.box;
  sch->update(s, run.box, pot->reach());
  pot->compute(s, sch->neighbourhood(), req);
  Forces f;
  s.download(f.hp);
  f.r = ops->reduce(s);
  f.potential = f.r.potential;
  return f;
}

// A jittered square/cubic lattice (conformance.hpp).
HostParticles jittered_lattice(int dim, unsigned seed, int side, double spacing) {
  const int n = dim == 3 ? side * side * side : side * side;
  HostParticles hp(dim);
  hp.resize(std::size_t(n));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> jitter(-0.2, 0.2), mass(0.5, 2.0);
  for (int i = 0; i < n; ++i) {
    const int c[3] = {i % side, (i / side) % side, i / (side * side)};
    for (int d = 0; d < dim; ++d) hp.x[d][std::size_t(i)] = (c[d] + 0.5) * spacing + jitter(rng);
    hp.mass[std::size_t(i)] = mass(rng);
    hp.type[std::size_t(i)] = i % 3;
    hp.id[std::size_t(i)] = i;
  }
  return hp;
}

namespace {

Box walled_cube(int dim, double side) {
  Box b;
  for (int d = 0; d < 3; ++d) {
    b.lo[d] = 0;
    b.hi[d] = side;
    b.boundary[d] = d < dim ? Boundary::Wall : Boundary::Open;
  }
  return b;
}

// The conformance checks' particles: 22^2 or 8^3, spacing 1.125: distances from about 0.6 a
// upwards, in a walled box (walls laws need one; the tree and the cell list's far zones accept it).
constexpr double kSpacing = 1.125;
HostParticles lattice(int dim, unsigned seed) {
  return jittered_lattice(dim, seed, dim == 3 ? 8 : 22, kSpacing);
}
Box lattice_box(int dim) { return walled_cube(dim, (dim == 3 ? 8 : 22) * kSpacing); }

// RMS |a - a_ref| over RMS |a_ref| (the absolute RMS where a_ref is zero everywhere).
double accel_error(const HostParticles& a, const HostParticles& ref) {
  double err2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    for (int d = 0; d < ref.dim; ++d) {
      err2 += std::pow(a.a[d][i] - ref.a[d][i], 2);
      ref2 += std::pow(ref.a[d][i], 2);
    }
  return ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
}
double energy_error(double u, double ref) {
  return ref != 0 ? std::fabs(u - ref) / std::fabs(ref) : std::fabs(u);
}

std::string variant(int dim, Precision prec) {
  return std::to_string(dim) + "D " + pardyn::to_string(prec);
}

// The law's parameters for a run of `dim` dimensions.
ParamSet law_params(const FactoryInfo& info, const Options& o, int dim) {
  std::string text = o.params;
  if (text.empty() && o.reference) text = o.reference->params;
  if (text.empty()) return sample_params(info.schema, dim);
  return parse_params(info.schema, text, info.name);
}

// Runs one check, turning an exception into a failed result.
template <class F>
void run_check(std::vector<Result>& out, const std::string& check, const std::string& var, F&& f) {
  Result r;
  r.check = check;
  r.variant = var;
  try {
    f(r);
  } catch (const std::exception& e) {
    r.status = Status::Fail;
    r.detail = std::string("error: ") + e.what();
  }
  out.push_back(std::move(r));
}

void verdict(Result& r, double error, double bound, const std::string& what) {
  r.status = error <= bound ? Status::Pass : Status::Fail;
  r.detail = what + " " + num(error) + " (bound " + num(bound) + ")";
}

// Two particles at distance r: particle 1 at the centre of a walled box, particle 0 at r along
// (3, 4[, 12]) / norm from it.
HostParticles pair_at(int dim, double r, const Reference& ref, double centre) {
  HostParticles hp(dim);
  hp.resize(2);
  const double dir[3] = {3, 4, 12};
  const double norm = dim == 3 ? 13.0 : 5.0;
  for (int d = 0; d < dim; ++d) {
    hp.x[d][0] = centre + r * dir[d] / norm;
    hp.x[d][1] = centre;
  }
  hp.mass = {ref.m0, ref.m1};
  hp.type = {ref.t0, ref.t1};
  hp.id = {0, 1};
  return hp;
}

void check_analytic(Result& r, const Registry& reg, const std::string& law, const ParamSet& ps,
                    const Reference& ref, int dim, Precision prec) {
  double rmax = 0, umax = 0, fmax = 0;
  for (const auto& row : ref.rows) {
    rmax = std::max(rmax, row.r);
    umax = std::max(umax, std::fabs(row.U));
    fmax = std::max(fmax, std::fabs(row.fdivr) * row.r);
  }
  const double centre = rmax + 1;
  const Box box = walled_cube(dim, 2 * centre);
  // The bound of each value: double, a few ulp of the formula; float, its rounding, magnified
  // where terms cancel. Values much smaller than the table's largest are compared against 10^-3 of
  // it. Besides, the positions are rounded to the precision (x ~ centre): the energy may move by
  // |dU/dr| = |fdivr| r times that rounding (near a zero of U, LJ at r = sigma, this dominates).
  const double rel = prec == Precision::Double ? 1e-11 : 1e-4;
  const double eps = prec == Precision::Double ? 0x1p-52 : 0x1p-23;
  double worst = 0, worst_u = 0, worst_f = 0;
  std::string where;
  for (const auto& row : ref.rows) {
    const HostParticles hp = pair_at(dim, row.r, ref, centre);
    const Forces f = evaluate(reg, law, ps, hp, box, prec, Backend::Cpu, "all_pairs");
    const double bound_u = rel * std::max(std::fabs(row.U), 1e-3 * umax) +
                           4 * eps * (centre + row.r) * std::fabs(row.fdivr) * row.r;
    const double eu = std::fabs(f.potential - row.U) / bound_u;
    double ef2 = 0;
    for (int d = 0; d < dim; ++d) {
      const double sep = hp.x[d][0] - hp.x[d][1];
      const double expect = row.fdivr * sep;
      ef2 +=
          std::pow(ref.m0 * f.hp.a[d][0] - expect, 2) + std::pow(ref.m1 * f.hp.a[d][1] + expect, 2);
    }
    const double bound_f =
        rel * std::max(std::fabs(row.fdivr) * row.r, 1e-3 * std::max(fmax, 1e-300));
    const double ef = std::sqrt(ef2) / bound_f;
    if (std::max(eu, ef) > worst) where = "r = " + num(row.r);
    worst = std::max({worst, eu, ef});
    worst_u = std::max(worst_u, eu);
    worst_f = std::max(worst_f, ef);
  }
  r.status = worst <= 1 ? Status::Pass : Status::Fail;
  r.detail = std::to_string(ref.rows.size()) + " distances of " + ref.file + ": worst error " +
             num(worst) + " of its bound (relative " + num(rel) +
             (prec == Precision::Float ? " and the positions' rounding)" : ")");
  if (r.status == Status::Fail)
    r.detail += " at " + where + " (energy " + num(worst_u) + ", force " + num(worst_f) + ")";
}

void check_gradient(Result& r, const Registry& reg, const std::string& law, const ParamSet& ps,
                    int dim) {
  const HostParticles hp = lattice(dim, 7 + unsigned(dim));
  const Box box = lattice_box(dim);
  const auto eval = [&](const HostParticles& p) {
    return evaluate(reg, law, ps, p, box, Precision::Double, Backend::Cpu, "all_pairs");
  };
  const Forces f = eval(hp);
  double frms = 0;
  for (std::size_t i = 0; i < hp.size(); ++i)
    for (int d = 0; d < dim; ++d) frms += std::pow(hp.mass[i] * f.hp.a[d][i], 2);
  frms = std::sqrt(frms / double(hp.size()));
  const double h = 1e-5 * kSpacing;
  double worst = 0;
  for (std::size_t i : {std::size_t(0), hp.size() / 3, hp.size() - 1})
    for (int d = 0; d < dim; ++d) {
      HostParticles p = hp, m = hp;
      p.x[d][i] += h;
      m.x[d][i] -= h;
      const double dU = (eval(p).potential - eval(m).potential) / (2 * h);
      const double F = hp.mass[i] * f.hp.a[d][i];
      const double scale = std::max({std::fabs(F), frms, 1e-300});
      worst = std::max(worst, std::fabs(F + dU) / scale);
    }
  verdict(r, worst, 1e-5, "m a = -dU/dx (central differences, 3 particles): worst relative error");
}

void check_newton(Result& r, const Registry& reg, const std::string& law, const ParamSet& ps,
                  int dim) {
  const HostParticles hp = lattice(dim, 11 + unsigned(dim));
  const Forces f =
      evaluate(reg, law, ps, hp, lattice_box(dim), Precision::Double, Backend::Cpu, "all_pairs");
  double worst = 0;
  for (int d = 0; d < dim; ++d) {
    double net = 0, scale = 0;
    for (std::size_t i = 0; i < hp.size(); ++i) {
      net += hp.mass[i] * f.hp.a[d][i];
      scale += std::fabs(hp.mass[i] * f.hp.a[d][i]);
    }
    if (scale > 0) worst = std::max(worst, std::fabs(net) / scale);
  }
  verdict(r, worst, 1e-12, "net force / sum |F|");
}

void check_gpu(Result& r, const Registry& reg, const FactoryInfo& info, const ParamSet& ps, int dim,
               Precision prec, bool asked) {
  if (!asked) {
    r.detail = "not asked (--no-gpu)";
    return;
  }
  if (cuda::device_count() == 0) {
    r.detail = "no CUDA device: not run";
    return;
  }
  if (!(info.backends & kCuda)) {
    r.detail = "the plugin was built without GPU code";
    return;
  }
  // A float run sees its input rounded to float: the reference is the CPU in double on the
  // rounded input, so that what is compared is the GPU's arithmetic alone.
  HostParticles hp = lattice(dim, 23 + unsigned(dim));
  if (prec == Precision::Float) {
    for (int d = 0; d < dim; ++d)
      for (double& x : hp.x[d]) x = double(float(x));
    for (double& m : hp.mass) m = double(float(m));
  }
  const Box box = lattice_box(dim);
  const Forces ref =
      evaluate(reg, info.name, ps, hp, box, Precision::Double, Backend::Cpu, "all_pairs");
  const Forces gpu = evaluate(reg, info.name, ps, hp, box, prec, Backend::Cuda, "all_pairs");
  // The accuracies test_cuda_forces states: float 1e-5, double 1e-13 (here 1e-12: any law).
  const double bound = prec == Precision::Float ? 1e-5 : 1e-12;
  const double e =
      std::max(accel_error(gpu.hp, ref.hp), energy_error(gpu.potential, ref.potential));
  verdict(r, e, bound, "all_pairs on the GPU against the CPU: RMS/RMS acceleration, energy");
}

// A scheme's documented tolerance against all_pairs for a law (RMS/RMS acceleration, energy).
struct Tolerance {
  double accel, energy;
  std::string source;
};
Tolerance tolerance(const std::string& scheme, bool cutoff_law, Precision prec) {
  const double fl = prec == Precision::Float ? 1e-4 : 0;  // float: its own summation order
  if (cutoff_law) return {fl + 1e-12, fl + 1e-12, "exact for a cut-off law"};
  // The far zones' acceleration bound is docs/cell-list.md's (near = 1). Its energy bound, 10^-4,
  // is stated for 6,000 particles; this suite's 512-particle 3D lattice, a few cells per axis,
  // measures 1.5-1.8e-4 (gravity, soft_gas, test_sticky), hence 5e-4 here.
  if (scheme == "cell_list") return {fl + 5e-3, fl + 5e-4, "far zones, docs/cell-list.md"};
  if (scheme == "tree") return {fl + 1e-3, fl + 1e-4, "theta = 0.5, docs/tree.md"};
  return {fl + 1e-3, fl + 1e-4, "no documented tolerance: the tree's assumed"};
}

void check_scheme(Result& r, const Registry& reg, const std::string& law, const ParamSet& ps,
                  const std::string& scheme, bool cutoff_law, int dim, Precision prec) {
  const HostParticles hp = lattice(dim, 31 + unsigned(dim));
  const Box box = lattice_box(dim);
  const Forces ref = evaluate(reg, law, ps, hp, box, prec, Backend::Cpu, "all_pairs");
  const Forces got = evaluate(reg, law, ps, hp, box, prec, Backend::Cpu, scheme);
  const Tolerance t = tolerance(scheme, cutoff_law, prec);
  const double ea = accel_error(got.hp, ref.hp), ee = energy_error(got.potential, ref.potential);
  r.status = ea <= t.accel && ee <= t.energy ? Status::Pass : Status::Fail;
  r.detail = "against all_pairs: acceleration " + num(ea) + " (bound " + num(t.accel) +
             "), energy " + num(ee) + " (bound " + num(t.energy) + "; " + t.source + ")";
}

// The schemes other than all_pairs that accept the law as made with the parameters of the check
// (a law whose reach depends on its parameters, an expression law, is asked with them).
std::vector<std::string> accepting_schemes(const Registry& reg, const Potential& pot, int dim) {
  std::vector<std::string> out;
  if (pot.external()) return out;
  RunInfo run;
  run.dim = dim;
  run.quiet = true;
  for (const FactoryInfo* s : reg.list(PluginKind::Scheme)) {
    if (s->name == "all_pairs") continue;
    try {
      const auto scheme = reg.make_scheme(s->name, sample_params(s->schema, dim), run);
      if (pot.supports(scheme->neighbourhood().kind)) out.push_back(s->name);
    } catch (const Error&) {
      // a scheme that cannot be made with its defaults is not checked
    }
  }
  return out;
}

}  // namespace

Reference read_reference(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read the reference file " + path);
  Reference ref;
  ref.file = path.substr(path.find_last_of('/') + 1);
  std::string line;
  bool header = false;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const std::string t = trim(line);
    if (t.empty()) continue;
    const std::string where = path + ":" + std::to_string(lineno) + ": ";
    if (t[0] == '#') {
      const std::string body = trim(t.substr(1));
      const auto colon = body.find(':');
      if (colon == std::string::npos) continue;  // a comment
      const std::string key = trim(body.substr(0, colon)), value = trim(body.substr(colon + 1));
      std::istringstream vs(value);
      if (key == "params") {
        ref.params = value;
        std::replace(ref.params.begin(), ref.params.end(), ';', '\n');
      } else if (key == "masses") {
        if (!(vs >> ref.m0 >> ref.m1)) throw Error(where + "expected \"# masses: m0 m1\"");
      } else if (key == "types") {
        if (!(vs >> ref.t0 >> ref.t1)) throw Error(where + "expected \"# types: t0 t1\"");
      }
      continue;
    }
    if (!header) {
      if (t != "r,U,fdivr") throw Error(where + "expected the header line r,U,fdivr");
      header = true;
      continue;
    }
    std::istringstream row(t);
    Reference::Row r{};
    char c1 = 0, c2 = 0;
    if (!(row >> r.r >> c1 >> r.U >> c2 >> r.fdivr) || c1 != ',' || c2 != ',' || !(r.r > 0))
      throw Error(where + "expected r,U,fdivr with r > 0");
    ref.rows.push_back(r);
  }
  if (ref.rows.empty()) throw Error(path + ": no rows (r,U,fdivr)");
  return ref;
}

std::vector<Result> check_law(const Registry& reg, const std::string& name, const Options& o) {
  std::vector<Result> out;
  const FactoryInfo* info = reg.find(PluginKind::Potential, name);
  if (!info) {
    Result r{"load", "", Status::Fail, "no potential named '" + name + "' is installed"};
    return {r};
  }
  for (int dim : {2, 3}) {
    if (!(info->dims & dim_bit(dim))) continue;
    ParamSet ps;
    std::shared_ptr<Potential> pot;
    bool made = false;
    run_check(out, "make", std::to_string(dim) + "D", [&](Result& r) {
      ps = law_params(*info, o, dim);
      RunInfo run;
      run.dim = dim;
      run.box = lattice_box(dim);
      run.quiet = true;
      pot = reg.make_potential(name, ps, run);
      made = true;
      r.status = Status::Pass;
      // A potential that is neither (the walls without soft walls: a boundary condition) gets
      // the checks of an external law, which see no force.
      r.detail = pot->external()       ? "an external law (one particle at a time)"
                 : pot->cutoff() > 0.0 ? "a pair law"
                                       : "no pair or external force with these parameters";
    });
    if (!made) continue;
    const bool pair_law = !pot->external() && pot->cutoff() > 0.0;
    const bool cutoff_law = std::isfinite(pot->cutoff());
    std::vector<std::string> schemes = accepting_schemes(reg, *pot, dim);

    for (Precision prec : {Precision::Double, Precision::Float}) {
      if (!(info->precisions & precision_bit(prec))) continue;
      const std::string var = variant(dim, prec);
      run_check(out, "analytic", var, [&](Result& r) {
        if (!pair_law) r.detail = "an external law: no pair values to compare";
        else if (!o.reference)
          r.detail = "no reference file (give one: r,U,fdivr from the law's formula)";
        else check_analytic(r, reg, name, ps, *o.reference, dim, prec);
      });
      if (prec == Precision::Double) {
        run_check(out, "gradient", var, [&](Result& r) { check_gradient(r, reg, name, ps, dim); });
        run_check(out, "newton", var, [&](Result& r) {
          if (pair_law) check_newton(r, reg, name, ps, dim);
          else r.detail = "an external law: no pairs";
        });
      }
      run_check(out, "gpu", var,
                [&](Result& r) { check_gpu(r, reg, *info, ps, dim, prec, o.gpu); });
      if (pair_law)
        for (const auto& s : schemes)
          run_check(out, s, var,
                    [&](Result& r) { check_scheme(r, reg, name, ps, s, cutoff_law, dim, prec); });
    }
  }
  return out;
}

bool passed(const std::vector<Result>& results) {
  return std::none_of(results.begin(), results.end(),
                      [](const Result& r) { return r.status == Status::Fail; });
}

std::string table(const std::string& name, const std::vector<Result>& results) {
  std::size_t wc = 5, wv = 7;
  for (const auto& r : results) {
    wc = std::max(wc, r.check.size());
    wv = std::max(wv, r.variant.size());
  }
  std::ostringstream s;
  const auto pad = [](const std::string& x, std::size_t w) {
    return x + std::string(w - x.size() + 2, ' ');
  };
  s << "conformance of potential '" << name << "'\n";
  s << pad("check", wc) << pad("variant", wv) << "result  detail\n";
  int counts[3] = {0, 0, 0};
  for (const auto& r : results) {
    ++counts[int(r.status)];
    s << pad(r.check, wc) << pad(r.variant, wv) << to_string(r.status) << "    " << r.detail
      << "\n";
  }
  s << counts[0] << " passed, " << counts[1] << " failed, " << counts[2]
    << " skipped: " << (counts[1] ? "FAILED" : "passed") << "\n";
  return s.str();
}

}  // namespace pardyn::conformance
