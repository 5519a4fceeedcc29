// SPDX-License-Identifier: BSD-3-Clause
// Checkpoints and exact restart (docs/checkpoints.md): a run that dies after a checkpoint and is
// resumed from it ends bit for bit where a run that never stopped ends (positions, velocities and
// every thermo.csv row), for every integrator, both precisions, the thermostats and the schemes
// that keep state (a Verlet list) or approximate (tree, cell-list far zones), on the CPU and the
// GPU; damaged checkpoint files are refused with a message, never a crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "io/checkpoint.hpp"
#include "pardyn/app/config.hpp"
#include "pardyn/app/simulation.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using namespace pardyn;

namespace {

using test::slurp;

struct Case {
  std::string name;
  std::string toml;  // without [simulation] steps and the outputs
};

// A scenario with thermo every 5 steps, a frame every 20 and a checkpoint every 10.
std::string scenario(const Case& c, std::uint64_t steps, const std::string& backend) {
  std::ostringstream os;
  os << "[simulation]\nsteps = " << steps << "\nbackend = \"" << backend
     << "\"\nprogress_interval = 7\n"
     << c.toml
     << "\n[[output]]\ntype = \"thermo\"\ninterval = 5\n"
        "[[output]]\ntype = \"vtk\"\ninterval = 20\n"
        "[[output]]\ntype = \"checkpoint\"\ninterval = 10\nkeep = 3\n";
  return os.str();
}

struct Outcome {
  HostParticles particles;
  std::string thermo;
  std::uint64_t steps = 0;
};

Outcome run(const std::string& dir, const std::string& toml, const std::string& resume = "") {
  test::ScenarioRun r = test::run_scenario(dir, toml, resume);
  return Outcome{std::move(r.particles), slurp(r.output + "/thermo.csv"), r.steps};
}

// Bitwise equality of two particle sets (NaN never appears: the runs check for it).
void expect_same(const HostParticles& a, const HostParticles& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (int d = 0; d < a.dim; ++d)
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a.x[d][i], b.x[d][i]) << what << ": x[" << d << "] of particle " << i;
      ASSERT_EQ(a.v[d][i], b.v[d][i]) << what << ": v[" << d << "] of particle " << i;
    }
  for (int d = 0; d < a.dim; ++d)
    EXPECT_EQ(a.image[d], b.image[d]) << what << ": images along " << d;
  EXPECT_EQ(a.id, b.id) << what;
}

// A straight run of 60 steps against one that "dies" at step 47 (its checkpoints at 10..40 and its
// rows and frames up to 47 left behind, the final checkpoint at 47 lost as by kill -9) and is
// resumed from the checkpoint of step 40.
void check_case(const Case& c, const std::string& backend) {
  const std::string base = test::scratch_dir("ckpt-" + c.name + "-" + backend);
  const Outcome straight = run(base + "/straight", scenario(c, 60, backend));
  ASSERT_EQ(straight.steps, 60u);

  const std::string dead = base + "/dead";
  run(dead, scenario(c, 47, backend));
  // As if killed -9 between step 40 and the end: the last checkpoint written is step 40's.
  fs::remove(checkpoint::path_for(dead + "/out", 47));
  const Outcome resumed = run(dead, scenario(c, 60, backend), dead + "/out");
  EXPECT_EQ(resumed.steps, 60u);
  expect_same(straight.particles, resumed.particles, c.name + " on " + backend);
  EXPECT_EQ(straight.thermo, resumed.thermo) << c.name << " on " << backend;
  // run.pvd lists the same frames (step 0, 20, 40, 60) at the same times.
  EXPECT_EQ(slurp(base + "/straight/out/run.pvd"), slurp(dead + "/out/run.pvd"));
}

const std::string kLj2d = R"(
dimension = 2
seed = 5
[box]
lo = [0.0, 0.0]
hi = [14.0, 14.0]
boundary = "periodic"
[[particles]]
generator = "uniform"
count = 120
min_spacing = 0.95
temperature = 1.0
[[potential]]
type = "lennard_jones"
rcut = 2.5
scheme = { type = "cell_list", skin = 0.3 }
)";

