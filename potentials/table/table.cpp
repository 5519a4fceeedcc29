// SPDX-License-Identifier: BSD-3-Clause
// type = "table": a pair law from LAMMPS `pair_style table` files (table.hpp: the evaluator;
// table_file.hpp: the file). The plugin reads and checks the sections the scenario names, builds
// each type pair's grid in r^2, and runs the framework's traversals with the evaluator pointing at
// the data where the particles live: host memory on the CPU, a device copy (BackendBuffer, made at
// the first GPU evaluation) on the GPU.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <vector>

#include "pardyn/backend_buffer.hpp"
#include "pardyn/pair_potential.hpp"
#include "pardyn/plugin_export.hpp"
#include "table.hpp"
#include "table_file.hpp"

namespace pardyn::potentials {

// The evaluator is a CUDA kernel argument: with the traversal's others (the cell list's, 1 KB) the
// arguments may take at most 4 KB before CUDA 12.1.
static_assert(sizeof(Table::Evaluator<double>) <= 3 * 1024, "keep Table::Evaluator small");

namespace {

// A warning on standard error, once per process (the scenario's checks and the run each make the
// law).
void warn(const std::string& text) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mutex);
  if (said.insert(text).second) std::fprintf(stderr, "pardyn: warning: %s\n", text.c_str());
}

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

// The forces of a section against its energies: between two neighbouring points the energy's
// difference quotient -(e_1 - e_0)/(r_1 - r_0) and the mean of the two forces differ by at most
// about dr^2/12 |F''| in a consistent table (the trapezoidal rule), F'' estimated from the forces'
// second differences. What exceeds twice that, relative to the force there, is the mismatch: more
// than 10 % is an error (a sign, a column or a unit wrong, or a jump in the energy), more than 1 %
// a warning.
void check_continuity(const table_file::Section& s, double rcut, const std::string& context,
                      bool quiet) {
  const std::size_t n = s.r.size();
  double fmax = 0;
  for (std::size_t i = 0; i < n && s.r[i] <= rcut; ++i) fmax = std::max(fmax, std::fabs(s.f[i]));
  // |F''| at point k from its neighbours (0 at the ends).
  const auto curvature = [&](std::size_t k) {
    if (k == 0 || k + 1 >= n) return 0.0;
    const double h1 = s.r[k] - s.r[k - 1], h2 = s.r[k + 1] - s.r[k];
    return std::fabs(2 * ((s.f[k + 1] - s.f[k]) / h2 - (s.f[k] - s.f[k - 1]) / h1) / (h1 + h2));
  };
  double worst = 0;
  std::size_t at = 0;
  double fd_at = 0, mean_at = 0;
  for (std::size_t i = 0; i + 1 < n && s.r[i] < rcut; ++i) {
    const double dr = s.r[i + 1] - s.r[i];
    const double fd = -(s.e[i + 1] - s.e[i]) / dr;
    const double mean = 0.5 * (s.f[i] + s.f[i + 1]);
    const double trapezoid = dr * dr / 12 * std::max(curvature(i), curvature(i + 1));
    const double scale = std::max({std::fabs(fd), std::fabs(mean), 1e-6 * fmax, 1e-300});
    const double rel = std::max(0.0, std::fabs(fd - mean) - 2 * trapezoid) / scale;
    // The first interval beyond the error's threshold, else the worst one.
    if (rel > worst && worst <= 0.1) {
      worst = rel;
      at = i;
      fd_at = fd;
      mean_at = mean;
    }
  }
  if (worst <= 0.01) return;
  const std::string where = s.path + ":" + std::to_string(s.lines[at]) + "-" +
                            std::to_string(s.lines[at + 1]) + ": between r = " + fmt(s.r[at]) +
                            " and " + fmt(s.r[at + 1]) + " the energy's slope gives the force " +
                            "-dE/dr = " + fmt(fd_at) + " but the table's forces average " +
                            fmt(mean_at) + " (" + fmt(100 * worst) + " % apart)";
  if (worst > 0.1)
    throw Error(where +
                ": the force column must be F = -dE/dr in the energy's units per length (not F/r, "
                "not dE/dr); check its sign and units, or give more points if the law is that "
                "steep (" +
                context + ")");
  if (!quiet)
    warn(where + "; check the table there: the force is not quite the energy's slope (" + context +
         ")");
}

