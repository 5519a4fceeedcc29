#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What checkpoints cost: examples/real_gas_2d/real_gas_2d.toml scaled to N particles at constant
# density (as bench/real_gas_scaling.sh), run whole with every output, once without and once with a
# checkpoint every INTERVAL steps; then the newest checkpoint is verified (`pardyn checkpoint`) and
# the run resumed from it. Prints the seconds per checkpoint, its size, and the time to verify and
# to resume.
#
#   bench/checkpoint_cost.sh PARDYN [N] [STEPS] [INTERVAL]
#     PARDYN    the pardyn executable (on the GPU machine: ".gpu/run .gpu/build/bin/pardyn")
#     N         particles (default 1000000), STEPS (default 1000), INTERVAL (default 100)
# Environment: OUT (output root, default /tmp/checkpoint_cost), EXTRA (more --set arguments).
set -euo pipefail
pardyn=$1
n=${2:-1000000}
steps=${3:-1000}
interval=${4:-100}
root=${OUT:-/tmp/checkpoint_cost}
here=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$root"
mkdir -p "$root"
L=$(awk -v n="$n" 'BEGIN{printf "%.3f", 72 * sqrt(n / 2500)}')
cp "$here/examples/real_gas_2d/real_gas_2d.toml" "$root/plain.toml"
{ cat "$root/plain.toml"; printf '\n[[output]]\ntype = "checkpoint"\ninterval = %s\nkeep = 2\n' "$interval"; } \
  > "$root/checkpointed.toml"
now() { date +%s.%N; }
run() {  # name scenario: prints the wall seconds of the whole run
  local t0 t1
  t0=$(now)
  # shellcheck disable=SC2086
  $pardyn run "$root/$2.toml" --set particles.0.count="$n" --set "box.hi=[$L, $L]" \
    --set simulation.steps="$steps" -o "$root/$1" -q ${EXTRA:-} > "$root/$1.log" 2>&1 ||
    { echo "$1 failed:" >&2; tail -5 "$root/$1.log" >&2; exit 1; }
  t1=$(now)
  awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}'
}
plain=$(run plain plain)
ckpt=$(run checkpointed checkpointed)
count=$(( steps / interval ))  # the last one is the final checkpoint
file=$(ls "$root"/checkpointed/checkpoints/checkpoint-*.h5 | tail -n 1)
bytes=$(stat -c %s "$file")
t0=$(now)
$pardyn checkpoint "$file" > "$root/verify.log"
t1=$(now)
verify=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}')
t0=$(now)
# shellcheck disable=SC2086
$pardyn run --resume "$root/checkpointed" --set simulation.steps=$((steps + 1)) -q ${EXTRA:-} \
  > "$root/resume.log" 2>&1 || { echo "resume failed:" >&2; tail -5 "$root/resume.log" >&2; exit 1; }
t1=$(now)
resume=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}')
echo "N = $n, $steps steps, a checkpoint every $interval steps ($count in all)"
echo "run without checkpoints: $plain s; with: $ckpt s"
awk -v a="$plain" -v b="$ckpt" -v c="$count" -v s="$bytes" 'BEGIN{
  printf "per checkpoint: %.3f s, %.1f MB (%.1f bytes per particle)\n", (b - a) / c, s / 1e6, s / '"$n"' }'
echo "verify one (pardyn checkpoint, CRC and read): $verify s"
echo "resume and run 1 step (whole command): $resume s"
