// The tree scheme: forces agree with all-pairs within the documented bounds (docs/tree.md),
// converge to all-pairs as theta falls, energies and virials match, the store is never reordered,
// and laws without a far field or periodic boxes are refused with a clear message. CPU and CUDA.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>

#include "pardyn/backend.hpp"
#include "pardyn/config.hpp"
#include "pardyn/cuda.hpp"
#include "pardyn/simulation.hpp"
#include "support.hpp"
#include "../bench/tree_systems.hpp"
#include "../plugins/tree/tree_build.hpp"

using namespace pardyn;

namespace {

struct Result {
  HostParticles hp;
  Reductions r;
};

// Forces, energies and virials of `in` with potential `law` (and its TOML parameters) and a scheme.
Result forces(const HostParticles& in, const std::string& law, const std::string& law_params,
              const std::string& scheme, const std::string& scheme_params, Precision prec,
              Backend backend = Backend::Cpu) {
  auto& reg = test::registry();
  RunInfo run;
  run.dim = in.dim;
  run.precision = prec;
  run.backend = backend;
  auto pot = reg.make_potential(law, test::params_for(PluginKind::Potential, law, law_params), run);
  auto sch =
      reg.make_scheme(scheme, test::params_for(PluginKind::Scheme, scheme, scheme_params), run);
  MemoryResource& mem = backend == Backend::Cuda ? cuda::device_memory() : host_memory();
  auto ops = backend == Backend::Cuda ? cuda::make_ops() : make_cpu_ops();
  ParticleStore s(in.dim, prec, mem);
  s.upload(in);
  ops->zero_forces(s, true, true);
  ForceRequest req;
  req.energy = req.virial = true;
  req.box = &run.box;
  sch->update(s, run.box, pot->cutoff());
  pot->compute(s, sch->neighbourhood(), req);
  Result res;
  s.download(res.hp);
  res.r = ops->reduce(s);
  return res;
}

using tree_systems::disk2d;
using tree_systems::Errors;
using tree_systems::errors;

HostParticles plummer(std::size_t n, unsigned seed) {
  return tree_systems::plummer(test::registry(), n, seed);
}

std::string tree_params(double theta, bool quad, int leaf = 16) {
  return "theta = " + std::to_string(theta) + "\nquadrupole = " + (quad ? "true" : "false") +
         "\nleaf_size = " + std::to_string(leaf);
}

bool have_gpu() { return cuda::device_count() > 0; }

}  // namespace

// The documented bounds (docs/tree.md): a Plummer sphere, theta = 0.5, double.
TEST(Tree, PlummerSphereWithinDocumentedBounds) {
  const HostParticles hp = plummer(20000, 3);
  const std::string grav = "eps = 0.01";
  const Result ref = forces(hp, "gravity", grav, "all_pairs", "", Precision::Double);
  const Errors quad = errors(
      forces(hp, "gravity", grav, "tree", tree_params(0.5, true), Precision::Double).hp, ref.hp);
  const Errors mono = errors(
      forces(hp, "gravity", grav, "tree", tree_params(0.5, false), Precision::Double).hp, ref.hp);
  EXPECT_LT(quad.rms, 1e-3);
  EXPECT_LT(quad.p99, 3e-3);
  EXPECT_LT(mono.rms, 3e-3);
  EXPECT_LT(quad.rms, 0.5 * mono.rms) << "quadrupoles should improve on monopoles";
  RecordProperty("rms_quad", std::to_string(quad.rms));
  RecordProperty("rms_mono", std::to_string(mono.rms));
}

TEST(Tree, ConvergesToAllPairsAsThetaFalls) {
  const HostParticles hp = plummer(5000, 5);
  const Result ref = forces(hp, "gravity", "eps = 0.01", "all_pairs", "", Precision::Double);
  for (bool quad : {false, true}) {
    double last = 1e30;
    for (double theta : {1.0, 0.7, 0.5, 0.3, 0.15, 0.05}) {
      const Errors e = errors(
          forces(hp, "gravity", "eps = 0.01", "tree", tree_params(theta, quad), Precision::Double)
              .hp,
          ref.hp);
      EXPECT_LT(e.rms, last) << "theta " << theta << " quadrupole " << quad;
      last = e.rms;
    }
    EXPECT_LT(last, quad ? 1e-7 : 1e-5) << "theta 0.05, quadrupole " << quad;
  }
}