// What the scenario asks: a section (keyword) and a cut-off for each pair of types.
struct Wanted {
  std::string keyword;
  double rcut;
  bool operator<(const Wanted& o) const {
    return keyword != o.keyword ? keyword < o.keyword : rcut < o.rcut;
  }
};

// The (section, cut-off) of each pair of types: `keyword` and `rcut` for all, `pairs` entries for
// some, and every type beyond the last one named as that one (as lennard_jones).
struct PairSections {
  Wanted w[Table::kMaxTypes][Table::kMaxTypes];
};
PairSections pair_sections(const ParamSet& p, const std::string& context) {
  Wanted base{p.string("keyword"), p.real("rcut")};
  PairSections out;
  auto& per = out.w;
  for (auto& row : per)
    for (auto& w : row) w = base;
  for (const auto& line : p.strings("pairs")) {
    std::istringstream in(line);
    int i = -1, j = -1;
    std::string kw, rest;
    double rc = base.rcut;
    const auto bad = [&](const std::string& why) {
      return Error(context + ": pairs entry \"" + line + "\" " + why +
                   "; write \"i j keyword\" or \"i j keyword rcut\", e.g. \"0 1 LJ01 2.5\"");
    };
    if (!(in >> i >> j >> kw)) throw bad("is not two types and a keyword");
    if (in >> rest) {
      std::istringstream num(rest);
      if (!(num >> rc) || !(rc > 0)) throw bad("has a cut-off that is not a number > 0");
      if (in >> rest) throw bad("has more than four fields");
    }
    if (i < 0 || j < 0 || i >= Table::kMaxTypes || j >= Table::kMaxTypes)
      throw bad("names a type outside 0.." + std::to_string(Table::kMaxTypes - 1));
    // The pair (i, j), and every type beyond the last one named, as lennard_jones.
    per[i][j] = per[j][i] = Wanted{kw, rc};
  }
  int last = 0;
  for (const auto& line : p.strings("pairs")) {
    std::istringstream in(line);
    int i = 0, j = 0;
    in >> i >> j;
    last = std::max({last, i, j});
  }
  for (int i = 0; i < Table::kMaxTypes; ++i)
    for (int j = 0; j < Table::kMaxTypes; ++j)
      if (i > last || j > last) per[i][j] = per[std::min(i, last)][std::min(j, last)];
  return out;
}

