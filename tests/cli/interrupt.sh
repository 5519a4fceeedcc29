# SPDX-License-Identifier: BSD-3-Clause
# Ctrl-C stops a run cleanly: the output is complete up to the step where it stopped.
. "$(dirname "$0")/common.sh"

"$PARDYN" run "$SRC/examples/plummer/plummer.toml" -o out --set simulation.steps=1000000 \
  --set particles.0.count=512 --set simulation.backend=cpu --set output.0.interval=5 \
  > log.txt 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  [ -s out/thermo.csv ] && [ "$(wc -l < out/thermo.csv)" -gt 3 ] && break
  sleep 0.1
done
# One run per output folder: a second run into it is refused while the first lives.
expect_error 1 "is in use by another pardyn run (pid $pid)" -- "$PARDYN" run \
  "$SRC/examples/plummer/plummer.toml" -o out --set simulation.steps=10 --set particles.0.count=64
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
# An interrupted run is not a finished one: 128 + SIGINT.
[ "$rc" -eq 130 ] || fail "pardyn exited $rc after SIGINT, expected 130: $(cat log.txt)"
grep -q "stopped at step" log.txt || fail "no stop message: $(cat log.txt)"
last=$(tail -n 1 out/thermo.csv | cut -d, -f1)
grep -q "timestep=" out/run.pvd || fail "run.pvd has no frames"
tail -n 1 out/run.pvd | grep -q "</VTKFile>" || fail "run.pvd is not closed"
echo "interrupt: stopped at step $last, output complete"
