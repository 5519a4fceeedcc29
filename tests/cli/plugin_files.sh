# SPDX-License-Identifier: BSD-3-Clause
# Plugin files are checked before any of their code runs (docs/plugins.md): truncated or foreign
# libraries, folders others may write, files other users own and symbolic link loops are refused,
# naming the file; a refused file stops only what needs it.
. "$(dirname "$0")/common.sh"

build=$(cd "$(dirname "$PARDYN")/.." && pwd)
tests_plugins="$build/tests/plugins"
[ -f "$tests_plugins/good/libpardyn_good.so" ] || fail "the test plugins are not built ($tests_plugins)"
small=(--set particles.0.count=64 --set simulation.steps=4 --set simulation.backend=cpu -q)

# A copy of the installation (bin/pardyn, lib/libpardyn.so, lib/pardyn/plugins), so that its
# built-in plugin folder can be spoiled.
mkdir -p tree/bin tree/lib/pardyn/plugins
cp "$PARDYN" tree/bin/
cp "$build"/lib/libpardyn.so* tree/lib/
cp "$build"/lib/pardyn/plugins/*.so tree/lib/pardyn/plugins/
P="$WORK/tree/bin/pardyn"
plugins="$WORK/tree/lib/pardyn/plugins"
"$P" validate "$SRC/examples/plummer/plummer.toml" > /dev/null || fail "the copied installation does not work"

# --- truncated copies of a real plugin in the built-in folder -------------------------------------
src="$build/lib/pardyn/plugins/libpardyn_lennard_jones.so"
size=$(stat -c %s "$src")
for f in 2 3 10; do head -c $((size / f)) "$src" > "$plugins/libpardyn_cut$f.so"; done
chmod 755 "$plugins"/libpardyn_cut*.so
# commands that need no plugin, or not these, work
expect_error 0 "pardyn 0." -- "$P" version
expect_error 0 "libpardyn_cut3.so: claims a segment up to byte" -- "$P" plugins
expect_error 0 "the file has $((size / 10)) bytes: it is incomplete" -- "$P" plugins
expect_error 0 "valid (1 particle block(s)" -- "$P" validate "$SRC/examples/plummer/plummer.toml"
expect_error 0 "pardyn: warning: plugin $plugins/libpardyn_cut2.so not loaded" -- \
  "$P" run "$SRC/examples/plummer/plummer.toml" -o run-cut "${small[@]}"
[ -s run-cut/thermo.csv ] || fail "the run beside a truncated plugin wrote no thermo.csv"
# a scenario that needs what is missing is refused, naming the refused files
sed 's/^type = "gravity"$/type = "yukawa"/' "$SRC/examples/plummer/plummer.toml" > yukawa.toml
expect_error 1 "no potential plugin named \"yukawa\"" -- "$P" validate yukawa.toml
expect_error 1 "$plugins/libpardyn_cut3.so: claims" -- "$P" validate yukawa.toml
# the truncated file in place of the real one: the scenario that needs it names it
mv "$plugins/libpardyn_gravity.so" gravity.so.bak
head -c $(($(stat -c %s gravity.so.bak) / 3)) gravity.so.bak > "$plugins/libpardyn_gravity.so"
expect_error 1 "$plugins/libpardyn_gravity.so: claims" -- "$P" run "$SRC/examples/plummer/plummer.toml" -o run-cut "${small[@]}"
expect_error 0 "lattice" -- "$P" plugins
mv gravity.so.bak "$plugins/libpardyn_gravity.so"
rm "$plugins"/libpardyn_cut*.so
# junk and a FIFO named like a library (a FIFO must not block the loader)
printf 'not a library\n' > junk.so && chmod 644 junk.so
mkfifo fifo.so
PARDYN_PLUGIN_PATH="$WORK/junk.so:$WORK/fifo.so" expect_error 0 "junk.so: is not a shared library (no ELF header)" -- timeout 60 "$P" plugins
PARDYN_PLUGIN_PATH="$WORK/fifo.so" expect_error 0 "fifo.so: is not a regular file" -- timeout 60 "$P" plugins

# --- symbolic link loops in the built-in folder: named, and nothing else stops -------------------
ln -s libpardyn_loop.so "$plugins/libpardyn_loop.so"
expect_error 0 "$plugins/libpardyn_loop.so: is a symbolic link loop" -- "$P" plugins
expect_error 0 "valid (1 particle block(s)" -- "$P" validate "$SRC/examples/plummer/plummer.toml"
PARDYN_PLUGIN_PATH="$plugins/libpardyn_loop.so" expect_error 0 "libpardyn_loop.so: is a symbolic link loop" -- "$P" plugins
rm "$plugins/libpardyn_loop.so"

# --- a foreign library's code never runs: not a pardyn plugin, refused from the file --------------
cp "$SRC/examples/plummer/plummer.toml" base.toml
with_paths() { sed "s|^\[simulation\]$|[simulation]\nplugin_paths = [\"$1\"]|" base.toml > "$2"; }
mkdir -p mine && chmod 755 mine && cp "$tests_plugins/foreign/libpardyn_foreign.so" mine/
with_paths mine foreign.toml
# (its constructor does leave the mark when the library is loaded)
env PARDYN_TEST_MARK="$WORK/mark" LD_PRELOAD="$WORK/mine/libpardyn_foreign.so" /bin/true
[ -s mark ] || fail "the foreign test library's constructor leaves no mark; the checks below would prove nothing"
rm mark
PARDYN_TEST_MARK="$WORK/mark" expect_error 1 "libpardyn_foreign.so: not a pardyn plugin: it has no pardyn stamp" -- \
  "$P" validate foreign.toml
[ ! -e mark ] || fail "validate ran the constructor of a foreign library: $(cat mark)"
PARDYN_TEST_MARK="$WORK/mark" PARDYN_PLUGIN_PATH="$WORK/mine" expect_error 0 "not a pardyn plugin" -- "$P" plugins
[ ! -e mark ] || fail "pardyn plugins ran the constructor of a foreign library: $(cat mark)"

# --- who may change the plugin: every folder up to the root --------------------------------------
mkdir -p open/plugins && cp "$tests_plugins/good/libpardyn_good.so" open/plugins/
chmod 755 open/plugins open/plugins/libpardyn_good.so
chmod 777 open
with_paths open/plugins open.toml
expect_error 1 "its folder $WORK/open is writable by others (mode 777)" -- "$P" validate open.toml
PARDYN_PLUGIN_PATH="$WORK/open/plugins" expect_error 0 "chmod go-w $WORK/open" -- "$P" plugins
PARDYN_PLUGIN_PATH="$WORK/open/plugins" expect_error 0 "valid (1 particle block(s)" -- "$P" validate base.toml
chmod 1777 open  # sticky, like /tmp: only an entry's owner may rename it
PARDYN_PLUGIN_PATH="$WORK/open/plugins" "$P" plugins > sticky.txt
grep -q "^  test_spring " sticky.txt || fail "a plugin below a sticky world-writable folder was refused: $(cat sticky.txt)"
chmod 1777 open/plugins  # ... but not as the plugin's own folder
expect_error 1 "plugin folder refused: $WORK/open/plugins is writable by others (mode 1777)" -- "$P" validate open.toml
chmod 755 open open/plugins
cp "$tests_plugins/foreign/libpardyn_foreign.so" open/plugins/ && chmod 777 open/plugins/libpardyn_foreign.so
PARDYN_TEST_MARK="$WORK/mark" expect_error 1 "libpardyn_foreign.so is writable by others" -- "$P" validate open.toml
[ ! -e mark ] || fail "validate ran a library that is writable by others: $(cat mark)"
rm open/plugins/libpardyn_foreign.so
if [ "$(id -u)" -eq 0 ]; then
  chown 65534:65534 open/plugins/libpardyn_good.so
  expect_error 1 "$WORK/open/plugins/libpardyn_good.so is owned by" -- "$P" validate open.toml
  expect_error 1 "uid 65534), who is neither you nor root" -- "$P" validate open.toml
  chown 0:0 open/plugins/libpardyn_good.so
  chown 65534:65534 open
  expect_error 1 "its folder $WORK/open is owned by" -- "$P" validate open.toml
  chown 0:0 open
else
  echo "not root: files owned by another user cannot be made here (tests/test_plugins.cpp skips too)"
fi
expect_error 0 "valid (1 particle block(s)" -- "$P" validate open.toml
echo "plugin_files: passed"
