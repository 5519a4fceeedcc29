// The force-law contract.
//
// A pair law is a struct `Law` with
//   - `static FactoryInfo info()`: name, summary, documentation (formula, units), supported dimensions
//     and the parameter schema;
//   - `struct Params` with `static Params from(const ParamSet&)`: the validated parameters in double;
//   - `template <typename Real> struct Evaluator`: a small trivially-copyable struct built from Params,
//     with
//         PARDYN_HD void pair(Real r2, Real mi, Real mj, int ti, int tj, Real& fdivr, Real& e) const;
//     which, for two particles i, j at squared distance r2 (separation d = x_i - x_j), returns
//       fdivr: the force on i divided by r, so that F_i = fdivr * d (negative = attraction), and
//       e:     the pair energy U(r),
//     and the optional members
//         static constexpr bool per_unit_mass = true;  // fdivr and e are per unit mass of i
//                                                      // (gravity: saves m_i per pair)
//         Real rcut2;                                  // squared cut-off; pairs beyond are skipped
//         Real soft2;                                  // a softening added to r^2: pair() then
//                                                      // receives r^2 + soft2 (the traversal folds
//                                                      // it into the r^2 sum: one operation less)
//   and, for long-range laws, the optional far-field form (what the tree and the far zones of
//   cell_list use; a law without it cannot use them):
//         static constexpr bool per_unit_mass = true;  // required with far()
//         PARDYN_HD void far(Real s, Real& phi, Real& d1, Real& d2, Real& d3) const;
//     where the pair energy is U_ij = m_i m_j phi(s) at s = r^2 + soft2 for every r beyond the
//     law's short-range part, and d1, d2, d3 are the first three derivatives of phi with respect to s.
//     A group of particles of total mass M seen from far away at separation d = x_i - X (X its centre
//     of mass, s = |d|^2 + soft2) pulls i with a_i = -2 M d1 d (monopole); its quadrupole moment adds
//     terms in d2 and d3 (see traversal/tree_*.hpp). Gravity: phi = -G s^-1/2; log: phi = G/2 ln s.
//
// The framework's traversal templates (traversal/*.hpp, and their CUDA counterparts) call `pair` for
// every pair in a neighbourhood; the same evaluator runs on the CPU and the GPU.
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>

#include "pardyn/core.hpp"

namespace pardyn {

namespace detail {
template <class E, class = void>
struct per_unit_mass_of : std::false_type {};
template <class E>
struct per_unit_mass_of<E, std::void_t<decltype(E::per_unit_mass)>>
    : std::bool_constant<E::per_unit_mass> {};
template <class E, class = void>
struct has_cutoff_of : std::false_type {};
template <class E>
struct has_cutoff_of<E, std::void_t<decltype(std::declval<E>().rcut2)>> : std::true_type {};
template <class E, class = void>
struct has_far_of : std::false_type {};
template <class E>
struct has_far_of<E, std::void_t<decltype(std::declval<const E&>().far(
                         std::declval<typename E::real_type>(), std::declval<typename E::real_type&>(),
                         std::declval<typename E::real_type&>(), std::declval<typename E::real_type&>(),
                         std::declval<typename E::real_type&>()))>> : std::true_type {};
template <class E, class = void>
struct has_short2_of : std::false_type {};
template <class E>
struct has_short2_of<E, std::void_t<decltype(std::declval<E>().short2)>> : std::true_type {};
template <class E, class = void>
struct has_soft2_of : std::false_type {};
template <class E>
struct has_soft2_of<E, std::void_t<decltype(std::declval<E>().soft2)>> : std::true_type {};
}  // namespace detail

template <class Eval>
struct EvaluatorTraits {
  static constexpr bool per_unit_mass = detail::per_unit_mass_of<Eval>::value;
  static constexpr bool has_cutoff = detail::has_cutoff_of<Eval>::value;
  static constexpr bool has_soft2 = detail::has_soft2_of<Eval>::value;
  // A long-range law with a short-range part declares `Real short2`: pair() equals the far-field
  // form wherever r^2 + soft2 >= short2 (soft_gas: rc^2).
  static constexpr bool has_short_part = detail::has_short2_of<Eval>::value;
  // far() needs the evaluator to name its precision: `using real_type = Real;`.
  static constexpr bool has_far_field = detail::has_far_of<Eval>::value;
  static_assert(std::is_trivially_copyable_v<Eval>,
                "an evaluator must be trivially copyable: it is passed to GPU kernels by value");
};

// r^2 as the evaluator wants it (with its softening folded in), from a separation d. Dim is explicit:
// in 2D a fma(0, 0, x) would stay in the code (IEEE does not allow dropping it: -0 + 0 = +0).
template <int Dim, class Eval, class Real>
PARDYN_HD PARDYN_INLINE Real pair_r2(const Eval& ev, Real d0, Real d1, Real d2) {
  Real r2;
  if constexpr (EvaluatorTraits<Eval>::has_soft2)
    r2 = fma(d1, d1, fma(d0, d0, ev.soft2));
  else
    r2 = fma(d1, d1, d0 * d0);
  if constexpr (Dim == 3) r2 = fma(d2, d2, r2);
  return r2;
}
// The true r^2 back from what pair_r2 returned (for the virial and the cut-off).
template <class Eval, class Real>
PARDYN_HD PARDYN_INLINE Real true_r2(const Eval& ev, Real r2) {
  if constexpr (EvaluatorTraits<Eval>::has_soft2)
    return r2 - ev.soft2;
  else
    return r2;
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
PARDYN_HD PARDYN_INLINE void far_multipole(const Eval& ev, const Real (&d)[3], Real M, const Real* q,
                                           Real (&acc)[3], Real& ep, Real& vir) {
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
PARDYN_HD PARDYN_INLINE void add_to_particle(const View& p, std::size_t i, const Real* acc, Real epot,
                                             Real vir) {
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
