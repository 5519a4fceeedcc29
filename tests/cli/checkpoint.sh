# SPDX-License-Identifier: BSD-3-Clause
# Checkpoints from the command line: kill -9 at random moments leaves readable files and a run that
# resumes to the same thermo rows and final state as a straight run; SIGTERM exits 143 with a
# checkpoint; resuming with a change that breaks exactness is refused; the exit codes.
. "$(dirname "$0")/common.sh"

# PARDYN_BACKEND=cuda runs it on the GPU (the GPU machine has neither h5py nor h5dump: the final
# states are then compared through the final VTK frames alone, which hold positions and velocities).
backend=${PARDYN_BACKEND:-cpu}
py=${PYTHON:-/usr/bin/python3}
have_h5py=1
"$py" -c "import h5py, numpy" 2>/dev/null || have_h5py=0
if [ "$backend" = cpu ] && [ "$have_h5py" = 0 ]; then
  fail "$py has no h5py (scripts/setup installs python3-h5py)"
fi

cat > lj.toml <<'EOF'
[simulation]
dimension = 2
steps = 3000
backend = "BACKEND"
threads = 1
seed = 11
progress_interval = 500
[box]
lo = [0.0, 0.0]
hi = [40.0, 40.0]
boundary = "periodic"
[[particles]]
generator = "uniform"
count = 1000
min_spacing = 0.95
temperature = 1.0
[[potential]]
type = "lennard_jones"
rcut = 2.5
scheme = { type = "cell_list", skin = 0.3 }
[integrator]
type = "leapfrog"
dt = 0.004
[[modifier]]
type = "langevin"
temperature = 1.0
tau = 0.5
[[output]]
type = "thermo"
interval = 10
[[output]]
type = "vtk"
interval = 250
[[output]]
type = "checkpoint"
interval = 100
keep = 2
EOF
sed -i "s/BACKEND/$backend/" lj.toml

start=$(date +%s.%N)
"$PARDYN" run lj.toml -o straight -q > straight.log 2>&1 || fail "straight run: $(cat straight.log)"
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
echo "straight run: $secs s"
"$PARDYN" checkpoint straight > info.log || fail "pardyn checkpoint: $(cat info.log)"
grep -q "checkpoint-000000003000.h5: intact; step 3000" info.log || fail "no final checkpoint: $(cat info.log)"
if [ "$backend" = cpu ]; then
  h5dump -H straight/checkpoints/checkpoint-000000003000.h5 | grep -q '"position"' ||
    fail "h5dump does not read the checkpoint"
fi

# The final positions and velocities of two runs, bit for bit: the final checkpoints (h5py) and
# the final frames (the last in run.pvd: step 3000).
last_frame() { grep -o 'file="[^"]*"' "$1/run.pvd" | tail -n 1 | cut -d'"' -f2; }
same_state() {
  local a b
  a=$(dirname "$(dirname "$1")") b=$(dirname "$(dirname "$2")")
  cmp -s "$a/$(last_frame "$a")" "$b/$(last_frame "$b")" || fail "the final frames of $a and $b differ"
  [ "$have_h5py" = 1 ] || return 0
  "$py" - "$1" "$2" <<'PYEOF' || fail "final states of $1 and $2 differ"
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
for k in ("position", "velocity"):
    x, y = a["particles/all/" + k + "/value"][()], b["particles/all/" + k + "/value"][()]
    if x.shape != y.shape or not np.array_equal(x.view(np.uint8), y.view(np.uint8)):
        sys.exit(k + " differs")
PYEOF
}

# Every file a killed run left is readable: thermo rows complete (but maybe the last), run.pvd
# closed and its frames present, every checkpoint intact.
check_files() {
  local dir=$1 width
  # Killed while setting up (a GPU's start-up can take a good part of this short run): no files.
  [ -f "$dir/thermo.csv" ] || return 0
  width=$(head -n 1 "$dir/thermo.csv" | tr ',' '\n' | wc -l)
  head -n -1 "$dir/thermo.csv" | awk -F, -v w="$width" 'NF != w { exit 1 }' ||
    fail "$dir/thermo.csv has a row of the wrong width"
  if [ -f "$dir/run.pvd" ]; then
    tail -n 1 "$dir/run.pvd" | grep -q "</VTKFile>" || fail "$dir/run.pvd is not closed"
    for f in $(grep -o 'file="[^"]*"' "$dir/run.pvd" | cut -d'"' -f2); do
      [ -s "$dir/$f" ] || fail "$dir/run.pvd lists $f, which is missing"
    done
  fi
  if [ -d "$dir/checkpoints" ] && ls "$dir"/checkpoints/checkpoint-*.h5 > /dev/null 2>&1; then
    "$PARDYN" checkpoint "$dir" > "$dir.info" || fail "a damaged checkpoint in $dir: $(cat "$dir.info")"
  fi
}

