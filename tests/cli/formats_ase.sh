# SPDX-License-Identifier: BSD-3-Clause
# ASE (Debian's python3-ase, 3.22) reads pardyn's extended XYZ with the run's velocities and
# masses: ASE knows `momenta` and `masses`, OVITO `velo` and `mass`, and the xyz output writes
# both. Every frame of a 3D run (two species, two masses, periodic and walled axes) and of a 2D run
# is read with ase.io.read and compared with what pardyn wrote in its lammps_dump of the same
# steps: positions and masses exactly, velocities to rounding (ASE divides m v by m), the cell,
# pbc, and the kinetic energy against thermo.csv. Needs a python3 with ASE; skipped (exit 77)
# without one.
. "$(dirname "$0")/common.sh"
PY=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" > /dev/null && "$p" -c 'import ase.io' 2> /dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "ASE not installed (python3-ase): skipped"; exit 77; }
"$PY" -c 'import ase; print("ASE", ase.__version__)'

cat > lj3.toml <<'EOF2'
[simulation]
dimension = 3
steps = 100
threads = 1
seed = 11
[box]
lo = [-1.0, 0.0, 0.0]
hi = [7.0, 8.0, 8.0]
boundary = ["periodic", "periodic", "wall"]
[[particles]]
generator = "lattice"
kind = "sc"
spacing = 1.0
region_lo = [-1.0, 0.0, 0.0]
region_hi = [7.0, 8.0, 4.0]
temperature = 1.5
[[particles]]
generator = "lattice"
kind = "sc"
spacing = 1.0
region_lo = [-1.0, 0.0, 4.0]
region_hi = [7.0, 8.0, 8.0]
type = 1
mass = 2.5
temperature = 1.5
[[potential]]
type = "lennard_jones"
rcut = 2.5
[[potential]]
type = "walls"
[integrator]
type = "leapfrog"
dt = 0.002
[[output]]
type = "xyz"
interval = 50
species = ["Ar", "Kr"]
[[output]]
type = "lammps_dump"
interval = 50
[[output]]
type = "thermo"
interval = 50
EOF2
"$PARDYN" run lj3.toml -o lj3 -q || fail "pardyn 3D run"

cat > lj2.toml <<'EOF2'
[simulation]
dimension = 2
steps = 100
threads = 1
seed = 3
[box]
lo = [0.0, -2.0]
hi = [10.0, 8.0]
boundary = "periodic"
[[particles]]
generator = "lattice"
kind = "square"
spacing = 1.25
temperature = 1.0
mass = 0.75
[[potential]]
type = "lennard_jones"
rcut = 2.5
[integrator]
type = "leapfrog"
dt = 0.002
[[output]]
type = "xyz"
interval = 50
species = ["Ne"]
[[output]]
type = "lammps_dump"
interval = 50
[[output]]
type = "thermo"
interval = 50
EOF2
"$PARDYN" run lj2.toml -o lj2 -q || fail "pardyn 2D run"

for case in "lj3 3 Ar,Kr" "lj2 2 Ne"; do
  set -- $case
  "$PY" - "$1/trajectory.xyz" "$1/dump.lammpstrj" "$1/thermo.csv" "$2" "$3" <<'PY' || fail "ASE reading $1/trajectory.xyz"
import csv, sys
import ase.io
xyz, dump, thermo, dim, species = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5].split(",")

def dump_frames(path):
    lines = open(path).read().split("\n")
    frames, i = [], 0
    while i < len(lines) and lines[i]:
        assert lines[i] == "ITEM: TIME"
        step, n = int(lines[i + 3]), int(lines[i + 5])
        flags = lines[i + 6].split()[3:]
        bounds = [tuple(map(float, lines[i + 7 + d].split())) for d in range(3)]
        cols = lines[i + 10].split()[2:]
        rows = [dict(zip(cols, l.split())) for l in lines[i + 11:i + 11 + n]]
        frames.append((step, flags, bounds, rows))
        i += 11 + n
    return frames

frames = dump_frames(dump)
atoms_list = ase.io.read(xyz, index=":")
assert len(atoms_list) == len(frames), (len(atoms_list), len(frames))
kinetic = {int(r["step"]): float(r["kinetic"]) for r in csv.DictReader(open(thermo))}
for atoms, (step, flags, bounds, rows) in zip(atoms_list, frames):
    assert atoms.info["Step"] == step, (atoms.info, step)
    assert len(atoms) == len(rows)
    # The cell and periodicity: the box (2D: a cell of height 1 around z = 0, not periodic).
    for d in range(3):
        assert atoms.cell[d][d] == bounds[d][1] - bounds[d][0], (atoms.cell, bounds)
        assert bool(atoms.pbc[d]) == (d < dim and flags[d] == "pp"), (atoms.pbc, flags)
    assert list(atoms.info["Origin"][:dim]) == [b[0] for b in bounds[:dim]], atoms.info
    masses, velocities = atoms.get_masses(), atoms.get_velocities()
    for k, r in enumerate(rows):
        assert atoms.get_chemical_symbols()[k] == species[int(r["type"]) - 1]
        assert masses[k] == float(r["mass"]), (k, masses[k], r)
        for d, a in enumerate("xyz"):
            assert atoms.positions[k][d] == float(r[a]), (k, a, atoms.positions[k], r)
            v = float(r["v" + a])
            assert abs(velocities[k][d] - v) <= 4e-16 * max(abs(v), 1e-300), (k, a, velocities[k], r)
    ke = atoms.get_kinetic_energy()
    assert abs(ke - kinetic[step]) <= 1e-12 * kinetic[step], (step, ke, kinetic[step])
print(f"{xyz}: {len(frames)} frames read by ASE with the run's positions, velocities and masses")
PY
done
echo "formats_ase: all passed"
