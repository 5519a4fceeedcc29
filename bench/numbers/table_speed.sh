#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/potentials.md#table: lennard_jones against the same law from a table (style spline and
# linear, 1000 points in r^2) on the CPU, one thread: `bench_cell_list lj --cells 12` (6,912 atoms,
# the in.lj liquid, STEPS steps, default 400), float and double, ROUNDS rounds (default 7) with the
# three laws interleaved in each. Per run it prints
#   PREC LAW loop SECONDS   (the benchmark's `loop=`: the steps' wall time)
#   PREC LAW cpu SECONDS    (its `cpu=`: the run's CPU time; on a VM shared with other jobs it
#                            moves less than the wall time)
#   PREC LAW ratio R        (lennard_jones's cpu in the same round / this law's)
# and at the end, per law, the least CPU time of the rounds (other jobs only ever add to it) and
# lennard_jones's least over it:
#   PREC LAW best_cpu SECONDS
#   PREC LAW best_ratio R
#   BUILD=build OUT=/tmp/x [ROUNDS=7] [STEPS=400] bench/numbers/table_speed.sh
set -euo pipefail
: "${BUILD:?the build folder of pardyn}" "${OUT:?scratch folder}"
rounds=${ROUNDS:-7} steps=${STEPS:-400}
bench="$BUILD/bin/bench_cell_list"
# bench_cell_list writes its scenario and table under $TMPDIR: one of our own.
export TMPDIR="$OUT/tmp"
mkdir -p "$TMPDIR"
: > "$OUT/runs"
for round in $(seq "$rounds"); do
  for prec in float double; do
    ref=""
    for law in lennard_jones table table_linear; do
      line=$("$bench" lj --backend cpu --threads 1 --cells 12 --steps "$steps" --precision "$prec" \
               --law "$law" 2> "$OUT/err") || { cat "$OUT/err" >&2; exit 1; }
      echo "$prec $law loop $(sed -n 's/.* loop=\([0-9.]*\) s .*/\1/p' <<< "$line")"
      cpu=$(sed -n 's/.* cpu=\([0-9.]*\) s .*/\1/p' <<< "$line")
      echo "$prec $law cpu $cpu"
      [ -z "$ref" ] && ref=$cpu
      echo "$prec $law ratio $(awk -v a="$ref" -v b="$cpu" 'BEGIN { printf "%.3f", a / b }')"
      echo "$prec $law $cpu" >> "$OUT/runs"
    done
  done
done
awk '!($1 SUBSEP $2 in best) || $3 < best[$1, $2] { best[$1, $2] = $3 }
     END { for (p = 1; p <= 2; ++p) for (l = 1; l <= 3; ++l) {
             split("float double", P, " "); split("lennard_jones table table_linear", L, " ")
             printf "%s %s best_cpu %.4f\n", P[p], L[l], best[P[p], L[l]]
             printf "%s %s best_ratio %.3f\n", P[p], L[l], best[P[p], "lennard_jones"] / best[P[p], L[l]] } }' \
  "$OUT/runs"
