#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/cell-list.md's far-zone accuracy table: the test that asserts its bounds prints each case's
# RMS acceleration error and energy error against all_pairs (6,000 particles, double, the CPU, 2
# threads: the order of the sums fixed):
#   far zones LAW DIMD near NEAR BOUNDARY: rms acceleration error E, energy U, C cells
#   BUILD=build bench/numbers/far_zones.sh
set -euo pipefail
: "${BUILD:?the build folder}"
tests="$BUILD/tests/pardyn_tests"
[[ -x $tests ]] || { echo "$tests not found: cmake --build $BUILD --target pardyn_tests" >&2; exit 1; }
OMP_NUM_THREADS=2 "$tests" --gtest_filter=CellList.FarZonesStayWithinTheDocumentedError
