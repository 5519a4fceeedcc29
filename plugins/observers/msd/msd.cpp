// SPDX-License-Identifier: BSD-3-Clause
// msd: mean-square displacement from the positions at the first analysis,
//   msd(t) = (1/N) sum_i |r_i(t) - r_i(0)|^2,
// with unwrapped positions (x + image L on periodic axes: a particle that crossed a periodic face
// keeps its travelled distance), per axis and per particle type. Reported in thermo (column
// `msd`) and in its own CSV, one row per analysis, flushed after each row.
//
// The sums run on the store's backend (msd.hpp: the framework's sum_over_index, which merges in an
// order fixed by the particle count, so the sums repeat to the last bit for any number of threads
// and from run to run on the GPU), with the reference positions in the store's memory; the host
// copy of the whole store is made once, at the first analysis, to record the reference. The reference is saved beside the CSV
// (<file>.reference, written atomically) so that a resumed run measures from the same origin.
#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "../../common/analysis_output.hpp"
#include "../../common/messages.hpp"
#include "msd.hpp"
#include "pardyn/backend_buffer.hpp"
#include "pardyn/backend_choice.hpp"
#include "pardyn/output.hpp"
#include "pardyn/plugin_export.hpp"
#include "pardyn/reduce.hpp"

namespace pardyn::plugins::msd {

namespace {

// The shortest text that reads back to the same double.
void append_number(std::string& line, double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  line.append(buf, r.ptr);
}

// FNV-1a over bytes: detects a damaged reference file.
std::uint64_t checksum(const char* data, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= std::uint8_t(data[i]);
    h *= 1099511628211ull;
  }
  return h;
}

class Msd final : public Observer {
 public:
  Msd(std::uint64_t interval, std::string file, const RunInfo& run)
      : interval_(interval),
        file_(std::move(file)),
        stem_(std::filesystem::path(file_).stem().string()),
        dim_(run.dim),
        comm_(run.ranks > 1 ? run.comm : nullptr) {
    for (int d = 0; d < 3; ++d)
      L_[d] = d < run.dim && run.box.boundary[d] == Boundary::Periodic ? run.box.length(d) : 0.0;
  }

  // interval 0: at every observation of the other outputs (and at step 0 and the last step).
  std::uint64_t interval() const override { return interval_ ? interval_ : ~std::uint64_t(0); }
  std::vector<std::string> columns() const override { return {stem_}; }
  std::vector<std::string> files() const override { return {file_, file_ + ".reference"}; }

  void begin(const RunInfo& run) override {
    path_ = analysis_file_path(run, file_);
    if (path_.empty() || !run.resume) return;
    // A resumed run measures from the reference of the run it continues, and keeps that run's
    // rows up to the checkpoint.
    if (load_reference()) {
      append_ = resume_csv(path_, run.resume_step, header());
      return;
    }
    if (std::filesystem::exists(path_))
      throw Error("msd: cannot continue " + path_ +
                  ": the reference positions it was measured "
                  "from (" +
                  path_ +
                  ".reference) are missing, so a resumed run would measure "
                  "from another origin. Restore that file, or move " +
                  path_ + " away to start a new series from the first analysis of the resumed run");
  }

