//! The simulation and its cycle.
//!
//! Stage order of one cycle (see [`Simulation::cycle`]):
//! 1. timestep (fixed, or automatic from the stiffnesses of the last cycle);
//! 2. law of motion (leap-frog with gravity, fixity and local damping) and
//!    wall motion;
//! 3. contact detection in the cell space (re-binning only pieces that left
//!    their cell extent; contacts created in sorted pair order, so ids are
//!    the same for any thread count);
//! 4. ball-facet gaps in parallel, then the wall logic (associative links)
//!    serially;
//! 5. one pass over chunks of [`BATCH`] contacts: contact resolution
//!    (plane, frame, increments), one plugin call per chunk, and the force
//!    sums onto balls and walls (in segments of chunks with more than one
//!    thread, see `Simulation::resolve_and_forces`).
//!
//! Every parallel stage computes per-contact or per-ball values that do not
//! depend on other items of the same stage, and every sum is taken in a
//! fixed order, so a run gives the same bits with any number of threads.

use crate::balls::{BallInit, Balls};
use crate::cellspace::{self, CellSpace, FACET};
use crate::contact::{self, ContactStore, EndMotion};
use crate::error::{SetupError, StepError};
use crate::inputs;
use crate::math::{Aabb, Vec3};
use crate::team::{self, Team};
use crate::wall::Wall;
use crate::wall_logic;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use std::marker::PhantomData;
use std::time::Instant;
use talus_sdk::abi_stable::std_types::{RSlice, RSliceMut};
use talus_sdk::{
    flags, BatchContext, ContactInput, ContactOutput, ModelEntry, StateEvent, STATUS_ACTIVE,
    STATUS_INACTIVE,
};

/// Engine-owned bit of a contact's flags (never shown to models): the
/// contact is open and its overlap-only model has already released it, so
/// until it closes the model would only repeat the same answer (zero force,
/// the same timestep stiffness): the contact goes to the model flagged
/// [`flags::IDLE`], which leaves it untouched. This is the contract that
/// `Activity::Overlap` declares.
const RELEASED: u32 = 1 << 31;

/// Engine-owned bit of a ball-facet contact's flags: the wall logic let the
/// contact carry force in the last step (full-mode state continuity reads
/// it).
const CARRIED: u32 = 1 << 30;

/// Engine-owned bit of a ball-facet contact's flags: the ball met the facet
/// from a side that does not interact (decided when the overlap starts and
/// kept while it lasts).
const SIDE_OFF: u32 = 1 << 29;

/// Flag bits that never reach models.
const ENGINE_BITS: u32 = RELEASED | CARRIED | SIDE_OFF;

/// What a contact puts on its ends this step ([`ContactStore::carry`]):
/// nothing, only timestep stiffness, or force (and stiffness).
const CARRY_NOTHING: u8 = 0;
const CARRY_STIFFNESS: u8 = 1;
const CARRY_FORCE: u8 = 2;
// The contact pass takes a status code as its carry code.
const _: () = assert!(
    CARRY_NOTHING as u32 == STATUS_INACTIVE
        && CARRY_STIFFNESS as u32 == talus_sdk::STATUS_COULD_BE_ACTIVE
        && CARRY_FORCE as u32 == STATUS_ACTIVE
);

/// Contacts per plugin call (and per parallel work item).
pub const BATCH: usize = 1024;

/// Cycles before another try when the pool's threads could not form a team
/// (held by other work).
const TEAM_RETRY: u64 = 1024;

/// How the timestep is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Timestep {
    /// The same timestep every cycle (s).
    Fixed(f64),
    /// `safety * min_i sqrt(m_i / k_i)` over balls, where `k_i` sums the
    /// translational stiffnesses that models report for the active and
    /// could-be-active contacts of ball `i` (at least one contact's worth,
    /// so free-flying balls are bounded too).
    Auto {
        /// Safety factor in (0, 1].
        safety: f64,
    },
}

/// Global settings of a simulation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Gravitational acceleration (m/s^2).
    pub gravity: Vec3,
    /// Timestep rule.
    pub timestep: Timestep,
    /// Enlargement of piece extents for the cell space (m); `None` takes a
    /// tenth of the smallest ball radius.
    pub cell_tolerance: Option<f64>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            gravity: Vec3::ZERO,
            timestep: Timestep::Auto { safety: 0.8 },
            cell_tolerance: None,
        }
    }
}

/// A contact model in use, with its property sets and its contacts.
#[derive(Clone)]
pub struct ModelRuntime {
    /// Model name.
    pub name: String,
    /// The plugin's entry (descriptor and kernels).
    pub entry: ModelEntry,
    /// Properties per set.
    pub n_props: usize,
    /// Property sets, row-major.
    pub props: Vec<f64>,
    /// Translational stiffness the model reports for a touching probe
    /// contact, per property set (N/m).
    probe_stiffness: Vec<f64>,
    /// All contacts of this model.
    pub store: ContactStore,
}

/// Kind of body an entity in the registry stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyRef {
    /// A ball (dense index).
    Ball(u32),
    /// A wall (index).
    Wall(u32),
}

/// Group name component of a body entity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupName(pub String);

/// A DEM model: balls, walls, contact models and their contacts.
pub struct Simulation {
    /// Global settings.
    pub settings: Settings,
    /// All balls.
    pub balls: Balls,
    /// All walls.
    pub walls: Vec<Wall>,
    /// Global facet index -> (wall, facet).
    pub facet_owner: Vec<(u32, u32)>,
    /// Contact models in use.
    pub models: Vec<ModelRuntime>,
    /// Body registry: one entity per ball and wall with [`BodyRef`] and
    /// [`GroupName`] components. The hot loops use the dense stores.
    pub world: hecs::World,
    groups: Vec<String>,
    assignment: FxHashMap<(u16, u16), (u16, u32)>,
    /// The pairs (see `pair_key`) that have a contact.
    contact_pairs: FxHashSet<u64>,
    /// Contact id -> proximity-contact id, from the last wall logic.
    proximity_ids: FxHashMap<u64, u64>,
    /// (model, slot) -> (linked-to contact id, proximity id), 0 for none.
    wall_info: FxHashMap<(u16, u32), (u64, u64)>,
    cells: Option<CellSpace>,
    candidates: Vec<(u32, u32)>,
    /// Per-segment buffers of the contact pass, reused from step to step.
    segments: Vec<Segment>,
    /// Per model: the segment of each ball's first contact.
    segment_plans: Vec<SegmentPlan>,
    /// Whether the last contact pass produced a force or torque that may
    /// not be finite (see [`Simulation::check_sums`]).
    sums_suspect: bool,
    /// Per ball: moved out of its cell extent in the last law of motion.
    rebin: Vec<bool>,
    /// Per block of [`Simulation::rebin_block`] balls of the last law of
    /// motion: its first ball with a non-finite position or spin (or
    /// `usize::MAX`), and how many of its balls it flagged for re-binning.
    motion_blocks: Vec<(usize, u32)>,
    rebin_block: usize,
    /// Per ball: overlapping facet contacts in this step's wall logic
    /// (zero between calls).
    wall_touches: Vec<u8>,
    /// Per model, a bit per slot, set anew by each step's wall logic: the
    /// contact is its ball's only overlapping facet contact, so it carries
    /// its load. The contact pass turns the bit into [`CARRIED`] as it
    /// visits the contact (on the thread that works on its chunk, rather
    /// than the serial wall logic writing into every thread's chunks).
    lone: Vec<Vec<u64>>,
    next_contact_id: u64,
    /// Per ball: the stiffness of one just-touching contact with the
    /// stiffest model its group is assigned (N/m), the floor of its
    /// timestep stiffness.
    k_probe: Vec<f64>,
    /// Cycles done.
    pub step: u64,
    /// Simulated time (s).
    pub time: f64,
    /// Timestep of the last cycle (s).
    pub dt: f64,
    /// Wall-clock time of each stage, summed over the cycles done.
    pub stage_times: StageTimes,
    /// Busy-waiting jobs on the pool's other threads that run the parallel
    /// regions of the cycles.
    team: Option<Team>,
    /// The step from which a team that failed to start is tried again.
    team_retry: u64,
}

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
fn lap(start: &mut Instant) -> f64 {
    let now = Instant::now();
    let dt = now.duration_since(*start).as_secs_f64();
    *start = now;
    dt
}

#[inline]
fn pair_key(a: u32, b: u32) -> u64 {
    ((a as u64) << 32) | b as u64
}

/// The sign of `x`: 1, -1, or 0 for a zero or NaN, without branches (a
/// velocity component jittering about zero would defeat the predictor).
#[inline]
fn sign(x: f64) -> f64 {
    // (`abs() > 0` is false for a zero and for NaN)
    if x.abs() > 0.0 {
        1.0f64.copysign(x)
    } else {
        0.0
    }
}

impl Simulation {
    /// An empty simulation.
    pub fn new(settings: Settings) -> Simulation {
        Simulation {
            settings,
            balls: Balls::default(),
            walls: Vec::new(),
            facet_owner: Vec::new(),
            models: Vec::new(),
            world: hecs::World::new(),
            groups: Vec::new(),
            assignment: FxHashMap::default(),
            contact_pairs: FxHashSet::default(),
            proximity_ids: FxHashMap::default(),
            wall_info: FxHashMap::default(),
            cells: None,
            candidates: Vec::new(),
            segments: Vec::new(),
            segment_plans: Vec::new(),
            sums_suspect: false,
            rebin: Vec::new(),
            motion_blocks: Vec::new(),
            rebin_block: 1,
            wall_touches: Vec::new(),
            lone: Vec::new(),
            next_contact_id: 1,
            k_probe: Vec::new(),
            step: 0,
            time: 0.0,
            dt: 0.0,
            stage_times: StageTimes::default(),
            team: None,
            team_retry: 0,
        }
    }

    /// The id of group `name`, created on first use.
    pub fn group(&mut self, name: &str) -> u16 {
        if let Some(k) = self.groups.iter().position(|g| g == name) {
            return k as u16;
        }
        self.groups.push(name.to_string());
        (self.groups.len() - 1) as u16
    }

    /// Group names by id.
    pub fn group_names(&self) -> &[String] {
        &self.groups
    }

    /// Adds a ball; returns its id (dense index + 1).
    pub fn add_ball(&mut self, b: BallInit) -> Result<u64, SetupError> {
        let id = self.balls.len() as u64 + 1;
        if !(b.radius > 0.0 && b.radius.is_finite()) {
            return Err(SetupError::Ball {
                id,
                message: format!("radius must be positive, got {}", b.radius),
            });
        }
        if !(b.density > 0.0 && b.density.is_finite()) {
            return Err(SetupError::Ball {
                id,
                message: format!("density must be positive, got {}", b.density),
            });
        }
        if !b.pos.is_finite() || !b.velocity.is_finite() || !b.spin.is_finite() {
            return Err(SetupError::Ball {
                id,
                message: "position or velocity is not finite".into(),
            });
        }
        let index = self.balls.push(b);
        let group = self
            .groups
            .get(b.group as usize)
            .cloned()
            .unwrap_or_default();
        self.world
            .spawn((BodyRef::Ball(index as u32), GroupName(group)));
        Ok(id)
    }

    /// Adds a wall in group `group`; returns its id (1-based).
    pub fn add_wall(&mut self, mut wall: Wall, group: u16) -> u64 {
        let index = self.walls.len() as u32;
        wall.id = index as u64 + 1;
        wall.group = group;
        for f in 0..wall.facets.len() {
            self.facet_owner.push((index, f as u32));
        }
        let name = self.groups.get(group as usize).cloned().unwrap_or_default();
        self.world.spawn((BodyRef::Wall(index), GroupName(name)));
        self.walls.push(wall);
        wall_id(index)
    }

    /// Registers a model; returns its index.
    pub fn add_model(&mut self, entry: ModelEntry) -> usize {
        let n_state = entry.descriptor.state.len();
        self.models.push(ModelRuntime {
            name: entry.descriptor.name.to_string(),
            n_props: entry.descriptor.properties.len(),
            entry,
            props: Vec::new(),
            probe_stiffness: Vec::new(),
            store: ContactStore::new(n_state),
        });
        self.models.len() - 1
    }

    /// Index of the model named `name`, if registered.
    pub fn model_index(&self, name: &str) -> Option<usize> {
        self.models.iter().position(|m| m.name == name)
    }

    /// Assigns `model` with property values `props` (descriptor order) to
    /// contacts between groups `g1` and `g2`.
    pub fn assign(
        &mut self,
        g1: u16,
        g2: u16,
        model: usize,
        props: Vec<f64>,
    ) -> Result<(), SetupError> {
        let m = &mut self.models[model];
        if props.len() != m.n_props {
            return Err(SetupError::Model {
                model: m.name.clone(),
                message: format!(
                    "expected {} property values, got {}",
                    m.n_props,
                    props.len()
                ),
            });
        }
        let set = (m.props.len() / m.n_props.max(1)) as u32;
        m.props.extend_from_slice(&props);
        self.assignment
            .insert((g1.min(g2), g1.max(g2)), (model as u16, set));
        Ok(())
    }

    /// Number of contacts.
    pub fn n_contacts(&self) -> usize {
        self.models.iter().map(|m| m.store.len()).sum()
    }

    /// Number of active contacts in the last cycle: counted on the carry
    /// column, one byte per contact, which holds the status of every
    /// contact's last model call (the outputs are ~100 bytes apart).
    pub fn n_active(&self) -> usize {
        self.models
            .iter()
            .map(|m| m.store.carry.iter().filter(|&&c| c == CARRY_FORCE).count())
            .sum()
    }

    fn piece_group(&self, piece: u32) -> u16 {
        if piece & FACET != 0 {
            let (w, _) = self.facet_owner[(piece & !FACET) as usize];
            self.walls[w as usize].group
        } else {
            self.balls.group[piece as usize]
        }
    }