// Section `s` put onto n points evenly spaced in r^2 from its first r to `rc` (shifted or not),
// as interval coefficients appended to `data`: the grid that reads them.
Table::Grid put_on_grid(const table_file::Section& s, double rc, int n, bool shift, bool spline,
                        const std::string& head, const std::string& context, bool quiet,
                        std::vector<double>& data) {
  const double rlo = s.r.front();
  const table_file::Curve curve(s);
  // The grid's points: s_k = rlo^2 + k h, k = 0..n-1, the last at rc^2.
  const double s0 = rlo * rlo, h = (rc * rc - s0) / (n - 1);
  std::vector<double> e(static_cast<std::size_t>(n)), fr(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) {
    const double sk = k == n - 1 ? rc * rc : s0 + h * k;
    const double r = k == 0 ? rlo : k == n - 1 ? rc : std::sqrt(sk);
    double f;
    curve.at(r, e[std::size_t(k)], f);
    fr[std::size_t(k)] = f / r;
  }
  if (shift) {
    const double at_rc = e.back();
    for (double& v : e) v -= at_rc;
  } else {
    double emax = 0;
    for (double v : e) emax = std::max(emax, std::fabs(v));
    if (std::fabs(e.back()) > 1e-6 * emax && !quiet)
      warn(head + ": the energy at the cut-off r = " + fmt(rc) + " is " + fmt(e.back()) +
           ", not 0: it jumps by that much when a pair crosses the cut-off; set shift = "
           "true to subtract it (" +
           context + ")");
  }
  Table::Grid g;
  g.s0 = s0;
  g.inv_h = 1 / h;
  g.rc2 = rc * rc;
  g.offset = int(data.size());
  g.last = n - 2;
  // One record per interval, the force's numbers first (table.hpp). F1 and F2 are rounded to float
  // (the GPU reads them in float from Table::Force16 in a double run, and both backends use the same
  // numbers): a force error of at most 2^-24 (|F1| + |F2|), far below the interpolation's
  // (docs/potentials.md#table).
  const auto to_float = [&](double v) {
    const double r = double(float(v));
    if (!std::isfinite(r))
      throw Error(head + ": the force changes by " + fmt(v) +
                  " over one interval of the grid, beyond float's range; give a larger n or a "
                  "table that starts at a larger r (" +
                  context + ")");
    return r;
  };
  for (int k = 0; k + 1 < n; ++k) {
    const double e0 = e[std::size_t(k)], e1 = e[std::size_t(k) + 1];
    const double f0 = fr[std::size_t(k)], f1 = fr[std::size_t(k) + 1];
    if (spline) {
      // Hermite in u = (s - s_k)/h, slopes dE/du = h dE/ds = -h (F/r)/2: E = e0 + m0 u + c2 u^2 +
      // c3 u^3, and F/r = -2/h dE/du = f0 + F1 u + F2 u^2.
      const double m0 = -0.5 * h * f0, m1 = -0.5 * h * f1;
      const double c2 = 3 * (e1 - e0) - 2 * m0 - m1, c3 = 2 * (e0 - e1) + m0 + m1;
      data.insert(data.end(), {f0, to_float(-4 / h * c2), to_float(-6 / h * c3), e0});
    } else {
      data.insert(data.end(), {f0, to_float(f1 - f0), e1 - e0, e0});
    }
  }
  return g;
}

// n numbers of type T on the host, the first at a 64-byte boundary.
template <class T>
class Aligned {
 public:
  explicit Aligned(std::size_t n) : store_(n + 64 / sizeof(T), T(0)) {
    // std::vector's memory is aligned to at least its element's size: the step is whole numbers.
    begin_ = (64 - reinterpret_cast<std::uintptr_t>(store_.data()) % 64) % 64 / sizeof(T);
  }
  T* data() { return store_.data() + begin_; }

 private:
  std::vector<T> store_;
  std::size_t begin_ = 0;
};

// The intervals' numbers in one precision as each backend reads them (table.hpp), from the records
// put_on_grid writes: for the CPU five columns (F0, F1, F2, E0, E1; a column's length a multiple of
// 64 bytes), for the GPU the records themselves (no record, 16 or 32 bytes, straddles two cache
// lines), copied to a device's memory once (cudaMalloc aligns to 256 bytes).
template <class T>
class Records {
 public:
  Records(const std::vector<double>& v, bool spline)
      : n_(v.size()),
        rows_(v.size() / 4),
        stride_((rows_ + 15) / 16 * 16),
        records_(n_),
        columns_(5 * stride_) {
    std::copy(v.begin(), v.end(), records_.data());
    T* c = columns_.data();
    for (std::size_t i = 0; i < rows_; ++i) {
      const double* r = &v[4 * i];
      const double f2 = spline ? r[2] : 0, e1 = spline ? 0 : r[2];
      const double col[5] = {r[0], r[1], f2, r[3], e1};
      for (std::size_t k = 0; k < 5; ++k) c[k * stride_ + i] = T(col[k]);
    }
  }
  const T* host() { return columns_.data(); }
  unsigned stride() const { return unsigned(stride_); }
  const T* device(MemoryResource& m) {
    if (dev_.memory() != &m) m.copy_from_host(dev_.get(m, n_), records_.data(), n_ * sizeof(T));
    return dev_.data();
  }

 private:
  std::size_t n_, rows_, stride_;
  Aligned<T> records_, columns_;
  BackendBuffer<T> dev_;
};

