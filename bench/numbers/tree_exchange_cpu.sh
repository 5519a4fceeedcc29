#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/parallel.md: the tree exchange on the CPU, 2 ranks of one thread: examples/plummer/plummer.toml
# at 2·10^5 particles, the tree (theta 0.5, quadrupoles), double, 2 steps, PARDYN_PARALLEL_STATS=1.
# Prints `loop SECONDS` (log.txt's timing) and, per rank, `around RANK SECONDS`: the exchange's work
# around the walks per evaluation (own tree, region, posting, waiting for the sources: its total
# less the walks for the others, the own walk and the sources' tree and walk).
#   PARDYN=build/bin/pardyn OUT=/tmp/x bench/numbers/tree_exchange_cpu.sh
set -euo pipefail
: "${PARDYN:?the pardyn executable}" "${OUT:?scratch folder}"
here=$(cd "$(dirname "$0")/../.." && pwd)
root=()
[[ $(id -u) == 0 ]] && root=(--allow-run-as-root)
PARDYN_PARALLEL_STATS=1 mpirun "${root[@]}" --bind-to none -np 2 "$PARDYN" run \
  "$here/examples/plummer/plummer.toml" -q -o "$OUT/run" --set simulation.backend=cpu \
  --set simulation.threads=1 --set simulation.precision=\"double\" --set simulation.steps=2 \
  --set particles.0.count=200000 \
  --set 'potential.0.scheme={ type = "tree", theta = 0.5, quadrupole = true }' > "$OUT/run.log" 2>&1 ||
  { tail -5 "$OUT/run.log"; exit 1; }
sed -n 's/.*timing: \([0-9.]*\) s in the loop.*/loop \1/p' "$OUT/run/log.txt" | tail -1
python3 - "$OUT/run.log" <<'PY'
import re, sys
for m in re.finditer(r"^rank (\d+): tree exchange .*?; (\d+) evaluations (\S+) s: (.*) s$",
                     open(sys.argv[1]).read(), re.M):
    part = {k.strip(): float(v) for k, v in re.findall(r"([a-z' ]+) ([0-9.]+)", m[4])}
    walks = part["walks for the others"] + part["own walk"] + part["sources' tree and walk"]
    print(f"around {m[1]} {(float(m[3]) - walks) / int(m[2]):.4f}")
PY
