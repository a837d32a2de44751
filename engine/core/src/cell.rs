//! The periodic cell: a parallelepiped, periodic along any of its three
//! edges, deforming homogeneously under a velocity gradient.
//!
//! Reads: the timestep. Writes: the cell matrix, once per cycle before
//! the law of motion.
//! Invariants: the columns of `h` are the cell's edge vectors and
//! `det h > 0`; every free ball's centre and every block's, convex
//! body's and clump's centroid lies in the cell along its periodic axes
//! (fractional coordinate in `[0, 1)`, up to round-off at the upper face)
//! after the law of motion, a clump's pebbles next to its centroid (they
//! may reach across a face); a body's stored velocity is its fluctuating
//! velocity, the part above the mean field `L (x - origin)`.
//!
//! # Model
//! The cell is `x = origin + h s` for fractional coordinates `s` in
//! `[0, 1)^3`; a ball at `x` has images at `x + h m` for every integer
//! vector `m` that is zero on the non-periodic axes. The cell deforms as
//! `dh/dt = L h` with `L` the velocity gradient; the step takes
//! `h(t + dt) = (I + L dt) h(t)`, and the law of motion moves every ball
//! by the same map about the origin, so a ball with no fluctuating
//! velocity keeps its fractional coordinates. The mean-field velocity of
//! a point `x` is `L (x - origin)`; the total velocity of a ball is its
//! stored (fluctuating) velocity plus the mean field at its centre.
//!
//! # References
//! Seed 004 (local contact coordinates): the relative velocity of two
//! particles in a homogeneously deforming periodic cell has the
//! mean-field velocity of the image shift taken into account.

use crate::body::{BallsRef, BlocksRef, ClumpsRef, Owner};
use crate::contact::CARRY_FORCE;
use crate::error::{SetupError, StepError};
use crate::math::{Mat3, Vec3};
use crate::piece::PairKind;
use crate::sim::Simulation;
use crate::step::When;
use serde::{Deserialize, Serialize};
use talus_sdk::STATUS_ACTIVE;

/// The integer nearest to `x` (ties to even) for `|x| < 2^51`, the
/// range of fractional coordinates and separations; a larger `x` or a
/// non-finite one comes back as itself or NaN, as `f64::round` would
/// leave it unrounded or NaN.
///
/// Adding and taking away `1.5 * 2^52` leaves no bits below the unit in
/// the sum: two additions, where the library's `round` is a call
/// without SSE4.1 (every ball-ball contact of a periodic run asks for
/// three of them per step).
#[inline(always)]
pub(crate) fn nearest(x: f64) -> f64 {
    const SHIFT: f64 = 6_755_399_441_055_744.0;
    if x.abs() < 2_251_799_813_685_248.0 {
        (x + SHIFT) - SHIFT
    } else {
        x
    }
}

/// The largest integer not above `x`, by [`nearest`].
#[inline(always)]
pub(crate) fn floor(x: f64) -> f64 {
    let t = nearest(x);
    if t > x {
        t - 1.0
    } else {
        t
    }
}

/// A parallelepiped cell, periodic along chosen edges, deforming under a
/// constant velocity gradient.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// The corner the cell deforms about (m); the mean-field velocity is
    /// zero there.
    pub origin: Vec3,
    /// The cell matrix: its columns are the three edge vectors (m).
    h: Mat3,
    /// `h` inverted, kept with it.
    h_inv: Mat3,
    /// The square of a distance below which a separation is its own
    /// nearest image (see [`Cell::image_shift`]), kept with `h`.
    own_sq: f64,
    /// Which edges are periodic.
    pub periodic: [bool; 3],
    /// The velocity gradient `L` (1/s): `dh/dt = L h`.
    pub velocity_gradient: Mat3,
    /// A servo on the stress along some axes, if any: it sets those
    /// diagonal entries of `L` every step.
    pub servo: Option<CellServo>,
    /// Later stages of the cell's motion, in the order they begin; each
    /// replaces the velocity gradient and the servo from its start on.
    stages: Vec<CellStage>,
    /// How many of `stages` have begun.
    begun: usize,
}

