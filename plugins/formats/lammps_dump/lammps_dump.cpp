// SPDX-License-Identifier: BSD-3-Clause
// lammps_dump: LAMMPS text dumps (https://docs.lammps.org/dump.html): written in the `custom`
// style, one frame per observation, which OVITO, VMD, MDAnalysis and LAMMPS's own read_dump read
// (an output); and one frame read to start a run (a generator), from the `atom` and `custom`
// styles LAMMPS writes. Both go through one description of a frame's header (read_header).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pardyn/plugin_export.hpp"
#include "../../common/lammps.hpp"
#include "../../common/text_input.hpp"
#include "../../common/trajectory.hpp"

namespace pardyn::plugins {
namespace {

using text::shown;

// ---------------------------------------------------------------------------------------------
// A frame's header, in the order LAMMPS writes it:
//   [ITEM: UNITS, its line] [ITEM: TIME, t] ITEM: TIMESTEP, s  ITEM: NUMBER OF ATOMS, n
//   ITEM: BOX BOUNDS [xy xz yz] xx yy zz, then "lo hi [tilt]" for x, y, z
//   ITEM: ATOMS column names...   then n atom lines
struct DumpHeader {
  bool have_time = false;
  double time = 0;
  std::uint64_t step = 0;
  std::uint64_t atoms = 0;
  bool triclinic = false;
  std::string flags[3] = {"pp", "pp", "pp"};  // boundary letters per axis (old dumps give none)
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  std::vector<std::string> columns;
};

enum class HeaderRead { Ok, End, Bad };

// Reads the next frame's header through `next(line)` (false at the end of the file): Ok, End
// when the file ends before the frame's first line, Bad with `why` set (what is wrong, for a
// message) when the lines are not a header.
template <class Next>
HeaderRead read_header(Next&& next, DumpHeader& h, std::string& why) {
  std::string line;
  do {
    if (!next(line)) return HeaderRead::End;
  } while (text::trim(line).empty());
  h = DumpHeader();
  bool have_step = false, have_atoms = false, have_box = false;
  auto bad = [&](std::string what) {
    why = std::move(what);
    return HeaderRead::Bad;
  };
  auto value = [&](std::string& out) {  // the line after an item, trimmed
    if (!next(out)) return false;
    out = std::string(text::trim(out));
    return true;
  };
  auto whole = [&](std::uint64_t& out) {  // the line after an item, a whole number >= 0
    std::string v;
    std::int64_t k = -1;
    if (!value(v) || !text::parse_int(v, k) || k < 0) return false;
    out = std::uint64_t(k);
    return true;
  };
  for (;;) {
    const std::string_view l = text::trim(line);
    if (l.rfind("ITEM:", 0) != 0)
      return bad("expected an 'ITEM:' line of a LAMMPS dump, found '" + shown(l) + "'");
    const std::string_view item = text::trim(l.substr(5));
    const auto w = text::words(item);
    std::string v;
    if (item == "UNITS") {
      if (!value(v)) return bad("the file ends after ITEM: UNITS");
    } else if (item == "TIME") {
      if (!value(v) || text::parse_real(v, h.time) != text::Parsed::Ok)
        return bad("ITEM: TIME is not followed by a number");
      h.have_time = true;
    } else if (item == "TIMESTEP") {
      if (!whole(h.step)) return bad("ITEM: TIMESTEP is not followed by a whole number >= 0");
      have_step = true;
    } else if (item == "NUMBER OF ATOMS") {
      if (!whole(h.atoms))
        return bad("ITEM: NUMBER OF ATOMS is not followed by a whole number >= 0");
      have_atoms = true;
    } else if (w.size() >= 2 && w[0] == "BOX" && w[1] == "BOUNDS") {
      std::size_t at = 2;
      h.triclinic = w.size() > 2 && w[2] == "xy";
      if (h.triclinic) at = 5;
      if (w.size() == at + 3)
        for (int d = 0; d < 3; ++d) h.flags[d] = std::string(w[at + std::size_t(d)]);
      else if (w.size() != at)
        return bad("'ITEM: " + shown(item) +
                   "' is not BOX BOUNDS followed by three boundary "
                   "flags such as pp pp ff");
      for (int d = 0; d < 3; ++d) {
        if (!next(v)) return bad("the file ends inside the box bounds");
        const auto b = text::words(v);
        if (b.size() != (h.triclinic ? 3u : 2u) ||
            text::parse_real(b[0], h.lo[d]) != text::Parsed::Ok ||
            text::parse_real(b[1], h.hi[d]) != text::Parsed::Ok)
          return bad(std::string("the ") + "xyz"[d] + " bounds '" + shown(text::trim(v)) +
                     "' are not " + (h.triclinic ? "lo hi tilt" : "lo hi"));
      }
      have_box = true;
    } else if (!w.empty() && w[0] == "ATOMS") {
      if (!have_step || !have_atoms || !have_box)
        return bad("ITEM: ATOMS before the frame's TIMESTEP, NUMBER OF ATOMS and BOX BOUNDS");
      for (std::size_t k = 1; k < w.size(); ++k) h.columns.emplace_back(w[k]);
      return HeaderRead::Ok;
    } else {
      return bad("'ITEM: " + shown(item) +
                 "' is not an item of a LAMMPS atom dump (TIMESTEP, NUMBER OF ATOMS, BOX "
                 "BOUNDS, ATOMS, TIME, UNITS); is this a dump local or grid?");
    }
    if (!next(line)) return bad("the file ends before the frame's ITEM: ATOMS");
  }
}

// The boundary of a dump axis: pp periodic, ff a wall, anything with s or m open. `loose`: its
// bounds hold the atoms, not a box (shrink-wrapped).
Boundary axis_boundary(const std::string& flag, bool& loose) {
  Boundary lower = Boundary::Open, upper = Boundary::Open;
  const bool ok = flag.size() == 2 && lammps::boundary_of(flag[0], lower) &&
                  lammps::boundary_of(flag[1], upper);
  loose = !ok || lower == Boundary::Open || upper == Boundary::Open;
  if (ok && lower == upper) return lower;
  return Boundary::Open;
}

// Goes through the frames of `r` until `stop(header, index)` is true: the frame's atom lines are
// then next in `r` and true is returned. The atom lines of the frames before are skipped (they
// must be there). False at the end of the file, with `frames` the number of frames.
template <class Stop>
bool find_frame(text::LineReader& r, DumpHeader& h, std::size_t& frames, Stop&& stop) {
  std::string line, why;
  for (frames = 0;; ++frames) {
    const HeaderRead got = read_header([&](std::string& l) { return r.next(l); }, h, why);
    if (got == HeaderRead::End) return false;
    if (got == HeaderRead::Bad) r.fail(why + " (frame " + std::to_string(frames) + ")");
    if (stop(h, frames)) return true;
    const std::size_t start = r.line();
    for (std::uint64_t k = 0; k < h.atoms; ++k)
      if (!r.next(line))
        r.fail("the file ends after " + std::to_string(k) + " of the " + std::to_string(h.atoms) +
               " atom lines of frame " + std::to_string(frames) + " (ITEM: ATOMS on line " +
               std::to_string(start) + "): the file is cut short");
  }
}

// Whether a file is a LAMMPS text dump: its first line that is not blank starts with "ITEM:".
bool is_dump(const std::string& path, const std::string& context) {
  text::LineReader r(path, context, "a LAMMPS dump");
  std::string line;
  while (r.next(line))
    if (!text::trim(line).empty()) return text::trim(line).rfind("ITEM:", 0) == 0;
  return false;
}

// Picks a frame by its index (frame >= 0 from the start, < 0 from the end) or, with step >= 0, by
// its TIMESTEP; leaves `r` (opened on `file`) at its atom lines.
void seek_frame(std::unique_ptr<text::LineReader>& r, const std::string& file,
                const std::string& context, std::int64_t frame, std::int64_t step, DumpHeader& h) {
  std::size_t frames = 0;
  auto open = [&] { r.reset(new text::LineReader(file, context, "a LAMMPS dump")); };
  open();
  if (step >= 0) {
    if (!find_frame(*r, h, frames, [&](const DumpHeader& f, std::size_t) {
          return f.step == std::uint64_t(step);
        }))
      r->fail("no frame has TIMESTEP " + std::to_string(step) + " (the file holds " +
              std::to_string(frames) + " frames)");
    return;
  }
  if (frame < 0) {
    find_frame(*r, h, frames, [](const DumpHeader&, std::size_t) { return false; });
    if (std::int64_t(frames) < -frame)
      r->fail("frame = " + std::to_string(frame) + " but the file holds " + std::to_string(frames) +
              " frame(s); -1 is the last");
    frame += std::int64_t(frames);
    open();
  }
  if (!find_frame(*r, h, frames,
                  [&](const DumpHeader&, std::size_t k) { return std::int64_t(k) == frame; }))
    r->fail("frame = " + std::to_string(frame) + " but the file holds " + std::to_string(frames) +
            " frame(s); frame counts from 0 (the first), negative values from the end (-1: the "
            "last)");
}

// ---------------------------------------------------------------------------------------------
// The writer.
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
    double lo[3], hi[3];
    lammps::frame_bounds(box, f, lo, hi);
    t += "\nITEM: BOX BOUNDS";
    for (int d = 0; d < 3; ++d) {
      t += ' ';
      t += std::string(2, lammps::letter(box, d, dim));
    }
    for (int d = 0; d < 3; ++d) {
      t += '\n';
      put(t, lo[d]);
      t += ' ';
      put(t, hi[d]);
    }
    t += periodic ? "\nITEM: ATOMS id type x y z vx vy vz ix iy iz mass\n"
                  : "\nITEM: ATOMS id type x y z vx vy vz mass\n";
  }

