// SPDX-License-Identifier: BSD-3-Clause
// Random sequential addition (RSA) that any rank can make a part of: `count` points in a region,
// no two closer than `spacing`, the same points (and their order, hence the particle ids) on any
// number of ranks, each rank holding its own part and a thin halo.
//
// RSA draws candidate positions one after another and keeps a candidate when no point kept before
// it is closer than the spacing. Here every candidate gets its place in that sequence from a
// random key instead of from the order of drawing (the arrival times of Matérn's type III hard-core
// process, which is RSA in continuous time: Matérn 1986, Stoyan & Schlather 2000): candidate c is
// kept exactly when no kept candidate with a smaller key lies closer than the spacing. Whether c is
// kept therefore depends only on the candidates near it with smaller keys, and theirs on their
// own, a chain that runs back in time and stays short below jamming (its expected length is
// bounded: Penrose 2001): a rank decides its own candidates, following such chains into the tiles
// around its own as far as they go, and gets exactly what a single process gets.
//
// The candidates: the region is cut into T equal tiles (about kTileParticles points each, at least
// `spacing` wide); in round ("epoch") e tile t draws M = ceil(count / T) candidates uniform in the
// tile from its own stream (GenerateContext::stream(e T + t)), each a 64-bit key and a position.
// The keys order the candidates as (epoch, key, tile, place in the tile's round): a round's
// candidates come after every earlier round's, in a random order across the region; the whole is
// RSA with a uniform stream of candidates. Rounds continue until `count` candidates are kept in
// all; the kept candidates after the count-th (in key order) are dropped. Ids: tile by tile, in
// key order within a tile.
//
// In parallel (GenerateContext::comm), each rank decides the tiles whose ids it is likely to hold
// (its range of ids scaled to tiles); after each round the ranks add up what they kept; the cut
// is found by bisection over the keys; the ranks add up each tile's count, from which every rank
// knows each tile's first id, and decides any tile of its ids it has not decided yet.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pardyn/generator_support.hpp"

namespace pardyn::plugins {

// The points a tile holds on average (the unit of the candidates' streams, of the ranks' work and
// of the ids' order).
constexpr double kTileParticles = 1024;

struct AdditionSetup {
  Region region;
  int dim = 3;
  double spacing = 0;
  std::uint64_t count = 0;
  double max_attempts = 1000;  // candidates per point, on average, before giving up
  // Where the candidates' positions lie: [lo, hi] per axis (inside the region; see uniform.cpp).
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
};

// What random addition did when it gave up: the points it kept and the candidates it drew (the
// same on every rank).
struct AdditionStalled {
  std::uint64_t kept;
  double candidates;
};

// The points [first, end) of the block (positions, dim per point, point-major), made with the
// streams of ctx; collective over ctx.comm (every rank calls it, with its own range). Calls
// stalled() (which must throw) when max_attempts * count candidates keep fewer than count points.
std::vector<double> random_addition(const AdditionSetup& setup, const GenerateContext& ctx,
                                    std::uint64_t first, std::uint64_t end,
                                    const std::function<void(const AdditionStalled&)>& stalled);

}  // namespace pardyn::plugins
