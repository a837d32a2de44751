//! Rotational law of motion of a rigid body with a full inertia tensor
//! (rblocks and clumps): leap-frog in the world angular momentum, with the
//! free-rotor motion of each step split into exact rotations.
//!
//! Reads: a body's principal moments, its orientation at whole step `t`, its
//! world angular momentum at half step `t - dt/2`, the world moment summed
//! on it by the contact pass, its local damping and its rotational fixity.
//! Writes: the angular momentum at `t + dt/2` and the orientation at
//! `t + dt`.
//! Invariant: the orientation is a unit quaternion that maps the body's
//! principal frame to the world; with no moment the world angular momentum
//! is not changed at all (not even rounded), and the step is time-reversible
//! (negating the momentum retraces the poses).
//!
//! The functions are plain and per body: the engine's block loop calls them
//! over its dense columns, as the ball loop of `motion.rs` does with its
//! own formulas.
//!
//! # Model
//!
//! With `R` the rotation of the orientation `q`, `I = diag(I1, I2, I3)` the
//! principal moments, `pi = R^T L` the angular momentum in the body frame
//! and `M` the world moment, Euler's equations are `dL/dt = M` and
//! `dR/dt = R [w_b]x` with `w_b = I^-1 pi`. One step:
//!
//! 1. `L(t + dt/2) = L(t - dt/2) + M' dt`, where `M'` is the moment after
//!    local damping: `M'_k = M_k - a |M_k| sign(w_k)` per world component,
//!    `w` the angular velocity before the step (the ball rule of
//!    `motion.rs`, so a spherical body is damped exactly as a ball).
//! 2. `q(t + dt) = Phi_dt(q(t))`, the free rotor with `L(t + dt/2)` held:
//!    its energy `H = sum pi_k^2 / (2 I_k)` is split as
//!    `H = |pi|^2 / (2 I_m) + sum_k c_k pi_k^2 / 2`, `c_k = 1/I_k - 1/I_m`,
//!    with `I_m` the median moment, so `c_m = 0` and two terms remain, on
//!    the axes of the smallest (`lo`) and the largest (`hi`) moment. The
//!    flow of each term is an exact rotation: the first about the world
//!    axis of `L` by `|L| dt / I_m`; the others about body axis `k` by
//!    `c_k pi_k tau` (`pi_k` is constant along that flow). The step is the
//!    symmetric (Strang) composition `lo(dt/2) hi(dt) lo(dt/2)`, times the
//!    isotropic rotation, which commutes with all of them (`|pi|` is
//!    invariant).
//!
//! Why this scheme. Every sub-step is the exact flow of a part of `H`, so
//! the step is symplectic; the composition is symmetric, so it is
//! time-reversible and second order; the sub-steps only rotate the body
//! against a held `L`, so the world angular momentum of a free body is kept
//! exactly and `|pi|` too. It belongs to the family of Dullweber,
//! Leimkuhler and McLachlan (and NO_SQUISH, Miller et al.), which split
//! `H` into one exact rotation per principal axis; taking out the
//! isotropic part first with the median moment makes a body with two equal
//! moments (a symmetric top) and a sphere exact, not just accurate to
//! second order: a spherical block turns about a fixed axis at a constant
//! rate, as a ball does. For a 1:2:3 body the two remaining terms have the
//! smallest product of coefficients of the three choices of reference
//! moment, hence the smallest splitting error.
//!
//! Normalisation. Each sub-rotation is a unit quaternion built from the
//! sine and cosine of the exact half angle, so the rotation angle carries
//! no truncation; the product only drifts off the unit sphere by rounding.
//! The step divides the result by its norm: scaling a quaternion by a
//! positive factor leaves the rotation it stands for unchanged, so this
//! removes the drift without biasing the orientation (unlike a first-order
//! update `q += q w dt / 2` followed by normalisation, which turns the body
//! by `atan(w dt / 2) * 2` instead of `w dt` every step).
//!
//! # Units
//!
//! Moments of inertia kg m^2, angular momentum kg m^2/s, moments N m,
//! angular velocities rad/s, time s, stiffness N/m, lengths m.
//!
//! # References
//!
//! - Dullweber, A., Leimkuhler, B., McLachlan, R., "Symplectic splitting
//!   methods for rigid body molecular dynamics", J. Chem. Phys. 107(15),
//!   5840-5851, 1997.
//! - Miller, T.F., Eleftheriou, M., Pattnaik, P., Ndirango, A., Newns, D.,
//!   Martyna, G.J., "Symplectic quaternion scheme for biophysical molecular
//!   dynamics", J. Chem. Phys. 116(20), 8649-8659, 2002 (NO_SQUISH).

