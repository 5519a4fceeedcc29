// SPDX-License-Identifier: BSD-3-Clause
// lennard_jones: the 12-6 Lennard-Jones pair potential, truncated (optionally shifted) at a
// cut-off, with per-type parameters and mixing rules.
//
//   U_ij(r) = 4 eps_ij [ (sigma_ij / r)^12 - (sigma_ij / r)^6 ] - U_shift,ij     for r < rc_ij
//           = 0                                                                   for r >= rc_ij
//   F_i     = 24 eps_ij [ 2 (sigma_ij / r)^12 - (sigma_ij / r)^6 ] / r^2 (x_i - x_j)   (r < rc_ij)
//
// U_shift,ij = 4 eps_ij [ (sigma_ij / rc_ij)^12 - (sigma_ij / rc_ij)^6 ] with shift = true
// (truncated and shifted: U is continuous at rc), 0 with shift = false (truncated).
//
// Parameters (energy, length units of the run): one type: epsilon, sigma, rcut. Several types (at
// most kMaxTypes): type_epsilon, type_sigma, type_rcut list one value per type (a list left empty
// gives every type the scalar value), mixed per pair by `mixing`:
//   lorentz_berthelot: eps_ij = sqrt(eps_i eps_j), sigma_ij = (sigma_i + sigma_j) / 2
//   geometric:         eps_ij = sqrt(eps_i eps_j), sigma_ij = sqrt(sigma_i sigma_j)
//   rc_ij = (rc_i + rc_j) / 2 for both;
// `pairs` entries "i j epsilon sigma [rcut]" set a pair's values explicitly. Particles of a type at
// or beyond the number of types T given use type T - 1's parameters.
//
// The arithmetic is 1/r^2 (pardyn::reciprocal), r^-6 by multiplications, no square root. One type
// (or identical parameters for all) takes a fast path without the table: the branch is the same for
// every pair, so it costs nothing on the GPU.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "pardyn/evaluator.hpp"
#include "pardyn/math.hpp"
#include "pardyn/registration.hpp"

namespace pardyn::potentials {

struct LennardJones {
  static constexpr int kMaxTypes = 8;

  struct Params {
    int types = 1;
    bool shift = true;
    // Mixed values for every (i, j), i, j < kMaxTypes; rows and columns beyond `types` repeat the
    // last type's.
    double epsilon[kMaxTypes][kMaxTypes] = {};
    double sigma[kMaxTypes][kMaxTypes] = {};
    double rcut[kMaxTypes][kMaxTypes] = {};

    static Params from(const ParamSet& p);
  };

  template <typename Real>
  struct Evaluator {
    // c12 = 4 eps sigma^12, c6 = 4 eps sigma^6, rc2 = cut-off^2, shift = U(rc) (or 0).
    struct Coeff {
      Real c12, c6, rc2, shift;
    };

    static constexpr Range range = Range::Cutoff;
    static constexpr Provides provides = Provides::None;

    Real rcut2;  // the largest cut-off^2 over all type pairs: the traversals skip pairs beyond it
    Real c12, c6, shift;  // the one-parameter-set fast path
    int uniform;          // 1: every type pair has the same parameters (c12, c6, shift, rcut2)
    Coeff table[kMaxTypes * kMaxTypes];

    explicit Evaluator(const Params& p) {
      double rc2max = 0;
      uniform = 1;
      for (int i = 0; i < kMaxTypes; ++i)
        for (int j = 0; j < kMaxTypes; ++j) {
          const double eps = p.epsilon[i][j], sig = p.sigma[i][j], rc = p.rcut[i][j];
          const double s6 = std::pow(sig, 6), s12 = s6 * s6;
          const double rc6 = std::pow(rc, 6);
          Coeff& c = table[i * kMaxTypes + j];
          c.c12 = Real(4 * eps * s12);
          c.c6 = Real(4 * eps * s6);
          c.rc2 = Real(rc * rc);
          c.shift = p.shift ? Real(4 * eps * (s12 / (rc6 * rc6) - s6 / rc6)) : Real(0);
          rc2max = std::max(rc2max, rc * rc);
          const Coeff& c0 = table[0];
          if (c.c12 != c0.c12 || c.c6 != c0.c6 || c.rc2 != c0.rc2 || c.shift != c0.shift)
            uniform = 0;
        }
      rcut2 = Real(rc2max);
      c12 = table[0].c12;
      c6 = table[0].c6;
      shift = table[0].shift;
    }

