// SPDX-License-Identifier: BSD-3-Clause
// The cell_list scheme: the same forces as all_pairs for cut-off laws (2D/3D, periodic/walls/open,
// with and without the Verlet list, after moves and rebuilds, when the density rises), far zones
// within their documented error for long-range laws, and the builder's neighbour query. The CUDA
// cases compare the GPU's cell list with the CPU's all-pairs and skip without a GPU.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "pardyn/app/backend.hpp"
#include "pardyn/cell_list.hpp"
#include "pardyn/app/config.hpp"
#include "pardyn/app/cuda.hpp"
#include "support.hpp"
#include "tree_systems.hpp"

using namespace pardyn;

namespace {

// Built-in plugins plus the test plugin `test_spring` (a cut-off law with GPU code).
Registry& registry() {
  static Registry* reg = [] {
    auto* r = new Registry;
    r->load_path(Registry::builtin_plugin_dir());
    r->load_path(test::staged_plugin("good"));
    r->throw_if_refused();
    return r;
  }();
  return *reg;
}

ParamSet params(PluginKind kind, const std::string& name, const std::string& text) {
  const FactoryInfo* info = registry().find(kind, name);
  if (!info) throw Error("test: no plugin " + name);
  return parse_params(info->schema, text, name);
}

Box make_box(int dim, double half, Boundary b) {
  Box box;
  for (int d = 0; d < 3; ++d) {
    box.lo[d] = -half;
    box.hi[d] = half;
    box.boundary[d] = d < dim ? b : Boundary::Open;
  }
  return box;
}

HostParticles random_particles(int dim, std::size_t n, unsigned seed, double half) {
  HostParticles hp(dim);
  hp.resize(n);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-half, half), m(0.5, 2.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (int d = 0; d < dim; ++d) hp.x[d][i] = u(rng);
    hp.mass[i] = m(rng);
    hp.type[i] = int(i % 3);
    hp.id[i] = std::int64_t(i);
  }
  return hp;
}

// A potential with its scheme and a store on one backend, kept across evaluations.
struct Rig {
  RunInfo run;
  std::shared_ptr<Potential> pot;
  std::shared_ptr<Scheme> scheme;
  std::unique_ptr<BackendOps> ops;
  std::unique_ptr<ParticleStore> store;

  Rig(Backend backend, const std::string& law, const std::string& law_params,
      const std::string& scheme_name, const std::string& scheme_params, const HostParticles& hp,
      Precision prec, const Box& box) {
    run.dim = hp.dim;
    run.precision = prec;
    run.backend = backend;
    run.box = box;
    pot = registry().make_potential(law, params(PluginKind::Potential, law, law_params), run);
    scheme = registry().make_scheme(scheme_name,
                                    params(PluginKind::Scheme, scheme_name, scheme_params), run);
    ops = backend == Backend::Cuda ? cuda::make_ops() : make_cpu_ops();
    store = std::make_unique<ParticleStore>(
        hp.dim, prec, backend == Backend::Cuda ? cuda::device_memory() : host_memory());
    store->upload(hp);
  }
  // Forces (and energies, virials) at the store's positions.
  HostParticles compute(bool energy = true) {
    ops->zero_forces(*store, energy, energy);
    ForceRequest req;
    req.energy = req.virial = energy;
    req.box = &run.box;
    scheme->update(*store, run.box, pot->reach());
    pot->compute(*store, scheme->neighbourhood(), req);
    HostParticles out(run.dim);
    store->download(out);
    return out;
  }
  const CellList& cells() const {
    return *static_cast<const CellList*>(scheme->neighbourhood().data);
  }
  // Moves the particles (as an integrator does: the positions change, nothing else; an upload would
  // count as a new set of particles and force a rebuild).
  void set_positions(const HostParticles& hp) {
    visit(*store, [&](auto p) {
      using Real = typename decltype(p)::real;
      for (int d = 0; d < run.dim; ++d) {
        const std::vector<Real> x(hp.x[d].begin(), hp.x[d].end());
        store->memory().copy_from_host(p.x[d], x.data(), x.size() * sizeof(Real));
      }
    });
  }
};

// Largest difference of accelerations, energies and virials, relative to the RMS of the
// reference's.
struct Diff {
  double acc = 0, epot = 0, virial = 0;
};
Diff diff(const HostParticles& a, const HostParticles& ref) {
  const std::size_t n = ref.size();
  double sa = 0, se = 0, sv = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (int d = 0; d < ref.dim; ++d) sa += ref.a[d][i] * ref.a[d][i];
    se += ref.epot[i] * ref.epot[i];
    sv += ref.virial[i] * ref.virial[i];
  }
  sa = std::sqrt(sa / n) + 1e-300;
  se = std::sqrt(se / n) + 1e-300;
  sv = std::sqrt(sv / n) + 1e-300;
  Diff r;
  for (std::size_t i = 0; i < n; ++i) {
    for (int d = 0; d < ref.dim; ++d)
      r.acc = std::max(r.acc, std::fabs(a.a[d][i] - ref.a[d][i]) / sa);
    r.epot = std::max(r.epot, std::fabs(a.epot[i] - ref.epot[i]) / se);
    r.virial = std::max(r.virial, std::fabs(a.virial[i] - ref.virial[i]) / sv);
  }
  return r;
}

