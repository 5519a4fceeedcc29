// SPDX-License-Identifier: BSD-3-Clause
// Counter-based random numbers for kernels: a value is a pure function of (seed, step, particle id,
// stream), so the CPU and the GPU, with any number of threads, draw the same numbers, and no
// generator state has to be stored per particle.
#pragma once

#include <cmath>
#include <cstdint>

#include "pardyn/core.hpp"

namespace pardyn {

// SplitMix64's finaliser: a bijective mix of 64 bits with full avalanche.
PARDYN_HD PARDYN_INLINE std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A 64-bit key for (seed, step, id, stream): each field goes through its own mix so that nearby
// counters give unrelated keys.
PARDYN_HD PARDYN_INLINE std::uint64_t random_key(std::uint64_t seed, std::uint64_t step,
                                                 std::uint64_t id, std::uint64_t stream) {
  std::uint64_t k = mix64(seed + 0x9e3779b97f4a7c15ull);
  k = mix64(k ^ (step + 0x632be59bd9b4e019ull));
  k = mix64(k ^ (id * 0xd6e8feb86659fd93ull + stream));
  return k;
}

// Uniform in (0, 1] from 53 bits.
PARDYN_HD PARDYN_INLINE double uniform_open(std::uint64_t bits) {
  return (double(bits >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

// A standard normal number for a key (Box-Muller on two uniforms derived from it), in double.
PARDYN_HD PARDYN_INLINE double normal_from_key(std::uint64_t key) {
  const double u1 = uniform_open(mix64(key ^ 0x5851f42d4c957f2dull));
  const double u2 = uniform_open(mix64(key ^ 0x14057b7ef767814full));
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

}  // namespace pardyn