  void write_rows(std::string& t, const trajectory::Frame& f, std::size_t first, std::size_t last,
                  int) const override {
    using trajectory::put;
    const Box& box = run().box;
    const int dim = f.dim;
    bool periodic = false;
    for (int d = 0; d < dim; ++d) periodic = periodic || box.boundary[d] == Boundary::Periodic;
    for (std::size_t i = first; i < last; ++i) {
      trajectory::put_int(t, f.id[i] + 1);
      t += ' ';
      trajectory::put_int(t, std::int64_t(f.type[i]) + 1);
      trajectory::put_vector(t, f.x, i, dim);
      trajectory::put_vector(t, f.v, i, dim);
      if (periodic) lammps::put_images(t, box, f, i);
      t += ' ';
      put(t, f.mass[i]);
      t += '\n';
    }
  }

  // Complete frames (their header, as read_header reads it, and as many atom lines as it says)
  // up to `step`.
  std::int64_t kept_bytes(const std::string& path, std::uint64_t step) const override {
    trajectory::LineCursor c(path);
    if (!c.ok()) return -1;
    std::string line, why;
    for (bool first = true;; first = false) {
      const std::int64_t start = std::int64_t(c.offset());
      DumpHeader h;
      const HeaderRead got = read_header([&](std::string& l) { return c.next(l); }, h, why);
      if (got == HeaderRead::End) return start;
      if (got == HeaderRead::Bad) return first ? -1 : start;
      for (std::uint64_t k = 0; k < h.atoms; ++k)
        if (!c.next(line)) return start;
      if (h.step > step) return start;
    }
  }
};

