#!/usr/bin/env python3
"""Bonded benchmark: cost of a bonded contact against a linear one.

Usage: python3 tools/bench/bonded.py [--reps N] [--threads 1,2] [--talus BIN]

Runs configs/bench/bonded10k.toml (10 164 balls, every neighbour contact
bonded with linearbond, compressed between platens inside four side
walls) and the same config with the plain linear model in place of the
bonded one (written to tools/bench/out/linear10k.toml: the same contacts,
none bonded), alternating the two, REPS times per thread count. From each
run's summary it takes the loop's wall time, the contact pass's share of
it and the number of contacts, and prints per run: particle steps per
second and contact-pass nanoseconds per contact and step; then the
medians per variant and thread count, and the ratio bonded / linear of
the contact-pass cost per contact.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BONDED = ROOT / "configs/bench/bonded10k.toml"
LINEAR = ROOT / "tools/bench/out/linear10k.toml"


def linear_config() -> None:
    """The bonded config with its model block swapped for linear."""
    text = BONDED.read_text()
    start, end = text.index("# model: linearbond"), text.index("# end model")
    block = (
        "# model: linear\n[[models]]\nmodel = \"linear\"\n"
        "groups = [\"grain\", \"grain\"]\nproperties = { kn = 1e5, ks = 4e4, fric = 0.5 }\n"
    )
    text = text[:start] + block + text[end:]
    text = text.replace('path = "data/lattice10k.csv"', f'path = "{BONDED.parent / "data/lattice10k.csv"}"')
    LINEAR.parent.mkdir(parents=True, exist_ok=True)
    LINEAR.write_text(text)


def run(talus: str, config: Path, threads: int, out: Path) -> dict:
    o = subprocess.run(
        [talus, "run", str(config), "--threads", str(threads), "--out", str(out)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    wall = float(re.search(r"wall time\s+([\d.e+-]+) s", o).group(1))
    steps = int(re.search(r"^steps\s+(\d+)", o, re.M).group(1))
    share = float(re.search(r"contacts ([\d.]+) %", o).group(1)) / 100.0
    contacts = int(re.search(r"^contacts\s+(\d+)", o, re.M).group(1))
    balls = int(re.search(r"^balls\s+(\d+)", o, re.M).group(1))
    return {
        "particle_steps_per_s": balls * steps / wall,
        "ns_per_contact_step": 1e9 * wall * share / (steps * contacts),
        "contacts": contacts,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--talus", default=str(ROOT / "target/release/talus"))
    a = ap.parse_args()
    linear_config()
    out = ROOT / "tools/bench/out"
    results: dict[tuple[str, int], list[dict]] = {}
    for threads in (int(t) for t in a.threads.split(",")):
        for rep in range(a.reps):
            for name, config in (("bonded", BONDED), ("linear", LINEAR)):
                r = run(a.talus, config, threads, out / f"bonded_{name}")
                results.setdefault((name, threads), []).append(r)
                print(
                    f"{name:7s} threads {threads} rep {rep}: "
                    f"{r['particle_steps_per_s']:.3e} particle steps/s, "
                    f"{r['ns_per_contact_step']:.1f} ns per contact-step "
                    f"({r['contacts']} contacts)",
                    flush=True,
                )
    print("medians:")
    for threads in sorted({t for _, t in results}):
        med = {
            name: {
                k: statistics.median(r[k] for r in results[(name, threads)])
                for k in ("particle_steps_per_s", "ns_per_contact_step")
            }
            for name in ("bonded", "linear")
        }
        ratio = med["bonded"]["ns_per_contact_step"] / med["linear"]["ns_per_contact_step"]
        for name in ("bonded", "linear"):
            m = med[name]
            print(
                f"  {name:7s} threads {threads}: {m['particle_steps_per_s']:.3e} particle steps/s, "
                f"{m['ns_per_contact_step']:.1f} ns per contact-step"
            )
        print(f"  threads {threads}: bonded / linear cost per contact {ratio:.2f}")


if __name__ == "__main__":
    main()
