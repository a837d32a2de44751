//! The six-DOF contact frame (seed 004): an alternative, chosen per model
//! pairing, to the two-rotation frame update of [`super::rotate_frame`].
//!
//! Reads: the contact's previous frame, this step's directly computed
//! normal and location, the two ends' motion. Writes: the frame carried
//! to the end of the step, the model input's increments (taken in the
//! frame at mid-step), and the six accumulated generalized displacements
//! of the contact.
//! Invariants: the stored frame is right-handed and orthonormal with its
//! normal the directly computed one; the increments are those of end2
//! relative to end1, as in the default update.

use super::{initial_s, EndMotion, Plane};
use crate::math::{Quat, Vec3};
use talus_sdk::ContactInput;

/// How the contacts of a model pairing carry their frame from step to
/// step (`frame` and `no_ratchet` of a `[[models]]` entry).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum ContactFrame {
    /// The two rotations of seed 002 ([`super::rotate_frame`]), with the
    /// increments taken in the frame at the end of the step.
    #[default]
    Rotations,
    /// The six-DOF frame of seed 004 ([`carry_frame`]): exact bending and
    /// twist rotations, the increments taken in the frame at mid-step, and
    /// the six accumulated displacements kept per contact.
    SixDof {
        /// Branch vectors of ball ends along the normal with the ball's
        /// radius as length, instead of from the centre to the contact
        /// location (see [`relative_velocity`]).
        no_ratchet: bool,
    },
}

impl ContactFrame {
    /// Whether this is the six-DOF frame (whose lanes keep
    /// [`Displacements`] per contact).
    pub const fn six_dof(self) -> bool {
        matches!(self, ContactFrame::SixDof { .. })
    }

    /// The name used in configs and messages.
    pub const fn name(self) -> &'static str {
        match self {
            ContactFrame::Rotations => "rotations",
            ContactFrame::SixDof { no_ratchet: false } => "six_dof",
            ContactFrame::SixDof { no_ratchet: true } => "six_dof (no_ratchet)",
        }
    }
}

/// The generalized displacements of one contact, in its frame:
/// `[u_n, u_s, u_t, phi_t, phi_bs, phi_bt]`, the normal displacement (the
/// gap, m), the shear displacements along `s` and `t` (m), the twist
/// about `n` and the bend about `s` and `t` (rad); all but `u_n` are the
/// sums of the increments since the contact was made.
pub type Displacements = [f64; 6];

/// The frame update of a lane, fixed when the lane is made, so that the
/// contact pass holds no branch on it.
pub(crate) trait FrameUpdate {
    /// Whether the lane uses the six-DOF frame (and keeps
    /// [`Displacements`] per contact).
    const SIX_DOF: bool;
    /// With [`Self::SIX_DOF`]: the branch vectors of ball ends are the
    /// radius along the normal.
    const NO_RATCHET: bool;
}

/// The two-rotation update of seed 002.
pub(crate) struct Rotations;

impl FrameUpdate for Rotations {
    const SIX_DOF: bool = false;
    const NO_RATCHET: bool = false;
}

/// The six-DOF update of seed 004, with or without the no-ratchet branch
/// vectors.
pub(crate) struct SixDof<const NO_RATCHET: bool>;

impl<const NO_RATCHET: bool> FrameUpdate for SixDof<NO_RATCHET> {
    const SIX_DOF: bool = true;
    const NO_RATCHET: bool = NO_RATCHET;
}

/// How the branch vectors of a contact's ends are taken (see
/// [`relative_velocity`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Branches {
    /// The ends' radii (m; 0 for an end that has none).
    pub radius: [f64; 2],
    /// Per end, whether it is a ball (or a pebble); a constant of the
    /// lane's pair kind.
    pub ball: [bool; 2],
    /// Ball ends take their radius along the normal.
    pub no_ratchet: bool,
}

