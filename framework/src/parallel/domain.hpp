// SPDX-License-Identifier: BSD-3-Clause
// Internal to libpardyn: spatial domain decomposition for short-range schemes (cell_list) in a
// parallel run. The box is cut into a grid of sub-boxes, one per rank, along its bounded (periodic
// or walled) axes; each rank owns the particles inside its sub-box. Forces come from a work store
// that holds the owned particles followed by ghosts: copies of other ranks' particles within the
// ghost width of the sub-box, shifted across periodic faces, gathered axis by axis (so edges and
// corners come through the faces) as in LAMMPS and HOOMD-blue.
//
// Ghosts are chosen again, and particles that left their sub-box move to their new rank, whenever
// some particle has moved more than `trigger` since the last choice (the same skin/2 argument as the
// Verlet list: a pair closer than the cut-off now was closer than cut-off + 2 trigger then); at every
// other force evaluation only the ghosts' positions travel.
#pragma once

#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "communicator.hpp"
#include "store_ops.hpp"

namespace pardyn::parallel {

class DeviceLink;

class Domain {
 public:
  // width: the ghost width (largest cut-off + skin of the cell-list terms); trigger: the largest
  // displacement allowed before ghosts are chosen again (half the smallest margin width - cut-off).
  Domain(Communicator& comm, const Box& box, int dim, double width, double trigger,
         Backend backend);
  ~Domain();

  // The grid of sub-boxes for K ranks whose sub-boxes are at least `width` wide ({0, 0, 0}: none).
  static std::array<int, 3> split(const Box& box, int dim, int K, double width);

  // Ghosts as far as `width` (if wider than so far), chosen again after moves of `trigger` (if
  // smaller): the far zones' reach, known once the particles are. Before the first prepare().
  void widen(double width, double trigger);
  bool fits(double width) const;  // whether every sub-box is at least `width` wide where cut
  double width() const { return width_; }
  double trigger() const { return trigger_; }

  // The rank whose sub-box holds position x (positions inside the box; periodic ones wrapped).
  int owner(const double* x) const;
  const std::array<int, 3>& grid() const { return p_; }
  std::string describe() const;
  bool device_links() const { return links_; }

  // Before a force evaluation (all ranks together): migrates and re-chooses ghosts when needed,
  // else refreshes the ghosts' positions; then the work store holds owned + ghosts. Returns true
  // when particles migrated (the store's particles changed).
  bool prepare(ParticleStore& s);
  ParticleStore& work() { return *work_; }
  // The forces of the work store's owned particles become the store's (which holds no others):
  // the acceleration arrays are exchanged, not copied.
  void take_forces(ParticleStore& s, bool energy);
  const Box& work_box() const { return work_box_; }
  std::size_t owned() const { return owned_; }
  std::size_t ghosts() const { return work_->size() - owned_; }
  std::uint64_t selections() const { return selections_; }

 private:
  struct Swap {
    IndexList idx;  // work-store indices sent
    double shift[3] = {0, 0, 0};
    int to = -1, from = -1;
    std::size_t offset = 0, count = 0;  // where the received ghosts land in the work store
    int tag = 0;
    int axis = 0;
    Stage send, recv;  // message buffers of the position refresh
  };
  void set_work_box();
  void migrate(ParticleStore& s);
  void select_ghosts(ParticleStore& s);
  void refresh(ParticleStore& s);
  int neighbour(int axis, int dir) const;  // rank one sub-box away along axis (-1: none)
  Slab slab(int axis, double lo_off, double hi_off) const;
  std::vector<char> exchange(int to, const std::vector<char>& out, int from, int tag);
  // GPU neighbours on this node: device-to-device links (CUDA IPC) instead of MPI through the host.
  DeviceLink& link(int peer, int tag, bool send);
  void select_ghosts_linked(ParticleStore& s);
  void refresh_linked();
  bool links_ = false;
  std::map<std::tuple<int, int, bool>, std::unique_ptr<DeviceLink>> link_map_;

  Communicator& comm_;
  Box box_;
  int dim_;
  double width_, trigger_;
  Backend backend_;
  std::array<int, 3> p_{1, 1, 1}, c_{0, 0, 0};
  double sub_lo_[3] = {0, 0, 0}, sub_hi_[3] = {0, 0, 0};
  Box work_box_;
  Unwrap unwrap_;  // cut periodic axes: positions to the image nearest the sub-box
  std::unique_ptr<ParticleStore> work_;
  std::vector<Swap> swaps_;
  IndexList mig_down_, mig_up_;
  Reference ref_;
  std::size_t owned_ = 0;
  std::uint64_t generation_ = ~std::uint64_t(0);
  std::uint64_t selections_ = 0;
  struct {
    double select = 0, refresh = 0, check = 0;
    double part[5] = {0, 0, 0, 0, 0};
    std::uint64_t refreshes = 0;
  } stats_;
  bool stats_on_ = false;  // PARDYN_PARALLEL_STATS: timings (synchronising the device)
  std::chrono::steady_clock::time_point lap_t_;
  void lap(int k);
};

}  // namespace pardyn::parallel
