// SPDX-License-Identifier: BSD-3-Clause
// file: particles read from a CSV file (2D and 3D).
//
// The first line that is neither blank nor a comment ('#') is the header: comma-separated column
// names, in any order, matched exactly after trimming spaces and tabs:
//   x, y, vx, vy, mass   required;   z, vz   required in 3D, refused in 2D;   type   optional.
// Every further non-blank, non-comment line is one particle with one value per column. Positions
// and velocities are in the run's units; masses must be > 0; type is a whole number >= 0 (0 if
// there is no such column). Every mistake is reported as `path:line: what is wrong`.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "../../common/text_input.hpp"
#include "pardyn/plugin_export.hpp"

namespace pardyn::plugins {
namespace {

enum Column { kX, kY, kZ, kVx, kVy, kVz, kMass, kType, kColumns };
const char* const kNames[kColumns] = {"x", "y", "z", "vx", "vy", "vz", "mass", "type"};

std::string_view trim(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  for (;;) {
    const auto comma = line.find(',');
    out.push_back(trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) return out;
    line.remove_prefix(comma + 1);
  }
}

using text::file_kind;
using text::kMaxLine;
using text::parse_int;
using text::shown;

// One line without its '\n' into `text`; false at the end of the file. A line longer than kMaxLine
// sets `too_long` (and is not read further).
bool read_line(std::istream& in, std::string& text, bool& too_long) {
  text.clear();
  too_long = false;
  std::streambuf* sb = in.rdbuf();
  bool any = false;
  for (;;) {
    const int c = sb->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return any;
    }
    any = true;
    if (c == '\n') return true;
    if (text.size() >= kMaxLine) {
      too_long = true;
      return true;
    }
    text += char(c);
  }
}

enum class Parsed { Ok, NotANumber, OutOfRange };

// Parses the whole field as a number; from_chars, unlike strtod, ignores the locale.
Parsed parse_real(std::string_view s, double& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return Parsed::NotANumber;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), out);
  if (res.ptr != s.data() + s.size()) return Parsed::NotANumber;
  if (res.ec == std::errc::result_out_of_range) return Parsed::OutOfRange;
  return res.ec == std::errc() ? Parsed::Ok : Parsed::NotANumber;
}

class CsvFile final : public Generator {
 public:
  CsvFile(const ParamSet& p, const RunInfo&)
      : context_(p.context.empty() ? std::string("file") : p.context),
        path_(p.string("path")),
        base_dir_(p.base_dir) {
    if (trim(path_).empty()) throw Error(context_ + ": path is empty; give the CSV file to read");
    check_file(resolve(""));  // a missing or special file is refused before anything runs
  }

  HostParticles generate(const GenerateContext& ctx) override {
    const int dim = ctx.dim;
    const std::filesystem::path file = resolve(ctx.base_dir);
    const std::string shown_path = shown(file.string(), 4096);
    check_file(file);

    std::ifstream in(file, std::ios::binary);
    if (!in) throw Error(context_ + ": cannot open '" + shown_path + "'" + relative_note());

    auto fail = [&](std::size_t line, const std::string& what) {
      throw Error(shown_path + ":" + std::to_string(line) + ": " + what + " (" + context_ + ")");
    };

    int where[kColumns];  // field index of each column, -1 if absent
    std::fill(where, where + kColumns, -1);
    std::size_t fields = 0;
    bool have_header = false;
    HostParticles hp(dim);
    std::vector<double> row[kColumns];
    std::string text;
    std::size_t line = 0;

    bool too_long = false;
    while (read_line(in, text, too_long)) {
      ++line;
      if (too_long)
        fail(line, "the line is longer than " + std::to_string(kMaxLine) +
                       " bytes; is this a CSV file? (one particle per line: " +
                       std::string(dim == 3 ? "x,y,z,vx,vy,vz,mass" : "x,y,vx,vy,mass") + ")");
      if (!text.empty() && text.back() == '\r') text.pop_back();  // files written on Windows
      if (line == 1 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);  // UTF-8 mark
      const std::string_view content = trim(text);
      if (content.empty() || content.front() == '#') continue;
      const auto parts = split(content);

      if (!have_header) {
        read_header(parts, dim, where, [&](const std::string& w) { fail(line, w); });
        fields = parts.size();
        have_header = true;
        continue;
      }
      if (row[kMass].size() >= std::size_t(kMaxParticles))
        fail(line, "more than " + format_number(double(kMaxParticles)) +
                       " particles; a run holds at most that many");
      if (parts.size() != fields)
        fail(line, "expected " + std::to_string(fields) +
                       " comma-separated values (one per column of "
                       "the header), found " +
                       std::to_string(parts.size()));
      for (int c = 0; c < kColumns; ++c)
        if (where[c] >= 0)
          row[c].push_back(field_value(c, parts[std::size_t(where[c])],
                                       [&](const std::string& w) { fail(line, w); }));
    }
    if (in.bad()) throw Error(context_ + ": error while reading '" + shown_path + "'");
    if (!have_header)
      fail(std::max<std::size_t>(line, 1),
           "no header line; the first line must name the columns, e.g. " +
               std::string(dim == 3 ? "x,y,z,vx,vy,vz,mass" : "x,y,vx,vy,mass"));
    const std::size_t n = row[kMass].size();
    if (n == 0)
      fail(std::max<std::size_t>(line, 1), "no particles: the file has a header but no data lines");

    hp.resize(n);
    const int pos[3] = {kX, kY, kZ}, vel[3] = {kVx, kVy, kVz};
    for (int d = 0; d < dim; ++d) {
      hp.x[d] = row[pos[d]];
      hp.v[d] = row[vel[d]];
    }
    hp.mass = row[kMass];
    for (std::size_t i = 0; i < n; ++i)
      hp.type[i] = where[kType] >= 0 ? std::int32_t(row[kType][i]) : 0;
    return hp;
  }

