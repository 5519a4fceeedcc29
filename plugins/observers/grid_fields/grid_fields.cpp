// SPDX-License-Identifier: BSD-3-Clause
// The `grid_fields` observer: density, temperature and flow velocity binned on a regular grid over
// the box, one VTK XML ImageData file (.vti) per observation and a ParaView collection (fields.pvd).
//
// Binning happens on the host copy of the particles (position, velocity, mass), on the writer's
// background thread (AsyncWriter) like the vtk observer's frames, so it does not stall the stepping.
// Every .vti is written under a temporary name and renamed, and fields.pvd is rewritten atomically
// after each file: an interrupted run leaves only complete files and a collection that opens.
//
// In a parallel run each rank bins the particles it owns, the cell sums are added over the ranks
// (Comm::sum, on the calling thread: collectives must not run on the writer thread), and rank 0
// alone writes the files.
#include <vtkCellData.h>
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkSmartPointer.h>
#include <vtkTypeInt32Array.h>
#include <vtkTypeInt64Array.h>
#include <vtkXMLImageDataWriter.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pardyn/output.hpp"
#include "pardyn/plugin_export.hpp"
#include "../../common/steps_param.hpp"
#include "../../common/vtk_xml.hpp"

namespace pardyn::plugins {
namespace {

// Sums per cell, cells numbered x fastest (VTK's order for cell data).
struct GridFields {
  int dim = 3;
  int cells[3] = {1, 1, 1};
  double lo[3] = {0, 0, 0};
  double spacing[3] = {1, 1, 1};
  double cell_volume = 1;  // an area in 2D
  std::vector<std::int64_t> count;
  std::vector<double> mass;
  std::vector<double> velocity[3];  // mass-weighted mean
  std::vector<double> temperature;  // NaN below 2 particles
  std::int64_t outside = 0;         // particles beyond the box (open axes): not binned
};

// Counts, masses, momenta and the particles outside, over all ranks in one call (a collective
// Comm::sum). Counts travel as doubles: exact up to 2^53.
void sum_over_ranks(GridFields& g, std::size_t total, Comm& comm) {
  const int dim = g.dim;
  std::vector<double> sums((2 + std::size_t(dim)) * total + 1);
  for (std::size_t c = 0; c < total; ++c) {
    sums[c] = double(g.count[c]);
    sums[total + c] = g.mass[c];
    for (int d = 0; d < dim; ++d) sums[(2 + d) * total + c] = g.velocity[d][c];
  }
  sums.back() = double(g.outside);
  comm.sum(sums.data(), sums.size());
  for (std::size_t c = 0; c < total; ++c) {
    g.count[c] = std::int64_t(sums[c]);
    g.mass[c] = sums[total + c];
    for (int d = 0; d < dim; ++d) g.velocity[d][c] = sums[(2 + d) * total + c];
  }
  g.outside = std::int64_t(sums.back());
}

// Bins `p`. With a communicator the sums are those of every rank's particles: a collective call
// (two Comm::sum), which every rank must make at the same observation.
GridFields bin_particles(const HostParticles& p, const Box& box, int dim, const int cells[3],
                         Comm* comm) {
  GridFields g;
  g.dim = dim;
  std::size_t total = 1;
  g.cell_volume = 1;
  for (int d = 0; d < 3; ++d) {
    g.cells[d] = d < dim ? cells[d] : 1;
    g.lo[d] = d < dim ? box.lo[d] : 0.0;
    g.spacing[d] = d < dim ? box.length(d) / g.cells[d] : 1.0;
    if (d < dim) g.cell_volume *= g.spacing[d];
    total *= std::size_t(g.cells[d]);
  }
  g.count.assign(total, 0);
  g.mass.assign(total, 0.0);
  for (int d = 0; d < 3; ++d) g.velocity[d].assign(total, 0.0);
  g.temperature.assign(total, std::numeric_limits<double>::quiet_NaN());

  const std::size_t n = p.size();
  std::vector<std::int64_t> where(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t c = 0, stride = 1;
    bool inside = true;
    for (int d = 0; d < dim && inside; ++d) {
      const double s = (p.x[d][i] - box.lo[d]) / box.length(d);
      if (!(s >= 0.0 && s <= 1.0)) {  // also false for NaN
        inside = false;
        break;
      }
      // x == hi (a wall face) belongs to the last cell.
      const int k = std::min(g.cells[d] - 1, int(s * g.cells[d]));
      c += stride * k;
      stride *= g.cells[d];
    }
    if (!inside) {
      ++g.outside;
      continue;
    }
    where[i] = c;
    ++g.count[c];
    g.mass[c] += p.mass[i];
    for (int d = 0; d < dim; ++d) g.velocity[d][c] += p.mass[i] * p.v[d][i];
  }
  if (comm) sum_over_ranks(g, total, *comm);
  for (std::size_t c = 0; c < total; ++c)
    for (int d = 0; d < dim; ++d)
      if (g.mass[c] > 0) g.velocity[d][c] /= g.mass[c];
  // Second pass: kinetic energy relative to the cell's mass-weighted mean velocity, which removes
  // dim degrees of freedom per cell: T = sum m |v - u|^2 / (dim (n - 1)).
  std::vector<double> twice_k(total, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    if (where[i] < 0) continue;
    const std::size_t c = std::size_t(where[i]);
    double w2 = 0;
    for (int d = 0; d < dim; ++d) {
      const double w = p.v[d][i] - g.velocity[d][c];
      w2 += w * w;
    }
    twice_k[c] += p.mass[i] * w2;
  }
  if (comm) comm->sum(twice_k.data(), total);  // relative to the flow of all ranks' particles
  for (std::size_t c = 0; c < total; ++c)
    if (g.count[c] >= 2) g.temperature[c] = twice_k[c] / (double(dim) * double(g.count[c] - 1));
  return g;
}

struct Settings {
  std::uint64_t interval = 100;
  int cells[3] = {1, 1, 1};
  bool compress = true;
  std::string compressor = "lz4";
  int dim = 3;
  Box box;
  std::string output_dir;
};

vtkSmartPointer<vtkDoubleArray> scalar_array(const char* name, const std::vector<double>& v,
                                             double scale) {
  auto a = vtkSmartPointer<vtkDoubleArray>::New();
  a->SetName(name);
  a->SetNumberOfTuples(vtkIdType(v.size()));
  for (std::size_t c = 0; c < v.size(); ++c) a->SetValue(vtkIdType(c), scale * v[c]);
  return a;
}

vtkSmartPointer<vtkImageData> build_image(const GridFields& g, double time, std::uint64_t step) {
  auto img = vtkSmartPointer<vtkImageData>::New();
  // Points are the cell corners: cells + 1 per axis; a 2D grid is one layer of points at z = 0.
  img->SetDimensions(g.cells[0] + 1, g.cells[1] + 1, g.dim == 3 ? g.cells[2] + 1 : 1);
  img->SetOrigin(g.lo[0], g.lo[1], g.lo[2]);
  img->SetSpacing(g.spacing[0], g.spacing[1], g.spacing[2]);
  const std::size_t total = g.count.size();
  vtkCellData* cd = img->GetCellData();

  std::vector<double> count(total);
  for (std::size_t c = 0; c < total; ++c) count[c] = double(g.count[c]);
  cd->AddArray(scalar_array("number_density", count, 1.0 / g.cell_volume));
  cd->AddArray(scalar_array("mass_density", g.mass, 1.0 / g.cell_volume));
  cd->AddArray(scalar_array("temperature", g.temperature, 1.0));
  vtkNew<vtkDoubleArray> vel;
  vel->SetName("velocity");
  vel->SetNumberOfComponents(3);
  vel->SetNumberOfTuples(vtkIdType(total));
  for (std::size_t c = 0; c < total; ++c)
    for (int d = 0; d < 3; ++d)
      vel->SetComponent(vtkIdType(c), d, d < g.dim ? g.velocity[d][c] : 0.0);
  cd->AddArray(vel);
  vtkNew<vtkTypeInt64Array> cnt;
  cnt->SetName("count");
  cnt->SetNumberOfTuples(vtkIdType(total));
  for (std::size_t c = 0; c < total; ++c) cnt->SetValue(vtkIdType(c), g.count[c]);
  cd->AddArray(cnt);
  cd->SetActiveScalars("number_density");
  cd->SetActiveVectors("velocity");

  vtk_xml::add_time_fields(img, time, step);
  vtkNew<vtkTypeInt64Array> outside;
  outside->SetName("particles_outside");
  outside->InsertNextValue(static_cast<vtkTypeInt64>(g.outside));
  img->GetFieldData()->AddArray(outside);
  return img;
}

void write_vti(vtkImageData* img, const std::string& path, const Settings& s) {
  vtkNew<vtkXMLImageDataWriter> w;
  vtk_xml::write_atomic(w, img, path, {s.compress, s.compressor, 5}, "grid_fields observer");
}

class GridFieldsObserver final : public Observer {
 public:
  explicit GridFieldsObserver(Settings s) : s_(std::move(s)) {}

