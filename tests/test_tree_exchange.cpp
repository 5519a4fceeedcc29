// SPDX-License-Identifier: BSD-3-Clause
// The tree exchange's parts on one process (parallel/tree_let.hpp): a rank's region, and the
// sources one rank's tree sends another, against a reference written the plain way on the host (a
// depth-first walk of the downloaded tree, each node tested against every leaf box of the region),
// on the CPU and, where there is one, the GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "pardyn/app/backend.hpp"
#include "pardyn/app/cuda.hpp"
#include "pardyn/tree.hpp"
#include "parallel/tree_let.hpp"
#include "support.hpp"
#include "tree_systems.hpp"

using namespace pardyn;
using parallel::Region;

namespace {

MemoryResource& memory_of(Backend b) {
  return b == Backend::Cuda ? cuda::device_memory() : host_memory();
}

// Two "ranks": the particles of a Plummer sphere (3D) or disk (2D) with x < 0.1 and the rest.
std::array<HostParticles, 2> halves(int dim, std::size_t n, unsigned seed) {
  const HostParticles all =
      dim == 3 ? tree_systems::plummer(test::registry(), n, seed) : tree_systems::disk2d(n, seed);
  std::array<HostParticles, 2> h{HostParticles(dim), HostParticles(dim)};
  for (std::size_t i = 0; i < all.size(); ++i) {
    HostParticles& to = h[all.x[0][i] < 0.1 ? 0 : 1];
    const std::size_t k = to.size();
    to.resize(k + 1);
    for (int d = 0; d < dim; ++d) to.x[d][k] = all.x[d][i];
    to.mass[k] = all.mass[i] * (1 + 0.5 * double(i % 3));  // unequal masses
    to.type[k] = std::int32_t(i % 2);
    to.id[k] = std::int64_t(i);
  }
  return h;
}

// The tree's arrays on the host, in double.
struct HostTree {
  int dim = 3;
  bool quad = false;
  std::vector<TreeLinks> links;
  std::vector<double> com, rcrit2, q, src;
  std::vector<std::int32_t> type;
};

template <class Real>
std::vector<double> fetch(MemoryResource& mem, const void* p, std::size_t count) {
  std::vector<Real> tmp(count);
  if (count) mem.copy_to_host(tmp.data(), p, count * sizeof(Real));
  return std::vector<double>(tmp.begin(), tmp.end());
}

HostTree download(const Tree& t, MemoryResource& mem) {
  HostTree h;
  h.dim = t.dim;
  h.quad = t.quadrupole && t.quad;
  const std::size_t nodes = std::size_t(t.nodes), n = std::size_t(t.n);
  const std::size_t nq = t.dim == 3 ? 6 : 3;
  h.links.resize(nodes);
  h.type.resize(n);
  mem.copy_to_host(h.links.data(), t.links, nodes * sizeof(TreeLinks));
  mem.copy_to_host(h.type.data(), t.type, n * sizeof(std::int32_t));
  auto get = [&](auto real) {
    using Real = decltype(real);
    h.com = fetch<Real>(mem, t.com, 4 * nodes);
    h.rcrit2 = fetch<Real>(mem, t.rcrit2, nodes);
    h.src = fetch<Real>(mem, t.src, 4 * n);
    if (h.quad) h.q = fetch<Real>(mem, t.quad, nq * nodes);
  };
  if (t.precision == Precision::Float) get(float{});
  else get(double{});
  return h;
}

// The reference: nodes depth first from the root; a node none of whose region's leaf boxes lies
// within its opening radius is accepted (pseudo-particles), an opened leaf sends its particles.
struct Reference {
  const HostTree& h;
  const Region& r;
  std::vector<std::vector<double>> out;
  std::size_t accepted = 0;

