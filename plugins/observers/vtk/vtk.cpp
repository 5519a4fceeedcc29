// SPDX-License-Identifier: BSD-3-Clause
// The `vtk` observer: one VTK XML PolyData file (.vtp) per frame and a ParaView collection
// (run.pvd) that lists them with their simulation times.
//
// In a parallel run (ranks > 1) a frame is a parallel PolyData: every rank writes its own particles
// as one piece, frames/NNNNNN_<rank>.vtp, and rank 0 writes the summary frames/NNNNNN.pvtp that
// lists the pieces, and run.pvd, which lists the summaries. The summary is written here rather than
// by vtkXMLPPolyDataWriter: without a VTK MPI controller that writer lists only the pieces its own
// process wrote (VTK 9.1), and it derives the piece names from the summary's file name, which is a
// temporary one until the rename.
//
// observe() only takes a reference to (or a copy of) the particles; building the vtkPolyData,
// compressing and writing happen on a background thread (AsyncWriter), so a frame does not stall
// the stepping.
// Every file is written under a temporary name and renamed, and run.pvd is rewritten atomically
// after each frame, so an interrupted run leaves only complete files and a collection that opens.
#include <vtkCellArray.h>
#include <vtkDataArray.h>
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

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "pardyn/output.hpp"
#include "pardyn/plugin_export.hpp"
#include "../../common/steps_param.hpp"
#include "../../common/vtk_xml.hpp"

namespace pardyn::plugins {
namespace {

constexpr unsigned kVtkFields = ParticleStore::kPosition | ParticleStore::kVelocity |
                                ParticleStore::kAcceleration | ParticleStore::kMass |
                                ParticleStore::kType | ParticleStore::kId | ParticleStore::kEpot |
                                ParticleStore::kLabels;

// Frame NNNNNN: NNNNNN.vtp in a serial run; in a parallel one NNNNNN.pvtp and its pieces
// NNNNNN_<rank>.vtp (the names VTK's own parallel writer gives the pieces of NNNNNN.pvtp).
std::string frame_base(std::uint64_t index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%06llu", static_cast<unsigned long long>(index));
  return buf;
}
std::string frame_name(std::uint64_t index) { return frame_base(index) + ".vtp"; }
std::string piece_name(std::uint64_t index, int rank) {
  return frame_base(index) + "_" + std::to_string(rank) + ".vtp";
}
std::string summary_name(std::uint64_t index) { return frame_base(index) + ".pvtp"; }

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
  else verts->SetData(iota_array<vtkTypeInt64Array>(n + 1), iota_array<vtkTypeInt64Array>(n));
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

