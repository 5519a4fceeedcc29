// SPDX-License-Identifier: BSD-3-Clause
// lammps_data: particles from a LAMMPS data file (what LAMMPS's write_data writes and read_data
// reads; https://docs.lammps.org/read_data.html).
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
#include "../common/text_input.hpp"

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

class LammpsData final : public Generator {
 public:
  LammpsData(const ParamSet& p, const RunInfo&)
      : context_(p.context.empty() ? std::string("lammps_data") : p.context),
        path_(p.string("path")),
        base_dir_(p.base_dir),
        style_(p.string("style")),
        mass_(p.real("mass")),
        check_box_(p.boolean("check_box")) {
    if (text::trim(path_).empty())
      throw Error(context_ + ": path is empty; give the LAMMPS data file to read");
    text::LineReader(text::resolve(path_, base_dir_), context_, "a LAMMPS data file");
  }

  HostParticles generate(const GenerateContext& ctx) override {
    const int dim = ctx.dim;
    text::LineReader r(text::resolve(path_, ctx.base_dir.empty() ? base_dir_ : ctx.base_dir),
                       context_, "a LAMMPS data file");
    std::string line;
    if (!r.next(line)) r.fail("the file is empty; a LAMMPS data file starts with a title line");

    // --- header ---
    std::map<std::string, std::int64_t> counts;
    std::map<std::string, std::size_t> count_line;
    text::FileCell cell;
    cell.have_bounds = true;
    for (int d = 0; d < 3; ++d) cell.lo[d] = -0.5, cell.hi[d] = 0.5;  // LAMMPS's defaults
    std::size_t bounds_line[3] = {0, 0, 0};
    std::string section, comment;
    for (;;) {
      if (!r.next(line)) break;
      std::string_view note;
      const std::string_view s = strip_comment(line, &note);
      if (s.empty()) continue;
      const auto w = text::words(s);
      std::int64_t first = 0;
      double real = 0;
      if (text::parse_real(w[0], real) != text::Parsed::Ok) {
        section = std::string(s);
        comment = std::string(note);
        break;
      }
      const std::string tail = w.size() == 4 ? join(w, 2) : std::string();
      if (tail == "xlo xhi" || tail == "ylo yhi" || tail == "zlo zhi") {
        const int d = tail[0] - 'x';
        cell.lo[d] = r.real(w[0], std::string(1, tail[0]) + "lo");
        cell.hi[d] = r.real(w[1], std::string(1, tail[0]) + "hi");
        if (!(cell.hi[d] > cell.lo[d]))
          r.fail(tail.substr(0, 3) + " " + shown(w[0]) + " is not below " + tail.substr(4) + " " +
                 shown(w[1]));
        bounds_line[d] = r.line();
        continue;
      }
      if (w.size() == 6 && join(w, 3) == "xy xz yz") {
        for (int k = 0; k < 3; ++k)
          if (r.real(w[std::size_t(k)], std::string(w[std::size_t(3 + k)])) != 0)
            r.fail("the box is triclinic (tilt factors xy xz yz = " + shown(w[0]) + " " +
                   shown(w[1]) + " " + shown(w[2]) +
                   "); pardyn's box is orthogonal: write the data from an orthogonal box (LAMMPS: "
                   "change_box all triclinic no ... is only possible when the tilts are 0)");
        continue;
      }
      if (!text::parse_int(w[0], first) || w.size() < 2)
        r.fail("'" + shown(s) +
               "' is not a header line (such as '32 atoms', '2 atom types', "
               "'0 10 xlo xhi'); the header ends at the first section (Masses, Atoms, ...)");
      const std::string key = join(w, 1);
      if (std::find(std::begin(kHeaderCounts), std::end(kHeaderCounts), key) ==
          std::end(kHeaderCounts))
        r.fail("'" + shown(s) +
               "' is not a header line of a LAMMPS data file (such as '32 atoms', "
               "'2 atom types', '0 10 xlo xhi'); the header ends at the first section (Masses, "
               "Atoms, ...)");
      if (first < 0) r.fail("the count '" + shown(w[0]) + "' of " + key + " is negative");
      if (counts.count(key)) r.fail("'" + key + "' appears twice in the header");
      counts[key] = first;
      count_line[key] = r.line();
    }
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
      const std::string why = text::cell_mismatch(cell, *ctx.box, dim);
      if (!why.empty()) {
        std::size_t at = 0;
        for (int d = 0; d < dim; ++d) at = std::max(at, bounds_line[d]);
        r.fail_at(at ? at : 1, why);
      }
    }

