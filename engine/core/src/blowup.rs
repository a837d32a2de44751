//! Blow-up checks: a run whose timestep is too large for its stiffnesses
//! (or whose state turned NaN) stops at the first step that shows it, with
//! the body, the step and the stable timestep estimated from its contacts.
//!
//! Reads: the positions, velocities and spins the law of motion has just
//! written (the test per body is folded into the law of motion's own
//! loops, see `crate::motion`); every [`ENERGY_EVERY`] steps the kinetic
//! energy of all bodies; on a failure, the timestep stiffness each contact
//! reported in the last contact pass.
//! Writes: nothing but the error ([`BlowUp`]).
//! Invariant: the body named is the one of lowest id among those that fail
//! at that step (balls before blocks), on any thread count.

use crate::body::{BallsRef, BlocksRef};
use crate::contact::CARRY_STIFFNESS;
use crate::error::StepError;
use crate::math::Vec3;
use crate::piece::PieceKind;
use crate::sim::*;
use crate::snapshot::BodyKind;
use crate::team;
use crate::timestep::*;
use std::fmt;

/// Limits of the blow-up checks ([`Settings::blowup`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlowUpLimits {
    /// Largest move of a body in one step, as a fraction of its size (a
    /// ball's radius, a block's bounding radius); the same number, in
    /// radians, bounds its turn in one step (its surface then moves that
    /// fraction of its size about the centre). `None`: not checked.
    /// Default 0.5.
    pub fraction: Option<f64>,
    /// Largest factor by which the total kinetic energy may grow from one
    /// energy check to the next ([`ENERGY_EVERY`] steps apart), where the
    /// energy it grows from is at least the floor of
    /// [`Simulation::energy_floor`]. `None`: not checked. Default 1e6.
    pub energy_jump: Option<f64>,
}

impl Default for BlowUpLimits {
    fn default() -> Self {
        BlowUpLimits {
            fraction: Some(0.5),
            energy_jump: Some(1e6),
        }
    }
}

/// Steps between two checks of the kinetic energy.
pub const ENERGY_EVERY: u64 = 100;

/// What gave a blow-up away.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Sign {
    /// The body moved `ratio` times its size in one step.
    Moved {
        /// Distance moved over the size (-).
        ratio: f64,
    },
    /// The body turned `angle` in one step.
    Turned {
        /// Angle (rad).
        angle: f64,
    },
    /// A position, velocity, spin, orientation or angular momentum is NaN
    /// or infinite.
    NonFinite,
    /// The total kinetic energy grew from `from` at step `since` to `to`;
    /// the body named holds the largest share of it.
    Energy {
        /// Kinetic energy at the last check (J).
        from: f64,
        /// Kinetic energy now (J).
        to: f64,
        /// Step of the last check.
        since: u64,
    },
}

/// A run that became unstable ([`StepError::BlowUp`]).
#[derive(Clone, Debug, PartialEq)]
pub struct BlowUp {
    /// Kind of the body named.
    pub kind: BodyKind,
    /// Its id, as in the output tables (from 1 within its kind).
    pub id: u64,
    /// The step at which it showed.
    pub step: u64,
    /// What showed it.
    pub sign: Sign,
    /// The timestep in use (s).
    pub dt: f64,
    /// The timestep `dt = "auto"` would take from the stiffnesses the
    /// contacts reported in the last contact pass, with the run's safety
    /// factor (or the default one with a fixed `dt`) (s); `None` when no
    /// model reports a stiffness.
    pub stable_dt: Option<f64>,
}

/// `x` with three significant digits, in plain notation where that is
/// short and in scientific notation otherwise.
fn short(x: f64) -> String {
    if x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e4) {
        let s = format!("{x:.2e}");
        // 1.00e-4 -> 1e-4, 2.50e-6 -> 2.5e-6
        match s.split_once('e') {
            Some((m, e)) if m.contains('.') => {
                format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
            }
            _ => s,
        }
    } else {
        let s = format!(
            "{:.*}",
            (2 - x.abs().log10().floor() as i32).max(0) as usize,
            x
        );
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }
}