TEST(Tree, EnergyAndVirialMatchAllPairs) {
  const HostParticles hp = plummer(5000, 9);
  const Result ref = forces(hp, "gravity", "eps = 0.02", "all_pairs", "", Precision::Double);
  const Result t =
      forces(hp, "gravity", "eps = 0.02", "tree", tree_params(0.5, true), Precision::Double);
  EXPECT_NEAR(t.r.potential, ref.r.potential, 1e-4 * std::fabs(ref.r.potential));
  EXPECT_NEAR(t.r.virial, ref.r.virial, 1e-3 * std::fabs(ref.r.virial));
  double worst = 0;
  for (std::size_t i = 0; i < hp.size(); ++i)
    worst = std::max(worst, std::fabs(t.hp.epot[i] - ref.hp.epot[i]) / std::fabs(ref.hp.epot[i]));
  EXPECT_LT(worst, 1e-2);
}

TEST(Tree, Log2DQuadtree) {
  const HostParticles hp = disk2d(20000, 4);
  const std::string prm = "eps = 0.01";
  const Result ref = forces(hp, "log", prm, "all_pairs", "", Precision::Double);
  const Errors quad =
      errors(forces(hp, "log", prm, "tree", tree_params(0.5, true), Precision::Double).hp, ref.hp);
  const Errors mono =
      errors(forces(hp, "log", prm, "tree", tree_params(0.5, false), Precision::Double).hp, ref.hp);
  EXPECT_LT(quad.rms, 1e-3);
  EXPECT_LT(mono.rms, 5e-3);
  EXPECT_LT(quad.rms, mono.rms);
  // gravity in 2D uses the same quadtree
  const Result gref = forces(hp, "gravity", prm, "all_pairs", "", Precision::Double);
  EXPECT_LT(errors(forces(hp, "gravity", prm, "tree", tree_params(0.5, true), Precision::Double).hp,
                   gref.hp)
                .rms,
            1e-3);
}

// Small systems (a single leaf, two particles, coincident particles) are exact.
TEST(Tree, SmallAndDegenerateSystems) {
  for (std::size_t n : {1, 2, 16, 17}) {
    HostParticles hp = plummer(std::max<std::size_t>(n, 2), 1);
    hp.resize(n);
    const Result ref = forces(hp, "gravity", "eps = 0.1", "all_pairs", "", Precision::Double);
    const Result t =
        forces(hp, "gravity", "eps = 0.1", "tree", tree_params(0.5, true, 16), Precision::Double);
    for (std::size_t i = 0; i < n; ++i)
      for (int d = 0; d < 3; ++d) EXPECT_NEAR(t.hp.a[d][i], ref.hp.a[d][i], 1e-12) << n;
  }
  // 100 particles at 4 points: leaves that cannot split (all keys equal) stay exact
  HostParticles hp = plummer(100, 2);
  for (std::size_t i = 0; i < 100; ++i)
    for (int d = 0; d < 3; ++d) hp.x[d][i] = double(int(i % 4) == d);
  const Result ref = forces(hp, "gravity", "eps = 0.1", "all_pairs", "", Precision::Double);
  const Result t =
      forces(hp, "gravity", "eps = 0.1", "tree", tree_params(0.5, true, 4), Precision::Double);
  EXPECT_LT(errors(t.hp, ref.hp).max, 1e-12);
}

// The store keeps its order: positions and ids come back as they went in, each particle with its
// own force (the walk writes to the store index of every sorted slot).
TEST(Tree, StoreOrderIsUntouched) {
  const HostParticles hp = plummer(3000, 8);
  const Result t =
      forces(hp, "gravity", "eps = 0.01", "tree", tree_params(0.3, true), Precision::Float);
  const Result ref = forces(hp, "gravity", "eps = 0.01", "all_pairs", "", Precision::Double);
  for (std::size_t i = 0; i < hp.size(); ++i) {
    EXPECT_EQ(t.hp.id[i], hp.id[i]);
    EXPECT_FLOAT_EQ(float(t.hp.x[0][i]), float(hp.x[0][i]));
  }
  EXPECT_LT(errors(t.hp, ref.hp).rms, 1e-3);  // float precision
}

