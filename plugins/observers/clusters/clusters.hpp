// SPDX-License-Identifier: BSD-3-Clause
// clusters: connected components of the "closer than `distance`" graph (the friends-of-friends
// criterion), found with a union-find over the cell list built for `distance`, on the store's
// backend (on the GPU for CUDA runs; the per-particle functors of clusters_kernels.hpp, the same
// code for both backends). On one rank only the clusters of at least min_size particles and the
// size histogram come to the host. On several ranks each rank finds its own particles' components
// so, and join_ranks() (clusters_parallel.cpp) joins those that particles of different ranks link:
// what comes to the host is a bitmap of coarse cells, the particles near other ranks' and the
// components' records.
#pragma once

#include <cstdint>
#include <vector>

#include "clusters_kernels.hpp"
#include "pardyn/backend_buffer.hpp"
#include "pardyn/cell_list.hpp"
#include "pardyn/particles.hpp"
#include "pardyn/plugin.hpp"

namespace pardyn::plugins::clusters {

// One analysis on one rank: the components of at least min_size particles (any order) and the
// histogram of all components' sizes (singletons included).
struct Found {
  std::vector<Component> big;
  std::uint64_t hist[kBins] = {};
};

// The components of a store's particles, on its backend. find() first; then, on one rank,
// select() and label(); in a parallel run the steps join_ranks() takes (occupy() .. components())
// and label().
class Finder {
 public:
  // The components of s's particles (at least one): the cell list for `distance` (the particles
  // sorted by cell; no neighbour list: the union-find walks the cells around each particle's)
  // and the union-find, on s's backend. Returns the cell list.
  const CellList& find(const ParticleStore& s, const Box& box, double distance);
  // The components of at least min_size particles and the histogram.
  void select(std::uint32_t min_size, Found& out);
  // Each particle's cluster id in `labels` (backend memory, by store index): id_of_big[i] for the
  // component big[i], -1 elsewhere.
  void label(const std::vector<Component>& big, const std::vector<std::int32_t>& id_of_big,
             std::int32_t* labels);

  // --- The steps of a parallel run's join (join_ranks), in this order ---
  const CellList& list() const;
  // The cells of g that the particles occupy (bit c of bits[c / 64]); notes each component's
  // smallest particle id.
  void occupy(const CoarseGrid& g, std::vector<std::uint64_t>& bits);
  // Marks the components with a particle in a cell of `boundary`; returns the particles in the
  // cells of `send` (bitmaps over g's cells).
  void boundary(const CoarseGrid& g, const std::vector<std::uint64_t>& boundary,
                const std::vector<std::uint64_t>& send, std::vector<Outgoing>& out);
  // The pairs closer than `distance` between other ranks' particles and this rank's.
  void link(const std::vector<Incoming>& in, std::vector<Edge>& edges);
  // The marked components (by slot), the others of min_size (by slot) and the histogram of the
  // others' sizes.
  void components(std::uint32_t min_size, std::vector<CompRec>& boundary,
                  std::vector<CompRec>& inner_big, std::uint64_t (&hist)[kBins]);

  // Waits for the backend's work so far (timing).
  void sync();
  // Bytes copied from the backend to the host so far.
  std::uint64_t to_host() const { return to_host_; }

 private:
  // Calls f(Real(), std::integral_constant<int, Dim>()) for the store's precision and dimension.
  template <class F>
  void typed(F&& f) const;
  // Zeroed counters on the backend, n of them; read_counters() copies them to the host, where
  // counter(k) reads them.
  std::uint64_t* counters(std::size_t n);
  void read_counters(std::size_t n);
  std::uint64_t counter(std::size_t k) const { return host_counters_[k]; }
  // After a functor appended `needed` entries to `list`: true when they all fit; else false, with
  // room for them made (the functor then runs again).
  template <class T>
  bool fits(BackendBuffer<T>& list, std::uint64_t needed);
  // The first n entries of `from` into `to` (counted in to_host()).
  template <class T>
  void download(const BackendBuffer<T>& from, std::vector<T>& to, std::uint64_t n);

  CellListBuilder builder_;
  const ParticleStore* store_ = nullptr;
  const CellList* cl_ = nullptr;
  MemoryResource* mem_ = nullptr;
  Box box_;
  double distance_ = 0;

  BackendBuffer<std::uint32_t> parent_, size_, flag_;
  BackendBuffer<std::int64_t> min_id_;
  BackendBuffer<std::int32_t> ids_, id_of_root_;
  BackendBuffer<std::uint64_t> counters_, bits_, boundary_bits_, send_bits_;
  BackendBuffer<Component> big_;
  BackendBuffer<Outgoing> out_;
  BackendBuffer<Incoming> in_;
  BackendBuffer<Edge> edges_;
  BackendBuffer<CompRec> boundary_, inner_;
  std::vector<std::uint64_t> host_counters_;
  std::uint64_t to_host_ = 0;
};

// PARDYN_PARALLEL_STATS: where a parallel run's analyses spend their time on each rank (wall
// seconds with the backend synchronised at each lap, and this process's CPU seconds), and what
// comes to the host from the backend and goes to other ranks.
struct JoinStats {
  enum Part {
    kFind,
    kGrid,
    kOccupy,
    kBoundary,
    kExchange,
    kLink,
    kComponents,
    kNumber,
    kLabel,
    kParts
  };
  static constexpr const char* kNames[kParts] = {
      "find", "grid", "occupy", "boundary", "exchange", "link", "components", "number", "label"};
  bool on = false;
  double wall[kParts] = {}, cpu[kParts] = {};
  std::uint64_t analyses = 0, sent = 0;
  // Ends the current part (the backend's work finished first).
  void lap(int part, Finder* f);
  // The summary line of rank `rank`, to_host: the finder's bytes to the host.
  void print(int rank, std::uint64_t to_host) const;

 private:
  double t_ = -1, c_ = 0;
};

// A parallel run: the clusters over the particles of all ranks, from each rank's components
// (Finder::find). What every rank gets: its components that belong to a cluster of at least
// min_size (big, by root slot) with that cluster's id (0 = the largest; equal sizes by the
// smallest particle id), and the totals, which rank 0 computes and sends to all.
struct Joined {
  std::vector<Component> big;
  std::vector<std::int32_t> id_of_big;
  std::uint64_t n = 0;             // particles of all ranks
  std::uint64_t n_clusters = 0;    // clusters of at least min_size
  std::uint64_t largest = 0;       // particles in the largest of them (0 if none)
  std::uint64_t clustered = 0;     // particles in all of them
  std::uint64_t hist[kBins] = {};  // rank 0 only: the sizes of all clusters, singletons included
};
// Collective: every rank calls it at the same analysis, with the finder of its particles (null
// where the rank has none). stats: null, or where to add the time of each part.
void join_ranks(Comm& comm, const Box& box, int dim, double distance, std::uint32_t min_size,
                Finder* finder, Joined& out, JoinStats* stats = nullptr);

}  // namespace pardyn::plugins::clusters
