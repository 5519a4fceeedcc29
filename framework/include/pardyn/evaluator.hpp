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
//
// The framework's traversal templates (traversal/*.hpp, and their CUDA counterparts) call `pair` for
// every pair in a neighbourhood; the same evaluator runs on the CPU and the GPU.
#pragma once

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
}  // namespace detail

template <class Eval>
struct EvaluatorTraits {
  static constexpr bool per_unit_mass = detail::per_unit_mass_of<Eval>::value;
  static constexpr bool has_cutoff = detail::has_cutoff_of<Eval>::value;
  static_assert(std::is_trivially_copyable_v<Eval>,
                "an evaluator must be trivially copyable: it is passed to GPU kernels by value");
};

}  // namespace pardyn
