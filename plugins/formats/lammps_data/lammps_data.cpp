// SPDX-License-Identifier: BSD-3-Clause
// lammps_data: particles from a LAMMPS data file (what LAMMPS's write_data writes and read_data
// reads; https://docs.lammps.org/read_data.html), and the run's state written as one (an output).
//
// The file: a title line; a header (counts such as "32 atoms", "2 atom types", the box as
// "xlo xhi" / "ylo yhi" / "zlo zhi" lines, a tilt line "xy xz yz"); then sections, each a keyword
// line (Atoms, Velocities, Masses, Bonds, Pair Coeffs, ...) followed by as many lines as the
// header says. '#' starts a comment anywhere but in the title; after "Atoms" it names the atom
// style ("Atoms # full").
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pardyn/plugin_export.hpp"
#include "pardyn/version.hpp"
#include "../../common/lammps.hpp"
#include "../../common/text_input.hpp"
#include "../../common/trajectory.hpp"

namespace pardyn::plugins {
namespace {

using text::shown;

// The line without its comment, and the comment (after '#', trimmed).
std::string_view strip_comment(std::string_view line, std::string_view* comment = nullptr) {
  const std::size_t hash = line.find('#');
  if (comment)
    *comment =
        hash == std::string_view::npos ? std::string_view() : text::trim(line.substr(hash + 1));
  return text::trim(line.substr(0, hash));
}

// The next line of r with content into `line` (blank and comment-only lines skipped), and in `s`
// the line without its comment, in *note the comment; false at the end of the file.
bool next_content(text::LineReader& r, std::string& line, std::string_view& s,
                  std::string_view* note = nullptr) {
  while (r.next(line)) {
    s = strip_comment(line, note);
    if (!s.empty()) return true;
  }
  return false;
}

// Room reserved before the lines are read: a header's count is not trusted with memory (the lines
// may not be there).
constexpr std::size_t kReserve = std::size_t(1) << 16;
// The most atom types read (a Masses section of as many lines).
constexpr std::int64_t kMaxTypes = std::int64_t(1) << 20;

// The counts a header may give (read_data's list).
const std::string kHeaderCounts[] = {"atoms",
                                     "bonds",
                                     "angles",
                                     "dihedrals",
                                     "impropers",
                                     "atom types",
                                     "bond types",
                                     "angle types",
                                     "dihedral types",
                                     "improper types",
                                     "extra bond per atom",
                                     "extra angle per atom",
                                     "extra dihedral per atom",
                                     "extra improper per atom",
                                     "extra special per atom",
                                     "ellipsoids",
                                     "lines",
                                     "triangles",
                                     "bodies"};

// Sections pardyn skips, and the header count that says how many lines each has.
struct Skipped {
  const char* section;
  const char* count;  // header keyword; "atom types pairs": N (N + 1) / 2 of the atom types
};
const Skipped kSkipped[] = {
    {"Bonds", "bonds"},
    {"Angles", "angles"},
    {"Dihedrals", "dihedrals"},
    {"Impropers", "impropers"},
    {"Pair Coeffs", "atom types"},
    {"PairIJ Coeffs", "atom types pairs"},
    {"Bond Coeffs", "bond types"},
    {"Angle Coeffs", "angle types"},
    {"Dihedral Coeffs", "dihedral types"},
    {"Improper Coeffs", "improper types"},
    {"BondBond Coeffs", "angle types"},
    {"BondAngle Coeffs", "angle types"},
    {"MiddleBondTorsion Coeffs", "dihedral types"},
    {"EndBondTorsion Coeffs", "dihedral types"},
    {"AngleTorsion Coeffs", "dihedral types"},
    {"AngleAngleTorsion Coeffs", "dihedral types"},
    {"BondBond13 Coeffs", "dihedral types"},
    {"AngleAngle Coeffs", "improper types"},
};

std::string values(std::size_t n) { return std::to_string(n) + (n == 1 ? " value" : " values"); }

bool is_section(std::string_view s) {
  if (s == "Atoms" || s == "Velocities" || s == "Masses") return true;
  for (const auto& k : kSkipped)
    if (s == k.section) return true;
  // Sections of other atom styles and newer versions: recognised so that they are refused by name.
  for (const char* other :
       {"Ellipsoids", "Lines", "Triangles", "Bodies", "Atom Type Labels", "Bond Type Labels",
        "Angle Type Labels", "Dihedral Type Labels", "Improper Type Labels"})
    if (s == other) return true;
  return false;
}

// The header of a data file: the counts, the box and the first section's keyword.
struct Header {
  std::map<std::string, std::int64_t> counts;
  std::map<std::string, std::size_t> count_line;
  text::FileCell cell;
  std::size_t bounds_line[3] = {0, 0, 0};
  std::string section, comment;  // the first section's keyword and the comment after it
};

std::string join(const std::vector<std::string_view>& w, std::size_t from) {
  std::string s;
  for (std::size_t k = from; k < w.size(); ++k) (s += k > from ? " " : "") += std::string(w[k]);
  return s;
}

// Reads the title line and the header up to the first section. With `sniff`, a file whose first
// line after the title is not a header line is not a data file: false, and nothing thrown.
bool read_header(text::LineReader& r, Header& h, bool sniff) {
  std::string line;
  if (!r.next(line)) {
    if (sniff) return false;
    r.fail("the file is empty; a LAMMPS data file starts with a title line");
  }
  text::FileCell& cell = h.cell;
  cell.have_bounds = true;
  for (int d = 0; d < 3; ++d) cell.lo[d] = -0.5, cell.hi[d] = 0.5;  // LAMMPS's defaults
  std::string_view s, note;
  while (next_content(r, line, s, &note)) {
    const auto w = text::words(s);
    std::int64_t first = 0;
    double real = 0;
    const std::string tail2 = w.size() == 4 ? join(w, 2) : std::string();
    const bool bounds = tail2 == "xlo xhi" || tail2 == "ylo yhi" || tail2 == "zlo zhi";
    const bool tilt = w.size() == 6 && join(w, 3) == "xy xz yz";
    const bool count = w.size() >= 2 && text::parse_int(w[0], first) &&
                       std::find(std::begin(kHeaderCounts), std::end(kHeaderCounts), join(w, 1)) !=
                           std::end(kHeaderCounts);
    if (sniff && !bounds && !tilt && !count) return false;
    sniff = false;
    if (text::parse_real(w[0], real) != text::Parsed::Ok) {
      h.section = std::string(s);
      h.comment = std::string(note);
      break;
    }
    if (bounds) {
      const int d = tail2[0] - 'x';
      cell.lo[d] = r.real(w[0], std::string(1, tail2[0]) + "lo");
      cell.hi[d] = r.real(w[1], std::string(1, tail2[0]) + "hi");
      if (!(cell.hi[d] > cell.lo[d]))
        r.fail(tail2.substr(0, 3) + " " + shown(w[0]) + " is not below " + tail2.substr(4) + " " +
               shown(w[1]));
      h.bounds_line[d] = r.line();
      continue;
    }
    if (tilt) {
      for (int k = 0; k < 3; ++k)
        if (r.real(w[std::size_t(k)], std::string(w[std::size_t(3 + k)])) != 0)
          r.fail("the box is triclinic (tilt factors xy xz yz = " + shown(w[0]) + " " +
                 shown(w[1]) + " " + shown(w[2]) +
                 "); pardyn's box is orthogonal: write the data from an orthogonal box (LAMMPS: "
                 "change_box all triclinic no ... is only possible when the tilts are 0)");
      continue;
    }
    if (!count)
      r.fail("'" + shown(s) +
             "' is not a header line of a LAMMPS data file (such as '32 atoms', "
             "'2 atom types', '0 10 xlo xhi'); the header ends at the first section (Masses, "
             "Atoms, ...)");
    const std::string key = join(w, 1);
    if (first < 0) r.fail("the count '" + shown(w[0]) + "' of " + key + " is negative");
    if (h.counts.count(key)) r.fail("'" + key + "' appears twice in the header");
    h.counts[key] = first;
    h.count_line[key] = r.line();
  }
  return true;
}

// Columns of the Atoms section per style: where id, type and x are, and how many there are
// without image flags.
struct Style {
  const char* name;
  int columns;
  int type;  // index of the type column
  int x;     // index of x (y, z follow)
};
constexpr Style kAtomic{"atomic", 5, 1, 2};
constexpr Style kFull{"full", 7, 2, 4};

// What the sections give: the atoms, their velocities and the types' masses, with the header's
// atom and type counts.
struct Atom {
  std::int64_t id;
  std::int32_t type;
  double x[3];
  std::int32_t image[3];
  std::size_t line;
};
struct Velocity {
  std::int64_t id;
  double v[3];
  std::size_t line;
};
struct Sections {
  std::size_t n = 0;
  std::int64_t ntypes = 0;
  std::vector<Atom> atom;
  std::vector<Velocity> velocity;
  std::vector<double> type_mass;
};

// The style of an Atoms section that names none, by the number of columns of its first line
// (atomic 5 or 8, full 7 or 10).
const Style* style_of_columns(const text::LineReader& r, std::size_t columns) {
  if (columns == 5 || columns == 8) return &kAtomic;
  if (columns == 7 || columns == 10) return &kFull;
  r.fail(values(columns) +
         ": neither atom style atomic (id type x y "
         "z, 5 values, or 8 with image flags) nor full (id mol type q x y z, 7 or "
         "10); "
         "pardyn reads those two (set style = \"atomic\" or \"full\" to be told what "
         "is wrong)");
}

// One line of the Atoms section: id, type, position and the image flags if given.
Atom atom_line(const text::LineReader& r, const std::vector<std::string_view>& w,
               const Style& style, std::int64_t ntypes, const GenerateContext& ctx) {
  const int dim = ctx.dim;
  const std::size_t c = std::size_t(style.columns);
  if (w.size() != c && w.size() != c + 3)
    r.fail(values(w.size()) + "; atom style " + style.name + " has " + std::to_string(c) + " (" +
           (&style == &kAtomic ? "id type x y z" : "id mol type q x y z") + "), or " +
           std::to_string(c + 3) + " with image flags ix iy iz");
  Atom a{};
  a.line = r.line();
  a.id = r.integer(w[0], "atom id", 1, INT64_MAX);
  a.type = std::int32_t(r.integer(w[std::size_t(style.type)], "atom type", 1, ntypes) - 1);
  if (&style == &kFull) {
    r.integer(w[1], "molecule id", 0, INT64_MAX);
    r.real(w[3], "charge q");
  }
  for (int d = 0; d < 3; ++d) {
    const std::string_view word = w[std::size_t(style.x + d)];
    a.x[d] = r.real(word, std::string(1, "xyz"[d]));
    if (d >= dim && a.x[d] != 0) r.fail("z = " + shown(word) + " in a 2D run; every z must be 0");
  }
  if (w.size() == c + 3) {
    for (int d = 0; d < 3; ++d) {
      const std::string_view word = w[c + std::size_t(d)];
      const std::string flag = std::string("image flag i") + "xyz"[d];
      a.image[d] =
          std::int32_t(r.integer(word, flag, -(std::int64_t(1) << 30), std::int64_t(1) << 30));
      if (a.image[d] == 0) continue;
      if (d >= dim) r.fail(flag + " = " + shown(word) + " in a 2D run; it must be 0");
      if (ctx.box && ctx.box->boundary[d] != Boundary::Periodic)
        r.fail(flag + " = " + shown(word) + " but the scenario's " + "xyz"[d] + " axis is " +
               to_string(ctx.box->boundary[d]) +
               ", not periodic: the atom's unwrapped position lies outside the box; make "
               "the axis periodic in [box], or write the data with unwrapped positions "
               "and no image flags");
    }
  }
  return a;
}

class LammpsData final : public Generator {
 public:
  LammpsData(const ParamSet& p, const RunInfo&)
      : source_(p, "lammps_data", "a LAMMPS data file"),
        style_(p.string("style")),
        mass_(p.real("mass")),
        check_box_(p.boolean("check_box")) {}

