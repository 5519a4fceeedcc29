// SPDX-License-Identifier: BSD-3-Clause
// Parallel runs over MPI: every scenario runs on all ranks of this launch (mpirun -np K) and once
// more on rank 0 alone (RunOptions::serial), and the two final states must agree particle by
// particle (matched by id), as must the global quantities (kinetic and potential energy, virial).
// The setups a parallel run refuses must fail on every rank, reported once by rank 0, and never
// leave a rank waiting.
//
// Registered with ctest as mpi.np2 and mpi.np3 (tests/CMakeLists.txt); started without mpirun the
// tests skip. Each test's outcome is agreed over the ranks (Rank::TearDown), so that every rank's
// gtest reports the same result; ranks other than 0 print only their failures.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "pardyn/app/config.hpp"
#include "pardyn/app/registry.hpp"
#include "pardyn/app/simulation.hpp"
#include "pardyn/cell_list.hpp"
#include "pardyn/generator_support.hpp"
#include "io/checkpoint.hpp"
#include "parallel/communicator.hpp"

namespace fs = std::filesystem;
using namespace pardyn;

namespace {

parallel::Communicator* comm() { return parallel::world(); }
int rank() { return comm() ? comm()->rank() : 0; }
int ranks() { return comm() ? comm()->size() : 1; }
void barrier() {
  if (comm()) comm()->barrier();
}

// --- slow_gravity: gravity that sleeps on one rank of a parallel run --------------------------
// The default balance = "speed" resizes the all-pairs ring's blocks when the ranks' compute times
// differ by more than 10% (and 1 ms); a rank that sleeps in every evaluation makes that happen
// every time, so that the redistribution is tested deterministically. Everything else is gravity.
Registry& registry();

class SlowPotential final : public Potential {
 public:
  SlowPotential(std::shared_ptr<Potential> inner, double delay)
      : inner_(std::move(inner)), delay_(delay) {}
  void compute(ParticleStore& s, const Neighbourhood& nb, const ForceRequest& req) override {
    if (delay_ > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay_));
    inner_->compute(s, nb, req);
  }
  double cutoff() const override { return inner_->cutoff(); }
  bool supports(NeighbourhoodKind k) const override { return inner_->supports(k); }
  std::string unsupported_reason(NeighbourhoodKind k) const override {
    return inner_->unsupported_reason(k);
  }

 private:
  std::shared_ptr<Potential> inner_;
  double delay_;
};

void register_slow_gravity(Registrar& r) {
  FactoryInfo f;
  f.name = "slow_gravity";
  f.summary =
      "test potential: gravity that sleeps `delay` per call on rank `slow_rank` of a parallel run";
  f.backends = kCpu;
  f.schema.real("G", 1.0, "length^3 mass^-1 time^-2", "gravitational constant", 0.0)
      .real("eps", 0.0, "length", "softening length", 0.0)
      .integer("slow_rank", 1, "the rank that sleeps", 0)
      .real("delay", 0.001, "s", "wall-clock seconds slept per call", 0.0);
  r.add(std::move(f), Factory<Potential>([](const ParamSet& p, const RunInfo& run) {
          const bool slow = run.ranks > 1 && run.rank == p.integer("slow_rank");
          return std::unique_ptr<Potential>(new SlowPotential(
              registry().make_potential("gravity", p, run), slow ? p.real("delay") : 0.0));
        }));
}

// --- walk: a generator written against the API without ranges ------------------------------------
// A random walk: each particle a Gaussian step from the one before, from the block's single stream
// (ctx.rng) in sequence. It has no particles(), so every rank makes the whole block and keeps its
// part (what an out-of-tree generator of an older pardyn gets).
class Walk final : public Generator {
 public:
  explicit Walk(std::int64_t count) : count_(count) {}
  HostParticles generate(const GenerateContext& ctx) override {
    HostParticles hp(ctx.dim);
    hp.resize(std::size_t(count_));
    std::normal_distribution<double> step(0.0, 0.5);
    double x[3] = {0, 0, 0};
    for (std::size_t i = 0; i < hp.size(); ++i) {
      for (int d = 0; d < ctx.dim; ++d) {
        x[d] += step(*ctx.rng);
        hp.x[d][i] = x[d];
        hp.v[d][i] = 0.0;
      }
      hp.mass[i] = 1.0 + 0.001 * double(i % 7);
      hp.type[i] = std::int32_t(i % 2);
    }
    return hp;
  }

 private:
  std::int64_t count_;
};

void register_walk(Registrar& r) {
  FactoryInfo f;
  f.kind = PluginKind::Generator;
  f.name = "walk";
  f.summary = "test generator: a random walk drawn from one stream (no ranges)";
  f.backends = kBackendAll;
  f.schema.integer("count", std::nullopt, "number of particles", 1);
  r.add(std::move(f), Factory<Generator>([](const ParamSet& p, const RunInfo&) {
          return std::unique_ptr<Generator>(new Walk(p.integer("count")));
        }));
}

// The built-in plugins, slow_gravity and walk (never destroyed: objects made in tests may outlive
// static teardown, as in tests/support.cpp).
Registry& registry() {
  static Registry* reg = [] {
    auto* r = new Registry;
    r->load_path(Registry::builtin_plugin_dir());
    r->add_in_process(&register_slow_gravity, "tests/mpi/test_mpi.cpp");
    r->add_in_process(&register_walk, "tests/mpi/test_mpi.cpp (walk)");
    r->throw_if_refused();
    return r;
  }();
  return *reg;
}

// --- Scratch folders and scenarios --------------------------------------------------------------
// A fresh folder for this test, the same path on every rank (rank 0 makes it), named after the
// number of ranks so that mpi.np2 and mpi.np3 never share one.
std::string shared_dir(const std::string& name = "run") {
  const char* base = std::getenv("PARDYN_TEST_TMP");
  const auto* t = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path p = fs::path(base ? base : "/tmp/pardyn-test") /
                     ("mpi-np" + std::to_string(ranks())) /
                     (std::string(t->test_suite_name()) + "." + t->name() + "-" + name);
  if (rank() == 0) {
    fs::remove_all(p);
    fs::create_directories(p);
  }
  barrier();
  return p.string();
}

// The text of tests/mpi/scenarios/NAME.toml, which a test may complete (steps, outputs, a line of
// [simulation]) before load() writes it into the test's folder. Those files are not fuzz.inputs'
// base scenarios: some need the test plugins or several ranks to mean anything.
std::string scenario(const std::string& name) {
  const std::string path =
      std::string(PARDYN_SOURCE_DIR) + "/tests/mpi/scenarios/" + name + ".toml";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A scenario's `backend = "cpu"` replaced by PARDYN_MPI_TEST_BACKEND when it is set (`cuda`: the
// tests that honour it run on the GPU machine's device).
std::string on_test_backend(std::string toml) {
  if (const char* b = std::getenv("PARDYN_MPI_TEST_BACKEND")) {
    const std::string from = "backend = \"cpu\"", to = std::string("backend = \"") + b + "\"";
    toml.replace(toml.find(from), from.size(), to);
  }
  return toml;
}

// Rank 0 writes the scenario; every rank reads the same file.
Scenario load(const std::string& dir, const std::string& toml) {
  const std::string path = dir + "/scenario.toml";
  if (rank() == 0) std::ofstream(path) << toml;
  barrier();
  return load_scenario(path, {}, registry());
}

// --- Final states -------------------------------------------------------------------------------
struct Rec {
  std::int64_t id;
  double x[3], v[3], a[3];
  std::int32_t image[3];  // periodic image counts (carried with a particle from rank to rank)
};

std::vector<Rec> records(Simulation& sim) {
  HostParticles hp(sim.run_info().dim);
  sim.store().download(hp, ParticleStore::kPosition | ParticleStore::kVelocity |
                               ParticleStore::kAcceleration | ParticleStore::kId |
                               ParticleStore::kImage);
  std::vector<Rec> out(hp.size());
  for (std::size_t i = 0; i < hp.size(); ++i) {
    Rec r{};
    r.id = hp.id[i];
    for (int d = 0; d < hp.dim; ++d) {
      r.x[d] = hp.x[d][i];
      r.v[d] = hp.v[d][i];
      r.a[d] = hp.a[d][i];
      r.image[d] = hp.image[d][i];
    }
    out[i] = r;
  }
  return out;
}

// Every rank's values on rank 0, each with the rank that held it (empty on the other ranks).
template <class T>
std::vector<std::pair<int, T>> gather(const std::vector<T>& mine) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::vector<char> bytes(mine.size() * sizeof(T));
  if (!mine.empty()) std::memcpy(bytes.data(), mine.data(), bytes.size());
  const auto all = comm()->gather(bytes);
  std::vector<std::pair<int, T>> out;
  for (std::size_t r = 0; r < all.size(); ++r)
    for (std::size_t k = 0; k < all[r].size() / sizeof(T); ++k) {
      T v;
      std::memcpy(&v, all[r].data() + k * sizeof(T), sizeof(T));
      out.emplace_back(int(r), v);
    }
  return out;
}

