// SPDX-License-Identifier: BSD-3-Clause
// Helpers for observers: files written atomically (an interrupted run never leaves half a file), and a
// background writer so that writing a frame does not stall the stepping.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/output.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace pardyn {

// A temporary name beside `path` in the same folder (so that the final rename is atomic).
std::string temp_path_for(const std::string& path);
// Flushes `tmp` to disk and renames it over `path`.
void commit_file(const std::string& tmp, const std::string& path);
// Writes `content` to `path` atomically.
void write_file_atomic(const std::string& path, const std::string& content);
// Creates a folder and its parents; throws with the path and the reason on failure.
void make_directories(const std::string& path);

// Resumed runs (RunInfo::resume): keeps the header line of a CSV file and its rows whose first
// field, the step, is at most `step` (the rows a run that died wrote after its checkpoint go),
// rewriting the file atomically. Returns false, leaving nothing there, when there is no file or
// its header is not `header` (when given): an old file is then kept beside it as
// <path>.before-resume and the caller starts a new one.
bool resume_csv(const std::string& path, std::uint64_t step, const std::string& header = "");

// One background thread running jobs in order. submit() blocks while `max_pending` jobs wait, so a slow
// disk slows the run down instead of filling memory. An exception from a job is rethrown by the next
// submit() or flush(), so errors are never lost.
class AsyncWriter {
 public:
  explicit AsyncWriter(std::size_t max_pending = 2);
  ~AsyncWriter();
  AsyncWriter(const AsyncWriter&) = delete;
  AsyncWriter& operator=(const AsyncWriter&) = delete;

  void submit(std::function<void()> job);
  void flush();  // waits until every submitted job has finished

 private:
  void run();
  void rethrow_locked(std::unique_lock<std::mutex>& lk);

  std::size_t max_pending_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool busy_ = false;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace pardyn
