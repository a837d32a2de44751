"""Compare two talus datasets column by column.

    python3 tools/py/compare_datasets.py [--tolerance REL] EXPECTED ACTUAL

For each table folder in EXPECTED (contacts, bodies, walls), the rows of both
datasets are put in the order of their key (step, then id) and every column
of EXPECTED must be present in ACTUAL with the same values: integers and
strings equal, floats equal as numbers (NaN equal to NaN). Columns that only
ACTUAL has are allowed (new output). Prints one line per difference and exits
with status 1 if there is any.

With --tolerance REL, two floats also count as equal when they differ by at
most REL times the largest magnitude in that column of EXPECTED: for a change
that only reorders floating-point sums (rows, ids, strings, flags and
integers must still match exactly).
"""

import sys
from pathlib import Path

import numpy as np
import polars as pl

KEYS = ["step", "id"]


def table(root: Path, name: str) -> pl.DataFrame | None:
    folder = root / name
    parts = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
    if not parts:
        return None
    return pl.concat([pl.read_parquet(p) for p in parts]).sort(KEYS)


def compare(expected: Path, actual: Path, tolerance: float = 0.0) -> list[str]:
    problems = []
    for name in ("contacts", "bodies", "walls"):
        want = table(expected, name)
        if want is None:
            continue
        got = table(actual, name)
        if got is None:
            problems.append(f"{name}: no parts in {actual / name}")
            continue
        if want.height != got.height:
            problems.append(f"{name}: {want.height} rows expected, {got.height} found")
            continue
        for col in want.columns:
            if col not in got.columns:
                problems.append(f"{name}.{col}: column missing")
                continue
            a, b = want[col], got[col]
            if a.dtype.is_float():
                x = a.cast(pl.Float64).to_numpy()
                y = b.cast(pl.Float64).to_numpy()
                same = np.equal(x, y) | (np.isnan(x) & np.isnan(y))
                if tolerance > 0.0:
                    finite = np.isfinite(x)
                    scale = np.abs(x[finite]).max() if finite.any() else 0.0
                    same |= np.abs(x - y) <= tolerance * scale
            else:
                same = (a == b).fill_null(False).to_numpy() | (
                    a.is_null() & b.is_null()
                ).to_numpy()
            if not same.all():
                row = int(np.argmin(same))
                key = {k: want[k][row] for k in KEYS}
                problems.append(
                    f"{name}.{col}: {int((~same).sum())} rows differ, first at {key}: "
                    f"expected {a[row]!r}, found {b[row]!r}"
                )
    return problems


def main() -> int:
    args = sys.argv[1:]
    tolerance = 0.0
    if len(args) == 4 and args[0] == "--tolerance":
        tolerance = float(args[1])
        args = args[2:]
    if len(args) != 2 or not tolerance >= 0.0:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    problems = compare(Path(args[0]), Path(args[1]), tolerance)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
