#!/usr/bin/env python3
"""Plot a Brazilian test: the load on the platens against their approach,
with every broken bond marked.

Usage: python3 tools/py/plot_brazilian.py OUT [PNG]

Reads the walls table (OUT/walls/*.parquet) of a run of
configs/brazilian.toml, whose walls are named "bottom" and "top": the
approach is how much closer the platens' reference points are than at the
first recorded step, and the load is the mean of the contact forces the
disc puts on them along z (the top platen's pushed up, the bottom's
down). Reads the bonds table (OUT/bonds/*.parquet), one row per broken
bond, and marks each break at the approach and load of its time (tension
and shear apart). Also prints the peak load and the split tensile
strength 2 P / (pi D t) for the disc diameter D and thickness t given
(defaults: those of configs/brazilian.toml). Writes PNG (default
OUT/brazilian.png) with matplotlib's Agg backend.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import polars as pl


def load_curve(out: Path | str) -> pl.DataFrame:
    """One row per recorded step: time, approach (m), load (N)."""
    walls = pl.read_parquet(f"{out}/walls/*.parquet")
    top = walls.filter(pl.col("name") == "top").sort("step")
    bottom = walls.filter(pl.col("name") == "bottom").sort("step")
    gap = top["cz"] - bottom["cz"]
    return pl.DataFrame(
        {
            "time": top["time"],
            "approach": gap[0] - gap,
            "load": 0.5 * (top["fz"] - bottom["fz"]),
        }
    )


def breaks(out: Path | str) -> pl.DataFrame:
    """The bonds table (empty when no bond broke)."""
    files = list(Path(out, "bonds").glob("*.parquet"))
    if not files:
        return pl.DataFrame({"time": [], "mode": []}, schema={"time": pl.Float64, "mode": pl.Utf8})
    return pl.read_parquet(f"{out}/bonds/*.parquet")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("png", type=Path, nargs="?")
    ap.add_argument("--diameter", type=float, default=0.04, help="disc diameter (m)")
    ap.add_argument("--thickness", type=float, default=0.006, help="disc thickness (m)")
    a = ap.parse_args()
    png = a.png or a.out / "brazilian.png"

    curve = load_curve(a.out)
    broken = breaks(a.out)
    peak = curve["load"].max()
    strength = 2.0 * peak / (math.pi * a.diameter * a.thickness)
    print(f"peak load {peak:.4g} N; split tensile strength {strength:.4g} Pa")
    print(f"bonds broken: {broken.height}", end="")
    if broken.height:
        counts = broken.group_by("mode").len().sort("mode")
        print(" (" + ", ".join(f"{m}: {n}" for m, n in counts.iter_rows()) + ")")
    else:
        print()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    t, x, f = (curve[c].to_numpy() for c in ("time", "approach", "load"))
    ax.plot(x * 1e6, f, color="0.2", lw=1.2, label="load")
    for mode, colour in (("tension", "tab:red"), ("shear", "tab:blue")):
        at = broken.filter(pl.col("mode") == mode)["time"].to_numpy()
        if at.size:
            ax.plot(
                np.interp(at, t, x) * 1e6,
                np.interp(at, t, f),
                "|",
                color=colour,
                ms=8,
                label=f"bond broken in {mode} ({at.size})",
            )
    ax.set_xlabel("platen approach (um)")
    ax.set_ylabel("load (N)")
    ax.set_title(f"Brazilian test: peak {peak:.3g} N, {strength / 1e6:.3g} MPa")
    ax.legend(loc="upper left", frameon=False)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"wrote {png}")


if __name__ == "__main__":
    main()
