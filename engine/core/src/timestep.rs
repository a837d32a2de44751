//! The timestep: fixed, or automatic from the stiffnesses that the models
//! reported for each ball's contacts in the last cycle.

use crate::body::{BallsRef, BlocksRef, ClumpsRef};
use crate::error::StepError;
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
    /// so free-flying balls are bounded too). A rigid body of several
    /// contact points moves less mass at a point off its centroid: a force
    /// along `n` at `r` from the centroid meets the inverse mass
    /// `1/m + (r x n) . I^-1 (r x n)`, so for blocks `m_i` is replaced by
    /// `1 / (1/m_i + r_i^2 / I_min)`, with `r_i` the bounding radius of the
    /// block's shape, and for clumps, with `k_i` summed over the pebbles,
    /// by `1 / (1/m_i + sum_a d_a^2 / I_a)` over the principal axes `a`,
    /// `d_a` the largest distance of a pebble centre from axis `a` (a
    /// normal force passes through its pebble's centre; tangential
    /// springs are left out, as for balls). Both bound the inverse mass
    /// at any contact point from above.
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
    /// probe stiffness; for blocks `k (1/m + r^2 / I_min)`, for clumps
    /// `k (1/m + sum_a d_a^2 / I_a)`.
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
        // Blocks: the rate of a spring at the bounding radius, which moves
        // the body's mass and turns it about its weakest axis at once.
        let blocks = BlocksRef::of(&self.world);
        let block_rate = (0..blocks.len())
            .map(|i| {
                let k = block_k[i].max(self.k_probe_blocks.get(i).copied().unwrap_or(0.0));
                let r = self.shapes[blocks.shape[i] as usize].radius;
                let turn = r * r / blocks.inertia[i].moments().min_element();
                k * (blocks.inv_mass[i] + turn)
            })
            .fold(0.0, f64::max);
        let clumps = ClumpsRef::of(&self.world);
        let clump_rate = (0..clumps.len())
            .map(|i| {
                let k = clump_k[i].max(self.k_probe_clumps.get(i).copied().unwrap_or(0.0));
                let d2 = self.templates[clumps.template[i] as usize].axis_levers;
                let turn = (d2 * clumps.inertia[i].inverse()).element_sum();
                k * (clumps.inv_mass[i] + turn)
            })
            .fold(0.0, f64::max);
        rate.max(block_rate).max(clump_rate)
    }
}
