// SPDX-License-Identifier: BSD-3-Clause
// Generators that make ranges of their block (Generator::particles, docs/plugins.md "Generators"):
// exact sums (ExactSum), the chunk streams, and the built-in generators cut between "ranks". The
// ranks here are threads with a Comm of their own (ThreadComm below), so that any cut, an empty
// range among them, is tried without MPI; tests/mpi/test_mpi.cpp does the same through whole runs
// on 2 and 3 MPI ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "pardyn/exact_sum.hpp"
#include "pardyn/generator_support.hpp"
#include "pardyn/plugin.hpp"
#include "support.hpp"

namespace {

using namespace pardyn;

// --- ExactSum ------------------------------------------------------------------------------------

double exact(const std::vector<double>& v) {
  ExactSum s;
  for (double x : v) s.add(x);
  return s.value();
}

TEST(ExactSum, CancellationLosesNothing) {
  EXPECT_EQ(exact({1e16, 1.0, -1e16}), 1.0);
  EXPECT_EQ(exact({1.0, 1e-30, -1.0}), 1e-30);
  EXPECT_EQ(exact({1e308, 1e308, -1e308, -1e308, 3.5}), 3.5);
  EXPECT_EQ(exact({}), 0.0);
  EXPECT_EQ(exact({0.1, 0.2, -0.1, -0.2}), 0.0);
  EXPECT_EQ(exact({-2.5}), -2.5);
}

TEST(ExactSum, RoundsOnceToNearestTiesToEven) {
  const double big = 9007199254740992.0;                              // 2^53
  EXPECT_EQ(exact({big, 1.0}), big);                                  // a tie: to even
  EXPECT_EQ(exact({big, 1.0, std::ldexp(1.0, -60)}), big + 2.0);      // just above the tie
  EXPECT_EQ(exact({big, 3.0}), big + 4.0);                            // a tie: to even
  EXPECT_EQ(exact({-big, -1.0, -std::ldexp(1.0, -60)}), -big - 2.0);  // negative
  EXPECT_EQ(exact({big, 1.0, -std::ldexp(1.0, -60)}), big);           // just below the tie
}

TEST(ExactSum, SubnormalsAndSpecialValues) {
  const double tiny = std::numeric_limits<double>::denorm_min();
  EXPECT_EQ(exact({tiny, tiny, tiny}), 3 * tiny);
  EXPECT_EQ(exact({std::numeric_limits<double>::min(), -tiny}),
            std::numeric_limits<double>::min() - tiny);
  EXPECT_EQ(exact({1.0, HUGE_VAL}), HUGE_VAL);
  EXPECT_EQ(exact({1.0, -HUGE_VAL}), -HUGE_VAL);
  EXPECT_TRUE(std::isnan(exact({HUGE_VAL, -HUGE_VAL})));
  EXPECT_TRUE(std::isnan(exact({1.0, std::nan("")})));
  // Beyond the range of a double: inf, as the true sum would round to.
  EXPECT_EQ(exact({1.7e308, 1.7e308}), HUGE_VAL);
}

// The same bits in any order and cut into any pieces, and the correctly rounded sum: the terms are
// doubles scaled by powers of two whose exact sum long double cannot hold, so it is checked
// against a sum of the same terms split into exact halves.
TEST(ExactSum, AnyOrderAndAnyCutGiveTheSameBits) {
  std::mt19937_64 g(5);
  std::vector<double> v(20000);
  for (auto& x : v) x = std::ldexp(uniform01(g) - 0.5, int(g() % 120) - 60);
  const double whole = exact(v);
  for (int trial = 0; trial < 5; ++trial) {
    std::shuffle(v.begin(), v.end(), g);
    ExactSum parts[3];
    for (std::size_t i = 0; i < v.size(); ++i) parts[g() % 3].add(v[i]);
    parts[0].add(parts[1]);
    parts[0].add(parts[2]);
    EXPECT_EQ(parts[0].value(), whole);
    EXPECT_EQ(exact(v), whole);
  }
  // Against a plain sum that is exact: integers well below 2^53.
  std::vector<double> ints(1000);
  double plain = 0;
  for (auto& x : ints) plain += (x = double(std::int64_t(g() % 2000001) - 1000000));
  EXPECT_EQ(exact(ints), plain);
}

TEST(ExactSum, ManyLargeTermsSumExactly) {
  ExactSum s;
  const std::size_t n = std::size_t(1) << 22;  // terms that fill whole 32-bit digits
  for (std::size_t i = 0; i < n; ++i) s.add(4294967295.0 * 4294967296.0);
  EXPECT_EQ(s.value(), double(n) * 4294967295.0 * 4294967296.0);
}

// --- The chunk streams ---------------------------------------------------------------------------

TEST(ChunkStreams, SeededFromSeedBlockChunkAndPurpose) {
  auto first = [](std::uint64_t seed, std::uint64_t block, std::uint64_t chunk, std::uint32_t p) {
    return chunk_stream(seed, block, chunk, p)();
  };
  const std::uint64_t a = first(1, 0, 0, 0);
  EXPECT_EQ(a, first(1, 0, 0, 0));
  EXPECT_NE(a, first(2, 0, 0, 0));
  EXPECT_NE(a, first(1, 1, 0, 0));
  EXPECT_NE(a, first(1, 0, 1, 0));
  EXPECT_NE(a, first(1, 0, 0, 1));
  EXPECT_NE(first(1ull << 32, 0, 0, 0), first(0, 1, 0, 0));  // the high halves count
}

// Each particle draws a varying number of values (as a rejection loop does); any cut of the index
// range into pieces gives every particle the same values as the whole range.
TEST(ChunkStreams, EveryCutGivesEachParticleTheSameNumbers) {
  GenerateContext ctx;
  ctx.seed = 11;
  ctx.block = 2;
  const std::uint64_t n = 3 * kGenerateChunk + 123;
  auto values = [&](std::uint64_t f, std::uint64_t e) {
    std::vector<std::uint64_t> out;
    for_each_particle(ctx, f, e, [&](std::uint64_t i, std::mt19937_64& rng, bool keep) {
      std::uint64_t v = 0;
      const int draws = 1 + int(i % 3);
      for (int k = 0; k < draws; ++k) v ^= rng();
      if (keep) out.push_back(v);
    });
    return out;
  };
  const std::vector<std::uint64_t> whole = values(0, n);
  ASSERT_EQ(whole.size(), n);
  const std::vector<std::vector<std::uint64_t>> cuts = {
      {0, 1, n},
      {0, kGenerateChunk, n},
      {0, kGenerateChunk - 1, kGenerateChunk + 1, 2 * kGenerateChunk + 7, n},
      {0, 5000, 5000, 9999, n},
  };
  for (const auto& cut : cuts) {
    std::vector<std::uint64_t> joined;
    for (std::size_t k = 0; k + 1 < cut.size(); ++k) {
      const auto part = values(cut[k], cut[k + 1]);
      EXPECT_EQ(part.size(), cut[k + 1] - cut[k]);
      joined.insert(joined.end(), part.begin(), part.end());
    }
    EXPECT_EQ(joined, whole);
  }
}

// --- Ranks as threads ----------------------------------------------------------------------------

// K threads that call the same collective operations in the same order, as MPI ranks do.
class ThreadGroup {
 public:
  explicit ThreadGroup(int k)
      : k_(k), doubles_(std::size_t(k)), ints_(std::size_t(k)), mail_(std::size_t(k)) {}
  int size() const { return k_; }
  void barrier() {
    std::unique_lock<std::mutex> lock(m_);
    const std::uint64_t gen = generation_;
    if (++arrived_ == k_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != gen; });
    }
  }
  template <class T, class Op>
  void reduce(std::vector<std::vector<T>>& slots, int r, T* v, std::size_t n, Op op) {
    slots[std::size_t(r)].assign(v, v + n);
    barrier();
    for (std::size_t i = 0; i < n; ++i) {
      T acc = slots[0][i];
      for (int s = 1; s < k_; ++s) acc = op(acc, slots[std::size_t(s)][i]);
      v[i] = acc;
    }
    barrier();
  }
  std::vector<std::vector<double>>& doubles() { return doubles_; }
  std::vector<std::vector<std::int64_t>>& ints() { return ints_; }
  std::vector<std::vector<std::vector<char>>>& mail() { return mail_; }

 private:
  int k_;
  std::mutex m_;
  std::condition_variable cv_;
  int arrived_ = 0;
  std::uint64_t generation_ = 0;
  std::vector<std::vector<double>> doubles_;
  std::vector<std::vector<std::int64_t>> ints_;
  std::vector<std::vector<std::vector<char>>> mail_;
};

