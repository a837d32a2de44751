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
//! - Where the contact is a surface (a block's face; the engine's input
//!   `area_gyration`), the dashpot acts over the whole surface, `c / A`
//!   per unit area, and adds a bend moment against the relative rotation
//!   about `s` and `t` (sdk `spread_dashpot`): one contact standing for a
//!   face damps the face's rocking as the spread springs would.
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
//! - Timestep stiffness: `max(kn', ks) A`, the stiffer of the two springs,
//!   `kn'` being `kn` raised for its dashpot by the sdk's
//!   `damped_stiffness` (a dashpot lowers the stable step).
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
    /// The contact surface's second moments per unit area about the
    /// location, `[gss, gtt, gst]` (m^2); `None` for a contact without a
    /// surface of its own (balls).
    pub gyration: Option<[f64; 3]>,
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
    /// `max(kn', ks)` (N/m^3), `kn'` the normal stiffness raised for the
    /// dashpot: times the area, the timestep stiffness.
    pub k_max: f64,
}

impl Prepared {
    /// The constants of property set `props` for a timestep `dt` (s).
    pub fn new(props: &VolumeProps, dt: f64) -> Self {
        let inv_dt = 1.0 / dt;
        let beta = damping_ratio(props.e);
        Prepared {
            props: *props,
            beta,
            inv_dt: if dt > 0.0 && inv_dt.is_finite() {
                inv_dt
            } else {
                0.0
            },
            k_max: talus_sdk::damped_stiffness(props.kn, beta).max(props.ks),
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
        gyration,
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
    let mut moment = [f_volume * twist + extra[3], extra[4], extra[5]];
    if let Some(g) = gyration.filter(|_| c > 0.0) {
        let (bend, _) = talus_sdk::spread_dashpot(c, p.inv_dt, g, input.theta_b);
        moment[1] += bend[0];
        moment[2] += bend[1];
    }

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
mod tests;
