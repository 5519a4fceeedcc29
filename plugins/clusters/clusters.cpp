// clusters: condensation analysis. Every observation, particles closer than `distance` are linked
// (friends-of-friends); the connected components are the clusters. Reports, in thermo, the number
// of clusters of at least `min_size` particles and the fraction of all particles in the largest, and
// gives every particle its cluster id (`cluster` in the VTK frames: 0 = the largest cluster, 1 the
// next, ...; -1 for particles in no cluster of min_size). Runs on the store's backend: the cell
// list is built and the union-find runs on the GPU for CUDA runs.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "clusters.hpp"
#include "pardyn/cell_list.hpp"
#include "pardyn/plugin.hpp"

namespace pardyn::plugins::clusters {

void roots_cpu(const CellList& cl, std::vector<std::uint32_t>& parent) {
  const std::size_t n = cl.n;
  parent.resize(n);
  std::iota(parent.begin(), parent.end(), 0u);
  auto find = [&](std::uint32_t x) {
    while (parent[x] != x) {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  };
  for (std::size_t k = 0; k < n; ++k)
    for (std::uint32_t m = 0; m < cl.nl_count[k]; ++m) {
      const std::uint32_t j = cl.neighbour(k, m);
      if (j <= k) continue;
      std::uint32_t a = find(std::uint32_t(k)), b = find(j);
      if (a == b) continue;
      if (a < b) std::swap(a, b);
      parent[a] = b;
    }
  for (std::size_t k = 0; k < n; ++k) parent[k] = find(std::uint32_t(k));
}

namespace {

class Clusters final : public Observer {
public:
  Clusters(double distance, std::int64_t min_size) : distance_(distance), min_size_(min_size) {}

  // Runs with every observation of the other observers (thermo rows, frames): no steps of its own.
  std::uint64_t interval() const override { return ~std::uint64_t(0); }
  std::vector<std::string> columns() const override {
    return {"n_clusters", "largest_cluster_fraction", "clustered_fraction"};
  }

  void analyse(StepContext& ctx, Thermo& t, std::size_t first) override {
    ParticleStore& s = ctx.store();
    const std::size_t n = s.size();
    CellListOptions o;
    o.cutoff = distance_;
    o.skin = 0;
    o.neighbour_list = true;
    builder_.update(s, ctx.run().box, o);
    const CellList& cl = builder_.list();
    if (s.backend() == Backend::Cuda) {
#if defined(PARDYN_PLUGIN_HAS_CUDA)
      device_.compute(cl, roots_, order_);
#else
      throw Error("clusters: this plugin was built without CUDA; use backend = \"cpu\"");
#endif
    } else {
      roots_cpu(cl, roots_);
      order_.assign(cl.order, cl.order + n);
    }
    // Sizes per root, then ids by decreasing size (ties: the smaller root first, deterministic).
    std::vector<std::uint32_t> size(n, 0);
    for (std::size_t k = 0; k < n; ++k) ++size[roots_[k]];
    std::vector<std::uint32_t> big;
    for (std::size_t k = 0; k < n; ++k)
      if (roots_[k] == k && std::int64_t(size[k]) >= min_size_) big.push_back(std::uint32_t(k));
    std::sort(big.begin(), big.end(), [&](std::uint32_t a, std::uint32_t b) {
      return size[a] != size[b] ? size[a] > size[b] : a < b;
    });
    std::vector<std::int32_t> id_of_root(n, -1);
    std::size_t clustered = 0;
    for (std::size_t c = 0; c < big.size(); ++c) {
      id_of_root[big[c]] = std::int32_t(c);
      clustered += size[big[c]];
    }
    labels_.assign(n, -1);
    for (std::size_t k = 0; k < n; ++k) labels_[order_[k]] = id_of_root[roots_[k]];
    std::int32_t* dst = s.label("cluster");
    s.memory().copy_from_host(dst, labels_.data(), n * sizeof(std::int32_t));

    const double nn = n ? double(n) : 1.0;
    if (first + 3 <= t.extra.size()) {
      t.extra[first] = double(big.size());
      t.extra[first + 1] = big.empty() ? 0.0 : double(size[big[0]]) / nn;
      t.extra[first + 2] = double(clustered) / nn;
    }
  }

  void observe(const ObserveContext&) override {}

private:
  double distance_;
  std::int64_t min_size_;
  CellListBuilder builder_;
#if defined(PARDYN_PLUGIN_HAS_CUDA)
  DeviceRoots device_;
#endif
  std::vector<std::uint32_t> roots_, order_;
  std::vector<std::int32_t> labels_;
};

const char* const kDoc = R"(Cluster analysis for condensation (friends-of-friends). Two particles
closer than `distance` are linked; the connected components of these links are the clusters.
Computed at every observation of the other observers (each thermo row and each frame), on the
run's backend: a cell list finds the pairs and a union-find joins them (on the GPU for CUDA runs).
Not available in parallel runs (several MPI ranks): the run is refused; run on one rank.
Adds to thermo:
  n_clusters                 clusters with at least min_size particles
  largest_cluster_fraction   particles in the largest cluster / all particles
  clustered_fraction         particles in clusters of at least min_size / all particles
and to every VTK frame the per-particle Int32 field `cluster`: 0 for the largest cluster, 1 for the
next largest, ..., -1 for particles in no cluster of min_size (the gas).
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
  f.summary = "cluster (droplet) analysis: cluster ids per particle, cluster count and largest fraction";
  f.doc = kDoc;
#if defined(PARDYN_PLUGIN_HAS_CUDA)
  f.backends = kCpu | kCuda;
#else
  f.backends = kCpu;
#endif
  f.schema.real("distance", std::nullopt, "length", "linking length: particles closer than this are in one cluster", 0.0, std::nullopt, true)
      .integer("min_size", 2, "smallest number of particles counted as a cluster", 1);
  r.add(std::move(f), Factory<Observer>([](const ParamSet& p, const RunInfo& run) {
          // Clusters span the particles of several ranks, and the union-find sees one rank's only.
          if (run.ranks > 1)
            throw Error(
                "clusters" + (p.context.empty() ? std::string() : " (" + p.context + ")") +
                ": the cluster analysis does not run in parallel: it links only the particles of "
                "one rank, and this run has " + std::to_string(run.ranks) +
                " ranks. Run the scenario with clusters on one rank (without mpirun, or "
                "mpirun -np 1), or remove its [[output]] type = \"clusters\" block for the "
                "parallel run");
          return std::unique_ptr<Observer>(new Clusters(p.real("distance"), p.integer("min_size")));
        }));
}

}  // namespace
}  // namespace pardyn::plugins::clusters

PARDYN_PLUGIN(pardyn::plugins::clusters::register_clusters)