class ThreadComm final : public Comm {
 public:
  ThreadComm(ThreadGroup& g, int r) : g_(g), r_(r) {}
  int rank() const override { return r_; }
  int size() const override { return g_.size(); }
  void sum(double* v, std::size_t n) override {
    g_.reduce(g_.doubles(), r_, v, n, [](double a, double b) { return a + b; });
  }
  void max(double* v, std::size_t n) override {
    g_.reduce(g_.doubles(), r_, v, n, [](double a, double b) { return std::max(a, b); });
  }
  void sum(std::int64_t* v, std::size_t n) override {
    g_.reduce(g_.ints(), r_, v, n, [](std::int64_t a, std::int64_t b) { return a + b; });
  }
  std::vector<std::vector<char>> gather(const std::vector<char>& mine) override {
    auto out = alltoallv(std::vector<std::vector<char>>(std::size_t(size()), mine));
    if (r_ != 0) out.clear();
    return out;
  }
  std::vector<std::vector<char>> alltoallv(std::vector<std::vector<char>> send) override {
    g_.mail()[std::size_t(r_)] = std::move(send);
    g_.barrier();
    std::vector<std::vector<char>> got(static_cast<std::size_t>(size()));
    for (int s = 0; s < size(); ++s)
      got[std::size_t(s)] = std::move(g_.mail()[std::size_t(s)][std::size_t(r_)]);
    g_.barrier();
    return got;
  }
  void barrier() override { g_.barrier(); }