  void analyse(StepContext& ctx, Thermo& t, std::size_t first) override {
    ParticleStore& s = ctx.store();
    if (comm_ && !shared_) share_loaded_reference();
    if (!have_ref_) take_reference(s, t);
    // The sums, then the particle count; on several ranks each rank's, added in one reduction.
    std::vector<double> sum(dim_ + types_ + 2, 0.0);
    sums(s, sum.data());
    sum.back() = double(s.size());
    if (comm_) comm_->sum(sum.data(), sum.size());
    const std::size_t here = std::size_t(sum.back());
    if (here != n_ref_)
      throw Error("msd: the run has " + std::to_string(here) + " particles, the reference (" +
                  (loaded_ ? path_ + ".reference" : std::string("the first analysis")) + ") " +
                  std::to_string(n_ref_) + "; the particles must stay the same");
    if (sum[dim_ + types_] > 0)
      throw Error("msd: " + format_number(sum[dim_ + types_]) +
                  " particles have ids that the reference (" +
                  (loaded_ ? path_ + ".reference" : std::string("the first analysis")) +
                  ") does not hold; the particles must stay the same");
    const double n = n_ref_ ? double(n_ref_) : 1.0;
    double total = 0;
    for (int d = 0; d < dim_; ++d) total += sum[d];
    if (first < t.extra.size()) t.extra[first] = total / n;
    // Rows at this output's own steps; the thermo column at every analysis (the framework
    // analyses at every observation of any output, the terminal's progress lines included).
    if (interval_ == 0 || t.step % interval_ == 0) write_row(t, total / n, sum);
  }

  void observe(const ObserveContext&) override {}
  void sync() override {
    if (file_ptr_) std::fflush(file_ptr_);
  }
  void end() override {
    if (file_ptr_) std::fclose(file_ptr_);
    file_ptr_ = nullptr;
  }
  ~Msd() override { end(); }

 private:
  std::string header() const {
    static const char* axis[3] = {"x", "y", "z"};
    std::string h = "step,time," + stem_;
    for (int d = 0; d < dim_; ++d) h += "," + stem_ + "_" + axis[d];
    for (int t = 0; t < types_; ++t) h += "," + stem_ + "_type" + std::to_string(t);
    return h;
  }

  void write_row(const Thermo& t, double total, const std::vector<double>& sum) {
    if (path_.empty()) return;
    if (have_row_ && t.step == last_row_) return;  // one row per step
    if (!file_ptr_) {
      file_ptr_ = std::fopen(path_.c_str(), append_ ? "a" : "w");
      if (!file_ptr_) throw Error("msd: cannot write " + path_ + ": " + std::strerror(errno));
      if (!append_) std::fprintf(file_ptr_, "%s\n", header().c_str());
    }
    const double n = n_ref_ ? double(n_ref_) : 1.0;
    std::string line = std::to_string(t.step) + ",";
    append_number(line, t.time);
    line += ",";
    append_number(line, total);
    for (int d = 0; d < dim_; ++d) {
      line += ",";
      append_number(line, sum[d] / n);
    }
    for (int k = 0; k < types_; ++k) {
      line += ",";
      append_number(line, n_type_[k] ? sum[dim_ + k] / double(n_type_[k]) : 0.0);
    }
    line += "\n";
    if (std::fputs(line.c_str(), file_ptr_) < 0 || std::fflush(file_ptr_) != 0)
      throw Error("msd: error writing " + path_ + " (disk full?)");
    have_row_ = true;
    last_row_ = t.step;
  }

  // The sums of Sums::v (dim + types + 1 of them) over s's particles, on its backend, into out.
  void sums(const ParticleStore& s, double* out) {
    // The reference in the store's memory: copied there when it was taken or the store moved.
    if (!ref_copied_ || ref_backend_.memory() != &s.memory()) {
      ref_backend_.upload(s.memory(), ref_);
      ref_copied_ = true;
    }
    const int m = dim_ + types_ + 1;
    visit(s, [&](auto p) {
      const Displacement<decltype(p)> f{
          p, ref_backend_.data(), ids_, {L_[0], L_[1], L_[2]}, types_};
      const Sums total = sum_over_index(s.backend(), p.n, f);
      for (int k = 0; k < m; ++k) out[k] = total.v[k];
    });
  }

