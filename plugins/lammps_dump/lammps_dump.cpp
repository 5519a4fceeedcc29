// SPDX-License-Identifier: BSD-3-Clause
// lammps_dump: a LAMMPS text dump in the `custom` style (https://docs.lammps.org/dump.html), one
// frame per observation, which OVITO, VMD, MDAnalysis and LAMMPS's own read_dump read.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pardyn/plugin_export.hpp"
#include "../common/text_input.hpp"
#include "../common/trajectory.hpp"

namespace pardyn::plugins {
namespace {

class LammpsDump final : public trajectory::Writer {
 public:
  LammpsDump(std::uint64_t interval, std::string file)
      : Writer("lammps_dump observer", interval, std::move(file)) {}
  ~LammpsDump() override { finish_pending(); }

 protected:
  void write_header(std::string& t, const trajectory::Frame& f, std::uint64_t step,
                    double time) override {
    using trajectory::put;
    const Box& box = run().box;
    const int dim = f.dim;
    const std::size_t n = f.size();
    bool periodic = false;
    for (int d = 0; d < dim; ++d) periodic = periodic || box.boundary[d] == Boundary::Periodic;
    t += "ITEM: TIME\n";
    put(t, time);
    t += "\nITEM: TIMESTEP\n";
    trajectory::put_int(t, std::int64_t(step));
    t += "\nITEM: NUMBER OF ATOMS\n";
    trajectory::put_int(t, std::int64_t(n));
    // Bounds: pp periodic, ff walls, mm open (the box, grown to hold every particle: LAMMPS's
    // shrink-wrapping with a minimum); 2D: -0.5 0.5 along z, periodic (as LAMMPS's 2D boxes).
    double lo[3] = {-0.5, -0.5, -0.5}, hi[3] = {0.5, 0.5, 0.5};
    const char* flag[3] = {"pp", "pp", "pp"};
    for (int d = 0; d < dim; ++d) {
      lo[d] = box.lo[d];
      hi[d] = box.hi[d];
      if (box.boundary[d] == Boundary::Wall) flag[d] = "ff";
      if (box.boundary[d] != Boundary::Open) continue;
      flag[d] = "mm";
      for (std::size_t i = 0; i < n; ++i) {
        lo[d] = std::min(lo[d], f.x[d][i]);
        hi[d] = std::max(hi[d], f.x[d][i]);
      }
    }
    t += "\nITEM: BOX BOUNDS ";
    t += flag[0];
    t += ' ';
    t += flag[1];
    t += ' ';
    t += flag[2];
    for (int d = 0; d < 3; ++d) {
      t += '\n';
      put(t, lo[d]);
      t += ' ';
      put(t, hi[d]);
    }
    t += periodic ? "\nITEM: ATOMS id type x y z vx vy vz ix iy iz mass\n"
                  : "\nITEM: ATOMS id type x y z vx vy vz mass\n";
  }

  void write_rows(std::string& t, const trajectory::Frame& f, std::size_t first,
                  std::size_t last) const override {
    using trajectory::put;
    const Box& box = run().box;
    const int dim = f.dim;
    bool periodic = false;
    for (int d = 0; d < dim; ++d) periodic = periodic || box.boundary[d] == Boundary::Periodic;
    for (std::size_t i = first; i < last; ++i) {
      trajectory::put_int(t, f.id[i] + 1);
      t += ' ';
      trajectory::put_int(t, std::int64_t(f.type[i]) + 1);
      for (int d = 0; d < 3; ++d) {
        t += ' ';
        if (d < dim) put(t, f.x[d][i]);
        else t += '0';
      }
      for (int d = 0; d < 3; ++d) {
        t += ' ';
        if (d < dim) put(t, f.v[d][i]);
        else t += '0';
      }
      if (periodic)
        for (int d = 0; d < 3; ++d) {
          t += ' ';
          trajectory::put_int(t,
                              d < dim && box.boundary[d] == Boundary::Periodic ? f.image[d][i] : 0);
        }
      t += ' ';
      put(t, f.mass[i]);
      t += '\n';
    }
  }

