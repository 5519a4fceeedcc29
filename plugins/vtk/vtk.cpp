// The `vtk` observer: one VTK XML PolyData file (.vtp) per frame and a ParaView collection
// (run.pvd) that lists them with their simulation times.
//
// observe() only takes a reference to (or a copy of) the particles; building the vtkPolyData,
// compressing and writing happen on a background thread (AsyncWriter), so a frame does not stall
// the stepping.
// Every file is written under a temporary name and renamed, and run.pvd is rewritten atomically
// after each frame, so an interrupted run leaves only complete files and a collection that opens.
#include <vtkCellArray.h>
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkType.h>
#include <vtkTypeInt32Array.h>
#include <vtkTypeInt64Array.h>
#include <vtkXMLPolyDataWriter.h>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "pardyn/output.hpp"
#include "pardyn/plugin.hpp"
#include "../common/vtk_xml.hpp"

namespace pardyn::plugins {
namespace {

constexpr unsigned kVtkFields = ParticleStore::kPosition | ParticleStore::kVelocity |
                                ParticleStore::kAcceleration | ParticleStore::kMass |
                                ParticleStore::kType | ParticleStore::kId | ParticleStore::kEpot |
                                ParticleStore::kLabels;

std::string frame_name(std::uint64_t index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%06llu.vtp", static_cast<unsigned long long>(index));
  return buf;
}

struct Settings {
  std::uint64_t interval = 100;
  bool compress = true;
  std::string compressor = "lz4";
  int compression_level = 5;
  int dim = 3;
  Precision precision = Precision::Double;
  std::string output_dir;
};

template <class Real>
using RealArray = std::conditional_t<std::is_same_v<Real, float>, vtkFloatArray, vtkDoubleArray>;

// A 3-component array from per-axis columns; the axes a 2D run lacks are 0 so that ParaView's
// vector glyphs and magnitudes work unchanged.
template <class Real>
vtkSmartPointer<RealArray<Real>> vector_array(const char* name, const std::vector<double> (&c)[3],
                                              int dim, std::size_t n) {
  auto arr = vtkSmartPointer<RealArray<Real>>::New();
  arr->SetName(name);
  arr->SetNumberOfComponents(3);
  arr->SetNumberOfTuples(static_cast<vtkIdType>(n));
  Real* out = arr->GetPointer(0);
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) out[3 * i + d] = d < dim ? Real(c[d][i]) : Real(0);
  return arr;
}

template <class Real, class F>
vtkSmartPointer<RealArray<Real>> scalar_array(const char* name, std::size_t n, F&& value) {
  auto arr = vtkSmartPointer<RealArray<Real>>::New();
  arr->SetName(name);
  arr->SetNumberOfTuples(static_cast<vtkIdType>(n));
  Real* out = arr->GetPointer(0);
  for (std::size_t i = 0; i < n; ++i) out[i] = Real(value(i));
  return arr;
}

// 0, 1, ..., count-1: vertex i is point i, and the offsets of n one-point cells.
template <class Array>
vtkSmartPointer<Array> iota_array(std::size_t count) {
  auto arr = vtkSmartPointer<Array>::New();
  arr->SetNumberOfTuples(static_cast<vtkIdType>(count));
  auto* out = arr->GetPointer(0);
  for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<typename Array::ValueType>(i);
  return arr;
}

void check_size(const std::vector<double>& v, std::size_t n, const char* what) {
  if (v.size() != n)
    throw Error("vtk observer: particle field '" + std::string(what) + "' has " +
                std::to_string(v.size()) + " values for " + std::to_string(n) + " particles");
}

template <class Real>
vtkSmartPointer<vtkPolyData> build_polydata(const HostParticles& p, int dim, double time,
                                            std::uint64_t step) {
  const std::size_t n = p.x[0].size();
  for (int d = 0; d < dim; ++d) {
    check_size(p.x[d], n, "position");
    check_size(p.v[d], n, "velocity");
    check_size(p.a[d], n, "acceleration");
  }
  check_size(p.mass, n, "mass");
  check_size(p.epot, n, "epot");
  if (p.type.size() != n || p.id.size() != n)
    throw Error("vtk observer: particle types or ids are missing from the host copy");

  auto pd = vtkSmartPointer<vtkPolyData>::New();
  vtkNew<vtkPoints> points;
  points->SetData(vector_array<Real>("position", p.x, dim, n));
  pd->SetPoints(points);

  // One vertex cell per particle, so that ParaView draws points without a glyph filter. Offsets and
  // connectivity are filled directly (inserting 10^6 cells one by one is slow), in 32 bits whenever
  // the count fits: half the bytes of VTK's default 64-bit cell storage.
  vtkNew<vtkCellArray> verts;
  if (n < std::size_t(std::numeric_limits<std::int32_t>::max()))
    verts->SetData(iota_array<vtkTypeInt32Array>(n + 1), iota_array<vtkTypeInt32Array>(n));
  else
    verts->SetData(iota_array<vtkTypeInt64Array>(n + 1), iota_array<vtkTypeInt64Array>(n));
  pd->SetVerts(verts);

  vtkPointData* out = pd->GetPointData();
  out->AddArray(vector_array<Real>("velocity", p.v, dim, n));
  out->AddArray(vector_array<Real>("acceleration", p.a, dim, n));
  out->AddArray(scalar_array<Real>("mass", n, [&](std::size_t i) { return p.mass[i]; }));

  vtkNew<vtkTypeInt32Array> type;
  type->SetName("type");
  type->SetNumberOfTuples(static_cast<vtkIdType>(n));
  for (std::size_t i = 0; i < n; ++i) type->SetValue(vtkIdType(i), p.type[i]);
  out->AddArray(type);

  vtkNew<vtkTypeInt64Array> id;
  id->SetName("id");
  id->SetNumberOfTuples(static_cast<vtkIdType>(n));
  for (std::size_t i = 0; i < n; ++i) id->SetValue(vtkIdType(i), p.id[i]);
  out->AddArray(id);
  for (const auto& [name, values] : p.labels) {
    if (values.size() != n) continue;
    vtkNew<vtkTypeInt32Array> a;
    a->SetName(name.c_str());
    a->SetNumberOfTuples(static_cast<vtkIdType>(n));
    for (std::size_t i = 0; i < n; ++i) a->SetValue(vtkIdType(i), values[i]);
    out->AddArray(a);
  }

  // In double before rounding to the file's precision, like the framework's own reductions.
  out->AddArray(scalar_array<Real>("kinetic_energy", n, [&](std::size_t i) {
    double v2 = 0;
    for (int d = 0; d < dim; ++d) v2 += p.v[d][i] * p.v[d][i];
    return 0.5 * p.mass[i] * v2;
  }));
  out->AddArray(
      scalar_array<Real>("potential_energy", n, [&](std::size_t i) { return p.epot[i]; }));
  out->SetActiveScalars("mass");
  out->SetActiveVectors("velocity");

  // A single .vtp opened on its own still knows its time (the XML readers look for "TimeValue").
  vtkNew<vtkDoubleArray> time_value;
  time_value->SetName("TimeValue");
  time_value->InsertNextValue(time);
  pd->GetFieldData()->AddArray(time_value);
  vtkNew<vtkTypeInt64Array> step_value;
  step_value->SetName("step");
  step_value->InsertNextValue(static_cast<vtkTypeInt64>(step));
  pd->GetFieldData()->AddArray(step_value);
  return pd;
}

void write_vtp(vtkPolyData* pd, const std::string& path, const Settings& s) {
  vtkNew<vtkXMLPolyDataWriter> w;
  vtk_xml::write_atomic(w, pd, path, {s.compress, s.compressor, s.compression_level},
                        "vtk observer");
}

class VtkObserver final : public Observer {
public:
  explicit VtkObserver(Settings s) : s_(std::move(s)) {}

