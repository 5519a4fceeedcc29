#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/potentials.md#table, on the GPU: lennard_jones against the same law from a table (spline and
# linear, 1000 points in r^2), whole steps of `bench_cell_list lj --backend cuda --cells 63`
# (1,000,188 atoms, the in.lj liquid, 300 steps), float and double, ROUNDS rounds (default 3) with
# the three laws interleaved in each. Prints per run
#   PREC LAW steps S        (steps/s of the timed steps)
#   PREC LAW ratio R        (this law's steps/s over lennard_jones's in the same round)
#   BUILD=build OUT=/tmp/x [ROUNDS=3] bench/numbers/table_gpu.sh
set -euo pipefail
: "${BUILD:?the build folder of pardyn}" "${OUT:?scratch folder}"
rounds=${ROUNDS:-3}
bench="$BUILD/bin/bench_cell_list"
export TMPDIR="$OUT/tmp"  # bench_cell_list writes its scenario and table there
mkdir -p "$TMPDIR"
for round in $(seq "$rounds"); do
  for prec in float double; do
    ref=""
    for law in lennard_jones table table_linear; do
      rate=$("$bench" lj --backend cuda --cells 63 --steps 300 --precision "$prec" --law "$law" \
               2> "$OUT/err" | sed -n 's/.* \([0-9.]*\) steps\/s .*/\1/p' | tail -1) ||
        { cat "$OUT/err" >&2; exit 1; }
      [ -n "$rate" ] || { cat "$OUT/err" >&2; exit 1; }
      echo "$prec $law steps $rate"
      [ -z "$ref" ] && ref=$rate
      echo "$prec $law ratio $(awk -v a="$rate" -v b="$ref" 'BEGIN { printf "%.3f", a / b }')"
    done
  done
done