// RMS of |a - ref| over RMS of |ref| (accelerations): the far-zone error measure.
double rms_error(const HostParticles& a, const HostParticles& ref) {
  return tree_systems::rms_over_rms(a, ref);
}

double nonzero_fraction(const HostParticles& h) {
  std::size_t nz = 0;
  for (std::size_t i = 0; i < h.size(); ++i) nz += h.a[0][i] != 0;
  return double(nz) / double(h.size());
}

HostParticles all_pairs_reference(const std::string& law, const std::string& lp,
                                  const HostParticles& hp, Precision prec, const Box& box) {
  Rig r(Backend::Cpu, law, lp, "all_pairs", "", hp, Precision::Double, box);
  (void)prec;
  return r.compute();
}

const char* name(Boundary b) { return to_string(b); }

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Cut-off laws: cell_list == all_pairs to rounding.

TEST(CellList, MatchesAllPairsForACutoffLaw) {
  for (int dim : {2, 3})
    for (Boundary b : {Boundary::Periodic, Boundary::Wall, Boundary::Open})
      for (const char* skin : {"skin = 0", "skin = 0.05", "skin = 0.05\nnewton = false"}) {
        const std::size_t n = dim == 2 ? 3000 : 4000;
        const HostParticles hp = random_particles(dim, n, 11 + dim, 1.0);
        const Box box = make_box(dim, 1.0, b);
        const std::string lp = "rcut = 0.17";
        const HostParticles ref =
            all_pairs_reference("test_spring", lp, hp, Precision::Double, box);
        Rig cl(Backend::Cpu, "test_spring", lp, "cell_list", skin, hp, Precision::Double, box);
        const HostParticles got = cl.compute();
        const Diff e = diff(got, ref);
        EXPECT_LT(e.acc, 1e-12) << dim << "D " << name(b) << " " << skin;
        EXPECT_LT(e.epot, 1e-12) << dim << "D " << name(b) << " " << skin;
        EXPECT_LT(e.virial, 1e-12) << dim << "D " << name(b) << " " << skin;
        EXPECT_GT(nonzero_fraction(ref), 0.9);  // the cut-off holds neighbours for most particles
        EXPECT_GE(cl.cells().ncells, 27u);
      }
}

TEST(CellList, FloatMatchesAllPairsToFloatRounding) {
  for (int dim : {2, 3}) {
    const HostParticles hp = random_particles(dim, 3000, 5, 1.0);
    const Box box = make_box(dim, 1.0, Boundary::Periodic);
    const HostParticles ref =
        all_pairs_reference("test_spring", "rcut = 0.2", hp, Precision::Float, box);
    Rig cl(Backend::Cpu, "test_spring", "rcut = 0.2", "cell_list", "skin = 0.1", hp,
           Precision::Float, box);
    // Float sums of ~10-40 terms against a double reference.
    EXPECT_LT(diff(cl.compute(), ref).acc, 2e-5) << dim << "D";
  }
}

TEST(CellList, PeriodicAxesWithFewerThanThreeCells) {
  // Box 2 x 2 x 2 with a cut-off of 0.8 (+ skin): 2 cells per axis, each visited once.
  for (const char* skin : {"skin = 0", "skin = 0.1"}) {
    const HostParticles hp = random_particles(3, 800, 3, 1.0);
    const Box box = make_box(3, 1.0, Boundary::Periodic);
    const HostParticles ref =
        all_pairs_reference("test_spring", "rcut = 0.8", hp, Precision::Double, box);
    Rig cl(Backend::Cpu, "test_spring", "rcut = 0.8", "cell_list", skin, hp, Precision::Double,
           box);
    EXPECT_LT(diff(cl.compute(), ref).acc, 1e-12) << skin;
    EXPECT_EQ(cl.cells().cells[0], 2) << skin;
  }
  // A mixed box: periodic x (1 cell), wall y, open z.
  const HostParticles hp = random_particles(3, 1000, 4, 1.0);
  Box box = make_box(3, 1.0, Boundary::Open);
  box.lo[0] = -0.6, box.hi[0] = 0.6;
  box.boundary[0] = Boundary::Periodic;
  box.boundary[1] = Boundary::Wall;
  HostParticles in = hp;
  for (std::size_t i = 0; i < in.size(); ++i) in.x[0][i] *= 0.6;
  const HostParticles ref =
      all_pairs_reference("test_spring", "rcut = 0.7", in, Precision::Double, box);
  Rig cl(Backend::Cpu, "test_spring", "rcut = 0.7", "cell_list", "skin = 0.2", in,
         Precision::Double, box);
  EXPECT_LT(diff(cl.compute(), ref).acc, 1e-12);
  EXPECT_EQ(cl.cells().cells[0], 1);
}

