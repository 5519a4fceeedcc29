# SPDX-License-Identifier: BSD-3-Clause
# Parallel runs from the command line (mpirun -np 2 pardyn run): the output of two ranks, and the
# ways a parallel launch can go wrong (different scenarios, a rank failing during setup or during
# the steps), each of which must end the whole job with a clear message, never hang.
# $4 = mpiexec, $5 = its extra flags (Open MPI: --oversubscribe --allow-run-as-root).
. "$(dirname "$0")/common.sh"
MPIEXEC=${4:-mpiexec}
read -r -a MPIFLAGS <<<"${5:-}"
command -v "$MPIEXEC" >/dev/null || { echo "no $MPIEXEC: skipped"; exit 77; }
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# mpi ARGS...: mpiexec with a time limit; a hang ends as exit code 124 (or 137).
mpi() { timeout -k 10 120 "$MPIEXEC" "${MPIFLAGS[@]}" "$@"; }
# mpi_fails PATTERN -- ARGS...: the job must exit non-zero in time and print PATTERN (stderr or
# stdout: mpirun forwards both).
mpi_fails() {
  local pattern=$1
  shift 2
  local start=$SECONDS rc
  set +e
  out=$(mpi "$@" 2>&1)
  rc=$?
  set -e
  [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || fail "'$*' hung (killed after $((SECONDS - start)) s); output: $out"
  [ "$rc" -ne 0 ] || fail "'$*' exited 0; output: $out"
  grep -qF -- "$pattern" <<<"$out" || fail "'$*' did not say: $pattern; output: $out"
  echo "ok: $* -> exit $rc in $((SECONDS - start)) s: $pattern"
}

# A short LJ run (domain decomposition of the cell list), thermo every 5 steps, frames every 10.
lj=(--set simulation.steps=20 --set simulation.threads=1 --set output.0.interval=5
    --set output.1.interval=10)
LJ="$SRC/tests/mpi/lj_periodic.toml"

# --- Two ranks: one set of files, the same numbers as one rank -----------------------------------
mpi -n 2 "$PARDYN" run "$LJ" -o par "${lj[@]}" > par.log 2>&1 || fail "mpirun -n 2 failed: $(cat par.log)"
"$PARDYN" run "$LJ" -q -o ser "${lj[@]}" || fail "the serial run failed"
[ "$(grep -c '^pardyn: 864 particles' par.log)" -eq 1 ] || fail "the start line is not printed once: $(cat par.log)"
grep -q "2 ranks (domain decomposition" par.log || fail "no '2 ranks' in the start line: $(cat par.log)"
for f in 000000 000001 000002; do
  [ -s "par/frames/$f.pvtp" ] || fail "no par/frames/$f.pvtp"
  [ "$(grep -c '<Piece ' "par/frames/$f.pvtp")" -eq 2 ] || fail "par/frames/$f.pvtp has not two pieces"
  for r in 0 1; do [ -s "par/frames/${f}_$r.vtp" ] || fail "no par/frames/${f}_$r.vtp"; done
done
[ ! -e par/frames/000003.pvtp ] || fail "more frames than steps / interval + 1"
grep -q 'file="frames/000002.pvtp"' par/run.pvd || fail "run.pvd does not list the last frame"
# thermo.csv written once (by rank 0): a header and one line per observation, no more.
[ "$(grep -c '^step,' par/thermo.csv)" -eq 1 ] || fail "thermo.csv has more than one header"
[ "$(wc -l < par/thermo.csv)" -eq "$(wc -l < ser/thermo.csv)" ] || fail "thermo.csv: not as many lines as one rank's"
# The last line: the same columns, each equal to one rank's to 1e-9 (relative to max(1, |value|):
# the parallel sums differ from the serial ones in the last digits only).
head -n 1 par/thermo.csv | cmp -s - <(head -n 1 ser/thermo.csv) || fail "thermo.csv columns differ"
paste -d '\n' <(tail -n 1 par/thermo.csv) <(tail -n 1 ser/thermo.csv) | awk -F, -v head="$(head -n 1 ser/thermo.csv)" '
  NR == 1 { n = split($0, p, ","); next }
  { split(head, h, ","); worst = 0
    for (i = 1; i <= n; ++i) { d = p[i] - $i; d = d < 0 ? -d : d; s = $i < 0 ? -$i : $i; s = s > 1 ? s : 1
      if (d / s > worst) { worst = d / s; col = h[i] } }
    printf "thermo.csv last line: largest difference to one rank %.2e (%s)\n", worst, col
    exit worst > 1e-9 }' || fail "thermo.csv's last line differs from one rank's"
echo "ok: mpirun -n 2: frames with two pieces, thermo.csv once and equal to one rank's"

# --- Trajectories (xyz, lammps_dump): rank 0 gathers every rank's particles, sorted by id ---------
mpi -n 2 "$PARDYN" run "$LJ" -q -o traj "${lj[@]}" --set output.1.type=\"xyz\" \
  --set output.1.interval=10 > traj.log 2>&1 || fail "mpirun -n 2 with xyz: $(cat traj.log)"
"$PARDYN" run "$LJ" -q -o traj1 "${lj[@]}" --set output.1.type=\"xyz\" --set output.1.interval=10 ||
  fail "the serial run with xyz failed"
[ "$(grep -c 'Step=' traj/trajectory.xyz)" -eq 3 ] || fail "traj/trajectory.xyz has not 3 frames"
# Step 0 is the same bit for bit; later frames hold every id once, in order (their positions differ
# from one rank's in the last digits: the forces are summed in another order).
cmp -s <(head -n 866 traj/trajectory.xyz) <(head -n 866 traj1/trajectory.xyz) ||
  fail "frame 0 of trajectory.xyz differs from one rank's"
awk 'NF == 9 && $9 != n++ { print "id " $9 " where " n - 1 " belongs"; bad = 1; exit }
     NF == 1 { n = 0 } END { exit bad }' traj/trajectory.xyz || fail "trajectory.xyz: ids not in order"
echo "ok: mpirun -n 2: one trajectory.xyz, every particle in each frame, sorted by id"

# Image flags of a LAMMPS data file travel with the particles to their ranks.
cat > images.data <<'DATA'
four atoms with image flags

4 atoms
2 atom types
0 4 xlo xhi
0 4 ylo yhi
0 4 zlo zhi

Atoms # atomic

1 1 0.5 0.5 0.5 1 0 -2
2 2 3.5 0.5 0.5 0 3 0
3 1 0.5 3.5 3.5 -1 -1 1
4 2 3.5 3.5 3.5 0 0 7
DATA
cat > images.toml <<'TOML'
[simulation]
steps = 0
threads = 1
[box]
lo = [0.0, 0.0, 0.0]
hi = [4.0, 4.0, 4.0]
boundary = "periodic"
[[particles]]
generator = "lammps_data"
path = "images.data"
[[output]]
type = "lammps_dump"
TOML
mpi -n 2 "$PARDYN" run images.toml -q -o images2 > images.log 2>&1 || fail "mpirun -n 2 images: $(cat images.log)"
"$PARDYN" run images.toml -q -o images1 || fail "the serial run of images.toml failed"
grep -q '^4 2 3.5 3.5 3.5 0 0 0 0 0 7 1$' images2/dump.lammpstrj || fail "image flags lost: $(cat images2/dump.lammpstrj)"
cmp -s images1/dump.lammpstrj images2/dump.lammpstrj || fail "the dumps of 1 and 2 ranks differ"
echo "ok: mpirun -n 2: the image flags of a LAMMPS data file reach the dump"

# --- Different scenarios on the ranks (MPMD): refused by rank 0, naming the difference ------------
sed 's/^seed = 7$/seed = 8/' "$LJ" > other.toml
grep -q '^seed = 8$' other.toml || fail "could not make a differing scenario"
mpi_fails "different scenario" -- -n 1 "$PARDYN" run "$LJ" -q -o mismatch "${lj[@]}" : \
  -n 1 "$PARDYN" run other.toml -q -o mismatch "${lj[@]}"
mpi_fails "different scenario" -- -n 1 "$PARDYN" run "$LJ" -q -o mismatch "${lj[@]}" : \
  -n 1 "$PARDYN" run "$LJ" -q -o mismatch "${lj[@]}" --set simulation.steps=21

# --- A rank failing during setup: its error, reported once by rank 0 ------------------------------
mpi_fails "pardyn: error: rank 1: missing.toml: no such file" -- \
  -n 1 "$PARDYN" run "$LJ" -q -o setup "${lj[@]}" : -n 1 "$PARDYN" run missing.toml -q -o setup
[ "$(grep -c 'no such file' <<<"$out")" -eq 1 ] || fail "the setup error is not printed once: $out"

# --- A rank failing during the steps: it says so and ends the job ---------------------------------
# Rank 1 cannot write its piece of frame 1 (a folder is in the way): an I/O error that only rank 1
# meets, while rank 0 goes on to the next collective and would wait there forever.
mkdir -p blocked/frames/000001_1.vtp && touch blocked/frames/000001_1.vtp/keep
mpi_fails "pardyn: error on rank 1 of 2" -- -n 2 "$PARDYN" run "$LJ" -q -o blocked "${lj[@]}" \
  --set output.1.interval=2
# Every rank meeting the same error (the state is not finite: two particles at one point, no
# softening): each says so, and the job ends.
cat > blowup.csv <<'CSV'
x,y,z,vx,vy,vz,mass
0,0,0,0,0,0,1
0,0,0,0,0,0,1
0.5,0.5,0.5,0,0,0,1
-0.5,-0.5,-0.5,0,0,0,1
CSV
cat > blowup.toml <<'TOML'
[simulation]
steps = 50
threads = 1
backend = "cpu"
[[particles]]
generator = "file"
path = "blowup.csv"
[[potential]]
type = "gravity"
[integrator]
type = "leapfrog"
dt = 0.5
TOML
mpi_fails "non-finite values" -- -n 2 "$PARDYN" run blowup.toml -q -o blowup
grep -qF "error on rank" <<<"$out" || fail "the blow-up is not reported as a rank's error: $out"

echo "mpi: all passed"
