#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs a scenario whole, as a user does (every output), and prints `wall SECONDS` (timed from the
# shell: start-up and the last writes included) and `rate STEPS_PER_S` (the `done:` line's rate of
# stepping), then the run's closing timing breakdown. REPEAT=n runs it n times. NICE=n (root, for n
# below 0) runs each run in a session of its own with that nice value for the session's autogroup,
# as bench/shared_node.sh does: on a machine that other users share, NICE=-20 lets the run outrank
# their work (a process's own nice value only ranks it within its session).
#   PARDYN=build/bin/pardyn OUT=/tmp/x bench/numbers/example_run.sh SCENARIO [pardyn run ARGS...]
set -euo pipefail
: "${PARDYN:?the pardyn executable}" "${OUT:?scratch folder}"
scenario=$1
shift
session=()
[[ -n ${NICE:-} ]] && session=("$(cd "$(dirname "$0")/.." && pwd)/session.sh" "$NICE")
for r in $(seq "${REPEAT:-1}"); do
  t0=$(date +%s.%N)
  "${session[@]}" "$PARDYN" run "$scenario" -o "$OUT/run$r" "$@" > "$OUT/run$r.log" 2>&1 ||
    { tail -5 "$OUT/run$r.log"; exit 1; }
  t1=$(date +%s.%N)
  echo "wall $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')"
  echo "rate $(sed -n 's/^done: [0-9]* steps, \([0-9.]*\) steps\/s.*/\1/p' "$OUT/run$r.log" | tail -1)"
  sed -n '/^timing: /,/^  other /p' "$OUT/run$r/log.txt"
done
