//! The linearbond model as pure functions over plain data: the linear
//! model (from `talus-plugin-linear`, unchanged) in parallel with a bond
//! of finite size that carries force and moment until it breaks.
//!
//! Reads one contact's input ([`ContactInput`], and the pair's two random
//! numbers when a bond is installed) and its state ([`BondState`]); writes
//! the new state and the force and moment on end2 in the contact frame.
//!
//! # Model
//! The bond is a disc of radius `Rb = rmul min(R1, R2)` (a facet counts
//! as no radius, so a ball bonded to a wall takes its own) between the two
//! pieces, with area `A = pi Rb^2`, second moment `I = pi Rb^4 / 4` and
//! polar moment `J = pi Rb^4 / 2`. From the step it is installed (with
//! zero force, whatever the gap) its force and moment grow with the
//! relative motion of the pieces, as springs per unit area:
//!
//! - normal force `Fb += -kn_b A dn` (compressive positive, `dn > 0`
//!   opens, so opening pulls);
//! - shear force `Fs_b += -ks_b A ds` (on end2, along `s` and `t`);
//! - twist moment `Mt_b += -ks_b J dtheta_t`;
//! - bend moment `Mb_b += -kn_b I dtheta_b` (about `s` and `t`).
//!
//! Its largest stresses, on the rim of the disc, are
//!
//! - tension `sigma = -Fb / A + beta |Mb_b| Rb / I`,
//! - shear `tau = |Fs_b| / A + beta |Mt_b| Rb / J`,
//!
//! with `beta` the moment-contribution factor. The bond breaks in the call
//! where, with the forces of that call, `sigma > sigma_c` (tension) or else
//! `tau > c + (Fb / A) tan(phi)` (shear: the shear strength grows with the
//! mean normal stress on the bond, and falls under tension). A broken bond
//! carries nothing from that call on; the contact is then the linear
//! model's alone, as it was beside the bond all along.
//!
//! Strengths may scatter: each bond draws its own `sigma_c = max(0,
//! ten + ten_sd z1)` and `c = max(0, coh + coh_sd z2)` when installed, with
//! `z1, z2` independent standard normal numbers made from the pair's two
//! uniform numbers by the Box-Muller transform, so a sample's strengths
//! are fixed by the run's seed and the pieces, not by the order of events.
//!
//! Symbols: `dn`, `ds` the normal and shear displacement increments,
//! `dtheta_t`, `dtheta_b` the twist and bend rotation increments (end2
//! relative to end1, contact frame), `phi` the friction angle.
//!
//! # Units
//! `kn_b`, `ks_b` in N/m^3 (stress per unit displacement); strengths and
//! stresses in Pa; forces in N; moments in N m; lengths in m; `rmul` and
//! `beta` dimensionless; `phi` in degrees.
//!
//! # References
//! - D. O. Potyondy and P. A. Cundall (2004), A bonded-particle model for
//!   rock, Int. J. Rock Mech. Min. Sci. 41(8), 1329-1364.
//! - Itasca Consulting Group, PFC documentation, "Linear Parallel Bond
//!   Model" (the property names follow it).

use std::f64::consts::PI;

use talus_plugin_linear::kernel::{self as linear, LinearProps, LinearState};
use talus_sdk::{flags, report, ContactInput, ContactOutput, STATUS_ACTIVE};

/// One property set, in descriptor order: the linear model's five, then
/// the bond's.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BondProps {
    /// The linear part (N/m, -).
    pub linear: LinearProps,
    /// Bond normal stiffness per unit area `kn_b` (N/m^3).
    pub kn: f64,
    /// Bond shear stiffness per unit area `ks_b` (N/m^3).
    pub ks: f64,
    /// Bond radius multiplier `rmul` (-).
    pub rmul: f64,
    /// Mean tensile strength (Pa).
    pub ten: f64,
    /// Standard deviation of the tensile strength (Pa).
    pub ten_sd: f64,
    /// Mean cohesion (Pa).
    pub coh: f64,
    /// Standard deviation of the cohesion (Pa).
    pub coh_sd: f64,
    /// Friction angle `phi` (degrees).
    pub fa: f64,
    /// Moment-contribution factor `beta` (-).
    pub mcf: f64,
}

impl BondProps {
    /// Number of properties.
    pub const COUNT: usize = LinearProps::COUNT + 9;

    /// Reads a property set in descriptor order.
    ///
    /// # Panics
    /// If `props` has fewer than [`BondProps::COUNT`] values.
    pub fn from_slice(props: &[f64]) -> Self {
        let b = &props[LinearProps::COUNT..Self::COUNT];
        BondProps {
            linear: LinearProps::from_slice(props),
            kn: b[0],
            ks: b[1],
            rmul: b[2],
            ten: b[3],
            ten_sd: b[4],
            coh: b[5],
            coh_sd: b[6],
            fa: b[7],
            mcf: b[8],
        }
    }
}