/// The frame of a contact at mid-step: normal, `s` and `t`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MidFrame {
    /// Normal at mid-step (unit).
    pub n: Vec3,
    /// Axis s at mid-step (unit).
    pub s: Vec3,
    /// Axis t at mid-step (unit, `n = s x t`).
    pub t: Vec3,
}

/// Carries the frame of `plane` to this step's normal `n` and returns the
/// frame at mid-step; a new contact (`plane.initialised` false) gets the
/// frame every contact starts with, which is then also its mid-step frame.
///
/// # Model
/// With `n*` the previous normal and `n` the one computed this step:
/// - the mid-step normal `n~ = (n* + n) / |n* + n|` (`n` itself for a
///   normal that turned over);
/// - the bending rotation `R_b`, the shortest turn taking `n*` to `n`
///   (about `n* x n`, by the angle between them);
/// - the twist rotation `R_t`, about `n` by the angle
///   `0.5 dt (w1 + w2) . n~`, the mean spin of the ends along the
///   mid-step normal;
/// - the frame at the end of the step `T = R_t R_b T*` (columns `n`, `s`,
///   `t`), `s` then projected on the plane of `n` and normalised so the
///   triad stays orthonormal however many steps are taken;
/// - the frame at mid-step, `T~ = R_h T*` with `R_h` half of the rotation
///   `R_t R_b` (the spherical interpolation of `T*` and `T` at one half).
///
/// Unlike the two first-order rotations of [`super::rotate_frame`], both
/// rotations are exact (unit quaternions), and the increments are taken
/// in the mid-step frame rather than in the frame at the end of the step:
/// the two updates agree to first order in the step, so their increments
/// agree to second order.
///
/// # Units
/// `w1`, `w2` rad/s, `dt` s.
///
/// # References
/// Seed 004, "Contact update"; Itasca, PFC 6 documentation, "Contact
/// Resolution", eq. (5), for the update it replaces.
#[inline(always)]
pub fn carry_frame(plane: &mut Plane, n: Vec3, w1: Vec3, w2: Vec3, dt: f64) -> MidFrame {
    if !plane.initialised {
        plane.n = n;
        plane.s = initial_s(n);
        plane.t = n.cross(plane.s);
        plane.initialised = true;
        return MidFrame {
            n,
            s: plane.s,
            t: plane.t,
        };
    }
    let (n0, s0, t0) = (plane.n, plane.s, plane.t);
    let sum = n0 + n;
    let l2 = sum.length_squared();
    let n_mid = if l2 > 1e-24 {
        sum * (1.0 / l2.sqrt())
    } else {
        n
    };
    let twist = 0.5 * dt * (w1 + w2).dot(n_mid);
    let turn = Quat::from_axis_angle(n, twist) * Quat::from_rotation_arc(n0, n);
    let s1 = turn * s0;
    let s1 = (s1 - n * s1.dot(n)).normalize();
    plane.n = n;
    plane.s = s1;
    plane.t = n.cross(s1);
    // Half the turn: q and -q are one rotation, and with a non-negative
    // scalar part (the shorter way round) q + 1 points half way from the
    // identity to q.
    let turn = if turn.w < 0.0 { -turn } else { turn };
    let half = (turn + Quat::IDENTITY).normalize();
    MidFrame {
        n: half * n0,
        s: half * s0,
        t: half * t0,
    }
}

