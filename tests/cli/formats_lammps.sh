# SPDX-License-Identifier: BSD-3-Clause
# LAMMPS and pardyn read each other's files: data files written by LAMMPS's write_data (3D atomic
# after a run, with image flags, velocities and pair coefficients; 2D full) read by the
# lammps_data generator, with [box] from = the data file, give the atoms LAMMPS's write_dump shows
# (%.17g) bit for bit; LAMMPS's dumps (custom with image flags, custom unwrapped, atom scaled)
# read by the lammps_dump generator give the same atoms; a dump written by the lammps_dump
# observer read back by LAMMPS's read_dump gives the same atoms; a data file written by the
# lammps_data observer, read by read_data, gives LAMMPS's `run 0` the potential energy, kinetic
# energy and pressure of pardyn's thermo.csv (3D with two masses, 2D).
# Needs `lmp` (Debian's lammps package); skipped (exit 77) without it.
. "$(dirname "$0")/common.sh"
LMP=${LMP:-lmp}
command -v "$LMP" > /dev/null || { echo "lammps not installed ($LMP not found): skipped"; exit 77; }
export OMP_NUM_THREADS=1
lmp_run() { "$LMP" -in "$1" -log none > "$1.log" 2>&1 || fail "$LMP -in $1: $(tail -n 5 "$1.log")"; }

# compare A B [images]: two dumps (the last frame of each) hold the same atoms: by id the same
# type, the same x y z vx vy vz (as doubles, exactly), and the same image flags and mass where both
# have them; with `images`, some atom must have a non-zero image flag.
compare() {
  python3 - "$1" "$2" <<'PY' || fail "$1 and $2 differ"
import sys
def last_frame(path):
    lines = open(path).read().split("\n")
    at = max(i for i, l in enumerate(lines) if l.startswith("ITEM: ATOMS"))
    n = int(lines[max(i for i, l in enumerate(lines[:at]) if l == "ITEM: NUMBER OF ATOMS") + 1])
    cols = lines[at].split()[2:]
    return {int(r[0]): dict(zip(cols, r)) for r in (l.split() for l in lines[at + 1:at + 1 + n])}
a, b = last_frame(sys.argv[1]), last_frame(sys.argv[2])
assert sorted(a) == sorted(b), f"ids differ: {len(a)} and {len(b)} atoms"
crossed = 0
for i in a:
    both = [c for c in ("ix", "iy", "iz", "mass") if c in a[i] and c in b[i]]
    for c in ["type"] + [c for c in both if c != "mass"]:
        assert int(a[i][c]) == int(b[i][c]), f"atom {i}: {c} {a[i][c]} != {b[i][c]}"
    for c in ["x", "y", "z", "vx", "vy", "vz"] + [c for c in both if c == "mass"]:
        assert float(a[i][c]) == float(b[i][c]), f"atom {i}: {c} {a[i][c]} != {b[i][c]}"
    crossed += any(int(a[i].get(c, 0)) != 0 for c in ("ix", "iy", "iz"))
print(f"{len(a)} atoms identical ({crossed} with non-zero image flags)")
if len(sys.argv) > 3: assert crossed > 0, "no atom has a non-zero image flag: images untested"
PY
}
# near A B: two dumps (the last frame of each) hold the same atoms up to the digits written: by
# id the same type, unwrapped positions (x + ix L, or xu; either may be scaled, xs) within 1e-5 of
# the box, velocities within 1e-5 (relative) where B has them.
near() {
  python3 - "$1" "$2" <<'PY' || fail "$1 and $2 differ"
import sys
def last_frame(path):
    lines = open(path).read().split("\n")
    at = max(i for i, l in enumerate(lines) if l.startswith("ITEM: ATOMS"))
    n = int(lines[max(i for i, l in enumerate(lines[:at]) if l == "ITEM: NUMBER OF ATOMS") + 1])
    b = max(i for i, l in enumerate(lines[:at]) if l.startswith("ITEM: BOX BOUNDS"))
    box = [tuple(map(float, lines[b + 1 + d].split()[:2])) for d in range(3)]
    cols = lines[at].split()[2:]
    return box, {int(r[0]): dict(zip(cols, r)) for r in (l.split() for l in lines[at + 1:at + 1 + n])}
def unwrapped(box, r, d):
    a, (lo, hi) = "xyz"[d], box[d]
    if a + "u" in r: return float(r[a + "u"])
    x = float(r[a]) if a in r else lo + float(r[a + "s"]) * (hi - lo)
    return x + int(r.get("i" + a, 0)) * (hi - lo)
(box_a, a), (box_b, b) = last_frame(sys.argv[1]), last_frame(sys.argv[2])
assert sorted(a) == sorted(b), f"ids differ: {len(a)} and {len(b)} atoms"
for i in a:
    assert a[i]["type"] == b[i]["type"], (i, a[i], b[i])
    for d in range(3):
        L = box_a[d][1] - box_a[d][0]
        assert abs(unwrapped(box_a, a[i], d) - unwrapped(box_b, b[i], d)) <= 1e-5 * L, (i, d, a[i], b[i])
        v = "v" + "xyz"[d]
        if v in b[i]:
            assert abs(float(a[i][v]) - float(b[i][v])) <= 1e-5 * max(1.0, abs(float(b[i][v]))), (i, v)
print(f"{len(a)} atoms the same up to the digits written")
PY
}