// The stencil walk of cell_list.hpp, in which every stencil traversal sums: axis 2 outermost, axis 0
// innermost, periodic coordinates wrapped, walled and open ones clamped, a periodic axis of fewer
// than 2 rings + 1 cells walked whole (each cell once).
TEST(CellList, StencilVisitsTheNeighbourCellsInItsOrder) {
  CellList g;
  g.dim = 3;
  g.cells[0] = 5, g.cells[1] = 3, g.cells[2] = 4;
  g.periodic[0] = true, g.periodic[1] = false, g.periodic[2] = true;
  g.ncells = 5 * 3 * 4;
  auto walk = [&](const int(&c)[3], int rings) {
    std::vector<std::size_t> v;
    for_each_stencil_cell<3>(g, c, rings, [&](std::size_t cell) { v.push_back(cell); });
    return v;
  };
  auto block = [&](std::vector<int> xs, std::vector<int> ys, std::vector<int> zs) {
    std::vector<std::size_t> v;
    for (int z : zs)
      for (int y : ys)
        for (int x : xs) v.push_back(g.cell_index(x, y, z));
    return v;
  };
  // One ring around (0, 0, 3): x wraps below 0 to 4, y stops at the wall, z wraps above 3 to 0.
  EXPECT_EQ(walk({0, 0, 3}, 1), block({4, 0, 1}, {0, 1}, {2, 3, 0}));
  // Two rings around (0, 1, 1): x (5 cells) reaches -2 .. 2, z (4 < 5 cells) is walked whole.
  EXPECT_EQ(walk({0, 1, 1}, 2), block({3, 4, 0, 1, 2}, {0, 1, 2}, {0, 1, 2, 3}));
  // The coordinates of a cell index and of a position.
  for (std::size_t cell = 0; cell < g.ncells; ++cell) {
    int c[3];
    g.cell_coords(cell, c);
    EXPECT_EQ(g.cell_index(c[0], c[1], c[2]), cell);
  }
  const double x[3] = {4.5, 1.2, 3.9};
  int c[3];
  g.cell_coords_at<3>(x, c);
  EXPECT_EQ(c[0] * 100 + c[1] * 10 + c[2], 413);
  g.cell_coords_at<2>(x, c);
  EXPECT_EQ(c[0] * 100 + c[1] * 10 + c[2], 410);
  // 2D: a periodic x of 2 cells, walked whole; y wraps above 5 to 0; z is not walked.
  CellList h;
  h.dim = 2;
  h.cells[0] = 2, h.cells[1] = 6;
  h.periodic[0] = h.periodic[1] = true;
  h.ncells = 12;
  std::vector<std::size_t> v;
  const int c2[3] = {1, 5, 0};
  for_each_stencil_cell<2>(h, c2, 1, [&](std::size_t cell) { v.push_back(cell); });
  EXPECT_EQ(v, (std::vector<std::size_t>{8, 9, 10, 11, 0, 1}));
}

TEST(CellList, VerletListFollowsMovesAndRebuildsWhenNeeded) {
  const int dim = 3;
  const HostParticles hp = random_particles(dim, 3000, 21, 1.0);
  const Box box = make_box(dim, 1.0, Boundary::Periodic);
  const std::string lp = "rcut = 0.2";
  Rig cl(Backend::Cpu, "test_spring", lp, "cell_list", "skin = 0.1", hp, Precision::Double, box);
  cl.compute();
  EXPECT_EQ(cl.cells().builds, 1u);
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(-1, 1);
  HostParticles moved = hp;
  // Small moves (each < skin/2 = 0.05 in total): the list is reused and stays exact.
  for (int step = 0; step < 4; ++step) {
    for (std::size_t i = 0; i < moved.size(); ++i)
      for (int d = 0; d < dim; ++d) moved.x[d][i] += 0.007 * u(rng);
    cl.set_positions(moved);
    const HostParticles got = cl.compute();
    const HostParticles ref = all_pairs_reference("test_spring", lp, moved, Precision::Double, box);
    EXPECT_LT(diff(got, ref).acc, 1e-12) << "step " << step;
  }
  EXPECT_EQ(cl.cells().builds, 1u) << "no particle moved more than skin/2: no rebuild";
  // One particle moves by 0.06 > skin/2, across the periodic face too: a rebuild, and still exact.
  moved.x[0][17] += 0.06;
  moved.x[1][5] = 0.99;
  moved.x[1][5] += 0.03;  // outside the box: the cell index wraps
  cl.set_positions(moved);
  const HostParticles got = cl.compute();
  const HostParticles ref = all_pairs_reference("test_spring", lp, moved, Precision::Double, box);
  EXPECT_LT(diff(got, ref).acc, 1e-12);
  EXPECT_EQ(cl.cells().builds, 2u);
}

