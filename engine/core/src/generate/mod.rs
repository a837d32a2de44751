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
//!
//! This module holds the ball generators and the placement of spheres
//! that the random fills share; `blocks` holds the block (and clump)
//! generators, re-exported here.

mod blocks;
#[cfg(test)]
mod tests;

pub use blocks::{
    given_to_world, lattice_block_spacing, lattice_blocks, random_blocks, uniform_orientation,
    BlockMix, BlockOrientation, PlacedBlock, Template,
};

use crate::math::{Aabb, Vec3};
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
