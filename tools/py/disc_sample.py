"""Writes the ball centres of a disc-shaped sample for configs/brazilian.toml.

Balls sit on a face-centred cubic lattice whose nearest neighbours are one
diameter apart (the lattice turned about the disc's axis so that no lattice
plane lines up with the load), cut to a disc of the given radius and
thickness with its axis along y; each radius is shrunk by up to `shrink` at
random, so that neighbours are near (bonded with a small gap) but not
forced together. Only the standard library is used.

    python3 tools/py/disc_sample.py > configs/data/brazilian_disc.csv
"""

import argparse
import math
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--radius", type=float, default=1e-3, help="ball radius (m)")
    ap.add_argument("--disc", type=float, default=20e-3, help="disc radius (m)")
    ap.add_argument("--thickness", type=float, default=6e-3, help="disc thickness (m)")
    ap.add_argument("--shrink", type=float, default=0.08, help="largest relative shrink of a radius")
    ap.add_argument("--turn", type=float, default=17.0, help="lattice turn about y (degrees)")
    ap.add_argument("--seed", type=int, default=3)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    # Cubic cell of the FCC lattice with nearest neighbours 2R apart.
    cell = 2.0 * a.radius * math.sqrt(2.0)
    basis = [(0, 0, 0), (0.5, 0.5, 0), (0.5, 0, 0.5), (0, 0.5, 0.5)]
    n = int(math.ceil(a.disc / cell)) + 2
    c, s = math.cos(math.radians(a.turn)), math.sin(math.radians(a.turn))
    print("x,y,z,radius")
    for i in range(-n, n + 1):
        for j in range(-n, n + 1):
            for k in range(-n, n + 1):
                for bx, by, bz in basis:
                    x0, y, z0 = (i + bx) * cell, (j + by) * cell, (k + bz) * cell
                    x, z = c * x0 + s * z0, -s * x0 + c * z0
                    if math.hypot(x, z) > a.disc - a.radius:
                        continue
                    if abs(y) > 0.5 * a.thickness - a.radius:
                        continue
                    r = a.radius * (1.0 - a.shrink * rng.random())
                    print(f"{x:.9e},{y:.9e},{z:.9e},{r:.9e}")


if __name__ == "__main__":
    main()
