#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the analytic values the conformance suite compares every pair law with.

Each law's pair energy U(r) and fdivr (the force on particle 0 divided by r, F_0 = fdivr (x_0 - x_1))
for two particles of masses m0, m1, computed here in plain Python from the formula in the law's
documentation (its header comment and `pardyn plugins show NAME`), not from pardyn's code.
Run from anywhere:  python3 tests/laws/make_reference.py
Writes tests/laws/NAME.csv and examples/plugin_template/yukawa.csv.
"""
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def write(path, law, formula, params, masses, rows):
    with open(path, "w") as f:
        f.write(f"# {law}: {formula}\n")
        f.write("# written by tests/laws/make_reference.py; do not edit by hand\n")
        f.write("# params: " + "; ".join(f"{k} = {v}" for k, v in params.items()) + "\n")
        f.write(f"# masses: {masses[0]!r} {masses[1]!r}\n")
        f.write("r,U,fdivr\n")
        for r in rows:
            U, fdivr = law_fn[law](r, params, masses)
            f.write(f"{r!r},{U!r},{fdivr!r}\n")


def gravity(r, p, m):
    # U = -G m0 m1 / sqrt(r^2 + eps^2);  F_0 = -G m0 m1 d / (r^2 + eps^2)^(3/2)
    s = r * r + p["eps"] ** 2
    return -p["G"] * m[0] * m[1] / math.sqrt(s), -p["G"] * m[0] * m[1] / s ** 1.5


def log(r, p, m):
    # U = G m0 m1 ln(sqrt(r^2 + eps^2) / r0);  F_0 = -G m0 m1 d / (r^2 + eps^2)
    s = r * r + p["eps"] ** 2
    return p["G"] * m[0] * m[1] * math.log(math.sqrt(s) / p["r0"]), -p["G"] * m[0] * m[1] / s


def lennard_jones(r, p, m):
    # U = 4 eps [(sigma/r)^12 - (sigma/r)^6] - U(rcut) for r < rcut, 0 beyond;
    # F_0 = 24 eps [2 (sigma/r)^12 - (sigma/r)^6] d / r^2
    eps, sig, rc = p["epsilon"], p["sigma"], p["rcut"]
    if r >= rc:
        return 0.0, 0.0
    u = lambda x: 4 * eps * ((sig / x) ** 12 - (sig / x) ** 6)
    return u(r) - u(rc), 24 * eps * (2 * (sig / r) ** 12 - (sig / r) ** 6) / r ** 2


def soft_gas(r, p, m):
    # s = r^2 + eps^2; U = m0 m1 [(a/2) ln(s/rc^2) + (s < rc^2)((B/2)(1/s - 1/rc^2) + (a2/2) ln(s/rc^2))]
    # a_0 = -a m1 d / s + (s < rc^2)(B/s^2 - a2/s) m1 d
    a, B, a2, rc, eps = p["attraction"], p["repulsion"], p["core_attraction"], p["rc"], p["eps"]
    s, rc2 = r * r + eps * eps, rc * rc
    inside = 1.0 if s < rc2 else 0.0
    U = a / 2 * math.log(s / rc2) + inside * (B / 2 * (1 / s - 1 / rc2) + a2 / 2 * math.log(s / rc2))
    fdivr = -a / s + inside * (B / s ** 2 - a2 / s)
    return m[0] * m[1] * U, m[0] * m[1] * fdivr


def test_sticky(r, p, m):
    # U = m0 m1 [-G / sqrt(r^2 + eps^2) + k (rs^2 - r^2)^2 for r < rs]; fdivr = -(1/r) dU/dr
    G, k, rs, eps = p["G"], p["k"], p["rs"], p["eps"]
    s = r * r + eps * eps
    inside = 1.0 if r < rs else 0.0
    g = rs * rs - r * r
    U = -G / math.sqrt(s) + inside * k * g * g
    fdivr = -G / s ** 1.5 + inside * 4 * k * g
    return m[0] * m[1] * U, m[0] * m[1] * fdivr


def yukawa(r, p, m):
    # U = A exp(-kappa r) / r - U(rcut) for r < rcut, 0 beyond; F_0 = A exp(-kappa r)(1 + kappa r) / r^3 d
    A, kappa, rc = p["A"], p["kappa"], p["rcut"]
    if r >= rc:
        return 0.0, 0.0
    u = lambda x: A * math.exp(-kappa * x) / x
    return u(r) - u(rc), A * math.exp(-kappa * r) * (1 + kappa * r) / r ** 3


def harmonic(r, p, m):
    # The table law's check: U = k/2 (r^2 - rc^2), F = -k r for r < rc, 0 beyond (fdivr = -k), a law
    # linear in r^2 that the table's interpolation in r^2 (linear and spline) reproduces exactly.
    if r >= p["rc"]:
        return 0.0, 0.0
    return p["k"] / 2 * (r * r - p["rc"] ** 2), -p["k"]


# The table law's file: HARMONIC, 21 points evenly in r^2 from 0.5 to rc (LAMMPS pair_style table).
HARMONIC = {"k": 1.5, "rc": 2.0}
with open(os.path.join(HERE, "table.table"), "w") as f:
    f.write("# U = k/2 (r^2 - rc^2), F = -dU/dr = -k r, k = 1.5, rc = 2.0\n")
    f.write("# written by tests/laws/make_reference.py; do not edit by hand\n\n")
    f.write("HARMONIC\nN 21 RSQ 0.5 2.0\n\n")
    for i in range(21):
        r = math.sqrt(0.25 + (4.0 - 0.25) * i / 20)
        f.write(f"{i + 1} {r!r} {HARMONIC['k'] / 2 * (r * r - 4.0)!r} {-HARMONIC['k'] * r!r}\n")

# The expression law's values: the plugin template's Yukawa law, written as a formula.
YUKAWA_AS_FORMULA = {"A": 2.0, "kappa": 0.8, "rcut": 3.0}

law_fn = {"gravity": gravity, "log": log, "lennard_jones": lennard_jones, "soft_gas": soft_gas,
          "test_sticky": test_sticky, "yukawa": yukawa,
          "expression": lambda r, p, m: yukawa(r, YUKAWA_AS_FORMULA, m),
          "table": lambda r, p, m: harmonic(r, HARMONIC, m)}

spread = [0.3, 0.5, 0.8, 1.0, 1.3, 1.7, 2.2, 3.0, 4.5, 7.0]
write(os.path.join(HERE, "gravity.csv"), "gravity", "U = -G m0 m1 / sqrt(r^2 + eps^2)",
      {"G": 1.5, "eps": 0.1}, (2.0, 3.0), spread)
write(os.path.join(HERE, "log.csv"), "log", "U = G m0 m1 ln(sqrt(r^2 + eps^2) / r0)",
      {"G": 0.7, "eps": 0.05, "r0": 1.3}, (2.0, 0.5), spread)
write(os.path.join(HERE, "lennard_jones.csv"), "lennard_jones",
      "U = 4 eps [(sigma/r)^12 - (sigma/r)^6] - U(rcut), r < rcut",
      {"epsilon": 1.2, "sigma": 0.9, "rcut": 2.5, "shift": "true"}, (1.0, 1.0),
      [0.8, 0.9, 1.0, 1.1, 1.3, 1.6, 2.0, 2.4, 2.6, 3.5])
write(os.path.join(HERE, "soft_gas.csv"), "soft_gas",
      "U = m0 m1 [(a/2) ln(s/rc^2) + (s < rc^2)((B/2)(1/s - 1/rc^2) + (a2/2) ln(s/rc^2))], s = r^2 + eps^2",
      {"attraction": 0.01, "repulsion": 3.0, "core_attraction": 2.99, "rc": 2.0, "eps": 0.1},
      (1.0, 1.5), [0.2, 0.5, 0.8, 0.995, 1.2, 1.6, 1.9, 2.1, 3.0, 6.0])
write(os.path.join(HERE, "test_sticky.csv"), "test_sticky",
      "U = m0 m1 [-G / sqrt(r^2 + eps^2) + k (rs^2 - r^2)^2 for r < rs]",
      {"G": 1.0, "k": 1000.0, "rs": 0.3, "eps": 0.01}, (1.0, 2.0),
      [0.05, 0.1, 0.2, 0.29, 0.31, 0.5, 1.0, 2.0])
write(os.path.join(ROOT, "examples", "plugin_template", "yukawa.csv"), "yukawa",
      "U = A exp(-kappa r) / r - U(rcut), r < rcut",
      {"A": 2.0, "kappa": 0.8, "rcut": 3.0, "shift": "true"}, (1.0, 1.0),
      [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 2.9, 3.2, 4.0])
write(os.path.join(HERE, "expression.csv"), "expression",
      "the template's Yukawa as a formula: U = A exp(-kappa r) / r - U(rcut), r < rcut",
      {"energy": '"A*exp(-kappa*r)/r"', "parameters": "{ A = 2.0, kappa = 0.8 }", "rcut": 3.0,
       "shift": "true"}, (1.0, 1.0),
      [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 2.9, 3.2, 4.0])
# @PARDYN_SOURCE_DIR@: the source tree (tests/test_conformance.cpp puts it in).
write(os.path.join(HERE, "table.csv"), "table",
      "the table tests/laws/table.table of U = k/2 (r^2 - rc^2), k = 1.5, rc = 2 (exact in r^2)",
      {"file": '"@PARDYN_SOURCE_DIR@/tests/laws/table.table"', "keyword": '"HARMONIC"'},
      (1.0, 1.0), [0.3, 0.5, 0.8, 1.0, 1.3, 1.7, 1.9, 1.99, 2.1, 3.0])

# The unshifted 12-6 pair at the (epsilon, sigma, r) points test_potentials.cpp checks the
# lennard_jones plugin at (its two-body, cut-off and mixing-rule tests): U and fdivr as above, with
# no cut-off and no shift (the tests subtract U(rcut) themselves where they shift).
with open(os.path.join(ROOT, "tests", "data", "lennard_jones_pairs.csv"), "w") as f:
    f.write("# lennard_jones, unshifted: U = 4 eps [(sigma/r)^12 - (sigma/r)^6], "
            "fdivr = 24 eps [2 (sigma/r)^12 - (sigma/r)^6] / r^2\n")
    f.write("# written by tests/laws/make_reference.py; do not edit by hand; "
            "read by tests/test_potentials.cpp\n")
    f.write("epsilon,sigma,r,U,fdivr\n")
    for eps, sig, r in [(1.3, 1.1, 1.5), (1.3, 1.1, 3.0),  # TwoBodyAnalytic: r and rcut
                        (1.0, 1.0, 2.5 * (1 - 1e-12)), (1.0, 1.0, 2.5),  # just inside the cut-off
                        (0.5, 1.2, 1.3), (0.25, 1.4, 1.3), (1.0, 1.0, 1.3),  # mixing rules
                        (0.5, math.sqrt(1.4), 1.3), (0.7, 1.1, 1.3)]:
        U, fdivr = lennard_jones(r, {"epsilon": eps, "sigma": sig, "rcut": math.inf}, (1.0, 1.0))
        f.write(f"{eps!r},{sig!r},{r!r},{U!r},{fdivr!r}\n")