# --- 3D, atom style atomic: an LJ melt, two types, after 300 steps (atoms have crossed faces) ----
cat > in.melt <<'EOF'
units lj
atom_style atomic
boundary p p p
lattice fcc 0.8442
region box block 0 3 0 3 0 3
create_box 2 box
create_atoms 1 box
group low id 1:40
set group low type 2
mass 1 1.0
mass 2 2.5
velocity all create 3.0 87287 loop geom
pair_style lj/cut 2.5
pair_coeff * * 1.0 1.0
neighbor 0.3 bin
fix 1 all nve
timestep 0.005
run 300
write_data melt.data
write_dump all custom melt.dump id type x y z vx vy vz ix iy iz mass modify format float %.17g sort id
write_dump all custom meltu.dump id type xu yu zu vx vy vz modify format float %.17g
write_dump all atom melt.atom modify image yes
EOF
lmp_run in.melt
grep -q "Pair Coeffs" melt.data || fail "melt.data has no Pair Coeffs section (the test wants one skipped)"
cat > melt.toml <<EOF
[simulation]
dimension = 3
steps = 0
[box]
from = "melt.data"
boundary = "periodic"
[[particles]]
generator = "lammps_data"
path = "melt.data"
[[output]]
type = "lammps_dump"
EOF
"$PARDYN" run melt.toml -o melt -q || fail "pardyn reading melt.data"
compare melt.dump melt/dump.lammpstrj images
echo "ok: LAMMPS write_data (3D atomic, image flags, velocities) read by lammps_data"

# The same atoms from LAMMPS's dumps, the box from the dump: custom with image flags (exact),
# custom with unwrapped positions, atom style (scaled positions, image flags, 6 digits).
for dump in melt.dump meltu.dump melt.atom; do
  cat > from_dump.toml <<EOF
[simulation]
dimension = 3
steps = 0
[box]
from = "$dump"
[[particles]]
generator = "lammps_dump"
path = "$dump"
masses = [1.0, 2.5]
[[output]]
type = "lammps_dump"
EOF
  "$PARDYN" run from_dump.toml -o "from_$dump" -q || fail "pardyn reading $dump"
  near "from_$dump/dump.lammpstrj" "$dump"
done
compare melt.dump from_melt.dump/dump.lammpstrj images
echo "ok: LAMMPS dumps (custom, unwrapped, atom scaled) read by lammps_dump"

