#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Compares pardyn's integrators on a small two-galaxy collision (as the Habr article
"The N-body problem, or how to blow up a galaxy without leaving the kitchen" did; docs/sources.md).

For every integrator and a range of steps dt (tolerances rtol for dopri5, accuracy factors dt_eta
for leapfrog under the framework's dt_control = "acceleration") it runs

    pardyn run galaxies.toml --set integrator.type=... --set integrator.dt=... -q -o RUN

reads the run's thermo.csv (columns by name) and records the largest and the final |relative
energy drift| and the number of force evaluations, the cost axis of that article. It writes
OUT/results.csv and, with gnuplot, OUT/comparison.png (from the self-contained OUT/comparison.gp):
the largest energy error against force evaluations, log-log, one line per integrator.

    python3 examples/integrators/compare.py [PARDYN] [--out DIR] [--quick] [--check]

PARDYN defaults to build/bin/pardyn, OUT to out/integrators. --quick runs a smaller sweep up to
t = 1 (before the close passage); --check runs the quick sweep without a plot and exits with
status 1 if a run fails or if, for some method, the energy error does not fall as dt (rtol,
dt_eta) falls, or falls far more slowly than the method's order says. Python 3 standard library
only; the plot needs gnuplot (Debian: gnuplot-nox).
"""

import argparse
import concurrent.futures
import csv
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "galaxies.toml")


class Method:
    """One line of the comparison: an integrator, the parameter swept and its values."""

    def __init__(self, label, integrator, param, full, quick, evals_per_step, min_order,
                 title, sets=()):
        self.label = label            # name in results.csv and the plot
        self.integrator = integrator  # [integrator] type
        self.param = param            # "dt", "rtol" or "dt_eta"
        self.full = full              # values of the default sweep, coarse to fine
        self.quick = quick            # values of --quick / --check, coarse to fine
        self.evals_per_step = evals_per_step  # to start the longest runs first
        # --check: the error must fall at least as fast as param^min_order over the quick sweep.
        # Well below each method's order (a p-th order method's error falls as dt^p, dopri5's
        # about as rtol): only a method that does not converge fails it.
        self.min_order = min_order
        self.title = title            # gnuplot key
        self.sets = list(sets)        # further --set values


def methods(eps):
    """The sweeps. Each halving of dt doubles the cost; the 4-evaluation rk4 and 3-evaluation
    yoshida4 start at twice the step so that every line covers about the same range of cost. The
    default sweep is about 205,000 force evaluations: 2-3 minutes on 2 CPU cores."""
    acc = ["integrator.dt_control=acceleration", "integrator.dt=0.01",
           f"integrator.dt_length={eps!r}"]
    return [
        Method("euler", "euler", "dt", [0.004, 0.002, 0.001], [0.004, 0.002, 0.001],
               1, 0.4, "euler (1st order)"),
        Method("symplectic_euler", "symplectic_euler", "dt", [0.004, 0.002, 0.001],
               [0.004, 0.002, 0.001], 1, 0.5, "symplectic\\_euler (1st, symplectic)"),
        Method("leapfrog", "leapfrog", "dt", [0.004, 0.002, 0.001, 0.0005],
               [0.004, 0.002, 0.001], 1, 1.0, "leapfrog (2nd, symplectic)"),
        Method("rk4", "rk4", "dt", [0.008, 0.004, 0.002, 0.001], [0.008, 0.004, 0.002],
               4, 2.0, "rk4 (4th)"),
        Method("yoshida4", "yoshida4", "dt", [0.008, 0.004, 0.002, 0.001, 0.0005],
               [0.008, 0.004, 0.002], 3, 2.0, "yoshida4 (4th, symplectic)"),
        Method("ab5", "ab5", "dt", [0.004, 0.002, 0.001, 0.0005, 0.00025],
               [0.004, 0.002, 0.001], 1, 2.0, "ab5 (5th, multistep)"),
        Method("dopri5", "dopri5", "rtol", [1e-4, 1e-5, 1e-6, 1e-7], [1e-5, 1e-7, 1e-9],
               6, 0.5, "dopri5 (5(4), adaptive)"),
        Method("leapfrog+dt_control", "leapfrog", "dt_eta", [0.2, 0.1, 0.05], [0.2, 0.1, 0.05],
               1, 1.0, "leapfrog, dt\\_control = acceleration", acc),
    ]


QUICK_END_TIME = 1.0
COLUMNS = ["integrator", "dt", "rtol", "dt_eta", "force_evaluations", "steps", "rejected_steps",
           "max_rel_energy_error", "final_rel_energy_error", "status"]
STYLES = {"euler": ("#888888", 7), "symplectic_euler": ("#17becf", 5),
          "leapfrog": ("#1f77b4", 9), "rk4": ("#ff7f0e", 11), "yoshida4": ("#2ca02c", 13),
          "ab5": ("#9467bd", 15), "dopri5": ("#d62728", 7),
          "leapfrog+dt_control": ("#1f77b4", 8)}


def read_scenario(path):
    """(end_time, gravity eps) of the scenario; tomllib is in the standard library from 3.11."""
    try:
        import tomllib
    except ImportError:
        return 4.0, 0.02
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    end_time = float(doc.get("simulation", {}).get("end_time", 0.0))
    eps = next((float(p.get("eps", 0.0)) for p in doc.get("potential", [])
                if p.get("type") == "gravity"), 0.0)
    return end_time, eps if eps > 0 else 0.02


def read_thermo(path):
    """thermo.csv as a list of dicts, columns by name."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def summarise(rows, end_time):
    """The numbers of one run from its thermo rows; raises ValueError on a bad run."""
    if not rows:
        raise ValueError("thermo.csv has no rows")
    for col in ("time", "relative_drift", "force_evaluations"):
        if col not in rows[0]:
            raise ValueError(f"thermo.csv has no column '{col}'")
    drifts = [float(r["relative_drift"]) for r in rows]
    if not all(math.isfinite(d) for d in drifts):
        raise ValueError("non-finite energy in thermo.csv")
    last = rows[-1]
    t_end = float(last["time"])
    if end_time > 0 and t_end < end_time * (1 - 1e-6):
        raise ValueError(f"the run stopped at t = {t_end:g}, before end_time = {end_time:g}")
    rejected = last.get("rejected_steps", "")
    return {
        "force_evaluations": int(float(last["force_evaluations"])),
        "steps": int(float(last["step"])) if "step" in last else "",
        "rejected_steps": int(float(rejected)) if rejected not in ("", None) else "",
        "max_rel_energy_error": max(abs(d) for d in drifts),
        "final_rel_energy_error": abs(drifts[-1]),
    }


def run_one(pardyn, scenario, label, integrator, param, value, sets, end_time, run_dir):
    """Runs one (integrator, parameter value) and returns its row of results."""
    sets = [f"integrator.type={integrator}", "simulation.threads=1"] + sets
    if param == "rtol":
        # The error norm is |error| / (atol + rtol |y|): with positions and velocities of order 1,
        # atol = rtol holds small and large components to the same tolerance.
        sets += [f"integrator.rtol={value!r}", f"integrator.atol={value!r}"]
    else:
        sets.append(f"integrator.{param}={value!r}")
    cmd = [pardyn, "run", scenario, "-q", "-o", run_dir]
    for s in sets:
        cmd += ["--set", s]
    row = {"integrator": label, "param": param, "dt": "", "rtol": "", "dt_eta": ""}
    row[param] = value
    start = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    row["wall_s"] = time.monotonic() - start
    if proc.returncode != 0:
        lines = [l for l in proc.stdout.strip().splitlines() if l.strip()]
        row["status"] = f"failed (exit {proc.returncode}): " + (lines[-1] if lines else "")
        return row
    try:
        row.update(summarise(read_thermo(os.path.join(run_dir, "thermo.csv")), end_time))
        row["status"] = "ok"
    except (OSError, ValueError, KeyError) as e:
        row["status"] = f"failed: {e}"
    return row


def describe(r):
    return f'{r["integrator"]} {r["param"]}={r[r["param"]]:g}'


def write_results(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        for r in rows:
            r = dict(r)
            for k in ("max_rel_energy_error", "final_rel_energy_error"):
                if isinstance(r.get(k), float):
                    r[k] = f"{r[k]:.6e}"
            w.writerow(r)


def read_results(path):
    """results.csv back into rows (for --replot)."""
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            for k in ("dt", "rtol", "dt_eta", "max_rel_energy_error", "final_rel_energy_error"):
                r[k] = float(r[k]) if r.get(k) else ""
            for k in ("force_evaluations", "steps", "rejected_steps"):
                r[k] = int(r[k]) if r.get(k) else ""
            r["param"] = next((k for k in ("dt", "rtol", "dt_eta") if r[k] != ""), "dt")
            rows.append(r)
    return rows


def ok_rows(rows, label):
    return [r for r in rows if r["integrator"] == label and r["status"] == "ok"]


def write_plot(gp_path, png_path, rows, sweep, title):
    """A self-contained gnuplot script (the data in datablocks) for the log-log plot."""
    out = ["# SPDX-License-Identifier: BSD-3-Clause",
           "# Written by compare.py: the largest relative energy error against force evaluations.",
           f"# Run `gnuplot {os.path.basename(gp_path)}` in this folder to redraw "
           f"{os.path.basename(png_path)}.", ""]
    plots = []
    for i, m in enumerate(sweep):
        pts = [r for r in ok_rows(rows, m.label) if r["max_rel_energy_error"] > 0]
        if not pts:
            continue
        block = f"$m{i}"
        out.append(f"{block} << EOD")
        out.append(f"# {m.label}: force_evaluations max_rel_energy_error {m.param}")
        for r in sorted(pts, key=lambda r: r["force_evaluations"]):
            out.append(f'{r["force_evaluations"]} {r["max_rel_energy_error"]:.6e} {r[m.param]!r}')
        out.append("EOD")
        colour, pt = STYLES.get(m.label, ("#000000", 1))
        dash = " dt 2" if m.param == "dt_eta" else ""
        key = m.title
        if m.param != "dt":  # name the range of a tolerance or accuracy factor in the key
            hi, lo = max(r[m.param] for r in pts), min(r[m.param] for r in pts)
            name = m.param.replace("_", "\\_")
            if m.param == "rtol":
                key += f"; {name} 10^{{{math.log10(hi):.0f}}}...10^{{{math.log10(lo):.0f}}}"
            else:
                key += f"; {name} {hi:g}...{lo:g}"
        plots.append(f"{block} using 1:2 with linespoints lc rgb '{colour}' pt {pt} ps 1.4 "
                     f"lw 2{dash} title '{key}'")
    if not plots:
        return False
    out += [
        "",
        "set terminal pngcairo size 1100,750 enhanced font 'Sans,11'",
        f"set output '{os.path.basename(png_path)}'",
        f"set title \"{title}\"",
        "set logscale xy",
        "set format x '%g'",
        "set xtics (100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000)",
        "set format y '10^{%L}'",
        "set xlabel 'force evaluations (cost)'",
        "set ylabel 'largest relative energy error  max_t |E(t) - E_0| / |E_0|'",
        "set grid xtics ytics mxtics mytics lc rgb '#cccccc' lw 1, lc rgb '#eeeeee' lw 1",
        "set autoscale xfix",
        "set offsets graph 0.04, graph 0.04, 0, 0",
        "set key bottom left box opaque spacing 1.2",
        "plot " + ", \\\n     ".join(plots),
    ]
    with open(gp_path, "w") as f:
        f.write("\n".join(out) + "\n")
    return True


def plot(out_dir, rows, sweep, end_time, eps):
    """Writes OUT/comparison.gp and runs gnuplot on it; returns an exit status."""
    gp = os.path.join(out_dir, "comparison.gp")
    png = os.path.join(out_dir, "comparison.png")
    title = (f"Two-galaxy collision, N = 512, eps = {eps:g}, 0 ≤ t ≤ {end_time:g}: "
             "energy error against cost")
    if not write_plot(gp, png, rows, sweep, title):
        print("compare.py: no successful run to plot")
        return 1
    if shutil.which("gnuplot") is None:
        print(f"compare.py: gnuplot not found (Debian: gnuplot-nox); wrote {gp} only")
        return 1
    proc = subprocess.run(["gnuplot", os.path.basename(gp)],
                          cwd=os.path.dirname(os.path.abspath(gp)),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        print(f"compare.py: gnuplot failed:\n{proc.stdout}")
        return 1
    print(f"compare.py: wrote {png}")
    return 0


def check(rows, sweep, alias_row):
    """The behaviour checks of --check; returns a list of failure messages."""
    failures = [f'{describe(r)}: {r["status"]}' for r in rows + [alias_row] if r["status"] != "ok"]
    for m in sweep:
        pts = {r[m.param]: r for r in ok_rows(rows, m.label)}
        if len(pts) != len(m.quick):
            continue  # a failed run, reported above
        errs = [pts[v]["max_rel_energy_error"] for v in m.quick]  # coarse to fine
        for (v0, e0), (v1, e1) in zip(zip(m.quick, errs), zip(m.quick[1:], errs[1:])):
            if not e1 < e0:
                failures.append(f"{m.label}: the energy error does not fall as {m.param} falls: "
                                f"{e0:.3e} at {m.param} = {v0:g}, {e1:.3e} at {m.param} = {v1:g}")
        if errs[0] > 0 and errs[-1] > 0:
            q = math.log(errs[0] / errs[-1]) / math.log(m.quick[0] / m.quick[-1])
            if q < m.min_order:
                failures.append(f"{m.label}: the energy error falls as {m.param}^{q:.2f}, "
                                f"expected at least {m.param}^{m.min_order:g}")
    # velocity_verlet is an alias of leapfrog: the same run to the last digit
    lf = [r for r in ok_rows(rows, "leapfrog") if r["dt"] == alias_row["dt"]]
    if alias_row["status"] == "ok" and lf:
        a, b = alias_row["max_rel_energy_error"], lf[0]["max_rel_energy_error"]
        if a != b or alias_row["force_evaluations"] != lf[0]["force_evaluations"]:
            failures.append(f"velocity_verlet differs from leapfrog at dt = {alias_row['dt']:g}: "
                            f"max error {a:.6e} against {b:.6e}")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pardyn", nargs="?", default="build/bin/pardyn",
                    help="the pardyn executable (default: build/bin/pardyn)")
    ap.add_argument("--out", default="out/integrators",
                    help="folder for results.csv, comparison.gp and comparison.png "
                         "(default: out/integrators)")
    ap.add_argument("--scenario", default=SCENARIO, help="scenario (default: galaxies.toml here)")
    ap.add_argument("--quick", action="store_true",
                    help=f"smaller sweep, up to t = {QUICK_END_TIME:g}")
    ap.add_argument("--check", action="store_true",
                    help="run the quick sweep, no plot; exit 1 if a run fails or an error does "
                         "not fall as dt (rtol, dt_eta) falls")
    ap.add_argument("--integrators", default="",
                    help="comma-separated subset of the lines (default: all)")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                    help="runs at the same time, one thread each (default: the CPU count)")
    ap.add_argument("--keep-runs", action="store_true",
                    help="keep every run's output folder under OUT/runs")
    ap.add_argument("--no-plot", action="store_true", help="skip the gnuplot plot")
    ap.add_argument("--replot", action="store_true",
                    help="run nothing: redraw the plot from OUT/results.csv")
    args = ap.parse_args()
    end_time, eps = read_scenario(args.scenario)
    if args.replot:
        rows = read_results(os.path.join(args.out, "results.csv"))
        return plot(args.out, rows, methods(eps), end_time, eps)

    pardyn = os.path.abspath(args.pardyn)
    if not (os.path.isfile(pardyn) and os.access(pardyn, os.X_OK)):
        sys.exit(f"compare.py: no pardyn executable at {args.pardyn} (build it, or pass its path)")
    quick = args.quick or args.check
    sweep = methods(eps)
    if args.integrators:
        names = [n.strip() for n in args.integrators.split(",") if n.strip()]
        unknown = [n for n in names if n not in [m.label for m in sweep]]
        if unknown:
            sys.exit(f"compare.py: unknown integrator(s) {', '.join(unknown)}; "
                     f"known: {', '.join(m.label for m in sweep)}")
        sweep = [m for m in sweep if m.label in names]
    extra = [f"simulation.end_time={QUICK_END_TIME!r}"] if quick else []
    if quick:
        end_time = QUICK_END_TIME

    os.makedirs(args.out, exist_ok=True)
    runs_root = (os.path.join(args.out, "runs") if args.keep_runs
                 else tempfile.mkdtemp(prefix="pardyn-compare-"))
    os.makedirs(runs_root, exist_ok=True)

    tasks = []  # (estimated cost, label, integrator, param, value, sets)
    for m in sweep:
        for v in (m.quick if quick else m.full):
            if m.param == "dt":
                cost = end_time / v * m.evals_per_step
            elif m.param == "rtol":
                cost = 1e3 * v ** -0.2  # dopri5's evaluations grow about as rtol^(-1/5)
            else:
                cost = 100 * end_time / v  # the acceleration criterion: ~400 / dt_eta up to t = 4
            tasks.append((cost, m.label, m.integrator, m.param, v, m.sets + extra))
    alias = None
    if args.check:
        lf = next((m for m in sweep if m.label == "leapfrog"), None)
        if lf:
            alias = (0.0, "velocity_verlet", "velocity_verlet", "dt", lf.quick[0], extra)
            tasks.append(alias)
    tasks.sort(key=lambda t: -t[0])  # longest first, so that the runs end together

    print(f"compare.py: {len(tasks)} runs of {os.path.relpath(args.scenario)} up to t = "
          f"{end_time:g}, {args.jobs} at a time", flush=True)
    start = time.monotonic()
    rows = []
    try:
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            futures = []
            for _, label, integrator, param, v, sets in tasks:
                run_dir = os.path.join(runs_root, f"{label}-{param}{v:g}")
                futures.append(pool.submit(run_one, pardyn, args.scenario, label, integrator,
                                           param, v, sets, end_time, run_dir))
            for fut in concurrent.futures.as_completed(futures):
                r = fut.result()
                rows.append(r)
                if r["status"] == "ok":
                    rej = f'  rejected {r["rejected_steps"]}' if r["rejected_steps"] else ""
                    print(f'  {describe(r):32s} evals {r["force_evaluations"]:>7d}  '
                          f'max err {r["max_rel_energy_error"]:.3e}  '
                          f'final {r["final_rel_energy_error"]:.3e}{rej}  ({r["wall_s"]:.1f} s)',
                          flush=True)
                else:
                    print(f'  {describe(r):32s} {r["status"]}', flush=True)
    finally:
        if not args.keep_runs:
            shutil.rmtree(runs_root, ignore_errors=True)

    alias_row = next((r for r in rows if r["integrator"] == "velocity_verlet"), None)
    rows = [r for r in rows if r["integrator"] != "velocity_verlet"]
    order = {m.label: i for i, m in enumerate(sweep)}
    rows.sort(key=lambda r: (order[r["integrator"]], -r[r["param"]]))
    results = os.path.join(args.out, "results.csv")
    write_results(results, rows)
    print(f"compare.py: {len(rows) + (alias_row is not None)} runs in "
          f"{time.monotonic() - start:.0f} s; wrote {results}")

    if not args.check and not args.no_plot and plot(args.out, rows, sweep, end_time, eps) != 0:
        return 1

    if args.check:
        failures = check(rows, sweep, alias_row or {"status": "ok", "dt": None})
        for msg in failures:
            print("FAIL: " + msg)
        if failures:
            return 1
        print("compare.py --check: every run succeeded and every energy error falls as dt "
              "(rtol, dt_eta) falls: passed")
        return 0
    return 1 if any(r["status"] != "ok" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
