// SPDX-License-Identifier: BSD-3-Clause
// type = "table" (potentials/table): tables written from Lennard-Jones against the built-in
// lennard_jones to their interpolation error (one type and three types with a section per pair;
// linear and spline; all_pairs and cell_list; 2D and 3D; float and double; CPU and GPU), the file's
// mistakes as errors with the file's line, the continuity checks, and a relative file from the
// scenario's folder.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "conformance/conformance.hpp"
#include "pardyn/app/config.hpp"
#include "pardyn/app/simulation.hpp"
#include "support.hpp"
#include "table/table_file.hpp"

using namespace pardyn;
using conformance::Forces;

namespace {

// The lattice of the expression law's tests: spacing 1.1, every coordinate jittered by at most 0.2,
// so no two particles are closer than 0.7; types 0, 1, 2; masses in [0.5, 2); walled box.
constexpr double kSpacing = 1.1, kRlo = 0.65, kRcut = 2.5;
int side(int dim) { return dim == 3 ? 8 : 20; }
HostParticles lattice(int dim) {
  return conformance::jittered_lattice(dim, 7, side(dim), kSpacing);
}
Box box(int dim) { return test::cube(dim, 0, side(dim) * kSpacing, Boundary::Wall); }

// Three types; eps_ij, sigma_ij by Lorentz-Berthelot (what lennard_jones computes).
const double kEps[3] = {1.0, 0.5, 1.5}, kSig[3] = {1.0, 1.2, 0.8};
double eps_of(int i, int j) { return std::sqrt(kEps[i] * kEps[j]); }
double sig_of(int i, int j) { return 0.5 * (kSig[i] + kSig[j]); }

// U(r) and F = -dU/dr of LJ, shifted at kRcut (U(rc) = 0), as the table's rows.
void lj(double eps, double sig, double r, double& e, double& f) {
  const auto u = [&](double x) { return 4 * eps * (std::pow(sig / x, 12) - std::pow(sig / x, 6)); };
  e = u(r) - u(kRcut);
  f = 24 * eps * (2 * std::pow(sig / r, 12) - std::pow(sig / r, 6)) / r;
}

// A file with the sections LJ (type 0's parameters) and LJij for every i <= j < 3, n points evenly
// spaced in r^2 from kRlo to kRcut: the run's grid is then the file's own (n = the section's N).
std::string lj_file(int n) {
  const std::string path = test::scratch_dir("table") + "/lj.table";
  std::ofstream out(path);
  out << "# Lennard-Jones, shifted at rc = 2.5 (tests/test_table.cpp)\n\n";
  const auto section = [&](const std::string& kw, double eps, double sig) {
    potentials::table_file::write(out, kw, n, "RSQ", kRlo, kRcut,
                                  [&](double r, double& e, double& f) { lj(eps, sig, r, e, f); });
  };
  section("LJ", 1.0, 1.0);
  for (int i = 0; i < 3; ++i)
    for (int j = i; j < 3; ++j)
      section("LJ" + std::to_string(i) + std::to_string(j), eps_of(i, j), sig_of(i, j));
  return path;
}

Forces run(const std::string& law, const std::string& params, int dim, Precision prec,
           const std::string& scheme, Backend backend) {
  return conformance::evaluate(test::registry(), law,
                               test::params_for(PluginKind::Potential, law, params), lattice(dim),
                               box(dim), prec, backend, scheme);
}

// The bound of the table's error for one pair at r^2 = s. With the grid's step h in s = r^2 and
// U(s) = c12 s^-6 - c6 s^-3 (- const), F/r = -2 dU/ds, interpolation between grid points errs by at
// most
//   linear:  |dU| <= h^2/8 max|U''|,           |d(F/r)| <= h^2/8 max|(F/r)''|
//   spline:  |dU| <= h^4/384 max|U''''|,       |d(F/r)| = 2 |dU'| <= 2 sqrt(3)/216 h^3 max|U''''|
// (cubic Hermite interpolation and its derivative), the maxima over the pair's interval and its
// neighbours (a float r^2 may fall into the next one), bounded term by term at the leftmost point.
// Besides, rounding: 16 ulp of the terms' magnitudes and of s times the slope (the grid index of a
// rounded s; the built-in law rounds too).
struct Bound {
  double e, fdivr;
};
Bound pair_bound(double eps, double sig, double s, bool spline, int n, double ulp) {
  const double c12 = 4 * eps * std::pow(sig, 12), c6 = 4 * eps * std::pow(sig, 6);
  const double s0 = kRlo * kRlo, h = (kRcut * kRcut - s0) / (n - 1);
  const double left = std::max(s0, s0 + (std::floor((s - s0) / h) - 1) * h);
  const auto p = [](double x, int k) { return std::pow(x, -k); };
  const double m2u = 42 * c12 * p(left, 8) + 12 * c6 * p(left, 5);
  const double m2f = 672 * c12 * p(left, 9) + 120 * c6 * p(left, 6);
  const double m4u = 3024 * c12 * p(left, 10) + 360 * c6 * p(left, 7);
  Bound b;
  if (spline) {
    b.e = std::pow(h, 4) / 384 * m4u;
    b.fdivr = 2 * std::sqrt(3.0) / 216 * std::pow(h, 3) * m4u;
  } else {
    b.e = h * h / 8 * m2u;
    b.fdivr = h * h / 8 * m2f;
  }
  b.e += 16 * ulp * (c12 * p(s, 6) + c6 * p(s, 3) + s * (6 * c12 * p(s, 7) + 3 * c6 * p(s, 4)));
  b.fdivr += 16 * ulp *
             (12 * c12 * p(s, 7) + 6 * c6 * p(s, 4) + s * (84 * c12 * p(s, 8) + 24 * c6 * p(s, 5)));
  return b;
}

// Table against lennard_jones: every particle's acceleration within the sum of its pairs' bounds
// (plus the rounding of summing them), the total energy within the sum over the pairs.
void expect_within_interpolation_error(const Forces& got, const Forces& ref, bool types,
                                       bool spline, int n, Precision prec,
                                       const std::string& what) {
  const HostParticles& hp = ref.hp;
  const int dim = hp.dim;
  const double ulp = prec == Precision::Float ? 0x1p-24 : 0x1p-53;
  double ebound = 0, worst = 0, esum = 0;
  std::size_t pairs = 0;
  for (std::size_t i = 0; i < hp.size(); ++i) {
    double fbound = 0, fsum = 0, esum_i = 0;
    int neighbours = 0;
    for (std::size_t j = 0; j < hp.size(); ++j) {
      if (j == i) continue;
      double s = 0;
      for (int d = 0; d < dim; ++d) s += std::pow(hp.x[d][i] - hp.x[d][j], 2);
      if (s >= kRcut * kRcut) continue;
      const int ti = types ? int(hp.type[i]) : 0, tj = types ? int(hp.type[j]) : 0;
      const double eps = types ? eps_of(ti, tj) : 1.0, sig = types ? sig_of(ti, tj) : 1.0;
      const Bound b = pair_bound(eps, sig, s, spline, n, ulp);
      double e, f;
      lj(eps, sig, std::sqrt(s), e, f);
      fbound += b.fdivr * std::sqrt(s);
      fsum += std::fabs(f);
      esum_i += std::fabs(e);
      ++neighbours;
      if (j > i) {
        ebound += b.e;
        ++pairs;
      }
    }
    // Summing k terms in floating point errs by at most k ulp of the sum of their magnitudes, in
    // either run.
    fbound += 2 * neighbours * ulp * fsum;
    esum += 2 * neighbours * ulp * esum_i;
    for (int d = 0; d < dim; ++d) {
      const double err = std::fabs(got.hp.a[d][i] - ref.hp.a[d][i]) * hp.mass[i];
      worst = std::max(worst, err / fbound);
    }
  }
  ASSERT_GT(pairs, hp.size()) << what;
  EXPECT_LE(worst, 1.0) << what << ": the worst force error is this much of its bound";
  EXPECT_LE(std::fabs(got.potential - ref.potential), ebound + esum)
      << what << ": energy " << got.potential << " against " << ref.potential;
}

class TableAgrees : public test::BackendRun {};

}  // namespace

