# SPDX-License-Identifier: BSD-3-Clause
"""Renders the condensation of examples/real_gas_2d as one picture: four frames side by side, each
particle coloured by its droplet (the `cluster` field of the clusters analysis; gas in grey).

Run with ParaView's pvbatch or pvpython (here through scripts/paraview-run), from the repository root:
    scripts/paraview-run examples/real_gas_2d/render.py out/real_gas_2d/run.pvd condensation.png
    scripts/paraview-run examples/real_gas_2d/render.py RUN.pvd out.png --times 0,10,20,40 --size 600
    scripts/paraview-run examples/real_gas_2d/render.py RUN.pvd dark.png --background 0.08,0.08,0.1

The defaults make the README's picture (t = 0, 6, 12, 30 on white). The colours read on a light
and on a dark background: the gas and the droplets beyond the palette are middle greys, and the
time labels are dark on a light background and light on a dark one.
"""
import argparse
import os


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("pvd", help="the run's run.pvd")
    p.add_argument("png", help="output image")
    p.add_argument("--times", default="0,6,12,30",
                   help="comma-separated simulation times of the panels (default: %(default)s, the "
                        "README's picture; 'even': four frames evenly spread from the first to the "
                        "last); the nearest frame at or before each is shown")
    p.add_argument("--size", type=int, default=500, help="edge of each square panel in pixels")
    p.add_argument("--point-size", type=float, default=2.0)
    p.add_argument("--clusters", type=int, default=12,
                   help="colours for the largest clusters; smaller ones share the last colour")
    p.add_argument("--background", default="1,1,1", help="background colour r,g,b in 0..1")
    return p.parse_args()


def main():
    args = parse_args()
    from paraview import simple as pv
    import vtk

    reader = pv.OpenDataFile(args.pvd)
    times = list(reader.TimestepValues) if reader.TimestepValues else [0.0]
    background = [float(c) for c in args.background.split(",")]
    r, g, b = background
    ink = [0.1, 0.1, 0.1] if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.5 else [0.95, 0.95, 0.95]
    if args.times != "even":
        wanted = [float(t) for t in args.times.split(",")]
    else:
        wanted = [times[int(round(i * (len(times) - 1) / 3.0))] for i in range(4)]
    panels = []
    for t in wanted:
        shown = max([x for x in times if x <= t + 1e-9] or [times[0]])
        view = pv.CreateRenderView()
        view.ViewSize = [args.size, args.size]
        try:
            view.UseColorPaletteForBackground = 0  # ParaView >= 5.10: else the palette wins
        except AttributeError:
            pass
        view.Background = background
        view.OrientationAxesVisibility = 0
        view.CameraParallelProjection = 1
        view.ViewTime = shown
        disp = pv.Show(reader, view)
        disp.SetRepresentationType("Points")
        disp.PointSize = args.point_size
        arrays = reader.PointData.keys()
        if "cluster" in arrays:
            pv.ColorBy(disp, ("POINTS", "cluster"))
            lut = pv.GetColorTransferFunction("cluster")
            lut.ApplyPreset("Rainbow Uniform", True)
            lut.RescaleTransferFunction(0.0, float(args.clusters - 1))
            lut.UseBelowRangeColor = 1
            lut.BelowRangeColor = [0.62, 0.62, 0.62]  # the gas (cluster = -1): visible on black and white
            lut.UseAboveRangeColor = 1
            lut.AboveRangeColor = [0.45, 0.45, 0.62]  # small droplets beyond the palette
            lut.AutomaticRescaleRangeMode = "Never"
        else:
            pv.ColorBy(disp, ("POINTS", "kinetic_energy"))
        text = pv.Text(Text="t = %g" % shown)
        td = pv.Show(text, view)
        td.Color = ink
        td.FontSize = 14
        td.WindowLocation = "Upper Left Corner"
        view.ResetCamera()
        pv.Render(view)
        path = "%s.panel%d.png" % (args.png, len(panels))
        pv.SaveScreenshot(path, view, ImageResolution=[args.size, args.size])
        panels.append(path)
        pv.Delete(view)
    # One image from the panels, left to right.
    append = vtk.vtkImageAppend()
    append.SetAppendAxis(0)
    readers = []
    for path in panels:
        r = vtk.vtkPNGReader()
        r.SetFileName(path)
        r.Update()
        readers.append(r)
        append.AddInputConnection(r.GetOutputPort())
    append.Update()
    writer = vtk.vtkPNGWriter()
    writer.SetFileName(args.png)
    writer.SetInputConnection(append.GetOutputPort())
    writer.Write()
    for path in panels:
        os.remove(path)
    print("wrote %s (%d panels at t = %s)" % (args.png, len(panels), ", ".join("%g" % t for t in wanted)))
    if max(wanted) > times[-1] + 1e-9:
        print("note: the run ends at t = %g; later panels show its last frame" % times[-1])


if __name__ == "__main__":
    main()
