// SPDX-License-Identifier: BSD-3-Clause
// rdf: the radial distribution function g(r), per unordered pair of particle types and for all
// particles together, averaged over the analyses from step `start` on (every `interval` steps).
//
// Each analysis counts the pairs closer than r_max on the run's backend (rdf.hpp: a cell list and
// a stencil walk per particle, counted by the framework's histogram loop; only the histogram comes
// to the host) and adds them to running sums. The reference (rdf_geometry.hpp) is the number of pairs an ideal gas
// of the same particle numbers would put into each bin of this box, so that
//   g_ab(bin) = sum over analyses of pairs(a, b) in the bin
//               / (sum over analyses of P_ab x P(separation in the bin)),
//   P_ab = N_a N_b (a != b), N_a (N_a - 1) / 2 (a == b), N (N - 1) / 2 for all particles.
// The CSV (`file`) is rewritten atomically after every analysis: it always holds the running
// average. Its state (the sums) is saved beside it (`file`.state) before every checkpoint, so a
// resumed run continues the average.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "../../common/analysis_output.hpp"
#include "pardyn/backend_choice.hpp"
#include "pardyn/cell_list.hpp"
#include "pardyn/output.hpp"
#include "pardyn/plugin_export.hpp"
#include "pardyn/reduce.hpp"
#include "rdf.hpp"
#include "rdf_geometry.hpp"

namespace pardyn::plugins::rdf {

void count_pairs(const ParticleStore& store, const CellList& cl, const Box& box,
                 const CountSetup& s, std::vector<std::uint64_t>& hist) {
  const std::size_t entries = std::size_t(s.columns()) * std::size_t(s.bins);
  if (cl.n < 2 || entries == 0) return;
  visit(store, [&](auto view) {
    using Real = typename decltype(view)::real;
    constexpr int Dim = decltype(view)::dim;
    const PeriodicImage<Real> img = PeriodicImage<Real>::make(box);
    const Real rmax2 = Real(s.r_max * s.r_max), inv_dr = Real(double(s.bins) / s.r_max);
    // The CPU walks the cells (one stencil per cell), the GPU the slots (one thread each).
    if (store.backend() == Backend::Cpu)
      cpu::histogram_over_index(
          cl.ncells, CountPairs<Dim, Real, true>{cl, img, rmax2, inv_dr, s.bins, s.types}, entries,
          hist.data());
    else
      histogram_over_index(store.backend(), cl.n,
                           CountPairs<Dim, Real, false>{cl, img, rmax2, inv_dr, s.bins, s.types},
                           entries, hist.data());
  });
}

namespace {

struct Settings {
  double r_max = 1;
  int bins = 100;
  std::uint64_t interval = 100;
  std::uint64_t start = 0;
  std::string file = "rdf.csv";
};

// The running sums of the average, and a copy of them as saved for a resumed run.
struct Sums {
  std::uint64_t step = 0;             // the last analysis added
  std::uint64_t frames = 0;           // analyses added
  int types = 0;                      // 0 until the first analysis
  double pairs_all = 0;               // sum over analyses of N (N - 1) / 2
  std::vector<double> pairs;          // [column]: sum of P_ab
  std::vector<std::uint64_t> counts;  // [column * bins + bin]
};

// "rdf.csv" -> "rdf": the prefix of the thermo columns.
std::string stem_of(const std::string& file) { return std::filesystem::path(file).stem().string(); }

std::string fmt(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.10g", v);
  return b;
}

class Rdf final : public Observer {
 public:
  Rdf(const Settings& s, const RunInfo& run) : s_(s), dim_(run.dim), stem_(stem_of(s.file)) {
    IdealBox ib;
    ib.dim = run.dim;
    for (int d = 0; d < run.dim; ++d) {
      ib.L[d] = run.box.length(d);
      ib.periodic[d] = run.box.boundary[d] == Boundary::Periodic;
    }
    IdealReference ref(ib);
    const double dr = s_.r_max / s_.bins;
    shell_.resize(s_.bins);
    for (int b = 0; b < s_.bins; ++b) shell_[b] = ref.shell(b * dr, (b + 1) * dr);
  }

  std::uint64_t interval() const override { return s_.interval; }
  std::vector<std::string> columns() const override {
    return {stem_ + "_peak_r", stem_ + "_peak_g"};
  }
  std::vector<std::string> files() const override { return {s_.file, s_.file + ".state"}; }

  void begin(const RunInfo& run) override {
    path_ = analysis_file_path(run, s_.file);
    if (!path_.empty() && run.resume) restore(run.resume_step);
  }

