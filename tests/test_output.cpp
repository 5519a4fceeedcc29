// SPDX-License-Identifier: BSD-3-Clause
// The output observers: `vtk` (frames/*.vtp + run.pvd, read back with VTK's own reader) and
// `thermo` (thermo.csv, parsed back). Values are random and known, so every array is checked
// element by element.
#include <gtest/gtest.h>
#include <vtkCellArray.h>
#include <vtkDataArray.h>
#include <vtkFieldData.h>
#include <vtkIdList.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkXMLDataElement.h>
#include <vtkXMLDataParser.h>
#include <vtkXMLPolyDataReader.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "pardyn/plugin.hpp"
#include "pardyn/app/registry.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using pardyn::HostParticles;
using pardyn::ParticleStore;
using pardyn::PluginKind;
using pardyn::Precision;
using pardyn::RunInfo;
using pardyn::Thermo;

namespace {

HostParticles random_particles(int dim, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  std::uniform_real_distribution<double> m(0.1, 5.0);
  std::uniform_int_distribution<std::int32_t> t(0, 7);
  HostParticles p(dim);
  for (int d = 0; d < dim; ++d) {
    p.x[d].resize(n);
    p.v[d].resize(n);
    p.a[d].resize(n);
  }
  p.mass.resize(n);
  p.type.resize(n);
  p.id.resize(n);
  p.epot.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (int d = 0; d < dim; ++d) {
      p.x[d][i] = u(rng);
      p.v[d][i] = u(rng);
      p.a[d][i] = 100 * u(rng);
    }
    p.mass[i] = m(rng);
    p.type[i] = t(rng);
    // Beyond 32 bits, so that a narrowing of ids would show.
    p.id[i] = (std::int64_t{1} << 40) + std::int64_t(7 * i) + std::int64_t(seed);
    p.epot[i] = -u(rng) * u(rng);
  }
  return p;
}

RunInfo run_info(const std::string& dir, int dim, Precision precision) {
  RunInfo run;
  run.dim = dim;
  run.precision = precision;
  run.output_dir = dir;
  return run;
}

Thermo thermo_at(std::uint64_t step, double time, int dim, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-10.0, 10.0);
  Thermo t;
  t.step = step;
  t.time = time;
  t.r.n = 100;
  t.r.mass = 42;
  t.r.kinetic = std::abs(u(rng));
  t.r.potential = u(rng) * 1e-7;  // small and odd digits: checks full precision
  t.total = t.r.kinetic + t.r.potential;
  t.initial_total = t.total * (1 + 1e-9);
  t.relative_drift = (t.total - t.initial_total) / std::abs(t.initial_total);
  for (int d = 0; d < 3; ++d) {
    t.r.momentum[d] = d < dim ? u(rng) : 0.0;
    t.r.angular_momentum[d] = (dim == 3 || d == 2) ? u(rng) : 0.0;
  }
  t.temperature = 2 * t.r.kinetic / (dim * (t.r.n - 1.0));
  t.force_evaluations = step + 1;
  t.dt = 1e-3 * (1 + std::abs(u(rng)));
  t.rejected_steps = step / 3;
  t.com_drift = std::abs(u(rng)) * 1e-13;
  t.pressure = u(rng);
  return t;
}

using pardyn::test::slurp;

// The XML part of an appended .vtp file: everything before the raw binary block.
std::string xml_header(const std::string& path) {
  const std::string all = slurp(path);
  return all.substr(0, all.find("<AppendedData"));
}

// The <DataArray ...> tag of the named array in a .vtp header.
std::string data_array_tag(const std::string& header, const std::string& name) {
  const auto at = header.find("Name=\"" + name + "\"");
  if (at == std::string::npos) return "";
  const auto begin = header.rfind('<', at);
  return header.substr(begin, header.find('>', at) - begin + 1);
}

std::vector<std::string> temp_files_under(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().find(".tmp-") != std::string::npos)
      found.push_back(e.path().string());
  return found;
}

struct PvdEntry {
  double time;
  std::string file;
};

