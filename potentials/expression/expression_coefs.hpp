// SPDX-License-Identifier: BSD-3-Clause
// The data an expression law's generated code reads, and the functions it calls: shared by the
// plugin and the C++ it writes for the CPU (compiled at run time). Device-clean (it includes only
// pardyn/math.hpp), for a GPU version to come (NVRTC; not done).
#pragma once

#include "pardyn/math.hpp"

namespace pardyn::expression {

// At most this many particle types (as lennard_jones) and coefficients per pair of types.
constexpr int kMaxTypes = 8;
constexpr int kMaxCoefs = 48;

// The numbers a law's formulas use that depend only on its parameters (sigma^12, 4 epsilon, U(rc),
// rc^2, ...), for each pair of types: one set `c` when every pair has the same, else a table of
// kMaxTypes^2 sets of `ncoef` (type pairs beyond the types given repeat the last type's).
template <class Real>
struct Coefs {
  Real c[kMaxCoefs];
  const Real* table;  // null when uniform
  int uniform;
  int ncoef;
  const void* program;  // the interpreter's program (Program<Real>), null for compiled code

  PARDYN_HD PARDYN_INLINE const Real* of(int ti, int tj) const {
    if (uniform) return c;
    const int a = unsigned(ti) < unsigned(kMaxTypes) ? ti : kMaxTypes - 1;
    const int b = unsigned(tj) < unsigned(kMaxTypes) ? tj : kMaxTypes - 1;
    return table + (a * kMaxTypes + b) * ncoef;
  }
};

// The functions of the formula language, for the generated code, on both sides.
PARDYN_HD PARDYN_INLINE float fn_sqrt(float x) { return sqrtf(x); }
PARDYN_HD PARDYN_INLINE double fn_sqrt(double x) { return sqrt(x); }
PARDYN_HD PARDYN_INLINE float fn_pow(float x, float y) { return powf(x, y); }
PARDYN_HD PARDYN_INLINE double fn_pow(double x, double y) { return pow(x, y); }
PARDYN_HD PARDYN_INLINE float fn_sin(float x) { return sinf(x); }
PARDYN_HD PARDYN_INLINE double fn_sin(double x) { return sin(x); }
PARDYN_HD PARDYN_INLINE float fn_cos(float x) { return cosf(x); }
PARDYN_HD PARDYN_INLINE double fn_cos(double x) { return cos(x); }
PARDYN_HD PARDYN_INLINE float fn_tanh(float x) { return tanhf(x); }
PARDYN_HD PARDYN_INLINE double fn_tanh(double x) { return tanh(x); }
PARDYN_HD PARDYN_INLINE float fn_erf(float x) { return erff(x); }
PARDYN_HD PARDYN_INLINE double fn_erf(double x) { return erf(x); }
PARDYN_HD PARDYN_INLINE float fn_erfc(float x) { return erfcf(x); }
PARDYN_HD PARDYN_INLINE double fn_erfc(double x) { return erfc(x); }

}  // namespace pardyn::expression
