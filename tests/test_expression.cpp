// SPDX-License-Identifier: BSD-3-Clause
// type = "expression" (potentials/expression): the formula forms of lennard_jones (one type and
// three with mixing), soft_gas, gravity and log against the built-in laws on every scheme, 2D and
// 3D, float and double, compiled and interpreted; the scenario's errors with their place and caret;
// table parameters through the resolved scenario.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "conformance/conformance.hpp"
#include "pardyn/app/config.hpp"
#include "support.hpp"

using namespace pardyn;

namespace {

using conformance::Forces;

// A jittered lattice (spacing 1.1) with three types and masses in [0.5, 2), in a walled box.
HostParticles lattice(int dim, unsigned seed) {
  return conformance::jittered_lattice(dim, seed, dim == 3 ? 8 : 20, 1.1);
}

Forces run(const std::string& law, const std::string& params, int dim, Precision prec,
           const std::string& scheme, Backend backend = Backend::Cpu) {
  const HostParticles hp = lattice(dim, 7);
  const Box box = test::cube(dim, 0, (dim == 3 ? 8 : 20) * 1.1, Boundary::Wall);
  return conformance::evaluate(test::registry(), law,
                               test::params_for(PluginKind::Potential, law, params), hp, box, prec,
                               backend, scheme);
}

// The largest |a - a_ref| over the largest |a_ref|, and the energies' relative difference.
void expect_same(const Forces& got, const Forces& ref, double tol, const std::string& what) {
  double amax = 0, err = 0;
  for (std::size_t i = 0; i < ref.hp.size(); ++i)
    for (int d = 0; d < ref.hp.dim; ++d) {
      amax = std::max(amax, std::fabs(ref.hp.a[d][i]));
      err = std::max(err, std::fabs(got.hp.a[d][i] - ref.hp.a[d][i]));
    }
  EXPECT_GT(amax, 0) << what;
  EXPECT_LE(err, tol * amax) << what << ": max |a - a_builtin| / max |a_builtin| = " << err / amax;
  EXPECT_NEAR(got.potential, ref.potential, tol * std::fabs(ref.potential) + 1e-300) << what;
}

struct Pairing {
  std::string name;
  std::string builtin, builtin_params;
  std::string expression;  // the expression law's parameters
  std::vector<std::string> schemes;
  unsigned dims;
};

const std::vector<Pairing>& pairings() {
  static const std::vector<Pairing> p = {
      {"lennard_jones",
       "lennard_jones",
       "epsilon = 1.2\nsigma = 0.9\nrcut = 2.5",
       "energy = \"4*epsilon*((sigma/r)^12 - (sigma/r)^6)\"\n"
       "parameters = { epsilon = 1.2, sigma = 0.9 }\nrcut = 2.5",
       {"all_pairs", "cell_list"},
       kDimAll},
      {"lennard_jones_types",
       "lennard_jones",
       "type_epsilon = [1.0, 0.5, 1.5]\ntype_sigma = [1.0, 1.2, 0.8]\nrcut = 2.5",
       "energy = \"4*epsilon*((sigma/r)^12 - (sigma/r)^6)\"\n"
       "parameters = { epsilon = [1.0, 0.5, 1.5], sigma = [1.0, 1.2, 0.8] }\nrcut = 2.5",
       {"all_pairs", "cell_list"},
       kDimAll},
      {"soft_gas",
       "soft_gas",
       "",
       "parameters = { a = 0.01, B = 3.0, a2 = 2.99, rc = 2.0, eps = 0.1 }\n"
       "energy = \"B/2*(1/(r^2 + eps^2) - 1/rc^2) + a2/2*log((r^2 + eps^2)/rc^2)\"\n"
       "long_range = { kernel = \"log\", strength = \"a\", softening = \"eps\", r0 = \"rc\", "
       "radius = \"sqrt(rc^2 - eps^2)\" }",
       {"all_pairs", "cell_list", "tree"},
       kDimAll},
      {"gravity",
       "gravity",
       "G = 1.5\neps = 0.1",
       "long_range = { kernel = \"gravity\", strength = 1.5, softening = 0.1 }",
       {"all_pairs", "cell_list", "tree"},
       kDimAll},
      {"log",
       "log",
       "G = 1.5\neps = 0.1\nr0 = 2.0",
       "long_range = { kernel = \"log\", strength = 1.5, softening = 0.1, r0 = 2.0 }",
       {"all_pairs", "cell_list", "tree"},
       kDim2},
  };
  return p;
}

class ExpressionAgrees : public ::testing::TestWithParam<std::string> {};

}  // namespace

