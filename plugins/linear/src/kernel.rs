//! The linear contact model as pure functions over plain data.
//!
//! Reads one contact's kinematic input ([`ContactInput`]) and its state
//! ([`LinearState`]); writes the new state and the contact's force in the
//! contact frame. Invariants: `n` points from end1 to end2, `gap < 0` is
//! overlap, increments are those of end2 relative to end1, the returned
//! normal force is never tensile and the returned shear force is the force
//! on end2.
//!
//! # Model
//! A linear spring of normal stiffness `kn` and a linear spring of shear
//! stiffness `ks` act in parallel with viscous dashpots; the shear spring is
//! capped by Coulomb friction.
//!
//! - Linear normal force from the overlap `u = -g`: `Fl = kn u` (an
//!   absolute update, so it never drifts and is never negative).
//! - Normal dashpot: `Fdn = -cn dn / dt` with `cn = 2 bn sqrt(m kn)`; it is
//!   compressive while the pieces approach (`dn < 0`).
//! - Normal force `Fn = max(Fl + Fdn, 0)`: the contact never pulls. When the
//!   clip acts, the dashpot force that actually worked is `Fn - Fl`.
//! - Shear spring, incremental: trial `Fs* = Fs_old - ks ds`; the Coulomb
//!   limit is `Fs_max = fric Fl`; if `|Fs*| > Fs_max` the trial is scaled
//!   down to that length and the contact is sliding.
//! - Shear dashpot `Fds = -cs ds / dt` with `cs = 2 bs sqrt(m ks)`; it is
//!   added to the returned shear force only, not to the stored spring force.
//! - Spread normal dashpot: where the contact is a surface (a block's
//!   face on another block or a wall), the normal dashpot acts over the
//!   whole surface, `cn / A` per unit area, and not at the location alone,
//!   so a relative rotation about `s` and `t` meets the moment
//!   `Mbs = -cn (gtt ws - gst wt)`, `Mbt = -cn (gss wt - gst ws)`, with
//!   `w = dtheta_b / dt` and `g` the surface's second moments per unit
//!   area about the location (the engine's input `area_gyration`; sdk
//!   `spread_dashpot`). A
//!   single contact standing for a face then damps the face's rocking as
//!   the springs spread over it would. Ball contacts have no such input
//!   and no such moment.
//! - Energies: stored strain energy `Fl^2 / (2 kn) + |Fs|^2 / (2 ks)`
//!   (terms with zero stiffness dropped); the shear increment splits into an
//!   elastic part `-(Fs - Fs_old) / ks` and a slip part (the rest), and the
//!   slip energy grows by `-(Fs_old + Fs) / 2 . slip`; the dashpot energy grows
//!   by `-(Fdn_eff dn + Fds . ds + Mb . dtheta_b)`, the work the dashpots
//!   take out.
//!   The trapezoidal slip estimate is exact while the Coulomb limit stays
//!   constant; in a step where the limit drops and the shear force reverses
//!   it can come out slightly negative (as in the reference formulation).
//!
//! Symbols: `g` gap, `dn` normal increment (positive opens), `ds` shear
//! increment along (s, t), `m` effective contact mass, `dt` timestep, `bn`
//! and `bs` the critical damping ratios `dp_nratio` and `dp_sratio`.
//!
//! # Units
//! Stiffnesses in N/m, forces in N, energies in J, lengths in m, mass in kg,
//! time in s; `fric`, `dp_nratio`, `dp_sratio` and `slipping` are
//! dimensionless.
//!
//! # References
//! - P. A. Cundall and O. D. L. Strack (1979), A discrete numerical model for
//!   granular assemblies, Geotechnique 29(1), 47-65.
//! - Itasca Consulting Group, PFC documentation, "Linear Model" (the
//!   property and state names follow it).

use talus_sdk::{flags, ContactInput, ContactOutput, STATUS_ACTIVE};

