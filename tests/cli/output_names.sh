# SPDX-License-Identifier: BSD-3-Clause
# Every output writes inside the output folder under names of its own, refused at validate otherwise;
# a new run in a folder replaces the earlier run's files, never mixes with them; the resolved
# config.toml survives a scenario file name with a newline (docs/user-guide.md, "The output folder").
. "$(dirname "$0")/common.sh"

small=(--set particles.0.count=64 --set simulation.steps=40 --set simulation.backend=cpu -q)
base="$SRC/examples/plummer/plummer.toml"
# base.toml: the plummer example without its [[output]] blocks; with_outputs FILE BLOCKS...
sed '/^\[\[output\]\]/,$d' "$base" > base.toml
with_outputs() {
  local out=$1
  shift
  cp base.toml "$out"
  for b in "$@"; do printf '\n[[output]]\n%b\n' "$b" >> "$out"; done
}

# --- names outside the folder, or taken ---------------------------------------------------------
refused() {  # refused PATTERN TOML: both validate and run refuse it, and nothing is written
  expect_error 1 "$1" -- "$PARDYN" validate "$2"
  expect_error 1 "$1" -- "$PARDYN" run "$2" -o "out-$2" "${small[@]}"
  [ ! -e "out-$2/thermo.csv" ] || fail "$2 was refused but wrote thermo.csv"
}
with_outputs up.toml 'type = "thermo"\nfile = "../x.csv"'
refused "[[output]] #1 (thermo, up.toml:" up.toml
refused "writes ../x.csv, which is outside the run's output folder" up.toml
[ ! -e x.csv ] || fail "file = \"../x.csv\" wrote outside the output folder"
with_outputs deep.toml 'type = "thermo"\nfile = "a/../../x.csv"'
refused "outside the run's output folder" deep.toml
with_outputs abs.toml "type = \"thermo\"\nfile = \"$WORK/abs.csv\""
refused "writes $WORK/abs.csv, an absolute path" abs.toml
[ ! -e abs.csv ] || fail "an absolute thermo file was written"
for name in config.toml log.txt .pardyn.lock; do
  with_outputs "taken-$name.toml" "type = \"thermo\"\nfile = \"$name\""
  refused "writes $name, which pardyn" "taken-$name.toml"
done
with_outputs pvd.toml 'type = "vtk"' 'type = "thermo"\nfile = "run.pvd"'
refused "writes run.pvd, which [[output]] #1 (vtk, pvd.toml:" pvd.toml
with_outputs inframes.toml 'type = "vtk"' 'type = "thermo"\nfile = "frames/t.csv"'
refused "writes frames/t.csv, and [[output]] #1 (vtk, inframes.toml:" inframes.toml
with_outputs sub.toml 'type = "thermo"\nfile = "./thermo.csv"' 'type = "thermo"'
refused "writes thermo.csv, which [[output]] #1 (thermo, sub.toml:" sub.toml
# two thermo outputs: the default names collide (refused); with a file each they are two logs
with_outputs thermo2.toml 'type = "thermo"\ninterval = 10' 'type = "thermo"\ninterval = 4'
refused "give one of them another file" thermo2.toml
with_outputs vtk2.toml 'type = "vtk"\ninterval = 10' 'type = "vtk"\ninterval = 4'
refused "one vtk output per run" vtk2.toml
with_outputs twologs.toml 'type = "thermo"\ninterval = 10' 'type = "thermo"\ninterval = 4\nfile = "fine/thermo.csv"'
"$PARDYN" validate twologs.toml > /dev/null
"$PARDYN" run twologs.toml -o two "${small[@]}"
[ "$(cut -d, -f1 two/thermo.csv | tail -n +2 | tr '\n' ' ')" = "0 10 20 30 40 " ] ||
  fail "thermo.csv: $(cut -d, -f1 two/thermo.csv | tr '\n' ' ')"
[ "$(cut -d, -f1 two/fine/thermo.csv | tail -n +2 | tr '\n' ' ')" = "0 4 8 12 16 20 24 28 32 36 40 " ] ||
  fail "fine/thermo.csv: $(cut -d, -f1 two/fine/thermo.csv | tr '\n' ' ')"
for f in two/thermo.csv two/fine/thermo.csv; do
  [ "$(awk -F, '{print NF}' "$f" | sort -u | wc -l)" -eq 1 ] || fail "$f has rows of different widths"
done

# --- a new run replaces the earlier one's files ---------------------------------------------------
with_outputs all.toml 'type = "vtk"\ninterval = 10' 'type = "thermo"' \
  'type = "grid_fields"\ninterval = 10\ncells = [4, 4, 4]'
"$PARDYN" run all.toml -o same "${small[@]}"
[ "$(ls same/frames | wc -l)" -eq 5 ] && [ "$(ls same/fields | wc -l)" -eq 5 ] ||
  fail "first run: $(ls same/frames same/fields)"
"$PARDYN" run all.toml -o same "${small[@]}" --set simulation.steps=10
[ "$(ls same/frames | wc -l)" -eq 2 ] || fail "frames of the earlier run left: $(ls same/frames)"
[ "$(ls same/fields | wc -l)" -eq 2 ] || fail "grid files of the earlier run left: $(ls same/fields)"
[ "$(tail -n +2 same/thermo.csv | wc -l)" -eq 2 ] || fail "thermo.csv: $(cat same/thermo.csv)"
# a run with only a thermo output: the earlier run's series are gone, not listed as this run's
with_outputs thermo_only.toml 'type = "thermo"'
"$PARDYN" run thermo_only.toml -o same --set particles.0.count=64 --set simulation.steps=20 \
  --set simulation.backend=cpu > summary.txt
for gone in run.pvd frames fields.pvd fields; do
  [ ! -e "same/$gone" ] || fail "the earlier run's $gone is still there: $(ls -a same)"
done
! grep -q "run.pvd" summary.txt || fail "the summary lists an earlier run's run.pvd: $(cat summary.txt)"
[ "$(tail -n +2 same/thermo.csv | wc -l)" -eq 3 ] || fail "thermo.csv: $(cat same/thermo.csv)"
# files pardyn did not write stay
echo mine > same/notes.txt
"$PARDYN" run all.toml -o same "${small[@]}"
[ -f same/notes.txt ] || fail "a run removed a file it did not write"

# --- one run per folder at a time: the second is refused with the first one's pid -----------------
"$PARDYN" run base.toml -o busy --set particles.0.count=256 --set simulation.steps=100000000 \
  --set simulation.backend=cpu -q > busy.log 2>&1 &
pid=$!
for _ in $(seq 1 300); do [ -s busy/.pardyn.lock ] && break; sleep 0.1; done
expect_error 1 "the output folder $WORK/busy is in use by another pardyn run (pid $pid)" -- \
  "$PARDYN" run base.toml -o busy "${small[@]}"
kill -TERM "$pid"
wait "$pid" || true
"$PARDYN" run base.toml -o busy "${small[@]}" || fail "the folder stayed locked after its run ended"

# --- a scenario file name with a newline: config.toml stays valid TOML ----------------------------
nl=$'new\nline.toml'
cp base.toml "$nl"
"$PARDYN" run "$nl" -o nl "${small[@]}"
head -n 1 nl/config.toml | grep -qF 'new\nline.toml' || fail "config.toml: $(head -n 2 nl/config.toml)"
expect_error 0 "valid" -- "$PARDYN" validate nl/config.toml
"$PARDYN" run "$nl" "${small[@]}"  # output = out/<name>, the name with its newline
expect_error 0 "valid" -- "$PARDYN" validate "out/$(basename "$nl" .toml)/config.toml"
echo "output_names: passed"
