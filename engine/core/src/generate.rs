//! Ball and block generators: random non-overlapping placement and simple
//! cubic lattices, the placement behind `kind = "random"` and
//! `kind = "lattice"` of a config's `[[balls]]` and `[[blocks]]`, and
//! usable as they are by code that builds a
//! [`Simulation`](crate::Simulation) without one.
//!
//! Reads: counts, radii or block shapes, a box region and a seed. Writes:
//! centres and radii, or block poses (shape, centroid, orientation).
//! Invariant: the same arguments give the same bodies (ChaCha8 stream
//! seeded from the given seed; ball lattices use no randomness). Random
//! block orientations also go through `sin`/`cos`, so their last bits are
//! those of the platform's maths library.
//!
//! Random fills keep bodies apart by bounding spheres: a block counts as
//! the sphere of its shape's `radius` about its centroid, which never
//! underestimates it, so no two bodies of a fill overlap, but blocks end up
//! farther apart than they need to.

use crate::block::BlockShape;
use crate::clump::ClumpTemplate;
use crate::math::{Aabb, Quat, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;

/// Radius distribution of a random generator, m.
///
/// A validated config (talus-config) guarantees `0 < r` for `Fixed(r)`
/// and `0 < rmin <= rmax` for `Uniform(rmin, rmax)`; [`random_balls`]
/// assumes the same and does not check it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RadiusDist {
    /// Every ball has this radius (m).
    Fixed(f64),
    /// Uniform in `[rmin, rmax]` (m).
    Uniform(f64, f64),
}

impl RadiusDist {
    /// The smallest radius the distribution can produce (m).
    pub fn min(&self) -> f64 {
        match *self {
            RadiusDist::Fixed(r) | RadiusDist::Uniform(r, _) => r,
        }
    }

    /// The largest radius the distribution can produce (m).
    pub fn max(&self) -> f64 {
        match *self {
            RadiusDist::Fixed(r) | RadiusDist::Uniform(_, r) => r,
        }
    }
}

/// Places `count` balls at random in `region` without overlapping each
/// other or `existing` balls. Each ball lies wholly inside the region;
/// the new balls come in Z order over it (see `sort_spatially`). Gives up
/// with a message when a ball finds no place in `max_attempts` tries.
pub fn random_balls(
    count: usize,
    radius: RadiusDist,
    region: Aabb,
    seed: u64,
    max_attempts: usize,
    existing: &[(Vec3, f64)],
) -> Result<Vec<(Vec3, f64)>, String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let draw = |rng: &mut ChaCha8Rng| {
        let r = match radius {
            RadiusDist::Fixed(r) => r,
            RadiusDist::Uniform(a, b) => {
                if a == b {
                    a
                } else {
                    rng.random_range(a..=b)
                }
            }
        };
        (r, ())
    };
    let spheres = SpherePlacement {
        count,
        region,
        max_attempts,
        existing,
        largest: radius.max(),
    };
    match spheres.place(&mut rng, draw) {
        Ok(balls) => Ok(balls.into_iter().map(|(p, r, ())| (p, r)).collect()),
        Err(Refusal::TooBig { radius, .. }) => Err(format!(
            "a ball of radius {radius} m does not fit in the region at all"
        )),
        Err(Refusal::Full { index, placed }) => Err(format!(
            "cannot fit {count} balls: ball {} found no free place in {max_attempts} attempts (placed {placed}); enlarge the region, reduce the count or the radius",
            index + 1
        )),
    }
}

/// Why [`SpherePlacement::place`] gave up.
enum Refusal<T> {
    /// A sphere larger than the region; `what` is what came with it.
    TooBig { radius: f64, what: T },
    /// Sphere `index` (from 0) found no free place; `placed` were placed.
    Full { index: usize, placed: usize },
}

