//! The volume-stiffness contact model as pure functions over plain data.
//!
//! Reads one contact's base input ([`ContactInput`]), the two optional
//! inputs the model asks the engine for ([`Overlap`]: the overlap volume
//! and the contact area) and the contact's state ([`VolumeState`]); writes
//! the new state and returns the force on end2 in the contact frame.
//! Invariants: `n` points from end1 to end2, `gap < 0` is overlap,
//! increments are those of end2 relative to end1, the returned normal
//! force is never tensile, and no input, however broken, gives a
//! non-finite output.
//!
//! # Model
//! The normal force grows with the volume the two pieces share rather than
//! with their interpenetration depth, which makes one law serve any pair of
//! convex shapes (polyhedral blocks first of all) without defining a depth.
//!
//! - Elastic normal force: `Fe = kn V`. A small change `du` of the overlap
//!   changes the volume by `A du`, so the contact's normal tangent
//!   stiffness is `k_n = dFe/du = kn A`.
//! - Where the engine gives the area's gradient (two blocks in potential
//!   resolution), the elastic part is the gradient of the potential
//!   `W = kn V^2 / (2 A)`, which is `kn A d^2 / 2` for two faces pressed
//!   flat by `d`: on end2, `Fe` along the normal with the moment
//!   `Fe * arm` about it (the twist arm the engine gives), plus
//!   `kn V^2 / (2 A^2)` times the area's gradient as a force and a moment.
//!   The extra term vanishes while the area stays constant (faces pressed
//!   flat, where the force is `kn V` exactly) and makes the law
//!   conservative where the area changes with the motion (edges and
//!   corners): no impact gains energy. Elsewhere `Fe` acts alone.
//! - Normal dashpot: `Fd = -c dn / dt` with `c = 2 beta sqrt(m k_n)`; it
//!   pushes while the pieces approach (`dn < 0`) and pulls while they part.
//! - Normal force `Fn = max(Fe + Fd, 0)`: the dashpot may cancel the
//!   elastic force but never turns the total into a pull.
//! - The damping ratio `beta` follows from the restitution coefficient `e`
//!   of a linear spring of constant stiffness with the same no-pull clip
//!   (see [`damping_ratio`]): `-ln e = 2 theta cot theta` with
//!   `theta = acos beta`. It gives exactly `e` while `A` stays constant
//!   during a collision (flat faces pressed together), and approximately
//!   otherwise.
//! - Shear spring, incremental, with a stiffness that scales with the
//!   contact area: `k_s = ks A`, trial force `Fs* = Fs_old - k_s ds`.
//! - Coulomb limit `|Fs| <= fric Fe` (the elastic normal force, so that the
//!   limit does not jump with the approach speed); a trial beyond it is
//!   scaled back onto it and the contact is sliding.
//! - Timestep stiffness: `max(kn, ks) A`, the stiffer of the two springs.
//!
//! Symbols: `V` overlap volume, `A` contact area, `dn` normal increment
//! (positive opens), `ds` shear increment along (s, t), `m` effective
//! contact mass, `dt` timestep.
//!
//! Guard rails: an overlapping contact whose volume, area or increments are
//! not finite, or whose volume or area is negative, carries no force that
//! step and loses its shear history (with no normal force the Coulomb limit
//! is zero anyway); a non-finite or non-positive mass switches the dashpot
//! off; a result that overflows is treated like broken input. So the
//! outputs and the stored state are always finite.
//!
//! # Units
//! `kn`, `ks` in N/m^3 (pressure per metre of overlap, as the joint
//! stiffnesses of block codes), `k_n`, `k_s` in N/m, forces in N, volume in
//! m^3, area in m^2, lengths in m, mass in kg, time in s; `fric`, `e`,
//! `beta` and `slipping` are dimensionless.
//!
//! # References
//! - The normal law `Fn = Kn V` with `Kn` in N/m^3 and the incremental
//!   Coulomb-capped shear force follow the project's polyhedral DEM
//!   specification (seed 003), after Nassauer and Kuna (2013), Contact
//!   forces of polyhedral particles in discrete element method, Granular
//!   Matter 15(3), 349-355.
//! - T. Schwager and T. Poeschel (2007), Coefficient of restitution and
//!   linear-dashpot model revisited, Granular Matter 9, 465-469: a
//!   spring-dashpot contact that may not pull ends before the overlap is
//!   gone, which changes its restitution.

