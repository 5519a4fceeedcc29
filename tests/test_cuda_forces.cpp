// SPDX-License-Identifier: BSD-3-Clause
// The same forces, energies and trajectories on the CPU and the GPU, for every potential x scheme.
// Without a GPU every test here is skipped and says so.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>

#include "conformance/conformance.hpp"
#include "pardyn/app/backend.hpp"
#include "pardyn/app/config.hpp"
#include "pardyn/app/cuda.hpp"
#include "pardyn/app/simulation.hpp"
#include "support.hpp"

using namespace pardyn;

namespace {

using conformance::Forces;

HostParticles random_particles(int dim, std::size_t n, unsigned seed, double extent) {
  HostParticles hp(dim);
  hp.resize(n);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-extent, extent), m(0.5, 2.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (int d = 0; d < dim; ++d) hp.x[d][i] = u(rng);
    hp.mass[i] = m(rng) / double(n);
    hp.type[i] = int(i % 3);
    hp.id[i] = std::int64_t(i);
  }
  return hp;
}

Forces forces(Backend backend, const std::string& potential, const std::string& params,
              const HostParticles& in, Precision prec, const Box& box) {
  return conformance::evaluate(test::registry(), potential,
                               test::params_for(PluginKind::Potential, potential, params), in, box,
                               prec, backend, "all_pairs");
}

struct Error2 {
  double rms = 0, max = 0;
};
// |a - ref| per particle, relative to the RMS of |ref| over all particles.
Error2 compare(const std::vector<double>* a, const std::vector<double>* ref, int dim) {
  const std::size_t n = ref[0].size();
  double ref2 = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < dim; ++d) ref2 += ref[d][i] * ref[d][i];
  const double scale = std::sqrt(ref2 / n);
  Error2 e;
  for (std::size_t i = 0; i < n; ++i) {
    double d2 = 0;
    for (int d = 0; d < dim; ++d) d2 += std::pow(a[d][i] - ref[d][i], 2);
    e.rms += d2;
    e.max = std::max(e.max, std::sqrt(d2) / scale);
  }
  e.rms = std::sqrt(e.rms / n) / scale;
  return e;
}

struct Case {
  const char* potential;
  const char* params;
  int dim;
  std::size_t n;
  bool periodic;
};

// Both precisions on the GPU against the CPU in double: the CPU is the reference.
void check_case(const Case& c) {
  Box box;
  for (int d = 0; d < 3; ++d) {
    box.lo[d] = -1, box.hi[d] = 1;
    if (c.periodic) box.boundary[d] = Boundary::Periodic;
  }
  const HostParticles hp = random_particles(c.dim, c.n, unsigned(c.n) + c.dim, 1.0);
  const Forces ref_double = forces(Backend::Cpu, c.potential, c.params, hp, Precision::Double, box);
  for (Precision prec : {Precision::Float, Precision::Double}) {
    const Forces gpu = forces(Backend::Cuda, c.potential, c.params, hp, prec, box);
    // In a periodic box a long-range pair force jumps where the minimum image changes (|dx| = L/2),
    // and float rounding moves that point: there the reference is the CPU in the same precision,
    // which computes the image the same way.
    const Forces ref = c.periodic && prec == Precision::Float
                           ? forces(Backend::Cpu, c.potential, c.params, hp, prec, box)
                           : ref_double;
    const Error2 ea = compare(gpu.hp.a, ref.hp.a, c.dim);
    const std::vector<double> ge[1] = {gpu.hp.epot}, re[1] = {ref.hp.epot};
    const Error2 ee = compare(ge, re, 1);
    // Stated accuracies: float forces to 1e-5 RMS (1e-4 worst particle) of the typical force;
    // double to 1e-13 (1e-12). Energies likewise.
    const bool f = prec == Precision::Float;
    const std::string what = std::string(c.potential) + " " + std::to_string(c.dim) +
                             "D N=" + std::to_string(c.n) + (c.periodic ? " periodic " : " ") +
                             to_string(prec);
    EXPECT_LT(ea.rms, f ? 1e-5 : 1e-13) << what;
    EXPECT_LT(ea.max, f ? 1e-4 : 1e-12) << what;
    EXPECT_LT(ee.rms, f ? 1e-5 : 1e-13) << what;
    EXPECT_NEAR(gpu.potential, ref.potential, (f ? 1e-5 : 1e-13) * std::fabs(ref.potential))
        << what;
    std::printf("  %-40s force error rms %.2e max %.2e, energy rms %.2e\n", what.c_str(), ea.rms,
                ea.max, ee.rms);
  }
}

}  // namespace