// Parses run.pvd with VTK's XML parser (the one ParaView's reader uses).
std::vector<PvdEntry> read_pvd(const std::string& path) {
  vtkNew<vtkXMLDataParser> parser;
  parser->SetFileName(path.c_str());
  EXPECT_EQ(parser->Parse(), 1) << path << " does not parse";
  vtkXMLDataElement* root = parser->GetRootElement();
  std::vector<PvdEntry> entries;
  if (!root) return entries;
  EXPECT_STREQ(root->GetName(), "VTKFile");
  EXPECT_STREQ(root->GetAttribute("type"), "Collection");
  vtkXMLDataElement* coll = root->FindNestedElementWithName("Collection");
  if (!coll) {
    ADD_FAILURE() << "no <Collection> in " << path;
    return entries;
  }
  for (int i = 0; i < coll->GetNumberOfNestedElements(); ++i) {
    vtkXMLDataElement* ds = coll->GetNestedElement(i);
    EXPECT_STREQ(ds->GetName(), "DataSet");
    const char* ts = ds->GetAttribute("timestep");
    const char* file = ds->GetAttribute("file");
    if (!ts || !file) {
      ADD_FAILURE() << "DataSet without timestep or file in " << path;
      continue;
    }
    entries.push_back({std::strtod(ts, nullptr), file});
  }
  return entries;
}

vtkSmartPointer<vtkPolyData> read_vtp(const std::string& path) {
  vtkNew<vtkXMLPolyDataReader> reader;
  reader->SetFileName(path.c_str());
  reader->Update();
  EXPECT_EQ(reader->GetErrorCode(), 0u) << path;
  vtkSmartPointer<vtkPolyData> pd = reader->GetOutput();
  return pd;
}

std::string frame_file(int index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "frames/%06d.vtp", index);
  return buf;
}

// Compares a value written in the run's precision with the double it came from.
void expect_value(double got, double want, Precision precision, const std::string& what) {
  if (precision == Precision::Float) EXPECT_EQ(got, double(float(want))) << what;
  else EXPECT_EQ(got, want) << what;
}

// A value the writer computes (kinetic energy): the same formula, up to rounding.
void expect_close(double got, double want, Precision precision, const std::string& what) {
  const double rel = precision == Precision::Float ? 2e-7 : 4e-16;
  EXPECT_NEAR(got, want, rel * std::abs(want) + 1e-300) << what;
}

