// SPDX-License-Identifier: BSD-3-Clause
// Whole simulation steps through pardyn::Simulation, as `pardyn run` takes them: leapfrog +
// cell_list + a pair law, with thermo only at the first and last step. Prints steps/s and
// particle-steps/s of the timed run (a short warm-up run first takes the GPU off its idle clock and
// loads every module).
//
//   bench_cell_list lj       [--backend cuda|cpu] [--precision float|double] [--cells C] [--steps
//   S]
//                            [--skin 0.3] [--threads T]
//                            [--law lennard_jones|expression|interpreted|table|table_linear]
//                            [--table-n 1000]
//     LJ 3D: fcc rho = 0.8442 with C^3 unit cells (4 C^3 atoms; --cells 20,20,40: 64,000), T
//     = 1.44, rc = 2.5, dt = 0.005, periodic (the LAMMPS `in.lj` problem at C = 20: 32,000 atoms).
//   bench_cell_list soft_gas [--backend ...] [--side S] [--steps ...] [--near 1] [--cell_size W]
//                            [--law soft_gas|expression|interpreted] [--scheme cell_list|tree]
//     2D real gas (soft_gas, seed 003): S^2 particles on a square lattice of spacing 4 in a walled
//     box, T = 0.05, far zones (or --scheme tree: the tree's defaults).
//   bench_cell_list gravity  [--backend ...] [--count N] [--steps ...]
//     3D all-pairs gravity on a Plummer sphere of N particles (eps 0.01, leapfrog dt 0.001).
//   Every mode: [--warmup W] steps first (default 20), and under `mpirun -np K` a parallel run
//   (all-pairs ring, or the cell list's domain decomposition); rank 0 prints. `loop` is the time of
//   the steps alone, `run` includes the initial forces (and the ring's speed measurement), `cpu`
//   is the CPU time of `run` (the process's, every thread's: on a shared machine it moves less
//   than the wall time; rank 0's own with MPI).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "pardyn/app/config.hpp"
#include "pardyn/app/registry.hpp"
#include "pardyn/app/simulation.hpp"
#include "parallel/communicator.hpp"
#include "table/table_file.hpp"

using namespace pardyn;

