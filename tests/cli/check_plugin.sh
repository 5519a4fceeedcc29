# SPDX-License-Identifier: BSD-3-Clause
# `pardyn check-plugin`: the conformance table of a law, its exit code, and the clear errors.
source "$(dirname "$0")/common.sh" "$@"

"$PARDYN" check-plugin lennard_jones --reference "$SRC/tests/laws/lennard_jones.csv" > lj.txt ||
  { cat lj.txt; fail "check-plugin lennard_jones failed"; }
cat lj.txt
for check in analytic gradient newton gpu cell_list; do
  grep -q "^$check " lj.txt || fail "no $check line in the table"
done
grep -q "failed, .* skipped: passed$" lj.txt || fail "no summary line"

# Wrong analytic values fail, with exit 1 and the check named.
sed 's/^1.0,\(-\?[0-9.]*\),/1.0,7.0,/' "$SRC/tests/laws/lennard_jones.csv" > wrong.csv
expect_error 1 "analytic" -- "$PARDYN" check-plugin lennard_jones --reference wrong.csv --no-gpu
expect_error 1 "no potential named 'lenard_jones' is loaded; did you mean 'lennard_jones'?" -- \
  "$PARDYN" check-plugin lenard_jones
printf 'r,U\n1,2\n' > bad.csv
expect_error 1 "expected the header line r,U,fdivr" -- \
  "$PARDYN" check-plugin gravity --reference bad.csv