use crate::math::{Mat3, Quat, Vec3};
use crate::motion::sign;

/// Principal moments of inertia of a rigid body and what the rotational
/// step derives from them once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrincipalInertia {
    moments: Vec3,
    inverse: Vec3,
    /// Indices of the smallest, median and largest moment (ties broken by
    /// index, so the choice is deterministic).
    order: [usize; 3],
    /// `1/I_k - 1/I_m` for each axis (zero on the median axis).
    split: Vec3,
    /// All three moments equal: `L = I w` in any axes, computed as such so
    /// that a spherical body gives a ball's bits (a zero component of `w`
    /// stays zero for the damping's `sign`).
    isotropic: bool,
}

impl PrincipalInertia {
    /// The inertia of a body with principal moments `moments` (kg m^2) about
    /// the axes of its body frame. `None` unless all three are finite and
    /// positive.
    pub fn new(moments: Vec3) -> Option<PrincipalInertia> {
        if !(moments.is_finite() && moments.min_element() > 0.0) {
            return None;
        }
        let mut order = [0usize, 1, 2];
        order.sort_by(|&a, &b| moments[a].total_cmp(&moments[b]).then(a.cmp(&b)));
        let inverse = moments.recip();
        let median = inverse[order[1]];
        let mut split = inverse - Vec3::splat(median);
        // Exactly zero, whatever the rounding of the subtraction above.
        split[order[1]] = 0.0;
        Some(PrincipalInertia {
            moments,
            inverse,
            order,
            split,
            isotropic: moments.x == moments.y && moments.y == moments.z,
        })
    }

    /// Principal moments (kg m^2).
    pub fn moments(&self) -> Vec3 {
        self.moments
    }

    /// Their reciprocals (1/(kg m^2)), each `1.0 / I_k`.
    pub fn inverse(&self) -> Vec3 {
        self.inverse
    }

    /// Whether the three moments are equal (bit for bit).
    pub fn is_isotropic(&self) -> bool {
        self.isotropic
    }

    /// The inertia tensor in world axes for orientation `q`:
    /// `R I R^T` (kg m^2).
    pub fn world_tensor(&self, q: Quat) -> Mat3 {
        let r = Mat3::from_quat(q);
        r * Mat3::from_diagonal(self.moments) * r.transpose()
    }

    /// Angular velocity in world axes, `w = R I^-1 R^T L` (rad/s), of a body
    /// with orientation `q` and world angular momentum `l`.
    ///
    /// In the leap-frog, `l` lives at half steps and `q` at whole steps; the
    /// pair `(q(t + dt), L(t + dt/2))` gives the angular velocity to report
    /// with the pose at `t + dt`. For the contact increments of one step,
    /// [`mean_spin`] is consistent with the pose change itself.
    #[inline]
    pub fn angular_velocity(&self, q: Quat, l: Vec3) -> Vec3 {
        if self.isotropic {
            return l * self.inverse.x;
        }
        q * (self.inverse * (q.conjugate() * l))
    }

    /// World angular momentum `L = R I R^T w` of a body with orientation
    /// `q` turning at world angular velocity `w` (kg m^2/s).
    #[inline]
    pub fn momentum(&self, q: Quat, w: Vec3) -> Vec3 {
        if self.isotropic {
            return w * self.moments.x;
        }
        q * (self.moments * (q.conjugate() * w))
    }

    /// Rotational kinetic energy `L . w / 2` (J).
    pub fn kinetic_energy(&self, q: Quat, l: Vec3) -> f64 {
        let pi = q.conjugate() * l;
        0.5 * (pi * pi * self.inverse).element_sum()
    }

