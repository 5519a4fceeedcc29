#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The 2D real gas at scale: examples/real_gas_2d/real_gas_2d.toml scaled at constant density
# (N particles in a box of side 72 sqrt(N / 2500)), run whole with every output it has (thermo and
# clusters every 200 steps, VTK every 500, grid_fields), as a user runs it. Prints steps/s,
# particle-steps/s and the seconds of the loop's analyses (log.txt) per N and scheme.
#
#   bench/real_gas_scaling.sh PARDYN [SCHEMES] [N:STEPS ...]
#     PARDYN   the pardyn executable (on the GPU machine: ".gpu/run .gpu/build/bin/pardyn")
#     SCHEMES  comma-separated: cell_list (the example's: pyramid far zones, cell_size 6, near 1),
#              tree (theta 0.7, quadrupoles); default both
#     N:STEPS  particle counts and steps (default 10000:2000 100000:1000 1000000:600 10000000:200)
# Environment: OUT (output root, default /tmp/real_gas_scaling), EXTRA (more --set arguments).
set -euo pipefail
pardyn=$1
schemes=${2:-cell_list,tree}
shift $(( $# >= 2 ? 2 : 1 ))
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(10000:2000 100000:1000 1000000:600 10000000:200)
root=${OUT:-/tmp/real_gas_scaling}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root"
printf "%-10s %-10s %7s %12s %16s %11s\n" scheme N steps steps/s particle-steps/s analysis_s
for scheme in ${schemes//,/ }; do
  scen=$root/real_gas_$scheme.toml
  if [ "$scheme" = tree ]; then
    # the example with its [potential.scheme] table replaced by the tree
    awk '/^\[potential.scheme\]/{print "[potential.scheme]\ntype = \"tree\"\ntheta = 0.7"; skip=1; next}
         skip && /^(\[|$)/{skip=0} !skip' "$here/examples/real_gas_2d/real_gas_2d.toml" > "$scen"
  else
    cp "$here/examples/real_gas_2d/real_gas_2d.toml" "$scen"
  fi
  for c in "${cases[@]}"; do
    n=${c%%:*} steps=${c##*:}
    L=$(awk -v n="$n" 'BEGIN{printf "%.3f", 72 * sqrt(n / 2500)}')
    log=$root/$scheme-$n.log
    # shellcheck disable=SC2086
    $pardyn run "$scen" --set particles.0.count="$n" --set "box.hi=[$L, $L]" \
      --set simulation.steps="$steps" -o "$root/$scheme-$n" ${EXTRA:-} > "$log" 2>&1 || {
      echo "$scheme N=$n failed:"; tail -5 "$log"; continue; }
    rate=$(sed -n 's/^done: [0-9]* steps, \([0-9.]*\) steps\/s.*/\1/p' "$log" | tail -1)
    # the seconds of the loop's "analysis" section (log.txt's timing: clusters and thermo's sums)
    analysis=$(awk '$1 == "analysis" { print $2 }' "$root/$scheme-$n/log.txt" | tail -1)
    printf "%-10s %-10s %7s %12s %16s %11s\n" "$scheme" "$n" "$steps" "$rate" \
      "$(awk -v r="$rate" -v n="$n" 'BEGIN{printf "%.3g", r * n}')" "${analysis:--}"
  done
done
