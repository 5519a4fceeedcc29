// SPDX-License-Identifier: BSD-3-Clause
// The clusters analysis: known droplets are found, with their sizes, ids and the thermo columns, on
// the CPU and the GPU, in 2D and 3D, across periodic boundaries.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "pardyn/app/simulation.hpp"
#include "support.hpp"

using namespace pardyn;

namespace {

struct Layout {
  std::vector<std::array<double, 3>> x;
  std::vector<int> group;  // expected cluster (-1: isolated)
};

// Square (cubic) blocks of particles at spacing 1 (linked at distance 1.5), far apart; sizes
// decreasing so that the expected ids are known; plus isolated particles. The last block straddles
// the periodic boundary of the first axis.
Layout make_layout(int dim) {
  Layout l;
  const int sides[3] = {6, 4, 2};
  const double corner[3][3] = {{5, 5, 5}, {20, 5, 20}, {39.5, 20, 5}};
  for (int b = 0; b < 3; ++b) {
    const int s = sides[b];
    const int nz = dim == 3 ? s : 1;
    for (int i = 0; i < s; ++i)
      for (int j = 0; j < s; ++j)
        for (int k = 0; k < nz; ++k) {
          double x = corner[b][0] + i, y = corner[b][1] + j, z = dim == 3 ? corner[b][2] + k : 0;
          if (x >= 40) x -= 40;  // wrapped into the periodic box [0, 40)
          l.x.push_back({x, y, z});
          l.group.push_back(b);
        }
  }
  for (int i = 0; i < 7; ++i) {
    l.x.push_back({2.0 + 4.5 * i, 33.0, dim == 3 ? 33.0 : 0.0});
    l.group.push_back(-1);
  }
  return l;
}

void check(const std::string& backend, int dim) {
  const Layout l = make_layout(dim);
  const std::string dir = test::scratch_dir("clusters-" + backend + std::to_string(dim));
  {
    std::ofstream f(dir + "/p.csv");
    f << (dim == 3 ? "x,y,z,vx,vy,vz,mass\n" : "x,y,vx,vy,mass\n");
    for (const auto& p : l.x) {
      f << p[0] << ',' << p[1];
      if (dim == 3) f << ',' << p[2];
      f << (dim == 3 ? ",0,0,0,1\n" : ",0,0,1\n");
    }
  }
  const std::string path = dir + "/s.toml";
  std::ofstream(path)
      << "[simulation]\ndimension = " << dim << "\nsteps = 0\nbackend = \"" << backend
      << "\"\n[box]\nlo = " << (dim == 3 ? "[0, 0, 0]" : "[0, 0]")
      << "\nhi = " << (dim == 3 ? "[40, 40, 40]" : "[40, 40]")
      << "\nboundary = \"periodic\"\n[[particles]]\ngenerator = \"file\"\npath = \"" << dir
      << "/p.csv\"\n[[output]]\ntype = \"clusters\"\ndistance = 1.5\nmin_size = 2\n";
  Scenario sc = load_scenario(path, {}, test::registry());
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  Simulation sim(sc, test::registry(), opt);
  ASSERT_EQ(sim.run_info().extra_columns.size(), 3u);
  auto obs = test::registry().make_observer("clusters", sc.outputs[0].params, sim.run_info());
  Thermo t;
  t.extra.assign(3, -7.0);
  obs->analyse(sim, t, 0);

  const double n = double(l.x.size());
  const int sizes[3] = {dim == 3 ? 216 : 36, dim == 3 ? 64 : 16, dim == 3 ? 8 : 4};
  EXPECT_EQ(t.extra[0], 3.0);
  EXPECT_DOUBLE_EQ(t.extra[1], sizes[0] / n);
  EXPECT_DOUBLE_EQ(t.extra[2], (sizes[0] + sizes[1] + sizes[2]) / n);

  HostParticles hp(dim);
  sim.store().download(hp, ParticleStore::kLabels | ParticleStore::kId);
  ASSERT_EQ(hp.labels.size(), 1u);
  ASSERT_EQ(hp.labels[0].first, "cluster");
  const auto& id = hp.labels[0].second;
  // Ids: 0 for the largest block, then by size; -1 for the isolated particles. Store order is the
  // file's order (particle ids), whatever order the cell list sorted them in.
  for (std::size_t i = 0; i < l.x.size(); ++i)
    ASSERT_EQ(id[i], l.group[i]) << "particle " << i << " of block " << l.group[i];
}

}  // namespace

// The droplets and the histogram once on the CPU and once on the GPU (backends.hpp).
class ClustersRun : public test::BackendRun {};
PARDYN_INSTANTIATE_BACKENDS(ClustersRun);

TEST_P(ClustersRun, FindsKnownDroplets) {
  check(test::backend(), 2);
  check(test::backend(), 3);
}

TEST(Clusters, WritesThermoColumnsAndFrameLabels) {
  const std::string dir = test::scratch_dir("clusters-run");
  const std::string path = dir + "/s.toml";
  std::ofstream(path)
      << "[simulation]\ndimension = 2\nsteps = 20\n[box]\nlo = [0, 0]\nhi = [20, 20]\n"
         "boundary = \"periodic\"\n[[particles]]\ngenerator = \"lattice\"\n"
         "kind = \"square\"\ncount = 100\nspacing = 1.0\n[integrator]\ndt = 0.01\n"
         "[[output]]\ntype = \"clusters\"\ndistance = 1.2\n"
         "[[output]]\ntype = \"thermo\"\ninterval = 10\n";
  Scenario sc = load_scenario(path, {}, test::registry());
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  Simulation sim(sc, test::registry(), opt);
  sim.run();
  std::ifstream f(dir + "/out/thermo.csv");
  std::string head, row;
  std::getline(f, head);
  std::getline(f, row);
  EXPECT_NE(head.find(",n_clusters,largest_cluster_fraction,clustered_fraction"), std::string::npos)
      << head;
  // A 10 x 10 lattice of spacing 1 at rest: one cluster holding every particle.
  EXPECT_NE(row.find(",1,1,1"), std::string::npos) << row;
}

