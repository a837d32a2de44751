#!/usr/bin/env python3
"""Shape benchmark: clumps of four pebbles, or superellipsoids, settling beside balls settling.

Usage: python3 tools/bench/clumps.py [--case clumps|superquadrics] [--reps N] [--threads 1,2] [--talus BIN]

With --case superquadrics it runs configs/bench/superquadrics1k.toml (1000
superellipsoids of exponent 4 collapsing from a lattice into a box; the
superquadric plugin built first: cargo build --release -p
talus-plugin-superquadric) in place of the clumps, the same way.

Runs configs/bench/clumps10k.toml (10 164 clumps of four 1 mm pebbles
collapsing from a lattice into a box) and configs/bench/settle10k.toml
(10 000 balls of 1 mm, the same physics and timestep), alternating the
two, REPS times per thread count. From each run's summary it takes the
loop's wall time, each stage's share of it and the contacts at the end,
and prints per run: body steps per second, pebble (piece) steps per
second, the contact pass's nanoseconds per contact and step and per
active contact and step (its time over steps times the final count: both
cases collapse a lattice, so the final count stands for the run in both),
and the law of motion's nanoseconds per body and step; then the medians
per case and thread count and the ratios clump / ball of the contact
pass's cost per contact.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHAPES = {
    "clumps": (ROOT / "configs/bench/clumps10k.toml", 4, "clumps"),
    "superquadrics": (ROOT / "configs/bench/superquadrics1k.toml", 1, "blocks"),
}
BALLS = (ROOT / "configs/bench/settle10k.toml", 1, "balls")


def run(talus: str, case: tuple, threads: int, out: Path) -> dict:
    config, pieces, rows = case
    o = subprocess.run(
        [talus, "run", str(config), "--threads", str(threads), "--out", str(out)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    wall = float(re.search(r"wall time\s+([\d.e+-]+) s", o).group(1))
    steps = int(re.search(r"^steps\s+(\d+)", o, re.M).group(1))
    share = {
        name: float(value) / 100.0
        for name, value in re.findall(r"(\w+) ([\d.]+) %", o.split("time by stage")[1].splitlines()[0])
    }
    found = re.search(r"^contacts\s+(\d+) \((\d+) active", o, re.M)
    contacts, active = int(found.group(1)), int(found.group(2))
    bodies = int(re.search(rf"^{rows}\s+(\d+)", o, re.M).group(1))
    return {
        "body_steps_per_s": bodies * steps / wall,
        "piece_steps_per_s": bodies * pieces * steps / wall,
        "ns_per_contact_step": 1e9 * wall * share["contacts"] / (steps * contacts),
        "ns_per_active_step": 1e9 * wall * share["contacts"] / (steps * active),
        "ns_per_body_step_motion": 1e9 * wall * share["motion"] / (steps * bodies),
        "contacts": contacts,
        "active": active,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=sorted(SHAPES), default="clumps")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--talus", default=str(ROOT / "target/release/talus"))
    a = ap.parse_args()
    keys = (
        "body_steps_per_s",
        "piece_steps_per_s",
        "ns_per_contact_step",
        "ns_per_active_step",
        "ns_per_body_step_motion",
    )
    cases = {a.case: SHAPES[a.case], "balls": BALLS}
    results: dict[tuple[str, int], list[dict]] = {}
    for threads in (int(t) for t in a.threads.split(",")):
        for rep in range(a.reps):
            for name, case in cases.items():
                r = run(a.talus, case, threads, ROOT / f"tools/bench/out/shapes_{name}")
                results.setdefault((name, threads), []).append(r)
                print(
                    f"{name:13s} threads {threads} rep {rep}: "
                    f"{r['body_steps_per_s']:.3e} body steps/s, "
                    f"{r['piece_steps_per_s']:.3e} piece steps/s, "
                    f"contacts {r['ns_per_contact_step']:.1f} ns per contact-step "
                    f"({r['ns_per_active_step']:.1f} per active), "
                    f"motion {r['ns_per_body_step_motion']:.1f} ns per body-step "
                    f"({r['contacts']} contacts, {r['active']} active)",
                    flush=True,
                )
    print("medians:")
    for threads in sorted({t for _, t in results}):
        med = {
            name: {k: statistics.median(r[k] for r in results[(name, threads)]) for k in keys}
            for name in cases
        }
        for name in cases:
            m = med[name]
            print(
                f"  {name:13s} threads {threads}: {m['body_steps_per_s']:.3e} body steps/s, "
                f"{m['piece_steps_per_s']:.3e} piece steps/s, "
                f"{m['ns_per_contact_step']:.1f} ns per contact-step "
                f"({m['ns_per_active_step']:.1f} per active), "
                f"motion {m['ns_per_body_step_motion']:.1f} ns per body-step"
            )
        per = {k: med[a.case][k] / med["balls"][k] for k in ("ns_per_contact_step", "ns_per_active_step")}
        print(
            f"  threads {threads}: {a.case} / balls contact pass per contact {per['ns_per_contact_step']:.2f}, "
            f"per active contact {per['ns_per_active_step']:.2f}"
        )


if __name__ == "__main__":
    main()