/// Random sequential placement of non-overlapping spheres in a box: the
/// one algorithm behind the random ball and block fills.
struct SpherePlacement<'a> {
    /// Spheres to place.
    count: usize,
    /// Every sphere lies wholly inside it.
    region: Aabb,
    /// Centres tried per sphere.
    max_attempts: usize,
    /// Spheres placed before, to keep clear of (centre, radius).
    existing: &'a [(Vec3, f64)],
    /// The largest radius a new sphere can have (m).
    largest: f64,
}

impl SpherePlacement<'_> {
    /// Places the spheres: for each, `draw` gives its radius and what goes
    /// with it, then centres uniform in the region shrunk by the radius are
    /// tried until one keeps clear of every sphere so far. The result is in
    /// Z order over the region (see [`sort_spatially`]).
    fn place<T>(
        &self,
        rng: &mut ChaCha8Rng,
        mut draw: impl FnMut(&mut ChaCha8Rng) -> (f64, T),
    ) -> Result<Vec<(Vec3, f64, T)>, Refusal<T>> {
        let region = self.region;
        let r_max_all = self
            .existing
            .iter()
            .map(|e| e.1)
            .fold(self.largest, f64::max);
        let cell = 2.0 * r_max_all;
        let key = |p: Vec3| -> (i64, i64, i64) {
            (
                (p.x / cell).floor() as i64,
                (p.y / cell).floor() as i64,
                (p.z / cell).floor() as i64,
            )
        };
        let mut grid: FxHashMap<(i64, i64, i64), Vec<usize>> = FxHashMap::default();
        let mut placed: Vec<(Vec3, f64)> = self.existing.to_vec();
        for (k, &(p, _)) in placed.iter().enumerate() {
            grid.entry(key(p)).or_default().push(k);
        }
        let first_new = placed.len();
        let mut payload = Vec::with_capacity(self.count);
        for n in 0..self.count {
            let (r, what) = draw(rng);
            let lo = region.min + Vec3::splat(r);
            let hi = region.max - Vec3::splat(r);
            if lo.cmpgt(hi).any() {
                return Err(Refusal::TooBig { radius: r, what });
            }
            let mut done = false;
            for _ in 0..self.max_attempts {
                let p = Vec3::new(
                    if lo.x < hi.x {
                        rng.random_range(lo.x..hi.x)
                    } else {
                        lo.x
                    },
                    if lo.y < hi.y {
                        rng.random_range(lo.y..hi.y)
                    } else {
                        lo.y
                    },
                    if lo.z < hi.z {
                        rng.random_range(lo.z..hi.z)
                    } else {
                        lo.z
                    },
                );
                let (cx, cy, cz) = key(p);
                let mut free = true;
                'scan: for dx in -1..=1 {
                    for dy in -1..=1 {
                        for dz in -1..=1 {
                            if let Some(list) = grid.get(&(cx + dx, cy + dy, cz + dz)) {
                                for &j in list {
                                    let (q, rq) = placed[j];
                                    if (p - q).length_squared() < (r + rq) * (r + rq) {
                                        free = false;
                                        break 'scan;
                                    }
                                }
                            }
                        }
                    }
                }
                if free {
                    grid.entry((cx, cy, cz)).or_default().push(placed.len());
                    placed.push((p, r));
                    done = true;
                    break;
                }
            }
            if !done {
                return Err(Refusal::Full {
                    index: n,
                    placed: n,
                });
            }
            payload.push(what);
        }
        let mut spheres: Vec<(Vec3, f64, T)> = placed
            .split_off(first_new)
            .into_iter()
            .zip(payload)
            .map(|((p, r), what)| (p, r, what))
            .collect();
        sort_spatially(&mut spheres, |s| s.0, region);
        Ok(spheres)
    }
}

/// Spreads the low 21 bits of `v` to every third bit.
fn spread3(v: u64) -> u64 {
    let mut x = v & 0x1f_ffff;
    x = (x | x << 32) & 0x1f00000000ffff;
    x = (x | x << 16) & 0x1f0000ff0000ff;
    x = (x | x << 8) & 0x100f00f00f00f00f;
    x = (x | x << 4) & 0x10c30c30c30c30c3;
    (x | x << 2) & 0x1249249249249249
}

