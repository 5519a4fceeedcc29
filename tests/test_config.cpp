// SPDX-License-Identifier: BSD-3-Clause
// Scenario validation: every problem is reported with file:line:column and a hint, before anything runs.
#include <gtest/gtest.h>

#include <fstream>

#include "pardyn/app/config.hpp"
#include "pardyn/cuda.hpp"
#include "support.hpp"

using namespace pardyn;

namespace {

std::string write_scenario(const std::string& name, const std::string& text) {
  const std::string path = test::scratch_dir("config-" + name) + "/scenario.toml";
  std::ofstream(path) << text;
  return path;
}

const char* kValid = R"(
[simulation]
dimension = 3
steps = 20
precision = "float"

[[particles]]
generator = "plummer"
count = 64

[[potential]]
type = "gravity"
eps = 0.05

[integrator]
type = "leapfrog"
dt = 0.01
)";

// Loads a scenario that must fail; returns the message.
std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  const std::string path = write_scenario("bad", text);
  try {
    load_scenario(path, sets, test::registry());
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "scenario was accepted:\n" << text;
  return "";
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  return s.replace(p, from.size(), to);
}

}  // namespace

TEST(Config, ValidScenarioResolvesDefaults) {
  const std::string path = write_scenario("valid", kValid);
  Scenario sc = load_scenario(path, {}, test::registry());
  EXPECT_EQ(sc.dim, 3);
  EXPECT_EQ(sc.precision, Precision::Float);
  EXPECT_EQ(sc.steps, 20u);
  EXPECT_EQ(sc.name, "scenario");
  EXPECT_EQ(sc.output, "out/scenario");
  ASSERT_EQ(sc.potentials.size(), 1u);
  EXPECT_EQ(sc.potentials[0].scheme.type, "all_pairs");      // default scheme
  EXPECT_DOUBLE_EQ(sc.potentials[0].params.real("G"), 1.0);  // default filled in
  EXPECT_DOUBLE_EQ(sc.integrator.params.real("dt"), 0.01);
  // no [[output]]: frames and thermo by default
  ASSERT_EQ(sc.outputs.size(), 2u);
  EXPECT_EQ(sc.outputs[0].type, "vtk");
  EXPECT_EQ(sc.outputs[1].type, "thermo");
  // the resolved file is complete and itself a valid scenario
  EXPECT_NE(sc.resolved_toml.find("G = 1"), std::string::npos) << sc.resolved_toml;
  const std::string again = write_scenario("resolved", sc.resolved_toml);
  Scenario sc2 = load_scenario(again, {}, test::registry());
  EXPECT_EQ(sc2.resolved_toml.substr(sc2.resolved_toml.find('\n', 80)),
            sc.resolved_toml.substr(sc.resolved_toml.find('\n', 80)));
}

TEST(Config, UnknownKeyGivesLineColumnAndNearestKey) {
  const std::string msg = error_of(replace(kValid, "steps = 20", "stpes = 20"));
  EXPECT_NE(msg.find("scenario.toml:4:1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown key 'stpes' in [simulation]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'steps'"), std::string::npos) << msg;
}

TEST(Config, PluginKeysAreCheckedAgainstThePluginSchema) {
  const std::string msg = error_of(replace(kValid, "eps = 0.05", "epsilon = 0.05"));
  EXPECT_NE(msg.find("scenario.toml:13:1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[[potential]] #1 (gravity)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'eps'"), std::string::npos) << msg;
}

TEST(Config, WrongTypeRangeAndChoice) {
  EXPECT_NE(error_of(replace(kValid, "steps = 20", "steps = \"twenty\""))
                .find("must be integer, not a string"),
            std::string::npos);
  EXPECT_NE(error_of(replace(kValid, "steps = 20", "steps = 20.0")).find("without a decimal point"),
            std::string::npos);
  const std::string range = error_of(replace(kValid, "eps = 0.05", "eps = -1"));
  EXPECT_NE(range.find("'eps' in [[potential]] #1 (gravity) is -1; it must be >= 0 (length)"),
            std::string::npos)
      << range;
  const std::string choice = error_of(replace(kValid, "\"float\"", "\"single\""));
  EXPECT_NE(choice.find("allowed values: \"float\", \"double\""), std::string::npos) << choice;
  EXPECT_NE(choice.find(":5:13"), std::string::npos) << choice;
}

TEST(Config, UnknownPluginAndSectionNamesGetHints) {
  const std::string pot = error_of(replace(kValid, "\"gravity\"", "\"gravty\""));
  EXPECT_NE(pot.find("no potential plugin named \"gravty\"; did you mean \"gravity\"?"),
            std::string::npos)
      << pot;
  const std::string sec = error_of(replace(kValid, "[simulation]", "[simulaton]"));
  EXPECT_NE(sec.find("unknown section [simulaton]; did you mean [simulation]?"), std::string::npos)
      << sec;
  const std::string arr = error_of(replace(kValid, "[integrator]", "[[integrator]]"));
  EXPECT_NE(arr.find("'integrator' must be a table"), std::string::npos) << arr;
}