void check_frame(const std::string& path, const HostParticles& p, int dim, Precision precision,
                 double time, std::uint64_t step) {
  SCOPED_TRACE(path);
  const std::size_t n = p.size();
  const std::string real = precision == Precision::Float ? "Float32" : "Float64";
  const int vtk_real = precision == Precision::Float ? VTK_FLOAT : VTK_DOUBLE;

  // The file's XML header: appended raw binary, the expected compressor and types.
  const std::string header = xml_header(path);
  EXPECT_NE(header.find("type=\"PolyData\""), std::string::npos);
  EXPECT_NE(header.find("header_type=\"UInt64\""), std::string::npos);
  for (const char* name :
       {"velocity", "acceleration", "mass", "kinetic_energy", "potential_energy"}) {
    const std::string tag = data_array_tag(header, name);
    EXPECT_NE(tag.find("type=\"" + real + "\""), std::string::npos) << tag;
    EXPECT_NE(tag.find("format=\"appended\""), std::string::npos) << tag;
  }
  EXPECT_NE(data_array_tag(header, "type").find("type=\"Int32\""), std::string::npos);
  EXPECT_NE(data_array_tag(header, "id").find("type=\"Int64\""), std::string::npos);
  EXPECT_NE(slurp(path).find("<AppendedData encoding=\"raw\">"), std::string::npos)
      << "appended data is not raw binary";
  // Vertex cells in 32 bits while the count fits.
  EXPECT_NE(data_array_tag(header, "connectivity").find("type=\"Int32\""), std::string::npos);

  auto pd = read_vtp(path);
  ASSERT_TRUE(pd);
  ASSERT_EQ(pd->GetNumberOfPoints(), vtkIdType(n));
  EXPECT_EQ(pd->GetPoints()->GetData()->GetDataType(), vtk_real);

  // One vertex cell per particle, vertex i = point i.
  ASSERT_EQ(pd->GetNumberOfVerts(), vtkIdType(n));
  EXPECT_EQ(pd->GetNumberOfCells(), vtkIdType(n));
  vtkNew<vtkIdList> ids;
  for (vtkIdType c = 0; c < vtkIdType(n); ++c) {
    pd->GetCellPoints(c, ids);
    ASSERT_EQ(ids->GetNumberOfIds(), 1);
    EXPECT_EQ(ids->GetId(0), c);
  }

  vtkPointData* pt = pd->GetPointData();
  vtkDataArray* vel = pt->GetArray("velocity");
  vtkDataArray* acc = pt->GetArray("acceleration");
  vtkDataArray* mass = pt->GetArray("mass");
  vtkDataArray* type = pt->GetArray("type");
  vtkDataArray* id = pt->GetArray("id");
  vtkDataArray* ke = pt->GetArray("kinetic_energy");
  vtkDataArray* pe = pt->GetArray("potential_energy");
  ASSERT_TRUE(vel && acc && mass && type && id && ke && pe);
  EXPECT_EQ(vel->GetNumberOfComponents(), 3);
  EXPECT_EQ(acc->GetNumberOfComponents(), 3);
  for (vtkDataArray* a : {vel, acc, mass, ke, pe}) {
    EXPECT_EQ(a->GetDataType(), vtk_real) << a->GetName();
    EXPECT_EQ(a->GetNumberOfTuples(), vtkIdType(n)) << a->GetName();
  }
  EXPECT_EQ(type->GetDataTypeSize(), 4);
  EXPECT_EQ(id->GetDataTypeSize(), 8);

  for (std::size_t i = 0; i < n; ++i) {
    const auto k = vtkIdType(i);
    double v2 = 0;
    for (int d = 0; d < 3; ++d) {
      const bool in = d < dim;
      expect_value(pd->GetPoint(k)[d], in ? p.x[d][i] : 0.0, precision, "x");
      expect_value(vel->GetComponent(k, d), in ? p.v[d][i] : 0.0, precision, "v");
      expect_value(acc->GetComponent(k, d), in ? p.a[d][i] : 0.0, precision, "a");
      if (in) v2 += p.v[d][i] * p.v[d][i];
    }
    expect_value(mass->GetComponent(k, 0), p.mass[i], precision, "mass");
    EXPECT_EQ(type->GetComponent(k, 0), double(p.type[i]));
    EXPECT_EQ(static_cast<std::int64_t>(id->GetComponent(k, 0)), p.id[i]);
    expect_close(ke->GetComponent(k, 0), 0.5 * p.mass[i] * v2, precision, "kinetic_energy");
    expect_value(pe->GetComponent(k, 0), p.epot[i], precision, "potential_energy");
  }

  vtkDataArray* tv = pd->GetFieldData()->GetArray("TimeValue");
  ASSERT_TRUE(tv);
  EXPECT_EQ(tv->GetComponent(0, 0), time);
  vtkDataArray* st = pd->GetFieldData()->GetArray("step");
  ASSERT_TRUE(st);
  EXPECT_EQ(static_cast<std::uint64_t>(st->GetComponent(0, 0)), step);
}

struct FrameCase {
  std::uint64_t step;
  double time;
  HostParticles particles;
};