 private:
  // The value of a field of column c: a type is a whole number in [0, INT32_MAX], the others finite
  // numbers, a mass positive; `fail` throws, naming the line.
  template <class Fail>
  static double field_value(int c, std::string_view field, Fail&& fail) {
    const std::string name = kNames[c];
    if (c == kType) {
      std::int64_t t = 0;
      if (!parse_int(field, t)) fail("type '" + shown(field) + "' is not a whole number");
      if (t < 0 || t > INT32_MAX)
        fail("type " + shown(field) + " is out of range; types are 0, 1, ..., " +
             std::to_string(INT32_MAX));
      return double(t);
    }
    double value = 0;
    switch (parse_real(field, value)) {
      case Parsed::Ok: break;
      case Parsed::NotANumber: fail(name + " '" + shown(field) + "' is not a number"); break;
      case Parsed::OutOfRange:
        fail(name + " '" + shown(field) +
             "' is out of the range of a double (magnitudes from about 2.2e-308 to "
             "1.8e308, or 0); give a number in that range");
        break;
    }
    if (!std::isfinite(value)) fail(name + " is " + shown(field) + "; give a finite number");
    if (c == kMass && !(value > 0))
      fail("mass " + shown(field) + " is not positive; every mass must be > 0");
    return value;
  }

  // The file named by `path`: a relative path starts at the scenario's folder.
  std::filesystem::path resolve(const std::string& base_dir) const {
    std::filesystem::path file(path_);
    if (file.is_relative()) {
      const std::string& base = base_dir.empty() ? base_dir_ : base_dir;
      if (!base.empty()) file = std::filesystem::path(base) / file;
    }
    return file;
  }
  std::string relative_note() const {
    return std::filesystem::path(path_).is_relative()
               ? " (relative paths start at the scenario's folder)"
               : "";
  }
  // A regular file (after symbolic links): a device (/dev/zero), a pipe or a folder is not read.
  void check_file(const std::filesystem::path& file) const {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(file, ec);
    if (!fs::exists(st))
      throw Error(context_ + ": no such file: '" + shown(file.string(), 4096) + "'" +
                  relative_note());
    if (fs::is_regular_file(st)) return;
    throw Error(context_ + ": '" + shown(file.string(), 4096) + "' is " + file_kind(st) +
                ", not a CSV file; give the path of a regular file");
  }

  template <class Fail>
  static void read_header(const std::vector<std::string_view>& parts, int dim, int where[kColumns],
                          Fail&& fail) {
    const std::string valid =
        dim == 3 ? "x, y, z, vx, vy, vz, mass, type" : "x, y, vx, vy, mass, type";
    for (std::size_t f = 0; f < parts.size(); ++f) {
      const std::string_view name = parts[f];
      int c = 0;
      while (c < kColumns && name != kNames[c]) ++c;
      if (c == kColumns)
        fail("unknown column '" + shown(name) + "' in the header; valid columns: " + valid);
      if (dim == 2 && (c == kZ || c == kVz))
        fail("column '" + shown(name) + "' is for 3D runs but the run is 2D; remove it");
      if (where[c] >= 0) fail("column '" + shown(name) + "' appears twice in the header");
      where[c] = int(f);
    }
    std::string missing;
    for (int c = 0; c < kColumns; ++c) {
      const bool required = c != kType && (dim == 3 || (c != kZ && c != kVz));
      if (required && where[c] < 0) missing += std::string(missing.empty() ? "" : ", ") + kNames[c];
    }
    if (!missing.empty())
      fail("the header lacks column(s) " + missing + "; a " + std::to_string(dim) +
           "D file needs " + (dim == 3 ? "x, y, z, vx, vy, vz, mass" : "x, y, vx, vy, mass") +
           " (type optional)");
  }

  std::string context_;
  std::string path_;
  std::string base_dir_;
};

FactoryInfo file_info() {
  FactoryInfo f;
  f.kind = PluginKind::Generator;
  f.name = "file";
  f.summary = "particles read from a CSV file with a header line";
  f.doc =
      "CSV with a header naming the columns, in any order: x, y, vx, vy, mass (required), z, vz\n"
      "(required in 3D, refused in 2D), type (optional, whole number >= 0; 0 without it). One\n"
      "line per particle, values separated by commas; blank lines and lines starting with '#' are\n"
      "skipped. Masses must be > 0. A relative path starts at the scenario file's folder. Every\n"
      "mistake is reported as path:line: what is wrong. Example (2D):\n"
      "  # two particles\n"
      "  x, y, vx, vy, mass\n"
      "  0.0, 0.0, 0.0, 0.0, 1.0\n"
      "  1.0, 0.0, 0.0, 1.0, 0.001";
  f.dims = kDimAll;
  f.precisions = kPrecisionAll;
  f.backends = kBackendAll;
  f.schema.path("path", std::nullopt,
                "CSV file to read; relative paths start at the scenario file's folder");
  return f;
}

void register_file(Registrar& r) {
  r.add(file_info(), Factory<Generator>([](const ParamSet& p, const RunInfo& run) {
          return std::unique_ptr<Generator>(new CsvFile(p, run));
        }));
}

}  // namespace
}  // namespace pardyn::plugins

PARDYN_PLUGIN(pardyn::plugins::register_file)
