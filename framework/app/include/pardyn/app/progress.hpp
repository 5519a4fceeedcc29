// SPDX-License-Identifier: BSD-3-Clause
// Terminal progress: a bar with steps/s and ETA (redrawn in place on a terminal, a line every 10% in a
// log file), and the periodic thermo line.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "pardyn/observer.hpp"

namespace pardyn {

// The progress bar's text for a terminal `columns` wide: at most columns - 1 characters, so that it
// never wraps; the bar shrinks, then goes, then the text is cut.
std::string progress_line(double fraction, std::uint64_t step, std::uint64_t total, double rate,
                          double eta_seconds, int columns);

class Progress {
 public:
  Progress(std::uint64_t total_steps, bool quiet);
  // Starts the clock of steps/s and the ETA: call when the steps begin, so that setting up (the
  // particles' generation, the first forces) is not counted as stepping.
  // A resumed run passes the step it resumes at.
  void start(std::uint64_t first_step = 0);
  // Call after each step; `fraction` (0..1) is the progress when it is not step / total (a run to
  // an end time), negative otherwise.
  void update(std::uint64_t step, double fraction = -1.0);
  void thermo_line(const Thermo& t, int dim);  // prints a table row (header the first time)
  void message(const std::string& line);       // a line that must not be garbled by the bar
  void finish(std::uint64_t steps_done);
  // log.txt: every line the terminal shows (messages, thermo lines, a progress line every 10%,
  // without the bar's redraws), also when quiet; appended to when `append` (a resumed run).
  void open_log(const std::string& path, bool append);
  void log_only(const std::string& line);  // a line for the log alone (an error being reported)
  double steps_per_second() const;

 private:
  void clear_bar();
  std::uint64_t total_;
  bool quiet_, tty_;
  bool bar_shown_ = false, header_done_ = false;
  int last_decile_ = -1;
  std::uint64_t last_step_ = 0;
  std::uint64_t first_ = 0;
  std::chrono::steady_clock::time_point start_, last_draw_;
  std::FILE* log_ = nullptr;
  int log_decile_ = -1;

 public:
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
};

}  // namespace pardyn
