// SPDX-License-Identifier: BSD-3-Clause
// Internal to libpardyn: the tree scheme on several ranks, through locally essential trees (Salmon
// 1991; Warren & Salmon 1993), on the backend where the particles live, as Bonsai does it (Bédorf,
// Gaburov & Portegies Zwart 2012; Bédorf et al. 2014). Each rank owns a compact piece of space (a
// parallel run with a tree term deals the particles out along a Morton curve at the start) and, at
// each evaluation of the tree term:
//   1. builds the scheme's tree over its own particles, and its region: the top of the tree as at
//      most 4096 boxes (tree_let.hpp), which every rank gets;
//   2. classifies its tree's nodes against every other rank's region, on the tree's backend
//      (tree_let.hpp): a node whose opening radius (the scheme's rcrit2: l/theta + delta, and the
//      law's short-range radius) the whole region lies beyond would be used as a whole by every
//      target there, so it travels as pseudo-particles (for quadrupole trees 2 dim points with its
//      mass, centre of mass and second moments; for monopole trees its descendants two levels
//      down); a leaf that must be opened travels particle by particle;
//   3. posts the transfers of those sources, from device memory: between GPUs of one node through
//      CUDA IPC (device_link.hpp; PARDYN_DEVICE_LINKS=0 switches that off), else through MPI,
//      straight from device memory when the library is CUDA-aware, else through pinned host
//      buffers, and completes them into one buffer on the device;
//   4. builds a second tree over the received sources alone and walks its own particles' groups
//      over it (Tree::targets), adding to the accelerations, energies and virials. Monopole trees
//      instead walk one tree over the own particles and the sources together (tree_exchange.cpp
//      says why), without the overlap below.
// On the GPU the walk of the own particles over the own tree starts right after step 1 on the
// default stream, and steps 1 (the region) to 4 (the sources' tree) run beside it on a side stream
// of the highest priority (gpu::SideWork, store_ops.hpp), with the host's waits for the other
// ranks; only the walk over the sources waits for both (measured, 2 H100s: the 10^7 real gas's
// loop 13 % shorter, the 10^7 Plummer sphere's 12 %, the 2D log's 17 %). A walk timed for the load
// balance runs alone.
// The accuracy is the tree's: every remote contribution is either exact (the particles) or the
// expansion the tree would use there, to second order. Energies are shared as on one rank: a
// particle gets half of each of its pairs' energies, from its own tree and from the sources (the
// other rank's particle gets the other half from what this rank sent it).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "communicator.hpp"
#include "pardyn/plugin.hpp"
#include "pardyn/tree.hpp"
#include "store_ops.hpp"

namespace pardyn::parallel {

class DeviceLink;
class TreeLet;
struct Region;

class TreeExchange {
 public:
  TreeExchange(Communicator& comm, int dim);
  ~TreeExchange();

  // All ranks together: builds own_scheme's tree over `own`, exchanges, and adds the term's
  // accelerations (and, as req asks, energies and virials) to own's particles, from own's tree and
  // from what the other ranks' trees sent. The caller zeroes them first (the walks add).
  // With work_seconds, the time of the own tree's build and of the walks (the device synchronised
  // around each; the own walk then does not overlap the transfers) is added to it: the measure of
  // the load balance.
  void compute(ParticleStore& own, Potential& potential, Scheme& own_scheme, const Box& box,
               const Reach& reach, const ForceRequest& req, double* work_seconds = nullptr);

  // Sources received at the last compute(), and statistics.
  std::size_t received() const { return received_; }
  std::uint64_t evaluations() const { return evaluations_; }
  double seconds() const { return seconds_; }
  // Whether the sources travel device to device (decided at the first compute()).
  bool device_links() const { return links_ == 1; }

 private:
  // The transfers: post() sends out[r] (count[r] sources of `per` bytes, packed) to every rank r
  // and starts receiving every rank's into dev at from[r] (backend memory); finish() completes
  // them. Device to device through CUDA IPC where every pair of ranks can (decided at the first
  // evaluation), else through MPI: from device memory when the library is CUDA-aware, else
  // through pinned host stages.
  void decide_links(Backend b);
  DeviceLink& link(int peer, bool send);
  void post(Backend b, const std::vector<std::uint64_t>& count, const std::vector<char*>& out,
            const std::vector<std::size_t>& from, std::size_t per, char* dev);
  void finish(Backend b, const std::vector<std::size_t>& from, std::size_t per, char* dev);
  // Monopole trees: the own particles and the m sources at dev in one tree (tree_exchange.cpp).
  void merged(ParticleStore& own, Potential& potential, const TreeOptions& opt, const char* dev,
              std::size_t m, const ForceRequest& req);

  Communicator& comm_;
  int dim_;
  std::unique_ptr<TreeLet> let_;
  std::unique_ptr<Region> mine_;
  std::vector<Region> all_;  // every rank's region
  int links_ = -1;           // -1: not decided yet
  std::map<std::pair<int, bool>, std::unique_ptr<DeviceLink>> link_map_;
  bool direct_ = false;
  std::vector<std::unique_ptr<Communicator::Request>> reqs_;
  std::vector<Stage> send_;  // per rank
  Stage recv_;               // every rank's sources, in rank order
  std::unique_ptr<ParticleStore> sources_;
  std::unique_ptr<ParticleStore> work_;  // monopole trees: the own particles, then the sources
  TreeBuilder remote_;
  // Statistics (PARDYN_PARALLEL_STATS=1 prints them at the end, =2 times each stage apart).
  static constexpr int kParts = 7;
  static const char* const kPartNames[kParts];
  int stats_ = 0;
  std::size_t owned_ = 0, received_ = 0, sent_ = 0;
  std::uint64_t evaluations_ = 0;
  double seconds_ = 0;
  double part_[kParts] = {};
};

// The order in which a run with a tree term deals particles to ranks: indices of `x` (dim arrays of
// n positions) sorted along a Morton curve of their bounding cube, ties by index. Rank r of K keeps
// a contiguous run of it.
std::vector<std::size_t> morton_order(const std::vector<double>* x, int dim, std::size_t n);
// The same order when each rank holds some of the particles: the rank each of this rank's n
// particles goes to, from splitters of the Morton keys in the bounding cube of all ranks'
// particles, placed by a sample of every rank's keys (1024 each) so that the ranks get shares in
// proportion to `weights` (empty: equal), to within the sample's resolution. All ranks together.
std::vector<int> morton_owners(const std::vector<double>* x, int dim, std::size_t n,
                               Communicator& comm, std::vector<double> weights);

}  // namespace pardyn::parallel
