//! Contacts: the store (struct of arrays per model) and contact resolution
//! (contact plane, frame update, relative-motion increments).
//!
//! Reads: the kinematics of the two ends. Writes: the contact plane
//! (location `xc`, normal `n`, axes `s`, `t`), the gap and the increments
//! handed to the model.
//! Invariants: `n` points from end1 to end2 and `n = s x t`; the gap is
//! negative when the pieces overlap; increments are those of end2 relative
//! to end1 over one timestep.

use crate::math::Vec3;
use talus_sdk::ContactInput;

/// The geometric state of one contact.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Plane {
    /// Contact location (m).
    pub xc: Vec3,
    /// Unit normal, end1 to end2.
    pub n: Vec3,
    /// Unit in-plane axis s.
    pub s: Vec3,
    /// Unit in-plane axis t (`t = n x s`).
    pub t: Vec3,
    /// Gap (m); negative is overlap.
    pub gap: f64,
    /// For ball-facet contacts: region code of the wall contact point
    /// (see [`crate::geometry::Region::code`]); 0 for ball-ball.
    pub region: u8,
    /// Whether the frame has been initialised (false for a new contact).
    pub initialised: bool,
    /// For ball-block contacts: the block facet where the last
    /// closest-point search ended, where the next one starts (it sits in
    /// the padding after `region`, so planes keep their size).
    pub feature: u32,
}

/// Motion of one end at the contact: reference point, its velocity and the
/// angular velocity of the body.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EndMotion {
    /// Reference point: centroid of a ball, centre of rotation of a wall (m).
    pub x: Vec3,
    /// Velocity of the reference point (m/s).
    pub v: Vec3,
    /// Angular velocity (rad/s).
    pub w: Vec3,
}

impl EndMotion {
    /// Velocity of the body point now at `p` (m/s).
    #[inline]
    pub fn velocity_at(&self, p: Vec3) -> Vec3 {
        self.v + self.w.cross(p - self.x)
    }
}

/// Initial `s` axis: the projection of global x on the plane, or of global
/// y when x is (nearly) parallel to `n`.
#[inline]
pub fn initial_s(n: Vec3) -> Vec3 {
    let axis = if n.x.abs() < 0.9 { Vec3::X } else { Vec3::Y };
    (axis - n * axis.dot(n)).normalize()
}

/// Carries `s` from the old plane (normal `n_old`) to the new one (normal
/// `n`) and turns it about `n` with the mean spin of the two ends.
///
/// # Model
/// First rotation, about the line common to both planes:
/// `s1 = s* - s* x (n* x n)`. Second rotation, about the new normal by the
/// average angular velocity of the pieces projected on it:
/// `s2 = s1 - s1 x w~ dt` with `w~ = (0.5 (w1 + w2) . n) n`.
/// The result is then projected on the plane and normalised, so the triad
/// stays orthonormal to rounding however many steps are taken (the two
/// rotations are first-order; the projection only removes their
/// second-order drift).
///
/// Evaluated in a form with fewer operations and the same value: with
/// `a x (b x c) = b (a.c) - c (a.b)` the first rotation is
/// `s* - n* (s*.n) + n (s*.n*)`, and its last term, being along `n`, is
/// removed by the projection (it adds nothing to the second rotation
/// either, `n x n = 0`); the second rotation is `s1 + phi (n x s1)` with
/// `phi = 0.5 dt (w1 + w2) . n`.
///
/// # References
/// Itasca, PFC 6 documentation, "Contact Resolution", eq. (5).
// This and the other per-contact steps of resolution are always inlined:
// the contact pass is generic over the pair kind, and left to its own
// judgement the compiler made calls of them there, whose vectors went
// through memory (dense 10k on one thread 1.4x slower).
#[inline(always)]
pub fn rotate_frame(
    s_old: Vec3,
    n_old: Vec3,
    n: Vec3,
    w1: Vec3,
    w2: Vec3,
    dt: f64,
) -> (Vec3, Vec3) {
    let s1 = s_old - n_old * s_old.dot(n);
    let phi = 0.5 * dt * (w1 + w2).dot(n);
    let s2 = s1 + n.cross(s1) * phi;
    let sp = s2 - n * s2.dot(n);
    let l2 = sp.length_squared();
    let e = l2 - 1.0;
    let s = if e.abs() < 1e-8 {
        // A small turn: one Newton step for 1 / sqrt(l2) from 1 is exact
        // to within 3/8 e^2 < 4e-17, below rounding, and spares the square
        // root and the division of the chain.
        sp * (1.0 - 0.5 * e)
    } else if l2 > 1e-24 {
        // One reciprocal instead of three divisions (glam divides per lane).
        sp * (1.0 / l2.sqrt())
    } else {
        initial_s(n)
    };
    (s, n.cross(s))
}