  void add(const double* x, double m, std::int32_t type) {
    std::vector<double> s;
    for (int d = 0; d < h.dim; ++d) s.push_back(x[d]);
    s.push_back(m);
    s.push_back(double(type));
    out.push_back(s);
  }
  void particles(std::size_t i) {
    for (std::int32_t j = h.links[i].begin; j < h.links[i].end; ++j)
      add(&h.src[4 * std::size_t(j)], h.src[4 * std::size_t(j) + 3], h.type[std::size_t(j)]);
  }
  bool near(std::size_t i) const {
    for (int k = 0; k < r.count; ++k)
      if (r.box[k].leaf &&
          tree_detail::box_dist2<3>(&h.com[4 * i], r.box[k].centre, r.box[k].half) <= h.rcrit2[i])
        return true;
    return false;
  }
  void below(std::size_t i, int levels) {
    const TreeLinks& l = h.links[i];
    if (l.nchild == 0) return particles(i);
    if (levels == 0) return add(&h.com[4 * i], h.com[4 * i + 3], 0);
    for (std::int32_t c = l.child; c < l.child + l.nchild; ++c) below(std::size_t(c), levels - 1);
  }
  void pseudo(std::size_t i) {
    const double* c = &h.com[4 * i];
    const double M = c[3];
    if (!(M != 0)) return;
    const double* q = &h.q[std::size_t(h.dim == 3 ? 6 : 3) * i];
    double a[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, lambda[3], v[3][3];
    if (h.dim == 3) {
      a[0][0] = q[0], a[1][1] = q[1], a[2][2] = q[2];
      a[0][1] = a[1][0] = q[3], a[0][2] = a[2][0] = q[4], a[1][2] = a[2][1] = q[5];
    } else {
      a[0][0] = q[0], a[1][1] = q[1], a[0][1] = a[1][0] = q[2];
    }
    parallel::let::eigen3(a, lambda, v);
    for (int k = 0; k < h.dim; ++k) {
      const double rk = std::sqrt(std::max(0.0, h.dim * lambda[k] / M));
      for (int s = -1; s <= 1; s += 2) {
        double x[3];
        for (int d = 0; d < 3; ++d) x[d] = c[d] + s * rk * v[d][k];
        add(x, M / (2 * h.dim), 0);
      }
    }
  }
  void walk(std::size_t i) {
    const TreeLinks& l = h.links[i];
    if (!near(i)) {
      ++accepted;
      if (h.quad && l.end - l.begin <= 2 * h.dim) particles(i);
      else if (h.quad) pseudo(i);
      else below(i, 2);
      return;
    }
    if (l.nchild == 0) return particles(i);
    for (std::int32_t c = l.child; c < l.child + l.nchild; ++c) walk(std::size_t(c));
  }
};

std::vector<std::vector<double>> sorted(std::vector<std::vector<double>> v) {
  std::sort(v.begin(), v.end());
  return v;
}

struct Case {
  int dim;
  bool quad;
  Precision prec;
};

// Rank A's sources for rank B (and B's for A): TreeLet against the reference, on `backend`.
void let_matches_reference(const Case& c, Backend backend) {
  const auto h = halves(c.dim, 30000, 7);
  MemoryResource& mem = memory_of(backend);
  TreeOptions opt;
  opt.theta = 0.6;
  opt.quadrupole = c.quad;
  ParticleStore store[2] = {ParticleStore(c.dim, c.prec, mem), ParticleStore(c.dim, c.prec, mem)};
  TreeBuilder builder[2];
  Region region[2];
  parallel::TreeLet let;
  for (int k = 0; k < 2; ++k) {
    store[k].upload(h[std::size_t(k)]);
    builder[k].build(store[k], opt);
    let.region(builder[k].tree(), region[k]);
    ASSERT_GT(region[k].count, 1);
    ASSERT_LE(region[k].count, parallel::kRegionBoxes);
  }
  const std::size_t real = c.prec == Precision::Float ? 4 : 8;
  const int per = c.dim + 2;
  for (int k = 0; k < 2; ++k) {
    SCOPED_TRACE(std::to_string(c.dim) + "D " + (c.quad ? "quadrupoles" : "monopoles"));
    const Tree& t = builder[k].tree();
    const Region& to = region[1 - k];
    const std::size_t n = let.count(t, to);
    std::vector<std::vector<double>> got;
    if (n) {
      void* dev = mem.allocate(n * per * real);
      let.pack(t, dev);
      std::vector<char> bytes(n * per * real);
      mem.copy_to_host(bytes.data(), dev, bytes.size());
      mem.deallocate(dev);
      for (std::size_t s = 0; s < n; ++s) {
        std::vector<double> rec(static_cast<std::size_t>(per));
        for (int j = 0; j < per; ++j) {
          const char* p = bytes.data() + (s * per + std::size_t(j)) * real;
          if (real == 4) {
            float f;
            std::memcpy(&f, p, 4);
            rec[std::size_t(j)] = f;
          } else {
            std::memcpy(&rec[std::size_t(j)], p, 8);
          }
        }
        got.push_back(rec);
      }
    }
    const HostTree ht = download(t, mem);
    Reference ref{ht, to, {}};
    ref.walk(0);
    const std::string what = std::to_string(c.dim) + "D " +
                             (c.quad ? "quadrupoles " : "monopoles ") + to_string(c.prec) + " " +
                             to_string(backend) + ", rank " + std::to_string(k);
    ASSERT_EQ(got.size(), ref.out.size()) << what;
    EXPECT_GT(ref.accepted, 0u) << what << ": no node accepted, the test would show little";
    if (c.quad) {
      EXPECT_LT(n, std::size_t(t.n)) << what << ": every particle would travel";
    }
    const auto a = sorted(got), b = sorted(ref.out);
    // Float sources are rounded to float once; double ones agree to the order of a few roundings
    // of the eigenvectors (the device may contract to FMAs).
    const double tol = real == 4 ? 3e-7 : 1e-13;
    double worst = 0;
    for (std::size_t s = 0; s < a.size(); ++s)
      for (int j = 0; j < per; ++j) {
        const double x = a[s][std::size_t(j)], y = b[s][std::size_t(j)];
        worst = std::max(worst, std::fabs(x - y) / std::max(1.0, std::fabs(y)));
      }
    EXPECT_LE(worst, tol) << what;
    ::testing::Test::RecordProperty("sources_" + std::to_string(c.dim) + "d_" + std::to_string(k),
                                    std::to_string(n));
  }
}

const Case kCases[] = {{3, true, Precision::Double}, {3, false, Precision::Double},
                       {2, true, Precision::Double}, {2, false, Precision::Double},
                       {3, true, Precision::Float},  {2, false, Precision::Float}};

}  // namespace

// Each test once with the trees on the CPU and once on the GPU (backends.hpp).
class TreeExchangeRun : public test::BackendRun {};
PARDYN_INSTANTIATE_BACKENDS(TreeExchangeRun);

TEST_P(TreeExchangeRun, SourcesMatchTheHostReference) {
  for (const Case& c : kCases) let_matches_reference(c, test::backend_kind());
}

// A region's boxes: at most kRegionBoxes in depth-first pre-order (each box's subtree ends at its
// skip index, inside its parent's), and every particle inside some leaf box.
TEST_P(TreeExchangeRun, RegionHoldsEveryParticle) {
  const Backend b = test::backend_kind();
  for (int dim : {2, 3}) {
    const HostParticles hp = halves(dim, 40000, 3)[0];
    ParticleStore s(dim, Precision::Double, memory_of(b));
    s.upload(hp);
    TreeBuilder builder;
    builder.build(s, TreeOptions{});
    Region r;
    parallel::TreeLet().region(builder.tree(), r);
    ASSERT_GT(r.count, 64) << dim << "D";
    ASSERT_LE(r.count, parallel::kRegionBoxes);
    EXPECT_EQ(r.box[0].skip, r.count);
    for (int k = 0; k < r.count; ++k) {
      EXPECT_GT(r.box[k].skip, k);
      EXPECT_LE(r.box[k].skip, r.count);
      if (r.box[k].leaf) {
        EXPECT_EQ(r.box[k].skip, k + 1);
      }
    }
    std::size_t outside = 0;
    for (std::size_t i = 0; i < hp.size(); ++i) {
      const double x[3] = {hp.x[0][i], hp.x[1][i], dim == 3 ? hp.x[2][i] : 0.0};
      bool in = false;
      for (int k = 0; k < r.count && !in; ++k)
        in = r.box[k].leaf && tree_detail::box_dist2<3>(x, r.box[k].centre, r.box[k].half) <
                                  1e-24;  // inside, up to the rounding of centre and half
      outside += in ? 0 : 1;
    }
    EXPECT_EQ(outside, 0u) << dim << "D " << to_string(b);
  }
}

// --- The sources' own tree, walked by the rank's particles (Tree::targets) --------------------------

namespace {

// The own particles' accelerations, energies and virials from themselves and the sources: one tree
// over both (the merged store), the own tree plus a tree over the sources walked by the own
// particles' groups (split), or all pairs (exact).
enum class How { Merged, Split, Exact };
HostParticles evaluate(const std::string& law, const std::string& law_params,
                       const HostParticles& own, const HostParticles& src, const TreeOptions& topt,
                       How how, Backend b) {
  const int dim = own.dim;
  RunInfo run;
  run.dim = dim;
  run.precision = Precision::Double;
  run.backend = b;
  run.quiet = true;
  auto pot = test::registry().make_potential(
      law, test::params_for(PluginKind::Potential, law, law_params), run);
  MemoryResource& mem = memory_of(b);
  auto ops = b == Backend::Cuda ? cuda::make_ops() : make_cpu_ops();
  ForceRequest req;
  req.energy = req.virial = true;
  req.box = &run.box;
  TreeOptions opt = topt;
  opt.short_range = pot->reach().short_range;
  HostParticles out(dim);
  if (how == How::Split) {
    ParticleStore a(dim, Precision::Double, mem), s(dim, Precision::Double, mem);
    a.upload(own);
    s.upload(src);
    ops->zero_forces(a, true, true);
    TreeBuilder ta, ts;
    pot->compute(a, Neighbourhood{NeighbourhoodKind::Tree, &ta.build(a, opt)}, req);
    Tree remote = ts.build(s, opt);
    remote.targets = &ta.tree();
    pot->compute(a, Neighbourhood{NeighbourhoodKind::Tree, &remote}, req);
    a.download(out);
    return out;
  }
  HostParticles both = own;
  both.append(src);
  ParticleStore m(dim, Precision::Double, mem);
  m.upload(both);
  ops->zero_forces(m, true, true);
  TreeBuilder tb;
  if (how == How::Merged)
    pot->compute(m, Neighbourhood{NeighbourhoodKind::Tree, &tb.build(m, opt)}, req);
  else pot->compute(m, Neighbourhood{NeighbourhoodKind::AllPairs, nullptr}, req);
  m.download(both);
  out = both;
  out.resize(own.size());
  return out;
}

// RMS of |a - b| over the particles, relative to the RMS of |b|; and the largest difference of the
// per-particle energies relative to the largest energy.
double acc_error(const HostParticles& a, const HostParticles& b) {
  double e2 = 0, n2 = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (int d = 0; d < a.dim; ++d) {
      e2 += (a.a[d][i] - b.a[d][i]) * (a.a[d][i] - b.a[d][i]);
      n2 += b.a[d][i] * b.a[d][i];
    }
  return std::sqrt(e2 / n2);
}
double energy_error(const HostParticles& a, const HostParticles& b) {
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst =
        std::max({worst, std::fabs(a.epot[i] - b.epot[i]), std::fabs(a.virial[i] - b.virial[i])});
    scale = std::max({scale, std::fabs(b.epot[i]), std::fabs(b.virial[i])});
  }
  return worst / scale;
}

struct Law {
  std::string name, params;
  int dim;
  bool quad;
};
const Law kLaws[] = {
    {"gravity", "eps = 0.01", 3, true},
    {"log", "eps = 0.01", 2, false},
    {"log", "eps = 0.01", 2, true},
    {"soft_gas",
     "attraction = 0.01\nrepulsion = 3.0\ncore_attraction = 2.99\nrc = 0.05\neps = 0.01", 2, true}};

void split_matches_merged(Backend b) {
  for (const Law& law : kLaws) {
    const auto h = halves(law.dim, 6000, 21);
    TreeOptions opt;
    opt.quadrupole = law.quad;
    // Every node opened: both are the exact sum, in another order.
    opt.theta = 1e-3;
    const HostParticles split = evaluate(law.name, law.params, h[0], h[1], opt, How::Split, b);
    const HostParticles merged = evaluate(law.name, law.params, h[0], h[1], opt, How::Merged, b);
    EXPECT_LT(acc_error(split, merged), 1e-12) << law.name << " " << to_string(b);
    EXPECT_LT(energy_error(split, merged), 1e-12) << law.name << " " << to_string(b);
    for (std::size_t i = 0; i < split.size(); ++i) ASSERT_EQ(split.id[i], h[0].id[i]);
    // The tree's own accuracy: the split walk's error is the merged one's, with quadrupoles (the
    // exchange's monopole trees merge: tree_exchange.cpp says why).
    if (!law.quad) continue;
    opt.theta = 0.5;
    const HostParticles exact = evaluate(law.name, law.params, h[0], h[1], opt, How::Exact, b);
    const double es =
        acc_error(evaluate(law.name, law.params, h[0], h[1], opt, How::Split, b), exact);
    const double em =
        acc_error(evaluate(law.name, law.params, h[0], h[1], opt, How::Merged, b), exact);
    EXPECT_GT(em, 0.0) << law.name;
    EXPECT_LE(es, 1.25 * em) << law.name << " " << to_string(b);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3e %.3e", es, em);
    ::testing::Test::RecordProperty(law.name + "_split_merged", buf);
  }
}

}  // namespace

TEST_P(TreeExchangeRun, SourcesTreeWalkedByOwnGroupsMatchesTheMergedTree) {
  split_matches_merged(test::backend_kind());
}