// ---------------------------------------------------------------------------------------------
// The reader.

// Where the position columns of a frame are: one kind for all axes, the first the frame has of
// x y z (wrapped), xu yu zu (unwrapped), xs ys zs (scaled: a fraction of the box), xsu ysu zsu.
struct Columns {
  int x[3] = {-1, -1, -1}, v[3] = {-1, -1, -1}, image[3] = {-1, -1, -1};
  int id = -1, type = -1, mass = -1;
  bool scaled = false, unwrapped = false;
};

Columns find_columns(const text::LineReader& r, const std::vector<std::string>& cols, int dim) {
  Columns c;
  auto at = [&](const std::string& name) {
    const auto it = std::find(cols.begin(), cols.end(), name);
    return it == cols.end() ? -1 : int(it - cols.begin());
  };
  for (std::size_t k = 0; k < cols.size(); ++k)
    for (std::size_t j = 0; j < k; ++j)
      if (cols[j] == cols[k]) r.fail("ITEM: ATOMS names column '" + shown(cols[k]) + "' twice");
  c.id = at("id");
  c.type = at("type");
  c.mass = at("mass");
  for (const std::string kind : {"", "u", "s", "su"}) {
    int found[3];
    bool all = true;
    for (int d = 0; d < 3; ++d) {
      found[d] = at("xyz"[d] + kind);
      all = all && (d >= dim || found[d] >= 0);
    }
    if (!all) continue;
    std::copy(found, found + 3, c.x);
    c.scaled = kind.find('s') != std::string::npos;
    c.unwrapped = kind.find('u') != std::string::npos;
    break;
  }
  if (c.x[0] < 0)
    r.fail("the frame has no positions: ITEM: ATOMS needs x y" + std::string(dim == 3 ? " z" : "") +
           " (or xu, xs, xsu ...); it has " + [&] {
             std::string s;
             for (const auto& n : cols) s += (s.empty() ? "" : " ") + n;
             return s.empty() ? std::string("no columns") : s;
           }());
  for (int d = 0; d < 3; ++d) {
    c.v[d] = at(std::string("v") + "xyz"[d]);
    c.image[d] = c.unwrapped ? -1 : at(std::string("i") + "xyz"[d]);
  }
  return c;
}