/// One property set of the linear model, in descriptor order.
///
/// # Units
/// `kn`, `ks` in N/m; `fric`, `dp_nratio`, `dp_sratio` dimensionless. All
/// default to 0.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinearProps {
    /// Normal stiffness (N/m).
    pub kn: f64,
    /// Shear stiffness (N/m).
    pub ks: f64,
    /// Friction coefficient (-).
    pub fric: f64,
    /// Normal critical damping ratio (-), in [0, 1].
    pub dp_nratio: f64,
    /// Shear critical damping ratio (-), in [0, 1].
    pub dp_sratio: f64,
}

impl LinearProps {
    /// Number of properties (the length of the descriptor's list).
    pub const COUNT: usize = 5;

    /// Reads a property set in descriptor order: kn, ks, fric, dp_nratio,
    /// dp_sratio.
    ///
    /// # Panics
    /// If `props` has fewer than [`LinearProps::COUNT`] values.
    pub fn from_slice(props: &[f64]) -> Self {
        Self {
            kn: props[0],
            ks: props[1],
            fric: props[2],
            dp_nratio: props[3],
            dp_sratio: props[4],
        }
    }

    /// The translational stiffness reported for timestep estimation (N/m):
    /// the larger of `kn` and `ks`, each raised by its dashpot as
    /// [`talus_sdk::damped_stiffness`] says.
    pub fn timestep_stiffness(&self) -> f64 {
        let normal = talus_sdk::damped_stiffness(self.kn, self.dp_nratio);
        normal.max(talus_sdk::damped_stiffness(self.ks, self.dp_sratio))
    }
}

/// The per-contact state of the linear model, slot by slot in storage
/// order.
///
/// # Units
/// Forces in N, energies in J; `slipping` is 0 or 1.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinearState {
    /// Slot 0, `fn_linear`: linear normal force `Fl` (N).
    pub fn_linear: f64,
    /// Slots 1 and 2, `fs_s` and `fs_t`: shear spring force on end2 along
    /// s and t (N).
    pub fs: [f64; 2],
    /// Slot 3, `e_strain`: strain energy stored in the springs now (J).
    pub e_strain: f64,
    /// Slot 4, `e_slip`: energy dissipated by frictional slip so far (J).
    pub e_slip: f64,
    /// Slot 5, `e_dashpot`: energy dissipated by the dashpots so far (J).
    pub e_dashpot: f64,
    /// Slot 6, `slipping`: 1 while the contact slides, else 0.
    pub slipping: f64,
}

impl LinearState {
    /// Number of state slots per contact.
    pub const SLOTS: usize = 7;

    /// Reads the state from a contact's slots.
    ///
    /// # Panics
    /// If `slots` has fewer than [`LinearState::SLOTS`] values.
    #[inline(always)]
    pub fn load(slots: &[f64]) -> Self {
        Self {
            fn_linear: slots[0],
            fs: [slots[1], slots[2]],
            e_strain: slots[3],
            e_slip: slots[4],
            e_dashpot: slots[5],
            slipping: slots[6],
        }
    }

    /// Writes the state into a contact's slots.
    ///
    /// # Panics
    /// If `slots` has fewer than [`LinearState::SLOTS`] values.
    #[inline(always)]
    pub fn store(&self, slots: &mut [f64]) {
        slots[0] = self.fn_linear;
        slots[1] = self.fs[0];
        slots[2] = self.fs[1];
        slots[3] = self.e_strain;
        slots[4] = self.e_slip;
        slots[5] = self.e_dashpot;
        slots[6] = self.slipping;
    }

    /// Clears the force and strain state of a contact that carries no
    /// force; the cumulative energies are kept.
    fn release(&mut self) {
        self.fn_linear = 0.0;
        self.fs = [0.0; 2];
        self.e_strain = 0.0;
        self.slipping = 0.0;
    }
}

fn dot(a: [f64; 2], b: [f64; 2]) -> f64 {
    a[0] * b[0] + a[1] * b[1]
}

