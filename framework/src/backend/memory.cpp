// SPDX-License-Identifier: BSD-3-Clause
#include "pardyn/app/memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "pardyn/core.hpp"

namespace pardyn {

namespace {

// A number of bytes from a file holding one ("max" or nothing: unlimited).
bool read_bytes(const std::string& path, double& out) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return false;
  try {
    out = std::stod(word);
  } catch (const std::exception&) {
    return false;
  }
  return out >= 0;
}

// The memory controller's limit less what the group uses: cgroup v2 (the group this process is in,
// seen from its own namespace), else cgroup v1.
double cgroup_available() {
  double best = std::numeric_limits<double>::infinity();
  std::string group;
  std::ifstream cg("/proc/self/cgroup");
  for (std::string line; std::getline(cg, line);)
    if (line.rfind("0::", 0) == 0) group = line.substr(3);
  for (const std::string& dir : {"/sys/fs/cgroup" + group, std::string("/sys/fs/cgroup")}) {
    double max = 0, current = 0;
    if (read_bytes(dir + "/memory.max", max) && read_bytes(dir + "/memory.current", current))
      best = std::min(best, std::max(0.0, max - current));
  }
  double max = 0, used = 0;
  if (read_bytes("/sys/fs/cgroup/memory/memory.limit_in_bytes", max) && max < 1e18 &&
      read_bytes("/sys/fs/cgroup/memory/memory.usage_in_bytes", used))
    best = std::min(best, std::max(0.0, max - used));
  return best;
}

}  // namespace

std::size_t host_memory_available() {
  double avail = std::numeric_limits<double>::infinity();
  std::ifstream mi("/proc/meminfo");
  for (std::string line; std::getline(mi, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream is(line.substr(13));
    double kib = 0;
    if (is >> kib) avail = kib * 1024.0;
  }
  avail = std::min(avail, cgroup_available());
  // ulimit -v: the limit less the address space already mapped.
  rlimit rl{};
  if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    double pages = 0;
    std::ifstream statm("/proc/self/statm");
    statm >> pages;
    const double mapped = pages * double(::sysconf(_SC_PAGESIZE));
    avail = std::min(avail, std::max(0.0, double(rl.rlim_cur) - mapped));
  }
  if (avail == std::numeric_limits<double>::infinity()) return 0;
  return std::size_t(std::min(avail, 1.8e19));
}

std::string bytes_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) bytes /= 1024, ++u;
  char b[48];
  std::snprintf(b, sizeof b, u == 0 ? "%.0f %s" : "%.3g %s", bytes, units[u]);
  return b;
}

void require_host_memory(double bytes, const std::string& what, const std::string& advice) {
  const std::size_t avail = host_memory_available();
  if (avail == 0 || bytes <= double(avail)) return;
  throw Error(what + " at least " + bytes_text(bytes) + " of host memory; " +
              bytes_text(double(avail)) + " is available: " + advice);
}

}  // namespace pardyn
