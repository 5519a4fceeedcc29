// SPDX-License-Identifier: BSD-3-Clause
// The tree scheme's accuracy and speed, through the plugins as a run uses them.
//
//   bench_tree accuracy [--backend cpu|cuda] [N]     (default N: 20000 on the CPU, 200000 on the
//   GPU)
//       RMS, 99th percentile and maximum relative force error against all_pairs (double), for
//       theta in {0.3, 0.5, 0.6, 0.7, 1.0}, monopoles and quadrupoles: a 3D Plummer sphere with gravity
//       and a 2D Plummer disk with log. Also the error of plain Barnes-Hut (one walk per particle,
//       a node accepted when l / d < theta with d the distance to its centre of mass, monopoles,
//       one particle per leaf, as in ECL-BH) at theta = 0.5 on the same particles: the reference
//       the speed target is measured against.
//   bench_tree speed [--backend cpu|cuda] [--precision float|double] [--dim 2|3] [--theta T]
//                    [--quadrupole 0|1] [--leaf L] [--steps S] [--sample K] [N]
//       Times a full leapfrog step (kick, drift, tree build with multipoles, walk, kick) on a 3D
//       Plummer sphere with gravity (--dim 3) or a 2D Plummer disk with log (--dim 2); prints the
//       median step, the build and walk parts, the device memory per particle, and the RMS force
//       error on K sampled particles against a direct sum in double on the host.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pardyn/app/backend.hpp"
#include "pardyn/app/config.hpp"
#include "pardyn/app/cuda.hpp"
#include "pardyn/app/registry.hpp"
#include "pardyn/tree.hpp"
#include "tree_systems.hpp"

using namespace pardyn;

