#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The plugin template's Yukawa fluid (examples/plugin_template) run to t = 0.4 with its energy shifted
# at the cut-off and not, at dt = 0.004, 0.002 and 0.001: prints `shifted|unshifted DT MAXDRIFT`, the
# largest |relative_drift| of thermo.csv (docs/plugins.md, "A law with a cut-off").
#   BUILD=build OUT=/tmp/x bench/numbers/yukawa_drift.sh
. "$(dirname "$0")/template.sh"
build_template build
for shift in true false; do
  for dt in 0.004 0.002 0.001; do
    steps=$(python3 -c "print(round(0.4 / $dt))")
    o="$OUT/run_${shift}_$dt"
    "$pardyn" run "$OUT/tpl/build.toml" -q -o "$o" --set simulation.steps="$steps" \
      --set simulation.backend=cpu --set simulation.threads=2 \
      --set integrator.dt="$dt" --set potential.shift="$shift" --set output.interval=10
    d=$(python3 -c "import csv, sys; print(max(abs(float(r['relative_drift'])) for r in csv.DictReader(open(sys.argv[1]))))" "$o/thermo.csv")
    echo "$([ "$shift" = true ] && echo shifted || echo unshifted) $dt $d"
  done
done