impl fmt::Display for BlowUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, id, step) = (self.kind.name(), self.id, self.step);
        let size = match self.kind {
            BodyKind::Ball => "radius",
            BodyKind::Block | BodyKind::Clump => "bounding radius",
        };
        match self.sign {
            Sign::Moved { ratio } => write!(
                f,
                "blow-up at step {step}: {kind} {id} moved {} times its {size} in one step",
                short(ratio)
            )?,
            Sign::Turned { angle } => write!(
                f,
                "blow-up at step {step}: {kind} {id} turned {} rad in one step",
                short(angle)
            )?,
            Sign::NonFinite => write!(
                f,
                "blow-up at step {step}: {kind} {id} has a non-finite position or velocity"
            )?,
            Sign::Energy { from, to, since } => write!(
                f,
                "blow-up at step {step}: the kinetic energy grew from {} J at step {since} to {} J \
                 ({kind} {id} holds the most)",
                short(from),
                short(to)
            )?,
        }
        let dt = short(self.dt);
        match self.stable_dt {
            Some(s) if self.dt > s => write!(
                f,
                "; dt = {dt} s is above the stable timestep of about {} s estimated from the \
                 current contacts: lower dt or use dt = \"auto\"",
                short(s)
            ),
            Some(s) => write!(
                f,
                "; dt = {dt} s, the stable timestep estimated from the current contacts is about {} s",
                short(s)
            ),
            None => write!(f, "; dt = {dt} s"),
        }
    }
}

/// What shows a blow-up of a body of size `size` (m) that moves at `v`
/// and turns at `w` over a step `dt`, given whether its state is finite;
/// `None` if nothing does.
///
/// The law of motion evaluates this only for the few balls that fail a
/// cheaper test against the smallest radius ([`Screen`]).
#[inline]
pub(crate) fn sign_of(
    finite: bool,
    v: Vec3,
    w: Vec3,
    size: f64,
    dt: f64,
    fraction: Option<f64>,
) -> Option<Sign> {
    if !finite {
        return Some(Sign::NonFinite);
    }
    let f = fraction?;
    let (v2, w2) = (v.length_squared(), w.length_squared());
    let (v_max, w_max) = (f * size / dt, f / dt);
    if v2 > v_max * v_max {
        return Some(Sign::Moved {
            ratio: v2.sqrt() * dt / size,
        });
    }
    if w2 > w_max * w_max {
        return Some(Sign::Turned {
            angle: w2.sqrt() * dt,
        });
    }
    None
}

/// The screen of the law of motion: bounds on each component of the
/// velocity and of the spin within which no ball of radius at least
/// `size_min` can have blown up in a step `dt` (see [`Screen::passes`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Screen {
    v: f64,
    w: f64,
}

impl Screen {
    pub(crate) fn new(fraction: Option<f64>, size_min: f64, dt: f64) -> Screen {
        // A vector whose components are all within c is no longer than
        // sqrt(3) c; the factor below 1 keeps that true through rounding.
        // Without the check the bounds are the largest finite number, so
        // that only a NaN or an infinity fails.
        let c = (1.0 - 1e-9) / 3f64.sqrt();
        let (v, w) = match fraction {
            Some(f) => (c * f * size_min / dt, c * f / dt),
            None => (f64::MAX, f64::MAX),
        };
        Screen {
            v: v.min(f64::MAX),
            w: w.min(f64::MAX),
        }
    }

    /// Whether a body now at `x`, moving at `v` and turning at `w`, is
    /// surely fine: every component of `v` and `w` within its bound (a
    /// NaN or an infinity is not) and `x` finite. Nine comparisons joined
    /// without branches, the kind of test the finiteness test it replaces
    /// was (a finite number is one whose magnitude is below infinity); a
    /// body that fails it goes to [`sign_of`].
    #[inline(always)]
    pub(crate) fn passes(&self, x: Vec3, v: Vec3, w: Vec3) -> bool {
        let (bv, bw) = (self.v, self.w);
        (v.x.abs() <= bv)
            & (v.y.abs() <= bv)
            & (v.z.abs() <= bv)
            & (w.x.abs() <= bw)
            & (w.y.abs() <= bw)
            & (w.z.abs() <= bw)
            & x.x.is_finite()
            & x.y.is_finite()
            & x.z.is_finite()
    }
}

/// Kinetic energy of all bodies and what the energy check compares it
/// with (see [`Simulation::energy_survey`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct EnergySurvey {
    /// Total kinetic energy, translational and rotational (J).
    pub(crate) total: f64,
    /// The floor of [`Simulation::energy_floor`] (J).
    pub(crate) floor: f64,
    /// The body with the most kinetic energy (lowest id on ties).
    pub(crate) top: Option<(BodyKind, u64)>,
}

/// Balls per part of the energy survey: fixed, so that the sum is taken in
/// the same order on any thread count.
const SURVEY_PART: usize = 4096;

impl Simulation {
    /// The error for a blow-up of body `id` of `kind`, shown by `sign` at
    /// this step, with the stable timestep of the current contacts.
    pub(crate) fn blowup(&self, kind: BodyKind, id: u64, sign: Sign) -> StepError {
        StepError::BlowUp(BlowUp {
            kind,
            id,
            step: self.step,
            sign,
            dt: self.dt,
            stable_dt: self.stable_timestep(),
        })
    }