/// Orders bodies along a Z-order (Morton) curve over `region` by their
/// centres (`pos`), so bodies close in space get close ids and close memory
/// slots: the contact loops then touch fewer cache lines. Placement order
/// carries no meaning, so nothing is lost.
fn sort_spatially<T>(bodies: &mut [T], pos: impl Fn(&T) -> Vec3, region: Aabb) {
    let ext = (region.max - region.min).max(Vec3::splat(f64::MIN_POSITIVE));
    let key = |p: Vec3| -> u64 {
        let q = ((p - region.min) / ext).clamp(Vec3::ZERO, Vec3::ONE) * 2_097_151.0;
        spread3(q.x as u64) | spread3(q.y as u64) << 1 | spread3(q.z as u64) << 2
    };
    bodies.sort_by_cached_key(|b| key(pos(b)));
}

/// Number of lattice sites per axis: `counts` if given, else as many
/// cells of size `spacing` as fit in the region along that axis (possibly
/// 0: a validated config has at least one per axis).
pub fn lattice_counts(region: &Aabb, spacing: f64, counts: Option<[usize; 3]>) -> [usize; 3] {
    counts.unwrap_or_else(|| {
        std::array::from_fn(|axis| {
            let len = region.max[axis] - region.min[axis];
            // The small relative slack keeps a region of exactly n spacings
            // from losing a layer to rounding.
            (len / spacing * (1.0 + 1e-12)).floor() as usize
        })
    })
}

/// A simple cubic lattice of balls of one radius: [`lattice_counts`] sites
/// per axis, the first centre at `region.min + spacing/2` on every axis,
/// then steps of `spacing`; x varies fastest, then y, then z. With
/// `spacing >= 2 radius` no two balls overlap and every ball lies wholly
/// inside the region, provided given `counts` times `spacing` fit in it
/// (a validated config guarantees both).
pub fn lattice_balls(
    radius: f64,
    spacing: f64,
    region: Aabb,
    counts: Option<[usize; 3]>,
) -> Vec<(Vec3, f64)> {
    let [nx, ny, nz] = lattice_counts(&region, spacing, counts);
    let mut balls = Vec::with_capacity(nx * ny * nz);
    let coord = |axis: usize, i: usize| region.min[axis] + spacing * (i as f64 + 0.5);
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                balls.push((Vec3::new(coord(0, i), coord(1, j), coord(2, k)), radius));
            }
        }
    }
    balls
}

/// How a block generator orients its blocks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BlockOrientation {
    /// Every block turned by this rotation from the frame its shape was
    /// given in (see [`given_to_world`]); a unit quaternion.
    Fixed(Quat),
    /// Uniformly random orientations ([`uniform_orientation`]).
    Random,
}

/// What a rigid body of a generator is made from: a block's shape or a
/// clump's template, with what placing it needs.
pub trait Template {
    /// The body kind, for messages ("block", "clump").
    const BODY: &'static str;
    /// The name of what it is made from, for messages ("shape",
    /// "template").
    const NOUN: &'static str;
    /// Its name.
    fn name(&self) -> &str;
    /// Volume (m^3).
    fn volume(&self) -> f64;
    /// Principal moments of inertia for unit density (m^5).
    fn unit_moments(&self) -> Vec3;
    /// The centroid in the frame it was given in (m).
    fn input_centroid(&self) -> Vec3;
    /// Pieces a body of it has (a block 1, a clump its pebbles).
    fn pieces(&self) -> usize;
    /// Distance from the centroid to the farthest point (m).
    fn bounding_radius(&self) -> f64;
    /// Rotation from its principal frame to the frame it was given in.
    fn input_rotation(&self) -> Quat;
    /// The axis-aligned box about the centroid of the body turned by
    /// `rotation` (principal frame to world): (lower, upper) corners (m).
    fn turned_extent(&self, rotation: Quat) -> (Vec3, Vec3);
}