struct Outcome {
  std::vector<Rec> start, end;  // this rank's particles after construction and at the end
  Thermo thermo_start, thermo_end;
};

// Builds the simulation, measures, runs, measures (the same sequence in both runs).
Outcome run_scenario(const Scenario& sc, const std::string& out, bool serial) {
  RunOptions opt;
  opt.quiet = true;
  opt.output = out;
  opt.serial = serial;
  Simulation sim(sc, registry(), opt);
  Outcome o;
  o.start = records(sim);
  o.thermo_start = sim.measure();
  sim.run();
  o.thermo_end = sim.measure();
  o.end = records(sim);
  return o;
}

// How close a parallel run must come to one rank's (relative differences, see compare()).
// Measured (CPU backend, double, 2 and 3 ranks): the ring's results differ from one rank's only by
// the order of the force sums, at most 3e-15 (state) and 2e-16 (K, U, W); the domain
// decomposition's, after 60-250 steps of chaotic LJ motion, at most 1e-12 and 3e-14.
struct Tolerance {
  double state;   // positions, velocities and accelerations
  double thermo;  // kinetic, potential, virial
};
constexpr Tolerance kRing{1e-12, 1e-13}, kDomain{1e-10, 1e-12};
// What compare() found: the largest differences and how many particles changed rank in the run.
struct Comparison {
  double x = 0, v = 0, a = 0, thermo = 0;
  std::size_t moved = 0;  // particles on another rank at the end than after construction
};

double rel(double p, double s, double scale) { return std::fabs(p - s) / scale; }
// The larger of a and b, NaN once either is NaN (a non-finite difference must fail the test).
double worst(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }

// Rank 0: the parallel final state against the serial one. Position differences are taken by the
// unwrapped positions on periodic axes and divided by the RMS distance from the centre of mass, velocity
// and acceleration differences by the RMS speed and acceleration: the largest over all particles
// and components.
Comparison compare(const Scenario& sc, const std::vector<std::pair<int, Rec>>& start,
                   const std::vector<std::pair<int, Rec>>& par, const Outcome& ser,
                   const Outcome& par_thermo) {
  Comparison c;
  const int dim = sc.dim;
  EXPECT_EQ(par.size(), ser.end.size()) << "particle count of the parallel run";
  std::map<std::int64_t, std::pair<int, const Rec*>> by_id;
  for (const auto& [r, rec] : par)
    EXPECT_TRUE(by_id.emplace(rec.id, std::make_pair(r, &rec)).second)
        << "id " << rec.id << " twice";
  std::map<std::int64_t, int> start_rank;
  for (const auto& [r, rec] : start) start_rank[rec.id] = r;
  for (const auto& [id, where] : by_id) {
    auto it = start_rank.find(id);
    if (it != start_rank.end() && it->second != where.first) ++c.moved;
  }
  double cm[3] = {0, 0, 0};
  for (const auto& s : ser.end)
    for (int d = 0; d < dim; ++d) cm[d] += s.x[d] / double(ser.end.size());
  double sx = 0, sv = 0, sa = 0;
  for (const auto& s : ser.end)
    for (int d = 0; d < dim; ++d) {
      double dx = s.x[d] - cm[d];
      sx += dx * dx;
      sv += s.v[d] * s.v[d];
      sa += s.a[d] * s.a[d];
    }
  const double n = double(std::max<std::size_t>(1, ser.end.size()));
  sx = std::sqrt(sx / n), sv = std::sqrt(sv / n), sa = std::sqrt(sa / n);
  std::size_t missing = 0;
  for (const auto& s : ser.end) {
    auto it = by_id.find(s.id);
    if (it == by_id.end()) {
      ++missing;
      continue;
    }
    const Rec& p = *it->second.second;
    for (int d = 0; d < dim; ++d) {
      // Unwrapped positions on periodic axes: a particle's image count must have travelled with it
      // from rank to rank (one that was wrapped on the other side of a face still agrees).
      const double L = sc.box.boundary[d] == Boundary::Periodic ? sc.box.length(d) : 0.0;
      const double dx = (p.x[d] + p.image[d] * L) - (s.x[d] + s.image[d] * L);
      c.x = worst(c.x, std::fabs(dx) / sx);
      c.v = worst(c.v, rel(p.v[d], s.v[d], sv));
      c.a = worst(c.a, rel(p.a[d], s.a[d], sa));
    }
  }
  EXPECT_EQ(missing, 0u) << "particles of the serial run missing from the parallel one";
  // Global quantities, each relative to the largest of |K|, |U|, |W| at that time (a virial or a
  // potential energy near zero would make its own relative difference meaningless).
  const std::pair<const Thermo*, const Thermo*> times[] = {
      {&par_thermo.thermo_start, &ser.thermo_start}, {&par_thermo.thermo_end, &ser.thermo_end}};
  for (const auto& [pt, st] : times) {
    const Reductions& p = pt->r;
    const Reductions& s = st->r;
    EXPECT_EQ(p.n, s.n);
    const double scale =
        std::max({std::fabs(s.kinetic), std::fabs(s.potential), std::fabs(s.virial), 1e-300});
    for (double r : {rel(p.kinetic, s.kinetic, scale), rel(p.potential, s.potential, scale),
                     rel(p.virial, s.virial, scale)})
      c.thermo = worst(c.thermo, r);
  }
  return c;
}

// The scenario on every rank, then on rank 0 alone; rank 0 compares. Returns the comparison (on
// rank 0; the other ranks get `moved` only).
Comparison parallel_matches_serial(const std::string& toml, const Tolerance& tol) {
  const std::string dir = shared_dir();
  const Scenario sc = load(dir, toml);
  const auto t0 = std::chrono::steady_clock::now();
  const Outcome par = run_scenario(sc, dir + "/parallel", false);
  const double t_par = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto start = gather(par.start);
  const auto end = gather(par.end);
  Comparison c;
  if (rank() == 0) {
    const Outcome ser = run_scenario(sc, dir + "/serial", true);
    c = compare(sc, start, end, ser, par);
    EXPECT_LE(c.x, tol.state) << "positions";
    EXPECT_LE(c.v, tol.state) << "velocities";
    EXPECT_LE(c.a, tol.state) << "accelerations";
    EXPECT_LE(c.thermo, tol.thermo) << "kinetic, potential or virial";
    const auto* t = ::testing::UnitTest::GetInstance()->current_test_info();
    std::printf(
        "[ measured ] %s on %d ranks (%.2f s): %zu particles, %zu changed rank; largest "
        "differences to 1 rank: x %.2e v %.2e a %.2e  K/U/W %.2e\n",
        t->name(), ranks(), t_par, end.size(), c.moved, c.x, c.v, c.a, c.thermo);
    std::fflush(stdout);
  }
  double moved = double(c.moved);
  comm()->max(&moved, 1);
  c.moved = std::size_t(moved);
  return c;
}

// Every rank's Simulation constructor must throw: rank 0 a pardyn::Error naming the problem, the
// other ranks the same or a QuietError (rank 0 reports it). Then every rank must still be in step.
void expect_refused(const std::string& toml, const std::string& says) {
  const std::string dir = shared_dir();
  const Scenario sc = load(dir, toml);
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  bool threw = false, quiet = false;
  std::string what;
  try {
    Simulation sim(sc, registry(), opt);
  } catch (const parallel::QuietError&) {
    threw = quiet = true;
  } catch (const Error& e) {
    threw = true;
    what = e.what();
  }
  EXPECT_TRUE(threw) << "rank " << rank() << ": the Simulation was made";
  if (rank() == 0) {
    EXPECT_FALSE(quiet) << "rank 0 must report the error";
  }
  if (!quiet) {
    EXPECT_NE(what.find(says), std::string::npos) << "rank " << rank() << ": " << what;
  }
  double in_step = 1;
  comm()->sum(&in_step, 1);  // every rank got here
  EXPECT_EQ(in_step, double(ranks()));
}