namespace {

// clusters.csv: the size histogram of every cluster (singletons included) at each analysis, on the
// run's backend. The 2D layout: blocks of 36, 16 and 4 particles and 7 isolated ones (63 in all).
void check_histogram(const std::string& backend) {
  const Layout l = make_layout(2);
  const std::string dir = test::scratch_dir("clusters-hist-" + backend);
  {
    std::ofstream f(dir + "/p.csv");
    f << "x,y,vx,vy,mass\n";
    for (const auto& p : l.x) f << p[0] << ',' << p[1] << ",0,0,1\n";
  }
  std::ofstream(dir + "/s.toml")
      << "[simulation]\ndimension = 2\nsteps = 0\nbackend = \"" << backend
      << "\"\n[box]\nlo = [0, 0]\nhi = [40, 40]\nboundary = \"periodic\"\n[[particles]]\n"
         "generator = \"file\"\npath = \""
      << dir
      << "/p.csv\"\n[[output]]\ntype = \"clusters\"\ndistance = 1.5\nmin_size = 2\n"
         "[[output]]\ntype = \"thermo\"\ninterval = 10\n";
  Scenario sc = load_scenario(dir + "/s.toml", {}, test::registry());
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  {
    Simulation sim(sc, test::registry(), opt);
    sim.run();
  }
  std::ifstream f(dir + "/out/clusters.csv");
  std::string head, row, extra;
  std::getline(f, head);
  std::getline(f, row);
  EXPECT_EQ(head,
            "step,time,n_clusters,mean_cluster_size,size_1,size_2_3,size_4_7,size_8_15,"
            "size_16_31,size_32_63");
  // 3 clusters of at least 2 particles, (36 + 16 + 4) / 3 on average; 7 singletons, one cluster
  // of 4-7, one of 16-31, one of 32-63.
  EXPECT_EQ(row, "0,0,3,18.66666667,7,0,1,0,1,1");
  EXPECT_FALSE(std::getline(f, extra) && !extra.empty()) << "one analysis, one row: " << extra;
}

}  // namespace

TEST_P(ClustersRun, WritesTheSizeHistogram) { check_histogram(test::backend()); }

namespace {

// A random 2D gas (many clusters of every size, links in every direction): the analysis on one
// backend, its thermo columns and each particle's cluster id by particle id.
struct GasClusters {
  std::vector<double> columns;
  std::map<std::int64_t, std::int32_t> id_of;
};

GasClusters gas_clusters(const std::string& backend) {
  const std::string dir = test::scratch_dir("clusters-gas-" + backend);
  std::ofstream(dir + "/s.toml")
      << "[simulation]\ndimension = 2\nsteps = 0\nseed = 3\nbackend = \"" << backend
      << "\"\n[box]\nlo = [0, 0]\nhi = [240, 240]\nboundary = \"wall\"\n[[particles]]\n"
         "generator = \"uniform\"\ncount = 20000\n[[output]]\ntype = \"clusters\"\n"
         "distance = 1.5\nmin_size = 5\n";
  Scenario sc = load_scenario(dir + "/s.toml", {}, test::registry());
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  Simulation sim(sc, test::registry(), opt);
  auto obs = test::registry().make_observer("clusters", sc.outputs[0].params, sim.run_info());
  Thermo t;
  t.extra.assign(3, -7.0);
  obs->analyse(sim, t, 0);
  HostParticles hp(2);
  sim.store().download(hp, ParticleStore::kLabels | ParticleStore::kId);
  GasClusters g;
  g.columns = t.extra;
  for (std::size_t i = 0; i < hp.size(); ++i) g.id_of[hp.id[i]] = hp.labels[0].second[i];
  return g;
}

}  // namespace

// The GPU's union-find (concurrent hooks, then every slot pointed at its root) finds the CPU's
// clusters: the same counts and the same particles in each (ids may differ between equal sizes).
TEST(Clusters, GpuFindsTheCpusClustersInARandomGas) {
  PARDYN_SKIP_WITHOUT_GPU();
  const GasClusters cpu = gas_clusters("cpu"), gpu = gas_clusters("cuda");
  EXPECT_GT(cpu.columns[0], 100.0) << "too few clusters for the test to show anything";
  for (int c = 0; c < 3; ++c) EXPECT_EQ(gpu.columns[c], cpu.columns[c]) << "thermo column " << c;
  ASSERT_EQ(gpu.id_of.size(), cpu.id_of.size());
  std::map<std::int32_t, std::int32_t> gpu_of_cpu, cpu_of_gpu;
  std::size_t differ = 0;
  for (const auto& [pid, c] : cpu.id_of) {
    const std::int32_t g = gpu.id_of.at(pid);
    if ((c < 0) != (g < 0)) ++differ;
    else if (c >= 0 && (*gpu_of_cpu.emplace(c, g).first).second != g) ++differ;
    else if (g >= 0 && (*cpu_of_gpu.emplace(g, c).first).second != c) ++differ;
  }
  EXPECT_EQ(differ, 0u) << "particles whose GPU cluster is not their CPU cluster";
}
