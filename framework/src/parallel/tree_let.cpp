// SPDX-License-Identifier: BSD-3-Clause
// What one rank's tree sends another (tree_let.hpp): the host's part, which chooses the region's
// nodes and runs the functors on the tree's backend.
#include "tree_let.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "backend/index_loops.hpp"

namespace pardyn::parallel {

namespace {

// The precision and dimension of a typed view.
template <class V>
struct ViewOf;
template <class R, int D>
struct ViewOf<TreeView<R, D>> {
  using real = R;
  static constexpr int dim = D;
};

// f(view) with the tree's typed view.
template <class F>
void with_view(const Tree& t, F&& f) {
  if (t.dim == 3) {
    if (t.precision == Precision::Float) f(t.view<float, 3>());
    else f(t.view<double, 3>());
  } else {
    if (t.precision == Precision::Float) f(t.view<float, 2>());
    else f(t.view<double, 2>());
  }
}

// n values of T to the device side of a stage (through its host side).
template <class T>
T* upload(Stage& st, Backend b, const T* data, std::size_t n) {
  const std::size_t bytes = n * sizeof(T);
  std::memcpy(st.host(b, bytes), data, bytes);
  st.to_device(b, bytes);
  return reinterpret_cast<T*>(st.device(b, bytes));
}

}  // namespace

// The region's nodes: region node k stands for tree node `node`; its children are region nodes
// [child, child + nchild).
struct TreeLet::Node {
  std::int32_t node = 0;
  TreeLinks links{};
  double rcrit2 = 0;
  std::int32_t child = 0, nchild = 0;
};

TreeLet::TreeLet() = default;
TreeLet::~TreeLet() = default;

void TreeLet::region(const Tree& t, Region& out) {
  out.count = 0;
  if (!t.built || t.n == 0 || t.nodes == 0) return;
  const std::vector<Node> rn = select(t);
  const std::vector<std::array<double, 6>> box = boxes(t, rn);
  // Depth-first pre-order, with the index after each subtree.
  std::vector<std::int32_t> size(rn.size(), 1);
  for (std::size_t k = rn.size(); k-- > 0;)
    for (std::int32_t c = rn[k].child; c < rn[k].child + rn[k].nchild; ++c)
      size[k] += size[std::size_t(c)];
  std::vector<std::int32_t> stack{0};
  std::int32_t pos = 0;
  while (!stack.empty()) {
    const std::size_t k = std::size_t(stack.back());
    stack.pop_back();
    RegionBox& o = out.box[std::size_t(pos)];
    for (std::size_t d = 0; d < 3; ++d) {
      o.centre[d] = 0.5 * (box[k][d] + box[k][3 + d]);
      o.half[d] = 0.5 * (box[k][3 + d] - box[k][d]);
    }
    o.skip = pos + size[k];
    o.leaf = rn[k].nchild == 0 ? 1 : 0;
    ++pos;
    for (std::int32_t c = rn[k].child + rn[k].nchild; c-- > rn[k].child;) stack.push_back(c);
  }
  out.count = pos;
}

// Nodes split largest (by opening radius) first, a round per level of the region, while the
// region has room for their children. The links and opening radii of the tree's top levels (up to
// kTopNodes nodes) come down in one copy; a round that reaches below them copies its new nodes
// alone. Each copy is a wait for the device, which may be busy with the own walk (TreeExchange
// runs this beside it): on a 2D gas the region lies within the top levels, so one wait.
std::vector<TreeLet::Node> TreeLet::select(const Tree& t) {
  constexpr std::int32_t kTopNodes = 32768;
  const Backend b = t.backend;
  std::vector<Node> rn;
  // Copies the links and opening radii of nodes ids[0, n) to the host stages.
  auto fetch = [&](const std::int32_t* ids, std::size_t n) {
    const std::int32_t* dev_ids = upload(ids_, b, ids, n);
    auto* links = reinterpret_cast<TreeLinks*>(nodes_.device(b, n * sizeof(TreeLinks)));
    auto* radii = reinterpret_cast<double*>(radii_.device(b, n * sizeof(double)));
    with_view(t, [&](auto v) {
      using V = decltype(v);
      for_each_index(
          b, n,
          let::GatherNodes<typename ViewOf<V>::real, ViewOf<V>::dim>{v, dev_ids, links, radii});
    });
    nodes_.to_host(b, n * sizeof(TreeLinks));
    radii_.to_host(b, n * sizeof(double));
    sync(b);
  };
  // The top levels [0, top): whole levels while they fit in kTopNodes.
  std::int32_t top = 1;
  for (int l = 1; l <= t.depth + 1 && t.levels[l] <= kTopNodes; ++l) top = t.levels[l];
  top = std::min(top, t.nodes);
  top_links_.resize(std::size_t(top));
  top_radii_.resize(std::size_t(top));
  {
    std::vector<std::int32_t> all(static_cast<std::size_t>(top));
    for (std::int32_t k = 0; k < top; ++k) all[std::size_t(k)] = k;
    fetch(all.data(), all.size());
    std::memcpy(top_links_.data(), nodes_.host(b, all.size() * sizeof(TreeLinks)),
                all.size() * sizeof(TreeLinks));
    std::memcpy(top_radii_.data(), radii_.host(b, all.size() * sizeof(double)),
                all.size() * sizeof(double));
  }
  auto gather = [&](const std::vector<std::int32_t>& ids) {
    const std::size_t n = ids.size();
    const bool cached =
        std::all_of(ids.begin(), ids.end(), [&](std::int32_t i) { return i < top; });
    if (!cached) fetch(ids.data(), n);
    const auto* hl = reinterpret_cast<const TreeLinks*>(nodes_.host(b, n * sizeof(TreeLinks)));
    const auto* hr = reinterpret_cast<const double*>(radii_.host(b, n * sizeof(double)));
    for (std::size_t k = 0; k < n; ++k) {
      Node r;
      r.node = ids[k];
      r.links = cached ? top_links_[std::size_t(ids[k])] : hl[k];
      r.rcrit2 = cached ? top_radii_[std::size_t(ids[k])] : hr[k];
      rn.push_back(r);
    }
  };
  gather({0});
  std::vector<std::int32_t> frontier{0}, next;
  while (!frontier.empty()) {
    std::stable_sort(frontier.begin(), frontier.end(), [&](std::int32_t a, std::int32_t c) {
      return rn[std::size_t(a)].rcrit2 > rn[std::size_t(c)].rcrit2;
    });
    next.clear();
    std::size_t total = rn.size();
    for (const std::int32_t f : frontier) {
      Node& r = rn[std::size_t(f)];
      if (r.links.nchild == 0 || total + std::size_t(r.links.nchild) > std::size_t(kRegionBoxes))
        continue;  // a leaf of the region
      r.child = std::int32_t(total);
      r.nchild = r.links.nchild;
      total += std::size_t(r.nchild);
      for (std::int32_t c = r.links.child; c < r.links.child + r.links.nchild; ++c)
        next.push_back(c);
    }
    if (next.empty()) break;
    const std::size_t start = rn.size();
    gather(next);
    frontier.clear();
    for (std::size_t k = start; k < rn.size(); ++k) frontier.push_back(std::int32_t(k));
  }
  return rn;
}

// The region nodes' boxes (lo[3], hi[3]): the leaves' around their particles, measured in chunks
// on the backend; inner ones the union of their children's (which come after their parents).
std::vector<std::array<double, 6>> TreeLet::boxes(const Tree& t, const std::vector<Node>& rn) {
  const Backend b = t.backend;
  std::vector<std::int32_t> leaf_of;
  for (std::size_t k = 0; k < rn.size(); ++k)
    if (rn[k].nchild == 0) leaf_of.push_back(std::int32_t(k));
  const std::size_t nl = leaf_of.size();
  std::vector<std::int32_t> ranges(3 * nl + 1);  // begin[nl], end[nl], first chunk[nl + 1]
  std::int32_t chunks = 0;
  for (std::size_t L = 0; L < nl; ++L) {
    const TreeLinks& l = rn[std::size_t(leaf_of[L])].links;
    ranges[L] = l.begin;
    ranges[nl + L] = l.end;
    ranges[2 * nl + L] = chunks;
    chunks += (l.end - l.begin + let::kChunk - 1) / let::kChunk;
  }
  ranges[3 * nl] = chunks;
  const std::int32_t* dr = upload(leaves_, b, ranges.data(), ranges.size());
  auto* cb = reinterpret_cast<double*>(chunks_.device(b, 6 * std::size_t(chunks) * sizeof(double)));
  auto* lb = reinterpret_cast<double*>(boxes_.device(b, 6 * nl * sizeof(double)));
  with_view(t, [&](auto v) {
    using V = decltype(v);
    for_each_index(b, std::size_t(chunks),
                   let::ChunkBoxes<typename ViewOf<V>::real, ViewOf<V>::dim>{
                       v, dr, dr + nl, dr + 2 * nl, int(nl), cb});
  });
  for_each_index(b, nl, let::LeafBoxes{cb, dr + 2 * nl, t.dim, lb});
  boxes_.to_host(b, 6 * nl * sizeof(double));
  sync(b);
  const auto* hb = reinterpret_cast<const double*>(boxes_.host(b, 6 * nl * sizeof(double)));
  std::vector<std::array<double, 6>> box(rn.size());
  for (std::size_t L = 0; L < nl; ++L)
    std::copy(hb + 6 * L, hb + 6 * L + 6, box[std::size_t(leaf_of[L])].begin());
  for (std::size_t k = rn.size(); k-- > 0;) {
    const Node& r = rn[k];
    if (r.nchild == 0) continue;
    box[k] = box[std::size_t(r.child)];
    for (std::int32_t c = r.child + 1; c < r.child + r.nchild; ++c)
      for (std::size_t d = 0; d < 3; ++d) {
        box[k][d] = std::min(box[k][d], box[std::size_t(c)][d]);
        box[k][3 + d] = std::max(box[k][3 + d], box[std::size_t(c)][3 + d]);
      }
  }
  return box;
}

std::size_t TreeLet::count(const Tree& t, const Region& r) {
  counted_ = 0;
  if (r.count == 0 || !t.built || t.nodes == 0) return 0;
  if (!t.levels) throw Error("internal: a tree without its levels in the tree exchange");
  const Backend b = t.backend;
  const std::size_t nodes = std::size_t(t.nodes);
  const RegionBox* region = upload(region_, b, r.box, std::size_t(r.count));
  auto* state = reinterpret_cast<std::uint8_t*>(state_.device(b, nodes));
  auto* counts = reinterpret_cast<std::int64_t*>(counts_.device(b, nodes * 8));
  auto* offsets = reinterpret_cast<std::int64_t*>(offsets_.device(b, nodes * 8));
  with_view(t, [&](auto v) {
    using Real = typename ViewOf<decltype(v)>::real;
    constexpr int Dim = ViewOf<decltype(v)>::dim;
    using C = let::Classify<Real, Dim>;
    for_each_index(b, 1, C{v, region, r.count, state, 0, true});
    for (int l = 0; l < t.depth; ++l) {
      const std::int32_t lo = t.levels[l], hi = t.levels[l + 1];
      if (hi > lo) for_each_index(b, std::size_t(hi - lo), C{v, region, r.count, state, lo, false});
    }
    for_each_index(b, nodes, let::CountSources<Real, Dim>{v, state, counts});
  });
  const std::int64_t total = exclusive_sum(b, counts, offsets, nodes);
  counted_ = nodes;
  return std::size_t(total);
}

void TreeLet::pack(const Tree& t, void* out) {
  if (counted_ == 0) return;
  const Backend b = t.backend;
  const auto* state = reinterpret_cast<const std::uint8_t*>(state_.device(b, counted_));
  const auto* offsets = reinterpret_cast<const std::int64_t*>(offsets_.device(b, counted_ * 8));
  with_view(t, [&](auto v) {
    using Real = typename ViewOf<decltype(v)>::real;
    constexpr int Dim = ViewOf<decltype(v)>::dim;
    for_each_index(b, counted_,
                   let::PackSources<Real, Dim>{v, state, offsets, static_cast<Real*>(out)});
  });
}

void unpack_sources(ParticleStore& to, std::size_t at, const void* in, std::size_t m) {
  if (m == 0) return;
  visit(to, [&](auto p) {
    using V = decltype(p);
    using Real = typename V::real;
    for_each_index(to.backend(), m,
                   let::UnpackSources<Real, V::dim>{p, at, static_cast<const Real*>(in)});
  });
  to.touch();
}

}  // namespace pardyn::parallel
