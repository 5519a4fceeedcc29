// SPDX-License-Identifier: BSD-3-Clause
// LAMMPS `pair_style table` files: reading a section (table.cpp), checking it, interpolating it
// onto a grid of r^2, and writing one (the tests and bench_cell_list make tables of LJ with it).
//
// The format (LAMMPS's pair_style table documentation): comment lines start with '#'; blank lines are
// skipped; each section is
//   KEYWORD
//   N n [R rlo rhi | RSQ rlo rhi] [FPRIME fplo fphi]
//   1 r_1 e_1 f_1
//   ...
//   n r_n e_n f_n
// with distances r increasing, e the pair energy and f the force -dE/dr. With R (RSQ) the
// distances are rlo..rhi evenly spaced in r (in r^2) and the listed r are not used; FPRIME gives
// the force's derivative at the two ends (else it is estimated from the first and last two points).
// Host code only.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "pardyn/core.hpp"

namespace pardyn::potentials::table_file {

struct Section {
  std::string keyword, path;
  int line = 0;  // of the keyword
  int n = 0;
  std::vector<double> r, e, f;
  std::vector<int> lines;  // each point's line
  bool fprime = false;
  double fplo = 0, fphi = 0;
};

namespace detail {

inline std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

inline bool number(const std::string& w, double& v) {
  const char* b = w.data() + (!w.empty() && w[0] == '+' ? 1 : 0);
  const auto res = std::from_chars(b, w.data() + w.size(), v);
  return res.ec == std::errc() && res.ptr == w.data() + w.size() && std::isfinite(v);
}

inline std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

}  // namespace detail

// The section `keyword` of the file at `path` (the path as the user gave it, for messages: `shown`);
// an empty keyword: the file's only section. Every mistake is an Error "file:line: what (context)".
// Long: one pass over the file's lines in order (the sections it skips, the keyword, the parameter
// line, the rows), each kind of line with its own file:line message.
inline Section read(const std::string& path, const std::string& shown, const std::string& keyword,
                    const std::string& context) {
  std::ifstream in(path);
  if (!in) throw Error(context + ": cannot open the table file '" + shown + "'");
  int line = 0;
  std::string text;
  const auto fail = [&](int at, const std::string& what) -> Error {
    return Error(shown + ":" + std::to_string(at) + ": " + what + " (" + context + ")");
  };
  // The next line that is not blank or a comment, split into words; false at the end.
  const auto next = [&](std::vector<std::string>& w) {
    while (std::getline(in, text)) {
      ++line;
      const auto hash = text.find('#');
      w = detail::words(hash == std::string::npos ? text : text.substr(0, hash));
      if (!w.empty()) return true;
    }
    return false;
  };
  std::vector<std::string> found;
  std::vector<std::string> w;
  Section kept;  // keyword empty: the first section
  bool have = false;
  while (next(w)) {
    Section s;
    s.keyword = w[0];
    s.path = shown;
    s.line = line;
    const bool wanted = keyword.empty() ? found.empty() && !have : s.keyword == keyword;
    if (!next(w)) throw fail(s.line, "section '" + s.keyword + "' has no 'N n ...' line after it");
    double v = 0;
    if (w[0] != "N" || w.size() < 2 || !detail::number(w[1], v) || v != std::floor(v) || v < 2 ||
        v > 1e8)
      throw fail(line, "expected 'N n [R|RSQ rlo rhi] [FPRIME fplo fphi]' with n >= 2 after '" +
                           s.keyword + "', found '" + text + "'");
    s.n = int(v);
    int grid = 0;  // 1: R, 2: RSQ
    double lo = 0, hi = 0;
    for (std::size_t k = 2; k < w.size();) {
      const auto two = [&](double& a, double& b) {
        if (k + 2 >= w.size() || !detail::number(w[k + 1], a) || !detail::number(w[k + 2], b))
          throw fail(line, "'" + w[k] + "' needs two numbers after it");
        k += 3;
      };
      if (w[k] == "R" || w[k] == "RSQ") {
        grid = w[k] == "R" ? 1 : 2;
        two(lo, hi);
        if (!(lo > 0 && hi > lo)) throw fail(line, "the distances of R/RSQ must be 0 < rlo < rhi");
      } else if (w[k] == "FPRIME") {
        s.fprime = true;
        two(s.fplo, s.fphi);
      } else if (w[k] == "BITMAP") {
        throw fail(line,
                   "BITMAP tables are not supported; write the table with R or RSQ "
                   "(LAMMPS: pair_write ... r or rsq)");
      } else {
        throw fail(line, "unknown word '" + w[k] +
                             "'; the line is 'N n [R|RSQ rlo rhi] "
                             "[FPRIME fplo fphi]'");
      }
    }
    for (int i = 0; i < s.n; ++i) {
      if (!next(w))
        throw fail(line, "section '" + s.keyword + "' ends after " + std::to_string(i) +
                             " of its " + std::to_string(s.n) + " lines (N " + std::to_string(s.n) +
                             ")");
      if (!wanted) continue;
      double idx, r, e, f;
      if (w.size() != 4 || !detail::number(w[0], idx) || !detail::number(w[1], r) ||
          !detail::number(w[2], e) || !detail::number(w[3], f))
        throw fail(line, "expected 'index r energy force' (four numbers), found '" + text + "'");
      if (grid == 1) r = lo + (hi - lo) * i / (s.n - 1);
      if (grid == 2) r = std::sqrt(lo * lo + (hi * hi - lo * lo) * i / (s.n - 1));
      if (!(r > 0)) throw fail(line, "r = " + detail::fmt(r) + " must be > 0");
      if (!s.r.empty() && !(r > s.r.back()))
        throw fail(line, "r = " + detail::fmt(r) + " does not increase (the line before has " +
                             detail::fmt(s.r.back()) + "); the distances must increase");
      s.r.push_back(r);
      s.e.push_back(e);
      s.f.push_back(f);
      s.lines.push_back(line);
    }
    found.push_back(s.keyword);
    if (wanted && !keyword.empty()) return s;
    if (wanted) {
      kept = std::move(s);
      have = true;
    }
  }
  std::string list;
  for (const auto& k : found) list += (list.empty() ? "" : ", ") + k;
  if (keyword.empty() && found.size() == 1) return kept;
  if (keyword.empty())
    throw Error(context + ": the table file '" + shown + "' has " +
                (found.empty() ? std::string("no sections")
                               : "several sections (" + list + "); name one with keyword"));
  throw Error(context + ": the table file '" + shown + "' has no section '" + keyword + "'" +
              (found.empty() ? std::string(" (it has no sections)") : "; its sections: " + list));
}

// Interpolation of a section at any r in [r_0, r_n-1]: the energy by cubic Hermite in r (the
// section's energies with slopes -f), the force by a cubic spline through the section's forces with
// end slopes FPRIME (or the first and last two points' differences). Both give the section's values
// exactly at its points.
class Curve {
 public:
  explicit Curve(const Section& s) : s_(s) {
    const std::size_t n = s.r.size();
    const double lo = s.fprime ? s.fplo : (s.f[1] - s.f[0]) / (s.r[1] - s.r[0]);
    const double hi = s.fprime ? s.fphi : (s.f[n - 1] - s.f[n - 2]) / (s.r[n - 1] - s.r[n - 2]);
    // The clamped spline's second derivatives m: a tridiagonal system solved by elimination.
    m_.assign(n, 0);
    std::vector<double> c(n, 0), d(n, 0);
    const auto h = [&](std::size_t i) { return s.r[i + 1] - s.r[i]; };
    const auto slope = [&](std::size_t i) { return (s.f[i + 1] - s.f[i]) / h(i); };
    // rows: a_i m_{i-1} + b_i m_i + c_i m_{i+1} = d_i
    std::vector<double> a(n, 0), b(n, 0);
    b[0] = h(0) / 3;
    c[0] = h(0) / 6;
    d[0] = slope(0) - lo;
    for (std::size_t i = 1; i + 1 < n; ++i) {
      a[i] = h(i - 1) / 6;
      b[i] = (h(i - 1) + h(i)) / 3;
      c[i] = h(i) / 6;
      d[i] = slope(i) - slope(i - 1);
    }
    a[n - 1] = h(n - 2) / 6;
    b[n - 1] = h(n - 2) / 3;
    d[n - 1] = hi - slope(n - 2);
    for (std::size_t i = 1; i < n; ++i) {
      const double q = a[i] / b[i - 1];
      b[i] -= q * c[i - 1];
      d[i] -= q * d[i - 1];
    }
    m_[n - 1] = d[n - 1] / b[n - 1];
    for (std::size_t i = n - 1; i-- > 0;) m_[i] = (d[i] - c[i] * m_[i + 1]) / b[i];
  }

