// SPDX-License-Identifier: BSD-3-Clause
// xyz: extended XYZ files, read (generator) and written (observer).
//
// The extended XYZ format (libAtoms/QUIP, ASE, OVITO): a frame is a line with the number of atoms
// N, a comment line of key=value pairs (Lattice="ax ay az bx by bz cx cy cz", Properties=
// name:type:columns:..., pbc="T T T", Time=, Step=, ...), then N lines of columns as Properties
// says. Without Properties the lines are `species x y z` (plain XYZ). A file holds any number of
// frames one after the other.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pardyn/plugin_export.hpp"
#include "../../common/text_input.hpp"
#include "../../common/trajectory.hpp"

namespace pardyn::plugins {
namespace {

using text::shown;

// ---------------------------------------------------------------------------------------------
// The comment line: key=value pairs separated by blanks; values bare, "quoted" (with \" and \\)
// or {braced}; a key alone is a flag (true). False when the line is not of that form (a plain
// XYZ comment may be any text).
bool parse_comment(std::string_view s, std::vector<std::pair<std::string, std::string>>& kv) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  auto skip = [&] {
    while (i < n && text::is_blank(s[i])) ++i;
  };
  for (;;) {
    skip();
    if (i >= n) return true;
    const std::size_t b = i;
    while (i < n && !text::is_blank(s[i]) && s[i] != '=') ++i;
    if (i == b) return false;  // '=' without a key
    std::string key(s.substr(b, i - b)), value = "T";
    skip();
    if (i < n && s[i] == '=') {
      ++i;
      skip();
      value.clear();
      if (i < n && s[i] == '"') {
        ++i;
        bool closed = false;
        while (i < n) {
          if (s[i] == '\\' && i + 1 < n) {
            value += s[i + 1];
            i += 2;
          } else if (s[i] == '"') {
            ++i;
            closed = true;
            break;
          } else {
            value += s[i++];
          }
        }
        if (!closed) return false;
      } else if (i < n && s[i] == '{') {
        const std::size_t e = s.find('}', i);
        if (e == std::string_view::npos) return false;
        value = std::string(s.substr(i + 1, e - i - 1));
        i = e + 1;
      } else {
        const std::size_t v = i;
        while (i < n && !text::is_blank(s[i])) ++i;
        value = std::string(s.substr(v, i - v));
      }
    }
    kv.emplace_back(std::move(key), std::move(value));
  }
}

bool parse_logical(std::string_view w, bool& out) {
  for (const char* t : {"T", "True", "true", "TRUE", "1"})
    if (w == t) return out = true, true;
  for (const char* f : {"F", "False", "false", "FALSE", "0"})
    if (w == f) return out = false, true;
  return false;
}

// The comment line of a frame: its key=value pairs (keyed: false for a plain XYZ comment).
struct Comment {
  bool keyed = false;
  std::vector<std::pair<std::string, std::string>> kv;
  const std::string* find(const char* key) const {
    if (!keyed) return nullptr;
    for (const auto& [k, v] : kv)
      if (text::iequals(k, key)) return &v;
    return nullptr;
  }
};

// Lattice="ax ay az bx by bz cx cy cz": an axis-aligned box whose lower corner is `origin`.
void read_lattice(const text::LineReader& r, const std::string& value, const double origin[3],
                  int dim, text::FileCell& cell) {
  const auto w = text::words(value);
  if (w.size() != 9)
    r.fail("Lattice=\"" + shown(value, 80) + "\" has " + std::to_string(w.size()) +
           " numbers; it takes the three cell vectors, 9 numbers");
  double m[9];
  for (int k = 0; k < 9; ++k)
    m[k] = r.real(w[std::size_t(k)], "Lattice entry " + std::to_string(k + 1));
  for (int a = 0; a < dim; ++a)
    for (int b = 0; b < dim; ++b)
      if (a != b && m[3 * a + b] != 0)
        r.fail("Lattice=\"" + shown(value, 80) +
               "\" is not an axis-aligned box (a triclinic cell); pardyn's box is a rectangle "
               "(2D) or cuboid (3D): use a file whose cell vectors lie along x, y and z");
  for (int d = 0; d < dim; ++d)
    if (!(m[4 * d] > 0))
      r.fail(std::string("Lattice=\"") + shown(value, 80) + "\": the " + "abc"[d] +
             " vector's length along its axis is " + text::toml_number(m[4 * d]) +
             "; it must be > 0");
  cell.have_bounds = true;
  for (int d = 0; d < 3; ++d) {
    cell.lo[d] = origin[d];
    cell.hi[d] = origin[d] + m[4 * d];
  }
}

// The comment line of frame `index`, with what it says of the cell (Lattice, Origin, pbc) in
// `cell`.
Comment read_comment(const text::LineReader& r, const std::string& line, std::size_t index, int dim,
                     text::FileCell& cell) {
  Comment c;
  c.keyed = parse_comment(line, c.kv);
  const std::string* lattice = c.find("Lattice");
  if (!c.keyed) {
    std::string lower = line;
    for (auto& ch : lower) ch = (ch >= 'A' && ch <= 'Z') ? char(ch - 'A' + 'a') : ch;
    if (lower.find("lattice=") != std::string::npos ||
        lower.find("properties=") != std::string::npos)
      r.fail("the comment line of frame " + std::to_string(index) +
             " is not a list of key=value pairs (an unclosed \" or {?)");
  }
  // OVITO's Origin="x y z": the cell's lower corner (0 without it, as in ASE).
  double origin[3] = {0, 0, 0};
  if (const std::string* o = c.find("Origin")) {
    const auto w = text::words(*o);
    if (w.size() != 3)
      r.fail("Origin=\"" + shown(*o) + "\" is not 3 numbers (the cell's lower corner)");
    for (int d = 0; d < 3; ++d)
      origin[d] = r.real(w[std::size_t(d)], "Origin entry " + std::to_string(d + 1));
  }
  if (lattice) read_lattice(r, *lattice, origin, dim, cell);
  if (const std::string* pbc = c.find("pbc")) {
    const auto w = text::words(*pbc);
    if (w.size() != 3 || !parse_logical(w[0], cell.periodic[0]) ||
        !parse_logical(w[1], cell.periodic[1]) || !parse_logical(w[2], cell.periodic[2]))
      r.fail("pbc=\"" + shown(*pbc) + "\" is not three of T or F, e.g. pbc=\"T T F\"");
    cell.have_pbc = true;
  } else if (lattice) {
    cell.have_pbc = true;  // a Lattice without pbc is periodic (ASE, OVITO)
    cell.periodic[0] = cell.periodic[1] = cell.periodic[2] = true;
  }
  return c;
}

// One column group of Properties=.
struct Property {
  std::string name;
  char type = 'R';  // S, R, I or L
  int columns = 1;
  int first = 0;  // index of its first column in an atom line
};

// Velocities come as velo (OVITO's name; also vel, velocities) or momenta (ASE's, m v), masses
// as mass (OVITO's) or masses (ASE's); pardyn writes both pairs and reads velo and mass when a
// file has both.
enum Role { kSpecies, kPos, kVelo, kMomenta, kMass, kMasses, kId, kRoles };

// One atom of a frame, as its line gives it.
struct Atom {
  double x[3] = {0, 0, 0}, v[3] = {0, 0, 0}, mass = 0;
  std::int32_t type = 0;
  std::int64_t id = 0;
  std::size_t line = 0;
};

class XyzReader final : public Generator {
 public:
  XyzReader(const ParamSet& p, const RunInfo&)
      : source_(p, "xyz", "an XYZ file"),
        frame_(p.integer("frame")),
        types_(p.strings("types")),
        mass_(p.real("mass")),
        check_box_(p.boolean("check_box")) {
    for (std::size_t k = 0; k < types_.size(); ++k) {
      std::int64_t number = 0;
      if (types_[k].empty() || text::words(types_[k]).size() != 1 ||
          text::parse_int(types_[k], number))
        throw Error(source_.context + ": types[" + std::to_string(k) + "] = \"" + shown(types_[k]) +
                    "\" is not a species name (one word, not a number); types lists the names of "
                    "types 0, 1, ..., e.g. types = [\"Ar\", \"Kr\"]");
      for (std::size_t j = 0; j < k; ++j)
        if (types_[j] == types_[k])
          throw Error(source_.context + ": \"" + shown(types_[k]) + "\" appears twice in types");
    }
  }

