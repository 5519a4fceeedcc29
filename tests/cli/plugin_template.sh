# SPDX-License-Identifier: BSD-3-Clause
# The out-of-tree plugin template builds against this build tree and against an installation of it
# (cmake --install), loads and runs with each; its GPU code compiles against the installed headers
# wherever nvcc exists, with or without pardyn's CUDA backend.
. "$(dirname "$0")/common.sh"

build_dir=$(cd "$(dirname "$PARDYN")/.." && pwd)
# The template is copied out of the source tree, as its README says to do.
cp -r "$SRC/examples/plugin_template" tpl

# 1. against the build tree
cmake -S tpl -B tpl/build -Dpardyn_DIR="$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build tpl/build >/dev/null
PARDYN_PLUGIN_PATH="$WORK/tpl/build/plugins" "$PARDYN" plugins show yukawa > show.txt
grep -q "kappa" show.txt || fail "the template's plugin is not listed"
grep -q "^schemes: all_pairs, cell_list$" show.txt || fail "plugins show yukawa: $(grep schemes show.txt)"
# The conformance suite, as the template's README tells authors to run it.
(cd tpl && PARDYN_PLUGIN_PATH="$WORK/tpl/build/plugins" "$PARDYN" check-plugin yukawa \
  --reference yukawa.csv) > check.txt || { cat check.txt; fail "check-plugin yukawa failed"; }
grep -q "^analytic .* pass " check.txt || fail "check-plugin yukawa compared no analytic values"

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
