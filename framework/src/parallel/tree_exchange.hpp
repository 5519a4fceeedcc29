// Internal to libpardyn: the tree scheme on several ranks, through locally essential trees (Salmon
// 1991; Warren & Salmon 1993). Each rank owns a compact piece of space (a parallel run with a tree
// term deals the particles out along a Morton curve at the start) and, before each evaluation of
// the tree term:
//   1. builds the scheme's tree over its own particles;
//   2. tells every rank its region: the top of its tree as at most 4096 boxes (tree_let.hpp);
//   3. classifies its tree's nodes against every other rank's region, on the tree's backend
//      (tree_let.hpp): a node whose opening radius (the scheme's rcrit2: l/theta + delta, and the
//      law's short-range radius) the whole region lies beyond would be used as a whole by every
//      target there, so it travels as pseudo-particles (for quadrupole trees 2 dim points with its
//      mass, centre of mass and second moments; for monopole trees its descendants two levels
//      down); a leaf that must be opened travels particle by particle;
//   4. sends and receives the sources from device memory: between GPUs of one node through CUDA
//      IPC (device_link.hpp; PARDYN_DEVICE_LINKS=0 switches that off), else through MPI, straight
//      from device memory when the library is CUDA-aware, else through pinned host buffers;
//   5. builds the work store (its own particles, then the received sources: mass, type, id -1),
//      and the caller evaluates the term on it with the same scheme and keeps the forces of its
//      own particles.
// The accuracy is the tree's: every remote contribution is either exact (the particles) or the
// expansion the tree would use there, to second order. Forces on the received sources are computed
// and thrown away.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "communicator.hpp"
#include "pardyn/plugin.hpp"
#include "store_ops.hpp"

namespace pardyn::parallel {

class DeviceLink;
class TreeLet;
struct Region;

class TreeExchange {
 public:
  TreeExchange(Communicator& comm, int dim);
  ~TreeExchange();

  // All ranks together: builds `scheme`'s tree over s, exchanges, and returns the work store (s's
  // particles first, in order, then the sources from the other ranks).
  ParticleStore& prepare(ParticleStore& s, Scheme& scheme, const Box& box, const Reach& reach);
  std::size_t owned() const { return owned_; }
  // Sources received at the last prepare(), and their sum since the start (statistics).
  std::size_t received() const { return received_; }
  std::uint64_t evaluations() const { return evaluations_; }
  double seconds() const { return seconds_; }

 private:
  Communicator& comm_;
  int dim_;
  // The transfers (tree_exchange.cpp): post() sends out[r] (count[r] sources of `per` bytes, the
  // packing finished first) to every rank r and starts receiving every rank's into dev at
  // from[r] (backend memory); finish() completes them. Device to device through CUDA IPC where
  // every pair of ranks can (decided at the first evaluation), else through MPI: from device
  // memory when the library is CUDA-aware, else through pinned host stages.
  void decide_links(Backend b);
  DeviceLink& link(int peer, bool send);
  void post(Backend b, const std::vector<std::uint64_t>& count, const std::vector<char*>& out,
            const std::vector<std::size_t>& from, std::size_t per, char* dev);
  void finish(Backend b, const std::vector<std::size_t>& from, std::size_t per, char* dev);
  void transfer(Backend b, const std::vector<std::uint64_t>& count, const std::vector<char*>& out,
                const std::vector<std::size_t>& from, std::size_t per, char* dev) {
    post(b, count, out, from, per, dev);
    finish(b, from, per, dev);
  }

  std::unique_ptr<ParticleStore> work_;
  std::unique_ptr<TreeLet> let_;
  std::unique_ptr<Region> mine_;
  int links_ = -1;  // -1: not decided yet
  std::map<std::pair<int, bool>, std::unique_ptr<DeviceLink>> link_map_;
  bool direct_ = false;
  std::vector<std::unique_ptr<Communicator::Request>> reqs_;
  std::vector<Stage> send_;
  Stage recv_;
  std::size_t owned_ = 0, received_ = 0;
  std::uint64_t evaluations_ = 0;
  double seconds_ = 0;
  double part_[4] = {0, 0, 0, 0};  // own tree and region, walks, messages, work store
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
