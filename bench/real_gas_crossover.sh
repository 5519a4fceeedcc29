#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Where all_pairs stops being the fastest scheme for the 2D real gas (the rule pardyn applies when a
# law with a short-range part has no scheme: config.cpp, docs/real-gas.md "Choosing the scheme").
# The default example scaled at constant density, thermo only, all_pairs against cell_list.
#   bench/real_gas_crossover.sh PARDYN [STEPS] [N ...]
#     PARDYN  the pardyn executable (on the GPU machine: ".gpu/run .gpu/build/bin/pardyn")
#     STEPS   default 3000;  N  default 1000 2500 4096 8192 16384 32768
#   BACKEND=cpu (or cuda) sets [simulation] backend (default: the example's, auto)
set -euo pipefail
pardyn=$1
steps=${2:-3000}
shift $(( $# >= 2 ? 2 : 1 ))
ns=("$@")
[ ${#ns[@]} -gt 0 ] || ns=(1000 2500 4096 8192 16384 32768)
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for sch in all_pairs cell_list; do
  # the example without its vtk, clusters and grid_fields outputs, with this scheme
  awk 'BEGIN{RS="";ORS="\n\n"} !/type = "(vtk|clusters|grid_fields)"/' \
    "$here/examples/real_gas_2d/real_gas_2d.toml" |
    awk -v s="$sch" '/^\[potential.scheme\]/{print "[potential.scheme]\ntype = \"" s "\""; skip=1; next}
                     skip && /^(\[|$)/{skip=0} !skip' > "$tmp/$sch.toml"
done
printf "%-8s %12s %12s\n" N all_pairs cell_list
for n in "${ns[@]}"; do
  L=$(awk -v n="$n" 'BEGIN{printf "%.3f", 72 * sqrt(n / 2500)}')
  row="$n"
  for sch in all_pairs cell_list; do
    # shellcheck disable=SC2086
    r=$($pardyn run "$tmp/$sch.toml" --set particles.0.count="$n" --set "box.hi=[$L, $L]" \
          --set simulation.steps="$steps" ${BACKEND:+--set simulation.backend=$BACKEND} \
          -o "$tmp/out" 2>&1 |
        sed -n 's/^done: [0-9]* steps, \([0-9.]*\) steps\/s.*/\1/p')
    row="$row $r"
  done
  printf "%-8s %12s %12s\n" $row
done
