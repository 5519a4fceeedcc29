# SPDX-License-Identifier: BSD-3-Clause
# Every example validates and runs (shortened), its output is complete, and the committed reference
# documentation matches the plugins' schemas.
. "$(dirname "$0")/common.sh"

for f in "$SRC"/examples/*/*.toml; do
  case "$f" in *plugin_template*) continue ;; esac
  name=$(basename "$f" .toml)
  "$PARDYN" validate "$f"
  # an example may name further overrides for this test: "# cli-test-set: key=value" lines
  extra=()
  while read -r kv; do extra+=(--set "$kv"); done < <(sed -n 's/^# cli-test-set: *//p' "$f")
  "$PARDYN" run "$f" -q -o "out-$name" --set simulation.steps=20 --set particles.0.count=200 \
    --set simulation.backend=cpu "${extra[@]}"
  for want in config.toml run.pvd thermo.csv frames/000000.vtp; do
    [ -s "out-$name/$want" ] || fail "$name: no $want"
  done
  ! ls out-$name/frames/*.tmp-* >/dev/null 2>&1 || fail "$name: temporary files left"
  # the resolved configuration reruns the same simulation
  "$PARDYN" validate "out-$name/config.toml" >/dev/null || fail "$name: config.toml does not validate"
  echo "ok: example $name"
done

# The committed reference comes from a CUDA build; a build without CUDA differs only in the
# "backends" of the plugins with GPU code.
"$PARDYN" plugins doc | grep -v 'backends: ' > reference.md
grep -v 'backends: ' "$SRC/docs/reference.md" > committed.md
diff -u committed.md reference.md ||
  fail "docs/reference.md is out of date: run scripts/gen-reference (in a CUDA build) and commit it"
echo "examples: all passed"