TEST(CellList, ListGrowsWhenDensityRises) {
  for (Boundary b : {Boundary::Periodic, Boundary::Open}) {
    const HostParticles hp = random_particles(3, 4000, 31, 1.0);
    const Box box = make_box(3, 1.0, b);
    Rig cl(Backend::Cpu, "test_spring", "rcut = 0.15", "cell_list", "skin = 0.05", hp,
           Precision::Double, box);
    cl.compute();
    const std::size_t cap0 = cl.cells().nl_capacity;
    // Squeeze everything into a corner an eighth of the volume: 8x the neighbours.
    HostParticles dense = hp;
    for (std::size_t i = 0; i < dense.size(); ++i)
      for (int d = 0; d < 3; ++d) dense.x[d][i] = -1 + 0.5 * (dense.x[d][i] + 1);
    cl.set_positions(dense);
    const HostParticles got = cl.compute();
    const HostParticles ref =
        all_pairs_reference("test_spring", "rcut = 0.15", dense, Precision::Double, box);
    EXPECT_LT(diff(got, ref).acc, 1e-12) << name(b);
    EXPECT_GT(cl.cells().nl_capacity, 4 * cap0) << name(b);
  }
}

TEST(CellList, FlyingParticleOnAnOpenAxisDoesNotBlowMemoryUp) {
  HostParticles hp = random_particles(3, 2000, 41, 1.0);
  hp.x[0][7] = 1e9;  // far away on an open axis
  hp.x[2][8] = -1e12;
  const Box box = make_box(3, 1.0, Boundary::Open);
  const HostParticles ref =
      all_pairs_reference("test_spring", "rcut = 0.2", hp, Precision::Double, box);
  Rig cl(Backend::Cpu, "test_spring", "rcut = 0.2", "cell_list", "skin = 0.1", hp,
         Precision::Double, box);
  EXPECT_LT(diff(cl.compute(), ref).acc, 1e-12);
  EXPECT_LE(cl.cells().ncells, 2 * hp.size() + 1024);
}

TEST(CellList, LennardJonesMatchesAllPairs) {
  if (!registry().find(PluginKind::Potential, "lennard_jones"))
    GTEST_SKIP() << "the lennard_jones plugin is not built";
  for (int dim : {2, 3}) {
    // A lattice with noise at LJ density: no overlapping particles.
    HostParticles hp(dim);
    const int side = dim == 3 ? 14 : 50;
    const double a = dim == 3 ? 1.1 : 1.05;
    hp.resize(std::size_t(std::pow(side, dim)));
    std::mt19937_64 rng(2);
    std::uniform_real_distribution<double> u(-0.05, 0.05);
    for (std::size_t i = 0; i < hp.size(); ++i) {
      std::size_t q = i;
      for (int d = 0; d < dim; ++d, q /= side) hp.x[d][i] = (double(q % side) + 0.5) * a + u(rng);
      hp.mass[i] = 1;
      hp.id[i] = std::int64_t(i);
    }
    Box box;
    for (int d = 0; d < dim; ++d) box.hi[d] = side * a, box.boundary[d] = Boundary::Periodic;
    const HostParticles ref = all_pairs_reference("lennard_jones", "", hp, Precision::Double, box);
    for (const char* skin : {"skin = 0", "skin = 0.3", "skin = 0.3\nnewton = false"}) {
      Rig cl(Backend::Cpu, "lennard_jones", "", "cell_list", skin, hp, Precision::Double, box);
      const Diff e = diff(cl.compute(), ref);
      EXPECT_LT(e.acc, 1e-11) << dim << "D " << skin;
      EXPECT_LT(e.epot, 1e-11) << dim << "D " << skin;
    }
  }
}

TEST(CellList, BadParametersAreRefusedWithAHint) {
  const HostParticles hp = random_particles(3, 100, 1, 1.0);
  const Box box = make_box(3, 1.0, Boundary::Periodic);
  Rig small(Backend::Cpu, "test_spring", "rcut = 0.2", "cell_list", "cell_size = 0.1", hp,
            Precision::Double, box);
  try {
    small.compute();
    ADD_FAILURE() << "a cell smaller than the cut-off was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cell_size"), std::string::npos) << e.what();
  }
  Rig far(Backend::Cpu, "gravity", "eps = 0.1", "cell_list", "", hp, Precision::Double, box);
  try {
    far.compute();
    ADD_FAILURE() << "far zones on a periodic box were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("periodic"), std::string::npos) << e.what();
  }
}

