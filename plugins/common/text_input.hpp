// SPDX-License-Identifier: BSD-3-Clause
// Reading text files of particles (the xyz and lammps_data generators): a line reader that knows
// the line number, numbers parsed without the locale, and every mistake reported as
// `path:line: what is wrong, what to do (context)`.
//
// Header-only: each generator plugin compiles its own copy (no code is shared between plugin
// libraries).
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "pardyn/box.hpp"
#include "pardyn/core.hpp"
#include "pardyn/params.hpp"

namespace pardyn::plugins::text {

inline bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// The words of a line, separated by spaces and tabs.
inline std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_blank(s[i])) ++i;
    const std::size_t b = i;
    while (i < s.size() && !is_blank(s[i])) ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char x = a[i] >= 'A' && a[i] <= 'Z' ? char(a[i] - 'A' + 'a') : a[i];
    const char y = b[i] >= 'A' && b[i] <= 'Z' ? char(b[i] - 'A' + 'a') : b[i];
    if (x != y) return false;
  }
  return true;
}

// Text of the file for a message: control and non-ASCII bytes as \xNN (a NUL would end the message),
// at most `max` characters.
inline std::string shown(std::string_view s, std::size_t max = 40) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= max) return out + "...";
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
    } else {
      const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

enum class Parsed { Ok, NotANumber, OutOfRange, NotFinite };

// The whole word as a finite double; from_chars, unlike strtod, ignores the locale.
inline Parsed parse_real(std::string_view s, double& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return Parsed::NotANumber;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), out);
  if (res.ptr != s.data() + s.size()) return Parsed::NotANumber;
  if (res.ec == std::errc::result_out_of_range) return Parsed::OutOfRange;
  if (res.ec != std::errc()) return Parsed::NotANumber;
  return std::isfinite(out) ? Parsed::Ok : Parsed::NotFinite;
}

// The whole word as a whole number (no fraction, no exponent).
inline bool parse_int(std::string_view s, std::int64_t& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), out);
  return res.ec == std::errc() && res.ptr == s.data() + s.size();
}

// The longest line read; a longer one is an error (a binary file), not a string that grows until
// memory runs out.
constexpr std::size_t kMaxLine = 1 << 20;

// What a path that is not a regular file is, in words: "a folder", "a pipe (FIFO)", ...
inline const char* file_kind(const std::filesystem::file_status& st) {
  namespace fs = std::filesystem;
  return fs::is_directory(st)        ? "a folder"
         : fs::is_character_file(st) ? "a character device"
         : fs::is_block_file(st)     ? "a block device"
         : fs::is_fifo(st)           ? "a pipe (FIFO)"
         : fs::is_socket(st)         ? "a socket"
                                     : "not a regular file";
}

// A text file read line by line, counting lines from 1. Lines lose their '\n' and a '\r' before it
// (files written on Windows); the first loses a UTF-8 byte order mark. fail() throws
// "path:line: what (context)".
class LineReader {
 public:
  LineReader(const std::filesystem::path& file, std::string context, const char* what_file)
      : path_(shown(file.string(), 4096)), context_(std::move(context)), what_(what_file) {
    check_regular(file);
    in_.open(file, std::ios::binary);
    if (!in_) throw Error(context_ + ": cannot open '" + path_ + "'");
  }