/// Fills the relative-motion increments of `input` from the two ends'
/// motion over `dt`.
///
/// # Model
/// `d' = v2(xc) - v1(xc)` with `v(xc) = v + w x (xc - x)`; the normal part
/// `d'.n`, the shear part projected on (s, t); the relative spin
/// `w2 - w1` split into twist (along n) and bend (on the plane); every rate
/// times `dt`. The in-plane components are taken as `d'.s` and `d'.t`
/// directly: `s` and `t` are normal to `n`, so removing the normal part
/// first would change nothing but the rounding.
#[inline(always)]
pub fn increments(
    plane: &Plane,
    e1: &EndMotion,
    e2: &EndMotion,
    dt: f64,
    input: &mut ContactInput,
) {
    let dv = (e2.velocity_at(plane.xc) - e1.velocity_at(plane.xc)) * dt;
    let dw = (e2.w - e1.w) * dt;
    input.delta_n = dv.dot(plane.n);
    input.delta_s = [dv.dot(plane.s), dv.dot(plane.t)];
    input.theta_t = dw.dot(plane.n);
    input.theta_b = [dw.dot(plane.s), dw.dot(plane.t)];
}

/// Sets a fresh contact's frame or carries the old one to the new normal.
#[inline(always)]
pub fn update_frame(plane: &mut Plane, n: Vec3, w1: Vec3, w2: Vec3, dt: f64) {
    if plane.initialised {
        let (s, t) = rotate_frame(plane.s, plane.n, n, w1, w2, dt);
        plane.n = n;
        plane.s = s;
        plane.t = t;
    } else {
        plane.n = n;
        plane.s = initial_s(n);
        plane.t = n.cross(plane.s);
        plane.initialised = true;
    }
}

/// Contact plane of two balls.
///
/// # Model
/// `n = (x2 - x1) / d`, `g = d - (R1 + R2)`, `xc = x1 + (R1 + g/2) n`.
/// Coincident centres keep the previous normal (or x for a new contact).
#[inline(always)]
pub fn plane_ball_ball(x1: Vec3, r1: f64, x2: Vec3, r2: f64, prev_n: Vec3) -> (Vec3, f64, Vec3) {
    let d_vec = x2 - x1;
    let d = d_vec.length();
    plane_ball_ball_at(x1, r1, d_vec, (d, 1.0 / d), r2, prev_n)
}

/// [`plane_ball_ball`] from the offset `d_vec = x2 - x1` of the centres,
/// its length `d` and `inv = 1 / d`.
#[inline(always)]
pub(crate) fn plane_ball_ball_at(
    x1: Vec3,
    r1: f64,
    d_vec: Vec3,
    (d, inv): (f64, f64),
    r2: f64,
    prev_n: Vec3,
) -> (Vec3, f64, Vec3) {
    let n = if d > 0.0 {
        d_vec * inv
    } else if prev_n != Vec3::ZERO {
        prev_n
    } else {
        Vec3::X
    };
    let gap = d - (r1 + r2);
    (n, gap, x1 + n * (r1 + 0.5 * gap))
}