// Writes `frames` through a fresh vtk observer and checks every file it left.
// compressor: "" = compress = false; otherwise the `compressor` key ("lz4", "zlib").
void write_and_check(const std::string& name, int dim, Precision precision,
                     const std::string& compressor) {
  const bool compress = !compressor.empty();
  const std::string dir = pardyn::test::scratch_dir(name);
  const RunInfo run = run_info(dir, dim, precision);
  const auto params = pardyn::test::params_for(
      PluginKind::Observer, "vtk",
      std::string("interval = 5\ncompress = ") + (compress ? "true" : "false") +
          (compress ? "\ncompressor = \"" + compressor + "\"" : std::string()));
  auto obs = pardyn::test::registry().make_observer("vtk", params, run);
  ASSERT_TRUE(obs);
  EXPECT_EQ(obs->interval(), 5u);

  std::vector<FrameCase> frames;
  const double dt = 0.03;  // times like 0.15 have no exact binary form: they must still round-trip
  for (int f = 0; f < 4; ++f) {
    const std::uint64_t step = 5u * f;
    frames.push_back({step, step * dt, random_particles(dim, 37 + f, 1000 + f)});
  }

  obs->begin(run);
  for (const auto& f : frames) {
    Thermo t = thermo_at(f.step, f.time, dim, f.step);
    pardyn::ObserveContext ctx;
    ctx.step = f.step;
    ctx.time = f.time;
    ctx.run = &run;
    HostParticles scratch = f.particles;  // the framework reuses its buffer: the copy must be taken
    ctx.particles = &scratch;
    ctx.thermo = &t;
    obs->observe(ctx);
    scratch = HostParticles(dim);
  }
  obs->end();

  const auto entries = read_pvd(dir + "/run.pvd");
  ASSERT_EQ(entries.size(), frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(entries[i].time, frames[i].time) << "timestep of frame " << i;
    EXPECT_EQ(entries[i].file, frame_file(int(i)));
    const std::string path = dir + "/" + entries[i].file;
    ASSERT_TRUE(fs::exists(path)) << path;
    const std::string header = xml_header(path);
    if (compress)
      EXPECT_NE(header.find(compressor == "zlib" ? "compressor=\"vtkZLibDataCompressor\""
                                                 : "compressor=\"vtkLZ4DataCompressor\""),
                std::string::npos);
    else EXPECT_EQ(header.find("compressor="), std::string::npos);
    check_frame(path, frames[i].particles, dim, precision, frames[i].time, frames[i].step);
  }
  EXPECT_TRUE(temp_files_under(dir).empty()) << "left: " << temp_files_under(dir).front();
}

}  // namespace

TEST(VtkObserver, Schema) {
  const pardyn::FactoryInfo* info = pardyn::test::registry().find(PluginKind::Observer, "vtk");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->backends, pardyn::kCpu | pardyn::kCuda);
  EXPECT_NE(info->doc.find("run.pvd"), std::string::npos);
  for (const char* key : {"interval", "compress", "compressor", "compression_level"}) {
    const pardyn::ParamSpec* spec = info->schema.find(key);
    ASSERT_TRUE(spec) << key;
    EXPECT_TRUE(spec->default_value.has_value()) << key;
    EXPECT_FALSE(spec->doc.empty()) << key;
  }
  const auto params = pardyn::test::params_for(PluginKind::Observer, "vtk");
  EXPECT_EQ(params.integer("interval"), 100);
  EXPECT_TRUE(params.boolean("compress"));
  EXPECT_EQ(params.string("compressor"), "lz4");

  const std::string dir = pardyn::test::scratch_dir("vtk_schema");
  auto obs =
      pardyn::test::registry().make_observer("vtk", params, run_info(dir, 3, Precision::Double));
  const unsigned want = ParticleStore::kPosition | ParticleStore::kVelocity |
                        ParticleStore::kAcceleration | ParticleStore::kMass | ParticleStore::kType |
                        ParticleStore::kId | ParticleStore::kEpot | ParticleStore::kLabels;
  EXPECT_EQ(obs->fields(), want);
  EXPECT_EQ(obs->interval(), 100u);
}

TEST(VtkObserver, Double3DCompressed) {
  write_and_check("vtk_double_3d", 3, Precision::Double, "zlib");
}
TEST(VtkObserver, Float3DCompressed) {
  write_and_check("vtk_float_3d", 3, Precision::Float, "lz4");
}
TEST(VtkObserver, Double2DCompressed) {
  write_and_check("vtk_double_2d", 2, Precision::Double, "lz4");
}
TEST(VtkObserver, Float2DUncompressed) { write_and_check("vtk_float_2d", 2, Precision::Float, ""); }