const std::string kThermostats = R"(
[[modifier]]
type = "velocity_rescale"
temperature = 1.0
temperature_end = 0.5
ramp_end = 0.2
tau = 0.05
[[modifier]]
type = "langevin"
temperature = 0.8
tau = 0.5
interval = 3
)";

std::vector<Case> integrator_cases(const std::string& precision) {
  std::vector<Case> cases;
  for (const char* integ : {"leapfrog", "yoshida4", "symplectic_euler", "euler", "rk4", "ab5"}) {
    Case c;
    c.name = std::string(integ) + "-" + precision;
    c.toml = "precision = \"" + precision + "\"\n" + kLj2d + "[integrator]\ntype = \"" + integ +
             "\"\ndt = 0.004\n" + kThermostats;
    cases.push_back(c);
  }
  Case d;
  d.name = "dopri5-" + precision;
  d.toml = "precision = \"" + precision + "\"\n" + kLj2d +
           "[integrator]\ntype = \"dopri5\"\ndt = 0.004\nrtol = 1e-6\natol = 1e-8\n" + kThermostats;
  cases.push_back(d);
  return cases;
}

// Long-range laws: the tree (3D gravity, a Plummer sphere) and the cell list's far zones (a 2D
// real gas between walls), with step control by acceleration on the tree.
std::vector<Case> scheme_cases(const std::string& precision) {
  Case tree;
  tree.name = "tree-gravity-" + precision;
  tree.toml = "precision = \"" + precision + R"("
dimension = 3
seed = 2
[[particles]]
generator = "plummer"
count = 400
[[potential]]
type = "gravity"
eps = 0.05
scheme = { type = "tree", theta = 0.6 }
[integrator]
type = "leapfrog"
dt = 0.01
dt_control = "acceleration"
)";
  Case far;
  far.name = "cell-far-zones-" + precision;
  far.toml = "precision = \"" + precision + R"("
dimension = 2
seed = 3
[box]
lo = [0.0, 0.0]
hi = [40.0, 40.0]
boundary = "wall"
[[particles]]
generator = "uniform"
count = 500
min_spacing = 0.9
temperature = 1.0
[[potential]]
type = "soft_gas"
attraction = 0.01
scheme = { type = "cell_list", cell_size = 4.0 }
[[potential]]
type = "walls"
[integrator]
type = "leapfrog"
dt = 0.002
[[modifier]]
type = "velocity_rescale"
temperature = 0.5
tau = 0.1
[[output]]
type = "clusters"
distance = 1.2
)";
  return {tree, far};
}

// The far-zones case with its law written as a formula (type = "expression", compiled at run time:
// CPU only).
Case formula_case(const std::string& precision) {
  Case c = scheme_cases(precision)[1];
  c.name = "formula-far-zones-" + precision;
  const std::string law = "type = \"soft_gas\"\nattraction = 0.01\n";
  c.toml.replace(c.toml.find(law), law.size(),
                 "type = \"expression\"\n"
                 "parameters = { a = 0.01, B = 3.0, a2 = 2.99, rc = 2.0, eps = 0.1 }\n"
                 "energy = \"B/2*(1/(r^2 + eps^2) - 1/rc^2) + a2/2*log((r^2 + eps^2)/rc^2)\"\n"
                 "long_range = { kernel = \"log\", strength = \"a\", softening = \"eps\", "
                 "r0 = \"rc\", radius = \"sqrt(rc^2 - eps^2)\" }\n");
  return c;
}

}  // namespace

// (precision, backend): each case on both backends (backends.hpp), in double and in float.
class ExactRestart : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
 protected:
  void SetUp() override {
    if (backend() == "cuda") PARDYN_SKIP_WITHOUT_GPU();
  }
  const std::string& precision() const { return std::get<0>(GetParam()); }
  const std::string& backend() const { return std::get<1>(GetParam()); }
};