    /// Checks the model, builds the cell space, creates the first contacts
    /// and computes their forces (with zero increments), so that cycle 1
    /// starts from the forces of the initial configuration.
    pub fn prepare(&mut self) -> Result<(), StepError> {
        self.setup()?;
        self.prepare_checked()
    }

    /// Checks that every pair of groups that can touch has a model and asks
    /// every model for its probe stiffness. [`Simulation::prepare`] runs it;
    /// callers may run it first to report setup errors on their own.
    pub fn setup(&mut self) -> Result<(), SetupError> {
        self.check_walls()?;
        self.check_pairings()?;
        self.probe_models()?;
        Ok(())
    }

    /// Wall motions that cannot work: a deformation without one velocity
    /// per vertex, rigid and deformable motion together, a servo without a
    /// unit direction or with a non-positive gain or speed cap.
    fn check_walls(&self) -> Result<(), SetupError> {
        for w in &self.walls {
            let bad = |message: String| SetupError::Wall {
                wall: w.name.clone(),
                message,
            };
            if let Some(d) = &w.deform {
                if d.velocity.len() != w.vertices.len() {
                    return Err(bad(format!(
                        "the deformation gives {} vertex velocities for {} vertices",
                        d.velocity.len(),
                        w.vertices.len()
                    )));
                }
                if w.motion.velocity != Vec3::ZERO
                    || w.motion.spin != Vec3::ZERO
                    || w.servo.is_some()
                {
                    return Err(bad("a wall cannot deform and move rigidly at once".into()));
                }
                if d.velocity.iter().any(|v| !v.is_finite())
                    || d.schedule
                        .iter()
                        .any(|k| !(k.0.is_finite() && k.1.is_finite()))
                    || d.schedule.windows(2).any(|k| k[1].0 <= k[0].0)
                {
                    return Err(bad(
                        "the deformation needs finite velocities and schedule times that increase"
                            .into(),
                    ));
                }
            }
            if let Some(sv) = &w.servo {
                let unit = sv.direction.is_finite() && (sv.direction.length() - 1.0).abs() < 1e-9;
                let positive = |v: f64| v.is_finite() && v > 0.0;
                if !unit || !positive(sv.gain) || !positive(sv.max_speed) || !sv.target.is_finite()
                {
                    return Err(bad(
                        "the servo needs a unit direction, a finite target and a positive gain and speed cap".into(),
                    ));
                }
            }
        }
        Ok(())
    }

    fn check_pairings(&self) -> Result<(), SetupError> {
        let mut ball_groups: Vec<u16> = self.balls.group.clone();
        ball_groups.sort_unstable();
        ball_groups.dedup();
        let mut wall_groups: Vec<u16> = self.walls.iter().map(|w| w.group).collect();
        wall_groups.sort_unstable();
        wall_groups.dedup();
        let name = |g: u16| self.groups.get(g as usize).cloned().unwrap_or_default();
        for (i, &a) in ball_groups.iter().enumerate() {
            for &b in ball_groups[i..].iter().chain(wall_groups.iter()) {
                if !self.assignment.contains_key(&(a.min(b), a.max(b))) {
                    return Err(SetupError::MissingPairing(name(a), name(b)));
                }
            }
        }
        Ok(())
    }

    /// Asks every model for the stiffness of a just-touching contact, for
    /// the timestep bound of balls without contacts.
    fn probe_models(&mut self) -> Result<(), SetupError> {
        for m in &mut self.models {
            let n_sets = m.props.len().checked_div(m.n_props).unwrap_or(1);
            let n_state = m.store.n_state;
            let inputs: Vec<ContactInput> = (0..n_sets)
                .map(|k| ContactInput {
                    gap: -1e-12,
                    mass: 1.0,
                    radius: [1.0, 1.0],
                    prop_set: k as u32,
                    flags: flags::NEW,
                    ..Default::default()
                })
                .collect();
            let mut state = vec![0.0; n_sets * n_state];
            let mut out = vec![ContactOutput::default(); n_sets];
            let mut values = Vec::new();
            let columns = inputs::columns(
                &m.entry.descriptor.inputs,
                n_sets,
                |_| inputs::probe_geometry(-1e-12),
                &mut values,
            );
            let ctx = BatchContext {
                dt: 1.0,
                props: RSlice::from_slice(&m.props),
                n_props: m.n_props as u32,
                n_state: n_state as u32,
                columns: RSlice::from_slice(&columns),
            };
            let r = (m.entry.batch)(
                &ctx,
                RSlice::from_slice(&inputs),
                RSliceMut::from_mut_slice(&mut state),
                RSliceMut::from_mut_slice(&mut out),
            );
            if let Err(e) = r.into_result() {
                return Err(SetupError::Model {
                    model: m.name.clone(),
                    message: e.message.to_string(),
                });
            }
            m.probe_stiffness = out.iter().map(|o| o.stiffness[0]).collect();
        }
        Ok(())
    }

    fn prepare_checked(&mut self) -> Result<(), StepError> {
        // Timestep floor of a ball with no contacts: its stiffest assignment.
        let mut k_group: FxHashMap<u16, f64> = FxHashMap::default();
        for (&(a, b), &(m, set)) in &self.assignment {
            let k = self.models[m as usize]
                .probe_stiffness
                .get(set as usize)
                .copied()
                .unwrap_or(0.0);
            for g in [a, b] {
                let e = k_group.entry(g).or_insert(0.0);
                *e = e.max(k);
            }
        }
        self.k_probe = self
            .balls
            .group
            .iter()
            .map(|g| k_group.get(g).copied().unwrap_or(0.0))
            .collect();

        // Cell space over everything there is now, with a margin.
        let mut domain = Aabb::EMPTY;
        let mut r_min = f64::INFINITY;
        let mut r_max: f64 = 0.0;
        for i in 0..self.balls.len() {
            domain.include(self.balls.pos[i]);
            r_min = r_min.min(self.balls.radius[i]);
            r_max = r_max.max(self.balls.radius[i]);
        }
        for w in &self.walls {
            for v in &w.vertices {
                domain.include(*v);
            }
        }
        if domain.min.x > domain.max.x {
            domain = Aabb {
                min: Vec3::ZERO,
                max: Vec3::ONE,
            };
        }
        if !r_min.is_finite() {
            r_min = 1.0;
            r_max = 1.0;
        }
        let tol = self.settings.cell_tolerance.unwrap_or(0.1 * r_min);
        let cell = 2.0 * (r_max + tol);
        let mut cells = CellSpace::new(domain.enlarged(cell), cell, tol);
        for i in 0..self.balls.len() {
            cells.add_ball(self.balls.pos[i], self.balls.radius[i]);
        }
        for &(w, f) in &self.facet_owner {
            cells.add_facet(self.walls[w as usize].facet_extent(f as usize));
        }
        self.cells = Some(cells);
        self.detect();
        self.dt = match self.settings.timestep {
            Timestep::Fixed(dt) => dt,
            Timestep::Auto { safety } => self.auto_timestep(safety)?,
        };
        let b = &mut self.balls;
        b.force.fill(Vec3::ZERO);
        b.moment.fill(Vec3::ZERO);
        b.stiffness.fill(0.0);
        self.wall_stage()?;
        self.resolve_and_forces(0.0)?;
        self.check_sums()?;
        Ok(())
    }

