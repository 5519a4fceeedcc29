// clusters: connected components of the "closer than `distance`" graph (the friends-of-friends
// criterion), found with a union-find over the cell list's neighbour list, on the store's backend.
// Everything per particle stays on the backend (on the GPU for CUDA runs): only the clusters of at
// least min_size particles and the size histogram come to the host.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "pardyn/cell_list.hpp"

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
// (backend memory), by store index.
class Finder {
 public:
  virtual ~Finder() = default;
  virtual void find(const CellList& cl, std::uint32_t min_size, Found& out) = 0;
  virtual void label(const CellList& cl, const std::vector<Component>& big,
                     const std::vector<std::int32_t>& id_of_big, std::int32_t* labels) = 0;
};
std::unique_ptr<Finder> make_cpu_finder();
#if defined(PARDYN_PLUGIN_HAS_CUDA)
std::unique_ptr<Finder> make_cuda_finder();
#endif

}  // namespace pardyn::plugins::clusters
