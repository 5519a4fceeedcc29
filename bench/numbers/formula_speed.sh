#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/formulas.md's table: the built-in law, its `expression` form compiled and interpreted, on the
# CPU (one thread), with bench_cell_list; two rounds, the three laws interleaved in each. Prints
#   CASE LAW run SECONDS        (the benchmark's `run=` time, per round)
#   CASE LAW ratio R            (built-in time / this law's time, per round)
# and the cold compile of a formula: the whole `bench_cell_list lj --steps 1` with an empty cache
# (`cold SECONDS`) and again with the library cached (`warm SECONDS`).
#   BUILD=build OUT=/tmp/x bench/numbers/formula_speed.sh
set -euo pipefail
: "${BUILD:?the build folder of pardyn}" "${OUT:?scratch folder}"
bench="$BUILD/bin/bench_cell_list"
export PARDYN_CACHE_DIR="$OUT/cache"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
run_s() { "$bench" "$@" --backend cpu --threads 1 | sed -n 's/.* run=\([0-9.]*\) s .*/\1/p'; }
cases=("lj_float lj --cells 12 --steps 200 --precision float"
       "lj_double lj --cells 12 --steps 200 --precision double"
       "soft_gas soft_gas --side 100 --steps 100")
# the compiled libraries first, so that no timed round compiles
for c in "${cases[@]}"; do
  set -- $c; shift
  run_s "$@" --law expression --steps 1 > /dev/null
done
for round in 1 2; do
  for c in "${cases[@]}"; do
    set -- $c; name=$1; shift
    builtin=lennard_jones; [ "$name" = soft_gas ] && builtin=soft_gas
    tb=$(run_s "$@" --law "$builtin")
    echo "$name builtin run $tb"
    for law in expression interpreted; do
      t=$(run_s "$@" --law "$law")
      echo "$name $law run $t"
      echo "$name $law ratio $(ratio "$tb" "$t")"
    done
  done
done
rm -rf "$PARDYN_CACHE_DIR"
t0=$(date +%s.%N); "$bench" lj --backend cpu --threads 1 --law expression --steps 1 > /dev/null
t1=$(date +%s.%N); "$bench" lj --backend cpu --threads 1 --law expression --steps 1 > /dev/null
t2=$(date +%s.%N)
echo "cold $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
echo "warm $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", b - a }')"