// The builder used directly, as an analysis does: every pair closer than r, from both sides.
TEST(CellList, BuilderFindsExactlyThePairsWithinRange) {
  // Periodic and walled boxes, 2D and 3D, with several particles per cell, so that the builder cuts
  // cells into slices along x and the runs of slices wrap around the periodic faces.
  struct Case {
    int dim;
    Boundary boundary;
    double cutoff;
  };
  for (const Case& c : {Case{2, Boundary::Periodic, 0.15}, Case{3, Boundary::Periodic, 0.3},
                        Case{2, Boundary::Wall, 0.15}, Case{3, Boundary::Wall, 0.3}}) {
    const int dim = c.dim;
    const bool periodic = c.boundary == Boundary::Periodic;
    const std::string what = std::to_string(dim) + "D " + (periodic ? "periodic" : "walls");
    const HostParticles hp = random_particles(dim, 1500, 8, 1.0);
    const Box box = make_box(dim, 1.0, c.boundary);
    ParticleStore s(dim, Precision::Double, host_memory());
    s.upload(hp);
    CellListBuilder b;
    CellListOptions o;
    o.cutoff = c.cutoff;
    o.skin = 0;
    o.neighbour_list = true;
    b.update(s, box, o);
    const CellList& cl = b.list();
    std::set<std::pair<std::uint32_t, std::uint32_t>> got, want;
    for (std::size_t k = 0; k < cl.n; ++k)
      for (std::size_t m = 0; m < cl.nl_count[k]; ++m)
        got.insert({cl.order[k], cl.order[cl.neighbour(k, m)]});
    for (std::size_t i = 0; i < hp.size(); ++i)
      for (std::size_t j = 0; j < hp.size(); ++j) {
        if (i == j) continue;
        double r2 = 0;
        for (int d = 0; d < dim; ++d) {
          double dx = hp.x[d][i] - hp.x[d][j];
          if (periodic) dx -= 2.0 * std::nearbyint(dx / 2.0);
          r2 += dx * dx;
        }
        if (r2 < o.cutoff * o.cutoff) want.insert({std::uint32_t(i), std::uint32_t(j)});
      }
    EXPECT_EQ(got, want) << what;
    EXPECT_GT(want.size(), 5 * hp.size()) << what;
    // The half list: every pair once, in the row of its lower slot.
    o.half_list = true;
    b.update(s, box, o);
    const CellList& h = b.list();
    ASSERT_TRUE(h.half);
    std::set<std::pair<std::uint32_t, std::uint32_t>> both;
    std::size_t entries = 0;
    for (std::size_t k = 0; k < h.n; ++k)
      for (std::size_t m = 0; m < h.nl_count[k]; ++m) {
        const std::uint32_t j = h.neighbour(k, m);
        EXPECT_GT(j, k);
        both.insert({h.order[k], h.order[j]});
        both.insert({h.order[j], h.order[k]});
        ++entries;
      }
    EXPECT_EQ(both, want) << what << " half";
    EXPECT_EQ(2 * entries, want.size()) << what << " half";
    // The cells published with the list hold exactly their particles, in slot order.
    for (std::size_t k = 0; k < h.n; ++k) {
      int cc[3] = {0, 0, 0};
      for (int d = 0; d < dim; ++d) cc[d] = h.coordinate(hp.x[d][h.order[k]], d);
      const std::size_t cell = h.cell_index(cc[0], cc[1], cc[2]);
      EXPECT_TRUE(k >= h.cell_start[cell] && k < h.cell_end[cell]) << what << " slot " << k;
    }
  }
}

// A half list's force loop runs on one thread below 131,072 pairs (cell_list.cpp,
// kHalfListParallelMin: a small system's step on one thread, which holds up on a shared node) and on
// all threads above; the count follows the list's pairs at each build, and the forces match
// all_pairs either way.
TEST(CellList, HalfListForceLoopRunsOnOneThreadBelowItsPairBound) {
  const Box box = make_box(3, 1.0, Boundary::Periodic);
  struct Case {
    std::size_t n;
    bool parallel;
  };
  // Range 0.25 (0.2 + skin 0.05) in a box of volume 8: n^2/2 * 0.065/8 pairs, about 11,000 at
  // n = 1,700 and 146,000 at n = 6,000.
  for (const Case& c : {Case{1700, false}, Case{6000, true}}) {
    const HostParticles hp = random_particles(3, c.n, 31, 1.0);
    const std::string lp = "rcut = 0.2";
    const HostParticles ref = all_pairs_reference("test_spring", lp, hp, Precision::Double, box);
    Rig cl(Backend::Cpu, "test_spring", lp, "cell_list", "skin = 0.05", hp, Precision::Double, box);
    const HostParticles got = cl.compute();
    std::size_t pairs = 0;
    for (std::size_t k = 0; k < cl.cells().n; ++k) pairs += cl.cells().nl_count[k];
    ASSERT_TRUE(cl.cells().half);
    EXPECT_EQ(pairs >= (std::size_t(1) << 17), c.parallel) << pairs << " pairs";
    EXPECT_EQ(cl.cells().scratch_threads, c.parallel ? std::max(1, omp_get_max_threads()) : 1)
        << pairs << " pairs";
    EXPECT_LT(diff(got, ref).acc, 1e-12) << c.n;
  }
}

