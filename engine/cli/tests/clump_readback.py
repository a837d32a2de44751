"""Rebuilds every clump's pebbles from a run's Parquet tables, as
docs/output.md says a reader can, and checks them.

Usage: python3 clump_readback.py OUT

Pebble centres are `R(q) p + c` with `q`, `c` from bodies/ and `p` from
clump_pebbles/. They must equal the points of the VTK series' pebbles
part (to 1e-13 m), and agree with the contacts table: a pebble touching
the floor (z = 0) lies `radius + gap` above it, two pebbles in contact are
`r1 + r2 + gap` apart (to 1e-12 m), the pebbles named by `pebble1` and
`pebble2`. The run must have clumps of several shapes resting on the floor
of a box and touching each other, and its VTK frames at the steps its
bodies and contacts are recorded.
"""

import sys
from pathlib import Path

import numpy as np
import polars as pl
import vtk
from vtk.util.numpy_support import vtk_to_numpy

out = Path(sys.argv[1])


def table(name):
    return pl.read_parquet(sorted((out / name).glob("*.parquet")))


def rotate(q, v):
    """R(q) v for unit quaternions q = (w, x, y, z), row by row."""
    w, u = q[:, :1], q[:, 1:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


bodies, pebbles, contacts = table("bodies"), table("clump_pebbles"), table("contacts")
assert pebbles["shape"].n_unique() >= 2, pebbles
checked = {"floor": 0, "pair": 0}
for s in bodies["step"].unique().sort().to_list():
    clumps = bodies.filter((pl.col("step") == s) & (pl.col("kind") == "clump"))
    rows = clumps.join(
        pebbles.select("shape", "pebble", pl.col("radius").alias("pr"), pl.col("x").alias("px"),
                       pl.col("y").alias("py"), pl.col("z").alias("pz")),
        on="shape",
    ).sort("id", "pebble")
    centres = rotate(rows.select("qw", "qx", "qy", "qz").to_numpy(),
                     rows.select("px", "py", "pz").to_numpy()) + rows.select("x", "y", "z").to_numpy()
    where = {(i, k): (c, r) for i, k, c, r in zip(rows["id"], rows["pebble"], centres, rows["pr"])}

    r = vtk.vtkXMLPolyDataReader()
    r.SetFileName(str(out / "vtk" / f"pebbles-{s:010d}.vtp"))
    r.Update()
    poly = r.GetOutput()
    pts = vtk_to_numpy(poly.GetPoints().GetData())
    ids = vtk_to_numpy(poly.GetPointData().GetArray("id"))
    index = vtk_to_numpy(poly.GetPointData().GetArray("pebble"))
    assert len(pts) == len(rows), (len(pts), len(rows))
    for p, i, k in zip(pts, ids, index):
        assert np.abs(p - where[(i, k)][0]).max() < 1e-13, (s, i, k)

    act = contacts.filter((pl.col("step") == s) & pl.col("active"))
    for c in act.iter_rows(named=True):
        if c["kind"] == "pebble-facet" and abs(c["n_z"] + 1.0) < 1e-12:
            centre, radius = where[(c["end1"], c["pebble1"])]
            assert abs(centre[2] - (radius + c["gap"])) < 1e-12, c
            checked["floor"] += 1
        elif c["kind"] == "pebble-pebble":
            (a, ra), (b, rb) = where[(c["end1"], c["pebble1"])], where[(c["body2"], c["pebble2"])]
            assert abs(np.linalg.norm(a - b) - (ra + rb + c["gap"])) < 1e-12, c
            checked["pair"] += 1
assert checked["floor"] > 0 and checked["pair"] > 0, checked
print("ok", checked)
