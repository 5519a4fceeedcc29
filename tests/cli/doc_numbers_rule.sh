# SPDX-License-Identifier: BSD-3-Clause
# The docs check's rule for what reads as a measured number (bench/doc_numbers.py, docs/numbers.md):
# a number before a rate, a time, a size, × or %, or in a table column headed by one, needs a
# marker; a marked number, a label, code and a table column without such a heading do not.
. "$(dirname "$0")/common.sh"

python3 - "$SRC/bench" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import doc_numbers as d

def flagged(text):
    return [number for _, number in d.unmarked(text, "page.md")]

cases = [
    ("it runs at 445 steps/s here", ["445"]),
    ("it runs at 445<!--n:m.rate--> steps/s here", []),
    ("the loop took 1.5 s and 20 ms", ["1.5", "20"]),
    ("2.1× faster, and 1.2–2.3× with the criterion", ["2.1", "1.2–2.3"]),
    ("the energy rose by 6% and by 3 %", ["6", "3"]),
    ("when the slowest is more than 10<!--n:given--> % above the mean", []),
    ("`bench 445 steps/s` in code", []),
    ("a frame of 16 B in a 3D cell", []),
    ("N = 4096 particles in 2D", []),
    ("| N | steps/s |\n|---|---|\n| 4,096 | 1,234 |", ["1,234"]),
    ("| N | steps/s |\n|---|---:|\n| 4,096 | 1,234<!--n:m.x--> |", []),
    ("| where | measured (steps/s) |\n|---|---|\n| GPU | 4,096: all_pairs 8,482<!--n:m.a-->, 10⁵: 3,355 |",
     ["3,355"]),
    ("| law | RMS/RMS error |\n|---|---|\n| log | 2.5·10⁻⁴ |", ["2.5·10⁻⁴"]),
    ("| law | θ | value |\n|---|---|---|\n| log | 0.7 | 2.5·10⁻⁴ |", []),
    ("```\n| N | steps/s |\n|---|---|\n| 1 | 2 |\n```", []),
]
bad = 0
for text, want in cases:
    got = flagged(text)
    if sorted(got) != sorted(want):
        bad += 1
        print(f"FAIL: {text!r}: flagged {got}, expected {want}")
    else:
        print(f"ok: {text!r} -> {got}")
sys.exit(1 if bad else 0)
PY