  HostParticles generate(const GenerateContext& ctx) override {
    std::int64_t target = frame_;
    if (target < 0) {
      // From the end: count the frames first (checking the file's structure on the way).
      text::LineReader scan = source_.open(ctx.base_dir);
      const std::size_t frames = walk(scan, -1, ctx, nullptr);
      if (std::int64_t(frames) < -target) scan.fail(frames_text(frames));
      target += std::int64_t(frames);
    }
    text::LineReader r = source_.open(ctx.base_dir);
    HostParticles hp(ctx.dim);
    const std::size_t frames = walk(r, target, ctx, &hp);
    if (std::int64_t(frames) <= target) r.fail(frames_text(frames));
    return hp;
  }

  // [box] from = "file.xyz": the cell of a frame (FactoryInfo::file_box).
  static bool file_box(const std::string& path, std::int64_t frame, int dim, FileBox& out) {
    const std::string context = "[box] from";
    std::string line;
    {
      // An XYZ file starts with a frame's atom count alone on its line.
      text::LineReader sniff(path, context, "an XYZ file");
      while (sniff.next(line) && text::trim(line).empty()) {}
      const auto w = text::words(line);
      std::int64_t count = 0;
      if (w.size() != 1 || !text::parse_int(w[0], count)) return false;
    }
    std::size_t n = 0, frames = 0, previous = 0;
    auto open_at = [&](std::int64_t target, bool must) {
      auto r = std::make_unique<text::LineReader>(path, context, "an XYZ file");
      for (frames = 0, previous = 0; next_frame(*r, line, n, frames, previous); ++frames) {
        if (std::int64_t(frames) == target) return r;
        previous = r->line();
        skip_atoms(*r, line, n, frames);
      }
      if (must)
        r->fail("frame = " + std::to_string(frame) + " but the file holds " +
                std::to_string(frames) +
                " frame(s); frame counts from 0, negative values from "
                "the end (-1: the last)");
      return r;
    };
    std::int64_t target = frame;
    if (target < 0) {
      open_at(-1, false);  // counts the frames
      target += std::int64_t(frames);
      if (target < 0) target = std::int64_t(frames);  // reported by open_at below
    }
    const auto r = open_at(target, true);
    frame_line(*r, line, 0, n, frames, r->line());
    text::FileCell cell;
    read_comment(*r, line, frames, dim, cell);
    if (!cell.have_bounds)
      r->fail("frame " + std::to_string(frames) +
              " has no Lattice=\"...\" (the cell), so it gives no box; give [box] lo and hi");
    out.format = "an extended XYZ file";
    out.has_boundary = true;
    for (int d = 0; d < 3; ++d) {
      out.lo[d] = cell.lo[d];
      out.hi[d] = cell.hi[d];
      // pbc F says only "not periodic": open (write [box] boundary for walls).
      out.boundary[d] = cell.periodic[d] ? Boundary::Periodic : Boundary::Open;
    }
    return true;
  }