# kill -9 at random moments of the run (seeded: the same moments each time), then resume.
RANDOM=4242
resumed=0
nocheckpoint=0
for k in 1 2 3 4 5 6; do
  frac=$(( RANDOM % 80 + 10 ))
  delay=$(awk -v s="$secs" -v f="$frac" 'BEGIN { print s * f / 100 }')
  "$PARDYN" run lj.toml -o "kill$k" -q > "kill$k.log" 2>&1 &
  pid=$!
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  check_files "kill$k"
  if [ ! -d "kill$k" ]; then
    # Killed before it made its output folder (a GPU's start-up).
    expect_error 1 "no such file or folder" -- "$PARDYN" run --resume "kill$k" -q
    nocheckpoint=$((nocheckpoint + 1))
    continue
  fi
  if ! ls "kill$k"/checkpoints/checkpoint-*.h5 > /dev/null 2>&1; then
    expect_error 1 "no checkpoint in" -- "$PARDYN" run --resume "kill$k" -q
    nocheckpoint=$((nocheckpoint + 1))
    continue
  fi
  from=$(ls "kill$k"/checkpoints/checkpoint-*.h5 | tail -n 1)
  "$PARDYN" run --resume "kill$k" -q > "resume$k.log" 2>&1 || fail "resume $k: $(cat "resume$k.log")"
  cmp -s straight/thermo.csv "kill$k/thermo.csv" ||
    fail "kill $k (at $frac% of the run, resumed from $from): thermo.csv differs from the straight run's: $(diff straight/thermo.csv "kill$k/thermo.csv" | head -5)"
  cmp -s straight/run.pvd "kill$k/run.pvd" || fail "kill $k: run.pvd differs"
  same_state straight/checkpoints/checkpoint-000000003000.h5 "kill$k"/checkpoints/checkpoint-000000003000.h5
  echo "kill -9 at $frac% of the run: resumed from $(basename "$from"), identical to the straight run"
  resumed=$((resumed + 1))
done
[ "$resumed" -ge 4 ] || fail "only $resumed of 6 killed runs had a checkpoint to resume from"

# SIGTERM: exit 143 after writing the checkpoint of the step it stopped at; resumed, the same end.
"$PARDYN" run lj.toml -o term -q > term.log 2>&1 &
pid=$!
for _ in $(seq 1 200); do
  ls term/checkpoints/checkpoint-*.h5 > /dev/null 2>&1 && break
  sleep 0.05
done
kill -TERM "$pid"
set +e
wait "$pid"
rc=$?
set -e
[ "$rc" -eq 143 ] || fail "SIGTERM: exit $rc, expected 143: $(cat term.log)"
grep -q "continue with: pardyn run --resume" term.log || fail "no resume hint: $(cat term.log)"
stop=$(tail -n 1 term/thermo.csv | cut -d, -f1)
[ -f "term/checkpoints/checkpoint-$(printf %012d "$stop").h5" ] ||
  fail "no checkpoint of step $stop, where the run stopped: $(ls term/checkpoints)"
"$PARDYN" run --resume term -q > term2.log 2>&1 || fail "resume after SIGTERM: $(cat term2.log)"
same_state straight/checkpoints/checkpoint-000000003000.h5 term/checkpoints/checkpoint-000000003000.h5
# The interrupted run observed its last step too; resumed, that row is gone (cli.resume_interrupted
# checks every file, after SIGINT too).
cmp -s term/thermo.csv straight/thermo.csv || fail "SIGTERM: thermo.csv differs"
echo "SIGTERM at step $stop: exit 143, resumed to the straight run's state"

# Extending a finished run; refusing a change that breaks exactness; the exit codes.
"$PARDYN" run --resume straight --set simulation.steps=3100 -q > extend.log 2>&1 ||
  fail "extending: $(cat extend.log)"
[ "$(tail -n 1 straight/thermo.csv | cut -d, -f1)" = 3100 ] || fail "the run was not extended"
expect_error 1 "potential[0].rcut" -- "$PARDYN" run --resume straight --set potential.rcut=3.0
expect_error 1 "no such file or folder" -- "$PARDYN" run --resume nowhere
expect_error 1 "holds checkpoints of an earlier run" -- "$PARDYN" run lj.toml -o straight -q
expect_error 2 "only meaningful with --resume" -- "$PARDYN" run lj.toml --resume-changed
expect_error 2 "file is required" -- "$PARDYN" run
"$PARDYN" run --resume straight --set potential.rcut=3.0 --set simulation.steps=3200 \
  --resume-changed -q > changed.log 2>&1 || fail "--resume-changed: $(cat changed.log)"
echo "checkpoint: $resumed kills resumed exactly, $nocheckpoint before the first checkpoint"
