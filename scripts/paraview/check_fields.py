# SPDX-License-Identifier: BSD-3-Clause
"""Checks that a pardyn fields.pvd (grid_fields observer) opens in ParaView as image data.

Run with ParaView's pvbatch or pvpython, e.g. from the repository root:
    scripts/paraview-run scripts/paraview/check_fields.py OUT/fields.pvd --cells 8,8 --timesteps 3

Exits 0 when every check passes, 1 (with one line per failure on stderr) otherwise.
"""
import argparse
import math
import os
import sys

ARRAYS = {"number_density": 1, "mass_density": 1, "temperature": 1, "velocity": 3, "count": 1}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("pvd", help="the run's fields.pvd")
    p.add_argument("--cells", required=True, help="cells per axis, e.g. 8,8 or 4,4,4")
    p.add_argument("--timesteps", type=int, default=None, help="exact number of files expected")
    p.add_argument("--particles", type=int, default=None,
                   help="total particle count: sum(number_density) * cell volume must equal it")
    args = p.parse_args()
    failures = []

    def fail(msg):
        failures.append(msg)
        print("check_fields: " + msg, file=sys.stderr)

    if not os.path.isfile(args.pvd):
        fail("no such file: " + args.pvd)
        return 1
    from paraview import servermanager
    from paraview.simple import PVDReader, UpdatePipeline
    from vtk.numpy_interface import dataset_adapter as dsa

    cells = [int(c) for c in args.cells.split(",")]
    reader = PVDReader(FileName=os.path.abspath(args.pvd))
    times = reader.TimestepValues
    times = list(times) if isinstance(times, (list, tuple)) or hasattr(times, "__len__") else [times]
    if args.timesteps is not None and len(times) != args.timesteps:
        fail("%d time steps, expected %d" % (len(times), args.timesteps))
    for t in times:
        UpdatePipeline(time=t, proxy=reader)
        data = servermanager.Fetch(reader)
        if data.GetClassName() != "vtkImageData":
            fail("t = %g: %s, expected vtkImageData" % (t, data.GetClassName()))
            continue
        n = 1
        for c in cells:
            n *= c
        if data.GetNumberOfCells() != n:
            fail("t = %g: %d cells, expected %d" % (t, data.GetNumberOfCells(), n))
        img = dsa.WrapDataObject(data)
        for name, comps in ARRAYS.items():
            a = data.GetCellData().GetArray(name)
            if a is None:
                fail("t = %g: no cell array %s" % (t, name))
                continue
            if a.GetNumberOfComponents() != comps:
                fail("t = %g: %s has %d components, expected %d"
                     % (t, name, a.GetNumberOfComponents(), comps))
        if args.particles is not None:
            sp = data.GetSpacing()
            vol = 1.0
            for d in range(len(cells)):
                vol *= sp[d]
            total = float(img.CellData["number_density"].sum()) * vol
            if not math.isclose(total, args.particles, rel_tol=1e-9):
                fail("t = %g: the cells hold %g particles, expected %d" % (t, total, args.particles))
    if not failures:
        print("check_fields: %s: %d time steps, %s cells, all arrays present"
              % (args.pvd, len(times), "x".join(str(c) for c in cells)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
