# Yade side of the rigid-block benchmark ("blocks"): N random convex
# polyhedra on a loose lattice in an open box fall and settle under gravity.
#
# Run it through Yade (it is not a plain Python script), one thread:
#   yade -j1 -n -x tools/bench/peers/yade_blocks.py [options]
# tools/bench/yade_blocks.sh wraps this. Options (each also read from the
# environment variable in brackets; the command line wins):
#   --n N            number of blocks (BLOCKS_N, default 1000)
#   --lattice AxBxC  lattice columns x rows x layers (BLOCKS_LATTICE; default
#                    10x10x10 for N = 1000, 25x20x20 for N = 10000, else
#                    about cubic); the first N sites are filled, bottom up
#   --seed S         generator seed (BLOCKS_SEED, default 1)
#   --steps S        timed steps (BLOCKS_STEPS, default 200)
#   --warmup W       untimed steps run before the timed ones (BLOCKS_WARMUP,
#                    default 0); the state file is written after them
#   --dt DT|auto     timestep in s (BLOCKS_DT, default 1e-5); "auto": below
#   --law volume|linear   contact law (BLOCKS_LAW, default volume)
#   --verlet D       collider sweep distance in m (BLOCKS_VERLET, default
#                    1e-4); 0 re-sorts the bounds every step
#   --state FILE     write the start state (before the timed steps) as JSON
#                    (BLOCKS_STATE; default none)
#   --obj FILE       write the same blocks as OBJ, one object per block
#                    (BLOCKS_OBJ; default none)
#   --result FILE    append the result line as JSON (BLOCKS_RESULT)
#
# The case (the full description is in docs/benchmarks.md, "Blocks"):
# - Shapes: each block is the convex hull of K points, K drawn uniform in
#   [8, 20], with exactly K hull vertices: a point is a direction uniform
#   on the unit sphere (z uniform in [-1, 1], azimuth uniform) times
#   R0 (1 - ROUGH u), u uniform in [0, 1), R0 = 5 mm, ROUGH = 0.2; points
#   are added one at a time until the hull has K vertices (each point adds
#   at most one). That is the distribution of talus's `random_block`
#   (semi-axes 5, 5, 5 mm, roughness 0.2), drawn here with numpy's
#   `default_rng(seed)` instead of ChaCha8, so the blocks themselves differ;
#   the state file carries them over. A block with less than MIN_VOLUME of
#   the R0 sphere's volume (a sliver) or a vertex farther than REACH from
#   its centroid is drawn again. Yade's own random Polyhedra (Voronoi cells
#   from C rand()) fix neither the vertex count nor the generator.
# - Placement: block k goes to lattice site (i, j, l), k = i + NX (j + NY l)
#   (bottom layer first), centroid at ((i + 1/2) S, (j + 1/2) S,
#   (l + 1/2) S), S = 12 mm, in a uniformly random orientation, at rest.
#   With REACH = 5.75 mm no two blocks touch, nor a block and a wall.
# - Box: open top, floor z = 0, sides x = 0, NX S and y = 0, NY S, made of
#   five fixed polyhedral plates 10 mm thick outside the box, the side
#   plates up to z = (NZ + 1) S. Plates do not collide with one another
#   (mask 6 against the collider's avoidSelfInteractionMask 4; blocks 3).
# - Material: density 2500 kg/m^3. Yade's Ip2 combines two materials in
#   series (kn = E1 E2 / (E1 + E2), ks likewise from E nu), so every
#   material gets young = 2 kn and poisson = ks / kn.
# - volume law: Ig2_Polyhedra_Polyhedra_PolyhedraGeom +
#   Ip2_PolyhedraMat_PolyhedraMat_PolyhedraPhys +
#   Law2_PolyhedraGeom_PolyhedraPhys_Volumetric: Fn = Kn V (V the overlap
#   volume, Kn = 1e10 N/m^3), shear spring ks = 5e4 N/m (constant, on the
#   incremental shear displacement at the overlap's centroid), Coulomb cap
#   mu Fn with mu = 0.5 (frictionAngle = atan 0.5). No dashpot.
# - linear law: Ig2_Polyhedra_Polyhedra_ScGeom (experimental in Yade) +
#   the same Ip2 + Law2_ScGeom_FrictPhys_CundallStrack: Fn = kn d with
#   kn = 3e5 N/m, the ScGeom normal along the line between the centroids
#   and d the approach since the contact was created; ks = 5e4 N/m,
#   mu = 0.5.
# - Motion: NewtonIntegrator, gravity 9.81 m/s^2 along -z, local (Cundall)
#   damping 0.3, exact rotation of aspherical bodies (Yade's default).
# - dt default 1e-5 s. With A_max the largest face of any block and m_min
#   the smallest block mass, a face-to-face contact of two such blocks has
#   the tangent stiffness Kn A_max and 2/omega = 2 sqrt((m_min/2) / (Kn A_max))
#   (printed as dt_face); "auto" is 0.8 sqrt((m_min/2) / (Kn A_max)), the
#   bound talus documents for its volume model (printed as dt_auto).
# - Vertices go to Yade already in principal axes (see `principal`).
#
# What is timed: O.run(steps, True) only, i.e. `steps` whole engine loops
# (collider, geometry, law, integrator); the first of them also sorts the
# bounds from scratch. Building the scene, the warm-up and the output
# files are not timed.
import json
import math
import os
import sys
import time

