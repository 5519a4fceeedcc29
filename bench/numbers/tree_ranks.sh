#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/parallel.md: the tree's accuracy on several ranks, from the MPI tests that assert it
# (tests/mpi/test_mpi.cpp, Rank.Tree*HasOneRanksAccuracy: the CPU, one thread per rank, double):
# each test on 2 and on 3 ranks, its lines prefixed with `TEST NP `:
#   TEST NP [ measured ] ... RMS force error against all_pairs E (one rank's tree E1); ...
#   TEST NP [ measured ] rank R: OWNED owned, S sources received of REMOTE remote particles
#   BUILD=build bench/numbers/tree_ranks.sh
set -euo pipefail
: "${BUILD:?the build folder}"
tests="$BUILD/tests/pardyn_mpi_tests"
[[ -x $tests ]] || { echo "$tests not found: cmake --build $BUILD --target pardyn_mpi_tests" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for t in TreeGravity3DHasOneRanksAccuracy TreeLog2DMonopolesHasOneRanksAccuracy \
         TreeSoftGas2DShortRangePartHasOneRanksAccuracy; do
  for np in 2 3; do
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 \
      PARDYN_TEST_TMP="$scratch" mpirun --oversubscribe --bind-to none -np "$np" "$tests" \
      --gtest_filter="Rank.$t" > "$scratch/out" 2>&1 || { cat "$scratch/out"; exit 1; }
    grep '^\[ measured \]' "$scratch/out" | sed "s/^/$t $np /"
  done
done