/// Whether the shear trial force is so far inside the Coulomb limit that
/// [`coulomb_cap`] would return it unchanged, decided without its square
/// root: `|trial|^2 < fs_max^2 (1 - 1e-12)` with both sides rounded still
/// implies `|trial|^2 < fs_max^2` exactly, so the rounded root is at most
/// `fs_max`. A zero, subnormal or not-a-number limit and a not-a-number
/// trial answer false (the exact test then decides).
#[inline(always)]
fn sure_to_stick(trial: [f64; 2], fs_max: f64) -> bool {
    let limit2 = fs_max * fs_max;
    fs_max > 0.0 && limit2 >= f64::MIN_POSITIVE && dot(trial, trial) < limit2 * (1.0 - 1e-12)
}

/// The Coulomb cap of the shear trial force `trial` at `fs_max`: the new
/// spring force and 1 if the contact slides, else `trial` and 0.
#[inline(never)]
fn coulomb_cap(trial: [f64; 2], fs_max: f64) -> ([f64; 2], f64) {
    // sqrt of the sum of squares: hypot's overflow guard is not needed at
    // contact-force magnitudes and costs several times more.
    let trial_len = dot(trial, trial).sqrt();
    if trial_len > fs_max {
        let scale = fs_max / trial_len;
        ([trial[0] * scale, trial[1] * scale], 1.0)
    } else {
        (trial, 0.0)
    }
}

/// What the kernel needs of one property set and one timestep, computed
/// once for a run of contacts: the reciprocals of `dt` and `ks` and the
/// timestep stiffness.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Prepared {
    /// The property set.
    pub props: LinearProps,
    /// `1 / dt`, or 0 when `dt <= 0` (dashpots off).
    pub inv_dt: f64,
    /// `1 / ks`, or 0 when `ks <= 0`.
    pub inv_ks: f64,
    /// [`LinearProps::timestep_stiffness`].
    pub stiffness: f64,
}

impl Prepared {
    /// The constants of property set `props` for a timestep `dt` (s).
    pub fn new(props: &LinearProps, dt: f64) -> Self {
        Self {
            props: *props,
            inv_dt: if dt > 0.0 { 1.0 / dt } else { 0.0 },
            inv_ks: if props.ks > 0.0 { 1.0 / props.ks } else { 0.0 },
            stiffness: props.timestep_stiffness(),
        }
    }

    /// The dashpot coefficients `(cn, cs)` of a contact of effective mass
    /// `mass` (N s/m).
    #[inline]
    pub fn dashpots(&self, mass: f64) -> (f64, f64) {
        let p = &self.props;
        (
            2.0 * p.dp_nratio * (mass * p.kn).sqrt(),
            2.0 * p.dp_sratio * (mass * p.ks).sqrt(),
        )
    }

    /// [`Prepared::dashpots`] through `memo`, `(mass bits, (cn, cs))` of
    /// the last mass asked for: contacts of one run mostly share their
    /// effective mass (equal balls), so the two square roots are taken
    /// again only when the mass changes.
    #[inline]
    pub fn dashpots_kept(&self, memo: &mut Option<(u64, (f64, f64))>, mass: f64) -> (f64, f64) {
        match *memo {
            Some((bits, c)) if bits == mass.to_bits() => c,
            _ => {
                let c = self.dashpots(mass);
                *memo = Some((mass.to_bits(), c));
                c
            }
        }
    }
}

/// The force-displacement law of the linear model for one contact and one
/// timestep (see the module docs for the equations).
///
/// `dt` is the timestep (s); a non-positive `dt` switches the dashpots off
/// because they have no rate to act on. A contact flagged
/// [`flags::NEW`] starts from a zeroed state. A contact without overlap
/// carries no force: its force and strain state is cleared and its
/// cumulative energies are kept. Contacts the engine suppressed never get
/// here: the sdk's driver answers for them and calls [`release`].
///
/// # Units
/// See [`LinearProps`], [`LinearState`] and [`ContactInput`]; the returned
/// force is in N, the stiffness in N/m.
pub fn force_displacement(
    props: &LinearProps,
    dt: f64,
    input: &ContactInput,
    state: &mut LinearState,
) -> ContactOutput {
    let p = Prepared::new(props, dt);
    force_displacement_with(&p, |m| p.dashpots(m), input, state)
}

