// SPDX-License-Identifier: BSD-3-Clause
// The CUDA backend against the CPU backend: memory round trips, element-wise operations and
// reductions on random systems, in 2D and 3D, float and double. Tests that need a GPU skip (with a
// message) where none is visible; the architecture logic and backend selection run everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pardyn/app/backend.hpp"
#include "pardyn/app/cuda.hpp"
#include "support.hpp"

using namespace pardyn;

namespace {

struct Combo {
  int dim;
  Precision precision;
};
const Combo kCombos[] = {
    {2, Precision::Float}, {2, Precision::Double}, {3, Precision::Float}, {3, Precision::Double}};

std::string name(const Combo& c) { return std::to_string(c.dim) + "D " + to_string(c.precision); }

HostParticles random_particles(int dim, std::size_t n, unsigned seed) {
  HostParticles hp(dim);
  hp.resize(n);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1), m(0.5, 2.0);
  std::uniform_int_distribution<std::int32_t> t(0, 3);
  for (std::size_t i = 0; i < n; ++i) {
    for (int d = 0; d < dim; ++d) {
      hp.x[d][i] = u(rng);
      hp.v[d][i] = u(rng);
    }
    hp.mass[i] = m(rng);
    hp.type[i] = t(rng);
    hp.id[i] = std::int64_t(i) * 7 + 3;
  }
  return hp;
}

