# SPDX-License-Identifier: BSD-3-Clause
# Input that used to crash, hang, run as nonsense or mislead (issue 15, found by fuzzing): sizes and
# indices out of range, memory beyond the machine, special files, what validate must see, cut-offs
# in small periodic boxes, and messages that say what actually happened.
. "$(dirname "$0")/common.sh"
P="$SRC/examples/plummer/plummer.toml"

# Counts and indices are range-checked, with the --set or file:line:col that gave them.
expect_error 1 "--set particles.0.count=1000000000000: 'count' in [[particles]] #1 (plummer) is 1000000000000; it must be >= 1 and <= 2e+09" -- \
  "$PARDYN" validate "$P" --set particles.0.count=1000000000000
expect_error 1 "must be an integer: write it without a decimal point" -- "$PARDYN" validate "$P" --set particles.0.count=1e12
cp "$SRC/examples/galaxy_collision/galaxy_collision.toml" galaxy.toml
sed -i '0,/^count = 3000/s//count = 1000000000000/' galaxy.toml
line=$(grep -n '^count = 1000000000000' galaxy.toml | cut -d: -f1)
expect_error 1 "galaxy.toml:$line:9: 'count' in [[particles]] #1 (galaxy) is 1000000000000; it must be >= 1" -- "$PARDYN" run galaxy.toml -o out-galaxy
expect_error 1 "--set particles.99999999999999999999999.count=1: there is no [[particles]] number 99999999999999999999999; the scenario has 1 (numbered from 0 to 0)" -- \
  "$PARDYN" validate "$P" --set particles.99999999999999999999999.count=1
expect_error 1 "'threads' in [simulation] is 1000000000000; it must be >= 0 and <= 4096" -- "$PARDYN" validate "$P" --set simulation.threads=1000000000000
expect_error 1 "'threads' in [simulation] is 4294967297; it must be >= 0 and <= 4096" -- "$PARDYN" run "$P" --set simulation.threads=4294967297 -o out-threads

# Memory is estimated before the particles are made: more than the process may have is refused
# with the numbers (here an address-space limit of 3 GiB stands for a small machine).
(
  ulimit -v 3000000
  expect_error 1 "particles) need at least" -- "$PARDYN" validate "$P" --set particles.0.count=100000000
  expect_error 1 "of host memory;" -- "$PARDYN" run "$P" --set particles.0.count=100000000 -o out-mem
)
[ ! -e out-mem ] || fail "a run refused for its memory created its output folder"

# The file generator reads regular files only, and validate reads them as run does.
mkdir -p csvdir
printf 'x,y,vx,vy,mass\n0,0,0,0,1\n1,0,0,0.5,1\n' > good.csv
csv_scenario() {  # csv_scenario FILE PATH: a 2D scenario reading PATH
  cat > "$1" <<TOML
[simulation]
dimension = 2
steps = 2
[[particles]]
generator = "file"
path = "$2"
[[potential]]
type = "gravity"
eps = 0.1
TOML
}
csv_scenario dev_zero.toml /dev/zero
expect_error 1 "[[particles]] #1 (file) (dev_zero.toml:4:1): '/dev/zero' is a character device, not a CSV file; give the path of a regular file" -- \
  "$PARDYN" validate dev_zero.toml
csv_scenario folder.toml csvdir
expect_error 1 "csvdir' is a folder, not a CSV file" -- "$PARDYN" validate folder.toml
mkfifo pipe.csv
csv_scenario fifo.toml pipe.csv
expect_error 1 "pipe.csv' is a pipe (FIFO), not a CSV file" -- "$PARDYN" validate fifo.toml
csv_scenario missing.toml nothere.csv
expect_error 1 "no such file: '$WORK/nothere.csv' (relative paths start at the scenario's folder)" -- "$PARDYN" validate missing.toml
csv_scenario good.toml good.csv
expect_error 0 "good.toml: valid" -- "$PARDYN" validate good.toml
printf 'x,y,vx,vy,mass\n0,0,0,0,1\n1,0,0,oops,1\n' > broken.csv
csv_scenario broken.toml broken.csv
expect_error 1 "$WORK/broken.csv:3: vy 'oops' is not a number" -- "$PARDYN" validate broken.toml
# a line without end (a file that is not CSV) is refused at 1 MiB, not read until memory runs out
{ printf 'x,y,vx,vy,mass\n'; head -c 3000000 /dev/zero | tr '\0' '7'; } > long.csv
csv_scenario long.toml long.csv
expect_error 1 "long.csv:2: the line is longer than 1048576 bytes; is this a CSV file?" -- "$PARDYN" validate long.toml
# numbers out of the range of a double, and bytes that would cut a message short, are named as such
printf 'x,y,vx,vy,mass\n1e400,0,0,0,1\n' > huge.csv
csv_scenario huge.toml huge.csv
expect_error 1 "huge.csv:2: x '1e400' is out of the range of a double" -- "$PARDYN" validate huge.toml
printf 'x,y,vx,vy,mass\n0,0,0,0,1\n0,1,0,a\0b,1\n' > nul.csv
csv_scenario nul.toml nul.csv
expect_error 1 "nul.csv:3: vy 'a\\x00b' is not a number ([[particles]] #1 (file) (nul.toml:4:1))" -- "$PARDYN" validate nul.toml

