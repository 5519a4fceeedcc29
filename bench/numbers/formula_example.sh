#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# examples/formula_law/README.md: the example (the real gas with soft_gas written as an `expression`)
# against the same scenario with the built-in `soft_gas` (attraction = 0.003, the other defaults),
# both in float on one thread of the CPU backend, two rounds with the laws interleaved. Prints per
# run `rate LAW STEPS_PER_S`, per round `ratio EXPRESSION/SOFT_GAS`, and per law, from the last round, `row LAW STEP potential P largest F`
# at steps 0, 1000 and 3000 (t = 0, 2, 6).
#   PARDYN=build/bin/pardyn OUT=/tmp/x bench/numbers/formula_example.sh
set -euo pipefail
: "${PARDYN:?the pardyn executable}" "${OUT:?scratch folder}"
here=$(cd "$(dirname "$0")/../.." && pwd)
example="$here/examples/formula_law/real_gas_formula.toml"
python3 - "$example" "$OUT/soft_gas.toml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
# the expression law's lines, from its type to its long_range, become the built-in law
new, n = re.subn(r'type = "expression"\n(?:.*\n)*?long_range = .*\n',
                 'type = "soft_gas"\nattraction = 0.003\n', text)
if n != 1:
    sys.exit("formula_example.sh: the example's expression law was not found")
open(sys.argv[2], "w").write(new)
PY
cp "$example" "$OUT/expression.toml"
for r in 1 2; do
  for law in expression soft_gas; do
    "$PARDYN" run "$OUT/$law.toml" -q -o "$OUT/$law" --set simulation.threads=1 \
      --set simulation.backend=cpu
    sed -n "s/^done: [0-9]* steps, \([0-9.]*\) steps\/s.*/rate $law \1/p" "$OUT/$law/log.txt" |
      tee "$OUT/rate_$law"
  done
  awk '{ r[$2] = $3 } END { printf "ratio %.4f\n", r["expression"] / r["soft_gas"] }' \
    "$OUT/rate_expression" "$OUT/rate_soft_gas"
done
for law in expression soft_gas; do
  for s in 0 1000 3000; do
    "$here/bench/numbers/csv_row.py" "$OUT/$law/thermo.csv" $s |
      awk -v law=$law -v s=$s '$1 == "potential" { p = $2 } $1 == "largest_cluster_fraction" { f = $2 }
                                END { print "row", law, s, "potential", p, "largest", f }'
  done
done
