//! The timestep: fixed, or automatic from the stiffnesses that the models
//! reported for each ball's contacts in the last cycle.

use crate::body::{BallsRef, BlocksRef, ClumpsRef};
use crate::error::StepError;
use crate::math::Vec3;
use crate::sim::*;
use crate::team::{self};

/// How the timestep is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Timestep {
    /// The same timestep every cycle (s).
    Fixed(f64),
    /// `safety * min_i sqrt(m_i / k_i)` over balls, where `k_i` sums the
    /// translational stiffnesses that models report for the active and
    /// could-be-active contacts of ball `i` (at least one contact's worth,
    /// so free-flying balls are bounded too). A rigid body is lighter at
    /// a contact point off its centroid: for blocks and clumps `m_i` is
    /// replaced by `m_i / (1 + t)`, `t` the shape's `turn_factor`, the
    /// most that `m (r x n) . I^-1 (r x n)` reaches over the points `r`
    /// where a force can act and the directions `n` (tangential springs
    /// are left out, as for balls).
    Auto {
        /// Safety factor in (0, 1].
        safety: f64,
    },
}

/// The safety factor of `dt = "auto"` unless the run gives one.
pub const DEFAULT_SAFETY: f64 = 0.8;

/// `1 / sqrt(rate)` for the largest `k / m` of [`Simulation::stiffness_rate`]:
/// `min_i sqrt(m_i / k_i)` (s), or `None` when no body has a stiffness.
pub(crate) fn critical_timestep(rate: f64) -> Option<f64> {
    let dt = 1.0 / rate.sqrt();
    (dt.is_finite() && dt > 0.0).then_some(dt)
}

impl Simulation {
    pub(crate) fn auto_timestep(&self, safety: f64) -> Result<f64, StepError> {
        let b = BallsRef::of(&self.world);
        let blocks = BlocksRef::of(&self.world);
        let clumps = ClumpsRef::of(&self.world);
        let rate = self.stiffness_rate(&b.stiffness, &blocks.stiffness, &clumps.stiffness);
        match critical_timestep(rate) {
            Some(dt) => Ok(safety * dt),
            None => Err(StepError::Timestep(
                "no model reports a stiffness, so the automatic timestep is undefined; give dt a number".into(),
            )),
        }
    }

    /// The largest `k / m` over bodies (1/s^2), from the timestep
    /// stiffness sums `ball_k`, `block_k` and `clump_k` (N/m, by index;
    /// pebble rows of `ball_k` are not read), each at least the body's
    /// probe stiffness; for blocks and clumps `k (1 + t) / m` with the
    /// shape's [`turn_factor`] `t`.
    pub(crate) fn stiffness_rate(&self, ball_k: &[f64], block_k: &[f64], clump_k: &[f64]) -> f64 {
        // min_i sqrt(m_i / k_i) = 1 / sqrt(max_i k_i / m_i): one root per step.
        let free = self.first_pebble_row();
        let b = BallsRef::of(&self.world);
        let (inv_mass, k_probe) = (&*b.inv_mass, &self.k_probe);
        let blocks = (0..free).step_by(8192).map(|lo| lo..(lo + 8192).min(free));
        let rate = team::map(blocks.collect(), |_, block| {
            block
                .map(|i| ball_k[i].max(k_probe[i]) * inv_mass[i])
                .fold(0.0, f64::max)
        })
        .into_iter()
        .fold(0.0, f64::max);
        // Blocks and clumps: the rate of a spring at the body's most
        // mobile contact point, which moves and turns it at once.
        let blocks = BlocksRef::of(&self.world);
        let block_rate = (0..blocks.len())
            .map(|i| {
                let k = block_k[i].max(self.k_probe_blocks.get(i).copied().unwrap_or(0.0));
                let turn = self.turn_shapes[blocks.shape[i] as usize];
                k * blocks.inv_mass[i] * (1.0 + turn)
            })
            .fold(0.0, f64::max);
        let clumps = ClumpsRef::of(&self.world);
        let clump_rate = (0..clumps.len())
            .map(|i| {
                let k = clump_k[i].max(self.k_probe_clumps.get(i).copied().unwrap_or(0.0));
                let turn = self.turn_templates[clumps.template[i] as usize];
                k * clumps.inv_mass[i] * (1.0 + turn)
            })
            .fold(0.0, f64::max);
        rate.max(block_rate).max(clump_rate)
    }
}

