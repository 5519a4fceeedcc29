// SPDX-License-Identifier: BSD-3-Clause
#include "tree_exchange.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <omp.h>

#include "pardyn/tree.hpp"
#include "store_ops.hpp"

namespace pardyn::parallel {

namespace {

// What the exchange reads of a tree, on the host, in double: links, centres of mass and masses,
// opening radii, second moments, and the particles along the curve (x, y, z, m) with their types.
struct HostTree {
  int dim = 3;
  bool quad = false;
  std::vector<TreeLinks> links;
  std::vector<double> com, rcrit2, q, src;
  std::vector<std::int32_t> type;
};

template <class Real>
void fetch(MemoryResource& mem, const void* p, std::size_t count, std::vector<double>& out) {
  std::vector<Real> tmp(count);
  if (count) mem.copy_to_host(tmp.data(), p, count * sizeof(Real));
  out.assign(tmp.begin(), tmp.end());
}

HostTree download(const Tree& t, MemoryResource& mem) {
  if (!t.built) throw Error("internal: the tree exchange ran before the tree was built");
  HostTree h;
  h.dim = t.dim;
  h.quad = t.quadrupole && t.quad;
  const std::size_t nodes = std::size_t(t.nodes), n = std::size_t(t.n);
  const int nq = t.dim == 3 ? kQuadTerms<3> : kQuadTerms<2>;
  h.links.resize(nodes);
  h.type.resize(n);
  if (nodes) mem.copy_to_host(h.links.data(), t.links, nodes * sizeof(TreeLinks));
  if (n) mem.copy_to_host(h.type.data(), t.type, n * sizeof(std::int32_t));
  auto get = [&](auto real) {
    using Real = decltype(real);
    fetch<Real>(mem, t.com, 4 * nodes, h.com);
    fetch<Real>(mem, t.rcrit2, nodes, h.rcrit2);
    fetch<Real>(mem, t.src, 4 * n, h.src);
    if (h.quad) fetch<Real>(mem, t.quad, std::size_t(nq) * nodes, h.q);
  };
  if (t.precision == Precision::Float) get(float{});
  else get(double{});
  return h;
}

// A rank's particles as a hierarchy of at most kRegion boxes, for the others' walks: the top of its
// tree, nodes split largest (by opening radius) first, so that no box around a few far particles
// spans the others' dense regions (one box around a centrally concentrated piece would reach
// across the others' pieces and open their whole trees). Leaves: boxes around their nodes'
// particles (contiguous along the curve); inner nodes: the union of their children's.
constexpr std::size_t kRegion = 4096;
struct RegionNode {
  double centre[3] = {0, 0, 0}, half[3] = {-1, -1, -1};  // half < 0: no particles
  std::int32_t child = 0, nchild = 0;
};
using Region = std::array<RegionNode, kRegion>;

Region region_of(const HostTree& h, int dim) {
  Region r;
  if (h.links.empty() || h.links[0].end <= h.links[0].begin) return r;
  // Region node k stands for tree node tree_of[k]; the root is region node 0.
  std::vector<std::int32_t> tree_of{0};
  auto larger_first = [&](std::int32_t a, std::int32_t b) {
    return h.rcrit2[std::size_t(tree_of[std::size_t(a)])] <
           h.rcrit2[std::size_t(tree_of[std::size_t(b)])];
  };
  std::vector<std::int32_t> heap{0};  // region nodes not split yet
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), larger_first);
    const std::int32_t k = heap.back();
    heap.pop_back();
    const TreeLinks& l = h.links[std::size_t(tree_of[std::size_t(k)])];
    if (l.nchild == 0 || tree_of.size() + std::size_t(l.nchild) > kRegion) continue;
    r[std::size_t(k)].child = std::int32_t(tree_of.size());
    r[std::size_t(k)].nchild = l.nchild;
    for (std::int32_t c = l.child; c < l.child + l.nchild; ++c) {
      heap.push_back(std::int32_t(tree_of.size()));
      tree_of.push_back(c);
      std::push_heap(heap.begin(), heap.end(), larger_first);
    }
  }
  // Boxes from the deepest region nodes up (children come after their parents), as centre and
  // half-widths for the tree's own box distance (tree_detail::box_dist2).
  std::vector<std::array<double, 6>> box(tree_of.size());  // lo[3], hi[3]
  for (std::size_t k = tree_of.size(); k-- > 0;) {
    RegionNode& n = r[k];
    double* lo = box[k].data();
    double* hi = lo + 3;
    for (int d = 0; d < 3; ++d) lo[d] = hi[d] = 0;
    if (n.nchild == 0) {
      const TreeLinks& l = h.links[std::size_t(tree_of[k])];
      for (std::int32_t j = l.begin; j < l.end; ++j)
        for (int d = 0; d < dim; ++d) {
          const double x = h.src[4 * std::size_t(j) + std::size_t(d)];
          if (j == l.begin || x < lo[d]) lo[d] = x;
          if (j == l.begin || x > hi[d]) hi[d] = x;
        }
    } else {
      for (std::int32_t c = n.child; c < n.child + n.nchild; ++c)
        for (int d = 0; d < dim; ++d) {
          const double* b = box[std::size_t(c)].data();
          if (c == n.child || b[d] < lo[d]) lo[d] = b[d];
          if (c == n.child || b[3 + d] > hi[d]) hi[d] = b[3 + d];
        }
    }
    for (int d = 0; d < 3; ++d)
      n.centre[d] = 0.5 * (lo[d] + hi[d]), n.half[d] = 0.5 * (hi[d] - lo[d]);
  }
  return r;
}