class DumpReader final : public Generator {
 public:
  DumpReader(const ParamSet& p, const RunInfo&)
      : source_(p, "lammps_dump", "a LAMMPS dump"),
        frame_(p.integer("frame")),
        step_(p.integer("step")),
        mass_(p.real("mass")),
        masses_(p.reals("masses")),
        check_box_(p.boolean("check_box")) {
    for (std::size_t k = 0; k < masses_.size(); ++k)
      if (!(masses_[k] > 0))
        throw Error(source_.context + ": masses[" + std::to_string(k) +
                    "] = " + text::toml_number(masses_[k]) + "; every mass must be > 0");
  }

  HostParticles generate(const GenerateContext& ctx) override {
    const int dim = ctx.dim;
    const std::string file = source_.file(ctx.base_dir).string();
    std::unique_ptr<text::LineReader> rp;
    DumpHeader h;
    seek_frame(rp, file, source_.context, frame_, step_, h);
    text::LineReader& r = *rp;
    const std::size_t header_line = r.line();
    if (h.triclinic)
      r.fail("the frame's box is triclinic (BOX BOUNDS xy xz yz); pardyn's box is orthogonal");
    if (h.atoms < 1 || h.atoms > kMaxParticles)
      r.fail("the frame has " + std::to_string(h.atoms) + " atoms; give between 1 and " +
             format_number(double(kMaxParticles)));
    check_cell(r, h, ctx);
    const Columns c = find_columns(r, h.columns, dim);
    struct Atom {
      std::int64_t id;
      std::int32_t type;
      double x[3], v[3], mass;
      std::int32_t image[3];
      std::size_t line;
    };
    std::vector<Atom> atoms;
    atoms.reserve(std::min<std::uint64_t>(h.atoms, 1 << 16));
    std::string line;
    for (std::uint64_t k = 0; k < h.atoms; ++k) {
      if (!r.next(line))
        r.fail("the file ends after " + std::to_string(k) + " of the " + std::to_string(h.atoms) +
               " atom lines of the frame (ITEM: ATOMS on line " + std::to_string(header_line) +
               "): the file is cut short");
      const auto w = text::words(line);
      if (w.size() != h.columns.size())
        r.fail(std::to_string(w.size()) + " values; ITEM: ATOMS names " +
               std::to_string(h.columns.size()) + " columns");
      atoms.push_back(read_atom<Atom>(r, w, c, h, ctx));
    }
    if (c.id >= 0) {
      std::sort(atoms.begin(), atoms.end(),
                [](const Atom& a, const Atom& b) { return a.id < b.id; });
      for (std::size_t k = 1; k < atoms.size(); ++k)
        if (atoms[k].id == atoms[k - 1].id)
          r.fail_at(std::max(atoms[k].line, atoms[k - 1].line),
                    "atom id " + std::to_string(atoms[k].id) + " appears twice in the frame");
    }
    HostParticles hp(dim);
    hp.resize(atoms.size());
    for (std::size_t k = 0; k < atoms.size(); ++k) {
      for (int d = 0; d < dim; ++d) {
        hp.x[d][k] = atoms[k].x[d];
        hp.v[d][k] = atoms[k].v[d];
        hp.image[d][k] = atoms[k].image[d];
      }
      hp.mass[k] = atoms[k].mass;
      hp.type[k] = atoms[k].type;
    }
    return hp;
  }