    /// Bound on the timestep from the rotational mode of a contact spring:
    /// `sqrt(I_min / (k r^2))`, for a spring of stiffness `stiffness` (N/m)
    /// acting at a lever arm up to `lever_arm` (m) from the centroid (the
    /// bounding radius is the safe choice).
    ///
    /// It is the rotational counterpart of the balls' `sqrt(m / k)` and
    /// enters the automatic timestep as the minimum of the two (with the
    /// same safety factor). The free rotation itself has no stability
    /// limit (every sub-step is an exact rotation); its accuracy is set by
    /// the angle turned per step, `|w| dt`.
    pub fn rotation_timestep(&self, stiffness: f64, lever_arm: f64) -> f64 {
        (self.moments.min_element() / (stiffness * lever_arm * lever_arm)).sqrt()
    }
}

/// The rotational state of one rigid body in the leap-frog.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidRotation {
    /// Rotation from the principal (body) frame to the world, at whole
    /// steps; unit length.
    pub orientation: Quat,
    /// Angular momentum in world axes at half steps (kg m^2/s).
    pub momentum: Vec3,
}

impl RigidRotation {
    /// The state at `t = 0` of a body with orientation `q` turning at world
    /// angular velocity `w` under world moment `moment`: the momentum is
    /// set back half a step, `L(-dt/2) = L(0) - M dt/2`, so that a constant
    /// moment gives the exact `L(t) = L(0) + M t` at whole steps.
    pub fn start(inertia: &PrincipalInertia, q: Quat, w: Vec3, moment: Vec3, dt: f64) -> Self {
        RigidRotation {
            orientation: q,
            momentum: inertia.momentum(q, w) - moment * (0.5 * dt),
        }
    }

    /// One leap-frog step of the rotation (see the module docs).
    ///
    /// `moment` is the world moment about the centroid (N m), `damping` the
    /// local damping coefficient in `[0, 1)`. When `fixed`, the world angular
    /// velocity is held (to rounding), as for a ball's fixed spin: the
    /// moment is ignored and the body turns at that rate, the momentum
    /// following the pose (a fixed body at rest does not rotate at all). Fixity of single rotation components is not offered: for
    /// a body with a full inertia tensor they do not decouple.
    pub fn step(
        &mut self,
        inertia: &PrincipalInertia,
        moment: Vec3,
        damping: f64,
        fixed: bool,
        dt: f64,
    ) {
        let q = self.orientation;
        if fixed {
            let w = inertia.angular_velocity(q, self.momentum);
            if w == Vec3::ZERO {
                return;
            }
            let next = (Quat::from_scaled_axis(w * dt) * q).normalize();
            self.orientation = next;
            self.momentum = inertia.momentum(next, w);
            return;
        }
        let torque = if damping == 0.0 {
            moment
        } else {
            damped_moment(moment, inertia.angular_velocity(q, self.momentum), damping)
        };
        self.momentum += torque * dt;
        self.orientation = rotate_free(inertia, q, self.momentum, dt);
    }
}

/// Local damping of a moment, per world component:
/// `M_k - a |M_k| sign(w_k)` (the ball rule of the engine's law of motion).
#[inline]
pub fn damped_moment(moment: Vec3, w: Vec3, damping: f64) -> Vec3 {
    Vec3::new(
        moment.x - damping * moment.x.abs() * sign(w.x),
        moment.y - damping * moment.y.abs() * sign(w.y),
        moment.z - damping * moment.z.abs() * sign(w.z),
    )
}

