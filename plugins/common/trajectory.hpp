// SPDX-License-Identifier: BSD-3-Clause
// Text trajectories (the xyz and lammps_dump observers): one file, one frame appended per
// observation, every particle of the run in each frame, sorted by id. The same machinery writes
// files that hold one state (the lammps_data observer, Mode::Replace): each observation replaces
// the file, written beside it and renamed over it, so the file is always a complete state.
//
// Each frame is copied (sorted by id) on the calling thread, then formatted and written on a
// background thread while the run steps on; the next observation, sync() (before a checkpoint) and
// end() wait for it. Every frame is flushed to the operating system when written, so a crash or a
// kill loses at most the frame being written. In a parallel run every rank sends its
// particles to rank 0 (Comm::gather, a collective call at each observation), which writes the file.
// A resumed run (RunInfo::resume) keeps the complete frames up to the checkpoint's step and appends
// after them; a file whose first frame cannot be read is kept as <file>.before-resume and a new one
// is started.
//
// Header-only: each observer plugin compiles its own copy.
#pragma once

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <omp.h>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "pardyn/output.hpp"
#include "pardyn/plugin.hpp"
#include "steps_param.hpp"

namespace pardyn::plugins::trajectory {

// Shortest text that reads back to the same double: exact, and shorter than %.17g.
inline void put(std::string& s, double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  s.append(buf, r.ptr);
}
inline void put_int(std::string& s, std::int64_t v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  s.append(buf, r.ptr);
}

// " a b c": particle i's components of a per-axis array (a frame's x or v), 0 on the axes a dim-D
// run lacks (a 2D run's z).
inline void put_vector(std::string& s, const std::vector<double> (&a)[3], std::size_t i, int dim) {
  for (int d = 0; d < 3; ++d) {
    s += ' ';
    if (d < dim) put(s, a[d][i]);
    else s += '0';
  }
}

// The fields a trajectory frame holds: positions, velocities, masses, types, ids, image counts.
constexpr unsigned kFields = ParticleStore::kPosition | ParticleStore::kVelocity |
                             ParticleStore::kMass | ParticleStore::kType | ParticleStore::kId |
                             ParticleStore::kImage;

// What a frame is written from: the particles of every rank, sorted by id.
struct Frame {
  int dim = 3;
  std::vector<std::int64_t> id;
  std::vector<std::int32_t> type;
  std::vector<double> mass;
  std::vector<double> x[3], v[3];
  std::vector<std::int32_t> image[3];
  std::size_t size() const { return id.size(); }
};

// A line-by-line view of a file with byte offsets, for finding where the frames of a resumed run's
// file end.
class LineCursor {
 public:
  explicit LineCursor(const std::string& path) : in_(path, std::ios::binary) {}
  bool ok() const { return bool(in_); }
  // The next line without its '\n'; false at the end of the file or when the line has no '\n'
  // (the last line of a frame cut short).
  bool next(std::string& line) {
    if (!std::getline(in_, line)) return false;
    if (in_.eof()) return false;  // no '\n' after it
    offset_ += line.size() + 1;
    return true;
  }
  std::uint64_t offset() const { return offset_; }

 private:
  std::ifstream in_;
  std::uint64_t offset_ = 0;
};

class Writer : public Observer {
 public:
  // Append: one file, a frame appended per observation. Replace: each observation replaces the
  // file with one frame.
  enum class Mode { Append, Replace };
  // who: "xyz observer"; file: the file name as given (relative to the output folder).
  Writer(std::string who, std::uint64_t interval, std::string file, Mode mode = Mode::Append)
      : who_(std::move(who)), interval_(interval), file_(std::move(file)), mode_(mode) {}

  std::uint64_t interval() const override { return interval_; }
  unsigned fields() const override { return kFields; }
  std::vector<std::string> files() const override { return {file_}; }

  void begin(const RunInfo& run) override {
    run_ = run;
    have_last_step_ = false;
    if (run.ranks > 1 && !run.comm)
      throw Error(who_ + ": a run of " + std::to_string(run.ranks) +
                  " ranks without a communicator (RunInfo::comm)");
    if (run.rank != 0) return;  // the file is rank 0's
    std::filesystem::path p(file_);
    if (p.is_relative())
      p = std::filesystem::path(run.output_dir.empty() ? "." : run.output_dir) / p;
    path_ = p.string();
    if (p.has_parent_path()) make_directories(p.parent_path().string());
    if (mode_ == Mode::Replace) {
      // The file itself is written at the first observation; its folder must take files now.
      open(path_ + ".tmp", "wb");
      close();
      std::remove((path_ + ".tmp").c_str());
      return;
    }
    bool append = false;
    if (run.resume) append = keep_frames_up_to(run.resume_step);
    open(path_, append ? "ab" : "wb");
  }