std::vector<double> random_values(std::size_t n, double lo, double hi, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

enum class Field { X, V, A, Epot, Virial };

// Writes `values` into one field of the store, rounded to its precision, through its memory: the
// same bytes reach a host store and a device store.
void set_field(ParticleStore& s, Field f, int d, const std::vector<double>& values) {
  visit(s, [&](auto p) {
    using Real = typename decltype(p)::real;
    Real* dst = f == Field::X      ? p.x[d]
                : f == Field::V    ? p.v[d]
                : f == Field::A    ? p.a[d]
                : f == Field::Epot ? p.epot
                                   : p.virial;
    std::vector<Real> tmp(values.begin(), values.end());
    s.memory().copy_from_host(dst, tmp.data(), tmp.size() * sizeof(Real));
  });
}

void set_value(ParticleStore& s, Field f, int d, std::size_t i, double value) {
  visit(s, [&](auto p) {
    using Real = typename decltype(p)::real;
    Real* dst = f == Field::X      ? p.x[d]
                : f == Field::V    ? p.v[d]
                : f == Field::A    ? p.a[d]
                : f == Field::Epot ? p.epot
                                   : p.virial;
    const Real r = Real(value);
    s.memory().copy_from_host(dst + i, &r, sizeof(Real));
  });
}

// A store on each backend holding the same particles, with non-zero accelerations, energies and
// virials so that every reduced quantity is exercised.
struct Stores {
  std::unique_ptr<ParticleStore> cpu, gpu;
};
Stores make_stores(const Combo& c, std::size_t n, unsigned seed) {
  Stores p;
  p.cpu = std::make_unique<ParticleStore>(c.dim, c.precision, host_memory());
  p.gpu = std::make_unique<ParticleStore>(c.dim, c.precision, cuda::device_memory());
  const HostParticles hp = random_particles(c.dim, n, seed);
  for (auto* s : {p.cpu.get(), p.gpu.get()}) {
    s->upload(hp);
    for (int d = 0; d < c.dim; ++d)
      set_field(*s, Field::A, d, random_values(n, -3, 3, seed + 10 + unsigned(d)));
    set_field(*s, Field::Epot, 0, random_values(n, -2, 0, seed + 20));
    set_field(*s, Field::Virial, 0, random_values(n, -1, 1, seed + 21));
  }
  return p;
}

// Element-wise agreement: within `rel` of max(|value|, 1) (values and operands here are O(1), so
// the floor keeps a result that cancels to near zero from demanding more than the operands carry).
void expect_arrays_close(const std::vector<double>& cpu, const std::vector<double>& gpu, double rel,
                         const std::string& what) {
  ASSERT_EQ(cpu.size(), gpu.size()) << what;
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    const double tol = rel * std::max(std::fabs(cpu[i]), 1.0);
    if (!(std::fabs(cpu[i] - gpu[i]) <= tol)) {
      if (bad++ == 0) first = i;
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << cpu.size() << " differ; first at " << first
                     << ": cpu " << cpu[first] << " gpu " << gpu[first];
}

void expect_stores_close(const ParticleStore& cpu, const ParticleStore& gpu,
                         const std::string& what) {
  // Both backends use FMA for these updates, so they should agree exactly; allow an ulp or two in
  // case a compiler rounds the product separately.
  const double rel = cpu.precision() == Precision::Float ? 2.5e-7 : 1e-15;
  HostParticles a, b;
  cpu.download(a);
  gpu.download(b);
  for (int d = 0; d < cpu.dim(); ++d) {
    expect_arrays_close(a.x[d], b.x[d], rel, what + ": x" + std::to_string(d));
    expect_arrays_close(a.v[d], b.v[d], rel, what + ": v" + std::to_string(d));
    expect_arrays_close(a.a[d], b.a[d], 0, what + ": a" + std::to_string(d));
  }
  expect_arrays_close(a.epot, b.epot, 0, what + ": epot");
  expect_arrays_close(a.virial, b.virial, 0, what + ": virial");
}

// Reductions agree to 1e-12 relative. Both backends convert each stored value to double before any
// arithmetic and sum with compensation, so float stores agree as closely as double ones; the
// absolute floor covers sums of random-sign terms that happen to land near zero.
void expect_reductions_close(const Reductions& cpu, const Reductions& gpu,
                             const std::string& what) {
  const double rel = 1e-12;
  auto near = [&](double c, double g, const char* q) {
    EXPECT_LE(std::fabs(c - g), rel * std::max(std::fabs(c), 1.0))
        << what << ": " << q << ": cpu " << c << " gpu " << g;
  };
  EXPECT_EQ(cpu.n, gpu.n) << what;
  near(cpu.mass, gpu.mass, "mass");
  near(cpu.kinetic, gpu.kinetic, "kinetic");
  near(cpu.potential, gpu.potential, "potential");
  near(cpu.virial, gpu.virial, "virial");
  for (int d = 0; d < 3; ++d) {
    near(cpu.momentum[d], gpu.momentum[d], "momentum");
    near(cpu.angular_momentum[d], gpu.angular_momentum[d], "angular momentum");
    near(cpu.mass_moment[d], gpu.mass_moment[d], "mass moment");
  }
  near(cpu.max_accel, gpu.max_accel, "max |a|");
  EXPECT_EQ(cpu.finite, gpu.finite) << what;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// No GPU needed.

TEST(CudaArchs, BareNumberRunsAsMachineCodeOrPtx) {
  EXPECT_TRUE(cuda::archs_run_on("90", 9, 0));
  EXPECT_TRUE(cuda::archs_run_on("90", 10, 0));  // through the PTX
  EXPECT_TRUE(cuda::archs_run_on("80", 8, 6));   // sm_80 cubin on 8.6
  EXPECT_TRUE(cuda::archs_run_on("80", 9, 0));   // PTX
  EXPECT_FALSE(cuda::archs_run_on("90", 8, 0));
  EXPECT_FALSE(cuda::archs_run_on("86", 8, 0));
  EXPECT_TRUE(cuda::archs_run_on("100", 12, 0));
  EXPECT_TRUE(cuda::archs_run_on("103", 10, 3));
  EXPECT_FALSE(cuda::archs_run_on("103", 10, 0));
}

TEST(CudaArchs, RealAndVirtual) {
  EXPECT_TRUE(cuda::archs_run_on("90-real", 9, 0));
  EXPECT_FALSE(cuda::archs_run_on("90-real", 10, 0));
  EXPECT_FALSE(cuda::archs_run_on("86-real", 8, 0));
  EXPECT_TRUE(cuda::archs_run_on("86-real", 8, 9));
  EXPECT_FALSE(cuda::archs_run_on("80-real", 9, 0));
  EXPECT_TRUE(cuda::archs_run_on("80-virtual", 9, 0));
  EXPECT_TRUE(cuda::archs_run_on("90-virtual", 9, 0));
  EXPECT_FALSE(cuda::archs_run_on("90-virtual", 8, 9));
}

TEST(CudaArchs, Lists) {
  EXPECT_TRUE(cuda::archs_run_on("80;90", 9, 0));
  EXPECT_TRUE(cuda::archs_run_on("80;90", 8, 0));
  EXPECT_FALSE(cuda::archs_run_on("80;90", 7, 5));
  EXPECT_TRUE(cuda::archs_run_on("80-real;90-real", 9, 0));
  EXPECT_FALSE(cuda::archs_run_on("80-real;90-real", 10, 0));
  EXPECT_TRUE(cuda::archs_run_on("80-real;90-real;90-virtual", 10, 0));
  EXPECT_TRUE(cuda::archs_run_on(" 75 ; 86-real ", 8, 6));
}

TEST(CudaArchs, ArchitectureAndFamilySpecific) {
  EXPECT_TRUE(cuda::archs_run_on("90a", 9, 0));
  EXPECT_TRUE(cuda::archs_run_on("90a-real", 9, 0));
  EXPECT_FALSE(cuda::archs_run_on("90a", 10, 0));
  EXPECT_FALSE(cuda::archs_run_on("100a", 10, 3));
  EXPECT_TRUE(cuda::archs_run_on("100f", 10, 3));
  EXPECT_FALSE(cuda::archs_run_on("100f", 12, 0));
}

TEST(CudaArchs, SpecialValuesAndNonsense) {
  EXPECT_TRUE(cuda::archs_run_on("native", 9, 0));
  EXPECT_TRUE(cuda::archs_run_on("all", 7, 0));
  EXPECT_TRUE(cuda::archs_run_on("all-major", 12, 0));
  EXPECT_FALSE(cuda::archs_run_on("", 9, 0));
  EXPECT_FALSE(cuda::archs_run_on("sm_90", 9, 0));
  EXPECT_FALSE(cuda::archs_run_on("90-fast", 9, 0));
  EXPECT_FALSE(cuda::archs_run_on(";;", 9, 0));
  EXPECT_TRUE(cuda::archs_run_on("junk;90", 9, 0));
}

TEST(CudaBackendSelection, AutoPicksCudaOnlyWithADevice) {
  std::string note;
  BackendHandle h = make_backend("auto", note);
  ASSERT_TRUE(h.memory);
  ASSERT_TRUE(h.ops);
  if (cuda::device_count() == 0) {
    EXPECT_EQ(h.backend, Backend::Cpu);
    EXPECT_EQ(h.memory->backend(), Backend::Cpu);
    EXPECT_NE(note.find("running on the CPU"), std::string::npos) << note;
    const char* reason =
        cuda::built_with_cuda() ? "no CUDA device" : "no CUDA backend in this build";
    EXPECT_NE(note.find(reason), std::string::npos) << note;
  } else {
    EXPECT_EQ(h.backend, Backend::Cuda);
    EXPECT_EQ(h.memory->backend(), Backend::Cuda);
    EXPECT_TRUE(note.empty()) << note;
    EXPECT_EQ(h.description.rfind("cuda (", 0), 0u) << h.description;
    EXPECT_NE(h.description.find(" SMs, "), std::string::npos) << h.description;
  }
}

TEST(CudaBackendSelection, CudaWithoutDeviceIsAClearError) {
  if (cuda::device_count() > 0) GTEST_SKIP() << "a CUDA device is present: nothing to refuse";
  std::string note;
  try {
    make_backend("cuda", note);
    FAIL() << "backend = \"cuda\" without a device did not throw";
  } catch (const Error& e) {
    const std::string msg = e.what();
    const char* reason = cuda::built_with_cuda() ? "no CUDA device is visible" : "without CUDA";
    EXPECT_NE(msg.find(reason), std::string::npos) << msg;
    EXPECT_NE(msg.find("backend = \"cpu\""), std::string::npos) << msg;
  }
  // The rest of the CUDA entry points refuse with a message, never crash.
  EXPECT_THROW(cuda::make_ops(), Error);
  EXPECT_THROW(cuda::device_info(), Error);
  if (!cuda::built_with_cuda()) {
    EXPECT_THROW(cuda::device_memory(), Error);
    EXPECT_THROW(cuda::scratch(16), Error);
    EXPECT_THROW(cuda::synchronize("test"), Error);
  }
}

// ---------------------------------------------------------------------------------------------------
// GPU.

TEST(CudaBackend, DeviceInfoIsSane) {
  PARDYN_SKIP_WITHOUT_GPU();
  const cuda::DeviceInfo d = cuda::device_info();
  EXPECT_FALSE(d.name.empty());
  EXPECT_GE(d.cc_major, 5);
  EXPECT_GT(d.multiprocessors, 0);
  EXPECT_GT(d.clock_khz, 0);
  EXPECT_GT(d.total_memory, std::size_t(1) << 30);
  EXPECT_LE(d.free_memory, d.total_memory);
  EXPECT_GT(d.l2_bytes, 0u);
  EXPECT_GE(d.shared_per_block_optin, std::size_t(48) << 10);
  std::string note;
  BackendHandle h = make_backend("cuda", note);
  EXPECT_EQ(h.backend, Backend::Cuda);
  EXPECT_NE(h.description.find(d.name), std::string::npos) << h.description;
  EXPECT_NE(h.description.find("sm_" + std::to_string(d.cc_major) + std::to_string(d.cc_minor)),
            std::string::npos)
      << h.description;
}

TEST(CudaBackend, UploadDownloadIsExact) {
  PARDYN_SKIP_WITHOUT_GPU();
  for (const Combo& c : kCombos) {
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(1000), std::size_t(300007)}) {
      SCOPED_TRACE(name(c) + ", n = " + std::to_string(n));
      const HostParticles hp = random_particles(c.dim, n, 11);
      ParticleStore cpu(c.dim, c.precision, host_memory());
      ParticleStore gpu(c.dim, c.precision, cuda::device_memory());
      cpu.upload(hp);
      gpu.upload(hp);
      HostParticles a, b;
      cpu.download(a);
      gpu.download(b);
      for (int d = 0; d < c.dim; ++d) {
        EXPECT_EQ(a.x[d], b.x[d]);
        EXPECT_EQ(a.v[d], b.v[d]);
        EXPECT_EQ(a.a[d], b.a[d]);
        if (c.precision == Precision::Double) {
          EXPECT_EQ(hp.x[d], b.x[d]);
        }
      }
      EXPECT_EQ(a.mass, b.mass);
      EXPECT_EQ(hp.type, b.type);
      EXPECT_EQ(hp.id, b.id);
      EXPECT_EQ(a.epot, b.epot);
      EXPECT_EQ(a.virial, b.virial);
    }
  }
}

TEST(CudaBackend, ResizeKeepsParticles) {
  PARDYN_SKIP_WITHOUT_GPU();
  const HostParticles hp = random_particles(3, 5000, 5);
  ParticleStore gpu(3, Precision::Double, cuda::device_memory());
  gpu.upload(hp);
  gpu.resize(20000);  // grows: a device-to-device copy of the old contents
  gpu.resize(5000);
  HostParticles b;
  gpu.download(b);
  EXPECT_EQ(hp.x[2], b.x[2]);
  EXPECT_EQ(hp.id, b.id);
}

TEST(CudaMemory, LargeCopiesThroughStagingAreExact) {
  PARDYN_SKIP_WITHOUT_GPU();
  MemoryResource& m = cuda::device_memory();
  // Sizes around the staging thresholds: below them, at them, and split over several host threads
  // with a tail that fills no whole chunk.
  for (std::size_t bytes : {std::size_t(1000), (std::size_t(1) << 20) + 3, std::size_t(16) << 20,
                            (std::size_t(33) << 20) + 5, (std::size_t(80) << 20) + 12345}) {
    SCOPED_TRACE("bytes = " + std::to_string(bytes));
    std::vector<unsigned char> src(bytes), back(bytes, 0);
    std::mt19937_64 rng(bytes);
    for (auto& c : src) c = static_cast<unsigned char>(rng());
    void* d0 = m.allocate(bytes);
    void* d1 = m.allocate(bytes);
    m.copy_from_host(d0, src.data(), bytes);
    m.copy(d1, d0, bytes);
    m.fill_zero(d0, bytes);
    m.copy_to_host(back.data(), d1, bytes);
    EXPECT_EQ(0, std::memcmp(src.data(), back.data(), bytes));
    m.copy_to_host(back.data(), d0, bytes);
    EXPECT_TRUE(std::all_of(back.begin(), back.end(), [](unsigned char c) { return c == 0; }));
    m.deallocate(d0);
    m.deallocate(d1);
  }
}

TEST(CudaMemory, AbsurdAllocationSaysOutOfMemory) {
  PARDYN_SKIP_WITHOUT_GPU();
  const std::size_t pib = std::size_t(1) << 50;
  try {
    cuda::device_memory().allocate(pib);
    FAIL() << "allocating 1 PiB on the GPU did not throw";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("out of memory"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(pib)), std::string::npos) << msg;
    EXPECT_NE(msg.find("free of"), std::string::npos) << msg;
  }
  // A store that asks for too much fails the same way.
  ParticleStore s(3, Precision::Double, cuda::device_memory());
  EXPECT_THROW(s.resize(std::size_t(1) << 46), Error);
  // The failed allocation must not linger as CUDA's "last error" and fail the next launch.
  ParticleStore ok(3, Precision::Double, cuda::device_memory());
  ok.upload(random_particles(3, 100, 1));
  auto ops = cuda::make_ops();
  EXPECT_NO_THROW(ops->kick(ok, 0.1));
  EXPECT_NO_THROW(cuda::synchronize("kick after a failed allocation"));
}