/// [`force_displacement`] with the per-run constants `p` computed already
/// and the dashpot coefficients `(cn, cs)` taken from `dashpots(mass)`,
/// which is called only for contacts that carry force (a caller may
/// remember the coefficients of the last mass it saw).
#[inline(always)]
pub fn force_displacement_with(
    p: &Prepared,
    dashpots: impl FnOnce(f64) -> (f64, f64),
    input: &ContactInput,
    state: &mut LinearState,
) -> ContactOutput {
    let props = &p.props;
    if input.flags & flags::NEW != 0 {
        *state = LinearState::default();
    }
    // A NaN gap fails this test, so it counts as no contact.
    let overlapping = input.gap < 0.0;
    if !overlapping {
        state.release();
        return ContactOutput::could_be_active([p.stiffness, 0.0]);
    }

    let inv_dt = p.inv_dt;
    let (cn, cs) = dashpots(input.mass);

    // Normal: absolute linear force plus a dashpot, never tensile in total.
    let overlap = -input.gap;
    let f_linear = props.kn * overlap;
    let f_dashpot_n = -cn * input.delta_n * inv_dt;
    let f_normal = (f_linear + f_dashpot_n).max(0.0);
    // The dashpot force that really acted once the no-tension clip applied.
    let f_dashpot_n_eff = f_normal - f_linear;

    // Shear: incremental spring capped by Coulomb friction.
    let ds = input.delta_s;
    let fs_old = state.fs;
    let trial = [fs_old[0] - props.ks * ds[0], fs_old[1] - props.ks * ds[1]];
    let fs_max = props.fric * f_linear;
    let (fs_new, slipping) = if sure_to_stick(trial, fs_max) {
        (trial, 0.0)
    } else {
        coulomb_cap(trial, fs_max)
    };
    let f_dashpot_s = [-cs * ds[0] * inv_dt, -cs * ds[1] * inv_dt];

    // Energies.
    // 0.5 Fl^2 / kn = 0.5 Fl u: no division needed for the normal part.
    let mut e_strain = 0.5 * f_linear * overlap;
    let inv_ks = p.inv_ks;
    e_strain += 0.5 * dot(fs_new, fs_new) * inv_ks;
    let elastic = [
        -(fs_new[0] - fs_old[0]) * inv_ks,
        -(fs_new[1] - fs_old[1]) * inv_ks,
    ];
    let slip = [ds[0] - elastic[0], ds[1] - elastic[1]];
    let fs_mean = [fs_old[0] + fs_new[0], fs_old[1] + fs_new[1]];
    state.e_slip += -0.5 * dot(fs_mean, slip);
    state.e_dashpot += -(f_dashpot_n_eff * input.delta_n + dot(f_dashpot_s, ds));

    state.fn_linear = f_linear;
    state.fs = fs_new;
    state.e_strain = e_strain;
    state.slipping = slipping;

    ContactOutput {
        force: [
            f_normal,
            fs_new[0] + f_dashpot_s[0],
            fs_new[1] + f_dashpot_s[1],
        ],
        moment: [0.0; 3],
        stiffness: [p.stiffness, 0.0],
        status: STATUS_ACTIVE,
        reserved: 0,
    }
}