/// Where a contact's bond stands ([`BondState::bond`]).
pub mod status {
    /// Never bonded.
    pub const NONE: f64 = 0.0;
    /// Bonded.
    pub const BONDED: f64 = 1.0;
    /// Broken in tension.
    pub const TENSION: f64 = 2.0;
    /// Broken in shear.
    pub const SHEAR: f64 = 3.0;
}

/// The per-contact state: the linear model's slots, then the bond's.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BondState {
    /// Slots 0-6: the linear part.
    pub linear: LinearState,
    /// Slot 7, `pb_state`: one of [`status`].
    pub bond: f64,
    /// Slot 8, `pb_ten_c`: this bond's tensile strength (Pa).
    pub ten_c: f64,
    /// Slot 9, `pb_coh_c`: this bond's cohesion (Pa).
    pub coh_c: f64,
    /// Slot 10, `pb_fn`: bond normal force, compressive positive (N).
    pub f_n: f64,
    /// Slots 11-12, `pb_fs_s`, `pb_fs_t`: bond shear force on end2 (N).
    pub f_s: [f64; 2],
    /// Slot 13, `pb_mt`: bond twist moment on end2 about n (N m).
    pub m_t: f64,
    /// Slots 14-15, `pb_mb_s`, `pb_mb_t`: bond bend moment on end2 (N m).
    pub m_b: [f64; 2],
    /// Slot 16, `pb_sigma`: the bond's largest tensile stress (Pa), kept
    /// as it was when the bond broke.
    pub sigma: f64,
    /// Slot 17, `pb_tau`: the bond's largest shear stress (Pa), kept as it
    /// was when the bond broke.
    pub tau: f64,
}

impl BondState {
    /// Number of state slots.
    pub const SLOTS: usize = LinearState::SLOTS + 11;

    /// Reads the state from a contact's slots.
    #[inline(always)]
    pub fn load(s: &[f64]) -> Self {
        let b = &s[LinearState::SLOTS..Self::SLOTS];
        BondState {
            linear: LinearState::load(s),
            bond: b[0],
            ten_c: b[1],
            coh_c: b[2],
            f_n: b[3],
            f_s: [b[4], b[5]],
            m_t: b[6],
            m_b: [b[7], b[8]],
            sigma: b[9],
            tau: b[10],
        }
    }

    /// Writes the state into a contact's slots.
    #[inline(always)]
    pub fn store(&self, s: &mut [f64]) {
        self.linear.store(s);
        let b = &mut s[LinearState::SLOTS..Self::SLOTS];
        b.copy_from_slice(&[
            self.bond,
            self.ten_c,
            self.coh_c,
            self.f_n,
            self.f_s[0],
            self.f_s[1],
            self.m_t,
            self.m_b[0],
            self.m_b[1],
            self.sigma,
            self.tau,
        ]);
    }

    /// Whether the contact holds a bond.
    #[inline]
    pub fn bonded(&self) -> bool {
        self.bond == status::BONDED
    }

    /// Drops the bond's force and moment (the bond is gone, or has moved
    /// to another contact); `bond` is set to `to`.
    fn clear_bond(&mut self, to: f64) {
        self.bond = to;
        self.f_n = 0.0;
        self.f_s = [0.0; 2];
        self.m_t = 0.0;
        self.m_b = [0.0; 2];
    }
}

/// The cross-section of a bond between pieces of radii `radius` (a zero
/// radius is a facet): radius, area, second moment and polar moment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Section {
    /// Bond radius `Rb` (m).
    pub radius: f64,
    /// Area `pi Rb^2` (m^2).
    pub area: f64,
    /// Second moment of area `pi Rb^4 / 4` (m^4).
    pub i: f64,
    /// Polar moment `pi Rb^4 / 2` (m^4).
    pub j: f64,
}

impl Section {
    /// The section for multiplier `rmul` and piece radii `radius`.
    pub fn of(rmul: f64, radius: [f64; 2]) -> Section {
        let [a, b] = radius;
        let r = match (a > 0.0, b > 0.0) {
            (true, true) => a.min(b),
            (true, false) => a,
            (false, true) => b,
            (false, false) => 0.0,
        };
        let rb = rmul * r;
        let r2 = rb * rb;
        Section {
            radius: rb,
            area: PI * r2,
            i: PI * r2 * r2 / 4.0,
            j: PI * r2 * r2 / 2.0,
        }
    }
}

