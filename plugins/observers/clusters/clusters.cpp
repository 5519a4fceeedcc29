// SPDX-License-Identifier: BSD-3-Clause
// clusters: condensation analysis. Every observation, particles closer than `distance` are linked
// (friends-of-friends); the connected components are the clusters. Reports, in thermo, the number
// of clusters of at least `min_size` particles and the fraction of all particles in the largest, and
// gives every particle its cluster id (`cluster` in the VTK frames: 0 = the largest cluster, 1 the
// next, ...; -1 for particles in no cluster of min_size). Runs on the store's backend: the cell
// list is built and the union-find runs on the GPU for CUDA runs (Finder, clusters_finder.cpp). On
// several ranks each rank finds its own particles' components so, and join_ranks()
// (clusters_parallel.cpp) joins them across the ranks: the same clusters as one rank finds.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "clusters.hpp"
#include "pardyn/backend_choice.hpp"
#include "pardyn/cell_list.hpp"
#include "pardyn/output.hpp"
#include "pardyn/plugin_export.hpp"

namespace pardyn::plugins::clusters {

namespace {

class Clusters final : public Observer {
 public:
  Clusters(double distance, std::int64_t min_size) : distance_(distance), min_size_(min_size) {}

  // Runs with every observation of the other observers (thermo rows, frames): no steps of its own.
  std::uint64_t interval() const override { return ~std::uint64_t(0); }
  std::vector<std::string> columns() const override {
    return {"n_clusters", "largest_cluster_fraction", "clustered_fraction"};
  }
  std::vector<std::string> files() const override { return {"clusters.csv"}; }
  void begin(const RunInfo& run) override {
    if (!run.output_dir.empty() && run.rank == 0) path_ = run.output_dir + "/clusters.csv";
    rank_ = run.rank;
    stats_.on = run.ranks > 1 && std::getenv("PARDYN_PARALLEL_STATS");
    // A resumed run appends to the rows up to the checkpoint's step.
    append_ = !path_.empty() && run.resume && resume_csv(path_, run.resume_step);
  }

  void analyse(StepContext& ctx, Thermo& t, std::size_t first) override {
    if (ctx.run().comm && ctx.run().ranks > 1) {
      analyse_ranks(ctx, t, first);
      return;
    }
    ParticleStore& s = ctx.store();
    const std::size_t n = s.size();
    found_.big.clear();
    for (auto& h : found_.hist) h = 0;
    if (n) {
      finder(s).find(s, ctx.run().box, distance_);
      finder_->select(min_size32(), found_);
    }
    // Ids by decreasing size (ties: the smaller root first, deterministic: a component's root is
    // its smallest slot).
    std::vector<Component>& big = found_.big;
    std::sort(big.begin(), big.end(), [](const Component& a, const Component& b) {
      return a.size != b.size ? a.size > b.size : a.root < b.root;
    });
    ids_.resize(big.size());
    std::size_t clustered = 0;
    for (std::size_t c = 0; c < big.size(); ++c) {
      ids_[c] = std::int32_t(c);
      clustered += big[c].size;
    }
    std::int32_t* labels = s.label("cluster");  // made even for no particles: frames list it
    if (n) finder_->label(big, ids_, labels);
    const std::size_t largest = big.empty() ? 0 : big[0].size;
    set_columns(t, first, n, big.size(), largest, clustered);
    write_histogram(t, n, big.size(), clustered, found_.hist);
  }

  void observe(const ObserveContext&) override {}
  void end() override {
    if (file_) std::fclose(file_);
    file_ = nullptr;
    stats_.print(rank_, finder_ ? finder_->to_host() : 0);
    stats_.analyses = 0;  // printed once
  }
  ~Clusters() override { end(); }

 private:
  std::uint32_t min_size32() const {
    return std::uint32_t(std::min<std::int64_t>(min_size_, 0xffffffff));
  }

  // The finder for s's backend memory (made anew if the store changed backend).
  Finder& finder(const ParticleStore& s) {
    if (!finder_ || finder_memory_ != &s.memory()) {
      finder_ = std::make_unique<Finder>();
      finder_memory_ = &s.memory();
    }
    return *finder_;
  }

  // Several ranks: each rank's components, joined over the ranks by join_ranks().
  void analyse_ranks(StepContext& ctx, Thermo& t, std::size_t first) {
    ParticleStore& s = ctx.store();
    const RunInfo& run = ctx.run();
    Finder* f = nullptr;
    stats_.lap(-1, nullptr);
    if (s.size()) {
      f = &finder(s);
      f->find(s, run.box, distance_);
    }
    stats_.lap(JoinStats::kFind, f);
    join_ranks(*run.comm, run.box, run.dim, distance_, min_size32(), f, joined_, &stats_);
    std::int32_t* labels = s.label("cluster");
    if (f) f->label(joined_.big, joined_.id_of_big, labels);
    stats_.lap(JoinStats::kLabel, f);
    ++stats_.analyses;
    set_columns(t, first, joined_.n, joined_.n_clusters, joined_.largest, joined_.clustered);
    write_histogram(t, joined_.n, joined_.n_clusters, joined_.clustered, joined_.hist);
  }