/// A stage of the cell's motion: from `at` on, the cell deforms under
/// `velocity_gradient` with `servo` (if any) setting its controlled
/// entries, until the next stage begins.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellStage {
    /// When the stage begins.
    pub at: When,
    /// The velocity gradient `L` (1/s) of the stage.
    pub velocity_gradient: Mat3,
    /// The servo of the stage, if any.
    pub servo: Option<CellServo>,
}

/// A servo that holds chosen normal stresses of the cell by setting the
/// diagonal of its velocity gradient.
///
/// # Model
/// After each cycle, for every controlled axis `k`,
/// `L_kk = clamp(gain (target_k - sigma_kk), -max_rate, max_rate)`, with
/// `sigma` the cell stress (tension positive): a cell more compressed
/// than its target expands, one less compressed contracts. With `E` the
/// material's modulus along `k` (Pa), the stress relaxes towards its
/// target with the time constant `1 / (E gain)`, which should span many
/// steps.
///
/// # Units
/// `target` Pa (tension positive: a compression is negative), `gain`
/// 1/(Pa s), `max_rate` 1/s.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellServo {
    /// Target normal stress per axis (Pa, tension positive); `None`
    /// leaves the axis to the velocity gradient as given.
    pub target: [Option<f64>; 3],
    /// Strain rate per unit of stress error (1/(Pa s)), > 0.
    pub gain: f64,
    /// Cap on the strain rate the servo sets (1/s), > 0.
    pub max_rate: f64,
}

impl CellServo {
    /// The velocity gradient `l` with the controlled diagonal entries set
    /// from the stress `stress`.
    pub fn gradient(&self, l: Mat3, stress: Mat3) -> Mat3 {
        let mut cols = l.to_cols_array_2d();
        for (k, t) in self.target.iter().enumerate() {
            if let Some(t) = t {
                let sigma = stress.col(k)[k];
                cols[k][k] = (self.gain * (t - sigma)).clamp(-self.max_rate, self.max_rate);
            }
        }
        Mat3::from_cols_array_2d(&cols)
    }
}

/// Why a cell cannot be made.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct CellError(pub String);

impl Cell {
    /// A cell with corner `origin` and edge vectors the columns of `h`,
    /// periodic along the edges `periodic` says, deforming under the
    /// velocity gradient `l`.
    pub fn new(origin: Vec3, h: Mat3, periodic: [bool; 3], l: Mat3) -> Result<Cell, CellError> {
        if !(origin.is_finite() && h.is_finite() && l.is_finite()) {
            return Err(CellError(
                "the cell's corner, edges and velocity gradient must be finite".into(),
            ));
        }
        let det = h.determinant();
        if det.is_nan() || det <= 0.0 {
            return Err(CellError(format!(
                "the cell's edges must span a positive volume (a right-handed set), got a \
                 determinant of {det}"
            )));
        }
        let mut cell = Cell {
            origin,
            h,
            h_inv: h.inverse(),
            own_sq: 0.0,
            periodic,
            velocity_gradient: l,
            servo: None,
            stages: Vec::new(),
            begun: 0,
        };
        cell.own_sq = cell.own_distance_sq();
        Ok(cell)
    }

    /// The axis-aligned box `min`..`max` as a cell.
    pub fn from_box(min: Vec3, max: Vec3, periodic: [bool; 3], l: Mat3) -> Result<Cell, CellError> {
        let e = max - min;
        Cell::new(min, Mat3::from_diagonal(e), periodic, l)
    }

    /// The cell matrix (columns: edge vectors, m).
    #[inline]
    pub fn h(&self) -> Mat3 {
        self.h
    }

    /// Whether any edge is periodic.
    pub fn any_periodic(&self) -> bool {
        self.periodic.iter().any(|&p| p)
    }

    /// The cell's volume, `det h` (m^3).
    pub fn volume(&self) -> f64 {
        self.h.determinant()
    }

    /// The distance between the two faces across each edge (m): the
    /// volume over the area of the face the other two edges span.
    pub fn widths(&self) -> [f64; 3] {
        let v = self.volume();
        let (a, b, c) = (self.h.x_axis, self.h.y_axis, self.h.z_axis);
        [
            v / b.cross(c).length(),
            v / c.cross(a).length(),
            v / a.cross(b).length(),
        ]
    }

