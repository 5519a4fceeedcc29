// SPDX-License-Identifier: BSD-3-Clause
// The `thermo` observer: a CSV log of the global quantities (energies, momentum, angular momentum,
// temperature, energy drift) with one row per observation.
//
// Rows are small, so they are written on the calling thread and flushed to the operating system
// after each one: a crash or a kill loses no row that was observed.
//
// The values are global (the framework reduces them over the ranks of a parallel run), so in a
// parallel run only rank 0 writes the file; the other ranks' thermo observers do nothing.
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pardyn/output.hpp"
#include "pardyn/plugin_export.hpp"

#include "../../common/steps_param.hpp"

namespace pardyn::plugins {
namespace {

// Shortest text that reads back to the same double (exact, and shorter than %.17g).
void append_double(std::string& line, double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  line.append(buf, r.ptr);
}

void append_uint(std::string& line, std::uint64_t v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  line.append(buf, r.ptr);
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// The optional columns (key `columns`) and the Lennard-Jones tail correction (key `lj_tail`),
// appended after every other column.
struct OptionalColumns {
  std::vector<std::string> names;
  bool tail = false;
  double epsilon = 0, sigma = 0, rcut = 0;

  std::string header() const {
    std::string h;
    for (const auto& n : names) h += "," + n;
    if (tail) h += ",potential_tail,pressure_tail";
    return h;
  }
  // Energy and pressure that the cut-off leaves out, for g(r) = 1 beyond rcut (docs/lammps.md):
  //   3D  U_tail = N (8/3) pi rho eps sigma^3 [ (1/3)(sigma/rc)^9 - (sigma/rc)^3 ]
  //       P_tail =  (16/3) pi rho^2 eps sigma^3 [ (2/3)(sigma/rc)^9 - (sigma/rc)^3 ]
  //   2D  U_tail = N pi rho eps sigma^2 [ (2/5)(sigma/rc)^10 - (sigma/rc)^4 ]
  //       P_tail =  pi rho^2 eps sigma^2 [ (12/5)(sigma/rc)^10 - 3 (sigma/rc)^4 ]
  void tail_values(int dim, double n, double volume, double& u, double& p) const {
    const double pi = 3.14159265358979323846, rho = n / volume, x = sigma / rcut;
    if (dim == 3) {
      const double s3 = sigma * sigma * sigma, x3 = x * x * x, x9 = x3 * x3 * x3;
      u = n * (8.0 / 3.0) * pi * rho * epsilon * s3 * (x9 / 3.0 - x3);
      p = (16.0 / 3.0) * pi * rho * rho * epsilon * s3 * (2.0 * x9 / 3.0 - x3);
    } else {
      const double x2 = x * x, x4 = x2 * x2, x10 = x4 * x4 * x2;
      u = n * pi * rho * epsilon * sigma * sigma * (0.4 * x10 - x4);
      p = pi * rho * rho * epsilon * sigma * sigma * (2.4 * x10 - 3.0 * x4);
    }
  }
};

class ThermoObserver final : public Observer {
 public:
  ThermoObserver(std::uint64_t interval, std::string file, OptionalColumns optional)
      : interval_(interval), file_(std::move(file)), optional_(std::move(optional)) {}

  std::uint64_t interval() const override { return interval_; }
  unsigned fields() const override { return 0; }
  std::vector<std::string> files() const override { return {file_}; }

  void begin(const RunInfo& run) override {
    dim_ = run.dim;
    writes_ = run.rank == 0;
    if (!writes_) return;
    std::filesystem::path p(file_);
    if (p.is_relative())
      p = std::filesystem::path(run.output_dir.empty() ? "." : run.output_dir) / p;
    path_ = p.string();
    if (p.has_parent_path()) make_directories(p.parent_path().string());
    have_last_step_ = false;
    std::string head =
        dim_ == 2 ? "step,time,kinetic,potential,total,relative_drift,px,py,lz,temperature,"
                    "force_evaluations,dt,rejected_steps,com_drift"
                  : "step,time,kinetic,potential,total,relative_drift,px,py,pz,lx,ly,lz,"
                    "temperature,force_evaluations,dt,rejected_steps,com_drift";
    head += ",pressure";
    // One energy column per potential when there are several, then the analyses' columns.
    terms_ = run.potential_labels.size() > 1 ? run.potential_labels.size() : 0;
    for (std::size_t k = 0; k < terms_; ++k) head += ",potential_" + run.potential_labels[k];
    extras_ = run.extra_columns.size();
    for (const auto& c : run.extra_columns) head += "," + c;
    head += optional_.header();
    open_ = false;
    for (int d = 0; d < dim_; ++d) open_ = open_ || run.box.boundary[d] == Boundary::Open;
    // A resumed run continues the file after the checkpoint's step (later rows are the dead
    // run's and go).
    const bool resumed = run.resume && resume_csv(path_, run.resume_step, head);
    out_.reset(std::fopen(path_.c_str(), resumed ? "a" : "w"));
    if (!out_) throw Error("thermo observer: cannot write " + path_ + ": " + std::strerror(errno));
    if (!resumed) write_line(head + "\n");
  }

  void observe(const ObserveContext& ctx) override {
    if (!writes_) return;
    if (!out_) throw Error("thermo observer: observe() called before begin()");
    if (!ctx.thermo) throw Error("thermo observer: the framework passed no global quantities");
    // The last step can coincide with a regular observation; one row per step.
    if (have_last_step_ && ctx.step == last_step_) return;
    have_last_step_ = true;
    last_step_ = ctx.step;

    const Thermo& t = *ctx.thermo;
    std::string line;
    line.reserve(400);
    auto field = [&](double v) {
      line += ',';
      append_double(line, v);
    };
    append_uint(line, ctx.step);
    field(ctx.time);
    field(t.r.kinetic);
    field(t.r.potential);
    field(t.total);
    field(t.relative_drift);
    if (dim_ == 2) {
      field(t.r.momentum[0]);
      field(t.r.momentum[1]);
      field(t.r.angular_momentum[2]);
    } else {
      for (double m : t.r.momentum) field(m);
      for (double l : t.r.angular_momentum) field(l);
    }
    field(t.temperature);
    line += ',';
    append_uint(line, t.force_evaluations);
    field(t.dt);
    line += ',';
    append_uint(line, t.rejected_steps);
    field(t.com_drift);
    field(t.pressure);
    for (std::size_t k = 0; k < terms_; ++k)
      field(k < t.potential_terms.size() ? t.potential_terms[k] : std::nan(""));
    for (std::size_t k = 0; k < extras_; ++k) field(k < t.extra.size() ? t.extra[k] : std::nan(""));
    // An open axis has no volume: volume, density and the tail are nan there.
    const double n = double(t.r.n), volume = open_ ? std::nan("") : t.volume;
    for (const auto& c : optional_.names) {
      if (c == "n") line += ',', append_uint(line, t.r.n);
      else if (c == "volume") field(volume);
      else if (c == "density") field(n / volume);
      else if (c == "kinetic_per_particle") field(t.r.kinetic / n);
      else if (c == "potential_per_particle") field(t.r.potential / n);
      else if (c == "total_per_particle") field(t.total / n);
    }
    if (optional_.tail) {
      double u = std::nan(""), p = std::nan("");
      if (!open_) optional_.tail_values(dim_, n, volume, u, p);
      field(u);
      field(p);
    }
    line += '\n';
    write_line(line);
  }

  void end() override {
    if (!out_) return;
    std::FILE* f = out_.release();
    if (std::fclose(f) != 0)
      throw Error("thermo observer: error closing " + path_ + ": " + std::strerror(errno));
  }

 private:
  std::size_t terms_ = 0, extras_ = 0;
  void write_line(const std::string& line) {
    if (std::fwrite(line.data(), 1, line.size(), out_.get()) != line.size() ||
        std::fflush(out_.get()) != 0)
      throw Error("thermo observer: error writing " + path_ + ": " + std::strerror(errno) +
                  " (disk full?)");
  }

  std::uint64_t interval_;
  std::string file_;
  std::string path_;
  OptionalColumns optional_;
  bool open_ = false;
  int dim_ = 3;
  bool writes_ = true;  // false on the ranks other than 0 of a parallel run
  std::uint64_t last_step_ = 0;
  bool have_last_step_ = false;
  std::unique_ptr<std::FILE, FileCloser> out_;
};

const char* const kDoc = R"(Writes the global quantities as CSV, one row per observation (at step 0,
every `interval` steps and at the last step), flushed after each row. Numbers are written with the
fewest digits that read back to the same double. In a parallel run the values are those of all
ranks together and rank 0 alone writes the file. Columns, in 3D:
  step,time,kinetic,potential,total,relative_drift,px,py,pz,lx,ly,lz,temperature,force_evaluations,
  dt,rejected_steps,com_drift,pressure
and in 2D (momentum in the plane, angular momentum about z only):
  step,time,kinetic,potential,total,relative_drift,px,py,lz,temperature,force_evaluations,dt,
  rejected_steps,com_drift,pressure
then, when the scenario has several [[potential]] blocks, potential_<type> (or potential_<type>_<k>
when a type appears twice) with each one's share of U, and the columns of analyses (the clusters
observer's n_clusters, largest_cluster_fraction, ...).
  step               integration steps taken
  time               simulation time (time)
  kinetic            K = sum 1/2 m |v|^2 (energy)
  potential          U, total potential energy of all force laws (energy)
  total              E = K + U (energy)
  relative_drift     (E - E0) / |E0|, E0 = total at step 0 (1)
  px, py, pz         total momentum sum m v (mass length/time)
  lx, ly, lz         total angular momentum about the origin sum m x cross v (mass length^2/time)
  temperature        2 K / (dof k_B), k_B = 1 (energy); dof = dim (N - 1) when momentum is
                     conserved, dim N with walls, external fields or a Langevin thermostat
  force_evaluations  force field evaluations so far (the cost axis of integrator comparisons)
  dt                 size of the last step (time); varies with adaptive integrators and
                     dt_control = "acceleration"
  rejected_steps     steps an adaptive integrator tried and rejected so far
  com_drift          distance of the centre of mass from its position at step 0 (length), with
                     the positions unwrapped across periodic faces
  pressure           virial pressure (2 K + W) / (dim V), W = sum over pairs r_ij . F_ij, V the box
                     volume (area in 2D) (energy/length^dim); nan when an axis is open
All sums are reduced in double with compensated summation.
`columns` appends any of (in the order given):
  n                       number of particles
  volume                  box volume (area in 2D) (length^dim); nan when an axis is open
  density                 n / volume (length^-dim)
  kinetic_per_particle    kinetic / n, and potential_per_particle, total_per_particle likewise:
  potential_per_particle  the energies LAMMPS prints as ke, pe, etotal (thermo_modify norm yes,
  total_per_particle      the default of its lj units)
`lj_tail = [epsilon, sigma, rcut]` appends the Lennard-Jones tail correction, the energy and
pressure the cut-off leaves out if g(r) = 1 beyond rcut (LAMMPS: pair_modify tail yes):
  potential_tail  3D: N (8/3) pi rho eps sigma^3 [(1/3)(sigma/rc)^9 - (sigma/rc)^3]
                  2D: N pi rho eps sigma^2 [(2/5)(sigma/rc)^10 - (sigma/rc)^4]   (energy)
  pressure_tail   3D: (16/3) pi rho^2 eps sigma^3 [(2/3)(sigma/rc)^9 - (sigma/rc)^3]
                  2D: pi rho^2 eps sigma^2 [(12/5)(sigma/rc)^10 - 3 (sigma/rc)^4]   (energy/length^dim)
with rho = N / V; nan when an axis is open. Add them to potential and pressure. They belong to the
unshifted potential: compare with lennard_jones shift = false. See docs/lammps.md.)";

void register_thermo(Registrar& r) {
  FactoryInfo info;
  info.kind = PluginKind::Observer;
  info.name = "thermo";
  info.summary = "CSV log of energies, momentum, angular momentum, temperature and energy drift";
  info.doc = kDoc;
  info.backends = kCpu | kCuda;  // needs no particle data, only the framework's reductions

  ParamSpec columns;  // a list of strings from a fixed set, checked by the schema
  columns.name = "columns";
  columns.type = ParamType::StringList;
  columns.doc = "extra columns, appended in the order given (docs/paraview.md)";
  columns.default_value = std::vector<std::string>{};
  columns.choices = {"n",
                     "volume",
                     "density",
                     "kinetic_per_particle",
                     "potential_per_particle",
                     "total_per_particle"};
  info.schema
      .add(steps_param("interval", 10, 1,
                       "write a row every this many steps (and at step 0 and the last step)"))
      .string("file", "thermo.csv",
              "the CSV file, relative to the run's output folder (inside it; two outputs never "
              "share a file)")
      .add(columns)
      .reals("lj_tail", std::vector<double>{}, "1",
             "[epsilon, sigma, rcut] of a Lennard-Jones law: append its tail correction "
             "(potential_tail, pressure_tail); empty: none",
             0, 3);
  r.add(std::move(info), Factory<Observer>([](const ParamSet& ps, const RunInfo&) {
          const std::string where = ps.context.empty() ? "" : " (" + ps.context + ")";
          const std::string& file = ps.string("file");
          if (file.empty()) throw Error("thermo observer: 'file' must not be empty" + where);
          if (file.back() == '/')
            throw Error("thermo observer" + where + ": file = \"" + file +
                        "\" names a folder; give a file name, e.g. \"thermo.csv\"");
          OptionalColumns optional;
          optional.names = ps.strings("columns");
          const auto& tail = ps.reals("lj_tail");
          if (!tail.empty()) {
            if (tail.size() != 3 || !(tail[0] >= 0) || !(tail[1] > 0) || !(tail[2] > 0))
              throw Error("thermo observer" + where +
                          ": lj_tail is [epsilon, sigma, rcut] of the lennard_jones law, with "
                          "epsilon >= 0 and sigma, rcut > 0, e.g. lj_tail = [1.0, 1.0, 2.5]");
            optional.tail = true;
            optional.epsilon = tail[0];
            optional.sigma = tail[1];
            optional.rcut = tail[2];
          }
          return std::unique_ptr<Observer>(new ThermoObserver(
              static_cast<std::uint64_t>(ps.integer("interval")), file, std::move(optional)));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_thermo)