// A table written from LJ gives LJ to its interpolation error, for one section and for a section
// per pair of types; the finer grid errs less (by h^2 linear, h^4 spline in the energy).
TEST_P(TableAgrees, WithLennardJones) {
  const Backend backend = test::backend() == "cuda" ? Backend::Cuda : Backend::Cpu;
  const int n = 1200;
  const std::string file = lj_file(n);
  const std::string lj_one = "epsilon = 1.0\nsigma = 1.0\nrcut = 2.5\nshift = true";
  const std::string lj_types =
      "type_epsilon = [1.0, 0.5, 1.5]\ntype_sigma = [1.0, 1.2, 0.8]\nrcut = 2.5\nshift = true";
  const std::string table_types =
      "pairs = [\"0 0 LJ00\", \"0 1 LJ01\", \"0 2 LJ02\", \"1 1 LJ11\", \"1 2 LJ12\", "
      "\"2 2 LJ22\"]\n";
  for (int dim : {2, 3})
    for (Precision prec : {Precision::Double, Precision::Float})
      for (const char* scheme : {"all_pairs", "cell_list"})
        for (bool types : {false, true}) {
          const Forces ref =
              run("lennard_jones", types ? lj_types : lj_one, dim, prec, scheme, backend);
          for (const char* style : {"linear", "spline"}) {
            const std::string what = std::to_string(dim) + "D " + to_string(prec) + " " + scheme +
                                     " " + style + (types ? " three types" : " one type") + " " +
                                     test::backend();
            SCOPED_TRACE(what);
            const std::string params = "file = \"" + file + "\"\nkeyword = \"LJ\"\nstyle = \"" +
                                       style + "\"\n" + (types ? table_types : "");
            const Forces got = run("table", params, dim, prec, scheme, backend);
            expect_within_interpolation_error(got, ref, types, std::string(style) == "spline", n,
                                              prec, what);
          }
        }
}