  std::uint64_t interval() const override { return s_.interval; }
  unsigned fields() const override {
    return ParticleStore::kPosition | ParticleStore::kVelocity | ParticleStore::kMass;
  }

  std::vector<std::string> files() const override { return {"fields.pvd", "fields/"}; }
  void begin(const RunInfo& run) override {
    s_.dim = run.dim;
    s_.box = run.box;
    s_.output_dir = run.output_dir.empty() ? "." : run.output_dir;
    rank_ = run.rank;
    ranks_ = run.ranks;
    comm_ = run.comm;
    if (ranks_ > 1 && !comm_)
      throw Error("grid_fields observer: a run of " + std::to_string(ranks_) +
                  " ranks without a communicator (RunInfo::comm)");
    next_ = 0;
    have_last_step_ = false;
    // A resumed run keeps the files up to the checkpoint's time and numbers on from there.
    std::vector<std::pair<double, std::string>> kept;
    if (run.resume) kept = vtk_xml::read_pvd(s_.output_dir + "/fields.pvd", run.resume_time);
    next_ = kept.size();
    if (rank_ != 0) return;  // the files are rank 0's
    make_directories(s_.output_dir + "/fields");
    writer_.submit([this, kept] {
      files_ = kept;
      write_pvd();
    });
  }
  void sync() override { writer_.flush(); }

