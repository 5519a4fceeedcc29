// SPDX-License-Identifier: BSD-3-Clause
// Pair evaluators that break the law contract (pardyn/evaluator.hpp), one per PARDYN_CASE: each must
// fail to compile with the static_assert message that tests/CMakeLists.txt expects for it, and the
// case `good` must compile. Compiled with -fsyntax-only by the ctests contract.*.
#include "pardyn/evaluator.hpp"

using pardyn::Provides;
using pardyn::Range;

#define PAIR                                                             \
  void pair(Real r2, Real, Real, int, int, Real& fdivr, Real& e) const { \
    fdivr = -r2;                                                         \
    e = r2;                                                              \
  }
#define FAR \
  void far(Real s, Real& phi, Real& d1, Real& d2, Real& d3) const { phi = d1 = d2 = d3 = s; }

template <typename Real>
struct Law {
#if PARDYN_CASE == 0  // good: a softened long-range law with a far field
  static constexpr Range range = Range::LongRange;
  static constexpr Provides provides =
      Provides::Softening | Provides::PerUnitMass | Provides::FarField;
  Real soft2;
  PAIR FAR
#elif PARDYN_CASE == 1   // no range
  static constexpr Provides provides = Provides::None;
  PAIR
#elif PARDYN_CASE == 2   // no provides
  static constexpr Range range = Range::LongRange;
  PAIR
#elif PARDYN_CASE == 3   // a cut-off law with a misspelt rcut2
  static constexpr Range range = Range::Cutoff;
  static constexpr Provides provides = Provides::None;
  Real rcut_2;
  PAIR
#elif PARDYN_CASE == 4   // rcut2 without range = Cutoff
  static constexpr Range range = Range::LongRange;
  static constexpr Provides provides = Provides::None;
  Real rcut2;
  PAIR
#elif PARDYN_CASE == 5   // ShortPlusFar without short2
  static constexpr Range range = Range::ShortPlusFar;
  static constexpr Provides provides = Provides::PerUnitMass | Provides::FarField;
  PAIR FAR
#elif PARDYN_CASE == 6   // far field without per unit mass
  static constexpr Range range = Range::LongRange;
  static constexpr Provides provides = Provides::FarField;
  PAIR FAR
#elif PARDYN_CASE == 7   // far() not declared
  static constexpr Range range = Range::LongRange;
  static constexpr Provides provides = Provides::PerUnitMass;
  PAIR FAR
#elif PARDYN_CASE == 8   // FarField declared, no far()
  static constexpr Range range = Range::LongRange;
  static constexpr Provides provides = Provides::PerUnitMass | Provides::FarField;
  PAIR
#elif PARDYN_CASE == 9   // soft2 not declared
  static constexpr Range range = Range::LongRange;
  static constexpr Provides provides = Provides::None;
  Real soft2;
  PAIR
#elif PARDYN_CASE == 10  // Softening declared, no soft2
  static constexpr Range range = Range::LongRange;
  static constexpr Provides provides = Provides::Softening;
  PAIR
#elif PARDYN_CASE == 11  // a cut-off law with a far field
  static constexpr Range range = Range::Cutoff;
  static constexpr Provides provides = Provides::PerUnitMass | Provides::FarField;
  Real rcut2;
  PAIR FAR
#elif PARDYN_CASE == 12  // the old optional per_unit_mass
  static constexpr Range range = Range::LongRange;
  static constexpr Provides provides = Provides::None;
  static constexpr bool per_unit_mass = true;
  PAIR
#elif PARDYN_CASE == 13  // pair() of the wrong form (not const)
  static constexpr Range range = Range::LongRange;
  static constexpr Provides provides = Provides::None;
  void pair(Real r2, Real, Real, int, int, Real& fdivr, Real& e) { fdivr = e = r2; }
#elif PARDYN_CASE == 14  // short2 without range = ShortPlusFar
  static constexpr Range range = Range::LongRange;
  static constexpr Provides provides = Provides::PerUnitMass | Provides::FarField;
  Real short2;
  PAIR FAR
#endif
};

static_assert(sizeof(pardyn::EvaluatorTraits<Law<float>>) > 0);
static_assert(sizeof(pardyn::EvaluatorTraits<Law<double>>) > 0);