/// Two independent standard normal numbers from two uniform ones in
/// `[0, 1)` (Box-Muller).
pub fn normal_pair([u1, u2]: [f64; 2]) -> [f64; 2] {
    let r = (-2.0 * (1.0 - u1).ln()).sqrt();
    let (s, c) = (2.0 * PI * u2).sin_cos();
    [r * c, r * s]
}

/// What the bond's springs and strength test need of one property set
/// and one pair of radii: the section's stiffnesses and the factors that
/// turn force and moment into stress. Contacts of one run mostly share
/// them (equal balls), so a model keeps the last ones it made.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Springs {
    /// The bond's area (m^2); zero where no bond can form.
    pub area: f64,
    /// `pb_kn A` and `pb_ks A` (N/m).
    pub ka: [f64; 2],
    /// `pb_ks J` (twist) and `pb_kn I` (bend) (N m/rad).
    pub kr: [f64; 2],
    /// `1 / A` (1/m^2), 0 without area.
    pub inv_area: f64,
    /// `beta Rb / I` and `beta Rb / J` (1/m^3).
    pub moment_stress: [f64; 2],
    /// `tan(phi)` (-).
    pub tan_fa: f64,
    /// The stiffnesses reported for the timestep beyond the linear part's:
    /// `A max(pb_kn, pb_ks)` (N/m) and `max(pb_kn I, pb_ks J)` (N m/rad).
    pub timestep: [f64; 2],
}

impl Springs {
    /// The springs of a bond of property set `p` between pieces of radii
    /// `radius`.
    pub fn new(p: &BondProps, radius: [f64; 2]) -> Springs {
        let sec = Section::of(p.rmul, radius);
        if sec.area <= 0.0 {
            return Springs::default();
        }
        Springs {
            area: sec.area,
            ka: [p.kn * sec.area, p.ks * sec.area],
            kr: [p.ks * sec.j, p.kn * sec.i],
            inv_area: 1.0 / sec.area,
            moment_stress: [p.mcf * sec.radius / sec.i, p.mcf * sec.radius / sec.j],
            tan_fa: p.fa.to_radians().tan(),
            timestep: [p.kn.max(p.ks) * sec.area, (p.kn * sec.i).max(p.ks * sec.j)],
        }
    }
}

/// The bond's stresses `(sigma, tau)` (Pa) for its present force and
/// moment (see the module docs).
pub fn stresses(k: &Springs, s: &BondState) -> (f64, f64) {
    let mb = (s.m_b[0] * s.m_b[0] + s.m_b[1] * s.m_b[1]).sqrt();
    let fs = (s.f_s[0] * s.f_s[0] + s.f_s[1] * s.f_s[1]).sqrt();
    let sigma = -s.f_n * k.inv_area + mb * k.moment_stress[0];
    let tau = fs * k.inv_area + s.m_t.abs() * k.moment_stress[1];
    (sigma, tau)
}

/// The shear strength (Pa) of a bond with cohesion `coh` carrying normal
/// force `f_n` (compressive positive).
pub fn shear_strength(k: &Springs, coh: f64, f_n: f64) -> f64 {
    coh + f_n * k.inv_area * k.tan_fa
}

/// What one call does, beside the force.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Nothing happened to the bond.
    None,
    /// A bond was installed.
    Bonded,
    /// The bond broke in tension.
    BrokeTension,
    /// The bond broke in shear.
    BrokeShear,
}

