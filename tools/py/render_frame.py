#!/usr/bin/env python3
"""Render one recorded frame of a talus dataset to a PNG.

Usage:
    python3 tools/py/render_frame.py OUT PNG [--step N] [--size WxH]
                                     [--elev DEG] [--azim DEG]

Balls are drawn as discs of their true radius, coloured by speed, and
blocks as their faces, coloured the same way, both read from the Parquet
tables (bodies/, shape_vertices/, shape_faces/). The view is an
orthographic projection (a sphere's outline is a circle of its own radius)
from the direction given by the elevation and azimuth, as in matplotlib's
3-D axes. Everything is drawn far to near (painter's order), so a nearer
ball covers a farther one.

Walls: the Parquet walls table holds each wall's motion and load, not its
facets, so the facets come from the VTK wall files of the same run
(OUT/vtk/walls-STEP.vtp, written when the config sets [output] vtk = N):
the file of the frame's step, or else of the latest step before it (the
script says so). A run without VTK files is drawn without walls, with a
note. They are drawn as translucent grey facets.

--step picks the recorded step of the bodies table (default: the last).
The PNG is exactly WxH pixels (default 800x600).

Needs polars, numpy and matplotlib; the VTK files are read with the
standard library (they are VTK XML PolyData with inline base64 arrays).
"""

import argparse
import base64
import math
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import polars as pl


def fail(message):
    print(f"render_frame.py: {message}", file=sys.stderr)
    sys.exit(1)


def read_table(out, name):
    """The Parquet table `name` of the dataset, or None if it has no part."""
    parts = sorted((out / name).glob("*.parquet"))
    if not parts:
        return None
    return pl.read_parquet(parts)


def vtp_array(element):
    """The values of a binary DataArray of a talus .vtp file."""
    types = {"Float64": "<f8", "Int64": "<i8", "Int32": "<i4"}
    kind = element.get("type")
    if kind not in types or element.get("format") != "binary":
        fail(f"unexpected array {element.get('Name')!r} ({kind}, {element.get('format')})")
    raw = base64.b64decode("".join((element.text or "").split()))
    count = int.from_bytes(raw[:8], "little")
    values = np.frombuffer(raw[8 : 8 + count], dtype=types[kind])
    return values.reshape(-1, int(element.get("NumberOfComponents", "1")))


def wall_triangles(out, step):
    """The walls at the VTK frame of `step` or the latest one before it:
    their triangles (n, 3, 3), their outline (m, 2, 3: the edges where the
    surface folds or ends, not the diagonals of flat faces) and the
    frame's step; (None, None, None) when the run wrote no VTK wall
    file."""
    frames = []
    for f in (out / "vtk").glob("walls-*.vtp"):
        m = re.fullmatch(r"walls-(\d+)\.vtp", f.name)
        if m:
            frames.append((int(m.group(1)), f))
    if not frames:
        return None, None, None
    frames.sort()
    before = [fr for fr in frames if fr[0] <= step]
    at, path = before[-1] if before else frames[0]
    piece = ET.parse(path).getroot().find("PolyData/Piece")
    points = vtp_array(piece.find("Points/DataArray"))
    arrays = {a.get("Name"): a for a in piece.find("Polys")}
    conn = vtp_array(arrays["connectivity"]).ravel()
    offsets = vtp_array(arrays["offsets"]).ravel()
    if not np.array_equal(offsets, np.arange(3, 3 * len(offsets) + 1, 3)):
        fail(f"{path.name}: walls are expected as triangles")
    tris = conn.reshape(-1, 3)
    corners = points[tris]
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    sides = {}
    for t, tri in enumerate(tris):
        for k in range(3):
            edge = tuple(sorted((tri[k], tri[(k + 1) % 3])))
            sides.setdefault(edge, []).append(t)
    outline = [
        points[list(edge)]
        for edge, ts in sides.items()
        if len(ts) != 2 or abs(normals[ts[0]] @ normals[ts[1]]) < 0.999
    ]
    return corners, np.array(outline).reshape(-1, 2, 3), at


def block_faces(out, blocks):
    """World triangles (n, 3, 3) of the blocks' faces and the row of
    `blocks` each belongs to."""
    vertices = read_table(out, "shape_vertices")
    faces = read_table(out, "shape_faces")
    if vertices is None or faces is None:
        fail("blocks in the bodies table but no shape tables")
    shape_points = {
        s: g.sort("vertex").select("x", "y", "z").to_numpy()
        for (s,), g in vertices.group_by("shape")
    }
    shape_tris = {
        s: g.sort("face").select("v0", "v1", "v2").to_numpy()
        for (s,), g in faces.group_by("shape")
    }
    tris, owner = [], []
    for row, b in enumerate(blocks.iter_rows(named=True)):
        v = shape_points[b["shape"]]
        w, u = b["qw"], np.array([b["qx"], b["qy"], b["qz"]])
        # R(q) v = v + 2 w (u x v) + 2 u x (u x v) for a unit q = (w, u).
        t = 2.0 * np.cross(u, v)
        world = v + w * t + np.cross(u, t) + np.array([b["x"], b["y"], b["z"]])
        tris.append(world[shape_tris[b["shape"]]])
        owner.extend([row] * len(shape_tris[b["shape"]]))
    return np.concatenate(tris), np.array(owner)