TEST(VtkObserver, RepeatedStepWritesOneFrame) {
  const std::string dir = pardyn::test::scratch_dir("vtk_repeat");
  const RunInfo run = run_info(dir, 3, Precision::Double);
  auto obs = pardyn::test::registry().make_observer(
      "vtk", pardyn::test::params_for(PluginKind::Observer, "vtk", "interval = 1"), run);
  const HostParticles p = random_particles(3, 5, 7);
  const Thermo t = thermo_at(0, 0.0, 3, 1);
  pardyn::ObserveContext ctx;
  ctx.run = &run;
  ctx.particles = &p;
  ctx.thermo = &t;
  obs->begin(run);
  obs->observe(ctx);
  ctx.step = 1;
  ctx.time = 0.25;
  obs->observe(ctx);
  obs->observe(ctx);  // the last step coinciding with an interval step
  obs->end();
  const auto entries = read_pvd(dir + "/run.pvd");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].time, 0.25);
  EXPECT_FALSE(fs::exists(dir + "/" + frame_file(2)));
}

TEST(VtkObserver, EmptyCollectionReplacesAnOldOne) {
  const std::string dir = pardyn::test::scratch_dir("vtk_stale");
  {
    std::ofstream old(dir + "/run.pvd");
    old << "<VTKFile type=\"Collection\"><Collection><DataSet timestep=\"9\" file=\"x.vtp\"/>"
           "</Collection></VTKFile>\n";
  }
  const RunInfo run = run_info(dir, 2, Precision::Double);
  auto obs = pardyn::test::registry().make_observer(
      "vtk", pardyn::test::params_for(PluginKind::Observer, "vtk"), run);
  obs->begin(run);
  obs->end();
  EXPECT_TRUE(read_pvd(dir + "/run.pvd").empty());
  EXPECT_TRUE(fs::is_directory(dir + "/frames"));
}

TEST(VtkObserver, WriteErrorIsReportedByEnd) {
  const std::string dir = pardyn::test::scratch_dir("vtk_error");
  const RunInfo run = run_info(dir, 3, Precision::Double);
  auto obs = pardyn::test::registry().make_observer(
      "vtk", pardyn::test::params_for(PluginKind::Observer, "vtk"), run);
  obs->begin(run);
  obs->end();
  // A file where the frames folder should be: writing the first frame must fail on the writer
  // thread, and end() must say so.
  fs::remove_all(dir + "/frames");
  std::ofstream(dir + "/frames") << "not a folder\n";
  const HostParticles p = random_particles(3, 4, 3);
  const Thermo t = thermo_at(0, 0.0, 3, 1);
  pardyn::ObserveContext ctx;
  ctx.run = &run;
  ctx.particles = &p;
  ctx.thermo = &t;
  obs->observe(ctx);
  try {
    obs->end();
    FAIL() << "end() did not report the failed frame";
  } catch (const pardyn::Error& e) {
    EXPECT_NE(std::string(e.what()).find("000000.vtp"), std::string::npos) << e.what();
  }
}

namespace {

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream s(line);
  while (std::getline(s, cur, sep)) out.push_back(cur);
  return out;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(f, l);) lines.push_back(l);
  return lines;
}

// What a row must hold, in the documented column order.
std::vector<double> expected_row(const Thermo& t, std::uint64_t step, double time, int dim) {
  std::vector<double> v = {double(step),  time,    t.r.kinetic,
                           t.r.potential, t.total, t.relative_drift};
  if (dim == 2) {
    v.insert(v.end(), {t.r.momentum[0], t.r.momentum[1], t.r.angular_momentum[2]});
  } else {
    v.insert(v.end(), {t.r.momentum[0], t.r.momentum[1], t.r.momentum[2]});
    v.insert(v.end(), {t.r.angular_momentum[0], t.r.angular_momentum[1], t.r.angular_momentum[2]});
  }
  v.push_back(t.temperature);
  v.push_back(double(t.force_evaluations));
  v.insert(v.end(), {t.dt, double(t.rejected_steps), t.com_drift, t.pressure});
  return v;
}