TEST(Config, AllErrorsAreReportedAtOnce) {
  std::string text = replace(kValid, "steps = 20", "stpes = 20");
  text = replace(text, "eps = 0.05", "eps = -3");
  text = replace(text, "dt = 0.01", "dt = 0");
  const std::string msg = error_of(text);
  EXPECT_NE(msg.find("3 errors in scenario"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'dt' in [integrator] (leapfrog) is 0; it must be > 0"), std::string::npos)
      << msg;
}

TEST(Config, SyntaxErrorsAndMissingRequiredKeys) {
  const std::string syn = error_of(replace(kValid, "count = 64", "count = = 64"));
  EXPECT_NE(syn.find("scenario.toml:9:9"), std::string::npos) << syn;
  EXPECT_NE(syn.find("TOML syntax error"), std::string::npos) << syn;
  const std::string req =
      error_of(replace(kValid, "generator = \"plummer\"\ncount = 64", "generator = \"file\""));
  EXPECT_NE(req.find("missing required key 'path' in [[particles]] #1 (file)"), std::string::npos)
      << req;
  const std::string none =
      error_of(replace(kValid, "[[particles]]\ngenerator = \"plummer\"\ncount = 64", ""));
  EXPECT_NE(none.find("has no particles"), std::string::npos) << none;
}

TEST(Config, DimensionMismatchesAreCaught) {
  // plummer is 3D only; a 2D run with a 3-entry offset and box is wrong twice
  std::string text = replace(kValid, "dimension = 3", "dimension = 2");
  const std::string msg = error_of(text);
  EXPECT_NE(msg.find("generator \"plummer\" does not support 2D runs"), std::string::npos) << msg;
  text = replace(kValid, "count = 64", "count = 64\noffset = [1, 2]");
  EXPECT_NE(error_of(text).find("'offset' in [[particles]] #1 has 2 entries; a 3D run needs 3"),
            std::string::npos);
}

TEST(Config, SetOverridesKeys) {
  const std::string path = write_scenario("set", kValid);
  Scenario sc = load_scenario(path,
                              {"simulation.steps=5", "potential.eps=0.2", "particles.0.count=10",
                               "integrator.type=euler", "simulation.name=renamed"},
                              test::registry());
  EXPECT_EQ(sc.steps, 5u);
  EXPECT_DOUBLE_EQ(sc.potentials[0].params.real("eps"), 0.2);
  EXPECT_EQ(sc.particles[0].params.integer("count"), 10);
  EXPECT_EQ(sc.integrator.type, "euler");
  EXPECT_EQ(sc.name, "renamed");
  const std::string bad = error_of(kValid, {"potential.epss=0.2"});
  // The message names the argument that gave the value (not a line of the file).
  EXPECT_NE(bad.find("\n  --set potential.epss=0.2: unknown key 'epss'"), std::string::npos) << bad;
  const std::string range = error_of(kValid, {"integrator.dt=-0.1"});
  EXPECT_NE(range.find("\n  --set integrator.dt=-0.1: 'dt' in [integrator]"), std::string::npos)
      << range;
  EXPECT_NE(bad.find("did you mean 'eps'"), std::string::npos) << bad;
  const std::string idx = error_of(kValid, {"particles.3.count=1"});
  EXPECT_NE(idx.find("there is no [[particles]] number 3"), std::string::npos) << idx;
}

TEST(Config, EditDistanceHints) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(nearest("temp", {"type", "temperature", "offset"}), "temperature");
  EXPECT_EQ(nearest("zzzzzz", {"type", "offset"}), "");
}

// A long-range law with a short-range part and no scheme gets the scheme measured fastest for its
// number of particles (docs/real-gas.md), and the choice is noted; other laws keep all_pairs.
TEST(Config, SchemeChosenByParticleCountForLawsWithAShortRangePart) {
  auto scheme_for = [](const std::string& law, long count, const char* boundary,
                       std::vector<std::string>* notes = nullptr) {
    const std::string path = write_scenario(
        "auto-" + law + std::to_string(count) + boundary,
        "[simulation]\ndimension = 2\n[box]\nlo = [0.0, 0.0]\nhi = [100.0, 100.0]\nboundary = \"" +
            std::string(boundary) + "\"\n[[particles]]\ngenerator = \"uniform\"\ncount = " +
            std::to_string(count) + "\n[[potential]]\ntype = \"" + law + "\"\n");
    Scenario sc = load_scenario(path, {}, test::registry());
    if (notes) *notes = sc.notes;
    std::string s = sc.potentials.at(0).scheme.type;
    if (s == "tree") s += " " + std::to_string(sc.potentials[0].scheme.params.real("theta"));
    return s;
  };
  std::vector<std::string> notes;
  const bool gpu = cuda::device_count() > 0;  // backend "auto" runs there
  EXPECT_EQ(scheme_for("soft_gas", 1000, "wall", &notes), gpu ? "cell_list" : "all_pairs");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("for 1000 particles on the"), std::string::npos) << notes[0];
  EXPECT_EQ(scheme_for("soft_gas", 8000, "wall"), gpu ? "all_pairs" : "cell_list");
  EXPECT_EQ(scheme_for("soft_gas", 20000, "wall", &notes), "cell_list");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("docs/real-gas.md"), std::string::npos) << notes[0];
  EXPECT_EQ(scheme_for("soft_gas", 5000000, "wall"), gpu ? "tree 0.700000" : "cell_list");
  EXPECT_EQ(scheme_for("soft_gas", 20000, "open"), "cell_list");
  EXPECT_EQ(scheme_for("soft_gas", 20000, "periodic", &notes), "all_pairs");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("periodic"), std::string::npos) << notes[0];
  // A law without a short-range part keeps the default, without a note.
  EXPECT_EQ(scheme_for("log", 10000, "wall", &notes), "all_pairs");
  EXPECT_TRUE(notes.empty());
}