import numpy as np
from scipy.spatial import ConvexHull

from yade import O, Vector3, Quaternion, polyhedra_utils
from yade import (ForceResetter, InsertionSortCollider, Bo1_Polyhedra_Aabb, InteractionLoop,
                  Ig2_Polyhedra_Polyhedra_PolyhedraGeom, Ig2_Polyhedra_Polyhedra_ScGeom,
                  Ip2_PolyhedraMat_PolyhedraMat_PolyhedraPhys, Law2_PolyhedraGeom_PolyhedraPhys_Volumetric,
                  Law2_ScGeom_FrictPhys_CundallStrack, NewtonIntegrator, PolyhedraMat)
import yade

R0 = 5e-3            # m, radius of the sphere the points are drawn in
ROUGH = 0.2          # radius factor uniform in [1 - ROUGH, 1]
K_MIN, K_MAX = 8, 20  # hull vertex count, uniform
SPACING = 12e-3      # m, lattice spacing
REACH = 5.75e-3      # m, largest distance of a vertex from the block's centroid (redrawn beyond)
MIN_VOLUME = 0.15    # least block volume, as a fraction of the sphere of radius R0 (redrawn below)
PLATE = 10e-3        # m, wall plate thickness
RHO = 2500.0         # kg/m^3
KN_VOLUME = 1e10     # N/m^3
KN_LINEAR = 3e5      # N/m
KS = 5e4             # N/m (both laws)
MU = 0.5
DAMPING = 0.3
GRAVITY = 9.81
DT_DEFAULT = 1e-5


def options():
    spec = {  # name: (env var, default)
        'n': ('BLOCKS_N', '1000'), 'lattice': ('BLOCKS_LATTICE', ''), 'seed': ('BLOCKS_SEED', '1'),
        'steps': ('BLOCKS_STEPS', '200'), 'warmup': ('BLOCKS_WARMUP', '0'), 'dt': ('BLOCKS_DT', str(DT_DEFAULT)),
        'law': ('BLOCKS_LAW', 'volume'), 'verlet': ('BLOCKS_VERLET', '1e-4'), 'state': ('BLOCKS_STATE', ''),
        'obj': ('BLOCKS_OBJ', ''), 'result': ('BLOCKS_RESULT', ''),
    }
    opt = {k: os.environ.get(env, d) for k, (env, d) in spec.items()}
    args = sys.argv[1:]
    while args:
        a = args.pop(0)
        key = a[2:] if a.startswith('--') else None
        if key not in spec or not args:
            sys.exit(f'yade_blocks.py: bad argument {a!r}; options: ' + ' '.join('--' + k for k in spec))
        opt[key] = args.pop(0)
    n = int(opt['n'])
    if opt['lattice']:
        dims = tuple(int(x) for x in opt['lattice'].lower().split('x'))
    elif n == 1000:
        dims = (10, 10, 10)
    elif n == 10000:
        dims = (25, 20, 20)
    else:
        nz = max(1, round(n ** (1 / 3)))
        nx = math.ceil(math.sqrt(n / nz))
        dims = (nx, math.ceil(n / (nx * nz)), nz)
    if len(dims) != 3 or dims[0] * dims[1] * dims[2] < n:
        sys.exit(f'yade_blocks.py: lattice {dims} has fewer than {n} sites')
    if opt['law'] not in ('volume', 'linear'):
        sys.exit('yade_blocks.py: --law must be volume or linear')
    return dict(n=n, dims=dims, seed=int(opt['seed']), steps=int(opt['steps']), warmup=int(opt['warmup']),
                dt=opt['dt'], law=opt['law'], verlet=float(opt['verlet']), state=opt['state'], obj=opt['obj'],
                result=opt['result'])


