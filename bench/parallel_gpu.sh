#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Parallel runs on a machine with several GPUs (device machine nvidia-h200-x2), from the repository
# root, with a gpu-bundle of build-gpu in .gpu (see bench/RESULTS.md "Parallel"):
#   bench/parallel_gpu.sh [check|scale|all]
# check: 1 rank against 2 ranks on the GPUs (ring and domain decomposition), thermo compared;
# scale: all-pairs 3D float N = 4M and LJ 3D N = 16M, 1 GPU against 2 GPUs.
set -uo pipefail
what=${1:-all}
R=.gpu/run
B=.gpu/build-gpu
MPI="mpirun --allow-run-as-root --oversubscribe --bind-to none"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
OUT=${OUT:-/tmp/pardyn-parallel}
mkdir -p "$OUT"
echo "== machine"
nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm --format=csv,noheader
nvidia-smi topo -m 2>/dev/null | head -5
ompi_info --parsable --all 2>/dev/null | grep -E "mpi_built_with_cuda_support:value|ompi:version:full" | head -3

last() { tail -1 "$1" | cut -d, -f1-6; }
if [ "$what" = check ] || [ "$what" = all ]; then
  echo "== check: thermo of 1 rank vs 2 ranks (GPU, double)"
  for sc in tests/mpi/lj_periodic.toml examples/plummer/plummer.toml; do
    sets=(--set simulation.backend=\"cuda\" --set simulation.precision=\"double\" --set simulation.steps=100 -q)
    $R $B/bin/pardyn run "$sc" "${sets[@]}" -o "$OUT/c1" > "$OUT/c1.log" 2>&1 || cat "$OUT/c1.log"
    $MPI -np 2 $R $B/bin/pardyn run "$sc" "${sets[@]}" -o "$OUT/c2" > "$OUT/c2.log" 2>&1 || cat "$OUT/c2.log"
    echo "$sc"
    echo "  step 0, 1 rank : $(sed -n 2p $OUT/c1/thermo.csv | cut -d, -f1-6)"
    echo "  step 0, 2 ranks: $(sed -n 2p $OUT/c2/thermo.csv | cut -d, -f1-6)"
    echo "  last,   1 rank : $(last $OUT/c1/thermo.csv)"; echo "  last,   2 ranks: $(last $OUT/c2/thermo.csv)"
    ls "$OUT/c2/frames" | tail -3 | tr '\n' ' '; echo
  done
fi
if [ "$what" = ljx ]; then
  # Where the time goes: each part synchronised (PARDYN_PARALLEL_STATS=2), ghost margins, links off.
  PARDYN_PARALLEL_STATS=2 $R $B/bin/bench_cell_list lj --cells 160,160,80 --steps 100 --warmup 0 2>&1
  PARDYN_PARALLEL_STATS=2 $MPI -np 2 $R $B/bin/bench_cell_list lj --cells 160 --steps 100 --warmup 0 2>&1
  for m in 1 2 3; do
    echo "ghost margin $m skins:"
    PARDYN_PARALLEL_STATS=1 PARDYN_GHOST_MARGIN=$m $MPI -np 2 -x PARDYN_PARALLEL_STATS -x PARDYN_GHOST_MARGIN $R $B/bin/bench_cell_list lj --cells 160 --steps 200 --warmup 0 2>&1
  done
  echo "device links off:"
  PARDYN_DEVICE_LINKS=0 $MPI -np 2 -x PARDYN_DEVICE_LINKS $R $B/bin/bench_cell_list lj --cells 160 --steps 200 --warmup 0 2>&1
fi
if [ "$what" = lj ]; then
  $R $B/bin/bench_cell_list lj --cells 160 --steps 200 --warmup 10 2>&1
  $MPI -np 2 $R $B/bin/bench_cell_list lj --cells 160 --steps 200 --warmup 10 2>&1
  $R $B/bin/bench_cell_list lj --cells 160 --steps 200 --warmup 10 2>&1
  $MPI -np 2 $R $B/bin/bench_cell_list lj --cells 160 --steps 200 --warmup 10 2>&1
  $R $B/bin/bench_cell_list lj --cells 160 --steps 200 --warmup 10 2>&1
  $MPI -np 2 $R $B/bin/bench_cell_list lj --cells 160 --steps 200 --warmup 10 2>&1
fi
if [ "$what" = scale ] || [ "$what" = all ]; then
  echo "== scale: all-pairs gravity 3D float, N = 4,194,304"
  $R $B/bin/bench_cell_list gravity --count 4194304 --steps 2 --warmup 0 2>&1 | tee -a "$OUT/scale.log"
  $MPI -np 2 $R $B/bin/bench_cell_list gravity --count 4194304 --steps 2 --warmup 0 2>&1 | tee -a "$OUT/scale.log"
  echo "== scale: LJ 3D float, N = 16,384,000 (160^3 fcc cells)"
  $R $B/bin/bench_cell_list lj --cells 160 --steps 200 --warmup 10 2>&1 | tee -a "$OUT/scale.log"
  $MPI -np 2 $R $B/bin/bench_cell_list lj --cells 160 --steps 200 --warmup 10 2>&1 | tee -a "$OUT/scale.log"
fi
