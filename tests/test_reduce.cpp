// SPDX-License-Identifier: BSD-3-Clause
// The SDK's sum and histogram loops (pardyn/reduce.hpp) and the analyses built on them:
//   - sum_over_index gives the same sums to the last bit with 1, 2, 3 and 8 OpenMP threads, within
//     a few ulp of the exactly rounded sum (compensated) or of the terms' magnitude (plain);
//   - histogram_over_index counts what a sequential loop counts, with any number of threads;
//   - the msd analysis (sum_over_index) writes the same msd.csv, byte for byte, with 1 and 3
//     threads, and rdf (histogram_over_index) the same rdf.csv.
// The GPU loops run in the plugins' GPU tests (Rdf.*Gpu*, Msd.*Gpu*, Analysis.*Gpu*).
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "pardyn/app/config.hpp"
#include "pardyn/app/simulation.hpp"
#include "pardyn/compensated.hpp"
#include "pardyn/exact_sum.hpp"
#include "pardyn/reduce.hpp"
#include "support.hpp"

using namespace pardyn;

namespace {

// Restores the OpenMP thread count when a test ends.
struct Threads {
  int before = omp_get_max_threads();
  explicit Threads(int n) { omp_set_num_threads(n); }
  ~Threads() { omp_set_num_threads(before); }
};

struct PlainSums {
  double s = 0, s2 = 0;
  void merge(const PlainSums& o) {
    s += o.s;
    s2 += o.s2;
  }
};
struct Plain {
  using Acc = PlainSums;
  const double* x;
  void operator()(std::size_t i, PlainSums& a) const {
    a.s += x[i];
    a.s2 += x[i] * x[i];
  }
};

struct Compensated {
  using Acc = CompensatedSum;
  const double* x;
  void operator()(std::size_t i, CompensatedSum& a) const { a.add(x[i]); }
};

struct Bins {
  const double* x;
  int entries;
  template <class Counts>
  void operator()(std::size_t i, Counts& c) const {
    c.add(int(x[i] * entries));
    if (i % 3 == 0) c.add(0);  // some items count twice
  }
};

std::vector<double> random_terms(std::size_t n) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(n);
  for (double& v : x) v = u(rng) * std::exp(8 * u(rng));  // mixed signs and magnitudes
  return x;
}

std::string file_text(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << path;
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST(Reduce, SumIsTheSameToTheLastBitForAnyThreadCount) {
  const std::vector<double> x = random_terms(100003);  // 25 blocks, the last one short
  ExactSum exact;
  for (double v : x) exact.add(v);
  double plain1 = 0, comp1 = 0;
  for (int threads : {1, 2, 3, 8}) {
    Threads t(threads);
    const double plain = sum_over_index(Backend::Cpu, x.size(), Plain{x.data()}).s;
    const double comp = sum_over_index(Backend::Cpu, x.size(), Compensated{x.data()}).value();
    if (threads == 1) {
      plain1 = plain;
      comp1 = comp;
      // Accurate: a plain sum within 1e-12 of the terms' magnitude, the compensated one within a
      // few ulp of the exactly rounded sum.
      double magnitude = 0;
      for (double v : x) magnitude += std::fabs(v);
      EXPECT_NEAR(plain, exact.value(), 1e-12 * magnitude);
      EXPECT_NEAR(comp, exact.value(), 1e-15 * std::fabs(exact.value()));
    }
    EXPECT_EQ(plain, plain1) << threads << " threads";
    EXPECT_EQ(comp, comp1) << threads << " threads";
  }
  EXPECT_EQ(sum_over_index(Backend::Cpu, 0, Plain{x.data()}).s, 0.0);
}

TEST(Reduce, HistogramCountsWhatASequentialLoopCounts) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> x(50000);
  for (double& v : x) v = u(rng);
  const int entries = 37;
  std::vector<std::uint64_t> expected(entries, 0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    ++expected[std::size_t(x[i] * entries)];
    if (i % 3 == 0) ++expected[0];
  }
  for (int threads : {1, 2, 3, 8}) {
    Threads t(threads);
    std::vector<std::uint64_t> h(entries, 1);  // the loop adds to what is there
    histogram_over_index(Backend::Cpu, x.size(), Bins{x.data(), entries}, entries, h.data());
    for (int e = 0; e < entries; ++e)
      EXPECT_EQ(h[e], expected[e] + 1) << "entry " << e << ", " << threads << " threads";
  }
}

// msd and rdf of 20000 free particles of two types (no forces: the trajectory itself does not
// depend on the thread count), with 1 and 3 threads: the same files.
TEST(Reduce, MsdAndRdfFilesAreTheSameForAnyThreadCount) {
  std::string out[2];
  for (int k = 0; k < 2; ++k) {
    Threads t(k == 0 ? 1 : 3);
    const std::string dir = test::scratch_dir("reduce-threads-" + std::to_string(k));
    std::ofstream(dir + "/s.toml")
        << "[simulation]\ndimension = 3\nsteps = 40\nbackend = \"cpu\"\nseed = 5\n"
           "[box]\nlo = [0, 0, 0]\nhi = [30, 30, 30]\nboundary = \"periodic\"\n"
           "[[particles]]\ngenerator = \"uniform\"\ncount = 10000\ntemperature = 2.0\n"
           "[[particles]]\ngenerator = \"uniform\"\ncount = 10000\ntemperature = 2.0\ntype = 1\n"
           "[integrator]\ndt = 0.01\n"
           "[[output]]\ntype = \"msd\"\ninterval = 10\n"
           "[[output]]\ntype = \"rdf\"\nr_max = 3.0\nbins = 60\ninterval = 10\n";
    RunOptions opt;
    opt.quiet = true;
    opt.output = dir + "/out";
    Scenario sc = load_scenario(dir + "/s.toml", {}, test::registry());
    {
      Simulation sim(sc, test::registry(), opt);
      sim.run();
    }
    out[k] = file_text(dir + "/out/msd.csv") + file_text(dir + "/out/rdf.csv");
  }
  EXPECT_GT(out[0].size(), 100u);
  EXPECT_EQ(out[0], out[1]);
}
