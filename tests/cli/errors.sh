# SPDX-License-Identifier: BSD-3-Clause
# The command line on bad input: clear messages and non-zero exit codes.
. "$(dirname "$0")/common.sh"

cat > bad.toml <<'TOML'
[simulation]
steps = 10
dimenson = 3

[[particles]]
generator = "plumer"
count = 10

[[potential]]
type = "gravity"
eps = -0.1
TOML
expect_error 1 "bad.toml:3:1: unknown key 'dimenson' in [simulation]; did you mean 'dimension'?" -- "$PARDYN" validate bad.toml
expect_error 1 "bad.toml:6:13: no generator plugin named \"plumer\"; did you mean \"plummer\"?" -- "$PARDYN" validate bad.toml
expect_error 1 "bad.toml:11:7: 'eps' in [[potential]] #1 (gravity) is -0.1; it must be >= 0 (length)" -- "$PARDYN" validate bad.toml
expect_error 1 "3 errors in scenario" -- "$PARDYN" run bad.toml
expect_error 1 "no such file" -- "$PARDYN" run missing.toml
expect_error 2 "did you mean 'gravity'" -- "$PARDYN" plugins show gravty
# Command-line mistakes exit 2 (docs/user-guide.md), whatever CLI11's own code for each; --help 0.
expect_error 2 "file is required" -- "$PARDYN" run
expect_error 2 "A subcommand is required" -- "$PARDYN"
expect_error 2 "The following argument was not expected: --frobnicate" -- "$PARDYN" run x.toml --frobnicate
expect_error 2 "name is required" -- "$PARDYN" plugins show
expect_error 0 "plugin-based particle dynamics" -- "$PARDYN" --help
expect_error 2 "--set nosection: expected section.key=value" -- "$PARDYN" validate "$SRC/examples/plummer/plummer.toml" --set nosection
expect_error 2 "--set steps=5: expected section.key=value" -- "$PARDYN" run "$SRC/examples/plummer/plummer.toml" --set steps=5

# Every scenario error names where the value came from: the file's line and column, or the --set.
cp "$SRC/examples/plummer/plummer.toml" plummer.toml
cp plummer.toml boundary.toml
printf '\n[box]\nlo = [0, 0, 0]\nhi = [10, 10]\n' >> plummer.toml
line=$(grep -n '^hi = \[10, 10\]' plummer.toml | cut -d: -f1)
expect_error 1 "plummer.toml:$line:6: 'hi' in [box] has 2 entries; a 3D run needs 3" -- "$PARDYN" validate plummer.toml
printf '\n[box]\nboundary = "perodic"\n' >> boundary.toml
line=$(grep -n '^boundary = "perodic"' boundary.toml | cut -d: -f1)
expect_error 1 "boundary.toml:$line:12: boundary \"perodic\" in [box]: allowed values" -- "$PARDYN" validate boundary.toml
expect_error 1 "--set integrator.dt=-0.1: 'dt' in [integrator] (leapfrog) is -0.1; it must be > 0" -- "$PARDYN" validate "$SRC/examples/plummer/plummer.toml" --set integrator.dt=-0.1
expect_error 1 "--set simulation.stepz=3: unknown key 'stepz' in [simulation]; did you mean 'steps'?" -- "$PARDYN" validate "$SRC/examples/plummer/plummer.toml" --set simulation.stepz=3
expect_error 1 "--set particles.0.count=many: 'count' in [[particles]] #1 (plummer) must be integer, not a string" -- "$PARDYN" validate "$SRC/examples/plummer/plummer.toml" --set particles.0.count=many
# a scheme the law cannot use names the one it can
cat > lj_tree.toml <<'TOML'
[box]
lo = [0, 0, 0]
hi = [6, 6, 6]
[[particles]]
generator = "lattice"
kind = "fcc"
spacing = 1.5
[[potential]]
type = "lennard_jones"
scheme = "tree"
TOML
expect_error 1 'lennard_jones'"'"' has a cut-off and no far-field form (far() in its evaluator, see docs/plugins.md); use scheme "cell_list"' -- "$PARDYN" validate lj_tree.toml

# an error raised inside a plugin (not by the schema) is reported, also by validate, with exit code 1
cat > fcc2d.toml <<'TOML'
[simulation]
dimension = 2
[box]
lo = [0, 0]
hi = [4, 4]
[[particles]]
generator = "lattice"
kind = "fcc"
spacing = 1.0
TOML
expect_error 1 "kind = \"fcc\" is a 3D lattice but the run is 2D" -- "$PARDYN" validate fcc2d.toml
expect_error 1 "kind = \"fcc\" is a 3D lattice but the run is 2D" -- "$PARDYN" run fcc2d.toml

# a plugin folder writable by others is refused, naming it
mkdir -p unsafe && cp "$SRC/examples/plummer/plummer.toml" unsafe.toml && chmod 777 unsafe
sed 's/^\[simulation\]$/[simulation]\nplugin_paths = ["unsafe"]/' unsafe.toml > with_path.toml
expect_error 1 "plugin folder refused: $WORK/unsafe is writable by others" -- "$PARDYN" validate with_path.toml
# ... from $PARDYN_PLUGIN_PATH it is left out with a warning, and stops only a scenario that needs
# something it may provide (docs/plugins.md)
PARDYN_PLUGIN_PATH="$WORK/unsafe" expect_error 0 "pardyn: warning: plugin $WORK/unsafe not loaded: plugin folder refused: $WORK/unsafe is writable by others" -- "$PARDYN" validate "$SRC/examples/plummer/plummer.toml"
sed 's/^type = "gravity"$/type = "yukawa"/' "$SRC/examples/plummer/plummer.toml" > needs.toml
PARDYN_PLUGIN_PATH="$WORK/unsafe" expect_error 1 "these plugin files were refused and may be the one that provides it" -- "$PARDYN" validate needs.toml

# the documented exit codes (docs/user-guide.md): 0 success, 1 input or run, 2 command line,
# 3 internal error (here a plugin that throws a standard exception, as a bug would)
expect_error 0 "valid (1 particle block(s)" -- "$PARDYN" validate "$SRC/examples/plummer/plummer.toml"
expect_error 1 "'dt' in [integrator] (leapfrog) is -0.1" -- "$PARDYN" run "$SRC/examples/plummer/plummer.toml" --set integrator.dt=-0.1
expect_error 2 "The following argument was not expected" -- "$PARDYN" validate a.toml b.toml
internal="$(dirname "$PARDYN")/../tests/plugins/internal_error"
if [ -d "$internal" ]; then
  printf '\n[[modifier]]\ntype = "test_internal_error"\n' | cat "$SRC/examples/plummer/plummer.toml" - > crash.toml
  expect_error 3 "pardyn: internal error: test_internal_error: a deliberate bug" -- \
    env PARDYN_PLUGIN_PATH="$internal" "$PARDYN" run crash.toml -q -o crash \
    --set simulation.steps=2 --set particles.0.count=10 --set simulation.backend=cpu
else
  echo "no test plugin at $internal (tests not built): exit code 3 unchecked"
fi

# the listing works and shows every kind
"$PARDYN" plugins > list.txt
for w in gravity all_pairs leapfrog euler plummer lattice uniform galaxy file vtk thermo; do
  grep -q "^  $w " list.txt || fail "pardyn plugins does not list $w"
done
"$PARDYN" plugins show plummer | grep -q "scale_radius" || fail "plugins show plummer has no schema"
echo "errors: all passed"
