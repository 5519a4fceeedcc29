#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What optimisation is worth to a plugin (docs/plugins.md, "Build it optimised"): the plugin
# template's Yukawa law built with no build type (pardyn's package makes it Release) and as Debug
# (-O0), each run on the template's 2D fluid enlarged to 7,680 particles (80 x 48 lattice cells),
# with the cell list and with all_pairs, on the CPU backend. Prints `BUILD SCHEME STEPS_PER_S` for
# each of REPEAT (default 3) interleaved rounds.
#   BUILD=build OUT=/tmp/x bench/numbers/plugin_optimisation.sh
. "$(dirname "$0")/template.sh"
build_template default
build_template Debug -DCMAKE_BUILD_TYPE=Debug
for r in $(seq "${REPEAT:-3}"); do
  for scheme in cell_list all_pairs; do
    steps=$([ "$scheme" = cell_list ] && echo 200 || echo 4)
    for type in default Debug; do
      "$pardyn" run "$OUT/tpl/$type.toml" -q -o "$OUT/run" --set simulation.backend=cpu \
        --set 'box.hi=[80.0, 83.13843876330611]' --set simulation.steps=$steps \
        --set "potential.scheme.type=\"$scheme\"" > "$OUT/run.log" 2>&1 || { cat "$OUT/run.log"; exit 1; }
      echo "$type $scheme $(sed -n 's/^done: [0-9]* steps, \([0-9.]*\) steps\/s.*/\1/p' "$OUT/run/log.txt" | tail -1)"
    done
  done
done