    /// The square of 0.49 times the smallest periodic width (infinite
    /// without a periodic edge): a separation `d` shorter than half every
    /// periodic width has fractional components below one half, `|s_k| =
    /// |d . n_k| / w_k` with `n_k` the unit normal of the faces across
    /// edge `k`, so rounding them gives no shift; 0.49 keeps that true
    /// through the round-off of `s`.
    fn own_distance_sq(&self) -> f64 {
        let w = self.widths();
        let near = (0..3)
            .filter(|&k| self.periodic[k])
            .map(|k| 0.49 * w[k])
            .fold(f64::INFINITY, f64::min);
        near * near
    }

    /// Fractional coordinates of `x`.
    #[inline]
    pub fn fractional(&self, x: Vec3) -> Vec3 {
        self.h_inv * (x - self.origin)
    }

    /// The shift `h m` that brings the image of a point at `x2` nearest to
    /// `x1`: `m` rounds the fractional separation to whole cells along the
    /// periodic axes and is zero along the others. While the periodic
    /// widths exceed twice the separation this image is the only one that
    /// near.
    #[inline]
    pub fn image_shift(&self, x1: Vec3, x2: Vec3) -> Vec3 {
        let d = x2 - x1;
        // Most pairs are near inside the cell: no product, no rounding.
        if d.length_squared() < self.own_sq {
            return Vec3::ZERO;
        }
        let s = self.h_inv * d;
        let m = Vec3::new(
            if self.periodic[0] { -nearest(s.x) } else { 0.0 },
            if self.periodic[1] { -nearest(s.y) } else { 0.0 },
            if self.periodic[2] { -nearest(s.z) } else { 0.0 },
        );
        if m == Vec3::ZERO {
            Vec3::ZERO
        } else {
            self.h * m
        }
    }

    /// The mean-field velocity at `x` (m/s).
    #[inline]
    pub fn mean_velocity(&self, x: Vec3) -> Vec3 {
        self.velocity_gradient * (x - self.origin)
    }

    /// The position `x` wrapped into the cell along the periodic axes, by
    /// whole edge vectors; `x` itself (the same bits) when it is inside.
    #[inline]
    pub fn wrap(&self, x: Vec3) -> Vec3 {
        let s = self.fractional(x);
        let m = Vec3::new(
            if self.periodic[0] { floor(s.x) } else { 0.0 },
            if self.periodic[1] { floor(s.y) } else { 0.0 },
            if self.periodic[2] { floor(s.z) } else { 0.0 },
        );
        if m == Vec3::ZERO {
            x
        } else {
            x - self.h * m
        }
    }

    /// The cell with later stages of its motion, `stages`: they begin in
    /// list order, each once it is due and the one before it has begun.
    pub fn with_stages(mut self, stages: Vec<CellStage>) -> Cell {
        self.stages = stages;
        self.begun = 0;
        self
    }

    /// The later stages of the cell's motion, and how many have begun.
    pub fn stages(&self) -> (&[CellStage], usize) {
        (&self.stages, self.begun)
    }

    /// Begins every stage that is due by the step numbered `step`
    /// starting at `time`, in order: the cell then moves as the last of
    /// them says. Returns whether any began.
    pub fn begin_stages(&mut self, step: u64, time: f64) -> bool {
        let before = self.begun;
        while let Some(stage) = self.stages.get(self.begun) {
            if !stage.at.reached(step, time) {
                break;
            }
            self.velocity_gradient = stage.velocity_gradient;
            self.servo = stage.servo;
            self.begun += 1;
        }
        self.begun > before
    }

    /// Whether the cell deforms (a non-zero velocity gradient, or a servo
    /// that may set one).
    pub fn deforms(&self) -> bool {
        self.velocity_gradient != Mat3::ZERO || self.servo.is_some()
    }

    /// The cell with `servo` on its stress.
    pub fn with_servo(mut self, servo: CellServo) -> Cell {
        self.servo = Some(servo);
        self
    }

    /// The cell after one step `dt`: `h <- (I + L dt) h`.
    pub fn advance(&mut self, dt: f64) {
        if !self.deforms() {
            return;
        }
        self.h += (self.velocity_gradient * dt) * self.h;
        self.h_inv = self.h.inverse();
        self.own_sq = self.own_distance_sq();
    }