  vtk_xml::add_time_fields(pd, time, step);
  return pd;
}

void write_vtp(vtkPolyData* pd, const std::string& path, const Settings& s) {
  vtkNew<vtkXMLPolyDataWriter> w;
  vtk_xml::write_atomic(w, pd, path, {s.compress, s.compressor, s.compression_level},
                        "vtk observer");
}

vtkSmartPointer<vtkPolyData> build(const HostParticles& p, const Settings& s, double time,
                                   std::uint64_t step) {
  return s.precision == Precision::Float ? build_polydata<float>(p, s.dim, time, step)
                                         : build_polydata<double>(p, s.dim, time, step);
}

// --- Parallel frames --------------------------------------------------------------------------
// What a .pvtp summary declares of its pieces: the points' and each point array's type and
// components, and the active attributes. Every piece of a frame must have exactly these.
struct ArrayInfo {
  std::string name;
  std::string type;  // VTK XML's word: Float32, Float64, Int32, Int64, ...
  int components = 1;
};

struct Layout {
  ArrayInfo points;
  std::vector<ArrayInfo> arrays;
  std::string scalars, vectors;
  // One line, for comparing the ranks' layouts and for error messages.
  std::string text() const {
    auto one = [](const ArrayInfo& a) {
      return a.name + ":" + a.type + "x" + std::to_string(a.components);
    };
    std::string t = "points " + one(points) + "; arrays";
    for (const auto& a : arrays) t += " " + one(a);
    return t + "; scalars " + scalars + "; vectors " + vectors;
  }
};

std::string xml_type(vtkDataArray* a) {
  switch (a->GetDataType()) {
    case VTK_FLOAT: return "Float32";
    case VTK_DOUBLE: return "Float64";
    default:
      return std::string(a->GetDataTypeMin() < 0 ? "Int" : "UInt") +
             std::to_string(8 * a->GetDataTypeSize());
  }
}

ArrayInfo array_info(vtkDataArray* a) {
  return {a->GetName() ? a->GetName() : "", xml_type(a), a->GetNumberOfComponents()};
}

// The layout of the piece build() makes from `p`, taken from an empty piece built the same way (so
// that it cannot disagree with the pieces) with the same label arrays as `p`.
Layout layout_of(const HostParticles& p, const Settings& s) {
  HostParticles shape(p.dim);
  for (const auto& [name, values] : p.labels)
    if (values.size() == p.x[0].size()) shape.labels.push_back({name, {}});
  auto pd = build(shape, s, 0.0, 0);
  Layout l;
  l.points = array_info(pd->GetPoints()->GetData());
  vtkPointData* pt = pd->GetPointData();
  for (int k = 0; k < pt->GetNumberOfArrays(); ++k) l.arrays.push_back(array_info(pt->GetArray(k)));
  if (vtkDataArray* a = pt->GetScalars()) l.scalars = a->GetName();
  if (vtkDataArray* a = pt->GetVectors()) l.vectors = a->GetName();
  return l;
}

// The summary of a parallel frame: the layout, then one <Piece> per rank (files relative to the
// summary's folder), in VTK's PPolyData format.
std::string summary_xml(const Layout& l, const std::vector<std::string>& pieces) {
  using vtk_xml::escape_attribute;
  auto data_array = [](const ArrayInfo& a) {
    return "      <PDataArray type=\"" + a.type + "\" Name=\"" + escape_attribute(a.name) +
           "\" NumberOfComponents=\"" + std::to_string(a.components) + "\"/>\n";
  };
  std::string xml =
      "<?xml version=\"1.0\"?>\n<VTKFile type=\"PPolyData\" version=\"1.0\" byte_order=\"";
  xml += vtk_xml::byte_order();
  xml += "\" header_type=\"UInt64\">\n  <PPolyData GhostLevel=\"0\">\n    <PPointData";
  if (!l.scalars.empty()) xml += " Scalars=\"" + escape_attribute(l.scalars) + "\"";
  if (!l.vectors.empty()) xml += " Vectors=\"" + escape_attribute(l.vectors) + "\"";
  xml += ">\n";
  for (const auto& a : l.arrays) xml += data_array(a);
  xml += "    </PPointData>\n    <PPoints>\n" + data_array(l.points) + "    </PPoints>\n";
  for (const auto& p : pieces) xml += "    <Piece Source=\"" + escape_attribute(p) + "\"/>\n";
  xml += "  </PPolyData>\n</VTKFile>\n";
  return xml;
}

// What each rank tells rank 0 at a parallel frame: how many of its pieces it has written completely
// so far (8 bytes), then its layout's text.
std::vector<char> frame_report(std::uint64_t pieces_written, const Layout& l) {
  const std::string text = l.text();
  std::vector<char> bytes(sizeof pieces_written + text.size());
  std::memcpy(bytes.data(), &pieces_written, sizeof pieces_written);
  std::memcpy(bytes.data() + sizeof pieces_written, text.data(), text.size());
  return bytes;
}

class VtkObserver final : public Observer {
 public:
  explicit VtkObserver(Settings s) : s_(std::move(s)) {}

  std::uint64_t interval() const override { return s_.interval; }
  unsigned fields() const override { return kVtkFields; }
  std::vector<std::string> files() const override { return {"run.pvd", "frames/"}; }