  void observe(const ObserveContext& ctx) override {
    if (!ctx.particles) throw Error("grid_fields observer: the framework passed no particle data");
    if (have_last_step_ && ctx.step == last_step_) return;  // the last step can be a regular one
    have_last_step_ = true;
    last_step_ = ctx.step;
    const std::uint64_t index = next_++;
    const double time = ctx.time;
    const std::uint64_t step = ctx.step;
    if (ranks_ > 1) {
      // Collective: binned here, on every rank; written by rank 0.
      auto g = std::make_shared<const GridFields>(
          bin_particles(*ctx.particles, s_.box, s_.dim, s_.cells, comm_));
      if (rank_ == 0)
        writer_.submit([this, g, index, time, step] { write(*g, index, time, step); });
      return;
    }
    auto particles = ctx.shared_particles ? ctx.shared_particles
                                          : std::make_shared<const HostParticles>(*ctx.particles);
    writer_.submit([this, particles, index, time, step] {
      write(bin_particles(*particles, s_.box, s_.dim, s_.cells, nullptr), index, time, step);
    });
  }

  void end() override { writer_.flush(); }

 private:
  void write(const GridFields& g, std::uint64_t index, double time, std::uint64_t step) {
    char name[32];
    std::snprintf(name, sizeof name, "fields/%06llu.vti", static_cast<unsigned long long>(index));
    write_vti(build_image(g, time, step), s_.output_dir + "/" + name, s_);
    files_.push_back({time, name});
    write_pvd();
  }

  void write_pvd() const { vtk_xml::write_pvd(s_.output_dir + "/fields.pvd", files_); }

