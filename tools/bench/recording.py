#!/usr/bin/env python3
"""Cost of recording the contacts table: the settle example with
contacts recorded every 100 steps against the same run recording nothing.

Usage: python3 tools/bench/recording.py [--reps N] [--steps N] [--threads N] [--talus BIN]

Writes two variants of configs/settle.toml to tools/bench/out/ (the
[output] table replaced: contacts = 100 and nothing else, or nothing at
all), runs them alternately REPS times, and prints each run's loop wall
time (from the run's summary), then the medians and the cost of
recording as a share of the run without it. --steps shortens the run
(default: the example's whole 0.3 s).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETTLE = ROOT / "configs/settle.toml"
OUT = ROOT / "tools/bench/out"


def variant(name: str, contacts: int) -> Path:
    text = SETTLE.read_text()
    text = text[: text.index("[output]")]
    text += f'[output]\ndir = "{OUT / name}"\ncontacts = {contacts}\nbodies = 0\nwalls = 0\n'
    path = OUT / f"{name}.toml"
    OUT.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run(talus: str, config: Path, steps: int | None, threads: int) -> tuple[float, int]:
    cmd = [talus, "run", str(config), "--threads", str(threads)]
    if steps:
        cmd += ["--steps", str(steps)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    wall = float(re.search(r"wall time\s+([\d.e+-]+) s", out).group(1))
    rows = int(re.search(r"contacts (\d+) rows", out).group(1))
    return wall, rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--talus", default=str(ROOT / "target/release/talus"))
    a = ap.parse_args()
    variants = {"recording": variant("settle_contacts100", 100), "silent": variant("settle_silent", 0)}
    walls: dict[str, list[float]] = {k: [] for k in variants}
    for rep in range(a.reps):
        for name, config in variants.items():
            wall, rows = run(a.talus, config, a.steps, a.threads)
            walls[name].append(wall)
            print(f"rep {rep} {name:9s} {wall:8.2f} s  contacts rows {rows}", flush=True)
    rec, silent = statistics.median(walls["recording"]), statistics.median(walls["silent"])
    print(f"median recording {rec:.2f} s, silent {silent:.2f} s: recording costs {100 * (rec / silent - 1):+.1f} %")


if __name__ == "__main__":
    main()