# --- 2D, atom style full, a wall along y: charges and molecules are read past ---------------------
cat > in.full <<'EOF'
units lj
dimension 2
atom_style full
boundary p f p
lattice sq 0.7
region box block -1 3 0 4 -0.5 0.5
create_box 3 box
create_atoms 1 box
set atom 3 type 3
set atom 3 charge 0.5
set atom 5 mol 2
mass * 1.5
mass 3 4.0
velocity all create 1.0 4928459 dist gaussian
write_data full.data
write_dump all custom full.dump id type x y z vx vy vz ix iy iz mass modify format float %.17g sort id
EOF
lmp_run in.full
grep -q "Atoms # full" full.data || fail "full.data is not atom style full"
cat > full.toml <<EOF
[simulation]
dimension = 2
steps = 0
[box]
from = "full.data"
boundary = ["periodic", "wall"]
[[particles]]
generator = "lammps_data"
path = "full.data"
[[output]]
type = "lammps_dump"
EOF
"$PARDYN" run full.toml -o full -q || fail "pardyn reading full.data"
compare full.dump full/dump.lammpstrj
echo "ok: LAMMPS write_data (2D full) read by lammps_data"

# --- pardyn's dump read by LAMMPS: an LJ run of pardyn, its last frame through read_dump ---------
cat > lj.toml <<'EOF'
[simulation]
dimension = 3
steps = 200
threads = 1
seed = 9
[box]
lo = [-1.0, 0.0, 0.0]
hi = [7.0, 8.0, 8.0]
boundary = "periodic"
[[particles]]
generator = "lattice"
kind = "sc"
spacing = 1.0
temperature = 2.0
[[particles]]
generator = "lattice"
kind = "sc"
spacing = 1.0
type = 1
offset = [0.5, 0.5, 0.5]
[[potential]]
type = "lennard_jones"
rcut = 2.5
[integrator]
type = "leapfrog"
dt = 0.002
[[output]]
type = "lammps_dump"
interval = 100
EOF
"$PARDYN" run lj.toml -o lj -q || fail "pardyn LJ run"
cat > in.read <<'EOF'
units lj
atom_style atomic
boundary p p p
region box block -1 7 0 8 0 8
create_box 2 box
mass * 1.0
read_dump lj/dump.lammpstrj 200 x y z vx vy vz ix iy iz box yes add keep
write_dump all custom back.dump id type x y z vx vy vz ix iy iz modify format float %.17g sort id
EOF
lmp_run in.read
grep -q "1024 atoms added" in.read.log || fail "read_dump did not add 1024 atoms: $(grep -i atoms in.read.log)"
compare lj/dump.lammpstrj back.dump images
echo "ok: LAMMPS read_dump reads pardyn's lammps_dump (3D, periodic)"

# 2D, a wall along x (ff) and an open y axis (mm: bounds grown to hold the particles).
cat > lj2.toml <<'EOF'
[simulation]
dimension = 2
steps = 100
threads = 1
seed = 2
[box]
lo = [0.0, 0.0]
hi = [10.0, 10.0]
boundary = ["wall", "open"]
[[particles]]
generator = "lattice"
kind = "square"
spacing = 1.0
temperature = 1.0
[[potential]]
type = "lennard_jones"
rcut = 2.5
[[potential]]
type = "walls"
[integrator]
type = "leapfrog"
dt = 0.002
[[output]]
type = "lammps_dump"
interval = 100
EOF
"$PARDYN" run lj2.toml -o lj2 -q || fail "pardyn 2D LJ run"
grep -q "ITEM: BOX BOUNDS ff mm pp" lj2/dump.lammpstrj || fail "lj2/dump.lammpstrj: not ff mm pp"
cat > in.read2 <<'EOF'
units lj
dimension 2
atom_style atomic
boundary f m p
region box block 0 10 0 10 -0.5 0.5
create_box 1 box
mass * 1.0
read_dump lj2/dump.lammpstrj 100 x y vx vy box yes add keep
write_dump all custom back2.dump id type x y z vx vy vz modify format float %.17g sort id
EOF
lmp_run in.read2
grep -q "100 atoms added" in.read2.log || fail "read_dump did not add 100 atoms: $(grep -i atoms in.read2.log)"
compare lj2/dump.lammpstrj back2.dump
echo "ok: LAMMPS read_dump reads pardyn's lammps_dump (2D, wall and open axes)"

