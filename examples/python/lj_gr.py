#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""g(r) of the Lennard-Jones liquid, computed in NumPy from sim.positions.

864 particles (an fcc lattice of 6 x 6 x 6 cells) at the reduced density 0.8442 are melted and held
at T = 0.722 by Bussi's thermostat: the state point of Verlet's classic study (Phys. Rev. 159, 98
(1967); the same state as LAMMPS's `bench/in.lj` liquid). A callback collects the positions every
`--every` steps; g(r) is the histogram of minimum-image pair distances over the ideal-gas count.

    PYTHONPATH=build/python python3 examples/python/lj_gr.py            # 20,000 steps
    PYTHONPATH=build/python python3 examples/python/lj_gr.py --quick    # a test: 3,000 steps

Writes lj_gr.png and lj_gr.csv into --out (default out/lj_gr). docs/python.md explains it.
"""
import argparse
import csv
import math
import pathlib

import numpy as np

import pardyn


def scenario(out, steps, backend):
    a = (4 / 0.8442) ** (1 / 3)  # fcc cell side at density 0.8442
    side = 6 * a
    return {
        "simulation": {"dimension": 3, "steps": steps, "seed": 11, "output": out,
                       "backend": backend},
        "box": {"lo": [0.0] * 3, "hi": [side] * 3, "boundary": "periodic"},
        "particles": [{"generator": "lattice", "kind": "fcc", "density": 0.8442,
                       "temperature": 0.722}],
        "potential": [{"type": "lennard_jones", "rcut": 2.5,
                       "scheme": {"type": "cell_list", "skin": 0.3}}],
        "integrator": {"type": "velocity_verlet", "dt": 0.004},
        "modifier": [{"type": "velocity_rescale", "temperature": 0.722, "tau": 0.2}],
        "output": [{"type": "thermo", "interval": 500}],
    }


def pair_histogram(x, side, edges):
    """Minimum-image distances of every pair, histogrammed (a cubic periodic box)."""
    counts = np.zeros(len(edges) - 1)
    for i in range(len(x) - 1):
        d = x[i + 1:] - x[i]
        d -= side * np.round(d / side)
        counts += np.histogram(np.sqrt((d * d).sum(axis=1)), bins=edges)[0]
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--equilibrate", type=int, default=2000, help="steps before sampling")
    ap.add_argument("--every", type=int, default=100, help="steps between samples")
    ap.add_argument("--quick", action="store_true", help="3000 steps (a test)")
    ap.add_argument("--backend", default="auto", help="auto, cpu or cuda")
    ap.add_argument("--out", default="out/lj_gr")
    args = ap.parse_args()
    if args.quick:
        args.steps, args.equilibrate, args.every = 3000, 1000, 100
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    sim = pardyn.Simulation(scenario(str(out / "run"), args.steps, args.backend))
    side = sim.box["hi"][0] - sim.box["lo"][0]
    r_max = side / 2
    edges = np.linspace(0.0, r_max, 151)
    counts = np.zeros(len(edges) - 1)
    samples = []

    def sample(s):
        if s.step >= args.equilibrate:
            counts[:] += pair_histogram(s.positions, side, edges)
            samples.append(s.step)

    sim.add_callback(sample, args.every)
    sim.run()
    temperature = np.mean(sim.thermo_history()["temperature"][1:])
    sim.close()

    n = sim.n
    rho = n / side ** 3
    shell = 4.0 / 3.0 * math.pi * (edges[1:] ** 3 - edges[:-1] ** 3)
    ideal = len(samples) * 0.5 * n * (n - 1) / side ** 3 * shell  # pairs an ideal gas would have
    g = counts / ideal
    r = 0.5 * (edges[1:] + edges[:-1])
    peak = int(np.argmax(g))
    print("%d particles, density %.4f, mean T %.3f, %d samples: first peak g(%.3f) = %.2f"
          % (n, rho, temperature, len(samples), r[peak], g[peak]))

    with open(out / "lj_gr.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["r", "g"])
        w.writerows(zip(r, g))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.plot(r, g)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("r / sigma")
    ax.set_ylabel("g(r)")
    ax.set_title("LJ liquid, rho* = 0.8442, T* = 0.722 (%d particles)" % n)
    fig.tight_layout()
    fig.savefig(out / "lj_gr.png", dpi=110)
    print("wrote", out / "lj_gr.png", "and", out / "lj_gr.csv")


if __name__ == "__main__":
    main()
