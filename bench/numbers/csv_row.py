#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Prints one row of a CSV file as `column value` lines, for bench/numbers.toml's picks.

    bench/numbers/csv_row.py FILE STEP     the row whose first column is STEP
    bench/numbers/csv_row.py FILE last     the last row
"""
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
first = next(iter(rows[0])) if rows else None
row = rows[-1] if sys.argv[2] == "last" else next(
    (r for r in rows if r[first] == sys.argv[2]), None)
if row is None:
    sys.exit(f"{sys.argv[1]}: no row {sys.argv[2]}")
for k, v in row.items():
    print(k, v)