std::string weights_for(int k) {  // uneven, the first rank the lightest
  std::string s = "[1.0";
  for (int r = 1; r < k; ++r) s += r % 2 ? ", 3.0" : ", 2.0";
  return s + "]";
}

class Rank : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!comm()) GTEST_SKIP() << "not started by mpirun with several ranks";
  }
  // Every rank reports the test failed when any rank saw it fail.
  void TearDown() override {
    if (!comm()) return;
    double failed = HasFailure() ? 1.0 : 0.0;
    comm()->max(&failed, 1);
    if (failed > 0 && !HasFailure()) ADD_FAILURE() << "failed on another rank (see its output)";
  }
};

// --- Integrators and modifiers act on the run's quantities ---------------------------------------
// Every built-in integrator and modifier, on the all-pairs ring and on the domain decomposition:
// thermo.csv of the parallel run against one rank's, column by column. A thermostat that scaled
// the velocities by its own rank's kinetic energy drove the gas to twice its target temperature
// on 2 ranks; an adaptive integrator that judged its step by its own rank's error took other steps
// than its partners.
struct ThermoCsv {
  std::vector<std::string> head;
  std::vector<std::vector<double>> rows;
};

// The fields of one line of a CSV file (thermo.csv has no quoted fields).
std::vector<std::string> split_csv(const std::string& l) {
  std::vector<std::string> v;
  std::size_t at = 0;
  for (std::size_t c; (c = l.find(',', at)) != std::string::npos; at = c + 1)
    v.push_back(l.substr(at, c - at));
  v.push_back(l.substr(at));
  return v;
}

ThermoCsv read_thermo_csv(const std::string& path) {
  ThermoCsv t;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::string line;
  if (std::getline(in, line)) t.head = split_csv(line);
  while (std::getline(in, line)) {
    std::vector<double> row;
    for (const auto& f : split_csv(line)) row.push_back(std::strtod(f.c_str(), nullptr));
    t.rows.push_back(row);
  }
  return t;
}

// The largest difference between the two files' columns that a user reads, each relative to its
// column's largest magnitude (the energies' for the momenta, which hover near zero), and how many
// rows agree bit for bit.
struct ThermoDiff {
  double worst = 0;
  std::string where;
  std::size_t identical_rows = 0, rows = 0;
};

ThermoDiff compare_thermo(const ThermoCsv& par, const ThermoCsv& ser) {
  ThermoDiff d;
  EXPECT_EQ(par.head, ser.head) << "thermo.csv columns";
  EXPECT_EQ(par.rows.size(), ser.rows.size()) << "thermo.csv rows";
  if (par.head != ser.head || par.rows.size() != ser.rows.size()) {
    d.worst = INFINITY;
    return d;
  }
  d.rows = ser.rows.size();
  auto col = [&](const char* name) {
    const auto it = std::find(ser.head.begin(), ser.head.end(), name);
    return it == ser.head.end() ? std::size_t(-1) : std::size_t(it - ser.head.begin());
  };
  double energy = 0;
  for (const char* e : {"kinetic", "potential", "total"})
    if (col(e) != std::size_t(-1))
      for (const auto& r : ser.rows) energy = std::max(energy, std::fabs(r[col(e)]));
  for (std::size_t c = 0; c < ser.head.size(); ++c) {
    const std::string& name = ser.head[c];
    double scale = 0;
    for (const auto& r : ser.rows) scale = std::max(scale, std::fabs(r[c]));
    const bool momentum = name.size() == 2 && (name[0] == 'p' || name[0] == 'l');
    if (momentum || name == "com_drift") scale = std::max(scale, std::sqrt(energy));
    if (name == "relative_drift") scale = std::max(scale, 1e-6);
    if (!(scale > 0)) scale = 1;
    for (std::size_t k = 0; k < ser.rows.size(); ++k) {
      const double a = par.rows[k][c], b = ser.rows[k][c];
      const double r = (std::isnan(a) && std::isnan(b)) ? 0.0 : std::fabs(a - b) / scale;
      if (std::isnan(r) || r > d.worst) {
        d.worst = std::isnan(r) ? INFINITY : r;
        d.where = name + " at row " + std::to_string(k + 1);
      }
    }
  }
  for (std::size_t k = 0; k < ser.rows.size(); ++k) {
    bool same = true;
    for (std::size_t c = 0; c < ser.head.size(); ++c)
      same = same && std::memcmp(&par.rows[k][c], &ser.rows[k][c], sizeof(double)) == 0;
    if (same) ++d.identical_rows;
  }
  return d;
}

// A 2D Lennard-Jones gas (lj_2d_periodic_ring.toml) with `scheme`, the integrator `integrator`
// (its [integrator] lines), a modifier block and thermo every 5 steps. balance = "equal": with the
// default "speed" a loaded machine can make one rank's first evaluation 10 % slower than the
// other's (and over 1 ms), and the ring's blocks are then resized and the forces evaluated once
// more, which thermo.csv's force_evaluations column counts (seen once: 42 against 41 at row 1).
std::string lj_2d(const char* scheme, const std::string& integrator, const std::string& modifier) {
  std::string t = scenario("lj_2d_periodic_ring");
  t.replace(t.find("backend = \"cpu\""), 15, "backend = \"cpu\"\nbalance = \"equal\"");
  t.replace(t.find("scheme = \"all_pairs\""), 20, std::string("scheme = ") + scheme);
  t.replace(t.find("[integrator]"), std::string::npos, "[integrator]\n" + integrator + "\n");
  return t + modifier + "\n[[output]]\ntype = \"thermo\"\ninterval = 5\n";
}

// Runs `toml` on every rank and on rank 0 alone; rank 0 compares the thermo.csv files.
void thermo_matches_one_rank(const std::string& label, const std::string& toml, double tol) {
  const std::string dir = shared_dir(label);
  const Scenario sc = load(dir, toml);
  for (bool serial : {false, true}) {
    if (serial && rank() != 0) break;
    RunOptions opt;
    opt.quiet = true;
    opt.serial = serial;
    opt.output = dir + (serial ? "/serial" : "/parallel");
    Simulation sim(sc, registry(), opt);
    sim.run();
  }
  if (rank() != 0) return;
  const ThermoDiff d = compare_thermo(read_thermo_csv(dir + "/parallel/thermo.csv"),
                                      read_thermo_csv(dir + "/serial/thermo.csv"));
  EXPECT_LE(d.worst, tol) << label << ": thermo.csv differs from one rank's most in " << d.where;
  std::printf(
      "[ measured ] %s on %d ranks: thermo.csv %zu of %zu rows identical to 1 rank's, "
      "largest difference %.2e (%s)\n",
      label.c_str(), ranks(), d.identical_rows, d.rows, d.worst,
      d.where.empty() ? "none" : d.where.c_str());
  std::fflush(stdout);
}

const char* const kVelocityRescale =
    "[[modifier]]\ntype = \"velocity_rescale\"\ntemperature = 0.5\ntau = 0.05\n";

// Measured (CPU, double, 40 steps, 2 and 3 ranks): thermo.csv agrees with one rank's to 5e-15
// (the force and energy sums in another order; no row is identical bit for bit), on the ring and
// on the domain decomposition alike. Before the thermostats took the run's kinetic energy, the
// thermostatted runs on 2 ranks differed in their first rows by O(1).
TEST_F(Rank, EveryIntegratorWithAThermostatOnTheRingMatchesOneRanksThermo) {
  for (const char* integ : {"leapfrog", "yoshida4", "symplectic_euler", "euler", "rk4", "ab5"})
    thermo_matches_one_rank(
        integ,
        lj_2d("\"all_pairs\"", std::string("type = \"") + integ + "\"\ndt = 0.005",
              kVelocityRescale),
        1e-13);
  // dopri5's step comes from its error estimate, a difference of two solutions that agree to
  // rtol = 1e-6: the force sums' rounding (1e-16) reaches the estimate as 1e-10 and its step,
  // which goes as the estimate to the power -1/5, as 2e-11.
  thermo_matches_one_rank(
      "dopri5",
      lj_2d("\"all_pairs\"", "type = \"dopri5\"\ndt = 0.005\nrtol = 1e-6\natol = 1e-8",
            kVelocityRescale),
      1e-10);
}