  HostParticles generate(const GenerateContext& ctx) override {
    text::LineReader r = source_.open(ctx.base_dir);
    Header h;
    read_header(r, h, false);
    Sections s;
    check_header(r, h, ctx, s);
    while (!h.section.empty()) {
      const std::string name = h.section;
      const std::string style_hint = h.comment;
      h.section.clear();
      if (name == "Atoms") read_atoms(r, name, style_hint, ctx, h, s);
      else if (name == "Velocities") read_velocities(r, name, ctx.dim, h, s);
      else if (name == "Masses") read_masses(r, name, h, s);
      else skip_section(r, name, h);
    }
    if (s.atom.empty())
      r.fail_at(r.line(), "the file has no Atoms section (the header says " + std::to_string(s.n) +
                              " atoms)");
    return particles(r, ctx.dim, s);
  }

 private:
  // The header's atom and type counts (s.n, s.ntypes) and its box, checked against the scenario's.
  void check_header(const text::LineReader& r, Header& h, const GenerateContext& ctx,
                    Sections& s) const {
    const int dim = ctx.dim;
    auto& counts = h.counts;
    auto& count_line = h.count_line;
    if (!counts.count("atoms"))
      r.fail_at(r.line(), "the header has no atom count (a line such as '32 atoms')");
    const std::int64_t atoms = counts["atoms"];
    if (atoms < 1 || atoms > std::int64_t(kMaxParticles))
      r.fail_at(count_line["atoms"], "the header says " + std::to_string(atoms) +
                                         " atoms; give between 1 and " +
                                         format_number(double(kMaxParticles)));
    if (!counts.count("atom types") || counts["atom types"] < 1)
      r.fail_at(count_line.count("atom types") ? count_line["atom types"] : r.line(),
                "the header has no atom types (a line such as '2 atom types')");
    const std::int64_t ntypes = counts["atom types"];
    if (ntypes > kMaxTypes)
      r.fail_at(count_line["atom types"], "the header says " + std::to_string(ntypes) +
                                              " atom types; pardyn takes at most " +
                                              std::to_string(kMaxTypes));
    counts["atom types pairs"] = ntypes * (ntypes + 1) / 2;
    if (check_box_ && ctx.box) {
      const std::string why = text::cell_mismatch(h.cell, *ctx.box, dim);
      if (!why.empty()) {
        std::size_t at = 0;
        for (int d = 0; d < dim; ++d) at = std::max(at, h.bounds_line[d]);
        r.fail_at(at ? at : 1, why);
      }
    }
    s.n = std::size_t(atoms);
    s.ntypes = ntypes;
  }

