// Helpers for generator plugins: portable random numbers, number formatting for messages, and the
// region a generator fills.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "pardyn/box.hpp"
#include "pardyn/core.hpp"

namespace pardyn {

constexpr double kPi = 3.14159265358979323846;

// A uniform double in [0, 1) from the top 53 bits of one draw: the same numbers from the same seed
// with every standard library (std::uniform_real_distribution is implementation-defined).
inline double uniform01(std::mt19937_64& g) { return double(g() >> 11) * 0x1.0p-53; }

// The axis-aligned region a generator fills: the given corners, or the box where none are given.
// Errors (wrong number of values, non-finite, empty region) name the keys and start with `context`.
struct Region {
  double lo[3] = {0, 0, 0};
  double hi[3] = {0, 0, 0};
  bool wrap[3] = {false, false, false};  // the region spans a periodic axis of the box exactly
  double length(int d) const { return hi[d] - lo[d]; }
};

inline Region resolve_region(int dim, const Box& box, const std::vector<double>& lo,
                             const std::vector<double>& hi, const std::string& context) {
  Region r;
  auto fail = [&](const std::string& what) { throw Error(context + ": " + what); };
  auto take = [&](const std::vector<double>& given, const double* fallback, const char* key,
                  double* out) {
    if (given.empty()) {
      std::copy(fallback, fallback + dim, out);
      return;
    }
    if (int(given.size()) != dim)
      fail(std::string(key) + " has " + std::to_string(given.size()) + " values but the run is " +
           std::to_string(dim) + "D; give " + std::to_string(dim) +
           " values, or leave it out to use the box");
    for (int d = 0; d < dim; ++d) {
      if (!std::isfinite(given[d])) fail(std::string(key) + " must be finite");
      out[d] = given[d];
    }
  };
  take(lo, box.lo, "region_lo", r.lo);
  take(hi, box.hi, "region_hi", r.hi);
  for (int d = 0; d < dim; ++d) {
    if (!(r.hi[d] > r.lo[d]))
      fail("region_hi must exceed region_lo along every axis (axis " + std::to_string(d) + ": " +
           format_number(r.lo[d]) + " .. " + format_number(r.hi[d]) + ")");
    const double tol = 1e-12 * box.length(d);
    r.wrap[d] = box.boundary[d] == Boundary::Periodic && std::abs(r.lo[d] - box.lo[d]) <= tol &&
                std::abs(r.hi[d] - box.hi[d]) <= tol;
  }
  return r;
}

}  // namespace pardyn