use talus_sdk::{flags, ContactInput, ContactOutput};

/// The smallest restitution coefficient the model accepts, `exp(-2)`: the
/// rebound of a critically damped contact whose dashpot may not pull.
/// Smaller values would need an overdamped dashpot, which the explicit
/// integration only keeps stable with timesteps well below the automatic
/// one.
pub const RESTITUTION_MIN: f64 = 0.135_335_283_236_612_7;

/// One property set of the volume model, in descriptor order.
///
/// # Units
/// `kn`, `ks` in N/m^3; `fric` and `e` dimensionless. `kn`, `ks` and
/// `fric` default to 0, `e` to 1 (no damping).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VolumeProps {
    /// Volume stiffness (N/m^3): normal force per unit overlap volume.
    pub kn: f64,
    /// Shear stiffness per unit contact area (N/m^3).
    pub ks: f64,
    /// Friction coefficient (-).
    pub fric: f64,
    /// Normal restitution coefficient (-), in [`RESTITUTION_MIN`], 1].
    pub e: f64,
}

impl Default for VolumeProps {
    fn default() -> Self {
        VolumeProps {
            kn: 0.0,
            ks: 0.0,
            fric: 0.0,
            e: 1.0,
        }
    }
}

impl VolumeProps {
    /// Number of properties (the length of the descriptor's list).
    pub const COUNT: usize = 4;

    /// Reads a property set in descriptor order: kn, ks, fric, e.
    ///
    /// # Panics
    /// If `props` has fewer than [`VolumeProps::COUNT`] values.
    pub fn from_slice(props: &[f64]) -> Self {
        VolumeProps {
            kn: props[0],
            ks: props[1],
            fric: props[2],
            e: props[3],
        }
    }
}

/// The optional inputs of one contact.
///
/// # Units
/// `volume` in m^3, `area` in m^2, `twist_arm` in m, `area_gradient` in m
/// (translation) and m^2/rad (rotation).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Overlap {
    /// Overlap volume of the two pieces (m^3).
    pub volume: f64,
    /// Area of the contact (m^2).
    pub area: f64,
    /// Moment about the normal per unit elastic normal force (m).
    pub twist_arm: f64,
    /// The area's gradient under a translation of end2, then a rotation
    /// of end2 about the contact location, in the contact frame; `None`
    /// where the engine does not resolve it.
    pub area_gradient: Option<[f64; 6]>,
}

/// The per-contact state of the volume model, slot by slot in storage
/// order.
///
/// # Units
/// Forces in N; `slipping` is 0 or 1.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VolumeState {
    /// Elastic normal force `kn V` of the last call (N).
    pub fn_volume: f64,
    /// Shear spring force on end2 along (s, t) (N).
    pub fs: [f64; 2],
    /// 1 while the contact slides, else 0.
    pub slipping: f64,
}

impl VolumeState {
    /// Number of state slots.
    pub const SLOTS: usize = 4;

    /// Reads the state from a contact's slots.
    #[inline(always)]
    pub fn load(slots: &[f64; Self::SLOTS]) -> Self {
        let [fn_volume, fs_s, fs_t, slipping] = *slots;
        VolumeState {
            fn_volume,
            fs: [fs_s, fs_t],
            slipping,
        }
    }

    /// Writes the state into a contact's slots.
    #[inline(always)]
    pub fn store(&self, slots: &mut [f64; Self::SLOTS]) {
        *slots = [self.fn_volume, self.fs[0], self.fs[1], self.slipping];
    }
}

