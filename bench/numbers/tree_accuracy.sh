#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/tree.md's accuracy table on the GPU (`bench_tree accuracy --backend cuda 200000`: the tree in
# double against all_pairs in double, a 3D Plummer sphere with gravity and a 2D Plummer disk with
# log, theta 0.3 ... 1.0, monopoles and quadrupoles, and plain Barnes-Hut at theta 0.5), then what the
# docs derive from it:
#   quad_gain SYSTEM THETA R   RMS error with monopoles over the one with quadrupoles
#   theta_gain_2d R            the 2D disk's RMS error at theta 0.6 over theta 0.3, quadrupoles
#                              (examples/log_tree_2d runs at 0.6)
#   mono_loss_2d R             the 2D disk at theta 0.6: monopoles' RMS error over quadrupoles'
#   BUILD=build bench/numbers/tree_accuracy.sh
set -euo pipefail
: "${BUILD:?the build folder}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$BUILD/bin/bench_tree" accuracy --backend cuda 200000 | tee "$log"
python3 - "$log" <<'PY'
import re, sys
rms = {}
for line in open(sys.argv[1]):
    m = re.match(r"^(3D|2D) .*?\s+([0-9.]+)\s+(mono|quad)\s+(\S+)\s+\S+\s+\S+\s*$", line)
    if m:
        rms[m[1], float(m[2]), m[3]] = float(m[4])
for (dim, theta, multi), r in sorted(rms.items()):
    if multi == "mono" and (dim, theta, "quad") in rms:
        print(f"quad_gain {dim} {theta:.2f} {r / rms[dim, theta, 'quad']:.3f}")
print(f"theta_gain_2d {rms['2D', 0.6, 'quad'] / rms['2D', 0.3, 'quad']:.3f}")
print(f"mono_loss_2d {rms['2D', 0.6, 'mono'] / rms['2D', 0.6, 'quad']:.3f}")
PY