// Whether some particle of the region may lie within sqrt(r2) of c: the region's leaves within it.
// The distance is the walk's own (tree_detail::box_dist2, the test of a group's box), in 3D: in 2D
// the third coordinates are all 0.
bool near(const double* c, double r2, const Region& r, std::vector<std::int32_t>& stack) {
  if (r[0].half[0] < 0) return false;
  stack.assign(1, 0);
  while (!stack.empty()) {
    const RegionNode& n = r[std::size_t(stack.back())];
    stack.pop_back();
    if (tree_detail::box_dist2<3>(c, n.centre, n.half) > r2) continue;
    if (n.nchild == 0) return true;
    for (std::int32_t k = n.child; k < n.child + n.nchild; ++k) stack.push_back(k);
  }
  return false;
}

// Eigenvalues and unit eigenvectors (columns of v) of the symmetric 3x3 matrix a (Jacobi).
void eigen3(double a[3][3], double lambda[3], double v[3][3]) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) v[i][j] = i == j ? 1.0 : 0.0;
  for (int sweep = 0; sweep < 50; ++sweep) {
    const double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
    const double diag = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
    if (off <= 1e-30 * diag || off == 0) break;
    for (int p = 0; p < 2; ++p)
      for (int r = p + 1; r < 3; ++r) {
        if (a[p][r] == 0) continue;
        const double theta = (a[r][r] - a[p][p]) / (2 * a[p][r]);
        const double t =
            (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < 3; ++k) {  // a = J^T a J
          const double akp = a[k][p], akr = a[k][r];
          a[k][p] = c * akp - s * akr;
          a[k][r] = s * akp + c * akr;
        }
        for (int k = 0; k < 3; ++k) {
          const double apk = a[p][k], ark = a[r][k];
          a[p][k] = c * apk - s * ark;
          a[r][k] = s * apk + c * ark;
        }
        for (int k = 0; k < 3; ++k) {
          const double vkp = v[k][p], vkr = v[k][r];
          v[k][p] = c * vkp - s * vkr;
          v[k][r] = s * vkp + c * vkr;
        }
      }
  }
  for (int i = 0; i < 3; ++i) lambda[i] = a[i][i];
}