  // The particles of the reference: (id, type, unwrapped position) each, in double; on several
  // ranks every rank's (each rank then holds the reference of all particles, indexed by id).
  std::vector<double> reference_records(const ParticleStore& s) const {
    HostParticles hp(s.dim());
    s.download(hp, ParticleStore::kPosition | ParticleStore::kImage | ParticleStore::kId |
                       ParticleStore::kType);
    const std::size_t per = std::size_t(2 + dim_);
    std::vector<double> mine(hp.size() * per);
    for (std::size_t i = 0; i < hp.size(); ++i) {
      double* r = &mine[i * per];
      r[0] = double(hp.id[i]);
      r[1] = double(hp.type[i]);
      for (int d = 0; d < dim_; ++d) r[2 + d] = hp.x[d][i] + double(hp.image[d][i]) * L_[d];
    }
    if (!comm_) return mine;
    Out out;
    out.put(mine.data(), mine.size());
    std::vector<double> all;
    for (const auto& bytes : allgather(*comm_, out.take())) {
      In in(bytes, "msd");
      const std::size_t at = all.size();
      all.resize(at + in.left<double>());
      in.get(all.data() + at, all.size() - at);
    }
    return all;
  }

  // The positions of this analysis become the reference (one host copy of the store; on several
  // ranks of all ranks' particles, every rank).
  void take_reference(const ParticleStore& s, const Thermo& t) {
    const std::vector<double> rec = reference_records(s);
    const std::size_t per = std::size_t(2 + dim_), n = rec.size() / per;
    std::int64_t max_id = -1;
    int types = 1;
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t id = std::int64_t(rec[i * per]), type = std::int64_t(rec[i * per + 1]);
      if (id < 0) throw Error("msd: particle id " + std::to_string(id) + " is negative");
      max_id = std::max(max_id, id);
      if (type < 0) throw Error("msd: particle type " + std::to_string(type) + " is negative");
      types = std::max(types, int(type) + 1);
    }
    if (types > kMaxTypes)
      throw Error("msd: the particles have types up to " + std::to_string(types - 1) +
                  "; the msd analysis writes one column per type, for types 0 to " +
                  std::to_string(kMaxTypes - 1));
    const std::size_t ids = std::size_t(max_id + 1);
    if (ids > 4 * n + 1024)
      throw Error("msd: particle ids reach " + std::to_string(max_id) + " for " +
                  std::to_string(n) + " particles; the reference is indexed by id");
    ref_.assign(std::size_t(dim_) * ids, std::numeric_limits<double>::quiet_NaN());
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t id = std::size_t(rec[i * per]);
      if (!std::isnan(ref_[id]))
        throw Error("msd: particle id " + std::to_string(id) + " occurs twice");
      for (int d = 0; d < dim_; ++d) ref_[std::size_t(d) * ids + id] = rec[i * per + 2 + d];
    }
    ids_ = ids;
    n_ref_ = n;
    types_ = types;
    ref_copied_ = false;
    n_type_.assign(types, 0);
    for (std::size_t i = 0; i < n; ++i) ++n_type_[std::size_t(rec[i * per + 1])];
    have_ref_ = true;
    ref_step_ = t.step;
    ref_time_ = t.time;
    save_reference();
  }

  // Several ranks, the first analysis (all ranks together): a resumed run's reference, which only
  // rank 0 reads (it writes the file), goes to every rank.
  void share_loaded_reference() {
    shared_ = true;
    double loaded = loaded_ ? 1.0 : 0.0;
    comm_->max(&loaded, 1);
    if (loaded == 0) return;  // a fresh reference, taken by all ranks together
    std::vector<std::vector<char>> out(std::size_t(comm_->size()));
    if (comm_->rank() == 0) {
      Out o;
      o.put(ids_);
      o.put(n_ref_);
      o.put(types_);
      o.put(ref_step_);
      o.put(ref_time_);
      o.put(n_type_.data(), n_type_.size());
      o.put(ref_.data(), ref_.size());
      const std::vector<char> bytes = o.take();
      for (int r = 1; r < comm_->size(); ++r) out[std::size_t(r)] = bytes;
    }
    const std::vector<char> bytes = std::move(comm_->alltoallv(std::move(out))[0]);
    if (comm_->rank() == 0) return;
    In in(bytes, "msd");
    in.get(&ids_, 1);
    in.get(&n_ref_, 1);
    in.get(&types_, 1);
    in.get(&ref_step_, 1);
    in.get(&ref_time_, 1);
    n_type_.resize(std::size_t(types_));
    in.get(n_type_.data(), n_type_.size());
    ref_.resize(in.left<double>());
    in.get(ref_.data(), ref_.size());
    ref_copied_ = false;
    have_ref_ = loaded_ = true;
  }

  // <file>.reference: a text line (format, dimension, sizes, step and time of the reference,
  // the particles per type), then the reference positions as raw doubles and their checksum.
  void save_reference() const {
    if (path_.empty()) return;
    std::ostringstream o;
    char b[64];
    std::snprintf(b, sizeof b, "%.17g", ref_time_);
    o << "pardyn-msd-reference 1 dim " << dim_ << " ids " << ids_ << " n " << n_ref_ << " types "
      << types_ << " step " << ref_step_ << " time " << b;
    for (std::uint64_t c : n_type_) o << ' ' << c;
    o << '\n';
    const char* raw = reinterpret_cast<const char*>(ref_.data());
    const std::size_t bytes = ref_.size() * sizeof(double);
    const std::uint64_t sum = checksum(raw, bytes);
    std::string content = o.str();
    content.append(raw, bytes);
    content.append(reinterpret_cast<const char*>(&sum), sizeof sum);
    write_file_atomic(path_ + ".reference", content);
  }

  bool load_reference() {
    const std::string rp = path_ + ".reference";
    std::ifstream in(rp, std::ios::binary);
    if (!in) return false;
    std::string head;
    std::getline(in, head);
    std::istringstream h(head);
    std::string magic, k1, k2, k3, k4, k5, k6;
    int version = 0, dim = 0;
    std::size_t ids = 0, n = 0;
    int types = 0;
    std::uint64_t step = 0;
    double time = 0;
    const auto damaged = [&] {
      return Error("msd: " + rp +
                   " is damaged or not a reference file; restore it, or move it "
                   "and " +
                   path_ + " away to start a new series");
    };
    if (!(h >> magic >> version >> k1 >> dim >> k2 >> ids >> k3 >> n >> k4 >> types >> k5 >> step >>
          k6 >> time) ||
        magic != "pardyn-msd-reference" || version != 1 || types < 1 || types > kMaxTypes ||
        ids > (std::size_t(1) << 40))
      throw damaged();
    if (dim != dim_)
      throw Error("msd: " + rp + " holds " + std::to_string(dim) + "D positions; this run is " +
                  std::to_string(dim_) + "D");
    std::vector<std::uint64_t> per_type(types);
    for (auto& c : per_type)
      if (!(h >> c)) throw damaged();
    std::vector<double> ref(std::size_t(dim) * ids);
    std::uint64_t sum = 0;
    in.read(reinterpret_cast<char*>(ref.data()), std::streamsize(ref.size() * sizeof(double)));
    in.read(reinterpret_cast<char*>(&sum), sizeof sum);
    if (!in ||
        sum != checksum(reinterpret_cast<const char*>(ref.data()), ref.size() * sizeof(double)))
      throw damaged();
    ref_ = std::move(ref);
    ref_copied_ = false;
    ids_ = ids;
    n_ref_ = n;
    types_ = types;
    n_type_ = per_type;
    ref_step_ = step;
    ref_time_ = time;
    have_ref_ = true;
    loaded_ = true;
    return true;
  }

  std::uint64_t interval_;
  std::string file_, stem_;
  int dim_;
  double L_[3] = {0, 0, 0};
  std::string path_;
  bool append_ = false;
  std::FILE* file_ptr_ = nullptr;
  bool have_row_ = false;
  std::uint64_t last_row_ = 0;
  // The reference.
  bool have_ref_ = false, loaded_ = false;
  std::vector<double> ref_;  // [d * ids_ + id], NaN for ids without a particle
  std::size_t ids_ = 0, n_ref_ = 0;
  int types_ = 1;
  std::vector<std::uint64_t> n_type_;
  std::uint64_t ref_step_ = 0;
  double ref_time_ = 0;
  BackendBuffer<double> ref_backend_;  // ref_ in the store's memory
  bool ref_copied_ = false;            // ref_backend_ holds ref_ (false when ref_ changes)
  // Several ranks: each sums its own particles against the whole reference; the sums are added.
  Comm* comm_ = nullptr;
  bool shared_ = false;  // share_loaded_reference() done
};