  void analyse(StepContext& ctx, Thermo& t, std::size_t first) override {
    const std::uint64_t step = t.step;
    if (step >= s_.start && step % s_.interval == 0 && !(sums_.frames && step <= sums_.step)) {
      add_analysis(ctx);
      sums_.step = step;
      write_csv();
    }
    if (first + 2 <= t.extra.size()) {
      double r = std::nan(""), g = std::nan("");
      peak(r, g);
      t.extra[first] = r;
      t.extra[first + 1] = g;
    }
  }

  void observe(const ObserveContext&) override {}
  void sync() override { save_state(); }
  void end() override { save_state(); }

 private:
  void add_analysis(StepContext& ctx) {
    ParticleStore& s = ctx.store();
    // The particle numbers per type, once per particle set (types never change during a run).
    if (!have_types_ || generation_ != s.generation()) {
      HostParticles hp(s.dim());
      s.download(hp, ParticleStore::kType);
      int types = 1;
      for (const std::int32_t ty : hp.type) {
        if (ty < 0) throw Error("rdf: particle type " + std::to_string(ty) + " is negative");
        types = std::max(types, int(ty) + 1);
      }
      if (types > kMaxTypes)
        throw Error("rdf: the particles have types up to " + std::to_string(types - 1) +
                    "; the rdf analysis handles types 0 to " + std::to_string(kMaxTypes - 1) +
                    " (one column per pair of types)");
      if (sums_.types && sums_.types != types)
        throw Error("rdf: the particles now have " + std::to_string(types) +
                    " types, but the average so far (" +
                    (restored_ ? "restored from " + path_ + ".state" : std::string("this run")) +
                    ") has " + std::to_string(sums_.types) + "; remove " + path_ +
                    ".state to start the average afresh");
      const std::size_t entries = std::size_t(types) * (types + 1) / 2 * std::size_t(s_.bins);
      if (entries > kMaxEntries)
        throw Error("rdf: " + std::to_string(types) + " particle types (" +
                    std::to_string(types * (types + 1) / 2) + " type pairs) times " +
                    std::to_string(s_.bins) + " bins make a histogram of " +
                    std::to_string(entries) + " counts; at most " + std::to_string(kMaxEntries) +
                    " are allowed: use fewer bins");
      n_type_.assign(types, 0.0);
      for (const std::int32_t ty : hp.type) n_type_[ty] += 1;
      n_ = double(hp.type.size());
      setup_.r_max = s_.r_max;
      setup_.bins = s_.bins;
      setup_.types = types;
      if (!sums_.types) {
        sums_.types = types;
        sums_.pairs.assign(setup_.columns(), 0.0);
        sums_.counts.assign(std::size_t(setup_.columns()) * s_.bins, 0);
      }
      have_types_ = true;
      generation_ = s.generation();
    }
    CellListOptions o;
    o.cutoff = s_.r_max;
    o.skin = 0;
    o.neighbour_list = false;
    builder_.update(s, ctx.run().box, o);
    count_pairs(s, builder_.list(), ctx.run().box, setup_, sums_.counts);
    const int T = setup_.types;
    for (int a = 0; a < T; ++a)
      for (int b = a; b < T; ++b)
        sums_.pairs[pair_column(a, b, T)] +=
            a == b ? 0.5 * n_type_[a] * (n_type_[a] - 1) : n_type_[a] * n_type_[b];
    sums_.pairs_all += 0.5 * n_ * (n_ - 1);
    ++sums_.frames;
  }

  // g of all particles in bin b, and of column c.
  double g_all(int b) const {
    std::uint64_t c = 0;
    for (int col = 0; col < int(sums_.pairs.size()); ++col)
      c += sums_.counts[std::size_t(col) * s_.bins + b];
    const double ideal = sums_.pairs_all * shell_[b];
    return ideal > 0 ? double(c) / ideal : 0.0;
  }
  double g_col(int col, int b) const {
    const double ideal = sums_.pairs[col] * shell_[b];
    return ideal > 0 ? double(sums_.counts[std::size_t(col) * s_.bins + b]) / ideal : 0.0;
  }

  // The highest bin of g (all particles), refined by the parabola through it and its neighbours.
  void peak(double& r, double& g) const {
    if (!sums_.frames) return;
    const double dr = s_.r_max / s_.bins;
    int best = 0;
    double gb = g_all(0);
    for (int b = 1; b < s_.bins; ++b) {
      const double v = g_all(b);
      if (v > gb) gb = v, best = b;
    }
    r = (best + 0.5) * dr;
    g = gb;
    if (best == 0 || best == s_.bins - 1) return;
    const double gm = g_all(best - 1), gp = g_all(best + 1), den = gm - 2 * gb + gp;
    if (!(den < 0)) return;
    const double delta = 0.5 * (gm - gp) / den;  // in (-1/2, 1/2) bins for a strict maximum
    r += delta * dr;
    g = gb - 0.25 * (gm - gp) * delta;
  }

