#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/real-gas.md "At scale" and README.md: the real gas example scaled at constant density, whole
# runs with every output (bench/real_gas_scaling.sh), cell_list and the tree: 10^6 three times with
# the cell list and once with the tree, 10^4, 10^5 and 10^7 once each; then what the docs derive:
#   cost_ratio SCHEME R       cost per particle-step at 10^7 over that at 10^6 (the median 10^6 run)
#   analysis_1e7 MS SHARE     the cell_list run at 10^7: ms per analysis (1000 steps, an analysis
#                             every 200: 6 with step 0's) and its share of the step time, in per
#                             cent, when run every 200 steps
#   PARDYN=build/bin/pardyn OUT=/tmp/x bench/numbers/real_gas_at_scale.sh
set -euo pipefail
: "${PARDYN:?the pardyn executable}" "${OUT:?scratch folder}"
here=$(cd "$(dirname "$0")/.." && pwd)
log="$OUT/at_scale.txt"
: > "$log"
for r in 1 2 3; do "$here/real_gas_scaling.sh" "$PARDYN" cell_list 1000000:1000 | tee -a "$log"; done
"$here/real_gas_scaling.sh" "$PARDYN" tree 1000000:1000 | tee -a "$log"
"$here/real_gas_scaling.sh" "$PARDYN" cell_list,tree 10000:4000 100000:2000 10000000:1000 | tee -a "$log"
python3 - "$log" <<'PY'
import re, statistics, sys
rate, analysis = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r"^(cell_list|tree)\s+(\d+)\s+(\d+)\s+([0-9.]+)\s+\S+\s+(\S+)", line)
    if m:
        rate.setdefault((m[1], int(m[2])), []).append(float(m[4]))
        analysis[m[1], int(m[2]), int(m[3])] = m[5]
for s in ("cell_list", "tree"):
    r6, r7 = statistics.median(rate[s, 10**6]), rate[s, 10**7][-1]
    print(f"cost_ratio {s} {(r6 * 1e6) / (r7 * 1e7):.3f}")
a = float(analysis["cell_list", 10**7, 1000]) / 6
print(f"analysis_1e7 {1e3 * a:.1f} {100 * a / (200 / rate['cell_list', 10**7][-1]):.2f}")
PY