INSTANTIATE_TEST_SUITE_P(Backends, TableAgrees, ::testing::Values("cpu", "cuda"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// The error falls with the grid as the interpolation's order says: a grid twice as fine errs about
// 4 times less (linear) and 16 times less (spline) in the energy, so the bound above is not loose by
// orders of magnitude. Double, CPU, all pairs, 3D.
TEST(Table, ErrorFallsWithTheGrid) {
  const std::string lj_one = "epsilon = 1.0\nsigma = 1.0\nrcut = 2.5\nshift = true";
  const Forces ref = run("lennard_jones", lj_one, 3, Precision::Double, "all_pairs", Backend::Cpu);
  for (const char* style : {"linear", "spline"}) {
    double err[2];
    for (int k = 0; k < 2; ++k) {
      const int n = k == 0 ? 301 : 601;  // h halves
      const std::string file = lj_file(n);
      const Forces got =
          run("table", "file = \"" + file + "\"\nkeyword = \"LJ\"\nstyle = \"" + style + "\"", 3,
              Precision::Double, "all_pairs", Backend::Cpu);
      err[k] = std::fabs(got.potential - ref.potential);
    }
    const double order = std::log2(err[0] / err[1]);
    EXPECT_NEAR(order, std::string(style) == "spline" ? 4.0 : 2.0, 0.5)
        << style << ": energy errors " << err[0] << " and " << err[1];
  }
}

namespace {

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = test::scratch_dir("table-errors") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// The message making the law with these parameters throws.
std::string error_of(const std::string& params) {
  RunInfo run;
  run.quiet = true;
  try {
    test::registry().make_potential("table",
                                    test::params_for(PluginKind::Potential, "table", params), run);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << params;
  return "";
}

// A small consistent table: U = 1/r^2 - 1/4 (F = 2/r^3) on r = 1 .. 2.
std::string inverse_square(int n = 21) {
  std::ostringstream out;
  potentials::table_file::write(out, "INV2", n, "R", 1.0, 2.0, [](double r, double& e, double& f) {
    e = 1 / (r * r) - 0.25;
    f = 2 / (r * r * r);
  });
  return out.str();
}

}  // namespace

TEST(TableErrors, NameTheFileAndLine) {
  const std::string good = "# comment\n\n" + inverse_square();
  // A missing section: the ones there are listed.
  std::string f = write_file("good.table", good + "\nOTHER\nN 2\n1 1.0 1.0 0.0\n2 2.0 1.0 0.0\n");
  EXPECT_NE(error_of("file = \"" + f + "\"\nkeyword = \"LJ\"")
                .find("has no section 'LJ'; its sections: INV2, OTHER"),
            std::string::npos);
  EXPECT_NE(error_of("file = \"" + f + "\"").find("several sections (INV2, OTHER); name one"),
            std::string::npos);
  // A malformed row, at its line (line 2 + 2 header lines + blank + 3rd row = line 8).
  std::string text = good;
  text.replace(text.find("\n3 "), 3, "\n3 x");
  f = write_file("bad_row.table", text);
  EXPECT_NE(
      error_of("file = \"" + f + "\"").find("bad_row.table:8: expected 'index r energy force'"),
      std::string::npos)
      << error_of("file = \"" + f + "\"");
  // Distances that do not increase (no R/RSQ: the listed r count).
  f = write_file("order.table", "T\nN 3\n\n1 1.0 1.0 2.0\n2 1.5 0.4 0.5\n3 1.4 0.2 0.2\n");
  EXPECT_NE(error_of("file = \"" + f + "\"").find("order.table:6: r = 1.4 does not increase"),
            std::string::npos);
  // A section shorter than its N.
  f = write_file("short.table", "T\nN 4\n1 1.0 1.0 2.0\n2 1.5 0.4 0.5\n");
  EXPECT_NE(error_of("file = \"" + f + "\"").find("ends after 2 of its 4 lines"),
            std::string::npos);
  // A bad N line; BITMAP.
  f = write_file("n.table", "T\nM 4\n");
  EXPECT_NE(error_of("file = \"" + f + "\"").find("n.table:2: expected 'N n"), std::string::npos);
  f = write_file("bitmap.table", "T\nN 4 BITMAP 1.0 2.0\n");
  EXPECT_NE(error_of("file = \"" + f + "\"").find("BITMAP tables are not supported"),
            std::string::npos);
  // A cut-off beyond the table.
  f = write_file("good2.table", good);
  EXPECT_NE(error_of("file = \"" + f + "\"\nrcut = 2.5")
                .find("good2.table:3: section 'INV2' ends at r = 2 but the cut-off is 2.5"),
            std::string::npos);
  // A pair entry that is not "i j keyword [rcut]".
  EXPECT_NE(
      error_of("file = \"" + f + "\"\npairs = [\"0 x INV2\"]").find("pairs entry \"0 x INV2\""),
      std::string::npos);
  // No such file.
  EXPECT_NE(error_of("file = \"/nonexistent/x.table\"").find("cannot open the table file"),
            std::string::npos);
}

// Forces that are not the energy's slope: a flipped sign (10 % and more apart) is an error naming
// the place and both values; forces 5 % too large (1 to 10 %) a warning. A steep law on a coarse
// grid is not flagged: the difference the trapezoidal rule makes is allowed.
TEST(TableErrors, ContinuityIsChecked) {
  const auto file = [](const std::string& name, double scale, int n) {
    std::ostringstream t;
    potentials::table_file::write(t, "T", n, "R", 1.0, 2.0, [&](double r, double& e, double& f) {
      e = std::pow(r, -12) - std::pow(2.0, -12);
      f = scale * 12 * std::pow(r, -13);
    });
    return write_file(name, t.str());
  };
  const std::string flipped = file("flipped.table", -1, 21);
  const std::string msg = error_of("file = \"" + flipped + "\"");
  EXPECT_NE(msg.find("flipped.table:4-5: between r = 1 and 1.05 the energy's slope gives the "
                     "force -dE/dr = 8.86325"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("but the table's forces average -9.18193"), std::string::npos) << msg;
  EXPECT_NE(msg.find("check its sign and units"), std::string::npos) << msg;

  RunInfo run;
  testing::internal::CaptureStderr();
  test::registry().make_potential(
      "table",
      test::params_for(PluginKind::Potential, "table",
                       "file = \"" + file("large.table", 1.05, 201) + "\"\nshift = true"),
      run);
  std::string warned = testing::internal::GetCapturedStderr();
  EXPECT_NE(warned.find("pardyn: warning: "), std::string::npos) << warned;
  EXPECT_NE(warned.find("large.table:"), std::string::npos) << warned;
  EXPECT_NE(warned.find("% apart); check the table there"), std::string::npos) << warned;

  // r^-12 on 11 points from 1 to 2 (the energy's slope and the forces 12 % apart between 1 and
  // 1.1, all of it the trapezoidal rule's): consistent, nothing said.
  testing::internal::CaptureStderr();
  test::registry().make_potential(
      "table",
      test::params_for(PluginKind::Potential, "table",
                       "file = \"" + file("coarse.table", 1, 11) + "\"\nshift = true"),
      run);
  warned = testing::internal::GetCapturedStderr();
  EXPECT_EQ(warned, "");
}

// An energy not 0 at the cut-off is a warning that suggests shift; with shift = true it is
// subtracted and nothing is said.
TEST(TableErrors, EnergyAtTheCutOff) {
  std::ostringstream t;
  potentials::table_file::write(t, "U", 41, "R", 1.0, 2.0, [](double r, double& e, double& f) {
    e = 1 / (r * r);  // 1/4 at r = 2
    f = 2 / (r * r * r);
  });
  const std::string f = write_file("unshifted.table", t.str());
  RunInfo run;
  testing::internal::CaptureStderr();
  test::registry().make_potential(
      "table", test::params_for(PluginKind::Potential, "table", "file = \"" + f + "\""), run);
  std::string warned = testing::internal::GetCapturedStderr();
  EXPECT_NE(warned.find("the energy at the cut-off r = 2 is 0.25, not 0"), std::string::npos)
      << warned;
  EXPECT_NE(warned.find("set shift = true"), std::string::npos) << warned;
  testing::internal::CaptureStderr();
  test::registry().make_potential(
      "table",
      test::params_for(PluginKind::Potential, "table", "file = \"" + f + "\"\nshift = true"), run);
  warned = testing::internal::GetCapturedStderr();
  EXPECT_EQ(warned, "");
}

// A relative file starts at the scenario's folder, and the resolved scenario records it absolute.
TEST(TableScenario, FileRelativeToTheScenario) {
  const std::string dir = test::scratch_dir("table-scenario");
  std::ofstream(dir + "/inv2.table") << inverse_square();
  const std::string path = dir + "/scenario.toml";
  std::ofstream(path) << "[simulation]\ndimension = 2\nsteps = 1\n\n"
                         "[[particles]]\ngenerator = \"lattice\"\nkind = \"square\"\ncount = 16\n"
                         "spacing = 1.0\n\n[[potential]]\ntype = \"table\"\nfile = \"inv2.table\"\n"
                         "rcut = 1.5\n";
  Registry& reg = test::registry();
  const Scenario sc = load_scenario(path, {}, reg);
  RunInfo run;
  fill_run_info(run, sc);
  run.quiet = true;
  const auto pot = reg.make_potential("table", sc.potentials.at(0).params, run);
  EXPECT_DOUBLE_EQ(pot->cutoff(), 1.5);
}

// A run resumed from its checkpoint with the checkpoint's own scenario (its table file named
// relative to a scenario folder that is gone by then) ends bit for bit where the straight run does:
// the resolved scenario records the file's absolute path.
TEST(TableScenario, ResumesFromACheckpoint) {
  namespace fs = std::filesystem;
  const std::string base = test::scratch_dir("table-resume");
  const std::string table = base + "/tables/lj.table";
  fs::create_directories(base + "/tables");
  {
    std::ofstream out(table);
    potentials::table_file::write(out, "LJ", 500, "RSQ", kRlo, kRcut,
                                  [](double r, double& e, double& f) { lj(1.0, 1.0, r, e, f); });
  }
  const auto scenario = [&](int steps) {
    return "[simulation]\ndimension = 2\nsteps = " + std::to_string(steps) +
           "\nseed = 5\n[box]\nlo = [0.0, 0.0]\nhi = [12.0, 12.0]\nboundary = \"periodic\"\n"
           "[[particles]]\ngenerator = \"lattice\"\nkind = \"square\"\nspacing = 1.2\n"
           "temperature = 0.8\n[[potential]]\ntype = \"table\"\nfile = \"../tables/lj.table\"\n"
           "keyword = \"LJ\"\nscheme = \"cell_list\"\n[integrator]\ntype = \"leapfrog\"\n"
           "dt = 0.005\n[[output]]\ntype = \"checkpoint\"\ninterval = 10\n";
  };
  const auto run_in = [&](const std::string& dir, int steps, const std::string& resume) {
    if (resume.empty()) return test::run_scenario(dir, scenario(steps)).particles;
    fs::remove(dir + "/scenario.toml");  // the checkpoint's own scenario, its table file resolved
    return test::run_scenario(dir, "", resume, {"simulation.steps=" + std::to_string(steps)})
        .particles;
  };
  const HostParticles straight = run_in(base + "/straight", 30, "");
  run_in(base + "/part", 20, "");
  const HostParticles resumed = run_in(base + "/part", 30, base + "/part/out");
  ASSERT_EQ(straight.size(), resumed.size());
  ASSERT_GT(straight.size(), 50u);
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(straight.x[d], resumed.x[d]);
    EXPECT_EQ(straight.v[d], resumed.v[d]);
  }
}