TEST(CudaForces, GravityMatchesCpu) {
  PARDYN_SKIP_WITHOUT_GPU();
  // sizes: one ragged block; split into several chunks; many chunks with a ragged last tile
  for (std::size_t n : {100, 4096, 33333})
    for (int dim : {2, 3}) check_case({"gravity", "eps = 0.01", dim, n, false});
  check_case({"gravity", "G = 2.5\neps = 0.05", 3, 5000, true});
  check_case({"gravity", "eps = 0", 3, 3000, false});  // exact Newton: the self pair must be masked
}

TEST(CudaForces, LogMatchesCpu) {
  PARDYN_SKIP_WITHOUT_GPU();
  for (std::size_t n : {100, 4096, 33333}) check_case({"log", "eps = 0.01", 2, n, false});
  check_case({"log", "eps = 0.02\nr0 = 0.5", 2, 7000, true});
}

TEST(CudaForces, CutoffLawMatchesCpu) {
  PARDYN_SKIP_WITHOUT_GPU();
  // An out-of-tree plugin with GPU code and a cut-off (tests/plugins/test_spring.hpp): only pairs
  // closer than rcut interact, in an open and in a periodic box.
  Registry reg;
  reg.load_path(test::staged_plugin("good"));
  ASSERT_TRUE(reg.refused().empty()) << reg.refused()[0].reason;
  const FactoryInfo* info = reg.find(PluginKind::Potential, "test_spring");
  ASSERT_NE(info, nullptr);
  ASSERT_TRUE(info->backends & kCuda) << "the test plugin was built without its GPU code";
  for (bool periodic : {false, true}) {
    Box box;
    for (int d = 0; d < 3; ++d) {
      box.lo[d] = -1, box.hi[d] = 1;
      if (periodic) box.boundary[d] = Boundary::Periodic;
    }
    const HostParticles hp = random_particles(3, 5000, 77, 1.0);
    HostParticles out[2];
    for (int b = 0; b < 2; ++b) {
      RunInfo run;
      run.precision = Precision::Double;
      run.backend = b ? Backend::Cuda : Backend::Cpu;
      run.box = box;
      auto pot =
          reg.make_potential("test_spring", parse_params(info->schema, "rcut = 0.3", "t"), run);
      ParticleStore s(3, Precision::Double, b ? cuda::device_memory() : host_memory());
      s.upload(hp);
      ForceRequest req;
      req.energy = req.virial = true;
      req.box = &box;
      pot->compute(s, {NeighbourhoodKind::AllPairs, nullptr}, req);
      s.download(out[b]);
    }
    const Error2 e = compare(out[1].a, out[0].a, 3);
    EXPECT_LT(e.max, 1e-12) << (periodic ? "periodic" : "open");
    double a2 = 0;
    for (std::size_t i = 0; i < hp.size(); ++i) a2 += out[0].a[0][i] * out[0].a[0][i];
    EXPECT_GT(a2, 0.0);  // some pairs are inside the cut-off
  }
}

TEST(CudaForces, PluginWithoutCodeForThisGpuIsRefused) {
  PARDYN_SKIP_WITHOUT_GPU();
  if (cuda::archs_run_on("70-real", cuda::device_info().cc_major, cuda::device_info().cc_minor))
    GTEST_SKIP() << "this GPU runs sm_70 code: the refusal cannot be shown here";
  Registry reg;
  reg.load_path(test::staged_plugin("old_arch"));
  ASSERT_TRUE(reg.refused().empty()) << reg.refused()[0].reason;  // fine for CPU runs
  const FactoryInfo* info = reg.find(PluginKind::Potential, "test_spring");
  ASSERT_NE(info, nullptr);
  RunInfo run;
  run.backend = Backend::Cpu;
  EXPECT_NO_THROW(reg.make_potential("test_spring", parse_params(info->schema, "", "t"), run));
  run.backend = Backend::Cuda;
  try {
    reg.make_potential("test_spring", parse_params(info->schema, "", "t"), run);
    FAIL() << "a plugin with sm_70 code only was accepted on this GPU";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has GPU code for CUDA architectures \"70-real\" only"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("-DCMAKE_CUDA_ARCHITECTURES="), std::string::npos);
  }
}