TEST_F(Rank, EveryIntegratorWithAThermostatOnTheDomainMatchesOneRanksThermo) {
  for (const char* integ : {"leapfrog", "yoshida4", "symplectic_euler", "euler"})
    thermo_matches_one_rank(
        integ,
        lj_2d("{ type = \"cell_list\", skin = 0.3 }",
              std::string("type = \"") + integ + "\"\ndt = 0.005", kVelocityRescale),
        1e-13);
}

TEST_F(Rank, EveryModifierAndTheStepControlMatchOneRanksThermo) {
  const std::pair<const char*, const char*> modifiers[] = {
      {"velocity_rescale", kVelocityRescale},
      {"berendsen", "[[modifier]]\ntype = \"berendsen\"\ntemperature = 0.5\ntau = 0.05\n"},
      {"langevin", "[[modifier]]\ntype = \"langevin\"\ntemperature = 0.5\ntau = 0.05\n"},
      {"dt_control", kVelocityRescale}};
  for (const auto& [name, block] : modifiers)
    for (const bool ring : {true, false}) {
      const std::string integ =
          std::string("type = \"leapfrog\"\ndt = 0.005") +
          (std::string(name) == "dt_control" ? "\ndt_control = \"acceleration\"\ndt_eta = 0.05"
                                             : "");
      thermo_matches_one_rank(
          std::string(name) + (ring ? "-ring" : "-domain"),
          lj_2d(ring ? "\"all_pairs\"" : "{ type = \"cell_list\", skin = 0.3 }", integ, block),
          1e-13);
    }
}

// --- The all-pairs ring ----------------------------------------------------------------------

TEST_F(Rank, RingGravityPlummerMatchesOneRank) {
  parallel_matches_serial(scenario("plummer_ring"), kRing);
}

TEST_F(Rank, RingWithUnevenRankWeightsMatchesOneRank) {
  std::string toml = scenario("plummer_ring");
  toml.insert(toml.find("threads"), "rank_weights = " + weights_for(ranks()) + "\n");
  parallel_matches_serial(toml, kRing);
}

// balance = "speed" (the default): rank 1 sleeps in every force call, so the first evaluation
// finds it slow and the blocks are resized (particles change rank); the result is the same.
std::string slow_ring(const char* balance) {
  std::string t = scenario("slow_ring");
  t.replace(t.find("balance = \"speed\""), 17, std::string("balance = \"") + balance + "\"");
  return t;
}

TEST_F(Rank, RingBalancedBySpeedMovesParticlesAndMatchesOneRank) {
  const Comparison c = parallel_matches_serial(slow_ring("speed"), kRing);
  EXPECT_GT(c.moved, 0u) << "the slow rank's block was not made smaller";
}

TEST_F(Rank, RingBalanceEqualKeepsTheBlocks) {
  const Comparison c = parallel_matches_serial(slow_ring("equal"), kRing);
  EXPECT_EQ(c.moved, 0u);
}

TEST_F(Rank, RingPeriodic2DLennardJonesMatchesOneRank) {
  parallel_matches_serial(scenario("lj_2d_periodic_ring"), kRing);
}

// --- Checkpoints -----------------------------------------------------------------------------------
// A parallel run that dies after a checkpoint (here: ends at step 47, its last checkpoint lost as
// by kill -9) and is resumed from the one of step 40 on the same number of ranks ends bit for bit
// where the straight parallel run ends, with the same thermo.csv. `body`: a scenario whose
// [simulation] has "steps = 40".
void parallel_resume_is_exact(const std::string& body) {
  auto with_steps = [&](int steps) {
    std::string t = body;
    t.replace(t.find("steps = 40"), 10, "steps = " + std::to_string(steps));
    return t +
           "\n[[output]]\ntype = \"thermo\"\ninterval = 5\n"
           "[[output]]\ntype = \"msd\"\ninterval = 5\n"
           "[[output]]\ntype = \"checkpoint\"\ninterval = 10\nkeep = 10\n";
  };
  const std::string straight_dir = shared_dir("straight"), dead_dir = shared_dir("dead");
  const Outcome straight =
      run_scenario(load(straight_dir, with_steps(60)), straight_dir + "/out", false);
  run_scenario(load(dead_dir, with_steps(47)), dead_dir + "/out", false);
  if (rank() == 0) fs::remove(dead_dir + "/out/checkpoints/checkpoint-000000000047.h5");
  if (rank() == 0) std::ofstream(dead_dir + "/longer.toml") << with_steps(60);
  barrier();
  Resume r = prepare_resume(dead_dir + "/out", dead_dir + "/longer.toml", {}, registry(), false);
  ASSERT_EQ(r.data->step, 40u);
  RunOptions opt;
  opt.quiet = true;
  opt.output = r.output_dir;
  opt.resume = r.data;
  opt.resume_file = r.file;
  std::vector<Rec> resumed;
  {
    Simulation sim(r.scenario, registry(), opt);
    sim.run();
    sim.measure();  // as run_scenario() does after the straight run (it may migrate particles)
    resumed = records(sim);
  }
  const auto a = gather(straight.end), b = gather(resumed);
  if (rank() != 0) return;
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].first, b[k].first) << "particle " << k << " is on another rank";
    ASSERT_EQ(a[k].second.id, b[k].second.id) << "particle order differs at " << k;
    for (int d = 0; d < 3; ++d) {
      ASSERT_EQ(a[k].second.x[d], b[k].second.x[d]) << "id " << a[k].second.id;
      ASSERT_EQ(a[k].second.v[d], b[k].second.v[d]) << "id " << a[k].second.id;
    }
  }
  auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(slurp(straight_dir + "/out/thermo.csv"), slurp(dead_dir + "/out/thermo.csv"));
  // msd: the resumed run measures from the reference rank 0 read and sent to the others.
  EXPECT_EQ(slurp(straight_dir + "/out/msd.csv"), slurp(dead_dir + "/out/msd.csv"));
  EXPECT_GT(slurp(dead_dir + "/out/msd.csv").size(), 100u) << "msd.csv has its rows";
}

TEST_F(Rank, RingResumedFromACheckpointEndsExactly) {
  std::string t = scenario("plummer_ring");
  t.replace(t.find("backend = \"cpu\""), 15, "backend = \"cpu\"\nbalance = \"equal\"");
  parallel_resume_is_exact(t);
}

TEST_F(Rank, DomainResumedFromACheckpointEndsExactly) {
  parallel_resume_is_exact(scenario("lj_3d_langevin_domain"));
}

// --- The domain decomposition of cell_list -------------------------------------------------------

TEST_F(Rank, DomainLennardJones3DPeriodicMigratesAndMatchesOneRank) {
  // tests/mpi/lj_periodic.toml without outputs, longer: particles cross the sub-box faces, also
  // the periodic ones between two choices of ghosts (step 119 of this run on 2 and 3 ranks).
  const Comparison c = parallel_matches_serial(scenario("lj_3d_domain"), kDomain);
  EXPECT_GT(c.moved, 0u) << "no particle migrated: the test does not exercise migration";
}

std::string walled_2d(const char* boundary) {
  std::string t = scenario("walled_2d_field");
  t.replace(t.find("boundary = \"wall\""), 17, std::string("boundary = ") + boundary);
  return t;
}

TEST_F(Rank, DomainWalledBox2DWithFieldMatchesOneRank) {
  const Comparison c = parallel_matches_serial(walled_2d("\"wall\""), kDomain);
  EXPECT_GT(c.moved, 0u) << "no particle migrated";
}

TEST_F(Rank, DomainPeriodicAndWalledBox2DWithFieldMatchesOneRank) {
  const Comparison c = parallel_matches_serial(walled_2d("[\"periodic\", \"wall\"]"), kDomain);
  EXPECT_GT(c.moved, 0u) << "no particle migrated";
}