    // --- sections ---
    const std::size_t n = std::size_t(atoms);
    struct Atom {
      std::int64_t id;
      std::int32_t type;
      double x[3];
      std::int32_t image[3];
      std::size_t line;
    };
    std::vector<Atom> atom;
    std::vector<double> type_mass;
    struct Velocity {
      std::int64_t id;
      double v[3];
      std::size_t line;
    };
    std::vector<Velocity> velocity;
    while (!section.empty()) {
      const std::string name = section;
      const std::string style_hint = comment;
      section.clear();
      if (name == "Atoms") {
        if (!atom.empty()) r.fail("a second Atoms section");
        const Style* style = choose_style(r, style_hint);
        atom.reserve(std::min<std::size_t>(n, kReserve));
        read_lines(
            r, name, n, "atoms", section, comment, [&](const std::vector<std::string_view>& w) {
              if (!style) {
                // No style named: by the number of columns (atomic 5 or 8, full 7 or 10).
                if (w.size() == 5 || w.size() == 8) style = &kAtomic;
                else if (w.size() == 7 || w.size() == 10) style = &kFull;
                else
                  r.fail(
                      values(w.size()) +
                      ": neither atom style atomic (id type x y "
                      "z, 5 values, or 8 with image flags) nor full (id mol type q x y z, 7 or "
                      "10); "
                      "pardyn reads those two (set style = \"atomic\" or \"full\" to be told what "
                      "is wrong)");
              }
              const std::size_t c = std::size_t(style->columns);
              if (w.size() != c && w.size() != c + 3)
                r.fail(values(w.size()) + "; atom style " + style->name + " has " +
                       std::to_string(c) + " (" +
                       (style == &kAtomic ? "id type x y z" : "id mol type q x y z") + "), or " +
                       std::to_string(c + 3) + " with image flags ix iy iz");
              Atom a{};
              a.line = r.line();
              a.id = r.integer(w[0], "atom id", 1, INT64_MAX);
              a.type =
                  std::int32_t(r.integer(w[std::size_t(style->type)], "atom type", 1, ntypes) - 1);
              if (style == &kFull) {
                r.integer(w[1], "molecule id", 0, INT64_MAX);
                r.real(w[3], "charge q");
              }
              for (int d = 0; d < 3; ++d) {
                const std::string_view word = w[std::size_t(style->x + d)];
                a.x[d] = r.real(word, std::string(1, "xyz"[d]));
                if (d >= dim && a.x[d] != 0)
                  r.fail("z = " + shown(word) + " in a 2D run; every z must be 0");
              }
              if (w.size() == c + 3) {
                for (int d = 0; d < 3; ++d) {
                  const std::string_view word = w[c + std::size_t(d)];
                  const std::string flag = std::string("image flag i") + "xyz"[d];
                  a.image[d] = std::int32_t(
                      r.integer(word, flag, -(std::int64_t(1) << 30), std::int64_t(1) << 30));
                  if (a.image[d] == 0) continue;
                  if (d >= dim) r.fail(flag + " = " + shown(word) + " in a 2D run; it must be 0");
                  if (ctx.box && ctx.box->boundary[d] != Boundary::Periodic)
                    r.fail(
                        flag + " = " + shown(word) + " but the scenario's " + "xyz"[d] +
                        " axis is " + to_string(ctx.box->boundary[d]) +
                        ", not periodic: the atom's unwrapped position lies outside the box; make "
                        "the axis periodic in [box], or write the data with unwrapped positions "
                        "and no image flags");
                }
              }
              atom.push_back(a);
            });
      } else if (name == "Velocities") {
        if (!velocity.empty()) r.fail("a second Velocities section");
        velocity.reserve(std::min<std::size_t>(n, kReserve));
        read_lines(r, name, n, "atoms", section, comment,
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
                     velocity.push_back(v);
                   });
      } else if (name == "Masses") {
        if (!type_mass.empty()) r.fail("a second Masses section");
        type_mass.assign(std::size_t(ntypes), 0.0);
        std::vector<std::size_t> given(std::size_t(ntypes), 0);
        read_lines(r, name, std::size_t(ntypes), "atom types", section, comment,
                   [&](const std::vector<std::string_view>& w) {
                     if (w.size() != 2)
                       r.fail(values(w.size()) + "; a line of Masses is type mass");
                     const auto t = std::size_t(r.integer(w[0], "atom type", 1, ntypes) - 1);
                     if (given[t])
                       r.fail("the mass of type " + std::to_string(t + 1) +
                              " is given twice (also on line " + std::to_string(given[t]) + ")");
                     given[t] = r.line();
                     const double m = r.real(w[1], "mass");
                     if (!(m > 0))
                       r.fail("mass " + shown(w[1]) + " is not positive; every mass must be > 0");
                     type_mass[t] = m;
                   });
      } else {
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
        const auto it = counts.find(skip->count);
        const std::int64_t lines = it == counts.end() ? -1 : it->second;
        if (lines < 0)
          r.fail("a " + name + " section but the header gives no " +
                 (std::string(skip->count) == "atom types pairs" ? std::string("atom types")
                                                                 : skip->count) +
                 " count, which says how many lines it has");
        read_lines(r, name, std::size_t(lines), skip->count, section, comment,
                   [](const std::vector<std::string_view>&) {});
      }
    }
    if (atom.empty())
      r.fail_at(r.line(), "the file has no Atoms section (the header says " +
                              std::to_string(atoms) + " atoms)");

    // --- the particles, ordered by id ---
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
      hp.mass[k] = type_mass.empty() ? mass_ : type_mass[std::size_t(a.type)];
    }
    std::vector<bool> have(n, false);
    for (const Velocity& v : velocity) {
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

 private:
  static std::string join(const std::vector<std::string_view>& w, std::size_t from) {
    std::string s;
    for (std::size_t k = from; k < w.size(); ++k) (s += k > from ? " " : "") += std::string(w[k]);
    return s;
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
    while (k < count) {
      if (!r.next(text))
        r.fail("the file ends after " + std::to_string(k) + " of the " + std::to_string(count) +
               " lines of " + name + " (line " + std::to_string(header_line) +
               "), as many as the header's " + count_key +
               " count says: the file is cut short, or the count is wrong");
      const std::string_view s = strip_comment(text);
      if (s.empty()) continue;
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
    for (;;) {
      if (!r.next(text)) return;
      std::string_view note;
      const std::string_view s = strip_comment(text, &note);
      if (s.empty()) continue;
      const auto w = text::words(s);
      std::int64_t first = 0;
      if (text::parse_int(w[0], first))
        r.fail(name + " (line " + std::to_string(header_line) + ") has more than the " +
               std::to_string(count) + " lines the header's " + count_key +
               " count says; the count is wrong, or lines are left over");
      next = std::string(s);
      comment = std::string(note);
      return;
    }
  }

  std::string context_;
  std::string path_;
  std::string base_dir_;
  std::string style_;
  double mass_;
  bool check_box_;
};

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
path:line: what is wrong.)";

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
  r.add(std::move(f), Factory<Generator>([](const ParamSet& p, const RunInfo& run) {
          return std::unique_ptr<Generator>(new LammpsData(p, run));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_lammps_data)