/// The restitution coefficient of a collision against a linear spring of
/// constant stiffness `k` with a dashpot of damping ratio `beta` (the
/// fraction of critical damping `2 sqrt(m k)`), when the contact force may
/// not pull: the contact then ends where the force first returns to zero,
/// before the overlap does.
///
/// With `omega0 = sqrt(k / m)` and `theta = acos beta`, the overlap of such
/// a collision is `v0 / omega exp(-gamma t) sin(omega t)` with
/// `gamma = beta omega0` and `omega = omega0 sin theta`; the force vanishes
/// at `omega t = 2 theta`, where the speed is `v0 exp(-gamma t)`. Hence
/// `e = exp(-2 theta cot theta)`: 1 at `beta = 0`, `exp(-2)` at
/// `beta = 1`. Values of `beta` outside `[0, 1]` are clamped.
pub fn restitution(beta: f64) -> f64 {
    if beta.is_nan() || beta <= 0.0 {
        return 1.0;
    }
    if beta >= 1.0 {
        return RESTITUTION_MIN;
    }
    let theta = beta.acos();
    (-2.0 * theta / theta.tan()).exp()
}

/// The damping ratio that gives restitution coefficient `e`: the inverse
/// of [`restitution`]. `e >= 1` (and NaN) give 0, `e <= exp(-2)` gives 1.
///
/// Solves `2 theta cot theta = -ln e` for `theta` in `(0, pi/2)` by Newton
/// steps kept inside a shrinking bracket (the left side falls from 2 to 0
/// over that interval), starting from the textbook ratio
/// `-ln e / sqrt(pi^2 + ln^2 e)` of a dashpot allowed to pull; a handful of
/// steps reach rounding.
pub fn damping_ratio(e: f64) -> f64 {
    if e.is_nan() || e >= 1.0 {
        return 0.0;
    }
    if e <= RESTITUTION_MIN {
        return 1.0;
    }
    // In (0, 2) from here on.
    let target = -e.ln();
    let pi = std::f64::consts::PI;
    let (mut lo, mut hi) = (0.0, std::f64::consts::FRAC_PI_2);
    let mut theta = (target / (pi * pi + target * target).sqrt()).acos();
    for _ in 0..100 {
        let (sin, cos) = theta.sin_cos();
        let residual = 2.0 * theta * cos / sin - target;
        if residual > 0.0 {
            lo = theta;
        } else {
            hi = theta;
        }
        let slope = 2.0 * (sin * cos - theta) / (sin * sin);
        let mut next = theta - residual / slope;
        if !(next > lo && next < hi) {
            next = 0.5 * (lo + hi);
        }
        let step = (next - theta).abs();
        theta = next;
        if step <= 4.0 * f64::EPSILON * theta || hi - lo <= f64::EPSILON * hi {
            break;
        }
    }
    theta.cos()
}

/// What the kernel needs of one property set and one timestep, computed
/// once for a run of contacts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Prepared {
    /// The property set.
    pub props: VolumeProps,
    /// Normal damping ratio from the restitution coefficient (-).
    pub beta: f64,
    /// `1 / dt` (1/s), or 0 when `dt` is not a positive finite number
    /// (dashpot off: there is no rate to act on).
    pub inv_dt: f64,
    /// `max(kn, ks)` (N/m^3): times the area, the timestep stiffness.
    pub k_max: f64,
}

impl Prepared {
    /// The constants of property set `props` for a timestep `dt` (s).
    pub fn new(props: &VolumeProps, dt: f64) -> Self {
        let inv_dt = 1.0 / dt;
        Prepared {
            props: *props,
            beta: damping_ratio(props.e),
            inv_dt: if dt > 0.0 && inv_dt.is_finite() {
                inv_dt
            } else {
                0.0
            },
            k_max: props.kn.max(props.ks),
        }
    }
}

/// Scales `trial` back onto the circle of radius `limit` when it lies
/// outside; returns the shear force and the slip flag (1 when scaled).
#[inline]
fn friction_cap(trial: [f64; 2], limit: f64) -> ([f64; 2], f64) {
    let len2 = trial[0] * trial[0] + trial[1] * trial[1];
    // The root of the sum of squares is exact enough and several times
    // cheaper than `hypot`, which is needed only where the squares leave
    // the normal range (forces beyond 1e154 N or below 1e-154 N).
    let len = if (f64::MIN_POSITIVE..f64::INFINITY).contains(&len2) {
        len2.sqrt()
    } else {
        trial[0].hypot(trial[1])
    };
    // A NaN trial sticks and is caught by the caller's finiteness check.
    if len.is_nan() || len <= limit {
        return (trial, 0.0);
    }
    let ratio = limit / len;
    ([ratio * trial[0], ratio * trial[1]], 1.0)
}