class TablePotential final : public Potential {
 public:
  TablePotential(const ParamSet& p, const RunInfo& run) {
    const std::string context = p.context.empty() ? "table" : p.context;
    const bool quiet = run.quiet || run.rank != 0;
    std::filesystem::path file(p.string("file"));
    if (p.string("file").empty()) throw Error(context + ": file is empty; give a table file");
    if (file.is_relative() && !p.base_dir.empty()) file = std::filesystem::path(p.base_dir) / file;
    const std::string shown = file.string();
    const std::string style = p.string("style");
    const bool shift = p.boolean("shift");
    const int n_given = int(p.integer("n"));
    if (n_given == 1)
      throw Error(context + ": n = 1 is no grid; give n >= 2 points (or 0: the section's N)");
    params_.spline = style == "spline";

    // The sections each type pair uses.
    const PairSections per = pair_sections(p, context);
    // Each distinct (section, cut-off) once: read, checked, put onto its grid.
    std::map<Wanted, Table::Grid> grids;
    std::map<std::string, table_file::Section> sections;
    std::vector<double> data;
    for (const auto& row : per.w)
      for (const auto& w : row) {
        if (grids.count(w)) continue;
        std::string kw = w.keyword;
        auto it = sections.find(kw);
        if (it == sections.end())
          it = sections.emplace(kw, table_file::read(file.string(), shown, kw, context)).first;
        const table_file::Section& s = it->second;
        const double rlo = s.r.front(), rhi = s.r.back();
        const double rc = w.rcut > 0 ? w.rcut : rhi;
        const std::string head =
            s.path + ":" + std::to_string(s.line) + ": section '" + s.keyword + "'";
        if (rc > rhi * (1 + 1e-12))
          throw Error(head + " ends at r = " + fmt(rhi) + " but the cut-off is " + fmt(rc) +
                      "; give rcut <= " + fmt(rhi) + " or a table that reaches the cut-off (" +
                      context + ")");
        if (!(rc > rlo))
          throw Error(head + " starts at r = " + fmt(rlo) + ", at or beyond the cut-off " +
                      fmt(rc) + " (" + context + ")");
        check_continuity(s, rc, context, quiet);
        const Table::Grid g = put_on_grid(s, rc, n_given > 0 ? n_given : s.n, shift, params_.spline,
                                          head, context, quiet, data);
        if (data.size() > std::size_t(1) << 30)
          throw Error(context + ": the tables need more than 2^30 numbers; give a smaller n");
        grids.emplace(w, g);
      }
    params_.uniform = grids.size() == 1;
    for (int i = 0; i < Table::kMaxTypes; ++i)
      for (int j = 0; j < Table::kMaxTypes; ++j)
        params_.grid[i * Table::kMaxTypes + j] = grids.at(per.w[i][j]);
    records_d_ = std::make_unique<Records<double>>(data, params_.spline);
    records_f_ = std::make_unique<Records<float>>(data, params_.spline);
    force16_.reserve(data.size() / 4);
    for (std::size_t k = 0; k + 3 < data.size(); k += 4)
      force16_.push_back(
          Table::Force16{data[k], float(data[k + 1]), params_.spline ? float(data[k + 2]) : 0.0f});
    params_.data_d = records_d_->host();
    params_.data_f = records_f_->host();
    params_.stride = records_d_->stride();
    cpu_ = std::make_unique<PairPotential<Table>>(params_);
  }

  void compute(ParticleStore& s, const Neighbourhood& nb, const ForceRequest& req) override {
    if (s.backend() != Backend::Cuda) return cpu_->compute(s, nb, req);
#if defined(PARDYN_PLUGIN_HAS_CUDA)
    if (!supports(nb.kind)) throw Error(unsupported_reason(nb.kind));
    Table::Params dev = params_;
    dev.stride = 0;  // records
    if (s.precision() == Precision::Float) dev.data_f = records_f_->device(s.memory());
    else {
      dev.data_d = records_d_->device(s.memory());
      if (force16_dev_.memory() != &s.memory()) force16_dev_.upload(s.memory(), force16_);
      dev.force_d = force16_dev_.data();
    }
    cuda::pair_compute<Table>(dev, s, nb, req);
#else
    throw Error("potential 'table' was built without CUDA support; use backend = \"cpu\"");
#endif
  }
  double cutoff() const override { return cpu_->cutoff(); }
  Reach reach() const override { return cpu_->reach(); }
  bool supports(NeighbourhoodKind k) const override { return cpu_->supports(k); }
  std::string unsupported_reason(NeighbourhoodKind k) const override {
    return cpu_->unsupported_reason(k);
  }