  void write_csv() const {
    if (path_.empty() || !sums_.frames) return;
    const int T = sums_.types;
    std::string out = "r_lo,r_hi,r,g";
    for (int a = 0; a < T; ++a)
      for (int b = a; b < T; ++b) out += ",g_" + std::to_string(a) + "_" + std::to_string(b);
    out += "\n";
    const double dr = s_.r_max / s_.bins;
    for (int b = 0; b < s_.bins; ++b) {
      out +=
          fmt(b * dr) + "," + fmt((b + 1) * dr) + "," + fmt((b + 0.5) * dr) + "," + fmt(g_all(b));
      for (int col = 0; col < int(sums_.pairs.size()); ++col) out += "," + fmt(g_col(col, b));
      out += "\n";
    }
    write_file_atomic(path_, out);
  }

  // --- the state for resumed runs: the sums at the last few checkpoints ---------------------------
  std::string state_header() const {
    char b[160];
    std::snprintf(b, sizeof b, "pardyn-rdf-state 1 dim %d bins %d r_max %.17g", dim_, s_.bins,
                  s_.r_max);
    return b;
  }

  void save_state() {
    if (path_.empty()) return;
    if (saved_.empty() || saved_.back().step != sums_.step ||
        saved_.back().frames != sums_.frames) {
      saved_.push_back(sums_);
      while (saved_.size() > kKeptStates) saved_.pop_front();
    }
    std::ostringstream o;
    o << state_header() << "\n";
    char b[40];
    for (const Sums& x : saved_) {
      std::snprintf(b, sizeof b, "%.17g", x.pairs_all);
      o << "snapshot " << x.step << ' ' << x.frames << ' ' << x.types << ' ' << b << "\n";
      for (double v : x.pairs) {
        std::snprintf(b, sizeof b, "%.17g", v);
        o << b << ' ';
      }
      o << "\n";
      for (std::uint64_t v : x.counts) o << v << ' ';
      o << "\n";
    }
    write_file_atomic(path_ + ".state", o.str());
  }

  // A resumed run continues from the sums saved at the largest step <= the checkpoint's (the
  // analyses after it belong to the run that died). Without any, the average starts afresh.
  void restore(std::uint64_t resume_step) {
    const std::string sp = path_ + ".state";
    std::ifstream in(sp);
    if (!in) return;
    std::string head;
    std::getline(in, head);
    if (head != state_header())
      throw Error("rdf: " + sp + " was written with other settings (\"" + head +
                  "\", this run: \"" + state_header() + "\"); remove it (and " + path_ +
                  ") to start the average afresh, or resume "
                  "with the settings of the run that wrote it");
    std::deque<Sums> all;
    std::string word;
    while (in >> word) {
      if (word != "snapshot") throw Error("rdf: " + sp + " is damaged; remove it to start afresh");
      Sums x;
      if (!(in >> x.step >> x.frames >> x.types >> x.pairs_all) || x.types < 0 ||
          x.types > kMaxTypes)
        throw Error("rdf: " + sp + " is damaged; remove it to start afresh");
      const int cols = x.types * (x.types + 1) / 2;
      x.pairs.resize(cols);
      x.counts.resize(std::size_t(cols) * s_.bins);
      for (double& v : x.pairs) in >> v;
      for (std::uint64_t& v : x.counts) in >> v;
      if (!in) throw Error("rdf: " + sp + " is damaged; remove it to start afresh");
      all.push_back(std::move(x));
    }
    const Sums* best = nullptr;
    for (const Sums& x : all)
      if (x.step <= resume_step && (!best || x.step >= best->step)) best = &x;
    if (!best) return;
    sums_ = *best;
    restored_ = true;
    // Keep the snapshots up to it; the later ones are the dead run's.
    for (const Sums& x : all)
      if (x.step <= resume_step) saved_.push_back(x);
    write_csv();
  }

  static constexpr int kMaxTypes = 64;
  static constexpr std::size_t kMaxEntries = std::size_t(1) << 24;
  static constexpr std::size_t kKeptStates = 8;

  Settings s_;
  int dim_;
  std::string stem_;
  std::vector<double> shell_;  // ideal-gas probability of each bin
  std::string path_;
  CountSetup setup_;
  Sums sums_;
  std::deque<Sums> saved_;
  bool restored_ = false;
  bool have_types_ = false;
  std::uint64_t generation_ = 0;
  std::vector<double> n_type_;
  double n_ = 0;
  CellListBuilder builder_;
};

const char* const kDoc = R"(Radial distribution function g(r) (M. P. Allen and D. J. Tildesley,
Computer Simulation of Liquids, Oxford University Press): for every unordered pair of particle
types (a, b) and for all particles together, on `bins` bins of width r_max/bins on [0, r_max),
averaged over the analyses at the steps that are multiples of `interval`, from step `start` on.
Each analysis counts the pairs closer than r_max on the run's backend (a cell list; on the GPU a
histogram kernel with atomics, only the histogram is copied to the host) and adds them to running
sums; then
  g_ab(bin) = sum of pair counts (a, b) in the bin / (sum of P_ab) / p(bin)
  P_ab = N_a N_b (a != b),  N_a (N_a - 1)/2 (a == b),  N (N - 1)/2 for all particles