# --- pardyn's data file read by LAMMPS: read_data, the run's law, run 0 ---------------------------
# same_thermo THERMO.CSV LOG: pardyn's last row and LAMMPS's step-0 row agree (pe, ke, press).
same_thermo() {
  python3 - "$1" "$2" <<'PY' || fail "LAMMPS's run 0 after read_data differs from pardyn's thermo"
import csv, sys
row = list(csv.DictReader(open(sys.argv[1])))[-1]
lines = open(sys.argv[2]).read().split("\n")
head = next(i for i, l in enumerate(lines) if l.split()[:1] == ["Step"])
lmp = dict(zip(lines[head].split(), map(float, lines[head + 1].split())))
for ours, theirs in (("potential", "PotEng"), ("kinetic", "KinEng"), ("pressure", "Press")):
    a, b = float(row[ours]), lmp[theirs]
    assert abs(a - b) <= 1e-10 * max(abs(a), 1.0), f"{ours} {a!r} != LAMMPS {theirs} {b!r}"
    print(f"{ours}: pardyn {a!r}, LAMMPS {b!r}")
PY
}
# 3D: the LJ run above (lj/cut, not shifted), two types of different masses, 200 steps (atoms
# have crossed faces).
sed -e 's/^rcut = 2.5$/rcut = 2.5\nshift = false/' -e 's/^type = 1$/type = 1\nmass = 2.5/' \
    -e 's/^type = "lammps_dump"$/type = "lammps_data"/' lj.toml > data3.toml
printf '[[output]]\ntype = "thermo"\ninterval = 100\n' >> data3.toml
"$PARDYN" run data3.toml -o data3 -q || fail "pardyn LJ run writing a data file"
grep -q "^1 1$" data3/state.data && grep -q "^2 2.5$" data3/state.data ||
  fail "data3/state.data: not the masses 1 and 2.5: $(head -n 20 data3/state.data)"
cat > in.data3 <<'EOF'
units lj
atom_style atomic
boundary p p p
read_data data3/state.data
pair_style lj/cut 2.5
pair_coeff * * 1.0 1.0
thermo_style custom step pe ke press
thermo_modify norm no format float %.17g
run 0
EOF
lmp_run in.data3
same_thermo data3/thermo.csv in.data3.log
echo "ok: LAMMPS read_data of pardyn's lammps_data output, run 0: pardyn's energies and pressure (3D)"

# 2D, the shifted law (pair_modify shift yes).
cat > data2.toml <<'EOF'
[simulation]
dimension = 2
steps = 100
threads = 1
seed = 6
[box]
lo = [0.0, -3.0]
hi = [12.0, 9.0]
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
dt = 0.002
[[output]]
type = "thermo"
interval = 100
[[output]]
type = "lammps_data"
interval = 100
EOF
"$PARDYN" run data2.toml -o data2 -q || fail "pardyn 2D LJ run writing a data file"
cat > in.data2 <<'EOF'
units lj
dimension 2
atom_style atomic
boundary p p p
read_data data2/state.data
pair_style lj/cut 2.5
pair_coeff * * 1.0 1.0
pair_modify shift yes
thermo_style custom step pe ke press
thermo_modify norm no format float %.17g
run 0
EOF
lmp_run in.data2
same_thermo data2/thermo.csv in.data2.log
echo "ok: LAMMPS read_data of pardyn's lammps_data output, run 0: pardyn's energies and pressure (2D)"
echo "formats_lammps: all passed"