  // Complete frames (ITEM: TIME, ITEM: TIMESTEP, NUMBER OF ATOMS, BOX BOUNDS and 3 lines, ATOMS
  // and that many lines) up to `step`.
  std::int64_t kept_bytes(const std::string& path, std::uint64_t step) const override {
    trajectory::LineCursor c(path);
    if (!c.ok()) return -1;
    std::string line;
    for (bool first = true;; first = false) {
      const std::int64_t start = std::int64_t(c.offset());
      const std::int64_t broken = first ? -1 : start;
      if (!c.next(line)) return start;
      if (line == "ITEM: TIME") {
        if (!c.next(line) || !c.next(line)) return broken;
      }
      std::int64_t s = -1, n = -1;
      if (line != "ITEM: TIMESTEP" || !c.next(line) || !text::parse_int(line, s) || s < 0)
        return broken;
      if (!c.next(line) || line != "ITEM: NUMBER OF ATOMS" || !c.next(line) ||
          !text::parse_int(line, n) || n < 0)
        return broken;
      if (!c.next(line) || line.rfind("ITEM: BOX BOUNDS", 0) != 0) return broken;
      for (int k = 0; k < 3; ++k)
        if (!c.next(line)) return broken;
      if (!c.next(line) || line.rfind("ITEM: ATOMS", 0) != 0) return broken;
      for (std::int64_t k = 0; k < n; ++k)
        if (!c.next(line)) return start;
      if (std::uint64_t(s) > step) return start;
    }
  }
};

const char* const kDoc = R"(Writes a LAMMPS dump file in the `custom` text style
(https://docs.lammps.org/dump.html; OVITO, VMD, MDAnalysis and LAMMPS's read_dump read it): one
frame per observation (at step 0, every `interval` steps and at the last step), appended to one
file and flushed after each frame. Each frame is
  ITEM: TIME                      the simulation time (time), as dump_modify time yes writes it
  ITEM: TIMESTEP                  the step
  ITEM: NUMBER OF ATOMS           N
  ITEM: BOX BOUNDS xx yy zz       then "lo hi" for x, y and z
  ITEM: ATOMS id type x y z vx vy vz ix iy iz mass
then one line per particle, sorted by id. id is pardyn's particle id + 1 and type pardyn's type
+ 1 (LAMMPS counts both from 1). Bounds flags: pp on periodic axes, ff on walled ones, mm on open
ones, whose bounds are the [box]'s grown to hold every particle (LAMMPS's shrink-wrapping with a
minimum). ix iy iz are the image counts (the unwrapped position is x + ix Lx, as in LAMMPS),
written when an axis is periodic (0 on the others); positions are wrapped into the box on
periodic axes. mass is the particle's mass (mass). A 2D run writes z = 0, vz = 0, iz = 0 and z
bounds -0.5 0.5, pp (LAMMPS's convention for 2D). Numbers are written with the fewest digits that
read back to the same double (bitwise). Read it back into LAMMPS with e.g.
  read_dump dump.lammpstrj 100 x y z vx vy vz ix iy iz box yes add keep
In a parallel run rank 0 gathers every rank's particles and writes the file. A resumed run
(pardyn run --resume) keeps the frames up to the checkpoint's step and appends.)";

void register_lammps_dump(Registrar& r) {
  FactoryInfo o;
  o.kind = PluginKind::Observer;
  o.name = "lammps_dump";
  o.summary = "LAMMPS dump (custom style: id type x y z vx vy vz ...), one frame per observation";
  o.doc = kDoc;
  o.backends = kCpu | kCuda;  // observers see host copies only
  trajectory::add_common_keys(o.schema, "dump.lammpstrj", "the dump file");
  r.add(std::move(o), Factory<Observer>([](const ParamSet& ps, const RunInfo&) {
          const std::string file =
              trajectory::file_key(ps, "lammps_dump observer", "dump.lammpstrj");
          return std::unique_ptr<Observer>(
              new LammpsDump(static_cast<std::uint64_t>(ps.integer("interval")), file));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_lammps_dump)
