// SPDX-License-Identifier: BSD-3-Clause
// The force-law contract: what a pair law is, in one place (docs/plugins.md explains it with an
// example). A law that breaks it does not compile: the checks below (PairLawContract) say what to add.
//
// A pair law is a struct `Law` with
//   - `static FactoryInfo info()`: name, summary, documentation (formula, units), supported dimensions
//     and the parameter schema;
//   - `struct Params` with `static Params from(const ParamSet&)`: the validated parameters in double;
//   - `template <typename Real> struct Evaluator`: a small trivially-copyable struct built from Params,
//     with
//         static constexpr Range range = Range::...;        // required: the law's reach
//         static constexpr Provides provides = Provides::...;  // required: what else it offers
//         PARDYN_HD void pair(Real r2, Real mi, Real mj, int ti, int tj, Real& fdivr, Real& e) const;
//     pair() returns, for two particles i, j at squared distance r2 (separation d = x_i - x_j),
//       fdivr: the force on i divided by r, so that F_i = fdivr * d (negative = attraction), and
//       e:     the pair energy U(r).
//
// range, one of
//   Range::LongRange     every pair interacts (gravity, log). Needs no member.
//   Range::Cutoff        pairs at r^2 >= rcut2 are skipped. Needs `Real rcut2;` (the squared cut-off,
//                        the largest one if it depends on the types).
//   Range::ShortPlusFar  long range, with a short-range part: pair() equals the far-field form (below)
//                        wherever r^2 + soft2 >= short2 (soft_gas: short2 = rc^2). Needs
//                        `Real short2;` and Provides::FarField. The tree and the cell list's far zones
//                        keep every pair closer than sqrt(short2 - soft2) exact.
// provides, Provides::None or any of these joined with |
//   Provides::Softening    `Real soft2;` is added to r^2: pair() and far() receive r^2 + soft2 (the
//                          traversal folds it into the r^2 sum: one operation less).
//   Provides::PerUnitMass  fdivr and e are per unit mass of i (gravity: saves m_i per pair).
//   Provides::FarField     the far-field form, what the tree and the far zones of cell_list use (a law
//                          without it cannot use them); not with Range::Cutoff, needs PerUnitMass:
//         PARDYN_HD void far(Real s, Real& phi, Real& d1, Real& d2, Real& d3) const;
//     where the pair energy is U_ij = m_i m_j phi(s) at s = r^2 + soft2 for every r beyond the
//     law's short-range part, and d1, d2, d3 are the first three derivatives of phi with respect to s.
//     A group of particles of total mass M seen from far away at separation d = x_i - X (X its centre
//     of mass, s = |d|^2 + soft2) pulls i with a_i = -2 M d1 d (monopole); its quadrupole moment adds
//     terms in d2 and d3 (see traversal/tree_*.hpp). Gravity: phi = -G s^-1/2; log: phi = G/2 ln s.
//
// Which schemes accept a law follows from these (PairPotential::supports): all_pairs always; cell_list
// for Cutoff, and for laws with FarField (near cells exact, far cells by their moments); tree for laws
// with FarField.
//
// The framework's traversal templates (traversal/*.hpp, and their CUDA counterparts) call `pair` for
// every pair in a neighbourhood; the same evaluator runs on the CPU and the GPU.
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>

#include "pardyn/core.hpp"

