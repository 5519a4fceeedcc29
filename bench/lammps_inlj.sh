#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The LAMMPS `in.lj` benchmark (32,000 atoms, fcc rho = 0.8442, T = 1.44, LJ rc = 2.5, skin 0.3,
# 500 steps of NVE) run by LAMMPS's fastest CPU configuration here and by pardyn (leapfrog +
# cell_list + lennard_jones on the CPU backend, both cores), one after the other, printing both speeds
# and their ratio. LAMMPS runs three ways each round and the fastest counts: `mpirun -np 2 lmp -sf
# opt` (one rank per core: the fastest on an idle machine), the same with `--mca
# mpi_yield_when_idle 1` (ranks that wait yield their core, as pardyn's OpenMP threads do: on a
# machine shared with other programs, spinning ranks lose most of their speed) and one process.
# LAMMPS is the Debian package `lammps` (apt-get install lammps).
#
#   [ROUNDS=3] [CPUS=0,1] [LMP=lmp] [WRAP=cmd] bench/lammps_inlj.sh [BUILD_DIR] [STEPS]
#
# Defaults: build, 500 steps. CPUS pins both programs to those two cores (taskset; mpirun then runs
# with --bind-to none); LMP is the LAMMPS binary; WRAP a command put before both programs (e.g. a
# bundle's library-path wrapper on another machine).
set -euo pipefail
build=${1:-build}
steps=${2:-500}
bench="$(cd "$build" && pwd)/bin/bench_cell_list"
lmp=${LMP:-lmp}
wrap=(${WRAP:-})
pin=()
[[ -n ${CPUS:-} ]] && pin=(taskset -c "$CPUS")
command -v "$lmp" >/dev/null || { echo "$lmp not found: apt-get install lammps" >&2; exit 77; }
[[ -x $bench ]] || { echo "$bench not found: build the bench_cell_list target" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/in.lj" <<LJ
units		lj
atom_style	atomic
lattice		fcc 0.8442
region		box block 0 20 0 20 0 20
create_box	1 box
create_atoms	1 box
mass		1 1.0
velocity	all create 1.44 87287 loop geom
pair_style	lj/cut 2.5
pair_coeff	1 1 1.0 1.0 2.5
neighbor	0.3 bin
neigh_modify	delay 0 every 20 check no
fix		1 all nve
run		$steps
LJ
root=()
[[ $(id -u) == 0 ]] && root=(--allow-run-as-root)
# This machine is shared: every program runs `rounds` times, interleaved, and the best run counts.
rounds=${ROUNDS:-3}
best() { sort -g | tail -1; }
lmp_runs=() ; dbl_runs=() ; flt_runs=()
for r in $(seq "$rounds"); do
  lmp_best=0
  lmp_how=""
  for how in "np 2" "np 2, yield" "serial"; do
    case $how in
      "np 2") launch=(mpirun "${root[@]}" --bind-to none -np 2) ;;
      "np 2, yield") launch=(mpirun "${root[@]}" --bind-to none --mca mpi_yield_when_idle 1 -np 2) ;;
      serial) launch=() ;;
    esac
    (cd "$work" && OMP_NUM_THREADS=1 "${pin[@]}" "${launch[@]}" \
      "${wrap[@]}" "$lmp" -sf opt -in in.lj -log none -screen "$work/lammps.out" > /dev/null)
    t=$(grep -m1 "^Loop time" "$work/lammps.out" | awk '{print $4}')
    rate=$(awk -v t="$t" -v s="$steps" 'BEGIN {printf "%.1f", s / t}')
    if awk -v a="$rate" -v b="$lmp_best" 'BEGIN { exit !(a > b) }'; then lmp_best=$rate lmp_how=$how; fi
  done
  lmp_runs+=("$lmp_best")
  for prec in double float; do
    # OMP_WAIT_POLICY: pardyn's own default (framework/src/cli/main.cpp), which this benchmark program,
    # not being pardyn, does not set itself: what a user's run gets.
    line=$(OMP_NUM_THREADS=2 OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} "${pin[@]}" "${wrap[@]}" "$bench" lj --backend cpu --precision "$prec" \
      --cells 20 --steps "$steps" --skin 0.3 --threads 2 --warmup 0)
    sps=$(sed -E 's/.* ([0-9.]+) steps\/s.*/\1/' <<< "$line")
    if [[ $prec == double ]]; then dbl_runs+=("$sps"); else flt_runs+=("$sps"); fi
  done
  echo "round $r: LAMMPS ${lmp_runs[-1]} ($lmp_how), pardyn double ${dbl_runs[-1]}, float ${flt_runs[-1]} steps/s" \
    "($(awk -v d="${dbl_runs[-1]}" -v f="${flt_runs[-1]}" -v l="${lmp_runs[-1]}" \
        'BEGIN {printf "double %.2f, float %.2f x LAMMPS", d / l, f / l}'))"
done
lmp=$(printf '%s\n' "${lmp_runs[@]}" | best)
dbl=$(printf '%s\n' "${dbl_runs[@]}" | best)
flt=$(printf '%s\n' "${flt_runs[@]}" | best)
echo "best of $rounds: LAMMPS (lmp -sf opt, its fastest way each round) $lmp steps/s"
echo "best of $rounds: pardyn double $dbl steps/s = $(awk -v a="$dbl" -v b="$lmp" 'BEGIN {printf "%.2f", a / b}') x LAMMPS"
echo "best of $rounds: pardyn float  $flt steps/s = $(awk -v a="$flt" -v b="$lmp" 'BEGIN {printf "%.2f", a / b}') x LAMMPS"