 private:
  // The frame's box against [box] (check_box).
  void check_cell(const text::LineReader& r, const DumpHeader& h,
                  const GenerateContext& ctx) const {
    if (!check_box_ || !ctx.box) return;
    text::FileCell cell;
    cell.have_bounds = cell.have_pbc = true;
    for (int d = 0; d < 3; ++d) {
      cell.lo[d] = h.lo[d];
      cell.hi[d] = h.hi[d];
      cell.periodic[d] = axis_boundary(h.flags[d], cell.loose[d]) == Boundary::Periodic;
    }
    const std::string why = text::cell_mismatch(cell, *ctx.box, ctx.dim);
    if (!why.empty()) r.fail(why);
  }

  template <class Atom>
  Atom read_atom(const text::LineReader& r, const std::vector<std::string_view>& w,
                 const Columns& c, const DumpHeader& h, const GenerateContext& ctx) const {
    const int dim = ctx.dim;
    Atom a{};
    a.line = r.line();
    a.id = c.id >= 0 ? r.integer(w[std::size_t(c.id)], "atom id", INT64_MIN, INT64_MAX) : 0;
    a.type = c.type >= 0
                 ? std::int32_t(r.integer(w[std::size_t(c.type)], "atom type", 1, INT32_MAX) - 1)
                 : 0;
    for (int d = 0; d < 3; ++d) {
      if (c.x[d] < 0) continue;
      const std::string_view word = w[std::size_t(c.x[d])];
      double x = r.real(word, h.columns[std::size_t(c.x[d])]);
      if (c.scaled) x = h.lo[d] + x * (h.hi[d] - h.lo[d]);
      if (d >= dim) {
        if (x != 0) r.fail("z = " + shown(word) + " in a 2D run; every z must be 0");
        continue;
      }
      a.x[d] = x;
      const bool periodic = ctx.box && ctx.box->boundary[d] == Boundary::Periodic;
      if (c.unwrapped && periodic) {
        // Back into the box, counting the box lengths taken off as the image count.
        const double L = ctx.box->length(d);
        wrap_counting(a.x[d], a.image[d], ctx.box->lo[d], L, 1.0 / L);
      } else if (c.image[d] >= 0) {
        const std::string_view iw = w[std::size_t(c.image[d])];
        const std::string flag = std::string("image flag i") + "xyz"[d];
        a.image[d] =
            std::int32_t(r.integer(iw, flag, -(std::int64_t(1) << 30), std::int64_t(1) << 30));
        if (a.image[d] != 0 && !periodic)
          r.fail(flag + " = " + shown(iw) + " but the scenario's " + "xyz"[d] + " axis is " +
                 (ctx.box ? to_string(ctx.box->boundary[d]) : "open") +
                 ", not periodic: the atom's unwrapped position lies outside the box; make the "
                 "axis periodic in [box]");
      }
    }
    for (int d = 0; d < 3; ++d) {
      if (c.v[d] < 0) continue;
      const std::string_view word = w[std::size_t(c.v[d])];
      const double v = r.real(word, std::string("v") + "xyz"[d]);
      if (d < dim) a.v[d] = v;
      else if (v != 0) r.fail("vz = " + shown(word) + " in a 2D run; every vz must be 0");
    }
    if (c.mass >= 0) {
      a.mass = r.real(w[std::size_t(c.mass)], "mass");
      if (!(a.mass > 0))
        r.fail("mass " + shown(w[std::size_t(c.mass)]) +
               " is not positive; every mass must be > 0");
    } else if (!masses_.empty()) {
      if (std::size_t(a.type) >= masses_.size())
        r.fail("atom type " + std::to_string(a.type + 1) + " but masses gives " +
               std::to_string(masses_.size()) + " (types 1 to " + std::to_string(masses_.size()) +
               "); add its mass");
      a.mass = masses_[std::size_t(a.type)];
    } else {
      a.mass = mass_;
    }
    return a;
  }

  text::Source source_;
  std::int64_t frame_, step_;
  double mass_;
  std::vector<double> masses_;
  bool check_box_;
};

// [box] from = "dump.lammpstrj": the bounds and boundary flags of a frame (FactoryInfo::file_box).
bool dump_file_box(const std::string& path, std::int64_t frame, int, FileBox& out) {
  const std::string context = "[box] from";
  if (!is_dump(path, context)) return false;
  std::unique_ptr<text::LineReader> r;
  DumpHeader h;
  seek_frame(r, path, context, frame, -1, h);
  if (h.triclinic)
    r->fail("the frame's box is triclinic (BOX BOUNDS xy xz yz); pardyn's box is orthogonal");
  out.format = "a LAMMPS dump";
  out.has_boundary = true;
  for (int d = 0; d < 3; ++d) {
    out.lo[d] = h.lo[d];
    out.hi[d] = h.hi[d];
    bool loose = false;
    out.boundary[d] = axis_boundary(h.flags[d], loose);
  }
  return true;
}

