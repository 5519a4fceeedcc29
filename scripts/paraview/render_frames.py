# SPDX-License-Identifier: BSD-3-Clause
"""Renders a frame of a pardyn run (run.pvd) to PNG, coloured by a field, with a colour bar.

Run with ParaView's pvbatch or pvpython, e.g. from the repository root:
    scripts/paraview-run scripts/paraview/render_frames.py OUT/run.pvd frame.png
    scripts/paraview-run scripts/paraview/render_frames.py OUT/run.pvd ke.png kinetic_energy
    scripts/paraview-run scripts/paraview/render_frames.py OUT/run.pvd t2.png --time 2.0 --log
    scripts/paraview-run scripts/paraview/render_frames.py OUT/run.pvd 'img/%04d.png' --all
    scripts/paraview-run scripts/paraview/render_frames.py OUT/fields.pvd rho.png number_density

The field is a point array of the .vtp files (velocity, acceleration, mass, type, id,
kinetic_energy, potential_energy, cluster with the clusters analysis) or a cell array of the
grid_fields files (fields.pvd: number_density, mass_density, velocity, temperature, count);
vectors are coloured by their magnitude unless --component x|y|z is given. 2D runs (all z = 0) are
viewed from +z with a parallel projection; 3D runs obliquely.

The default colours read on dark and light backgrounds alike: the default colour map keeps to
middle lightness (no near-black or near-white end that vanishes into the background), the text of
the colour bar and the axes is dark on a light background and light on a dark one, and the gas of
the `cluster` field (-1) is a middle grey.
"""
import argparse
import os
import sys


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("pvd", help="the run's run.pvd (or a single .vtp)")
    p.add_argument("png", help="output image; with --all a printf pattern such as 'img/%%04d.png'")
    p.add_argument("field", nargs="?", default="velocity",
                   help="point array to colour by (default: velocity, by magnitude)")
    p.add_argument("--field", dest="field_opt", metavar="FIELD", default=None,
                   help="same as the positional field")
    p.add_argument("--component", choices=("magnitude", "x", "y", "z"), default="magnitude",
                   help="vector component to colour by (default: magnitude)")
    p.add_argument("--time", type=float, default=None,
                   help="simulation time to render (default: the last frame); the nearest frame at "
                        "or before it is shown")
    p.add_argument("--all", action="store_true", help="render every frame (png is a pattern)")
    p.add_argument("--size", default="1200x900", help="image size WxH (default: %(default)s)")
    p.add_argument("--point-size", type=float, default=3.0, help="point size in pixels")
    p.add_argument("--log", action="store_true", help="logarithmic colour scale")
    p.add_argument("--range", default=None,
                   help="colour range 'lo,hi' (default: the data's range over the frames rendered)")
    p.add_argument("--colormap", default="pardyn",
                   help="ParaView colour map preset, or 'pardyn' (default): blue, teal, green, "
                        "orange, red, all of middle lightness")
    p.add_argument("--fit", type=float, default=98.0,
                   help="frame the camera on this percentage of the particles nearest their median "
                        "centre, so that a few escapers do not shrink the picture (100: all)")
    p.add_argument("--background", default="0.08,0.08,0.1", help="background colour r,g,b in 0..1")
    return p.parse_args()


# The default colour map: (position, r, g, b), every colour of middle lightness so that the lowest
# and highest values stay visible on a black and on a white background.
PARDYN_COLORS = [(0.0, 0.17, 0.38, 0.85), (0.25, 0.0, 0.62, 0.64), (0.5, 0.32, 0.68, 0.16),
                 (0.75, 0.93, 0.53, 0.05), (1.0, 0.84, 0.12, 0.16)]
GAS_GREY = [0.55, 0.55, 0.55]  # cluster = -1 (not in a droplet)


def text_colour(background):
    """Dark text on a light background, light text on a dark one (relative luminance)."""
    r, g, b = background
    return [0.1, 0.1, 0.1] if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.5 else [0.95, 0.95, 0.95]


