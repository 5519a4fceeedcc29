#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Temperature and density against distance from the walls, from a run's grid_fields output.

Usage:  python3 examples/real_gas_2d/wall_profile.py out/real_gas_2d_walls [--bands 0,3,6,12,24,36]

Reads <folder>/fields.pvd and the fields/*.vti files it lists (VTK XML ImageData, appended raw
binary: uncompressed, or compressed with lz4, zlib or lzma, as grid_fields writes them), and, when
they are there, <folder>/thermo.csv and the vtk frames (run.pvd, frames/*.vtp). A cell's distance
from the walls is the distance of its centre from the nearest wall face; the cells are pooled into
bands of that distance (by default 0-1, 1-2, 2-4, 4-8, ... cells up to the centre: for the
example's 24 x 24 cells of 3 x 3, the bands 0-3, 3-6, 6-12, 12-24 and 24-36). Printed for every
grid_fields time:
  T  in each band: sum over its cells of dim (n - 1) T_cell / sum of dim (n - 1), the kinetic
     energy relative to each cell's flow per degree of freedom, so that a collective drift (the gas
     falling inwards) does not count as heat; next to it the temperature of thermo.csv (all
     particles, flow included);
  n  in each band: particles / area;
  the fraction of the particles in each band that are in droplets, from the vtk frame at the same
     time (<folder>/run.pvd, with the clusters output's `cluster` labels), when there is one.
Needs python3 only (the standard library: the grids are small).
"""

import argparse
import csv
import lzma
import os
import struct
import sys
import xml.etree.ElementTree as ET
import zlib


def lz4_block(src, size):
    """Decompresses one LZ4 block (the format of VTK's vtkLZ4DataCompressor) of `size` bytes."""
    out = bytearray()
    i, n = 0, len(src)
    while i < n:
        token = src[i]
        i += 1
        lit = token >> 4
        if lit == 15:
            while True:
                b = src[i]
                i += 1
                lit += b
                if b != 255:
                    break
        out += src[i:i + lit]
        i += lit
        if i >= n:  # the last sequence has literals only
            break
        off = src[i] | (src[i + 1] << 8)
        i += 2
        match = token & 15
        if match == 15:
            while True:
                b = src[i]
                i += 1
                match += b
                if b != 255:
                    break
        match += 4
        start = len(out) - off
        if off >= match:
            out += out[start:start + match]
        else:  # overlapping copy: repeats the last `off` bytes
            for k in range(match):
                out.append(out[start + k])
    if len(out) != size:
        raise ValueError("lz4 block: %d bytes instead of %d" % (len(out), size))
    return bytes(out)


def decompress(compressor, data, size):
    if compressor == "vtkLZ4DataCompressor":
        return lz4_block(data, size)
    if compressor == "vtkZLibDataCompressor":
        return zlib.decompress(data)
    if compressor == "vtkLZMADataCompressor":
        return lzma.decompress(data)
    raise ValueError("unknown compressor " + compressor)


def read_vtk(path):
    """The XML head of a VTK XML file with appended raw data (grid_fields' .vti, the vtk observer's
    .vtp) and a function that decodes one of its DataArray elements into a list of values (a list
    of tuples for a vector array)."""
    with open(path, "rb") as f:
        raw = f.read()
    at = raw.find(b"<AppendedData")
    if at < 0:
        raise ValueError(path + ": no appended data (not written by pardyn?)")
    data = raw[raw.index(b"_", at) + 1:]  # offsets count from the byte after '_'
    head = ET.fromstring(raw[:at].decode() + "</VTKFile>")
    if head.get("byte_order") != "LittleEndian":
        raise ValueError(path + ": only little-endian files are read")
    hfmt = "<Q" if head.get("header_type", "UInt32") == "UInt64" else "<I"
    hsize = struct.calcsize(hfmt)
    compressor = head.get("compressor")
    formats = {"Float64": "d", "Float32": "f", "Int64": "q", "Int32": "i"}

    def array(node):
        pos = int(node.get("offset"))

        def word(k):
            return struct.unpack_from(hfmt, data, pos + k * hsize)[0]

        if compressor is None:
            nbytes = word(0)
            payload = data[pos + hsize:pos + hsize + nbytes]
        else:
            # header: number of blocks, block size, size of the last block (0: a full one), then
            # the compressed size of every block.
            nblocks, block, last = word(0), word(1), word(2)
            sizes = [word(3 + k) for k in range(nblocks)]
            p = pos + (3 + nblocks) * hsize
            parts = []
            for k, csize in enumerate(sizes):
                full = last if (k == nblocks - 1 and last) else block
                parts.append(decompress(compressor, data[p:p + csize], full))
                p += csize
            payload = b"".join(parts)
        code = formats[node.get("type")]
        a = list(struct.unpack("<%d%s" % (len(payload) // struct.calcsize(code), code), payload))
        comps = int(node.get("NumberOfComponents", "1"))
        return a if comps == 1 else [tuple(a[k:k + comps]) for k in range(0, len(a), comps)]

    return head, array


def read_fields(path):
    """The cell arrays (name -> list, x varying fastest) and the grid of one grid_fields .vti."""
    head, array = read_vtk(path)
    image = head.find("ImageData")
    ext = [int(v) for v in image.get("WholeExtent").split()]
    grid = {
        "cells": [ext[1] - ext[0], ext[3] - ext[2]],
        "origin": [float(v) for v in image.get("Origin").split()],
        "spacing": [float(v) for v in image.get("Spacing").split()],
    }
    cells = {n.get("Name"): array(n) for n in image.find("Piece").find("CellData")}
    return cells, grid


def read_frame(path):
    """Positions and droplet labels (`cluster`, -1: gas) of one vtk-observer frame (.vtp), or None
    when the frame has no labels (the run had no clusters output)."""
    head, array = read_vtk(path)
    piece = head.find("PolyData").find("Piece")
    labels = [n for n in piece.find("PointData") if n.get("Name") == "cluster"]
    if not labels:
        return None
    return array(piece.find("Points").find("DataArray")), array(labels[0])


def series(folder, pvd):
    """(time, path) of every file in <folder>/<pvd>, in order ([] when there is none)."""
    if not os.path.exists(os.path.join(folder, pvd)):
        return []
    root = ET.parse(os.path.join(folder, pvd)).getroot()
    return [(float(d.get("timestep")), os.path.join(folder, d.get("file")))
            for d in root.iter("DataSet")]


def wall_distance(grid):
    """Distance of every cell centre from the nearest face of the grid (the box), in the cells'
    order (x varying fastest)."""
    (nx, ny), (hx, hy) = grid["cells"], grid["spacing"][:2]
    return [min((i + 0.5) * hx, (nx - i - 0.5) * hx, (j + 0.5) * hy, (ny - j - 0.5) * hy)
            for j in range(ny) for i in range(nx)]


def band_of(d, edges):
    for k in range(len(edges) - 1):
        if edges[k] <= d < edges[k + 1]:
            return k
    return None


def field_bands(cells, dist, edges, dim=2):
    """Pooled temperature, particle count and number of cells in each band of distance."""
    nb = len(edges) - 1
    heat, dof, particles, ncells = [0.0] * nb, [0] * nb, [0] * nb, [0] * nb
    for d, n, T in zip(dist, cells["count"], cells["temperature"]):
        k = band_of(d, edges)
        if k is None:
            continue
        ncells[k] += 1
        particles[k] += n
        if n >= 2:  # T is NaN in cells of fewer than 2
            dof[k] += dim * (n - 1)
            heat[k] += dim * (n - 1) * T
    return [(heat[k] / dof[k] if dof[k] else float("nan"), particles[k], ncells[k])
            for k in range(nb)]


def droplet_bands(frame, lo, hi, edges):
    """Fraction of the particles in each band of distance that are in a droplet (cluster >= 0)."""
    nb = len(edges) - 1
    inside, total = [0] * nb, [0] * nb
    for x, c in zip(*frame):
        d = min(x[0] - lo[0], hi[0] - x[0], x[1] - lo[1], hi[1] - x[1])
        k = band_of(max(d, 0.0), edges)
        if k is None:
            continue
        total[k] += 1
        inside[k] += c >= 0
    return [inside[k] / total[k] if total[k] else float("nan") for k in range(nb)]


def read_thermo(folder):
    path = os.path.join(folder, "thermo.csv")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]


def thermo_summary(rows):
    first, last = rows[0], rows[-1]
    peak = max(rows, key=lambda r: r["temperature"])
    K0 = first["kinetic"]
    dE = last["total"] - first["total"]
    dU = last["potential"] - first["potential"]
    print("thermo.csv: T %.3f at t = %g -> %.3f at t = %g (highest %.3f at t = %g)" % (
        first["temperature"], first["time"], last["temperature"], last["time"],
        peak["temperature"], peak["time"]))
    print("  change of E = K + U: %.1f = %.1f%% of E0 = %.1f, %.1f%% of K0 = %.1f" % (
        dE, 100 * dE / abs(first["total"]), first["total"], 100 * dE / K0, K0))
    print("  change of U: %.1f = %.1f%% of K0" % (dU, 100 * dU / K0))
    print()


def table(title, names, rows, extra=()):
    """rows: (time, [value per band], [extra values])."""
    print(title)
    print("%7s | %s%s" % ("time", " ".join("%7s" % s for s in names),
                          "".join(" | %7s" % e for e in extra)))
    for t, values, more in rows:
        print("%7.4g | %s%s" % (t, " ".join("%7.3f" % v for v in values),
                                "".join(" | %7.3f" % v for v in more)))
    print()


def nearest(rows, t):
    return min(rows, key=lambda r: abs(r["time"] - t)) if rows else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder", help="the run's output folder (holding fields.pvd)")
    ap.add_argument("--bands", default="",
                    help="band edges, distances from the wall, e.g. 0,3,6,12,24,36 (default: 0, "
                         "1, 2, 4, ... grid cells, up to the centre)")
    args = ap.parse_args()

    files = series(args.folder, "fields.pvd")
    if not files:
        sys.exit(args.folder + "/fields.pvd is missing or lists no files (no grid_fields output?)")
    _, grid = read_fields(files[0][1])
    dist = wall_distance(grid)
    half = max(dist) + 0.5 * min(grid["spacing"][:2])
    if args.bands:
        edges = [float(v) for v in args.bands.split(",")]
    else:
        h = min(grid["spacing"][:2])
        edges = [0.0, h]
        while edges[-1] * 2 < half:
            edges.append(edges[-1] * 2)
        edges.append(half)
    edges[-1] = max(edges[-1], half)
    names = ["%g-%g" % (a, b) for a, b in zip(edges[:-1], edges[1:])]
    lo = grid["origin"][:2]
    hi = [lo[d] + grid["cells"][d] * grid["spacing"][d] for d in range(2)]
    cell_area = grid["spacing"][0] * grid["spacing"][1]

    thermo = read_thermo(args.folder)
    if thermo:
        thermo_summary(thermo)
    frames = {round(t, 6): path for t, path in series(args.folder, "run.pvd")}

    temps, dens, drops = [], [], []
    for t, path in files:
        cells, _ = read_fields(path)
        bands = field_bands(cells, dist, edges)
        row = nearest(thermo, t)
        temps.append((t, [b[0] for b in bands], [row["temperature"]] if row else []))
        dens.append((t, [b[1] / (b[2] * cell_area) for b in bands], []))
        frame_path = frames.get(round(t, 6))
        frame = read_frame(frame_path) if frame_path else None
        if frame is not None:
            whole = [row["clustered_fraction"]] if row and "clustered_fraction" in row else []
            drops.append((t, droplet_bands(frame, lo, hi, edges), whole))
    print("Bands of distance from the nearest wall (%d x %d grid cells of %g x %g).\n" % (
        grid["cells"][0], grid["cells"][1], grid["spacing"][0], grid["spacing"][1]))
    table("Temperature in each band (grid_fields, relative to the local flow; all: thermo.csv):",
          names, temps,
          ["all"] if thermo else [])
    table("Number density in each band:", names, dens)
    if drops:
        table("Fraction of the particles in each band that are in droplets (the frames' `cluster`; "
              "all: thermo.csv):", names, drops, ["all"] if drops[0][2] else [])


if __name__ == "__main__":
    main()