namespace pardyn {

// How far a pair law reaches (see the contract above).
enum class Range { LongRange, Cutoff, ShortPlusFar };

// What a pair law offers besides pair() (see the contract above): a set of flags.
enum class Provides : unsigned { None = 0, Softening = 1, PerUnitMass = 2, FarField = 4 };
constexpr Provides operator|(Provides a, Provides b) { return Provides(unsigned(a) | unsigned(b)); }
constexpr bool includes(Provides set, Provides flag) {
  return (unsigned(set) & unsigned(flag)) != 0;
}

namespace detail {
// The members the contract names, detected so that the checks can say which one is missing or extra.
template <class E, class = void>
struct declares_range : std::false_type {};
template <class E>
struct declares_range<E,
                      std::enable_if_t<std::is_same_v<std::remove_cv_t<decltype(E::range)>, Range>>>
    : std::true_type {};
template <class E, class = void>
struct declares_provides : std::false_type {};
template <class E>
struct declares_provides<
    E, std::enable_if_t<std::is_same_v<std::remove_cv_t<decltype(E::provides)>, Provides>>>
    : std::true_type {};
template <class E, class = void>
struct has_member_rcut2 : std::false_type {};
template <class E>
struct has_member_rcut2<E, std::void_t<decltype(std::declval<E>().rcut2)>> : std::true_type {};
template <class E, class = void>
struct has_member_short2 : std::false_type {};
template <class E>
struct has_member_short2<E, std::void_t<decltype(std::declval<E>().short2)>> : std::true_type {};
template <class E, class = void>
struct has_member_soft2 : std::false_type {};
template <class E>
struct has_member_soft2<E, std::void_t<decltype(std::declval<E>().soft2)>> : std::true_type {};
template <class E, class = void>
struct has_member_per_unit_mass : std::false_type {};
template <class E>
struct has_member_per_unit_mass<E, std::void_t<decltype(E::per_unit_mass)>> : std::true_type {};
template <class E, class = void>
struct has_member_far : std::false_type {};
template <class E>
struct has_member_far<E, std::void_t<decltype(&E::far)>> : std::true_type {};

// The evaluator's precision, read from pair()'s signature (void if pair() does not have it).
template <class E, class R>
R real_of_pair(void (E::*)(R, R, R, int, int, R&, R&) const);
template <class E, class = void>
struct pair_real {
  using type = void;
};
template <class E>
struct pair_real<E, std::void_t<decltype(real_of_pair<E>(&E::pair))>> {
  using type = decltype(real_of_pair<E>(&E::pair));
};
template <class E, class R, class = void>
struct has_far_signature : std::false_type {};
template <class E, class R>
struct has_far_signature<E, R,
                         std::void_t<decltype(std::declval<const E&>().far(
                             std::declval<R>(), std::declval<R&>(), std::declval<R&>(),
                             std::declval<R&>(), std::declval<R&>()))>> : std::true_type {};

template <class E, class R>
constexpr bool far_signature_ok() {
  if constexpr (std::is_floating_point_v<R>) return has_far_signature<E, R>::value;
  else return true;  // without a pair() of the right form the precision is unknown; reported there
}

template <class E>
constexpr Range range_of() {
  if constexpr (declares_range<E>::value) return E::range;
  else return Range::LongRange;
}
template <class E>
constexpr Provides provides_of() {
  if constexpr (declares_provides<E>::value) return E::provides;
  else return Provides::None;
}

// External evaluators (external_potential.hpp) keep their own optional `per_unit_mass`.
template <class E, class = void>
struct per_unit_mass_of : std::false_type {};
template <class E>
struct per_unit_mass_of<E, std::void_t<decltype(E::per_unit_mass)>>
    : std::bool_constant<E::per_unit_mass> {};
}  // namespace detail

// The contract's checks, for a pair evaluator type Eval (e.g. Law::Evaluator<double>). Each message
// says what to add or change; tests/contract/ compiles wrong laws and expects these messages.
template <class Eval>
struct PairLawContract {
  using Real = typename detail::pair_real<Eval>::type;
  static constexpr Range range = detail::range_of<Eval>();
  static constexpr Provides offers = detail::provides_of<Eval>();

