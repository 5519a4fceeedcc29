# SPDX-License-Identifier: BSD-3-Clause
# The progress display on a terminal: one line redrawn in place that fits the terminal's width
# (a wider one would wrap and leave a copy at every redraw), and a thermostatted run says what its
# dE/E0 means.
. "$(dirname "$0")/common.sh"

command -v script >/dev/null || { echo "SKIP: no script(1) to give pardyn a terminal"; exit 77; }
for cols in 40 60; do
  # script(1) gives pardyn a pseudo-terminal, stty sets its width; the typescript keeps every byte.
  script -q -e -c "stty cols $cols rows 24; \"$PARDYN\" run \"$SRC/examples/plummer/plummer.toml\" \
    -o out$cols --set simulation.steps=300 --set particles.0.count=200 --set simulation.backend=cpu \
    --set simulation.progress_interval=1000" "tty$cols.log" > /dev/null
  python3 - "tty$cols.log" "$cols" <<'PY'
import re, sys
data = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
cols = int(sys.argv[2])
# Every redraw of the bar starts with carriage return + erase line and is ended by the next one
# (a line printed after the bar is cleared ends with a newline instead).
draws = re.findall(r"\r\x1b\[K([^\r\n\x1b]+)(?=\r\x1b)", data)
assert draws, "no progress bar was drawn"
wide = [d for d in draws if len(d) > cols - 1]
assert not wide, f"{len(wide)} of {len(draws)} redraws are wider than {cols - 1} columns: {wide[0]!r}"
assert any("step 300/300" in d for d in draws), f"the last redraw is missing: {draws[-1]!r}"
print(f"{cols} columns: {len(draws)} redraws, the widest {max(map(len, draws))} characters")
PY
done

# A thermostat changes the energy on purpose: the run says what dE/E0 is then.
"$PARDYN" run "$SRC/examples/real_gas_2d/real_gas_2d.toml" -o gas --set simulation.steps=20 \
  --set particles.0.count=200 --set simulation.backend=cpu > gas.log
grep -q "note: dE/E0 (thermo.csv: relative_drift) is (E - E0)/|E0|: here it is mostly the energy that \[\[modifier\]\] \"velocity_rescale\" took out or put in" gas.log ||
  fail "the thermostatted run does not say what dE/E0 means: $(cat gas.log)"
# and a run that conserves energy does not
"$PARDYN" run "$SRC/examples/plummer/plummer.toml" -o nve --set simulation.steps=20 \
  --set particles.0.count=100 --set simulation.backend=cpu > nve.log
! grep -q "dE/E0 (thermo.csv" nve.log || fail "an energy-conserving run got the thermostat note"
echo "progress: passed"