 private:
  ThreadGroup& g_;
  int r_;
};

// Runs f(rank, comm) on cut.size() - 1 threads together.
template <class F>
void on_ranks(int k, F&& f) {
  ThreadGroup group(k);
  std::vector<std::thread> threads;
  for (int r = 0; r < k; ++r)
    threads.emplace_back([&, r] {
      ThreadComm comm(group, r);
      f(r, comm);
    });
  for (auto& t : threads) t.join();
}

TEST(RanksAsThreads, CountBeforeIsThePlaceInTheWholeOrder) {
  std::mt19937_64 g(3);
  std::vector<OrderKey> all(2000);
  for (std::size_t i = 0; i < all.size(); ++i)
    all[i] = OrderKey{double(g() % 300), i};  // many ties, broken by index
  std::vector<OrderKey> sorted = all;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const OrderKey& a, const OrderKey& b) { return a.value < b.value; });
  std::vector<std::uint64_t> place(all.size());
  for (std::size_t p = 0; p < sorted.size(); ++p) place[sorted[p].index] = p;
  EXPECT_EQ(count_before(nullptr, all), place);
  const std::vector<std::size_t> cut = {0, 0, 700, 701, 2000};
  std::vector<std::vector<std::uint64_t>> got(cut.size() - 1);
  on_ranks(int(cut.size()) - 1, [&](int r, Comm& comm) {
    const std::vector<OrderKey> mine(all.begin() + std::ptrdiff_t(cut[std::size_t(r)]),
                                     all.begin() + std::ptrdiff_t(cut[std::size_t(r) + 1]));
    got[std::size_t(r)] = count_before(&comm, mine);
  });
  std::vector<std::uint64_t> joined;
  for (const auto& v : got) joined.insert(joined.end(), v.begin(), v.end());
  EXPECT_EQ(joined, place);
}

// --- The built-in generators, cut ----------------------------------------------------------------

struct Made {
  std::int64_t size = -1;  // what particles() said
  HostParticles hp;
};

