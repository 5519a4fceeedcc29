// SPDX-License-Identifier: BSD-3-Clause
#include "pardyn/app/progress.hpp"

#include <cerrno>
#include <cstring>

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace pardyn {

namespace {
std::string hms(double s) {
  if (!std::isfinite(s) || s < 0) return "--:--";
  const long t = long(s + 0.5);
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  return buf;
}
// The width of the terminal on standard error, read at every redraw so that a resized window is
// followed; $COLUMNS, then 80, where the terminal does not say.
int terminal_columns() {
  winsize ws{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* c = std::getenv("COLUMNS"); c && std::atoi(c) > 0) return std::atoi(c);
  return 80;
}
}  // namespace

std::string progress_line(double fraction, std::uint64_t step, std::uint64_t total, double rate,
                          double eta_seconds, int columns) {
  const double frac = std::clamp(fraction, 0.0, 1.0);
  char text[160];
  std::snprintf(text, sizeof text, "%3d%%  step %llu/%llu  %.4g steps/s  ETA %s", int(frac * 100),
                (unsigned long long)step, (unsigned long long)total, rate,
                hms(eta_seconds).c_str());
  // The last column stays empty: a line that fills it makes some terminals wrap the cursor.
  const int room = std::max(1, columns - 1);
  // The bar takes what the text leaves, up to 30 characters, and goes when under 10.
  const int bar_width = std::min(30, room - int(std::string(text).size()) - 3);
  std::string line;
  if (bar_width >= 10) {
    const int filled = int(frac * bar_width);
    line = "[" + std::string(filled, '#') + std::string(bar_width - filled, '-') + "] ";
  }
  line += text;
  if (int(line.size()) > room) line.resize(room);
  return line;
}

Progress::Progress(std::uint64_t total, bool quiet)
    : total_(total),
      quiet_(quiet),
      tty_(::isatty(STDERR_FILENO)),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() {
  if (log_) std::fclose(log_);
}

void Progress::open_log(const std::string& path, bool append) {
  if (log_) std::fclose(log_);
  log_ = std::fopen(path.c_str(), append ? "a" : "w");
  if (!log_) throw Error("cannot write " + path + ": " + std::strerror(errno));
}

void Progress::log_only(const std::string& line) {
  if (!log_) return;
  std::fprintf(log_, "%s\n", line.c_str());
  std::fflush(log_);
}

void Progress::start(std::uint64_t first_step) {
  first_ = first_step;
  last_step_ = first_step;
  start_ = last_draw_ = std::chrono::steady_clock::now();
}

double Progress::steps_per_second() const {
  const double el =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return el > 0 ? double(last_step_ - std::min(first_, last_step_)) / el : 0.0;
}

void Progress::clear_bar() {
  if (bar_shown_) {
    std::fprintf(stderr, "\r\033[K");
    bar_shown_ = false;
  }
}

void Progress::update(std::uint64_t step, double fraction) {
  last_step_ = step;
  if ((quiet_ && !log_) || total_ == 0) return;
  const auto now = std::chrono::steady_clock::now();
  const double el = std::chrono::duration<double>(now - start_).count();
  // A resumed run counts its rate and ETA from the step it resumed at.
  const double done = double(step - std::min(first_, step));
  const double rate = el > 0 ? done / el : 0.0;
  const double frac = fraction >= 0 ? std::min(1.0, fraction) : double(step) / double(total_);
  const double eta = rate > 0 && fraction < 0 ? double(total_ - std::min(total_, step)) / rate
                     : frac > 0               ? el * (1.0 - frac) / frac
                                              : NAN;
  if (log_ && int(frac * 10) != log_decile_) {
    // The log gets the line a log file would get, every 10%.
    log_decile_ = int(frac * 10);
    std::fprintf(log_, "progress: %3d%%  step %llu/%llu  %.4g steps/s  ETA %s\n", log_decile_ * 10,
                 (unsigned long long)step, (unsigned long long)total_, rate, hms(eta).c_str());
    std::fflush(log_);
  }
  if (quiet_) return;
  if (tty_) {
    if (frac < 1.0 && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    // One line that fits the terminal: a wrapped line could not be redrawn in place and would
    // leave a copy behind at every redraw.
    std::fprintf(stderr, "\r\033[K%s",
                 progress_line(frac, step, total_, rate, eta, terminal_columns()).c_str());
    std::fflush(stderr);
    bar_shown_ = true;
  } else {
    const int decile = int(frac * 10);
    if (decile == last_decile_) return;
    last_decile_ = decile;
    std::fprintf(stderr, "progress: %3d%%  step %llu/%llu  %.4g steps/s  ETA %s\n", decile * 10,
                 (unsigned long long)step, (unsigned long long)total_, rate, hms(eta).c_str());
  }
}

void Progress::thermo_line(const Thermo& t, int dim) {
  (void)dim;
  char head[128], row[160];
  std::snprintf(head, sizeof head, "%10s %12s %15s %15s %15s %11s %12s", "step", "time", "kinetic",
                "potential", "total", "dE/E0", "temperature");
  std::snprintf(row, sizeof row, "%10llu %12.6g %15.8g %15.8g %15.8g %11.3e %12.6g",
                (unsigned long long)t.step, t.time, t.r.kinetic, t.r.potential, t.total,
                t.relative_drift, t.temperature);
  if (!header_done_) message(head);
  header_done_ = true;
  message(row);
}

void Progress::message(const std::string& line) {
  log_only(line);
  if (quiet_) return;
  clear_bar();
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

void Progress::finish(std::uint64_t steps_done) {
  last_step_ = steps_done;
  if (quiet_) return;
  clear_bar();
}

}  // namespace pardyn