  Settings s_;
  int rank_ = 0, ranks_ = 1;
  Comm* comm_ = nullptr;
  std::uint64_t next_ = 0;  // main thread only
  std::uint64_t last_step_ = 0;
  bool have_last_step_ = false;
  std::vector<std::pair<double, std::string>> files_;  // (time, relative path); writer thread only
  AsyncWriter
      writer_;  // last: destroyed first, running the pending jobs that use the members above
};

const char* const kDoc = R"(Writes fields on a regular grid over the box for ParaView: every
`interval` steps (and at step 0 and the last step) the particles are binned into
cells = [nx, ny] (2D) or [nx, ny, nz] (3D) equal cells spanning [box] lo..hi, and one VTK XML
ImageData file <output>/fields/NNNNNN.vti is written (NNNNNN = file index from 000000), with
<output>/fields.pvd, a collection of every file with its simulation time, rewritten atomically after
each one. Cell data (Float64; V = cell volume, an area in 2D):
  number_density  count / V                                   (length^-dim)
  mass_density    sum of masses / V                           (mass length^-dim)
  velocity        mass-weighted mean velocity u of the cell (3 components, z = 0 in 2D; 0 when
                  the cell is empty)                          (length/time)
  temperature     sum m |v - u|^2 / (dim (n - 1)), k_B = 1: the kinetic energy relative to the
                  cell's flow with dim (n - 1) degrees of freedom (the flow takes dim of the dim n);
                  NaN where the cell holds fewer than 2 particles      (energy)
  count           number of particles n in the cell (Int64)
Field data: TimeValue, step, particles_outside (particles beyond the box on open axes: not binned).
A particle exactly on the upper face belongs to the last cell. Binning runs on a background thread
from the host copy of the positions, velocities and masses.
In a parallel run (several ranks) each rank bins its own particles on the main thread, the cell
sums are added over the ranks, and rank 0 writes the files: they hold the fields of all particles.
Example:
  [[output]]
  type = "grid_fields"
  interval = 100
  cells = [64, 32])";

void register_grid_fields(Registrar& r) {
  FactoryInfo info;
  info.kind = PluginKind::Observer;
  info.name = "grid_fields";
  info.summary = "density, temperature and flow velocity on a grid (fields/*.vti, fields.pvd)";
  info.doc = kDoc;
  info.backends = kCpu | kCuda;  // observers see host copies only
  info.schema
      .add(steps_param("interval", 100, 1,
                       "write the fields every this many steps (and at step 0 and the last step)"))
      .integers("cells", std::nullopt,
                "number of cells per axis: [nx, ny] in 2D, [nx, ny, nz] in 3D "
                "(at most 1e8 cells in all)",
                2, 3, 1, 100000000)
      .boolean("compress", true, "compress the binary data")
      .choice(
          "compressor", "lz4", {"lz4", "zlib", "lzma"},
          "lz4: fast; zlib: smaller, slower; lzma: smallest, slowest. ParaView reads all three");
  r.add(std::move(info), Factory<Observer>([](const ParamSet& ps, const RunInfo& run) {
          Settings s;
          const std::string where =
              "grid_fields" + (ps.context.empty() ? std::string() : " (" + ps.context + ")");
          const auto& cells = ps.integers("cells");
          if (int(cells.size()) != run.dim)
            throw Error(where + ": cells has " + std::to_string(cells.size()) + " entries for a " +
                        std::to_string(run.dim) + "D run; give one count per axis, e.g. cells = [" +
                        (run.dim == 2 ? "64, 64" : "32, 32, 32") + "]");
          std::int64_t total = 1;
          for (int d = 0; d < run.dim; ++d) {
            if (cells[d] < 1)
              throw Error(where + ": cells[" + std::to_string(d) +
                          "] = " + std::to_string(cells[d]) + "; every axis needs at least 1 cell");
            if (!(run.box.length(d) > 0))
              throw Error(where + ": the box has no extent along axis " + std::to_string(d) +
                          "; set [box] lo < hi");
            total *= cells[d];
            if (total > 100000000)
              throw Error(where +
                          ": cells asks for more than 1e8 cells (each takes about 100 "
                          "bytes of sums); use fewer");
            s.cells[d] = int(cells[d]);
          }
          s.interval = static_cast<std::uint64_t>(ps.integer("interval"));
          s.compress = ps.boolean("compress");
          s.compressor = ps.string("compressor");
          s.dim = run.dim;
          s.box = run.box;
          s.output_dir = run.output_dir;
          return std::unique_ptr<Observer>(new GridFieldsObserver(std::move(s)));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_grid_fields)