// A half list's force loop sums fixed ranges of rows into buffers of their own, so the forces are
// the same bits whatever number of threads runs them (HalfListTeam picks that number from the loop's
// times on a busy node): teams of 1, 2 and 3 threads over 3 ranges.
TEST(CellList, HalfListForcesDoNotDependOnTheTeam) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(3);  // 3 ranges on any machine (threads may outnumber cores)
  const Box box = make_box(3, 1.0, Boundary::Periodic);
  const HostParticles hp = random_particles(3, 6000, 31, 1.0);
  Rig cl(Backend::Cpu, "test_spring", "rcut = 0.2", "cell_list", "skin = 0.05", hp,
         Precision::Double, box);
  cl.compute();
  ASSERT_TRUE(cl.cells().half);
  ASSERT_EQ(cl.cells().scratch_threads, 3);
  ASSERT_NE(cl.cells().team, nullptr);
  for (bool energy : {true, false}) {  // the two kinds of call
    std::vector<HostParticles> got;
    for (int team : {3, 1, 2}) {
      cl.cells().team->fixed = team;
      got.push_back(cl.compute(energy));
    }
    for (int k : {1, 2})
      for (std::size_t i = 0; i < hp.size(); ++i) {
        for (int d = 0; d < 3; ++d)
          ASSERT_EQ(got[k].a[d][i], got[0].a[d][i])
              << "team " << k << " axis " << d << " particle " << i << " energy " << energy;
        if (energy) ASSERT_EQ(got[k].epot[i], got[0].epot[i]) << "team " << k << " particle " << i;
      }
  }
  cl.cells().team->fixed = 0;
  omp_set_num_threads(before);
}

// HalfListTeam keeps the team whose calls are faster: from all threads down to fewer when their
// calls take longer (a busy node), and back up when the cores are free again.
TEST(CellList, HalfListTeamFollowsTheLoopsTimes) {
  HalfListTeam t;
  t.reset(4);
  EXPECT_EQ(t.next(true), 4);
  // Calls take `cost(team)` seconds; run n timed calls and return the team of the last one.
  auto run = [&t](int n, auto cost) {
    int team = 0;
    for (int i = 0; i < n; ++i) {
      team = t.next(true);
      t.done(cost(team));
    }
    return t.team;
  };
  // Busy cores: one thread is fastest.
  auto busy = [](int team) { return 1.0 + 0.5 * (team - 1); };
  EXPECT_EQ(run(200, busy), 1);
  // Free cores: all four.
  auto idle = [](int team) { return 1.0 / team; };
  EXPECT_EQ(run(20000, idle), 4);
  // Untimed calls (energies) take the current team and change nothing.
  const int held = t.team;
  for (int i = 0; i < 50; ++i) EXPECT_EQ(t.next(false), held);
  // A team within 5 % of the current one's time is not taken.
  t.reset(2);
  EXPECT_EQ(run(1000, [](int team) { return team == 1 ? 0.97 : 1.0; }), 2);
  // A fixed team wins.
  t.fixed = 1;
  EXPECT_EQ(t.next(true), 1);
}

// ---------------------------------------------------------------------------------------------------
// Far zones (long-range laws): error against all_pairs, bounds as documented in docs/cell-list.md.

namespace {
struct FarCase {
  const char* law;
  const char* law_params;
  int dim;
  int near;
  double bound;       // RMS relative acceleration error allowed (docs/cell-list.md)
  double half = 1.0;  // particles uniform in [-half, half]^dim
};
}  // namespace

TEST(CellList, FarZonesStayWithinTheDocumentedError) {
  const FarCase cases[] = {
      {"log", "eps = 0.01", 2, 1, 5e-3},
      {"log", "eps = 0.01", 2, 2, 1.5e-3},
      {"gravity", "eps = 0.01", 3, 1, 5e-3},
      {"gravity", "eps = 0.01", 3, 2, 1.5e-3},
      // seed 003's gas at about one particle per unit area: the near zone must hold rc = 2
      {"soft_gas", "", 2, 1, 1e-4, 40.0},
  };
  for (const FarCase& c : cases)
    for (Boundary b : {Boundary::Wall, Boundary::Open}) {
      const HostParticles hp = random_particles(c.dim, 6000, 51, c.half);
      const Box box = make_box(c.dim, c.half, b);
      const HostParticles ref =
          all_pairs_reference(c.law, c.law_params, hp, Precision::Double, box);
      Rig cl(Backend::Cpu, c.law, c.law_params, "cell_list", "near = " + std::to_string(c.near), hp,
             Precision::Double, box);
      const HostParticles got = cl.compute();
      const double err = rms_error(got, ref);
      EXPECT_LT(err, c.bound) << c.law << " near " << c.near << " " << name(b);
      EXPECT_GT(err, 0.0);  // it is an approximation: identical would mean no far zone was used
      double u = 0, u_ref = 0;
      for (std::size_t i = 0; i < hp.size(); ++i) u += got.epot[i], u_ref += ref.epot[i];
      EXPECT_LT(std::fabs(u - u_ref), 1e-4 * std::fabs(u_ref)) << c.law << " energy";
      std::printf(
          "far zones %s %dD near %d %s: rms acceleration error %.3g, energy %.3g, %zu cells\n",
          c.law, c.dim, c.near, name(b), err, std::fabs(u - u_ref) / std::fabs(u_ref),
          cl.cells().ncells);
    }
}

