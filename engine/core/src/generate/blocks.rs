//! The block and clump generators: what a body is made from
//! ([`Template`]), the mix of shapes to draw from ([`BlockMix`]), their
//! orientations, and the random and lattice fills of blocks.

use super::{lattice_counts, Refusal, SpherePlacement};
use crate::block::BlockShape;
use crate::clump::ClumpTemplate;
use crate::math::{Aabb, Quat, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

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