def frame_times(reader):
    times = reader.TimestepValues
    if times is None:
        return []
    return list(times) if hasattr(times, "__len__") else [times]


def frame_camera(view, reader, percent, flat):
    """Points the camera at the median particle and fits the sphere holding `percent` of them."""
    import math
    import numpy as np
    from paraview import servermanager
    from vtk.util.numpy_support import vtk_to_numpy

    data = servermanager.Fetch(reader)
    if data is None or data.GetNumberOfPoints() == 0 or not hasattr(data, "GetPoints"):
        return  # a grid (fields.pvd) is framed whole
    x = vtk_to_numpy(data.GetPoints().GetData()).astype(np.float64)
    centre = np.median(x, axis=0)
    radius = float(np.percentile(np.linalg.norm(x - centre, axis=1), percent))
    if not radius > 0:
        return
    radius *= 1.05  # a margin, so that the outermost particles kept are not cut at the border
    direction = np.array(view.CameraPosition) - np.array(view.CameraFocalPoint)
    direction /= np.linalg.norm(direction)
    distance = radius / math.sin(math.radians(view.CameraViewAngle) / 2)
    view.CameraFocalPoint = centre.tolist()
    view.CameraPosition = (centre + direction * distance).tolist()
    view.CameraParallelScale = radius
    if not flat:
        view.CenterOfRotation = centre.tolist()


