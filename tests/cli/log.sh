# SPDX-License-Identifier: BSD-3-Clause
# Every run writes log.txt (what the terminal showed, also with -q) ending with the timing
# breakdown, whose sections add up to the loop's time.
. "$(dirname "$0")/common.sh"

"$PARDYN" run "$SRC/examples/real_gas_2d/real_gas_2d.toml" -o out --set simulation.steps=300 \
  --set simulation.backend=cpu -q > terminal.txt 2>&1 || fail "run: $(cat terminal.txt)"
[ -s out/log.txt ] || fail "no log.txt"
[ ! -s terminal.txt ] || fail "-q printed: $(cat terminal.txt)"
grep -q "^pardyn: 2500 particles, 2D" out/log.txt || fail "no header line: $(head out/log.txt)"
grep -qE "^ +300 +0.6 " out/log.txt || fail "no thermo line of step 300: $(cat out/log.txt)"
grep -q "^progress: 100%" out/log.txt || fail "no progress line: $(cat out/log.txt)"
grep -q "^done: 300 steps" out/log.txt || fail "no summary: $(cat out/log.txt)"
grep -q $'\r' out/log.txt && fail "log.txt holds the bar's redraws"
for section in "force soft_gas" "force walls" "neighbour build" integration modifiers analysis \
  output other; do
  grep -q "^  $section " out/log.txt || fail "no '$section' in the timing: $(cat out/log.txt)"
done
# The sections add up to the loop (on the CPU every phase of every step is timed).
awk '/^timing: / { loop = $2 } /^  (force|neighbour|communication|integration|modifiers|analysis|output|checkpoints|other)/ {
       sum += $(NF - 1) }
     END { if (loop <= 0 || sum < 0.97 * loop || sum > 1.03 * loop) {
             printf "sections %.4f s, loop %.4f s\n", sum, loop; exit 1 } }' out/log.txt ||
  fail "the timing's sections do not add up to the loop: $(grep -A12 '^timing' out/log.txt)"
grep -A12 "^timing" out/log.txt
