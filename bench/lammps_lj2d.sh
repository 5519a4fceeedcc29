#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A 2D Lennard-Jones liquid, LAMMPS against pardyn on the CPU, interleaved (issue 13, item 6):
# 10,000 atoms on a square lattice at rho = 0.7 melted at T = 1 (periodic), LJ rc = 2.5, skin 0.3,
# dt = 0.005, a global velocity-scaling thermostat at T = 1, tau 0.5 (pardyn: velocity_rescale,
# Bussi's; LAMMPS: temp/berendsen, the same cost: Debian's LAMMPS lacks EXTRA-FIX's temp/csvr),
# thermo every 10 steps, in double. LAMMPS runs as its fastest CPU configuration here
# (`mpirun -np 2 lmp -sf opt`, one rank per core), pardyn as `pardyn run` on both cores. LAMMPS is
# the Debian package `lammps` (apt-get install lammps). NICE=n (root, for n below 0) runs each
# program in a session of its own with that nice value for the session's autogroup (as
# bench/shared_node.sh does), so that on a shared machine NICE=-20 outranks the other users' work.
#
#   [ROUNDS=3] [LMP=lmp] [NICE=n] bench/lammps_lj2d.sh [BUILD_DIR] [STEPS]
set -euo pipefail
build=${1:-build}
steps=${2:-2000}
pardyn="$(cd "$build" && pwd)/bin/pardyn"
lmp=${LMP:-lmp}
command -v "$lmp" >/dev/null || { echo "$lmp not found: apt-get install lammps" >&2; exit 77; }
[[ -x $pardyn ]] || { echo "$pardyn not found: build first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/in.lj2d" <<LJ
units		lj
dimension	2
atom_style	atomic
lattice		sq 0.7
region		box block 0 100 0 100 -0.5 0.5
create_box	1 box
create_atoms	1 box
mass		1 1.0
velocity	all create 1.0 87287 loop geom
pair_style	lj/cut 2.5
pair_coeff	1 1 1.0 1.0 2.5
neighbor	0.3 bin
neigh_modify	delay 0 every 1 check yes
fix		1 all nve
fix		2 all temp/berendsen 1.0 1.0 0.5
fix		3 all enforce2d
timestep	0.005
thermo		10
run		$steps
LJ
side=$(awk 'BEGIN{printf "%.12g", 100 / sqrt(0.7)}')
cat > "$work/lj2d.toml" <<TOML
[simulation]
dimension = 2
precision = "double"
backend = "cpu"
steps = $steps
seed = 87287
[box]
lo = [0.0, 0.0]
hi = [$side, $side]
boundary = "periodic"
[[particles]]
generator = "lattice"
kind = "square"
density = 0.7
temperature = 1.0
[[potential]]
type = "lennard_jones"
epsilon = 1.0
sigma = 1.0
rcut = 2.5
shift = false
scheme = { type = "cell_list", skin = 0.3 }
[integrator]
type = "leapfrog"
dt = 0.005
[[modifier]]
type = "velocity_rescale"
temperature = 1.0
tau = 0.5
[[output]]
type = "thermo"
interval = 10
TOML
root=()
[[ $(id -u) == 0 ]] && root=(--allow-run-as-root)
rounds=${ROUNDS:-3}
session=()
[[ -n ${NICE:-} ]] && session=("$(cd "$(dirname "$0")" && pwd)/session.sh" "$NICE")
for r in $(seq "$rounds"); do
  (cd "$work" && OMP_NUM_THREADS=1 "${session[@]}" mpirun "${root[@]}" --bind-to none -np 2 \
    "$lmp" -sf opt -in in.lj2d -log none -screen "$work/lammps.out" > /dev/null)
  t=$(grep -m1 "^Loop time" "$work/lammps.out" | awk '{print $4}')
  l=$(awk -v t="$t" -v s="$steps" 'BEGIN {printf "%.1f", s / t}')
  p=$("${session[@]}" "$pardyn" run "$work/lj2d.toml" -o "$work/out" 2>&1 |
      sed -n 's/^done: [0-9]* steps, \([0-9.]*\) steps\/s.*/\1/p')
  echo "round $r: LAMMPS $l steps/s, pardyn double $p steps/s, ratio $(awk -v a="$p" -v b="$l" 'BEGIN{printf "%.2f", a / b}')"
  lbest=$(awk -v a="$l" -v b="${lbest:-0}" 'BEGIN {print (a > b ? a : b)}')
  pbest=$(awk -v a="$p" -v b="${pbest:-0}" 'BEGIN {print (a > b ? a : b)}')
done
echo "best of $rounds: LAMMPS $lbest steps/s, pardyn double $pbest steps/s = $(awk -v a="$pbest" -v b="$lbest" 'BEGIN{printf "%.2f", a / b}') x LAMMPS"