 private:
  Table::Params params_;
  std::unique_ptr<Records<double>> records_d_;
  std::unique_ptr<Records<float>> records_f_;
  std::vector<Table::Force16> force16_;  // double on the GPU (Table::Force16)
  BackendBuffer<Table::Force16> force16_dev_;
  std::unique_ptr<PairPotential<Table>> cpu_;
};

}  // namespace

FactoryInfo Table::info() {
  FactoryInfo f;
  f.name = "table";
  f.summary = "a pair law from a table of energies and forces (LAMMPS pair_style table files)";
  f.doc =
      "Reads the section `keyword` of a LAMMPS pair_style table file (`file`, relative to the\n"
      "scenario's folder):\n"
      "  KEYWORD\n"
      "  N n [R rlo rhi | RSQ rlo rhi] [FPRIME fplo fphi]\n"
      "  1 r e f          (index, distance, energy U, force F = -dU/dr; r increasing)\n"
      "  ...\n"
      "'#' starts a comment. With R (RSQ) the distances are rlo..rhi evenly spaced in r (r^2)\n"
      "and the listed ones are not used. The table is interpolated (energy: cubic Hermite in r\n"
      "with slopes -F; force: cubic spline, end slopes FPRIME) onto n points evenly spaced in\n"
      "r^2 from the table's first r to rcut, between which the run interpolates:\n"
      "  style = \"spline\" (default): U cubic in r^2 through the energies with the forces as\n"
      "    slopes (cubic Hermite); F = -dU/dr exactly, so the energy is conserved; errors\n"
      "    O(h^4) in U and O(h^3) in F (h the grid's step in r^2).\n"
      "  style = \"linear\": U and F/r each linear in r^2 (LAMMPS's linear); errors O(h^2).\n"
      "Pairs closer than the table's first r use the first interval's polynomial (extrapolated):\n"
      "start the table where no pair comes. rcut (default: the table's last r) must lie inside\n"
      "the table. shift = true subtracts U(rcut). Per pair of types: pairs = [\"i j KEYWORD\n"
      "[rcut]\", ...] (the same file; types beyond the last one named use its row, as\n"
      "lennard_jones). The file is checked: malformed lines, distances that do not increase and\n"
      "a missing section are errors with the file's line; forces more than 10 % from the\n"
      "energies' slope (beyond the trapezoidal rule's error) are an error, more than 1 % a\n"
      "warning; an energy not 0 at rcut without shift is a warning. scripts/make-table writes\n"
      "such files (docs/potentials.md).\n"
      "Example: file = \"lj.table\", keyword = \"LJ\", rcut = 2.5.";
  f.dims = kDimAll;
  f.schema.path("file", std::nullopt, "the LAMMPS pair_style table file")
      .string("keyword", std::string(""),
              "the section of the file for every pair of types (\"\": the file must have one)")
      .choice("style", std::string("spline"), {"spline", "linear"},
              "interpolation between the grid's points in r^2")
      .integer("n", 0,
               "points of the grid in r^2 between the table's first r and rcut (0: the section's "
               "N)",
               0, 1e8)
      .real("rcut", 0.0, "length", "cut-off distance (0: the section's last r)", 0.0)
      .boolean("shift", false, "subtract U(rcut) so that the energy is continuous at the cut-off")
      .strings("pairs", std::vector<std::string>{},
               "other sections for some pairs of types: \"i j keyword [rcut]\"");
  return f;
}

namespace {

void register_table(Registrar& r) {
  FactoryInfo info = Table::info();
  info.kind = PluginKind::Potential;
#if defined(PARDYN_PLUGIN_HAS_CUDA)
  info.backends = kCpu | kCuda;
#else
  info.backends = kCpu;
#endif
  r.add(std::move(info), Factory<Potential>([](const ParamSet& ps, const RunInfo& run) {
          return std::unique_ptr<Potential>(new TablePotential(ps, run));
        }));
}

}  // namespace
}  // namespace pardyn::potentials

PARDYN_PLUGIN(pardyn::potentials::register_table)
