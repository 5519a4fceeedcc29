// SPDX-License-Identifier: BSD-3-Clause
// The evaluators of `type = "expression"` laws (docs/formulas.md): the
// law contract of pardyn/evaluator.hpp in six forms, each a template over the precision and over
// `Impl`, which supplies the formula part:
//
//   Form::Cutoff       Range::Cutoff, pair() = the formula (its energy shifted, cut off per pair)
//   Form::Plain        Range::LongRange without a far field (all_pairs only)
//   Form::Gravity      long_range.kernel = "gravity" alone: U = m_i m_j phi(s), phi = -G s^-1/2
//   Form::Log          long_range.kernel = "log" alone:     phi = G/2 (ln s - ln r0^2)
//   Form::ShortGravity the kernel plus the formula inside long_range.radius: Range::ShortPlusFar
//   Form::ShortLog     (the formula's energy and force are then per m_i m_j, as the kernel's)
//
// with s = r^2 + softening^2. Impl::formula(k, r2, s, ti, tj, fdivr, e) computes the formula part
// for a pair of types (coefficients k.of(ti, tj)) at r^2 = r2 (and s): what pardyn's code generator
// writes (compiled at run time for the CPU), or its interpreter. The far-field
// kernels are written here once, the same functions as the gravity and log laws.
#pragma once

#include <cstdint>
#include <type_traits>
#if !defined(__CUDACC_RTC__)
#include <string>
#include <vector>
#endif

#include "expression_coefs.hpp"
#include "pardyn/evaluator.hpp"
#include "pardyn/far_kernels.hpp"

