#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# examples/galaxy_collision/galaxy_collision_tree.toml run whole (bench/numbers/example_run.sh:
# `wall`, `rate`, the timing), then its frames (`frames N of MB MB`, the mean size) and its energy
# drift (`drift_t6 X`: |relative_drift| of the thermo row nearest t = 6, the closest passage;
# `drift_end Y`: at the end). Arguments go to `pardyn run`.
#   PARDYN=build/bin/pardyn OUT=/tmp/x bench/numbers/galaxy_tree.sh [ARGS...]
set -euo pipefail
: "${PARDYN:?the pardyn executable}" "${OUT:?scratch folder}"
here=$(cd "$(dirname "$0")" && pwd)
"$here/example_run.sh" "$here/../../examples/galaxy_collision/galaxy_collision_tree.toml" "$@"
python3 - "$OUT/run1" <<'PY'
import csv, glob, os, sys
frames = glob.glob(os.path.join(sys.argv[1], "frames", "*.vtp"))
print(f"frames {len(frames)} of {sum(os.path.getsize(f) for f in frames) / len(frames) / 1e6:.1f} MB")
rows = list(csv.DictReader(open(os.path.join(sys.argv[1], "thermo.csv"))))
drift = lambda r: abs(float(r["relative_drift"]))
print(f"drift_t6 {drift(min(rows, key=lambda r: abs(float(r['time']) - 6))):.3g}")
print(f"drift_end {drift(rows[-1]):.3g}")
PY