TEST(CudaMemory, ScratchGrowsAndNeverShrinks) {
  PARDYN_SKIP_WITHOUT_GPU();
  void* a = cuda::scratch(100);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(cuda::scratch(50), a);
  void* b = cuda::scratch(std::size_t(64) << 20);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(cuda::scratch(100), b);  // a smaller request keeps the larger buffer
  auto& m = cuda::device_memory();
  m.fill_zero(b, std::size_t(64) << 20);  // the whole buffer is usable
  EXPECT_NO_THROW(cuda::synchronize("scratch fill"));
}

TEST(CudaOps, ElementwiseMatchesCpu) {
  PARDYN_SKIP_WITHOUT_GPU();
  auto cpu_ops = make_cpu_ops();
  auto gpu_ops = cuda::make_ops();
  Box box;
  for (int d = 0; d < 3; ++d) box.lo[d] = -0.75, box.hi[d] = 1.5;
  box.boundary[0] = Boundary::Periodic;
  box.boundary[1] = Boundary::Open;
  box.boundary[2] = Boundary::Periodic;
  for (const Combo& c : kCombos) {
    // 300007 particles: more than one grid's worth on an H100, so the grid-stride loops turn.
    for (std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(300007)}) {
      const std::string what = name(c) + ", n = " + std::to_string(n);
      Stores p = make_stores(c, n, 21);
      cpu_ops->kick(*p.cpu, 0.013);
      gpu_ops->kick(*p.gpu, 0.013);
      expect_stores_close(*p.cpu, *p.gpu, what + ", kick");
      // Long drifts carry particles out of the box, so the wrap below has work on both sides.
      cpu_ops->drift(*p.cpu, 2.1);
      gpu_ops->drift(*p.gpu, 2.1);
      expect_stores_close(*p.cpu, *p.gpu, what + ", drift");
      cpu_ops->scale_velocities(*p.cpu, 0.97);
      gpu_ops->scale_velocities(*p.gpu, 0.97);
      expect_stores_close(*p.cpu, *p.gpu, what + ", scale_velocities");
      cpu_ops->wrap_periodic(*p.cpu, box);
      gpu_ops->wrap_periodic(*p.gpu, box);
      expect_stores_close(*p.cpu, *p.gpu, what + ", wrap_periodic");
      HostParticles h;
      p.gpu->download(h, ParticleStore::kPosition);
      const double slack = c.precision == Precision::Float ? 1e-6 : 1e-12;
      for (int d = 0; d < c.dim; ++d) {
        if (box.boundary[d] != Boundary::Periodic) continue;
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_GE(h.x[d][i], box.lo[d] - slack) << what << " axis " << d << " particle " << i;
          ASSERT_LE(h.x[d][i], box.hi[d] + slack) << what << " axis " << d << " particle " << i;
        }
      }
      cpu_ops->zero_forces(*p.cpu, true, false);
      gpu_ops->zero_forces(*p.gpu, true, false);
      expect_stores_close(*p.cpu, *p.gpu, what + ", zero_forces");
      HostParticles z;
      p.gpu->download(z);
      for (int d = 0; d < c.dim; ++d)
        EXPECT_TRUE(std::all_of(z.a[d].begin(), z.a[d].end(), [](double x) { return x == 0; }));
      EXPECT_TRUE(std::all_of(z.epot.begin(), z.epot.end(), [](double x) { return x == 0; }));
      EXPECT_FALSE(std::all_of(z.virial.begin(), z.virial.end(), [](double x) { return x == 0; }))
          << "zero_forces(energy only) cleared the virials";
    }
  }
}