const char* const kReadDoc = R"(Particles from one frame of a LAMMPS text dump
(https://docs.lammps.org/dump.html), as `dump atom` and `dump custom` write it: a LAMMPS run's
atoms start a pardyn run. Each frame is ITEM: TIMESTEP, ITEM: NUMBER OF ATOMS, ITEM: BOX BOUNDS
(three boundary flags, then lo hi per axis) and ITEM: ATOMS with its column names, then one line
per atom (ITEM: TIME and ITEM: UNITS are read past). The frame is `frame` (0 the first, -1 the
last: the default) or, with `step` >= 0, the one whose TIMESTEP is `step` (read_dump's choice).
Columns read (others are skipped):
  id            the particles are ordered by id (particle k of the run is the atom with the k-th
                smallest id); without it, the file's order
  type          LAMMPS types 1, 2, ... become pardyn types 0, 1, ... (the block's `type` added);
                without it, 0
  x y z         positions (wrapped into the box; LAMMPS may write atoms slightly outside between
                reneighbourings, and pardyn wraps them at the start, counting the images)
  xu yu zu      unwrapped positions: wrapped into [box] on its periodic axes, the box lengths
                taken off counted as image counts
  xs ys zs      scaled positions, a fraction of the frame's box: lo + xs (hi - lo); xsu ysu zsu
                scaled and unwrapped
                (the first of these four the frame has is used, for all axes)
  ix iy iz      image flags, with x y z or xs ys zs: the particles' image counts (the unwrapped
                position is x + ix Lx, as in LAMMPS); a non-zero flag on an axis that is not
                periodic in [box] is refused
  vx vy vz      velocities (zero without them)
  mass          per-atom masses; without it `masses` (one per LAMMPS type, as LAMMPS's mass
                command gives them), else `mass` for every atom
BOX BOUNDS flags: pp periodic, ff a wall, s or m (shrink-wrapped) open. With check_box = true
(the default) a frame whose bounds (on axes that are not shrink-wrapped) or periodic axes differ
from [box] (beyond 1e-9 of a side) is an error that prints the [box] lines that would match; or
take the box from the dump: [box] from = "the dump" (with frame = as here). A triclinic box is
refused. In 2D every z and vz must be 0 (LAMMPS's 2D dumps). The run starts at step 0 and time 0
whatever the frame's TIMESTEP and TIME. Every mistake is reported as path:line: what is wrong.
Example: LAMMPS's `dump 1 all custom 1000 dump.lammpstrj id type x y z ix iy iz vx vy vz` and
  [[particles]]
  generator = "lammps_dump"
  path = "dump.lammpstrj"
  masses = [1.0, 2.0])";

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
  FactoryInfo g;
  g.kind = PluginKind::Generator;
  g.name = "lammps_dump";
  g.summary = "particles read from a frame of a LAMMPS dump (dump atom or custom, text)";
  g.doc = kReadDoc;
  g.dims = kDimAll;
  g.precisions = kPrecisionAll;
  g.backends = kBackendAll;
  g.schema
      .path("path", std::nullopt,
            "LAMMPS dump to read; relative paths start at the scenario file's folder")
      .integer("frame", -1,
               "frame to read: 0 the first, 1 the second, ...; -1 the last, -2 the one "
               "before, ...",
               double(-kMaxSteps), double(kMaxSteps))
      .integer("step", -1, "read the frame whose TIMESTEP is this instead (-1: use frame)", -1,
               double(kMaxSteps))
      .real("mass", 1.0, "mass", "mass of every atom when the dump has no mass column", 0.0,
            std::nullopt, true)
      .reals("masses", std::vector<double>{}, "mass",
             "masses of LAMMPS types 1, 2, ... when the dump has no mass column (empty: `mass`)")
      .boolean("check_box", true,
               "refuse a frame whose box bounds or periodic axes disagree with [box] (false: "
               "take the positions as they are)");
  g.file_box = dump_file_box;
  r.add(std::move(g), Factory<Generator>([](const ParamSet& p, const RunInfo& run) {
          return std::unique_ptr<Generator>(new DumpReader(p, run));
        }));

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