 private:
  std::string frames_text(std::size_t frames) const {
    return "frame = " + std::to_string(frame_) + " but the file holds " + std::to_string(frames) +
           " frame(s); frame counts from 0 (the first), negative values from the end (-1: the "
           "last)";
  }

  // Goes through the frames of the file, reading frame `target` into *hp and checking that every
  // other one has its count, comment and atom lines; returns the number of frames. A frame whose
  // count is too small shows as an atom line where the next count should be.
  std::size_t walk(text::LineReader& r, std::int64_t target, const GenerateContext& ctx,
                   HostParticles* hp) {
    std::string line;
    std::size_t n = 0, frames = 0, previous = 0;
    while (next_frame(r, line, n, frames, previous)) {
      previous = r.line();
      if (std::int64_t(frames) == target) *hp = read_frame(r, n, frames, ctx);
      else skip_atoms(r, line, n, frames);
      ++frames;
    }
    return frames;
  }

  // The count line of the next frame into n (blank lines between frames are skipped); false at the
  // end of the file.
  static bool next_frame(text::LineReader& r, std::string& line, std::size_t& n, std::size_t index,
                         std::size_t previous) {
    do {
      if (!r.next(line)) return false;
    } while (text::trim(line).empty());
    const auto w = text::words(line);
    std::int64_t count = 0;
    if (w.size() != 1 || !text::parse_int(w[0], count))
      r.fail("expected the number of atoms of frame " + std::to_string(index) +
             " (a whole number alone on its line), found '" + shown(text::trim(line)) + "'" +
             (index > 0 ? "; is the atom count of the frame before (line " +
                              std::to_string(previous) + ") too small?"
                        : ""));
    if (count < 1 || count > std::int64_t(kMaxParticles))
      r.fail("frame " + std::to_string(index) + " has " + std::to_string(count) +
             " atoms; give between 1 and " + format_number(double(kMaxParticles)));
    n = std::size_t(count);
    return true;
  }

  // Reads one line of a frame whose count (n, on line `count_line`) promises more.
  static void frame_line(text::LineReader& r, std::string& line, std::size_t k, std::size_t n,
                         std::size_t index, std::size_t count_line) {
    if (!r.next(line))
      r.fail("the file ends after " + std::to_string(k) + " of the " + std::to_string(n) +
             " atom lines of frame " + std::to_string(index) + " (its count is on line " +
             std::to_string(count_line) + "): the file is cut short, or the count is too large");
  }