// The sources one rank sends another: (dim + 2) doubles each (position, mass, type).
class Sources {
 public:
  explicit Sources(int dim) : dim_(dim) {}
  void add(const double* x, double m, std::int32_t type) {
    for (int d = 0; d < dim_; ++d) v_.push_back(x[d]);
    v_.push_back(m);
    v_.push_back(double(type));
  }
  // Node i of h as pseudo-particles: its mass at its centre of mass, or 2 dim points with its
  // second moments.
  void add_node(const HostTree& h, std::size_t i) {
    const double* c = &h.com[4 * i];
    const double M = c[3];
    if (!(M != 0)) return;
    if (!h.quad) return add(c, M, 0);
    const int nq = dim_ == 3 ? kQuadTerms<3> : kQuadTerms<2>;
    const double* q = &h.q[std::size_t(nq) * i];
    double a[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, lambda[3] = {0, 0, 0}, v[3][3];
    if (dim_ == 3) {
      a[0][0] = q[0], a[1][1] = q[1], a[2][2] = q[2];
      a[0][1] = a[1][0] = q[3], a[0][2] = a[2][0] = q[4], a[1][2] = a[2][1] = q[5];
    } else {
      a[0][0] = q[0], a[1][1] = q[1], a[0][1] = a[1][0] = q[2];
      a[2][2] = 0;
    }
    eigen3(a, lambda, v);
    const double m = M / (2 * dim_);
    for (int k = 0; k < dim_; ++k) {
      const double r = std::sqrt(std::max(0.0, dim_ * lambda[k] / M));
      for (int s = -1; s <= 1; s += 2) {
        double x[3];
        for (int d = 0; d < 3; ++d) x[d] = c[d] + s * r * v[d][k];
        add(x, m, 0);
      }
    }
  }
  std::vector<double>& values() { return v_; }
  void append(const Sources& o) { v_.insert(v_.end(), o.v_.begin(), o.v_.end()); }

 private:
  int dim_;
  std::vector<double> v_;
};

// Node i as its descendants `levels` below it (or its particles, where it ends sooner; with
// `particles`, always its particles), each as its mass at its centre of mass.
void add_below(const HostTree& h, std::size_t i, int levels, Sources& out, bool particles) {
  const TreeLinks& l = h.links[i];
  if (l.nchild == 0 || particles) {
    for (std::int32_t j = l.begin; j < l.end; ++j)
      out.add(&h.src[4 * std::size_t(j)], h.src[4 * std::size_t(j) + 3], h.type[std::size_t(j)]);
  } else if (levels == 0) {
    out.add(&h.com[4 * i], h.com[4 * i + 3], 0);
  } else {
    for (std::int32_t c = l.child; c < l.child + l.nchild; ++c)
      add_below(h, std::size_t(c), levels - 1, out, false);
  }
}

// Node i of h for the targets inside b: accepted (sent as pseudo-particles), an opened leaf (its
// particles sent), or an opened inner node (true: its children are to be visited).
bool visit(const HostTree& h, const Region& b, std::size_t i, Sources& out,
           std::vector<std::int32_t>& scratch) {
  const TreeLinks& l = h.links[i];
  if (!near(&h.com[4 * i], h.rcrit2[i], b, scratch)) {
    // Monopole trees: the receiving rank's tree groups the pseudo-particles with its own
    // particles, and a point hides the extent of the node it stands for, so its error would add
    // to the receiving node's; the node's descendants two levels down (or its particles) are sent
    // instead (measured, 2D log, theta 0.6: the node itself gave 1.5x one rank's RMS force error
    // on 2 ranks, its children 1.3x on 3).
    // A node of at most 2 dim particles: those, exact and no more points.
    if (h.quad && l.end - l.begin <= 2 * h.dim) add_below(h, i, 0, out, true);
    else if (h.quad) out.add_node(h, i);
    else add_below(h, i, 2, out, false);
    return false;
  }
  if (l.nchild == 0) {
    for (std::int32_t j = l.begin; j < l.end; ++j)
      out.add(&h.src[4 * std::size_t(j)], h.src[4 * std::size_t(j) + 3], h.type[std::size_t(j)]);
    return false;
  }
  return true;
}

// The subtree of node `top`, depth first.
void essential_below(const HostTree& h, const Region& b, std::int32_t top, Sources& out,
                     std::vector<std::int32_t>& scratch) {
  std::vector<std::int32_t> stack{top};
  while (!stack.empty()) {
    const std::size_t i = std::size_t(stack.back());
    stack.pop_back();
    if (!visit(h, b, i, out, scratch)) continue;
    const TreeLinks& l = h.links[i];
    for (std::int32_t c = l.child + l.nchild - 1; c >= l.child; --c) stack.push_back(c);
  }
}

// What of h the targets inside b need: accepted nodes as pseudo-particles, opened leaves'
// particles. The top of the tree on one thread, largest nodes first, until no subtree left holds
// more than a small share of the particles (a Plummer sphere's core is one deep subtree), then the
// subtrees on all threads; the sources in the subtrees' node order (the same on any number of
// threads).
void essential(const HostTree& h, const Region& b, Sources& out) {
  if (h.links.empty() || b[0].half[0] < 0) return;
  std::vector<std::int32_t> scratch, heap{0};
  auto size = [&](std::int32_t i) {
    const TreeLinks& l = h.links[std::size_t(i)];
    return l.end - l.begin;
  };
  auto smaller = [&](std::int32_t a, std::int32_t c) { return size(a) < size(c); };
  const std::int32_t share =
      std::max<std::int32_t>(1024, size(0) / std::max(1, 16 * omp_get_max_threads()));
  while (!heap.empty() && heap.size() < 16384 && size(heap.front()) > share) {
    std::pop_heap(heap.begin(), heap.end(), smaller);
    const std::int32_t i = heap.back();
    heap.pop_back();
    if (!visit(h, b, std::size_t(i), out, scratch)) continue;
    const TreeLinks& l = h.links[std::size_t(i)];
    for (std::int32_t c = l.child; c < l.child + l.nchild; ++c) {
      heap.push_back(c);
      std::push_heap(heap.begin(), heap.end(), smaller);
    }
  }
  std::sort(heap.begin(), heap.end());
  std::vector<Sources> part(heap.size(), Sources(h.dim));
  const std::int64_t nf = std::int64_t(heap.size());
#pragma omp parallel if (nf > 1)
  {
    std::vector<std::int32_t> mine;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t k = 0; k < nf; ++k)
      essential_below(h, b, heap[std::size_t(k)], part[std::size_t(k)], mine);
  }
  for (auto& p : part) out.append(p);
}