const char* const kDoc = R"(Mean-square displacement (M. P. Allen and D. J. Tildesley, Computer
Simulation of Liquids, Oxford University Press: the Einstein relation for the self-diffusion
coefficient):
  msd(t) = (1/N) sum_i |r_i(t) - r_i(t0)|^2,   msd_d the same for axis d alone,
  msd_type<k> the mean over the particles of type k,
with t0 the first analysis (step 0 of a fresh run) and unwrapped positions: on periodic axes
r = x + image L, where image counts the box lengths the particle was wrapped by (so a particle
that crossed a face counts the whole way it travelled). Particles are matched by id, not by
their place in the store. At long times msd -> 2 dim D t (D the self-diffusion coefficient;
D = k_B T / (m gamma) for the langevin thermostat's free particles, gamma = 1/tau).
Computed on the run's backend (on the GPU a reduction kernel in a fixed order, so a run's sums
are reproducible; the reference positions live in device memory). The first analysis makes one host copy of positions, images, ids and types to
record the reference: N (dim + 2) numbers, once.
Adds the thermo column <stem> (msd for msd.csv) and writes `file` (default msd.csv) in the output
folder, one row per analysis, flushed after each:
  step,time,msd,msd_x,msd_y[,msd_z],msd_type0,msd_type1,...
