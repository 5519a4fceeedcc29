# SPDX-License-Identifier: BSD-3-Clause
# The out-of-tree plugin template builds against this build tree and against an installation of it
# (cmake --install), loads and runs with each; its GPU code compiles against the installed headers
# wherever nvcc exists, with or without pardyn's CUDA backend.
. "$(dirname "$0")/common.sh"

build_dir=$(cd "$(dirname "$PARDYN")/.." && pwd)
# The template is copied out of the source tree, as its README says to do.
cp -r "$SRC/examples/plugin_template" tpl

# 1. against the build tree, configured as the README says: no build type, so pardyn's package
# chooses Release and the plugin is compiled with optimisation.
cmake -S tpl -B tpl/build -Dpardyn_DIR="$build_dir" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
cmake --build tpl/build >/dev/null
grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' tpl/build/CMakeCache.txt ||
  fail "the template without a build type is not built Release: $(grep CMAKE_BUILD_TYPE: tpl/build/CMakeCache.txt)"
python3 - tpl/build/compile_commands.json <<'PY' || fail "yukawa.cpp is not compiled with -O2 or -O3"
import json, sys
cmd = next(c["command"] for c in json.load(open(sys.argv[1])) if c["file"].endswith("yukawa.cpp"))
levels = [w for w in cmd.split() if w.startswith("-O")]
print("template, no build type: yukawa.cpp compiled with", " ".join(levels))
assert levels and levels[-1] in ("-O2", "-O3"), cmd
PY
PARDYN_PLUGIN_PATH="$WORK/tpl/build/plugins" "$PARDYN" plugins > list.txt 2>&1
grep "libpardyn_yukawa" list.txt | grep -q "without optimisation" && fail "the optimised plugin is listed as unoptimised"
PARDYN_PLUGIN_PATH="$WORK/tpl/build/plugins" "$PARDYN" plugins show yukawa > show.txt
grep -q "kappa" show.txt || fail "the template's plugin is not listed"
grep -q "^schemes: all_pairs, cell_list$" show.txt || fail "plugins show yukawa: $(grep schemes show.txt)"
# The conformance suite, as the template's README tells authors to run it.
(cd tpl && PARDYN_PLUGIN_PATH="$WORK/tpl/build/plugins" "$PARDYN" check-plugin yukawa \
  --reference yukawa.csv) > check.txt || { cat check.txt; fail "check-plugin yukawa failed"; }
grep -q "^analytic .* pass " check.txt || fail "check-plugin yukawa compared no analytic values"
grep -q "without optimisation" check.txt && fail "check-plugin notes the optimised plugin as unoptimised"

# A plugin deliberately built without optimisation (Debug: -O0) still loads and passes, and
# check-plugin, run, and plugins say it was built so.
cmake -S tpl -B tpl/build-debug -Dpardyn_DIR="$build_dir" -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build tpl/build-debug >/dev/null
(cd tpl && PARDYN_PLUGIN_PATH="$WORK/tpl/build-debug/plugins" "$PARDYN" check-plugin yukawa \
  --reference yukawa.csv) > check-debug.txt 2>&1 || { cat check-debug.txt; fail "check-plugin on the Debug build failed"; }
grep -q "^pardyn: note: plugin .*build-debug/plugins/libpardyn_yukawa.so was built without optimisation" \
  check-debug.txt || { cat check-debug.txt; fail "check-plugin says nothing of the unoptimised plugin"; }
sed 's|^plugin_paths = .*|plugin_paths = ["build-debug/plugins"]|' tpl/scenario.toml > tpl/debug.toml
"$PARDYN" run tpl/debug.toml -q -o out_debug --set simulation.steps=5 2> run-debug.txt || { cat run-debug.txt; fail "the Debug plugin does not run"; }
grep -q "^pardyn: note: plugin .*libpardyn_yukawa.so was built without optimisation" run-debug.txt ||
  { cat run-debug.txt; fail "run says nothing of the unoptimised plugin"; }
PARDYN_PLUGIN_PATH="$WORK/tpl/build-debug/plugins" "$PARDYN" plugins 2>/dev/null |
  grep "libpardyn_yukawa" | grep -q "built without optimisation" || fail "plugins does not list the plugin as unoptimised"

