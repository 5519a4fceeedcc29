#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What the text formats cost per particle (docs/formats.md): the LJ liquid of
# tests/mpi/lj_periodic.toml (864 atoms, 3D, double, CPU, 2 threads) with the xyz, lammps_dump and
# lammps_data outputs at steps 0 and 50; prints `FORMAT BYTES` per particle of the step-50 frame
# (the file's last frame; lammps_data holds that one alone) and `mb_1e5 FORMAT MB`, a frame of 10^5
# particles at that size.
#   PARDYN=build/bin/pardyn OUT=/tmp/x bench/numbers/text_sizes.sh
set -euo pipefail
: "${PARDYN:?the pardyn executable}" "${OUT:?scratch folder}"
here=$(cd "$(dirname "$0")/../.." && pwd)
{
  sed '/^\[\[output\]\]/,$d' "$here/tests/mpi/lj_periodic.toml"
  for o in xyz lammps_dump lammps_data; do printf '[[output]]\ntype = "%s"\ninterval = 50\n\n' $o; done
} > "$OUT/text.toml"
"$PARDYN" run "$OUT/text.toml" -q -o "$OUT/run" --set simulation.threads=2
n=$(awk 'f { print; exit } /^ITEM: NUMBER OF ATOMS/ { f = 1 }' "$OUT/run/dump.lammpstrj")
size() { awk -v n="$n" -v name="$1" '{ b += length($0) + 1 } END {
  printf "%s %.1f\nmb_1e5 %s %.2f\n", name, b / n, name, b / n * 1e5 / 1e6 }'; }
tail -n $((n + 2)) "$OUT/run/trajectory.xyz" | size xyz  # 2 header lines a frame
tail -n $((n + 11)) "$OUT/run/dump.lammpstrj" | size lammps_dump  # 11 header lines a frame
size lammps_data < "$OUT/run/state.data"