// A dense gas whose default cells (about 8 particles each) would be narrower than soft_gas's
// short range: the default cell size grows to the short-range radius sqrt(rc^2 - eps^2), and the
// near zone then holds the short-range part (the check agrees with the sizing: no error).
TEST(CellList, DefaultCellsHoldTheShortRangeOfADenseGas) {
  const HostParticles hp = random_particles(2, 6000, 53, 19.99);  // 3.75 per unit area
  const Box box = make_box(2, 19.99, Boundary::Wall);             // 20 cells of 1.999
  const HostParticles ref = all_pairs_reference("soft_gas", "", hp, Precision::Double, box);
  Rig cl(Backend::Cpu, "soft_gas", "", "cell_list", "", hp, Precision::Double, box);
  const HostParticles got = cl.compute();
  EXPECT_GE(cl.cells().near * cl.cells().width[0], std::sqrt(4.0 - 0.01));
  EXPECT_LT(cl.cells().width[0], 2.0);  // the short range, not rc, sized the cells
  EXPECT_LT(rms_error(got, ref), 1e-4);
}

// The pyramid's accuracy is selectable: more rings, and quadrupoles, give smaller errors (the table
// of docs/cell-list.md), and at the defaults the real gas is within 1e-4.
TEST(CellList, FarZoneErrorFallsWithRingsAndQuadrupoles) {
  struct Law {
    const char* law;
    const char* params;
    int dim;
    double half;
  };
  const Law laws[] = {{"soft_gas", "attraction = 0.003", 2, 40.0},
                      {"log", "eps = 0.01", 2, 1.0},
                      {"gravity", "eps = 0.01", 3, 1.0}};
  for (const Law& c : laws) {
    const HostParticles hp = random_particles(c.dim, 6000, 52, c.half);
    const Box box = make_box(c.dim, c.half, Boundary::Wall);
    const HostParticles ref = all_pairs_reference(c.law, c.params, hp, Precision::Double, box);
    double mono[3] = {0, 0, 0};
    for (bool quad : {false, true}) {
      double last = 1e30;
      for (int rings : {1, 2, 3}) {
        Rig cl(Backend::Cpu, c.law, c.params, "cell_list",
               "rings = " + std::to_string(rings) + "\nquadrupole = " + (quad ? "true" : "false"),
               hp, Precision::Double, box);
        const double err = rms_error(cl.compute(), ref);
        std::printf("far zones %s %dD rings %d quadrupole %d: rms error %.3g (%d levels)\n", c.law,
                    c.dim, rings, int(quad), err, cl.cells().levels);
        // More rings never hurt (equal once the pyramid has a single level: 6,000 particles make
        // few levels; bench_far_error shows the table at 10^6).
        EXPECT_LE(err, last * (1 + 1e-9)) << c.law << " rings " << rings << " quadrupole " << quad;
        last = err;
        if (!quad) mono[rings - 1] = err;
        if (quad) {
          EXPECT_LT(err, 0.6 * mono[rings - 1]) << c.law << " rings " << rings;
        }
        if (rings == 2 && quad && std::string(c.law) == "soft_gas") {
          EXPECT_LT(err, 1e-4);
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// The GPU: cell_list on the device == all_pairs on the host.

TEST(CellListCuda, MatchesAllPairsForACutoffLaw) {
  PARDYN_SKIP_WITHOUT_GPU();
  for (int dim : {2, 3})
    for (Boundary b : {Boundary::Periodic, Boundary::Wall, Boundary::Open})
      for (const char* skin : {"skin = 0", "skin = 0.05"}) {
        const HostParticles hp = random_particles(dim, 5000, 61 + dim, 1.0);
        const Box box = make_box(dim, 1.0, b);
        const HostParticles ref =
            all_pairs_reference("test_spring", "rcut = 0.15", hp, Precision::Double, box);
        Rig cl(Backend::Cuda, "test_spring", "rcut = 0.15", "cell_list", skin, hp,
               Precision::Double, box);
        const Diff e = diff(cl.compute(), ref);
        EXPECT_LT(e.acc, 1e-12) << dim << "D " << name(b) << " " << skin;
        EXPECT_LT(e.epot, 1e-12) << dim << "D " << name(b) << " " << skin;
        EXPECT_LT(e.virial, 1e-12) << dim << "D " << name(b) << " " << skin;
        Rig cf(Backend::Cuda, "test_spring", "rcut = 0.15", "cell_list", skin, hp, Precision::Float,
               box);
        EXPECT_LT(diff(cf.compute(), ref).acc, 2e-5) << dim << "D float " << name(b) << " " << skin;
      }
}

TEST(CellListCuda, PeriodicAxesWithFewerThanThreeCells) {
  PARDYN_SKIP_WITHOUT_GPU();
  for (const char* skin : {"skin = 0", "skin = 0.1"}) {
    const HostParticles hp = random_particles(3, 800, 3, 1.0);
    const Box box = make_box(3, 1.0, Boundary::Periodic);
    const HostParticles ref =
        all_pairs_reference("test_spring", "rcut = 0.8", hp, Precision::Double, box);
    Rig cl(Backend::Cuda, "test_spring", "rcut = 0.8", "cell_list", skin, hp, Precision::Double,
           box);
    EXPECT_LT(diff(cl.compute(), ref).acc, 1e-12) << skin;
  }
}

TEST(CellListCuda, VerletListFollowsMovesRebuildsAndGrows) {
  PARDYN_SKIP_WITHOUT_GPU();
  const HostParticles hp = random_particles(3, 6000, 71, 1.0);
  const Box box = make_box(3, 1.0, Boundary::Periodic);
  const std::string lp = "rcut = 0.15";
  Rig cl(Backend::Cuda, "test_spring", lp, "cell_list", "skin = 0.1", hp, Precision::Double, box);
  cl.compute();
  const std::size_t cap0 = cl.cells().nl_capacity;
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(-1, 1);
  HostParticles moved = hp;
  for (int step = 0; step < 3; ++step) {
    for (std::size_t i = 0; i < moved.size(); ++i)
      for (int d = 0; d < 3; ++d) moved.x[d][i] += 0.01 * u(rng);
    cl.set_positions(moved);
    const HostParticles ref = all_pairs_reference("test_spring", lp, moved, Precision::Double, box);
    EXPECT_LT(diff(cl.compute(), ref).acc, 1e-12) << "step " << step;
  }
  EXPECT_EQ(cl.cells().builds, 1u);
  moved.x[2][100] += 0.07;
  cl.set_positions(moved);
  {
    const HostParticles ref = all_pairs_reference("test_spring", lp, moved, Precision::Double, box);
    EXPECT_LT(diff(cl.compute(), ref).acc, 1e-12);
    EXPECT_EQ(cl.cells().builds, 2u);
  }
  for (std::size_t i = 0; i < moved.size(); ++i)
    for (int d = 0; d < 3; ++d) moved.x[d][i] = -1 + 0.5 * (moved.x[d][i] + 1);
  cl.set_positions(moved);
  const HostParticles ref = all_pairs_reference("test_spring", lp, moved, Precision::Double, box);
  EXPECT_LT(diff(cl.compute(), ref).acc, 1e-12);
  EXPECT_GT(cl.cells().nl_capacity, 4 * cap0);
}

TEST(CellListCuda, LennardJonesMatchesAllPairs) {
  PARDYN_SKIP_WITHOUT_GPU();
  if (!registry().find(PluginKind::Potential, "lennard_jones"))
    GTEST_SKIP() << "the lennard_jones plugin is not built";
  HostParticles hp(3);
  const int side = 16;
  const double a = 1.1;
  hp.resize(side * side * side);
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> u(-0.05, 0.05);
  for (std::size_t i = 0; i < hp.size(); ++i) {
    std::size_t q = i;
    for (int d = 0; d < 3; ++d, q /= side) hp.x[d][i] = (double(q % side) + 0.5) * a + u(rng);
    hp.mass[i] = 1;
    hp.id[i] = std::int64_t(i);
  }
  Box box;
  for (int d = 0; d < 3; ++d) box.hi[d] = side * a, box.boundary[d] = Boundary::Periodic;
  const HostParticles ref = all_pairs_reference("lennard_jones", "", hp, Precision::Double, box);
  for (const char* skin : {"skin = 0", "skin = 0.3"}) {
    Rig cl(Backend::Cuda, "lennard_jones", "", "cell_list", skin, hp, Precision::Double, box);
    const Diff e = diff(cl.compute(), ref);
    EXPECT_LT(e.acc, 1e-11) << skin;
    EXPECT_LT(e.epot, 1e-11) << skin;
  }
}

TEST(CellListCuda, FarZonesMatchTheCpu) {
  PARDYN_SKIP_WITHOUT_GPU();
  for (int dim : {2, 3}) {
    const char* law = dim == 2 ? "log" : "gravity";
    const HostParticles hp = random_particles(dim, 6000, 81, 1.0);
    const Box box = make_box(dim, 1.0, Boundary::Wall);
    Rig host(Backend::Cpu, law, "eps = 0.01", "cell_list", "near = 1", hp, Precision::Double, box);
    Rig dev(Backend::Cuda, law, "eps = 0.01", "cell_list", "near = 1", hp, Precision::Double, box);
    // The same zones on both sides: the same approximation, to rounding.
    const Diff e = diff(dev.compute(), host.compute());
    EXPECT_LT(e.acc, 1e-11) << law;
    EXPECT_LT(e.epot, 1e-11) << law;
  }
}