    fn auto_timestep(&self, safety: f64) -> Result<f64, StepError> {
        // min_i sqrt(m_i / k_i) = 1 / sqrt(max_i k_i / m_i): one root per step.
        let b = &self.balls;
        let blocks = (0..b.len())
            .step_by(8192)
            .map(|lo| lo..(lo + 8192).min(b.len()));
        let rate = team::map(blocks.collect(), |_, block| {
            block
                .map(|i| b.stiffness[i].max(self.k_probe[i]) * b.inv_mass[i])
                .fold(0.0, f64::max)
        })
        .into_iter()
        .fold(0.0, f64::max);
        let dt = 1.0 / rate.sqrt();
        if dt.is_finite() && dt > 0.0 {
            Ok(safety * dt)
        } else {
            Err(StepError::Timestep(
                "no model reports a stiffness, so the automatic timestep is undefined; give dt a number".into(),
            ))
        }
    }

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
        self.step += 1;
        self.time += dt;
        let mut clock = Instant::now();
        self.motion(dt)?;
        for w in &mut self.walls {
            w.advance(dt, start).map_err(|fault| StepError::Wall {
                wall: w.name.clone(),
                facet: fault.facet,
                step: self.step,
                message: fault.message,
            })?;
        }
        self.stage_times.motion += lap(&mut clock);
        self.detect();
        self.regroup_contacts(false);
        self.stage_times.detection += lap(&mut clock);
        self.wall_stage()?;
        self.stage_times.walls += lap(&mut clock);
        self.resolve_and_forces(dt)?;
        self.stage_times.contacts += lap(&mut clock);
        self.check_sums()?;
        self.stage_times.checks += lap(&mut clock);
        // Servo walls choose the velocity of the next step from this
        // step's load.
        for w in &mut self.walls {
            if let Some(servo) = w.servo {
                w.motion.velocity = servo.velocity(w.force);
            }
        }
        Ok(())
    }

    /// Law of motion: leap-frog with local damping, gravity and fixity.
    ///
    /// # Model
    /// `v(t+dt/2) = v(t-dt/2) + (F - a |F| sign(v)) / m dt` per component,
    /// where `F` includes gravity and `a` is the local damping coefficient;
    /// likewise for the spin with the moment and `I = 2/5 m r^2`;
    /// `x(t+dt) = x(t) + v(t+dt/2) dt`. Fixed components keep their velocity.
    fn motion(&mut self, dt: f64) -> Result<(), StepError> {
        let g = self.settings.gravity;
        let b = &mut self.balls;
        let cells = self.cells.as_ref();
        self.rebin.resize(b.pos.len(), true);
        let (pos, vel, spin, (inv_mass, inv_inertia), (damping, fixity)) = (
            &mut b.pos,
            &mut b.vel,
            &mut b.spin,
            (&b.inv_mass[..], &b.inv_inertia[..]),
            (&b.damping[..], &b.fixity[..]),
        );
        // Without a cell space (not yet prepared) every ball is re-binned.
        let refs = cells.map(|c| (c.ball_refs(), c.tolerance * c.tolerance));
        // Blocks of balls in parallel, each a plain loop over slices of one
        // length (no per-ball iterator chain, no index checks); eight
        // blocks per thread or more, so that the threads finish together.
        let block = ball_block(pos.len());
        self.rebin_block = block;
        let columns = pos
            .chunks_mut(block)
            .zip(vel.chunks_mut(block))
            .zip(spin.chunks_mut(block))
            .zip(self.rebin.chunks_mut(block))
            .zip(b.force.chunks_mut(block))
            .zip(b.moment.chunks_mut(block))
            .zip(b.stiffness.chunks_mut(block));
        self.motion_blocks = team::map(
            columns.collect(),
            |c, ((((((x, v), w), rebin), force), moment), stiffness)| {
                let lo = c * block;
                let n = x.len();
                let (v, w, rebin) = (&mut v[..n], &mut w[..n], &mut rebin[..n]);
                let (force, moment, stiffness) =
                    (&mut force[..n], &mut moment[..n], &mut stiffness[..n]);
                let (im, ii) = (&inv_mass[lo..lo + n], &inv_inertia[lo..lo + n]);
                let (damping, fixity) = (&damping[lo..lo + n], &fixity[lo..lo + n]);
                let refs = refs.map(|(r, tol2)| (&r[lo..lo + n], tol2));
                let mut bad = usize::MAX;
                for i in 0..n {
                    let (a, fix) = (damping[i], fixity[i]);
                    // Accelerations: local damping scales with |F + m g| / m.
                    let acc = force[i] * im[i] + g;
                    let alpha = moment[i] * ii[i];
                    // The sums are used up: zeroed here, while in cache, for
                    // this cycle's contact pass.
                    (force[i], moment[i], stiffness[i]) = (Vec3::ZERO, Vec3::ZERO, 0.0);
                    // Updated in registers and stored once: reading back a
                    // vector just stored one component at a time stalls.
                    let (mut vn, mut wn) = (v[i], w[i]);
                    if a == 0.0 && fix.0 == 0 {
                        vn += acc * dt;
                        wn += alpha * dt;
                    } else if fix.0 == 0 {
                        // The loop below without its fixity tests.
                        for k in 0..3 {
                            vn[k] += (acc[k] - a * acc[k].abs() * sign(vn[k])) * dt;
                            wn[k] += (alpha[k] - a * alpha[k].abs() * sign(wn[k])) * dt;
                        }
                    } else {
                        for k in 0..3 {
                            if !fix.fixed(k) {
                                vn[k] += (acc[k] - a * acc[k].abs() * sign(vn[k])) * dt;
                            }
                            if !fix.fixed(k + 3) {
                                wn[k] += (alpha[k] - a * alpha[k].abs() * sign(wn[k])) * dt;
                            }
                        }
                    }
                    let xn = x[i] + vn * dt;
                    (x[i], v[i], w[i]) = (xn, vn, wn);
                    // Whether contact detection must re-bin the ball
                    // (`cellspace::left_reference`).
                    rebin[i] = match refs {
                        Some((r, tol2)) => cellspace::left_reference(r[i], xn, tol2),
                        None => true,
                    };
                    if !(xn.is_finite() && wn.is_finite()) && bad == usize::MAX {
                        bad = lo + i;
                    }
                }
                // Counted apart: in the loop above, the count slowed
                // it down more than this costs.
                let flagged = rebin.iter().map(|&r| u32::from(r)).sum();
                (bad, flagged)
            },
        );
        let first_bad = self
            .motion_blocks
            .iter()
            .map(|b| b.0)
            .min()
            .unwrap_or(usize::MAX);
        if first_bad != usize::MAX {
            return Err(StepError::NonFinite {
                ball: first_bad as u64 + 1,
                what: "position or velocity",
                step: self.step,
            });
        }
        Ok(())
    }

    /// Keeps a team of busy-waiting threads for this cycle's parallel
    /// regions (see [`Team`]); a team that could not start is tried again
    /// after [`TEAM_RETRY`] cycles.
    fn keep_team(&mut self) {
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

    /// Contact detection: re-bin moved pieces, drop contacts whose cell
    /// extents separated, create contacts for new candidate pairs.
    fn detect(&mut self) {
        let Some(cells) = self.cells.as_mut() else {
            return;
        };
        // The law of motion has flagged the balls that left their cell
        // extent, and counted them per block: most steps have none, and
        // most blocks of the others none either.
        let block = self.rebin_block;
        for (c, &(_, flagged)) in self.motion_blocks.iter().enumerate() {
            if flagged == 0 {
                continue;
            }
            let lo = c * block;
            let flags = &self.rebin[lo..(lo + block).min(self.rebin.len())];
            for (i, _) in flags.iter().enumerate().filter(|(_, &r)| r) {
                let i = lo + i;
                cells.update_ball(i, self.balls.pos[i], self.balls.radius[i]);
            }
        }
        for (g, &(w, f)) in self.facet_owner.iter().enumerate() {
            let wall = &self.walls[w as usize];
            if wall.is_moving() {
                cells.update_facet(g, wall.facet_extent(f as usize));
            }
        }
        if !cells.any_moved() {
            return;
        }
        // Only contacts with a re-binned piece can have stopped being near:
        // found in parallel, checked and dropped serially in descending
        // slot order (a swap-remove moves an already checked contact).
        let moved: Vec<Vec<u32>> = {
            let cells = &*cells;
            self.models
                .iter()
                .map(|m| {
                    let st = &m.store;
                    let chunks = st.end1.chunks(BATCH).zip(st.end2.chunks(BATCH));
                    let lists = team::map(chunks.collect(), |c, (e1, e2)| {
                        let mut list = Vec::new();
                        for (k, (&a, &b)) in e1.iter().zip(e2).enumerate() {
                            if cells.moved(a) || cells.moved(b) {
                                list.push((c * BATCH + k) as u32);
                            }
                        }
                        list
                    });
                    lists.concat()
                })
                .collect()
        };
        for (m, moved) in self.models.iter_mut().zip(&moved) {
            let st = &mut m.store;
            for &slot in moved.iter().rev() {
                let slot = slot as usize;
                let (a, b) = (st.end1[slot], st.end2[slot]);
                if cells.near(a, b) {
                    continue;
                }
                self.contact_pairs.remove(&pair_key(a, b));
                st.swap_remove(slot);
            }
        }
        let mut cand = std::mem::take(&mut self.candidates);
        cells.candidates(&mut cand);
        for &(a, b) in &cand {
            let key = pair_key(a, b);
            if self.contact_pairs.contains(&key) {
                continue;
            }
            let ga = self.balls.group[a as usize];
            let gb = self.piece_group(b);
            let Some(&(m, set)) = self.assignment.get(&(ga.min(gb), ga.max(gb))) else {
                // Unassigned pairs are refused before step 0; nothing to do.
                continue;
            };
            let ma = self.balls.mass[a as usize];
            let mc = if b & FACET != 0 {
                ma
            } else {
                let mb = self.balls.mass[b as usize];
                ma * mb / (ma + mb)
            };
            let id = self.next_contact_id;
            self.next_contact_id += 1;
            let st = &mut self.models[m as usize].store;
            st.push(id, a, b, set, mc);
            self.contact_pairs.insert(key);
        }
        self.candidates = cand;
    }

    /// Regroups the contacts within each chunk of [`BATCH`] slots by kind:
    /// busy ball-ball contacts first, then idle ones (released by their
    /// model and apart), then the ball-facet contacts likewise, each group
    /// in its old order. Every [`KIND_SAMPLE`] steps the kinds of each
    /// chunk are counted, and the chunks that have drifted out of order
    /// (see [`ContactStore::note_switches`]) are regrouped; with `always`,
    /// every chunk is, now.
    ///
    /// The contact pass branches on a contact's kind three times, and where
    /// busy and idle contacts alternate at random the processor guesses
    /// wrong about half the time (a dense pack at rest holds ~40 % idle
    /// contacts); grouped, the branches are predictable. Contacts stay in
    /// their chunk, so the spatial order of the store that keeps the
    /// segments of the parallel pass apart is kept too. Only the order of
    /// slots changes, and with it the order of the sums; it depends on the
    /// contacts alone, not on the thread count.
    pub(crate) fn regroup_contacts(&mut self, always: bool) {
        let sample = self.step.is_multiple_of(KIND_SAMPLE);
        if !(always || sample) {
            return;
        }
        let threads = rayon::current_num_threads();
        for (m, plan) in self.models.iter_mut().zip(chain_none(&self.segment_plans)) {
            let st = &mut m.store;
            if sample {
                let store = &*st;
                let counts: Vec<u32> = (0..store.len().div_ceil(BATCH))
                    .into_par_iter()
                    .map(|c| {
                        let slots = c * BATCH..((c + 1) * BATCH).min(store.len());
                        let kinds = slots.map(|k| contact_kind(store, k));
                        let changes = kinds.clone().zip(kinds.skip(1)).filter(|(a, b)| a != b);
                        changes.count() as u32 * KIND_SAMPLE as u32
                    })
                    .collect();
                st.note_switches(&counts);
            }
            let due = st.regroup_due(always);
            st.regroup_chunks(&due, plan.and_then(|p| p.owners(threads)), contact_kind);
        }
    }

    /// Contact resolution, force-displacement and force sums, after the
    /// wall stage ([`Simulation::wall_stage`]: the wall logic needs the gaps
    /// of all ball-facet contacts before any of them reaches its model).
    ///
    /// One pass per chunk of [`BATCH`] contacts resolves the geometry, calls the model once for the chunk, converts
    /// the result to global force and moments and adds them to the sums of
    /// the ends while the chunk's data is still in cache.
    ///
    /// # Determinism
    /// Every ball sums its contributions in (model, slot) order. With more
    /// than one thread, each model's chunks are cut into consecutive
    /// segments, one per thread ([`SegmentPlan`]). A segment adds directly
    /// to the balls no other segment reaches; its contributions to the
    /// others wait in lists by the thread part of their ball, and once all
    /// segments are done each part adds its lists segment by segment. Walls
    /// sum chunk by chunk ([`WallPartials`]). Every ball thus adds in the
    /// order of the serial pass, and the sums have the same bits for any
    /// thread count.
    fn resolve_and_forces(&mut self, dt: f64) -> Result<(), StepError> {
        let threads = rayon::current_num_threads();
        let skip_below = self.skip_below();
        let b = &mut self.balls;
        let kin = Kinematics {
            pos: &b.pos,
            vel: &b.vel,
            spin: &b.spin,
            radius: &b.radius,
        };
        // The sums were zeroed by the law of motion as it used them.
        let columns = Columns::new(&mut b.force, &mut b.moment, &mut b.stiffness);
        let n_walls = self.walls.len();
        let mut wall_sums = vec![(Vec3::ZERO, Vec3::ZERO); n_walls];
        let walls = &self.walls;
        let owner = &self.facet_owner;
        let step = self.step;
        let n_balls = b.pos.len();
        self.segment_plans
            .resize_with(self.models.len(), SegmentPlan::default);
        self.sums_suspect = false;
        for (mi, m) in self.models.iter_mut().enumerate() {
            // Models active only under overlap need no frame or increments
            // while the gap is open: their state is reset then anyway, and
            // a contact that closes starts a fresh frame.
            let overlap_only = m.entry.descriptor.activity == talus_sdk::Activity::Overlap;
            let st = &mut m.store;
            let n_state = st.n_state;
            let ctx = BatchContext {
                dt: self.dt,
                props: RSlice::from_slice(&m.props),
                n_props: m.n_props as u32,
                n_state: n_state as u32,
                columns: RSlice::from_slice(&[]),
            };
            let pass = ChunkPass {
                kin,
                walls,
                owner,
                dt,
                overlap_only,
                ctx: &ctx,
                batch: m.entry.batch,
                inputs: &m.entry.descriptor.inputs,
                n_state,
                skip_below,
            };
            // One segment per thread, two with more threads than CPUs
            // (see `segments_per_thread`).
            let n_chunks = st.len().div_ceil(BATCH);
            let n_seg = if threads == 1 {
                1
            } else {
                (segments_per_thread(threads) * threads)
                    .min(n_chunks)
                    .min(MAX_SEGMENTS)
            }
            .max(1);
            if self.segments.len() < n_seg {
                self.segments.resize_with(n_seg, Segment::default);
            }
            // Segment k holds chunks bounds[k]..bounds[k + 1].
            let plan = &mut self.segment_plans[mi];
            if n_seg > 1 {
                if plan.n_seg != n_seg || plan.only.len() != n_balls || plan.stale(st, step) {
                    plan.plan(st, n_seg, n_balls, step);
                } else if st.changed {
                    plan.update(st);
                }
            }
            st.changed = false;
            st.arrived.clear();
            let bounds: Vec<usize> = if n_seg > 1 {
                plan.bounds.clone()
            } else {
                vec![0, n_chunks]
            };
            let only = &plan.only[..];
            // Held-back contributions go to the thread part of their ball
            // (the law of motion's parts), which adds them up after the
            // pass.
            let parts = ball_parts(n_balls, threads);
            let parts = &parts[..];
            self.lone.resize_with(mi + 1, Vec::new);
            // Sized by the wall logic; every chunk needs its words.
            let lone = &mut self.lone[mi];
            lone.resize(n_chunks * LONE_WORDS, 0);
            let lone = &*lone;
            let (chunks, _, _) = st.chunks(lone);
            let mut groups: Vec<Vec<Chunk<'_>>> = Vec::with_capacity(n_seg);
            let mut rest = chunks.into_iter();
            for k in 0..n_seg {
                groups.push(rest.by_ref().take(bounds[k + 1] - bounds[k]).collect());
            }
            let jobs: Vec<_> = groups
                .into_iter()
                .zip(self.segments.iter_mut())
                .enumerate()
                .map(|(k, (group, seg))| (k, group, seg))
                .collect();
            let run_segment = |(k, group, seg): SegmentJob<'_, '_>| {
                let Segment {
                    scratch,
                    deferred,
                    walls,
                    check,
                } = seg;
                deferred.resize_with(parts.len() - 1, Vec::new);
                for d in deferred.iter_mut() {
                    d.clear();
                }
                walls.start(n_walls);
                let start = bounds[k] * BATCH;
                let mut sums = Sums {
                    columns,
                    walls,
                    only: (n_seg > 1).then_some((only, k as u8)),
                    parts,
                    deferred,
                    check: Vec3::ZERO,
                };
                for (c, chunk) in group.into_iter().enumerate() {
                    let r = pass.run(chunk, scratch, &mut sums);
                    sums.walls.end_chunk();
                    if let Err((i, message)) = r {
                        return Some((start + c * BATCH + i, message));
                    }
                }
                *check = sums.check;
                None
            };
            let failure = if n_seg == 1 {
                jobs.into_iter().map(run_segment).next().flatten()
            } else {
                let failures = team::map(jobs, |_, job| run_segment(job));
                failures.into_iter().flatten().next()
            };
            if let Some((k, message)) = failure {
                return Err(StepError::Model {
                    model: m.name.clone(),
                    contact: st.id[k.min(st.len() - 1)],
                    step,
                    message,
                });
            }
            let segments = &self.segments[..n_seg];
            self.sums_suspect |= !segments.iter().all(|seg| seg.check.is_finite());
            // The held-back contributions, each thread part those of its
            // balls, segment by segment: in slot order for every ball.
            if n_seg > 1 {
                let held = |p: usize| {
                    for seg in segments {
                        for d in &seg.deferred[p] {
                            // SAFETY: the segments have finished, and part
                            // `p` alone holds ball `d.target`.
                            unsafe {
                                columns.add(
                                    d.target as usize,
                                    d.end,
                                    d.force,
                                    d.torque,
                                    d.stiffness,
                                )
                            };
                        }
                    }
                };
                if segments
                    .iter()
                    .map(|s| s.deferred.iter().map(Vec::len).sum::<usize>())
                    .sum::<usize>()
                    < PARALLEL_HELD
                {
                    (0..parts.len() - 1).for_each(held);
                } else {
                    team::map((0..parts.len() - 1).collect(), |_, p| held(p));
                }
            }
            // Every wall's sums chunk by chunk, the same on any thread count.
            for seg in segments {
                for &(w, force, moment) in &seg.walls.partial {
                    let s = &mut wall_sums[w as usize];
                    s.0 += force;
                    s.1 += moment;
                }
            }
        }
        for (w, (force, moment)) in self.walls.iter_mut().zip(wall_sums) {
            w.force = force;
            w.moment = moment;
        }
        Ok(())
    }

    /// The least [`ContactStore::carry`] a contact needs to enter the sums:
    /// with a fixed timestep nobody reads the stiffness sums.
    fn skip_below(&self) -> u8 {
        if matches!(self.settings.timestep, Timestep::Auto { .. }) {
            CARRY_STIFFNESS
        } else {
            CARRY_FORCE
        }
    }

    /// Gap and region of every ball-facet contact, for the wall logic;
    /// returns per model the slots of the overlapping contacts on an
    /// interacting side, in slot order, each with whether it carried force
    /// last step (that mark is cleared here for every facet contact).
    fn wall_gaps(&mut self) -> Vec<Vec<(u32, bool)>> {
        let balls = &self.balls;
        let walls = &self.walls;
        let owner = &self.facet_owner;
        let mut overlapping = Vec::with_capacity(self.models.len());
        let threads = rayon::current_num_threads();
        for (m, plan) in self.models.iter_mut().zip(chain_none(&self.segment_plans)) {
            let st = &mut m.store;
            if st.n_facet == 0 {
                overlapping.push(Vec::new());
                continue;
            }
            // A plain loop per chunk: most contacts are ball-ball and cost
            // only the read of their end2.
            let chunks = (st.plane.chunks_mut(BATCH).zip(st.setup.chunks_mut(BATCH)))
                .zip(st.end1.chunks(BATCH).zip(st.end2.chunks(BATCH)));
            // Each thread the chunks of its segment of the contact pass.
            let chunks: Vec<_> = chunks.collect();
            let all: Vec<usize> = (0..chunks.len()).collect();
            let cuts = plan
                .and_then(|p| p.owners(threads))
                .map(|o| contact::item_cuts(o, &all));
            let lists: Vec<Vec<(u32, bool)>> = team::map_cut(
                chunks,
                cuts.as_deref(),
                |ci, ((planes, setups), (end1, end2))| {
                    let mut list = Vec::new();
                    for (k, &b) in end2.iter().enumerate() {
                        if b & FACET == 0 {
                            continue;
                        }
                        let (plane, setup, a) = (&mut planes[k], &mut setups[k], end1[k]);
                        let carried = setup.flags & CARRIED != 0;
                        setup.flags &= !CARRIED;
                        let (wi, f) = owner[(b & !FACET) as usize];
                        let wall = &walls[wi as usize];
                        let x = balls.pos[a as usize];
                        if setup.flags & RELEASED != 0 {
                            // Open and released by its model: only whether it
                            // closes matters. A ball that cannot touch the
                            // facet stays open; its exact plane is refreshed
                            // only for output.
                            let apart = wall.cannot_touch(f as usize, x, balls.radius[a as usize]);
                            if apart {
                                plane.gap = f64::INFINITY;
                                continue;
                            }
                        }
                        let was_overlapping = plane.gap < 0.0;
                        let (xf, region) = wall.closest_point(f as usize, x);
                        plane.gap = (xf - x).length() - balls.radius[a as usize];
                        // The side is chosen when the ball starts to overlap the
                        // facet and kept while it overlaps, so a ball entering
                        // through an inactive side passes without force.
                        if !(was_overlapping && plane.gap < 0.0) {
                            if wall.side_active(f as usize, x) {
                                setup.flags &= !SIDE_OFF;
                            } else {
                                setup.flags |= SIDE_OFF;
                            }
                        }
                        if setup.flags & SIDE_OFF != 0 {
                            setup.flags |= flags::SUPPRESSED;
                        } else {
                            setup.flags &= !flags::SUPPRESSED;
                        }
                        plane.region = region.code();
                        // Kept for contact resolution this step, which turns
                        // it into the contact location.
                        plane.xc = xf;
                        if plane.gap < 0.0 && setup.flags & SIDE_OFF == 0 {
                            list.push(((ci * BATCH + k) as u32, carried));
                        }
                    }
                    list
                },
            );
            let list = lists.concat();
            overlapping.push(list);
        }
        overlapping
    }

    /// Wall logic over every ball's overlapping contacts with each wall
    /// ([`wall_logic::decide`]): marks the contacts that do not carry force
    /// `SUPPRESSED`, gives proximity-contact leaders their merged plane and,
    /// in full mode, moves state between contacts by each model's
    /// propagation rule.
    fn wall_logic(&mut self, overlapping: &[Vec<(u32, bool)>]) -> Result<usize, StepError> {
        #[derive(Clone, Copy)]
        struct Entry {
            ball: u32,
            wall: u32,
            slot: u32,
            id: u64,
            row: wall_logic::Row,
        }
        // Most balls overlap a single facet of any wall (a ball resting on
        // a flat floor): such a lone contact carries its own load and the
        // logic has nothing to decide (full mode included: there is
        // nothing to merge or move), so it is marked at once; only balls
        // with several overlapping facet contacts are sorted into pairs.
        let touches = &mut self.wall_touches;
        touches.resize(self.balls.len(), 0);
        for (m, list) in self.models.iter().zip(overlapping) {
            for &(k, _) in list {
                let t = &mut touches[m.store.end1[k as usize] as usize];
                *t = t.saturating_add(1);
            }
        }
        let mut pairs = 0;
        let mut entries: Vec<Entry> = Vec::new();
        self.lone.resize_with(self.models.len(), Vec::new);
        for (mi, (m, list)) in self.models.iter_mut().zip(overlapping).enumerate() {
            let st = &mut m.store;
            let lone = &mut self.lone[mi];
            lone.clear();
            lone.resize(st.len().div_ceil(BATCH) * LONE_WORDS, 0);
            for &(k, carried) in list {
                let k = k as usize;
                if touches[st.end1[k] as usize] == 1 {
                    lone[k / 64] |= 1 << (k % 64);
                    pairs += 1;
                    continue;
                }
                let b = st.end2[k];
                let (w, f) = self.facet_owner[(b & !FACET) as usize];
                let id = st.id[k];
                entries.push(Entry {
                    ball: st.end1[k],
                    wall: w,
                    slot: k as u32,
                    id,
                    row: wall_logic::Row {
                        facet: f,
                        gap: st.plane[k].gap,
                        region: st.plane[k].region,
                        wp: st.plane[k].xc,
                        carried,
                        prev_proximity: if self.proximity_ids.is_empty() {
                            0
                        } else {
                            self.proximity_ids.get(&id).copied().unwrap_or(0)
                        },
                        model: mi as u16,
                    },
                });
            }
        }
        for (m, list) in self.models.iter().zip(overlapping) {
            for &(k, _) in list {
                touches[m.store.end1[k as usize] as usize] = 0;
            }
        }
        self.wall_info.clear();
        let mut proximity_ids = FxHashMap::default();
        if entries.is_empty() {
            self.proximity_ids = proximity_ids;
            return Ok(pairs);
        }
        // Ordered by (ball, wall), then gap and facet within a pair: the
        // pairs by a sort of small keys (moving the entries costs more than
        // comparing them), the few pairs with several contacts after.
        let mut order: Vec<(u64, u32)> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| ((e.ball as u64) << 32 | e.wall as u64, i as u32))
            .collect();
        order.sort_unstable();
        let mut entries: Vec<Entry> = order.iter().map(|&(_, i)| entries[i as usize]).collect();
        let mut start = 0;
        while start < order.len() {
            let mut end = start + 1;
            while end < order.len() && order[end].0 == order[start].0 {
                end += 1;
            }
            if end - start > 1 {
                entries[start..end].sort_unstable_by(|x, y| {
                    x.row
                        .gap
                        .total_cmp(&y.row.gap)
                        .then(x.row.facet.cmp(&y.row.facet))
                });
            }
            start = end;
        }
        let mut rows: Vec<wall_logic::Row> = Vec::new();
        let mut taken_ids: Vec<u64> = Vec::new();
        let mut state_copy: Vec<f64> = Vec::new();
        let mut scratch = wall_logic::Scratch::default();
        let mut decision = wall_logic::Decision::default();
        let mut start = 0;
        while start < entries.len() {
            let key = (entries[start].ball, entries[start].wall);
            let mut end = start + 1;
            while end < entries.len() && (entries[end].ball, entries[end].wall) == key {
                end += 1;
            }
            let group = &entries[start..end];
            let wall = &self.walls[key.1 as usize];
            pairs += 1;
            // A lone contact of a ball that touches several walls.
            if group.len() == 1 {
                let e = &group[0];
                let st = &mut self.models[e.row.model as usize].store;
                st.setup[e.slot as usize].flags |= CARRIED;
                start = end;
                continue;
            }
            rows.clear();
            rows.extend(group.iter().map(|e| e.row));
            let x = self.balls.pos[key.0 as usize];
            let r = self.balls.radius[key.0 as usize];
            wall_logic::decide_into(wall, x, &rows, &mut scratch, &mut decision);
            // Proximity ids: inherited when unique among this step's, else new.
            let mut pc_ids = Vec::with_capacity(decision.proximity.len());
            for pc in &decision.proximity {
                let id = if pc.inherited_id != 0 && !taken_ids.contains(&pc.inherited_id) {
                    pc.inherited_id
                } else {
                    let id = self.next_contact_id;
                    self.next_contact_id += 1;
                    id
                };
                taken_ids.push(id);
                pc_ids.push(id);
            }
            // State transfers read the source before anything else changes.
            for (ti, t) in decision.transfers.iter().enumerate() {
                let (src, dst) = (&group[t.from], &group[t.to]);
                let m = &mut self.models[src.row.model as usize];
                let (from, to) = (src.slot as usize, dst.slot as usize);
                let n_state = m.store.n_state;
                let first_into_fresh =
                    t.fresh && !decision.transfers[..ti].iter().any(|u| u.to == t.to);
                state_copy.clear();
                state_copy.extend_from_slice(m.store.state_of(from));
                let stride = m.store.stride;
                let set = m.store.setup[to].prop_set as usize;
                let props = &m.props[set * m.n_props..(set + 1) * m.n_props];
                let target = &mut m.store.state[to * stride..to * stride + n_state];
                let event = if t.fresh {
                    StateEvent::TakeOver
                } else {
                    StateEvent::Merge
                };
                let custom = |from: &[f64], to: &mut [f64]| {
                    (m.entry.custom_state)(
                        event.code(),
                        RSlice::from_slice(props),
                        RSlice::from_slice(from),
                        RSliceMut::from_mut_slice(to),
                    )
                    .into_result()
                    .map_err(|e| e.to_string())
                };
                let slots = &m.entry.descriptor.state;
                let moved = wall_logic::transfer_state(
                    slots,
                    &state_copy,
                    target,
                    t,
                    first_into_fresh,
                    custom,
                )
                .map_err(|message| StepError::Model {
                    model: m.name.clone(),
                    contact: dst.id,
                    step: self.step,
                    message: format!("propagation failed: {message}"),
                })?;
                if !moved {
                    continue;
                }
                if first_into_fresh {
                    // The frame travels with the state, so state held in
                    // contact-plane axes keeps its direction in space.
                    let p = m.store.plane[from];
                    let q = &mut m.store.plane[to];
                    q.n = p.n;
                    q.s = p.s;
                    q.t = p.t;
                    q.initialised = p.initialised;
                    m.store.setup[to].flags &= !flags::NEW;
                }
            }
            for (i, e) in group.iter().enumerate() {
                let st = &mut self.models[e.row.model as usize].store;
                let k = e.slot as usize;
                if decision.carries[i] {
                    st.setup[k].flags |= CARRIED;
                } else {
                    st.setup[k].flags |= flags::SUPPRESSED;
                }
                let linked = decision.linked_to[i].map_or(0, |j| group[j].id);
                let pc = decision.proximity_of[i].map_or(0, |p| pc_ids[p]);
                if pc != 0 {
                    proximity_ids.insert(e.id, pc);
                }
                if linked != 0 || pc != 0 {
                    self.wall_info.insert((e.row.model, e.slot), (linked, pc));
                }
            }
            for pc in &decision.proximity {
                // The leader's wall point moves to where the merged normal
                // and mean gap put it; contact resolution then builds the
                // merged plane from it like any ball-facet plane.
                let e = &group[pc.leader];
                let st = &mut self.models[e.row.model as usize].store;
                st.plane[e.slot as usize].xc = x + pc.normal * (r + pc.gap);
            }
            start = end;
        }
        self.proximity_ids = proximity_ids;
        Ok(pairs)
    }

    /// The wall part of a cycle on the current positions: gaps of every
    /// ball-facet contact, then the wall logic. Returns the number of
    /// (ball, wall) pairs with overlapping contacts. A cycle runs it before
    /// the contact pass; public for benchmarks.
    pub fn wall_stage(&mut self) -> Result<usize, StepError> {
        if self.cells.is_none() {
            self.prepare()?;
        }
        let overlapping = self.wall_gaps();
        self.wall_logic(&overlapping)
    }

    /// For a ball-facet contact in `slot` of model `m`: the id of the
    /// contact that carries its load in its place (0 if none) and the id
    /// of the proximity contact it belongs to (0 if none), as decided by
    /// the wall logic of the last step.
    pub fn wall_links(&self, m: usize, slot: usize) -> (u64, u64) {
        self.wall_info
            .get(&(m as u16, slot as u32))
            .copied()
            .unwrap_or((0, 0))
    }

    /// Checks the force sums of the step. The contact pass adds up every
    /// component of every force and torque it applies, per segment; a
    /// non-finite one makes that total non-finite (an overflow of the
    /// total alone would too), and only then are the contacts searched for
    /// the one that made it. The total costs a few additions per contact
    /// in registers, where a check of the sums themselves read every
    /// ball's force and moment once more (3-4 % of a settle step at 50 000
    /// balls, with a parallel region of its own).
    fn check_sums(&self) -> Result<(), StepError> {
        let b = &self.balls;
        if !self.sums_suspect {
            return Ok(());
        }
        let skip_below = self.skip_below();
        let kin = Kinematics {
            pos: &b.pos,
            vel: &b.vel,
            spin: &b.spin,
            radius: &b.radius,
        };
        for m in &self.models {
            let st = &m.store;
            for k in 0..st.len() {
                let ap = &apply(
                    &kin,
                    &self.walls,
                    &self.facet_owner,
                    &st.plane[k],
                    &st.output[k],
                    st.end1[k],
                    st.end2[k],
                );
                if st.carry[k] >= skip_below
                    && !(ap.force.is_finite() && ap.torque1.is_finite() && ap.torque2.is_finite())
                {
                    return Err(StepError::NonFiniteForce {
                        contact: st.id[k],
                        model: m.name.clone(),
                        step: self.step,
                    });
                }
            }
        }
        Ok(())
    }

    /// Brings the contact plane (location, normal, gap) of open contacts
    /// that the cycle skipped up to date, for output. Frames of open
    /// contacts of overlap-only models are not maintained (see
    /// `docs/physics.md`).
    pub fn refresh_open_contacts(&mut self) {
        let balls = &self.balls;
        let walls = &self.walls;
        let owner = &self.facet_owner;
        for m in &mut self.models {
            let st = &mut m.store;
            st.plane
                .par_iter_mut()
                .zip(st.setup.par_iter())
                .zip(st.end1.par_iter().zip(st.end2.par_iter()))
                .with_min_len(BATCH)
                .for_each(|((plane, setup), (&a, &b))| {
                    if setup.flags & RELEASED == 0 {
                        return;
                    }
                    let a = a as usize;
                    let (x, r) = (balls.pos[a], balls.radius[a]);
                    let (n, gap, xc) = if b & FACET != 0 {
                        let (wi, f) = owner[(b & !FACET) as usize];
                        let wall = &walls[wi as usize];
                        let (xf, region) = wall.closest_point(f as usize, x);
                        plane.region = region.code();
                        contact::plane_ball_facet(x, r, xf, wall.normals[f as usize])
                    } else {
                        let b = b as usize;
                        contact::plane_ball_ball(x, r, balls.pos[b], balls.radius[b], plane.n)
                    };
                    plane.n = n;
                    plane.gap = gap;
                    plane.xc = xc;
                });
        }
    }

    /// Global force on end2 of the contact in `slot` of model `m` (N).
    pub fn contact_force(&self, m: usize, slot: usize) -> Vec3 {
        let st = &self.models[m].store;
        let (p, o) = (&st.plane[slot], &st.output[slot]);
        p.n * o.force[0] + p.s * o.force[1] + p.t * o.force[2]
    }

    /// Global moment on end2 of the contact in `slot` of model `m` (N m).
    pub fn contact_moment(&self, m: usize, slot: usize) -> Vec3 {
        let st = &self.models[m].store;
        let (p, o) = (&st.plane[slot], &st.output[slot]);
        p.n * o.moment[0] + p.s * o.moment[1] + p.t * o.moment[2]
    }
}