TEST(Tree, RefusesPeriodicBoxes) {
  const std::string dir = test::scratch_dir("periodic");
  std::ofstream(dir + "/s.toml")
      << "[simulation]\ndimension = 3\nsteps = 1\n[box]\nlo = [-5, -5, -5]\nhi = [5, 5, 5]\n"
         "boundary = \"periodic\"\n[[particles]]\ngenerator = \"plummer\"\ncount = 100\n"
         "[[potential]]\ntype = \"gravity\"\nscheme = \"tree\"\n[integrator]\ntype = \"leapfrog\"\n"
         "dt = 0.01\n";
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  try {
    Scenario sc = load_scenario(dir + "/s.toml", {"simulation.backend=cpu"}, test::registry());
    Simulation sim(sc, test::registry(), opt);
    sim.run();
    FAIL() << "a periodic box was accepted by the tree";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("periodic"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("all_pairs"), std::string::npos) << e.what();
  }
}

// A law without a far-field form (the test plugin's spring) is refused through a scenario.
TEST(Tree, RefusesLawWithoutFarField) {
  Registry reg;
  reg.load_path(Registry::builtin_plugin_dir());
  reg.load_path(test::staged_plugin("good"));
  reg.throw_if_refused();
  const std::string dir = test::scratch_dir("nofar");
  std::ofstream(dir + "/s.toml")
      << "[simulation]\ndimension = 3\nsteps = 1\n[[particles]]\ngenerator = \"plummer\"\n"
         "count = 100\n[[potential]]\ntype = \"test_spring\"\nscheme = \"tree\"\n"
         "[integrator]\ntype = \"leapfrog\"\ndt = 0.01\n";
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  try {
    Scenario sc = load_scenario(dir + "/s.toml", {"simulation.backend=cpu"}, reg);
    Simulation sim(sc, reg, opt);
    FAIL() << "a law without far field was accepted by the tree";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("test_spring"), std::string::npos) << m;
    EXPECT_NE(m.find("far-field"), std::string::npos) << m;
    EXPECT_NE(m.find("all_pairs"), std::string::npos) << m;
  }
}

// A law with a short-range part besides its far field (soft_gas) is refused too: an accepted node
// closer than its rc would lose the short-range force.
TEST(Tree, RefusesLawWithAShortRangePart) {
  const std::string dir = test::scratch_dir("short");
  std::ofstream(dir + "/s.toml")
      << "[simulation]\ndimension = 2\nsteps = 1\n[[particles]]\ngenerator = \"uniform\"\n"
         "count = 100\n[[potential]]\ntype = \"soft_gas\"\nscheme = \"tree\"\n";
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  try {
    Scenario sc = load_scenario(dir + "/s.toml", {"simulation.backend=cpu"}, test::registry());
    Simulation sim(sc, test::registry(), opt);
    FAIL() << "soft_gas was accepted by the tree";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("short-range part"), std::string::npos) << m;
    EXPECT_NE(m.find("cell_list"), std::string::npos) << m;
  }
}

// A short run with the tree conserves energy like all-pairs does.
TEST(Tree, PlummerRunConservesEnergy) {
  const std::string dir = test::scratch_dir("run");
  std::ofstream(dir + "/s.toml")
      << "[simulation]\ndimension = 3\nprecision = \"double\"\nsteps = 200\nseed = 4\n"
         "[[particles]]\ngenerator = \"plummer\"\ncount = 2000\nscale_radius = 0.589\n"
         "[[potential]]\ntype = \"gravity\"\neps = 0.05\nscheme = { type = \"tree\", theta = 0.5 "
         "}\n"
         "[integrator]\ntype = \"leapfrog\"\ndt = 0.005\n";
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  Scenario sc = load_scenario(dir + "/s.toml", {"simulation.backend=cpu"}, test::registry());
  Simulation sim(sc, test::registry(), opt);
  const Thermo a = sim.measure();
  sim.run();
  const Thermo b = sim.measure();
  EXPECT_LT(std::fabs(b.total - a.total), 1e-3 * std::fabs(a.total));
  EXPECT_TRUE(b.r.finite);
}