namespace pardyn::expression {

enum class Form : int { Cutoff, Plain, Gravity, Log, ShortGravity, ShortLog };
constexpr int kForms = 6;
inline const char* to_string(Form f) {
  const char* names[] = {"cutoff", "plain", "gravity", "log", "short_gravity", "short_log"};
  return names[int(f)];
}
constexpr bool has_formula(Form f) { return f != Form::Gravity && f != Form::Log; }
constexpr bool has_kernel(Form f) { return f != Form::Cutoff && f != Form::Plain; }
constexpr bool log_kernel(Form f) { return f == Form::Log || f == Form::ShortLog; }

// Run-time compiled device code (NVRTC) sees the evaluators without Params (host memory,
// std::vector) and without their constructors from it: the host builds an evaluator and the
// kernels take its bytes.
#if !defined(__CUDACC_RTC__)
// Everything an evaluator is built from, in double and float (host memory), made once by the plugin
// from the checked scenario (law.cpp).
struct Params {
  Form form = Form::Cutoff;
  double rcut2 = 0;     // Cutoff: the largest squared cut-off over the pairs of types
  double soft2 = 0;     // kernel forms: softening^2
  double short2 = 0;    // Short* forms: the largest radius^2 + soft2
  double strength = 0;  // kernel forms: G
  double log_r0_2 = 0;  // log kernel: ln r0^2
  int ncoef = 0;
  bool uniform = true;
  std::vector<double> coef_d;  // uniform: ncoef values; else kMaxTypes^2 sets of ncoef
  std::vector<float> coef_f;
  const void* program_d = nullptr;  // the interpreter's programs (interpreter.hpp), or null
  const void* program_f = nullptr;
};

// The coefficient sets of `p` for precision Real; the table pointer is into p's (or, for the GPU,
// into the device copy the caller gives).
template <class Real>
Coefs<Real> coefs_of(const Params& p, const Real* device_table = nullptr) {
  Coefs<Real> k{};
  const auto& v = [&]() -> const std::vector<Real>& {
    if constexpr (sizeof(Real) == sizeof(double)) return p.coef_d;
    else return p.coef_f;
  }();
  k.uniform = p.uniform ? 1 : 0;
  k.ncoef = p.ncoef;
  if (p.uniform)
    for (int i = 0; i < p.ncoef && i < kMaxCoefs; ++i) k.c[i] = v[std::size_t(i)];
  k.table = p.uniform ? nullptr : (device_table ? device_table : v.data());
  k.program = sizeof(Real) == sizeof(double) ? p.program_d : p.program_f;
  return k;
}
#endif  // !__CUDACC_RTC__

template <class Real, class Impl>
struct CutoffEvaluator {
  static constexpr Range range = Range::Cutoff;
  static constexpr Provides provides = Provides::None;
  Real rcut2;
  Coefs<Real> k;
#if !defined(__CUDACC_RTC__)
  explicit CutoffEvaluator(const Params& p, const Real* device_table = nullptr)
      : rcut2(Real(p.rcut2)), k(coefs_of<Real>(p, device_table)) {}
#endif
  PARDYN_HD PARDYN_INLINE void pair(Real r2, Real, Real, int ti, int tj, Real& fdivr,
                                    Real& e) const {
    Impl::formula(k, r2, r2, ti, tj, fdivr, e);
  }
};

template <class Real, class Impl>
struct PlainEvaluator {
  static constexpr Range range = Range::LongRange;
  static constexpr Provides provides = Provides::None;
  Coefs<Real> k;
#if !defined(__CUDACC_RTC__)
  explicit PlainEvaluator(const Params& p, const Real* device_table = nullptr)
      : k(coefs_of<Real>(p, device_table)) {}
#endif
  PARDYN_HD PARDYN_INLINE void pair(Real r2, Real, Real, int ti, int tj, Real& fdivr,
                                    Real& e) const {
    Impl::formula(k, r2, r2, ti, tj, fdivr, e);
  }
};

// The kernel forms: the far-field kernel alone (gravity, log; Short = false), or with the formula
// inside the radius (Short = true: Range::ShortPlusFar, with its member short2). pair() and far()
// are members of each (not inherited), as the law contract's checks of their signatures need.
template <Form F, class Real, class Impl, bool Short = has_formula(F)>
struct KernelEvaluator;

#define PARDYN_EXPRESSION_KERNEL_MEMBERS                                                         \
  static constexpr Provides provides =                                                           \
      Provides::Softening | Provides::PerUnitMass | Provides::FarField;                          \
  Real soft2;                                                                                    \
  far_kernels::Kernel<Real, log_kernel(F)> kernel;                                               \
  Coefs<Real> k;                                                                                 \
  PARDYN_HD PARDYN_INLINE void far(Real s, Real& phi, Real& d1, Real& d2, Real& d3) const {      \
    kernel.far(s, phi, d1, d2, d3);                                                              \
  }                                                                                              \
  PARDYN_HD PARDYN_INLINE void pair(Real s, Real, Real mj, int ti, int tj, Real& fdivr, Real& e) \
      const {                                                                                    \
    kernel.pair(s, mj, fdivr, e);                                                                \
    if constexpr (has_formula(F)) {                                                              \
      Real f, u;                                                                                 \
      Impl::formula(k, s - soft2, s, ti, tj, f, u); /* 0 outside the radius */                   \
      fdivr = fma(mj, f, fdivr);                                                                 \
      e = fma(mj, u, e);                                                                         \
    }                                                                                            \
  }

template <Form F, class Real, class Impl>
struct KernelEvaluator<F, Real, Impl, false> {
  static constexpr Range range = Range::LongRange;
  PARDYN_EXPRESSION_KERNEL_MEMBERS
#if !defined(__CUDACC_RTC__)
  explicit KernelEvaluator(const Params& p, const Real* device_table = nullptr)
      : soft2(Real(p.soft2)), kernel(p.strength, p.log_r0_2), k(coefs_of<Real>(p, device_table)) {}
#endif
};

template <Form F, class Real, class Impl>
struct KernelEvaluator<F, Real, Impl, true> {
  static constexpr Range range = Range::ShortPlusFar;
  PARDYN_EXPRESSION_KERNEL_MEMBERS
  Real short2;  // the largest radius^2 + soft2 over the pairs of types
#if !defined(__CUDACC_RTC__)
  explicit KernelEvaluator(const Params& p, const Real* device_table = nullptr)
      : soft2(Real(p.soft2)),
        kernel(p.strength, p.log_r0_2),
        k(coefs_of<Real>(p, device_table)),
        short2(Real(p.short2)) {}
#endif
};
#undef PARDYN_EXPRESSION_KERNEL_MEMBERS

// The evaluator of form F with the formula part Impl.
template <Form F, class Real, class Impl>
using Evaluator =
    std::conditional_t<F == Form::Cutoff, CutoffEvaluator<Real, Impl>,
                       std::conditional_t<F == Form::Plain, PlainEvaluator<Real, Impl>,
                                          KernelEvaluator<F, Real, Impl>>>;

// The formula part of the kernel-only forms: there is none.
struct NoFormula {
  template <class Real>
  PARDYN_HD PARDYN_INLINE static void formula(const Coefs<Real>&, Real, Real, int, int, Real& f,
                                              Real& e) {
    f = e = Real(0);
  }
};

}  // namespace pardyn::expression
