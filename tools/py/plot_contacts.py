#!/usr/bin/env python3
"""Plot how many contacts are active, and how hard they push, over a run.

Usage: python3 tools/py/plot_contacts.py OUT [PNG]

Reads the contacts table of the talus output folder OUT
(OUT/contacts/*.parquet) with polars, groups its rows by recorded step
(`step`, `time`), and draws two panels against time: the number of active
contacts, and the mean normal force `f_n` over the active contacts only.
Writes PNG (default OUT/contacts.png) with matplotlib's Agg backend, so no
display is needed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl


def contact_series(out: Path | str) -> pl.DataFrame:
    """One row per recorded step: step, time, n_active, f_n_mean."""
    active = pl.col("active")
    return (
        pl.scan_parquet(f"{out}/contacts/*.parquet")
        .group_by("step", "time")
        .agg(
            n_active=active.sum(),
            f_n_mean=pl.col("f_n").filter(active).mean(),
        )
        .sort("step")
        .collect()
    )


def _unit(out: Path, column: str) -> str:
    """The unit stored in the Parquet field metadata, or "" if unknown."""
    try:
        import pyarrow.parquet as pq

        first = sorted((out / "contacts").glob("*.parquet"))[0]
        meta = pq.read_schema(first).field(column).metadata or {}
        return meta.get(b"unit", b"").decode()
    except Exception:  # units only decorate the axis labels
        return ""


def plot_contacts(out: Path | str, png: Path | str | None = None) -> Path:
    """Draw the contact plot of output folder `out` to `png`; return its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    png = Path(png) if png is not None else out / "contacts.png"
    series = contact_series(out)
    time = series["time"].to_numpy()
    time_unit = _unit(out, "time") or "s"
    force_unit = _unit(out, "f_n") or "N"

    fig, (ax_n, ax_f) = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
    ax_n.plot(time, series["n_active"].to_numpy(), marker=".")
    ax_n.set_ylabel("active contacts")
    ax_f.plot(time, series["f_n_mean"].to_numpy(), marker=".", color="tab:red")
    ax_f.set_ylabel(f"mean f_n of active [{force_unit}]")
    ax_f.set_xlabel(f"time [{time_unit}]")
    ax_n.set_title(f"contacts of {out.resolve().name}")
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)
    return png


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    png = plot_contacts(argv[1], argv[2] if len(argv) == 3 else None)
    print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