// The GPU tree: same bounds against all-pairs, float and double, 2D and 3D.
TEST(Tree, CudaWithinDocumentedBounds) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const HostParticles hp = plummer(20000, 3);
  const Result ref = forces(hp, "gravity", "eps = 0.01", "all_pairs", "", Precision::Double);
  for (Precision prec : {Precision::Double, Precision::Float}) {
    const Result q =
        forces(hp, "gravity", "eps = 0.01", "tree", tree_params(0.5, true), prec, Backend::Cuda);
    const Result m =
        forces(hp, "gravity", "eps = 0.01", "tree", tree_params(0.5, false), prec, Backend::Cuda);
    const Errors eq = errors(q.hp, ref.hp), em = errors(m.hp, ref.hp);
    EXPECT_LT(eq.rms, 1e-3) << to_string(prec);
    EXPECT_LT(eq.p99, 3e-3) << to_string(prec);
    EXPECT_LT(em.rms, 3e-3) << to_string(prec);
    EXPECT_NEAR(q.r.potential, ref.r.potential, 1e-4 * std::fabs(ref.r.potential));
    EXPECT_NEAR(q.r.virial, ref.r.virial, 1e-3 * std::fabs(ref.r.virial));
  }
  // theta -> 0 in double: all-pairs to rounding
  const Result fine = forces(hp, "gravity", "eps = 0.01", "tree", tree_params(0.05, true),
                             Precision::Double, Backend::Cuda);
  EXPECT_LT(errors(fine.hp, ref.hp).rms, 1e-7);
  const HostParticles d2 = disk2d(20000, 4);
  const Result ref2 = forces(d2, "log", "eps = 0.01", "all_pairs", "", Precision::Double);
  for (Precision prec : {Precision::Double, Precision::Float}) {
    const Result q =
        forces(d2, "log", "eps = 0.01", "tree", tree_params(0.5, true), prec, Backend::Cuda);
    EXPECT_LT(errors(q.hp, ref2.hp).rms, 1e-3) << to_string(prec);
  }
}

// CPU and GPU build the same tree, groups and interaction lists: in double their forces, energies
// and virials agree to rounding (only the order of the sums differs).
TEST(Tree, CudaMatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const HostParticles p3 = plummer(20000, 6), p2 = disk2d(20000, 6);
  for (const HostParticles* hp : {&p3, &p2}) {
    const std::string law = hp->dim == 3 ? "gravity" : "log";
    for (bool quad : {false, true}) {
      const Result c = forces(*hp, law, "eps = 0.01", "tree", tree_params(0.6, quad),
                              Precision::Double, Backend::Cpu);
      const Result g = forces(*hp, law, "eps = 0.01", "tree", tree_params(0.6, quad),
                              Precision::Double, Backend::Cuda);
      EXPECT_LT(errors(g.hp, c.hp).max, 1e-11) << law << " quadrupole " << quad;
      EXPECT_NEAR(g.r.potential, c.r.potential, 1e-12 * std::fabs(c.r.potential));
      EXPECT_NEAR(g.r.virial, c.r.virial, 1e-12 * std::fabs(c.r.virial));
    }
  }
}

// Morton keys: the interleaving and its inverse, and the cell a key names.
TEST(Tree, MortonKeysRoundTrip) {
  using namespace tree_build;
  std::mt19937_64 rng(1);
  for (int k = 0; k < 10000; ++k) {
    const std::uint64_t a = rng() & 0x1fffff, b = rng() & 0x7fffffff;
    EXPECT_EQ(compact3(spread3(a)), a);
    EXPECT_EQ(compact2(spread2(b)), b);
  }
  Frame f;
  f.lo[0] = -1, f.lo[1] = -2, f.lo[2] = -3;
  f.side = 4;
  const double x[3] = {0.3, -1.1, 0.7};  // cell coordinates x - lo over side / 2^21
  const std::uint64_t key = morton<3>(x, f);
  const double cell = 4.0 / double(1 << 21);
  EXPECT_EQ(compact3(key), std::uint64_t(1.3 / cell));
  EXPECT_EQ(compact3(key >> 1), std::uint64_t(0.9 / cell));
  EXPECT_EQ(compact3(key >> 2), std::uint64_t(3.7 / cell));
  EXPECT_EQ(key >> 63, 0u);
  const std::uint64_t k2 = morton<2>(x, f);
  EXPECT_EQ(compact2(k2), std::uint64_t(1.3 / (4.0 / double(1u << 31))));
  EXPECT_EQ(k2 >> 62, 0u);
}