/// The ball columns contact resolution reads.
#[derive(Clone, Copy)]
struct Kinematics<'a> {
    pos: &'a [Vec3],
    vel: &'a [Vec3],
    spin: &'a [Vec3],
    radius: &'a [f64],
}

/// The force, moment and stiffness sums of the balls, which the segments
/// of a contact pass add to at the same time, each to balls that no other
/// segment adds to directly.
#[derive(Clone, Copy)]
struct Columns<'a> {
    force: *mut Vec3,
    moment: *mut Vec3,
    stiffness: *mut f64,
    /// The length of all three columns.
    len: usize,
    _borrow: PhantomData<&'a mut [f64]>,
}

// SAFETY: the columns are only reached through `Columns::add`, whose
// callers guarantee that no two threads reach the same ball at the same
// time.
unsafe impl Send for Columns<'_> {}
unsafe impl Sync for Columns<'_> {}

impl<'a> Columns<'a> {
    /// # Panics
    /// If the columns differ in length.
    fn new(force: &'a mut [Vec3], moment: &'a mut [Vec3], stiffness: &'a mut [f64]) -> Self {
        let len = force.len();
        assert!(moment.len() == len && stiffness.len() == len);
        Columns {
            force: force.as_mut_ptr(),
            moment: moment.as_mut_ptr(),
            stiffness: stiffness.as_mut_ptr(),
            len,
            _borrow: PhantomData,
        }
    }