    /// The automatic timestep of the contacts as the last contact pass
    /// left them ([`Simulation::timestep_scale`]) with the run's safety
    /// factor or the default one.
    pub(crate) fn stable_timestep(&self) -> Option<f64> {
        let safety = match self.settings.timestep {
            Timestep::Auto { safety } => safety,
            Timestep::Fixed(_) => DEFAULT_SAFETY,
        };
        Some(safety * self.timestep_scale()?)
    }

    /// With a fixed timestep above what the automatic rule allows a body
    /// on a single contact at its largest safety factor (1): `(dt,
    /// limit)`, the limit being `min_i sqrt(m_i / k_i)` (s) with every
    /// body's probe stiffness (the stiffest contact its group's models
    /// make, with its dashpot; for blocks and clumps the rotational part
    /// too). Past it, one contact's spring runs near or past its
    /// stability limit as soon as it touches, and impacts may gain
    /// energy. `None` with an automatic timestep, within the limit, or
    /// without any stiffness.
    pub fn fixed_step_over_limit(&self) -> Option<(f64, f64)> {
        let Timestep::Fixed(dt) = self.settings.timestep else {
            return None;
        };
        let zeros = |n: usize| vec![0.0; n];
        let rate = self.stiffness_rate(
            &zeros(self.balls().len()),
            &zeros(self.n_blocks()),
            &zeros(self.n_clumps()),
        );
        let limit = critical_timestep(rate)?;
        (dt > limit).then_some((dt, limit))
    }

    /// `min_i sqrt(m_i / k_i)` (s) of [`Timestep::Auto`] from the contacts
    /// as the last contact pass left them: each contact's reported
    /// stiffness summed on its bodies again (the law of motion has already
    /// zeroed the sums of this step).
    fn timestep_scale(&self) -> Option<f64> {
        let mut k_balls = vec![0.0; self.balls().len()];
        let mut k_blocks = vec![0.0; self.n_blocks()];
        for lane in self.models.iter().flat_map(|m| &m.lanes) {
            let st = &lane.store;
            for k in 0..st.len() {
                if st.carry[k] < CARRY_STIFFNESS {
                    continue;
                }
                let s = st.output[k].stiffness[0];
                for p in [st.end1[k], st.end2[k]] {
                    match p.kind() {
                        PieceKind::Ball => k_balls[p.index()] += s,
                        PieceKind::Block | PieceKind::Convex => k_blocks[p.index()] += s,
                        PieceKind::Facet => {}
                    }
                }
            }
        }
        let clumps = self.clumps();
        let k_clumps: Vec<f64> = (0..clumps.len())
            .map(|i| {
                let first = clumps.first[i] as usize;
                let count = self.templates[clumps.template[i] as usize].pebbles.len();
                k_balls[first..first + count].iter().sum()
            })
            .collect();
        drop(clumps);
        critical_timestep(self.stiffness_rate(&k_balls, &k_blocks, &k_clumps))
    }

    /// The kinetic energy of every body, and the energy below which a
    /// kinetic energy is too small for its growth to mean anything (J):
    /// per body `m (g s + (s / (1000 dt))^2)`, with `s` its size, `g` the
    /// magnitude of gravity and `dt` the last timestep: the work of
    /// lifting it by its size, plus twice the kinetic energy of it moving
    /// a thousandth of its size per step (what keeps the floor above zero
    /// without gravity, whatever the models report).
    pub(crate) fn energy_survey(&self) -> EnergySurvey {
        let g = self.settings.gravity.length();
        // (s / (1000 dt))^2 = s^2 * per_step
        let per_step = (1e-3 / self.dt).powi(2);
        let free = self.first_pebble_row();
        let b = BallsRef::of(&self.world);
        let (mass, vel, inertia, spin, radius) = (
            &b.mass[..],
            &b.vel[..],
            &b.inertia[..],
            &b.spin[..],
            &b.radius[..],
        );
        let parts = (0..free)
            .step_by(SURVEY_PART)
            .map(|lo| lo..(lo + SURVEY_PART).min(free));
        let sums = team::map(parts.collect(), |_, part| {
            let (mut total, mut floor, mut top) = (0.0, 0.0, (0.0, usize::MAX));
            for i in part {
                let e = 0.5 * mass[i] * vel[i].length_squared()
                    + 0.5 * inertia[i] * spin[i].length_squared();
                total += e;
                let r = radius[i];
                floor += mass[i] * (g * r + r * r * per_step);
                if e > top.0 || top.1 == usize::MAX {
                    top = (e, i);
                }
            }
            (total, floor, top)
        });
        let (mut total, mut floor, mut top) = (0.0, 0.0, (f64::NEG_INFINITY, None));
        for (t, fl, (e, i)) in sums {
            total += t;
            floor += fl;
            if i != usize::MAX && e > top.0 {
                top = (e, Some((BodyKind::Ball, i as u64 + 1)));
            }
        }
        let k = BlocksRef::of(&self.world);
        for i in 0..k.len() {
            let e = 0.5 * k.mass[i] * k.vel[i].length_squared()
                + k.inertia[i].kinetic_energy(k.orientation[i], k.momentum[i]);
            total += e;
            let r = self.shapes[k.shape[i] as usize].radius;
            floor += k.mass[i] * (g * r + r * r * per_step);
            if e > top.0 {
                top = (e, Some((BodyKind::Block, i as u64 + 1)));
            }
        }
        let c = self.clumps();
        for i in 0..c.len() {
            let e = 0.5 * c.mass[i] * c.vel[i].length_squared()
                + c.inertia[i].kinetic_energy(c.orientation[i], c.momentum[i]);
            total += e;
            let r = self.templates[c.template[i] as usize].radius;
            floor += c.mass[i] * (g * r + r * r * per_step);
            if e > top.0 {
                top = (e, Some((BodyKind::Clump, i as u64 + 1)));
            }
        }
        EnergySurvey {
            total,
            floor,
            top: top.1,
        }
    }