TEST_P(ExactRestart, EveryIntegratorWithThermostats) {
  for (const auto& c : integrator_cases(precision())) check_case(c, backend());
}
TEST_P(ExactRestart, TreeAndFarZones) {
  for (const auto& c : scheme_cases(precision())) check_case(c, backend());
}
INSTANTIATE_TEST_SUITE_P(Precisions, ExactRestart,
                         ::testing::Combine(::testing::Values("double", "float"), test::backends()),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

// The formula law, on the CPU only (it had no GPU restart case before either).
class ExactRestartFormula : public ::testing::TestWithParam<std::string> {};
TEST_P(ExactRestartFormula, FormulaLawOnTheCpu) { check_case(formula_case(GetParam()), "cpu"); }
INSTANTIATE_TEST_SUITE_P(Precisions, ExactRestartFormula, ::testing::Values("double", "float"));

// How often energies are computed (thermo and progress intervals) must not change the trajectory:
// a resumed run may observe at other steps than the run it continues.
class CheckpointRun : public test::BackendRun {};
PARDYN_INSTANTIATE_BACKENDS(CheckpointRun);

TEST_P(CheckpointRun, ObservingMoreOftenDoesNotChangeTheTrajectory) {
  const std::string& backend = test::backend();
  for (const auto& c : {integrator_cases("float")[0], integrator_cases("double")[5],
                        scheme_cases("float")[0], scheme_cases("double")[1]}) {
    const std::string dir = test::scratch_dir("observe-" + c.name + "-" + backend);
    const std::string rare = "[simulation]\nsteps = 30\nbackend = \"" + backend +
                             "\"\nprogress_interval = 1000\n" + c.toml;
    std::string often = rare;
    often.replace(often.find("progress_interval = 1000"), 24, "progress_interval = 1   ");
    const Outcome a = run(dir + "/rare", rare);
    const Outcome b = run(dir + "/often", often);
    expect_same(a.particles, b.particles, c.name + " on " + backend);
  }
}

// Ctrl-C (stop()) ends the run with a checkpoint of the step it stopped at; resumed, the run ends
// where a straight run ends.
TEST(Checkpoint, AnInterruptedRunResumesExactly) {
  const Case c = integrator_cases("double")[0];
  const std::string base = test::scratch_dir("ckpt-interrupt");
  const Outcome straight = run(base + "/straight", scenario(c, 60, "cpu"));
  const std::string dir = base + "/stopped";
  fs::create_directories(dir);
  std::ofstream(dir + "/scenario.toml") << scenario(c, 60, "cpu");
  {
    RunOptions opt;
    opt.quiet = true;
    opt.output = dir + "/out";
    Scenario sc = load_scenario(dir + "/scenario.toml", {}, test::registry());
    Simulation sim(sc, test::registry(), opt);
    sim.stop(SIGTERM);  // before the first step: the run stops after step 1
    sim.run();
    EXPECT_EQ(sim.stopped_by(), SIGTERM);
    EXPECT_EQ(sim.steps_done(), 1u);
    EXPECT_EQ(sim.last_checkpoint(), checkpoint::path_for(dir + "/out", 1));
  }
  const Outcome resumed = run(dir, scenario(c, 60, "cpu"), dir + "/out");
  expect_same(straight.particles, resumed.particles, "after an interrupt at step 1");
}

// What a checkpoint holds, read back: the step, the clocks, the plugins' states, the scenario.
TEST(Checkpoint, HoldsTheWholeState) {
  const Case c = integrator_cases("float")[5];  // ab5 with both thermostats
  const std::string dir = test::scratch_dir("ckpt-contents");
  run(dir, scenario(c, 23, "cpu"));
  const auto files = checkpoint::list(dir + "/out");
  ASSERT_EQ(files.size(), 3u);  // keep = 3: 10, 20 and the final 23
  EXPECT_EQ(files[0].first, 10u);
  EXPECT_EQ(files[2].first, 23u);
  const checkpoint::Data d = checkpoint::read(files[2].second);
  EXPECT_EQ(d.step, 23u);
  EXPECT_EQ(d.time, 23 * 0.004);
  EXPECT_EQ(d.reason, "end");
  EXPECT_EQ(d.precision, Precision::Float);
  EXPECT_EQ(d.dim, 2);
  EXPECT_EQ(d.integrator.type, "ab5");
  EXPECT_EQ(d.integrator.integers.at("known"), 5);
  EXPECT_EQ(d.integrator.vectors.size(), 5u);
  ASSERT_EQ(d.modifiers.size(), 2u);
  EXPECT_EQ(d.modifiers[1].type, "langevin");
  EXPECT_TRUE(d.modifiers[1].reals.count("elapsed"));
  EXPECT_NE(d.scenario_toml.find("lennard_jones"), std::string::npos);
  EXPECT_TRUE(d.have_e0);
  EXPECT_EQ(d.particles.size(), d.rank_counts.at(0));
  EXPECT_EQ(d.particles.a[0].size(), d.particles.size());
}

// Changing what the exact continuation depends on is refused, naming the key; the number of steps
// may change (a finished run is extended).
TEST(Checkpoint, ChangesThatBreakExactnessAreRefused) {
  const Case c = integrator_cases("double")[0];
  const std::string dir = test::scratch_dir("ckpt-changes");
  run(dir, scenario(c, 20, "cpu"));
  std::string changed = scenario(c, 40, "cpu");
  changed.replace(changed.find("rcut = 2.5"), 10, "rcut = 3.0");
  std::ofstream(dir + "/changed.toml") << changed;
  try {
    prepare_resume(dir + "/out", dir + "/changed.toml", {}, test::registry(), false);
    FAIL() << "a changed cut-off was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("potential[0].rcut"), std::string::npos) << e.what();
  }
  Resume r = prepare_resume(dir + "/out", dir + "/changed.toml", {}, test::registry(), true);
  EXPECT_EQ(r.notes.size(), 1u);
  // Extending a finished run: only simulation.steps differs.
  std::ofstream(dir + "/longer.toml") << scenario(c, 40, "cpu");
  const Outcome longer = run(dir, scenario(c, 40, "cpu"), dir + "/out");
  EXPECT_EQ(longer.steps, 40u);
  const Outcome straight = run(dir + "/straight", scenario(c, 40, "cpu"));
  // The 20-step run wrote a row at its last step (20, also a multiple of 5): the same rows.
  EXPECT_EQ(straight.thermo, longer.thermo);
}

// Damaged files: every one is refused with a message naming the file; none crashes the reader.
// The mutations: truncation at random lengths, single flipped bytes (header and body), random
// overwritten runs, and files that are not checkpoints at all.
TEST(Checkpoint, DamagedFilesAreRefusedNeverCrash) {
  const Case c = integrator_cases("float")[0];
  const std::string dir = test::scratch_dir("ckpt-fuzz");
  run(dir, scenario(c, 10, "cpu"));
  const std::string good = checkpoint::path_for(dir + "/out", 10);
  ASSERT_NO_THROW(checkpoint::read(good));
  const std::string bytes = slurp(good);
  std::mt19937_64 rng(12345);
  int tried = 0, refused = 0;
  auto attempt = [&](const std::string& content, const std::string& what) {
    const std::string bad = dir + "/bad.h5";
    std::ofstream(bad, std::ios::binary | std::ios::trunc) << content;
    ++tried;
    try {
      checkpoint::read(bad);
      // A mutation that changed nothing the CRC covers would read back: only the header's free text.
      EXPECT_EQ(content.substr(512), bytes.substr(512)) << what << " was accepted";
    } catch (const Error& e) {
      ++refused;
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << what << ": " << e.what();
    }
  };
  for (int k = 0; k < 100; ++k) {
    const std::size_t len = std::uniform_int_distribution<std::size_t>(0, bytes.size() - 1)(rng);
    attempt(bytes.substr(0, len), "truncated to " + std::to_string(len));
  }
  for (int k = 0; k < 200; ++k) {
    std::string m = bytes;
    const std::size_t at = k < 40
                               ? std::size_t(k) * 3 % 160  // the header's lines
                               : std::uniform_int_distribution<std::size_t>(0, m.size() - 1)(rng);
    m[at] = char(m[at] ^ (1 << (k % 8)));
    attempt(m, "byte " + std::to_string(at) + " flipped");
  }
  for (int k = 0; k < 100; ++k) {
    std::string m = bytes;
    const std::size_t at = std::uniform_int_distribution<std::size_t>(0, m.size() - 1)(rng);
    const std::size_t n = std::min<std::size_t>(m.size() - at, 1 + rng() % 64);
    for (std::size_t i = 0; i < n; ++i) m[at + i] = char(rng());
    attempt(m, std::to_string(n) + " random bytes at " + std::to_string(at));
  }
  attempt("", "an empty file");
  attempt("PARDYN-CHECKPOINT\n", "a header alone");
  attempt(slurp(dir + "/out/thermo.csv"), "a CSV file");
  attempt(slurp(dir + "/out/config.toml"), "a TOML file");
  // A checkpoint of another format: the header says so.
  std::string other = bytes;
  other.replace(other.find("format 1"), 8, "format 9");
  attempt(other, "another format");
  std::printf("checkpoint reader: %d damaged files tried, %d refused\n", tried, refused);
  EXPECT_GE(tried, 400);
  EXPECT_GE(refused, tried - 40);  // flips in the header's free text may change nothing checked

  // Missing or empty places for --resume.
  EXPECT_THROW(checkpoint::find(dir + "/nowhere"), Error);
  fs::create_directories(dir + "/empty");
  EXPECT_THROW(checkpoint::find(dir + "/empty"), Error);
  // The newest damaged, an older intact: the older one is taken and the newer reported.
  const std::string run2 = test::scratch_dir("ckpt-fallback");
  run(run2, scenario(c, 20, "cpu"));
  std::string newest = slurp(checkpoint::path_for(run2 + "/out", 20));
  newest[newest.size() / 2] ^= 1;
  std::ofstream(checkpoint::path_for(run2 + "/out", 20), std::ios::binary | std::ios::trunc)
      << newest;
  std::vector<std::string> skipped;
  EXPECT_EQ(checkpoint::find(run2 + "/out", &skipped), checkpoint::path_for(run2 + "/out", 10));
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("damaged"), std::string::npos) << skipped[0];
}