    /// Adds a contribution to ball `i`.
    ///
    /// # Safety
    /// No other thread may add to ball `i` during the call.
    #[inline]
    unsafe fn add(&self, i: usize, end: End, force: Vec3, torque: Vec3, stiffness: f64) {
        assert!(i < self.len, "ball index {i} out of range");
        // SAFETY: `i` is in bounds of all three columns (checked above and
        // in `new`); exclusivity is the caller's guarantee.
        let sums = unsafe {
            (
                &mut *self.force.add(i),
                &mut *self.moment.add(i),
                &mut *self.stiffness.add(i),
            )
        };
        add_end(sums, end, force, torque, stiffness);
    }
}

/// Which end of a contact a contribution goes to.
#[derive(Clone, Copy, Debug, PartialEq)]
enum End {
    /// end1, a ball: it gets minus the contact force.
    One,
    /// end2, a ball: it gets the contact force.
    Two,
}

/// The one place a contribution is added to a ball's sums, so that direct
/// and held-back additions make the same operations.
#[inline]
fn add_end(
    (f, mo, k): (&mut Vec3, &mut Vec3, &mut f64),
    end: End,
    force: Vec3,
    torque: Vec3,
    stiffness: f64,
) {
    if end == End::One {
        *f -= force;
    } else {
        *f += force;
    }
    *mo += torque;
    *k += stiffness;
}

/// A contribution to a ball that more than one segment reaches, held back
/// until the segments are done.
#[derive(Clone, Copy, Debug)]
struct Deferred {
    target: u32,
    end: End,
    force: Vec3,
    torque: Vec3,
    stiffness: f64,
}

/// Buffers of one segment of the contact pass.
#[derive(Default)]
struct Segment {
    scratch: Scratch,
    /// Held-back contributions by the thread part of their ball (see
    /// [`ball_parts`]), in slot order.
    deferred: Vec<Vec<Deferred>>,
    walls: WallPartials,
    /// [`Sums::check`] of the segment's last pass.
    check: Vec3,
}

/// One segment's work: its index, its chunks and its buffers.
type SegmentJob<'c, 's> = (usize, Vec<Chunk<'c>>, &'s mut Segment);

/// What the contacts of each chunk apply to the walls, summed in slot
/// order within the chunk; the walls' totals add these up chunk by chunk,
/// so that they do not depend on how the pass is cut into segments.
#[derive(Default)]
struct WallPartials {
    /// The current chunk's sums per wall, and whether the wall is listed
    /// in `touched`.
    acc: Vec<(Vec3, Vec3, bool)>,
    /// The walls the current chunk reached, in the order it reached them.
    touched: Vec<u32>,
    /// (wall, force, moment) per chunk and wall reached, chunk by chunk.
    partial: Vec<(u32, Vec3, Vec3)>,
}

impl WallPartials {
    fn start(&mut self, n_walls: usize) {
        self.acc.clear();
        self.acc.resize(n_walls, (Vec3::ZERO, Vec3::ZERO, false));
        self.touched.clear();
        self.partial.clear();
    }

    #[inline]
    fn add(&mut self, w: u32, force: Vec3, torque: Vec3) {
        let a = &mut self.acc[w as usize];
        if !a.2 {
            a.2 = true;
            self.touched.push(w);
        }
        a.0 += force;
        a.1 += torque;
    }

    /// Closes the current chunk.
    fn end_chunk(&mut self) {
        for &w in &self.touched {
            let a = &mut self.acc[w as usize];
            self.partial.push((w, a.0, a.1));
            *a = (Vec3::ZERO, Vec3::ZERO, false);
        }
        self.touched.clear();
    }
}

/// Steps between two counts of the contact kinds in each chunk (see
/// [`Simulation::regroup_contacts`]).
const KIND_SAMPLE: u64 = 16;

/// The kind of the contact in `slot` for the order of a store's slots:
/// ball-ball (0, 1) or ball-facet (2, 3), busy (0, 2) or released (1, 3).
fn contact_kind(st: &ContactStore, slot: usize) -> usize {
    usize::from(st.end2[slot] & FACET != 0) * 2 + usize::from(st.setup[slot].flags & RELEASED != 0)
}

/// Segments of the parallel contact pass per thread, cut to equal work
/// (see `SegmentPlan::plan`). More segments would let a thread whose core
/// runs slow be relieved in smaller pieces, but every ball that two
/// segments reach has its contributions held back (dense 10k, two
/// threads, four segments per thread: 2.65 s; two: 2.55-2.62 s; one:
/// 2.48-2.55 s), and with the team a segment is taken by the thread that
/// had it the step before, so its contacts stay in that core's cache.
const SEGMENTS_PER_THREAD: usize = 1;

/// Segments per thread when there are more threads than CPUs: a thread
/// that the system preempts inside its only segment holds up the whole
/// region until it runs again, while with two segments each the other
/// threads take its second one (dense 10k, 1000 steps, three threads on
/// two CPUs: 0.75-0.77 s with one segment per thread, 0.62-0.63 s with
/// two; two threads 0.59 s either way).
const SEGMENTS_PER_THREAD_OVERSUBSCRIBED: usize = 2;

/// Segments of the contact pass per thread for `threads` threads.
fn segments_per_thread(threads: usize) -> usize {
    if threads > available_cpus() {
        SEGMENTS_PER_THREAD_OVERSUBSCRIBED
    } else {
        SEGMENTS_PER_THREAD
    }
}

/// The CPUs this process may run on (its affinity mask and CPU quota;
/// 1 if the system does not say).
pub fn available_cpus() -> usize {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Segments at most: their indices and two marks must fit a byte (see
/// [`SegmentPlan::only`]).
const MAX_SEGMENTS: usize = SHARED as usize;

/// [`SegmentPlan::only`] of a ball that several segments reach.
const SHARED: u8 = u8::MAX - 1;

/// [`SegmentPlan::only`] of a ball that no segment reaches.
const UNTOUCHED: u8 = u8::MAX;

/// Held-back contributions below which one thread adds them all.
const PARALLEL_HELD: usize = 512;

/// The segments of one model's contact pass and, for each ball, the one
/// segment that has contacts with it; re-planned only when contacts come
/// or go or the number of segments changes.
#[derive(Default)]
struct SegmentPlan {
    /// Per ball: the only segment that reaches it, which adds to its sums
    /// directly, or [`SHARED`] (every segment holds back what it adds to
    /// the ball) or [`UNTOUCHED`].
    only: Vec<u8>,
    n_seg: usize,
    /// Segment k holds chunks `bounds[k]..bounds[k + 1]`.
    bounds: Vec<usize>,
    /// Per segment, a bit per ball: whether the segment has a contact
    /// with it (scratch of `plan`).
    touched: Vec<Vec<u64>>,
    /// The step of the last plan, and the contacts that arrived in a slot
    /// since (see [`SegmentPlan::stale`]).
    planned_at: u64,
    arrivals: usize,
}

/// Steps between two cuts of the contact pass into segments (see
/// [`SegmentPlan::stale`]).
const REPLAN_STEPS: u64 = 64;

/// What a busy contact costs the contact pass against an idle one, for
/// cutting the pass into segments of equal work (about 900 instructions
/// against 50).
const BUSY_WEIGHT: usize = 16;

impl SegmentPlan {
    /// Cuts `store` into `n_seg` segments of whole chunks and about equal
    /// work (busy contacts weigh [`BUSY_WEIGHT`] idle ones), and finds for
    /// each ball whether one segment reaches it or more. The cut decides
    /// only which contributions wait, never the order of any sum.
    fn plan(&mut self, store: &ContactStore, n_seg: usize, n_balls: usize, step: u64) {
        self.planned_at = step;
        self.arrivals = 0;
        let weights = team::map(store.setup.chunks(BATCH).collect(), |_, c| {
            let idle = c.iter().filter(|s| s.flags & RELEASED != 0).count();
            c.len() + (c.len() - idle) * (BUSY_WEIGHT - 1)
        });
        let n_chunks = weights.len();
        // before[c]: the work of the chunks before chunk c.
        let before: Vec<usize> = std::iter::once(0)
            .chain(weights.iter().scan(0, |sum, w| {
                *sum += w;
                Some(*sum)
            }))
            .collect();
        let total = before[n_chunks];
        self.bounds.clear();
        self.bounds.push(0);
        for k in 1..n_seg {
            // The first chunk boundary with k / n_seg of the work before
            // it, keeping at least one chunk in every segment.
            let at = before.partition_point(|&w| w * n_seg < k * total);
            let lo = self.bounds[k - 1] + 1;
            self.bounds.push(at.clamp(lo, n_chunks - (n_seg - k)));
        }
        self.bounds.push(n_chunks);
        self.n_seg = n_seg;
        // The balls each segment touches, the segments in parallel; then
        // each ball's segment, the balls in parallel.
        let bounds = &self.bounds;
        self.touched.resize_with(n_seg, Vec::new);
        let touched = &mut self.touched[..n_seg];
        team::map(touched.iter_mut().collect(), |k, bits| {
            bits.clear();
            bits.resize(n_balls.div_ceil(64), 0);
            let slots = bounds[k] * BATCH..(bounds[k + 1] * BATCH).min(store.len());
            for (&a, &b) in store.end1[slots.clone()].iter().zip(&store.end2[slots]) {
                bits[a as usize / 64] |= 1 << (a % 64);
                if b & FACET == 0 {
                    bits[b as usize / 64] |= 1 << (b % 64);
                }
            }
        });
        let touched = &self.touched[..n_seg];
        self.only.resize(n_balls, UNTOUCHED);
        let block = ball_block(n_balls);
        team::map(self.only.chunks_mut(block).collect(), |c, only| {
            for (j, f) in only.iter_mut().enumerate() {
                let i = c * block + j;
                let by = |bits: &Vec<u64>| bits[i / 64] & (1 << (i % 64)) != 0;
                let mut reach = touched.iter().enumerate().filter(|(_, b)| by(b));
                *f = match (reach.next(), reach.next()) {
                    (None, _) => UNTOUCHED,
                    (Some((k, _)), None) => k as u8,
                    (Some(_), Some(_)) => SHARED,
                };
            }
        });
    }

    /// The first chunk of each thread's segment and the number of chunks,
    /// when the plan has one segment per thread of `threads`.
    fn owners(&self, threads: usize) -> Option<&[usize]> {
        (threads > 1 && self.n_seg == threads && self.bounds.len() == threads + 1)
            .then_some(&self.bounds[..])
    }

    /// Brings the plan up to date after contacts were added and removed,
    /// without a new cut: new chunks join the last segment, and a ball
    /// with a contact that arrived in another segment than its only one
    /// becomes shared. A ball stays shared until the next plan even if
    /// one of its segments lost its contacts with it: its contributions
    /// wait, and are added in slot order all the same.
    fn update(&mut self, store: &ContactStore) {
        let n_chunks = store.len().div_ceil(BATCH);
        for b in &mut self.bounds {
            *b = (*b).min(n_chunks);
        }
        self.bounds[self.n_seg] = n_chunks;
        self.arrivals += store.arrived.len();
        for &slot in &store.arrived {
            let slot = slot as usize;
            if slot >= store.len() {
                continue; // removed again since
            }
            let chunk = slot / BATCH;
            let k = self.bounds.partition_point(|&b| b <= chunk) - 1;
            for end in [store.end1[slot], store.end2[slot]] {
                if end & FACET == 0 {
                    let f = &mut self.only[end as usize];
                    if *f == UNTOUCHED {
                        *f = k as u8;
                    } else if *f != k as u8 {
                        *f = SHARED;
                    }
                }
            }
        }
    }

    /// Whether the segments are due for a new cut: the work drifts as
    /// contacts come, go, touch and part, so the plan is made anew every
    /// [`REPLAN_STEPS`] steps, or once the contacts that arrived in a slot
    /// since the last plan make an eighth of the store.
    fn stale(&self, store: &ContactStore, step: u64) -> bool {
        step >= self.planned_at + REPLAN_STEPS
            || (self.arrivals + store.arrived.len()) * 8 > store.len()
    }
}

/// Each model's plan of the contact pass, if it has one yet.
fn chain_none(plans: &[SegmentPlan]) -> impl Iterator<Item = Option<&SegmentPlan>> {
    plans.iter().map(Some).chain(std::iter::repeat(None))
}

/// Balls per block of a parallel loop over `n` balls: eight blocks per
/// thread or more, between 256 and 4096 balls each.
fn ball_block(n: usize) -> usize {
    n.div_ceil(8 * rayon::current_num_threads())
        .clamp(256, 4096)
}

/// The first ball of each thread's part of a loop over `n` balls in
/// blocks of [`ball_block`] on the team (the law of motion's parts), and
/// `n` at the end.
fn ball_parts(n: usize, threads: usize) -> Vec<u32> {
    let block = ball_block(n);
    let blocks = n.div_ceil(block);
    (0..=threads)
        .map(|p| (team::cut(blocks, threads, p) * block).min(n) as u32)
        .collect()
}

/// Where one segment of the contact pass adds what its contacts apply.
struct Sums<'a> {
    columns: Columns<'a>,
    walls: &'a mut WallPartials,
    /// The only segment of every ball (see [`SegmentPlan::only`]) and this
    /// segment's index; `None` when the pass is one segment, which adds
    /// everything directly.
    only: Option<(&'a [u8], u8)>,
    /// See [`ball_parts`].
    parts: &'a [u32],
    /// Per thread part, the contributions held back.
    deferred: &'a mut [Vec<Deferred>],
    /// The sum of every component of every force and torque this segment
    /// produced: finite unless one of them is not (or, in theory, the sum
    /// overflows; see [`Simulation::check_sums`]).
    check: Vec3,
}

impl Sums<'_> {
    // Always inlined: as a call (two per contact) it cost 7 % of a dense
    // step (measured: dense 10k, one thread, 3.70 s -> 3.43 s).
    #[inline(always)]
    fn ball(&mut self, i: u32, end: End, force: Vec3, torque: Vec3, stiffness: f64) {
        if let Some((only, k)) = self.only {
            if only[i as usize] != k {
                // The parts are few: the first bound above `i`.
                let p = self.parts[1..].partition_point(|&b| b <= i);
                self.deferred[p].push(Deferred {
                    target: i,
                    end,
                    force,
                    torque,
                    stiffness,
                });
                return;
            }
        }
        // SAFETY: no other segment reaches ball `i` (or there is no other
        // segment), so none adds to it while the segments run.
        unsafe { self.columns.add(i as usize, end, force, torque, stiffness) };
    }

    #[inline]
    fn wall(&mut self, w: u32, force: Vec3, torque: Vec3) {
        self.walls.add(w, force, torque);
    }
}

/// Words of [`Simulation::lone`] per chunk.
const LONE_WORDS: usize = BATCH / 64;

/// One chunk of a [`ContactStore`]: the same slots of every column, and
/// its bits of [`Simulation::lone`].
struct Chunk<'a> {
    lone: &'a [u64],
    plane: &'a mut [contact::Plane],
    setup: &'a mut [contact::Setup],
    output: &'a mut [ContactOutput],
    state: &'a mut [f64],
    carry: &'a mut [u8],
    end1: &'a [u32],
    end2: &'a [u32],
}

