// SPDX-License-Identifier: BSD-3-Clause
// File formats other programs use: the xyz, lammps_data and lammps_dump generators (extended
// XYZ, LAMMPS data files, LAMMPS dumps), the xyz, lammps_dump and lammps_data observers (extended
// XYZ trajectories, LAMMPS custom dumps, LAMMPS data files), and [box] from = "file". Round trips
// compare bit for bit with what the run held at each observation; bad input must give
// `path:line: what is wrong`. LAMMPS itself (write_data, read_data, read_dump, dumps) is
// exercised by tests/cli/formats_lammps.sh, ASE by tests/cli/formats_ase.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "pardyn/plugin.hpp"
#include "pardyn/app/simulation.hpp"
#include "support.hpp"

namespace {

using namespace pardyn;

std::string write_file(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

Box make_box(int dim, std::vector<double> lo, std::vector<double> hi,
             std::vector<Boundary> boundary) {
  Box box;
  for (int d = 0; d < dim; ++d) {
    box.lo[d] = lo[std::size_t(d)];
    box.hi[d] = hi[std::size_t(d)];
    box.boundary[d] = boundary[std::size_t(d)];
  }
  return box;
}

// Makes the generator as the framework does and runs it.
HostParticles generate(const std::string& name, const std::string& overrides, int dim,
                       const Box& box, const std::string& base_dir) {
  ParamSet params = test::params_for(PluginKind::Generator, name, overrides);
  params.base_dir = base_dir;
  RunInfo run;
  run.dim = dim;
  run.box = box;
  auto gen = test::registry().make_generator(name, params, run);
  std::mt19937_64 rng(1);
  GenerateContext ctx{dim, &run.box, &rng, base_dir};
  return gen->generate(ctx);
}

std::string generate_error(const std::string& name, const std::string& overrides, int dim,
                           const Box& box, const std::string& base_dir) {
  try {
    generate(name, overrides, dim, box, base_dir);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

double number(const std::string& s) {
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  EXPECT_TRUE(r.ec == std::errc() && r.ptr == s.data() + s.size()) << "'" << s << "'";
  return v;
}
std::int64_t whole(const std::string& s) {
  std::int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  EXPECT_TRUE(r.ec == std::errc() && r.ptr == s.data() + s.size()) << "'" << s << "'";
  return v;
}

std::vector<std::string> split(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

// What the run held at one observation, sorted by id.
struct Snapshot {
  std::uint64_t step = 0;
  double time = 0;
  HostParticles p;
};

Snapshot sorted_copy(const ObserveContext& ctx) {
  const HostParticles& in = *ctx.particles;
  Snapshot s;
  s.step = ctx.step;
  s.time = ctx.time;
  std::vector<std::size_t> order(in.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return in.id[a] < in.id[b]; });
  s.p = HostParticles(in.dim);
  s.p.resize(in.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t i = order[k];
    for (int d = 0; d < in.dim; ++d) {
      s.p.x[d][k] = in.x[d][i];
      s.p.v[d][k] = in.v[d][i];
      s.p.image[d][k] = in.image[d][i];
    }
    s.p.mass[k] = in.mass[i];
    s.p.type[k] = in.type[i];
    s.p.id[k] = in.id[i];
  }
  return s;
}

// Bit for bit: positions, velocities, masses, types (and image counts when `images`).
void expect_same(const HostParticles& got, const HostParticles& want, bool images,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    for (int d = 0; d < want.dim; ++d) {
      ASSERT_EQ(got.x[d][i], want.x[d][i]) << what << ": particle " << i << " axis " << d;
      ASSERT_EQ(got.v[d][i], want.v[d][i]) << what << ": particle " << i << " axis " << d;
      if (images) {
        ASSERT_EQ(got.image[d][i], want.image[d][i]) << what << ": particle " << i;
      }
    }
    ASSERT_EQ(got.mass[i], want.mass[i]) << what << ": particle " << i;
    ASSERT_EQ(got.type[i], want.type[i]) << what << ": particle " << i;
  }
}

// One frame of a LAMMPS dump as text.
struct DumpFrame {
  double time = 0;
  std::uint64_t step = 0;
  std::string bounds_flags;
  double lo[3], hi[3];
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

std::vector<DumpFrame> read_dump(const std::string& path) {
  std::ifstream in(path);
  std::vector<DumpFrame> frames;
  std::string line;
  auto next = [&] {
    if (!std::getline(in, line)) throw std::runtime_error("dump cut short");
    return line;
  };
  while (std::getline(in, line)) {
    DumpFrame f;
    EXPECT_EQ(line, "ITEM: TIME");
    f.time = number(next());
    EXPECT_EQ(next(), "ITEM: TIMESTEP");
    f.step = std::uint64_t(whole(next()));
    EXPECT_EQ(next(), "ITEM: NUMBER OF ATOMS");
    const auto n = std::size_t(whole(next()));
    next();
    EXPECT_EQ(line.rfind("ITEM: BOX BOUNDS ", 0), 0u) << line;
    f.bounds_flags = line.substr(17);
    for (int d = 0; d < 3; ++d) {
      const auto w = split(next());
      EXPECT_EQ(w.size(), 2u);
      f.lo[d] = number(w[0]);
      f.hi[d] = number(w[1]);
    }
    const auto head = split(next());
    EXPECT_GE(head.size(), 2u);
    f.columns.assign(head.begin() + 2, head.end());
    for (std::size_t i = 0; i < n; ++i) f.rows.push_back(split(next()));
    frames.push_back(std::move(f));
  }
  return frames;
}

// A scenario run with the probe, the xyz and the lammps_dump observers: free flight (no forces)
// with a bulk velocity, so that particles cross the periodic faces and gather image counts.
struct Run {
  std::string dir;
  std::vector<Snapshot> seen;
};

Run run_scenario(int dim, bool names, const std::string& backend) {
  Run run;
  run.dir = test::scratch_dir("formats-run" + std::to_string(dim) + (names ? "n" : "") + backend);
  const std::string box =
      dim == 3 ? "lo = [0.0, -1.0, 0.0]\nhi = [5.0, 4.0, 6.0]\nboundary = [\"periodic\", "
                 "\"periodic\", \"wall\"]\n"
               : "lo = [-2.0, 0.0]\nhi = [3.0, 4.25]\nboundary = [\"periodic\", \"open\"]\n";
  const std::string bulk = dim == 3 ? "[3.0, -2.0, 0.0]" : "[3.0, 0.5]";
  std::ofstream(run.dir + "/s.toml")
      << "[simulation]\ndimension = " << dim << "\nsteps = 200\nseed = 5\nbackend = \"" << backend
      << "\"\n[box]\n"
      << box
      << "[[particles]]\ngenerator = \"uniform\"\ncount = 40\nmin_spacing = 0.3\n"
         "temperature = 2.0\nvelocity = "
      << bulk
      << "\n[[particles]]\ngenerator = \"uniform\"\ncount = 9\ntype = 1\nmass = 2.5\n"
         "temperature = 0.5\n"
         "[integrator]\ntype = \"leapfrog\"\ndt = 0.01\n"
         "[[output]]\ntype = \"probe\"\ninterval = 50\n"
         "[[output]]\ntype = \"xyz\"\ninterval = 50\n"
      << (names ? "species = [\"Ar\", \"Kr\"]\n" : "")
      << "[[output]]\ntype = \"lammps_dump\"\ninterval = 50\n"
         "[[output]]\ntype = \"lammps_data\"\ninterval = 50\n";
  Scenario sc = load_scenario(run.dir + "/s.toml", {}, test::probe_registry());
  RunOptions opt;
  opt.quiet = true;
  opt.output = run.dir + "/out";
  test::ProbeScope probe([&](const ObserveContext& ctx) { run.seen.push_back(sorted_copy(ctx)); },
                         ParticleStore::kPosition | ParticleStore::kVelocity |
                             ParticleStore::kMass | ParticleStore::kType | ParticleStore::kId |
                             ParticleStore::kImage);
  Simulation sim(sc, test::probe_registry(), opt);
  sim.run();
  return run;
}

Box run_box(int dim) {
  return dim == 3 ? make_box(3, {0, -1, 0}, {5, 4, 6},
                             {Boundary::Periodic, Boundary::Periodic, Boundary::Wall})
                  : make_box(2, {-2, 0}, {3, 4.25}, {Boundary::Periodic, Boundary::Open});
}

// A LAMMPS data file from a dump frame's text (numbers copied as written): atom style atomic
// with image flags, or full without a style comment (found by the column count).
std::string data_file(const DumpFrame& f, int dim, bool full) {
  std::map<std::string, std::string> mass;  // type -> mass
  std::string atoms, velocities;
  const auto col = [&](const char* name) {
    return std::size_t(std::find(f.columns.begin(), f.columns.end(), name) - f.columns.begin());
  };
  for (const auto& r : f.rows) {
    mass[r[col("type")]] = r[col("mass")];
    const std::string xyz = r[col("x")] + " " + r[col("y")] + " " + r[col("z")];
    const std::string image = r[col("ix")] + " " + r[col("iy")] + " " + r[col("iz")];
    atoms += r[col("id")] +
             (full ? " 7 " + r[col("type")] + " -0.25 " : " " + r[col("type")] + " ") + xyz + " " +
             image + "\n";
    velocities +=
        r[col("id")] + " " + r[col("vx")] + " " + r[col("vy")] + " " + r[col("vz")] + "\n";
  }
  std::string t = "LAMMPS data file written by the test\n\n" + std::to_string(f.rows.size()) +
                  " atoms\n" + std::to_string(mass.size()) + " atom types\n\n";
  for (int d = 0; d < 3; ++d) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%.17g %.17g %clo %chi\n", d < dim ? f.lo[d] : -0.5,
                  d < dim ? f.hi[d] : 0.5, "xyz"[d], "xyz"[d]);
    t += buf;
  }
  t += "\nMasses\n\n";
  for (const auto& [type, m] : mass) t += type + " " + m + "\n";
  // Velocities before Atoms, and the atoms in reverse order: both allowed, ordered by id.
  t += "\nVelocities\n\n" + velocities;
  std::vector<std::string> lines;
  std::istringstream in(atoms);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::reverse(lines.begin(), lines.end());
  t += full ? "\nAtoms\n\n" : "\nAtoms # atomic\n\n";
  for (const auto& l : lines) t += l + "\n";
  return t;
}

// The writers run on the backend's host copies: a CUDA run (the particles copied from the GPU)
// must write the same files, read back as exactly.
void round_trip(int dim, bool names, const std::string& backend) {
  const Run run = run_scenario(dim, names, backend);
  ASSERT_EQ(run.seen.size(), 5u);  // steps 0, 50, ..., 200
  const HostParticles& last = run.seen.back().p;
  int crossed = 0;
  for (std::size_t i = 0; i < last.size(); ++i) crossed += last.image[0][i] != 0;
  ASSERT_GT(crossed, 0) << "no particle crossed a periodic face: the image counts go untested";
  const Box box = run_box(dim);
  const std::string out = run.dir + "/out";

  // xyz: every frame read back by the xyz generator, from the start and from the end.
  const std::string types = names ? "types = [\"Ar\", \"Kr\"]\n" : "";
  for (std::size_t k = 0; k < run.seen.size(); ++k) {
    const HostParticles got =
        generate("xyz", "path = \"trajectory.xyz\"\nframe = " + std::to_string(k) + "\n" + types,
                 dim, box, out);
    expect_same(got, run.seen[k].p, false, "xyz frame " + std::to_string(k));
  }
  expect_same(generate("xyz", "path = \"trajectory.xyz\"\nframe = -1\n" + types, dim, box, out),
              last, false, "xyz frame -1");
  expect_same(generate("xyz", "path = \"trajectory.xyz\"\nframe = -5\n" + types, dim, box, out),
              run.seen[0].p, false, "xyz frame -5");
  // The comment line of the last frame.
  {
    std::ifstream in(out + "/trajectory.xyz");
    std::string line, comment;
    while (std::getline(in, line))
      if (line.find("Lattice=") != std::string::npos) comment = line;
    const std::string lattice = dim == 3 ? "Lattice=\"5 0 0 0 5 0 0 0 6\" Origin=\"0 -1 0\""
                                         : "Lattice=\"5 0 0 0 4.25 0 0 0 1\" Origin=\"-2 0 -0.5\"";
    EXPECT_EQ(comment.rfind(lattice + " Properties=species:S:1:pos:R:3:velo:R:3:mass:R:1:id:I:1:"
                                      "masses:R:1:momenta:R:3 Time=2 Step=200 pbc=\"",
                            0),
              0u)
        << comment;
    EXPECT_NE(comment.find(dim == 3 ? "pbc=\"T T F\"" : "pbc=\"T F F\""), std::string::npos)
        << comment;
  }

  // lammps_dump: every frame, value by value.
  const auto frames = read_dump(out + "/dump.lammpstrj");
  ASSERT_EQ(frames.size(), run.seen.size());
  for (std::size_t k = 0; k < frames.size(); ++k) {
    const DumpFrame& f = frames[k];
    const Snapshot& s = run.seen[k];
    EXPECT_EQ(f.step, s.step);
    EXPECT_EQ(f.time, s.time);
    EXPECT_EQ(f.columns, (std::vector<std::string>{"id", "type", "x", "y", "z", "vx", "vy", "vz",
                                                   "ix", "iy", "iz", "mass"}));
    EXPECT_EQ(f.bounds_flags, dim == 3 ? "pp pp ff" : "pp mm pp");
    for (int d = 0; d < 3; ++d) {
      if (d < dim && box.boundary[d] == Boundary::Open) {
        // The box grown to hold every particle.
        double lo = box.lo[d], hi = box.hi[d];
        for (double x : s.p.x[d]) lo = std::min(lo, x), hi = std::max(hi, x);
        EXPECT_EQ(f.lo[d], lo);
        EXPECT_EQ(f.hi[d], hi);
      } else {
        EXPECT_EQ(f.lo[d], d < dim ? box.lo[d] : -0.5);
        EXPECT_EQ(f.hi[d], d < dim ? box.hi[d] : 0.5);
      }
    }
    ASSERT_EQ(f.rows.size(), s.p.size());
    for (std::size_t i = 0; i < f.rows.size(); ++i) {
      const auto& r = f.rows[i];
      ASSERT_EQ(r.size(), 12u);
      ASSERT_EQ(whole(r[0]), s.p.id[i] + 1);
      ASSERT_EQ(whole(r[1]), s.p.type[i] + 1);
      for (int d = 0; d < 3; ++d) {
        ASSERT_EQ(number(r[std::size_t(2 + d)]), d < dim ? s.p.x[d][i] : 0.0) << "row " << i;
        ASSERT_EQ(number(r[std::size_t(5 + d)]), d < dim ? s.p.v[d][i] : 0.0) << "row " << i;
        const bool periodic = d < dim && box.boundary[d] == Boundary::Periodic;
        ASSERT_EQ(whole(r[std::size_t(8 + d)]), periodic ? s.p.image[d][i] : 0) << "row " << i;
      }
      ASSERT_EQ(number(r[11]), s.p.mass[i]);
    }
  }

  // The xyz rows: ASE's masses and momenta (m v) after OVITO's velo and mass.
  {
    std::ifstream in(out + "/trajectory.xyz");
    std::string line;
    for (int k = 0; k < 3; ++k) std::getline(in, line);  // the first atom line
    const auto w = split(line);
    ASSERT_EQ(w.size(), 13u) << line;
    const HostParticles& p = run.seen[0].p;
    EXPECT_EQ(number(w[7]), p.mass[0]) << line;
    EXPECT_EQ(number(w[9]), p.mass[0]) << line;
    for (int d = 0; d < 3; ++d)
      EXPECT_EQ(number(w[std::size_t(10 + d)]), d < dim ? p.mass[0] * p.v[d][0] : 0.0) << line;
  }

  // lammps_dump generator: every frame of the dump read back, by index and by step, with the
  // image counts.
  for (std::size_t k = 0; k < run.seen.size(); ++k)
    expect_same(generate("lammps_dump", "path = \"dump.lammpstrj\"\nframe = " + std::to_string(k),
                         dim, box, out),
                run.seen[k].p, true, "lammps_dump frame " + std::to_string(k));
  expect_same(generate("lammps_dump", "path = \"dump.lammpstrj\"", dim, box, out), last, true,
              "lammps_dump, the last frame by default");
  expect_same(generate("lammps_dump", "path = \"dump.lammpstrj\"\nstep = 50", dim, box, out),
              run.seen[1].p, true, "lammps_dump step 50");

  // lammps_data observer: the last step's state, read back by the lammps_data generator.
  expect_same(generate("lammps_data", "path = \"state.data\"", dim, box, out), last, true,
              "lammps_data observer");

  // lammps_data: data files made from the last dump frame, read back with their image flags.
  const std::string dir = run.dir;
  write_file(dir, "atomic.data", data_file(frames.back(), dim, false));
  write_file(dir, "full.data", data_file(frames.back(), dim, true));
  expect_same(generate("lammps_data", "path = \"atomic.data\"", dim, box, dir), last, true,
              "lammps_data atomic");
  expect_same(generate("lammps_data", "path = \"full.data\"", dim, box, dir), last, true,
              "lammps_data full");
  expect_same(generate("lammps_data", "path = \"full.data\"\nstyle = \"full\"", dim, box, dir),
              last, true, "lammps_data full, style given");
}

// Written by a run on each backend (backends.hpp), read back on the host.
class FormatsRoundTripRun : public test::BackendRun {};
PARDYN_INSTANTIATE_BACKENDS(FormatsRoundTripRun);

TEST_P(FormatsRoundTripRun, ThreeDimensionsWithNames) { round_trip(3, true, test::backend()); }
TEST_P(FormatsRoundTripRun, TwoDimensionsWithTypeNumbers) { round_trip(2, false, test::backend()); }

// -------------------------------------------------------------------------------------------------
// The xyz generator on files other programs write.

TEST(XyzGenerator, ExtendedPropertiesNamesAndIds) {
  const std::string dir = test::scratch_dir("xyz-extended");
  // Skipped properties (forces, a logical), momenta for velocities, ids out of order, names in
  // order of first appearance, OVITO's Origin, lowercase keys, a quoted value with an escape.
  write_file(dir, "a.xyz",
             "3\n"
             "lattice=\"4 0 0 0 5 0 0 0 6\" Origin=\"-1 0 1\" note=\"a \\\"quoted\\\" word\" "
             "Properties=id:I:1:species:S:1:pos:R:3:forces:R:3:momenta:R:3:masses:R:1:fixed:L:1 "
             "pbc=\"T T F\" flag\n"
             "7 O  0.5 1.5 2.5  9 9 9  2 4 6  2.0 T\n"
             "2 H  -0.5 0.25 1.5  9 9 9  1 1 1  0.5 F\n"
             "5 O  1 2 3  9 9 9  0 0 -4  2.0 F\n");
  const Box box =
      make_box(3, {-1, 0, 1}, {3, 5, 7}, {Boundary::Periodic, Boundary::Periodic, Boundary::Wall});
  const HostParticles p = generate("xyz", "path = \"a.xyz\"", 3, box, dir);
  ASSERT_EQ(p.size(), 3u);
  // Ordered by id: 2 (H), 5 (O), 7 (O); O appeared first, so O is type 0 and H type 1.
  EXPECT_EQ(p.type, (std::vector<std::int32_t>{1, 0, 0}));
  EXPECT_EQ(p.x[0], (std::vector<double>{-0.5, 1, 0.5}));
  EXPECT_EQ(p.x[2], (std::vector<double>{1.5, 3, 2.5}));
  EXPECT_EQ(p.mass, (std::vector<double>{0.5, 2.0, 2.0}));
  EXPECT_EQ(p.v[0], (std::vector<double>{2, 0, 1}));
  EXPECT_EQ(p.v[2], (std::vector<double>{2, -2, 3}));
  // With types: names mapped as listed.
  const HostParticles q =
      generate("xyz", "path = \"a.xyz\"\ntypes = [\"H\", \"C\", \"O\"]", 3, box, dir);
  EXPECT_EQ(q.type, (std::vector<std::int32_t>{0, 2, 2}));
}

TEST(XyzGenerator, PlainXyzTwoDimensionsAndDefaultMass) {
  const std::string dir = test::scratch_dir("xyz-plain");
  // Plain XYZ (any comment, extra columns skipped), whole-number species are types, two frames.
  write_file(dir, "a.xyz",
             "2\nwritten by hand, t = 0\n3 0.5 1.5 0 extra\n0 1.0 2.0 0.0\n"
             "\n"
             "2\nframe 2\n3 0.75 1.25 0\n0 1.0 2.5 0\n");
  const Box box = make_box(2, {0, 0}, {1, 1}, {Boundary::Open, Boundary::Open});
  HostParticles p = generate("xyz", "path = \"a.xyz\"\nmass = 3.5", 2, box, dir);
  EXPECT_EQ(p.type, (std::vector<std::int32_t>{3, 0}));
  EXPECT_EQ(p.x[0], (std::vector<double>{0.5, 1.0}));
  EXPECT_EQ(p.x[1], (std::vector<double>{1.5, 2.0}));
  EXPECT_EQ(p.mass, (std::vector<double>{3.5, 3.5}));
  EXPECT_EQ(p.v[0], (std::vector<double>{0, 0}));
  p = generate("xyz", "path = \"a.xyz\"\nframe = 1", 2, box, dir);
  EXPECT_EQ(p.x[1], (std::vector<double>{1.25, 2.5}));
  // pos:R:2 in 2D; check_box = false takes a cell that does not match.
  write_file(
      dir, "b.xyz",
      "1\nLattice=\"9 0 0 0 9 0 0 0 9\" Properties=species:S:1:pos:R:2:velo:R:2\nAr 1 2 3 4\n");
  p = generate("xyz", "path = \"b.xyz\"\ncheck_box = false", 2, box, dir);
  EXPECT_EQ(p.x[1], (std::vector<double>{2}));
  EXPECT_EQ(p.v[1], (std::vector<double>{4}));
}

// -------------------------------------------------------------------------------------------------
// Bad input: path:line and what is wrong.

struct BadCase {
  const char* text;
  int dim;
  const char* keys;   // extra generator keys
  const char* where;  // expected "bad.xyz:LINE:"
  const char* what;   // expected in the message
};

void expect_errors(const std::string& generator, const char* file, const BadCase* cases,
                   std::size_t count, const Box& box3, const Box& box2) {
  const std::string dir = test::scratch_dir(generator + "-errors");
  for (std::size_t k = 0; k < count; ++k) {
    const BadCase& c = cases[k];
    write_file(dir, file, c.text);
    const std::string msg =
        generate_error(generator, "path = \"" + std::string(file) + "\"\n" + c.keys, c.dim,
                       c.dim == 3 ? box3 : box2, dir);
    EXPECT_NE(msg.find(c.where), std::string::npos) << "case " << k << ":\n"
                                                    << c.text << "\n=> " << msg;
    EXPECT_NE(msg.find(c.what), std::string::npos) << "case " << k << ":\n"
                                                   << c.text << "\n=> " << msg;
  }
}

// The same, with the files' texts apart from what each must give.
struct Expected {
  int dim;
  const char* keys;
  const char* where;
  const char* what;
};
template <std::size_t N>
void expect_errors(const std::string& generator, const char* file, const std::string (&texts)[N],
                   const Expected (&expect)[N], const Box& box3, const Box& box2) {
  std::vector<BadCase> cases;
  for (std::size_t k = 0; k < N; ++k)
    cases.push_back(
        {texts[k].c_str(), expect[k].dim, expect[k].keys, expect[k].where, expect[k].what});
  expect_errors(generator, file, cases.data(), cases.size(), box3, box2);
}

TEST(XyzGenerator, ErrorsGiveFileAndLine) {
  const Box box3 = make_box(3, {0, 0, 0}, {10, 10, 10},
                            {Boundary::Periodic, Boundary::Periodic, Boundary::Periodic});
  const Box box2 = make_box(2, {0, 0}, {10, 10}, {Boundary::Periodic, Boundary::Periodic});
  const BadCase cases[] = {
      // truncated: the count promises more lines than there are
      {"3\nc\nAr 0 0 0\nAr 1 1 1\n", 3, "", "bad.xyz:4:", "ends after 2 of the 3 atom lines"},
      {"2\n", 3, "", "bad.xyz:1:", "ends after 0 of the 2"},
      // a count too small: an atom line where the next frame's count should be
      {"1\nc\nAr 0 0 0\nAr 1 1 1\n", 3, "",
       "bad.xyz:4:", "atom count of the frame before (line 1) too small"},
      {"x\nc\n", 3, "", "bad.xyz:1:", "expected the number of atoms"},
      {"0\nc\n", 3, "", "bad.xyz:1:", "has 0 atoms"},
      // not a number
      {"2\nc\nAr 0 0 0\nAr 1 x 1\n", 3, "", "bad.xyz:4:", "position y 'x' is not a number"},
      {"1\nc\nAr 0 0 1e999\n", 3, "", "bad.xyz:3:", "out of the range of a double"},
      {"1\nc\nAr 0 0 nan\n", 3, "", "bad.xyz:3:", "finite"},
      {"1\nProperties=species:S:1:pos:R:3:mass:R:1\nAr 0 0 0 -1\n", 3, "",
       "bad.xyz:3:", "mass -1 is not positive"},
      {"1\nProperties=species:S:1:pos:R:3:velo:R:3\nAr 0 0 0 1 2\n", 3, "",
       "bad.xyz:3:", "expected 7 values"},
      {"1\nc\nAr 0 0\n", 3, "", "bad.xyz:3:", "expected at least 4 values"},
      // the cell: triclinic, no match with [box], malformed
      {"1\nLattice=\"10 1 0 0 10 0 0 0 10\"\nAr 0 0 0\n", 3, "", "bad.xyz:2:", "triclinic"},
      {"1\nLattice=\"10 0 0 0 12 0 0 0 10\"\nAr 0 0 0\n", 3, "",
       "bad.xyz:2:", "hi = [10.0, 12.0, 10.0]"},
      {"1\nLattice=\"10 0 0 0 10 0 0 0 10\" pbc=\"T F T\"\nAr 0 0 0\n", 3, "",
       "bad.xyz:2:", "boundary = [\"periodic\", \"open\", \"periodic\"]"},
      {"1\nLattice=\"10 0 0 0 10 0 0 0 10\" Origin=\"1 0 0\"\nAr 1 0 0\n", 3, "",
       "bad.xyz:2:", "lo = [1.0, 0.0, 0.0]"},
      {"1\nLattice=\"10 0 0 0 10 0 0\"\nAr 0 0 0\n", 3, "", "bad.xyz:2:", "has 7 numbers"},
      {"1\nLattice=\"10 0 0 0 10 0 0 0 10\nAr 0 0 0\n", 3, "", "bad.xyz:2:", "unclosed"},
      {"1\nProperties=species:S:1:pos:R\nAr 0 0 0\n", 3, "", "bad.xyz:2:", "name:type:columns"},
      {"1\nProperties=species:S:1:pos:I:3\nAr 0 0 0\n", 3, "", "bad.xyz:2:", "'pos' is I:3"},
      {"1\nProperties=species:S:1\nAr\n", 3, "", "bad.xyz:2:", "no 'pos'"},
      {"1\nProperties=species:S:1:pos:R:2\nAr 0 0\n", 3, "", "bad.xyz:2:", "R:2 is for 2D runs"},
      // 2D
      {"1\nc\nAr 1 2 0.5\n", 2, "", "bad.xyz:3:", "z = 0.5 in a 2D run"},
      {"1\nProperties=species:S:1:pos:R:3:velo:R:3\nAr 1 2 0 0 0 1\n", 2, "",
       "bad.xyz:3:", "z velocity"},
      // species
      {"2\nc\nAr 0 0 0\n1 1 1 1\n", 3, "", "bad.xyz:4:", "is a number but line 3 gives a name"},
      {"2\nc\n0 0 0 0\nAr 1 1 1\n", 3, "", "bad.xyz:4:", "is a name but line 3 gives a number"},
      {"1\nc\nKr 0 0 0\n", 3, "types = [\"Ar\"]", "bad.xyz:3:", "'Kr' is not in types = [\"Ar\"]"},
      {"1\nc\n-1 0 0 0\n", 3, "", "bad.xyz:3:", "out of range"},
      // ids
      {"2\nProperties=species:S:1:pos:R:3:id:I:1\nAr 0 0 0 4\nAr 1 1 1 4\n", 3, "",
       "bad.xyz:4:", "id 4 appears twice (also on line 3)"},
      // frames
      {"1\nc\nAr 0 0 0\n", 3, "frame = 1", "bad.xyz:3:", "the file holds 1 frame(s)"},
      {"1\nc\nAr 0 0 0\n", 3, "frame = -2", "bad.xyz:3:", "the file holds 1 frame(s)"},
  };
  expect_errors("xyz", "bad.xyz", cases, sizeof cases / sizeof cases[0], box3, box2);
}

TEST(XyzGenerator, BadKeysAndMissingFile) {
  const std::string dir = test::scratch_dir("xyz-keys");
  const Box box =
      make_box(3, {0, 0, 0}, {1, 1, 1}, {Boundary::Open, Boundary::Open, Boundary::Open});
  EXPECT_NE(generate_error("xyz", "path = \"none.xyz\"", 3, box, dir).find("no such file"),
            std::string::npos);
  write_file(dir, "a.xyz", "1\nc\nAr 0 0 0\n");
  EXPECT_NE(generate_error("xyz", "path = \"a.xyz\"\ntypes = [\"1\"]", 3, box, dir)
                .find("not a species name"),
            std::string::npos);
  EXPECT_NE(generate_error("xyz", "path = \"a.xyz\"\ntypes = [\"Ar\", \"Ar\"]", 3, box, dir)
                .find("twice"),
            std::string::npos);
}

TEST(LammpsDataGenerator, ErrorsGiveFileAndLine) {
  const Box box3 = make_box(3, {0, 0, 0}, {10, 10, 10},
                            {Boundary::Periodic, Boundary::Periodic, Boundary::Wall});
  const Box box2 = make_box(2, {0, 0}, {10, 10}, {Boundary::Periodic, Boundary::Periodic});
  const std::string head =
      "title\n\n2 atoms\n2 atom types\n0 10 xlo xhi\n0 10 ylo yhi\n0 10 zlo zhi\n\n";
  // head: line 9 is the first section keyword, line 11 the first line of its section.
  const std::string cases_text[] = {
      // 0 truncated: the file ends inside Atoms
      head + "Atoms # atomic\n\n1 1 0 0 0\n",
      // 1 wrong count: more lines than the header says
      head + "Atoms # atomic\n\n1 1 0 0 0\n2 1 1 1 1\n3 1 2 2 2\n",
      // 2 wrong count: a section starts before Atoms has its lines
      head + "Atoms # atomic\n\n1 1 0 0 0\n\nVelocities\n\n1 0 0 0\n2 0 0 0\n",
      // 3 not a number
      head + "Atoms # atomic\n\n1 1 0 0 0\n2 1 1 abc 1\n",
      // 4 tilt
      "title\n2 atoms\n2 atom types\n0 10 xlo xhi\n0 10 ylo yhi\n0 10 zlo zhi\n0.5 0 0 xy xz yz\n",
      // 5 an atom style pardyn does not read
      head + "Atoms # charge\n\n1 1 0 0 0 0\n2 1 0 1 1 1\n",
      // 6 style key disagrees with the comment
      head + "Atoms # atomic\n\n1 1 0 0 0\n2 1 1 1 1\n",
      // 7 columns fit no style
      head + "Atoms\n\n1 1 0 0 0 0\n2 1 0 1 1 1\n",
      // 8 image flag on the walled z axis
      head + "Atoms # atomic\n\n1 1 0 0 0 0 0 1\n2 1 1 1 1 0 0 0\n",
      // 9 type beyond the atom types
      head + "Atoms # atomic\n\n1 1 0 0 0\n2 3 1 1 1\n",
      // 10 duplicate id
      head + "Atoms # atomic\n\n4 1 0 0 0\n4 1 1 1 1\n",
      // 11 velocities of an atom that is not there
      head + "Atoms # atomic\n\n1 1 0 0 0\n2 1 1 1 1\n\nVelocities\n\n1 0 0 0\n3 0 0 0\n",
      // 12 box bounds disagree with [box]
      "title\n2 atoms\n2 atom types\n0 10 xlo xhi\n-1 10 ylo yhi\n0 10 zlo zhi\n\nAtoms\n\n1 1 0 0 "
      "0\n2 1 1 1 1\n",
      // 13 2D: z not 0
      head + "Atoms # atomic\n\n1 1 0 0 0\n2 1 1 1 0.5\n",
      // 14 no atoms line in the header
      "title\n2 atom types\n\nAtoms\n\n1 1 0 0 0\n",
      // 15 a section pardyn does not know
      head + "Atoms # atomic\n\n1 1 0 0 0\n2 1 1 1 1\n\nEllipsoids\n\n1 1 1 1\n",
      // 16 Bonds without a bond count in the header
      head + "Atoms # atomic\n\n1 1 0 0 0\n2 1 1 1 1\n\nBonds\n\n1 1 1 2\n",
      // 17 a header line that is not one
      "title\n2 atoms\n2 atom types\n0 10 xlo\n",
      // 18 a mass that is not positive
      head + "Masses\n\n1 1.0\n2 0\n",
      // 19 a 2D file with a velocity along z
      head + "Atoms # atomic\n\n1 1 0 0 0\n2 1 1 1 0\n\nVelocities\n\n1 0 0 0\n2 0 0 1\n",
      // 20 the Velocities section ends early (the file ends)
      head + "Atoms # atomic\n\n1 1 0 0 0\n2 1 1 1 1\n\nVelocities\n\n1 0 0 0\n",
      // 21 full style with a non-number charge
      head + "Atoms # full\n\n1 1 1 q 0 0 0\n2 1 1 0 1 1 1\n",
  };
  const Expected expect[] = {
      {3, "", "bad.data:11:", "ends after 1 of the 2 lines of Atoms"},
      {3, "", "bad.data:13:", "has more than the 2 lines"},
      {3, "", "bad.data:13:", "ends after 1 of its 2 lines"},
      {3, "", "bad.data:12:", "y 'abc' is not a number"},
      {3, "", "bad.data:7:", "triclinic"},
      {3, "", "bad.data:9:", "atom style 'charge'"},
      {3, "style = \"full\"", "bad.data:9:", "says its style is 'atomic' but style = \"full\""},
      {3, "", "bad.data:11:", "6 values: neither atom style atomic"},
      {3, "", "bad.data:11:", "image flag iz = 1 but the scenario's z axis is wall"},
      {3, "", "bad.data:12:", "atom type 3 is out of range"},
      {3, "", "bad.data:12:", "atom id 4 appears twice in Atoms (lines 11 and 12)"},
      {3, "", "bad.data:17:", "atom id 3 is not in the Atoms section"},
      {3, "", "bad.data:6:", "lo = [0.0, -1.0, 0.0]"},
      {2, "", "bad.data:12:", "z = 0.5 in a 2D run"},
      {3, "", "bad.data:", "no atom count"},
      {3, "", "bad.data:14:", "section 'Ellipsoids' is not one pardyn reads"},
      {3, "", "bad.data:14:", "the header gives no bonds count"},
      {3, "", "bad.data:4:", "is not a header line"},
      {3, "", "bad.data:12:", "mass 0 is not positive"},
      {2, "", "bad.data:17:", "vz = 1 in a 2D run"},
      {3, "", "bad.data:16:", "ends after 1 of the 2 lines of Velocities"},
      {3, "", "bad.data:11:", "charge q 'q' is not a number"},
  };
  expect_errors("lammps_data", "bad.data", cases_text, expect, box3, box2);
}

TEST(LammpsDataGenerator, SkipsTopologyAndTakesTheMassKey) {
  const std::string dir = test::scratch_dir("lammps-data-topology");
  // A full-style file with bonds and coefficients (skipped), comments, no Masses (mass key), a
  // shifted box, and the header counts of the skipped sections.
  write_file(dir, "a.data",
             "# a title that looks like a comment\n"
             "3 atoms # comment\n2 atom types\n2 bonds\n1 bond types\n\n"
             "-5 5 xlo xhi\n-2.5 7.5 ylo yhi\n1 2 zlo zhi\n0 0 0 xy xz yz\n\n"
             "Pair Coeffs # lj/cut\n\n1 1.0 1.0\n2 1.0 1.0\n\n"
             "Bond Coeffs\n\n1 100 1.0\n\n"
             "Atoms # full\n\n"
             "3 1 2 -0.5 4.5 7.0 1.5 -1 0 0\n"
             "1 1 1 0.5 -4.5 -2.5 1.25 0 1 0 # a comment\n"
             "2 1 1 0.0 0 0 1.75\n\n"
             "Bonds\n\n1 1 1 2\n2 1 2 3\n");
  const Box box = make_box(3, {-5, -2.5, 1}, {5, 7.5, 2},
                           {Boundary::Periodic, Boundary::Periodic, Boundary::Wall});
  const HostParticles p = generate("lammps_data", "path = \"a.data\"\nmass = 0.75", 3, box, dir);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p.type, (std::vector<std::int32_t>{0, 0, 1}));
  EXPECT_EQ(p.x[0], (std::vector<double>{-4.5, 0, 4.5}));
  EXPECT_EQ(p.x[2], (std::vector<double>{1.25, 1.75, 1.5}));
  EXPECT_EQ(p.image[0], (std::vector<std::int32_t>{0, 0, -1}));
  EXPECT_EQ(p.image[1], (std::vector<std::int32_t>{1, 0, 0}));
  EXPECT_EQ(p.mass, (std::vector<double>{0.75, 0.75, 0.75}));
  EXPECT_EQ(p.v[0], (std::vector<double>{0, 0, 0}));
}

// The writers refuse what they cannot write, with the key to change: the message of a 2D run of
// `particles` (a [[particles]] block or several) and `output` in a 4 x 4 box.
std::string run_error(const std::string& name, const std::string& particles,
                      const std::string& output) {
  const std::string dir = test::scratch_dir(name);
  std::ofstream(dir + "/s.toml")
      << "[simulation]\ndimension = 2\nsteps = 0\n[box]\nlo = [0.0, 0.0]\nhi = [4.0, 4.0]\n"
      << particles << output;
  Scenario sc = load_scenario(dir + "/s.toml", {}, test::registry());
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  Simulation sim(sc, test::registry(), opt);
  try {
    sim.run();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(XyzObserver, SpeciesMustNameEveryType) {
  const std::string msg =
      run_error("xyz-species", "[[particles]]\ngenerator = \"uniform\"\ncount = 3\ntype = 2\n",
                "[[output]]\ntype = \"xyz\"\nspecies = [\"Ar\"]\n");
  EXPECT_NE(msg.find("has type 2, which species = [...] does not name"), std::string::npos)
      << "a type without a species name was written: " << msg;
  // Names that readers would take for type numbers, or that are not one word, are refused.
  for (const char* bad : {"[\"1\"]", "[\"Ar Kr\"]", "[\"\"]"}) {
    try {
      test::registry().make_observer(
          "xyz", test::params_for(PluginKind::Observer, "xyz", std::string("species = ") + bad),
          RunInfo{});
      ADD_FAILURE() << "species = " << bad << " was taken";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("species name"), std::string::npos) << e.what();
    }
  }
}

TEST(XyzGenerator, OvitoNamesWinOverAseNames) {
  // pardyn writes velo and mass (OVITO) and momenta and masses (ASE); velo and mass are read
  // (exact), the others skipped. Here they disagree, to show which is taken.
  const std::string dir = test::scratch_dir("xyz-both-names");
  write_file(dir, "a.xyz",
             "1\nProperties=species:S:1:pos:R:3:momenta:R:3:masses:R:1:velo:R:3:mass:R:1\n"
             "Ar 1 2 3  8 8 8  4  0.5 0.25 -1  2\n");
  const Box box =
      make_box(3, {0, 0, 0}, {9, 9, 9}, {Boundary::Open, Boundary::Open, Boundary::Open});
  const HostParticles p = generate("xyz", "path = \"a.xyz\"", 3, box, dir);
  EXPECT_EQ(p.mass, (std::vector<double>{2}));
  EXPECT_EQ(p.v[0], (std::vector<double>{0.5}));
  EXPECT_EQ(p.v[2], (std::vector<double>{-1}));
  // ASE's names alone: velocities are momenta / masses.
  write_file(dir, "b.xyz",
             "1\nProperties=species:S:1:pos:R:3:masses:R:1:momenta:R:3\nAr 1 2 3  4  8 2 -4\n");
  const HostParticles q = generate("xyz", "path = \"b.xyz\"", 3, box, dir);
  EXPECT_EQ(q.mass, (std::vector<double>{4}));
  EXPECT_EQ(q.v[0], (std::vector<double>{2}));
  EXPECT_EQ(q.v[2], (std::vector<double>{-1}));
}

// -------------------------------------------------------------------------------------------------
// The lammps_dump generator on dumps as LAMMPS writes them.

const char* const kDumpAtom =  // dump atom with dump_modify image yes (and units, time)
    "ITEM: UNITS\nlj\nITEM: TIME\n0.5\nITEM: TIMESTEP\n100\nITEM: NUMBER OF ATOMS\n3\n"
    "ITEM: BOX BOUNDS pp pp ff\n0 10\n-5 5\n0 4\n"
    "ITEM: ATOMS id type xs ys zs ix iy iz\n"
    "3 2 0.25 0.5 0.75 1 0 0\n1 1 0.1 0.2 0.5 0 -2 0\n2 1 0.5 0.5 0.5 0 0 0\n";
const char* const kDumpUnwrapped =  // dump custom with unwrapped positions and masses
    "ITEM: TIMESTEP\n200\nITEM: NUMBER OF ATOMS\n3\nITEM: BOX BOUNDS pp pp ff\n0 10\n-5 5\n0 4\n"
    "ITEM: ATOMS id type xu yu zu vx vy vz mass\n"
    "1 1 12.5 -7 1 0.5 0 0 2\n2 1 -0.5 4 3 0 1 0 2\n3 2 5 5.5 3.5 0 0 -1 4\n";

TEST(LammpsDumpGenerator, ScaledUnwrappedAndChosenFrame) {
  const std::string dir = test::scratch_dir("dump-reader");
  write_file(dir, "a.lammpstrj", std::string(kDumpAtom) + kDumpUnwrapped);
  const Box box =
      make_box(3, {0, -5, 0}, {10, 5, 4}, {Boundary::Periodic, Boundary::Periodic, Boundary::Wall});
  // The first frame (by index and by step): scaled positions, image flags, masses per type.
  for (const char* pick : {"frame = 0", "step = 100"}) {
    const HostParticles p =
        generate("lammps_dump", std::string("path = \"a.lammpstrj\"\nmasses = [1.5, 3.0]\n") + pick,
                 3, box, dir);
    ASSERT_EQ(p.size(), 3u) << pick;
    EXPECT_EQ(p.type, (std::vector<std::int32_t>{0, 0, 1}));  // ordered by id
    EXPECT_EQ(p.x[0], (std::vector<double>{1, 5, 2.5}));
    EXPECT_EQ(p.x[1], (std::vector<double>{-3, 0, 0}));
    EXPECT_EQ(p.x[2], (std::vector<double>{2, 2, 3}));
    EXPECT_EQ(p.image[0], (std::vector<std::int32_t>{0, 0, 1}));
    EXPECT_EQ(p.image[1], (std::vector<std::int32_t>{-2, 0, 0}));
    EXPECT_EQ(p.mass, (std::vector<double>{1.5, 1.5, 3.0}));
    EXPECT_EQ(p.v[0], (std::vector<double>{0, 0, 0}));
  }
  // The last frame (the default): unwrapped positions wrapped into the periodic axes, the box
  // lengths taken off counted as images; the wall axis as it is; the mass column.
  const HostParticles p = generate("lammps_dump", "path = \"a.lammpstrj\"", 3, box, dir);
  EXPECT_EQ(p.x[0], (std::vector<double>{2.5, 9.5, 5}));
  EXPECT_EQ(p.image[0], (std::vector<std::int32_t>{1, -1, 0}));
  EXPECT_EQ(p.x[1], (std::vector<double>{3, 4, -4.5}));
  EXPECT_EQ(p.image[1], (std::vector<std::int32_t>{-1, 0, 1}));
  EXPECT_EQ(p.x[2], (std::vector<double>{1, 3, 3.5}));
  EXPECT_EQ(p.image[2], (std::vector<std::int32_t>{0, 0, 0}));
  EXPECT_EQ(p.v[0], (std::vector<double>{0.5, 0, 0}));
  EXPECT_EQ(p.v[2], (std::vector<double>{0, 0, -1}));
  EXPECT_EQ(p.mass, (std::vector<double>{2, 2, 4}));
  // A 2D dump (z = 0, z bounds -0.5 0.5), without ids (the file's order), types or velocities:
  // `mass`; shrink-wrapped y bounds are not compared with [box].
  write_file(dir, "b.lammpstrj",
             "ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n2\nITEM: BOX BOUNDS pp mm pp\n"
             "0 4\n0.5 2.5\n-0.5 0.5\nITEM: ATOMS x y z\n3 2.5 0\n1 0.5 0\n");
  const Box box2 = make_box(2, {0, 0}, {4, 4}, {Boundary::Periodic, Boundary::Open});
  const HostParticles q =
      generate("lammps_dump", "path = \"b.lammpstrj\"\nmass = 0.5", 2, box2, dir);
  EXPECT_EQ(q.x[0], (std::vector<double>{3, 1}));
  EXPECT_EQ(q.x[1], (std::vector<double>{2.5, 0.5}));
  EXPECT_EQ(q.type, (std::vector<std::int32_t>{0, 0}));
  EXPECT_EQ(q.mass, (std::vector<double>{0.5, 0.5}));
}

TEST(LammpsDumpGenerator, ErrorsGiveFileAndLine) {
  const Box box3 = make_box(3, {0, 0, 0}, {10, 10, 10},
                            {Boundary::Periodic, Boundary::Periodic, Boundary::Wall});
  const Box box2 = make_box(2, {0, 0}, {10, 10}, {Boundary::Periodic, Boundary::Periodic});
  // A frame of `n` atoms with these columns and bounds flags, then its atom lines.
  auto frame = [](int n, const std::string& columns, const std::string& rows,
                  const std::string& flags = "pp pp ff", const std::string& x = "0 10") {
    return "ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n" + std::to_string(n) +
           "\nITEM: BOX BOUNDS " + flags + "\n" + x + "\n0 10\n0 10\nITEM: ATOMS " + columns +
           "\n" + rows;
  };
  const std::string texts[] = {
      frame(2, "id type x y z", "1 1 0 0 0\n"),
      frame(1, "id type x y z", "1 1 0 0\n"),
      frame(1, "id type vx vy vz", "1 1 0 0 0\n"),
      "ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n1\nITEM: BOX BOUNDS xy xz yz pp pp ff\n"
      "0 10 1\n0 10 0\n0 10 0\nITEM: ATOMS id type x y z\n1 1 0 0 0\n",
      "ITEM: TIMESTEP\n0\nITEM: ENTRIES c_1\n",
      frame(1, "id type x y z", "1 1 0 0 0\n", "pp pp ff", "0 12"),
      frame(1, "id type x y z", "1 1 0 0 0\n", "pp pp pp"),
      frame(1, "id type x y z ix iy iz", "1 1 0 0 0 0 0 1\n"),
      frame(1, "id type x y z", "1 2 0 0 0\n"),
      frame(1, "id type x y z", "1 1 0 0 0\n"),
      frame(1, "id type x y z", "1 1 0 0 0\n"),
      frame(2, "id type x y z", "1 1 0 0 0\n1 1 1 1 1\n"),
      frame(1, "id type x y z", "1 1 1 1 0.5\n", "pp pp pp"),
      frame(1, "id type x y z", "1 1 q 1 1\n"),
      "hello\n",
      frame(1, "id type x y z", "1 0 0 0 0\n"),
  };
  const Expected expect[] = {
      {3, "", "bad.lammpstrj:10:", "ends after 1 of the 2 atom lines of frame 0"},
      {3, "", "bad.lammpstrj:10:", "4 values; ITEM: ATOMS names 5 columns"},
      {3, "", "bad.lammpstrj:9:", "has no positions"},
      {3, "", "bad.lammpstrj:9:", "triclinic"},
      {3, "", "bad.lammpstrj:3:", "'ITEM: ENTRIES c_1' is not an item of a LAMMPS atom dump"},
      {3, "", "bad.lammpstrj:9:", "hi = [12.0, 10.0, 10.0]"},
      {3, "", "bad.lammpstrj:9:", "boundary = [\"periodic\", \"periodic\", \"periodic\"]"},
      {3, "", "bad.lammpstrj:10:", "image flag iz = 1 but the scenario's z axis is wall"},
      {3, "masses = [1.0]", "bad.lammpstrj:10:", "atom type 2 but masses gives 1"},
      {3, "frame = 3", "bad.lammpstrj:10:", "the file holds 1 frame(s)"},
      {3, "step = 7", "bad.lammpstrj:10:", "no frame has TIMESTEP 7"},
      {3, "", "bad.lammpstrj:11:", "atom id 1 appears twice"},
      {2, "", "bad.lammpstrj:10:", "z = 0.5 in a 2D run"},
      {3, "", "bad.lammpstrj:10:", "x 'q' is not a number"},
      {3, "", "bad.lammpstrj:1:", "expected an 'ITEM:' line"},
      {3, "", "bad.lammpstrj:10:", "atom type 0 is out of range"},
  };
  expect_errors("lammps_dump", "bad.lammpstrj", texts, expect, box3, box2);
}

// -------------------------------------------------------------------------------------------------
// The lammps_data observer refuses what atom style atomic cannot hold.

TEST(LammpsDataObserver, OneMassPerType) {
  const std::string msg =
      run_error("data-writer-masses",
                "[[particles]]\ngenerator = \"uniform\"\ncount = 3\nmass = 1.0\n"
                "[[particles]]\ngenerator = \"uniform\"\ncount = 2\nmass = 2.0\n",
                "[[output]]\ntype = \"lammps_data\"\n");
  EXPECT_NE(msg.find("are both of type 0 but their masses differ (1 and 2)"), std::string::npos)
      << "particles of one type with two masses were written: " << msg;
}

// -------------------------------------------------------------------------------------------------
// [box] from = "file": the box of a data file, a dump or an XYZ file.

Scenario box_scenario(const std::string& dir, const std::string& box, int dim = 3) {
  std::ofstream(dir + "/s.toml") << "[simulation]\ndimension = " << dim << "\n[box]\n"
                                 << box << "[[particles]]\ngenerator = \"uniform\"\ncount = 1\n";
  return load_scenario(dir + "/s.toml", {}, test::registry());
}

std::string box_error(const std::string& dir, const std::string& box, int dim = 3) {
  try {
    box_scenario(dir, box, dim);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void expect_box(const Scenario& sc, std::vector<double> lo, std::vector<double> hi,
                std::vector<Boundary> boundary) {
  for (int d = 0; d < sc.dim; ++d) {
    EXPECT_EQ(sc.box.lo[d], lo[std::size_t(d)]) << "axis " << d;
    EXPECT_EQ(sc.box.hi[d], hi[std::size_t(d)]) << "axis " << d;
    EXPECT_EQ(sc.box.boundary[d], boundary[std::size_t(d)]) << "axis " << d;
  }
}

TEST(BoxFromFile, DataDumpAndXyz) {
  const std::string dir = test::scratch_dir("box-from");
  const auto P = Boundary::Periodic, W = Boundary::Wall, O = Boundary::Open;
  // A data file: the bounds; its boundary from [box] (a data file has none).
  write_file(dir, "a.data",
             "title\n\n2 atoms\n1 atom types\n-1 4.5 xlo xhi\n0 5 ylo yhi\n2 3 zlo zhi\n\n"
             "Atoms\n\n1 1 0 1 2.5\n2 1 1 1 2.5\n");
  Scenario sc =
      box_scenario(dir, "from = \"a.data\"\nboundary = [\"periodic\", \"wall\", \"open\"]\n");
  expect_box(sc, {-1, 0, 2}, {4.5, 5, 3}, {P, W, O});
  ASSERT_FALSE(sc.notes.empty());
  EXPECT_NE(sc.notes.back().find("[box] from a.data (a LAMMPS data file): lo = [-1, 0, 2], hi = "
                                 "[4.5, 5, 3]"),
            std::string::npos)
      << sc.notes.back();
  // The resolved configuration states the box, not the file: it runs without it.
  EXPECT_NE(sc.resolved_toml.find("hi = [ 4.5, 5.0, 3.0 ]"), std::string::npos) << sc.resolved_toml;
  EXPECT_EQ(sc.resolved_toml.find("from ="), std::string::npos) << sc.resolved_toml;
  EXPECT_NE(box_error(dir, "from = \"a.data\"\n").find("does not say which axes are periodic"),
            std::string::npos);

  // A dump: the bounds and flags of the last frame by default, or of `frame`; [box] boundary,
  // when given, wins over the flags.
  write_file(dir, "a.lammpstrj",
             std::string(kDumpAtom) +
                 "ITEM: TIMESTEP\n300\nITEM: NUMBER OF ATOMS\n1\n"
                 "ITEM: BOX BOUNDS pp ff mm\n0 11\n-5 6\n1 3\n"
                 "ITEM: ATOMS id type x y z\n1 1 1 1 2\n");
  expect_box(box_scenario(dir, "from = \"a.lammpstrj\"\n"), {0, -5, 1}, {11, 6, 3}, {P, W, O});
  expect_box(box_scenario(dir, "from = \"a.lammpstrj\"\nframe = 0\n"), {0, -5, 0}, {10, 5, 4},
             {P, P, W});
  expect_box(box_scenario(dir, "from = \"a.lammpstrj\"\nboundary = \"periodic\"\n"), {0, -5, 1},
             {11, 6, 3}, {P, P, P});

  // An extended XYZ file: Lattice, Origin and pbc (F: open); in 2D its x and y.
  write_file(dir, "a.xyz",
             "1\nLattice=\"4 0 0 0 5 0 0 0 1\" Origin=\"-2 0 -0.5\" pbc=\"T F F\"\nAr 0 1 0\n"
             "1\nLattice=\"6 0 0 0 5 0 0 0 1\" Origin=\"-3 0 -0.5\" pbc=\"T T F\"\nAr 0 1 0\n");
  expect_box(box_scenario(dir, "from = \"a.xyz\"\n", 2), {-3, 0}, {3, 5}, {P, P});
  expect_box(box_scenario(dir, "from = \"a.xyz\"\nframe = -2\n", 2), {-2, 0}, {2, 5}, {P, O});
}

TEST(BoxFromFile, Errors) {
  const std::string dir = test::scratch_dir("box-from-errors");
  write_file(dir, "a.data", "title\n\n1 atoms\n1 atom types\n0 4 xlo xhi\n\nAtoms\n\n1 1 0 0 0\n");
  write_file(dir, "plain.xyz", "1\nno cell here\nAr 0 1 0\n");
  write_file(dir, "notes.txt", "hello world\n");
  write_file(dir, "cut.lammpstrj", "ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n");
  const std::pair<const char*, const char*> cases[] = {
      {"from = \"a.data\"\nlo = [0.0, 0.0, 0.0]\nboundary = \"periodic\"\n", "s.toml:5:"},
      {"from = \"a.data\"\nlo = [0.0, 0.0, 0.0]\nboundary = \"periodic\"\n",
       "[box] gives both from and lo: the box comes from the file"},
      {"from = \"none.data\"\n", "[box] from: no such file"},
      {"from = \"notes.txt\"\n", "'notes.txt' is not a file whose box pardyn reads"},
      {"frame = 2\nlo = [0.0, 0.0, 0.0]\n",
       "[box] frame picks the frame of the file given by from"},
      {"from = \"plain.xyz\"\n", "plain.xyz:2: frame 0 has no Lattice"},
      {"from = \"cut.lammpstrj\"\n",
       "cut.lammpstrj:3: ITEM: NUMBER OF ATOMS is not followed by a whole number"},
  };
  for (const auto& [box, what] : cases) {
    const std::string msg = box_error(dir, box);
    EXPECT_NE(msg.find(what), std::string::npos) << box << "=> " << msg;
  }
}

}  // namespace

// Frames of many particles are formatted in blocks of rows on several threads and written in
// order: 50,000 particles (four blocks) read back in id order, every value as the run held it.
TEST(FormatsRoundTrip, ManyParticlesInOrder) {
  const std::string dir = test::scratch_dir("formats-many");
  std::ofstream(dir + "/s.toml")
      << "[simulation]\ndimension = 2\nsteps = 0\nseed = 9\n[box]\nlo = [0.0, 0.0]\n"
         "hi = [300.0, 300.0]\nboundary = \"periodic\"\n"
         "[[particles]]\ngenerator = \"uniform\"\ncount = 50000\ntemperature = 1.0\n"
         "[[output]]\ntype = \"xyz\"\n[[output]]\ntype = \"lammps_dump\"\n";
  Scenario sc = load_scenario(dir + "/s.toml", {}, test::registry());
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  HostParticles held(2);
  {
    Simulation sim(sc, test::registry(), opt);
    sim.run();
    sim.store().download(held, ParticleStore::kAll);
  }
  const Box box = make_box(2, {0, 0}, {300, 300}, {Boundary::Periodic, Boundary::Periodic});
  const HostParticles back =
      generate("xyz", "path = \"" + dir + "/out/trajectory.xyz\"", 2, box, dir);
  ASSERT_EQ(back.size(), 50000u);
  std::vector<std::size_t> at(held.size());
  for (std::size_t i = 0; i < held.size(); ++i) at[std::size_t(held.id[i])] = i;
  for (std::size_t k = 0; k < back.size(); ++k) {
    const std::size_t i = at[k];  // the xyz rows are in id order
    ASSERT_EQ(back.x[0][k], held.x[0][i]) << "row " << k;
    ASSERT_EQ(back.x[1][k], held.x[1][i]) << "row " << k;
    ASSERT_EQ(back.v[0][k], held.v[0][i]) << "row " << k;
    ASSERT_EQ(back.v[1][k], held.v[1][i]) << "row " << k;
  }
  // The dump's rows: ids 1 .. n in order.
  std::ifstream dump(dir + "/out/dump.lammpstrj");
  std::string line;
  while (std::getline(dump, line) && line.rfind("ITEM: ATOMS", 0) != 0) {}
  for (std::int64_t id = 1; id <= 50000; ++id) {
    ASSERT_TRUE(std::getline(dump, line));
    ASSERT_EQ(line.substr(0, line.find(' ')), std::to_string(id));
  }
}
