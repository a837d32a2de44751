//! Ball generators: random non-overlapping placement and simple cubic
//! lattices, the placement behind `kind = "random"` and `kind = "lattice"`
//! of a config, and usable as they are by code that builds a
//! [`Simulation`](crate::Simulation) without one.
//!
//! Reads: counts, radii, a box region and a seed. Writes: centres and
//! radii. Invariant: the same arguments give the same balls on every
//! machine (ChaCha8 stream seeded from the given seed; lattices use no
//! randomness).

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
/// the new balls come in Z order over it (see `sort_spatially`). Gives up with a message when a ball finds no place in `max_attempts`
/// tries.
pub fn random_balls(
    count: usize,
    radius: RadiusDist,
    region: Aabb,
    seed: u64,
    max_attempts: usize,
    existing: &[(Vec3, f64)],
) -> Result<Vec<(Vec3, f64)>, String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let r_max_all = existing.iter().map(|e| e.1).fold(radius.max(), f64::max);
    let cell = 2.0 * r_max_all;
    let key = |p: Vec3| -> (i64, i64, i64) {
        (
            (p.x / cell).floor() as i64,
            (p.y / cell).floor() as i64,
            (p.z / cell).floor() as i64,
        )
    };
    let mut grid: FxHashMap<(i64, i64, i64), Vec<usize>> = FxHashMap::default();
    let mut placed: Vec<(Vec3, f64)> = existing.to_vec();
    for (k, &(p, _)) in placed.iter().enumerate() {
        grid.entry(key(p)).or_default().push(k);
    }
    let first_new = placed.len();
    for n in 0..count {
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
        let lo = region.min + Vec3::splat(r);
        let hi = region.max - Vec3::splat(r);
        if lo.cmpgt(hi).any() {
            return Err(format!(
                "a ball of radius {r} m does not fit in the region at all"
            ));
        }
        let mut done = false;
        for _ in 0..max_attempts {
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
            return Err(format!(
                "cannot fit {count} balls: ball {} found no free place in {max_attempts} attempts (placed {n}); enlarge the region, reduce the count or the radius",
                n + 1
            ));
        }
    }
    let mut balls = placed.split_off(first_new);
    sort_spatially(&mut balls, region);
    Ok(balls)
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

/// Orders balls along a Z-order (Morton) curve over `region`, so balls
/// close in space get close ids and close memory slots: the contact loops
/// then touch fewer cache lines. Placement order carries no meaning, so
/// nothing is lost.
fn sort_spatially(balls: &mut [(Vec3, f64)], region: Aabb) {
    let ext = (region.max - region.min).max(Vec3::splat(f64::MIN_POSITIVE));
    let key = |p: Vec3| -> u64 {
        let q = ((p - region.min) / ext).clamp(Vec3::ZERO, Vec3::ONE) * 2_097_151.0;
        spread3(q.x as u64) | spread3(q.y as u64) << 1 | spread3(q.z as u64) << 2
    };
    balls.sort_by_cached_key(|&(p, _)| key(p));
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
}
