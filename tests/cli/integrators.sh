# SPDX-License-Identifier: BSD-3-Clause
# The integrator comparison (examples/integrators) in its --check mode: every integrator runs the
# two-galaxy collision, and each one's energy error falls as its step falls, at a rate near its order.
. "$(dirname "$0")/common.sh"

python3 "$SRC/examples/integrators/compare.py" "$PARDYN" --check --out "$WORK/compare"
echo "integrators: comparison check passed"