// The received sources (dim + 2 doubles each) into `work` at [offset, offset + m): positions, masses
// and types in the store's precision, ids -1.
void put_sources(ParticleStore& work, std::size_t offset, std::size_t m,
                 const std::vector<std::vector<double>>& in, int dim) {
  if (m == 0) return;
  const int per = dim + 2;
  const std::size_t real = work.precision() == Precision::Float ? 4 : 8;
  std::vector<char> pos(m * std::size_t(dim) * real), stat(m * (real + 4));
  std::size_t k = 0;
  for (const auto& v : in)
    for (std::size_t j = 0; j + std::size_t(per) <= v.size(); j += std::size_t(per), ++k) {
      const std::int32_t type = std::int32_t(v[j + std::size_t(dim) + 1]);
      std::memcpy(stat.data() + m * real + 4 * k, &type, 4);
      for (int d = 0; d <= dim; ++d) {  // the coordinates, then the mass
        char* to = d < dim ? pos.data() + (std::size_t(d) * m + k) * real : stat.data() + real * k;
        if (real == 4) {
          const float x = float(v[j + std::size_t(d)]);
          std::memcpy(to, &x, 4);
        } else {
          std::memcpy(to, &v[j + std::size_t(d)], 8);
        }
      }
    }
  put_positions(work, offset, m, pos.data());
  put_static(work, offset, m, stat.data());
}

}  // namespace

