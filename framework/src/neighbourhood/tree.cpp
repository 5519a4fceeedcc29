// SPDX-License-Identifier: BSD-3-Clause
// TreeBuilder (pardyn/tree.hpp) and its CPU engine: the steps of tree_build.hpp in OpenMP loops.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "pardyn/backend_choice.hpp"
#include "pardyn/particles.hpp"
#include "tree_build.hpp"

namespace pardyn::tree_build {
namespace {

// Below these sizes a loop runs on one thread: a parallel region costs more than the work (and
// much more when the cores are shared).
constexpr int kSerial = 16384;
constexpr int kSerialNodes = 2048;

template <class Real>
struct Arrays {
  std::vector<Real> src, com, quad, rcrit2;
};

class CpuEngine final : public TypedEngine<CpuEngine> {
  friend TypedEngine<CpuEngine>;

  template <class Real>
  Arrays<Real>& arrays() {
    if constexpr (std::is_same_v<Real, float>) return f_;
    else return d_;
  }

  template <class Real, int Dim>
  void build_impl(const ParticleView<Real, Dim>& p, const TreeOptions& prm, Tree& out) {
    out = tree_header<Real, Dim>(p.n, Backend::Cpu, prm);
    if (out.n == 0) return;
    const int n = out.n;
    Arrays<Real>& a = arrays<Real>();
    const Frame f = frame(p, prm);
    sort(p, f, a);
    split_nodes<Dim>(n, prm.leaf_size);
    const int nodes = levels_.back();
    multipoles<Real, Dim>(prm, f, nodes, a);
    const int ngroups = walk_groups(nodes);

    out.nodes = nodes;
    out.groups = groups_.data();
    out.ngroups = ngroups;
    out.depth = int(levels_.size()) - 2;
    out.levels = levels_.data();
    out.perm = perm_.data();
    out.src = a.src.data();
    out.type = type_.data();
    out.links = links_.data();
    out.com = a.com.data();
    out.rcrit2 = a.rcrit2.data();
    out.quad = prm.quadrupole ? a.quad.data() : nullptr;
    out.built = true;
  }

  // The bounding cube of the particles.
  template <class Real, int Dim>
  Frame frame(const ParticleView<Real, Dim>& p, const TreeOptions& prm) {
    const int n = int(p.n);
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int d = 0; d < Dim; ++d) {
      double l = std::numeric_limits<double>::infinity(), h = -l;
#pragma omp parallel for reduction(min : l) reduction(max : h) if (n > kSerial)
      for (int i = 0; i < n; ++i) {
        l = std::min(l, double(p.x[d][i]));
        h = std::max(h, double(p.x[d][i]));
      }
      if (!std::isfinite(l) || !std::isfinite(h))
        throw Error("scheme \"tree\": a particle position is NaN or infinite (axis " +
                    std::to_string(d) + "); reduce the time step or check the initial conditions");
      lo[d] = l, hi[d] = h;
    }
    Frame f;
    f.theta = prm.theta;
    f.short_range = prm.short_range;
    double side = 0;
    for (int d = 0; d < Dim; ++d) side = std::max(side, hi[d] - lo[d]);
    side = side > 0 ? side * (1 + 1e-6) : 1.0;
    f.side = side;
    for (int d = 0; d < Dim; ++d) f.lo[d] = lo[d];
    return f;
  }

  // Keys, sorted with the store indices; the particles in their order.
  template <class Real, int Dim>
  void sort(const ParticleView<Real, Dim>& p, const Frame& f, Arrays<Real>& a) {
    const int n = int(p.n);
    pairs_.resize(n);
#pragma omp parallel for if (n > kSerial)
    for (int i = 0; i < n; ++i) {
      double x[3] = {0, 0, 0};
      for (int d = 0; d < Dim; ++d) x[d] = double(p.x[d][i]);
      pairs_[i] = {morton<Dim>(x, f), i};
    }
    std::sort(pairs_.begin(), pairs_.end());
    keys_.resize(n);
    perm_.resize(n);
    type_.resize(n);
    a.src.resize(4 * std::size_t(n));
#pragma omp parallel for if (n > kSerial)
    for (int k = 0; k < n; ++k) {
      const int i = pairs_[k].second;
      keys_[k] = pairs_[k].first;
      perm_[k] = i;
      type_[k] = p.type[i];
      for (int d = 0; d < 3; ++d) a.src[4 * std::size_t(k) + d] = d < Dim ? p.x[d][i] : Real(0);
      a.src[4 * std::size_t(k) + 3] = p.mass[i];
    }
  }