impl ContactStore {
    /// The store cut into chunks of [`BATCH`] slots, with the whole end
    /// columns; `lone` has [`LONE_WORDS`] per chunk.
    fn chunks<'a>(&'a mut self, lone: &'a [u64]) -> (Vec<Chunk<'a>>, &'a [u32], &'a [u32]) {
        let stride = self.stride;
        let (end1, end2) = (&self.end1[..], &self.end2[..]);
        let chunks = self
            .plane
            .chunks_mut(BATCH)
            .zip(self.setup.chunks_mut(BATCH))
            .zip(self.output.chunks_mut(BATCH))
            .zip(self.state.chunks_mut(BATCH * stride))
            .zip(self.carry.chunks_mut(BATCH))
            .zip(end1.chunks(BATCH).zip(end2.chunks(BATCH)))
            .zip(lone.chunks(LONE_WORDS))
            .map(
                |((((((plane, setup), output), state), carry), (end1, end2)), lone)| Chunk {
                    lone,
                    plane,
                    setup,
                    output,
                    state,
                    carry,
                    end1,
                    end2,
                },
            )
            .collect();
        (chunks, end1, end2)
    }
}

/// Buffers a chunk pass reuses from chunk to chunk.
#[derive(Default)]
struct Scratch {
    /// The model input of each contact of the chunk.
    inputs: Vec<ContactInput>,
    /// The values of the optional input columns of a run.
    columns: Vec<f64>,
    /// The runs of the chunk's contacts that go to the model, as slot
    /// ranges within the chunk.
    runs: Vec<(usize, usize)>,
}

/// Released contacts between two busy ones of a chunk that still join
/// their run, flagged idle, rather than cut it in two (a model call costs
/// about as much as a few idle contacts in it).
const IDLE_GAP: usize = 8;

/// What the model reads of an idle contact in a run: the flag, and the
/// property set, so that runs of one set stay unbroken. The rest of the
/// input is left from another contact, except the gap: NaN, so that a
/// model that forgets the flag computes no force from stale kinematics
/// (the linear model then repeats its released answer).
#[inline]
fn idle_input(input: &mut ContactInput, setup: &contact::Setup) {
    input.flags = flags::IDLE;
    input.prop_set = setup.prop_set;
    input.gap = f64::NAN;
}

/// What every chunk of one model's contacts needs this step.
struct ChunkPass<'a> {
    kin: Kinematics<'a>,
    walls: &'a [Wall],
    owner: &'a [(u32, u32)],
    dt: f64,
    overlap_only: bool,
    ctx: &'a BatchContext<'a>,
    batch: talus_sdk::BatchFn,
    /// The optional inputs the model asks for (ids).
    inputs: &'a [u32],
    n_state: usize,
    /// The least [`ContactStore::carry`] a contact needs to enter the sums.
    skip_below: u8,
}

impl ChunkPass<'_> {
    /// Resolves the chunk's contacts, calls the model once for those that
    /// need it and adds what each contact applies to `sums`, in slot order.
    /// An error carries the slot within the chunk.
    ///
    /// Kept out of line: inlined into the segment loop it ran 10-12 %
    /// slower on a dense pack (same instructions, worse register use).
    #[inline(never)]
    fn run(
        &self,
        ch: Chunk<'_>,
        scratch: &mut Scratch,
        sums: &mut Sums<'_>,
    ) -> Result<(), (usize, String)> {
        let Scratch {
            inputs,
            columns,
            runs,
        } = scratch;
        let len = ch.plane.len();
        // This step's lone facet contacts of the chunk (see
        // `Simulation::lone`).
        let lone = ch.lone;
        inputs.resize(len, ContactInput::default());
        runs.clear();
        // The model runs in place on runs of busy contacts. An open contact
        // it has already released (see `RELEASED`) gets no input and stays
        // out of the runs, unless it lies in a short gap between busy ones:
        // then it joins the run flagged idle, and the model leaves its
        // state and output as they are.
        let mut idle = [0u64; BATCH / 64];
        let mut called = 0;
        let (inputs, plane) = (&mut inputs[..len], &mut ch.plane[..len]);
        let (setup, end1, end2) = (&ch.setup[..len], &ch.end1[..len], &ch.end2[..len]);
        // The run being extended: its start and one past its last busy
        // contact.
        let mut run: Option<(usize, usize)> = None;
        // The idle bits of each word gather in a register: set one at a
        // time in the array, every released contact waited for the
        // previous one's store to the same word.
        for (w, word) in idle.iter_mut().enumerate().take(len.div_ceil(64)) {
            let mut bits = 0u64;
            for k in w * 64..(w * 64 + 64).min(len) {
                let busy = resolve_one(
                    &self.kin,
                    self.walls,
                    self.owner,
                    &mut plane[k],
                    &setup[k],
                    end1[k],
                    end2[k],
                    self.dt,
                    self.overlap_only,
                    &mut inputs[k],
                );
                if !busy {
                    bits |= 1 << (k % 64);
                    continue;
                }
                called += 1;
                run = Some(match run {
                    Some((start, end)) if k - end < IDLE_GAP => {
                        for j in end..k {
                            idle_input(&mut inputs[j], &setup[j]);
                        }
                        (start, k + 1)
                    }
                    Some(done) => {
                        runs.push(done);
                        (k, k + 1)
                    }
                    None => (k, k + 1),
                });
            }
            *word = bits;
        }
        runs.extend(run);
        // An idle contact is released and apart: its carry is what its
        // model last said of it while open (nothing, or a timestep
        // stiffness), so with a fixed timestep it adds nothing to the sums
        // and is left alone. A chunk of idle contacts only is then done; in
        // the others a word of idle contacts is passed over at once (most
        // of a settling pack's contacts are idle, grouped at the end of
        // their chunk's kinds).
        let skip_idle = self.skip_below > CARRY_STIFFNESS;
        if called == 0 && skip_idle {
            return Ok(());
        }
        let n = self.n_state;
        for &(start, end) in runs.iter() {
            // A model that asks for optional inputs gets their columns for
            // the run; the others share the pass's context.
            let (cols, run_ctx);
            let ctx = if self.inputs.is_empty() {
                self.ctx
            } else {
                let (pos, radius) = (self.kin.pos, self.kin.radius);
                let geometry = |i: usize| {
                    let (k, plane) = (start + i, &ch.plane[start + i]);
                    inputs::geometry_of(
                        pos, radius, self.walls, self.owner, plane, end1[k], end2[k],
                    )
                };
                cols = inputs::columns(self.inputs, end - start, geometry, columns);
                run_ctx = BatchContext {
                    columns: RSlice::from_slice(&cols),
                    ..*self.ctx
                };
                &run_ctx
            };
            let r = (self.batch)(
                ctx,
                RSlice::from_slice(&inputs[start..end]),
                RSliceMut::from_mut_slice(&mut ch.state[start * n..end * n]),
                RSliceMut::from_mut_slice(&mut ch.output[start..end]),
            );
            if let Err(e) = r.into_result() {
                return Err((
                    (start + e.index as usize).min(end - 1),
                    e.message.to_string(),
                ));
            }
        }
        // Iterators rather than indices: the compiler cannot tell that the
        // columns have one length and would check every index.
        let words = ch.plane.chunks(64).zip(ch.setup.chunks_mut(64));
        let words = words.zip(ch.output.chunks(64)).zip(ch.carry.chunks_mut(64));
        let words = words.zip(end1.chunks(64).zip(end2.chunks(64)));
        for (w, ((((plane, setup), output), carry), (end1, end2))) in words.enumerate() {
            let (idle, lone) = (idle[w], lone[w]);
            if skip_idle && idle == u64::MAX >> (64 - plane.len()) {
                continue;
            }
            let rows = plane.iter().zip(setup.iter_mut());
            let rows = rows.zip(output.iter()).zip(carry.iter_mut());
            let ends = end1.iter().zip(end2);
            for (j, ((((plane, setup), out), carry), (&a, &b))) in rows.zip(ends).enumerate() {
                let bit = 1u64 << j;
                if idle & bit == 0 {
                    let status = out.status;
                    let released = self.overlap_only && plane.gap > 0.0 && status != STATUS_ACTIVE;
                    let f = &mut setup.flags;
                    let carried = if lone & bit != 0 { CARRIED } else { 0 };
                    *f = (*f & !(flags::NEW | RELEASED))
                        | if released { RELEASED } else { 0 }
                        | carried;
                    // The carry codes are the status codes; anything else a
                    // model might return counts as could-be-active, as in
                    // `apply`.
                    *carry = if status > STATUS_ACTIVE {
                        CARRY_STIFFNESS
                    } else {
                        status as u8
                    };
                }
                if *carry < self.skip_below {
                    continue;
                }
                let ap = apply(&self.kin, self.walls, self.owner, plane, out, a, b);
                sums.check += ap.force + ap.torque1 + ap.torque2;
                sums.ball(a, End::One, ap.force, ap.torque1, ap.stiffness);
                if b & FACET == 0 {
                    sums.ball(b, End::Two, ap.force, ap.torque2, ap.stiffness);
                } else if *carry >= CARRY_FORCE {
                    sums.wall(self.owner[(b & !FACET) as usize].0, ap.force, ap.torque2);
                }
            }
        }
        Ok(())
    }
}