// A new run into a folder that holds another run's checkpoints is refused (it would delete them).
TEST(Checkpoint, AFreshRunDoesNotOverwriteAnotherRunsCheckpoints) {
  const Case c = integrator_cases("double")[0];
  const std::string dir = test::scratch_dir("ckpt-refuse");
  run(dir, scenario(c, 10, "cpu"));
  try {
    run(dir, scenario(c, 10, "cpu"));
    FAIL() << "a second run into the same folder was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--resume"), std::string::npos) << e.what();
  }
}

// every_seconds: a checkpoint whenever that much wall-clock time has passed (here: every step).
TEST(Checkpoint, WallClockIntervalWritesCheckpoints) {
  const Case c = integrator_cases("double")[0];
  const std::string dir = test::scratch_dir("ckpt-seconds");
  std::string toml = scenario(c, 12, "cpu");
  toml.replace(toml.find("interval = 10\nkeep = 3"), 22,
               "interval = 0\nkeep = 4\nevery_seconds = 1e-9");
  run(dir, toml);
  const auto files = checkpoint::list(dir + "/out");
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files.front().first, 9u);
  EXPECT_EQ(checkpoint::read(files[0].second).reason, "seconds");
  EXPECT_EQ(checkpoint::read(files.back().second).reason, "end");
}