// msd on several ranks: each rank sums its own particles (which migrate between sub-boxes here)
// against the reference of all of them; msd.csv as one rank's, to the domain's accuracy.
TEST_F(Rank, MsdOnSeveralRanksMatchesOneRank) {
  std::string toml = scenario("lj_3d_domain");
  toml.replace(toml.find("steps = 150"), 11, "steps = 80");
  toml += "\n[[output]]\ntype = \"msd\"\ninterval = 10\n";
  toml = on_test_backend(toml);
  const std::string dir = shared_dir();
  const Scenario sc = load(dir, toml);
  run_scenario(sc, dir + "/parallel", false);
  if (rank() != 0) return;
  run_scenario(sc, dir + "/serial", true);
  auto rows = [](const std::string& path) {
    std::ifstream in(path);
    std::vector<std::vector<double>> out;
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::vector<double> v;
      std::stringstream ss(line);
      std::string cell;
      while (std::getline(ss, cell, ',')) v.push_back(std::stod(cell));
      out.push_back(v);
    }
    return out;
  };
  const auto par = rows(dir + "/parallel/msd.csv"), ser = rows(dir + "/serial/msd.csv");
  ASSERT_EQ(par.size(), ser.size()) << "rows of msd.csv";
  ASSERT_GE(ser.size(), 8u);
  double worst = 0;
  for (std::size_t r = 0; r < ser.size(); ++r) {
    ASSERT_EQ(par[r].size(), ser[r].size());
    for (std::size_t c = 0; c < ser[r].size(); ++c)
      worst = std::max(worst,
                       std::fabs(par[r][c] - ser[r][c]) / std::max(std::fabs(ser[r][c]), 1e-300));
  }
  EXPECT_GT(ser.back()[2], 0.01) << "the particles moved: the test would show nothing";
  EXPECT_LE(worst, 1e-9) << "msd.csv against one rank's";
  std::printf(
      "[ measured ] msd on %d ranks: %zu rows, final msd %.6g, largest relative "
      "difference to one rank %.2e\n",
      ranks(), ser.size(), ser.back()[2], worst);
  std::fflush(stdout);
}

// A cell_list term and an all_pairs term together: the domain decomposition and the ring.
TEST_F(Rank, DomainAndRingTogetherMatchOneRank) {
  parallel_matches_serial(scenario("lj_gravity_domain_and_ring"), kDomain);
}

// --- Generation: each rank makes its part ----------------------------------------------------------
// A run on all ranks makes the same particles by id as one rank (opt.serial), bit for bit:
// positions, velocities, masses and types, ids 0 .. N-1 once each. And no rank's host held more
// particles than it should while they were made: with a generator that makes ranges, its own block
// of ids alone (ring), or at most twice the larger of that and its final share (the exchange by
// position); a block made whole (a file, a generator without ranges) is held whole.

struct Gen {
  std::int64_t id;
  double x[3], v[3], mass;
  std::int32_t type;
};

std::vector<Gen> generated(Simulation& sim) {
  HostParticles hp(sim.run_info().dim);
  sim.store().download(hp, ParticleStore::kPosition | ParticleStore::kVelocity |
                               ParticleStore::kMass | ParticleStore::kType | ParticleStore::kId);
  std::vector<Gen> out(hp.size());
  for (std::size_t i = 0; i < hp.size(); ++i) {
    Gen g{};
    g.id = hp.id[i];
    for (int d = 0; d < hp.dim; ++d) {
      g.x[d] = hp.x[d][i];
      g.v[d] = hp.v[d][i];
    }
    g.mass = hp.mass[i];
    g.type = hp.type[i];
    out[i] = g;
  }
  return out;
}

// What this rank's host may hold at most while the particles are made (see above); Blocks: several
// blocks, whose parts are copied one by one into the rank's block of ids (allocated once).
enum class Holds { OwnBlock, Blocks, Exchanged, Whole };

void generation_matches_serial(const std::string& toml, Holds holds,
                               const std::string& csv = std::string()) {
  const std::string dir = shared_dir();
  if (rank() == 0 && !csv.empty()) std::ofstream(dir + "/particles.csv") << csv;
  const Scenario sc = load(dir, toml);
  RunOptions opt;
  opt.quiet = true;
  opt.check_only = true;
  opt.output = dir + "/parallel";
  Simulation par(sc, registry(), opt);
  const Simulation::SetupStats st = par.setup_stats();
  switch (holds) {
    case Holds::OwnBlock:
      EXPECT_EQ(st.whole, 0u);
      EXPECT_EQ(st.share, st.generated);
      EXPECT_LE(st.peak, st.generated) << "rank " << rank();
      break;
    case Holds::Blocks:
      EXPECT_EQ(st.whole, 0u);
      EXPECT_LE(st.peak, 2 * st.generated) << "rank " << rank();
      break;
    case Holds::Exchanged:
      EXPECT_EQ(st.whole, 0u);
      EXPECT_LE(st.peak, 2 * std::max(st.generated, st.share)) << "rank " << rank();
      EXPECT_GT(st.sent + st.received, 0u) << "rank " << rank() << ": nothing was exchanged";
      break;
    case Holds::Whole: EXPECT_GT(st.whole, 0u); break;
  }
  const auto all = gather(generated(par));
  double counts[2] = {double(st.generated), double(st.peak)};
  comm()->max(counts, 2);
  if (rank() != 0) return;
  RunOptions one = opt;
  one.serial = true;
  one.output = dir + "/serial";
  Simulation ser(sc, registry(), one);
  const std::vector<Gen> ref = generated(ser);
  std::map<std::int64_t, Gen> by_id;
  for (const auto& [r, g] : all)
    EXPECT_TRUE(by_id.emplace(g.id, g).second) << "id " << g.id << " twice";
  ASSERT_EQ(by_id.size(), ref.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const Gen& s = ref[i];
    EXPECT_EQ(s.id, std::int64_t(i)) << "the serial run's ids are 0 .. N-1 in order";
    auto it = by_id.find(s.id);
    ASSERT_NE(it, by_id.end()) << "id " << s.id << " missing";
    const Gen& p = it->second;
    bool same = p.mass == s.mass && p.type == s.type;
    for (int d = 0; d < sc.dim; ++d) same = same && p.x[d] == s.x[d] && p.v[d] == s.v[d];
    if (!same && differ++ < 3)
      ADD_FAILURE() << "id " << s.id << ": x " << p.x[0] << " vs " << s.x[0] << ", v " << p.v[0]
                    << " vs " << s.v[0] << ", mass " << p.mass << " vs " << s.mass << ", type "
                    << p.type << " vs " << s.type;
  }
  EXPECT_EQ(differ, 0u) << "particles that differ from one rank's";
  const auto* t = ::testing::UnitTest::GetInstance()->current_test_info();
  std::printf(
      "[ measured ] %s on %d ranks: %zu particles, at most %.0f generated and %.0f held "
      "by a rank\n",
      t->name(), ranks(), ref.size(), counts[0], counts[1]);
  std::fflush(stdout);
}

TEST_F(Rank, GenerateUniformRingMatchesOneRankAndHoldsItsBlock) {
  generation_matches_serial(scenario("gen_uniform_ring"), Holds::OwnBlock);
}

TEST_F(Rank, GenerateLatticeDomainMatchesOneRank) {
  generation_matches_serial(scenario("gen_lattice_domain"), Holds::Exchanged);
}

TEST_F(Rank, GeneratePlummerRingWithRankWeightsMatchesOneRank) {
  std::string toml = scenario("gen_plummer_ring");
  toml.insert(toml.find("threads"), "rank_weights = " + weights_for(ranks()) + "\n");
  generation_matches_serial(toml, Holds::OwnBlock);
}

TEST_F(Rank, GenerateTwoGalaxiesRingMatchesOneRank) {
  generation_matches_serial(scenario("gen_galaxy_blocks_ring"), Holds::Blocks);
}

TEST_F(Rank, GenerateGalaxy2DDomainMatchesOneRank) {
  generation_matches_serial(scenario("gen_galaxy_2d_domain"), Holds::Exchanged);
}