  static void skip_atoms(text::LineReader& r, std::string& line, std::size_t n, std::size_t index) {
    const std::size_t count_line = r.line();
    frame_line(r, line, 0, n, index, count_line);  // the comment
    for (std::size_t k = 0; k < n; ++k) frame_line(r, line, k, n, index, count_line);
  }

  HostParticles read_frame(text::LineReader& r, std::size_t n, std::size_t index,
                           const GenerateContext& ctx) {
    const int dim = ctx.dim;
    const std::size_t count_line = r.line();
    std::string line;
    frame_line(r, line, 0, n, index, count_line);

    // --- the comment: Lattice, Origin, pbc, Properties ---
    text::FileCell cell;
    const Comment comment = read_comment(r, line, index, dim, cell);
    const std::string* properties = comment.find("Properties");
    if (check_box_ && ctx.box) {
      const std::string why = text::cell_mismatch(cell, *ctx.box, dim);
      if (!why.empty()) r.fail(why);
    }

    std::vector<Property> props;
    int columns = 0;
    const bool plain = !properties;
    if (plain) {
      props = {{"species", 'S', 1, 0}, {"pos", 'R', 3, 1}};
      columns = 4;
    } else {
      columns = read_properties(r, *properties, props);
    }
    int role[kRoles];
    assign_roles(r, props, dim, role);

    // --- the atom lines ---
    // Grown line by line: the count is not trusted with memory before the lines are there.
    std::vector<Atom> atoms;
    atoms.reserve(std::min<std::size_t>(n, std::size_t(1) << 16));
    Species species;
    const std::string layout = plain ? std::string("species x y z") : "Properties=" + *properties;
    for (std::size_t k = 0; k < n; ++k) {
      frame_line(r, line, k, n, index, count_line);
      const auto w = text::words(line);
      if (plain ? w.size() < 4 : w.size() != std::size_t(columns))
        r.fail("expected " + std::string(plain ? "at least " : "") + std::to_string(columns) +
               " values (" + layout + "), found " + std::to_string(w.size()));
      atoms.push_back(atom_line(r, w, props, role, dim, species));
    }
    return particles(r, atoms, role[kId] >= 0, dim);
  }

  // Which property (index in props) plays each role, -1 for none; a role given twice, a property of
  // the wrong type or width, or no positions fail.
  static void assign_roles(const text::LineReader& r, const std::vector<Property>& props, int dim,
                           int (&role)[kRoles]) {
    std::fill(role, role + kRoles, -1);
    for (std::size_t k = 0; k < props.size(); ++k) {
      const Property& p = props[k];
      int which = -1;
      if (p.name == "species") which = kSpecies;
      else if (p.name == "pos") which = kPos;
      else if (p.name == "velo" || p.name == "vel" || p.name == "velocities") which = kVelo;
      else if (p.name == "momenta") which = kMomenta;
      else if (p.name == "mass") which = kMass;
      else if (p.name == "masses") which = kMasses;
      else if (p.name == "id") which = kId;
      if (which < 0) continue;  // another property: skipped
      if (role[which] >= 0)
        r.fail("Properties gives '" + p.name + "' and '" + props[std::size_t(role[which])].name +
               "', which say the same; keep one");
      const bool vector = which == kPos || which == kVelo || which == kMomenta;
      const char want = which == kSpecies ? 'S' : which == kId ? 'I' : 'R';
      const bool type_ok = p.type == want || (which == kSpecies && p.type == 'I');
      const bool cols_ok =
          vector ? (p.columns == 3 || (p.columns == 2 && dim == 2)) : p.columns == 1;
      if (!type_ok || !cols_ok) {
        std::string expect = vector ? "R:3" : std::string(1, want) + ":1";
        if (vector) expect += dim == 2 ? " (or R:2 in a 2D run)" : "";
        if (which == kSpecies) expect = "S:1 (or I:1)";
        r.fail("property '" + p.name + "' is " + std::string(1, p.type) + ":" +
               std::to_string(p.columns) + "; pardyn reads it as " + expect +
               (vector && p.columns == 2 ? " (R:2 is for 2D runs; this one is 3D)" : ""));
      }
      role[which] = int(k);
    }
    if (role[kPos] < 0)
      r.fail(
          "Properties has no 'pos' (positions); add pos:R:3, e.g. "
          "Properties=species:S:1:pos:R:3");
  }

