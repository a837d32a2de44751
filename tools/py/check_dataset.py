#!/usr/bin/env python3
"""Check that a talus output folder reads the same in polars, pandas and pyarrow.

Usage: python3 tools/py/check_dataset.py OUT [--plot PNG]

For each table folder present (contacts/, bodies/, walls/, shape_vertices/,
shape_faces/, bonds/, clump_pebbles/, cell/) it:
  * reads OUT/<table>/*.parquet with polars.scan_parquet(...).collect();
  * reads OUT/<table> with pandas.read_parquet (pyarrow engine);
  * checks both give the same row count, the same columns in the same
    order and the same values;
  * checks with pyarrow that every part file has the same schema, the
    "talus.table" schema key, and "unit"/"doc" keys on every field, and
    that the row counts in the part footers add up.
run.json, when present, must be valid JSON. With --plot, also draws the
contacts plot of plot_contacts.py into PNG.

Prints one summary line and exits 0, or prints what is wrong and exits 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

TABLES = (
    "contacts",
    "bodies",
    "walls",
    "shape_vertices",
    "shape_faces",
    "bonds",
    "clump_pebbles",
    "cell",
)


class Mismatch(Exception):
    """The dataset breaks one of the promises of docs/output.md."""


def _same_values(name: str, column: str, pl_series, pd_series) -> None:
    import numpy as np
    import polars as pl

    if pl_series.dtype in (pl.Categorical, pl.Enum, pl.String):
        left = [None if v is None else str(v) for v in pl_series.cast(pl.String).to_list()]
        right = [None if v is None else str(v) for v in pd_series.astype(object).tolist()]
        equal = left == right
    else:
        left = pl_series.to_numpy()
        right = pd_series.to_numpy()
        if left.dtype.kind == "f" or right.dtype.kind == "f":
            equal = np.array_equal(
                left.astype("float64"), right.astype("float64"), equal_nan=True
            )
        else:
            equal = np.array_equal(left, right)
    if not equal:
        raise Mismatch(f"{name}: column {column!r} differs between polars and pandas")


def check_table(out: Path, name: str) -> str | None:
    """Check one table; return its summary, or None if it has no part file."""
    import pandas as pd
    import polars as pl
    import pyarrow.parquet as pq

    folder = out / name
    parts = sorted(folder.glob("*.parquet"))
    if not parts:
        return None

    try:
        pl_df = pl.scan_parquet(f"{folder}/*.parquet").collect()
    except Exception as err:
        raise Mismatch(f"{name}: polars cannot read {folder}/*.parquet: {err}") from err
    try:
        pd_df = pd.read_parquet(folder, engine="pyarrow")
    except Exception as err:
        raise Mismatch(f"{name}: pandas cannot read {folder}: {err}") from err
    if pl_df.height != len(pd_df):
        raise Mismatch(f"{name}: polars reads {pl_df.height} rows, pandas {len(pd_df)}")
    if list(pl_df.columns) != list(pd_df.columns):
        raise Mismatch(
            f"{name}: polars columns {pl_df.columns} != pandas columns {list(pd_df.columns)}"
        )
    for column in pl_df.columns:
        _same_values(name, column, pl_df[column], pd_df[column])

    first = None
    footer_rows = 0
    for part in parts:
        try:
            schema = pq.read_schema(part)
        except Exception as err:
            raise Mismatch(f"pyarrow cannot read {part}: {err}") from err
        if first is None:
            first = schema
        elif not schema.equals(first, check_metadata=True):
            raise Mismatch(f"{part}: schema differs from {parts[0].name}")
        footer_rows += pq.ParquetFile(part).metadata.num_rows
    table_key = (first.metadata or {}).get(b"talus.table")
    if table_key != name.encode():
        raise Mismatch(f"{parts[0]}: schema key talus.table is {table_key!r}, expected {name!r}")
    for field in first:
        meta = field.metadata or {}
        for key in (b"unit", b"doc"):
            if key not in meta:
                raise Mismatch(f"{name}: field {field.name!r} has no {key.decode()!r} metadata")
    if footer_rows != pl_df.height:
        raise Mismatch(f"{name}: part footers count {footer_rows} rows, readers {pl_df.height}")

    units = sum(1 for f in first if (f.metadata or {}).get(b"unit"))
    return (
        f"{name}: {pl_df.height} rows, {len(parts)} parts, "
        f"{len(pl_df.columns)} columns ({units} with units)"
    )


def check_dataset(out: Path, plot: Path | None = None) -> str:
    if not out.is_dir():
        raise Mismatch(f"{out} is not a folder")
    summaries = [s for s in (check_table(out, t) for t in TABLES) if s is not None]
    if not summaries:
        raise Mismatch(f"{out} holds no part file in {', '.join(TABLES)}")
    run_json = out / "run.json"
    if run_json.exists():
        try:
            json.loads(run_json.read_text())
        except ValueError as err:
            raise Mismatch(f"{run_json} is not valid JSON: {err}") from err
        summaries.append("run.json ok")
    if plot is not None:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from plot_contacts import plot_contacts

        summaries.append(f"plot {plot_contacts(out, plot)}")
    return "; ".join(summaries)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description="Check that a talus output folder reads the same in polars, pandas and pyarrow."
    )
    parser.add_argument("out", type=Path, help="talus output folder")
    parser.add_argument("--plot", type=Path, metavar="PNG", help="also draw the contacts plot")
    args = parser.parse_args(argv[1:])
    try:
        import pandas  # noqa: F401
        import polars  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as err:
        print(f"check_dataset: {err}; run `pip install polars pandas pyarrow`", file=sys.stderr)
        return 1
    try:
        summary = check_dataset(args.out, args.plot)
    except Mismatch as err:
        print(f"check_dataset: FAILED: {err}", file=sys.stderr)
        return 1
    print(f"check_dataset: ok: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
