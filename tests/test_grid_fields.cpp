// SPDX-License-Identifier: BSD-3-Clause
// The grid_fields observer: known particle layouts give known cell values (number and mass density,
// mean velocity, temperature relative to the cell's flow, count), the .vti files read back with VTK's
// own reader, fields.pvd lists them with their times, and a whole run writes them where documented.
#include <gtest/gtest.h>
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkFieldData.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkXMLImageDataReader.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "pardyn/app/config.hpp"
#include "pardyn/app/simulation.hpp"
#include "support.hpp"

using namespace pardyn;

namespace {

struct Image {
  vtkSmartPointer<vtkImageData> data;
  double cell(const char* array, vtkIdType c, int comp = 0) const {
    vtkDataArray* a = data->GetCellData()->GetArray(array);
    if (!a) throw Error(std::string("no cell array ") + array);
    return a->GetComponent(c, comp);
  }
  double field(const char* array) const {
    vtkDataArray* a = data->GetFieldData()->GetArray(array);
    if (!a) throw Error(std::string("no field array ") + array);
    return a->GetComponent(0, 0);
  }
};

Image read_vti(const std::string& path) {
  EXPECT_TRUE(std::filesystem::exists(path)) << path;
  vtkNew<vtkXMLImageDataReader> r;
  r->SetFileName(path.c_str());
  r->Update();
  Image img;
  img.data = r->GetOutput();
  return img;
}

using test::slurp;

void add(HostParticles& p, std::vector<double> x, std::vector<double> v, double m) {
  for (int d = 0; d < p.dim; ++d) {
    p.x[d].push_back(x[d]);
    p.v[d].push_back(v[d]);
  }
  p.mass.push_back(m);
}

std::shared_ptr<Observer> make(const RunInfo& run, const std::string& keys) {
  return test::registry().make_observer(
      "grid_fields", test::params_for(PluginKind::Observer, "grid_fields", keys), run);
}

}  // namespace