  // The Atoms section, in the style chosen by choose_style or by the first line's columns.
  void read_atoms(text::LineReader& r, const std::string& name, const std::string& style_hint,
                  const GenerateContext& ctx, Header& h, Sections& s) const {
    if (!s.atom.empty()) r.fail("a second Atoms section");
    const Style* style = choose_style(r, style_hint);
    s.atom.reserve(std::min<std::size_t>(s.n, kReserve));
    read_lines(r, name, s.n, "atoms", h.section, h.comment,
               [&](const std::vector<std::string_view>& w) {
                 if (!style) style = style_of_columns(r, w.size());
                 s.atom.push_back(atom_line(r, w, *style, s.ntypes, ctx));
               });
  }

  static void read_velocities(text::LineReader& r, const std::string& name, int dim, Header& h,
                              Sections& s) {
    if (!s.velocity.empty()) r.fail("a second Velocities section");
    s.velocity.reserve(std::min<std::size_t>(s.n, kReserve));
    read_lines(r, name, s.n, "atoms", h.section, h.comment,
               [&](const std::vector<std::string_view>& w) {
                 if (w.size() != 4)
                   r.fail(values(w.size()) +
                          "; a line of Velocities is id vx vy vz (4 "
                          "values, for the atom styles atomic and full)");
                 Velocity v{};
                 v.line = r.line();
                 v.id = r.integer(w[0], "atom id", 1, INT64_MAX);
                 for (int d = 0; d < 3; ++d) {
                   v.v[d] = r.real(w[std::size_t(1 + d)], std::string("v") + "xyz"[d]);
                   if (d >= dim && v.v[d] != 0)
                     r.fail("vz = " + shown(w[3]) + " in a 2D run; every vz must be 0");
                 }
                 s.velocity.push_back(v);
               });
  }