# Energy is conserved by the template's law under leapfrog (a real force, not zero), and because
# its energy is shifted at the cut-off the error falls with the step instead of staying at the
# jumps of U(rcut) (docs/plugins.md, "A law with a cut-off").
drift() {  # drift SHIFT DT: the largest |relative_drift| over t = 0.4
  local steps
  steps=$(python3 -c "print(round(0.4 / $2))")
  "$PARDYN" run tpl/scenario.toml -q -o "out_$1_$2" --set simulation.steps="$steps" \
    --set integrator.dt="$2" --set potential.shift="$1" --set output.interval=10
  python3 - "out_$1_$2/thermo.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert abs(float(rows[0]["potential"])) > 1.0, "the plugin did nothing"
print(max(abs(float(r["relative_drift"])) for r in rows))
PY
}
shifted_2=$(drift true 0.002)
shifted_1=$(drift true 0.001)
unshifted_2=$(drift false 0.002)
echo "template plugin: max drift shifted $shifted_2 (dt 0.002), $shifted_1 (dt 0.001); unshifted $unshifted_2"
python3 -c "import sys; s2, s1, u2 = map(float, sys.argv[1:]); assert s2 < 1e-3 and s1 < 0.6 * s2 and s2 < 0.1 * u2, (s2, s1, u2)" \
  "$shifted_2" "$shifted_1" "$unshifted_2" || fail "the shifted law's drift does not fall with dt"

# 2. against an installation
cmake --install "$build_dir" --prefix "$WORK/prefix" >/dev/null
for h in plugin_export.hpp pair_potential_cuda.cuh traversal/all_pairs_cuda.cuh \
         traversal/cell_list_cpu.hpp version.hpp; do
  [ -f "prefix/include/pardyn/$h" ] || fail "cmake --install left out include/pardyn/$h"
done
# The application headers lie outside the SDK's include folder (a plugin sees only include/).
for h in simulation.hpp config.hpp registry.hpp backend.hpp; do
  [ -f "prefix/include/pardyn-app/pardyn/app/$h" ] ||
    fail "cmake --install left out include/pardyn-app/pardyn/app/$h"
done
[ ! -e prefix/include/pardyn/app ] || fail "the application headers are installed inside the SDK's include/pardyn"
for h in backend.hpp reduction.hpp boundary_ops.hpp; do
  [ ! -e "prefix/include/pardyn/$h" ] || fail "include/pardyn/$h is installed, but it is not part of the SDK"
done
cmake -S tpl -B tpl/build-installed -Dpardyn_DIR="$WORK/prefix/lib/cmake/pardyn" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build tpl/build-installed >/dev/null
sed 's|^plugin_paths = .*|plugin_paths = ["build-installed/plugins"]|' tpl/scenario.toml > tpl/installed.toml
prefix/bin/pardyn run tpl/installed.toml -q -o out_installed --set simulation.steps=20
[ "$(wc -l < out_installed/thermo.csv)" -ge 2 ] || fail "no thermo rows from the installed pardyn"
grep -q "build-installed/plugins/libpardyn_yukawa" <(PARDYN_PLUGIN_PATH="$WORK/tpl/build-installed/plugins" \
  prefix/bin/pardyn plugins) || fail "the installed pardyn does not list the plugin built against it"

# 3. the GPU code: built above when pardyn has CUDA; else compiled here if there is an nvcc
if grep -q "set(PARDYN_HAVE_CUDA ON)" "$WORK/prefix/lib/cmake/pardyn/pardynConfig.cmake"; then
  echo "pardyn has CUDA: yukawa.cu was compiled in both builds"
else
  nvcc=$(command -v nvcc || true)
  [ -n "$nvcc" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || nvcc=/usr/local/cuda/bin/nvcc
  if [ -n "$nvcc" ]; then
    "$nvcc" -std=c++17 --expt-relaxed-constexpr -DPARDYN_PLUGIN_HAS_CUDA=1 \
      -DPARDYN_PLUGIN_NAME='"yukawa"' -I"$WORK/prefix/include" -Xcompiler -fPIC \
      -c tpl/yukawa.cu -o yukawa_cuda.o 2> nvcc.log || { cat nvcc.log; fail "yukawa.cu does not compile against the installation"; }
    echo "yukawa.cu compiles against the installed headers ($nvcc)"
  else
    echo "no nvcc: the template's GPU code is not compiled"
  fi
fi
echo "plugin_template: passed"
