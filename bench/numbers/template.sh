# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the measures that use the plugin template (yukawa_drift.sh, plugin_optimisation.sh):
# checks BUILD and OUT, sets `pardyn`, copies examples/plugin_template to $OUT/tpl, and gives
# `build_template NAME [CMAKE_ARGS...]`, which builds it into $OUT/tpl/NAME (plugins in
# NAME/plugins) and writes $OUT/tpl/NAME.toml, the template's scenario loading that build.
set -euo pipefail
: "${BUILD:?pardyn build folder}" "${OUT:?scratch folder}"
pardyn=${PARDYN:-$BUILD/bin/pardyn}
rm -rf "$OUT/tpl"
mkdir -p "$OUT"
cp -r "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/examples/plugin_template" "$OUT/tpl"
build_template() {
  local name=$1
  shift
  cmake -S "$OUT/tpl" -B "$OUT/tpl/$name" -Dpardyn_DIR="$BUILD" "$@" > "$OUT/cmake.log" 2>&1 ||
    { cat "$OUT/cmake.log"; exit 1; }
  cmake --build "$OUT/tpl/$name" > "$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
  sed "s|^plugin_paths = .*|plugin_paths = [\"$name/plugins\"]|" "$OUT/tpl/scenario.toml" \
    > "$OUT/tpl/$name.toml"
}
