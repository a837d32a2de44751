"""Reads a run's VTK series back with real VTK readers and checks it against
the Parquet tables of the same run.

Usage: python3 vtk_readback.py OUT

The index (OUT/vtk/run.pvd) is parsed as XML and read with pyvista's PVD
reader (the plain VTK wheel has no reader for .pvd collections; ParaView's
is part of ParaView); every frame file is read with VTK's own
vtkXMLPolyDataReader. Positions, radii, ids, velocities, spins, contact
forces and times must equal the Parquet values bit for bit; block corners
are rebuilt from bodies/ and shape_vertices/ (to 1e-13 m); wall vertices
from the walls table's reference points (rigid translation, to 1e-12 m).
The run must have balls, blocks, a static wall named "box" and a moving
wall named "lid", and contacts of every pair kind.
"""

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import polars as pl
import pyvista
import vtk
from vtk.util.numpy_support import vtk_to_numpy

out = Path(sys.argv[1])
vdir = out / "vtk"


def table(name):
    return pl.read_parquet(sorted((out / name).glob("*.parquet")))


bodies, contacts, walls = table("bodies"), table("contacts"), table("walls")
shape_vertices, shape_faces = table("shape_vertices"), table("shape_faces")
steps = bodies["step"].unique().sort().to_list()

# The index: one frame per recorded step, each with the four parts, at
# the time the Parquet tables give for that step.
index = ET.parse(vdir / "run.pvd").getroot()
assert index.get("type") == "Collection", index.attrib
entries = [d.attrib for d in index.iter("DataSet")]
times = dict(zip(bodies["step"].to_list(), bodies["time"].to_list()))
expected = [
    (repr(times[s]), str(k), f"{name}-{s:010d}.vtp")
    for s in steps
    for k, name in enumerate(["balls", "blocks", "walls", "contacts"])
]
listed = [(repr(float(e["timestep"])), e["part"], e["file"]) for e in entries]
assert listed == expected, (listed, expected)

# pyvista's PVD reader sees the same time series and builds each frame
# from its four parts.
reader = pyvista.get_reader(str(vdir / "run.pvd"))
assert reader.time_values == [times[s] for s in steps], reader.time_values
reader.set_active_time_value(times[steps[-1]])
frame = reader.read()
assert frame.n_blocks == 4, frame
n_balls = int((bodies["kind"] == "ball").sum()) // len(steps)
assert frame[0].n_points == n_balls, frame[0]


def read_vtp(name):
    r = vtk.vtkXMLPolyDataReader()
    r.SetFileName(str(vdir / name))
    r.Update()
    assert r.GetErrorCode() == 0, name
    return r.GetOutput()


def arr(data, name):
    a = data.GetArray(name)
    assert a is not None, name
    return vtk_to_numpy(a)


def cells(poly, size, getter):
    ca = getter()
    conn = vtk_to_numpy(ca.GetConnectivityArray())
    offs = vtk_to_numpy(ca.GetOffsetsArray())
    assert (np.diff(offs) == size).all()
    return conn.reshape(-1, size)


