#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The plugin template's Yukawa fluid (examples/plugin_template) run to t = 0.4 with its energy shifted
# at the cut-off and not, at dt = 0.004, 0.002 and 0.001: prints `shifted|unshifted DT MAXDRIFT`, the
# largest |relative_drift| of thermo.csv (docs/plugins.md, "A law with a cut-off").
#   BUILD=build OUT=/tmp/x bench/numbers/yukawa_drift.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
: "${BUILD:?pardyn build folder}" "${OUT:?scratch folder}"
pardyn=${PARDYN:-$BUILD/bin/pardyn}
rm -rf "$OUT/tpl"
mkdir -p "$OUT"
cp -r "$here/examples/plugin_template" "$OUT/tpl"
cmake -S "$OUT/tpl" -B "$OUT/tpl/build" -Dpardyn_DIR="$BUILD" > "$OUT/cmake.log" 2>&1 ||
  { cat "$OUT/cmake.log"; exit 1; }
cmake --build "$OUT/tpl/build" > "$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
for shift in true false; do
  for dt in 0.004 0.002 0.001; do
    steps=$(python3 -c "print(round(0.4 / $dt))")
    o="$OUT/run_${shift}_$dt"
    "$pardyn" run "$OUT/tpl/scenario.toml" -q -o "$o" --set simulation.steps="$steps" \
      --set simulation.backend=cpu --set simulation.threads=2 \
      --set integrator.dt="$dt" --set potential.shift="$shift" --set output.interval=10
    d=$(python3 -c "import csv, sys; print(max(abs(float(r['relative_drift'])) for r in csv.DictReader(open(sys.argv[1]))))" "$o/thermo.csv")
    echo "$([ "$shift" = true ] && echo shifted || echo unshifted) $dt $d"
  done
done