/// The velocity of end2 relative to end1 at the contact location `xc`,
/// with the branch vectors the lane chose.
///
/// # Model
/// `v_r = (v2 + w2 x b2) - (v1 + w1 x b1)`. Without `no_ratchet`,
/// `b = xc - x` for both ends: the material velocities at the contact
/// location, as in the default update, so a rigid motion of the pair
/// gives `v_r = 0` whatever the overlap. With `no_ratchet`, a ball end's
/// branch vector is its radius along the normal (`b1 = R1 n`,
/// `b2 = -R2 n`), so that a relative rotation moves the contact by the
/// same lever however deep the overlap (no net shear from a closed cycle
/// of normal load and rolling); the price is that a rigid rotation `W`
/// of a pair with gap `g` shows the tangential velocity `g W x n`. Ends
/// without a radius (facets, blocks, convex bodies) keep `xc - x`.
///
/// # Units
/// m/s.
#[inline(always)]
pub fn relative_velocity(
    xc: Vec3,
    n: Vec3,
    e1: &EndMotion,
    e2: &EndMotion,
    branches: &Branches,
) -> Vec3 {
    let Branches {
        radius,
        ball,
        no_ratchet,
    } = *branches;
    let b1 = if no_ratchet && ball[0] {
        n * radius[0]
    } else {
        xc - e1.x
    };
    let b2 = if no_ratchet && ball[1] {
        n * -radius[1]
    } else {
        xc - e2.x
    };
    (e2.v + e2.w.cross(b2)) - (e1.v + e1.w.cross(b1))
}

/// Fills the increments of `input` from the relative velocity `v_r` and
/// spin `w2 - w1` over `dt`, in the mid-step frame `mid`, and adds them
/// to the accumulated displacements `u`.
///
/// # Model
/// `[du_n, du_s, du_t] = T~^T v_r dt` and
/// `[dphi_t, dphi_s, dphi_b] = T~^T (w2 - w1) dt`. The shear increments
/// are the components on `s~` and `t~`, which are normal to `n~`: the
/// normal part of `v_r` is removed by the projection itself. The normal
/// increment `delta_n` the model receives is `v_r . n~ dt`, from the
/// velocities as in the default update (so a bonded contact whose gap is
/// carried by it, and models that read it as a rate, see the same
/// quantity either way); the accumulated normal displacement `u_n` is not
/// a sum but the gap itself, computed directly each step.
#[inline(always)]
pub fn increments_mid(
    mid: &MidFrame,
    v_r: Vec3,
    dw: Vec3,
    gap: f64,
    dt: f64,
    input: &mut ContactInput,
    u: &mut Displacements,
) {
    let dv = v_r * dt;
    let dw = dw * dt;
    input.delta_n = dv.dot(mid.n);
    input.delta_s = [dv.dot(mid.s), dv.dot(mid.t)];
    input.theta_t = dw.dot(mid.n);
    input.theta_b = [dw.dot(mid.s), dw.dot(mid.t)];
    u[0] = gap;
    u[1] += input.delta_s[0];
    u[2] += input.delta_s[1];
    u[3] += input.theta_t;
    u[4] += input.theta_b[0];
    u[5] += input.theta_b[1];
}

/// One step of the six-DOF update of a contact: the frame carried to the
/// normal `n` (see [`carry_frame`]), the increments in the mid-step frame
/// and the displacements `u` brought up to date (see [`increments_mid`]);
/// `plane.xc` and `plane.gap` must already be this step's.
#[inline(always)]
pub fn update(
    plane: &mut Plane,
    u: &mut Displacements,
    n: Vec3,
    (e1, e2): (&EndMotion, &EndMotion),
    branches: &Branches,
    dt: f64,
    input: &mut ContactInput,
) {
    let mid = carry_frame(plane, n, e1.w, e2.w, dt);
    let v_r = relative_velocity(plane.xc, n, e1, e2, branches);
    increments_mid(&mid, v_r, e2.w - e1.w, plane.gap, dt, input, u);
}

#[cfg(test)]
mod tests {
    use super::super::{increments, plane_ball_ball, update_frame};
    use super::*;

    /// A fresh plane at `xc` with gap `gap`.
    fn fresh(xc: Vec3, gap: f64) -> Plane {
        Plane {
            xc,
            gap,
            ..Default::default()
        }
    }

    /// The branch vectors of two balls of radii `radius`.
    fn to_contact(radius: [f64; 2], no_ratchet: bool) -> Branches {
        Branches {
            radius,
            ball: [true; 2],
            no_ratchet,
        }
    }