TEST_F(Rank, GenerateFromFileDomainMatchesOneRank) {
  std::string csv = "x,y,z,vx,vy,vz,mass,type\n";
  std::mt19937_64 g(9);
  for (int i = 0; i < 6000; ++i) {
    char line[200];
    std::snprintf(line, sizeof line, "%.17g,%.17g,%.17g,0.1,0,0,%g,%d\n", 15.0 * uniform01(g),
                  15.0 * uniform01(g), 15.0 * uniform01(g), 1.0 + (i % 3), i % 2);
    csv += line;
  }
  generation_matches_serial(scenario("gen_file_domain"), Holds::Whole, csv);
}

TEST_F(Rank, GenerateUniformWithMinimumSpacingRingMatchesOneRankAndHoldsItsBlock) {
  generation_matches_serial(scenario("gen_min_spacing_ring"), Holds::OwnBlock);
}

TEST_F(Rank, GenerateUniformWithMinimumSpacingDomainMatchesOneRank) {
  generation_matches_serial(scenario("gen_min_spacing_domain"), Holds::Exchanged);
}

TEST_F(Rank, GenerateWithAGeneratorWithoutRangesMatchesOneRank) {
  generation_matches_serial(scenario("gen_old_api_ring"), Holds::Whole);
}

// --- What a parallel run refuses -------------------------------------------------------------------

// --- The tree on several ranks (locally essential trees) ----------------------------------------

// RMS over the particles of |a - a_exact|, relative to the RMS of |a_exact|, matched by id.
double force_error(const std::vector<Rec>& got, const std::vector<Rec>& exact, int dim) {
  std::map<std::int64_t, const Rec*> by_id;
  for (const Rec& r : exact) by_id[r.id] = &r;
  double e2 = 0, a2 = 0;
  std::size_t matched = 0;
  for (const Rec& r : got) {
    const auto it = by_id.find(r.id);
    if (it == by_id.end()) continue;
    ++matched;
    for (int d = 0; d < dim; ++d) {
      const double x = it->second->a[d];
      e2 += (r.a[d] - x) * (r.a[d] - x);
      a2 += x * x;
    }
  }
  EXPECT_EQ(matched, exact.size()) << "particles of the exact run found in the tree run";
  return std::sqrt(e2 / std::max(a2, 1e-300));
}

// The tree scenario on every rank, then on rank 0 alone, and the same particles with all_pairs (the
// exact forces): the parallel tree's force error must be the one-rank tree's (each rank's walk
// sees its own particles and what the others' trees sent, accepted with the same opening test),
// and the short run must go on as the serial one does. PARDYN_MPI_TEST_BACKEND=cuda runs it on
// the GPU (the device machine).
// The particles a scenario's blocks make (their counts).
std::size_t sc_count(const Scenario& sc) {
  std::size_t n = 0;
  for (const auto& b : sc.particles) n += std::size_t(b.params.integer("count"));
  return n;
}

// Forces at the start (measure() evaluates them) and the thermo after the run.
Outcome forces_then_run(const Scenario& sc, const std::string& out, bool serial) {
  RunOptions opt;
  opt.quiet = true;
  opt.output = out;
  opt.serial = serial;
  Simulation sim(sc, registry(), opt);
  Outcome o;
  o.thermo_start = sim.measure();
  o.start = records(sim);
  // The exchange must have sent fewer sources than the other ranks' particles (else every remote
  // particle came whole and the test would show nothing of the pseudo-particles).
  if (!serial) {
    double remote = double(sc_count(sc)) - double(o.start.size());
    EXPECT_LT(double(sim.tree_sources_received()), remote)
        << "rank " << rank() << " received every particle of the others";
    std::printf("[ measured ] rank %d: %zu owned, %zu sources received of %.0f remote particles\n",
                rank(), o.start.size(), sim.tree_sources_received(), remote);
  }
  sim.run();
  o.thermo_end = sim.measure();
  return o;
}

void tree_matches_one_rank_toml(const std::string& toml);
void tree_matches_one_rank(const std::string& name) {
  tree_matches_one_rank_toml(on_test_backend(scenario(name)));
}
void tree_matches_one_rank_toml(const std::string& toml) {
  const std::string dir = shared_dir();
  const Scenario sc = load(dir, toml);
  const Outcome par = forces_then_run(sc, dir + "/parallel", false);
  const auto start = gather(par.start);
  if (rank() != 0) return;
  std::string exact_toml = toml;
  const std::size_t at = exact_toml.find("scheme = {");
  exact_toml.replace(at, exact_toml.find('}', at) + 1 - at, "scheme = \"all_pairs\"");
  std::ofstream(dir + "/exact.toml") << exact_toml;
  const Scenario exact_sc = load_scenario(dir + "/exact.toml", {}, registry());
  const Outcome ser = forces_then_run(sc, dir + "/serial", true);
  const Outcome exact = forces_then_run(exact_sc, dir + "/exact", true);
  std::vector<Rec> mine;
  std::map<int, std::size_t> per_rank;
  for (const auto& [r, rec] : start) mine.push_back(rec), ++per_rank[r];
  const double e_par = force_error(mine, exact.start, sc.dim);
  const double e_ser = force_error(ser.start, exact.start, sc.dim);
  EXPECT_EQ(per_rank.size(), std::size_t(ranks())) << "every rank holds particles";
  EXPECT_LE(e_par, 1.25 * e_ser + 1e-12)
      << "the tree's force error on " << ranks() << " ranks against one rank's";
  EXPECT_GT(e_ser, 0.0) << "the tree is exact here: the test would show nothing";
  // A few steps later the energies still agree to the tree's accuracy.
  const double scale = std::max(std::fabs(ser.thermo_end.r.potential), 1e-300);
  const double du = std::fabs(par.thermo_end.r.potential - ser.thermo_end.r.potential) / scale;
  EXPECT_LE(du, 10 * e_ser) << "potential energy after the steps";
  const auto* t = ::testing::UnitTest::GetInstance()->current_test_info();
  std::printf(
      "[ measured ] %s on %d ranks: RMS force error against all_pairs %.3e (one rank's tree %.3e); "
      "potential energy after %llu steps differs by %.2e\n",
      t->name(), ranks(), e_par, e_ser, (unsigned long long)sc.steps, du);
  std::fflush(stdout);
}

TEST_F(Rank, TreeGravity3DHasOneRanksAccuracy) { tree_matches_one_rank("tree_gravity_3d"); }
TEST_F(Rank, TreeLog2DMonopolesHasOneRanksAccuracy) { tree_matches_one_rank("tree_log_2d"); }
TEST_F(Rank, TreeSoftGas2DShortRangePartHasOneRanksAccuracy) {
  tree_matches_one_rank("tree_soft_gas_2d");
}

std::string slurp_file(const std::string& path);

// The load balance of a tree term: rank 1's walks take longer (slow_gravity sleeps there), so
// after the first measurement the Morton curve is re-dealt and rank 1 holds fewer particles than
// an equal share; every particle is still held by exactly one rank, and log.txt shows the
// imbalance.
TEST_F(Rank, TreeReDealsTheMortonCurveByMeasuredWalkTimes) {
  std::string toml = scenario("tree_gravity_3d");
  // Rank 1 sleeps 0.5 s in every evaluation, ten times a walk of these 4000 particles.
  toml.replace(toml.find("type = \"gravity\""), 16,
               "type = \"slow_gravity\"\nslow_rank = 1\ndelay = 0.5");
  toml.replace(toml.find("steps = 3"), 9, "steps = 4\nbalance_interval = 2");
  toml.replace(toml.find("count = 20000"), 13, "count = 4000");
  const std::string dir = shared_dir();
  const Scenario sc = load(dir, toml);
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  Simulation sim(sc, registry(), opt);
  sim.run();
  const auto ids = gather(records(sim));
  double held[2] = {double(sim.store().size()), 0};
  if (rank() == 1) held[1] = held[0];
  comm()->max(&held[1], 1);
  if (rank() == 0) {
    std::set<std::int64_t> seen;
    for (const auto& [r, rec] : ids) EXPECT_TRUE(seen.insert(rec.id).second) << "id twice";
    EXPECT_EQ(seen.size(), 4000u) << "particles lost or made";
    const double share = 4000.0 / ranks();
    EXPECT_LT(held[1], 0.8 * share) << "rank 1, the slow one, kept its share";
    const std::string log = slurp_file(dir + "/out/log.txt");
    EXPECT_NE(log.find("the Morton curve re-dealt by speed"), std::string::npos) << log;
    std::printf("[ measured ] %d ranks: the slow rank 1 holds %.0f of an equal share of %.0f\n",
                ranks(), held[1], share);
  }
}