/// Resolves one contact: contact plane, frame and increments, written to
/// `input`; returns false, leaving `input` alone, for an open contact its
/// model has released.
#[allow(clippy::too_many_arguments)]
#[inline]
fn resolve_one(
    kin: &Kinematics<'_>,
    walls: &[Wall],
    owner: &[(u32, u32)],
    plane: &mut contact::Plane,
    setup: &contact::Setup,
    a: u32,
    b: u32,
    dt: f64,
    overlap_only: bool,
    input: &mut ContactInput,
) -> bool {
    let a = a as usize;
    let ra = kin.radius[a];
    let xa = kin.pos[a];
    let open_released = overlap_only && setup.flags & RELEASED != 0;
    let (n, gap, xc, e2, region, rb) = if b & FACET != 0 {
        // `wall_gaps` found the closest facet point, its region and the gap
        // this step and left the point in `xc`.
        if open_released && plane.gap > 0.0 {
            return false;
        }
        let (wi, f) = owner[(b & !FACET) as usize];
        let wall = &walls[wi as usize];
        let (n, gap, xc) = contact::plane_ball_facet(xa, ra, plane.xc, wall.normals[f as usize]);
        let e2 = if wall.vertex_velocity.is_empty() {
            EndMotion {
                x: wall.centre,
                v: wall.motion.velocity,
                w: wall.motion.spin,
            }
        } else {
            // A deforming facet: the material velocity at the wall contact
            // point, without a spin of its own.
            EndMotion {
                x: xc,
                v: wall.point_velocity(f as usize, plane.xc),
                w: Vec3::ZERO,
            }
        };
        (n, gap, xc, e2, plane.region, 0.0)
    } else {
        let b = b as usize;
        let rb = kin.radius[b];
        let xb = kin.pos[b];
        if open_released {
            // Still apart? Then nothing changes for the model; the plane of
            // such contacts is refreshed only when it is recorded
            // (`refresh_open_contacts`).
            let d2 = (xb - xa).length_squared();
            if d2 > (ra + rb) * (ra + rb) {
                return false;
            }
        }
        let (n, gap, xc) = contact::plane_ball_ball(xa, ra, xb, rb, plane.n);
        (
            n,
            gap,
            xc,
            EndMotion {
                x: xb,
                v: kin.vel[b],
                w: kin.spin[b],
            },
            0,
            rb,
        )
    };
    plane.xc = xc;
    plane.gap = gap;
    plane.region = region;
    let open = overlap_only && gap > 0.0;
    *input = ContactInput {
        gap,
        mass: setup.mass,
        radius: [ra, rb],
        prop_set: setup.prop_set,
        flags: setup.flags & !ENGINE_BITS,
        ..Default::default()
    };
    if open {
        plane.n = n;
        plane.initialised = false;
        return true;
    }
    let e1 = EndMotion {
        x: xa,
        v: kin.vel[a],
        w: kin.spin[a],
    };
    contact::update_frame(plane, n, e1.w, e2.w, dt);
    contact::increments(plane, &e1, &e2, dt, input);
    true
}

/// Converts a model output to what the contact applies in global axes.
/// Only active contacts carry force (sdk contract); could-be-active ones
/// still report stiffness for the timestep.
#[inline(always)]
fn apply(
    kin: &Kinematics<'_>,
    walls: &[Wall],
    owner: &[(u32, u32)],
    p: &contact::Plane,
    o: &ContactOutput,
    a: u32,
    b: u32,
) -> contact::Applied {
    if o.status != STATUS_ACTIVE {
        let stiffness = if o.status == STATUS_INACTIVE {
            0.0
        } else {
            o.stiffness[0]
        };
        return contact::Applied {
            stiffness,
            ..Default::default()
        };
    }
    let f = p.n * o.force[0] + p.s * o.force[1] + p.t * o.force[2];
    // Models without moments (most) spare the second rotation to global
    // axes.
    // (zero of either sign: the bits are zero once the sign is shifted out)
    let [m0, m1, m2] = o.moment.map(f64::to_bits);
    let mo = if (m0 | m1 | m2) << 1 == 0 {
        Vec3::ZERO
    } else {
        p.n * o.moment[0] + p.s * o.moment[1] + p.t * o.moment[2]
    };
    let (torque1, torque2) = if b & FACET != 0 {
        let x1 = kin.pos[a as usize];
        let x2 = walls[owner[(b & !FACET) as usize].0 as usize].centre;
        ((p.xc - x1).cross(f), (p.xc - x2).cross(f))
    } else {
        // Two balls: the lever arms are `xc - x1 = l1 n` and
        // `xc - x2 = -l2 n` with `l = R + g / 2`, and `n x f` is
        // `Fs t - Ft s` in the right-handed frame, so neither centre nor
        // cross product is needed.
        let half_gap = 0.5 * p.gap;
        let nf = p.t * o.force[1] - p.s * o.force[2];
        (
            nf * (kin.radius[a as usize] + half_gap),
            nf * -(kin.radius[b as usize] + half_gap),
        )
    };
    contact::Applied {
        force: f,
        torque1: -(torque1 + mo),
        torque2: torque2 + mo,
        stiffness: o.stiffness[0],
    }
}

