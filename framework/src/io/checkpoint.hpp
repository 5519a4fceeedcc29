// SPDX-License-Identifier: BSD-3-Clause
// Checkpoints (docs/checkpoints.md): the whole state of a run in one HDF5 file, H5MD's layout for
// the particles, with a 512-byte user block that holds a text header and a CRC-32 of the rest, so
// that a damaged file is refused before the HDF5 library reads a byte of it. Files are written to a
// temporary name and renamed: a run killed at any moment leaves the previous checkpoint intact.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pardyn/box.hpp"
#include "pardyn/particles.hpp"

namespace pardyn::checkpoint {

constexpr int kFormat = 1;  // bump when the layout changes; readers refuse other formats

// A plugin object's saved state (StateOut / StateIn): values by name; vectors are 2·dim
// components of N values (all ranks' particles, in rank order), component-major.
struct PluginState {
  std::string type;  // the plugin's name ("ab5", "velocity_rescale")
  std::map<std::string, double> reals;
  std::map<std::string, std::int64_t> integers;
  std::map<std::string, std::vector<double>> vectors;
};

struct Data {
  // --- identity ---
  int format = kFormat;
  std::string pardyn_version, build_id;
  std::uint32_t plugin_abi = 0;
  std::string reason;  // "interval", "seconds", "end", "interrupt"
  // --- the run ---
  std::string scenario_toml;  // the resolved scenario
  std::string scenario_path, scenario_dir;
  std::string output_dir;
  int dim = 3;
  Box box;
  Precision precision = Precision::Double;
  std::string backend;  // "cpu" or "cuda"
  int threads = 1;      // OpenMP threads of a CPU run
  int ranks = 1;
  std::vector<std::uint64_t> rank_counts;  // particles of each rank, in rank order
  // --- the step ---
  std::uint64_t step = 0;
  double time = 0;
  double last_dt = 0;
  std::uint64_t force_evaluations = 0;
  std::uint64_t last_finite_step = 0;
  bool have_e0 = false;
  double e0 = 0;
  double com0[3] = {0, 0, 0};
  // --- the state ---
  HostParticles particles;  // all ranks', in rank order: x, v, a, mass, type, id, labels
  PluginState integrator;
  std::vector<PluginState> modifiers;
  // Per [[potential]]: the positions its scheme last built from (vector "built_at"), for schemes
  // that reuse their structure (a Verlet list); empty states for the others.
  std::vector<PluginState> schemes;
};

// Writes `d` to `path` atomically (temporary name, user block with the CRC, fsync, rename).
void write(const std::string& path, const Data& d);

// Reads and checks a checkpoint; every problem (missing, truncated, damaged, another format) is an
// Error naming the file and what is wrong.
Data read(const std::string& path);

// Checks the user block and the CRC only (cheap compared with read(); no HDF5 call).
void verify(const std::string& path);

// The checkpoint files of a run folder (DIR/checkpoints/checkpoint-<step>.h5), oldest first, with
// their steps.
std::vector<std::pair<std::uint64_t, std::string>> list(const std::string& run_dir);

// What `pardyn run --resume WHERE` means: WHERE is a checkpoint file, a run's output folder or its
// checkpoints folder. Returns the newest checkpoint that verifies; damaged newer ones are reported
// in `skipped` (file: reason). Throws when there is none.
std::string find(const std::string& where, std::vector<std::string>* skipped = nullptr);

// The run folder a folder names: itself, or its parent when it is a run's checkpoints folder.
std::string run_folder(const std::string& dir);

// The file name of the checkpoint of `step` in a run folder.
std::string path_for(const std::string& run_dir, std::uint64_t step);

}  // namespace pardyn::checkpoint