impl Template for BlockShape {
    const BODY: &'static str = "block";
    const NOUN: &'static str = "shape";
    fn name(&self) -> &str {
        &self.name
    }
    fn volume(&self) -> f64 {
        self.volume
    }
    fn unit_moments(&self) -> Vec3 {
        self.unit_moments
    }
    fn input_centroid(&self) -> Vec3 {
        self.input_centroid
    }
    fn pieces(&self) -> usize {
        1
    }
    fn bounding_radius(&self) -> f64 {
        self.radius
    }
    fn input_rotation(&self) -> Quat {
        self.input_rotation
    }
    fn turned_extent(&self, rotation: Quat) -> (Vec3, Vec3) {
        let r = self.rounding;
        box_of(self.polyhedron.vertices().iter().map(|&v| (v, r)), rotation)
    }
}

impl Template for ClumpTemplate {
    const BODY: &'static str = "clump";
    const NOUN: &'static str = "shape";
    fn name(&self) -> &str {
        &self.name
    }
    fn volume(&self) -> f64 {
        self.volume
    }
    fn unit_moments(&self) -> Vec3 {
        self.unit_moments
    }
    fn input_centroid(&self) -> Vec3 {
        self.input_centroid
    }
    fn pieces(&self) -> usize {
        self.pebbles.len()
    }
    fn bounding_radius(&self) -> f64 {
        self.radius
    }
    fn input_rotation(&self) -> Quat {
        self.input_rotation
    }
    fn turned_extent(&self, rotation: Quat) -> (Vec3, Vec3) {
        box_of(self.pebbles.iter().copied(), rotation)
    }
}

/// The axis-aligned box of balls `(centre, radius)` turned by `rotation`
/// about the origin: (lower, upper) corners (m).
fn box_of(balls: impl Iterator<Item = (Vec3, f64)>, rotation: Quat) -> (Vec3, Vec3) {
    let mut lo = Vec3::splat(f64::INFINITY);
    let mut hi = Vec3::splat(f64::NEG_INFINITY);
    for (c, r) in balls {
        let p = rotation * c;
        lo = lo.min(p - Vec3::splat(r));
        hi = hi.max(p + Vec3::splat(r));
    }
    (lo, hi)
}

/// What a block (or clump) generator draws from: the shape table, the
/// shapes to use with their weights, and how to orient the bodies.
#[derive(Clone, Copy, Debug)]
pub struct BlockMix<'a, S = BlockShape> {
    /// Every shape (or template) of the simulation, by index.
    pub shapes: &'a [S],
    /// The shapes to use (index into `shapes`) with their weights (>= 0,
    /// at least one > 0): each block takes a shape with probability
    /// proportional to its weight.
    pub choices: &'a [(u32, f64)],
    /// How the blocks are oriented.
    pub orientation: BlockOrientation,
}

impl<S: Template> BlockMix<'_, S> {
    /// A shape and an orientation for the next block.
    fn draw(&self, rng: &mut ChaCha8Rng) -> (&S, u32, Quat) {
        let k = pick_shape(rng, self.choices);
        let shape = &self.shapes[k as usize];
        let turn = match self.orientation {
            BlockOrientation::Fixed(turn) => given_to_world(shape, turn),
            BlockOrientation::Random => uniform_orientation(rng),
        };
        (shape, k, turn)
    }
}

/// A block placed by a generator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlacedBlock {
    /// Shape index.
    pub shape: u32,
    /// Centroid (m).
    pub pos: Vec3,
    /// Rotation from the shape's principal frame to the world, what
    /// [`crate::BlockInit::orientation`] takes.
    pub orientation: Quat,
}