  std::uint64_t interval() const override { return s_.interval; }
  unsigned fields() const override { return kVtkFields; }

  void begin(const RunInfo& run) override {
    s_.dim = run.dim;
    s_.precision = run.precision;
    s_.output_dir = run.output_dir.empty() ? "." : run.output_dir;
    make_directories(s_.output_dir + "/frames");
    next_frame_ = 0;
    have_last_step_ = false;
    // An empty collection replaces a run.pvd left by an earlier run in the same folder, which would
    // otherwise point at a mixture of old and new frames.
    writer_.submit([this] {
      frames_.clear();
      write_pvd();
    });
  }

  void observe(const ObserveContext& ctx) override {
    if (!ctx.particles) throw Error("vtk observer: the framework passed no particle data");
    // The last step can coincide with a regular observation; one frame per step.
    if (have_last_step_ && ctx.step == last_step_) return;
    have_last_step_ = true;
    last_step_ = ctx.step;

    // Keep the framework's copy when it shares it; copy only when it does not (tests, embedders).
    auto particles = ctx.shared_particles ? ctx.shared_particles
                                          : std::make_shared<const HostParticles>(*ctx.particles);
    const std::uint64_t index = next_frame_++;
    const double time = ctx.time;
    const std::uint64_t step = ctx.step;
    writer_.submit(
        [this, particles, index, time, step] { write_frame(*particles, index, time, step); });
  }

