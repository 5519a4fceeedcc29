# SPDX-License-Identifier: BSD-3-Clause
# SIGINT (Ctrl-C) and SIGTERM (a batch system's time limit) mid-run, then --resume: every file the
# run writes (thermo.csv, the XYZ and LAMMPS dumps, run.pvd and its frames) ends byte for byte as
# an uninterrupted run's (docs/checkpoints.md). The interrupted run observed the step it stopped
# at, which was (almost always) not on the outputs' schedules: the resumed run drops it.
. "$(dirname "$0")/common.sh"

cat > lj.toml <<'TOML'
[simulation]
dimension = 2
steps = 4000
threads = 1
seed = 21
[box]
lo = [0.0, 0.0]
hi = [30.0, 31.176914536239795]   # 25 x 30 cells of the hexagonal lattice
boundary = "periodic"
[[particles]]
generator = "lattice"
kind = "hexagonal"
spacing = 1.2
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
interval = 200
[[output]]
type = "xyz"
interval = 150
[[output]]
type = "lammps_dump"
interval = 250
[[output]]
type = "checkpoint"
interval = 1500
TOML

"$PARDYN" run lj.toml -o straight -q > straight.log 2>&1 || fail "straight run: $(cat straight.log)"
files=(thermo.csv trajectory.xyz dump.lammpstrj run.pvd)

for sig in INT TERM; do
  dir=stopped_$sig
  "$PARDYN" run lj.toml -o "$dir" -q > "$dir.log" 2>&1 &
  pid=$!
  # Mid-run: once the thermo rows pass step 300 (a row is written as it is observed).
  for _ in $(seq 1 3000); do
    last=$(tail -n 1 "$dir/thermo.csv" 2>/dev/null | cut -d, -f1 || true)
    [[ "$last" =~ ^[0-9]+$ ]] && [ "$last" -ge 300 ] && break
    sleep 0.01
  done
  kill -"$sig" "$pid"
  set +e
  wait "$pid"
  rc=$?
  set -e
  want=$([ "$sig" = INT ] && echo 130 || echo 143)
  [ "$rc" -eq "$want" ] || fail "SIG$sig: exit $rc, expected $want: $(cat "$dir.log")"
  stop=$(tail -n 1 "$dir/thermo.csv" | cut -d, -f1)
  [ "$stop" -lt 4000 ] || fail "SIG$sig came after the run's end"
  [ -f "$dir/checkpoints/checkpoint-$(printf %012d "$stop").h5" ] ||
    fail "SIG$sig: no checkpoint of step $stop, where the run stopped: $(ls "$dir/checkpoints")"
  # The interrupted run's files end with the state it stopped in.
  grep -q "Step=$stop " "$dir/trajectory.xyz" || fail "SIG$sig: trajectory.xyz has no frame of step $stop"
  "$PARDYN" run --resume "$dir" -q > "$dir.resume.log" 2>&1 || fail "resume after SIG$sig: $(cat "$dir.resume.log")"
  for f in "${files[@]}"; do
    cmp -s "straight/$f" "$dir/$f" ||
      fail "SIG$sig at step $stop, resumed: $f differs from the uninterrupted run's: $(diff "straight/$f" "$dir/$f" | head -4)"
  done
  [ "$(cd straight/frames && ls)" = "$(cd "$dir/frames" && ls)" ] ||
    fail "SIG$sig: the frames differ: $(cd straight/frames && ls | tr '\n' ' ') / $(cd "$dir/frames" && ls | tr '\n' ' ')"
  for f in straight/frames/*; do
    cmp -s "$f" "$dir/frames/$(basename "$f")" || fail "SIG$sig: frames/$(basename "$f") differs"
  done
  echo "SIG$sig at step $stop (thermo due: $([ $((stop % 10)) -eq 0 ] && echo yes || echo no)): resumed," \
    "${files[*]} and $(ls straight/frames | wc -l) frames byte for byte the uninterrupted run's"
done
echo "resume_interrupted: passed"