// The generator made as the framework makes it, asked for its size, and run on one range.
std::shared_ptr<Generator> make(const std::string& name, const std::string& params, int dim,
                                const Box& box) {
  ParamSet p = test::params_for(PluginKind::Generator, name, params);
  RunInfo run;
  run.dim = dim;
  run.box = box;
  run.quiet = true;
  return test::registry().make_generator(name, p, run);
}

GenerateContext context(int dim, const Box& box, std::uint64_t first, std::uint64_t count,
                        Comm* comm) {
  GenerateContext ctx;
  ctx.dim = dim;
  ctx.box = &box;
  ctx.seed = 17;
  ctx.block = 1;
  ctx.first = first;
  ctx.count = count;
  ctx.comm = comm;
  return ctx;
}

// Every cut of the block between threads gives, joined in order, the particles of the whole block
// made by one "rank", bit for bit. `make_one` makes a fresh generator (one per thread).
template <class Make>
void expect_every_cut_matches(Make&& make_one, int dim, const Box& box) {
  auto gen = make_one();
  const std::int64_t n = gen->particles(context(dim, box, 0, 0, nullptr));
  ASSERT_GT(n, 0) << "the generator makes ranges";
  const HostParticles whole = gen->generate(context(dim, box, 0, ~std::uint64_t(0), nullptr));
  ASSERT_EQ(whole.size(), std::size_t(n));
  const std::uint64_t N = std::uint64_t(n);
  const std::vector<std::vector<std::uint64_t>> cuts = {
      {0, N / 2, N},
      {0, 1, kGenerateChunk + 3, N},
      {0, 0, N / 3, N / 3 + 1, N},
  };
  for (const auto& cut : cuts) {
    const int k = int(cut.size()) - 1;
    std::vector<HostParticles> parts(static_cast<std::size_t>(k), HostParticles(dim));
    on_ranks(k, [&](int r, Comm& comm) {
      auto g = make_one();
      const std::uint64_t f = cut[std::size_t(r)], e = cut[std::size_t(r) + 1];
      parts[std::size_t(r)] = g->generate(context(dim, box, f, e - f, &comm));
    });
    HostParticles joined(dim);
    for (const auto& p : parts) joined.append(p);
    ASSERT_EQ(joined.size(), whole.size());
    for (int d = 0; d < dim; ++d) {
      EXPECT_EQ(joined.x[d], whole.x[d]) << "positions, axis " << d;
      EXPECT_EQ(joined.v[d], whole.v[d]) << "velocities, axis " << d;
    }
    EXPECT_EQ(joined.mass, whole.mass);
    EXPECT_EQ(joined.type, whole.type);
  }
}

void expect_every_cut_matches(const std::string& name, const std::string& params, int dim,
                              const Box& box) {
  SCOPED_TRACE(name + " " + std::to_string(dim) + "D: " + params);
  expect_every_cut_matches([&] { return make(name, params, dim, box); }, dim, box);
}

TEST(GeneratorRanges, UniformLatticePlummerGalaxyAnyCutIsTheWholeBlock) {
  const Box open3 = test::cube(3, 0, 10, Boundary::Open),
            open2 = test::cube(2, 0, 10, Boundary::Open);
  const Box periodic3 = test::cube(3, 0, 13.4368, Boundary::Periodic);
  expect_every_cut_matches("uniform", "count = 9000", 3, open3);
  expect_every_cut_matches("uniform", "count = 5000", 2, open2);
  expect_every_cut_matches("lattice", "kind = \"fcc\"\nspacing = 1.6796", 3, periodic3);
  expect_every_cut_matches("lattice", "kind = \"hexagonal\"\ncount = 5000", 2, open2);
  expect_every_cut_matches("plummer", "count = 9000", 3, open3);
  expect_every_cut_matches("galaxy", "count = 9000\ntilt = 30", 3, open3);
  expect_every_cut_matches("galaxy", "count = 5000\ncentral_fraction = 0\neps = 0.1", 2, open2);
}

