#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The numbers examples/real_gas_2d/README.md and examples/real_gas_2d_large/README.md quote about
what the real-gas examples' runs show (thermo.csv, clusters.csv, wall_profile.py's bands).

    PARDYN=build/bin/pardyn OUT=/tmp/x bench/numbers/real_gas_2d.py quench
        examples/real_gas_2d/real_gas_2d.toml as committed (15,000 steps): its thermo rows at
        t = 0, 6, ..., 30 and what the README derives from them
    PARDYN=... OUT=... bench/numbers/real_gas_2d.py walls
        real_gas_2d_walls.toml as committed (50,000 steps): the thermo rows at t = 0, 20, ..., 100,
        the energy the walls took out, the ideal-gas estimate of that rate, and wall_profile.py's
        bands (its output, and the values the README's prose quotes)
    PARDYN=... OUT=... bench/numbers/real_gas_2d.py earlier
        real_gas_2d_walls.toml with the earlier constants (attraction 0.003, restitution 0.9 and 1;
        15,000 steps, grid_fields every 3,000) and two other variants (restitution 0.9 with
        attraction 0.0005 and 0)
    bench/numbers/real_gas_2d.py large FOLDER
        the output folder of examples/real_gas_2d_large (the GPU run of the h100 measure): the
        thermo and droplet rows at t = 0, 10, 20, 40, ..., 100 and the size distribution at t = 25

Every run of this script is on the CPU backend with one thread, two runs at a time: the real gas's
far zones sum each particle's forces in a fixed order whatever the threads, so the results are
those of a run with the defaults on this build, and the same on every machine.
"""
import concurrent.futures
import csv
import importlib.util
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "real_gas_2d")
PROFILE = os.path.join(EXAMPLE, "wall_profile.py")
BANDS = [0.0, 3.0, 6.0, 12.0, 24.0, 36.0]
BAND_NAMES = ["0-3", "3-6", "6-12", "12-24", "24-36"]


def profile_module():
    spec = importlib.util.spec_from_file_location("wall_profile", PROFILE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run(name, toml, *sets):
    """Runs one scenario on the CPU (one thread) into OUT/name; returns the folder."""
    out = os.path.join(os.environ["OUT"], name)
    cmd = [os.environ["PARDYN"], "run", os.path.join(EXAMPLE, toml), "-q", "-o", out,
           "--set", "simulation.backend=cpu", "--set", "simulation.threads=1"]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"real_gas_2d.py: {' '.join(cmd)} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return out


def run_all(jobs):
    """Runs {name: (toml, sets...)} two at a time; returns {name: folder}."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        futures = {name: ex.submit(run, name, *job) for name, job in jobs.items()}
        return {name: f.result() for name, f in futures.items()}


def thermo(folder):
    with open(os.path.join(folder, "thermo.csv")) as f:
        return {int(r["step"]): {k: float(v) for k, v in r.items()} for r in csv.DictReader(f)}


def bands(folder):
    """{time: {"T": [...], "n": [...], "drop": [...]}} of wall_profile.py's bands (BANDS)."""
    wp = profile_module()
    files = wp.series(folder, "fields.pvd")
    _, grid = wp.read_fields(files[0][1])
    dist = wp.wall_distance(grid)
    lo = grid["origin"][:2]
    hi = [lo[d] + grid["cells"][d] * grid["spacing"][d] for d in range(2)]
    area = grid["spacing"][0] * grid["spacing"][1]
    frames = {round(t, 6): p for t, p in wp.series(folder, "run.pvd")}
    out = {}
    for t, path in files:
        cells, _ = wp.read_fields(path)
        b = wp.field_bands(cells, dist, BANDS)
        row = {"T": [x[0] for x in b], "n": [x[1] / (x[2] * area) for x in b]}
        frame_path = frames.get(round(t, 6))
        frame = wp.read_frame(frame_path) if frame_path else None
        if frame is not None:
            row["drop"] = wp.droplet_bands(frame, lo, hi, BANDS)
        out[round(t, 6)] = row
    return out


def print_bands(label, b):
    for t, row in sorted(b.items()):
        for what, values in row.items():
            for name, v in zip(BAND_NAMES, values):
                print(f"band {label} {what} {t:g} {name} {v:.6g}")


def print_profile(label, folder, section=None):
    """wall_profile.py's output for the folder, between `profile LABEL` and `end profile` (only
    the table whose title starts with `section`, if given)."""
    r = subprocess.run([sys.executable, PROFILE, folder, "--bands",
                        ",".join(f"{x:g}" for x in BANDS)], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"real_gas_2d.py: wall_profile.py {folder} failed:\n{r.stderr[-2000:]}")
    text = r.stdout.rstrip("\n")
    if section:
        part = text[text.index(section):]
        text = part.split("\n\n")[0]
    print(f"profile {label}")
    print(text)
    print("end profile")


def wall_share(rows, step):
    """The energy the walls took out by `step` (E0 - E) and K0."""
    return rows[0]["total"] - rows[step]["total"], rows[0]["kinetic"]


def quench():
    folder = run_all({"quench": ("real_gas_2d.toml",)})["quench"]
    rows = thermo(folder)
    for s in range(0, 15001, 3000):
        r = rows[s]
        print(f"row {s} temperature {r['temperature']:.6g} n_clusters {r['n_clusters']:.0f} "
              f"largest {r['largest_cluster_fraction']:.6g} clustered {r['clustered_fraction']:.6g}")
    peak = max(range(0, 15001, 3000), key=lambda s: rows[s]["largest_cluster_fraction"])
    print(f"largest_peak_time {rows[peak]['time']:g}")
    print(f"final_above_target {rows[15000]['temperature'] - 0.1:.6g}")


def walls():
    folder = run_all({"walls": ("real_gas_2d_walls.toml",)})["walls"]
    rows = thermo(folder)
    K0 = rows[0]["kinetic"]
    print(f"K0 {K0:.6g}")
    for s in range(0, 50001, 10000):
        r = rows[s]
        taken, _ = wall_share(rows, s)
        print(f"row {s} temperature {r['temperature']:.6g} taken {100 * taken / K0:.6g} "
              f"du {r['potential'] - rows[0]['potential']:.6g} "
              f"largest {r['largest_cluster_fraction']:.6g} clustered {r['clustered_fraction']:.6g}")
    # The ideal-gas estimate (README, "How fast walls cool"): a wall of length l is hit
    # n <|v_n|>/2 l times per unit time, <|v_n|> = sqrt(2T/(pi m)), and each hit removes (1-e^2) T.
    N, side, T = 2500, 72.0, 3.0
    n = N / side**2
    hits = n * math.sqrt(2 * T / math.pi) / 2 * 4 * side
    K = N * T  # 2D: dim/2 N T
    for e, name in ((0.5, "05"), (0.9, "09")):
        removed = hits * (1 - e * e) * T
        print(f"theory {name} hits {hits:.6g} removed {removed:.6g} "
              f"percent {100 * removed / K:.6g}")
    dt_first = rows[5000]["time"] - rows[0]["time"]
    first = (rows[0]["total"] - rows[5000]["total"]) / dt_first
    last = (rows[45000]["total"] - rows[50000]["total"]) / (rows[50000]["time"] - rows[45000]["time"])
    print(f"rate_first {first:.6g} of_theory {100 * first / (hits * 0.75 * T):.6g}")
    print(f"rate_last {last:.6g}")
    print(f"du_40_100 {rows[20000]['potential'] - rows[50000]['potential']:.6g}")
    print(f"at_30 temperature {rows[15000]['temperature']:.6g} "
          f"taken {100 * wall_share(rows, 15000)[0] / K0:.6g}")
    print(f"clustered_10 {rows[5000]['clustered_fraction']:.6g}")
    for s in range(10000, 50001, 10000):
        print(f"clustered_late {rows[s]['clustered_fraction']:.6g}")
    b = bands(folder)
    print_bands("walls", b)
    # How much colder the band at the walls is than the colder of the two inner bands, from t = 10
    for t, row in sorted(b.items()):
        if t >= 10:
            print(f"colder {min(row['T'][3], row['T'][4]) - row['T'][0]:.6g}")
    print_profile("walls", folder)


def earlier():
    e09 = ("potential.0.attraction=0.003", "potential.1.restitution=0.9",
           "simulation.steps=15000", "output.3.interval=3000")
    folders = run_all({
        "e09": ("real_gas_2d_walls.toml",) + e09,
        "e10": ("real_gas_2d_walls.toml",) + e09[:1] + ("potential.1.restitution=1",) + e09[2:],
        "weak09": ("real_gas_2d_walls.toml", "potential.1.restitution=0.9",
                   "simulation.steps=15000"),
        "none09": ("real_gas_2d_walls.toml", "potential.0.attraction=0",
                   "potential.1.restitution=0.9", "simulation.steps=15000"),
    })
    for name, folder in folders.items():
        rows = thermo(folder)
        K0, E0 = rows[0]["kinetic"], rows[0]["total"]
        peak = max(rows.values(), key=lambda r: r["temperature"])
        taken, _ = wall_share(rows, 15000)
        print(f"run {name} K0 {K0:.6g} E0 {E0:.6g} T0 {rows[0]['temperature']:.6g} "
              f"T30 {rows[15000]['temperature']:.6g} Tmax {peak['temperature']:.6g} "
              f"tmax {peak['time']:g} taken {taken:.6g} taken_K0 {100 * taken / K0:.6g} "
              f"taken_E0 {100 * taken / abs(E0):.6g}")
        print(f"run {name} at_12 du {rows[6000]['potential'] - rows[0]['potential']:.6g} "
              f"taken_K0 {100 * wall_share(rows, 6000)[0] / K0:.6g}")
    for name in ("e09", "e10"):
        b = bands(folders[name])
        print_bands(name, b)
        for t, row in sorted(b.items()):
            if 6 <= t <= 12:
                print(f"colder {name} {row['T'][4] - row['T'][0]:.6g}")
        print(f"middle_T_max {name} {max(row['T'][4] for row in b.values()):.6g}")
        print_profile(name, folders[name], "Temperature in each band")


def large(folder):
    rows = thermo(folder)
    with open(os.path.join(folder, "clusters.csv")) as f:
        analyses = list(csv.DictReader(f))
    clusters = {int(r["step"]): r for r in analyses}
    for s in (0, 5000, 10000, 20000, 30000, 40000, 50000):
        r, c = rows[s], clusters[s]
        print(f"row {s} temperature {r['temperature']:.6g} droplets {float(c['n_clusters']):.0f} "
              f"mean_size {float(c['mean_cluster_size']):.6g} "
              f"in_droplets {100 * r['clustered_fraction']:.6g}")
    n20, n100 = float(clusters[10000]["n_clusters"]), float(clusters[50000]["n_clusters"])
    print(f"droplets_fall_20_100 {100 * (1 - n100 / n20):.6g}")
    # The size distribution at coarsening.gp's second time (the analysis a quarter into the run,
    # t = 24.8): of the particles in droplets (bins from 8 up), the bins that hold at least half
    # as many as the fullest one (a bin's particles: its clusters times its middle size).
    c = analyses[(len(analyses) - 1) // 4]
    print(f"peak_time {float(c['time']):g}")
    bins = []
    for k, v in c.items():
        if k.startswith("size_"):
            parts = k[len("size_"):].split("_")
            lo, hi = int(parts[0]), int(parts[-1])
            if lo >= 8:
                bins.append((lo, hi, float(v) * (lo + hi) / 2))
    top = max(b[2] for b in bins)
    for lo, hi, w in bins:
        if w >= top / 2:
            print(f"peak_edge {lo}")
            print(f"peak_edge {hi}")


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what == "quench":
        quench()
    elif what == "walls":
        walls()
    elif what == "earlier":
        earlier()
    elif what == "large" and len(sys.argv) == 3:
        large(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
