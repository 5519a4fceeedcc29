// SPDX-License-Identifier: BSD-3-Clause
// The output folder: the outputs' files checked against each other, one run per folder at a
// time (the lock), an earlier run's files replaced, and the folder prepared before the run.
#include "pardyn/app/simulation.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <limits>
#include <random>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include "io/checkpoint.hpp"
#include "simulation_parts.hpp"
#include "pardyn/cuda.hpp"
#include "pardyn/math.hpp"
#include "pardyn/app/memory.hpp"
#include "pardyn/output.hpp"
#include "parallel/communicator.hpp"
#include "parallel/domain.hpp"
#include "parallel/ring.hpp"
#include "parallel/store_ops.hpp"

namespace fs = std::filesystem;

namespace pardyn {

void check_output_files(const std::vector<OutputFiles>& outputs) {
  struct Claim {
    std::string name;  // lexically normal, relative
    std::vector<std::string> parts;
    bool folder;
    const OutputFiles* by;
  };
  std::vector<Claim> claims;
  auto who = [](const OutputFiles& o) { return o.where; };
  for (const auto& o : outputs) {
    for (const auto& given : o.files) {
      const bool folder = !given.empty() && given.back() == '/';
      const fs::path p(given);
      if (given.empty() || given == "/")
        throw Error(who(o) + " names an empty file; give it a file name");
      if (p.is_absolute())
        throw Error(who(o) + " writes " + given +
                    ", an absolute path; every output is written inside the run's output folder: "
                    "give a name relative to it (e.g. " +
                    p.filename().string() + ")");
      const fs::path n = p.lexically_normal();
      Claim c{n.string(), {}, folder, &o};
      for (const auto& part : n)
        if (!part.empty()) c.parts.push_back(part.string());
      if (!c.parts.empty() && c.parts.back() == ".") c.parts.pop_back();
      if (c.parts.empty() || c.parts.front() == "..")
        throw Error(who(o) + " writes " + given +
                    ", which is outside the run's output folder; give a name inside it (e.g. " +
                    p.filename().string() + ", or use -o to choose the folder)");
      if (c.name.size() > 1 && c.name.back() == '/') c.name.pop_back();
      claims.push_back(std::move(c));
    }
  }
  for (std::size_t i = 0; i < claims.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      const Claim& a = claims[j];
      const Claim& b = claims[i];
      const std::size_t k = std::min(a.parts.size(), b.parts.size());
      if (!std::equal(a.parts.begin(), a.parts.begin() + long(k), b.parts.begin())) continue;
      auto shown = [](const Claim& c) { return c.name + (c.folder ? "/" : ""); };
      const std::string what = a.parts.size() == b.parts.size()
                                   ? shown(b) + ", which " + who(*a.by) + " writes too"
                                   : shown(b) + ", and " + who(*a.by) + " writes " + shown(a) +
                                         " (the one would lie inside the other)";
      throw Error(who(*b.by) + " writes " + what +
                  "; every output needs names of its own in the output folder: give one of them "
                  "another file = \"...\", or remove one of the two" +
                  (a.by->type == b.by->type && a.by->type != "thermo" && a.by->type != "pardyn"
                       ? " (one " + a.by->type + " output per run: its names are fixed)"
                       : ""));
    }
}

void Simulation::lock_output_folder() {
  // One run per folder at a time: an flock on <output>/.pardyn.lock, held for the run's life and
  // released by the system when the process ends, even by kill -9. The file holds the pid for the
  // message another run gets.
  const std::string path = (fs::path(run_.output_dir) / ".pardyn.lock").string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot create " + path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    const ssize_t got = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    const std::string pid = got > 0 ? std::string(buf, std::size_t(got)) : "?";
    if (pid == std::to_string(::getpid()))  // a program that makes several runs (Python)
      throw Error("the output folder " + run_.output_dir +
                  " is in use by another run of this process (pid " + pid +
                  "); two runs in one folder would mix their files: end that run first (in "
                  "Python: its close(), or a with block), or choose another output folder");
    throw Error("the output folder " + run_.output_dir + " is in use by another pardyn run (pid " +
                pid +
                "); two runs in one folder would mix their files: wait for it to end, or "
                "choose another folder with -o");
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // The lock holds without the pid; only the message of a second run would lack it.
  }
  lock_fd_ = fd;
}