  // Species: names get types in the order they first appear, unless `types` names them; numbers
  // are the types. Names and numbers do not mix.
  struct Species {
    std::map<std::string, std::int32_t, std::less<>> names;
    std::size_t first_number = 0, first_name = 0;  // lines where each kind first appeared
  };
  std::int32_t species_type(const text::LineReader& r, std::string_view s, Species& sp) const {
    std::int64_t number = 0;
    if (text::parse_int(s, number)) {
      if (number < 0 || number > INT32_MAX)
        r.fail("species " + shown(s) +
               " is out of range; a whole-number species is the type: "
               "0, 1, ..., " +
               std::to_string(INT32_MAX));
      if (types_.empty() && sp.first_name)
        r.fail("species '" + shown(s) + "' is a number but line " + std::to_string(sp.first_name) +
               " gives a name; use names or numbers "
               "throughout, or give types = [...] to say which type each name is");
      if (!sp.first_number) sp.first_number = r.line();
      return std::int32_t(number);
    } else if (!types_.empty()) {
      const auto it = std::find(types_.begin(), types_.end(), s);
      if (it == types_.end())
        r.fail("species '" + shown(s) + "' is not in types = " + types_text() +
               "; add it (its type is its place in the list, from 0)");
      return std::int32_t(it - types_.begin());
    } else {
      if (sp.first_number)
        r.fail("species '" + shown(s) + "' is a name but line " + std::to_string(sp.first_number) +
               " gives a number; use names or numbers "
               "throughout, or give types = [...] to say which type each name is");
      if (!sp.first_name) sp.first_name = r.line();
      auto it = sp.names.find(s);
      if (it == sp.names.end())
        it = sp.names.emplace(std::string(s), std::int32_t(sp.names.size())).first;
      return it->second;
    }
  }

  // One atom line: position, velocity (or momentum), mass, id and species, by their roles.
  Atom atom_line(const text::LineReader& r, const std::vector<std::string_view>& w,
                 const std::vector<Property>& props, const int (&role)[kRoles], int dim,
                 Species& species) const {
    Atom a;
    a.line = r.line();
    const int velocity = role[kVelo] >= 0 ? kVelo : role[kMomenta] >= 0 ? kMomenta : -1;
    const int mass = role[kMass] >= 0 ? kMass : role[kMasses] >= 0 ? kMasses : -1;
    auto word = [&](int which, int c) {
      return w[std::size_t(props[std::size_t(role[which])].first + c)];
    };
    const int pc = props[std::size_t(role[kPos])].columns;
    for (int d = 0; d < pc; ++d) {
      a.x[d] = r.real(word(kPos, d), std::string("position ") + "xyz"[d]);
      if (d >= dim && a.x[d] != 0)
        r.fail("z = " + shown(word(kPos, d)) +
               " in a 2D run; every z must be 0 (or write the positions as pos:R:2)");
    }
    if (velocity >= 0) {
      const Property& vp = props[std::size_t(role[velocity])];
      for (int d = 0; d < vp.columns; ++d) {
        a.v[d] = r.real(word(velocity, d), vp.name + " " + "xyz"[d]);
        if (d >= dim && a.v[d] != 0)
          r.fail("the z velocity is " + shown(word(velocity, d)) +
                 " in a 2D run; every z component must be 0");
      }
    }
    a.mass = mass_;
    if (mass >= 0) {
      a.mass = r.real(word(mass, 0), "mass");
      if (!(a.mass > 0))
        r.fail("mass " + shown(word(mass, 0)) + " is not positive; every mass must be > 0");
    }
    if (velocity == kMomenta)
      for (int d = 0; d < dim; ++d) a.v[d] /= a.mass;
    if (role[kId] >= 0) a.id = r.integer(word(kId, 0), "id", INT64_MIN, INT64_MAX);
    if (role[kSpecies] >= 0) a.type = species_type(r, word(kSpecies, 0), species);
    return a;
  }

  // The particles, ordered by id when the file gives ids.
  static HostParticles particles(const text::LineReader& r, std::vector<Atom>& atoms, bool by_id,
                                 int dim) {
    const std::size_t n = atoms.size();
    if (by_id) {
      // Ordered by id: particle k of the run is the atom with the k-th smallest id.
      std::stable_sort(atoms.begin(), atoms.end(),
                       [](const Atom& a, const Atom& b) { return a.id < b.id; });
      for (std::size_t k = 1; k < n; ++k)
        if (atoms[k].id == atoms[k - 1].id)
          r.fail_at(atoms[k].line, "id " + std::to_string(atoms[k].id) +
                                       " appears twice (also on line " +
                                       std::to_string(atoms[k - 1].line) + "); ids must differ");
    }
    HostParticles hp(dim);
    hp.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      for (int d = 0; d < dim; ++d) {
        hp.x[d][k] = atoms[k].x[d];
        hp.v[d][k] = atoms[k].v[d];
      }
      hp.mass[k] = atoms[k].mass;
      hp.type[k] = atoms[k].type;
    }
    return hp;
  }