// The formula forms agree with the built-in laws to rounding: the same traversals, one evaluator
// written by pardyn from the formula instead of by hand.
TEST_P(ExpressionAgrees, WithTheBuiltInLaw) {
  const std::string engine = GetParam();
  for (const auto& p : pairings())
    for (int dim : {2, 3}) {
      if (!(p.dims & dim_bit(dim))) continue;
      for (Precision prec : {Precision::Double, Precision::Float})
        for (const auto& scheme : p.schemes) {
          const std::string what = p.name + " " + std::to_string(dim) + "D " + to_string(prec) +
                                   " " + scheme + " " + engine;
          SCOPED_TRACE(what);
          const Forces ref = run(p.builtin, p.builtin_params, dim, prec, scheme);
          const Forces got =
              run("expression", p.expression + "\nengine = \"" + engine + "\"", dim, prec, scheme);
          expect_same(got, ref, prec == Precision::Double ? 1e-12 : 2e-5, what);
        }
    }
}

// On the GPU: the same traversals compiled at run time by NVRTC for the generated evaluator
// against the built-in laws' nvcc-compiled ones, on the GPU both (docs/formulas.md, "On the GPU").
TEST(ExpressionCuda, AgreesWithTheBuiltInLawOnTheGpu) {
  PARDYN_SKIP_WITHOUT_GPU();
  for (const auto& p : pairings())
    for (int dim : {2, 3}) {
      if (!(p.dims & dim_bit(dim))) continue;
      for (Precision prec : {Precision::Double, Precision::Float})
        for (const auto& scheme : p.schemes) {
          const std::string what =
              p.name + " " + std::to_string(dim) + "D " + to_string(prec) + " " + scheme + " cuda";
          SCOPED_TRACE(what);
          const Forces ref = run(p.builtin, p.builtin_params, dim, prec, scheme, Backend::Cuda);
          const Forces got = run("expression", p.expression, dim, prec, scheme, Backend::Cuda);
          expect_same(got, ref, prec == Precision::Double ? 1e-12 : 2e-5, what);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Engines, ExpressionAgrees, ::testing::Values("compiled", "interpreted"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

namespace {

// The message a scenario with this [[potential]] section gets when the law is made.
std::string error_of(const std::string& section) {
  const std::string dir = test::scratch_dir("expression-errors");
  const std::string path = dir + "/scenario.toml";
  std::ofstream(path) << "[simulation]\ndimension = 2\nsteps = 1\n\n"
                         "[[particles]]\ngenerator = \"lattice\"\nkind = \"square\"\ncount = 16\n"
                         "spacing = 1.0\n\n[[potential]]\ntype = \"expression\"\n"
                      << section << "\n";
  Registry& reg = test::registry();
  try {
    const Scenario sc = load_scenario(path, {}, reg);
    RunInfo run;
    fill_run_info(run, sc);
    run.quiet = true;
    reg.make_potential("expression", sc.potentials.at(0).params, run);
  } catch (const Error& e) {
    std::string msg = e.what();
    const auto at = msg.find(path);
    if (at != std::string::npos) msg.replace(at, path.size(), "scenario.toml");
    return msg;
  }
  ADD_FAILURE() << "no error for:\n" << section;
  return "";
}

}  // namespace

// Every mistake in a formula is reported at its character, in the file, with a caret under it.
TEST(ExpressionErrors, PointAtTheFormula) {
  // Line 13 of the scenario is the energy; its value's quote is at column 10.
  EXPECT_EQ(error_of("energy = \"4*epsilon*((sigam/r)^12 - (sigma/r)^6)\"\n"
                     "parameters = { epsilon = 1.0, sigma = 1.0 }\nrcut = 2.5"),
            "scenario.toml:13:23: 'energy' in [[potential]] #1 (expression): unknown name "
            "'sigam'; did you mean 'sigma'? (the formula knows r, epsilon, sigma)\n"
            "    4*epsilon*((sigam/r)^12 - (sigma/r)^6)\n"
            "                ^~~~~");
  const std::string nan =
      error_of("energy = \"A/r + log(r - 1)\"\nparameters = { A = 1 }\nrcut = 2");
  EXPECT_NE(
      nan.find("scenario.toml:13:17: 'energy' in [[potential]] #1 (expression): the energy is "
               "NaN at r = 0.002: log of a negative number"),
      std::string::npos)
      << nan;
  const std::string caret = "\n    A/r + log(r - 1)\n          ^~~~~~~~~~";
  EXPECT_EQ(nan.substr(nan.size() - std::min(nan.size(), caret.size())), caret) << nan;
  const std::string force = error_of(
      "energy = \"4*((1/r)^12 - (1/r)^6)\"\nforce = \"24/r*((1/r)^12 - (1/r)^6)\"\n"
      "rcut = 2.5");
  EXPECT_NE(force.find("scenario.toml:14:10: 'force' in [[potential]] #1 (expression): the force "
                       "is not -dU/dr of the energy"),
            std::string::npos)
      << force;
  EXPECT_NE(error_of("energy = \"1/r\"\nlong_range = { kernel = \"gravity\", strenght = 1 }")
                .find("'long_range.strenght' in [[potential]] #1 (expression): unknown key; did "
                      "you mean 'strength'?"),
            std::string::npos);
  EXPECT_NE(error_of("energy = \"exp(-r)\"\nparameters = { r = 1 }\nrcut = 2")
                .find("scenario.toml:14:20: 'parameters.r' in [[potential]] #1 (expression): r is "
                      "the distance"),
            std::string::npos);
  EXPECT_NE(error_of("rcut = 2.5").find("'energy' in [[potential]] #1 (expression): is required"),
            std::string::npos);
  EXPECT_NE(error_of("energy = \"r\"\nparameters = { k = [1, 2] }\nmixing = \"geometric\"\n"
                     "pairs = [\"0 1 q=2\"]\nrcut = 2")
                .find("names 'q', which is not in `parameters`"),
            std::string::npos);
  EXPECT_NE(error_of("energy = \"1/r\"\nlong_range = { kernel = \"log\", strength = 1 }")
                .find("needs radius"),
            std::string::npos);
  EXPECT_NE(error_of("energy = \"1/r\"\nlong_range = { kernel = \"log\", strength = 1, radius = "
                     "\"r\" }")
                .find("'long_range.radius' in [[potential]] #1 (expression): must not depend on r"),
            std::string::npos);
}

// A table parameter goes through the resolved scenario (what a checkpoint records and a resumed run
// reads) unchanged, and the formula law made from it is the same.
TEST(ExpressionScenario, ResolvedScenarioKeepsTheTable) {
  const std::string dir = test::scratch_dir("expression-resolved");
  const std::string path = dir + "/scenario.toml";
  std::ofstream(path) << "[simulation]\ndimension = 2\nsteps = 1\n\n"
                         "[[particles]]\ngenerator = \"lattice\"\nkind = \"square\"\ncount = 16\n"
                         "spacing = 1.0\n\n[[potential]]\ntype = \"expression\"\n"
                         "energy = \"4*epsilon*((sigma/r)^12 - (sigma/r)^6)\"\n"
                         "parameters = { epsilon = [1.0, 0.5], sigma = 1.1 }\nrcut = 2.5\n";
  Registry& reg = test::registry();
  const Scenario a = load_scenario(path, {}, reg);
  // (floats as every value of the resolved scenario: 17 digits, so that they read back exactly)
  EXPECT_NE(
      a.resolved_toml.find("parameters = { epsilon = [ 1.0, 0.5 ], sigma = 1.1000000000000001 }"),
      std::string::npos)
      << a.resolved_toml;
  const ScenarioSource again{a.resolved_toml, dir};
  const Scenario b = load_scenario(path, {}, reg, &again);
  EXPECT_EQ(format_value(b.potentials.at(0).params.table("parameters")),
            format_value(a.potentials.at(0).params.table("parameters")));
  EXPECT_TRUE(scenario_changes(a.resolved_toml, b.resolved_toml).empty());
  // --set reaches into the table.
  const Scenario c = load_scenario(path, {"potential.0.parameters.sigma=1.3"}, reg);
  EXPECT_EQ(format_value(c.potentials.at(0).params.table("parameters")),
            "{ epsilon = [1, 0.5], sigma = 1.3 }");
}