where p(bin) is the probability that two independent particles, uniform in the box, are that far
apart (minimum image on periodic axes):
  p = (1/V) int_bin r^(dim-1) A(r) dr,   A(r) = int over directions n of prod_d w_d dOmega,
  w_d = 1 on periodic axes, max(0, 1 - r |n_d| / L_d) on walled axes.
All periodic: p = pi (r2^2 - r1^2)/V (2D), 4/3 pi (r2^3 - r1^3)/V (3D), the ideal-gas shell.
Walls: the factor (1 - |Delta_d|/L_d) is the share of particles that have a partner at Delta_d
inside the box, so g = 1 for an ideal gas in a walled box at every r. Below the shortest walled
side A(r) has a closed form (3D: 4 pi - 2 pi r sum 1/L_d + 8/3 r^2 sum_{d<e} 1/(L_d L_e)
- r^3/(L_x L_y L_z), walled axes only); beyond it A is integrated by Gauss-Legendre quadrature
over the directions (48 nodes per angle); p over each bin by 4-node Gauss-Legendre.
Periodic axes need r_max <= half the shortest periodic side (the minimum image is unique);
open axes are refused (no volume to normalise by): use walls or periodic axes.
Writes `file` (default rdf.csv) in the output folder, rewritten atomically after every analysis
(it always holds the running average): columns r_lo, r_hi, r (bin centre), g (all particles),
then g_0_0, g_0_1, ..., g_1_1, ... per type pair. Open it in ParaView with the CSV reader and a
Line Chart View (x: r). Adds to thermo <stem>_peak_r and <stem>_peak_g (rdf_peak_r, rdf_peak_g
for rdf.csv): position and height of the maximum of g (all particles) so far, refined by a
parabola through the highest bin and its neighbours.
Resumed runs (--resume) continue the average: the sums are saved to `file`.state before every
checkpoint. One MPI rank only. Example (docs/analysis.md):
  [[output]]
  type = "rdf"
  r_max = 4.0
  bins = 200
  interval = 100
  start = 5000)";

void register_rdf(Registrar& r) {
  FactoryInfo f;
  f.kind = PluginKind::Observer;
  f.name = "rdf";
  f.summary = "radial distribution function g(r) per type pair, averaged over the run (rdf.csv)";
  f.doc = kDoc;
  f.backends = kBuiltBackends;
  f.schema
      .real("r_max", std::nullopt, "length",
            "largest separation counted; at most half the shortest periodic side", 0.0,
            std::nullopt, true)
      .integer("bins", 100, "number of bins on [0, r_max)", 1, 1000000)
      .add(steps_param("interval", 100, 1, "analyse at the steps that are multiples of this"))
      .add(steps_param("start", 0, 0,
                       "first step averaged (earlier analyses are skipped: equilibration)"))
      .string("file", "rdf.csv",
              "the CSV file, relative to the run's output folder; its state goes to <file>.state");
  r.add(
      std::move(f), Factory<Observer>([](const ParamSet& p, const RunInfo& run) {
        const std::string who = output_name("rdf", p);
        check_analysis_output(who, "it pairs only the particles of one rank", run, p.string("file"),
                              "rdf.csv");
        Settings s;
        s.r_max = p.real("r_max");
        s.bins = int(p.integer("bins"));
        s.interval = std::uint64_t(p.integer("interval"));
        s.start = std::uint64_t(p.integer("start"));
        s.file = p.string("file");
        double half = std::numeric_limits<double>::infinity();
        for (int d = 0; d < run.dim; ++d) {
          if (run.box.boundary[d] == Boundary::Open)
            throw Error(who + ": axis " + std::to_string(d) +
                        " of the box is open: g(r) is normalised by the particle density of a "
                        "finite box, so every axis must be periodic or walled");
          if (run.box.boundary[d] == Boundary::Periodic)
            half = std::min(half, 0.5 * run.box.length(d));
        }
        if (s.r_max > half)
          throw Error(
              who + ": r_max = " + format_number(s.r_max) +
              " exceeds half the shortest periodic side of the box (" + format_number(half) +
              "): beyond it the minimum image is not unique. Set r_max <= " + format_number(half));
        return std::unique_ptr<Observer>(new Rdf(s, run));
      }));
}

}  // namespace
}  // namespace pardyn::plugins::rdf

PARDYN_PLUGIN(pardyn::plugins::rdf::register_rdf)