TEST(CudaForces, SplitAndUnsplitSourcesAgree) {
  PARDYN_SKIP_WITHOUT_GPU();
  const HostParticles hp = random_particles(3, 20000, 5, 1.0);
  Box box;
  std::vector<Forces> out;
  for (const char* splits : {"1", "7", "40"}) {
    setenv("PARDYN_ALL_PAIRS_SPLITS", splits, 1);
    out.push_back(forces(Backend::Cuda, "gravity", "eps = 0.01", hp, Precision::Double, box));
  }
  unsetenv("PARDYN_ALL_PAIRS_SPLITS");
  for (std::size_t k = 1; k < out.size(); ++k) {
    const Error2 e = compare(out[k].hp.a, out[0].hp.a, 3);
    EXPECT_LT(e.max, 1e-13) << "splits case " << k;
  }
}

TEST(CudaForces, WholeRunsAgreeWithCpu) {
  PARDYN_SKIP_WITHOUT_GPU();
  const std::string dir = test::scratch_dir("run");
  std::ofstream(dir + "/s.toml") << R"(
[simulation]
steps = 100
precision = "double"
[[particles]]
generator = "plummer"
count = 300
[[potential]]
type = "gravity"
eps = 0.05
[integrator]
dt = 0.002
[[output]]
type = "thermo"
interval = 50
)";
  HostParticles result[2];
  double energy[2];
  const char* backends[2] = {"cpu", "cuda"};
  for (int b = 0; b < 2; ++b) {
    Scenario sc = load_scenario(dir + "/s.toml", {std::string("simulation.backend=") + backends[b]},
                                test::registry());
    RunOptions opt;
    opt.quiet = true;
    opt.output = dir + "/out-" + backends[b];
    Simulation sim(sc, test::registry(), opt);
    sim.run();
    EXPECT_EQ(sim.run_info().backend, b ? Backend::Cuda : Backend::Cpu);
    energy[b] = sim.measure().total;
    sim.store().download(result[b]);
  }
  const Error2 e = compare(result[1].x, result[0].x, 3);
  EXPECT_LT(e.max, 1e-10);
  EXPECT_NEAR(energy[1], energy[0], 1e-12 * std::fabs(energy[0]));
}

TEST(CudaForces, CudaBackendWithoutDeviceIsAClearError) {
  if (cuda::device_count() > 0) GTEST_SKIP() << "a CUDA device is present: this checks its absence";
  std::string note;
  if (!cuda::built_with_cuda()) {
    EXPECT_THROW(make_backend("cuda", note), Error);
    return;
  }
  try {
    make_backend("cuda", note);
    FAIL() << "backend cuda without a device was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
  }
}

namespace {

// Forces of a block of sources that are not in the store (the all-pairs ring of a parallel run) on
// the store's particles, on `backend`: the store holds `targets`, the SourceBlock `sources`.
Forces block_forces(Backend backend, const std::string& potential, const std::string& params,
                    const HostParticles& targets, const HostParticles& sources, const Box& box) {
  RunInfo run;
  run.dim = targets.dim;
  run.precision = Precision::Double;
  run.backend = backend;
  run.box = box;
  auto pot = test::registry().make_potential(
      potential, test::params_for(PluginKind::Potential, potential, params), run);
  MemoryResource& mem = backend == Backend::Cuda ? cuda::device_memory() : host_memory();
  auto ops = backend == Backend::Cuda ? cuda::make_ops() : make_cpu_ops();
  ParticleStore s(targets.dim, Precision::Double, mem);
  s.upload(targets);
  ops->zero_forces(s, true, true);
  const std::size_t m = sources.size();
  std::vector<double> rec(4 * m, 0.0);
  for (std::size_t j = 0; j < m; ++j) {
    for (int d = 0; d < sources.dim; ++d) rec[4 * j + d] = sources.x[d][j];
    rec[4 * j + sources.dim] = sources.mass[j];
  }
  void* pos = mem.allocate(rec.size() * sizeof(double));
  void* type = mem.allocate(m * sizeof(std::int32_t));
  mem.copy_from_host(pos, rec.data(), rec.size() * sizeof(double));
  mem.copy_from_host(type, sources.type.data(), m * sizeof(std::int32_t));
  SourceBlock blk;
  blk.n = m;
  blk.pos = pos;
  blk.type = static_cast<const std::int32_t*>(type);
  ForceRequest req;
  req.energy = req.virial = true;
  req.box = &run.box;
  pot->compute(s, Neighbourhood{NeighbourhoodKind::AllPairs, &blk}, req);
  Forces f;
  s.download(f.hp);
  mem.deallocate(pos);
  mem.deallocate(type);
  return f;
}

}  // namespace