/// The orientation of a block (principal frame to world) whose shape is
/// turned by `turn` from the frame it was given in: users think of a
/// box's edges along x, y, z as written, not of its principal axes.
pub fn given_to_world<S: Template>(shape: &S, turn: Quat) -> Quat {
    (turn * shape.input_rotation()).normalize()
}

/// A rotation drawn uniformly from all rotations (the Haar measure), by
/// Shoemake's method: with `u1, u2, u3` uniform in [0, 1), the unit
/// quaternion `(sqrt(1-u1) sin 2 pi u2, sqrt(1-u1) cos 2 pi u2,
/// sqrt(u1) sin 2 pi u3, sqrt(u1) cos 2 pi u3)` (x, y, z, w) is uniform on
/// the unit 3-sphere.
///
/// # References
/// Shoemake, K. "Uniform random rotations", Graphics Gems III, 124-132,
/// 1992.
pub fn uniform_orientation(rng: &mut impl Rng) -> Quat {
    let (u1, u2, u3): (f64, f64, f64) = (rng.random(), rng.random(), rng.random());
    let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
    let (s2, c2) = (std::f64::consts::TAU * u2).sin_cos();
    let (s3, c3) = (std::f64::consts::TAU * u3).sin_cos();
    Quat::from_xyzw(a * s2, a * c2, b * s3, b * c3)
}

/// Picks a shape index from `(shape, weight)` choices with probability
/// proportional to the weight; a single choice draws nothing.
fn pick_shape(rng: &mut ChaCha8Rng, choices: &[(u32, f64)]) -> u32 {
    if let [(only, _)] = choices {
        return *only;
    }
    let total: f64 = choices.iter().map(|c| c.1).sum();
    let u = rng.random::<f64>() * total;
    let mut sum = 0.0;
    for &(shape, weight) in choices {
        sum += weight;
        if u < sum {
            return shape;
        }
    }
    // Rounding can leave `u` at the very top: the last weighted choice.
    choices
        .iter()
        .rev()
        .find(|c| c.1 > 0.0)
        .map_or(choices[0].0, |c| c.0)
}

/// Places `count` blocks at random in `region`: for each block a shape is
/// picked from the mix by weight and an orientation set or drawn, then centroids are tried uniformly until
/// the block's bounding sphere (its shape's `radius` about the centroid)
/// lies inside the region and clear of the `existing` spheres (centre,
/// radius: balls and blocks placed before) and of the blocks placed so
/// far. Blocks come in Z order over the region. The same arguments give
/// the same blocks (ChaCha8 seeded with `seed`).
///
/// # Errors
/// A message when a shape's bounding sphere is larger than the region or
/// a block finds no place in `max_attempts` tries.
pub fn random_blocks<S: Template>(
    mix: &BlockMix<'_, S>,
    count: usize,
    region: Aabb,
    seed: u64,
    max_attempts: usize,
    existing: &[(Vec3, f64)],
) -> Result<Vec<PlacedBlock>, String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let largest = mix
        .choices
        .iter()
        .map(|c| mix.shapes[c.0 as usize].bounding_radius())
        .fold(0.0, f64::max);
    let draw = |rng: &mut ChaCha8Rng| {
        let (shape, k, turn) = mix.draw(rng);
        (shape.bounding_radius(), (k, turn))
    };
    let spheres = SpherePlacement {
        count,
        region,
        max_attempts,
        existing,
        largest,
    };
    match spheres.place(&mut rng, draw) {
        Ok(placed) => Ok(placed
            .into_iter()
            .map(|(pos, _, (shape, orientation))| PlacedBlock {
                shape,
                pos,
                orientation,
            })
            .collect()),
        Err(Refusal::TooBig {
            radius,
            what: (k, _),
        }) => Err(format!(
            "a {} of {} '{}' (bounding radius {radius} m) does not fit in the region at all",
            S::BODY,
            S::NOUN,
            mix.shapes[k as usize].name()
        )),
        Err(Refusal::Full { index, placed }) => Err(format!(
            "cannot fit {count} {body}s: {body} {} found no free place for its bounding sphere in {max_attempts} attempts (placed {placed}); enlarge the region or reduce the count",
            index + 1,
            body = S::BODY
        )),
    }
}