// The output folder of a fresh run holds this run's files only: the series files of an earlier run
// (frames, grid files) go, and so does every file the earlier run listed in .pardyn.files that this
// run does not write (say thermo.csv when this run has no thermo output). Then this run's list.
void Simulation::replace_earlier_run() {
  const fs::path dir(run_.output_dir);
  const fs::path manifest = dir / ".pardyn.files";
  std::error_code ec;
  // Frame files in a folder an output owns ("frames/"): only the kinds pardyn writes, and
  // temporary files of a run that died while writing one.
  auto clear_folder = [&](const fs::path& folder) {
    std::error_code fec;
    if (fs::is_symlink(folder, fec) || !fs::is_directory(folder, fec)) return;
    for (fs::directory_iterator it(folder, fec), end; !fec && it != end; it.increment(fec)) {
      const fs::path f = it->path();
      const std::string ext = f.extension().string();
      std::error_code rec;
      if (!fs::is_regular_file(fs::symlink_status(f, rec))) continue;
      if (ext == ".vtp" || ext == ".pvtp" || ext == ".vti" ||
          f.filename().string().find(".tmp-") != std::string::npos)
        fs::remove(f, rec);
    }
  };
  std::vector<std::string> earlier;
  {
    std::ifstream in(manifest);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) earlier.push_back(line);
  }
  // An earlier pardyn wrote no list: its frames are found where they always were.
  if (earlier.empty() && !fs::exists(manifest, ec)) earlier.push_back("frames/");
  const std::set<std::string> mine(output_names_.begin(), output_names_.end());
  for (const auto& n : earlier) {
    // Only names an output may claim (check_output_files): relative, inside the folder.
    const fs::path p = fs::path(n).lexically_normal();
    if (p.is_absolute() || p.empty() || *p.begin() == "..") continue;
    if (n.back() == '/') {
      clear_folder(dir / p);
      if (!mine.count(p.string())) fs::remove(dir / p, ec);  // only if empty now
    } else if (!mine.count(p.string()) && fs::is_regular_file(fs::symlink_status(dir / p, ec))) {
      fs::remove(dir / p, ec);
    }
    ec.clear();
  }
  std::string list;
  for (const auto& n : output_names_) {
    if (n.back() == '/') clear_folder(dir / n);
    list += n + "\n";
  }
  write_file_atomic(manifest.string(), list);
}

// Rank 0 takes the output folder: locked, an earlier run's files removed (or its checkpoints kept
// for a resumed run), the resolved configuration and log.txt opened.
void Simulation::prepare_output_folder(const Scenario& sc) {
  if (run_.rank != 0) return;
  make_directories(run_.output_dir);
  lock_output_folder();
  std::error_code ec;
  // Checkpoints: temporary files of a run killed while writing one are deleted; a resumed run
  // deletes the checkpoints after its own (they belong to the run that died).
  for (const auto& e : fs::directory_iterator(fs::path(run_.output_dir) / "checkpoints", ec))
    if (e.path().filename().string().find(".h5.tmp-") != std::string::npos)
      fs::remove(e.path(), ec);
  ec.clear();
  const auto earlier = checkpoint::list(run_.output_dir);
  if (resume_) {
    for (const auto& [step, file] : earlier)
      if (step > resume_->step) fs::remove(file, ec);
  } else if (!earlier.empty()) {
    // A fresh run would mix its checkpoints with an earlier run's (and delete them by `keep`).
    throw Error("the output folder " + run_.output_dir + " holds checkpoints of an earlier run " +
                "(the newest at step " + std::to_string(earlier.back().first) +
                "); continue that run with `pardyn run --resume " + run_.output_dir +
                "`, or delete " + (fs::path(run_.output_dir) / "checkpoints").string() +
                " (or choose another folder with -o) to start afresh");
  }
  // A resumed run continues the series: its observers drop what follows the checkpoint.
  if (!resume_) replace_earlier_run();
  write_file_atomic((fs::path(run_.output_dir) / "config.toml").string(), sc.resolved_toml);
  // log.txt: what the terminal shows (a resumed run adds to its run's log).
  progress_->open_log((fs::path(run_.output_dir) / "log.txt").string(), resume_ != nullptr);
  if (resume_) progress_->log_only("");
  for (const auto& note : sc.notes) progress_->log_only("note: " + note);
}

}  // namespace pardyn
