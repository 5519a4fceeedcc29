#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Strong and weak scaling of whole `pardyn run`s on 1, 2 (and 4) GPUs of one machine, in one go
# (docs/parallel.md "Scaling"; bench/RESULTS.md). From the repository root on the GPU machine, with
# a gpu-bundle of the build in .gpu:
#
#   bench/scaling.sh [ROWS...]
#
# ROWS (default: all but real_gas_1e8): real_gas real_gas_ends real_gas_example real_gas_tree
#   plummer plummer_weak
#   log lj all_pairs real_gas_1e8
# Environment:
#   PARDYN  the pardyn command   (default ".gpu/run .gpu/build/bin/pardyn")
#   MPIRUN  the launcher          (default "mpirun --allow-run-as-root --bind-to none")
#   GPUS    GPU counts to run on (default: 1 2, and 4 when the machine has 4)
#   OUT     output root           (default /tmp/pardyn-scaling)
#   LIMIT   seconds one run may take (default 300)
#   SETS    more `--set` arguments for every run (after the row's own), e.g. to try the script on
#           the CPU with small counts
# Each run is a whole `pardyn run` with its outputs; the rate is the step loop's (log.txt's
# "timing: T s in the loop, S steps": S / T, without the set-up), so a run's set-up (generating
# 10^7 particles) is reported apart. For each row: steps/s per GPU count, the speed-up over one
# GPU and the efficiency (speed-up / GPUs; weak scaling: the step rate over one GPU's with
# the same particles per GPU); then, for the 2-GPU runs, where rank 0's loop time went.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
PARDYN=${PARDYN:-".gpu/run .gpu/build/bin/pardyn"}
MPIRUN=${MPIRUN:-"mpirun --allow-run-as-root --bind-to none"}
OUT=${OUT:-/tmp/pardyn-scaling}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
if [ -z "${GPUS:-}" ]; then
  GPUS="1"
  [ "$ngpu" -ge 2 ] && GPUS="1 2"
  [ "$ngpu" -ge 4 ] && GPUS="1 2 4"
fi
rows=("$@")
[ ${#rows[@]} -eq 0 ] && rows=(real_gas real_gas_ends real_gas_example real_gas_tree plummer plummer_weak log lj all_pairs)
mkdir -p "$OUT"
S=$here/bench/scaling
echo "== machine: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) x $ngpu"

# run NAME GPUS SCENARIO [--set ...]: one whole run; prints "steps/s setup_s" (or "failed").
run() {
  local name=$1 g=$2 scen=$3 t0 t1 loop steps
  shift 3
  local dir="$OUT/$name-$g"
  rm -rf "$dir"
  t0=$(date +%s.%N)
  if [ "$g" -eq 1 ]; then
    # shellcheck disable=SC2086
    timeout "${LIMIT:-300}" $PARDYN run "$scen" -o "$dir" "$@" ${SETS:-} > "$dir.log" 2>&1
  else
    # shellcheck disable=SC2086
    timeout "${LIMIT:-300}" $MPIRUN -np "$g" $PARDYN run "$scen" -o "$dir" "$@" ${SETS:-} > "$dir.log" 2>&1
  fi || { echo "failed"; tail -3 "$dir.log" >&2; return; }
  t1=$(date +%s.%N)
  read -r loop steps < <(sed -n 's/.*timing: \([0-9.e+-]*\) s in the loop, \([0-9]*\) steps.*/\1 \2/p' \
    "$dir/log.txt" | tail -1)
  awk -v l="$loop" -v s="$steps" -v t0="$t0" -v t1="$t1" \
    'BEGIN { printf "%.4g %.1f\n", s / l, t1 - t0 - l }'
}

declare -A rate
row() {  # row NAME N WEAK(0/1) SCENARIO [--set ...]
  local name=$1 n=$2 weak=$3 scen=$4
  shift 4
  for g in $GPUS; do
    local sets=("$@")
    local count=$n
    [ "$weak" = 1 ] && count=$((n * g))
    read -r r setup < <(run "$name" "$g" "$scen" --set "particles.0.count=$count" "${sets[@]}")
    rate[$name,$g]=$r
    printf "%-14s %11s %5s GPU  %10s steps/s  (set-up %s s)\n" "$name" "$count" "$g" "$r" "$setup"
  done
}

for r in "${rows[@]}"; do
  case $r in
    real_gas) row real_gas 10000000 0 "$S/real_gas.toml" ;;
    real_gas_ends) row real_gas_ends 10000000 0 "$S/real_gas.toml" --set output.0.interval=300 ;;
    real_gas_example)  # analyses as often as the example (thermo and clusters every 200 steps): a
      # 300-step run's progress lines (ten per run, each with its analysis) would add 10 more
      row real_gas_example 10000000 0 "$S/real_gas.toml" --set simulation.progress_interval=200 ;;
    real_gas_tree)  # the tree on every GPU count (several ranks choose far zones by themselves)
      row real_gas_tree 10000000 0 "$S/real_gas.toml" \
        --set 'potential.0.scheme={ type = "tree", theta = 0.7 }' ;;
    real_gas_1e8)
      row real_gas_1e8 100000000 0 "$S/real_gas.toml" --set "box.hi=[14400.0, 14400.0]" \
        --set potential.0.attraction=7.5e-8 --set simulation.steps=100 ;;
    plummer) row plummer 10000000 0 "$S/plummer_tree.toml" ;;
    plummer_weak) row plummer_weak 10000000 1 "$S/plummer_tree.toml" ;;
    log) row log 10000000 0 "$S/log_tree.toml" ;;
    lj) row lj 16384000 0 "$S/lj.toml" ;;
    all_pairs) row all_pairs 4194304 0 "$S/all_pairs.toml" ;;
    *) echo "unknown row $r" >&2 ;;
  esac
done

echo
echo "== scaling (speed-up over 1 GPU; efficiency = speed-up / GPUs; weak rows: rate ratio)"
printf "%-14s" "row"
for g in $GPUS; do printf " %12s" "$g GPU"; done
for g in $GPUS; do [ "$g" -gt 1 ] && printf " %9s %6s" "x$g" "eff"; done
echo
for r in "${rows[@]}"; do
  printf "%-14s" "$r"
  for g in $GPUS; do printf " %12s" "${rate[$r,$g]:--}"; done
  for g in $GPUS; do
    [ "$g" -gt 1 ] || continue
    awk -v a="${rate[$r,1]:-0}" -v b="${rate[$r,$g]:-0}" -v g="$g" -v w="$([ "$r" = plummer_weak ] && echo 1 || echo 0)" \
      'BEGIN { if (a > 0 && b > 0) { s = b / a; printf " %8.2fx %5.0f%%", s, 100 * (w ? s : s / g) } else printf " %9s %6s", "-", "-" }'
  done
  echo
done

echo
echo "== where rank 0's loop time went on 2 GPUs (log.txt)"
for r in "${rows[@]}"; do
  [ -f "$OUT/$r-2/log.txt" ] || continue
  echo "-- $r"
  sed -n '/timing: /,/other/p' "$OUT/$r-2/log.txt" | sed 's/^[^ ]* [^ ]* //' | head -14
done
