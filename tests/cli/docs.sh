# SPDX-License-Identifier: BSD-3-Clause
# Every command block marked runnable in README.md and docs/*.md runs and succeeds
# (scripts/check-docs; the marks are described there and in docs/user-guide.md).
. "$(dirname "$0")/common.sh"

build_dir=$(cd "$(dirname "$PARDYN")/.." && pwd)
python3 "$SRC/scripts/check-docs" --build "$build_dir" --work "$WORK/docs"
