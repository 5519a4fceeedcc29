#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# CPU threads on a shared node (docs/performance.md, "Threads on a shared node"): a 3D Lennard-Jones
# liquid of 2,048 atoms (CELLS below; fcc at rho = 0.8442, T = 1.44, rc = 2.5, cell list with skin 0.3, double,
# thermo every 100 steps) timed with each OpenMP setting, alone and against a competing load:
#   none     no load started by this script (the machine's other users still run);
#   busy     one busy loop per core (`while :; do :; done`, another user's compiler or job);
#   pardyn   a second pardyn run of the same kind and setting (two users' jobs).
# Settings (each a set of environment variables; the variables a user sets win over pardyn's own):
#   default       pardyn as shipped (its own OpenMP default: OMP_WAIT_POLICY=passive);
#   threads1      [simulation] threads = 1;
#   spin300k      GOMP_SPINCOUNT=300000: libgomp's own default, pardyn's before it set one;
#   active        OMP_WAIT_POLICY=active (waiting threads spin and never sleep);
#   spinN         GOMP_SPINCOUNT=N for each N in $SPINS (default: 100).
# The settings run interleaved, ROUNDS times per load; each run prints its steps/s (the `done:`
# line's stepping rate), and the medians close the output, with each median's share of the best.
#
# Each measured run and each load runs in a session of its own (setsid), as separate users' jobs
# do. Linux's scheduler shares the cores between sessions first (autogroups,
# /proc/sys/kernel/sched_autogroup_enabled) and only then between the threads of a session, so the
# two threads of a run share one session's part of the machine against a busy loop or a second run.
# On a machine that others use too (the development VM: 2 cores, other users' compilers),
# NICE=-20 (as root) gives the sessions of the measured runs and of the loads that nice value
# (/proc/self/autogroup, which outranks the other users' sessions; a process's own nice value only
# ranks it within its session), so that "none" means idle but for the load this script starts.
# CELLS=n sets the size: n^3 fcc cells of 4 atoms (default 8: 2,048 atoms; 20: 32,000, in.lj's).
# SETTINGS="default threads1" measures only those settings (default: all of them, below).
#
#   [ROUNDS=5] [STEPS=1000] [SPINS="100"] [LOADS="none busy pardyn"] [NICE=n] [CELLS=n] [SETTINGS=...]
#     bench/shared_node.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
pardyn="$(cd "$build" && pwd)/bin/pardyn"
[[ -x $pardyn ]] || { echo "$pardyn not found: build first" >&2; exit 1; }
rounds=${ROUNDS:-5}
steps=${STEPS:-1000}
cells=${CELLS:-8}
side=$(awk -v c="$cells" 'BEGIN { printf "%.6f", c * (4 / 0.8442)^(1 / 3) }')  # 8 cells: 13.43677
nice_=${NICE:-0}
work=$(mktemp -d)
load_pids=()
# Each load runs in a process group of its own (setsid), ended as a whole: the rival pardyn run
# inside its loop too.
stop_load() {
  for p in "${load_pids[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
  for p in "${load_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  load_pids=()
}
trap 'stop_load; rm -rf "$work"' EXIT
trap 'exit 143' TERM INT HUP  # so that the loads end with the script (their sessions are their own)
cat > "$work/lj.toml" <<TOML
[simulation]
dimension = 3
precision = "double"
backend = "cpu"
steps = $steps
seed = 87287
[box]
lo = [0.0, 0.0, 0.0]
hi = [$side, $side, $side]
boundary = "periodic"
[[particles]]
generator = "lattice"
kind = "fcc"
density = 0.8442
temperature = 1.44
[[potential]]
type = "lennard_jones"
rcut = 2.5
shift = false
scheme = { type = "cell_list", skin = 0.3 }
[integrator]
type = "leapfrog"
dt = 0.005
[[output]]
type = "thermo"
interval = 100
TOML

if [[ -n ${SETTINGS:-} ]]; then
  read -ra settings <<< "$SETTINGS"
else
  settings=(default threads1 spin300k active)
  for n in ${SPINS-100}; do settings+=("spin$n"); done
fi
# "${session[@]}" CMD...: runs CMD in a session of its own (bench/session.sh) whose autogroup has the nice
# value $NICE (a user's job: the scheduler shares the cores between such sessions first). A prefix,
# not a function: started with `&`, $! is then the session's leader, whose group stop_load ends (a
# function would run in a subshell, and $! would be that).
session=("$(cd "$(dirname "$0")" && pwd)/session.sh" "$nice_")
# env_of SETTING: the environment and arguments of a setting, as words for `env`.
env_of() {
  case $1 in
    default) echo "" ;;
    threads1) echo "PARDYN_ARGS=--set simulation.threads=1" ;;
    spin300k) echo "GOMP_SPINCOUNT=300000" ;;
    active) echo "OMP_WAIT_POLICY=active" ;;
    spin*) echo "GOMP_SPINCOUNT=${1#spin}" ;;
  esac
}
# run_once SETTING OUTDIR: prints the run's steps/s.
run_once() {
  local vars args=()
  vars=$(env_of "$1")
  [[ $vars == PARDYN_ARGS=* ]] && { read -ra args <<< "${vars#PARDYN_ARGS=}"; vars=""; }
  # shellcheck disable=SC2086
  "${session[@]}" env $vars "$pardyn" run "$work/lj.toml" -q -o "$2" "${args[@]}" > /dev/null 2>&1
  sed -n 's/^done: [0-9]* steps, \([0-9.]*\) steps\/s.*/\1/p' "$2/log.txt" | tail -1
}
start_load() {  # start_load LOAD SETTING
  case $1 in
    busy)
      for _ in $(seq "$(nproc)"); do
        "${session[@]}" bash -c 'while :; do :; done' &
        load_pids+=($!)
      done
      sleep 1 ;;
    pardyn)
      local vars args=()
      vars=$(env_of "$2")
      [[ $vars == PARDYN_ARGS=* ]] && { read -ra args <<< "${vars#PARDYN_ARGS=}"; vars=""; }
      # shellcheck disable=SC2086
      "${session[@]}" bash -c 'while :; do "$@" > /dev/null 2>&1 || true; done' rival \
        env $vars "$pardyn" run "$work/lj.toml" -q -o "$work/rival" \
        --set simulation.steps=100000 "${args[@]}" &
      load_pids+=($!)
      sleep 1 ;;
  esac
}

results="$work/results.txt"
: > "$results"
echo "$(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for load in ${LOADS:-none busy pardyn}; do
  for r in $(seq "$rounds"); do
    line="$load round $r:"
    for s in "${settings[@]}"; do
      # The rival pardyn runs with the setting measured (two jobs configured alike).
      start_load "$load" "$s"
      rate=$(run_once "$s" "$work/out")
      stop_load
      echo "$load $s $rate" >> "$results"
      line+=" $s $rate"
    done
    echo "$line"
  done
done
echo "medians (steps/s; share of the best setting under that load):"
python3 - "$results" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    load, setting, rate = line.split()
    runs.setdefault(load, {}).setdefault(setting, []).append(float(rate))
for load, by in runs.items():
    med = {s: statistics.median(v) for s, v in by.items()}
    best = max(med.values())
    print(f"  {load:7s} " + "  ".join(f"{s} {m:.0f} ({m / best:.0%})" for s, m in med.items()))
PY