namespace {

struct Opts {
  std::string mode = "speed";
  Backend backend = Backend::Cpu;
  Precision precision = Precision::Float;
  int dim = 3;
  double theta = 0.5;
  bool quad = true;
  int leaf = 16;
  int steps = 10;
  int sample = 1000;
  std::size_t n = 0;
};

Registry& registry() { return tree_systems::builtin_registry(); }
ParamSet params(PluginKind kind, const std::string& name, const std::string& toml) {
  return tree_systems::plugin_params(kind, name, toml);
}

using tree_systems::disk2d;
using tree_systems::Errors;
using tree_systems::errors;

HostParticles plummer(std::size_t n, unsigned seed) {
  return tree_systems::plummer(registry(), n, seed);
}

MemoryResource& memory_of(Backend b) {
  return b == Backend::Cuda ? cuda::device_memory() : host_memory();
}
std::unique_ptr<BackendOps> ops_of(Backend b) {
  return b == Backend::Cuda ? cuda::make_ops() : make_cpu_ops();
}
void sync(Backend b) {
  if (b == Backend::Cuda) cuda::synchronize("bench_tree");
}
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string law_of(int dim) { return dim == 3 ? "gravity" : "log"; }
const char* kEps = "eps = 0.01";

// Accelerations of `in` with one scheme on one backend.
HostParticles forces(const HostParticles& in, Backend b, Precision prec, const std::string& scheme,
                     const std::string& sp) {
  RunInfo run;
  run.dim = in.dim;
  run.precision = prec;
  run.backend = b;
  auto pot = registry().make_potential(law_of(in.dim),
                                       params(PluginKind::Potential, law_of(in.dim), kEps), run);
  auto sch = registry().make_scheme(scheme, params(PluginKind::Scheme, scheme, sp), run);
  ParticleStore s(in.dim, prec, memory_of(b));
  s.upload(in);
  auto ops = ops_of(b);
  ops->zero_forces(s, false, false);
  ForceRequest req;
  req.box = &run.box;
  sch->update(s, run.box, pot->reach());
  pot->compute(s, sch->neighbourhood(), req);
  HostParticles out;
  s.download(out, ParticleStore::kAcceleration);
  return out;
}

// Direct sum in double on the host for the particles `idx` (the law's formula: gravity in 3D, log
// in 2D, both with eps = 0.01 and G = 1; per unit mass).
std::vector<double> direct(const HostParticles& hp, const std::vector<std::size_t>& idx) {
  const int dim = hp.dim;
  const double e2 = 1e-4;
  std::vector<double> out(dim * idx.size());
  const std::size_t n = hp.size();
#pragma omp parallel for schedule(dynamic, 4)
  for (std::size_t k = 0; k < idx.size(); ++k) {
    const std::size_t i = idx[k];
    double a[3] = {0, 0, 0};
    for (std::size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      double d[3] = {0, 0, 0}, r2 = e2;
      for (int c = 0; c < dim; ++c) d[c] = hp.x[c][i] - hp.x[c][j], r2 += d[c] * d[c];
      const double f = dim == 3 ? -hp.mass[j] / (r2 * std::sqrt(r2)) : -hp.mass[j] / r2;
      for (int c = 0; c < dim; ++c) a[c] += f * d[c];
    }
    for (int c = 0; c < dim; ++c) out[dim * k + c] = a[c];
  }
  return out;
}

// Plain Barnes-Hut on the host, as ECL-BH computes it: a pointer octree (quadtree) with one
// particle per leaf, one walk per particle, a node used when its cell size l < theta d (d: distance
// to its centre of mass), monopoles only.
struct PlainBH {
  struct Node {
    double c[3] = {0, 0, 0}, m = 0, size = 0;
    int child[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    int body = -1;  // a leaf's particle; -2: more than one (internal)
  };
  const HostParticles& hp;
  int dim;
  std::vector<Node> nodes;
  explicit PlainBH(const HostParticles& p) : hp(p), dim(p.dim) {
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (std::size_t i = 0; i < hp.size(); ++i)
      for (int d = 0; d < dim; ++d)
        lo[d] = std::min(lo[d], hp.x[d][i]), hi[d] = std::max(hi[d], hp.x[d][i]);
    double side = 0;
    for (int d = 0; d < dim; ++d) side = std::max(side, hi[d] - lo[d]);
    std::vector<int> all(hp.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = int(i);
    nodes.reserve(2 * hp.size());
    build(all, lo, side * 1.000001, 0);
  }
  int build(std::vector<int>& ids, const double* lo, double side, int depth) {
    const int me = int(nodes.size());
    nodes.emplace_back();
    nodes[me].size = side;
    double m = 0, c[3] = {0, 0, 0};
    for (int i : ids) {
      m += hp.mass[i];
      for (int d = 0; d < dim; ++d) c[d] += hp.mass[i] * hp.x[d][i];
    }
    nodes[me].m = m;
    for (int d = 0; d < dim; ++d) nodes[me].c[d] = c[d] / m;
    if (ids.size() == 1 || depth > 60) {  // coincident particles: one leaf holding their mass
      nodes[me].body = ids[0];
      return me;
    }
    nodes[me].body = -2;
    std::vector<int> part[8];
    const double h = side / 2;
    for (int i : ids) {
      int o = 0;
      for (int d = 0; d < dim; ++d) o |= (hp.x[d][i] >= lo[d] + h) << d;
      part[o].push_back(i);
    }
    ids.clear();
    ids.shrink_to_fit();
    for (int o = 0; o < (1 << dim); ++o) {
      if (part[o].empty()) continue;
      double l2[3] = {0, 0, 0};
      for (int d = 0; d < dim; ++d) l2[d] = lo[d] + ((o >> d) & 1) * h;
      const int ch = build(part[o], l2, h, depth + 1);
      nodes[me].child[o] = ch;
    }
    return me;
  }
  void accel(std::size_t i, double theta, double* a) const {
    a[0] = a[1] = a[2] = 0;
    walk(0, i, theta, a);
  }
  void walk(int nd, std::size_t i, double theta, double* a) const {
    const Node& n = nodes[nd];
    double d[3] = {0, 0, 0}, r2 = 0;
    for (int c = 0; c < dim; ++c) d[c] = hp.x[c][i] - n.c[c], r2 += d[c] * d[c];
    if (n.body >= 0 || (n.size * n.size < theta * theta * r2)) {
      if (n.body == int(i)) return;
      const double s = r2 + 1e-4;
      const double f = dim == 3 ? -n.m / (s * std::sqrt(s)) : -n.m / s;
      for (int c = 0; c < dim; ++c) a[c] += f * d[c];
      return;
    }
    for (int o = 0; o < (1 << dim); ++o)
      if (n.child[o] >= 0) walk(n.child[o], i, theta, a);
  }
};

Errors plain_bh_error(const HostParticles& hp, const std::vector<std::size_t>& idx,
                      const std::vector<double>& ref, double theta) {
  PlainBH bh(hp);
  HostParticles a(hp.dim);
  a.resize(hp.size());
#pragma omp parallel for schedule(dynamic, 4)
  for (std::size_t k = 0; k < idx.size(); ++k) {
    double acc[3];
    bh.accel(idx[k], theta, acc);
    for (int d = 0; d < hp.dim; ++d) a.a[d][idx[k]] = acc[d];
  }
  return errors(a, idx, ref);
}

void accuracy(const Opts& o) {
  const std::size_t n = o.n ? o.n : (o.backend == Backend::Cuda ? 200000 : 20000);
  std::printf(
      "# tree accuracy: N = %zu, backend %s, tree in double; reference: all_pairs in double\n", n,
      to_string(o.backend));
  std::printf("%-22s %6s %5s %10s %10s %10s\n", "system", "theta", "multi", "rms", "p99", "max");
  for (int dim : {3, 2}) {
    const HostParticles hp = dim == 3 ? plummer(n, 11) : disk2d(n, 11);
    const char* name = dim == 3 ? "3D Plummer, gravity" : "2D Plummer disk, log";
    const HostParticles ref_a = forces(hp, o.backend, Precision::Double, "all_pairs", "");
    std::vector<std::size_t> all(n);
    std::vector<double> ref(dim * n);
    for (std::size_t i = 0; i < n; ++i) {
      all[i] = i;
      for (int d = 0; d < dim; ++d) ref[dim * i + d] = ref_a.a[d][i];
    }
    for (bool quad : {false, true})
      for (double theta : {0.3, 0.5, 0.6, 0.7, 1.0}) {
        char sp[128];
        std::snprintf(sp, sizeof sp, "theta = %g\nquadrupole = %s", theta, quad ? "true" : "false");
        const Errors e = errors(forces(hp, o.backend, Precision::Double, "tree", sp), all, ref);
        std::printf("%-22s %6.2f %5s %10.3e %10.3e %10.3e\n", name, theta, quad ? "quad" : "mono",
                    e.rms, e.p99, e.max);
        std::fflush(stdout);
      }
    std::vector<std::size_t> sample;
    std::vector<double> sref;
    for (std::size_t i = 0; i < n; i += std::max<std::size_t>(1, n / 2000)) {
      sample.push_back(i);
      for (int d = 0; d < dim; ++d) sref.push_back(ref_a.a[d][i]);
    }
    const Errors e = plain_bh_error(hp, sample, sref, 0.5);
    std::printf(
        "%-22s %6.2f %5s %10.3e %10.3e %10.3e   plain Barnes-Hut (per particle, l/d < theta)\n",
        name, 0.5, "mono", e.rms, e.p99, e.max);
    std::fflush(stdout);
  }
}

// What the GPU walk does, counted on the host from the tree itself: the tree's walk groups, a node
// accepted when its centre of mass lies farther than its opening radius from the group's box. Per
// target: far nodes and near particles; per group: steps of the walk (each tests the children of up
// to 32 / 2^dim opened nodes).
template <class Real>
void walk_stats(const Tree& t, Backend b, int dim) {
  auto fetch = [&](const void* p, std::size_t bytes) {
    std::vector<char> v(bytes);
    if (b == Backend::Cuda) cuda::device_memory().copy_to_host(v.data(), p, bytes);
    else std::memcpy(v.data(), p, bytes);
    return v;
  };
  const auto src_b = fetch(t.src, std::size_t(t.n) * 4 * sizeof(Real));
  const auto com_b = fetch(t.com, std::size_t(t.nodes) * 4 * sizeof(Real));
  const auto rc_b = fetch(t.rcrit2, std::size_t(t.nodes) * sizeof(Real));
  const auto lk_b = fetch(t.links, std::size_t(t.nodes) * sizeof(TreeLinks));
  const Real* src = reinterpret_cast<const Real*>(src_b.data());
  const Real* com = reinterpret_cast<const Real*>(com_b.data());
  const Real* rc = reinterpret_cast<const Real*>(rc_b.data());
  const TreeLinks* lk = reinterpret_cast<const TreeLinks*>(lk_b.data());
  const int groups = t.ngroups;
  std::vector<TreeGroup> gr(groups);
  if (b == Backend::Cuda)
    cuda::device_memory().copy_to_host(gr.data(), t.groups, groups * sizeof(TreeGroup));
  else std::memcpy(gr.data(), t.groups, groups * sizeof(TreeGroup));
  double far = 0, near = 0, tested = 0, opened = 0;
  std::size_t leaves = 0;
  for (int i = 0; i < t.nodes; ++i) leaves += lk[i].nchild == 0;
#pragma omp parallel for reduction(+ : far, near, tested, opened) schedule(dynamic, 16)
  for (int g = 0; g < groups; ++g) {
    const int b0 = gr[g].begin, e0 = gr[g].end;
    Real lo[3], hi[3], centre[3], half[3];
    for (int d = 0; d < 3; ++d) lo[d] = hi[d] = src[4 * std::size_t(b0) + d];
    for (int i = b0; i < e0; ++i)
      for (int d = 0; d < 3; ++d)
        lo[d] = std::min(lo[d], src[4 * std::size_t(i) + d]),
        hi[d] = std::max(hi[d], src[4 * std::size_t(i) + d]);
    for (int d = 0; d < 3; ++d) centre[d] = (lo[d] + hi[d]) / 2, half[d] = (hi[d] - lo[d]) / 2;
    std::vector<int> stack{0};
    double f = 0, nr = 0, ts = 0, op = 0;
    while (!stack.empty()) {
      const int node = stack.back();
      stack.pop_back();
      ts += 1;
      const Real d2 = dim == 3
                          ? tree_detail::box_dist2<3>(com + 4 * std::size_t(node), centre, half)
                          : tree_detail::box_dist2<2>(com + 4 * std::size_t(node), centre, half);
      if (d2 > rc[node]) f += 1;
      else if (lk[node].nchild == 0) nr += lk[node].end - lk[node].begin;
      else {
        op += 1;
        for (int c = 0; c < lk[node].nchild; ++c) stack.push_back(lk[node].child + c);
      }
    }
    far += f * (e0 - b0), near += nr * (e0 - b0), tested += ts, opened += op;
  }
  std::printf(
      "  walk: %d nodes (%zu leaves, %.1f particles per leaf), %d levels; per target: %.0f far "
      "nodes + %.0f near particles; %d groups (%.1f particles each): %.0f nodes tested, %.0f "
      "opened per group\n",
      t.nodes, leaves, double(t.n) / double(leaves), t.depth, far / t.n, near / t.n, groups,
      double(t.n) / groups, tested / groups, opened / groups);
}

void speed(const Opts& o) {
  const std::size_t n = o.n ? o.n : 1000000;
  const HostParticles hp = o.dim == 3 ? plummer(n, 5) : disk2d(n, 5);
  RunInfo run;
  run.dim = o.dim;
  run.precision = o.precision;
  run.backend = o.backend;
  std::size_t free0 = 0;
  if (o.backend == Backend::Cuda) free0 = cuda::device_info().free_memory;
  char sp[160];
  std::snprintf(sp, sizeof sp, "theta = %g\nquadrupole = %s\nleaf_size = %d", o.theta,
                o.quad ? "true" : "false", o.leaf);
  auto pot = registry().make_potential(law_of(o.dim),
                                       params(PluginKind::Potential, law_of(o.dim), kEps), run);
  auto sch = registry().make_scheme("tree", params(PluginKind::Scheme, "tree", sp), run);
  ParticleStore s(o.dim, o.precision, memory_of(o.backend));
  s.upload(hp);
  auto ops = ops_of(o.backend);
  ForceRequest req;
  req.box = &run.box;
  const double dt = 1e-4;
  auto force = [&](double* tb, double* tw) {
    ops->zero_forces(s, false, false);
    if (tb) sync(o.backend);
    const double t0 = now();
    sch->update(s, run.box, pot->reach());
    if (tb) {
      sync(o.backend);
      *tb = now() - t0;
    }
    const double t1 = now();
    pot->compute(s, sch->neighbourhood(), req);
    if (tw) {
      sync(o.backend);
      *tw = now() - t1;
    }
  };
  force(nullptr, nullptr);
  sync(o.backend);
  std::size_t used = 0;
  if (o.backend == Backend::Cuda) used = free0 - cuda::device_info().free_memory;

  // Error on a sample, at the starting positions.
  std::vector<std::size_t> idx;
  std::mt19937_64 rng(3);
  for (int k = 0; k < o.sample; ++k) idx.push_back(std::size_t(rng() % n));
  HostParticles a;
  s.download(a, ParticleStore::kAcceleration);
  const std::vector<double> ref = direct(hp, idx);
  const Errors e = errors(a, idx, ref);

  std::vector<double> steps, builds, walks;
  for (int k = 0; k < o.steps; ++k) {  // timed steps, no synchronisation inside
    sync(o.backend);
    const double t0 = now();
    ops->kick(s, dt / 2);
    ops->drift(s, dt);
    force(nullptr, nullptr);
    ops->kick(s, dt / 2);
    sync(o.backend);
    steps.push_back(now() - t0);
  }
  for (int k = 0; k < 3; ++k) {  // the parts, each synchronised
    double tb = 0, tw = 0;
    force(&tb, &tw);
    builds.push_back(tb);
    walks.push_back(tw);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::string dev = to_string(o.backend);
  if (o.backend == Backend::Cuda) dev = cuda::device_info().name;
  std::printf(
      "%-24s N=%-9zu %dD %-6s theta=%.2f %s leaf=%-2d  step %8.3f ms  (build %7.3f, walk %7.3f)"
      "  rms %.2e p99 %.2e  mem %.0f B/particle\n",
      dev.c_str(), n, o.dim, to_string(o.precision), o.theta, o.quad ? "quad" : "mono", o.leaf,
      1e3 * median(steps), 1e3 * median(builds), 1e3 * median(walks), e.rms, e.p99,
      double(used) / double(n));
  std::fflush(stdout);
  const Tree& tree = *static_cast<const Tree*>(sch->neighbourhood().data);
  if (o.precision == Precision::Float) walk_stats<float>(tree, o.backend, o.dim);
  else walk_stats<double>(tree, o.backend, o.dim);
}

}  // namespace

int main(int argc, char** argv) {
  Opts o;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw Error(a + " needs a value");
        return argv[++i];
      };
      if (a == "accuracy" || a == "speed") o.mode = a;
      else if (a == "--backend") o.backend = next() == "cuda" ? Backend::Cuda : Backend::Cpu;
      else if (a == "--precision")
        o.precision = next() == "double" ? Precision::Double : Precision::Float;
      else if (a == "--dim") o.dim = std::stoi(next());
      else if (a == "--theta") o.theta = std::stod(next());
      else if (a == "--quadrupole") o.quad = std::stoi(next()) != 0;
      else if (a == "--leaf") o.leaf = std::stoi(next());
      else if (a == "--steps") o.steps = std::stoi(next());
      else if (a == "--sample") o.sample = std::stoi(next());
      else o.n = std::size_t(std::stod(a));
    }
    if (o.mode == "accuracy") accuracy(o);
    else speed(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_tree: %s\n", e.what());
    return 1;
  }
  return 0;
}