    /// The rotation by `angle` (rad) about the unit `axis`.
    fn turn(axis: Vec3, angle: f64) -> Quat {
        Quat::from_axis_angle(axis, angle)
    }

    /// The increments of one step as an array: delta_n, delta_s, theta_t,
    /// theta_b.
    fn values(input: &ContactInput) -> [f64; 6] {
        [
            input.delta_n,
            input.delta_s[0],
            input.delta_s[1],
            input.theta_t,
            input.theta_b[0],
            input.theta_b[1],
        ]
    }

    /// The two ends of a pair of balls at `x1`, `x2`, moving with `v`,
    /// spinning with `w`.
    fn ends(x: [Vec3; 2], v: [Vec3; 2], w: [Vec3; 2]) -> (EndMotion, EndMotion) {
        (
            EndMotion {
                x: x[0],
                v: v[0],
                w: w[0],
            },
            EndMotion {
                x: x[1],
                v: v[1],
                w: w[1],
            },
        )
    }

    #[test]
    fn a_pair_spun_about_its_normal_gives_the_closed_form_twist() {
        // Ball 1 spins at -3 rad/s and ball 2 at 2 rad/s about the line of
        // centres (z). The relative twist grows at 5 rad/s; the frame turns
        // with the mean spin, -0.5 rad/s; nothing bends or slides.
        let (r, dt, steps) = (0.5, 1e-3, 2000);
        let x = [Vec3::new(0.0, 0.0, -r), Vec3::new(0.0, 0.0, r)];
        let w = [Vec3::Z * -3.0, Vec3::Z * 2.0];
        let (e1, e2) = ends(x, [Vec3::ZERO; 2], w);
        let mut plane = fresh(Vec3::ZERO, 0.0);
        let mut u = [0.0; 6];
        let mut input = ContactInput::default();
        let s0 = initial_s(Vec3::Z);
        for k in 1..=steps {
            let branches = to_contact([r, r], false);
            update(
                &mut plane,
                &mut u,
                Vec3::Z,
                (&e1, &e2),
                &branches,
                dt,
                &mut input,
            );
            assert!((input.theta_t - 5.0 * dt).abs() < 1e-15, "step {k}");
            assert_eq!(
                [input.delta_n, input.delta_s[0], input.delta_s[1]],
                [0.0; 3]
            );
            assert!(input.theta_b[0].abs() < 1e-18 && input.theta_b[1].abs() < 1e-18);
        }
        let time = steps as f64 * dt;
        assert!((u[3] - 5.0 * time).abs() < 1e-12, "phi_t {}", u[3]);
        assert_eq!(&u[..3], &[0.0; 3]);
        // The frame turned by the mean spin (the first step sets it up).
        let s_want = turn(Vec3::Z, -0.5 * (time - dt)) * s0;
        assert!((plane.s - s_want).length() < 1e-12, "{} {s_want}", plane.s);
        assert!((plane.t - Vec3::Z.cross(s_want)).length() < 1e-12);
    }

    /// Ball 2 (radius `r2`) rolls without slip on ball 1 (radius `r1`, at
    /// rest at the origin) about y at `rate` (rad/s of its centre about the
    /// origin), and spins about the normal at `spin`; its centre at step
    /// `k` is on the exact circle. As in the leap-frog, velocities are
    /// those of mid-step: the spin is about the normal of mid-step, and
    /// the centre's velocity keeps the contact point of ball 2 at rest.
    /// Returns, per step, the increments and the displacements after them,
    /// and the last plane.
    fn roll(
        r1: f64,
        r2: f64,
        rate: f64,
        spin: f64,
        dt: f64,
        steps: usize,
    ) -> (Vec<([f64; 6], Displacements)>, Plane) {
        let d = r1 + r2;
        let mut plane = Plane::default();
        let mut u = [0.0; 6];
        let mut out = Vec::new();
        for k in 0..steps {
            let theta = rate * k as f64 * dt;
            let x2 = Vec3::new(theta.sin(), 0.0, theta.cos()) * d;
            let (n, gap, xc) = plane_ball_ball(Vec3::ZERO, r1, x2, r2, plane.n);
            plane.xc = xc;
            plane.gap = gap;
            // The centre moves on its circle; the ball turns so that its
            // point at the contact stands still.
            let half = if k == 0 { 0.0 } else { theta - 0.5 * rate * dt };
            let n_half = Vec3::new(half.sin(), 0.0, half.cos());
            let w2 = Vec3::Y * (rate * d / r2) + n_half * spin;
            let v2 = Vec3::Y.cross(x2) * rate + n_half.cross(n) * (r2 * spin);
            let (e1, e2) = ends([Vec3::ZERO, x2], [Vec3::ZERO, v2], [Vec3::ZERO, w2]);
            let mut input = ContactInput::default();
            let branches = to_contact([r1, r2], false);
            update(&mut plane, &mut u, n, (&e1, &e2), &branches, dt, &mut input);
            out.push((values(&input), u));
        }
        (out, plane)
    }

