// SPDX-License-Identifier: BSD-3-Clause
// Small math helpers usable on host and device. Evaluators use these instead of 1/std::sqrt so that
// each backend can pick its fastest accurate form. Their names differ from C's (rsqrt, log, exp) so
// that `using namespace pardyn;` never makes a call ambiguous in CUDA's headers.
#pragma once

#include <cmath>

#include "pardyn/core.hpp"

namespace pardyn {

// inv_sqrt(x) = 1/sqrt(x).
//   host:   IEEE 1/sqrt (the compiler vectorises it).
//   device, float:  the hardware estimate (MUFU.RSQ, max 2 ulp; denormals flushed).
//   device, double: the hardware estimate of the high word refined by one third-order Newton
//                   step: y' = y + y (e/2 + 3e^2/8), e = 1 - x y^2, accurate to a few ulp, at 5
//                   double operations instead of the ~10 of the library's rsqrt().
PARDYN_HD PARDYN_INLINE float inv_sqrt(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return 1.0f / std::sqrt(x);
#endif
}
PARDYN_HD PARDYN_INLINE double inv_sqrt(double x) {
#if defined(__CUDA_ARCH__)
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  const double e = fma(-x * y, y, 1.0);
  return fma(y * e, fma(0.375, e, 0.5), y);
#else
  return 1.0 / std::sqrt(x);
#endif
}

// reciprocal(x) = 1/x, with the same policy: the hardware estimate on the device for float (MUFU.RCP), refined for
// double by two Newton steps.
PARDYN_HD PARDYN_INLINE float reciprocal(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return 1.0f / x;
#endif
}
PARDYN_HD PARDYN_INLINE double reciprocal(double x) {
#if defined(__CUDA_ARCH__)
  double y;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  double e = fma(-x, y, 1.0);
  y = fma(y, e, y);
  e = fma(-x, y, 1.0);
  return fma(y, e, y);
#else
  return 1.0 / x;
#endif
}

// ln and exponential on both sides (the library versions, accurate to a few ulp).
PARDYN_HD PARDYN_INLINE float ln(float x) {
#if defined(__CUDA_ARCH__)
  return ::logf(x);
#else
  return std::log(x);
#endif
}
PARDYN_HD PARDYN_INLINE double ln(double x) {
#if defined(__CUDA_ARCH__)
  return ::log(x);
#else
  return std::log(x);
#endif
}
PARDYN_HD PARDYN_INLINE float exponential(float x) {
#if defined(__CUDA_ARCH__)
  return ::expf(x);
#else
  return std::exp(x);
#endif
}
PARDYN_HD PARDYN_INLINE double exponential(double x) {
#if defined(__CUDA_ARCH__)
  return ::exp(x);
#else
  return std::exp(x);
#endif
}

template <typename T>
PARDYN_HD PARDYN_INLINE T sq(T x) {
  return x * x;
}

}  // namespace pardyn
