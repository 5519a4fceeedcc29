// SPDX-License-Identifier: BSD-3-Clause
// The Generator plugin kind: makes the particles of a [[particles]] block (or a range of it, on
// each rank of a parallel run), with the block's reproducible random streams. Helpers for writing
// one (lattices, thermal velocities, sums over ranks) are in generator_support.hpp.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/generator.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <cstdint>
#include <random>
#include <string>

#include "pardyn/box.hpp"
#include "pardyn/particles.hpp"

namespace pardyn {

class Comm;  // pardyn/comm.hpp

// Generators (docs/plugins.md, "Generators"). A [[particles]] block's particles are numbered 0 .. n-1
// and fall into chunks of kGenerateChunk; the random numbers of the particles of chunk c come from a
// stream of their own, seeded from ([simulation] seed, block index, c), consumed by the chunk's
// particles one after another. Particle i then gets the same numbers however the block is cut
// between ranks: each rank of a parallel run makes only its range of the block.
constexpr std::uint64_t kGenerateChunk = 4096;
// The streams of a block: purpose 0 is the generator's, 1 the thermal velocities the framework adds
// (the block's `temperature`).
inline std::mt19937_64 chunk_stream(std::uint64_t seed, std::uint64_t block, std::uint64_t chunk,
                                    std::uint32_t purpose) {
  auto lo = [](std::uint64_t v) { return std::uint32_t(v & 0xffffffffu); };
  auto hi = [](std::uint64_t v) { return std::uint32_t(v >> 32); };
  // std::seed_seq and the Mersenne twister's seeding from it are specified by the standard: the
  // same streams with every standard library.
  std::seed_seq seq{lo(seed),  hi(seed),  lo(block), hi(block),
                    lo(chunk), hi(chunk), purpose,   std::uint32_t(0x70617267u)};
  return std::mt19937_64(seq);
}

struct GenerateContext {
  int dim = 3;
  const Box* box = nullptr;
  // One stream for the whole block, drawn in sequence: for generators that make their block at once
  // (particles() < 0). A generator that makes ranges draws from stream(chunk) instead.
  std::mt19937_64* rng = nullptr;
  std::string base_dir;  // folder of the scenario file
  // The range to make, indices of the block: [first, first + count), clipped to the block (the
  // default count: to its end). Only for generators whose particles() gives the block's size; the
  // others make the whole block and the framework keeps each rank's part.
  std::uint64_t first = 0;
  std::uint64_t count = ~std::uint64_t(0);
  // Where the streams come from: [simulation] seed and the index of the [[particles]] block.
  std::uint64_t seed = 1;
  std::uint64_t block = 0;
  // The ranks that make the block together, each its own range: what is summed over the whole block
  // (a centre of mass) is summed over them (ExactSum and reduce(), generator_support.hpp). generate()
  // is then called on every rank, also for an empty range, and its collective calls must come in
  // the same order on every rank. Null when this process makes the block alone (a serial run, a
  // generator without particles()).
  Comm* comm = nullptr;

  // The generator's stream of chunk `chunk` (particles chunk * kGenerateChunk onwards).
  std::mt19937_64 stream(std::uint64_t chunk) const { return chunk_stream(seed, block, chunk, 0); }
  // The end of the range in a block of n particles.
  std::uint64_t end(std::uint64_t n) const {
    const std::uint64_t f = first < n ? first : n;
    return count < n - f ? f + count : n;
  }
};

class Generator {
 public:
  virtual ~Generator() = default;
  // Positions, velocities, masses (and types, if the generator sets them) in double: particles
  // [ctx.first, ctx.end(n)) of the block when particles() gives its size n, else the whole block.
  virtual HostParticles generate(const GenerateContext& ctx) = 0;
  // The number of particles the block makes, known before any is made (ctx: dim, box, base_dir, seed,
  // block), or -1 (the default): the generator then makes its whole block at once, on every rank of a
  // parallel run, which costs host memory for the whole block at start-up (a file reader, a
  // sequential algorithm such as uniform's minimum spacing).
  virtual std::int64_t particles(const GenerateContext&) { return -1; }
};

}  // namespace pardyn