    PARDYN_HD PARDYN_INLINE void pair(Real r2, Real /*mi*/, Real /*mj*/, int ti, int tj,
                                      Real& fdivr, Real& e) const {
      const Real ir2 = reciprocal(r2);
      const Real ir6 = ir2 * ir2 * ir2;
      if (uniform) {
        // The traversal applies the cut-off (rcut2) itself.
        e = ir6 * fma(c12, ir6, -c6) - shift;
        fdivr = ir6 * ir2 * fma(Real(12) * c12, ir6, Real(-6) * c6);
        return;
      }
      const Coeff& c = table[type_index(ti) * kMaxTypes + type_index(tj)];
      const bool inside = r2 < c.rc2;
      const Real en = ir6 * fma(c.c12, ir6, -c.c6) - c.shift;
      const Real f = ir6 * ir2 * fma(Real(12) * c.c12, ir6, Real(-6) * c.c6);
      e = inside ? en : Real(0);
      fdivr = inside ? f : Real(0);
    }

   private:
    // Types beyond the table share the last row (negative ones too: they wrap to large unsigned).
    PARDYN_HD PARDYN_INLINE static int type_index(int t) {
      return unsigned(t) < unsigned(kMaxTypes) ? t : kMaxTypes - 1;
    }
  };

  static FactoryInfo info() {
    FactoryInfo f;
    f.name = "lennard_jones";
    f.summary =
        "12-6 Lennard-Jones, truncated or truncated-and-shifted, per-type with mixing rules";
    f.doc =
        "U(r) = 4 eps [(sigma/r)^12 - (sigma/r)^6] - U_shift for r < rcut, 0 beyond;\n"
        "F_i = 24 eps [2 (sigma/r)^12 - (sigma/r)^6] (x_i - x_j) / r^2.\n"
        "shift = true subtracts U(rcut) so that U is continuous at the cut-off (truncated and\n"
        "shifted); shift = false truncates only. The minimum is at r = 2^(1/6) sigma, U = -eps\n"
        "(unshifted). Several particle types (at most 8): type_epsilon, type_sigma, type_rcut give "
        "one\n"
        "value per type (an empty list gives every type the scalar epsilon, sigma, rcut); pairs "
        "are\n"
        "mixed with `mixing`:\n"
        "  lorentz_berthelot  eps_ij = sqrt(eps_i eps_j), sigma_ij = (sigma_i + sigma_j) / 2\n"
        "  geometric          eps_ij = sqrt(eps_i eps_j), sigma_ij = sqrt(sigma_i sigma_j)\n"
        "and rcut_ij = (rcut_i + rcut_j) / 2. `pairs` overrides single pairs: \"i j epsilon "
        "sigma\"\n"
        "or \"i j epsilon sigma rcut\". With T types given, particles of type >= T use type T-1's\n"
        "values. Short range: use it with scheme \"cell_list\" (or \"all_pairs\" for small N).\n"
        "Example: epsilon = 1.0, sigma = 1.0, rcut = 2.5, shift = true.";
    f.dims = kDimAll;
    f.schema
        .real("epsilon", 1.0, "energy", "well depth (every type unless type_epsilon is given)", 0.0)
        .real("sigma", 1.0, "length", "size: U(sigma) = 0 (every type unless type_sigma is given)",
              0.0, std::nullopt, true)
        .real("rcut", 2.5, "length", "cut-off distance (every type unless type_rcut is given)", 0.0,
              std::nullopt, true)
        .reals("type_epsilon", std::vector<double>{}, "energy",
               "well depth of each particle type (type 0 first); empty: epsilon for all", 0,
               kMaxTypes)
        .reals("type_sigma", std::vector<double>{}, "length",
               "size of each particle type (type 0 first); empty: sigma for all", 0, kMaxTypes)
        .reals(
            "type_rcut", std::vector<double>{}, "length",
            "cut-off of each particle type (type 0 first), mixed as (rc_i + rc_j)/2; empty: rcut "
            "for all",
            0, kMaxTypes)
        .choice("mixing", std::string("lorentz_berthelot"), {"lorentz_berthelot", "geometric"},
                "mixing rule for eps_ij and sigma_ij of unlike types")
        .strings("pairs", std::vector<std::string>{},
                 "explicit pair values overriding the mixing rule: \"i j epsilon sigma [rcut]\"")
        .boolean("shift", true, "subtract U(rcut) so that the energy is continuous at the cut-off");
    return f;
  }
};

namespace lj_detail {

// One entry of `pairs`: "i j epsilon sigma [rcut]".
struct PairSpec {
  int i, j;
  double eps, sig, rc;
  bool has_rc;
};

inline PairSpec parse_pair(const std::string& line, const std::string& where) {
  std::istringstream in(line);
  PairSpec ps{};
  double rc;
  const auto bad = [&](const std::string& why) {
    return Error(
        where + ": pairs entry \"" + line + "\" " + why +
        "; write \"i j epsilon sigma\" or \"i j epsilon sigma rcut\", e.g. \"0 1 1.5 0.8\"");
  };
  if (!(in >> ps.i >> ps.j >> ps.eps >> ps.sig)) throw bad("is not four or five numbers");
  ps.has_rc = bool(in >> rc);
  ps.rc = ps.has_rc ? rc : 0;
  std::string rest;
  if (in >> rest) throw bad("has more than five fields");
  const int max_types = LennardJones::kMaxTypes;
  if (ps.i < 0 || ps.j < 0 || ps.i >= max_types || ps.j >= max_types)
    throw bad("names a type outside 0.." + std::to_string(max_types - 1));
  if (ps.eps < 0 || !(ps.sig > 0) || (ps.has_rc && !(ps.rc > 0)))
    throw bad("needs epsilon >= 0, sigma > 0 and rcut > 0");
  return ps;
}

}  // namespace lj_detail

inline LennardJones::Params LennardJones::Params::from(const ParamSet& p) {
  const auto& te = p.reals("type_epsilon");
  const auto& ts = p.reals("type_sigma");
  const auto& tr = p.reals("type_rcut");
  const auto& pairs = p.strings("pairs");
  const std::string where = p.context.empty() ? "lennard_jones" : p.context;

  // Number of types: the longest per-type list, or the largest type a pair names.
  std::size_t types = std::max({te.size(), ts.size(), tr.size(), std::size_t(1)});
  for (const auto* list : {&te, &ts, &tr})
    if (!list->empty() && list->size() != types)
      throw Error(where +
                  ": type_epsilon, type_sigma and type_rcut must have one value per type "
                  "(the same length, " +
                  std::to_string(types) + " here) or be empty");

  std::vector<lj_detail::PairSpec> explicit_pairs;
  for (const auto& line : pairs) {
    const lj_detail::PairSpec ps = lj_detail::parse_pair(line, where);
    types = std::max(types, std::size_t(std::max(ps.i, ps.j) + 1));
    explicit_pairs.push_back(ps);
  }
  for (const auto* list : {&te, &ts, &tr})
    if (!list->empty() && list->size() != types)
      throw Error(where + ": pairs name type " + std::to_string(types - 1) +
                  " but the per-type lists have " + std::to_string(list->size()) +
                  " values; give one value per type");
  for (double v : ts)
    if (!(v > 0)) throw Error(where + ": type_sigma values must be > 0");
  for (double v : tr)
    if (!(v > 0)) throw Error(where + ": type_rcut values must be > 0");
  for (double v : te)
    if (v < 0) throw Error(where + ": type_epsilon values must be >= 0");

  Params out;
  out.types = int(types);
  out.shift = p.boolean("shift");
  const bool geometric = p.string("mixing") == "geometric";
  const auto per_type = [&](const std::vector<double>& list, double scalar, int t) {
    return list.empty() ? scalar : list[std::size_t(t)];
  };
  const int last = int(types) - 1;
  for (int i = 0; i < kMaxTypes; ++i)
    for (int j = 0; j < kMaxTypes; ++j) {
      const int a = std::min(i, last), b = std::min(j, last);
      const double ea = per_type(te, p.real("epsilon"), a), eb = per_type(te, p.real("epsilon"), b);
      const double sa = per_type(ts, p.real("sigma"), a), sb = per_type(ts, p.real("sigma"), b);
      const double ra = per_type(tr, p.real("rcut"), a), rb = per_type(tr, p.real("rcut"), b);
      out.epsilon[i][j] = a == b ? ea : std::sqrt(ea * eb);
      out.sigma[i][j] = a == b ? sa : geometric ? std::sqrt(sa * sb) : 0.5 * (sa + sb);
      out.rcut[i][j] = a == b ? ra : 0.5 * (ra + rb);
      for (const auto& ps : explicit_pairs)
        if ((ps.i == a && ps.j == b) || (ps.i == b && ps.j == a)) {
          out.epsilon[i][j] = ps.eps;
          out.sigma[i][j] = ps.sig;
          if (ps.has_rc) out.rcut[i][j] = ps.rc;
        }
    }
  return out;
}

}  // namespace pardyn::potentials
