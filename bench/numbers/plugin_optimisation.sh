#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What optimisation is worth to a plugin (docs/plugins.md, "Build it optimised"): the plugin
# template's Yukawa law built with no build type (pardyn's package makes it Release) and as Debug
# (-O0), each run on the template's 2D fluid enlarged to 7,680 particles (80 x 48 lattice cells),
# with the cell list and with all_pairs, on the CPU backend. Prints `BUILD SCHEME STEPS_PER_S` for
# each of REPEAT (default 3) interleaved rounds.
#   BUILD=build OUT=/tmp/x bench/numbers/plugin_optimisation.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
: "${BUILD:?pardyn build folder}" "${OUT:?scratch folder}"
pardyn=${PARDYN:-$BUILD/bin/pardyn}
rm -rf "$OUT/tpl"
mkdir -p "$OUT"
cp -r "$here/examples/plugin_template" "$OUT/tpl"
for type in default Debug; do
  args=()
  [ "$type" = default ] || args=(-DCMAKE_BUILD_TYPE="$type")
  cmake -S "$OUT/tpl" -B "$OUT/tpl/build-$type" -Dpardyn_DIR="$BUILD" "${args[@]}" > "$OUT/cmake.log" 2>&1 ||
    { cat "$OUT/cmake.log"; exit 1; }
  cmake --build "$OUT/tpl/build-$type" > "$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
  sed "s|^plugin_paths = .*|plugin_paths = [\"build-$type/plugins\"]|" "$OUT/tpl/scenario.toml" \
    > "$OUT/tpl/$type.toml"
done
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
