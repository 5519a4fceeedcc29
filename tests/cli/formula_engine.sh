# SPDX-License-Identifier: BSD-3-Clause
# A formula law with engine = "auto" runs interpreted, saying why, when the C++ compiler runs but
# cannot build the law (another installation's headers, a compiler too old); engine = "compiled"
# then stops with the compiler's log named. Both with a stand-in compiler that answers --version
# and fails every compile, and a cache folder of their own (no product from an earlier run).
. "$(dirname "$0")/common.sh"

cat > badcxx <<'SH'
#!/bin/sh
[ "$1" = "--version" ] && { echo "badcxx 1.0"; exit 0; }
echo "badcxx: cannot compile" >&2
exit 1
SH
chmod +x badcxx
cat > lj.toml <<'TOML'
[simulation]
dimension = 3
steps = 5
backend = "cpu"
threads = 1

[box]
lo = [0.0, 0.0, 0.0]
hi = [6.0, 6.0, 6.0]
boundary = "periodic"

[[particles]]
generator = "lattice"
kind = "sc"
count = 125
temperature = 1.0

[[potential]]
type = "expression"
energy = "4*epsilon*((sigma/r)^12 - (sigma/r)^6)"
parameters = { epsilon = 1.0, sigma = 1.0 }
rcut = 2.5
scheme = "cell_list"

[integrator]
type = "leapfrog"
dt = 0.002
TOML
export PARDYN_CXX="$PWD/badcxx" PARDYN_CACHE_DIR="$PWD/cache"
"$PARDYN" run lj.toml -o auto > auto.txt 2>&1 || fail "engine auto did not run: $(cat auto.txt)"
grep -q "could not be compiled.*runs interpreted" auto.txt || fail "no note of the fallback: $(cat auto.txt)"
echo "ok: auto -> $(grep -o 'could not be compiled.*interpreted' auto.txt | cut -c1-80)"
# The interpreted run is the law's own interpreted engine, asked for by name: the same thermo.
unset PARDYN_CXX
"$PARDYN" run lj.toml -o interp -q --set 'potential.0.engine="interpreted"' > interp.txt 2>&1 ||
  fail "engine interpreted: $(cat interp.txt)"
cmp auto/thermo.csv interp/thermo.csv || fail "auto's fallback differs from interpreted"
echo "ok: the fallback's thermo.csv is the interpreted run's"
export PARDYN_CXX="$PWD/badcxx"
expect_error 1 "failed (exit status 1)" -- "$PARDYN" run lj.toml -o compiled -q \
  --set 'potential.0.engine="compiled"'
