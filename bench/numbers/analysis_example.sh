#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/analysis.md's example (the LJ liquid near its triple point, the scenario of the page's
# runnable block, taken from the page itself) on the CPU backend with 2 threads: prints
# `peak r R g G` (the thermo columns rdf_peak_r, rdf_peak_g at the last step) and `msd slope S D D`
# (the msd's slope from t = 10, the rdf's start, to the end, and D = slope / 6).
#   PARDYN=build/bin/pardyn OUT=/tmp/x bench/numbers/analysis_example.sh
set -euo pipefail
: "${PARDYN:?the pardyn executable}" "${OUT:?scratch folder}"
here=$(cd "$(dirname "$0")/../.." && pwd)
sed -n "/^cat > lj_rdf.toml <<'EOF'/,/^EOF/p" "$here/docs/analysis.md" | sed '1d;$d' > "$OUT/lj_rdf.toml"
[[ -s $OUT/lj_rdf.toml ]] || { echo "docs/analysis.md: no lj_rdf.toml block" >&2; exit 1; }
"$PARDYN" run "$OUT/lj_rdf.toml" -q -o "$OUT/run" --set simulation.backend=cpu --set simulation.threads=2
python3 - "$OUT/run" <<'PY'
import csv, os, sys
th = list(csv.DictReader(open(os.path.join(sys.argv[1], "thermo.csv"))))
print(f"peak r {float(th[-1]['rdf_peak_r']):.6g} g {float(th[-1]['rdf_peak_g']):.6g}")
msd = list(csv.DictReader(open(os.path.join(sys.argv[1], "msd.csv"))))
a = next(r for r in msd if float(r["time"]) >= 10)
b = msd[-1]
slope = (float(b["msd"]) - float(a["msd"])) / (float(b["time"]) - float(a["time"]))
print(f"msd slope {slope:.6g} D {slope / 6:.6g}")
PY
