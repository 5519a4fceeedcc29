# SPDX-License-Identifier: BSD-3-Clause
# pardyn's OpenMP default on a shared node (docs/performance.md, "Threads on a shared node"):
# `pardyn run` runs with OMP_WAIT_POLICY=passive unless the user set OMP_WAIT_POLICY or
# GOMP_SPINCOUNT, whose values are kept. Read from the running process's environment.
. "$(dirname "$0")/common.sh"

# environ_of VAR=VALUE... -- prints the OpenMP variables of a running `pardyn run` started so.
environ_of() {
  env "$@" "$PARDYN" run "$SRC/examples/plummer/plummer.toml" -q -o "out$RANDOM" \
    --set simulation.backend=cpu --set particles.0.count=64 --set simulation.steps=10000000 2> /dev/null &
  local pid=$! vars=""
  for _ in $(seq 1 100); do
    vars=$(tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -E '^(OMP_WAIT_POLICY|GOMP_SPINCOUNT)=' | sort | tr '\n' ' ' || true)
    # After the restart, which sets the variable, the process is pardyn with its run under way.
    [ -n "$vars" ] && [ -d "$(ls -d out*/ 2>/dev/null | head -1)" ] && break
    sleep 0.1
  done
  kill -INT "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf out*/
  echo "$vars"
}

got=$(environ_of -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT)
[ "$got" = "OMP_WAIT_POLICY=passive " ] || fail "the default run has '$got', expected OMP_WAIT_POLICY=passive"
echo "ok: default -> $got"
got=$(environ_of -u GOMP_SPINCOUNT OMP_WAIT_POLICY=active)
[ "$got" = "OMP_WAIT_POLICY=active " ] || fail "OMP_WAIT_POLICY=active was not kept: '$got'"
echo "ok: OMP_WAIT_POLICY=active kept"
got=$(environ_of -u OMP_WAIT_POLICY GOMP_SPINCOUNT=300000)
[ "$got" = "GOMP_SPINCOUNT=300000 " ] || fail "GOMP_SPINCOUNT=300000 was not kept alone: '$got'"
echo "ok: GOMP_SPINCOUNT=300000 kept, no wait policy added"
# The restart keeps the arguments and the exit status.
expect_error 1 "no such file" -- env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT "$PARDYN" run nowhere.toml
echo "openmp_defaults: passed"
