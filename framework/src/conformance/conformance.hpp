// SPDX-License-Identifier: BSD-3-Clause
// The conformance suite of a force law: one set of checks that every registered potential gets,
// built in or out of tree. The test suite runs it for every law it finds (tests/test_conformance.cpp)
// and `pardyn check-plugin NAME` runs it for any installed plugin. Not part of the plugin SDK: a
// plugin never includes this.
//
// For each dimension and precision the law supports:
//   analytic   two particles at the distances of a reference file (r, U, fdivr; see read_reference),
//              CPU, against the values computed independently from the law's documented formula;
//   gradient   m_i a_i = -dU/dx_i by central differences (double, CPU, all_pairs);
//   newton     the net force of a jittered lattice is zero (pair laws);
//   gpu        the GPU against the CPU (skipped, saying so, without a GPU or without the law's GPU
//              code);
//   SCHEME     every scheme that accepts the law (scheme_support) against all_pairs, within that
//              scheme's documented tolerance (see tolerance() in conformance.cpp), CPU.
#pragma once

#include <string>
#include <vector>

#include "pardyn/particles.hpp"
#include "pardyn/app/registry.hpp"

namespace pardyn::conformance {

// One force evaluation of a law: the particles with their accelerations, per-particle energies
// and virials, the total potential energy, and every sum of the store after it (r.virial, ...).
// The tests' "forces of one law" (test_potentials, test_tree, test_cuda_forces) are this too.
struct Forces {
  HostParticles hp;
  double potential = 0;
  Reductions r;
};
// The potential `law` (parameters `params`) on the particles `in` in `box`, with `scheme` at its
// default parameters, on one backend and precision.
Forces evaluate(const Registry& registry, const std::string& law, const ParamSet& params,
                const HostParticles& in, const Box& box, Precision prec, Backend backend,
                const std::string& scheme);
// The same with the scheme's parameters given.
Forces evaluate(const Registry& registry, const std::string& law, const ParamSet& params,
                const HostParticles& in, const Box& box, Precision prec, Backend backend,
                const std::string& scheme, const ParamSet& scheme_params);

// A jittered square (side^2) or cubic (side^3) lattice of the given spacing, each coordinate moved
// by up to 0.2, masses in [0.5, 2) and types 0, 1, 2 in turn (seeded): the conformance checks'
// particles, and the tests' that compare laws on them.
HostParticles jittered_lattice(int dim, unsigned seed, int side, double spacing);

enum class Status { Pass, Fail, Skip };
const char* to_string(Status s);

struct Result {
  std::string check;    // analytic, gradient, newton, gpu, or a scheme's name
  std::string variant;  // "2D double", ...
  Status status = Status::Skip;
  std::string detail;  // the measured error and its bound, or why it was skipped
};

// Analytic values of a pair law: two particles of masses m0, m1 and types t0, t1 at distance r have
// the pair energy U (the whole pair's) and the force F_0 = fdivr (x_0 - x_1) on particle 0.
//
// File format (CSV with '#' lines before the header):
//   # params: G = 1.5; eps = 0.1        the law's parameters, TOML key = value, ';'-separated
//   # masses: 2.0 3.0                   optional (default 1 1)
//   # types: 0 1                        optional (default 0 0)
//   r,U,fdivr
//   0.5,-2.683,...
struct Reference {
  std::string file;
  std::string params;  // TOML text, one key = value per line
  double m0 = 1, m1 = 1;
  int t0 = 0, t1 = 0;
  struct Row {
    double r, U, fdivr;
  };
  std::vector<Row> rows;
};
Reference read_reference(const std::string& path);

struct Options {
  std::string params;  // TOML text of the law's parameters; "" = defaults (and samples
                       // for required ones), or the reference's when one is given
  const Reference* reference = nullptr;
  bool gpu = true;  // compare with the GPU where there is one
};

// Runs every check for the potential `name` of the registry. Never throws for a failing law: a law
// that cannot be made or throws while computing gives a failed result saying so.
std::vector<Result> check_law(const Registry& registry, const std::string& name,
                              const Options& options = {});

bool passed(const std::vector<Result>& results);
// The results as an aligned table, one line per check, and a summary line.
std::string table(const std::string& name, const std::vector<Result>& results);

}  // namespace pardyn::conformance
