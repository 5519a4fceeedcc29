// SPDX-License-Identifier: BSD-3-Clause
// pardyn core definitions shared by the framework, every plugin, and device code: the host/device
// macros, backends and precisions, the bit sets of plugin descriptors, and pardyn::Error.
// Plain C++17 with no dependencies; device-clean (docs/plugins.md): what needs <string> (Error,
// format_number) is left out of run-time compiled device code (NVRTC).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#if !defined(__CUDACC_RTC__)
#include <cstdio>
#include <stdexcept>
#include <string>
#endif

#if defined(__CUDACC__)
#define PARDYN_HD __host__ __device__
#define PARDYN_INLINE __forceinline__
#else
#define PARDYN_HD
#define PARDYN_INLINE inline __attribute__((always_inline))
#endif
// PARDYN_INLINE for a lambda (which cannot be declared inline), e.g. a visitor that a PARDYN_INLINE
// loop calls in a kernel: [&](std::size_t c) PARDYN_INLINE_LAMBDA { ... }. GCC, Clang and nvcc
// (host and device code) honour it there, even at -O0.
#define PARDYN_INLINE_LAMBDA __attribute__((always_inline))

namespace pardyn {

// Unqualified fma(a, b, c) in evaluators and traversals: on the device CUDA's overloads; on the host
// the std:: overloads, so that fma(float, float, float) is one single-precision FMA and not C's
// double fma with two conversions (which also keeps float SIMD loops narrow).
#if !defined(__CUDA_ARCH__)
using std::fma;
#endif

enum class Backend { Cpu, Cuda };
enum class Precision { Float, Double };

inline const char* to_string(Backend b) { return b == Backend::Cuda ? "cuda" : "cpu"; }
inline const char* to_string(Precision p) { return p == Precision::Float ? "float" : "double"; }

// Bounds of the counts a scenario gives (every integer parameter of a schema has a range): the most
// particles one run may hold (the neighbour structures index particles with 32-bit integers) and the
// most steps, which also bounds every "every this many steps" interval.
constexpr std::int64_t kMaxParticles = 2000000000;
constexpr std::int64_t kMaxSteps = 1000000000000000;  // 1e15

#if !defined(__CUDACC_RTC__)
// A number for a message: `precision` significant digits, no trailing zeros, never rounded to 0
// (1e-09, 0.25, 1.5e+30, inf).
inline std::string format_number(double x, int precision = 6) {
  char b[48];
  std::snprintf(b, sizeof b, "%.*g", precision, x);
  return b;
}
#endif

// Bit sets used in plugin descriptors to say what a factory supports.
enum : unsigned { kDim2 = 1u, kDim3 = 2u, kDimAll = 3u };
enum : unsigned { kFloat = 1u, kDouble = 2u, kPrecisionAll = 3u };
enum : unsigned { kCpu = 1u, kCuda = 2u, kBackendAll = 3u };

inline unsigned dim_bit(int dim) { return dim == 2 ? kDim2 : kDim3; }
inline unsigned precision_bit(Precision p) { return p == Precision::Float ? kFloat : kDouble; }
inline unsigned backend_bit(Backend b) { return b == Backend::Cpu ? kCpu : kCuda; }

#if !defined(__CUDACC_RTC__)
// Every error a user can cause is reported through this type (or a subclass); the message is meant to
// be read by a person: it names the file, the item and what to do.
// Its destructor is defined in libpardyn, so the vtable and type info live there: an Error thrown by
// a plugin stays valid after that plugin's library is unloaded.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  ~Error() override;
};
#endif

}  // namespace pardyn