# validate refuses what run refuses: the tree with a periodic axis, grid_fields without cells
cp "$SRC/examples/galaxy_collision/galaxy_collision_tree.toml" tree.toml
printf '\n[box]\nlo = [-10, -10, -10]\nhi = [10, 10, 10]\nboundary = "periodic"\n' >> tree.toml
expect_error 1 'scheme "tree" does not support periodic boundaries' -- "$PARDYN" validate tree.toml --set particles.0.count=10 --set particles.1.count=10
cp good.toml grid.toml
printf '[[output]]\ntype = "grid_fields"\ncells = [0, 0]\n' >> grid.toml
expect_error 1 "grid.toml:12:10: 'cells' in [[output]] #1 (grid_fields) is 0; it must be >= 1 and <= 1e+08" -- "$PARDYN" validate grid.toml
cat > cells.toml <<'TOML'
[simulation]
dimension = 2
[box]
lo = [0, 0]
hi = [10, 10]
boundary = "wall"
[[particles]]
generator = "lattice"
kind = "square"
spacing = 1.0
[[potential]]
type = "lennard_jones"
scheme = { type = "cell_list", cell_size = 1e-9 }
TOML
expect_error 1 "cell_list: cell_size = 1e-09 is smaller than the range it must cover (cut-off + skin = 2.8)" -- "$PARDYN" validate cells.toml

# A cut-off longer than half a periodic side is refused (the minimum image would end the law there).
cat > lj_small_box.toml <<'TOML'
[simulation]
steps = 5
[box]
lo = [0, 0, 0]
hi = [2, 2, 2]
boundary = "periodic"
[[particles]]
generator = "lattice"
kind = "sc"
spacing = 1.0
[[potential]]
type = "lennard_jones"
rcut = 5.0
TOML
expect_error 1 "potential \"lennard_jones\" (lj_small_box.toml:11:1): its cut-off 5 is more than half the periodic box side along x (2): the minimum-image convention" -- \
  "$PARDYN" validate lj_small_box.toml
expect_error 1 "make the box at least 10 wide along x (twice the cut-off) or lower the cut-off" -- "$PARDYN" run lj_small_box.toml -o out-lj
expect_error 0 "valid" -- "$PARDYN" validate lj_small_box.toml --set potential.0.rcut=1.0

# Messages that say what happened: a folder as the scenario; two particles at one place with a law
# without softening.
mkdir -p scenario_dir
expect_error 1 "scenario_dir is a folder, not a scenario file; give the .toml file" -- "$PARDYN" validate scenario_dir
expect_error 1 "/dev/zero is a device or a socket, not a scenario file" -- "$PARDYN" run /dev/zero
printf 'x,y,vx,vy,mass\n0,0,0,0,1\n1,1,0,0,1\n1,1,0,0,1\n' > same.csv
csv_scenario same.toml same.csv
sed -i 's/^eps = 0.1$/eps = 0.0/' same.toml
expect_error 1 "the state has non-finite values (NaN or Inf) at step 0: particles 1 and 2 are at the same place (1, 1), where the force between them is infinite" -- \
  "$PARDYN" run same.toml -o out-same
expect_error 1 "give the law a softening (eps > 0)" -- "$PARDYN" run same.toml -o out-same

# A value out of every range is named for what it is.
expect_error 1 "--set output.0.interval=inf: 'interval' in [[output]] #1 (vtk) must be an integer, not inf" -- "$PARDYN" validate "$P" --set output.0.interval=inf
printf '[simulation]\nend_time = 1e400\n' > big_float.toml
expect_error 1 "big_float.toml:2:17: TOML syntax error" -- "$PARDYN" validate big_float.toml
expect_error 1 "a float must lie within the range of a double" -- "$PARDYN" validate big_float.toml
expect_error 1 "particle 0 has position coordinate 1e+308, beyond the range of precision float (3.40282e+38)" -- \
  "$PARDYN" validate "$P" --set 'particles.0.offset=[1e308, 0, 0]'
