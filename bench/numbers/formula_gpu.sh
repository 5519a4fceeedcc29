#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/formulas.md "On the GPU": formula laws against the built-in ones on the GPU, whole steps
# with bench_cell_list (float unless said): LJ at 1,000,188 atoms on the cell list (float and
# double) and the 2D real gas (soft_gas) at 10^6 on the cell list with far zones and on the tree;
# two rounds, the two laws interleaved in each (the first round compiles the formula into an empty
# cache, which the benchmark's warm-up steps absorb). Prints, per round,
#   CASE LAW steps S                 (steps/s of the timed steps)
#   CASE ratio R                     (the formula's steps/s over the built-in law's)
# and bench_formula_compile's cold and cached compile with the load into the GPU (three processes).
#   BUILD=build OUT=/tmp/x bench/numbers/formula_gpu.sh
set -euo pipefail
: "${BUILD:?the build folder of pardyn}" "${OUT:?scratch folder}"
export PARDYN_CACHE_DIR="$OUT/cache"
bench="$BUILD/bin/bench_cell_list"
rate() { "$bench" "$@" --backend cuda | sed -n 's/.* \([0-9.]*\) steps\/s .*/\1/p' | tail -1; }
for round in 1 2; do
  for c in "lj_float lj --cells 63 --steps 300 --precision float" \
           "lj_double lj --cells 63 --steps 300 --precision double" \
           "gas_cell_list soft_gas --side 1000 --steps 300 --scheme cell_list" \
           "gas_tree soft_gas --side 1000 --steps 300 --scheme tree"; do
    read -r name args <<< "$c"
    builtin=lennard_jones
    [[ $name == gas_* ]] && builtin=soft_gas
    # shellcheck disable=SC2086
    b=$(rate $args --law "$builtin")
    # shellcheck disable=SC2086
    e=$(rate $args --law expression)
    echo "$name $builtin steps $b"
    echo "$name expression steps $e"
    awk -v n="$name" -v a="$e" -v b="$b" 'BEGIN { printf "%s ratio %.3f\n", n, a / b }'
  done
done
# Three processes per group: a run compiles once, and NVRTC compiles faster after its first in a
# process. LJ's cell list, LJ's all_pairs (the slowest to compile: its kernels keep 8-16 targets per
# thread unrolled) and the real gas's tree.
for k in 1 2 3; do
  "$BUILD/bin/bench_formula_compile" --repeat 1
  "$BUILD/bin/bench_formula_compile" --group all_pairs --repeat 1
  "$BUILD/bin/bench_formula_compile" --law soft_gas --group tree --repeat 1
done