/// What an overlapping contact with unusable input returns: no force, no
/// stiffness, and a state without force history.
#[inline(never)]
fn without_force(state: &mut VolumeState) -> ContactOutput {
    *state = VolumeState::default();
    ContactOutput::could_be_active([0.0; 2])
}

/// The force-displacement law of the volume model for one contact and one
/// timestep (see the module docs for the equations and guard rails).
///
/// A contact flagged [`flags::NEW`] starts from a zeroed state. A contact
/// without overlap (`gap >= 0`, or a NaN gap) carries no force and keeps no
/// state; it reports no timestep stiffness either, since the stiffness of
/// this model vanishes with the contact area. Contacts the engine
/// suppressed never get here: the sdk's driver answers for them and calls
/// [`release`].
///
/// # Units
/// See [`VolumeProps`], [`Overlap`], [`VolumeState`] and [`ContactInput`];
/// the returned force is in N, the stiffness in N/m.
#[inline(always)]
pub fn force_displacement(
    p: &Prepared,
    input: &ContactInput,
    overlap: Overlap,
    state: &mut VolumeState,
) -> ContactOutput {
    if input.flags & flags::NEW != 0 {
        *state = VolumeState::default();
    }
    // A NaN gap fails this test, so it counts as no contact.
    let overlapping = input.gap < 0.0;
    if !overlapping {
        *state = VolumeState::default();
        return ContactOutput::could_be_active([0.0; 2]);
    }
    let Overlap {
        volume,
        area,
        twist_arm,
        area_gradient,
    } = overlap;
    let ds = input.delta_s;
    let dn = input.delta_n;
    // `contains` is false for NaN, so it rejects NaN too.
    let usable = (0.0..f64::INFINITY).contains(&volume)
        && (0.0..f64::INFINITY).contains(&area)
        && (dn + ds[0] + ds[1]).is_finite();
    // The potential's extra term, force then moment on end2; none without
    // a usable gradient.
    let (extra, twist) = match area_gradient {
        Some(g) if area > 0.0 && g.iter().all(|v| v.is_finite()) && twist_arm.is_finite() => {
            let k = 0.5 * p.props.kn * (volume / area) * (volume / area);
            (g.map(|v| k * v), twist_arm)
        }
        _ => ([0.0; 6], 0.0),
    };
    if !usable {
        return without_force(state);
    }
    let props = &p.props;

    // Normal: elastic volume force plus a dashpot on the tangent stiffness.
    let f_volume = props.kn * volume;
    let f_elastic = (f_volume + extra[0]).max(0.0);
    let k_normal = props.kn * area;
    let mass = input.mass;
    let c = if mass > 0.0 && mass < f64::INFINITY {
        2.0 * p.beta * (mass * k_normal).sqrt()
    } else {
        0.0
    };
    let f_normal = (f_elastic - c * dn * p.inv_dt).max(0.0);
    let moment = [f_volume * twist + extra[3], extra[4], extra[5]];

    // Shear: incremental spring on the area, capped by friction.
    let k_shear = props.ks * area;
    let trial = [state.fs[0] - k_shear * ds[0], state.fs[1] - k_shear * ds[1]];
    let (fs, slipping) = friction_cap(trial, props.fric * f_elastic);
    let stiffness = p.k_max * area;

    let force = [f_normal, fs[0] + extra[1], fs[1] + extra[2]];
    // Overflow of an extreme but finite input (or a corrupted state).
    let sum = force.iter().chain(&moment).sum::<f64>() + stiffness + f_elastic;
    if !sum.is_finite() {
        return without_force(state);
    }
    *state = VolumeState {
        fn_volume: f_volume,
        fs,
        slipping,
    };
    ContactOutput::active(force, [stiffness, 0.0]).with_moment(moment)
}