TEST(CudaOps, ReduceMatchesCpu) {
  PARDYN_SKIP_WITHOUT_GPU();
  auto cpu_ops = make_cpu_ops();
  auto gpu_ops = cuda::make_ops();
  for (const Combo& c : kCombos) {
    for (std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(1000003)}) {
      const std::string what = name(c) + ", n = " + std::to_string(n);
      Stores p = make_stores(c, n, 31);
      const Reductions rc = cpu_ops->reduce(*p.cpu);
      const Reductions rg = gpu_ops->reduce(*p.gpu);
      expect_reductions_close(rc, rg, what);
      EXPECT_TRUE(rg.finite) << what;
      if (c.dim == 2) {
        EXPECT_EQ(rg.momentum[2], 0.0) << what;
        EXPECT_EQ(rg.angular_momentum[0], 0.0) << what;
        EXPECT_EQ(rg.angular_momentum[1], 0.0) << what;
      }
    }
  }
}

TEST(CudaOps, ReduceOfEmptyStore) {
  PARDYN_SKIP_WITHOUT_GPU();
  ParticleStore gpu(3, Precision::Double, cuda::device_memory());
  const Reductions r = cuda::make_ops()->reduce(gpu);
  EXPECT_EQ(r.n, 0u);
  EXPECT_EQ(r.mass, 0.0);
  EXPECT_TRUE(r.finite);
}

