#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/parallel.md: the tree exchange on the CPU, 2 ranks of one thread: examples/plummer/plummer.toml
# at 2·10^5 particles, the tree (theta 0.5, quadrupoles), double, 2 steps, PARDYN_PARALLEL_STATS=1.
# Prints `loop SECONDS` (log.txt's timing) and, per rank, `around RANK SECONDS`: the exchange's own
# work around the walks per evaluation (its own tree, the region, the walks for the other rank, the
# posting; not the own walk and the sources' tree and walk, nor the wait for the other rank, which
# on a busy machine is the other rank's delay). REPEAT runs (default 2).
#   PARDYN=build/bin/pardyn OUT=/tmp/x bench/numbers/tree_exchange_cpu.sh
set -euo pipefail
: "${PARDYN:?the pardyn executable}" "${OUT:?scratch folder}"
here=$(cd "$(dirname "$0")/../.." && pwd)
root=()
[[ $(id -u) == 0 ]] && root=(--allow-run-as-root)
for r in $(seq "${REPEAT:-2}"); do
  PARDYN_PARALLEL_STATS=1 mpirun "${root[@]}" --bind-to none -np 2 "$PARDYN" run \
    "$here/examples/plummer/plummer.toml" -q -o "$OUT/run$r" --set simulation.backend=cpu \
    --set simulation.threads=1 --set simulation.precision=\"double\" --set simulation.steps=2 \
    --set particles.0.count=200000 \
    --set 'potential.0.scheme={ type = "tree", theta = 0.5, quadrupole = true }' \
    > "$OUT/run$r.log" 2>&1 || { tail -5 "$OUT/run$r.log"; exit 1; }
  sed -n 's/.*timing: \([0-9.]*\) s in the loop.*/loop \1/p' "$OUT/run$r/log.txt" | tail -1
  python3 - "$OUT/run$r.log" <<'PY'
import re, sys
for m in re.finditer(r"^rank (\d+): tree exchange .*?; (\d+) evaluations (\S+) s: (.*) s$",
                     open(sys.argv[1]).read(), re.M):
    part = {k.strip(): float(v) for k, v in re.findall(r"([a-z' ]+) ([0-9.]+)", m[4])}
    own = sum(part[k] for k in ("own tree", "region", "walks for the others", "posting"))
    print(f"around {m[1]} {own / int(m[2]):.4f}")
PY
done