/// What a contact the engine suppressed does to its state: it carries no
/// force, so it keeps no force history (the driver has already answered
/// for it: no force, inactive).
#[inline]
pub fn release(state: &mut VolumeState) {
    *state = VolumeState::default();
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use talus_sdk::{STATUS_ACTIVE, STATUS_COULD_BE_ACTIVE};

    fn props(kn: f64, ks: f64, fric: f64, e: f64) -> VolumeProps {
        VolumeProps { kn, ks, fric, e }
    }

    fn overlapping(gap: f64, mass: f64) -> ContactInput {
        ContactInput {
            gap,
            mass,
            ..ContactInput::default()
        }
    }

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * a.abs().max(b.abs()).max(f64::MIN_POSITIVE)
    }

    #[test]
    fn restitution_floor_is_exp_minus_two() {
        assert_eq!(RESTITUTION_MIN, (-2.0f64).exp());
    }

    #[test]
    fn normal_force_is_kn_times_volume() {
        let kn = 3.7e10;
        let p = Prepared::new(&props(kn, 1e10, 0.5, 1.0), 1e-6);
        for (volume, area) in [(1e-15, 1e-8), (2.5e-9, 3e-5), (4e-6, 1e-3), (0.3, 2.0)] {
            let mut state = VolumeState::default();
            let input = ContactInput {
                delta_n: -1e-7,
                ..overlapping(-1e-4, 2.0)
            };
            let out = force_displacement(
                &p,
                &input,
                Overlap {
                    volume,
                    area,
                    ..Overlap::default()
                },
                &mut state,
            );
            assert!(close(out.force[0], kn * volume, 1e-12), "{volume}");
            assert_eq!(state.fn_volume, out.force[0]);
            assert_eq!(out.status, STATUS_ACTIVE);
            // Timestep stiffness: the stiffer spring on this area.
            assert_eq!(out.stiffness, [kn * area, 0.0]);
        }
    }

    #[test]
    fn open_contact_carries_nothing_and_keeps_nothing() {
        let p = Prepared::new(&props(1e9, 1e9, 0.5, 0.5), 1e-6);
        let mut state = VolumeState {
            fn_volume: 3.0,
            fs: [1.0, -2.0],
            slipping: 1.0,
        };
        for gap in [0.0, 1e-6, f64::NAN] {
            let overlap = Overlap {
                volume: 1e-9,
                area: 1e-4,
                ..Overlap::default()
            };
            let out = force_displacement(&p, &overlapping(gap, 1.0), overlap, &mut state);
            assert_eq!(out, ContactOutput::could_be_active([0.0; 2]), "{gap}");
            assert_eq!(out.status, STATUS_COULD_BE_ACTIVE);
            assert_eq!(state, VolumeState::default());
        }
    }

    /// Constant area: each step adds `-ks A ds` until the spring reaches
    /// `fric kn V`, where it stays, sliding, whatever the further motion.
    #[test]
    fn shear_force_grows_by_ks_area_then_caps_at_coulomb() {
        let (kn, ks, fric) = (1e9, 5e8, 0.5);
        let overlap = Overlap {
            volume: 1e-6, // Fe = 1000 N, limit 500 N
            area: 2e-3,   // k_s = 1e6 N/m
            ..Overlap::default()
        };
        let p = Prepared::new(&props(kn, ks, fric, 1.0), 1e-6);
        let input = ContactInput {
            delta_s: [1e-5, 0.0], // -10 N per step
            ..overlapping(-1e-3, 1.0)
        };
        let mut state = VolumeState::default();
        for step in 1..=49 {
            let out = force_displacement(&p, &input, overlap, &mut state);
            let expected = -ks * overlap.area * 1e-5 * step as f64;
            assert!(close(state.fs[0], expected, 1e-12), "step {step}");
            assert_eq!(state.fs[1], 0.0);
            assert_eq!(state.slipping, 0.0);
            assert_eq!([out.force[1], out.force[2]], state.fs);
        }
        // Step 50 reaches the limit to rounding; the steps after it slide.
        let limit = fric * kn * overlap.volume;
        for step in 50..=55 {
            force_displacement(&p, &input, overlap, &mut state);
            assert!(close(state.fs[0], -limit, 1e-12), "step {step}");
            assert!(step == 50 || state.slipping == 1.0, "step {step}");
        }
        // A slide in another direction: the capped force opposes it.
        let oblique = ContactInput {
            delta_s: [-3e-3, 4e-3],
            ..input
        };
        let mut fresh = VolumeState::default();
        force_displacement(&p, &oblique, overlap, &mut fresh);
        assert!(close(fresh.fs[0], 0.6 * limit, 1e-12));
        assert!(close(fresh.fs[1], -0.8 * limit, 1e-12));
        assert_eq!(fresh.slipping, 1.0);
        // Moving back unloads the spring elastically from the cap.
        let back = ContactInput {
            delta_s: [-1e-4, 0.0],
            ..input
        };
        force_displacement(&p, &back, overlap, &mut state);
        assert!(close(state.fs[0], -limit + 100.0, 1e-12));
        assert_eq!(state.slipping, 0.0);
    }

    #[test]
    fn dashpot_acts_on_the_tangent_stiffness_and_never_pulls() {
        let (kn, e, mass, dt) = (2e9, 0.5, 0.3, 1e-6);
        let overlap = Overlap {
            volume: 2e-9,
            area: 4e-4,
            ..Overlap::default()
        };
        let p = Prepared::new(&props(kn, 0.0, 0.0, e), dt);
        let beta = damping_ratio(e);
        let c = 2.0 * beta * (mass * kn * overlap.area).sqrt();
        let approach = ContactInput {
            delta_n: -1e-8,
            ..overlapping(-1e-5, mass)
        };
        let mut state = VolumeState::default();
        let out = force_displacement(&p, &approach, overlap, &mut state);
        assert!(close(
            out.force[0],
            kn * overlap.volume + c * 1e-8 / dt,
            1e-12
        ));
        // Parting fast: the dashpot would pull harder than the spring pushes.
        let part = ContactInput {
            delta_n: 1e-5,
            ..approach
        };
        let out = force_displacement(&p, &part, overlap, &mut state);
        assert_eq!(out.force[0], 0.0);
        assert_eq!(out.status, STATUS_ACTIVE);
        assert_eq!(state.fn_volume, kn * overlap.volume);
    }

    #[test]
    fn damping_ratio_inverts_restitution() {
        assert_eq!(damping_ratio(1.0), 0.0);
        assert_eq!(damping_ratio(f64::NAN), 0.0);
        assert_eq!(damping_ratio(RESTITUTION_MIN), 1.0);
        assert_eq!(damping_ratio(0.0), 1.0);
        assert_eq!(restitution(0.0), 1.0);
        assert_eq!(restitution(1.0), RESTITUTION_MIN);
        for k in 1..1000 {
            let e = RESTITUTION_MIN + (1.0 - RESTITUTION_MIN) * k as f64 / 1000.0;
            let beta = damping_ratio(e);
            assert!((0.0..1.0).contains(&beta), "{e}: {beta}");
            assert!(close(restitution(beta), e, 1e-13), "{e}: {beta}");
        }
        // Light damping: the textbook ratio of a dashpot allowed to pull,
        // `-ln e / sqrt(pi^2 + ln^2 e)`, is smaller by a relative `2 beta / pi`
        // to first order (the clip ends the contact a little early, which
        // the exact ratio makes up for with more damping).
        let pi = std::f64::consts::PI;
        for e in [0.999, 0.99, 0.98] {
            let l = -f64::ln(e);
            let textbook = l / (pi * pi + l * l).sqrt();
            let beta = damping_ratio(e);
            let excess = beta / textbook - 1.0;
            assert!(close(excess, 2.0 * beta / pi, 0.05), "{e}: {excess}");
        }
    }

    /// Two masses collide head-on through a contact of constant area
    /// (`V = A overlap`, so the normal force is a linear spring of
    /// stiffness `kn A`), integrated by leap-frog as the engine does: the
    /// increments of a step come from the half-step velocities that moved
    /// the pieces. The speed ratio after and before is the property `e`.
    #[test]
    fn constant_area_collision_rebounds_with_the_restitution_coefficient() {
        let (m1, m2) = (2.0, 3.0);
        let mass = m1 * m2 / (m1 + m2);
        let (kn, area) = (1e9, 1e-3); // k_n = 1e6 N/m: contact lasts ~3.4 ms
        let dt = 1e-7;
        for e in [1.0, 0.95, 0.8, 0.5, 0.3, 0.2, RESTITUTION_MIN] {
            let p = Prepared::new(&props(kn, 0.0, 0.0, e), dt);
            let (mut x1, mut x2) = (0.0, 1.0 + 1e-6);
            let (v1_0, v2_0) = (0.4, -0.6);
            let (mut v1, mut v2) = (v1_0, v2_0);
            let mut state = VolumeState::default();
            let mut force = 0.0;
            let mut touched = false;
            for _ in 0..1_000_000 {
                v1 -= force / m1 * dt;
                v2 += force / m2 * dt;
                x1 += v1 * dt;
                x2 += v2 * dt;
                let gap = x2 - x1 - 1.0;
                let input = ContactInput {
                    gap,
                    delta_n: (v2 - v1) * dt,
                    mass,
                    ..ContactInput::default()
                };
                let overlap = Overlap {
                    volume: area * (-gap).max(0.0),
                    area: if gap < 0.0 { area } else { 0.0 },
                    ..Overlap::default()
                };
                let out = force_displacement(&p, &input, overlap, &mut state);
                force = out.force[0];
                touched |= gap < 0.0;
                if touched && gap > 0.0 {
                    break;
                }
            }
            assert!(touched);
            let ratio = (v2 - v1) / -(v2_0 - v1_0);
            assert!((ratio - e).abs() < 1e-3, "e {e}: rebound ratio {ratio}");
        }
    }

    #[test]
    fn broken_inputs_give_finite_zero_force() {
        let p = Prepared::new(&props(1e9, 1e9, 0.5, 0.3), 1e-6);
        let good = Overlap {
            volume: 1e-9,
            area: 1e-4,
            ..Overlap::default()
        };
        let bad = [f64::NAN, -1e-9, f64::INFINITY, f64::NEG_INFINITY];
        let mut cases: Vec<(ContactInput, Overlap)> = Vec::new();
        let base = ContactInput {
            delta_n: -1e-8,
            delta_s: [1e-8, 0.0],
            ..overlapping(-1e-4, 1.0)
        };
        for v in bad {
            cases.push((base, Overlap { volume: v, ..good }));
            cases.push((base, Overlap { area: v, ..good }));
            if v.is_finite() {
                continue; // a negative increment is ordinary motion
            }
            let mut input = base;
            input.delta_n = v;
            cases.push((input, good));
            input = base;
            input.delta_s[1] = v;
            cases.push((input, good));
        }
        for (input, overlap) in cases {
            let mut state = VolumeState {
                fn_volume: 1.0,
                fs: [2.0, 3.0],
                slipping: 0.0,
            };
            let out = force_displacement(&p, &input, overlap, &mut state);
            assert_eq!(
                out,
                ContactOutput::could_be_active([0.0; 2]),
                "{input:?} {overlap:?}"
            );
            assert_eq!(state, VolumeState::default());
        }
        // A broken mass only switches the dashpot off.
        for mass in [f64::NAN, -1.0, 0.0, f64::INFINITY] {
            let input = ContactInput { mass, ..base };
            let mut state = VolumeState::default();
            let out = force_displacement(&p, &input, good, &mut state);
            assert_eq!(out.force[0], 1e9 * good.volume, "{mass}");
        }
        // Finite inputs whose force overflows.
        let huge = Prepared::new(&props(1e300, 0.0, 0.0, 1.0), 1e-6);
        let mut state = VolumeState::default();
        let overlap = Overlap {
            volume: 1e10,
            area: 1.0,
            ..Overlap::default()
        };
        let out = force_displacement(&huge, &base, overlap, &mut state);
        assert_eq!(out, ContactOutput::could_be_active([0.0; 2]));
        // No timestep, no dashpot.
        for dt in [0.0, -1.0, f64::NAN, 1e-320] {
            assert_eq!(Prepared::new(&props(1.0, 1.0, 1.0, 0.5), dt).inv_dt, 0.0);
        }
    }

    #[test]
    fn zero_volume_under_overlap_is_active_without_force() {
        let p = Prepared::new(&props(1e9, 1e9, 0.5, 0.5), 1e-6);
        let mut state = VolumeState {
            fs: [5.0, 0.0],
            ..VolumeState::default()
        };
        let input = ContactInput {
            delta_s: [1e-6, 0.0],
            ..overlapping(-1e-15, 1.0)
        };
        let out = force_displacement(&p, &input, Overlap::default(), &mut state);
        assert_eq!(out, ContactOutput::active([0.0; 3], [0.0; 2]));
        // No normal force, no friction: the spring lets go.
        assert_eq!(state.fs, [0.0; 2]);
        assert_eq!(state.slipping, 1.0);
    }

    #[test]
    fn new_contact_starts_from_zero_and_release_clears() {
        let p = Prepared::new(&props(1e9, 1e9, 1.0, 1.0), 1e-6);
        let mut state = VolumeState {
            fn_volume: 9.0,
            fs: [7.0, 7.0],
            slipping: 1.0,
        };
        let input = ContactInput {
            flags: flags::NEW,
            ..overlapping(-1e-4, 1.0)
        };
        let overlap = Overlap {
            volume: 1e-9,
            area: 1e-4,
            ..Overlap::default()
        };
        force_displacement(&p, &input, overlap, &mut state);
        assert_eq!(state.fs, [0.0; 2]);
        assert_eq!(state.fn_volume, 1.0);
        release(&mut state);
        assert_eq!(state, VolumeState::default());
    }

    #[test]
    fn state_round_trips_through_slots() {
        let state = VolumeState {
            fn_volume: 1.0,
            fs: [2.0, 3.0],
            slipping: 1.0,
        };
        let mut slots = [0.0; VolumeState::SLOTS];
        state.store(&mut slots);
        assert_eq!(slots, [1.0, 2.0, 3.0, 1.0]);
        assert_eq!(VolumeState::load(&slots), state);
    }

    /// One step of a random contact history: gap, volume, area, normal
    /// and shear increments.
    fn any_step() -> impl Strategy<Value = (f64, Overlap, f64, [f64; 2])> {
        let overlap = (0.0..1e-6f64, 0.0..1e-3f64).prop_map(|(volume, area)| Overlap {
            volume,
            area,
            ..Overlap::default()
        });
        let increment = -1e-3..1e-3f64;
        (
            -1e-2..1e-2f64,
            overlap,
            increment.clone(),
            [increment.clone(), increment],
        )
    }

    proptest! {
        /// Over a few steps of any history (loaded springs included), the
        /// outputs stay finite, the normal force never pulls and the stored
        /// shear spring, which is the returned shear force, respects the
        /// Coulomb limit on the elastic normal force.
        #[test]
        fn outputs_are_finite_never_pull_and_respect_coulomb(
            (kn, ks, fric) in (0.0..1e12f64, 0.0..1e12f64, 0.0..5.0f64),
            e in RESTITUTION_MIN..=1.0f64,
            (mass, dt) in (1e-6..1e3f64, 1e-8..1e-2f64),
            history in proptest::collection::vec(any_step(), 1..5),
        ) {
            let p = Prepared::new(&VolumeProps { kn, ks, fric, e }, dt);
            let mut state = VolumeState::default();
            for (gap, overlap, delta_n, delta_s) in history {
                let input = ContactInput { gap, delta_n, delta_s, mass, ..ContactInput::default() };
                let out = force_displacement(&p, &input, overlap, &mut state);
                let outputs = out.force.iter().chain(&out.stiffness);
                prop_assert!(outputs.into_iter().all(|v| v.is_finite()));
                prop_assert!(out.force[0] >= 0.0);
                let limit = fric * state.fn_volume;
                prop_assert!(state.fs[0].hypot(state.fs[1]) <= limit * (1.0 + 1e-12));
                prop_assert_eq!([out.force[1], out.force[2]], state.fs);
            }
        }
    }
}
