#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What making the initial particles costs each rank (docs/generators.md, uniform): 10^7 particles
# at min_spacing 0.9 in a walled box of side 4553.6 (packing fraction 0.305: the real gas example
# scaled), 2D float, on the CPU backend with one thread per rank, a whole `pardyn run` of 0 steps of
# a scenario that holds the generator alone (walls, thermo), on 1, 2 and 4 ranks. Prints, per rank,
# `ranks R cpu SECONDS rss GB`: the CPU seconds (user + system) and the peak resident memory of the
# rank's process (GNU time), so that a busy machine slows the wall clock but not these.
#   PARDYN=build/bin/pardyn OUT=/tmp/x bench/numbers/generate_ranks.sh
set -euo pipefail
: "${PARDYN:?the pardyn executable}" "${OUT:?scratch folder}"
cat > "$OUT/gen.toml" <<'TOML'
[simulation]
dimension = 2
precision = "float"
steps = 0
seed = 11
backend = "cpu"
threads = 1
[box]
lo = [0.0, 0.0]
hi = [4553.6, 4553.6]
boundary = "wall"
[[particles]]
generator = "uniform"
count = 10000000
min_spacing = 0.9
temperature = 3.0
[[potential]]
type = "walls"
mode = "mirror"
[integrator]
type = "leapfrog"
dt = 0.002
[[output]]
type = "thermo"
interval = 1000
TOML
root=()
[[ $(id -u) == 0 ]] && root=(--allow-run-as-root)
for ranks in 1 2 4; do
  rm -rf "$OUT/run$ranks"
  mpirun "${root[@]}" --oversubscribe --bind-to none -np "$ranks" \
    /usr/bin/time -f "usage %U %S %M" "$PARDYN" run "$OUT/gen.toml" -q -o "$OUT/run$ranks" \
    > "$OUT/run$ranks.log" 2>&1 || { tail -5 "$OUT/run$ranks.log"; exit 1; }
  awk -v r="$ranks" '/^usage / { printf "ranks %d cpu %.1f rss %.2f\n", r, $2 + $3, $4 * 1024 / 1e9 }' \
    "$OUT/run$ranks.log"
done