/// Contact plane of a ball and a facet whose closest point is `xf`.
///
/// # Model
/// `n = (xf - x1) / d`, `g = d - R1`, `xc = x1 + (R1 + g/2) n`. A ball
/// centre lying on the facet takes the side opposite the facet normal.
#[inline(always)]
pub fn plane_ball_facet(x1: Vec3, r1: f64, xf: Vec3, facet_normal: Vec3) -> (Vec3, f64, Vec3) {
    let d_vec = xf - x1;
    let d = d_vec.length();
    let n = if d > 0.0 {
        d_vec * (1.0 / d)
    } else {
        -facet_normal
    };
    let gap = d - r1;
    (n, gap, x1 + n * (r1 + 0.5 * gap))
}

/// What a contact applies to its two ends this step, in global axes:
/// the force on end2 (end1 gets the opposite), the moments about each
/// end's reference point, and the stiffness for the timestep.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Applied {
    /// Force on end2 (N); zero unless the contact is active.
    pub force: Vec3,
    /// Moment on end1 about its reference point (N m).
    pub torque1: Vec3,
    /// Moment on end2 about its reference point (N m).
    pub torque2: Vec3,
    /// Translational stiffness for the timestep (N/m); zero if inactive.
    pub stiffness: f64,
}

pub mod six_dof;
mod store;

pub use six_dof::{ContactFrame, Displacements};