  // The next line into `text`; false at the end of the file.
  bool next(std::string& text) {
    text.clear();
    std::streambuf* sb = in_.rdbuf();
    bool any = false;
    for (;;) {
      const int c = sb->sbumpc();
      if (c == std::char_traits<char>::eof()) {
        if (in_.bad()) throw Error(context_ + ": error while reading '" + path_ + "'");
        if (!any) return false;
        break;
      }
      any = true;
      if (c == '\n') break;
      if (text.size() >= kMaxLine) {
        ++line_;
        fail("the line is longer than " + std::to_string(kMaxLine) + " bytes; is this " + what_ +
             "?");
      }
      text += char(c);
    }
    ++line_;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (line_ == 1 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
    return true;
  }

  std::size_t line() const { return line_; }
  const std::string& path() const { return path_; }
  const std::string& context() const { return context_; }

  [[noreturn]] void fail(const std::string& what) const { fail_at(line_, what); }
  [[noreturn]] void fail_at(std::size_t line, const std::string& what) const {
    throw Error(path_ + ":" + std::to_string(std::max<std::size_t>(line, 1)) + ": " + what + " (" +
                context_ + ")");
  }

  // A finite number from `word`, or fail() naming `name`.
  double real(std::string_view word, const std::string& name) const {
    double v = 0;
    switch (parse_real(word, v)) {
      case Parsed::Ok: return v;
      case Parsed::NotANumber: fail(name + " '" + shown(word) + "' is not a number");
      case Parsed::OutOfRange:
        fail(name + " '" + shown(word) +
             "' is out of the range of a double (magnitudes from about 2.2e-308 to 1.8e308, or "
             "0); give a number in that range");
      case Parsed::NotFinite: fail(name + " is " + shown(word) + "; give a finite number");
    }
    return v;
  }
  // A whole number in [lo, hi] from `word`, or fail() naming `name`.
  std::int64_t integer(std::string_view word, const std::string& name, std::int64_t lo,
                       std::int64_t hi) const {
    std::int64_t v = 0;
    if (!parse_int(word, v)) fail(name + " '" + shown(word) + "' is not a whole number");
    if (v < lo || v > hi)
      fail(name + " " + shown(word) + " is out of range; it must be in [" + std::to_string(lo) +
           ", " + std::to_string(hi) + "]");
    return v;
  }

  // A regular file (after symbolic links): a device (/dev/zero), a pipe or a folder is not read.
  void check_regular(const std::filesystem::path& file) const {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(file, ec);
    if (!fs::exists(st)) throw Error(context_ + ": no such file: '" + path_ + "'");
    if (fs::is_regular_file(st)) return;
    throw Error(context_ + ": '" + path_ + "' is " + file_kind(st) + ", not " + what_ +
                "; give the path of a regular file");
  }

 private:
  std::string path_, context_;
  const char* what_;
  std::ifstream in_;
  std::size_t line_ = 0;
};

// The file named by a generator's `path`: a relative path starts at the scenario's folder.
inline std::filesystem::path resolve(const std::string& path, const std::string& base_dir) {
  std::filesystem::path file(path);
  if (file.is_relative() && !base_dir.empty()) file = std::filesystem::path(base_dir) / file;
  return file;
}

// What a file reader's [[particles]] block names: its label for messages, the file (`path`) and
// the scenario's folder, where a relative path starts. Checked when the block is made: an empty
// path, a missing file or one that is not a regular file is refused before anything runs.
struct Source {
  std::string context, path, base_dir;
  const char* what;  // "an XYZ file"
  Source(const ParamSet& p, const std::string& plugin, const char* what_file)
      : context(p.context.empty() ? plugin : p.context),
        path(p.string("path")),
        base_dir(p.base_dir),
        what(what_file) {
    if (trim(path).empty()) throw Error(context + ": path is empty; give " + what + " to read");
    LineReader(resolve(path, base_dir), context, what);
  }
  // The file, relative to `dir` (the run's scenario folder) when given.
  std::filesystem::path file(const std::string& dir) const {
    return resolve(path, dir.empty() ? base_dir : dir);
  }
  // A reader of the file, lines counted from 1.
  LineReader open(const std::string& dir) const { return LineReader(file(dir), context, what); }
};

// A number as a user would type it into TOML (shortest text that reads back to the same double,
// with a ".0" where it would otherwise read as an integer).
inline std::string toml_number(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

// What a file says of its box, compared with the scenario's [box] on the run's axes.
struct FileCell {
  bool have_bounds = false;  // lo, hi given
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  // Axes whose bounds only hold the atoms (a LAMMPS dump's shrink-wrapped s and m): not compared.
  bool loose[3] = {false, false, false};
  bool have_pbc = false;  // periodic given
  bool periodic[3] = {false, false, false};
};

// Empty when the file's cell agrees with `box` (bounds within 1e-9 of the box's side on the axes
// that are not open, periodic axes where the file's are); else what differs, the [box] lines that would match and the way
// out (check_box = false).
inline std::string cell_mismatch(const FileCell& c, const Box& box, int dim) {
  std::string diff;
  auto range = [](double lo, double hi) {
    return "[" + toml_number(lo) + ", " + toml_number(hi) + "]";
  };
  for (int d = 0; d < dim; ++d) {
    const double tol = 1e-9 * std::max(std::abs(box.length(d)), 1e-300);
    // An open axis has no faces: its bounds are not compared.
    const bool bounds =
        !c.have_bounds || c.loose[d] || box.boundary[d] == Boundary::Open ||
        (std::abs(c.lo[d] - box.lo[d]) <= tol && std::abs(c.hi[d] - box.hi[d]) <= tol);
    const bool per = !c.have_pbc || c.periodic[d] == (box.boundary[d] == Boundary::Periodic);
    if (bounds && per) continue;
    diff += std::string("\n  ") + "xyz"[d] + ": the file's";
    if (c.have_bounds) diff += " " + range(c.lo[d], c.hi[d]);
    if (c.have_pbc) diff += c.periodic[d] ? " periodic" : " not periodic";
    diff += ", [box]'s " + range(box.lo[d], box.hi[d]) + " " + to_string(box.boundary[d]);
  }
  if (diff.empty()) return {};
  std::string lo, hi, boundary;
  for (int d = 0; d < dim; ++d) {
    const char* sep = d ? ", " : "";
    lo += sep + toml_number(c.have_bounds ? c.lo[d] : box.lo[d]);
    hi += sep + toml_number(c.have_bounds ? c.hi[d] : box.hi[d]);
    Boundary b = box.boundary[d];
    if (c.have_pbc && c.periodic[d]) b = Boundary::Periodic;
    if (c.have_pbc && !c.periodic[d] && b == Boundary::Periodic) b = Boundary::Open;
    boundary += std::string(sep) + "\"" + to_string(b) + "\"";
  }
  return "the file's box does not match the scenario's [box]:" + diff +
         "\nThe [box] that matches the file:\n  [box]\n  lo = [" + lo + "]\n  hi = [" + hi +
         "]\n  boundary = [" + boundary +
         "]\nor set check_box = false to put the particles into the scenario's box as they are";
}

}  // namespace pardyn::plugins::text