  static void read_masses(text::LineReader& r, const std::string& name, Header& h, Sections& s) {
    if (!s.type_mass.empty()) r.fail("a second Masses section");
    const std::int64_t ntypes = s.ntypes;
    s.type_mass.assign(std::size_t(ntypes), 0.0);
    std::vector<std::size_t> given(std::size_t(ntypes), 0);
    read_lines(r, name, std::size_t(ntypes), "atom types", h.section, h.comment,
               [&](const std::vector<std::string_view>& w) {
                 if (w.size() != 2) r.fail(values(w.size()) + "; a line of Masses is type mass");
                 const auto t = std::size_t(r.integer(w[0], "atom type", 1, ntypes) - 1);
                 if (given[t])
                   r.fail("the mass of type " + std::to_string(t + 1) +
                          " is given twice (also on line " + std::to_string(given[t]) + ")");
                 given[t] = r.line();
                 const double m = r.real(w[1], "mass");
                 if (!(m > 0))
                   r.fail("mass " + shown(w[1]) + " is not positive; every mass must be > 0");
                 s.type_mass[t] = m;
               });
  }

  // A section pardyn does not read (topology, coefficients): as many lines as its header count.
  static void skip_section(text::LineReader& r, const std::string& name, Header& h) {
    const Skipped* skip = nullptr;
    for (const auto& k : kSkipped)
      if (name == k.section) skip = &k;
    if (!skip)
      r.fail("section '" + shown(name) +
             "' is not one pardyn reads (Atoms, Masses, "
             "Velocities; topology and coefficient sections such as Bonds and Pair Coeffs are "
             "skipped)" +
             (is_section(name) ? ""
                               : "; is it a misspelt section name or a "
                                 "header line out of place?"));
    const auto it = h.counts.find(skip->count);
    const std::int64_t lines = it == h.counts.end() ? -1 : it->second;
    if (lines < 0)
      r.fail("a " + name + " section but the header gives no " +
             (std::string(skip->count) == "atom types pairs" ? std::string("atom types")
                                                             : skip->count) +
             " count, which says how many lines it has");
    read_lines(r, name, std::size_t(lines), skip->count, h.section, h.comment,
               [](const std::vector<std::string_view>&) {});
  }