/// The orientation after a free rotation of `dt` with world angular
/// momentum `l` held: the symmetric splitting of the module docs,
/// normalised.
pub fn rotate_free(inertia: &PrincipalInertia, q: Quat, l: Vec3, dt: f64) -> Quat {
    let [lo, _, hi] = inertia.order;
    let mut pi = q.conjugate() * l;
    let mut body = Quat::IDENTITY;
    for (axis, tau) in [(lo, 0.5 * dt), (hi, dt), (lo, 0.5 * dt)] {
        let c = inertia.split[axis];
        if c == 0.0 {
            // A symmetric top about this axis: nothing to turn.
            continue;
        }
        let r = axis_rotation(axis, c * pi[axis] * tau);
        body *= r;
        pi = r.conjugate() * pi;
    }
    // The isotropic part turns the body about the fixed world axis of `l`;
    // it commutes with the body-axis rotations, so one application suffices.
    let iso = Quat::from_scaled_axis(l * (dt * inertia.inverse[inertia.order[1]]));
    (iso * q * body).normalize()
}

/// Rotation by `angle` about body axis `axis` (0, 1, 2).
#[inline]
fn axis_rotation(axis: usize, angle: f64) -> Quat {
    let (s, c) = (0.5 * angle).sin_cos();
    let mut v = Vec3::ZERO;
    v[axis] = s;
    Quat::from_xyzw(v.x, v.y, v.z, c)
}