  // Nodes level by level from the root: links_, depth_ and levels_.
  template <int Dim>
  void split_nodes(int n, int leaf_size) {
    links_.assign(1, TreeLinks{0, 0, 0, n});
    depth_.assign(1, 0);
    std::vector<std::int32_t>& level = levels_;
    level.assign({0, 1});
    std::vector<int>& counts = counts_;
    for (;;) {
      const int lb = level[level.size() - 2], le = level.back();
      counts.resize(le - lb);
#pragma omp parallel for schedule(dynamic, 64) if (le - lb > kSerialNodes)
      for (int i = lb; i < le; ++i)
        counts[i - lb] = plan<Dim>(keys_.data(), links_[i], leaf_size, depth_[i]);
      int total = 0;
      for (int& c : counts) {
        const int t = c;
        c = total;
        total += t;
      }
      if (total == 0) break;
      links_.resize(le + total);
      depth_.resize(le + total);
#pragma omp parallel for schedule(dynamic, 64) if (le - lb > kSerialNodes)
      for (int i = lb; i < le; ++i) {
        const int next = i + 1 < le ? counts[i + 1 - lb] : total;
        if (next > counts[i - lb])
          emit<Dim>(keys_.data(), links_.data(), i, depth_[i], le + counts[i - lb]);
      }
      level.push_back(le + total);
    }
  }

  // Multipoles from the deepest level up.
  template <class Real, int Dim>
  void multipoles(const TreeOptions& prm, const Frame& f, int nodes, Arrays<Real>& a) {
    a.com.resize(4 * std::size_t(nodes));
    a.rcrit2.resize(nodes);
    a.quad.resize(prm.quadrupole ? std::size_t(kQuadTerms<Dim>) * nodes : 0);
    for (std::size_t l = levels_.size() - 1; l-- > 0;) {
      const int lb = levels_[l], le = levels_[l + 1];
#pragma omp parallel for schedule(dynamic, 64) if (le - lb > kSerialNodes)
      for (int i = lb; i < le; ++i) {
        if (prm.quadrupole)
          moments<Real, Dim, true>(i, links_.data(), keys_.data(), depth_.data(), a.src.data(),
                                   a.com.data(), a.quad.data(), a.rcrit2.data(), f);
        else
          moments<Real, Dim, false>(i, links_.data(), keys_.data(), depth_.data(), a.src.data(),
                                    a.com.data(), nullptr, a.rcrit2.data(), f);
      }
    }
  }

  // The walk groups; returns their number.
  int walk_groups(int nodes) {
    std::vector<int>& counts = counts_;
    counts.resize(nodes + 1);
#pragma omp parallel for schedule(dynamic, 256) if (nodes > kSerialNodes)
    for (int i = 0; i < nodes; ++i) counts[i] = node_groups(links_.data(), i, nullptr);
    int ngroups = 0;
    for (int i = 0; i < nodes; ++i) {
      const int c = counts[i];
      counts[i] = ngroups;
      ngroups += c;
    }
    groups_.resize(ngroups);
#pragma omp parallel for schedule(dynamic, 256) if (nodes > kSerialNodes)
    for (int i = 0; i < nodes; ++i) node_groups(links_.data(), i, groups_.data() + counts[i]);
    return ngroups;
  }

  std::vector<std::pair<std::uint64_t, std::int32_t>> pairs_;
  std::vector<std::uint64_t> keys_;
  std::vector<std::int32_t> perm_, type_;
  std::vector<TreeLinks> links_;
  std::vector<TreeGroup> groups_;
  std::vector<int> depth_, counts_;
  std::vector<std::int32_t> levels_;
  Arrays<float> f_;
  Arrays<double> d_;
};

}  // namespace

std::unique_ptr<TreeEngine> make_cpu_engine() { return std::make_unique<CpuEngine>(); }

}  // namespace pardyn::tree_build

namespace pardyn {

struct TreeBuilder::Impl {
  BackendChoice<tree_build::TreeEngine> engine{"the tree", tree_build::make_cpu_engine,
                                               PARDYN_CUDA_ONLY(tree_build::make_cuda_engine)};
  Tree tree;
};

TreeBuilder::TreeBuilder() : impl_(std::make_unique<Impl>()) {}
TreeBuilder::~TreeBuilder() = default;

const Tree& TreeBuilder::build(const ParticleStore& s, const TreeOptions& opt) {
  Impl& m = *impl_;
  m.engine.on(s.backend()).build(s, opt, m.tree);
  return m.tree;
}

const Tree& TreeBuilder::tree() const { return impl_->tree; }

}  // namespace pardyn
