// SPDX-License-Identifier: BSD-3-Clause
// clusters: connected components of the "closer than `distance`" graph (the friends-of-friends
// criterion), found with a union-find over the cell list's neighbour list, on the store's backend.
// On one rank everything per particle stays on the backend (on the GPU for CUDA runs): only the
// clusters of at least min_size particles and the size histogram come to the host. On several
// ranks each rank finds its own particles' components so, and join_ranks() (clusters_parallel.cpp)
// joins those that particles of different ranks link, on the host.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "pardyn/cell_list.hpp"
#include "pardyn/particles.hpp"
#include "pardyn/plugin.hpp"

namespace pardyn::plugins::clusters {

// Bins of the size histogram: bin b counts the clusters of 2^b .. 2^(b+1) - 1 particles.
constexpr int kBins = 32;
inline int size_bin(std::uint32_t size) {
  int b = 0;
  while (size >>= 1) ++b;
  return b;
}

// A component: the slot of its root and its number of particles.
struct Component {
  std::uint32_t root;
  std::uint32_t size;
};

// One analysis: the components of at least min_size particles (any order) and the histogram of
// all components' sizes (singletons included).
struct Found {
  std::vector<Component> big;
  std::uint64_t hist[kBins] = {};
};

// The steps on one backend: find() the components; label() then writes each particle's cluster id
// (id_of_big[i] for the component big[i], -1 elsewhere) to the store's label array `labels`
// (backend memory), by store index. Between the two, roots() copies to the host the root slot of
// every particle's component, by store index (what a parallel run joins across ranks).
class Finder {
 public:
  virtual ~Finder() = default;
  virtual void find(const CellList& cl, std::uint32_t min_size, Found& out) = 0;
  virtual void roots(const CellList& cl, std::vector<std::uint32_t>& root_of_index) = 0;
  virtual void label(const CellList& cl, const std::vector<Component>& big,
                     const std::vector<std::int32_t>& id_of_big, std::int32_t* labels) = 0;
};
std::unique_ptr<Finder> make_cpu_finder();

// A parallel run: the clusters over the particles of all ranks, from each rank's components.
// What every rank gives: its particles' positions and ids on the host (hp, by store index) and the
// root slot of each one's component (Finder::roots). What it gets: its components that belong to a
// cluster of at least min_size (big, by root slot) with that cluster's id (0 = the largest; equal
// sizes by the smallest particle id), and the totals, which rank 0 computes and sends to all.
struct Joined {
  std::vector<Component> big;
  std::vector<std::int32_t> id_of_big;
  std::uint64_t n = 0;             // particles of all ranks
  std::uint64_t n_clusters = 0;    // clusters of at least min_size
  std::uint64_t largest = 0;       // particles in the largest of them (0 if none)
  std::uint64_t clustered = 0;     // particles in all of them
  std::uint64_t hist[kBins] = {};  // rank 0 only: the sizes of all clusters, singletons included
};
// Collective: every rank calls it at the same analysis. precision: the store's (pairs are tested
// in it, as the cell list tests them).
void join_ranks(Comm& comm, const Box& box, Precision precision, double distance,
                std::uint32_t min_size, const HostParticles& hp,
                const std::vector<std::uint32_t>& root_of_index, Joined& out);
#if defined(PARDYN_PLUGIN_HAS_CUDA)
std::unique_ptr<Finder> make_cuda_finder();
#endif

}  // namespace pardyn::plugins::clusters