// The example of docs/plugins.md ("Generators"), as written there.
class Ring final : public pardyn::Generator {
 public:
  explicit Ring(std::int64_t n) : n_(n) {}
  std::int64_t particles(const pardyn::GenerateContext&) override { return n_; }
  pardyn::HostParticles generate(const pardyn::GenerateContext& ctx) override {
    const std::uint64_t n = std::uint64_t(n_), first = std::min(ctx.first, n), end = ctx.end(n);
    pardyn::HostParticles hp(ctx.dim);
    hp.resize(end - first);    // velocities, types: zero
    pardyn::ExactSum sums[3];  // m x, m y; m
    pardyn::for_each_particle(ctx, first, end,
                              [&](std::uint64_t i, std::mt19937_64& rng, bool keep) {
                                const double phi = 2 * pardyn::kPi * pardyn::uniform01(rng);
                                if (!keep) return;  // an earlier particle of the chunk
                                const std::size_t k = i - first;
                                hp.x[0][k] = std::cos(phi);
                                hp.x[1][k] = std::sin(phi);
                                hp.mass[k] = 1.0 / double(n);
                                for (int d = 0; d < 2; ++d) sums[d].add(hp.mass[k] * hp.x[d][k]);
                                sums[2].add(hp.mass[k]);
                              });
    pardyn::reduce(ctx.comm, sums, 3);  // over every rank's range
    for (int d = 0; d < 2; ++d)
      for (auto& x : hp.x[d]) x -= sums[d].value() / sums[2].value();
    return hp;
  }

 private:
  std::int64_t n_;
};

TEST(GeneratorRanges, TheDocumentedExampleAnyCutIsTheWholeBlock) {
  const Box box = test::cube(2, -2, 2, Boundary::Open);
  expect_every_cut_matches([] { return std::make_shared<Ring>(10000); }, 2, box);
}

// Random sequential addition in key order (plugins/generators/uniform/random_addition.hpp): each "rank"
// decides its own tiles (about 1024 particles each) and those of its ids; any cut, an empty range
// and a range of one particle among them, gives the particles of one process, ids included. Walled,
// periodic (minimum images across the faces) and open; a region inside the box.
TEST(GeneratorRanges, UniformWithMinimumSpacingAnyCutIsTheWholeBlock) {
  const Box walled2 = test::cube(2, 0, 40, Boundary::Wall),
            periodic2 = test::cube(2, 0, 40, Boundary::Periodic),
            periodic3 = test::cube(3, 0, 15, Boundary::Periodic),
            open3 = test::cube(3, 0, 15, Boundary::Open);
  expect_every_cut_matches("uniform", "count = 9000\nmin_spacing = 0.25", 2, walled2);
  expect_every_cut_matches("uniform", "count = 9000\nmin_spacing = 0.25", 2, periodic2);
  expect_every_cut_matches("uniform", "count = 5000\nmin_spacing = 0.6", 3, periodic3);
  expect_every_cut_matches("uniform",
                           "count = 3000\nmin_spacing = 0.6\nregion_lo = [2.0, 3.0, "
                           "0.0]\nregion_hi = [14.0, 15.0, 15.0]",
                           3, open3);
}

TEST(GeneratorRanges, FileReadersMakeTheirBlockWhole) {
  const Box box = test::cube(3, 0, 10, Boundary::Open);
  const std::string dir = test::scratch_dir("generate_ranges_files");
  std::ofstream(dir + "/p.csv") << "x,y,z,vx,vy,vz,mass\n0,0,0,0,0,0,1\n1,0,0,0,0,0,1\n";
  std::ofstream(dir + "/p.xyz") << "2\n\nAr 0 0 0\nAr 1 0 0\n";
  for (const char* name : {"file", "xyz"}) {
    const std::string path = dir + "/p." + (std::string(name) == "file" ? "csv" : "xyz");
    auto gen = make(name, "path = \"" + path + "\"", 3, box);
    EXPECT_LT(gen->particles(context(3, box, 0, 0, nullptr)), 0) << name;
    EXPECT_EQ(gen->generate(context(3, box, 1, 1, nullptr)).size(), 2u) << name;
  }
}

}  // namespace