/// The force-displacement law for one contact and one step: the linear
/// part by the linear model's own kernel, then the bond (installed when
/// the input is flagged [`flags::BOND`], with `random` the pair's two
/// uniform numbers), its stresses and its strength. Returns the output and
/// what happened to the bond.
#[inline(always)]
pub fn force_displacement_with(
    p: &BondProps,
    linear_p: &linear::Prepared,
    dashpots: impl FnOnce(f64) -> (f64, f64),
    springs: impl FnOnce([f64; 2]) -> Springs,
    input: &ContactInput,
    random: [f64; 2],
    s: &mut BondState,
) -> (ContactOutput, Event) {
    if input.flags & flags::NEW != 0 {
        *s = BondState::default();
    }
    let lin = linear::force_displacement_with(linear_p, dashpots, input, &mut s.linear);
    let installing = input.flags & flags::BOND != 0;
    if !(installing || s.bonded()) {
        return (lin, Event::None);
    }
    let k = springs(input.radius);
    let mut event = Event::None;
    if installing && !s.bonded() && k.area > 0.0 {
        let [z1, z2] = normal_pair(random);
        s.clear_bond(status::BONDED);
        s.ten_c = (p.ten + p.ten_sd * z1).max(0.0);
        s.coh_c = (p.coh + p.coh_sd * z2).max(0.0);
        s.sigma = 0.0;
        s.tau = 0.0;
        event = Event::Bonded;
    }
    if !s.bonded() {
        return (lin, event);
    }
    // Increments of the bond's springs.
    let [ka, ksa] = k.ka;
    s.f_n -= ka * input.delta_n;
    s.f_s[0] -= ksa * input.delta_s[0];
    s.f_s[1] -= ksa * input.delta_s[1];
    s.m_t -= k.kr[0] * input.theta_t;
    s.m_b[0] -= k.kr[1] * input.theta_b[0];
    s.m_b[1] -= k.kr[1] * input.theta_b[1];
    let (sigma, tau) = stresses(&k, s);
    s.sigma = sigma;
    s.tau = tau;
    // A NaN stress fails neither test: the bond holds, and the engine's
    // finiteness check reports the force.
    let broke = if sigma > s.ten_c {
        Some((status::TENSION, Event::BrokeTension, report::BROKE_TENSION))
    } else if tau > shear_strength(&k, s.coh_c, s.f_n) {
        Some((status::SHEAR, Event::BrokeShear, report::BROKE_SHEAR))
    } else {
        None
    };
    if let Some((to, e, bit)) = broke {
        s.clear_bond(to);
        return (lin.reporting(bit), e);
    }
    let force = [
        lin.force[0] + s.f_n,
        lin.force[1] + s.f_s[0],
        lin.force[2] + s.f_s[1],
    ];
    let out = ContactOutput {
        force,
        moment: [s.m_t, s.m_b[0], s.m_b[1]],
        stiffness: [linear_p.stiffness + k.timestep[0], k.timestep[1]],
        status: STATUS_ACTIVE,
        reserved: report::HOLD,
    };
    (out, event)
}

/// What a contact the engine suppressed does to its state: the linear
/// part as the linear model does, and the bond is dropped without a break
/// (a suppressed facet contact's state has moved to the contact that
/// carries for it, bond included).
pub fn release(input: &ContactInput, s: &mut BondState) {
    if input.flags & flags::NEW != 0 {
        *s = BondState::default();
    }
    linear::release(input, &mut s.linear);
    if s.bonded() {
        s.clear_bond(status::NONE);
    }
}