(types 0 to the largest type present; a type without particles reads 0). `interval` > 0: a row
every that many steps; 0 (the default): a row at every observation of the other outputs (each
thermo row, frame and terminal progress line). The thermo column is computed at every thermo row
either way. Plot it in ParaView: CSV reader, Line Chart View, x: time.
Resumed runs (--resume): the reference positions are saved to <file>.reference (atomically, with
a checksum) when they are taken, and a resumed run measures from them and keeps the rows up to
the checkpoint. A resumed run that finds msd.csv but not its reference refuses to start.
On several MPI ranks every rank holds the reference of all particles (by id: particles may move
between ranks) and sums its own; the sums are added over the ranks. Example (docs/analysis.md):
  [[output]]
  type = "msd"
  interval = 100)";

void register_msd(Registrar& r) {
  FactoryInfo f;
  f.kind = PluginKind::Observer;
  f.name = "msd";
  f.summary = "mean-square displacement from the first analysis, unwrapped, per axis and type";
  f.doc = kDoc;
  f.backends = kBuiltBackends;
  f.schema
      .add(steps_param("interval", 0, 0,
                       "a row every this many steps; 0: at every observation of the other "
                       "outputs"))
      .string("file", "msd.csv",
              "the CSV file, relative to the run's output folder; the reference positions go to "
              "<file>.reference");
  r.add(
      std::move(f), Factory<Observer>([](const ParamSet& p, const RunInfo& run) {
        const std::string& file = p.string("file");
        check_analysis_output(output_name("msd", p), "", run, file, "msd.csv");
        return std::unique_ptr<Observer>(new Msd(std::uint64_t(p.integer("interval")), file, run));
      }));
}

}  // namespace
}  // namespace pardyn::plugins::msd

PARDYN_PLUGIN(pardyn::plugins::msd::register_msd)
