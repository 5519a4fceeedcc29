# SPDX-License-Identifier: BSD-3-Clause
# The xyz and lammps_dump trajectories from the command line: a resumed run continues them after
# the checkpoint's step (frames of the dead run after it, and a frame cut short, go) so that they
# equal a straight run's byte for byte; a file that is not a trajectory is kept aside; the
# readers' errors reach the user as path:line; `pardyn plugins show` documents both kinds of xyz,
# lammps_data and lammps_dump.
# LAMMPS itself reads and writes these files in tests/cli/formats_lammps.sh.
. "$(dirname "$0")/common.sh"

cat > lj.toml <<'EOF'
[simulation]
dimension = 2
steps = 300
threads = 1
seed = 4
[box]
lo = [0.0, 0.0]
hi = [12.0, 12.0]
boundary = "periodic"
[[particles]]
generator = "lattice"
kind = "square"
spacing = 1.2
temperature = 1.0
[[potential]]
type = "lennard_jones"
rcut = 2.5
[integrator]
type = "leapfrog"
dt = 0.005
[[output]]
type = "xyz"
interval = 25
[[output]]
type = "lammps_dump"
interval = 25
[[output]]
type = "lammps_data"
interval = 25
[[output]]
type = "checkpoint"
interval = 100
keep = 5
EOF
"$PARDYN" run lj.toml -o straight -q || fail "straight run"
[ "$(grep -c 'Step=' straight/trajectory.xyz)" -eq 13 ] || fail "straight/trajectory.xyz has not 13 frames"
[ "$(grep -c 'ITEM: TIMESTEP' straight/dump.lammpstrj)" -eq 13 ] || fail "straight/dump.lammpstrj has not 13 frames"

# A run that died after step 200 while writing: its checkpoint at step 100 is the newest intact one,
# the files hold frames after step 100 and end in the middle of a frame.
cp -r straight died
rm died/checkpoints/checkpoint-000000000200.h5 died/checkpoints/checkpoint-000000000300.h5
for f in trajectory.xyz dump.lammpstrj; do
  size=$(stat -c %s "straight/$f")
  head -c $((size * 3 / 4 + 17)) "straight/$f" > "died/$f"
done
head -c 200 straight/state.data > died/state.data  # the state of a later step, cut short
tail -n 1 died/trajectory.xyz | grep -q 'Step=' && fail "the cut does not fall inside a frame"
"$PARDYN" run --resume died -q > resume.log 2>&1 || fail "resume: $(cat resume.log)"
for f in trajectory.xyz dump.lammpstrj state.data; do
  cmp -s "straight/$f" "died/$f" || fail "resumed $f differs from the straight run's: $(cmp "straight/$f" "died/$f")"
done
[ ! -e died/state.data.tmp ] || fail "died/state.data.tmp left behind"
echo "ok: resumed from step 100: trajectory.xyz, dump.lammpstrj and state.data equal the straight run's"

# A file that is not a trajectory: kept as <file>.before-resume, a new file from the resumed steps.
cp -r straight other
rm other/checkpoints/checkpoint-000000000300.h5
echo "not a trajectory" > other/trajectory.xyz
"$PARDYN" run --resume other -q > other.log 2>&1 || fail "resume with a foreign file: $(cat other.log)"
[ "$(cat other/trajectory.xyz.before-resume)" = "not a trajectory" ] || fail "the foreign file was not kept aside"
[ "$(grep -c 'Step=' other/trajectory.xyz)" -eq 4 ] || fail "the new trajectory.xyz has not the 4 frames after step 200"
grep -q 'Step=225 ' other/trajectory.xyz || fail "the new trajectory.xyz does not start after the checkpoint"
cmp -s straight/dump.lammpstrj other/dump.lammpstrj || fail "dump.lammpstrj differs after a resume from step 200"
echo "ok: a file that is not a trajectory is kept aside on resume"

