#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The numbers README.md and the examples' READMEs quote, measured in one go on the machine at hand
# (run it on the GPU machine to refresh the H100 numbers): every example as a user runs it, whole,
# with its outputs, timed from the shell; the 2D real gas at 10^6 and 10^7; what a checkpoint costs;
# all-pairs gravity's interaction rate and memory per particle, and the tree's step time and memory,
# when their benchmark programs are given.
#
#   bench/doc_numbers.sh PARDYN
#     PARDYN   the pardyn executable (on the GPU machine: ".gpu/run .gpu/build/bin/pardyn")
# Environment: OUT (output root, default /tmp/doc_numbers), QUICK=1 (skip the 10^7 real gas and the
# 50,000-step large example), ALL_PAIRS (the bench_all_pairs_cuda command), TREE (bench_tree).
set -euo pipefail
pardyn=$1
all_pairs=${ALL_PAIRS:-}
tree=${TREE:-}
root=${OUT:-/tmp/doc_numbers}
here=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$root"
mkdir -p "$root"
now() { date +%s.%N; }

# example NAME SCENARIO [ARGS...]: runs it whole, prints wall seconds and the `done:` line's rate.
example() {
  local name=$1 scen=$2 t0 t1 rate
  shift 2
  t0=$(now)
  # shellcheck disable=SC2086
  $pardyn run "$here/$scen" -o "$root/$name" "$@" > "$root/$name.log" 2>&1 ||
    { echo "$name failed:"; tail -5 "$root/$name.log"; return 0; }
  t1=$(now)
  rate=$(sed -n 's/^done: [0-9]* steps, \([0-9.]*\) steps\/s.*/\1/p' "$root/$name.log" | tail -1)
  printf "%-28s %9.2f s wall  %10s steps/s (stepping)\n" "$name" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b - a}')" "$rate"
}

echo "== examples, whole runs with their outputs"
example real_gas_2d examples/real_gas_2d/real_gas_2d.toml
example log_tree_2d examples/log_tree_2d/log_tree_2d.toml
example galaxy_collision_tree examples/galaxy_collision/galaxy_collision_tree.toml
example plummer examples/plummer/plummer.toml
[ "${QUICK:-0}" = 1 ] || example real_gas_2d_large examples/real_gas_2d_large/real_gas_2d_large.toml

echo "== the 2D real gas at scale (bench/real_gas_scaling.sh)"
if [ "${QUICK:-0}" = 1 ]; then
  OUT=$root/scaling bash "$here/bench/real_gas_scaling.sh" "$pardyn" cell_list,tree 1000000:1000
else
  OUT=$root/scaling bash "$here/bench/real_gas_scaling.sh" "$pardyn" cell_list,tree 1000000:1000 10000000:1000
fi

echo "== checkpoints (bench/checkpoint_cost.sh, 10^6 particles)"
OUT=$root/checkpoint bash "$here/bench/checkpoint_cost.sh" "$pardyn" 1000000 1000 100

if [ -n "$all_pairs" ]; then
  echo "== all-pairs gravity, 3D float"
  $all_pairs 1048576 2>&1 | grep -v "(CPU" | tail -6
  $all_pairs --memory 100000000 2>&1 | tail -2
fi
if [ -n "$tree" ]; then
  echo "== tree, 3D gravity, float, theta 0.7, quadrupoles"
  for n in 1000000 10000000; do $tree speed --backend cuda --theta 0.7 "$n" 2>&1 | tail -6; done
fi