    /// The mean-field displacement of a point at `x` over a step `dt`,
    /// `L dt (x - origin)`: what carries it with the cell.
    #[inline]
    pub fn affine_step(&self, x: Vec3, dt: f64) -> Vec3 {
        (self.velocity_gradient * dt) * (x - self.origin)
    }
}

/// The cell's matrix and stress at the end of a cycle (see
/// [`crate::Simulation::cell_state`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellState {
    /// The cell matrix (columns: edge vectors, m).
    pub h: Mat3,
    /// The cell's volume (m^3).
    pub volume: f64,
    /// The velocity gradient `L` of the last cycle (1/s), the servo's
    /// entries included.
    pub velocity_gradient: Mat3,
    /// How many of the cell's later stages have begun (0: the motion the
    /// cell was made with).
    pub stage: usize,
    /// The average stress in the cell, tension positive (Pa): the contact
    /// part `-(1/V) sum f (x) d` and the kinetic part
    /// `-(1/V) sum m v (x) v` (see `docs/physics.md`).
    pub stress: Mat3,
}

impl Simulation {
    /// Puts the bodies in the periodic cell `cell` (see [`crate::cell`]);
    /// before step 0, or between cycles to change the cell's velocity
    /// gradient (the servo's way) or its shape.
    pub fn set_cell(&mut self, cell: Cell) {
        self.cell = Some(cell);
    }

    /// The periodic cell, if the run has one.
    pub fn cell(&self) -> Option<&Cell> {
        self.cell.as_ref()
    }

    /// Sets the velocity gradient of the cell (1/s), from the next cycle
    /// on; does nothing without a cell.
    pub fn set_velocity_gradient(&mut self, l: Mat3) {
        if let Some(c) = self.cell.as_mut() {
            c.velocity_gradient = l;
        }
    }

    /// The servo's step: the controlled entries of the cell's velocity
    /// gradient from this cycle's stress, for the next cycle.
    pub(crate) fn servo_cell(&mut self) {
        let Some(servo) = self.cell.as_ref().and_then(|c| c.servo) else {
            return;
        };
        let Some(state) = self.cell_state() else {
            return;
        };
        if let Some(c) = self.cell.as_mut() {
            c.velocity_gradient = servo.gradient(c.velocity_gradient, state.stress);
        }
    }

    /// Whether the cell's servo is one that can run.
    pub(crate) fn check_cell(&self) -> Result<(), SetupError> {
        let Some(cell) = &self.cell else {
            return Ok(());
        };
        let servo_ok = |s: &CellServo| {
            let positive = |v: f64| v.is_finite() && v > 0.0;
            positive(s.gain)
                && positive(s.max_rate)
                && s.target.iter().flatten().all(|t| t.is_finite())
        };
        let servos = cell
            .servo
            .iter()
            .chain(cell.stages.iter().flat_map(|s| &s.servo));
        if !servos.into_iter().all(servo_ok) {
            return Err(SetupError::Cell {
                message: "the cell servo needs a positive gain and rate cap and finite targets"
                    .into(),
            });
        }
        let stage_ok = |s: &CellStage| {
            s.velocity_gradient.is_finite()
                && match s.at {
                    When::Step(_) => true,
                    When::Time(t) => t.is_finite(),
                }
        };
        if !cell.stages.iter().all(stage_ok) {
            return Err(SetupError::Cell {
                message: "a stage of the cell needs a finite velocity gradient and start time"
                    .into(),
            });
        }
        Ok(())
    }

    /// Stops the run when the cell has become too thin for its bodies:
    /// every periodic width must exceed `min_width`, `4 (r_max + tol)`
    /// with `r_max` the largest radius of a ball or bounding radius of a
    /// block, convex body or clump, so that one image of a piece at most
    /// is near another and no clump reaches its own image.
    pub(crate) fn check_cell_widths(&self) -> Result<(), StepError> {
        let Some(cell) = &self.cell else {
            return Ok(());
        };
        let w = cell.widths();
        for (k, &w) in w.iter().enumerate() {
            // (a NaN width fails too)
            if cell.periodic[k] && (w.is_nan() || w <= self.cell_min_width) {
                return Err(StepError::Cell {
                    step: self.step,
                    message: format!(
                        "the periodic cell is {:.6e} m across its edge {k}, which must exceed \
                         {:.6e} m (twice the reach of the largest pair of bodies, or of the \
                         largest wall facet and body, with the cell tolerance)",
                        w, self.cell_min_width
                    ),
                });
            }
        }
        Ok(())
    }