/// How much more mobile a rigid body is at its most mobile contact point
/// than at its centroid: `m max (r x n) . I^-1 (r x n)` over the points
/// `r` (from the centroid, principal frame) where a contact force can
/// act and over unit directions `n`, for unit density (`m` is then the
/// `volume`, `I` the `unit_moments`). A force along `n` at `r` meets the
/// inverse mass `(1 + turn) / m` at most.
///
/// For a given `r`, `r x n` runs over the vectors normal to `r` of length
/// up to `|r|`, so the largest value is `|r|^2` times the larger
/// eigenvalue of `I^-1` on the plane normal to `r`, a 2 x 2 problem. The
/// points of a polyhedron that matter are its vertices (the value is a
/// convex function of `r` for each `n`); for a rounded one, its core's
/// (a point of the rounded surface is a core point plus the rounding
/// along the normal, which adds nothing to `r x n`); for a clump, the
/// pebble centres (a normal force passes through its pebble's centre).
pub(crate) fn turn_factor(
    points: impl Iterator<Item = Vec3>,
    unit_moments: Vec3,
    volume: f64,
) -> f64 {
    let inv = unit_moments.recip();
    let most = points
        .map(|r| {
            let len2 = r.length_squared();
            if len2 == 0.0 {
                return 0.0;
            }
            let (e1, e2) = (r / len2.sqrt()).any_orthonormal_pair();
            let (a, d, b) = (
                (e1 * e1 * inv).element_sum(),
                (e2 * e2 * inv).element_sum(),
                (e1 * e2 * inv).element_sum(),
            );
            let half = 0.5 * (a - d);
            len2 * (0.5 * (a + d) + (half * half + b * b).sqrt())
        })
        .fold(0.0, f64::max);
    volume * most
}

/// [`turn_factor`] of a block shape: over its polyhedron's vertices (its
/// core's when rounded); for a shape a plugin gives, whose points are not
/// listed, the bound of a lever of its bounding radius about its weakest
/// axis, `m r^2 / I_min`.
pub(crate) fn shape_turn(shape: &crate::block::BlockShape) -> f64 {
    if shape.convex.is_some() {
        return shape.volume * shape.radius * shape.radius / shape.unit_moments.min_element();
    }
    let vertices = shape.polyhedron.vertices().iter().copied();
    turn_factor(vertices, shape.unit_moments, shape.volume)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::BlockShape;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use talus_geometry::{random_block, RandomBlock};

    /// `max (r x n) . I^-1 (r x n)` by brute force: `n` over a Fibonacci
    /// sphere of `count` directions, `r` over the given points.
    fn brute(points: &[Vec3], unit_moments: Vec3, count: usize) -> f64 {
        let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
        let inv = unit_moments.recip();
        let mut most: f64 = 0.0;
        for k in 0..count {
            let z = 1.0 - 2.0 * (k as f64 + 0.5) / count as f64;
            let rho = (1.0 - z * z).sqrt();
            let phi = golden * k as f64;
            let n = Vec3::new(rho * phi.cos(), rho * phi.sin(), z);
            for &r in points {
                let u = r.cross(n);
                most = most.max((u * u * inv).element_sum());
            }
        }
        most
    }

    #[test]
    fn the_turn_factor_is_the_largest_lever_over_the_surface_and_every_direction() {
        // Random convex blocks: the closed form over the vertices against a
        // scan of directions over the vertices and points spread on the
        // faces (none beyond the vertices' value; the scan reaches it to
        // the square of its angular step).
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for seed in 0..6 {
            let spec = RandomBlock {
                semi_axes: Vec3::new(0.03, 0.015, 0.008),
                min_vertices: 6,
                max_vertices: 14,
                roughness: 0.3,
            };
            let shape = BlockShape::new("rock", &random_block(&spec, seed).unwrap()).unwrap();
            let p = &shape.polyhedron;
            let mut points = p.vertices().to_vec();
            for f in p.facets() {
                for _ in 0..20 {
                    let (a, b): (f64, f64) = (rng.random(), rng.random());
                    let (a, b) = if a + b > 1.0 {
                        (1.0 - a, 1.0 - b)
                    } else {
                        (a, b)
                    };
                    let [i, j, k] = f.map(|v| p.vertices()[v as usize]);
                    points.push(i + a * (j - i) + b * (k - i));
                }
            }
            let exact = shape_turn(&shape) / shape.volume;
            let scanned = brute(&points, shape.unit_moments, 40_000);
            assert!(
                scanned <= exact * (1.0 + 1e-12),
                "{seed}: {scanned} over {exact}"
            );
            assert!(
                scanned >= exact * (1.0 - 1e-3),
                "{seed}: {scanned} under {exact}"
            );
            // Never above the bound of the bounding radius about the
            // weakest axis, which it replaced.
            let loose = shape.radius * shape.radius / shape.unit_moments.min_element();
            assert!(
                exact <= loose * (1.0 + 1e-12),
                "{seed}: {exact} over {loose}"
            );
        }
    }
}