# The last frame read back into a new run (xyz and a LAMMPS data file): `pardyn validate` and the
# first frame of a steps = 0 run show the same particles.
cat > again.toml <<'EOF'
[simulation]
dimension = 2
steps = 0
[box]
lo = [0.0, 0.0]
hi = [12.0, 12.0]
boundary = "periodic"
[[particles]]
generator = "xyz"
path = "straight/trajectory.xyz"
frame = -1
[[output]]
type = "xyz"
EOF
"$PARDYN" validate again.toml > validate.log 2>&1 || fail "validate: $(cat validate.log)"
"$PARDYN" run again.toml -o again -q || fail "the run from the last frame"
n=$(head -n 1 again/trajectory.xyz)
diff <(tail -n "$n" straight/trajectory.xyz | cut -d' ' -f1-8) <(tail -n "$n" again/trajectory.xyz | cut -d' ' -f1-8) \
  > /dev/null || fail "the last frame read back differs"
echo "ok: the last frame read back by the xyz generator"

# [box] from the run's dump, data file or XYZ: validate says which box it took, and the run from
# the last frame takes the same particles.
for f in dump.lammpstrj state.data trajectory.xyz; do
  sed -e '/^lo = /d' -e "s#^hi = .*#from = \"straight/$f\"#" again.toml > from.toml
  [ "$f" = state.data ] || sed -i '/^boundary = /d' from.toml
  "$PARDYN" validate from.toml > from.log 2>&1 || fail "validate with [box] from $f: $(cat from.log)"
  grep -qF "[box] from straight/$f (" from.log || fail "validate does not say the box from $f: $(cat from.log)"
  grep -qF 'lo = [0, 0], hi = [12, 12], boundary = ["periodic", "periodic"]' from.log ||
    fail "[box] from $f: not the run's box: $(cat from.log)"
done
"$PARDYN" run from.toml -o from -q || fail "the run with [box] from"
cmp -s again/trajectory.xyz from/trajectory.xyz || fail "[box] from: another run than with [box] lo, hi"
echo "ok: [box] from a dump, a data file and an XYZ file"

# Errors reach the user as path:line.
printf '3\ncomment\nAr 0 0 0\nAr 1 1 0\n' > cut.xyz
sed 's#straight/trajectory.xyz#cut.xyz#' again.toml > cut.toml
expect_error 1 "cut.xyz:4: the file ends after 2 of the 3 atom lines" -- "$PARDYN" validate cut.toml
printf 'title\n\n1 atoms\n1 atom types\n0 12 xlo xhi\n0 12 ylo yhi\n0 1 zlo zhi\n0.5 0 0 xy xz yz\n' > tilt.data
cat > tilt.toml <<'EOF'
[simulation]
dimension = 2
[box]
lo = [0.0, 0.0]
hi = [12.0, 12.0]
boundary = "periodic"
[[particles]]
generator = "lammps_data"
path = "tilt.data"
EOF
expect_error 1 "tilt.data:8: the box is triclinic" -- "$PARDYN" validate tilt.toml
sed 's/hi = \[12.0, 12.0\]/hi = [12.0, 13.0]/' again.toml > box.toml
expect_error 1 "hi = [12.0, 12.0]" -- "$PARDYN" validate box.toml

# Two outputs writing one file are refused before the run.
cat lj.toml > clash.toml
printf '[[output]]\ntype = "lammps_dump"\nfile = "trajectory.xyz"\n' >> clash.toml
expect_error 1 "trajectory.xyz, which" -- "$PARDYN" validate clash.toml

"$PARDYN" plugins show xyz > show.txt || fail "plugins show xyz"
grep -q "xyz — generator" show.txt || fail "plugins show xyz lacks the generator: $(cat show.txt)"
grep -q "xyz — observer" show.txt || fail "plugins show xyz lacks the observer: $(cat show.txt)"
for name in lammps_data lammps_dump; do
  "$PARDYN" plugins show $name > show_$name.txt || fail "plugins show $name"
  for kind in generator observer; do
    grep -q "$name — $kind" show_$name.txt || fail "plugins show $name lacks the $kind: $(cat show_$name.txt)"
  done
done
grep -q "read_data" show_lammps_data.txt || fail "plugins show lammps_data: no read_data"
grep -q "dump custom" show_lammps_dump.txt || fail "plugins show lammps_dump: no dump custom"
echo "formats: all passed"