// 2D, box [0,2] x [0,0.5], cells [2, 1]: cells of area 0.5.
//   cell 0: masses 1, 1, 2 with velocities (1,0), (-1,0), (0,3): momentum (0, 6), mass 4,
//           u = (0, 1.5); relative speeds^2 3.25, 3.25, 2.25: sum m |v-u|^2 = 3.25 + 3.25 + 4.5 = 11,
//           T = 11 / (2 (3 - 1)) = 2.75; number density 3 / 0.5 = 6, mass density 4 / 0.5 = 8.
//   cell 1: one particle of mass 0.5 on the upper corner (2, 0.5), velocity (2, 2): the last cell;
//           u = (2, 2), T undefined (NaN), densities 2 and 1.
//   one particle at x = 3 is outside the (open) box: not binned, counted in particles_outside.
TEST(GridFields, KnownLayoutGivesKnownCellValues2D) {
  RunInfo run;
  run.dim = 2;
  run.box.lo[0] = 0, run.box.hi[0] = 2, run.box.lo[1] = 0, run.box.hi[1] = 0.5;
  run.output_dir = test::scratch_dir("fields2d");
  auto obs = make(run, "cells = [2, 1]\ninterval = 1");
  EXPECT_EQ(
      obs->fields() & (ParticleStore::kPosition | ParticleStore::kVelocity | ParticleStore::kMass),
      unsigned(ParticleStore::kPosition | ParticleStore::kVelocity | ParticleStore::kMass));

  HostParticles p(2);
  add(p, {0.25, 0.25}, {1, 0}, 1);
  add(p, {0.5, 0.1}, {-1, 0}, 1);
  add(p, {0.75, 0.4}, {0, 3}, 2);
  add(p, {2.0, 0.5}, {2, 2}, 0.5);
  add(p, {3.0, 0.2}, {0, 0}, 1);
  obs->begin(run);
  ObserveContext ctx{0, 0.0, &run, &p, nullptr, nullptr};
  obs->observe(ctx);
  // A second file, later, with the first particle's velocity reversed: cell 0's flow changes.
  HostParticles q = p;
  q.v[0][0] = -1;
  ObserveContext ctx2{10, 0.5, &run, &q, nullptr, nullptr};
  obs->observe(ctx2);
  obs->end();

  const Image a = read_vti(run.output_dir + "/fields/000000.vti");
  ASSERT_NE(a.data, nullptr);
  int dims[3];
  a.data->GetDimensions(dims);
  EXPECT_EQ(dims[0], 3);
  EXPECT_EQ(dims[1], 2);
  EXPECT_EQ(dims[2], 1);
  double spacing[3], origin[3];
  a.data->GetSpacing(spacing);
  a.data->GetOrigin(origin);
  EXPECT_DOUBLE_EQ(spacing[0], 1.0);
  EXPECT_DOUBLE_EQ(spacing[1], 0.5);
  EXPECT_DOUBLE_EQ(origin[0], 0.0);
  EXPECT_DOUBLE_EQ(origin[1], 0.0);
  ASSERT_EQ(a.data->GetNumberOfCells(), 2);

  EXPECT_DOUBLE_EQ(a.cell("number_density", 0), 6.0);
  EXPECT_DOUBLE_EQ(a.cell("mass_density", 0), 8.0);
  EXPECT_DOUBLE_EQ(a.cell("count", 0), 3.0);
  EXPECT_DOUBLE_EQ(a.cell("velocity", 0, 0), 0.0);
  EXPECT_DOUBLE_EQ(a.cell("velocity", 0, 1), 1.5);
  EXPECT_DOUBLE_EQ(a.cell("velocity", 0, 2), 0.0);
  EXPECT_DOUBLE_EQ(a.cell("temperature", 0), 2.75);

  EXPECT_DOUBLE_EQ(a.cell("number_density", 1), 2.0);
  EXPECT_DOUBLE_EQ(a.cell("mass_density", 1), 1.0);
  EXPECT_DOUBLE_EQ(a.cell("velocity", 1, 0), 2.0);
  EXPECT_DOUBLE_EQ(a.cell("velocity", 1, 1), 2.0);
  EXPECT_TRUE(std::isnan(a.cell("temperature", 1)));
  EXPECT_EQ(a.field("particles_outside"), 1.0);
  EXPECT_EQ(a.field("step"), 0.0);
  EXPECT_EQ(a.field("TimeValue"), 0.0);

  // Second file: momentum (-2, 6) / 4 -> u = (-0.5, 1.5); relative (-0.5, -1.5), (-0.5, -1.5),
  // (0.5, 1.5): sum m |v-u|^2 = 2.5 + 2.5 + 2 * 2.5 = 10, T = 10 / 4 = 2.5.
  const Image b = read_vti(run.output_dir + "/fields/000001.vti");
  ASSERT_NE(b.data, nullptr);
  EXPECT_DOUBLE_EQ(b.cell("velocity", 0, 0), -0.5);
  EXPECT_DOUBLE_EQ(b.cell("temperature", 0), 2.5);
  EXPECT_EQ(b.field("step"), 10.0);
  EXPECT_EQ(b.field("TimeValue"), 0.5);

  const std::string pvd = slurp(run.output_dir + "/fields.pvd");
  EXPECT_NE(pvd.find("timestep=\"0\" group=\"\" part=\"0\" file=\"fields/000000.vti\""),
            std::string::npos)
      << pvd;
  EXPECT_NE(pvd.find("timestep=\"0.5\" group=\"\" part=\"0\" file=\"fields/000001.vti\""),
            std::string::npos)
      << pvd;
}