// The all-pairs ring's block kernel: forces of external sources (counts that leave a ragged last
// tile, and a block larger than the targets) equal all-pairs forces of the union less those of the
// targets alone, on each backend (backends.hpp), in double.
class SourceBlockRun : public test::BackendRun {};
PARDYN_INSTANTIATE_BACKENDS(SourceBlockRun);

TEST_P(SourceBlockRun, EqualsAllPairsOfTheUnion) {
  const Backend b = test::backend_kind();
  struct C {
    const char* pot;
    const char* params;
    int dim;
    bool periodic;
  };
  for (const C& c :
       {C{"gravity", "G = 1.0\neps = 0.05", 3, false}, C{"log", "G = 1.0\neps = 0.05", 2, false},
        C{"lennard_jones", "rcut = 0.3\nsigma = 0.01", 3, true}}) {
    for (std::size_t nt : {std::size_t(1000), std::size_t(77)}) {
      Box box;
      for (int d = 0; d < 3; ++d) {
        box.lo[d] = -1, box.hi[d] = 1;
        if (c.periodic) box.boundary[d] = Boundary::Periodic;
      }
      const HostParticles all = random_particles(c.dim, nt + 777, unsigned(nt) + 5, 1.0);
      HostParticles t(c.dim), src(c.dim);
      t.resize(nt);
      src.resize(777);
      for (std::size_t i = 0; i < all.size(); ++i) {
        HostParticles& dst = i < nt ? t : src;
        const std::size_t k = i < nt ? i : i - nt;
        for (int d = 0; d < c.dim; ++d) dst.x[d][k] = all.x[d][i], dst.v[d][k] = 0;
        dst.mass[k] = all.mass[i];
        dst.type[k] = all.type[i];
        dst.id[k] = all.id[i];
      }
      const Forces whole = forces(Backend::Cpu, c.pot, c.params, all, Precision::Double, box);
      const Forces alone = forces(Backend::Cpu, c.pot, c.params, t, Precision::Double, box);
      HostParticles want(c.dim);
      want.resize(nt);
      for (std::size_t i = 0; i < nt; ++i) {
        for (int d = 0; d < c.dim; ++d) want.a[d][i] = whole.hp.a[d][i] - alone.hp.a[d][i];
        want.epot[i] = whole.hp.epot[i] - alone.hp.epot[i];
        want.virial[i] = whole.hp.virial[i] - alone.hp.virial[i];
      }
      const Forces got = block_forces(b, c.pot, c.params, t, src, box);
      const std::string what = std::string(c.pot) + " targets " + std::to_string(nt) +
                               (b == Backend::Cuda ? " cuda" : " cpu");
      const Error2 ea = compare(got.hp.a, want.a, c.dim);
      const std::vector<double> ge[1] = {got.hp.epot}, re[1] = {want.epot};
      const std::vector<double> gv[1] = {got.hp.virial}, rv[1] = {want.virial};
      EXPECT_LT(ea.max, 1e-11) << what;
      EXPECT_LT(compare(ge, re, 1).max, 1e-11) << what;
      EXPECT_LT(compare(gv, rv, 1).max, 1e-11) << what;
    }
  }
}
