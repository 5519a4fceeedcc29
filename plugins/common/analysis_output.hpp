// SPDX-License-Identifier: BSD-3-Clause
// What the analysis observers (rdf, msd) share: a step-count parameter (steps_param.hpp), the
// checks of their factories, and where their files go. Host code; header-only, compiled into each
// plugin.
#pragma once

#include <filesystem>
#include <string>

#include "pardyn/output.hpp"
#include "pardyn/plugin.hpp"
#include "steps_param.hpp"

namespace pardyn::plugins {

// "rdf (outputs #2)": the output as messages name it.
inline std::string output_name(const std::string& type, const ParamSet& p) {
  return type + (p.context.empty() ? std::string() : " (" + p.context + ")");
}

// The factory's checks: one rank (an analysis that needs every particle; `why` says what it
// pairs or keeps; empty: the analysis runs on several ranks), and `file` a file name (its
// default as the example).
inline void check_analysis_output(const std::string& who, const std::string& why,
                                  const RunInfo& run, const std::string& file,
                                  const std::string& example) {
  if (run.ranks > 1 && !why.empty())
    throw Error(who + ": the analysis does not run in parallel (" + why + "), and this run has " +
                std::to_string(run.ranks) +
                " ranks. Run it on one rank (without mpirun, or mpirun -np 1), or remove its "
                "[[output]] block for the parallel run; to analyse a parallel run's particles, let "
                "it write checkpoints ([[output]] type = \"checkpoint\") and resume one on one "
                "rank with this block added (pardyn run --resume FOLDER --resume-changed)");
  if (file.empty() || file.back() == '/')
    throw Error(who + ": file = \"" + file + "\" is not a file name; give one, e.g. \"" + example +
                "\"");
}

// The path of `file` for this run (relative to the output folder), its folder made; empty where
// nothing is written (no output folder, or not rank 0).
inline std::string analysis_file_path(const RunInfo& run, const std::string& file) {
  if (run.output_dir.empty() || run.rank != 0) return "";
  std::filesystem::path p(file);
  if (p.is_relative()) p = std::filesystem::path(run.output_dir) / p;
  if (p.has_parent_path()) make_directories(p.parent_path().string());
  return p.string();
}

}  // namespace pardyn::plugins
