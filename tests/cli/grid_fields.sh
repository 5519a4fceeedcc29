# SPDX-License-Identifier: BSD-3-Clause
# The grid_fields observer's files open in ParaView 5.11 (pvbatch) as image data with every array,
# and the cells hold every particle. A 2D gas quenched by a thermostat ramp, on the CPU.
. "$(dirname "$0")/common.sh"

pv="${PARAVIEW_RUN:-$SRC/scripts/paraview-run}"
if [ ! -x "$pv" ]; then
  echo "SKIP: no paraview-run at $pv (set PARAVIEW_RUN to a ParaView pvbatch wrapper)"
  exit 77
fi
# scripts/paraview-run unpacks ParaView the first time (apt, network); without it, skip.
if [ -z "${PARAVIEW_RUN:-}" ] && ! "$pv" --install; then
  echo "SKIP: scripts/paraview-run could not make ParaView ready"
  exit 77
fi
cat > scenario.toml <<'TOML'
[simulation]
dimension = 2
steps = 40
backend = "cpu"
[box]
lo = [0, 0]
hi = [16, 16]
boundary = ["periodic"]
[[particles]]
generator = "lattice"
kind = "square"
spacing = 1.0
temperature = 1.0
[integrator]
type = "leapfrog"
dt = 0.01
[[modifier]]
type = "berendsen"
temperature = 1.0
temperature_end = 0.2
ramp_end = 0.4
tau = 0.05
[[output]]
type = "grid_fields"
interval = 20
cells = [8, 4]
TOML
"$PARDYN" run scenario.toml -q -o out
pv_run "reading the fields" "$SRC/scripts/paraview/check_fields.py" out/fields.pvd --cells 8,4 \
  --timesteps 3 --particles 256
echo "grid_fields: fields.pvd opens in ParaView"
