#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The numbers docs/integrators.md and examples/integrators/README.md quote about the integrator
comparison (examples/integrators: a two-galaxy collision of 512 bodies, every integrator at several
steps, scored by the largest energy error against the force evaluations).

    PARDYN=build/bin/pardyn OUT=/tmp/x bench/numbers/integrators.py steps
        the step taken over the run by leapfrog under dt_control at dt_eta 0.1 and by dopri5 at
        rtol 1e-6 (deterministic, a few seconds):  `NAME dt_min X dt_max Y ratio R ...`
    PARDYN=... OUT=... bench/numbers/integrators.py sweep
        compare.py's whole sweep (2-3 minutes on 2 cores) and dopri5 at rtol 1e-8, 1e-9, 1e-10
        (deterministic, minutes): each run's row, what the docs derive from the rows, and the
        conserved quantities' largest changes in the runs docs/integrators.md lists
    PARDYN=... OUT=... bench/numbers/integrators.py cost
        timings on this machine: compare.py --quick, and a step at N = 512 on one core with and
        without thermo recording it (three runs each)

Every run is compare.py's: the same scenario and settings, one thread, the CPU backend.
"""
import concurrent.futures
import csv
import math
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCENARIO = os.path.join(ROOT, "examples", "integrators", "galaxies.toml")
COMPARE = os.path.join(ROOT, "examples", "integrators", "compare.py")
PARDYN = os.environ["PARDYN"]
OUT = os.environ["OUT"]
DT_CONTROL = ["integrator.type=leapfrog", "integrator.dt_control=acceleration",
              "integrator.dt=0.01", "integrator.dt_length=0.02"]


def dopri5(rtol):
    return ["integrator.type=dopri5", f"integrator.rtol={rtol!r}", f"integrator.atol={rtol!r}"]


def run(name, sets):
    """One run of the scenario as compare.py makes it; returns its thermo rows and log text."""
    out = os.path.join(OUT, name)
    cmd = [PARDYN, "run", SCENARIO, "-q", "-o", out, "--set", "simulation.backend=cpu",
           "--set", "simulation.threads=1"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True)
    with open(os.path.join(out, "thermo.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(out, "log.txt")) as f:
        return rows, f.read()


def summary(name, rows):
    """`NAME dt_min .. dt_max .. ratio .. evals .. max_err .. rejected ..`: the step's range leaves
    out the last step, which is cut short to end at end_time."""
    dts = [float(r["dt"]) for r in rows[:-1] if float(r["dt"]) > 0]
    last = rows[-1]
    err = max(abs(float(r["relative_drift"])) for r in rows)
    print(f"{name} dt_min {min(dts):.4g} dt_max {max(dts):.4g} ratio {max(dts) / min(dts):.3f} "
          f"evals {int(float(last['force_evaluations']))} max_err {err:.4g} "
          f"rejected {int(float(last['rejected_steps'] or 0))}", flush=True)


def parallel(jobs):
    """Runs {name: sets} two at a time; returns {name: (rows, log)}."""
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        futures = {name: ex.submit(run, name, sets) for name, sets in jobs.items()}
        return {name: f.result() for name, f in futures.items()}


def steps():
    done = parallel({"dt_control_0.1": DT_CONTROL + ["integrator.dt_eta=0.1"],
                     "dopri5_1e-06": dopri5(1e-6)})
    for name, (rows, _) in done.items():
        summary(name, rows)


def loglog(points, x):
    """The error at cost x on a line through (cost, error) points, log-log, extrapolated at the
    ends."""
    pts = sorted(points)
    i = max(1, min(len(pts) - 1, next((k for k, p in enumerate(pts) if p[0] >= x), len(pts) - 1)))
    (x0, y0), (x1, y1) = pts[i - 1], pts[i]
    slope = math.log(y1 / y0) / math.log(x1 / x0)
    return y0 * (x / x0) ** slope


def sweep():
    out = os.path.join(OUT, "sweep")
    subprocess.run([sys.executable, COMPARE, PARDYN, "--out", out, "--jobs", "2", "--keep-runs"],
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "results.csv"), newline="") as f:
        res = list(csv.DictReader(f))
    for r in res:
        if r["status"] != "ok":
            raise SystemExit(f"integrators.py: a run of the sweep failed: {r}")
        param = next(p for p in ("dt", "rtol", "dt_eta") if r[p])
        print(f"row {r['integrator']} {param} {float(r[param]):g} evals {r['force_evaluations']} "
              f"max_err {float(r['max_rel_energy_error']):.4g} "
              f"final_err {float(r['final_rel_energy_error']):.4g} "
              f"rejected {r['rejected_steps'] or 0}")
    print(f"sweep_evals {sum(int(r['force_evaluations']) for r in res)}")
    by = {}
    for r in res:
        by.setdefault(r["integrator"], []).append(r)
    # symplectic_euler against leapfrog at the same dt
    lf = {r["dt"]: float(r["max_rel_energy_error"]) for r in by["leapfrog"]}
    for r in by["symplectic_euler"]:
        print(f"symplectic_euler_over_leapfrog dt {r['dt']} "
              f"{float(r['max_rel_energy_error']) / lf[r['dt']]:.3f}")
    # dt_control against plain leapfrog at the same cost (leapfrog's line, log-log)
    pts = [(float(r["force_evaluations"]), float(r["max_rel_energy_error"]))
           for r in by["leapfrog"]]
    for r in by["leapfrog+dt_control"]:
        x = float(r["force_evaluations"])
        print(f"dt_control_gain eta {r['dt_eta']} "
              f"{loglog(pts, x) / float(r['max_rel_energy_error']):.3f}")
    # how fast the error falls with the cost: the local power between neighbouring runs
    for name in ("dopri5", "yoshida4", "ab5"):
        rs = sorted(by[name], key=lambda r: float(r["force_evaluations"]))
        for a, b in zip(rs, rs[1:]):
            ea, eb = float(a["max_rel_energy_error"]), float(b["max_rel_energy_error"])
            xa, xb = float(a["force_evaluations"]), float(b["force_evaluations"])
            print(f"power {name} {int(xa)} {int(xb)} {math.log(ea / eb) / math.log(xb / xa):.3f} "
                  f"factor {ea / eb:.3f}")
    # dopri5's rejected steps: each costs 6 evaluations (FSAL)
    for r in by["dopri5"]:
        print(f"dopri5_rejected_share rtol {float(r['rtol']):g} "
              f"{6 * float(r['rejected_steps']) / float(r['force_evaluations']):.3f}")
    conserved(os.path.join(out, "runs"))
    done = parallel({f"dopri5_{t:g}": dopri5(t) for t in (1e-8, 1e-9, 1e-10)})
    for name, (rows, _) in done.items():
        summary(name, rows)
        last = rows[-1]
        print(f"final_err {name} {abs(float(last['relative_drift'])):.4g}")
        print(f"dopri5_rejected_share rtol {name.split('_')[1]} "
              f"{6 * float(last['rejected_steps']) / float(last['force_evaluations']):.3f}")


def conserved(runs):
    """docs/integrators.md's list: over each run of the sweep at dt = 0.001 (0.002 for rk4 and
    yoshida4; rtol 1e-6 for dopri5), the largest |L - L0| / |L0| of the angular momentum, |P| of the
    momentum and com_drift over the thermo rows (every step):
    `conserved NAME L_rel X p_max Y com_max Z`, then `conserved_max p Y com Z` over them all."""
    picks = {"euler": "dt0.001", "symplectic_euler": "dt0.001", "leapfrog": "dt0.001",
             "yoshida4": "dt0.002", "rk4": "dt0.002", "ab5": "dt0.001", "dopri5": "rtol1e-06"}
    p_all = com_all = 0.0
    for name, run_name in picks.items():
        with open(os.path.join(runs, f"{name}-{run_name}", "thermo.csv"), newline="") as f:
            rows = list(csv.DictReader(f))

        def vec(r, keys):
            return [float(r[k]) for k in keys if k in r]

        L0 = vec(rows[0], ("lx", "ly", "lz"))
        n0 = math.sqrt(sum(x * x for x in L0))
        l_rel = max(math.sqrt(sum((a - b) ** 2 for a, b in zip(vec(r, ("lx", "ly", "lz")), L0)))
                    for r in rows) / n0
        p_max = max(math.sqrt(sum(x * x for x in vec(r, ("px", "py", "pz")))) for r in rows)
        com_max = max(abs(float(r["com_drift"])) for r in rows)
        p_all, com_all = max(p_all, p_max), max(com_all, com_max)
        print(f"conserved {name} L_rel {l_rel:.4g} p_max {p_max:.4g} com_max {com_max:.4g}")
    print(f"conserved_max p {p_all:.4g} com {com_all:.4g}")


def cost():
    t0 = time.monotonic()
    subprocess.run([sys.executable, COMPARE, PARDYN, "--quick", "--out",
                    os.path.join(OUT, "quick")], check=True, stdout=subprocess.DEVNULL)
    print(f"quick_s {time.monotonic() - t0:.1f}", flush=True)
    for k in range(3):
        for name, interval in (("step", 100000), ("observed_step", 1)):
            _, log = run(name, ["integrator.type=leapfrog", "integrator.dt=0.001",
                                f"output.0.interval={interval}"])
            m = re.search(r"timing: (\S+) s in the loop, (\d+) steps", log)
            print(f"{name}_ms {1e3 * float(m.group(1)) / int(m.group(2)):.3f}", flush=True)


if __name__ == "__main__":
    {"steps": steps, "sweep": sweep, "cost": cost}[sys.argv[1]]()
