#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What examples/log_tree_2d/README.md reads off a run's thermo.csv (the cold collapse):

    bench/numbers/log_tree_2d.py FOLDER

prints `peak_kinetic_time T` (the time of the largest kinetic energy: the deepest collapse),
`drift_early D` (the largest |relative_drift| up to t = 1, before the collapse), and at the last
row (t = 3) `drift_end D` (|relative_drift|) and `momentum_end P` (|(px, py)|).
"""
import csv
import math
import os
import sys

with open(os.path.join(sys.argv[1], "thermo.csv"), newline="") as f:
    rows = [{k: float(v) for k, v in r.items() if v != ""} for r in csv.DictReader(f)]
peak = max(rows, key=lambda r: r["kinetic"])
last = rows[-1]
print(f"peak_kinetic_time {peak['time']:g}")
print(f"drift_early {max(abs(r['relative_drift']) for r in rows if r['time'] <= 1.0):.4g}")
print(f"drift_end {abs(last['relative_drift']):.4g} at {last['time']:g}")
print(f"momentum_end {math.hypot(last['px'], last['py']):.4g}")