  void begin(const RunInfo& run) override {
    s_.dim = run.dim;
    s_.precision = run.precision;
    s_.output_dir = run.output_dir.empty() ? "." : run.output_dir;
    rank_ = run.rank;
    ranks_ = run.ranks;
    comm_ = run.comm;
    if (ranks_ > 1 && !comm_)
      throw Error("vtk observer: a run of " + std::to_string(ranks_) +
                  " ranks without a communicator (RunInfo::comm)");
    make_directories(s_.output_dir + "/frames");
    next_frame_ = 0;
    have_last_step_ = false;
    pieces_written_ = 0;
    // A resumed run keeps the frames up to the checkpoint's time and numbers on from there (the
    // frames of the run that died after its checkpoint are overwritten or removed).
    std::vector<std::pair<double, std::string>> kept;
    if (run.resume) {
      kept = vtk_xml::read_pvd(s_.output_dir + "/run.pvd", run.resume_time);
      next_frame_ = kept.size();
      if (rank_ == 0) remove_frames_from(next_frame_);
    }
    if (rank_ != 0) return;  // run.pvd is rank 0's
    // The kept frames (none for a new run) replace a run.pvd left by an earlier run in the same
    // folder, which would otherwise point at a mixture of old and new frames.
    writer_.submit([this, kept] {
      frames_ = kept;
      listed_ = frames_.size();
      write_pvd();
    });
  }

  // Before a checkpoint: every frame so far written and listed in run.pvd (collective in a
  // parallel run: every rank's pieces are finished before rank 0 lists them).
  void sync() override {
    writer_.flush();
    if (ranks_ > 1) {
      comm_->barrier();
      if (rank_ == 0) {
        writer_.submit([this] {
          listed_ = frames_.size();
          write_pvd();
        });
        writer_.flush();
      }
      // The pieces counted so far are all confirmed now.
    }
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
    if (ranks_ == 1) {
      writer_.submit(
          [this, particles, index, time, step] { write_frame(*particles, index, time, step); });
      return;
    }
    observe_parallel(std::move(particles), index, time, step);
  }

  void end() override {
    // A parallel run's run.pvd lists a frame once every rank has reported its piece written (see
    // observe_parallel); at the end every rank has flushed its pieces, so all frames are listed.
    if (ranks_ > 1 && rank_ == 0)
      writer_.submit([this] {
        listed_ = frames_.size();
        write_pvd();
      });
    writer_.flush();
  }

 private:
  void write_frame(const HostParticles& p, std::uint64_t index, double time, std::uint64_t step) {
    const std::string rel = "frames/" + frame_name(index);
    write_vtp(build(p, s_, time, step), s_.output_dir + "/" + rel, s_);
    frames_.push_back({time, rel});
    listed_ = frames_.size();
    write_pvd();
  }

  // A frame of a parallel run. Collective: every rank reports its layout and progress to rank 0
  // here, on the calling thread (the writer thread must not communicate). Rank 0 checks that the
  // pieces will agree with the summary, writes its piece and the summary, and lists in run.pvd only
  // the frames whose pieces every rank had finished, so that an interrupted run still opens.
  void observe_parallel(std::shared_ptr<const HostParticles> particles, std::uint64_t index,
                        double time, std::uint64_t step) {
    const Layout layout = layout_of(*particles, s_);
    const auto reports = comm_->gather(frame_report(pieces_written_.load(), layout));
    const std::string rel = "frames/" + piece_name(index, rank_);
    if (rank_ != 0) {
      writer_.submit([this, particles, rel, time, step] {
        write_vtp(build(*particles, s_, time, step), s_.output_dir + "/" + rel, s_);
        ++pieces_written_;
      });
      return;
    }
    if (reports.size() != std::size_t(ranks_))
      throw Error("vtk observer: gathered " + std::to_string(reports.size()) + " reports from " +
                  std::to_string(ranks_) + " ranks");
    const std::string mine = layout.text();
    std::uint64_t confirmed = std::numeric_limits<std::uint64_t>::max();
    for (int r = 1; r < ranks_; ++r) {
      const auto& rep = reports[std::size_t(r)];
      std::uint64_t done = 0;
      if (rep.size() < sizeof done)
        throw Error("vtk observer: rank " + std::to_string(r) + " sent a malformed frame report");
      std::memcpy(&done, rep.data(), sizeof done);
      const std::string theirs(rep.data() + sizeof done, rep.size() - sizeof done);
      if (theirs != mine)
        throw Error("vtk observer: frame " + std::to_string(index) + ": the particles of rank " +
                    std::to_string(r) +
                    " have other point arrays than those of rank 0, so their "
                    "pieces cannot form one data set (rank " +
                    std::to_string(r) + ": " + theirs + "; rank 0: " + mine + ")");
      confirmed = std::min(confirmed, done);
    }
    std::vector<std::string> pieces;
    for (int r = 0; r < ranks_; ++r) pieces.push_back(piece_name(index, r));
    writer_.submit([this, particles, rel, time, step, index, layout, pieces, confirmed] {
      write_vtp(build(*particles, s_, time, step), s_.output_dir + "/" + rel, s_);
      ++pieces_written_;
      const std::string summary = "frames/" + summary_name(index);
      write_file_atomic(s_.output_dir + "/" + summary, summary_xml(layout, pieces));
      frames_.push_back({time, summary});
      listed_ = std::max<std::size_t>(listed_, std::min<std::uint64_t>(frames_.size(), confirmed));
      write_pvd();
    });
  }

