//! One cycle, in stage order (see [`Simulation::cycle`]):
//! 1. timestep ([`crate::timestep`]): fixed, or automatic from the
//!    stiffnesses of the last cycle;
//! 2. the periodic cell's new shape ([`crate::cell`]), then the law of
//!    motion ([`crate::motion`]; clumps and their pebbles in
//!    [`crate::clump`]) and wall motion; a deforming cell's grid follows
//!    it ([`crate::cellspace::CellSpace::follow`]);
//! 3. contact detection ([`crate::detect`]): re-binning only pieces that
//!    left their cell extent; contacts created in sorted pair order, so
//!    ids are the same for any thread count;
//! 4. the wall stage ([`crate::wall_logic`]): ball-facet gaps in parallel,
//!    then the associative wall logic serially;
//! 5. the contact pass ([`crate::pass`]): per chunk of [`crate::BATCH`] contacts
//!    the narrow phase ([`crate::narrow`]), one plugin call, and the force
//!    sums ([`crate::sums`]);
//! 6. the finiteness check of the sums, and the pebbles' sums gathered
//!    onto their clumps ([`crate::clump`]); servos (walls, the cell) set
//!    the next step's motion from this step's load.
//!
//! Every parallel stage computes per-contact or per-ball values that do not
//! depend on other items of the same stage, and every sum is taken in a
//! fixed order, so a run gives the same bits with any number of threads.

use crate::blowup::ENERGY_EVERY;
use crate::body::walls_mut;
use crate::error::StepError;
use crate::sim::*;
use crate::team::Team;
use crate::timestep::*;
use std::time::Instant;

/// A moment of the run at which something begins (a bond install, a
/// stage of the cell's motion).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum When {
    /// In step `k`: cycle `k` runs step `k`; step 0 is the contact pass
    /// that [`crate::Simulation::prepare`] runs on the initial positions,
    /// before the first cycle.
    Step(u64),
    /// In the first step whose start time is at least this (s).
    Time(f64),
}

impl When {
    /// Whether the moment has come by the step numbered `step` that
    /// starts at `time`.
    pub(crate) fn reached(self, step: u64, time: f64) -> bool {
        match self {
            When::Step(k) => step >= k,
            When::Time(t) => time >= t,
        }
    }
}

/// Cycles before another try when the pool's threads could not form a team
/// (held by other work).
pub(crate) const TEAM_RETRY: u64 = 1024;

/// Wall-clock seconds spent in each stage of [`Simulation::cycle`], summed
/// over cycles: where a run's time goes, by the engine's own clock (a
/// handful of clock reads per cycle).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimes {
    /// Law of motion of balls and walls (s).
    pub motion: f64,
    /// Contact detection: re-binning, dropped and new contacts (s).
    pub detection: f64,
    /// Wall stage: ball-facet gaps and the wall logic (s).
    pub walls: f64,
    /// Contact pass: resolution, model calls, what each contact applies
    /// and the sums (s).
    pub contacts: f64,
    /// Finiteness checks of the sums (s).
    pub checks: f64,
}

impl StageTimes {
    /// The stages by name, in cycle order, with their seconds.
    pub fn named(&self) -> [(&'static str, f64); 5] {
        [
            ("motion", self.motion),
            ("detection", self.detection),
            ("walls", self.walls),
            ("contacts", self.contacts),
            ("checks", self.checks),
        ]
    }

    /// The sum of all stages (s).
    pub fn total(&self) -> f64 {
        self.named().iter().map(|(_, t)| t).sum()
    }
}

/// Seconds since `start`, and `start` moved to now.
#[inline]
pub(crate) fn lap(start: &mut Instant) -> f64 {
    let now = Instant::now();
    let dt = now.duration_since(*start).as_secs_f64();
    *start = now;
    dt
}

impl Simulation {
    /// Runs one cycle.
    pub fn cycle(&mut self) -> Result<(), StepError> {
        if self.cells.is_none() {
            self.prepare()?;
        }
        self.keep_team();
        self.dt = match self.settings.timestep {
            Timestep::Fixed(dt) => dt,
            Timestep::Auto { safety } => self.auto_timestep(safety)?,
        };
        let dt = self.dt;
        let start = self.time;
        self.step_start = start;
        self.step += 1;
        self.time += dt;
        let mut clock = Instant::now();
        // The cell takes its new shape first: the law of motion wraps
        // positions into it.
        if let Some(c) = self.cell.as_mut() {
            c.begin_stages(self.step, start);
            c.advance(dt);
        }
        self.motion(dt)?;
        self.block_motion(dt)?;
        self.clump_motion(dt)?;
        if self.step.is_multiple_of(ENERGY_EVERY) {
            self.check_energy()?;
        }
        for w in walls_mut(&self.world).iter_mut() {
            w.advance(dt, start).map_err(|fault| StepError::Wall {
                wall: w.name.clone(),
                facet: fault.facet,
                step: self.step,
                message: fault.message,
            })?;
        }
        self.stage_times.motion += lap(&mut clock);
        if let Some(c) = self.cell.as_ref().filter(|c| c.deforms()) {
            self.check_cell_widths()?;
            if let Some(cells) = self.cells.as_mut() {
                cells.follow(c);
            }
        }
        self.detect();
        self.regroup_contacts(false);
        self.stage_times.detection += lap(&mut clock);
        self.wall_stage()?;
        self.stage_times.walls += lap(&mut clock);
        self.resolve_and_forces(dt)?;
        self.stage_times.contacts += lap(&mut clock);
        self.check_sums()?;
        self.gather_clumps();
        self.stage_times.checks += lap(&mut clock);
        // Servo walls choose the velocity of the next step from this
        // step's load.
        for w in walls_mut(&self.world).iter_mut() {
            if let Some(servo) = w.servo {
                w.motion.velocity = servo.velocity(w.force);
            }
        }
        // So does a servo on the cell, from this step's stress.
        self.servo_cell();
        Ok(())
    }

    /// Keeps a team of busy-waiting threads for this cycle's parallel
    /// regions (see [`Team`]); a team that could not start is tried again
    /// after [`TEAM_RETRY`] cycles.
    pub(crate) fn keep_team(&mut self) {
        if let Some(t) = &self.team {
            if t.is_serving() {
                t.touch();
                return;
            }
        }
        self.team = None;
        if self.step < self.team_retry {
            return;
        }
        self.team = Team::start();
        match &self.team {
            Some(t) => t.touch(),
            None => self.team_retry = self.step + TEAM_RETRY,
        }
    }
}