// --- The cell list's far zones on several ranks ----------------------------------------------------

// The far zones' pyramid levels of term 0 after one evaluation: {first shared level, levels}
// (the shared level: CellList::shared_level; `levels` when nothing is shared).
std::pair<int, int> far_levels(const Scenario& sc, const std::string& out) {
  RunOptions opt;
  opt.quiet = true;
  opt.output = out;
  Simulation sim(sc, registry(), opt);
  sim.measure();
  const auto nb = sim.scheme(0).neighbourhood();
  EXPECT_EQ(nb.kind, NeighbourhoodKind::CellList);
  const auto* cl = static_cast<const CellList*>(nb.data);
  EXPECT_TRUE(cl && cl->far) << "far zones";
  return cl ? std::make_pair(cl->shared_level, cl->levels) : std::make_pair(-1, -1);
}

// The scenario's far zones on every rank against rank 0 alone: the same forces up to the order of
// the sums (the ranks' grid is the serial one; the levels below the shared one come from the
// ghosts, the shared ones from the ranks' sums). `shared_cells` sets PARDYN_FAR_SHARED_CELLS (how
// many cells the first shared level should have; 0: the default), which moves that level.
std::pair<int, int> far_zones_match_one_rank(const std::string& name, int shared_cells,
                                             bool migrates = true) {
  std::string toml = on_test_backend(scenario(name));
  if (shared_cells > 0) setenv("PARDYN_FAR_SHARED_CELLS", std::to_string(shared_cells).c_str(), 1);
  const Comparison c = parallel_matches_serial(toml, kDomain);
  if (migrates) EXPECT_GT(c.moved, 0u) << "no particle migrated";
  const auto levels = far_levels(load(shared_dir("levels"), toml), shared_dir("levels-out"));
  unsetenv("PARDYN_FAR_SHARED_CELLS");
  if (rank() == 0) {
    std::printf("[ measured ] far zones on %d ranks: levels %d, the ranks share levels %d..%d\n",
                ranks(), levels.second, levels.first, levels.second - 1);
    std::fflush(stdout);
  }
  EXPECT_LT(levels.first, levels.second) << "no pyramid level is summed over the ranks";
  return levels;
}

TEST_F(Rank, CellListFarZonesSoftGas2DMatchOneRank) {
  // 20,000 particles: the whole pyramid (2,500 cells at level 0) is cheaper to sum than to ghost.
  const auto levels = far_zones_match_one_rank("far_soft_gas_2d", 0);
  EXPECT_EQ(levels.first, 0);
}

TEST_F(Rank, CellListFarZonesSoftGas2DFromGhostsBelowTheSharedLevelMatchOneRank) {
  // About 64 shared cells: the levels below come from each rank's particles and ghosts. These
  // reach 48 (the margin 4.8), so that no particle moves far enough in the 60 steps for the
  // ghosts to be chosen again, and none migrates (the test above migrates).
  const auto levels = far_zones_match_one_rank("far_soft_gas_2d", 64, false);
  EXPECT_GE(levels.first, 2) << "the levels below the shared one are not exercised";
}

TEST_F(Rank, CellListFarZonesGravity3DMatchOneRank) {
  // Ghosts 9.6 wide with a margin of 0.96 (none is chosen again, none migrates in these steps).
  const auto levels = far_zones_match_one_rank("far_gravity_3d", 8, false);
  EXPECT_GE(levels.first, 1) << "the levels below the shared one are not exercised";
}

TEST_F(Rank, CellListFarZonesWithoutWallsAreRefusedOnEveryRank) {
  expect_refused(scenario("gravity_cell_list"), "cell_list far zones on several ranks need walled");
}

// lj_small.toml with a line added to [simulation], another integrator, and text at the end.
std::string lj_small(const char* simulation_extra, const char* integrator, const char* tail) {
  std::string t = scenario("lj_small");
  t.insert(t.find("[box]"), std::string(simulation_extra) + "\n");
  t.replace(t.find("type = \"leapfrog\""), 17, std::string("type = \"") + integrator + "\"");
  return t + tail + "\n";
}

TEST_F(Rank, PerParticleStateIntegratorWithCellListIsRefusedOnEveryRank) {
  expect_refused(lj_small("", "rk4", ""), "keeps per-particle state between force evaluations");
}

TEST_F(Rank, WrongNumberOfRankWeightsIsRefusedOnEveryRank) {
  const std::string w = "rank_weights = " + weights_for(ranks() + 1);
  expect_refused(lj_small(w.c_str(), "leapfrog", ""), "give one weight per rank");
}

TEST_F(Rank, BoxTooSmallToSplitIsRefusedOnEveryRank) {
  expect_refused(scenario("lj_box_too_small"), "cannot split the box into");
}

// --- The clusters analysis on several ranks ---------------------------------------------------
// A scenario with a clusters output on every rank, then on rank 0 alone: the analysis' thermo
// columns (counts, and counts over the particle count: exactly equal), clusters.csv row for row,
// and the final partition of the particles into clusters, matched by particle id: the same
// clusters (of min_size; the same gas particles, -1), whose ids may differ only where clusters
// have equal sizes. Clusters with particles on several ranks must be among them, or the test
// would show nothing of the join.

struct Labelled {
  std::int64_t id;
  std::int32_t cluster;
};