def main():
    ap = argparse.ArgumentParser(description="Render a recorded frame of a talus dataset to PNG.")
    ap.add_argument("out", type=Path, help="the run's output folder")
    ap.add_argument("png", type=Path, help="the PNG to write")
    ap.add_argument("--step", type=int, help="recorded step (default: the last)")
    ap.add_argument("--size", default="800x600", help="image size in pixels, WxH")
    ap.add_argument("--elev", type=float, default=20.0, help="view elevation, degrees")
    ap.add_argument("--azim", type=float, default=-60.0, help="view azimuth, degrees")
    args = ap.parse_args()

    m = re.fullmatch(r"(\d+)x(\d+)", args.size)
    if not m or int(m.group(1)) < 16 or int(m.group(2)) < 16:
        fail(f"--size must be WxH in pixels, at least 16x16, got {args.size!r}")
    width, height = int(m.group(1)), int(m.group(2))

    bodies = read_table(args.out, "bodies")
    if bodies is None:
        fail(f"no bodies table in {args.out.name}/ (is it a talus output folder?)")
    steps = bodies["step"].unique().sort()
    step = steps[-1] if args.step is None else args.step
    if step not in steps:
        fail(f"step {step} is not recorded in bodies/; recorded: {steps[0]} .. {steps[-1]}")
    frame = bodies.filter(pl.col("step") == step)
    time = frame["time"][0]
    speed_of = lambda t: np.sqrt(t["vx"].to_numpy() ** 2 + t["vy"].to_numpy() ** 2 + t["vz"].to_numpy() ** 2)

    el, az = math.radians(args.elev), math.radians(args.azim)
    towards = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
    right = np.array([-math.sin(az), math.cos(az), 0.0])
    up = np.cross(towards, right)

    def screen(p):
        return np.stack([p @ right, p @ up], axis=-1)

    # Every item is a polygon on the screen with a depth (larger: nearer).
    polys, depth, value, kind = [], [], [], []

    balls = frame.filter(pl.col("kind") == "ball")
    if len(balls):
        c = balls.select("x", "y", "z").to_numpy()
        r = balls["radius"].to_numpy()
        a = np.linspace(0.0, 2.0 * math.pi, 25)[:-1]
        ring = np.stack([np.cos(a), np.sin(a)], axis=-1)
        polys.extend(screen(c)[:, None, :] + r[:, None, None] * ring[None, :, :])
        depth.extend(c @ towards)
        value.extend(speed_of(balls))
        kind.extend(["ball"] * len(balls))

    blocks = frame.filter(pl.col("kind") == "block")
    if len(blocks):
        tris, owner = block_faces(args.out, blocks)
        polys.extend(screen(tris))
        depth.extend(tris.mean(axis=1) @ towards)
        value.extend(speed_of(blocks)[owner])
        kind.extend(["block"] * len(tris))

    walls, outline, wall_step = wall_triangles(args.out, step)
    if walls is None:
        print(
            "render_frame.py: no VTK wall files (OUT/vtk/walls-*.vtp): walls not drawn; "
            "set [output] vtk = N to record them",
            file=sys.stderr,
        )
    else:
        if wall_step != step:
            print(f"render_frame.py: walls from the VTK frame of step {wall_step}", file=sys.stderr)
        polys.extend(screen(walls))
        depth.extend(walls.mean(axis=1) @ towards)
        value.extend([np.nan] * len(walls))
        kind.extend(["wall"] * len(walls))
        polys.extend(screen(outline))
        depth.extend(outline.mean(axis=1) @ towards)
        value.extend([np.nan] * len(outline))
        kind.extend(["edge"] * len(outline))

    if not polys:
        fail(f"nothing to draw at step {step}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import PolyCollection

    value = np.array(value, dtype=float)
    kind = np.array(kind)
    moving = value[~np.isnan(value)]
    vmax = float(moving.max()) if len(moving) and moving.max() > 0 else 1.0
    norm = matplotlib.colors.Normalize(vmin=0.0, vmax=vmax)
    cmap = matplotlib.colormaps["viridis"]
    faces = np.zeros((len(value), 4))
    edges = np.zeros((len(value), 4))
    body = (kind == "ball") | (kind == "block")
    faces[body] = cmap(norm(value[body]))
    edges[body] = (0.1, 0.1, 0.1, 0.5)
    faces[kind == "wall"] = (0.55, 0.55, 0.6, 0.1)
    edges[kind == "edge"] = (0.25, 0.25, 0.3, 0.8)
    widths = np.select([body, kind == "edge"], [0.25, 0.8], 0.0)
    order = np.argsort(np.array(depth), kind="stable")

    dpi = 100
    fig = plt.figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    ax = fig.add_axes([0.02, 0.02, 0.8, 0.9])
    collection = PolyCollection(
        [polys[i] for i in order],
        facecolors=faces[order],
        edgecolors=edges[order],
        linewidths=widths[order],
    )
    ax.add_collection(collection)
    corners = np.concatenate([np.asarray(p) for p in polys])
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    pad = 0.03 * float(max(hi - lo))
    ax.set_xlim(lo[0] - pad, hi[0] + pad)
    ax.set_ylim(lo[1] - pad, hi[1] + pad)
    ax.set_aspect("equal")
    ax.set_axis_off()
    ax.set_title(f"{args.out.name}: step {step}, t = {time:.4g} s", fontsize=10)
    bar_ax = fig.add_axes([0.85, 0.15, 0.03, 0.7])
    bar = fig.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap), cax=bar_ax)
    bar.set_label("speed (m/s)")
    fig.savefig(args.png, dpi=dpi)
    print(f"wrote {args.png.name}: step {step}, {len(balls)} balls, {len(blocks)} blocks")


if __name__ == "__main__":
    main()
