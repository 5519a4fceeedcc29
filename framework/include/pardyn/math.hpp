// Small math helpers usable on host and device.
#pragma once

#include <cmath>

#include "pardyn/core.hpp"

namespace pardyn {

// 1/sqrt(x). On the device this maps to the hardware reciprocal square root for float (max 2 ulp),
// which is accurate enough for forces; double uses the IEEE rsqrt.
PARDYN_HD PARDYN_INLINE float rsqrt(float x) {
#if defined(__CUDA_ARCH__)
  return ::rsqrtf(x);
#else
  return 1.0f / std::sqrt(x);
#endif
}
PARDYN_HD PARDYN_INLINE double rsqrt(double x) {
#if defined(__CUDA_ARCH__)
  return ::rsqrt(x);
#else
  return 1.0 / std::sqrt(x);
#endif
}

template <typename T>
PARDYN_HD PARDYN_INLINE T sq(T x) {
  return x * x;
}

}  // namespace pardyn