// A law with a cut-off and no scheme gets the cell list, noted; a chosen all_pairs stays, with a
// note of its cost once there are many particles (docs/config.md).
TEST(Config, CutOffLawWithoutASchemeGetsTheCellList) {
  auto load = [](const std::string& name, const std::string& scheme, long count,
                 std::vector<std::string>& notes) {
    const std::string path = write_scenario(
        "cutoff-" + name,
        "[simulation]\ndimension = 3\n[box]\nlo = [0.0, 0.0, 0.0]\nhi = [30.0, 30.0, 30.0]\n"
        "boundary = \"periodic\"\n[[particles]]\ngenerator = \"uniform\"\ncount = " +
            std::to_string(count) + "\n[[potential]]\ntype = \"lennard_jones\"\nrcut = 2.5\n" +
            scheme);
    Scenario sc = load_scenario(path, {}, test::registry());
    notes = sc.notes;
    EXPECT_NE(sc.resolved_toml.find("type = '" + sc.potentials.at(0).scheme.type + "'"),
              std::string::npos)
        << "the resolved configuration records the scheme";
    return sc.potentials.at(0).scheme.type;
  };
  std::vector<std::string> notes;
  EXPECT_EQ(load("none", "", 16384, notes), "cell_list");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("chose \"cell_list\" for a law with a cut-off (2.5)"), std::string::npos)
      << notes[0];
  EXPECT_EQ(load("all_pairs", "scheme = \"all_pairs\"\n", 16384, notes), "all_pairs");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("computes all 1.3e+08 pairs of the 16384 particles"), std::string::npos)
      << notes[0];
  EXPECT_NE(notes[0].find("\"cell_list\""), std::string::npos) << notes[0];
  EXPECT_EQ(load("small", "scheme = \"all_pairs\"\n", 500, notes), "all_pairs");
  EXPECT_TRUE(notes.empty());
}

// Every integer parameter has a range (issue 15): a count, an interval or a thread number given as
// 10^12 or 2^32 + 1 is refused by the schema, never truncated or allocated.
TEST(Config, EveryIntegerParameterHasARange) {
  auto check = [](const Schema& schema, const std::string& owner) {
    for (const auto& p : schema.specs()) {
      if (p.type != ParamType::Int && p.type != ParamType::IntList) continue;
      EXPECT_TRUE(p.min.has_value()) << owner << ": '" << p.name << "' has no lower bound";
      EXPECT_TRUE(p.max.has_value()) << owner << ": '" << p.name << "' has no upper bound";
      if (p.min && p.max) {
        EXPECT_LE(*p.min, *p.max) << owner << ": '" << p.name << "'";
      }
    }
  };
  check(simulation_schema(), "[simulation]");
  check(box_schema(), "[box]");
  check(particles_common_schema(), "[[particles]]");
  check(integrator_common_schema(), "[integrator]");
  std::size_t plugins = 0;
  for (const FactoryInfo* f : test::registry().list()) {
    check(f->schema, f->name);
    ++plugins;
  }
  EXPECT_GE(plugins, 20u);
}

TEST(Config, OutOfRangeIntegersAndIndicesAreRefusedWithTheirSource) {
  const std::string path = write_scenario("ranges", kValid);
  auto error_of = [&](const std::string& set) {
    try {
      load_scenario(path, {set}, test::registry());
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("simulation.threads=4294967297")
                .find("--set simulation.threads=4294967297: 'threads' in [simulation] is "
                      "4294967297; it must be >= 0 and <= 4096"),
            std::string::npos);
  EXPECT_NE(error_of("particles.0.count=1000000000000").find("is 1000000000000; it must be >= 1"),
            std::string::npos);
  EXPECT_NE(error_of("particles.99999999999999999999999.count=1")
                .find("there is no [[particles]] number 99999999999999999999999"),
            std::string::npos);
  EXPECT_NE(error_of("particles.1.count=1").find("there is no [[particles]] number 1"),
            std::string::npos);
}
