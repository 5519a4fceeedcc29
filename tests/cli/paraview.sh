# SPDX-License-Identifier: BSD-3-Clause
# The output of a run opens in ParaView 5.11 (pvbatch) with every array and every frame.
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
"$PARDYN" run "$SRC/examples/plummer/plummer.toml" -q -o out --set simulation.steps=40 \
  --set particles.0.count=300 --set simulation.backend=cpu
pv_run "reading the output" "$SRC/scripts/paraview/check_output.py" out/run.pvd --timesteps 3 \
  --points 300 --dim 3
pv_run "rendering" "$SRC/scripts/paraview/render_frames.py" out/run.pvd frame.png velocity
[ -s frame.png ] || fail "no image rendered"
echo "paraview: output opens, image rendered"
