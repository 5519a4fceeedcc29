// clusters: connected components of the "closer than `distance`" graph (the friends-of-friends
// criterion), found with a union-find over the cell list's neighbour list, on the store's backend.
#pragma once

#include <cstdint>
#include <vector>

#include "pardyn/cell_list.hpp"

namespace pardyn::plugins::clusters {

// For every slot k of the cell list, the slot of the root of its component (any representative that
// is the same for all slots of one component), written to host memory.
void roots_cpu(const CellList& cl, std::vector<std::uint32_t>& roots);
#if defined(PARDYN_PLUGIN_HAS_CUDA)
class DeviceRoots {
public:
  DeviceRoots();
  ~DeviceRoots();
  DeviceRoots(const DeviceRoots&) = delete;
  DeviceRoots& operator=(const DeviceRoots&) = delete;
  // The same from a cell list in device memory; also copies the slot -> store order to the host.
  void compute(const CellList& cl, std::vector<std::uint32_t>& roots,
               std::vector<std::uint32_t>& order);

private:
  std::uint32_t* parent_ = nullptr;
  std::size_t capacity_ = 0;
};
#endif

}  // namespace pardyn::plugins::clusters