  void end() override { writer_.flush(); }

private:
  void write_frame(const HostParticles& p, std::uint64_t index, double time, std::uint64_t step) {
    auto pd = s_.precision == Precision::Float ? build_polydata<float>(p, s_.dim, time, step)
                                               : build_polydata<double>(p, s_.dim, time, step);
    const std::string rel = "frames/" + frame_name(index);
    write_vtp(pd, s_.output_dir + "/" + rel, s_);
    frames_.push_back({time, rel});
    write_pvd();
  }

  void write_pvd() const { vtk_xml::write_pvd(s_.output_dir + "/run.pvd", frames_); }

  Settings s_;
  std::uint64_t next_frame_ = 0;  // main thread only
  std::uint64_t last_step_ = 0;
  bool have_last_step_ = false;
  // (time, file relative to the output folder, so that the folder can be moved); writer thread only
  std::vector<std::pair<double, std::string>> frames_;
  // Declared last so it is destroyed first: its destructor runs the pending jobs, which use the
  // members above.
  AsyncWriter writer_;
};

ParamSpec step_interval(std::int64_t def) {
  ParamSpec p;
  p.name = "interval";
  p.type = ParamType::Int;
  p.unit = "steps";
  p.doc = "write a frame every this many steps (and at step 0 and the last step)";
  p.default_value = def;
  p.min = 1;
  return p;
}

const char* const kDoc = R"(Writes the particles for ParaView: one VTK XML PolyData file per
frame, <output>/frames/NNNNNN.vtp (NNNNNN = frame index from 000000), and <output>/run.pvd, a VTK
collection that lists every frame with its simulation time (timestep="t") and is rewritten
atomically after each frame, so an interrupted run opens in ParaView up to its last complete frame.

Each .vtp holds one point per particle (z = 0 in 2D) and one vertex cell per particle (ParaView
shows them without a glyph filter), in appended raw binary, compressed with `compressor` (LZ4 by
default: fast enough to keep up with the GPU) unless compress = false.
Point data (Float32 for precision = "float", Float64 for "double"; 2D vectors have z = 0):
  velocity          3 components, length/time
  acceleration      3 components, length/time^2 (force / mass)
  mass              mass
  type              Int32, the particle type of its [[particles]] block
  id                Int64, the particle's stable id (follow one particle across frames)
  kinetic_energy    energy, 1/2 m |v|^2
  potential_energy  energy, the particle's share of the potential energy (half of each pair
                    energy); summed over the particles it is thermo's `potential`
  <label>           Int32, per-particle labels of analyses when present (cluster: the clusters
                    observer's cluster id, -1 outside any cluster of min_size)
Field data: TimeValue (Float64, simulation time) and step (Int64).
Files are written on a background thread; an error there stops the run at the next frame or at
the end. Open run.pvd in ParaView: docs/paraview.md.)";

void register_vtk(Registrar& r) {
  FactoryInfo info;
  info.kind = PluginKind::Observer;
  info.name = "vtk";
  info.summary = "VTK XML frames (frames/*.vtp) and a ParaView collection (run.pvd)";
  info.doc = kDoc;
  info.backends = kCpu | kCuda;  // observers see host copies only
  info.schema.add(step_interval(100))
      .boolean("compress", true, "compress the binary data (smaller files, slower to write)")
      .choice("compressor", "lz4", {"lz4", "zlib", "lzma"},
              "lz4: fast (keeps up with the GPU); zlib: ~10x slower to write, a little smaller; "
              "lzma: smallest, slowest. ParaView reads all three");
  ParamSpec level;
  level.name = "compression_level";
  level.type = ParamType::Int;
  level.unit = "1";
  level.doc = "compression level when compress = true: 1 fastest ... 9 smallest";
  level.default_value = std::int64_t{5};
  level.min = 1;
  level.max = 9;
  info.schema.add(level);
  r.add(std::move(info), Factory<Observer>([](const ParamSet& ps, const RunInfo& run) {
          Settings s;
          s.interval = static_cast<std::uint64_t>(ps.integer("interval"));
          s.compress = ps.boolean("compress");
          s.compression_level = static_cast<int>(ps.integer("compression_level"));
          s.compressor = ps.string("compressor");
          s.dim = run.dim;
          s.precision = run.precision;
          s.output_dir = run.output_dir;
          return std::unique_ptr<Observer>(new VtkObserver(std::move(s)));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_vtk)