    /// The cell's matrix, volume and average stress after the last cycle,
    /// or `None` without a cell.
    ///
    /// # Model
    /// `sigma = -(1/V) [ sum_c f_c (x) d_c + sum_p m_p v_p (x) v_p ]`,
    /// tension positive: `f` is the force on end2 of an active contact
    /// and `d` the branch vector from end1's body centre to that of
    /// end2's image: `(R1 + R2 + g) n` for two balls, the image of a block
    /// or convex body nearest end1 less end1's centre otherwise; a pebble
    /// end counts from its clump's centroid, its offset from it added to
    /// the branch (which is thus the same whichever image met). A contact
    /// with a facet adds its body's side alone, `f (x) (xc - x1)` (the
    /// wall is outside the material). `v_p` is the fluctuating velocity
    /// of a ball, a block, a convex body or a clump (pebbles move with
    /// their clumps). Sums run in (model, lane, slot) order, then body
    /// order, so the bits do not depend on the thread count.
    ///
    /// # Units
    /// Pa (N/m^2).
    pub fn cell_state(&self) -> Option<CellState> {
        let cell = self.cell.as_ref()?;
        let volume = cell.volume();
        let balls = BallsRef::of(&self.world);
        let blocks = BlocksRef::of(&self.world);
        let clumps = ClumpsRef::of(&self.world);
        // A ball's offset from its body's centre: zero for a ball, from
        // its clump's centroid for a pebble.
        let offset = |i: usize| match balls.owner[i] {
            o if o == Owner::FREE.0 => Vec3::ZERO,
            o => balls.pos[i] - clumps.pos[o as usize],
        };
        // From `x1` to the image of a rigid body's centroid nearest it.
        let to_image = |x1: Vec3, b: usize| {
            let x2 = blocks.pos[b];
            x2 + cell.image_shift(x1, x2) - x1
        };
        let mut sum = Mat3::ZERO;
        let outer = |a: Vec3, b: Vec3| Mat3::from_cols(a * b.x, a * b.y, a * b.z);
        for m in &self.models {
            for lane in &m.lanes {
                let st = &lane.store;
                let pair = lane.pair();
                for k in 0..st.len() {
                    let o = &st.output[k];
                    if st.carry[k] != CARRY_FORCE || o.status != STATUS_ACTIVE {
                        continue;
                    }
                    let p = &st.plane[k];
                    let f = p.n * o.force[0] + p.s * o.force[1] + p.t * o.force[2];
                    let (a, b) = (st.end1[k].index(), st.end2[k].index());
                    let branch = match pair {
                        PairKind::BallBall => {
                            p.n * (balls.radius[a] + balls.radius[b] + p.gap) + offset(a)
                                - offset(b)
                        }
                        PairKind::BallFacet => p.xc - balls.pos[a] + offset(a),
                        PairKind::BallBlock | PairKind::BallConvex => {
                            to_image(balls.pos[a], b) + offset(a)
                        }
                        PairKind::BlockBlock | PairKind::BlockConvex | PairKind::ConvexConvex => {
                            to_image(blocks.pos[a], b)
                        }
                        PairKind::BlockFacet | PairKind::ConvexFacet => p.xc - blocks.pos[a],
                    };
                    sum += outer(f, branch);
                }
            }
        }
        for i in (0..balls.len()).filter(|&i| balls.owner[i] == Owner::FREE.0) {
            let v = balls.vel[i];
            sum += outer(v, v) * balls.mass[i];
        }
        for (v, m) in [(&blocks.vel, &blocks.mass), (&clumps.vel, &clumps.mass)] {
            for (v, m) in v.iter().zip(m.iter()) {
                sum += outer(*v, *v) * *m;
            }
        }
        Some(CellState {
            h: cell.h(),
            volume,
            velocity_gradient: cell.velocity_gradient,
            stage: cell.begun,
            stress: sum * (-1.0 / volume),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sheared() -> Cell {
        let h = Mat3::from_cols(
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(0.3, 1.5, 0.0),
            Vec3::new(0.1, -0.2, 1.0),
        );
        Cell::new(
            Vec3::new(-1.0, 0.5, 0.0),
            h,
            [true, true, false],
            Mat3::ZERO,
        )
        .unwrap()
    }

    #[test]
    fn wrapped_positions_are_inside_and_differ_by_whole_edges() {
        let c = sheared();
        for x in [
            Vec3::new(-3.7, 4.1, 0.3),
            Vec3::new(5.0, -2.0, 7.0),
            Vec3::new(0.0, 1.0, 0.5),
        ] {
            let w = c.wrap(x);
            let s = c.fractional(w);
            assert!((0.0..1.0 + 1e-12).contains(&s.x) && (0.0..1.0 + 1e-12).contains(&s.y));
            let m = c.fractional(x) - s;
            assert!((m - m.round()).abs().max_element() < 1e-9);
            // The non-periodic axis is left alone.
            assert_eq!(m.z.round(), 0.0);
        }
        // Inside: the same bits.
        let x = c.origin + c.h() * Vec3::new(0.25, 0.5, 3.0);
        assert_eq!(c.wrap(x), x);
    }

    #[test]
    fn the_image_is_the_nearest_by_brute_force() {
        let c = sheared();
        let x1 = c.origin + c.h() * Vec3::new(0.05, 0.9, 0.5);
        let x2 = c.origin + c.h() * Vec3::new(0.97, 0.1, 0.5);
        let shift = c.image_shift(x1, x2);
        let mut best = f64::INFINITY;
        for i in -2..=2 {
            for j in -2..=2 {
                let s = c.h() * Vec3::new(i as f64, j as f64, 0.0);
                best = best.min((x2 + s - x1).length());
            }
        }
        assert!(((x2 + shift - x1).length() - best).abs() < 1e-12);
    }

    #[test]
    fn nearest_and_floor_agree_with_the_library_but_at_ties() {
        let mut x: f64 = -3.0;
        while x < 3.0 {
            for y in [x, x + 1e-12, x - 1e-12, x + 0.5, -x] {
                // Ties may go either way (to even here): both images are
                // as near.
                if (y - y.trunc()).abs() != 0.5 {
                    assert_eq!(nearest(y), y.round(), "{y}");
                }
                assert_eq!(floor(y), y.floor(), "{y}");
            }
            x += 0.0137;
        }
        for y in [0.5, 1.5, -0.5, 2.5] {
            assert!((nearest(y) - y).abs() == 0.5);
        }
        for y in [1e17, -1e17, f64::INFINITY] {
            assert_eq!(nearest(y), y);
            assert_eq!(floor(y), y);
        }
        assert!(nearest(f64::NAN).is_nan() && floor(f64::NAN).is_nan());
        assert_eq!(floor(-0.0), 0.0);
    }

    #[test]
    fn pairs_near_inside_the_cell_take_the_shift_rounding_gives() {
        // The shortcut for short separations against the rounding of the
        // fractional separation, on pairs up to a whole cell apart.
        let c = sheared();
        let mut shortcut = 0;
        for i in 0..4000 {
            let t = i as f64;
            let f = |k: f64| ((t * k).sin() * 43758.5453).fract();
            let x1 = c.origin + c.h() * Vec3::new(f(1.1), f(2.3), f(3.7));
            let d = Vec3::new(f(5.9), f(7.1), f(9.3)) * 1.2;
            let x2 = x1 + d;
            let s = c.h_inv * (x2 - x1);
            let m = Vec3::new(-s.x.round(), -s.y.round(), 0.0);
            assert_eq!(c.image_shift(x1, x2), c.h() * m, "{x1} {x2}");
            shortcut += usize::from((x2 - x1).length_squared() < c.own_sq);
        }
        // Both paths were taken.
        assert!((400..3600).contains(&shortcut), "{shortcut}");
    }

    #[test]
    fn widths_of_a_box_are_its_edges() {
        let c =
            Cell::from_box(Vec3::ZERO, Vec3::new(1.0, 2.0, 3.0), [true; 3], Mat3::ZERO).unwrap();
        assert_eq!(c.widths(), [1.0, 2.0, 3.0]);
        assert_eq!(c.volume(), 6.0);
    }
}
