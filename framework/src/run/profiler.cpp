// SPDX-License-Identifier: BSD-3-Clause
// The profiler: where the loop's time goes, sampled per phase, and the closing breakdown
// (docs/performance.md).
#include "pardyn/app/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "pardyn/cuda.hpp"

namespace pardyn {

void Simulation::Timing::lap(double* bucket) {
  if (!sample) return;
  if (cuda) cuda::synchronize("timing");
  const auto now = std::chrono::steady_clock::now();
  if (bucket) *bucket += std::chrono::duration<double>(now - last).count();
  last = now;
}

void Simulation::report_timing(std::uint64_t steps) {
  if (steps == 0 || loop_seconds_ <= 0) return;
  // Observations and checkpoints are timed whenever they happen. The per-step phases: on the CPU
  // every step is timed; on the GPU the sampled steps (slowed by the synchronisations) give each
  // phase's share of the rest of the loop.
  const double loop = loop_seconds_;
  double scale = timing_.sampled ? double(steps) / double(timing_.sampled) : 0.0;
  if (timing_.cuda && timing_.sampled) {
    double per_step = timing_.neighbour + timing_.comm + timing_.integrate + timing_.modifiers;
    for (double f : timing_.force) per_step += f;
    const double rest = loop - timing_.analysis - timing_.output - timing_.checkpoint;
    scale = per_step > 0 ? std::max(0.0, rest) / per_step : 0.0;
  }
  std::vector<std::pair<std::string, double>> rows;
  for (std::size_t k = 0; k < forces_.size(); ++k)
    rows.emplace_back("force " + run_.potential_labels[k], timing_.force[k] * scale);
  rows.emplace_back("neighbour build", timing_.neighbour * scale);
  rows.emplace_back("communication", timing_.comm * scale);
  rows.emplace_back("integration", timing_.integrate * scale);
  rows.emplace_back("modifiers", timing_.modifiers * scale);
  rows.emplace_back("analysis", timing_.analysis);
  rows.emplace_back("output", timing_.output);
  rows.emplace_back("checkpoints", timing_.checkpoint);
  double sum = 0;
  for (const auto& r : rows) sum += r.second;
  rows.emplace_back("other", std::max(0.0, loop - sum));
  char line[160];
  std::snprintf(line, sizeof line, "timing: %.4g s in the loop, %llu steps%s", loop,
                (unsigned long long)steps,
                backend_.backend == Backend::Cuda
                    ? (" (GPU: each step's phases in the shares measured on " +
                       std::to_string(timing_.sampled) + " steps with the device synchronised)")
                          .c_str()
                    : "");
  progress_->message(line);
  progress_->message("  section                      seconds   % loop");
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "  %-26s %9.3f   %6.1f", r.first.c_str(), r.second,
                  100.0 * r.second / loop);
    progress_->message(line);
  }
}

}  // namespace pardyn