    #[test]
    fn a_rolled_pair_gives_the_closed_form_bend() {
        let (r1, r2, rate, dt, steps) = (0.3, 0.2, 2.0, 1e-3, 1500);
        let (steps_out, plane) = roll(r1, r2, rate, 0.0, dt, steps);
        // Initial frame: s along x, t along y, which is the roll axis. The
        // bend rate is that of ball 2, (r1 + r2) / r2 times the rate of the
        // centre, about t; no twist, no slip.
        let bend = rate * (r1 + r2) / r2 * dt;
        for (k, (inc, _)) in steps_out.iter().enumerate() {
            assert!(
                inc[1].abs() < 1e-15 && inc[2].abs() < 1e-15,
                "slip at {k}: {inc:?}"
            );
            assert!(inc[3].abs() < 1e-15 && inc[4].abs() < 1e-15, "{k}: {inc:?}");
            assert!((inc[5] - bend).abs() < 1e-15, "{k}: {inc:?}");
        }
        let u = steps_out.last().unwrap().1;
        assert!((u[5] - bend * steps as f64).abs() < 1e-12, "{u:?}");
        assert!(u[1].abs() < 1e-12 && u[2].abs() < 1e-12 && u[3].abs() < 1e-12);
        // The frame turned with the normal about y.
        let theta = rate * (steps - 1) as f64 * dt;
        let s_want = Vec3::new(theta.cos(), 0.0, -theta.sin());
        assert!((plane.s - s_want).length() < 1e-12, "{}", plane.s);
        assert!((plane.t - Vec3::Y).length() < 1e-12, "{}", plane.t);
    }

    #[test]
    fn a_pair_spun_and_rolled_gives_the_closed_form_twist_and_bend() {
        // Spin about the normal at 3 rad/s while rolling: the frame turns
        // about the normal at half the relative spin, so the bend rate,
        // fixed along y in space, turns in the frame:
        // phi_bs = B (2 / w) (1 - cos(w t / 2)), phi_bt = B (2 / w) sin(w t / 2)
        // with B the bend rate and w the spin.
        let (r1, r2, rate, spin, dt, steps) = (0.3, 0.2, 2.0, 3.0, 1e-4, 10_000);
        let (out, _) = roll(r1, r2, rate, spin, dt, steps);
        let bend_rate = rate * (r1 + r2) / r2;
        for (k, (inc, _)) in out.iter().enumerate() {
            assert!(inc[1].abs() < 1e-15 && inc[2].abs() < 1e-15, "slip at {k}");
            assert!(
                (inc[3] - spin * dt).abs() < 1e-7 * spin * dt,
                "{k}: {inc:?}"
            );
            let bend = inc[4].hypot(inc[5]);
            assert!((bend - bend_rate * dt).abs() < 1e-7 * bend_rate * dt, "{k}");
        }
        // Step k's increment is taken in the frame of mid-step, which has
        // turned by w (k - 1/2) dt / 2 (k >= 1; the first step sets the
        // frame up and bends about t only): a midpoint sum of the
        // closed form.
        let time = (steps - 1) as f64 * dt;
        let u = out.last().unwrap().1;
        let half = 0.5 * spin * time;
        let want = [
            bend_rate * 2.0 / spin * (1.0 - half.cos()),
            bend_rate * dt + bend_rate * 2.0 / spin * half.sin(),
        ];
        // A frame that bends and twists in one step has its mid-step
        // normal off the bisector by O(dt^2), which puts a part of the
        // bend rate (B dt) of that order into the twist: a relative error
        // of about (B / w) (rate dt) (w dt) / 8 per step, 6e-9 here.
        assert!((u[3] - spin * steps as f64 * dt).abs() < 1e-7, "{u:?}");
        assert!((u[4] - want[0]).abs() < 1e-6, "{u:?} {want:?}");
        assert!((u[5] - want[1]).abs() < 1e-6, "{u:?} {want:?}");
    }