  // The thermo columns; n: the particles of all ranks.
  static void set_columns(Thermo& t, std::size_t first, std::size_t n, std::size_t nbig,
                          std::size_t largest, std::size_t clustered) {
    const double nn = n ? double(n) : 1.0;
    if (first + 3 <= t.extra.size()) {
      t.extra[first] = double(nbig);
      t.extra[first + 1] = double(largest) / nn;
      t.extra[first + 2] = double(clustered) / nn;
    }
  }

  // clusters.csv (rank 0): one row per analysis, the number of clusters in each size bin (all
  // clusters, singletons included) and the mean size of the clusters of at least min_size.
  void write_histogram(const Thermo& t, std::size_t n, std::size_t nbig, std::size_t clustered,
                       const std::uint64_t (&hist)[kBins]) {
    if (path_.empty()) return;
    if (!file_ && append_) {
      file_ = std::fopen(path_.c_str(), "a");
      if (!file_) throw Error("clusters: cannot write " + path_ + ": " + std::strerror(errno));
      bins_ = size_bin(std::uint32_t(std::max<std::size_t>(n, 1))) + 1;
    }
    if (!file_) {
      file_ = std::fopen(path_.c_str(), "w");
      if (!file_) throw Error("clusters: cannot write " + path_ + ": " + std::strerror(errno));
      bins_ = size_bin(std::uint32_t(std::max<std::size_t>(n, 1))) + 1;
      std::fprintf(file_, "step,time,n_clusters,mean_cluster_size");
      for (int b = 0; b < bins_; ++b) {
        const unsigned long long lo = 1ull << b, hi = (2ull << b) - 1;
        if (lo == hi) std::fprintf(file_, ",size_%llu", lo);
        else std::fprintf(file_, ",size_%llu_%llu", lo, hi);
      }
      std::fprintf(file_, "\n");
    }
    std::fprintf(file_, "%llu,%.10g,%zu,%.10g", (unsigned long long)t.step, t.time, nbig,
                 nbig ? double(clustered) / double(nbig) : 0.0);
    for (int b = 0; b < bins_; ++b) std::fprintf(file_, ",%llu", (unsigned long long)hist[b]);
    std::fprintf(file_, "\n");
    std::fflush(file_);  // a run that dies keeps every row so far
  }

  bool append_ = false;
  double distance_;
  std::int64_t min_size_;
  std::unique_ptr<Finder> finder_;
  const MemoryResource* finder_memory_ = nullptr;
  Found found_;
  std::vector<std::int32_t> ids_;
  Joined joined_;
  JoinStats stats_;
  int rank_ = 0;
  std::string path_;
  std::FILE* file_ = nullptr;
  int bins_ = 0;
};

const char* const kDoc = R"(Cluster analysis for condensation (friends-of-friends). Two particles
closer than `distance` are linked; the connected components of these links are the clusters.
Computed at every observation of the other observers (each thermo row and each frame), on the
run's backend: a cell list finds the pairs and a union-find joins them (on the GPU for CUDA runs).
On several MPI ranks each rank finds the clusters of its own particles so; its particles near
another rank's (in neighbouring cells of a coarse grid, whose occupied cells the ranks exchange) go
to that rank, which links them to its own, and rank 0 joins the linked clusters and numbers them:
the same clusters, thermo columns and clusters.csv as a run on one rank (docs/analysis.md). There
clusters of equal size are numbered by their smallest particle id, on one rank by their place in
the cell list, so the ids of equal-size clusters may differ between the two.
Adds to thermo:
  n_clusters                 clusters with at least min_size particles
  largest_cluster_fraction   particles in the largest cluster / all particles
  clustered_fraction         particles in clusters of at least min_size / all particles
and to every VTK frame the per-particle Int32 field `cluster`: 0 for the largest cluster, 1 for the
next largest, ..., -1 for particles in no cluster of min_size (the gas).
Writes clusters.csv in the output folder, one row per analysis: step, time, n_clusters,
mean_cluster_size (particles per cluster of at least min_size), and the size histogram of all
clusters, singletons included: size_1, size_2_3, size_4_7, ... count the clusters of 2^b to
2^(b+1) - 1 particles (the droplet-size distribution, for coarsening plots).
A good `distance` is a little beyond the first peak of the pair distribution (for soft_gas with
its defaults, about 1.5: see docs/real-gas.md). Example:
  [[output]]
  type = "clusters"
  distance = 1.5
  min_size = 5)";

void register_clusters(Registrar& r) {
  FactoryInfo f;
  f.kind = PluginKind::Observer;
  f.name = "clusters";
  f.summary =
      "cluster (droplet) analysis: cluster ids per particle, cluster count and largest fraction";
  f.doc = kDoc;
  f.backends = kBuiltBackends;
  f.schema
      .real("distance", std::nullopt, "length",
            "linking length: particles closer than this are in one cluster", 0.0, std::nullopt,
            true)
      .integer("min_size", 2, "smallest number of particles counted as a cluster", 1,
               double(kMaxParticles));
  r.add(std::move(f), Factory<Observer>([](const ParamSet& p, const RunInfo&) {
          return std::unique_ptr<Observer>(new Clusters(p.real("distance"), p.integer("min_size")));
        }));
}

}  // namespace
}  // namespace pardyn::plugins::clusters

PARDYN_PLUGIN(pardyn::plugins::clusters::register_clusters)
