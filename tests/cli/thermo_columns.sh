# SPDX-License-Identifier: BSD-3-Clause
# thermo's optional columns (n, volume, density, per-particle energies) and the Lennard-Jones tail
# correction: consistent with the standard columns, the tail equal to a numerical integral of the
# law beyond its cut-off (2D and 3D), and, where LAMMPS is installed, the first row equal to
# LAMMPS's for the same lattice (docs/lammps.md: LAMMPS's in.lj, 4000 atoms).
. "$(dirname "$0")/common.sh"

cat > lj3.toml <<'TOML'
[simulation]
steps = 20
seed = 87287
[box]
lo = [0, 0, 0]
hi = [16.795962, 16.795962, 16.795962]
boundary = "periodic"
[[particles]]
generator = "lattice"
kind = "fcc"
density = 0.8442
temperature = 1.44
[[potential]]
type = "lennard_jones"
epsilon = 1.3
sigma = 0.9
rcut = 2.2
shift = false
scheme = { type = "cell_list", skin = 0.3 }
[integrator]
type = "leapfrog"
dt = 0.005
[[output]]
type = "thermo"
interval = 10
columns = ["n", "volume", "density", "kinetic_per_particle", "potential_per_particle", "total_per_particle"]
lj_tail = [1.3, 0.9, 2.2]
TOML
sed -e 's/^hi = .*/hi = [20.0, 17.320508075688775]/' -e 's/^lo = .*/lo = [0, 0]/' \
    -e 's/kind = "fcc"/kind = "hexagonal"\nspacing = 1.0/' -e '/^density = 0.8442/d' \
    -e 's/^\[simulation\]/[simulation]\ndimension = 2/' lj3.toml > lj2.toml
"$PARDYN" run lj3.toml -q -o out3
"$PARDYN" run lj2.toml -q -o out2
python3 - out3/thermo.csv 3 out2/thermo.csv 2 <<'PY'
import csv, math, sys
eps, sig, rc = 1.3, 0.9, 2.2
u = lambda r: 4 * eps * ((sig / r) ** 12 - (sig / r) ** 6)
du = lambda r: 4 * eps * (-12 * sig ** 12 / r ** 13 + 6 * sig ** 6 / r ** 7)
def integral(f, a):
    # int_a^inf f(r) dr with r = a / t, t in (0, 1]: Simpson on 20000 intervals.
    n, total = 20000, 0.0
    for k in range(n + 1):
        t = k / n
        g = 0.0 if t == 0 else f(a / t) * a / t ** 2
        total += g * (1 if k in (0, n) else 4 if k % 2 else 2)
    return total / (3 * n)
for path, dim in ((sys.argv[1], 3), (sys.argv[3], 2)):
    rows = list(csv.DictReader(open(path)))
    for r in rows:
        n, v = float(r["n"]), float(r["volume"])
        rho = n / v
        assert abs(float(r["density"]) - rho) <= 1e-12 * rho, r
        for col in ("kinetic", "potential", "total"):
            assert abs(float(r[col + "_per_particle"]) - float(r[col]) / n) <= 1e-12 * abs(float(r[col])), col
        # U_tail = N rho/2 int u dA, P_tail = -rho^2/(2 dim) int r u'(r) dA beyond rc (g = 1)
        area = (lambda r: 4 * math.pi * r * r) if dim == 3 else (lambda r: 2 * math.pi * r)
        ut = n * rho / 2 * integral(lambda r: u(r) * area(r), rc)
        pt = -rho * rho / (2 * dim) * integral(lambda r: r * du(r) * area(r), rc)
        assert abs(float(r["potential_tail"]) - ut) <= 1e-7 * abs(ut), (dim, r["potential_tail"], ut)
        assert abs(float(r["pressure_tail"]) - pt) <= 1e-7 * abs(pt), (dim, r["pressure_tail"], pt)
    print(f"{dim}D: n {rows[0]['n']}, density {float(rows[0]['density']):.6g}, "
          f"tail {float(rows[0]['potential_tail']):.6g} (energy), {float(rows[0]['pressure_tail']):.6g} (pressure)")
PY

# Against LAMMPS, where it is installed: the same fcc lattice and law give the same first row
# (pe, etotal and press per LAMMPS's lj units; velocities differ after step 0, so only step 0).
if command -v lmp >/dev/null; then
  cat > in.lj <<'LMP'
units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 10 0 10 0 10
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 1.44 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
pair_modify tail yes
thermo_style custom step pe ke etotal press
run 0
LMP
  lmp -in in.lj -log none -echo none > lmp.log 2>&1 || { cat lmp.log; fail "lmp failed"; }
  "$PARDYN" run lj3.toml -q -o out_lmp --set simulation.steps=0 --set potential.epsilon=1.0 \
    --set potential.sigma=1.0 --set potential.rcut=2.5 --set output.lj_tail=[1.0,1.0,2.5]
  python3 - lmp.log out_lmp/thermo.csv <<'PY'
import csv, sys
lines = open(sys.argv[1]).read().splitlines()
head = next(i for i, l in enumerate(lines) if l.split()[:2] == ["Step", "PotEng"])
step, pe, ke, etotal, press = map(float, lines[head + 1].split())
r = next(csv.DictReader(open(sys.argv[2])))
n = float(r["n"])
ours = {"pe": (float(r["potential"]) + float(r["potential_tail"])) / n,
        "etotal": (float(r["total"]) + float(r["potential_tail"])) / n,
        "press": float(r["pressure"]) + float(r["pressure_tail"])}
theirs = {"pe": pe, "etotal": etotal, "press": press}
for k in ours:  # LAMMPS prints 8 significant digits; its kinetic term uses T dof/N, ours 2K/dim
    assert abs(ours[k] - theirs[k]) <= 2e-6 * abs(theirs[k]), (k, ours[k], theirs[k])
print("LAMMPS step 0:", theirs, "pardyn:", ours)
PY
else
  echo "no lmp (apt-get install lammps): the LAMMPS comparison is skipped"
fi
echo "thermo_columns: passed"