  // The particles, ordered by id, with the masses of their types (or `mass`) and the velocities.
  HostParticles particles(const text::LineReader& r, int dim, Sections& s) const {
    const std::size_t n = s.n;
    auto& atom = s.atom;
    std::sort(atom.begin(), atom.end(), [](const Atom& a, const Atom& b) { return a.id < b.id; });
    for (std::size_t k = 1; k < n; ++k)
      if (atom[k].id == atom[k - 1].id)
        r.fail_at(std::max(atom[k].line, atom[k - 1].line),
                  "atom id " + std::to_string(atom[k].id) + " appears twice in Atoms (lines " +
                      std::to_string(std::min(atom[k].line, atom[k - 1].line)) + " and " +
                      std::to_string(std::max(atom[k].line, atom[k - 1].line)) + ")");
    HostParticles hp(dim);
    hp.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      const Atom& a = atom[k];
      for (int d = 0; d < dim; ++d) {
        hp.x[d][k] = a.x[d];
        hp.image[d][k] = a.image[d];
      }
      hp.type[k] = a.type;
      hp.mass[k] = s.type_mass.empty() ? mass_ : s.type_mass[std::size_t(a.type)];
    }
    std::vector<bool> have(n, false);
    for (const Velocity& v : s.velocity) {
      const auto it = std::lower_bound(atom.begin(), atom.end(), v.id,
                                       [](const Atom& a, std::int64_t id) { return a.id < id; });
      if (it == atom.end() || it->id != v.id)
        r.fail_at(v.line,
                  "Velocities: atom id " + std::to_string(v.id) + " is not in the Atoms section");
      const auto k = std::size_t(it - atom.begin());
      if (have[k])
        r.fail_at(v.line, "Velocities: atom id " + std::to_string(v.id) + " appears twice");
      have[k] = true;
      for (int d = 0; d < dim; ++d) hp.v[d][k] = v.v[d];
    }
    return hp;
  }
  // The style of the Atoms section: the `style` key, the "# style" comment after "Atoms", or
  // null (decided by the first line's columns).
  const Style* choose_style(const text::LineReader& r, const std::string& hint) const {
    auto by_name = [](const std::string& s) -> const Style* {
      if (s == "atomic") return &kAtomic;
      if (s == "full") return &kFull;
      return nullptr;
    };
    const std::string hint_word = hint.empty() ? "" : std::string(text::words(hint)[0]);
    if (!hint_word.empty() && !by_name(hint_word))
      r.fail("atom style '" + shown(hint_word) +
             "' (the comment after Atoms); pardyn reads the styles atomic (id type x y z) and "
             "full (id mol type q x y z)");
    if (style_ != "auto") {
      if (!hint_word.empty() && hint_word != style_)
        r.fail("the Atoms section says its style is '" + hint_word + "' but style = \"" + style_ +
               "\"; remove the key or set it to \"" + hint_word + "\"");
      return by_name(style_);
    }
    return hint_word.empty() ? nullptr : by_name(hint_word);
  }

