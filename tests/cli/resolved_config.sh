# SPDX-License-Identifier: BSD-3-Clause
# The resolved config.toml a run writes beside its output runs again, from any folder, with the same
# result: input files (a `file` generator's CSV) are recorded absolute (docs/user-guide.md).
. "$(dirname "$0")/common.sh"

mkdir -p in/data elsewhere
python3 - <<'PY'
import random
random.seed(3)
with open("in/data/start.csv", "w") as f:
    f.write("x, y, vx, vy, mass\n")
    for i in range(8):
        for j in range(8):
            f.write(f"{1.25 * i + 0.6}, {1.25 * j + 0.6}, {random.uniform(-1, 1)}, "
                    f"{random.uniform(-1, 1)}, 1.0\n")
PY
cat > in/gas.toml <<'TOML'
[simulation]
dimension = 2
steps = 60
seed = 5

[box]
lo = [0, 0]
hi = [10, 10]
boundary = "periodic"

[[particles]]
generator = "file"
path = "data/start.csv"   # relative to this file's folder

[[potential]]
type = "lennard_jones"
rcut = 2.5
scheme = { type = "cell_list" }

[integrator]
type = "leapfrog"
dt = 0.002

[[output]]
type = "thermo"
interval = 5

[[output]]
type = "vtk"
interval = 20
TOML

"$PARDYN" run in/gas.toml -q -o first
want="path = '$WORK/in/data/start.csv'"
grep -qxF "$want" first/config.toml ||
  fail "config.toml does not record the CSV absolute: $(grep -n 'path' first/config.toml)"

same() {  # same A B: the run's files are byte for byte those of the first run
  for f in thermo.csv run.pvd $(cd first && ls frames/*); do
    cmp -s "first/$f" "$1/$f" || fail "$2: $f differs from the first run's"
  done
  echo "ok: $2 gives the first run's thermo.csv, run.pvd and $(ls first/frames | wc -l) frames"
}
# from another folder, and from its own
(cd elsewhere && "$PARDYN" run ../first/config.toml -q -o ../second)
same second "config.toml run from another folder"
(cd first && "$PARDYN" run config.toml -q -o ../third)
same third "config.toml run from its own folder"
# the copy keeps running after the scenario's folder is gone (only the input file is needed)
rm in/gas.toml
"$PARDYN" run first/config.toml -q -o fourth
same fourth "config.toml run without the original scenario"
echo "resolved_config: passed"