// This rank's particles with their label "cluster" (the last analysis').
std::vector<Labelled> cluster_labels(Simulation& sim) {
  HostParticles hp(sim.run_info().dim);
  sim.store().download(hp, ParticleStore::kId | ParticleStore::kLabels);
  const std::vector<std::int32_t>* labels = nullptr;
  for (const auto& [name, values] : hp.labels)
    if (name == "cluster") labels = &values;
  EXPECT_TRUE(labels) << "rank " << rank() << ": the store has no label \"cluster\"";
  std::vector<Labelled> out(hp.id.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = Labelled{hp.id[i], labels && i < labels->size() ? (*labels)[i] : -2};
  return out;
}

// The columns of the analysis in thermo.csv, row by row, as written (step first).
std::vector<std::string> cluster_columns(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> head = split_csv(line);
  std::vector<std::size_t> cols{0};
  for (const char* name : {"n_clusters", "largest_cluster_fraction", "clustered_fraction"}) {
    const auto it = std::find(head.begin(), head.end(), name);
    EXPECT_NE(it, head.end()) << path << " has no column " << name;
    if (it != head.end()) cols.push_back(std::size_t(it - head.begin()));
  }
  std::vector<std::string> rows;
  while (std::getline(in, line)) {
    const std::vector<std::string> v = split_csv(line);
    std::string row;
    for (std::size_t c : cols) row += (c < v.size() ? v[c] : "?") + ",";
    rows.push_back(row);
  }
  return rows;
}

std::string slurp_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<Labelled> run_clusters(const Scenario& sc, const std::string& out, bool serial) {
  RunOptions opt;
  opt.quiet = true;
  opt.output = out;
  opt.serial = serial;
  Simulation sim(sc, registry(), opt);
  sim.run();
  return cluster_labels(sim);
}

// Rank 0: the partition of the parallel run (with the rank of each particle) against the serial
// one. Returns the clusters of the parallel run and how many of them span several ranks.
std::pair<std::size_t, std::size_t> compare_partitions(
    const std::vector<std::pair<int, Labelled>>& par, const std::vector<Labelled>& ser) {
  EXPECT_EQ(par.size(), ser.size()) << "particle count";
  std::map<std::int64_t, std::int32_t> serial;
  for (const Labelled& l : ser) serial[l.id] = l.cluster;
  std::map<std::int32_t, std::int32_t> to_serial, to_parallel;
  std::map<std::int32_t, std::set<int>> ranks_of;
  std::size_t differ = 0;
  for (const auto& [r, l] : par) {
    const auto it = serial.find(l.id);
    if (it == serial.end()) {
      if (differ++ < 5) ADD_FAILURE() << "id " << l.id << " is not in the serial run";
      continue;
    }
    if (l.cluster >= 0) ranks_of[l.cluster].insert(r);
    const bool gas = l.cluster < 0 || it->second < 0;
    const bool same =
        gas ? l.cluster == -1 && it->second == -1
            : to_serial.emplace(l.cluster, it->second).first->second == it->second &&
                  to_parallel.emplace(it->second, l.cluster).first->second == l.cluster;
    if (!same && differ++ < 5)
      ADD_FAILURE() << "id " << l.id << " (rank " << r << "): cluster " << l.cluster
                    << " in the parallel run, " << it->second << " in the one-rank run, which "
                    << "do not hold the same particles";
  }
  EXPECT_EQ(differ, 0u) << "particles whose cluster differs from the one-rank run's";
  std::size_t crossing = 0;
  for (const auto& [c, rs] : ranks_of) crossing += rs.size() > 1;
  return {ranks_of.size(), crossing};
}

// PARDYN_MPI_TEST_BACKEND=cuda runs them on the GPU (both runs).
void clusters_match_one_rank(std::string toml) {
  toml = on_test_backend(toml);
  const std::string dir = shared_dir();
  const Scenario sc = load(dir, toml);
  const std::vector<Labelled> mine = run_clusters(sc, dir + "/parallel", false);
  const std::vector<std::pair<int, Labelled>> par = gather(mine);
  if (rank() != 0) return;
  const std::vector<Labelled> ser = run_clusters(sc, dir + "/serial", true);
  const auto [clusters, crossing] = compare_partitions(par, ser);
  const auto cols_par = cluster_columns(dir + "/parallel/thermo.csv");
  const auto cols_ser = cluster_columns(dir + "/serial/thermo.csv");
  EXPECT_FALSE(cols_ser.empty()) << "no thermo rows";
  EXPECT_EQ(cols_par, cols_ser) << "thermo: step, n_clusters, largest_cluster_fraction, "
                                   "clustered_fraction";
  const std::string csv_par = slurp_file(dir + "/parallel/clusters.csv");
  EXPECT_FALSE(csv_par.empty()) << "no clusters.csv";
  EXPECT_EQ(csv_par, slurp_file(dir + "/serial/clusters.csv")) << "clusters.csv";
  EXPECT_GE(clusters, 10u) << "too few clusters to show anything";
  EXPECT_GT(crossing, 0u) << "no cluster spans several ranks: the join is not exercised";
  const auto* t = ::testing::UnitTest::GetInstance()->current_test_info();
  std::printf(
      "[ measured ] %s on %d ranks: %zu particles, %zu analyses; at the end %zu clusters, %zu of "
      "them with particles on several ranks\n",
      t->name(), ranks(), par.size(), cols_ser.size(), clusters, crossing);
  std::fflush(stdout);
}

TEST_F(Rank, ClustersDomainLennardJones2DMatchesOneRank) {
  clusters_match_one_rank(scenario("clusters_lj_2d_domain"));
}

TEST_F(Rank, ClustersRingFloat2DMatchesOneRank) {
  clusters_match_one_rank(scenario("clusters_lj_2d_ring_float"));
}

TEST_F(Rank, ClustersTreeWalled2DMatchesOneRank) {
  clusters_match_one_rank(scenario("clusters_soft_gas_2d_tree"));
}

// --- Formula laws (type = "expression", docs/formulas.md) on several ranks ------------------------
// The law's library is compiled once into the shared cache while the other ranks wait on its lock
// (the first test to run compiles it; the others load it). The tree's honours
// PARDYN_MPI_TEST_BACKEND (=cuda: the formula's kernels compiled by NVRTC, once into the shared
// cache), as the built-in laws' tree tests do.

// `scenario`'s first [[potential]] block, up to its scheme line, replaced by `law` (which ends
// before the scheme); the scheme line is kept.
std::string with_law(std::string toml, const std::string& law) {
  const std::size_t at = toml.find("[[potential]]");
  const std::size_t scheme = toml.find("scheme = ", at);
  toml.replace(at, scheme - at, law);
  return toml;
}

const char* const kLennardJonesFormula = R"toml([[potential]]
type = "expression"
energy = "4*epsilon*((sigma/r)^12 - (sigma/r)^6)"
parameters = { epsilon = 1.0, sigma = 1.0 }
rcut = 2.5
)toml";

// soft_gas (attraction a, repulsion B, core_attraction a2, rc, eps) as a formula: the log kernel
// for every pair plus the formula inside the radius (examples/formula_law).
std::string soft_gas_formula(double a) {
  return "[[potential]]\ntype = \"expression\"\nparameters = { a = " + std::to_string(a) +
         ", B = 3.0, a2 = 2.99, rc = 2.0, eps = 0.1 }\n"
         "energy = \"B/2*(1/(r^2 + eps^2) - 1/rc^2) + a2/2*log((r^2 + eps^2)/rc^2)\"\n"
         "long_range = { kernel = \"log\", strength = \"a\", softening = \"eps\", r0 = \"rc\", "
         "radius = \"sqrt(rc^2 - eps^2)\" }\n";
}

TEST_F(Rank, ExpressionLennardJones3DOnTheDomainMatchesOneRank) {
  const Comparison c =
      parallel_matches_serial(with_law(scenario("lj_3d_domain"), kLennardJonesFormula), kDomain);
  EXPECT_GT(c.moved, 0u) << "no particle migrated";
}

TEST_F(Rank, ExpressionSoftGas2DFarZonesMatchOneRank) {
  const std::string toml = with_law(scenario("far_soft_gas_2d"), soft_gas_formula(0.001));
  ASSERT_NE(toml.find("type = \"expression\""), std::string::npos);
  const Comparison c = parallel_matches_serial(toml, kDomain);
  EXPECT_GT(c.moved, 0u) << "no particle migrated";
}

TEST_F(Rank, ExpressionSoftGas2DTreeHasOneRanksAccuracy) {
  tree_matches_one_rank_toml(
      on_test_backend(with_law(scenario("tree_soft_gas_2d"), soft_gas_formula(0.01))));
}

// A setup error on one rank only (its particle file is missing): rank 0 reports it, naming the
// rank; the failing rank throws QuietError; nobody waits.
TEST_F(Rank, SetupErrorOnOneRankIsReportedByRankZero) {
  const std::string dir = shared_dir();
  // Identical scenario text, each rank in its own folder; only rank 0's folder has the file.
  const std::string mine = dir + "/rank" + std::to_string(rank());
  fs::create_directories(mine);
  std::ofstream(mine + "/scenario.toml") << scenario("gravity_particle_file");
  if (rank() == 0)
    std::ofstream(mine + "/particles.csv") << "x,y,z,vx,vy,vz,mass\n0,0,0,0,0,0,1\n1,0,0,0,0,0,1\n";
  barrier();
  bool quiet = false;
  std::string what;
  try {
    Scenario sc;
    parallel::agree(comm(), [&] { sc = load_scenario(mine + "/scenario.toml", {}, registry()); });
    RunOptions opt;
    opt.quiet = true;
    opt.output = mine + "/out";
    Simulation sim(sc, registry(), opt);
    ADD_FAILURE() << "rank " << rank() << ": the Simulation was made";
  } catch (const parallel::QuietError&) {
    quiet = true;
  } catch (const Error& e) {
    what = e.what();
  }
  if (rank() == 0) {
    EXPECT_FALSE(quiet);
    EXPECT_EQ(what.rfind("rank 1: ", 0), 0u) << what;
    EXPECT_NE(what.find("particles.csv"), std::string::npos) << what;
  } else {
    EXPECT_TRUE(quiet) << "rank " << rank() << ": " << what;
  }
}

// Prints only failures (ranks other than 0): one summary is enough.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank(),
                 r.file_name() ? r.file_name() : "?", r.line_number(), r.message());
  }
};

}  // namespace

int main(int argc, char** argv) {
  parallel::init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter);
  }
  int rc = RUN_ALL_TESTS();
  if (comm()) {
    double any = rc != 0 ? 1.0 : 0.0;
    comm()->max(&any, 1);
    rc = any > 0 ? 1 : 0;
  }
  parallel::finalize();
  return rc;
}
