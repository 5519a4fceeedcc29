#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Quench-rate sweep of the 2D real gas (examples/real_gas_2d): the same hot gas is cooled from
T = 3 to T = 0.1 at several rates, and the fraction of particles in the largest droplet is
plotted against time for each. A fast quench leaves many small droplets (the largest holds little
of the gas); a slow one lets them grow and merge.

    PYTHONPATH=build/python python3 examples/python/quench_sweep.py            # 2500 particles
    PYTHONPATH=build/python python3 examples/python/quench_sweep.py --quick    # a smaller test

Writes quench_sweep.png and quench_sweep.csv into --out (default out/quench_sweep); each run's own
outputs (thermo.csv, clusters.csv) go to a folder per rate below it. docs/python.md explains it.
"""
import argparse
import csv
import os
import pathlib

import pardyn

HERE = pathlib.Path(__file__).resolve().parent
SCENARIO = HERE.parent / "real_gas_2d" / "real_gas_2d.toml"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ramps", type=float, nargs="+", default=[3.0, 10.0, 25.0],
                    help="cooling times (simulation time units) from T = 3 to T = 0.1")
    ap.add_argument("--quick", action="store_true", help="600 particles, short runs (a test)")
    ap.add_argument("--backend", default="auto", help="auto, cpu or cuda")
    ap.add_argument("--out", default="out/quench_sweep")
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    count, side = (600, 35.3) if args.quick else (2500, 72.0)
    ramp_start = 2.0
    after = 4.0 if args.quick else 10.0  # time held at T = 0.1 after the ramp
    results = {}
    for ramp in args.ramps:
        end_time = ramp_start + ramp + after
        steps = int(round(end_time / 0.002))
        sets = {
            "simulation.steps": steps,
            "simulation.backend": args.backend,
            "simulation.progress_interval": 200,   # an observation (with clusters) every 200 steps
            "box.hi": [side, side],
            "particles.0.count": count,
            "modifier.0.ramp_start": ramp_start,
            "modifier.0.ramp_end": ramp_start + ramp,
            "output.2.interval": steps,            # VTK frames: only the first and the last
            "output.3.interval": steps,            # density grids: the same
        }
        rate = (3.0 - 0.1) / ramp
        with pardyn.Simulation(SCENARIO, set=sets, output=str(out / ("ramp_%g" % ramp))) as sim:
            sim.run()
            h = sim.thermo_history()
        results[ramp] = (rate, h["time"], h["largest_cluster_fraction"], h["temperature"])
        print("ramp %5.1f (rate %.3f per time unit): largest droplet holds %.1f%% of %d particles "
              "at t = %.1f" % (ramp, rate, 100 * h["largest_cluster_fraction"][-1], sim.n,
                               h["time"][-1]))

    with open(out / "quench_sweep.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ramp", "rate", "time", "temperature", "largest_cluster_fraction"])
        for ramp, (rate, t, frac, temp) in results.items():
            for k in range(len(t)):
                w.writerow([ramp, rate, t[k], temp[k], frac[k]])

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for ramp, (rate, t, frac, _) in results.items():
        ax.plot(t, frac, label="cooled in %g (rate %.2f)" % (ramp, rate))
    ax.set_xlabel("time")
    ax.set_ylabel("fraction of particles in the largest droplet")
    ax.set_title("2D real gas, %d particles, T: 3 -> 0.1 from t = %g" % (count, ramp_start))
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "quench_sweep.png", dpi=110)
    print("wrote", out / "quench_sweep.png", "and", out / "quench_sweep.csv")


if __name__ == "__main__":
    main()
