// SPDX-License-Identifier: BSD-3-Clause
// Which CUDA architecture lists run on which device: plain string logic, compiled in every build
// (with and without CUDA) so that plugin checks and tests behave the same everywhere.
#include <cctype>
#include <string>

#include "pardyn/app/cuda.hpp"

namespace pardyn::cuda {

namespace {

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// One entry of a CMake CUDA_ARCHITECTURES list, e.g. "90", "90-real", "90a-virtual", "100f".
bool entry_runs_on(std::string e, int cc_major, int cc_minor) {
  e = trim(e);
  if (e.empty()) return false;
  // CMake's special values name the architectures of the build machine or every architecture the
  // toolkit knows: either way the code was meant to run here, and the driver says if it does not.
  if (e == "native" || e == "all" || e == "all-major") return true;

  bool real = true, virt = true;  // a bare number means machine code and PTX
  const std::size_t dash = e.find('-');
  if (dash != std::string::npos) {
    const std::string kind = e.substr(dash + 1);
    e = e.substr(0, dash);
    if (kind == "real") virt = false;
    else if (kind == "virtual") real = false;
    else return false;
  }
  // Optional suffix: 'a' = architecture-specific (runs only on exactly that capability),
  // 'f' = family-specific (same major, minor not above the device's).
  char suffix = 0;
  if (!e.empty() && (e.back() == 'a' || e.back() == 'f')) {
    suffix = e.back();
    e.pop_back();
  }
  if (e.empty() || e.size() > 4) return false;
  for (char c : e)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  const int value = std::stoi(e);
  const int major = value / 10, minor = value % 10;
  if (major == 0) return false;

  const bool same_major_not_newer = major == cc_major && minor <= cc_minor;
  const bool exact = major == cc_major && minor == cc_minor;
  const bool not_newer = major < cc_major || same_major_not_newer;

  if (suffix == 'a') return exact;  // neither the cubin nor the PTX of sm_XXa moves elsewhere
  if (suffix == 'f') return same_major_not_newer;
  // Machine code runs on its own major revision at an equal or higher minor; PTX is compiled by the
  // driver for any device at least as new.
  return (real && same_major_not_newer) || (virt && not_newer);
}

}  // namespace

bool archs_run_on(const std::string& archs, int cc_major, int cc_minor) {
  std::size_t start = 0;
  while (start <= archs.size()) {
    std::size_t end = archs.find_first_of(";,", start);
    if (end == std::string::npos) end = archs.size();
    if (entry_runs_on(archs.substr(start, end - start), cc_major, cc_minor)) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace pardyn::cuda