def random_points(rng, k):
    """Convex hull vertices of a random block with exactly k of them (m, about the drawing centre)."""
    def draw():
        z = rng.uniform(-1.0, 1.0)
        azimuth = rng.uniform(0.0, 2.0 * math.pi)
        ring = math.sqrt(max(0.0, 1.0 - z * z))
        r = R0 * (1.0 - ROUGH * rng.random())
        return [ring * math.cos(azimuth) * r, ring * math.sin(azimuth) * r, z * r]
    pts = [draw() for _ in range(k)]
    for _ in range(64 * k + 256):
        hull = ConvexHull(np.array(pts))
        if len(hull.vertices) >= k:
            return np.array(pts)[np.sort(hull.vertices)]
        pts.append(draw())
    raise RuntimeError('random block: hull kept too few vertices')


def principal(points):
    """points re-expressed about their hull's centroid in its principal axes (ascending moments).

    Yade's Polyhedra diagonalises the inertia tensor only when the sum of its
    off-diagonal terms exceeds 1e-13 m^5 in absolute terms; a 1 cm block's
    moments are about 1e-12 m^5, so it would keep the diagonal of a tensor
    that is not diagonal. Handing it vertices already in principal axes
    avoids that.
    """
    hull = ConvexHull(points)
    o = points.mean(axis=0)
    vol, first, second = 0.0, np.zeros(3), np.zeros((3, 3))
    for s in hull.simplices:
        a, b, c = points[s] - o
        v = np.dot(a, np.cross(b, c)) / 6.0
        if v < 0:  # Qhull does not orient its triangles
            b, c, v = c, b, -v
        vol += v
        first += v * (a + b + c) / 4.0
        t = a + b + c
        second += v / 20.0 * (np.outer(a, a) + np.outer(b, b) + np.outer(c, c) + np.outer(t, t))
    centroid = first / vol
    cov = second - vol * np.outer(centroid, centroid)
    inertia = np.trace(cov) * np.eye(3) - cov
    _, axes = np.linalg.eigh(inertia)
    if np.linalg.det(axes) < 0:
        axes[:, 2] *= -1
    return (points - o - centroid) @ axes


def random_rotation(rng):
    """Uniformly distributed rotation (Shoemake), as a Yade Quaternion."""
    u1, u2, u3 = rng.random(3)
    a, b = math.sqrt(1.0 - u1), math.sqrt(u1)
    x, y = a * math.sin(2 * math.pi * u2), a * math.cos(2 * math.pi * u2)
    z, w = b * math.sin(2 * math.pi * u3), b * math.cos(2 * math.pi * u3)
    q = Quaternion(w, x, y, z)
    q.normalize()
    return q


