# SPDX-License-Identifier: BSD-3-Clause
"""Checks that a pardyn run.pvd opens in ParaView with the expected arrays and time steps.

Run with ParaView's pvbatch or pvpython, e.g. from the repository root:
    scripts/paraview-run scripts/paraview/check_output.py OUT/run.pvd --timesteps 11 --dim 2

Exits 0 when every check passes, 1 (with one line per failure on stderr) otherwise, so tests can
use it to prove that what pardyn wrote is what ParaView reads.
"""
import argparse
import math
import os
import sys

DEFAULT_ARRAYS = ["velocity", "acceleration", "mass", "type", "id", "kinetic_energy",
                  "potential_energy"]
VECTORS = {"velocity", "acceleration"}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("pvd", help="the run's run.pvd")
    p.add_argument("--arrays", default=",".join(DEFAULT_ARRAYS),
                   help="comma-separated point arrays every frame must have (default: %(default)s)")
    p.add_argument("--timesteps", type=int, default=None,
                   help="exact number of frames expected (default: at least one)")
    p.add_argument("--points", type=int, default=None,
                   help="exact number of particles expected in every frame checked")
    p.add_argument("--dim", type=int, choices=(2, 3), default=None,
                   help="2: also check that every point has z = 0")
    p.add_argument("--last-only", action="store_true",
                   help="load only the last frame (default: every frame, slow for huge runs)")
    return p.parse_args()


def main():
    args = parse_args()
    failures = []

    def fail(msg):
        failures.append(msg)
        print("check_output: " + msg, file=sys.stderr)

    if not os.path.isfile(args.pvd):
        fail("no such file: " + args.pvd)
        return 1

    # Imported here so that --help works without ParaView.
    from paraview import servermanager
    from paraview.simple import PVDReader, UpdatePipeline

    reader = PVDReader(FileName=os.path.abspath(args.pvd))
    times = list(reader.TimestepValues) if reader.TimestepValues is not None else []
    # A collection with a single frame reports a scalar, not a list.
    if not isinstance(times, list):
        times = [times]
    if args.timesteps is not None and len(times) != args.timesteps:
        fail("%d time steps, expected %d" % (len(times), args.timesteps))
    if not times:
        fail("no time steps in " + args.pvd)
        return 1
    if any(b <= a for a, b in zip(times, times[1:])):
        fail("time steps are not increasing: %s" % times)

    wanted = [a for a in args.arrays.split(",") if a]
    check_times = times[-1:] if args.last_only else times
    for t in check_times:
        UpdatePipeline(time=t, proxy=reader)
        data = servermanager.Fetch(reader)
        n = data.GetNumberOfPoints()
        where = "frame at time %g" % t
        if n == 0:
            fail(where + ": no points")
            continue
        if args.points is not None and n != args.points:
            fail(where + ": %d points, expected %d" % (n, args.points))
        if data.GetNumberOfVerts() != n:
            fail(where + ": %d vertex cells for %d points" % (data.GetNumberOfVerts(), n))
        pd = data.GetPointData()
        for name in wanted:
            arr = pd.GetArray(name)
            if arr is None:
                fail(where + ": no point array '%s'" % name)
                continue
            if arr.GetNumberOfTuples() != n:
                fail(where + ": '%s' has %d values for %d points"
                     % (name, arr.GetNumberOfTuples(), n))
            comps = 3 if name in VECTORS else 1
            if arr.GetNumberOfComponents() != comps:
                fail(where + ": '%s' has %d components, expected %d"
                     % (name, arr.GetNumberOfComponents(), comps))
            for c in range(arr.GetNumberOfComponents()):
                lo, hi = arr.GetRange(c)
                if not (math.isfinite(lo) and math.isfinite(hi)):
                    fail(where + ": '%s' holds NaN or Inf" % name)
                    break
        if args.dim == 2:
            zlo, zhi = data.GetPoints().GetData().GetRange(2)
            if zlo != 0 or zhi != 0:
                fail(where + ": z is not 0 in a 2D run (range %g..%g)" % (zlo, zhi))

    if failures:
        return 1
    print("check_output: %s OK: %d time steps (%g .. %g), arrays %s"
          % (args.pvd, len(times), times[0], times[-1], ", ".join(wanted)))
    return 0


if __name__ == "__main__":
    # sys.exit() after rendering makes pvbatch tear down its X/GL context in an order that Xlib
    # reports as GLXBadContext and exit code 1; leaving normally on success avoids it.
    code = main()
    if code:
        sys.exit(code)