  // The `count` lines of a section (blank and comment-only lines skipped), each handed to `line`
  // as words; then the next section's keyword into `next` (empty at the end of the file).
  template <class F>
  static void read_lines(text::LineReader& r, const std::string& name, std::size_t count,
                         const char* count_key, std::string& next, std::string& comment, F&& line) {
    const std::size_t header_line = r.line();
    std::string text;
    std::size_t k = 0;
    std::string_view s, note;
    while (k < count) {
      if (!next_content(r, text, s))
        r.fail("the file ends after " + std::to_string(k) + " of the " + std::to_string(count) +
               " lines of " + name + " (line " + std::to_string(header_line) +
               "), as many as the header's " + count_key +
               " count says: the file is cut short, or the count is wrong");
      const auto w = text::words(s);
      std::int64_t first = 0;
      if (!text::parse_int(w[0], first) && is_section(s))
        r.fail(name + " (line " + std::to_string(header_line) + ") ends after " +
               std::to_string(k) + " of its " + std::to_string(count) +
               " lines, as many as the "
               "header's " +
               count_key + " count says: a line is missing, or the count is wrong");
      line(w);
      ++k;
    }
    if (!next_content(r, text, s, &note)) return;
    std::int64_t first = 0;
    if (text::parse_int(text::words(s)[0], first))
      r.fail(name + " (line " + std::to_string(header_line) + ") has more than the " +
             std::to_string(count) + " lines the header's " + count_key +
             " count says; the count is wrong, or lines are left over");
    next = std::string(s);
    comment = std::string(note);
  }

  text::Source source_;
  std::string style_;
  double mass_;
  bool check_box_;
};

// ---------------------------------------------------------------------------------------------
// The writer: the run's state as LAMMPS's write_data writes it, atom style atomic (id type x y z
// ix iy iz; Velocities id vx vy vz; Masses per type), replaced at each observation.
class DataWriter final : public trajectory::Writer {
 public:
  DataWriter(std::uint64_t interval, std::string file)
      : Writer("lammps_data observer", interval, std::move(file), Mode::Replace) {}
  ~DataWriter() override { finish_pending(); }

 protected:
  void write_header(std::string& t, const trajectory::Frame& f, std::uint64_t step,
                    double time) override {
    using trajectory::put;
    using trajectory::put_int;
    // One mass per type: atom style atomic has no per-atom mass.
    std::vector<double> mass;
    std::vector<std::int64_t> first;  // the id of the first particle of each type
    for (std::size_t i = 0; i < f.size(); ++i) {
      const std::int32_t type = f.type[i];
      if (type < 0)
        throw Error(who() + ": particle " + std::to_string(f.id[i]) + " has type " +
                    std::to_string(type) + "; LAMMPS types start at 1 (pardyn's 0)");
      if (std::size_t(type) >= mass.size()) {
        mass.resize(std::size_t(type) + 1, 0.0);
        first.resize(std::size_t(type) + 1, -1);
      }
      const auto k = std::size_t(type);
      if (first[k] < 0) {
        first[k] = f.id[i];
        mass[k] = f.mass[i];
      } else if (f.mass[i] != mass[k]) {
        std::string a, b;
        put(a, mass[k]);
        put(b, f.mass[i]);
        throw Error(who() + ": particles " + std::to_string(first[k]) + " and " +
                    std::to_string(f.id[i]) + " are both of type " + std::to_string(type) +
                    " but their masses differ (" + a + " and " + b +
                    "); a LAMMPS data file of atom style atomic gives each type one mass (its "
                    "Masses section): give particles of different masses different types");
      }
    }
    if (mass.empty()) {  // no particles: one type, as LAMMPS needs at least one
      mass.assign(1, 1.0);
      first.assign(1, -1);
    }
    t += "LAMMPS data file written by pardyn " PARDYN_VERSION_STRING ", step ";
    put_int(t, std::int64_t(step));
    t += ", time ";
    put(t, time);
    t += ", boundary ";
    for (int d = 0; d < 3; ++d) {
      t += d ? " " : "";
      t += lammps::letter(run().box, d, f.dim);
    }
    t += "\n\n";
    put_int(t, std::int64_t(f.size()));
    t += " atoms\n";
    put_int(t, std::int64_t(mass.size()));
    t += " atom types\n\n";
    double lo[3], hi[3];
    lammps::frame_bounds(run().box, f, lo, hi);
    for (int d = 0; d < 3; ++d) {
      put(t, lo[d]);
      t += ' ';
      put(t, hi[d]);
      t += std::string(" ") + "xyz"[d] + "lo " + "xyz"[d] + "hi\n";
    }
    t += "\nMasses\n\n";
    for (std::size_t k = 0; k < mass.size(); ++k) {
      put_int(t, std::int64_t(k) + 1);
      t += ' ';
      if (first[k] < 0) {
        t += "1  # no particle has this type\n";
      } else {
        put(t, mass[k]);
        t += '\n';
      }
    }
  }

