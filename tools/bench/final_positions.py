#!/usr/bin/env python3
"""Write the final ball positions of a talus run as 'id x y z' lines.

usage: final_positions.py OUT_DIR FILE

Reads OUT_DIR/bodies/*.parquet, keeps the rows of the last recorded step
(balls only), sorts them by id and writes one line per ball with 13
significant digits, the form the peers kit's count_contacts.py reads (the
kit is in ../shared/peers relative to the repository root).
Prints the step that was written. Needs pyarrow.
"""
import sys

import pyarrow.compute as pc
import pyarrow.dataset as ds

out_dir, path = sys.argv[1], sys.argv[2]
table = ds.dataset(out_dir + "/bodies", format="parquet").to_table(
    columns=["step", "id", "kind", "x", "y", "z"])
last = pc.max(table["step"]).as_py()
table = table.filter(pc.equal(table["step"], last))
kinds = set(table["kind"].to_pylist())
if kinds - {"ball"}:
    table = table.filter(pc.equal(pc.cast(table["kind"], "string"), "ball"))
table = table.sort_by("id")
with open(path, "w") as f:
    for i, x, y, z in zip(*(table[c].to_pylist() for c in ("id", "x", "y", "z"))):
        f.write("%d %.12e %.12e %.12e\n" % (i, x, y, z))
print(last)