def plate(mat, lo, hi):
    """A fixed box-shaped polyhedron [lo, hi] used as a wall."""
    v = [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    b = polyhedra_utils.polyhedra(mat, v=v, fixed=True, mask=6)
    b.state.pos = Vector3(*[(l + h) / 2 for l, h in zip(lo, hi)])
    return b


def face_areas(points):
    """Areas of the hull's faces, coplanar triangles merged (m^2)."""
    hull = ConvexHull(points)
    faces = {}
    for simplex, eq in zip(hull.simplices, hull.equations):
        p = points[simplex]
        area = 0.5 * np.linalg.norm(np.cross(p[1] - p[0], p[2] - p[0]))
        key = tuple(np.round(eq, 9))
        faces[key] = faces.get(key, 0.0) + area
    return list(faces.values())


def world_vertices(b):
    rot = b.state.ori.toRotationMatrix()
    return [list(b.state.pos + rot * v) for v in b.shape.v]


def outward_triangles(verts):
    """Triangles of the hull of verts, wound counter-clockwise seen from outside (indices into verts)."""
    pts = np.array(verts)
    hull = ConvexHull(pts)
    centre = pts.mean(axis=0)
    tris = []
    for s in hull.simplices:
        a, b, c = pts[s]
        if np.dot(np.cross(b - a, c - a), a - centre) < 0:
            s = [s[0], s[2], s[1]]
        tris.append([int(i) for i in s])
    return tris


def count_contacts(block_ids):
    """(potential pairs, touching block-block, touching block-wall)."""
    pairs = bb = bw = 0
    for i in O.interactions:
        if not i.isReal:
            continue
        pairs += 1
        if i.phys.normalForce.norm() == 0:
            continue
        both = i.id1 in block_ids and i.id2 in block_ids
        if both:
            bb += 1
        else:
            bw += 1
    return pairs, bb, bw


def kinetic(blocks):
    """Translational kinetic energy of the blocks (J)."""
    return sum(0.5 * b.state.mass * b.state.vel.squaredNorm() for b in blocks)


def main():
    opt = options()
    n, (nx, ny, nz) = opt['n'], opt['dims']
    rng = np.random.default_rng(opt['seed'])
    lx, ly, height = nx * SPACING, ny * SPACING, (nz + 1) * SPACING
    kn = KN_VOLUME if opt['law'] == 'volume' else KN_LINEAR
    fric = math.atan(MU)
    block_mat = PolyhedraMat(density=RHO, young=2 * kn, poisson=KS / kn, frictionAngle=fric, label='blocks')
    wall_mat = PolyhedraMat(density=RHO, young=2 * kn, poisson=KS / kn, frictionAngle=fric, label='walls')
    O.materials.append(block_mat)
    O.materials.append(wall_mat)

    walls = [
        plate(wall_mat, (0, 0, -PLATE), (lx, ly, 0)),
        plate(wall_mat, (-PLATE, -PLATE, 0), (0, ly + PLATE, height)),
        plate(wall_mat, (lx, -PLATE, 0), (lx + PLATE, ly + PLATE, height)),
        plate(wall_mat, (0, -PLATE, 0), (lx, 0, height)),
        plate(wall_mat, (0, ly, 0), (lx, ly + PLATE, height)),
    ]
    wall_ids = set(O.bodies.append(walls))

    t0 = time.perf_counter()
    blocks, max_face, min_mass, max_reach, n_vertices, redrawn = [], 0.0, math.inf, 0.0, [], 0
    for k in range(n):
        i, j, l = k % nx, (k // nx) % ny, k // (nx * ny)
        while True:  # redraw slivers and blocks that would not fit their lattice cell
            count = int(rng.integers(K_MIN, K_MAX + 1))
            pts = principal(random_points(rng, count))
            if (np.max(np.linalg.norm(pts, axis=1)) <= REACH
                    and ConvexHull(pts).volume >= MIN_VOLUME * 4 / 3 * math.pi * R0 ** 3):
                break
            redrawn += 1
        b = polyhedra_utils.polyhedra(block_mat, v=[list(p) for p in pts], mask=3)
        if len(b.shape.v) != count:
            raise RuntimeError(f'block {k}: Yade kept {len(b.shape.v)} of {count} vertices')
        # polyhedra() puts the body at its centroid in principal axes; turn it and move it to its site.
        b.state.ori = random_rotation(rng) * b.state.ori
        b.state.pos = Vector3((i + 0.5) * SPACING, (j + 0.5) * SPACING, (l + 0.5) * SPACING)
        reach = max(v.norm() for v in b.shape.v)
        max_reach = max(max_reach, reach)
        max_face = max(max_face, max(face_areas(np.array([list(v) for v in b.shape.v]))))
        min_mass = min(min_mass, b.state.mass)
        n_vertices.append(count)
        blocks.append(b)
    if max_reach > REACH + 1e-12:
        sys.exit(f'yade_blocks.py: Yade moved a block: it reaches {max_reach:.4e} m from its centroid')
    block_ids = set(O.bodies.append(blocks))
    t_build = time.perf_counter() - t0

    dt_face = 2 * math.sqrt((min_mass / 2) / (KN_VOLUME * max_face))
    dt_auto = 0.8 * dt_face / 2
    dt = dt_auto if opt['dt'] == 'auto' else float(opt['dt'])

    if opt['law'] == 'volume':
        ig2, law2 = Ig2_Polyhedra_Polyhedra_PolyhedraGeom(), Law2_PolyhedraGeom_PolyhedraPhys_Volumetric()
    else:
        ig2, law2 = Ig2_Polyhedra_Polyhedra_ScGeom(), Law2_ScGeom_FrictPhys_CundallStrack()
    O.engines = [
        ForceResetter(),
        InsertionSortCollider([Bo1_Polyhedra_Aabb()], verletDist=opt['verlet'], avoidSelfInteractionMask=4),
        InteractionLoop([ig2], [Ip2_PolyhedraMat_PolyhedraMat_PolyhedraPhys()], [law2]),
        NewtonIntegrator(damping=DAMPING, gravity=(0, 0, -GRAVITY)),
    ]
    O.dt = dt

    # The warm-up runs in chunks so that a long one shows its progress (and where it stops, should Yade crash).
    done, chunk, t_warm = 0, 1000, time.perf_counter()
    while done < opt['warmup']:
        step = min(chunk, opt['warmup'] - done)
        O.run(step, True)
        done += step
        pairs, bb, bw = count_contacts(block_ids)
        print(f'warmup step={done} t={O.time:.4g} wall_s={time.perf_counter() - t_warm:.1f} aabb_pairs={pairs} '
              f'contacts_bb={bb} contacts_bw={bw} kinetic_j={kinetic(blocks):.3e}', flush=True)

    if opt['state']:
        write_state(opt, blocks, walls, dt, (lx, ly, height), n_vertices)
    if opt['obj']:
        write_obj(opt['obj'], blocks)

    start = time.perf_counter()
    O.run(opt['steps'], True)
    loop_s = time.perf_counter() - start

    pairs, bb, bw = count_contacts(block_ids)
    zs = [b.state.pos[2] for b in blocks]
    ke = kinetic(blocks)
    res = dict(code='yade', version=yade.config.version if hasattr(yade.config, 'version') else '',
               law=opt['law'], N=n, lattice='x'.join(map(str, opt['dims'])), seed=opt['seed'],
               threads=O.numThreads, warmup=opt['warmup'], steps=opt['steps'], dt=dt, loop_s=loop_s,
               s_per_step=loop_s / opt['steps'], steps_per_s=opt['steps'] / loop_s,
               block_steps_per_s=n * opt['steps'] / loop_s, aabb_pairs=pairs, contacts_bb=bb, contacts_bw=bw,
               contacts_per_block=(bb + bw) / n, mean_z=sum(zs) / n, min_z=min(zs), kinetic_j=ke,
               build_s=t_build, redrawn=redrawn, dt_auto=dt_auto, dt_face=dt_face, min_mass=min_mass, max_face=max_face,
               time_s=O.time)
    print('yade_blocks ' + ' '.join(f'{k}={v:.4g}' if isinstance(v, float) else f'{k}={v}'
                                     for k, v in res.items()), flush=True)
    if opt['result']:
        with open(opt['result'], 'a') as f:
            f.write(json.dumps(res) + '\n')


def write_state(opt, blocks, walls, dt, box, n_vertices):
    """The start state as JSON (format in docs/benchmarks.md, "Blocks")."""
    def quat(q):  # Yade indexes (x, y, z, w); written as [w, x, y, z]
        return [q[3], q[0], q[1], q[2]]
    lx, ly, height = box
    state = {
        'format': 'talus-blocks-state 1',
        'producer': 'tools/bench/peers/yade_blocks.py',
        'units': 'SI (m, kg, s, rad)',
        'case': {
            'law': opt['law'], 'n': len(blocks), 'lattice': list(opt['dims']), 'seed': opt['seed'],
            'spacing': SPACING, 'r0': R0, 'roughness': ROUGH, 'vertices': [K_MIN, K_MAX],
            'density': RHO, 'gravity': [0.0, 0.0, -GRAVITY], 'dt': dt, 'local_damping': DAMPING,
            'kn_volume': KN_VOLUME, 'kn_linear': KN_LINEAR, 'ks': KS, 'friction': MU,
            'warmup_steps': opt['warmup'], 'time': O.time,
        },
        'box': {'min': [0.0, 0.0, 0.0], 'max': [lx, ly, height], 'open': ['+z']},
        'walls': [{'min': list(np.min(world_vertices(w), axis=0)), 'max': list(np.max(world_vertices(w), axis=0))}
                  for w in walls],
        'blocks': [],
    }
    for b in blocks:
        state['blocks'].append({
            'id': len(state['blocks']),
            'position': list(b.state.pos),
            'orientation': quat(b.state.ori),
            'local_vertices': [list(v) for v in b.shape.v],
            'vertices': world_vertices(b),
            'volume': b.shape.GetVolume(),
            'mass': b.state.mass,
            'inertia': list(b.state.inertia),
            'velocity': list(b.state.vel),
            'angular_velocity': list(b.state.angVel),
        })
    with open(opt['state'], 'w') as f:
        json.dump(state, f, separators=(',', ':'))


def write_obj(path, blocks):
    """The blocks as OBJ, one object per block in world coordinates, faces wound outwards."""
    with open(path, 'w') as f:
        f.write('# yade_blocks.py start state: one object per block, world coordinates (m)\n')
        base = 1
        for k, b in enumerate(blocks):
            verts = world_vertices(b)
            f.write(f'o block{k}\n')
            for v in verts:
                f.write(f'v {v[0]:.17g} {v[1]:.17g} {v[2]:.17g}\n')
            for t in outward_triangles(verts):
                f.write(f'f {t[0] + base} {t[1] + base} {t[2] + base}\n')
            base += len(verts)


main()