  int sections() const override { return 2; }
  void write_section(std::string& t, const trajectory::Frame&, int section) const override {
    t += section == 0 ? "\nAtoms # atomic\n\n" : "\nVelocities\n\n";
  }

  void write_rows(std::string& t, const trajectory::Frame& f, std::size_t first, std::size_t last,
                  int section) const override {
    const Box& box = run().box;
    const int dim = f.dim;
    for (std::size_t i = first; i < last; ++i) {
      trajectory::put_int(t, f.id[i] + 1);
      if (section == 0) {
        t += ' ';
        trajectory::put_int(t, std::int64_t(f.type[i]) + 1);
      }
      trajectory::put_vector(t, section == 0 ? f.x : f.v, i, dim);
      if (section == 0) lammps::put_images(t, box, f, i);
      t += '\n';
    }
  }
};

const char* const kWriteDoc = R"(Writes the run's state as a LAMMPS data file, as LAMMPS's
write_data writes it (https://docs.lammps.org/read_data.html), so that LAMMPS's read_data
continues the run (or computes its energy) from pardyn's particles. The file is written at step
0, every `interval` steps and at the last step, each time replacing the one before (written
beside it and renamed over it: the file is always a whole state); after the run it holds the
last step. Its layout:
  LAMMPS data file written by pardyn <version>, step s, time t, boundary p p f
  N atoms
  K atom types
  xlo xhi / ylo yhi / zlo zhi   the [box] bounds (open axes: grown to hold every particle)
  Masses       type mass        one line per type 1 .. K
  Atoms # atomic                id type x y z ix iy iz
  Velocities                    id vx vy vz
ids and types are pardyn's + 1 (LAMMPS counts from 1), rows sorted by id. Atom style atomic gives
each type one mass: particles of one type with different masses stop the run with a message
(give them different types). A type no particle has gets mass 1. ix iy iz are the image counts on
periodic axes (the unwrapped position is x + ix Lx), 0 on the others. The title line names the
boundary in LAMMPS's letters (p periodic, f wall, m open); a data file holds no boundary, so write
the same `boundary` line in the LAMMPS input. A 2D run writes z = 0, vz = 0, z bounds -0.5 0.5
(use dimension 2 in LAMMPS). Numbers are written with the fewest digits that read back to the same
double. Force-field parameters are not written: give LAMMPS the pair_style and pair_coeff of the
run (docs/lammps.md translates them). In a parallel run rank 0 gathers every rank's particles and
writes the file.)";

// [box] from = "file.data": the box of the header (FactoryInfo::file_box).
bool data_file_box(const std::string& path, std::int64_t, int, FileBox& out) {
  text::LineReader r(path, "[box] from", "a LAMMPS data file");
  Header h;
  // A header that ends in a known section (an XYZ comment line "10 atoms" does not).
  if (!read_header(r, h, true) || !h.counts.count("atoms") || !is_section(h.section)) return false;
  out.format = "a LAMMPS data file";
  for (int d = 0; d < 3; ++d) {
    out.lo[d] = h.cell.lo[d];
    out.hi[d] = h.cell.hi[d];
  }
  out.has_boundary = false;  // data files hold no boundary conditions
  return true;
}

const char* const kDoc = R"(Particles from a LAMMPS data file, as LAMMPS's write_data writes it
and read_data reads it (https://docs.lammps.org/read_data.html).
Header (after the title line, which is skipped): "N atoms" and "N atom types" are required;
"xlo xhi", "ylo yhi", "zlo zhi" give the box (LAMMPS's default -0.5 0.5 when absent); a tilt
line "xy xz yz" must be 0 0 0 (a triclinic box is refused); other counts (bonds, bond types,
...) say how long the sections they belong to are. Sections:
  Atoms       atom style atomic:  id type x y z [ix iy iz]
              atom style full:    id mol type q x y z [ix iy iz]  (mol and q are checked, not kept)
              The style is `style`, else the comment after the keyword ("Atoms # full", as
              write_data writes it), else the column count of the first line. Other styles are
              refused.
  Velocities  id vx vy vz
  Masses      type mass; without this section every particle has mass `mass`
Topology and coefficient sections (Bonds, Angles, Dihedrals, Impropers, Pair Coeffs, Bond
Coeffs, ...) are skipped; others (Ellipsoids, type labels, ...) are refused. '#' starts a comment.
Particles are ordered by LAMMPS atom id: particle k of the run is the atom with the k-th smallest
id (pardyn gives ids 0, 1, ...). LAMMPS types 1, 2, ... become pardyn types 0, 1, ... (the
block's `type` is added). Image flags ix iy iz become the particles' image counts (the unwrapped
position is x + ix Lx, as in LAMMPS); a non-zero flag on an axis that is not periodic in [box] is
refused. Velocities absent from the file are 0. In 2D every z, vz and iz must be 0 and the z
bounds are not compared. With check_box = true (the default) the file's bounds must match
[box] lo and hi on the run's axes (within 1e-9 of a side; the lower corner may be anywhere);
otherwise the error prints the [box] lines that would match. Data files hold no boundary
conditions: [box] boundary decides (LAMMPS's "boundary p p p" is boundary = "periodic"). Units
are taken as they are (LAMMPS's lj units are pardyn's). Every mistake is reported as
path:line: what is wrong. [box] from = "file.data" takes the box from the file's xlo xhi ...
lines (a data file holds no boundary conditions: give [box] boundary too).)";

void register_lammps_data(Registrar& r) {
  FactoryInfo f;
  f.kind = PluginKind::Generator;
  f.name = "lammps_data";
  f.summary = "particles read from a LAMMPS data file (atom styles atomic and full)";
  f.doc = kDoc;
  f.dims = kDimAll;
  f.precisions = kPrecisionAll;
  f.backends = kBackendAll;
  f.schema
      .path("path", std::nullopt,
            "LAMMPS data file to read; relative paths start at the scenario file's folder")
      .choice("style", std::string("auto"), {"auto", "atomic", "full"},
              "atom style of the Atoms section; auto: the comment after Atoms, else the column "
              "count")
      .real("mass", 1.0, "mass", "mass of every particle when the file has no Masses section", 0.0,
            std::nullopt, true)
      .boolean("check_box", true,
               "refuse a file whose box bounds disagree with [box] (false: take the positions as "
               "they are)");
  f.file_box = data_file_box;
  r.add(std::move(f), Factory<Generator>([](const ParamSet& p, const RunInfo& run) {
          return std::unique_ptr<Generator>(new LammpsData(p, run));
        }));

  FactoryInfo o;
  o.kind = PluginKind::Observer;
  o.name = "lammps_data";
  o.summary = "the run's state as a LAMMPS data file (write_data's layout, atom style atomic)";
  o.doc = kWriteDoc;
  o.backends = kCpu | kCuda;  // observers see host copies only
  trajectory::add_common_keys(o.schema, "state.data", "the data file",
                              "write the state every this many steps (and at step 0 and the last "
                              "step), each time replacing the file");
  r.add(std::move(o), Factory<Observer>([](const ParamSet& ps, const RunInfo&) {
          const std::string file = trajectory::file_key(ps, "lammps_data observer", "state.data");
          return std::unique_ptr<Observer>(
              new DataWriter(static_cast<std::uint64_t>(ps.integer("interval")), file));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_lammps_data)