TEST(CudaOps, ReduceIsDeterministic) {
  PARDYN_SKIP_WITHOUT_GPU();
  auto ops = cuda::make_ops();
  Stores p = make_stores({3, Precision::Double}, 1000003, 41);
  const Reductions a = ops->reduce(*p.gpu);
  const Reductions b = ops->reduce(*p.gpu);
  // Bit for bit: the grid, and so the order of every addition, is the same both times.
  EXPECT_EQ(a.mass, b.mass);
  EXPECT_EQ(a.kinetic, b.kinetic);
  EXPECT_EQ(a.potential, b.potential);
  EXPECT_EQ(a.virial, b.virial);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(a.momentum[d], b.momentum[d]);
    EXPECT_EQ(a.angular_momentum[d], b.angular_momentum[d]);
    EXPECT_EQ(a.mass_moment[d], b.mass_moment[d]);
  }
  EXPECT_EQ(a.max_accel, b.max_accel);
}

TEST(CudaOps, FiniteFlagCatchesOneBadValue) {
  PARDYN_SKIP_WITHOUT_GPU();
  auto ops = cuda::make_ops();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Plant {
    Field f;
    int d;
    double value;
  };
  const Plant plants[] = {{Field::X, 1, nan}, {Field::V, 0, inf}, {Field::A, 1, nan}};
  for (const Combo& c : kCombos) {
    for (std::size_t n : {std::size_t(1000), std::size_t(1000003)}) {
      for (const Plant& pl : plants) {
        const std::string what = name(c) + ", n = " + std::to_string(n);
        Stores p = make_stores(c, n, 51);
        EXPECT_TRUE(ops->reduce(*p.gpu).finite) << what;
        set_value(*p.gpu, pl.f, pl.d, n - n / 3, pl.value);
        const Reductions r = ops->reduce(*p.gpu);
        EXPECT_FALSE(r.finite) << what << ": planted " << pl.value << " not detected";
        EXPECT_TRUE(std::isfinite(r.max_accel) || pl.f != Field::A) << what;
      }
    }
  }
}

TEST(CudaOps, SynchronizeSucceedsWhenIdle) {
  PARDYN_SKIP_WITHOUT_GPU();
  EXPECT_NO_THROW(cuda::synchronize("an idle device"));
}