  std::string types_text() const {
    std::string s = "[";
    for (std::size_t k = 0; k < types_.size(); ++k)
      s += (k ? ", \"" : "\"") + shown(types_[k]) + "\"";
    return s + "]";
  }

  // Properties=name:type:columns:...; returns the number of columns of an atom line.
  static int read_properties(text::LineReader& r, const std::string& value,
                             std::vector<Property>& props) {
    std::vector<std::string> parts;
    std::size_t b = 0;
    for (;;) {
      const std::size_t c = value.find(':', b);
      parts.push_back(value.substr(b, c == std::string::npos ? std::string::npos : c - b));
      if (c == std::string::npos) break;
      b = c + 1;
    }
    if (parts.size() % 3 != 0)
      r.fail("Properties=" + shown(value, 80) +
             " is not a list of name:type:columns triples, e.g. species:S:1:pos:R:3");
    int first = 0;
    for (std::size_t k = 0; k < parts.size(); k += 3) {
      Property p;
      p.name = parts[k];
      const std::string& t = parts[k + 1];
      std::int64_t cols = 0;
      if (p.name.empty() || t.size() != 1 ||
          std::string("SRILsril").find(t[0]) == std::string::npos ||
          !text::parse_int(parts[k + 2], cols) || cols < 1 || cols > 1000)
        r.fail("Properties=" + shown(value, 80) + ": '" +
               shown(p.name + ":" + t + ":" + parts[k + 2]) +
               "' is not name:type:columns with type S, R, I or L and columns >= 1");
      p.type = char(t[0] >= 'a' ? t[0] - 'a' + 'A' : t[0]);
      p.columns = int(cols);
      p.first = first;
      first += p.columns;
      props.push_back(p);
    }
    return first;
  }

  text::Source source_;
  std::int64_t frame_;
  std::vector<std::string> types_;
  double mass_;
  bool check_box_;
};

// ---------------------------------------------------------------------------------------------
// The writer. Velocities and masses twice, under the names OVITO reads (velo, mass) and those ASE
// reads (momenta = m v, masses): neither program knows the other's.
constexpr const char* kProperties =
    "species:S:1:pos:R:3:velo:R:3:mass:R:1:id:I:1:masses:R:1:momenta:R:3";

class XyzWriter final : public trajectory::Writer {
 public:
  XyzWriter(std::uint64_t interval, std::string file, std::vector<std::string> species)
      : Writer("xyz observer", interval, std::move(file)), species_(std::move(species)) {}
  ~XyzWriter() override { finish_pending(); }