pub(crate) use store::{cache_chunks, item_cuts};
pub use store::{ContactStore, Setup, BATCH};
pub(crate) use store::{
    BOND_NEAREST, CARRIED, CARRY_FORCE, CARRY_STIFFNESS, ENGINE_BITS, HELD, RELEASED, SIDE_OFF,
};

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn unit(rng: &mut ChaCha8Rng) -> Vec3 {
        loop {
            let v = Vec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            let l = v.length();
            if l > 0.1 && l < 1.0 {
                return v / l;
            }
        }
    }

    /// The largest departure of (s, t, n) from a right-handed orthonormal
    /// triad with n = s x t.
    fn orthonormality_error(n: Vec3, s: Vec3, t: Vec3) -> f64 {
        [
            (s.length() - 1.0).abs(),
            (t.length() - 1.0).abs(),
            s.dot(t).abs(),
            s.dot(n).abs(),
            t.dot(n).abs(),
            (s.cross(t) - n).length(),
        ]
        .into_iter()
        .fold(0.0, f64::max)
    }

    #[test]
    fn frame_stays_orthonormal_over_a_million_updates() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut n = unit(&mut rng);
        let mut s = initial_s(n);
        let mut worst: f64 = 0.0;
        for _ in 0..1_000_000 {
            // Small random tilt of the normal and random spins, as in a run.
            let n_new = (n + unit(&mut rng) * 0.01).normalize();
            let w1 = unit(&mut rng) * rng.random_range(0.0..100.0);
            let w2 = unit(&mut rng) * rng.random_range(0.0..100.0);
            let (s2, t) = rotate_frame(s, n, n_new, w1, w2, 1e-4);
            n = n_new;
            s = s2;
            worst = worst.max(orthonormality_error(n, s, t));
        }
        assert!(worst < 1e-13, "worst orthonormality error {worst}");
    }

    #[test]
    fn frame_stays_orthonormal_through_small_turns() {
        // Turns small enough for the Newton normalisation (a slow contact
        // in a packing at rest), with the exact path taken now and then.
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut n = unit(&mut rng);
        let mut s = initial_s(n);
        let mut worst: f64 = 0.0;
        let mut newton = 0;
        for i in 0..1_000_000 {
            let tilt = if i % 1000 == 0 { 1e-3 } else { 1e-6 };
            let n_new = (n + unit(&mut rng) * tilt).normalize();
            let w1 = unit(&mut rng) * rng.random_range(0.0..1.0);
            let w2 = unit(&mut rng) * rng.random_range(0.0..1.0);
            let s1 = s - s.cross(n.cross(n_new));
            let s2 = s1 - s1.cross(n_new * (0.5 * (w1 + w2).dot(n_new)) * 1e-6);
            let sp = s2 - n_new * s2.dot(n_new);
            newton += usize::from((sp.length_squared() - 1.0).abs() < 1e-8);
            let (s2, t) = rotate_frame(s, n, n_new, w1, w2, 1e-6);
            n = n_new;
            s = s2;
            worst = worst.max(orthonormality_error(n, s, t));
        }
        assert!(newton > 900_000, "the Newton path ran {newton} times");
        assert!(worst < 1e-13, "worst orthonormality error {worst}");
    }

    #[test]
    fn rotate_frame_equals_the_two_rotations_written_out() {
        // The evaluated form against the rotations as the model states
        // them, followed by the projection and the normalisation.
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut worst: f64 = 0.0;
        for i in 0..100_000 {
            let n = unit(&mut rng);
            let s = initial_s(n).rotate_towards(n.cross(initial_s(n)), rng.random_range(0.0..6.0));
            let tilt = [1e-6, 1e-3, 0.05][i % 3];
            let n_new = (n + unit(&mut rng) * tilt).normalize();
            let w1 = unit(&mut rng) * rng.random_range(0.0..100.0);
            let w2 = unit(&mut rng) * rng.random_range(0.0..100.0);
            let dt = 1e-4;
            let s1 = s - s.cross(n.cross(n_new));
            let s2 = s1 - s1.cross(n_new * (0.5 * (w1 + w2).dot(n_new)) * dt);
            let s_ref = (s2 - n_new * s2.dot(n_new)).normalize();
            let (s_got, t_got) = rotate_frame(s, n, n_new, w1, w2, dt);
            worst = worst
                .max((s_got - s_ref).length())
                .max((t_got - n_new.cross(s_ref)).length());
        }
        assert!(worst < 1e-14, "largest difference {worst}");
    }

    #[test]
    fn pair_spun_about_normal_gives_twist_increment() {
        let plane = Plane {
            xc: Vec3::ZERO,
            n: Vec3::Z,
            s: Vec3::X,
            t: Vec3::Y,
            ..Default::default()
        };
        let e1 = EndMotion {
            x: Vec3::new(0.0, 0.0, -1.0),
            v: Vec3::ZERO,
            w: Vec3::new(0.0, 0.0, -3.0),
        };
        let e2 = EndMotion {
            x: Vec3::new(0.0, 0.0, 1.0),
            v: Vec3::ZERO,
            w: Vec3::new(0.0, 0.0, 2.0),
        };
        let mut input = ContactInput::default();
        increments(&plane, &e1, &e2, 0.01, &mut input);
        assert!((input.theta_t - 0.05).abs() < 1e-15);
        assert_eq!(input.theta_b, [0.0, 0.0]);
        // Spin about the line of centres moves no surface point at xc.
        assert_eq!(input.delta_s, [0.0, 0.0]);
        assert_eq!(input.delta_n, 0.0);
    }

    #[test]
    fn pair_rolled_gives_bend_increments_and_no_slip() {
        // Ball 2 rolls on ball 1 (fixed) without slip: at the contact point
        // the surface velocities agree, so the shear increment vanishes
        // while the relative rotation shows up as bend.
        let r = 0.5;
        let plane = Plane {
            xc: Vec3::ZERO,
            n: Vec3::Z,
            s: Vec3::X,
            t: Vec3::Y,
            ..Default::default()
        };
        let e1 = EndMotion {
            x: Vec3::new(0.0, 0.0, -r),
            v: Vec3::ZERO,
            w: Vec3::ZERO,
        };
        let w = Vec3::new(0.0, 4.0, 0.0);
        // Contact point of ball 2 is at -r z from its centre: v + w x (-r z) = 0.
        let v = -w.cross(Vec3::new(0.0, 0.0, -r));
        let e2 = EndMotion {
            x: Vec3::new(0.0, 0.0, r),
            v,
            w,
        };
        let mut input = ContactInput::default();
        increments(&plane, &e1, &e2, 0.001, &mut input);
        assert!(input.delta_s[0].abs() < 1e-15 && input.delta_s[1].abs() < 1e-15);
        assert!((input.theta_b[1] - 0.004).abs() < 1e-15);
        assert_eq!(input.theta_b[0], 0.0);
        assert_eq!(input.theta_t, 0.0);
    }
}