    /// The increments of one step of a contact whose frame was `plane`,
    /// by the default update and by the six-DOF one, from the same normal
    /// `n` and the same motion.
    fn both(
        plane: &Plane,
        n: Vec3,
        e1: &EndMotion,
        e2: &EndMotion,
        radius: [f64; 2],
        dt: f64,
    ) -> ([f64; 6], [f64; 6]) {
        let (mut a, mut b) = (*plane, *plane);
        let (mut ia, mut ib) = (ContactInput::default(), ContactInput::default());
        update_frame(&mut a, n, e1.w, e2.w, dt);
        increments(&a, e1, e2, dt, &mut ia);
        let mut u = [0.0; 6];
        let branches = to_contact(radius, false);
        update(&mut b, &mut u, n, (e1, e2), &branches, dt, &mut ib);
        (values(&ia), values(&ib))
    }

    #[test]
    fn both_updates_give_the_same_increments_to_second_order_in_the_step() {
        // One step of a contact whose normal turns while its ends spin
        // and slide: the increments differ by the half step's turn of the
        // frame times the increments, O(dt^2), so halving dt quarters the
        // difference.
        let n0 = Vec3::new(0.3, -0.5, 0.8).normalize();
        let s0 = turn(n0, 0.7) * initial_s(n0);
        let plane = Plane {
            n: n0,
            s: s0,
            t: n0.cross(s0),
            initialised: true,
            ..Default::default()
        };
        let roll = Vec3::new(1.0, 2.0, -0.5);
        let w = [Vec3::new(0.4, -1.2, 2.0), Vec3::new(-1.5, 0.3, 0.9)];
        let v = [Vec3::new(0.2, 0.1, -0.3), Vec3::new(-0.1, 0.4, 0.25)];
        let mut diffs = Vec::new();
        for dt in [4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4] {
            let n1 = turn(roll.normalize(), roll.length() * dt) * n0;
            let (e1, e2) = ends([Vec3::ZERO, n1], v, w);
            let mut plane = plane;
            plane.xc = n1 * 0.5;
            let (a, b) = both(&plane, n1, &e1, &e2, [0.5; 2], dt);
            let diff = a
                .iter()
                .zip(&b)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max);
            let scale = a.iter().map(|x| x.abs()).fold(0.0, f64::max);
            assert!(diff < 0.02 * scale, "dt {dt}: {a:?} {b:?}");
            diffs.push(diff);
        }
        for pair in diffs.windows(2) {
            let ratio = pair[0] / pair[1];
            assert!((3.7..4.3).contains(&ratio), "{diffs:?}");
        }
    }

    #[test]
    fn a_rigidly_rotating_pair_gives_no_increment_in_either_frame() {
        // Two overlapping balls turning together about an axis through an
        // arbitrary point, and translating: their positions at each step
        // lie on the exact rigid motion, their velocities and spins are
        // those of that motion.
        let (r1, r2, gap, dt) = (0.4, 0.6, -1e-3, 1e-3);
        let axis = Vec3::new(1.0, 2.0, 3.0).normalize();
        let omega = axis * 5.0;
        let (p, vel) = (Vec3::new(0.3, -1.1, 0.7), Vec3::new(0.5, -0.2, 0.1));
        let x0 = Vec3::new(0.1, 0.2, 0.3);
        let x = [
            x0,
            x0 + Vec3::new(-0.2, 0.9, 0.4).normalize() * (r1 + r2 + gap),
        ];
        let mut planes = [Plane::default(); 3];
        let mut u = [[0.0; 6]; 2];
        let mut first = [Vec3::ZERO; 3];
        let mut drift = [0.0_f64; 3];
        let per_step3 = |dt: f64| (5.0 * dt).powi(3);
        for k in 0..1000 {
            let time = k as f64 * dt;
            let rot = turn(axis, 5.0 * time);
            let at = |x0: Vec3| p + vel * time + rot * (x0 - p);
            let (x1, x2) = (at(x[0]), at(x[1]));
            let (n, g, xc) = plane_ball_ball(x1, r1, x2, r2, planes[0].n);
            let moving = |x: Vec3| vel + omega.cross(x - p - vel * time);
            let (e1, e2) = ends([x1, x2], [moving(x1), moving(x2)], [omega; 2]);
            for plane in planes.iter_mut() {
                plane.xc = xc;
                plane.gap = g;
            }
            let mut input = [ContactInput::default(); 3];
            update_frame(&mut planes[0], n, omega, omega, dt);
            increments(&planes[0], &e1, &e2, dt, &mut input[0]);
            for (j, no_ratchet) in [false, true].into_iter().enumerate() {
                let (plane, u) = (&mut planes[j + 1], &mut u[j]);
                let branches = to_contact([r1, r2], no_ratchet);
                update(plane, u, n, (&e1, &e2), &branches, dt, &mut input[j + 1]);
            }
            for inc in &input[..2] {
                let largest = values(inc).iter().map(|v| v.abs()).fold(0.0, f64::max);
                assert!(largest < 1e-12, "step {k}: {inc:?}");
            }
            // No ratcheting has its price: the branch vectors of the radii
            // meet `g n` apart, so the rotation shows the shear `g W x n`.
            let inc = values(&input[2]);
            let shear = inc[1].hypot(inc[2]);
            let want = gap.abs() * omega.cross(n).length() * dt;
            // Taken in the mid-step frame, whose normal is half a step's
            // turn from `n`: equal to second order in that turn,
            // (|W| dt)^2 = 2.5e-5.
            assert!(
                (shear - want).abs() < 2.5e-5 * want,
                "step {k}: {shear} {want}"
            );
            // That shear is normal to `n`, which is half a step's turn
            // from the mid-step normal: its normal part is at most
            // `|g| |W| (|W| dt / 2) dt`.
            let bound = gap.abs() * 5.0 * (0.5 * 5.0 * dt) * dt;
            assert!(inc[0].abs() <= bound, "step {k}: {inc:?}");
            assert!(
                inc[3..].iter().all(|v| v.abs() < 1e-12),
                "step {k}: {inc:?}"
            );
            if k == 0 {
                first = [planes[1].n, planes[1].s, planes[1].t];
            }
            // The six-DOF frame turns with the pair: its twist, along the
            // mid-step normal, errs by O((|W| dt)^3) per step. The default
            // update twists along the normal at the end of the step, an
            // error of O((|W| dt)^2) per step, which drifts (its
            // increments are zero all the same).
            let turned = first.map(|a| turn(axis, 5.0 * time) * a);
            let per_step = 5.0 * dt;
            let bounds = [per_step.powi(2), per_step.powi(3), per_step.powi(3)];
            for (j, plane) in planes.iter().enumerate() {
                let tol = bounds[j] * k.max(1) as f64;
                for (a, b) in [plane.n, plane.s, plane.t].into_iter().zip(turned) {
                    assert!((a - b).length() < tol, "frame {j}, step {k}: {a} {b}");
                    drift[j] = drift[j].max((a - b).length());
                }
            }
        }
        // The default update's frame does drift past the six-DOF bound.
        assert!(drift[0] > 1000.0 * per_step3(dt), "{drift:?}");
        assert!(u[0][1..].iter().all(|v| v.abs() < 1e-10), "{:?}", u[0]);
        assert!((u[0][0] - gap).abs() < 1e-12);
    }

    #[test]
    fn a_cell_spinning_rigidly_gives_no_increment_across_its_boundary() {
        use crate::cell::Cell;
        use crate::contact::Setup;
        use crate::math::Mat3;
        use crate::narrow::{resolve_one, BallBall, BlockScene, PairKernel, Scene};
        use crate::piece::Piece;
        // A periodic cell whose velocity gradient is the spin `W` (L
        // antisymmetric), its balls at rest in it (no fluctuation) and
        // spinning with it, and a pair in contact across the face x = 0
        // of the cell. The cell and the balls are placed on the exact
        // rotation at every step: `h <- (I + L dt) h` alone turns the cell
        // only to first order and stretches it at second.
        let axis = Vec3::new(-0.4, 0.9, 0.3).normalize();
        let (rate, dt, r) = (4.0, 1e-3, 0.1);
        let omega = axis * rate;
        let spin = Mat3::from_cols(
            omega.cross(Vec3::X),
            omega.cross(Vec3::Y),
            omega.cross(Vec3::Z),
        );
        let p = Vec3::new(0.5, -0.3, 0.2);
        let origin = Vec3::new(-0.2, 0.1, 0.3);
        // Ball 2's image one cell back along x touches ball 1 (gap about
        // -0.009).
        let x = [
            origin + Vec3::new(0.05, 0.5, 0.5),
            origin + Vec3::new(0.86, 0.52, 0.49),
        ];
        let setup = Setup {
            mass: 1.0,
            prop_set: 0,
            flags: 0,
        };
        let mut planes = [Plane::default(); 2];
        let mut u = [[0.0; 6]; 2];
        for k in 0..500 {
            let rot = Mat3::from_quat(turn(axis, rate * k as f64 * dt));
            let at = |x: Vec3| p + rot * (x - p);
            let cell = Cell::new(at(origin), rot, [true; 3], spin).unwrap();
            let pos = [at(x[0]), at(x[1])];
            let scene = Scene {
                pos: &pos,
                vel: &[Vec3::ZERO; 2],
                spin: &[omega; 2],
                radius: &[r; 2],
                blocks: BlockScene::default(),
                walls: &[],
                owner: &[],
                cell: Some(&cell),
            };
            let mut input = [ContactInput::default(); 2];
            let (a, b) = (Piece::ball(0), Piece::ball(1));
            let [p0, p1] = &mut planes;
            let [u0, u1] = &mut u;
            let i = &mut input;
            resolve_one::<BallBall, Rotations>(
                &scene,
                p0,
                &mut [],
                u0,
                &setup,
                a,
                b,
                dt,
                (false, false),
                &mut i[0],
                &BallBall::ahead(&scene, a, b, false),
            );
            resolve_one::<BallBall, SixDof<false>>(
                &scene,
                p1,
                &mut [],
                u1,
                &setup,
                a,
                b,
                dt,
                (false, false),
                &mut i[1],
                &BallBall::ahead(&scene, a, b, false),
            );
            assert!(
                planes[0].gap < -0.005 && planes[0].gap > -0.02,
                "{}",
                planes[0].gap
            );
            for inc in &input {
                let largest = values(inc).iter().map(|v| v.abs()).fold(0.0, f64::max);
                assert!(largest < 1e-12, "step {k}: {inc:?}");
            }
        }
        assert!(u[1][1..].iter().all(|v| v.abs() < 1e-10), "{:?}", u[1]);
    }
}
