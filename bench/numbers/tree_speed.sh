#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/tree.md's speed table on the GPU: `bench_tree speed --backend cuda` (a full leapfrog step of
# a 3D Plummer sphere with gravity or a 2D Plummer disk with log, float unless said, median of 5
# steps; the RMS force error on sampled particles against a direct sum in double) for each row,
# every output line prefixed with the row's name; then what the docs derive from the rows:
#   ecl_bh_1e6 / ecl_bh_1e7   ECL-BH's time per step (58 ms at 10^6, 740 ms at 10^7: bench/RESULTS.md,
#                             "Tree (issue 5)", the issue's reference) over the tree's at theta 0.7
#   quad_walk_cost            the walk at theta 0.5 with quadrupoles over the one with monopoles
#   build_share_1e6/1e7       the build's share of the step at theta 0.7, in per cent
#   interactions / rate       far + near interactions per step at 10^6, theta 0.7, and per second
#                             of the walk
#   BUILD=build bench/numbers/tree_speed.sh [ROWS...]   (default: every row below)
set -euo pipefail
: "${BUILD:?the build folder}"
bench="$BUILD/bin/bench_tree"
declare -A args=(
  [t6_07q]="--theta 0.7 1000000"
  [t6_05q]="--theta 0.5 1000000"
  [t6_05m]="--theta 0.5 --quadrupole 0 1000000"
  [t6_08q]="--theta 0.8 1000000"
  [t6_05q_double]="--theta 0.5 --precision double 1000000"
  [t7_07q]="--theta 0.7 --sample 200 10000000"
  [t7_05q]="--theta 0.5 --sample 200 10000000"
  [t8_07q]="--theta 0.7 --sample 100 --steps 3 100000000"
  [d6_05q]="--dim 2 --theta 0.5 1000000"
  [d6_07q]="--dim 2 --theta 0.7 1000000"
  [leaf8]="--theta 0.7 --leaf 8 1000000"
  [leaf32]="--theta 0.7 --leaf 32 1000000"
)
rows=("$@")
[ ${#rows[@]} -gt 0 ] || rows=(t6_07q t6_05q t6_05m t6_08q t6_05q_double t7_07q t7_05q d6_05q d6_07q leaf8 leaf32)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for r in "${rows[@]}"; do
  # shellcheck disable=SC2086
  "$bench" speed --backend cuda --steps 5 ${args[$r]} | sed "s/^/$r: /" | tee -a "$log"
done
python3 - "$log" <<'PY'
import re, sys
step, build, walk, far = {}, {}, {}, None
for line in open(sys.argv[1]):
    m = re.match(r"^(\w+): .* step +([0-9.]+) ms +\(build +([0-9.]+), walk +([0-9.]+)\)", line)
    if m:
        step[m[1]], build[m[1]], walk[m[1]] = float(m[2]), float(m[3]), float(m[4])
    m = re.match(r"^t6_07q: +walk: .*per target: ([0-9.]+) far nodes \+ ([0-9.]+) near", line)
    if m:
        far, near = float(m[1]), float(m[2])
if "t6_07q" in step:
    print(f"ecl_bh_1e6 {58 / step['t6_07q']:.2f}\nbuild_share_1e6 {100 * build['t6_07q'] / step['t6_07q']:.1f}")
if "t7_07q" in step:
    print(f"ecl_bh_1e7 {740 / step['t7_07q']:.2f}\nbuild_share_1e7 {100 * build['t7_07q'] / step['t7_07q']:.1f}")
if "t6_05q" in walk and "t6_05m" in walk:
    print(f"quad_walk_cost {walk['t6_05q'] / walk['t6_05m']:.2f}")
if far is not None:
    print(f"interactions {(far + near) * 1e6:.4g}\nrate {(far + near) * 1e6 / (walk['t6_07q'] / 1e3):.4g}")
PY