namespace {

// Full precision: a box side printed with 6 digits can lose the last lattice cell.
std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

std::string arg(const std::map<std::string, std::string>& a, const std::string& k,
                const std::string& def) {
  auto it = a.find(k);
  return it == a.end() ? def : it->second;
}

// --law lennard_jones (the built-in law, default), expression (the same law as a formula, compiled
// at run time) or interpreted (the formula, interpreted): docs/formulas.md.
// table (spline) and table_linear: the same law from a LAMMPS table (docs/potentials.md#table) of
// --table-n points (default 1000) evenly spaced in r^2 from r = 0.5 to the cut-off, written next to
// the scenario.
std::string lj_law(const std::map<std::string, std::string>& a) {
  const std::string law = arg(a, "law", "lennard_jones");
  if (law == "lennard_jones") return "type = \"lennard_jones\"\nepsilon = 1.0\nsigma = 1.0\n";
  if (law == "table" || law == "table_linear") {
    const std::string dir = std::filesystem::temp_directory_path().string() + "/pardyn-bench-cell";
    parallel::Communicator* comm = parallel::world();
    if (!comm || comm->rank() == 0) {
      std::filesystem::create_directories(dir);
      std::ofstream out(dir + "/lj.table");
      potentials::table_file::write(out, "LJ", std::stoi(arg(a, "table-n", "1000")), "RSQ", 0.5,
                                    2.5, [](double r, double& e, double& f) {
                                      const double i6 = std::pow(r, -6);
                                      e = 4 * (i6 * i6 - i6);
                                      f = 24 * (2 * i6 * i6 - i6) / r;
                                    });
    }
    return "type = \"table\"\nfile = \"lj.table\"\nstyle = \"" +
           std::string(law == "table" ? "spline" : "linear") + "\"\n";
  }
  if (law != "expression" && law != "interpreted")
    throw Error("--law must be lennard_jones, expression, interpreted, table or table_linear");
  return "type = \"expression\"\nenergy = \"4*epsilon*((sigma/r)^12 - (sigma/r)^6)\"\n"
         "parameters = { epsilon = 1.0, sigma = 1.0 }\nengine = \"" +
         std::string(law == "expression" ? "compiled" : "interpreted") + "\"\n";
}

std::string lj_scenario(const std::map<std::string, std::string>& a, int steps) {
  // --cells C (a cube of C^3 fcc cells) or --cells CX,CY,CZ
  int c[3];
  const std::string cs = arg(a, "cells", "20");
  if (std::sscanf(cs.c_str(), "%d,%d,%d", &c[0], &c[1], &c[2]) != 3)
    c[0] = c[1] = c[2] = std::stoi(cs);
  const double cell = std::cbrt(4.0 / 0.8442);
  const double L[3] = {c[0] * cell, c[1] * cell, c[2] * cell};
  return "[simulation]\ndimension = 3\nprecision = \"" + arg(a, "precision", "float") +
         "\"\nbackend = \"" + arg(a, "backend", "cuda") + "\"\nsteps = " + std::to_string(steps) +
         "\nseed = 87287\nthreads = " + arg(a, "threads", "0") +
         "\n[box]\nlo = [0.0, 0.0, 0.0]\nhi = [" + num(L[0]) + ", " + num(L[1]) + ", " + num(L[2]) +
         "]\nboundary = \"periodic\"\n[[particles]]\ngenerator = \"lattice\"\nkind = \"fcc\"\n"
         "density = 0.8442\ntemperature = 1.44\n[[potential]]\n" +
         lj_law(a) + "rcut = 2.5\nshift = false\nscheme = { type = \"cell_list\", skin = " +
         arg(a, "skin", "0.3") +
         " }\n[integrator]\ntype = \"leapfrog\"\ndt = 0.005\n"
         "[[output]]\ntype = \"thermo\"\ninterval = " +
         std::to_string(steps) + "\n";
}

// --law soft_gas (built in, default), expression or interpreted: soft_gas's defaults as a formula
// with the log kernel (docs/formulas.md).
std::string gas_law(const std::map<std::string, std::string>& a) {
  const std::string law = arg(a, "law", "soft_gas");
  if (law == "soft_gas") return "type = \"soft_gas\"\n";
  if (law != "expression" && law != "interpreted")
    throw Error("--law must be soft_gas, expression or interpreted");
  return "type = \"expression\"\n"
         "parameters = { a = 0.01, B = 3.0, a2 = 2.99, rc = 2.0, eps = 0.1 }\n"
         "energy = \"B/2*(1/(r^2 + eps^2) - 1/rc^2) + a2/2*log((r^2 + eps^2)/rc^2)\"\n"
         "long_range = { kernel = \"log\", strength = \"a\", softening = \"eps\", r0 = \"rc\", "
         "radius = \"sqrt(rc^2 - eps^2)\" }\nengine = \"" +
         std::string(law == "expression" ? "compiled" : "interpreted") + "\"\n";
}

std::string gas_scenario(const std::map<std::string, std::string>& a, int steps) {
  const int side = std::stoi(arg(a, "side", "1000"));
  const double L = 4.0 * side;
  const std::string kind = arg(a, "scheme", "cell_list");
  if (kind != "cell_list" && kind != "tree") throw Error("--scheme must be cell_list or tree");
  std::string scheme = "{ type = \"cell_list\", near = " + arg(a, "near", "1");
  if (a.count("cell_size")) scheme += ", cell_size = " + a.at("cell_size");
  scheme += " }";
  if (kind == "tree") scheme = "{ type = \"tree\" }";  // the tree's defaults
  return "[simulation]\ndimension = 2\nprecision = \"" + arg(a, "precision", "float") +
         "\"\nbackend = \"" + arg(a, "backend", "cuda") + "\"\nsteps = " + std::to_string(steps) +
         "\nseed = 3\nthreads = " + arg(a, "threads", "0") + "\n[box]\nlo = [0.0, 0.0]\nhi = [" +
         num(L) + ", " + num(L) +
         "]\nboundary = \"wall\"\n[[particles]]\ngenerator = \"lattice\"\nkind = \"square\"\n"
         "spacing = 4.0\ntemperature = 0.05\n[[potential]]\n" +
         gas_law(a) + "scheme = " + scheme +
         "\n[integrator]\ntype = \"leapfrog\"\ndt = 0.01\n[[output]]\ntype = \"thermo\"\n"
         "interval = " +
         std::to_string(steps) + "\n";
}

std::string gravity_scenario(const std::map<std::string, std::string>& a, int steps) {
  return "[simulation]\ndimension = 3\nprecision = \"" + arg(a, "precision", "float") +
         "\"\nbackend = \"" + arg(a, "backend", "cuda") + "\"\nsteps = " + std::to_string(steps) +
         "\nseed = 11\nthreads = " + arg(a, "threads", "0") +
         "\n[[particles]]\ngenerator = \"plummer\"\ncount = " + arg(a, "count", "1048576") +
         "\ntotal_mass = 1.0\nscale_radius = 0.589\n[[potential]]\ntype = \"gravity\"\nG = 1.0\n"
         "eps = 0.01\nscheme = \"all_pairs\"\n[integrator]\ntype = \"leapfrog\"\ndt = 0.001\n"
         "[[output]]\ntype = \"thermo\"\ninterval = " +
         std::to_string(steps) + "\n";
}

// The process's CPU time (every thread's), in seconds.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

double run(Registry& reg, const std::string& toml, const std::string& dir, std::size_t& n,
           std::uint64_t& steps, double& loop, double& cpu) {
  parallel::Communicator* comm = parallel::world();
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/scenario.toml";
  if (!comm || comm->rank() == 0) std::ofstream(path) << toml;
  if (comm) comm->barrier();
  Scenario sc = load_scenario(path, {}, reg);
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  Simulation sim(sc, reg, opt);
  const double c0 = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  sim.run();
  const auto t1 = std::chrono::steady_clock::now();
  cpu = cpu_seconds() - c0;
  n = sim.store().size();
  if (comm) {
    double all = double(n);
    comm->sum(&all, 1);
    n = std::size_t(all);
  }
  steps = sim.steps_done();
  loop = sim.loop_seconds();
  return std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  parallel::init(&argc, &argv);
  struct Finalize {
    ~Finalize() { parallel::finalize(); }
  } finalize;
  parallel::Communicator* comm = parallel::world();
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s lj|soft_gas [--key value ...]\n", argv[0]);
    return 2;
  }
  const std::string what = argv[1];
  std::map<std::string, std::string> a;
  for (int i = 2; i + 1 < argc; i += 2) a[std::string(argv[i]).substr(2)] = argv[i + 1];
  try {
    Registry reg;
    reg.load_path(Registry::builtin_plugin_dir());
    reg.throw_if_refused();
    const int steps = std::stoi(arg(a, "steps", what == "lj" ? "1000" : "100"));
    const int warm = std::stoi(arg(a, "warmup", "20"));
    auto make = what == "lj" ? lj_scenario : what == "gravity" ? gravity_scenario : gas_scenario;
    const std::string dir = std::filesystem::temp_directory_path().string() + "/pardyn-bench-cell";
    std::size_t n = 0;
    std::uint64_t done = 0;
    double loop = 0, cpu = 0;
    if (warm > 0) run(reg, make(a, warm), dir, n, done, loop, cpu);
    const double t = run(reg, make(a, steps), dir, n, done, loop, cpu);
    if (!comm || comm->rank() == 0)
      std::printf(
          "%s backend=%s precision=%s ranks=%d N=%zu steps=%llu run=%.4f s loop=%.4f s cpu=%.4f s "
          " %.2f steps/s  %.4g particle-steps/s\n",
          what.c_str(), arg(a, "backend", "cuda").c_str(), arg(a, "precision", "float").c_str(),
          comm ? comm->size() : 1, n, (unsigned long long)done, t, loop, cpu, done / loop,
          double(n) * done / loop);
  } catch (const parallel::QuietError&) {
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    if (comm) comm->abort(1);
    return 1;
  }
  return 0;
}