TreeExchange::TreeExchange(Communicator& comm, int dim) : comm_(comm), dim_(dim) {}
TreeExchange::~TreeExchange() {
  // PARDYN_PARALLEL_STATS=1: what the exchange costs, per rank.
  if (std::getenv("PARDYN_PARALLEL_STATS"))
    std::fprintf(stderr,
                 "rank %d: tree exchange: %zu owned, %zu sources received (last evaluation); %llu "
                 "evaluations %.4f s: own tree and its download %.4f, walks for the others %.4f, "
                 "messages %.4f, work store %.4f s\n",
                 comm_.rank(), owned_, received_, (unsigned long long)evaluations_, seconds_,
                 part_[0], part_[1], part_[2], part_[3]);
}

ParticleStore& TreeExchange::prepare(ParticleStore& s, Scheme& scheme, const Box& box,
                                     const Reach& reach) {
  const auto t0 = std::chrono::steady_clock::now();
  const int K = comm_.size(), me = comm_.rank();
  // 1. The tree over this rank's particles.
  scheme.update(s, box, reach);
  const Neighbourhood nb = scheme.neighbourhood();
  if (nb.kind != NeighbourhoodKind::Tree || !nb.data)
    throw Error("internal: the tree exchange needs a tree scheme");
  const HostTree h = download(*static_cast<const Tree*>(nb.data), s.memory());
  auto lap = [last = t0, this](int k) mutable {
    const auto now = std::chrono::steady_clock::now();
    part_[k] += std::chrono::duration<double>(now - last).count();
    last = now;
  };
  // 2. Every rank's region.
  const Region mine = region_of(h, dim_);
  lap(0);
  std::vector<Region> all(static_cast<std::size_t>(K));  // 4096 boxes per rank: 0.2 MB
  comm_.allgather(&mine, sizeof mine, all.data());
  lap(2);
  // 3. What each other rank needs, and how much each sends whom.
  const int per = dim_ + 2;
  std::vector<std::vector<double>> out(static_cast<std::size_t>(K));
  std::vector<std::uint64_t> sizes(static_cast<std::size_t>(K), 0);
  for (int r = 0; r < K; ++r) {
    if (r == me) continue;
    Sources src(dim_);
    essential(h, all[std::size_t(r)], src);
    out[std::size_t(r)] = std::move(src.values());
    sizes[std::size_t(r)] = out[std::size_t(r)].size();
  }
  lap(1);
  std::vector<std::uint64_t> matrix(std::size_t(K) * std::size_t(K));
  comm_.allgather(sizes.data(), sizes.size() * sizeof(std::uint64_t), matrix.data());
  // 4. The exchange.
  std::vector<std::vector<double>> in(static_cast<std::size_t>(K));
  std::vector<std::unique_ptr<Communicator::Request>> reqs;
  constexpr int kTag = 7600;
  for (int r = 0; r < K; ++r) {
    if (r == me) continue;
    in[std::size_t(r)].resize(matrix[std::size_t(r) * std::size_t(K) + std::size_t(me)]);
    if (!in[std::size_t(r)].empty())
      reqs.push_back(
          comm_.irecv(in[std::size_t(r)].data(), in[std::size_t(r)].size() * 8, r, kTag));
  }
  for (int r = 0; r < K; ++r)
    if (r != me && !out[std::size_t(r)].empty())
      reqs.push_back(
          comm_.isend(out[std::size_t(r)].data(), out[std::size_t(r)].size() * 8, r, kTag));
  for (auto& q : reqs) q->wait();
  lap(2);
  // 5. The work store: this rank's particles, then the sources.
  std::size_t m = 0;
  for (const auto& v : in) m += v.size() / std::size_t(per);
  if (!work_) work_ = std::make_unique<ParticleStore>(s.dim(), s.precision(), s.memory());
  owned_ = s.size();
  received_ = m;
  work_->resize(owned_ + m);
  copy_prefix(s, *work_, owned_, true, Unwrap{});
  put_sources(*work_, owned_, m, in, dim_);
  lap(3);
  ++evaluations_;
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return *work_;
}