  void observe(const ObserveContext& ctx) override {
    if (!ctx.particles) throw Error(who_ + ": the framework passed no particle data");
    // The last step can coincide with a regular observation; one frame per step.
    if (have_last_step_ && ctx.step == last_step_) return;
    have_last_step_ = true;
    last_step_ = ctx.step;
    Frame f;
    if (!collect(*ctx.particles, f)) return;  // a rank other than 0 of a parallel run
    if (path_.empty()) throw Error(who_ + ": observe() called before begin()");
    wait();  // one frame in flight at a time (its error, if any, is thrown here)
    const std::uint64_t step = ctx.step;
    const double time = ctx.time;
    pending_ = std::async(std::launch::async, [this, f = std::move(f), step, time] {
      const std::string tmp = path_ + ".tmp";
      if (mode_ == Mode::Replace) open(tmp, "wb");
      std::string text;
      write_header(text, f, step, time);
      spill(text);
      // The rows in blocks, formatted by all threads a batch at a time and written in order.
      const std::size_t n = f.size();
      const std::size_t blocks = (n + kBlock - 1) / kBlock;
      const std::size_t batch = std::size_t(std::max(1, omp_get_max_threads())) * 4;
      std::vector<std::string> texts(std::min(batch, std::max<std::size_t>(blocks, 1)));
      for (int section = 0; section < sections(); ++section) {
        write_section(text, f, section);
        spill(text);
        for (std::size_t b0 = 0; b0 < blocks; b0 += texts.size()) {
          const std::size_t b1 = std::min(blocks, b0 + texts.size());
#pragma omp parallel for schedule(dynamic, 1)
          for (std::size_t b = b0; b < b1; ++b) {
            std::string& part = texts[b - b0];
            part.clear();
            write_rows(part, f, b * kBlock, std::min(n, (b + 1) * kBlock), section);
          }
          for (std::size_t b = b0; b < b1; ++b) spill(texts[b - b0]);
        }
      }
      if (std::fflush(out_.get()) != 0) write_error();
      if (mode_ == Mode::Replace) {
        close();
        if (std::rename(tmp.c_str(), path_.c_str()) != 0)
          throw Error(who_ + ": cannot rename " + tmp + " to " + path_ + ": " +
                      std::strerror(errno));
      }
    });
  }

  void sync() override {
    wait();
    if (out_ && std::fflush(out_.get()) != 0) write_error();
  }

  void end() override {
    wait();
    close();
  }

 protected:
  // A frame is its header (anything before the particles' rows; it may throw on a frame it
  // cannot write), then for each of its sections() the section's heading and one row per
  // particle: the rows of particles [first, last) appended to `text`. The rows are formatted on
  // several threads at once, in blocks: write_rows must only read the frame and the object, and
  // must not throw.
  virtual void write_header(std::string& text, const Frame& f, std::uint64_t step, double time) = 0;
  virtual int sections() const { return 1; }
  virtual void write_section(std::string& /*text*/, const Frame&, int /*section*/) const {}
  virtual void write_rows(std::string& text, const Frame& f, std::size_t first, std::size_t last,
                          int section) const = 0;
  // Resumed runs (Mode::Append): the length in bytes of the complete frames of `path` with a
  // step <= `step` (the frames of the run that died after its checkpoint go), or -1 when the
  // first frame cannot be read (the file is then not one this observer wrote).
  virtual std::int64_t kept_bytes(const std::string& /*path*/, std::uint64_t /*step*/) const {
    return -1;
  }

  const RunInfo& run() const { return run_; }
  const std::string& who() const { return who_; }

  ~Writer() override { finish_pending(); }

 protected:
  // Waits for the frame being written, ignoring its error: for destructors. A derived class calls
  // it in its own destructor, as the background frame uses its write_header() and write_rows().
  void finish_pending() noexcept {
    try {
      wait();
    } catch (...) {}
  }

 private:
  static constexpr std::size_t kBlock = 16384;  // particles per block of rows (~2 MB of text)

  // The frame being written in the background (if any) finished; its error rethrown.
  void wait() {
    if (pending_.valid()) pending_.get();
  }
  std::future<void> pending_;

  void open(const std::string& path, const char* mode) {
    out_.reset(std::fopen(path.c_str(), mode));
    if (!out_) throw Error(who_ + ": cannot write " + path + ": " + std::strerror(errno));
  }
  void close() {
    if (!out_) return;
    std::FILE* f = out_.release();
    if (std::fclose(f) != 0)
      throw Error(who_ + ": error closing " + path_ + ": " + std::strerror(errno));
  }

  void spill(std::string& text) {
    if (!text.empty() && std::fwrite(text.data(), 1, text.size(), out_.get()) != text.size())
      write_error();
    text.clear();
  }
  [[noreturn]] void write_error() const {
    throw Error(who_ + ": error writing " + path_ + ": " + std::strerror(errno) + " (disk full?)");
  }

