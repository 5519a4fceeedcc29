#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What the analysis and trajectory outputs cost a run: the 3D LJ liquid of docs/lammps.md (in.lj's
# state, rho = 0.8442, T = 1.44) scaled to N particles, run for STEPS steps with thermo alone, then
# with rdf, msd, xyz or lammps_dump added at INTERVAL. Prints the loop's steps/s of each run
# (from log.txt) and the cost per analysis in ms.
#   bench/analysis_cost.sh PARDYN [CELLS] [STEPS] [INTERVAL] [BACKEND]
# CELLS fcc cells per side (N = 4 CELLS^3; default 63: 1,000,188 particles).
set -euo pipefail
pardyn=${1:?usage: bench/analysis_cost.sh PARDYN [CELLS] [STEPS] [INTERVAL] [BACKEND]}
cells=${2:-63}
steps=${3:-1000}
interval=${4:-100}
backend=${5:-cuda}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
side=$(awk -v c="$cells" 'BEGIN { printf "%.8f", c * (4 / 0.8442) ^ (1 / 3) }')
half=$(awk -v s="$side" 'BEGIN { m = s / 2; if (m > 4) m = 4; printf "%.4f", int(m * 1e4) / 1e4 }')  # rounded down: r_max <= side / 2
base() {
  cat <<EOT
[simulation]
dimension = 3
steps = $steps
backend = "$backend"
seed = 87287
progress_interval = $steps
[box]
lo = [0.0, 0.0, 0.0]
hi = [$side, $side, $side]
boundary = "periodic"
[[particles]]
generator = "lattice"
kind = "fcc"
density = 0.8442
temperature = 1.44
[[potential]]
type = "lennard_jones"
rcut = 2.5
shift = false
scheme = { type = "cell_list", skin = 0.3 }
[integrator]
type = "leapfrog"
dt = 0.005
[[output]]
type = "thermo"
interval = $steps
EOT
}
rate() { sed -n 's/.*done: [0-9]* steps, \([0-9.e+]*\) steps\/s.*/\1/p' "$1/log.txt" | tail -1; }
echo "LJ 3D, $((4 * cells * cells * cells)) particles, $steps steps, $backend, analyses every $interval steps"
base > "$work/none.toml"
"$pardyn" run "$work/none.toml" -o "$work/none" -q
r0=$(rate "$work/none")
printf "%-12s %10s steps/s\n" none "$r0"
for out in rdf msd xyz lammps_dump; do
  {
    base
    echo "[[output]]"
    echo "type = \"$out\""
    echo "interval = $interval"
    [ "$out" = rdf ] && echo "r_max = $half" && echo "bins = 200"
    true
  } > "$work/$out.toml"
  "$pardyn" run "$work/$out.toml" -o "$work/$out" -q
  r=$(rate "$work/$out")
  awk -v name="$out" -v r="$r" -v r0="$r0" -v steps="$steps" -v iv="$interval" 'BEGIN {
    n = int(steps / iv) + 1
    printf "%-12s %10s steps/s   %.2f ms per analysis (%d analyses)\n", name, r, 1000 * (steps / r - steps / r0) / n, n }'
  rm -rf "$work/$out"
done