/// The bond slots under the model's custom propagation rule: when the
/// state of a bonded contact moves to another facet's contact, the target
/// becomes bonded with the source's strengths (its force and moment slots
/// add, by their own rule); an unbonded source leaves the target as it is.
pub fn propagate(from: &BondState, to: &mut BondState) {
    if from.bonded() && !to.bonded() {
        to.bond = status::BONDED;
        to.ten_c = from.ten_c;
        to.coh_c = from.coh_c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props() -> BondProps {
        BondProps {
            linear: LinearProps {
                kn: 1e6,
                ks: 5e5,
                fric: 0.5,
                ..Default::default()
            },
            kn: 1e10,
            ks: 4e9,
            rmul: 1.0,
            ten: 1e6,
            ten_sd: 0.0,
            coh: 2e6,
            coh_sd: 0.0,
            fa: 30.0,
            mcf: 1.0,
        }
    }

    fn step(p: &BondProps, s: &mut BondState, input: ContactInput) -> (ContactOutput, Event) {
        let lp = linear::Prepared::new(&p.linear, 1e-6);
        let springs = |r| Springs::new(p, r);
        force_displacement_with(p, &lp, |m| lp.dashpots(m), springs, &input, [0.3, 0.7], s)
    }

    fn contact(gap: f64) -> ContactInput {
        ContactInput {
            gap,
            mass: 1.0,
            radius: [1e-2, 2e-2],
            ..Default::default()
        }
    }

    #[test]
    fn the_section_takes_the_smaller_radius_and_a_facet_none() {
        let s = Section::of(0.5, [1e-2, 2e-2]);
        assert_eq!(s.radius, 5e-3);
        assert!((s.area - PI * 25e-6).abs() < 1e-18);
        assert!((s.j - 2.0 * s.i).abs() <= 1e-30);
        assert_eq!(Section::of(1.0, [3e-2, 0.0]).radius, 3e-2);
        assert_eq!(Section::of(1.0, [0.0, 0.0]).area, 0.0);
    }

    #[test]
    fn box_muller_gives_standard_normals() {
        let n = 100_000;
        let (mut m, mut v, mut c) = (0.0, 0.0, 0.0);
        for k in 0..n {
            // A low-discrepancy walk over the unit square.
            let u = [
                (k as f64 * 0.618_033_988_75).fract(),
                (k as f64 * 0.754_877_666).fract(),
            ];
            let [a, b] = normal_pair(u);
            m += a + b;
            v += a * a + b * b;
            c += a * b;
        }
        let n2 = 2.0 * n as f64;
        assert!((m / n2).abs() < 0.01);
        assert!((v / n2 - 1.0).abs() < 0.01);
        assert!((c / n as f64).abs() < 0.01);
    }

    /// An unbonded contact is the linear model's, bit for bit; a bonded
    /// one adds exactly the bond's spring force.
    #[test]
    fn without_a_bond_the_linear_model_and_with_one_the_sum() {
        let p = props();
        let mut s = BondState::default();
        let mut l = LinearState::default();
        let mut input = contact(-1e-5);
        input.delta_n = -1e-7;
        input.delta_s = [2e-7, 0.0];
        let (o, e) = step(&p, &mut s, input);
        let ol = linear::force_displacement(&p.linear, 1e-6, &input, &mut l);
        assert_eq!((o, e), (ol, Event::None));
        input.flags = flags::BOND;
        let (o, e) = step(&p, &mut s, input);
        assert_eq!(e, Event::Bonded);
        let ol = linear::force_displacement(&p.linear, 1e-6, &input, &mut l);
        let a = PI * 1e-4;
        assert_eq!(o.force[0], ol.force[0] + 1e10 * a * 1e-7);
        assert_eq!(o.force[1], ol.force[1] - 4e9 * a * 2e-7);
        assert_eq!(o.reserved, report::HOLD);
        assert_eq!(s.ten_c, 1e6);
    }

    /// Pulled apart: the tensile stress is -Fb / A; the bond breaks in the
    /// call whose stress first exceeds the strength, and that call already
    /// carries only the linear part (nothing, apart).
    #[test]
    fn a_bond_breaks_in_tension_in_the_call_that_exceeds_its_strength() {
        // Half a step's stress past 100 steps: the 101st call breaks it.
        let p = BondProps {
            ten: 1.005e6,
            ..props()
        };
        let mut s = BondState::default();
        let mut input = contact(0.0);
        input.flags = flags::BOND;
        step(&p, &mut s, input);
        let a = PI * 1e-4;
        let dn = 1e-6;
        input.flags = 0;
        input.delta_n = dn;
        let mut k = 0;
        loop {
            k += 1;
            input.gap = k as f64 * dn;
            let (o, e) = step(&p, &mut s, input);
            let sigma = 1e10 * k as f64 * dn;
            if sigma > p.ten {
                assert_eq!(e, Event::BrokeTension, "call {k}");
                assert_eq!(o.force, [0.0; 3]);
                assert_eq!(o.reserved, report::BROKE_TENSION);
                assert!((s.sigma - sigma).abs() <= 1e-9 * sigma);
                assert_eq!(s.bond, status::TENSION);
                break;
            }
            assert_eq!(e, Event::None);
            assert!((o.force[0] + 1e10 * a * k as f64 * dn).abs() < 1e-9 * o.force[0].abs());
        }
        assert_eq!(k, 101);
    }

    /// Under compression the shear strength rises by Fn/A tan(phi).
    #[test]
    fn shear_strength_rises_with_compression() {
        let k = Springs::new(&props(), [0.5, 0.7]);
        let a = k.area;
        let c = shear_strength(&k, 1e6, 3e6 * a);
        assert!((c - (1e6 + 3e6 * 30f64.to_radians().tan())).abs() < 1e-6);
        assert!(shear_strength(&k, 1e6, -3e6 * a) < 1e6);
    }

    #[test]
    fn release_drops_the_bond_without_a_break() {
        let p = props();
        let mut s = BondState::default();
        let mut input = contact(-1e-5);
        input.flags = flags::BOND;
        step(&p, &mut s, input);
        input.flags = 0;
        input.delta_n = -1e-7;
        step(&p, &mut s, input);
        assert!(s.bonded() && s.f_n > 0.0);
        release(&input, &mut s);
        assert_eq!(s.bond, status::NONE);
        assert_eq!((s.f_n, s.f_s, s.m_t, s.m_b), (0.0, [0.0; 2], 0.0, [0.0; 2]));
    }

    #[test]
    fn slots_round_trip() {
        let v: Vec<f64> = (0..BondState::SLOTS).map(|k| k as f64 + 0.5).collect();
        let mut w = vec![0.0; BondState::SLOTS];
        BondState::load(&v).store(&mut w);
        assert_eq!(v, w);
        assert_eq!(BondState::load(&v).bond, 7.5);
    }
}
