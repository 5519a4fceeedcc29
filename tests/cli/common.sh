# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the command-line tests: $1 = pardyn executable, $2 = source tree, $3 = scratch folder.
set -euo pipefail
PARDYN=$1
SRC=$2
WORK=$3
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect_error CODE PATTERN -- command...: the command must exit with CODE and print PATTERN.
expect_error() {
  local code=$1 pattern=$2
  shift 3
  set +e
  out=$("$@" 2>&1)
  rc=$?
  set -e
  [ "$rc" -eq "$code" ] || fail "'$*' exited $rc, expected $code; output: $out"
  grep -qF -- "$pattern" <<<"$out" || fail "'$*' did not say: $pattern; output: $out"
  echo "ok: $* -> $pattern"
}

# Runs a ParaView script through $pv (paraview-run), printing its output. paraview-run already
# retries a refused X connection on fresh servers; should all of them refuse ("bad X server
# connection"), that one failure, and only it, gets a second try after a pause. Usage: pv_run WHAT SCRIPT ARGS...
pv_run() {
  local what=$1
  shift
  if ! "$pv" "$@" > pv.log 2>&1; then
    grep -q "bad X server connection" pv.log || { cat pv.log; fail "$what failed"; }
    echo "X server start race (xvfb-run); $what again"
    sleep 3
    "$pv" "$@" > pv.log 2>&1 || { cat pv.log; fail "$what failed twice"; }
  fi
  cat pv.log
}