 protected:
  void write_header(std::string& t, const trajectory::Frame& f, std::uint64_t step,
                    double time) override {
    using trajectory::put;
    const RunInfo& run = this->run();
    const Box& box = run.box;
    const int dim = f.dim;
    // 2D: the plane z = 0 in the middle of a cell of height 1 (as LAMMPS's 2D box).
    double lo[3], len[3];
    for (int d = 0; d < 3; ++d) {
      lo[d] = d < dim ? box.lo[d] : -0.5;
      len[d] = d < dim ? box.length(d) : 1.0;
    }
    trajectory::put_int(t, std::int64_t(f.size()));
    t += "\nLattice=\"";
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) {
        if (a || b) t += ' ';
        if (a == b) put(t, len[a]);
        else t += '0';
      }
    t += "\" Origin=\"";
    for (int d = 0; d < 3; ++d) {
      if (d) t += ' ';
      put(t, lo[d]);
    }
    t += "\" Properties=" + std::string(kProperties) + " Time=";
    put(t, time);
    t += " Step=";
    trajectory::put_int(t, std::int64_t(step));
    t += " pbc=\"";
    for (int d = 0; d < 3; ++d) {
      if (d) t += ' ';
      t += d < dim && box.boundary[d] == Boundary::Periodic ? 'T' : 'F';
    }
    t += "\"\n";
    // Every type named before any row is written (the rows are formatted in parallel).
    if (!species_.empty())
      for (std::size_t i = 0; i < f.size(); ++i) {
        const std::int32_t type = f.type[i];
        if (type < 0 || std::size_t(type) >= species_.size())
          throw Error("xyz observer: particle " + std::to_string(f.id[i]) + " has type " +
                      std::to_string(type) +
                      ", which species = [...] does not name (it names types "
                      "0 to " +
                      std::to_string(species_.size() - 1) + "); add a name for it");
      }
  }

  void write_rows(std::string& t, const trajectory::Frame& f, std::size_t first, std::size_t last,
                  int) const override {
    using trajectory::put;
    const int dim = f.dim;
    for (std::size_t i = first; i < last; ++i) {
      const std::int32_t type = f.type[i];
      if (species_.empty()) trajectory::put_int(t, type);
      else t += species_[std::size_t(type)];
      trajectory::put_vector(t, f.x, i, dim);
      trajectory::put_vector(t, f.v, i, dim);
      t += ' ';
      put(t, f.mass[i]);
      t += ' ';
      trajectory::put_int(t, f.id[i]);
      // ASE's names: masses, and momenta = m v (ASE's velocities are momenta / masses).
      t += ' ';
      put(t, f.mass[i]);
      for (int d = 0; d < 3; ++d) {
        t += ' ';
        if (d < dim) put(t, f.mass[i] * f.v[d][i]);
        else t += '0';
      }
      t += '\n';
    }
  }

  // Complete frames (a count line, a comment with Step=, that many atom lines) up to `step`.
  std::int64_t kept_bytes(const std::string& path, std::uint64_t step) const override {
    trajectory::LineCursor c(path);
    if (!c.ok()) return -1;
    std::string line;
    for (bool first = true;; first = false) {
      const std::uint64_t start = c.offset();
      if (!c.next(line)) return std::int64_t(start);
      std::int64_t n = 0;
      if (!text::parse_int(text::trim(line), n) || n < 0) return first ? -1 : std::int64_t(start);
      std::vector<std::pair<std::string, std::string>> kv;
      std::int64_t s = -1;
      if (!c.next(line)) return first ? -1 : std::int64_t(start);
      if (parse_comment(line, kv))
        for (const auto& [k, v] : kv)
          if (k == "Step" && !text::parse_int(v, s)) s = -1;
      if (s < 0) return first ? -1 : std::int64_t(start);
      for (std::int64_t k = 0; k < n; ++k)
        if (!c.next(line)) return std::int64_t(start);
      if (std::uint64_t(s) > step) return std::int64_t(start);
    }
  }

 private:
  std::vector<std::string> species_;
};