    /// The energy floor of `Simulation::energy_survey` for the bodies as
    /// they are now (J).
    pub fn energy_floor(&self) -> f64 {
        self.energy_survey().floor
    }

    /// The energy check, every [`ENERGY_EVERY`] steps: stops the run when
    /// the kinetic energy grew more than [`BlowUpLimits::energy_jump`]
    /// times over the larger of its value at the last check and the floor.
    pub(crate) fn check_energy(&mut self) -> Result<(), StepError> {
        let Some(jump) = self.settings.blowup.energy_jump else {
            return Ok(());
        };
        let survey = self.energy_survey();
        let (since, from) = self.energy_last;
        self.energy_last = (self.step, survey.total);
        let limit = jump * from.max(survey.floor);
        if survey.total.is_nan() || survey.total > limit {
            let (kind, id) = survey.top.unwrap_or((BodyKind::Ball, 1));
            return Err(self.blowup(
                kind,
                id,
                Sign::Energy {
                    from,
                    to: survey.total,
                    since,
                },
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_numbers_read_as_written() {
        let cases = [
            (1e-4, "1e-4"),
            (2.5e-6, "2.5e-6"),
            (0.723, "0.723"),
            (1.0, "1"),
            (12.5, "12.5"),
            (100.0, "100"),
            (4.123e8, "4.12e8"),
            (0.0, "0"),
        ];
        for (x, s) in cases {
            assert_eq!(short(x), s, "{x}");
        }
    }

    #[test]
    fn every_body_that_fails_its_own_size_fails_the_screen() {
        // The screen with the smallest size lets nothing through that the
        // exact test, with any larger size, would stop: speeds along an
        // axis and along a diagonal, where the component bound is
        // tightest, up to twice the limit.
        let (dt, f, r_min) = (1e-3, 0.5, 0.01);
        let screen = Screen::new(Some(f), r_min, dt);
        let x = Vec3::ZERO;
        let dirs = [
            Vec3::X,
            Vec3::ONE.normalize(),
            Vec3::new(1.0, -2.0, 0.5).normalize(),
        ];
        let mut tripped = 0;
        for k in 0..=20_000 {
            let s = 1e-4 * k as f64;
            for d in dirs {
                let (v, w) = (d * s * f * r_min / dt, d * s * f / dt);
                for size in [r_min, 0.02, 0.1] {
                    if sign_of(true, v, Vec3::ZERO, size, dt, Some(f)).is_some() {
                        tripped += 1;
                        assert!(!screen.passes(x, v, Vec3::ZERO), "{s} {d} {size}");
                    }
                    if sign_of(true, Vec3::ZERO, w, size, dt, Some(f)).is_some() {
                        assert!(!screen.passes(x, Vec3::ZERO, w), "{s} {d}");
                    }
                }
                // Well within the limit, everything passes.
                if s < 0.5 {
                    assert!(screen.passes(x, v, w), "{s} {d}");
                }
            }
        }
        assert!(tripped > 10_000);
        // NaN and infinite values never pass, with the check or without.
        let off = Screen::new(None, r_min, dt);
        for s in [screen, off] {
            for bad in [f64::NAN, f64::INFINITY] {
                let b = Vec3::new(0.0, bad, 0.0);
                assert!(!s.passes(x, b, Vec3::ZERO) && !s.passes(x, Vec3::ZERO, b));
                assert!(!s.passes(b, Vec3::ZERO, Vec3::ZERO));
            }
        }
        let fast = Vec3::new(1e300, 0.0, 0.0);
        assert_eq!(sign_of(true, fast, fast, r_min, dt, None), None);
        assert_eq!(
            sign_of(false, Vec3::ZERO, Vec3::ZERO, r_min, dt, None),
            Some(Sign::NonFinite)
        );
    }
}
