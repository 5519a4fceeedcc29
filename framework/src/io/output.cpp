// SPDX-License-Identifier: BSD-3-Clause
#include "pardyn/output.hpp"

#include <algorithm>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "pardyn/core.hpp"

namespace pardyn {

std::string temp_path_for(const std::string& path) {
  return path + ".tmp-" + std::to_string(::getpid());
}

void commit_file(const std::string& tmp, const std::string& path) {
  int fd = ::open(tmp.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw Error("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
}

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::string tmp = temp_path_for(path);
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw Error("cannot write " + tmp + ": " + std::strerror(errno));
    f << content;
    f.flush();
    if (!f) throw Error("error writing " + tmp + " (disk full?)");
  }
  commit_file(tmp, path);
}

bool resume_csv(const std::string& path, std::uint64_t step, const std::string& header) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string line, kept;
  if (!std::getline(in, line)) return false;
  if (!header.empty() && line != header) {
    in.close();
    std::error_code ec;
    std::filesystem::rename(path, path + ".before-resume", ec);
    return false;
  }
  kept = line + "\n";
  while (std::getline(in, line)) {
    // A row cut short by the run's death has no newline after it and is dropped with the rest
    // (getline cannot tell; a row with too few fields is dropped below).
    const auto comma = line.find(',');
    if (comma == std::string::npos || comma == 0) continue;
    std::uint64_t s = 0;
    bool digits = true;
    for (std::size_t k = 0; k < comma; ++k) {
      if (line[k] < '0' || line[k] > '9') digits = false;
      else s = s * 10 + std::uint64_t(line[k] - '0');
    }
    if (!digits || s > step) continue;
    if (!header.empty() &&
        std::count(line.begin(), line.end(), ',') != std::count(header.begin(), header.end(), ','))
      continue;
    kept += line + "\n";
  }
  in.close();
  write_file_atomic(path, kept);
  return true;
}

void make_directories(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw Error("cannot create folder " + path + ": " + ec.message());
}

AsyncWriter::AsyncWriter(std::size_t max_pending)
    : max_pending_(max_pending ? max_pending : 1), thread_([this] { run(); }) {}

AsyncWriter::~AsyncWriter() {
  {
    std::lock_guard<std::mutex> lk(m_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void AsyncWriter::rethrow_locked(std::unique_lock<std::mutex>&) {
  if (error_) {
    auto e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

void AsyncWriter::submit(std::function<void()> job) {
  std::unique_lock<std::mutex> lk(m_);
  cv_.wait(lk, [&] { return jobs_.size() < max_pending_ || error_; });
  rethrow_locked(lk);
  jobs_.push_back(std::move(job));
  cv_.notify_all();
}

void AsyncWriter::flush() {
  std::unique_lock<std::mutex> lk(m_);
  cv_.wait(lk, [&] { return (jobs_.empty() && !busy_) || error_; });
  rethrow_locked(lk);
}

void AsyncWriter::run() {
  std::unique_lock<std::mutex> lk(m_);
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty() && stop_) return;
    auto job = std::move(jobs_.front());
    jobs_.pop_front();
    busy_ = true;
    lk.unlock();
    try {
      job();
    } catch (...) {
      lk.lock();
      error_ = std::current_exception();
      jobs_.clear();
      busy_ = false;
      cv_.notify_all();
      continue;
    }
    lk.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace pardyn