/// The smallest lattice spacing that keeps the blocks of
/// [`lattice_blocks`] apart: the widest axis-aligned box of a chosen shape
/// under a fixed orientation (two sites differ by at least one spacing
/// along some axis, where the boxes then cannot overlap), or the largest
/// bounding-sphere diameter under random orientations.
pub fn lattice_block_spacing<S: Template>(mix: &BlockMix<'_, S>) -> f64 {
    mix.choices
        .iter()
        .map(|c| {
            let shape = &mix.shapes[c.0 as usize];
            match mix.orientation {
                BlockOrientation::Fixed(turn) => {
                    let (lo, hi) = shape.turned_extent(given_to_world(shape, turn));
                    (hi - lo).max_element()
                }
                BlockOrientation::Random => 2.0 * shape.bounding_radius(),
            }
        })
        .fold(0.0, f64::max)
}

/// A simple cubic lattice of blocks: [`lattice_counts`] cells of size
/// `spacing` per axis from `region.min`, x fastest, then y, then z; one
/// block per cell, its shape picked from the mix by weight and its
/// orientation set or drawn (ChaCha8 seeded with `seed`, used only for
/// several shapes or random orientations). Each block is centred in its
/// cell by its axis-aligned box (fixed orientation) or its bounding sphere
/// (random orientations), so with `spacing` at least
/// [`lattice_block_spacing`] no two blocks overlap and each lies in its
/// cell.
pub fn lattice_blocks<S: Template>(
    mix: &BlockMix<'_, S>,
    spacing: f64,
    region: Aabb,
    counts: Option<[usize; 3]>,
    seed: u64,
) -> Vec<PlacedBlock> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let [nx, ny, nz] = lattice_counts(&region, spacing, counts);
    let mut blocks = Vec::with_capacity(nx * ny * nz);
    let centre = |axis: usize, i: usize| region.min[axis] + spacing * (i as f64 + 0.5);
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let cell = Vec3::new(centre(0, i), centre(1, j), centre(2, k));
                let (s, shape, turn) = mix.draw(&mut rng);
                let pos = match mix.orientation {
                    BlockOrientation::Random => cell,
                    BlockOrientation::Fixed(_) => {
                        let (lo, hi) = s.turned_extent(turn);
                        cell - 0.5 * (lo + hi)
                    }
                };
                blocks.push(PlacedBlock {
                    shape,
                    pos,
                    orientation: turn,
                });
            }
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_balls_do_not_overlap_and_stay_inside() {
        let region = Aabb {
            min: Vec3::ZERO,
            max: Vec3::splat(0.02),
        };
        let balls =
            random_balls(500, RadiusDist::Uniform(5e-4, 1e-3), region, 3, 1000, &[]).unwrap();
        assert_eq!(balls.len(), 500);
        for (i, &(p, r)) in balls.iter().enumerate() {
            assert!(
                p.cmpge(region.min + Vec3::splat(r)).all()
                    && p.cmple(region.max - Vec3::splat(r)).all()
            );
            for &(q, s) in &balls[..i] {
                assert!((p - q).length() >= r + s);
            }
        }
        let again =
            random_balls(500, RadiusDist::Uniform(5e-4, 1e-3), region, 3, 1000, &[]).unwrap();
        assert_eq!(balls, again);
    }

    #[test]
    fn impossible_packing_is_refused() {
        let region = Aabb {
            min: Vec3::ZERO,
            max: Vec3::splat(0.01),
        };
        let err = random_balls(10_000, RadiusDist::Fixed(1e-3), region, 1, 50, &[]).unwrap_err();
        assert!(err.contains("cannot fit 10000 balls"), "{err}");
    }

    #[test]
    fn lattice_fills_region() {
        let region = Aabb {
            min: Vec3::ZERO,
            max: Vec3::new(0.01, 0.01, 0.004),
        };
        let balls = lattice_balls(1e-3, 2e-3, region, None);
        assert_eq!(balls.len(), 5 * 5 * 2);
        assert!(balls.iter().all(|(p, r)| p.z + r <= 0.004 + 1e-15));
    }

    #[test]
    fn lattice_fills_region_from_min_plus_half_spacing() {
        let region = Aabb {
            min: Vec3::ZERO,
            max: Vec3::new(1.0, 0.5, 0.3),
        };
        assert_eq!(lattice_counts(&region, 0.1, None), [10, 5, 3]);
        let c = lattice_balls(0.05, 0.1, region, None);
        assert_eq!(c.len(), 150);
        assert!((c[0].0.x - 0.05).abs() < 1e-15);
        assert!((c[1].0.x - 0.15).abs() < 1e-15);
        assert!((c[10].0.y - 0.15).abs() < 1e-15);
        let c = lattice_balls(0.05, 0.1, region, Some([2, 1, 1]));
        assert_eq!(c.len(), 2);
    }
    fn shapes() -> Vec<BlockShape> {
        use talus_geometry::{box_block, tetrahedron_block};
        vec![
            BlockShape::new("brick", &box_block(Vec3::new(0.1, 0.2, 0.4)).unwrap()).unwrap(),
            BlockShape::new("tet", &tetrahedron_block(0.15).unwrap()).unwrap(),
        ]
    }

    /// The world vertices of a placed block.
    fn world(shapes: &[BlockShape], b: &PlacedBlock) -> Vec<Vec3> {
        let poly = &shapes[b.shape as usize].polyhedron;
        poly.vertices()
            .iter()
            .map(|&v| b.orientation * v + b.pos)
            .collect()
    }

    #[test]
    fn random_blocks_keep_clear_of_each_other_and_of_balls_and_stay_inside() {
        let shapes = shapes();
        let region = Aabb {
            min: Vec3::ZERO,
            max: Vec3::new(3.0, 3.0, 4.0),
        };
        let balls = [(Vec3::new(1.5, 1.5, 2.0), 0.3)];
        let mix = BlockMix {
            shapes: &shapes,
            choices: &[(0, 1.0), (1, 3.0)],
            orientation: BlockOrientation::Random,
        };
        let blocks = random_blocks(&mix, 200, region, 7, 1000, &balls).unwrap();
        assert_eq!(blocks.len(), 200);
        let r = |b: &PlacedBlock| shapes[b.shape as usize].radius;
        for (i, b) in blocks.iter().enumerate() {
            assert!((b.orientation.length() - 1.0).abs() < 1e-15);
            for v in world(&shapes, b) {
                assert!(v.cmpge(region.min).all() && v.cmple(region.max).all());
            }
            let (c, rb) = balls[0];
            assert!((b.pos - c).length() >= r(b) + rb);
            for o in &blocks[..i] {
                assert!((b.pos - o.pos).length() >= r(b) + r(o));
            }
        }
        // Both shapes drawn, the tetrahedron about three times as often.
        let tets = blocks.iter().filter(|b| b.shape == 1).count();
        assert!((120..180).contains(&tets), "{tets} tetrahedra of 200");
        let again = random_blocks(&mix, 200, region, 7, 1000, &balls).unwrap();
        let bits = |v: &[PlacedBlock]| -> Vec<[u64; 7]> {
            v.iter()
                .map(|b| {
                    let q = b.orientation.to_array();
                    [b.pos.x, b.pos.y, b.pos.z, q[0], q[1], q[2], q[3]].map(f64::to_bits)
                })
                .collect()
        };
        assert_eq!(bits(&blocks), bits(&again));
        let other = random_blocks(&mix, 200, region, 8, 1000, &balls).unwrap();
        assert_ne!(bits(&blocks), bits(&other));
    }

    #[test]
    fn random_block_fill_that_cannot_fit_says_why() {
        let shapes = shapes();
        let mix = BlockMix {
            shapes: &shapes,
            choices: &[(0, 1.0)],
            orientation: BlockOrientation::Random,
        };
        let small = Aabb {
            min: Vec3::ZERO,
            max: Vec3::splat(0.3),
        };
        let e = random_blocks(&mix, 1, small, 1, 10, &[]).unwrap_err();
        assert!(e.contains("shape 'brick'") && e.contains("at all"), "{e}");
        let room = Aabb {
            min: Vec3::ZERO,
            max: Vec3::splat(1.0),
        };
        let e = random_blocks(&mix, 500, room, 1, 20, &[]).unwrap_err();
        assert!(e.contains("cannot fit 500 blocks"), "{e}");
    }

    #[test]
    fn shoemake_rotations_are_uniform() {
        // Over the Haar measure every entry of the rotation matrix has
        // mean 0 and mean square 1/3.
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let n = 40_000;
        let mut mean = [[0.0; 3]; 3];
        let mut square = [[0.0; 3]; 3];
        for _ in 0..n {
            let q = uniform_orientation(&mut rng);
            assert!((q.length() - 1.0).abs() < 1e-14);
            let m = crate::math::Mat3::from_quat(q);
            for c in 0..3 {
                for r in 0..3 {
                    let x = m.col(c)[r];
                    mean[c][r] += x / n as f64;
                    square[c][r] += x * x / n as f64;
                }
            }
        }
        // Standard errors: 1/sqrt(3 n) for the means, about 0.0015 here.
        for c in 0..3 {
            for r in 0..3 {
                assert!(mean[c][r].abs() < 0.01, "mean {c}{r} = {}", mean[c][r]);
                assert!((square[c][r] - 1.0 / 3.0).abs() < 0.01);
            }
        }
    }

    #[test]
    fn block_lattice_cells_hold_one_block_each() {
        let shapes = shapes();
        let turn = Quat::from_rotation_z(0.3);
        for orientation in [BlockOrientation::Fixed(turn), BlockOrientation::Random] {
            let mix = BlockMix {
                shapes: &shapes,
                choices: &[(0, 1.0), (1, 1.0)],
                orientation,
            };
            let spacing = lattice_block_spacing(&mix);
            let region = Aabb {
                min: Vec3::new(-1.0, 0.0, 0.0),
                max: Vec3::new(-1.0 + 3.0 * spacing, 2.0 * spacing, spacing),
            };
            let blocks = lattice_blocks(&mix, spacing, region, None, 5);
            assert_eq!(blocks.len(), 6);
            for (n, b) in blocks.iter().enumerate() {
                let ijk = Vec3::new((n % 3) as f64, (n / 3) as f64, 0.0);
                let lo = region.min + ijk * spacing;
                for v in world(&shapes, b) {
                    let tol = 1e-12;
                    assert!(v.cmpge(lo - tol).all() && v.cmple(lo + spacing + tol).all());
                }
            }
            if let BlockOrientation::Fixed(_) = orientation {
                // The brick keeps its edges as given, turned about z.
                let brick = blocks.iter().find(|b| b.shape == 0).unwrap();
                let x = given_to_world(&shapes[0], turn);
                assert!(brick.orientation.dot(x).abs() > 1.0 - 1e-15);
            }
        }
    }

    #[test]
    fn given_frame_keeps_a_box_as_written() {
        // A 0.1 x 0.2 x 0.4 box: its principal x axis is along its longest
        // edge (z as written), but an identity turn leaves it as written.
        let shapes = shapes();
        let q = given_to_world(&shapes[0], Quat::IDENTITY);
        let (lo, hi) = shapes[0].turned_extent(q);
        assert!((hi - lo - Vec3::new(0.1, 0.2, 0.4)).abs().max_element() < 1e-14);
    }
}
