#!/usr/bin/env python3
"""Plot an element test in a periodic cell: the stress ratio and the
volume change against the strain of its last stage.

Usage: python3 tools/py/plot_cell.py OUT [PNG] [--test shear|triaxial]

Reads the cell table (OUT/cell/*.parquet) of a run with a [cell], such as
configs/shear.toml or configs/triaxial.toml, and keeps the rows of the
last stage that began (column `stage`), measured from its first row:

- shear (simple shear in the x-y plane, v_x = rate y): the shear strain
  gamma = (b_x - b_x0) / b_y against the stress ratio
  tau / sigma_n = stress_xy / -stress_yy;
- triaxial (compression along z): the axial strain
  eps_a = -ln(c_z / c_z0) against q / p, with compression positive,
  sigma_1 = -stress_zz, sigma_3 = -(stress_xx + stress_yy) / 2,
  q = sigma_1 - sigma_3 and p = (sigma_1 + 2 sigma_3) / 3.

Both also plot the volumetric strain ln(V / V0) (dilation positive).
Without --test, a stage whose cell tilts (b_x changes) is taken as shear,
any other as triaxial. Prints the peak and final stress ratios; writes
PNG (default OUT/<test>.png) with matplotlib's Agg backend.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl


def last_stage(out: Path | str) -> pl.DataFrame:
    """The rows of the last stage that began, in step order."""
    cell = pl.read_parquet(f"{out}/cell/*.parquet").sort("step")
    if cell.height == 0:
        raise SystemExit(f"{out}/cell holds no rows: was the run given a [cell]?")
    return cell.filter(pl.col("stage") == cell["stage"].max())


def guess(stage: pl.DataFrame) -> str:
    """'shear' when the cell tilts over the stage, else 'triaxial'."""
    bx = stage["b_x"].to_numpy()
    by = stage["b_y"].to_numpy()
    return "shear" if np.ptp(bx) > 1e-9 * np.abs(by).max() else "triaxial"


def curve(stage: pl.DataFrame, test: str) -> dict[str, np.ndarray]:
    """Strain, stress ratio and volumetric strain of the stage."""
    col = lambda name: stage[name].to_numpy()  # noqa: E731
    volume = col("volume")
    ev = np.log(volume / volume[0])
    if test == "shear":
        strain = (col("b_x") - col("b_x")[0]) / col("b_y")
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = col("stress_xy") / -col("stress_yy")
    else:
        strain = -np.log(col("c_z") / col("c_z")[0])
        s1 = -col("stress_zz")
        s3 = -0.5 * (col("stress_xx") + col("stress_yy"))
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = (s1 - s3) / ((s1 + 2.0 * s3) / 3.0)
    return {"strain": strain, "ratio": ratio, "ev": ev}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("png", type=Path, nargs="?")
    ap.add_argument("--test", choices=("shear", "triaxial"))
    a = ap.parse_args()

    stage = last_stage(a.out)
    test = a.test or guess(stage)
    c = curve(stage, test)
    png = a.png or a.out / f"{test}.png"
    finite = np.isfinite(c["ratio"])
    if not finite.any():
        raise SystemExit(f"{a.out}/cell: no stress in the last stage to plot")
    name = "tau / sigma_n" if test == "shear" else "q / p"
    strain = "shear strain" if test == "shear" else "axial strain"
    k = int(np.nanargmax(np.where(finite, c["ratio"], np.nan)))
    print(
        f"{test}: stage {stage['stage'][0]}, {stage.height} rows; "
        f"peak {name} {c['ratio'][k]:.4g} at {strain} {c['strain'][k]:.4g}; "
        f"final {name} {c['ratio'][-1]:.4g} at {c['strain'][-1]:.4g}, "
        f"volumetric strain {c['ev'][-1]:.4g}"
    )

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(6.4, 5.6))
    top.plot(c["strain"], c["ratio"], color="0.2", lw=1.2)
    top.set_ylabel(name)
    top.set_title(f"{test} in a periodic cell")
    bottom.plot(c["strain"], c["ev"], color="tab:blue", lw=1.2)
    bottom.axhline(0.0, color="0.7", lw=0.8)
    bottom.set_ylabel("volumetric strain ln(V/V0)")
    bottom.set_xlabel(strain)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"wrote {png}")


if __name__ == "__main__":
    main()