  // Frame files of index >= first (a dead run's frames after a checkpoint).
  void remove_frames_from(std::uint64_t first) const {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(s_.output_dir + "/frames", ec)) {
      const std::string name = e.path().filename().string();
      const auto ext = e.path().extension().string();
      if (ext != ".vtp" && ext != ".pvtp") continue;
      std::uint64_t index = 0;
      std::size_t k = 0;
      while (k < name.size() && name[k] >= '0' && name[k] <= '9')
        index = index * 10 + std::uint64_t(name[k++] - '0');
      if (k > 0 && index >= first) std::filesystem::remove(e.path(), ec);
    }
  }

  // Lists the first listed_ frames.
  void write_pvd() const {
    const std::vector<std::pair<double, std::string>> listed(frames_.begin(),
                                                             frames_.begin() + listed_);
    vtk_xml::write_pvd(s_.output_dir + "/run.pvd", listed);
  }

  Settings s_;
  int rank_ = 0, ranks_ = 1;
  Comm* comm_ = nullptr;
  std::uint64_t next_frame_ = 0;  // main thread only
  std::uint64_t last_step_ = 0;
  bool have_last_step_ = false;
  // Pieces (or frames) this rank has written completely: counted by the writer thread, reported
  // by the main thread.
  std::atomic<std::uint64_t> pieces_written_{0};
  // (time, file relative to the output folder, so that the folder can be moved); writer thread only
  std::vector<std::pair<double, std::string>> frames_;
  std::size_t listed_ = 0;  // how many of frames_ run.pvd lists; writer thread only
  // Declared last so it is destroyed first: its destructor runs the pending jobs, which use the
  // members above.
  AsyncWriter writer_;
};

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
the end. Open run.pvd in ParaView: docs/paraview.md.
Parallel runs (mpirun, several ranks): each frame is a VTK parallel PolyData. Every rank writes the
particles it owns as one piece, frames/NNNNNN_<rank>.vtp (with the arrays above; a rank that owns
no particles writes an empty piece), rank 0 writes frames/NNNNNN.pvtp, which lists the pieces, and
run.pvd lists the .pvtp files. run.pvd takes a frame in once every rank has reported its piece
complete (at the next frame, and at the end of the run), so an interrupted run still opens.)";

void register_vtk(Registrar& r) {
  FactoryInfo info;
  info.kind = PluginKind::Observer;
  info.name = "vtk";
  info.summary = "VTK XML frames (frames/*.vtp) and a ParaView collection (run.pvd)";
  info.doc = kDoc;
  info.backends = kCpu | kCuda;  // observers see host copies only
  info.schema
      .add(steps_param("interval", 100, 1,
                       "write a frame every this many steps (and at step 0 and the last step)"))
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