  // Energy and force at r (clamped to the section's range).
  void at(double r, double& e, double& f) const {
    const auto& R = s_.r;
    r = std::min(std::max(r, R.front()), R.back());
    std::size_t i = std::size_t(std::upper_bound(R.begin(), R.end(), r) - R.begin());
    i = std::min(std::max<std::size_t>(i, 1), R.size() - 1) - 1;
    const double h = R[i + 1] - R[i], t = (r - R[i]) / h;
    const double t2 = t * t, t3 = t2 * t;
    e = (2 * t3 - 3 * t2 + 1) * s_.e[i] + (t3 - 2 * t2 + t) * h * -s_.f[i] +
        (-2 * t3 + 3 * t2) * s_.e[i + 1] + (t3 - t2) * h * -s_.f[i + 1];
    const double A = 1 - t, B = t;
    f = A * s_.f[i] + B * s_.f[i + 1] +
        ((A * A * A - A) * m_[i] + (B * B * B - B) * m_[i + 1]) * h * h / 6;
  }

 private:
  const Section& s_;
  std::vector<double> m_;
};

// Writes a section of n points from rlo to rhi, evenly spaced in r ("R") or r^2 ("RSQ"); law(r, e,
// f) gives the energy and the force -dE/dr.
inline void write(std::ostream& out, const std::string& keyword, int n, const std::string& grid,
                  double rlo, double rhi,
                  const std::function<void(double, double&, double&)>& law) {
  out << keyword << "\nN " << n << " " << grid << " ";
  char b[128];
  std::snprintf(b, sizeof b, "%.17g %.17g\n\n", rlo, rhi);
  out << b;
  for (int i = 0; i < n; ++i) {
    const double r = grid == "R" ? rlo + (rhi - rlo) * i / (n - 1)
                                 : std::sqrt(rlo * rlo + (rhi * rhi - rlo * rlo) * i / (n - 1));
    double e, f;
    law(r, e, f);
    std::snprintf(b, sizeof b, "%d %.17g %.17g %.17g\n", i + 1, r, e, f);
    out << b;
  }
  out << "\n";
}

}  // namespace pardyn::potentials::table_file