/// What a contact the engine suppressed does to its state: a new contact
/// starts from zeros, then the force and strain state is cleared and the
/// cumulative energies are kept (the driver has already answered for the
/// contact: no force, inactive).
#[inline]
pub fn release(input: &ContactInput, state: &mut LinearState) {
    if input.flags & flags::NEW != 0 {
        *state = LinearState::default();
    }
    state.release();
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use talus_sdk::STATUS_COULD_BE_ACTIVE;

    fn props(kn: f64, ks: f64, fric: f64) -> LinearProps {
        LinearProps {
            kn,
            ks,
            fric,
            ..LinearProps::default()
        }
    }

    fn touching(gap: f64) -> ContactInput {
        ContactInput {
            gap,
            mass: 1.0,
            ..ContactInput::default()
        }
    }

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * a.abs().max(b.abs()).max(f64::MIN_POSITIVE)
    }

    #[test]
    fn zero_overlap_gives_zero_force() {
        let p = props(1e6, 5e5, 0.5);
        let mut state = LinearState::default();
        let out = force_displacement(&p, 1e-4, &touching(0.0), &mut state);
        assert_eq!(out.force, [0.0; 3]);
        assert_eq!(out.status, STATUS_COULD_BE_ACTIVE);
        assert_eq!(out.stiffness, [1e6, 0.0]);
        assert_eq!(state, LinearState::default());

        let out = force_displacement(&p, 1e-4, &touching(1e-3), &mut state);
        assert_eq!(out.force, [0.0; 3]);
        assert_eq!(out.status, STATUS_COULD_BE_ACTIVE);
    }

    #[test]
    fn linear_normal_force_is_kn_times_overlap() {
        let kn = 2.5e7;
        for overlap in [1e-9, 1e-6, 3e-4, 0.01] {
            let mut state = LinearState::default();
            let out =
                force_displacement(&props(kn, 0.0, 0.0), 1e-5, &touching(-overlap), &mut state);
            assert_eq!(out.force[0], kn * overlap);
            assert_eq!(state.fn_linear, kn * overlap);
            assert_eq!(out.status, STATUS_ACTIVE);
        }
    }

    #[test]
    fn normal_dashpot_follows_critical_damping_ratio() {
        let (kn, mass, beta, dt, dn) = (1e6, 2.0, 0.3, 1e-4, -1e-6);
        let p = LinearProps {
            kn,
            dp_nratio: beta,
            ..LinearProps::default()
        };
        let input = ContactInput {
            gap: -1e-4,
            delta_n: dn,
            mass,
            ..ContactInput::default()
        };
        let mut state = LinearState::default();
        let out = force_displacement(&p, dt, &input, &mut state);
        let cn = 2.0 * beta * (mass * kn).sqrt();
        // Approaching (dn < 0): the dashpot adds compression.
        assert!(close(out.force[0], kn * 1e-4 + cn * (-dn) / dt, 1e-14));
        assert!(close(state.e_dashpot, cn * dn * dn / dt, 1e-14));
    }

    #[test]
    fn strong_damping_on_separation_gives_no_tension() {
        let p = LinearProps {
            kn: 1e6,
            dp_nratio: 1.0,
            ..LinearProps::default()
        };
        let overlap = 1e-5;
        let dn = 1e-5; // opening fast: the raw dashpot force exceeds Fl
        let input = ContactInput {
            gap: -overlap,
            delta_n: dn,
            mass: 10.0,
            ..ContactInput::default()
        };
        let mut state = LinearState::default();
        let out = force_displacement(&p, 1e-6, &input, &mut state);
        assert_eq!(out.force[0], 0.0);
        assert_eq!(state.fn_linear, p.kn * overlap);
        // Only the part of the dashpot force that acted did work: Fl dn.
        assert!(close(state.e_dashpot, p.kn * overlap * dn, 1e-14));
    }

    #[test]
    fn shear_force_never_exceeds_coulomb_limit() {
        let p = props(1e6, 1e6, 0.4);
        let overlap = 1e-4;
        let input = ContactInput {
            gap: -overlap,
            delta_s: [3e-3, -4e-3],
            mass: 1.0,
            ..ContactInput::default()
        };
        let mut state = LinearState::default();
        let out = force_displacement(&p, 1e-4, &input, &mut state);
        let limit = p.fric * p.kn * overlap;
        let len = state.fs[0].hypot(state.fs[1]);
        assert!(close(len, limit, 1e-14));
        assert_eq!(state.slipping, 1.0);
        // The friction force on end2 opposes its sliding direction.
        assert!(close(state.fs[0], -limit * 0.6, 1e-14));
        assert!(close(state.fs[1], limit * 0.8, 1e-14));
        assert_eq!([out.force[1], out.force[2]], state.fs);
    }

    #[test]
    fn elastic_shear_is_minus_ks_times_displacement() {
        let p = props(1e6, 4e5, 0.5);
        let input = ContactInput {
            gap: -1e-3,
            delta_s: [1e-5, 2e-5],
            mass: 1.0,
            ..ContactInput::default()
        };
        let mut state = LinearState::default();
        force_displacement(&p, 1e-4, &input, &mut state);
        assert_eq!(state.fs, [-4.0, -8.0]);
        assert_eq!(state.slipping, 0.0);
        assert_eq!(state.e_slip, 0.0);
    }

    /// A pure slide at constant overlap, with numbers exact in binary so
    /// that the spring reaches the Coulomb limit exactly at a step end.
    #[test]
    fn slip_energy_equals_friction_work_over_a_pure_slide() {
        let kn = 1048576.0; // 2^20 N/m
        let ks = 65536.0; // 2^16 N/m
        let fric = 0.5;
        let overlap = 1.0 / 1024.0; // Fl = 1024 N, Fs_max = 512 N
        let step = 1.0 / 1024.0; // ks * step = 64 N: the limit after 8 steps
        let n_steps = 20;
        let p = props(kn, ks, fric);
        let input = ContactInput {
            gap: -overlap,
            delta_s: [step, 0.0],
            mass: 1.0,
            ..ContactInput::default()
        };
        let mut state = LinearState::default();
        let mut last_slip = 0.0;
        for _ in 0..n_steps {
            force_displacement(&p, 1e-4, &input, &mut state);
            assert!(state.e_slip >= last_slip);
            last_slip = state.e_slip;
        }
        let fs_max = fric * kn * overlap;
        let slide = n_steps as f64 * step - fs_max / ks;
        assert_eq!(state.e_slip, fs_max * slide);
        assert_eq!(state.e_slip, 6.0);
        assert_eq!(state.fs, [-fs_max, 0.0]);
        assert_eq!(state.slipping, 1.0);
    }

    #[test]
    fn strain_energy_is_half_k_x_squared() {
        let (kn, ks) = (3e6, 1e6);
        let (u, x) = (2e-4, 5e-5);
        let p = props(kn, ks, 10.0);
        let input = ContactInput {
            gap: -u,
            delta_s: [0.0, x],
            mass: 1.0,
            ..ContactInput::default()
        };
        let mut state = LinearState::default();
        force_displacement(&p, 1e-4, &input, &mut state);
        assert!(close(
            state.e_strain,
            0.5 * kn * u * u + 0.5 * ks * x * x,
            1e-14
        ));

        // A zero stiffness contributes nothing (and no 0/0).
        let mut state = LinearState::default();
        force_displacement(&props(kn, 0.0, 1.0), 1e-4, &input, &mut state);
        assert!(close(state.e_strain, 0.5 * kn * u * u, 1e-14));
    }

    #[test]
    fn release_clears_force_history_and_keeps_cumulative_energies() {
        let p = LinearProps {
            kn: 1e6,
            ks: 1e6,
            fric: 0.3,
            dp_nratio: 0.5,
            dp_sratio: 0.5,
        };
        let mut input = ContactInput {
            gap: -1e-4,
            delta_n: -1e-6,
            delta_s: [1e-3, 0.0],
            mass: 1.0,
            ..ContactInput::default()
        };
        let mut state = LinearState::default();
        force_displacement(&p, 1e-4, &input, &mut state);
        let (e_slip, e_dashpot) = (state.e_slip, state.e_dashpot);
        assert!(e_slip > 0.0 && e_dashpot > 0.0);

        input.flags = flags::SUPPRESSED;
        release(&input, &mut state);
        let expected = LinearState {
            e_slip,
            e_dashpot,
            ..LinearState::default()
        };
        assert_eq!(state, expected);
        // A contact suppressed in the step it was created starts at zero.
        input.flags |= flags::NEW;
        release(&input, &mut state);
        assert_eq!(state, LinearState::default());
    }

    #[test]
    fn new_contact_starts_from_zero_state() {
        let p = props(1e6, 1e6, 0.5);
        let mut state = LinearState {
            fn_linear: 9.0,
            fs: [7.0, 7.0],
            e_strain: 1.0,
            e_slip: 2.0,
            e_dashpot: 3.0,
            slipping: 1.0,
        };
        let input = ContactInput {
            flags: flags::NEW,
            ..touching(-1e-4)
        };
        force_displacement(&p, 1e-4, &input, &mut state);
        assert_eq!(state.fs, [0.0; 2]);
        assert_eq!(state.e_slip, 0.0);
        assert_eq!(state.e_dashpot, 0.0);
        assert_eq!(state.fn_linear, p.kn * 1e-4);
    }

    #[test]
    fn state_round_trips_through_slots() {
        let state = LinearState {
            fn_linear: 1.0,
            fs: [2.0, 3.0],
            e_strain: 4.0,
            e_slip: 5.0,
            e_dashpot: 6.0,
            slipping: 1.0,
        };
        let mut slots = [0.0; LinearState::SLOTS];
        state.store(&mut slots);
        assert_eq!(slots, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.0]);
        assert_eq!(LinearState::load(&slots), state);
    }

    proptest! {
        #[test]
        fn quick_stick_test_agrees_with_the_exact_cap(
            fs_max in prop_oneof![Just(0.0), 1e-300..1e-150f64, 1e-3..1e3f64, 1e150..1e300f64],
            angle in 0.0..std::f64::consts::TAU,
            rel in prop_oneof![0.0..2.0f64, (1.0 - 1e-11)..(1.0 + 1e-11)],
        ) {
            let trial = [fs_max * rel * angle.cos(), fs_max * rel * angle.sin()];
            if sure_to_stick(trial, fs_max) {
                prop_assert_eq!(coulomb_cap(trial, fs_max), (trial, 0.0));
            }
        }

        #[test]
        fn force_is_finite_and_shear_within_coulomb_plus_dashpot(
            kn in 0.0..1e9f64,
            ks in 0.0..1e9f64,
            fric in 0.0..5.0f64,
            dp_nratio in 0.0..=1.0f64,
            dp_sratio in 0.0..=1.0f64,
            gaps in proptest::array::uniform2(-1e-2..1e-2f64),
            dns in proptest::array::uniform2(-1e-3..1e-3f64),
            dss in proptest::array::uniform4(-1e-3..1e-3f64),
            mass in 1e-6..1e3f64,
            dt in 1e-8..1e-2f64,
        ) {
            let p = LinearProps { kn, ks, fric, dp_nratio, dp_sratio };
            let mut state = LinearState::default();
            // Two steps, so that the second starts from a loaded spring.
            for k in 0..2 {
                let input = ContactInput {
                    gap: gaps[k],
                    delta_n: dns[k],
                    delta_s: [dss[2 * k], dss[2 * k + 1]],
                    mass,
                    ..ContactInput::default()
                };
                let out = force_displacement(&p, dt, &input, &mut state);
                prop_assert!(out.force.iter().all(|f| f.is_finite()));
                prop_assert!(out.force[0] >= 0.0);
                let limit = fric * state.fn_linear;
                let spring = state.fs[0].hypot(state.fs[1]);
                prop_assert!(spring <= limit * (1.0 + 1e-12));
                let cs = 2.0 * dp_sratio * (mass * ks).sqrt();
                let dashpot = cs * input.delta_s[0].hypot(input.delta_s[1]) / dt;
                let shear = out.force[1].hypot(out.force[2]);
                prop_assert!(shear <= (limit + dashpot) * (1.0 + 1e-12));
                prop_assert!(state.e_dashpot >= 0.0);
            }
        }
    }
}