  // A resumed run: true to append to the kept frames, false to start the file afresh.
  bool keep_frames_up_to(std::uint64_t step) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path_, ec)) return false;
    const std::int64_t keep = kept_bytes(path_, step);
    if (keep < 0) {
      std::filesystem::rename(path_, path_ + ".before-resume", ec);
      return false;
    }
    const auto size = std::filesystem::file_size(path_, ec);
    if (ec) return false;
    if (std::uint64_t(keep) < size) {
      std::filesystem::resize_file(path_, std::uint64_t(keep), ec);
      if (ec)
        throw Error(who_ + ": cannot cut " + path_ +
                    " back to the checkpoint's step: " + ec.message());
    }
    return true;
  }

  // Every rank's particles, sorted by id, into f on rank 0 (true); false on the other ranks.
  bool collect(const HostParticles& p, Frame& f) const {
    const int dim = run_.dim;
    f.dim = dim;
    const std::size_t n = p.size();
    if (p.id.size() != n || p.type.size() != n)
      throw Error(who_ + ": particle ids or types are missing from the host copy");
    for (int d = 0; d < dim; ++d)
      if (p.x[d].size() != n || p.v[d].size() != n || p.image[d].size() != n)
        throw Error(who_ +
                    ": positions, velocities or image counts are missing from the host copy");
    if (run_.ranks <= 1) {
      std::vector<std::size_t> order(n);
      std::iota(order.begin(), order.end(), std::size_t(0));
      if (!std::is_sorted(p.id.begin(), p.id.end()))
        std::sort(order.begin(), order.end(),
                  [&](std::size_t a, std::size_t b) { return p.id[a] < p.id[b]; });
      fill(f, order, [&](std::size_t i) { return Record::of(p, i, dim); });
      return true;
    }
    // One record per particle: id, type, mass, x, v, image (3 each, unused ones zero).
    std::vector<char> mine(n * sizeof(Record));
    for (std::size_t i = 0; i < n; ++i) {
      const Record r = Record::of(p, i, dim);
      std::memcpy(mine.data() + i * sizeof(Record), &r, sizeof r);
    }
    const auto all = run_.comm->gather(mine);
    if (run_.rank != 0) return false;
    std::vector<Record> records;
    for (const auto& bytes : all) {
      const std::size_t k = bytes.size() / sizeof(Record);
      const std::size_t at = records.size();
      records.resize(at + k);
      std::memcpy(static_cast<void*>(records.data() + at), bytes.data(), k * sizeof(Record));
    }
    std::vector<std::size_t> order(records.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return records[a].id < records[b].id; });
    fill(f, order, [&](std::size_t i) { return records[i]; });
    return true;
  }

  struct Record {
    std::int64_t id;
    std::int32_t type;
    std::int32_t image[3];
    double mass;
    double x[3], v[3];
    static Record of(const HostParticles& p, std::size_t i, int dim) {
      Record r{};
      r.id = p.id[i];
      r.type = p.type[i];
      r.mass = p.mass[i];
      for (int d = 0; d < dim; ++d) {
        r.x[d] = p.x[d][i];
        r.v[d] = p.v[d][i];
        r.image[d] = p.image[d][i];
      }
      return r;
    }
  };

  template <class Get>
  void fill(Frame& f, const std::vector<std::size_t>& order, Get&& get) const {
    const std::size_t n = order.size();
    f.id.resize(n);
    f.type.resize(n);
    f.mass.resize(n);
    for (int d = 0; d < f.dim; ++d) {
      f.x[d].resize(n);
      f.v[d].resize(n);
      f.image[d].resize(n);
    }
    for (std::size_t k = 0; k < n; ++k) {
      const Record r = get(order[k]);
      f.id[k] = r.id;
      f.type[k] = r.type;
      f.mass[k] = r.mass;
      for (int d = 0; d < f.dim; ++d) {
        f.x[d][k] = r.x[d];
        f.v[d][k] = r.v[d];
        f.image[d][k] = r.image[d];
      }
    }
  }

  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };

  std::string who_;
  std::uint64_t interval_;
  std::string file_;
  Mode mode_;
  std::string path_;
  RunInfo run_;
  std::uint64_t last_step_ = 0;
  bool have_last_step_ = false;
  std::unique_ptr<std::FILE, FileCloser> out_;
};

// The `interval` and `file` keys every trajectory writer takes.
inline void add_common_keys(
    Schema& s, const std::string& default_file, const std::string& what,
    const std::string& interval_doc =
        "write a frame every this many steps (and at step 0 and the last step)") {
  s.add(steps_param("interval", 100, 1, interval_doc))
      .string("file", default_file,
              what +
                  ", relative to the run's output folder (inside it; two outputs "
                  "never share a file)");
}

// The `file` key checked: a file name, not empty, not a folder.
inline std::string file_key(const ParamSet& ps, const std::string& who, const char* example) {
  const std::string where = ps.context.empty() ? "" : " (" + ps.context + ")";
  const std::string& file = ps.string("file");
  if (file.empty()) throw Error(who + where + ": 'file' must not be empty");
  if (file.back() == '/')
    throw Error(who + where + ": file = \"" + file +
                "\" names a folder; give a file name, e.g. \"" + example + "\"");
  return file;
}

}  // namespace pardyn::plugins::trajectory
