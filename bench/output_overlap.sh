#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Step rate of a GPU run with and without frequent VTK frames: writing runs on a background thread,
# so frames should cost the stepping little as long as the writer keeps up. Frames at the first and
# last step only, every 20 steps, every 5 steps, and every 5 steps compressed with zlib (level 5)
# instead of LZ4 (docs/gpu.md).
#   bench/output_overlap.sh PARDYN [N]
set -euo pipefail
pardyn=$1
n=${2:-262144}
work=$(mktemp -d)
for interval in 0 20 5 5z; do
  # interval 0: frames only at the first and the last step; 5z: every 5 steps with zlib
  case $interval in
    0) outputs=(--set output.0.interval=100000) ;;
    5z) outputs=(--set output.0.interval=5 --set 'output.0.compressor="zlib"') ;;
    *) outputs=(--set output.0.interval=$interval) ;;
  esac
  rate=$("$pardyn" run "$(dirname "$0")/../examples/plummer/plummer.toml" -o "$work/out-$interval" \
    --set particles.0.count=$n --set simulation.steps=60 --set simulation.backend=cuda \
    "${outputs[@]}" 2>&1 | sed -n 's/^done: .* steps, \([0-9.e+]*\) steps\/s.*/\1/p')
  frames=$(ls "$work/out-$interval/frames" 2>/dev/null | wc -l)
  echo "N=$n  vtk interval ${interval/#0/none} ($frames frames): $rate steps/s"
  [ -n "$rate" ] || { echo "no rate: the run failed" >&2; exit 1; }
done
rm -rf "$work"
