// SPDX-License-Identifier: BSD-3-Clause
// Helpers for generator plugins: portable random numbers, number formatting for messages, the
// region a generator fills, and what a generator that makes a range of its block needs (the chunk
// streams' loop, sums and orders over the ranks that make the block together).
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/generator_support.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "pardyn/box.hpp"
#include "pardyn/core.hpp"
#include "pardyn/exact_sum.hpp"
#include "pardyn/comm.hpp"
#include "pardyn/generator.hpp"

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

// Runs draw(i, rng, keep) for the particles i of [first, end) of a block, in order, with rng the
// stream of i's chunk (ctx.stream(i / kGenerateChunk)). The particles of a chunk draw from its stream
// one after another, so a range that starts inside a chunk first replays the chunk's earlier
// particles: draw is called for them with keep = false and must draw exactly what it draws for a
// kept particle (rejected candidates included), storing nothing. Particle i then gets the same
// numbers in every range that holds it.
template <class Draw>
void for_each_particle(const GenerateContext& ctx, std::uint64_t first, std::uint64_t end,
                       Draw&& draw) {
  if (first >= end) return;
  std::uint64_t i = first - first % kGenerateChunk;
  while (i < end) {
    const std::uint64_t chunk = i / kGenerateChunk;
    std::mt19937_64 rng = ctx.stream(chunk);
    const std::uint64_t stop = std::min(end, (chunk + 1) * kGenerateChunk);
    for (; i < stop; ++i) draw(i, rng, i >= first);
  }
}

// Sums over the ranks of comm (null: this process alone, nothing to add): afterwards every rank
// holds the total of every rank's sums[k], the same bits on every rank and for every cut.
inline void reduce(Comm* comm, ExactSum* sums, std::size_t n) {
  if (!comm || n == 0) return;
  std::vector<std::int64_t> w(n * ExactSum::kWords);
  for (std::size_t k = 0; k < n; ++k) {
    sums[k].normalise();
    std::copy(sums[k].words(), sums[k].words() + ExactSum::kWords,
              w.begin() + std::ptrdiff_t(k * ExactSum::kWords));
  }
  comm->sum(w.data(), w.size());
  for (std::size_t k = 0; k < n; ++k)
    std::copy(w.begin() + std::ptrdiff_t(k * ExactSum::kWords),
              w.begin() + std::ptrdiff_t((k + 1) * ExactSum::kWords), sums[k].words());
}

// A key of a global order: a value, ties broken by the particle's index in the block (distinct).
struct OrderKey {
  double value;
  std::uint64_t index;
  bool operator<(const OrderKey& o) const {
    return value < o.value || (value == o.value && index < o.index);
  }
};

// For each of this rank's keys, how many keys of all ranks of comm (this one's included) come before
// it: its place in the order of the whole block, as a stable sort of the whole block by value would
// give it. Each rank's sorted keys travel once around the ring of ranks (K - 1 exchanges with
// alltoallv); memory: twice the largest rank's keys. comm null: this process's keys alone.
inline std::vector<std::uint64_t> count_before(Comm* comm, const std::vector<OrderKey>& mine) {
  std::vector<OrderKey> sorted(mine);
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::uint64_t> out(mine.size(), 0);
  auto count_in = [&](const OrderKey* b, const OrderKey* e) {
    for (std::size_t k = 0; k < mine.size(); ++k)
      out[k] += std::uint64_t(std::lower_bound(b, e, mine[k]) - b);
  };
  count_in(sorted.data(), sorted.data() + sorted.size());
  if (!comm || comm->size() < 2) return out;
  const int ranks = comm->size(), me = comm->rank();
  std::vector<char> travelling(sorted.size() * sizeof(OrderKey));
  if (!sorted.empty()) std::memcpy(travelling.data(), sorted.data(), travelling.size());
  sorted = std::vector<OrderKey>();
  std::vector<OrderKey> keys;
  for (int step = 1; step < ranks; ++step) {
    std::vector<std::vector<char>> send(static_cast<std::size_t>(ranks));
    send[std::size_t((me + 1) % ranks)] = std::move(travelling);
    auto got = comm->alltoallv(std::move(send));
    travelling = std::move(got[std::size_t((me + ranks - 1) % ranks)]);
    keys.resize(travelling.size() / sizeof(OrderKey));
    if (!keys.empty()) std::memcpy(keys.data(), travelling.data(), travelling.size());
    count_in(keys.data(), keys.data() + keys.size());
  }
  return out;
}

}  // namespace pardyn
