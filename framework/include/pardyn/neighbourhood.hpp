// SPDX-License-Identifier: BSD-3-Clause
// The contract between a spatial scheme and a potential: the neighbourhood a scheme builds
// (Neighbourhood: all pairs, a cell list, a tree, or a SourceBlock of another rank's particles), how
// far a law reaches (Reach), and what one force evaluation fills (ForceRequest). Plain structs:
// device-clean (docs/plugins.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "pardyn/box.hpp"
#include "pardyn/core.hpp"

namespace pardyn {

class Comm;  // pardyn/comm.hpp

// Neighbourhoods: what a spatial scheme builds and a potential's traversal consumes.
enum class NeighbourhoodKind { AllPairs, CellList, Tree };
inline const char* to_string(NeighbourhoodKind k) {
  switch (k) {
    case NeighbourhoodKind::CellList: return "cell_list";
    case NeighbourhoodKind::Tree: return "tree";
    default: return "all_pairs";
  }
}

struct Neighbourhood {
  NeighbourhoodKind kind = NeighbourhoodKind::AllPairs;
  // The structure of that kind. All-pairs: null (every pair of the store), or a SourceBlock (the
  // all-pairs ring of a parallel run: the block's particles act on every particle of the store).
  const void* data = nullptr;
};

// Particles of another rank passing by in the all-pairs ring: sources only, none of them is a
// particle of the store, so no pair is skipped as a self pair. Backend memory (device memory for a
// CUDA store), in the store's precision.
struct SourceBlock {
  std::size_t n = 0;
  const void* pos = nullptr;  // [n] records of 4 reals: {x, y, z, m} in 3D, {x, y, m, 0} in 2D
  const std::int32_t* type = nullptr;  // [n]
};

// How far a force law reaches, what a scheme is told at every update.
//   cutoff:      pairs farther apart than this do not interact (infinity: a long-range law);
//   short_range: a long-range law's short-range radius: beyond it the law equals its far-field
//                form (soft_gas: the core repulsion acts inside it); 0 when the law has none. A
//                scheme that approximates distant particles (tree, cell_list far zones) must treat
//                every pair closer than this exactly.
//   comm, ghost_reach: set by the framework for a long-range law under a domain decomposition (a
//                parallel run whose cell-list terms cut the box into sub-boxes): the store then
//                holds the rank's particles [0, targets()) followed by ghosts, every particle of
//                the other ranks within ghost_reach of a target among them. A scheme serves the
//                rest through what the ranks sum together over comm (the cell list's far zones
//                do). Null and 0 otherwise.
struct Reach {
  double cutoff = std::numeric_limits<double>::infinity();
  double short_range = 0;
  Comm* comm = nullptr;
  double ghost_reach = 0;
};

struct ForceRequest {
  bool energy = false;  // fill epot (per-particle potential energy)
  bool virial = false;  // fill virial
  const Box* box = nullptr;
};

}  // namespace pardyn