/// Public id of the wall with index `index`.
#[inline]
pub fn wall_id(index: u32) -> u64 {
    index as u64 + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::balls::BallInit;

    /// A compressed lattice of n x n x 8 balls under gravity, with the
    /// linear model (n odd or not a multiple of 7919).
    /// A 1 mm glass bead of group `group`, undamped and free.
    fn grain(pos: Vec3, velocity: Vec3, group: u16) -> BallInit {
        BallInit {
            pos,
            radius: 1e-3,
            density: 2500.0,
            velocity,
            spin: Vec3::ZERO,
            group,
            damping: 0.0,
            fixity: Default::default(),
        }
    }

    fn linear_entry() -> talus_sdk::ModelEntry {
        let root = talus_plugin_linear::root_module();
        talus_sdk::ModelEntry::from_abi((root.models())()[0]).unwrap()
    }

    fn packed(n: usize) -> Simulation {
        packed_with(n, linear_entry())
    }

    /// `n * n * 8` balls in a simple cubic pack, each overlapping its six
    /// neighbours slightly, under gravity, with `entry` between them.
    fn packed_with(n: usize, entry: talus_sdk::ModelEntry) -> Simulation {
        let mut sim = unprepared(n, entry);
        sim.prepare().unwrap();
        sim
    }

    /// [`packed_with`] before [`Simulation::prepare`].
    fn unprepared(n: usize, entry: talus_sdk::ModelEntry) -> Simulation {
        let mut sim = Simulation::new(Settings {
            gravity: Vec3::new(0.0, 0.0, -9.81),
            timestep: Timestep::Auto { safety: 0.5 },
            cell_tolerance: None,
        });
        let g = sim.group("g");
        let m = sim.add_model(entry);
        sim.assign(g, g, m, vec![1e5, 5e4, 0.5, 0.1, 0.1]).unwrap();
        // Balls in a scrambled order (a stride prime to the count), so that
        // each ball's contacts lie far apart in the store.
        let total = n * n * 8;
        for q in 0..total {
            let p = q * 7919 % total;
            let (i, j, k) = (p / (8 * n), p / 8 % n, p % 8);
            let jitter = ((i * 7 + j * 13 + k * 29) % 11) as f64 * 1e-6;
            let pos = Vec3::new(i as f64, j as f64, k as f64) * 1.98e-3 + Vec3::splat(jitter);
            sim.add_ball(grain(pos, Vec3::ZERO, g)).unwrap();
        }
        sim
    }

    #[test]
    fn a_lone_facet_contact_is_marked_as_carrying_its_load() {
        // One ball resting 10 um deep on a floor of two facets, well inside
        // the first: its only facet contact carries, which the next step's
        // wall logic reads, and only its bit in the wall logic's set marks it.
        let mut sim = Simulation::new(Settings {
            gravity: Vec3::new(0.0, 0.0, -9.81),
            timestep: Timestep::Fixed(1e-7),
            cell_tolerance: None,
        });
        let g = sim.group("g");
        let w = sim.group("floor");
        let m = sim.add_model(linear_entry());
        let props = vec![1e5, 5e4, 0.5, 0.1, 0.1];
        sim.assign(g, g, m, props.clone()).unwrap();
        sim.assign(g, w, m, props).unwrap();
        let corners = [
            [-1e-2, -1e-2, 0.0],
            [1e-2, -1e-2, 0.0],
            [1e-2, 1e-2, 0.0],
            [-1e-2, 1e-2, 0.0],
        ];
        let floor = Wall::new("floor", &corners, &[[0, 1, 2], [0, 2, 3]], None).unwrap();
        sim.add_wall(floor, w);
        sim.add_ball(grain(Vec3::new(5e-3, -5e-3, 0.99e-3), Vec3::ZERO, g))
            .unwrap();
        sim.prepare().unwrap();
        for _ in 0..3 {
            sim.cycle().unwrap();
            let st = &sim.models[0].store;
            let slots: Vec<usize> = (0..st.len()).filter(|&k| st.end2[k] & FACET != 0).collect();
            let overlapping: Vec<usize> = slots
                .iter()
                .copied()
                .filter(|&k| st.plane[k].gap < 0.0)
                .collect();
            assert_eq!(overlapping.len(), 1, "{slots:?}");
            assert!(st.setup[overlapping[0]].flags & CARRIED != 0);
            // Its bit, and no other, marked it.
            let k = overlapping[0];
            let bits: u32 = sim.lone.iter().flatten().map(|w| w.count_ones()).sum();
            assert!(bits == 1 && sim.lone[0][k / 64] & (1 << (k % 64)) != 0);
        }
    }

    #[test]
    fn wall_sums_have_the_same_bits_on_any_thread_count() {
        // The packed balls' bottom layer pressed 10 um into a floor of two
        // facets; the balls are scrambled, so the floor's contacts lie in
        // every chunk of the store and two or three threads sum the wall in
        // segments of several chunks each.
        let run = |threads: usize| -> Vec<[u64; 6]> {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut sim = unprepared(24, linear_entry());
                let w = sim.group("floor");
                let (lo, hi, z) = (-5e-3, 55e-3, -0.99e-3);
                let corners = [[lo, lo, z], [hi, lo, z], [hi, hi, z], [lo, hi, z]];
                let floor = Wall::new("floor", &corners, &[[0, 1, 2], [0, 2, 3]], None).unwrap();
                sim.add_wall(floor, w);
                sim.assign(0, w, 0, vec![1e5, 5e4, 0.5, 0.1, 0.1]).unwrap();
                sim.prepare().unwrap();
                let mut bits = Vec::new();
                for _ in 0..20 {
                    sim.cycle().unwrap();
                    let wall = &sim.walls[0];
                    let v = [wall.force.to_array(), wall.moment.to_array()].concat();
                    bits.push(std::array::from_fn(|i| v[i].to_bits()));
                }
                let n_chunks = sim.models[0].store.len().div_ceil(BATCH);
                assert!(n_chunks >= 8, "{n_chunks} chunks");
                // The balls push the floor down.
                assert!(sim.walls[0].force.z < 0.0);
                bits
            })
        };
        let one = run(1);
        for threads in [2, 3] {
            assert!(
                run(threads) == one,
                "{threads} threads changed the wall sums"
            );
        }
    }

    #[test]
    fn an_idle_input_carries_a_nan_gap_and_the_linear_model_repeats_its_release() {
        // An idle contact's input keeps whatever another contact left in
        // the chunk's buffer, except its flag, property set and gap: a
        // model that computed on it anyway would see no overlap (NaN is
        // not below zero), and the linear model then repeats its released
        // answer.
        // Two balls 0.5 mm apart, the first moving towards the second.
        let mut balls = Balls::default();
        for (x, v) in [(0.0, 1.0), (2.5e-3, 0.0)] {
            balls.push(grain(Vec3::new(x, 0.0, 0.0), Vec3::new(v, 0.0, 0.0), 0));
        }
        let kin = Kinematics {
            pos: &balls.pos,
            vel: &balls.vel,
            spin: &balls.spin,
            radius: &balls.radius,
        };
        let setup = contact::Setup {
            mass: 1e-5,
            prop_set: 3,
            flags: RELEASED,
        };
        let mut plane = contact::Plane {
            gap: 5e-4,
            ..Default::default()
        };
        // Left over from an overlapping contact of an earlier chunk.
        let mut input = ContactInput {
            gap: -1e-4,
            delta_n: -1e-6,
            delta_s: [1e-6, 0.0],
            mass: 1e-5,
            ..Default::default()
        };
        let busy = resolve_one(
            &kin,
            &[],
            &[],
            &mut plane,
            &setup,
            0,
            1,
            1e-6,
            true,
            &mut input,
        );
        assert!(!busy);
        // Not written to; flagged when it joins a run of busy contacts.
        assert_eq!(input.gap, -1e-4);
        idle_input(&mut input, &setup);
        assert_eq!((input.flags, input.prop_set), (flags::IDLE, 3));
        assert!(input.gap.is_nan());
        use talus_plugin_linear::kernel::{force_displacement, LinearProps, LinearState};
        let props = LinearProps {
            kn: 1e5,
            ks: 5e4,
            fric: 0.5,
            dp_nratio: 0.1,
            dp_sratio: 0.1,
        };
        let released = LinearState {
            e_slip: 2e-9,
            e_dashpot: 3e-9,
            ..Default::default()
        };
        let mut state = released;
        let out = force_displacement(&props, 1e-6, &input, &mut state);
        assert_eq!(state, released);
        assert_eq!(out.force, [0.0; 3]);
        assert_eq!(out.status, talus_sdk::STATUS_COULD_BE_ACTIVE);
    }

    #[test]
    fn stage_times_add_up_to_at_most_the_cycles_time() {
        let mut sim = packed(6);
        assert_eq!(sim.stage_times, StageTimes::default());
        let start = Instant::now();
        for _ in 0..50 {
            sim.cycle().unwrap();
        }
        let elapsed = start.elapsed().as_secs_f64();
        let t = sim.stage_times;
        for (name, s) in t.named() {
            assert!(s >= 0.0, "{name}: {s}");
        }
        // Each stage is timed once per cycle, none inside another.
        assert!(t.total() <= elapsed, "{t:?} against {elapsed} s");
        // A packed bed has contacts: their pass is timed.
        assert!(
            sim.n_active() > 0 && t.contacts > 0.0 && t.motion > 0.0,
            "{t:?}"
        );
    }

    /// Per model call of the recording model: which inputs were idle.
    static CALLS: std::sync::Mutex<Vec<Vec<bool>>> = std::sync::Mutex::new(Vec::new());

    /// The linear model, recording the shape of every batch it gets.
    extern "C" fn recording_linear(
        ctx: &BatchContext<'_>,
        inputs: RSlice<'_, ContactInput>,
        state: RSliceMut<'_, f64>,
        outputs: RSliceMut<'_, ContactOutput>,
    ) -> talus_sdk::abi_stable::std_types::RResult<(), talus_sdk::BatchError> {
        let idle = inputs.iter().map(|i| i.flags & flags::IDLE != 0).collect();
        CALLS.lock().unwrap().push(idle);
        (linear_entry().batch)(ctx, inputs, state, outputs)
    }

    #[test]
    fn the_model_gets_runs_of_busy_contacts_with_short_idle_gaps_only() {
        let mut entry = linear_entry();
        entry.batch = recording_linear;
        let mut sim = packed_with(8, entry);
        CALLS.lock().unwrap().clear();
        let (mut contacts, mut idle_seen, mut bridged) = (0, 0, 0);
        for _ in 0..300 {
            sim.cycle().unwrap();
            contacts += sim.n_contacts();
            let calls = std::mem::take(&mut *CALLS.lock().unwrap());
            for idle in &calls {
                // A run starts and ends with a contact that is not idle, and
                // no stretch of idle ones within it reaches IDLE_GAP.
                assert!(!idle[0] && !idle[idle.len() - 1]);
                let mut stretch = 0;
                for &i in idle {
                    stretch = if i { stretch + 1 } else { 0 };
                    assert!(stretch < IDLE_GAP);
                }
                idle_seen += idle.iter().filter(|&&i| i).count();
                bridged += usize::from(idle.contains(&true));
                contacts -= idle.len();
            }
        }
        // Both kinds of idle contacts occurred: left out (fewer inputs than
        // contacts) and bridged over within a run.
        assert!(contacts > 0 && idle_seen > 0 && bridged > 0);
    }

    #[test]
    fn every_ball_that_left_its_cell_extent_is_rebinned_in_its_step() {
        // A falling bed of several blocks of balls, some flying apart:
        // after each cycle no ball lies farther than the tolerance from
        // where it was last binned.
        let mut sim = packed(12);
        let mut rebinned = 0;
        for _ in 0..200 {
            sim.cycle().unwrap();
            let cells = sim.cells.as_ref().unwrap();
            for (i, &x) in sim.balls.pos.iter().enumerate() {
                assert!(!cells.must_rebin(i, x), "ball {i} at step {}", sim.step);
            }
            rebinned += sim.motion_blocks.iter().map(|b| b.1).sum::<u32>();
        }
        assert!(sim.motion_blocks.len() > 2 && rebinned > 1000, "{rebinned}");
    }

    #[test]
    fn the_active_count_is_that_of_the_model_outputs() {
        // A packed bed without walls falls and bounces apart and together:
        // contacts open, close and are released while the count is taken.
        let mut sim = packed(6);
        let (mut some_active, mut some_not) = (false, false);
        for _ in 0..300 {
            sim.cycle().unwrap();
            let outputs = sim.models.iter().flat_map(|m| &m.store.output);
            let active = outputs
                .filter(|o| o.status == talus_sdk::STATUS_ACTIVE)
                .count();
            assert_eq!(sim.n_active(), active, "step {}", sim.step);
            some_active |= active > 0;
            some_not |= active < sim.n_contacts();
        }
        assert!(some_active && some_not);
    }

    /// The step-by-step force sums of `packed(n)` on a pool of `threads`,
    /// and how many contributions the parallel pass held back; with
    /// `regroup`, the contacts of every chunk are regrouped before each
    /// step.
    fn sums_on(threads: usize, n: usize, steps: usize, regroup: bool) -> (Vec<Vec<u64>>, usize) {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut sim = packed(n);
            let mut held = 0;
            let mut bits = Vec::new();
            for _ in 0..steps {
                if regroup {
                    sim.regroup_contacts(true);
                }
                sim.cycle().unwrap();
                held += sim
                    .segments
                    .iter()
                    .flat_map(|s| &s.deferred)
                    .map(Vec::len)
                    .sum::<usize>();
                let b = &sim.balls;
                let mut v = Vec::new();
                for i in 0..b.len() {
                    v.extend(b.force[i].to_array().map(f64::to_bits));
                    v.extend(b.moment[i].to_array().map(f64::to_bits));
                    v.push(b.stiffness[i].to_bits());
                }
                bits.push(v);
            }
            (bits, held)
        })
    }

    #[test]
    fn segmented_sums_have_the_bits_of_the_serial_pass() {
        // 24 x 24 x 8 balls make several chunks of contacts, so 2 and 3
        // threads cut them into segments that share balls.
        let (serial, none) = sums_on(1, 24, 40, false);
        assert_eq!(none, 0);
        for threads in [2, 3, 4, 7] {
            let (parallel, held) = sums_on(threads, 24, 40, false);
            assert!(held > 0, "{threads} threads held nothing back");
            assert!(serial == parallel, "{threads} threads changed the sums");
        }
    }

    /// Per ball, by a walk through the slots of each segment: the only
    /// segment that reaches it, [`SHARED`] or [`UNTOUCHED`].
    fn reach(st: &ContactStore, bounds: &[usize], n_balls: usize) -> Vec<u8> {
        let mut want = vec![UNTOUCHED; n_balls];
        for k in 0..bounds.len() - 1 {
            for slot in bounds[k] * BATCH..(bounds[k + 1] * BATCH).min(st.len()) {
                for end in [st.end1[slot], st.end2[slot]] {
                    if end & FACET == 0 {
                        let w = &mut want[end as usize];
                        *w = if *w == UNTOUCHED || *w == k as u8 {
                            k as u8
                        } else {
                            SHARED
                        };
                    }
                }
            }
        }
        want
    }

    #[test]
    fn an_updated_plan_lets_no_two_segments_add_to_one_ball() {
        // Contacts come and go at random between updates; a ball that one
        // segment reaches may be marked shared (its other segments' contacts
        // left), but a ball that two segments reach is always shared, and
        // the segments keep covering the store.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let n_balls = 4 * BATCH / 8 + 1;
        let mut st = ContactStore::new(1);
        let push = |st: &mut ContactStore, rng: &mut rand_chacha::ChaCha8Rng| {
            let a = rng.random_range(0..n_balls as u32);
            let b = if rng.random_bool(0.2) {
                FACET | 1
            } else {
                rng.random_range(0..n_balls as u32)
            };
            st.push(0, a, b, 0, 1.0);
        };
        // At first ball k is met only around slot 8 k, so the first
        // segments of the balls differ; contacts added later have any balls
        // and move into early slots as others are removed.
        for slot in 0..4 * BATCH as u32 {
            st.push(0, slot / 8, slot / 8 + 1, 0, 1.0);
        }
        let mut plan = SegmentPlan::default();
        plan.plan(&st, 3, n_balls, 0);
        assert_eq!(plan.only, reach(&st, &plan.bounds, n_balls));
        st.arrived.clear();
        let (mut direct, mut became_shared) = (false, false);
        for round in 0..40 {
            for _ in 0..rng.random_range(0..300) {
                push(&mut st, &mut rng);
            }
            for _ in 0..rng.random_range(0..400) {
                let slot = rng.random_range(0..st.len());
                st.swap_remove(slot);
            }
            plan.update(&st);
            st.arrived.clear();
            let b = &plan.bounds;
            assert!(b[0] == 0 && b[3] == st.len().div_ceil(BATCH));
            assert!(b.windows(2).all(|w| w[0] <= w[1]), "round {round}: {b:?}");
            for (ball, (&want, &only)) in reach(&st, b, n_balls).iter().zip(&plan.only).enumerate()
            {
                match want {
                    UNTOUCHED => {}
                    SHARED => assert_eq!(only, SHARED, "round {round}: ball {ball}"),
                    k => assert!(
                        only == k || only == SHARED,
                        "round {round}: ball {ball} in {k} only, marked {only}"
                    ),
                }
                direct |= want < SHARED && only == want;
                became_shared |= want < SHARED && only == SHARED;
            }
        }
        assert!(direct && became_shared);
    }

    #[test]
    fn segments_are_cut_to_equal_work() {
        // Eight chunks: the first four busy, the last four released.
        let mut st = ContactStore::new(1);
        for k in 0..8 * BATCH {
            let slot = st.push(k as u64, (k % 100) as u32, (k % 100 + 1) as u32, 0, 1.0);
            if k >= 4 * BATCH {
                st.setup[slot].flags |= RELEASED;
            }
        }
        let mut plan = SegmentPlan::default();
        // Work 4 x 16 + 4 x 1 chunk-units; half of it lies after the first
        // three chunks (48 of 68 before the fourth).
        plan.plan(&st, 2, 101, 0);
        assert_eq!(plan.bounds, [0, 3, 8]);
        plan.plan(&st, 4, 101, 0);
        assert_eq!(plan.bounds, [0, 2, 3, 4, 8]);
        // As many segments as chunks: one chunk each, whatever the work.
        plan.plan(&st, 8, 101, 0);
        assert_eq!(plan.bounds, (0..=8).collect::<Vec<_>>());
        // Equal chunks, equal segments.
        for s in &mut st.setup {
            s.flags &= !RELEASED;
        }
        plan.plan(&st, 4, 101, 0);
        assert_eq!(plan.bounds, [0, 2, 4, 6, 8]);
        // Ball 0 is end1 of slot 0 and of slots 100, 200, ... in later
        // segments.
        assert_eq!(plan.only[0], SHARED);
        // Every ball's segment, against a walk through the slots: ball
        // 300 + s / 9 is end1 of slot s, and ball 17 higher end2 of every
        // odd slot (a facet of the even ones), so every segment has balls
        // of its own, some balls are shared, and balls below 300 or above
        // 658 are touched by none.
        let mut st = ContactStore::new(1);
        let n_balls = 1000;
        for slot in 0..3 * BATCH {
            let k = (slot / 9 + 300) as u32 % 900;
            let other = if slot % 2 == 0 {
                FACET | 3
            } else {
                (k + 17) % 900
            };
            st.push(slot as u64, k, other, 0, 1.0);
        }
        for n_seg in [1, 2, 3] {
            plan.plan(&st, n_seg, n_balls, 0);
            let want = reach(&st, &plan.bounds, n_balls);
            assert_eq!(plan.only, want, "{n_seg} segments");
            assert!((0..n_seg as u8).all(|k| want.contains(&k)) && want.contains(&UNTOUCHED));
            assert_eq!(want.contains(&SHARED), n_seg > 1);
        }
    }

    #[test]
    fn regrouped_contacts_give_the_same_forces_and_bits_on_any_thread_count() {
        let (plain, _) = sums_on(1, 24, 40, false);
        let (regrouped, _) = sums_on(1, 24, 40, true);
        // Regrouping changes the order of the sums and nothing else: the
        // forces agree to rounding, step by step.
        let mut moved = false;
        for (p, r) in plain.iter().zip(&regrouped) {
            let (p, r) = (
                p.iter().map(|&b| f64::from_bits(b)),
                r.iter().map(|&b| f64::from_bits(b)),
            );
            let pr: Vec<(f64, f64)> = p.zip(r).collect();
            let scale = pr.iter().fold(0.0f64, |m, &(a, _)| m.max(a.abs()));
            let worst = pr.iter().fold(0.0f64, |m, &(a, b)| m.max((a - b).abs()));
            assert!(worst <= 1e-9 * scale, "{worst:e} of {scale:e}");
            moved |= worst > 0.0;
        }
        assert!(moved, "the regrouping changed no sum");
        for threads in [2, 3] {
            let (parallel, _) = sums_on(threads, 24, 40, true);
            assert!(regrouped == parallel, "{threads} threads changed the sums");
        }
    }

    #[test]
    fn a_regrouping_leaves_the_pairs_in_contact_as_they_were() {
        let mut sim = packed(12);
        for _ in 0..20 {
            sim.cycle().unwrap();
        }
        let pairs = |sim: &Simulation| {
            let st = &sim.models[0].store;
            let mut v: Vec<(u64, u32, u32, Vec<u64>)> = (0..st.len())
                .map(|k| {
                    let state = st.state_of(k).iter().map(|x| x.to_bits()).collect();
                    (st.id[k], st.end1[k], st.end2[k], state)
                })
                .collect();
            v.sort();
            v
        };
        let before = pairs(&sim);
        let order_before = sim.models[0].store.id.clone();
        sim.regroup_contacts(true);
        assert_eq!(pairs(&sim), before);
        assert_ne!(
            sim.models[0].store.id, order_before,
            "nothing was regrouped"
        );
        // Detection still knows every pair: no contact is created twice.
        for _ in 0..20 {
            sim.cycle().unwrap();
        }
        let st = &sim.models[0].store;
        let mut keys: Vec<u64> = (0..st.len())
            .map(|k| pair_key(st.end1[k], st.end2[k]))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), st.len());
        assert_eq!(sim.contact_pairs.len(), st.len());
    }
}