// ---------------------------------------------------------------------------------------------
const char* const kReadDoc = R"(Particles from one frame of an extended XYZ file (the format of
libAtoms/QUIP, ASE and OVITO: https://github.com/libAtoms/extxyz, and ASE's ase.io.extxyz). A
frame is: a line with the number of atoms N; a comment line of key=value pairs; N atom lines
whose columns Properties=name:type:columns:... describes (type S string, R real, I integer,
L logical). Read from Properties:
  species:S:1        the type: a whole number >= 0 is the type itself; a name (Ar, C, ...) is
                     the type of its place in `types` when given, else the types 0, 1, ... go
                     to the names in the order they first appear in the frame (a file uses
                     names or numbers, not both, unless `types` is given); I:1 is accepted
  pos:R:3            positions (length); a 2D run needs every z = 0, or pos:R:2
  velo:R:3           velocities (length/time); also named vel or velocities; or momenta:R:3
                     (mass length/time, divided by the mass; ASE's name); velo wins when both
                     are given (pardyn's xyz output writes both); zero without them
  mass:R:1           masses (mass); or masses:R:1 (ASE's name); mass wins when both are given;
                     `mass` without them
  id:I:1             the particles are ordered by id (particle k of the run is the k-th
                     smallest id); ids must differ. Without it: the file's order
Other properties are skipped. Without Properties the atom lines are plain XYZ, `species x y z`
(further columns are skipped). Lattice="ax ay az bx by bz cx cy cz" is the cell: it must be
axis-aligned (a triclinic cell is refused) and, with OVITO's Origin="x y z" (default 0 0 0),
gives the box [origin, origin + (ax, by, cz)]; pbc="T T F" says which axes are periodic (all,
when Lattice is given without pbc). With check_box = true (the default) a cell or pbc that
disagrees with the scenario's [box] (beyond 1e-9 of a side) is an error that prints the [box]
lines that would match; a 2D run compares x and y only. `frame` picks a frame of a trajectory:
0 the first, 1 the second, ..., -1 the last. Blank lines between frames are skipped. Every
mistake is reported as path:line: what is wrong. [box] from = "file.xyz" takes the box from a
frame's Lattice, Origin and pbc (F: open; give [box] boundary for walls). Example:
  2
  Lattice="10 0 0 0 10 0 0 0 10" Properties=species:S:1:pos:R:3:velo:R:3 pbc="T T T"
  Ar 1.0 1.0 1.0 0.5 0.0 0.0
  Ar 3.0 1.0 1.0 -0.5 0.0 0.0)";

const char* const kWriteDoc =
    R"(Writes an extended XYZ trajectory (https://github.com/libAtoms/extxyz;
ASE, OVITO and the xyz generator read it): one frame per observation (at step 0, every
`interval` steps and at the last step), appended to one file and flushed after each frame.
Each frame is
  N
  Lattice="Lx 0 0 0 Ly 0 0 0 Lz" Origin="xlo ylo zlo" Properties=species:S:1:pos:R:3:velo:R:3:mass:R:1:id:I:1:masses:R:1:momenta:R:3 Time=t Step=s pbc="T T F"
then one line per particle, sorted by id: species x y z vx vy vz mass id mass px py pz.
Velocities and masses appear under the names OVITO reads (velo, mass) and again under those
ASE reads (masses, and momenta = mass * velocity; ASE's get_velocities() divides them back):
neither program knows the other's names. Lattice and Origin are the [box] (Origin is OVITO's
key for the lower corner; ASE keeps it as info), pbc is T on the periodic axes; Time is the
simulation time (time), Step the step. species is the type number, or the name `species`
gives it (species = ["Ar", "Kr"]: type 0 is Ar, type 1 Kr; ASE needs chemical symbols there
and refuses numbers). id is pardyn's particle id (from 0). Positions are wrapped into the box
on periodic axes. A 2D run writes z = 0, vz = 0, a cell of height 1 around z = 0 (Lz = 1, zlo =
-0.5) and pbc F along z. Numbers are written with the fewest digits that read back to the same
double (bitwise). In a parallel run rank 0 gathers every rank's particles and writes the file.
A resumed run (pardyn run --resume) keeps the frames up to the checkpoint's step and appends.)";

void register_xyz(Registrar& r) {
  FactoryInfo g;
  g.kind = PluginKind::Generator;
  g.name = "xyz";
  g.summary = "particles read from an (extended) XYZ file";
  g.doc = kReadDoc;
  g.dims = kDimAll;
  g.precisions = kPrecisionAll;
  g.backends = kBackendAll;
  g.schema
      .path("path", std::nullopt,
            "XYZ file to read; relative paths start at the scenario file's folder")
      .integer("frame", 0,
               "frame to read: 0 the first, 1 the second, ...; -1 the last, -2 the one "
               "before, ...",
               double(-kMaxSteps), double(kMaxSteps))
      .strings("types", std::vector<std::string>{},
               "species names of types 0, 1, ... (e.g. [\"Ar\", \"Kr\"]); empty: names get types "
               "in the order they first appear")
      .real("mass", 1.0, "mass", "mass of every particle when the file has no mass property", 0.0,
            std::nullopt, true)
      .boolean("check_box", true,
               "refuse a file whose Lattice/Origin/pbc disagree with [box] (false: take the "
               "positions as they are)");
  g.file_box = XyzReader::file_box;
  r.add(std::move(g), Factory<Generator>([](const ParamSet& p, const RunInfo& run) {
          return std::unique_ptr<Generator>(new XyzReader(p, run));
        }));

  FactoryInfo o;
  o.kind = PluginKind::Observer;
  o.name = "xyz";
  o.summary = "extended XYZ trajectory (ASE, OVITO), one frame per observation";
  o.doc = kWriteDoc;
  o.backends = kCpu | kCuda;  // observers see host copies only
  trajectory::add_common_keys(o.schema, "trajectory.xyz", "the XYZ file");
  o.schema.strings("species", std::vector<std::string>{},
                   "names written for types 0, 1, ... (e.g. [\"Ar\", \"Kr\"]); empty: the type "
                   "number");
  r.add(std::move(o), Factory<Observer>([](const ParamSet& ps, const RunInfo&) {
          const std::string file = trajectory::file_key(ps, "xyz observer", "trajectory.xyz");
          auto species = ps.strings("species");
          const std::string where = ps.context.empty() ? "" : " (" + ps.context + ")";
          std::int64_t number = 0;
          for (const auto& s : species) {
            if (s.empty() || text::words(s).size() != 1 || s.find('"') != std::string::npos)
              throw Error("xyz observer" + where + ": species name \"" + shown(s) +
                          "\" is not one word; give names such as \"Ar\"");
            if (text::parse_int(s, number))
              throw Error("xyz observer" + where + ": species name \"" + shown(s) +
                          "\" is a number, which readers take for a type number; give names such "
                          "as \"Ar\", or no species to write the type numbers");
          }
          return std::unique_ptr<Observer>(new XyzWriter(
              static_cast<std::uint64_t>(ps.integer("interval")), file, std::move(species)));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_xyz)