namespace {
// The Morton key of position i in the cube [lo, lo + side)^dim (21 bits per axis in 3D, 31 in 2D).
std::uint64_t morton_key(const std::vector<double>* x, std::size_t i, const double* lo, double side,
                         int dim) {
  const int bits = dim == 3 ? 21 : 31;
  const double top = double((1ULL << bits) - 1), scale = top / side;
  std::uint64_t c[3] = {0, 0, 0}, key = 0;
  for (int d = 0; d < dim; ++d)
    c[d] = std::uint64_t(std::clamp((x[d][i] - lo[d]) * scale, 0.0, top));
  for (int b = bits - 1; b >= 0; --b)
    for (int d = dim - 1; d >= 0; --d) key = (key << 1) | ((c[d] >> b) & 1);
  return key;
}
}  // namespace

std::vector<std::size_t> morton_order(const std::vector<double>* x, int dim, std::size_t n) {
  double lo[3] = {0, 0, 0}, side = 0;
  for (int d = 0; d < dim; ++d) {
    if (n == 0) break;
    const auto mm = std::minmax_element(x[d].begin(), x[d].begin() + std::ptrdiff_t(n));
    lo[d] = *mm.first;
    side = std::max(side, *mm.second - *mm.first);
  }
  if (!(side > 0)) side = 1;
  std::vector<std::pair<std::uint64_t, std::size_t>> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = {morton_key(x, i, lo, side, dim), i};
  std::sort(keys.begin(), keys.end());
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = keys[i].second;
  return order;
}

std::vector<int> morton_owners(const std::vector<double>* x, int dim, std::size_t n,
                               Communicator& comm, std::vector<double> weights) {
  const int K = comm.size();
  // The bounding cube of every rank's particles.
  double ext[6];
  for (int d = 0; d < 3; ++d) {
    ext[d] = ext[3 + d] = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; d < dim && i < n; ++i) {
      ext[d] = std::max(ext[d], -x[d][i]);
      ext[3 + d] = std::max(ext[3 + d], x[d][i]);
    }
  }
  comm.max(ext, 6);
  double lo[3] = {0, 0, 0}, side = 0;
  for (int d = 0; d < dim; ++d) {
    lo[d] = std::isfinite(ext[d]) ? -ext[d] : 0.0;
    side = std::max(side, ext[3 + d] - lo[d]);
  }
  if (!(side > 0) || !std::isfinite(side)) side = 1;
  std::vector<std::uint64_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = morton_key(x, i, lo, side, dim);
  // Splitters from a sample of every rank's sorted keys, each sample standing for n / S particles.
  constexpr std::size_t S = 1024;
  struct Sample {
    std::uint64_t key;
    double weight;
  };
  std::vector<std::uint64_t> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  std::array<Sample, S> mine{};
  const std::size_t s = std::min(S, n);
  for (std::size_t k = 0; k < S; ++k)
    mine[k] = k < s ? Sample{sorted[(2 * k + 1) * n / (2 * s)], double(n) / double(s)}
                    : Sample{~std::uint64_t(0), 0.0};
  std::vector<Sample> all(static_cast<std::size_t>(K) * S);
  comm.allgather(mine.data(), sizeof mine, all.data());
  std::sort(all.begin(), all.end(), [](const Sample& a, const Sample& b) { return a.key < b.key; });
  if (weights.empty()) weights.assign(static_cast<std::size_t>(K), 1.0);
  double wsum = 0, total = 0;
  for (double w : weights) wsum += w;
  for (const Sample& a : all) total += a.weight;
  std::vector<std::uint64_t> split;  // rank r keeps keys in (split[r - 1], split[r]]
  double acc = 0, goal = 0;
  std::size_t j = 0;
  for (int r = 0; r + 1 < K; ++r) {
    goal += total * weights[std::size_t(r)] / wsum;
    while (j < all.size() && acc + all[j].weight <= goal) acc += all[j++].weight;
    split.push_back(j == 0 ? 0 : all[j - 1].key);
  }
  std::vector<int> owner(n);
  for (std::size_t i = 0; i < n; ++i)
    owner[i] = int(std::lower_bound(split.begin(), split.end(), keys[i]) - split.begin());
  return owner;
}

}  // namespace pardyn::parallel
