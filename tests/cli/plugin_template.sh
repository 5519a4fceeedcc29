# The out-of-tree plugin template builds against this build tree, loads and runs.
. "$(dirname "$0")/common.sh"

build_dir=$(cd "$(dirname "$PARDYN")/.." && pwd)
cp -r "$SRC/examples/plugin_template" tpl
cmake -S tpl -B tpl/build -Dpardyn_DIR="$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build tpl/build >/dev/null
PARDYN_PLUGIN_PATH="$WORK/tpl/build/plugins" "$PARDYN" plugins show yukawa | grep -q "kappa" ||
  fail "the template's plugin is not listed"
"$PARDYN" run tpl/scenario.toml -q -o out --set simulation.steps=50
[ "$(wc -l < out/thermo.csv)" -ge 3 ] || fail "no thermo rows"
# energy is conserved by the template's law under leapfrog (a real force, not zero)
python3 - out/thermo.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
pot = abs(float(rows[0]["potential"]))
drift = max(abs(float(r["relative_drift"])) for r in rows)
assert pot > 1.0, f"potential energy {pot}: the plugin did nothing"
assert drift < 1e-3, f"energy drift {drift}"
print(f"template plugin: potential {pot:.4g}, max drift {drift:.2e}")
PY
echo "plugin_template: passed"