def rotate(q, v):
    """R(q) v for unit quaternions q = (w, x, y, z), row by row."""
    w, u = q[:, :1], q[:, 1:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


checked = {"lid moved": False}
kinds = set()
wall0 = None
for s in steps:
    b = bodies.filter(pl.col("step") == s)
    balls = b.filter(pl.col("kind") == "ball").sort("id")
    blocks = b.filter(pl.col("kind") == "block").sort("id")

    # Balls: points with the Parquet values, bit for bit.
    p = read_vtp(f"balls-{s:010d}.vtp")
    pd = p.GetPointData()
    assert np.array_equal(vtk_to_numpy(p.GetPoints().GetData()), balls.select("x", "y", "z").to_numpy())
    assert np.array_equal(arr(pd, "id"), balls["id"].to_numpy())
    assert np.array_equal(arr(pd, "radius"), balls["radius"].to_numpy())
    assert np.array_equal(arr(pd, "velocity"), balls.select("vx", "vy", "vz").to_numpy())
    assert np.array_equal(arr(pd, "spin"), balls.select("wx", "wy", "wz").to_numpy())
    names = p.GetFieldData().GetAbstractArray("group_names")
    names = [names.GetValue(i) for i in range(names.GetNumberOfValues())]
    assert [names[g] for g in arr(pd, "group")] == balls["group"].to_list()
    assert p.GetNumberOfVerts() == len(balls)
    assert arr(p.GetFieldData(), "TimeValue")[0] == times[s]
    assert arr(p.GetFieldData(), "step")[0] == s

    # Blocks: each block's shape posed by the bodies table's q and centre.
    k = read_vtp(f"blocks-{s:010d}.vtp")
    rows = blocks.join(shape_vertices.select("shape", "vertex", pl.col("x").alias("vx0"),
                                             pl.col("y").alias("vy0"), pl.col("z").alias("vz0")),
                       on="shape").sort("id", "vertex")
    world = rotate(rows.select("qw", "qx", "qy", "qz").to_numpy(),
                   rows.select("vx0", "vy0", "vz0").to_numpy()) + rows.select("x", "y", "z").to_numpy()
    pts = vtk_to_numpy(k.GetPoints().GetData())
    assert pts.shape == world.shape and np.allclose(pts, world, rtol=0, atol=1e-13), abs(pts - world).max()
    tris = cells(k, 3, k.GetPolys)
    per_block = shape_faces.group_by("shape").len()
    assert len(tris) == sum(per_block.filter(pl.col("shape") == sh)["len"][0] for sh in blocks["shape"])
    cd = k.GetCellData()
    ids = arr(cd, "id")
    for row in blocks.iter_rows(named=True):
        mine = ids == row["id"]
        assert np.array_equal(arr(cd, "velocity")[mine], np.tile([row["vx"], row["vy"], row["vz"]], (mine.sum(), 1)))
        assert np.array_equal(arr(cd, "spin")[mine], np.tile([row["wx"], row["wy"], row["wz"]], (mine.sum(), 1)))

    # Walls: the static box keeps its corners; the lid has moved with the
    # reference point the walls table records.
    w = read_vtp(f"walls-{s:010d}.vtp")
    pts = vtk_to_numpy(w.GetPoints().GetData())
    tris = cells(w, 3, w.GetPolys)
    wall_of = arr(w.GetCellData(), "wall")
    wn = w.GetFieldData().GetAbstractArray("wall_names")
    assert [wn.GetValue(i) for i in range(wn.GetNumberOfValues())] == ["box", "lid"]
    centres = walls.filter(pl.col("step") == s).sort("id").select("cx", "cy", "cz").to_numpy()
    if wall0 is None:
        wall0 = (pts.copy(), centres.copy())
        box = pts[np.unique(tris[wall_of == 1])]
        lid = pts[np.unique(tris[wall_of == 2])]
        assert np.isclose(box.min(axis=0), [0, 0, 0]).all() and np.isclose(box.max(axis=0), [0.1, 0.1, 0.2]).all()
        assert np.isclose(lid.min(axis=0), [0.01, 0.01, 0.15]).all() and np.isclose(lid.max(axis=0), [0.09, 0.09, 0.16]).all()
    else:
        p0, c0 = wall0
        for wid in (1, 2):
            v = np.unique(tris[wall_of == wid])
            shift = centres[wid - 1] - c0[wid - 1]
            assert np.allclose(pts[v], p0[v] + shift, rtol=0, atol=1e-12), (wid, s)
        checked["lid moved"] |= bool(centres[1][2] < c0[1][2] - 1e-3)

    # Contacts: the active rows of the contacts table, as lines from
    # end1's centre to end2's centre or to the contact point on a facet.
    c = read_vtp(f"contacts-{s:010d}.vtp")
    cd = c.GetCellData()
    act = contacts.filter((pl.col("step") == s) & pl.col("active"))
    order = np.argsort(arr(cd, "id"))
    act = act.sort("id")
    assert np.array_equal(arr(cd, "id")[order], act["id"].to_numpy())
    assert np.array_equal(arr(cd, "force")[order], act.select("fx", "fy", "fz").to_numpy())
    assert np.array_equal(arr(cd, "f_n")[order], act["f_n"].to_numpy())
    assert np.array_equal(arr(cd, "gap")[order], act["gap"].to_numpy())
    ends = vtk_to_numpy(c.GetPoints().GetData())[cells(c, 2, c.GetLines)][order]
    centre = {("ball", r["id"]): (r["x"], r["y"], r["z"]) for r in balls.iter_rows(named=True)}
    centre.update({("block", r["id"]): (r["x"], r["y"], r["z"]) for r in blocks.iter_rows(named=True)})
    for (a, bb), row in zip(ends, act.iter_rows(named=True)):
        k1, k2 = {"ball-ball": ("ball", "ball"), "ball-facet": ("ball", None), "ball-block": ("ball", "block"),
                  "block-block": ("block", "block"), "block-facet": ("block", None)}[row["kind"]]
        assert tuple(a) == centre[(k1, row["end1"])], row
        want = (row["xc_x"], row["xc_y"], row["xc_z"]) if k2 is None else centre[(k2, row["body2"])]
        assert tuple(bb) == want, row
        kinds.add(row["kind"])

assert checked["lid moved"], "the lid moves"
every = {"ball-ball", "ball-facet", "ball-block", "block-block", "block-facet"}
assert kinds == every, f"every pair kind is checked, not only {kinds}"
print("ok")