/// Mean world angular velocity over a step that turned the body from `q0`
/// to `q1` in `dt` (rad/s): the rotation vector of `q1 q0^-1` divided by
/// `dt`. It is what the contact kinematics should use, since it reproduces
/// the pose change exactly.
pub fn mean_spin(q0: Quat, q1: Quat, dt: f64) -> Vec3 {
    let mut d = q1 * q0.conjugate();
    // The shorter way round: q and -q are the same rotation.
    if d.w < 0.0 {
        d = -d;
    }
    let v = Vec3::new(d.x, d.y, d.z);
    let s = v.length();
    if s == 0.0 {
        return Vec3::ZERO;
    }
    v * (2.0 * s.atan2(d.w) / (s * dt))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Angle of the rotation that takes `b` to `a` (rad).
    fn angle_between(a: Quat, b: Quat) -> f64 {
        let d = a * b.conjugate();
        2.0 * Vec3::new(d.x, d.y, d.z).length().atan2(d.w.abs())
    }

    fn q0() -> Quat {
        Quat::from_scaled_axis(Vec3::new(0.3, -0.7, 0.4))
    }

    /// Body-frame momentum.
    fn body(s: &RigidRotation) -> Vec3 {
        s.orientation.conjugate() * s.momentum
    }

    /// Times at which `x` crosses zero (either way), linearly interpolated
    /// between samples `dt` apart.
    fn zero_crossings(xs: &[f64], dt: f64) -> Vec<f64> {
        let mut out = Vec::new();
        for (i, w) in xs.windows(2).enumerate() {
            if (w[0] > 0.0) != (w[1] > 0.0) {
                out.push((i as f64 + w[0] / (w[0] - w[1])) * dt);
            }
        }
        out
    }

    /// Mean time between successive flips.
    fn flip_period(crossings: &[f64]) -> f64 {
        (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f64
    }

    /// A 1:2:3 body spun near its intermediate axis (10 rad/s).
    fn tumbling() -> (PrincipalInertia, Vec3) {
        let inertia = PrincipalInertia::new(Vec3::new(1.0, 2.0, 3.0)).unwrap();
        let w_body = Vec3::new(0.02, 10.0, 0.02);
        (inertia, inertia.moments() * w_body)
    }

    #[test]
    fn free_tumbling_keeps_momentum_and_energy() {
        let (inertia, pi0) = tumbling();
        let dt = 1e-3;
        let n = 100_000;
        let mut s = RigidRotation {
            orientation: q0(),
            momentum: q0() * pi0,
        };
        let l0 = s.momentum;
        let e0 = inertia.kinetic_energy(s.orientation, s.momentum);
        let mut pi2 = Vec::with_capacity(n + 1);
        let mut energy = Vec::with_capacity(n + 1);
        pi2.push(body(&s).y);
        energy.push(e0);
        let mut worst_l = 0.0f64;
        for _ in 0..n {
            s.step(&inertia, Vec3::ZERO, 0.0, false, dt);
            pi2.push(body(&s).y);
            energy.push(inertia.kinetic_energy(s.orientation, s.momentum));
            worst_l = worst_l.max((s.momentum - l0).length() / l0.length());
        }
        assert!(worst_l <= 1e-10, "angular momentum moved by {worst_l:e}");
        // The energy error of a symplectic scheme oscillates (here with the
        // flip period) about a constant. Drift is measured at the same phase
        // of every period, where `pi_2` crosses zero downwards: the slope of
        // the least-squares line through those energies, times the run
        // length, relative to the initial energy.
        let mut samples = Vec::new();
        for (i, w) in pi2.windows(2).enumerate() {
            if w[0] > 0.0 && w[1] <= 0.0 {
                let f = w[0] / (w[0] - w[1]);
                let e = energy[i] + f * (energy[i + 1] - energy[i]);
                samples.push(((i as f64 + f) * dt, e));
            }
        }
        assert!(samples.len() >= 10, "only {} flips", samples.len());
        let m = samples.len() as f64;
        let (st, se) = samples
            .iter()
            .fold((0.0, 0.0), |(a, b), &(t, e)| (a + t, b + e));
        let (tm, em) = (st / m, se / m);
        let (num, den) = samples.iter().fold((0.0, 0.0), |(a, b), &(t, e)| {
            (a + (t - tm) * (e - em), b + (t - tm) * (t - tm))
        });
        let drift = (num / den * n as f64 * dt / e0).abs();
        let (lo, hi) = energy
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &e| {
                (a.min(e), b.max(e))
            });
        eprintln!(
            "tumbling: |dL|/|L| {worst_l:e}, energy drift {drift:e}, oscillation {:e}, {} phase samples",
            (hi - lo) / e0,
            samples.len()
        );
        assert!(drift <= 1e-8, "energy drift {drift:e}");
        // The oscillation itself stays small: second order in w dt.
        assert!((hi - lo) / e0 < 1e-3);
    }

    #[test]
    fn flip_period_matches_a_fine_reference() {
        let (inertia, pi0) = tumbling();
        let dt = 1e-3;
        let span = 20.0;
        let n = (span / dt) as usize;
        let mut s = RigidRotation {
            orientation: q0(),
            momentum: q0() * pi0,
        };
        let mut pi2 = vec![pi0.y];
        for _ in 0..n {
            s.step(&inertia, Vec3::ZERO, 0.0, false, dt);
            pi2.push(body(&s).y);
        }
        let ours = zero_crossings(&pi2, dt);

        // Reference: classical RK4 on Euler's equations in the body frame,
        // d(pi)/dt = pi x (I^-1 pi), at a 100 times smaller step.
        let h = dt / 100.0;
        let inv = inertia.moments().recip();
        let f = |p: Vec3| p.cross(p * inv);
        let mut p = pi0;
        let mut ref2 = vec![p.y];
        for _ in 0..n * 100 {
            let k1 = f(p);
            let k2 = f(p + k1 * (0.5 * h));
            let k3 = f(p + k2 * (0.5 * h));
            let k4 = f(p + k3 * h);
            p += (k1 + k2 * 2.0 + k3 * 2.0 + k4) * (h / 6.0);
            ref2.push(p.y);
        }
        let reference = zero_crossings(&ref2, h);
        assert!(reference.len() >= 5, "only {} flips", reference.len());
        assert_eq!(ours.len(), reference.len());
        let (t_ours, t_ref) = (flip_period(&ours), flip_period(&reference));
        let rel = (t_ours - t_ref).abs() / t_ref;
        eprintln!(
            "flip period: ours {t_ours:.6} s, reference {t_ref:.6} s, relative error {rel:e}"
        );
        assert!(rel < 0.01, "flip period off by {rel:e}");
    }

    #[test]
    fn sphere_turns_like_a_ball() {
        let inertia = PrincipalInertia::new(Vec3::splat(2.5)).unwrap();
        let w = Vec3::new(1.0, -2.0, 0.5);
        let dt = 1e-3;
        let n = 10_000;
        let mut s = RigidRotation::start(&inertia, q0(), w, Vec3::ZERO, dt);
        for _ in 0..n {
            s.step(&inertia, Vec3::ZERO, 0.0, false, dt);
            let spin = inertia.angular_velocity(s.orientation, s.momentum);
            assert!((spin - w).length() <= 1e-14 * w.length());
        }
        let exact = Quat::from_scaled_axis(w * (n as f64 * dt)) * q0();
        let err = angle_between(s.orientation, exact);
        eprintln!("sphere: orientation error {err:e} rad after {n} steps");
        assert!(err < 1e-12, "orientation off by {err:e} rad");
    }

    #[test]
    fn symmetric_tops_precess_exactly() {
        // Two equal moments: a torque-free symmetric top turns about the
        // fixed L at |L| / I_eq while spinning about its symmetry axis at
        // (1/I_s - 1/I_eq) pi_s; the splitting reproduces it exactly.
        for (moments, axis) in [(Vec3::new(1.0, 1.0, 3.0), 2), (Vec3::new(3.0, 1.0, 3.0), 1)] {
            let inertia = PrincipalInertia::new(moments).unwrap();
            let pi = Vec3::new(0.4, -1.1, 0.9);
            let dt = 1e-3;
            let n = 10_000;
            let l = q0() * pi;
            let mut s = RigidRotation {
                orientation: q0(),
                momentum: l,
            };
            for _ in 0..n {
                s.step(&inertia, Vec3::ZERO, 0.0, false, dt);
            }
            let t = n as f64 * dt;
            let i_eq = moments[(axis + 1) % 3];
            let mut spin = Vec3::ZERO;
            spin[axis] = (1.0 / moments[axis] - 1.0 / i_eq) * pi[axis] * t;
            let exact =
                Quat::from_scaled_axis(l * (t / i_eq)) * q0() * Quat::from_scaled_axis(spin);
            let err = angle_between(s.orientation, exact);
            eprintln!("symmetric top {moments}: orientation error {err:e} rad");
            assert!(err < 1e-12, "orientation off by {err:e} rad");
        }
    }

    #[test]
    fn reversing_the_momentum_retraces_the_poses() {
        // Reversible in exact arithmetic; in f64 the products of the step
        // leave about 6e-16 rad per step, so 2 x 1000 steps (the body turns
        // some 10 rad each way) stay within 1e-12.
        let (inertia, pi0) = tumbling();
        let dt = 1e-3;
        let n = 1_000;
        let start = RigidRotation {
            orientation: q0(),
            momentum: q0() * pi0,
        };
        let mut s = start;
        for _ in 0..n {
            s.step(&inertia, Vec3::ZERO, 0.0, false, dt);
        }
        let travelled = angle_between(s.orientation, start.orientation);
        s.momentum = -s.momentum;
        for _ in 0..n {
            s.step(&inertia, Vec3::ZERO, 0.0, false, dt);
        }
        s.momentum = -s.momentum;
        let err = angle_between(s.orientation, start.orientation);
        eprintln!("reversibility: back within {err:e} rad (turned {travelled:.3} rad away)");
        assert!(travelled > 0.1);
        assert!(err < 1e-12, "orientation off by {err:e} rad");
        assert_eq!(s.momentum, start.momentum);
    }

    #[test]
    fn constant_moment_about_a_principal_axis() {
        let inertia = PrincipalInertia::new(Vec3::new(1.0, 2.0, 3.0)).unwrap();
        let dt = 1e-3;
        let n = 5_000;
        let t = n as f64 * dt;
        for axis in 0..3 {
            let mut e = Vec3::ZERO;
            e[axis] = 1.0;
            let world_axis = q0() * e;
            let moment = world_axis * 0.7;
            let mut s = RigidRotation::start(&inertia, q0(), Vec3::ZERO, moment, dt);
            for _ in 0..n {
                s.step(&inertia, moment, 0.0, false, dt);
            }
            // theta = M t^2 / (2 I), about the fixed principal axis.
            let theta = 0.7 * t * t / (2.0 * inertia.moments()[axis]);
            let exact = Quat::from_axis_angle(world_axis, theta) * q0();
            let err = angle_between(s.orientation, exact);
            eprintln!("constant moment about axis {axis}: angle {theta:.4} rad, error {err:e} rad");
            assert!(err < 1e-12 * theta.max(1.0), "axis {axis}: off by {err:e}");
        }
    }

    #[test]
    fn damping_of_a_sphere_is_the_ball_rule() {
        let i = 0.8;
        let inertia = PrincipalInertia::new(Vec3::splat(i)).unwrap();
        let (a, dt) = (0.3, 1e-3);
        let mut s = RigidRotation {
            orientation: q0(),
            momentum: Vec3::new(0.2, 0.0, -0.1) * i,
        };
        let mut ball = s.momentum / i;
        for k in 0..2_000 {
            let x = k as f64 * 0.01;
            let moment = Vec3::new(x.sin(), (0.7 * x).cos() - 0.2, 0.5 * (1.3 * x).sin());
            s.step(&inertia, moment, a, false, dt);
            // motion.rs: w += (alpha - a |alpha| sign(w)) dt, alpha = M / I.
            for c in 0..3 {
                let alpha = moment[c] / i;
                ball[c] += (alpha - a * alpha.abs() * sign(ball[c])) * dt;
            }
            let w = inertia.angular_velocity(s.orientation, s.momentum);
            assert!((w - ball).length() <= 1e-13, "step {k}: {w} vs {ball}");
        }
    }

    #[test]
    fn fixed_rotation_holds_the_angular_velocity() {
        let inertia = PrincipalInertia::new(Vec3::new(1.0, 2.0, 3.0)).unwrap();
        let dt = 1e-3;
        // At rest: a moment does not turn it, bit for bit.
        let mut s = RigidRotation::start(&inertia, q0(), Vec3::ZERO, Vec3::ZERO, dt);
        for _ in 0..100 {
            s.step(&inertia, Vec3::new(5.0, -3.0, 1.0), 0.5, true, dt);
        }
        assert_eq!(s.orientation, q0());
        assert_eq!(s.momentum, Vec3::ZERO);
        // Spinning: it keeps its world angular velocity (not its momentum).
        let w = Vec3::new(0.5, 1.0, -2.0);
        let mut s = RigidRotation::start(&inertia, q0(), w, Vec3::ZERO, dt);
        let n = 1_000;
        for _ in 0..n {
            s.step(&inertia, Vec3::new(5.0, -3.0, 1.0), 0.0, true, dt);
        }
        // Held to rounding: L is recomputed from w at each new pose, which
        // leaves about 4e-16 relative per step.
        let held = inertia.angular_velocity(s.orientation, s.momentum);
        let drift = (held - w).length() / w.length();
        eprintln!("fixed: |dw|/|w| {drift:e} after {n} steps");
        assert!(drift < 1e-12);
        let exact = Quat::from_scaled_axis(w * (n as f64 * dt)) * q0();
        assert!(angle_between(s.orientation, exact) < 1e-12);
    }

    #[test]
    fn mean_spin_and_timestep() {
        let w = Vec3::new(0.3, -1.0, 2.0);
        let q1 = Quat::from_scaled_axis(w * 0.01) * q0();
        assert!((mean_spin(q0(), q1, 0.01) - w).length() < 1e-13);
        assert!((mean_spin(q0(), -q1, 0.01) - w).length() < 1e-13);
        assert!(mean_spin(q0(), q0(), 0.01).length() < 1e-12);
        assert_eq!(mean_spin(Quat::IDENTITY, Quat::IDENTITY, 0.01), Vec3::ZERO);
        // A ball's I = 2/5 m r^2 with a spring at its surface.
        let (m, r, k) = (2.0, 0.1, 1e5);
        let inertia = PrincipalInertia::new(Vec3::splat(0.4 * m * r * r)).unwrap();
        let dt = inertia.rotation_timestep(k, r);
        assert!((dt - (0.4 * m / k).sqrt()).abs() < 1e-15);
        assert!(PrincipalInertia::new(Vec3::new(1.0, 0.0, 1.0)).is_none());
        assert!(PrincipalInertia::new(Vec3::new(1.0, f64::NAN, 1.0)).is_none());
    }
}
