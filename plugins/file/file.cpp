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

#include "pardyn/plugin.hpp"

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

// Parses the whole field as a number; from_chars, unlike strtod, ignores the locale.
bool parse_real(std::string_view s, double& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), out);
  return res.ec == std::errc() && res.ptr == s.data() + s.size();
}

bool parse_int(std::string_view s, std::int64_t& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), out);
  return res.ec == std::errc() && res.ptr == s.data() + s.size();
}

class CsvFile final : public Generator {
 public:
  CsvFile(const ParamSet& p, const RunInfo&)
      : context_(p.context.empty() ? std::string("file") : p.context),
        path_(p.string("path")),
        base_dir_(p.base_dir) {
    if (trim(path_).empty())
      throw Error(context_ + ": path is empty; give the CSV file to read");
  }

  HostParticles generate(const GenerateContext& ctx) override {
    const int dim = ctx.dim;
    namespace fs = std::filesystem;
    fs::path file(path_);
    if (file.is_relative()) {
      const std::string& base = ctx.base_dir.empty() ? base_dir_ : ctx.base_dir;
      if (!base.empty()) file = fs::path(base) / file;
    }
    const std::string shown = file.string();

    std::ifstream in(file);
    if (!in)
      throw Error(context_ + ": cannot open '" + shown + "'" +
                  (fs::path(path_).is_relative()
                       ? " (relative paths start at the scenario's folder)"
                       : ""));

    auto fail = [&](std::size_t line, const std::string& what) {
      throw Error(shown + ":" + std::to_string(line) + ": " + what + " (" + context_ + ")");
    };

    int where[kColumns];  // field index of each column, -1 if absent
    std::fill(where, where + kColumns, -1);
    std::size_t fields = 0;
    bool have_header = false;
    HostParticles hp(dim);
    std::vector<double> row[kColumns];
    std::string text;
    std::size_t line = 0;

    while (std::getline(in, text)) {
      ++line;
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
      if (parts.size() != fields)
        fail(line, "expected " + std::to_string(fields) +
                       " comma-separated values (one per column of "
                       "the header), found " +
                       std::to_string(parts.size()));
      for (int c = 0; c < kColumns; ++c) {
        if (where[c] < 0) continue;
        const std::string_view field = parts[std::size_t(where[c])];
        const std::string name = kNames[c];
        if (c == kType) {
          std::int64_t t = 0;
          if (!parse_int(field, t))
            fail(line, "type '" + std::string(field) + "' is not a whole number");
          if (t < 0 || t > INT32_MAX)
            fail(line, "type " + std::string(field) + " is out of range; types are 0, 1, 2, ...");
          row[c].push_back(double(t));
          continue;
        }
        double value = 0;
        if (!parse_real(field, value))
          fail(line, name + " '" + std::string(field) + "' is not a number");
        if (!std::isfinite(value))
          fail(line, name + " is " + std::string(field) + "; give a finite number");
        if (c == kMass && !(value > 0))
          fail(line, "mass " + std::string(field) + " is not positive; every mass must be > 0");
        row[c].push_back(value);
      }
    }
    if (in.bad()) throw Error(context_ + ": error while reading '" + shown + "'");
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
        fail("unknown column '" + std::string(name) + "' in the header; valid columns: " + valid);
      if (dim == 2 && (c == kZ || c == kVz))
        fail("column '" + std::string(name) + "' is for 3D runs but the run is 2D; remove it");
      if (where[c] >= 0) fail("column '" + std::string(name) + "' appears twice in the header");
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
  f.schema.string("path", std::nullopt,
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