def main():
    args = parse_args()
    field = args.field_opt or args.field
    if not os.path.isfile(args.pvd):
        print("render_frames: no such file: " + args.pvd, file=sys.stderr)
        return 1
    width, height = (int(v) for v in args.size.lower().split("x"))

    from paraview.simple import (OpenDataFile, GetActiveViewOrCreate, Show, ColorBy,
                                 GetColorTransferFunction, GetScalarBar, Render, SaveScreenshot,
                                 UpdatePipeline, ResetCamera)

    reader = OpenDataFile(os.path.abspath(args.pvd))
    if reader is None:
        print("render_frames: ParaView cannot open " + args.pvd, file=sys.stderr)
        return 1
    times = frame_times(reader)
    if args.all:
        targets = times or [None]
    elif args.time is not None and times:
        before = [t for t in times if t <= args.time + 1e-12 * max(1.0, abs(args.time))]
        targets = [before[-1] if before else times[0]]
    else:
        targets = [times[-1] if times else None]

    if targets[-1] is None:
        UpdatePipeline(proxy=reader)
    else:
        UpdatePipeline(time=targets[-1], proxy=reader)
    # Particles carry point arrays; the grids of grid_fields (fields.pvd) carry cell arrays.
    point_arrays, cell_arrays = reader.PointData.keys(), reader.CellData.keys()
    if field in point_arrays:
        association, arrays = "POINTS", reader.PointData
    elif field in cell_arrays:
        association, arrays = "CELLS", reader.CellData
    else:
        print("render_frames: no array '%s'; the file has point arrays: %s; cell arrays: %s"
              % (field, ", ".join(point_arrays) or "none", ", ".join(cell_arrays) or "none"),
              file=sys.stderr)
        return 1
    ncomp = arrays[field].GetNumberOfComponents()

    view = GetActiveViewOrCreate("RenderView")
    view.ViewSize = [width, height]
    background = [float(c) for c in args.background.split(",")]
    ink = text_colour(background)
    view.Background = background
    # ParaView 5.10+ uses a palette unless told to use the view's own background.
    if hasattr(view, "UseColorPaletteForBackground"):
        view.UseColorPaletteForBackground = 0
    view.OrientationAxesVisibility = 1
    if hasattr(view, "OrientationAxesLabelColor"):
        view.OrientationAxesLabelColor = ink

    display = Show(reader, view)
    if association == "POINTS":
        display.SetRepresentationType("Points")
        display.PointSize = args.point_size
        if hasattr(display, "RenderPointsAsSpheres"):
            display.RenderPointsAsSpheres = 1
    else:
        display.SetRepresentationType("Surface")

    if ncomp > 1 and args.component == "magnitude":
        ColorBy(display, (association, field, "Magnitude"))
        title, range_component = "|%s|" % field, -1
    elif ncomp > 1:
        ColorBy(display, (association, field, args.component.upper()))
        title, range_component = "%s %s" % (field, args.component), "xyz".index(args.component)
    else:
        ColorBy(display, (association, field))
        title, range_component = field, 0
    lut = GetColorTransferFunction(field)
    if args.colormap == "pardyn":
        lut.ColorSpace = "Lab"
        lut.RGBPoints = [v for point in PARDYN_COLORS for v in point]
    else:
        lut.ApplyPreset(args.colormap, True)

    # One colour range for every image (the union over the frames shown), so that an animation
    # rendered with --all does not change its scale from frame to frame.
    if args.range:
        lo, hi = (float(v) for v in args.range.split(","))
    else:
        lo, hi = float("inf"), float("-inf")
        for t in targets:
            if t is not None:
                UpdatePipeline(time=t, proxy=reader)
            a, b = arrays[field].GetRange(range_component)
            if a != a or b != b:  # NaN (a cell's temperature with < 2 particles): no range
                continue
            lo, hi = min(lo, a), max(hi, b)
        if field == "cluster" and lo < 0:
            # The gas (-1) is drawn in grey below the range; the droplets 0, 1, ... get the colours.
            lo = 0.0
            lut.UseBelowRangeColor = 1
            lut.BelowRangeColor = GAS_GREY
    if args.log:
        lo = max(lo, hi * 1e-6) if hi > 0 else 1e-12
    if hi <= lo:
        hi = lo + 1
    lut.RescaleTransferFunction(lo, hi)
    if args.log:
        # As ParaView's "log scale" checkbox does: the preset's control points are spread over the
        # range linearly and must be moved to log spacing, or the colours bunch up at one end.
        lut.MapControlPointsToLogSpace()
        lut.UseLogScale = 1
    lut.AutomaticRescaleRangeMode = "Never"

    bar = GetScalarBar(lut, view)
    bar.Title = title
    bar.ComponentTitle = ""
    bar.TitleColor = ink
    bar.LabelColor = ink
    bar.RangeLabelFormat = "%-#.4g"
    bar.Visibility = 1
    display.SetScalarBarVisibility(view, True)

    # 2D runs write z = 0: look straight down the z axis without perspective.
    bounds = reader.GetDataInformation().GetBounds()
    flat = abs(bounds[5] - bounds[4]) <= 1e-12 * max(1.0, abs(bounds[1] - bounds[0]))
    if flat:
        view.InteractionMode = "2D"
        view.CameraPosition = [0, 0, 1]
        view.CameraFocalPoint = [0, 0, 0]
        view.CameraViewUp = [0, 1, 0]
        view.CameraParallelProjection = 1
    else:
        view.CameraPosition = [1, -1.4, 0.9]
        view.CameraFocalPoint = [0, 0, 0]
        view.CameraViewUp = [0, 0, 1]

    for i, t in enumerate(targets):
        if t is not None:
            view.ViewTime = t
            UpdatePipeline(time=t, proxy=reader)
        ResetCamera(view)
        if args.fit < 100:
            frame_camera(view, reader, args.fit, flat)
        Render(view)
        out = args.png % i if args.all else args.png
        folder = os.path.dirname(os.path.abspath(out))
        os.makedirs(folder, exist_ok=True)
        SaveScreenshot(out, view, ImageResolution=[width, height])
        when = "-" if t is None else "%g" % t
        print("render_frames: wrote %s (time %s, colour: %s)" % (out, when, title))
    return 0


if __name__ == "__main__":
    # sys.exit() after rendering makes pvbatch tear down its X/GL context in an order that Xlib
    # reports as GLXBadContext and exit code 1; leaving normally on success avoids it.
    code = main()
    if code:
        sys.exit(code)
