#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/parallel.md "Balance over a long run": 10^4 steps on 2 GPUs (one rank each) of
# examples/galaxy_collision/galaxy_collision_tree.toml (10^6 stars, the tree: the load balance by
# speed at work) and of examples/real_gas_2d_large (10^6, the cell list's sub-boxes), frames only at
# the ends. Prints, from the galaxies' log.txt, the balance measurements (`balance: step ...` lines):
#   galaxy measurements N mean_above P above10 K largest L at_step S redeals R undone U loop T
# and `real_gas_large loop T` (T: the step loop's seconds, log.txt's timing).
#   PARDYN=build/bin/pardyn OUT=/tmp/x bench/numbers/balance.sh
set -euo pipefail
: "${PARDYN:?the pardyn executable}" "${OUT:?scratch folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
here=$(cd "$(dirname "$0")/../.." && pwd)
mpirun=(mpirun --bind-to none -np "${RANKS:-2}")
[[ $(id -u) == 0 ]] && mpirun+=(--allow-run-as-root)
steps=${STEPS:-10000}
"${mpirun[@]}" "$PARDYN" run "$here/examples/galaxy_collision/galaxy_collision_tree.toml" -q \
  -o "$OUT/galaxy" --set simulation.steps="$steps" --set output.0.interval=1000000 "$@"
"${mpirun[@]}" "$PARDYN" run "$here/examples/real_gas_2d_large/real_gas_2d_large.toml" -q \
  -o "$OUT/real_gas_large" --set simulation.steps="$steps" --set output.2.interval=1000000 "$@"
python3 - "$OUT" <<'PY'
import os, re, sys
def loop(run):
    text = open(os.path.join(sys.argv[1], run, "log.txt")).read()
    return float(re.findall(r"timing: (\S+) s in the loop", text)[-1]), text
t, text = loop("galaxy")
m = re.findall(r"balance: step (\d+): .*?, ([0-9.]+)% above(.*)", text)
above = [float(p) for _, p, _ in m]
big = max(range(len(m)), key=lambda k: above[k])
print(f"galaxy measurements {len(m)} mean_above {sum(above) / len(above):.2f} "
      f"above10 {sum(p > 10 for p in above)} largest {above[big]:.1f} at_step {m[big][0]} "
      f"redeals {sum('re-dealt' in r for _, _, r in m)} undone {sum('undone' in r for _, _, r in m)} "
      f"loop {t:.2f}")
print(f"real_gas_large loop {loop('real_gas_large')[0]:.2f}")
PY
