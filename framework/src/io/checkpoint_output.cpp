// SPDX-License-Identifier: BSD-3-Clause
// The checkpoint output's registration: its parameters and documentation (pardyn plugins show
// checkpoint).
#include "checkpoint_output.hpp"

#include <memory>
#include <utility>

#include "pardyn/core.hpp"
#include "pardyn/params.hpp"

namespace pardyn {

namespace {

const char* const kCheckpointDoc = R"(Writes the whole state of the run to
<output>/checkpoints/checkpoint-<step>.h5 every `interval` steps and/or every `every_seconds` of
wall-clock time, and once more when the run ends or is interrupted (SIGINT, SIGTERM: the run exits
130 or 143 after writing it). A non-finite state is never written: a run that stops on NaN names
its newest checkpoint, the last finite state saved.
`pardyn run --resume <output folder>` continues from the newest intact one, bit for bit: the same
thermo rows and the same positions as a run that never stopped (same build, backend, precision,
thread and rank count). The file is HDF5 in the H5MD layout (particles/all/position/value, ...)
with pardyn's own group /pardyn (step, time, integrator and modifier states, the scenario), after
a 512-byte header with a CRC-32 of the rest; it is written to a temporary name and renamed, so a
run killed at any moment leaves the previous checkpoint intact. Format, h5py example and what may
change on resume: docs/checkpoints.md.
Example:
  [[output]]
  type = "checkpoint"
  interval = 10000
  every_seconds = 1800
  keep = 2)";

}  // namespace

void register_builtin_outputs(Registrar& r) {
  FactoryInfo f;
  f.kind = PluginKind::Observer;
  f.name = "checkpoint";
  f.summary =
      "the whole state of the run in an HDF5 file, to resume it exactly (pardyn run --resume)";
  f.doc = kCheckpointDoc;
  f.backends = kCpu | kCuda;
  f.schema
      .integer("interval", 0,
               "write a checkpoint every this many steps (0: none by step count; the final one is "
               "written anyway)",
               0.0, double(kMaxSteps))
      .real("every_seconds", 0.0, "s (wall clock)",
            "write a checkpoint when this much wall-clock time has passed since the last one (0: "
            "none by time)",
            0.0)
      .integer("keep", 2, "how many checkpoints to keep; older ones are deleted", 1.0, 1000000.0);
  r.add(std::move(f), Factory<Observer>([](const ParamSet& p, const RunInfo&) {
          return std::unique_ptr<Observer>(
              new CheckpointOutput(std::uint64_t(p.integer("interval")), p.real("every_seconds"),
                                   std::size_t(p.integer("keep"))));
        }));
}

}  // namespace pardyn
