# SPDX-License-Identifier: BSD-3-Clause
# -o DIR: the run writes to DIR and the resolved config.toml says so, so that rerunning it writes
# there too; a new run in a folder removes the old run's frames (docs/user-guide.md).
. "$(dirname "$0")/common.sh"

run() { "$PARDYN" run "$SRC/examples/plummer/plummer.toml" -q --set particles.0.count=50 \
  --set simulation.backend=cpu "$@"; }
run -o "elsewhere/run 1" --set simulation.steps=40
grep -qx "output = 'elsewhere/run 1'" "elsewhere/run 1/config.toml" ||
  fail "config.toml does not record -o: $(grep -n output "elsewhere/run 1/config.toml")"
# the resolved file reruns into the same folder
"$PARDYN" run "elsewhere/run 1/config.toml" -q --set simulation.steps=20
[ "$(ls "elsewhere/run 1/frames" | wc -l)" -eq 2 ] ||
  fail "the rerun left the first run's frames: $(ls "elsewhere/run 1/frames")"
# a folder name that reads as a TOML number stays a string
run -o 123 --set simulation.steps=1
grep -qx "output = '123'" 123/config.toml || fail "-o 123: $(grep output 123/config.toml)"
echo "output_folder: passed"