  static_assert(detail::declares_range<Eval>::value,
                "pardyn law contract: the evaluator must declare its range: "
                "`static constexpr pardyn::Range range = pardyn::Range::LongRange;` "
                "(or Range::Cutoff, Range::ShortPlusFar; see evaluator.hpp)");
  static_assert(detail::declares_provides<Eval>::value,
                "pardyn law contract: the evaluator must declare what it provides: "
                "`static constexpr pardyn::Provides provides = pardyn::Provides::None;` "
                "(or Provides::Softening | Provides::PerUnitMass | Provides::FarField; see "
                "evaluator.hpp)");
  static_assert(std::is_floating_point_v<Real>,
                "pardyn law contract: the evaluator needs "
                "`PARDYN_HD void pair(Real r2, Real mi, Real mj, int ti, int tj, Real& fdivr, "
                "Real& e) const` (exactly this signature, not a template)");
  static_assert(std::is_trivially_copyable_v<Eval>,
                "pardyn law contract: an evaluator must be trivially copyable: it is passed to GPU "
                "kernels by value");

  static_assert(range != Range::Cutoff || detail::has_member_rcut2<Eval>::value,
                "pardyn law contract: a law with range = Range::Cutoff must have a member "
                "`Real rcut2` (the squared cut-off)");
  static_assert(range == Range::Cutoff || !detail::has_member_rcut2<Eval>::value,
                "pardyn law contract: the evaluator has a member `rcut2` but does not declare "
                "range = Range::Cutoff: declare it (or rename the member) so that the cut-off is "
                "not silently ignored");
  static_assert(range != Range::ShortPlusFar || detail::has_member_short2<Eval>::value,
                "pardyn law contract: a law with range = Range::ShortPlusFar must have a member "
                "`Real short2` (the r^2 + soft2 beyond which pair() equals the far-field form)");
  static_assert(range == Range::ShortPlusFar || !detail::has_member_short2<Eval>::value,
                "pardyn law contract: the evaluator has a member `short2` but does not declare "
                "range = Range::ShortPlusFar: declare it (or rename the member)");
  static_assert(range != Range::ShortPlusFar || includes(offers, Provides::FarField),
                "pardyn law contract: range = Range::ShortPlusFar needs Provides::FarField in "
                "`provides` and a far() beyond the short-range part");
  static_assert(!includes(offers, Provides::FarField) || range != Range::Cutoff,
                "pardyn law contract: Provides::FarField is for long-range laws; a law with "
                "range = Range::Cutoff has no far field (remove one of them)");
  static_assert(!includes(offers, Provides::FarField) || detail::far_signature_ok<Eval, Real>(),
                "pardyn law contract: provides has Provides::FarField, so the evaluator must have "
                "`PARDYN_HD void far(Real s, Real& phi, Real& d1, Real& d2, Real& d3) const`");
  static_assert(includes(offers, Provides::FarField) || !detail::has_member_far<Eval>::value,
                "pardyn law contract: the evaluator has far() but does not declare it: add "
                "Provides::FarField to `provides`");
  static_assert(!includes(offers, Provides::FarField) || includes(offers, Provides::PerUnitMass),
                "pardyn law contract: far() requires per-unit-mass sums: add "
                "Provides::PerUnitMass to `provides` (pair() then returns fdivr and e per unit "
                "mass of i)");
  static_assert(!includes(offers, Provides::Softening) || detail::has_member_soft2<Eval>::value,
                "pardyn law contract: provides has Provides::Softening, so the evaluator must have "
                "a member `Real soft2` (added to r^2 before pair() and far())");
  static_assert(includes(offers, Provides::Softening) || !detail::has_member_soft2<Eval>::value,
                "pardyn law contract: the evaluator has a member `soft2` but does not declare it: "
                "add Provides::Softening to `provides`");
  static_assert(!detail::has_member_per_unit_mass<Eval>::value,
                "pardyn law contract: `per_unit_mass` is not part of a pair law: write "
                "Provides::PerUnitMass in `provides` instead");
};

template <class Eval>
struct EvaluatorTraits {
  using Contract = PairLawContract<Eval>;
  static_assert(sizeof(Contract) > 0, "");  // instantiates the contract's checks
  static constexpr bool per_unit_mass = includes(Contract::offers, Provides::PerUnitMass);
  static constexpr bool has_cutoff = Contract::range == Range::Cutoff;
  static constexpr bool has_soft2 = includes(Contract::offers, Provides::Softening);
  // A long-range law with a short-range part (Range::ShortPlusFar, `Real short2`).
  static constexpr bool has_short_part = Contract::range == Range::ShortPlusFar;
  static constexpr bool has_far_field = includes(Contract::offers, Provides::FarField);
};

// The traversals' compile-time variants, chosen once here from two run-time switches (energy and
// periodic, or energy and quadrupole): calls f(std::bool_constant<a>{}, std::bool_constant<b>{}),
// so that a traversal writes `dispatch_variant(energy, periodic, [&](auto e, auto per) {
// kernel<decltype(e)::value, decltype(per)::value>(...); })`.
template <class F>
void dispatch_variant(bool a, bool b, F&& f) {
  using Yes = std::true_type;
  using No = std::false_type;
  if (a && b) f(Yes{}, Yes{});
  else if (a) f(Yes{}, No{});
  else if (b) f(No{}, Yes{});
  else f(No{}, No{});
}

// r^2 as the evaluator wants it (with its softening folded in), from a separation d. Dim is explicit:
// in 2D a fma(0, 0, x) would stay in the code (IEEE does not allow dropping it: -0 + 0 = +0).
template <int Dim, class Eval, class Real>
PARDYN_HD PARDYN_INLINE Real pair_r2(const Eval& ev, Real d0, Real d1, Real d2) {
  Real r2;
  if constexpr (EvaluatorTraits<Eval>::has_soft2) r2 = fma(d1, d1, fma(d0, d0, ev.soft2));
  else r2 = fma(d1, d1, d0 * d0);
  if constexpr (Dim == 3) r2 = fma(d2, d2, r2);
  return r2;
}
// The true r^2 back from what pair_r2 returned (for the virial and the cut-off).
template <class Eval, class Real>
PARDYN_HD PARDYN_INLINE Real true_r2(const Eval& ev, Real r2) {
  if constexpr (EvaluatorTraits<Eval>::has_soft2) return r2 - ev.soft2;
  else return r2;
}

// The law's short-range radius: pairs closer than this need the exact pair() (r^2 + soft2 <
// short2), those beyond it equal the far-field form; 0 for a law without a short-range part. The
// tree and the cell list's far zones keep every pair closer than this exact (Reach::short_range).
template <class Eval>
double short_range_radius(const Eval& ev) {
  if constexpr (EvaluatorTraits<Eval>::has_short_part) {
    double s2 = double(ev.short2);
    if constexpr (EvaluatorTraits<Eval>::has_soft2) s2 -= double(ev.soft2);
    return s2 > 0 ? std::sqrt(s2) : 0.0;
  } else {
    (void)ev;
    return 0.0;
  }
}

// The far-field monopole (law's far() form): a mass M at its centre of mass, seen from separation d
// with s = |d|^2 + soft2, pulls per unit mass of the target with a = fdivr d, fdivr = -2 M phi'(s),
// and adds the energy e = M phi(s). The tree's nodes and the cell list's far cells both use it.
template <class Eval, class Real>
PARDYN_HD PARDYN_INLINE void far_monopole(const Eval& ev, Real s, Real M, Real& fdivr, Real& e) {
  Real phi, d1, d2, d3;
  ev.far(s, phi, d1, d2, d3);
  fdivr = Real(-2) * M * d1;
  e = M * phi;
}

// Second moments of a group of particles about its centre of mass, Q = sum m (x - X)(x - X)^T:
// xx, yy, zz, xy, xz, yz in 3D; xx, yy, xy in 2D.
template <int Dim>
constexpr int kQuadTerms = Dim == 3 ? 6 : 3;

// Adds the far field of a group of particles (a tree node or a cell: mass M, second moments q, seen at separation d = x_i - X) to a
// target's sums, per unit mass of the target. With phi(s), s = |d|^2 + soft2 and its derivatives
// d1..d3 from the law's far(), the second-order expansion of sum_j m_j phi(|d - y_j|^2 + soft2)
// about the centre of mass (sum_j m_j y_j = 0) is
//   Phi = M phi + d1 tr Q + 2 d2 d.Q.d,
//   a   = -grad Phi = -(2 M d1 + 2 d2 tr Q + 4 d3 d.Q.d) d - 4 d2 Q.d.
// The virial term is a . d, as pair() gives fdivr r^2 for one particle.
template <int Dim, bool Quad, bool Energy, class Eval, class Real>
PARDYN_HD PARDYN_INLINE void far_multipole(const Eval& ev, const Real (&d)[3], Real M,
                                           const Real* q, Real (&acc)[3], Real& ep, Real& vir) {
  Real s = d[0] * d[0] + d[1] * d[1];
  if constexpr (Dim == 3) s += d[2] * d[2];
  if constexpr (EvaluatorTraits<Eval>::has_soft2) s += ev.soft2;
  Real a[3];
  if constexpr (Quad) {
    Real phi, f1, f2, f3;
    ev.far(s, phi, f1, f2, f3);
    Real g = Real(2) * M * f1;
    Real qd[3];
    Real tr;
    if constexpr (Dim == 3) {
      tr = q[0] + q[1] + q[2];
      qd[0] = q[0] * d[0] + q[3] * d[1] + q[4] * d[2];
      qd[1] = q[3] * d[0] + q[1] * d[1] + q[5] * d[2];
      qd[2] = q[4] * d[0] + q[5] * d[1] + q[2] * d[2];
    } else {
      tr = q[0] + q[1];
      qd[0] = q[0] * d[0] + q[2] * d[1];
      qd[1] = q[2] * d[0] + q[1] * d[1];
      qd[2] = 0;
    }
    Real dqd = qd[0] * d[0] + qd[1] * d[1];
    if constexpr (Dim == 3) dqd += qd[2] * d[2];
    g += Real(2) * f2 * tr + Real(4) * f3 * dqd;
    const Real h = Real(4) * f2;
    for (int k = 0; k < Dim; ++k) a[k] = -(g * d[k] + h * qd[k]);
    if constexpr (Energy) ep += M * phi + f1 * tr + Real(2) * f2 * dqd;
  } else {
    Real fdivr, e;
    far_monopole(ev, s, M, fdivr, e);
    for (int k = 0; k < Dim; ++k) a[k] = fdivr * d[k];
    if constexpr (Energy) ep += e;
  }
  for (int k = 0; k < Dim; ++k) acc[k] += a[k];
  if constexpr (Energy) {
    Real w = a[0] * d[0] + a[1] * d[1];
    if constexpr (Dim == 3) w += a[2] * d[2];
    vir += w;
  }
}

// Writes one target particle's sums into the store, adding to what other potentials put there. The
// sums are those of pair(): per unit mass of i for per-unit-mass laws, forces otherwise.
template <class Eval, bool Energy, class View, class Real>
PARDYN_HD PARDYN_INLINE void add_to_particle(const View& p, std::size_t i, const Real* acc,
                                             Real epot, Real vir) {
  const Real mi = p.mass[i];
  const Real to_acc = EvaluatorTraits<Eval>::per_unit_mass ? Real(1) : Real(1) / mi;
  const Real to_energy = EvaluatorTraits<Eval>::per_unit_mass ? mi : Real(1);
  for (int d = 0; d < View::dim; ++d) p.a[d][i] += acc[d] * to_acc;
  if constexpr (Energy) {
    // Each pair's energy and virial are shared half and half between its two particles.
    p.epot[i] += Real(0.5) * epot * to_energy;
    p.virial[i] += Real(0.5) * vir * to_energy;
  }
}

}  // namespace pardyn
