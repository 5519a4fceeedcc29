// SPDX-License-Identifier: BSD-3-Clause
// RunInfo: what every plugin object is told about the run when it is made (dimension, precision,
// backend, box, seed, folders, ranks and communicator, a resumed run's step, the thermo columns).
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/run_info.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <cstdint>
#include <string>
#include <vector>

#include "pardyn/box.hpp"
#include "pardyn/comm.hpp"
#include "pardyn/core.hpp"

namespace pardyn {

// What every plugin object can know about the run.
struct RunInfo {
  int dim = 3;
  Precision precision = Precision::Double;
  Backend backend = Backend::Cpu;
  Box box;
  std::uint64_t seed = 1;
  std::string output_dir;    // the run's output folder (created before observers start)
  std::string scenario_dir;  // folder of the scenario file, for relative paths
  bool quiet = false;
  double end_time = 0;  // [simulation] end_time (0: none); adaptive integrators end on it
  // Parallel runs (mpirun): this process's rank and the number of ranks. Each rank's store holds
  // only the particles it owns; observers see those, and rank 0 writes the files that are one per
  // run (thermo, the .pvd series). comm is null in a serial run.
  int rank = 0;
  int ranks = 1;
  Comm* comm = nullptr;
  // A run resumed from a checkpoint (pardyn run --resume) continues after step `resume_step` at
  // time `resume_time`: observers keep what their files hold up to that step and drop the rest
  // (rows written by the run that died after its checkpoint). Fresh runs: resume = false.
  bool resume = false;
  std::uint64_t resume_step = 0;
  double resume_time = 0;
  // Filled by the framework before observers begin (empty when plugins are made):
  std::vector<std::string> potential_labels;  // one per [[potential]]: its energy column in thermo
  std::vector<std::string> extra_columns;  // thermo columns added by analyses (Observer::columns)
};

}  // namespace pardyn