void thermo_round_trip(const std::string& name, int dim, const std::string& overrides,
                       const std::string& file) {
  const std::string dir = pardyn::test::scratch_dir(name);
  const RunInfo run = run_info(dir, dim, Precision::Double);
  auto obs = pardyn::test::registry().make_observer(
      "thermo", pardyn::test::params_for(PluginKind::Observer, "thermo", overrides), run);
  ASSERT_TRUE(obs);
  EXPECT_EQ(obs->fields(), 0u);

  obs->begin(run);
  std::vector<Thermo> rows;
  for (std::uint64_t step : {0u, 10u, 20u, 30u, 37u}) {
    rows.push_back(thermo_at(step, step * 0.01, dim, 50 + step));
    pardyn::ObserveContext ctx;
    ctx.step = step;
    ctx.time = step * 0.01;
    ctx.run = &run;
    ctx.thermo = &rows.back();
    obs->observe(ctx);
  }
  // Flushed after each row: the file is complete before end(), as after a crash.
  const std::string path = dir + "/" + file;
  EXPECT_EQ(read_lines(path).size(), rows.size() + 1);
  obs->end();

  const auto lines = read_lines(path);
  ASSERT_EQ(lines.size(), rows.size() + 1);
  const std::string want_header =
      dim == 2 ? "step,time,kinetic,potential,total,relative_drift,px,py,lz,temperature,"
                 "force_evaluations,dt,rejected_steps,com_drift,pressure"
               : "step,time,kinetic,potential,total,relative_drift,px,py,pz,lx,ly,lz,temperature,"
                 "force_evaluations,dt,rejected_steps,com_drift,pressure";
  EXPECT_EQ(lines[0], want_header);
  const std::size_t columns = split(want_header, ',').size();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto cells = split(lines[r + 1], ',');
    ASSERT_EQ(cells.size(), columns) << lines[r + 1];
    const auto want = expected_row(rows[r], rows[r].step, rows[r].time, dim);
    // Integers are written as integers.
    EXPECT_EQ(cells.front(), std::to_string(rows[r].step));
    EXPECT_EQ(cells[columns - 5], std::to_string(rows[r].force_evaluations));
    EXPECT_EQ(cells[columns - 3], std::to_string(rows[r].rejected_steps));
    for (std::size_t c = 0; c < columns; ++c) {
      char* end = nullptr;
      const double got = std::strtod(cells[c].c_str(), &end);
      EXPECT_EQ(*end, '\0') << "cell '" << cells[c] << "'";
      EXPECT_EQ(got, want[c]) << "row " << r << " column " << c << " '" << cells[c] << "'";
    }
  }
}

}  // namespace

TEST(ThermoObserver, Schema) {
  const pardyn::FactoryInfo* info = pardyn::test::registry().find(PluginKind::Observer, "thermo");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->backends, pardyn::kCpu | pardyn::kCuda);
  EXPECT_NE(info->doc.find("relative_drift"), std::string::npos);
  const auto params = pardyn::test::params_for(PluginKind::Observer, "thermo");
  EXPECT_EQ(params.integer("interval"), 10);
  EXPECT_EQ(params.string("file"), "thermo.csv");
}

TEST(ThermoObserver, RoundTrip3D) {
  thermo_round_trip("thermo_3d", 3, "interval = 10", "thermo.csv");
}
TEST(ThermoObserver, RoundTrip2D) { thermo_round_trip("thermo_2d", 2, "", "thermo.csv"); }
TEST(ThermoObserver, FileInSubfolder) {
  thermo_round_trip("thermo_subfolder", 3, "file = \"logs/energy.csv\"", "logs/energy.csv");
}

TEST(ThermoObserver, RepeatedStepWritesOneRow) {
  const std::string dir = pardyn::test::scratch_dir("thermo_repeat");
  const RunInfo run = run_info(dir, 3, Precision::Float);
  auto obs = pardyn::test::registry().make_observer(
      "thermo", pardyn::test::params_for(PluginKind::Observer, "thermo"), run);
  const Thermo t = thermo_at(5, 0.5, 3, 9);
  pardyn::ObserveContext ctx;
  ctx.step = 5;
  ctx.time = 0.5;
  ctx.run = &run;
  ctx.thermo = &t;
  obs->begin(run);
  obs->observe(ctx);
  obs->observe(ctx);
  obs->end();
  EXPECT_EQ(read_lines(dir + "/thermo.csv").size(), 2u);
}