// 3D, box [-1,1]^3, cells [2,2,2]: cell data are ordered x fastest, then y, then z (VTK's order).
// Cell 7 holds two unit masses with velocities (1,2,3) and (-1,0,1): u = (0,1,2), relative
// (1,1,1) and (-1,-1,-1): T = 6 / (3 (2 - 1)) = 2.
TEST(GridFields, CellsAreOrderedXFastestIn3D) {
  RunInfo run;
  run.dim = 3;
  for (int d = 0; d < 3; ++d) run.box.lo[d] = -1, run.box.hi[d] = 1;
  run.output_dir = test::scratch_dir("fields3d");
  auto obs = make(run, "cells = [2, 2, 2]");
  HostParticles p(3);
  add(p, {0.5, -0.5, -0.5}, {0, 0, 0}, 1);  // cell 1
  add(p, {-0.5, 0.5, -0.5}, {0, 0, 0}, 2);  // cell 2
  add(p, {-0.5, -0.5, 0.5}, {0, 0, 0}, 3);  // cell 4
  add(p, {0.5, 0.5, 0.5}, {1, 2, 3}, 1);    // cell 7
  add(p, {0.9, 0.9, 0.9}, {-1, 0, 1}, 1);   // cell 7
  obs->begin(run);
  ObserveContext ctx{0, 0.0, &run, &p, nullptr, nullptr};
  obs->observe(ctx);
  obs->end();
  const Image a = read_vti(run.output_dir + "/fields/000000.vti");
  ASSERT_NE(a.data, nullptr);
  ASSERT_EQ(a.data->GetNumberOfCells(), 8);
  const double expected_mass[8] = {0, 1, 2, 0, 3, 0, 0, 2};
  for (int c = 0; c < 8; ++c) EXPECT_DOUBLE_EQ(a.cell("mass_density", c), expected_mass[c]) << c;
  EXPECT_DOUBLE_EQ(a.cell("number_density", 7), 2.0);
  EXPECT_DOUBLE_EQ(a.cell("temperature", 7), 2.0);
  for (int d = 0; d < 3; ++d) EXPECT_DOUBLE_EQ(a.cell("velocity", 7, d), double(d)) << d;
  EXPECT_DOUBLE_EQ(a.cell("velocity", 0, 0), 0.0);  // empty cell: zero flow
  EXPECT_TRUE(std::isnan(a.cell("temperature", 0)));
  EXPECT_EQ(a.field("particles_outside"), 0.0);
}

// A whole run: a 2D square lattice of spacing 1 in a periodic box [0,4]^2 binned into 2 x 2 cells
// holds 4 particles per cell of area 4: number density 1 everywhere, in fields/000000.vti (step 0)
// and fields/000001.vti (the last step), both listed in fields.pvd.
TEST(GridFields, WholeRunWritesTheDocumentedFiles) {
  const std::string dir = test::scratch_dir("fields-run");
  std::ofstream(dir + "/scenario.toml")
      << "[simulation]\ndimension = 2\nsteps = 3\nbackend = \"cpu\"\n"
         "[box]\nlo = [0, 0]\nhi = [4, 4]\nboundary = [\"periodic\"]\n"
         "[[particles]]\ngenerator = \"lattice\"\nkind = \"square\"\nspacing = 1.0\n"
         "[integrator]\ntype = \"leapfrog\"\ndt = 0.01\n"
         "[[output]]\ntype = \"grid_fields\"\ninterval = 100\ncells = [2, 2]\n";
  Scenario sc = load_scenario(dir + "/scenario.toml", {}, test::registry());
  RunOptions opt;
  opt.quiet = true;
  opt.output = dir + "/out";
  Simulation sim(sc, test::registry(), opt);
  sim.run();
  for (const char* f : {"/out/fields/000000.vti", "/out/fields/000001.vti"}) {
    const Image a = read_vti(dir + f);
    ASSERT_NE(a.data, nullptr) << f;
    ASSERT_EQ(a.data->GetNumberOfCells(), 4) << f;
    for (int c = 0; c < 4; ++c) EXPECT_DOUBLE_EQ(a.cell("number_density", c), 1.0) << f << " " << c;
  }
  const std::string pvd = slurp(dir + "/out/fields.pvd");
  EXPECT_NE(pvd.find("fields/000000.vti"), std::string::npos) << pvd;
  EXPECT_NE(pvd.find("fields/000001.vti"), std::string::npos) << pvd;
}

// cells must have one entry per axis of the run; the message names the key and gives an example.
TEST(GridFields, WrongCellCountIsRefused) {
  RunInfo run;
  run.dim = 3;
  try {
    make(run, "cells = [4, 4]");
    ADD_FAILURE() << "cells = [4, 4] accepted for a 3D run";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cells"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make(run, "cells = [4, 0, 4]"), Error);
  EXPECT_THROW(test::params_for(PluginKind::Observer, "grid_fields", "interval = 3"), Error)
      << "cells is required";
}
