//! Checkpoints: everything the cycle reads from one step to the next,
//! written between cycles and read back so that a run continues exactly as
//! if it had never stopped.
//!
//! Reads: a simulation between cycles. Writes: a byte buffer (the caller
//! stores it) and, on restore, the simulation's state.
//! Invariant: a simulation built from the same setup (bodies, walls,
//! models, assignments, installs: what the config makes) and prepared,
//! then restored from a checkpoint taken at step `k` of another run, runs
//! step `k + 1` onwards to the same bits as that run, with any number of
//! threads. What depends on the thread count (the cut of the contact
//! pass into segments) is not saved: it never changes a result, and it is
//! planned again for the threads at hand.
//!
//! What is saved: the step, time and timestep; the moving columns of
//! every body (position, velocity, spin, orientation and angular momentum
//! of blocks and clumps, the clumps' pebble rows among the balls, the last cycle's force, moment and timestep stiffness);
//! every wall whole (its vertices, frames, motion and servo); every
//! contact lane whole (ids, pieces, planes, flags, model state, the last
//! outputs, warm starts, the six-DOF displacements of the lanes that keep
//! them, the chunk order counters); the cell space (each
//! piece's extent and reference point, so that re-binning happens at the
//! same steps); the periodic cell (its shape, velocity gradient and stages); the wall logic's links between contacts; the next contact
//! id; which bond installs have happened; the block fallback log; the
//! step and kinetic energy of the last blow-up energy check. What
//! the setup fixes (radii, masses, shapes, clump templates, facets' topology, model
//! properties, probe stiffnesses) comes from the setup.
//!
//! The format is a magic number, a format version, then the state
//! serialised with postcard; a caller's tag (the CLI stores the config
//! text) travels with it and can be checked before anything is restored.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::body::{BallsMut, BallsRef, BlocksMut, BlocksRef, ClumpsMut, ClumpsRef};
use crate::cell::Cell;
use crate::cellspace::CellSpace;
use crate::contact::ContactStore;
use crate::math::{Quat, Vec3};
use crate::piece::{PairKind, Piece};
use crate::sim::Simulation;
use crate::wall::Wall;

/// The first bytes of every checkpoint.
const MAGIC: [u8; 8] = *b"TALUSCKP";
/// Version of the layout after the magic; a checkpoint of another version
/// is refused.
pub const FORMAT: u32 = 7;

/// Why a checkpoint cannot be read or restored.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// Not a checkpoint, or a damaged one.
    #[error("not a talus checkpoint, or a damaged one: {0}")]
    Damaged(String),
    /// Written by another checkpoint format.
    #[error("checkpoint format {found}, this talus reads format {FORMAT}")]
    Format {
        /// The format found.
        found: u32,
    },
    /// The simulation does not have the setup the checkpoint was taken
    /// from.
    #[error("the checkpoint does not fit this simulation: {0}")]
    Mismatch(String),
}

/// The moving columns of one body kind.
#[derive(Serialize, Deserialize)]
struct BodyState<'a> {
    pos: Cow<'a, [Vec3]>,
    vel: Cow<'a, [Vec3]>,
    spin: Cow<'a, [Vec3]>,
    force: Cow<'a, [Vec3]>,
    moment: Cow<'a, [Vec3]>,
    stiffness: Cow<'a, [f64]>,
    /// Blocks only (empty for balls).
    orientation: Cow<'a, [Quat]>,
    /// Blocks only (empty for balls).
    momentum: Cow<'a, [Vec3]>,
}

/// One lane's contacts and its wall-logic bits.
#[derive(Serialize, Deserialize)]
struct LaneState<'a> {
    store: Cow<'a, ContactStore>,
    lone: Cow<'a, [u64]>,
}

type WallInfo = ((u16, PairKind, u32), (u64, u64));

#[derive(Serialize, Deserialize)]
struct State<'a> {
    tag: Cow<'a, str>,
    step: u64,
    time: f64,
    dt: f64,
    step_start: f64,
    next_contact_id: u64,
    unheld: bool,
    sums_suspect: bool,
    balls: BodyState<'a>,
    blocks: BodyState<'a>,
    clumps: BodyState<'a>,
    walls: Vec<Cow<'a, Wall>>,
    /// Per model, its lanes in pair-kind order, and its number of state
    /// slots.
    models: Vec<(usize, Vec<LaneState<'a>>)>,
    cells: Option<Cow<'a, CellSpace>>,
    /// The periodic cell: its shape and velocity gradient now.
    cell: Option<Cow<'a, Cell>>,
    contact_pairs: Vec<u64>,
    proximity_ids: Vec<(u64, u64)>,
    wall_info: Vec<WallInfo>,
    installs_done: Vec<bool>,
    guard: (u64, Option<(u64, Piece, Piece)>),
    /// The step and kinetic energy of the last blow-up energy check.
    energy_last: (u64, f64),
}

/// A checkpoint read from bytes, not yet restored.
pub struct Checkpoint {
    state: State<'static>,
}

impl Checkpoint {
    /// Reads a checkpoint.
    pub fn read(bytes: &[u8]) -> Result<Checkpoint, CheckpointError> {
        let Some(rest) = bytes.strip_prefix(&MAGIC) else {
            return Err(CheckpointError::Damaged(
                "it does not start with the checkpoint marker".into(),
            ));
        };
        let (version, rest) = rest
            .split_at_checked(4)
            .ok_or_else(|| CheckpointError::Damaged("it ends before its format version".into()))?;
        let found = u32::from_le_bytes(version.try_into().expect("four bytes"));
        if found != FORMAT {
            return Err(CheckpointError::Format { found });
        }
        let state: State<'_> =
            postcard::from_bytes(rest).map_err(|e| CheckpointError::Damaged(e.to_string()))?;
        Ok(Checkpoint {
            state: state.into_owned(),
        })
    }

    /// The tag the checkpoint was written with.
    pub fn tag(&self) -> &str {
        &self.state.tag
    }

    /// The step the checkpoint was taken after.
    pub fn step(&self) -> u64 {
        self.state.step
    }

    /// The simulated time at that step (s).
    pub fn time(&self) -> f64 {
        self.state.time
    }
}

impl State<'_> {
    fn into_owned(self) -> State<'static> {
        fn own<T: Clone>(c: Cow<'_, [T]>) -> Cow<'static, [T]> {
            Cow::Owned(c.into_owned())
        }
        let body = |b: BodyState<'_>| BodyState {
            pos: own(b.pos),
            vel: own(b.vel),
            spin: own(b.spin),
            force: own(b.force),
            moment: own(b.moment),
            stiffness: own(b.stiffness),
            orientation: own(b.orientation),
            momentum: own(b.momentum),
        };
        State {
            tag: Cow::Owned(self.tag.into_owned()),
            step: self.step,
            time: self.time,
            dt: self.dt,
            step_start: self.step_start,
            next_contact_id: self.next_contact_id,
            unheld: self.unheld,
            sums_suspect: self.sums_suspect,
            balls: body(self.balls),
            blocks: body(self.blocks),
            clumps: body(self.clumps),
            walls: self
                .walls
                .into_iter()
                .map(|w| Cow::Owned(w.into_owned()))
                .collect(),
            models: self
                .models
                .into_iter()
                .map(|(n, lanes)| {
                    let lanes = lanes
                        .into_iter()
                        .map(|l| LaneState {
                            store: Cow::Owned(l.store.into_owned()),
                            lone: own(l.lone),
                        })
                        .collect();
                    (n, lanes)
                })
                .collect(),
            cells: self.cells.map(|c| Cow::Owned(c.into_owned())),
            cell: self.cell.map(|c| Cow::Owned(c.into_owned())),
            contact_pairs: self.contact_pairs,
            proximity_ids: self.proximity_ids,
            wall_info: self.wall_info,
            installs_done: self.installs_done,
            guard: self.guard,
            energy_last: self.energy_last,
        }
    }
}

impl Simulation {
    /// The simulation's state as checkpoint bytes, with `tag` (any text the
    /// caller wants to check before restoring, such as the config). Call
    /// it between cycles.
    ///
    /// # Panics
    /// While a [`BallsMut`] of this simulation is alive.
    pub fn checkpoint(&self, tag: &str) -> Vec<u8> {
        let balls = BallsRef::of(&self.world);
        let blocks = BlocksRef::of(&self.world);
        let clumps = ClumpsRef::of(&self.world);
        let walls = crate::body::walls(&self.world);
        let mut proximity_ids: Vec<(u64, u64)> =
            self.proximity_ids.iter().map(|(&k, &v)| (k, v)).collect();
        proximity_ids.sort_unstable();
        let mut wall_info: Vec<WallInfo> = self.wall_info.iter().map(|(&k, &v)| (k, v)).collect();
        wall_info.sort_unstable_by_key(|e| e.0);
        let mut contact_pairs: Vec<u64> = self.contact_pairs.iter().copied().collect();
        contact_pairs.sort_unstable();
        let state = State {
            tag: Cow::Borrowed(tag),
            step: self.step,
            time: self.time,
            dt: self.dt,
            step_start: self.step_start,
            next_contact_id: self.next_contact_id,
            unheld: self.unheld,
            sums_suspect: self.sums_suspect,
            balls: BodyState {
                pos: Cow::Borrowed(&balls.pos),
                vel: Cow::Borrowed(&balls.vel),
                spin: Cow::Borrowed(&balls.spin),
                force: Cow::Borrowed(&balls.force),
                moment: Cow::Borrowed(&balls.moment),
                stiffness: Cow::Borrowed(&balls.stiffness),
                orientation: Cow::Borrowed(&[]),
                momentum: Cow::Borrowed(&[]),
            },
            blocks: BodyState {
                pos: Cow::Borrowed(&blocks.pos),
                vel: Cow::Borrowed(&blocks.vel),
                spin: Cow::Borrowed(&blocks.spin),
                force: Cow::Borrowed(&blocks.force),
                moment: Cow::Borrowed(&blocks.moment),
                stiffness: Cow::Borrowed(&blocks.stiffness),
                orientation: Cow::Borrowed(&blocks.orientation),
                momentum: Cow::Borrowed(&blocks.momentum),
            },
            clumps: BodyState {
                pos: Cow::Borrowed(&clumps.pos),
                vel: Cow::Borrowed(&clumps.vel),
                spin: Cow::Borrowed(&clumps.spin),
                force: Cow::Borrowed(&clumps.force),
                moment: Cow::Borrowed(&clumps.moment),
                stiffness: Cow::Borrowed(&clumps.stiffness),
                orientation: Cow::Borrowed(&clumps.orientation),
                momentum: Cow::Borrowed(&clumps.momentum),
            },
            walls: walls.iter().map(Cow::Borrowed).collect(),
            models: self
                .models
                .iter()
                .map(|m| {
                    let lanes = m
                        .lanes
                        .iter()
                        .map(|l| LaneState {
                            store: Cow::Borrowed(&l.store),
                            lone: Cow::Borrowed(&l.lone),
                        })
                        .collect();
                    (m.n_state(), lanes)
                })
                .collect(),
            cells: self.cells.as_ref().map(Cow::Borrowed),
            cell: self.cell.as_ref().map(Cow::Borrowed),
            contact_pairs,
            proximity_ids,
            wall_info,
            installs_done: self.installs.iter().map(|(_, done)| *done).collect(),
            guard: self.guard.read(),
            energy_last: self.energy_last,
        };
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&FORMAT.to_le_bytes());
        postcard::to_extend(&state, bytes).expect("a vector takes any length")
    }

    /// Puts the state of `checkpoint` into this simulation, which must
    /// have the setup of the one it was taken from and be prepared
    /// ([`Simulation::prepare`]). The bonds broken before it are not
    /// reported again.
    ///
    /// # Panics
    /// While a view of this simulation's bodies is alive.
    pub fn restore(&mut self, checkpoint: Checkpoint) -> Result<(), CheckpointError> {
        let s = checkpoint.state;
        let mismatch = |what: &str, here: usize, there: usize| {
            CheckpointError::Mismatch(format!("{what}: {there} in the checkpoint, {here} here"))
        };
        // Every ball row, the clumps' pebbles included.
        let n_balls = self.balls().len();
        let n_blocks = self.n_blocks();
        let n_clumps = self.n_clumps();
        let n_walls = self.n_walls();
        let fits = |b: &BodyState<'_>, n: usize, rigid: bool| {
            let lens = [
                b.pos.len(),
                b.vel.len(),
                b.spin.len(),
                b.force.len(),
                b.moment.len(),
                b.stiffness.len(),
            ];
            let rot = if rigid { n } else { 0 };
            lens.iter().all(|&l| l == n) && b.orientation.len() == rot && b.momentum.len() == rot
        };
        if !fits(&s.balls, n_balls, false) {
            return Err(mismatch("balls", n_balls, s.balls.pos.len()));
        }
        if !fits(&s.blocks, n_blocks, true) {
            return Err(mismatch("blocks", n_blocks, s.blocks.pos.len()));
        }
        if !fits(&s.clumps, n_clumps, true) {
            return Err(mismatch("clumps", n_clumps, s.clumps.pos.len()));
        }
        if s.walls.len() != n_walls {
            return Err(mismatch("walls", n_walls, s.walls.len()));
        }
        for (here, there) in self.walls().iter().zip(&s.walls) {
            if here.name != there.name || here.vertices.len() != there.vertices.len() {
                return Err(CheckpointError::Mismatch(format!(
                    "wall '{}' here, '{}' with {} vertices in the checkpoint",
                    here.name,
                    there.name,
                    there.vertices.len()
                )));
            }
        }
        if s.models.len() != self.models.len() {
            return Err(mismatch(
                "contact models",
                self.models.len(),
                s.models.len(),
            ));
        }
        for (m, (n_state, lanes)) in self.models.iter().zip(&s.models) {
            if *n_state != m.n_state() || lanes.len() != m.lanes.len() {
                return Err(CheckpointError::Mismatch(format!(
                    "model '{}' has {} state slots here, {n_state} in the checkpoint",
                    m.name,
                    m.n_state()
                )));
            }
            // A lane of the six-DOF frame reads a displacement column that
            // the others do not keep.
            if let Some(saved) = lanes.iter().find(|l| l.store.six_dof != m.frame.six_dof()) {
                let frame = |six: bool| if six { "six_dof" } else { "rotations" };
                return Err(CheckpointError::Mismatch(format!(
                    "model '{}' carries its contact frames by '{}' here, by '{}' in the checkpoint",
                    m.name,
                    frame(m.frame.six_dof()),
                    frame(saved.store.six_dof)
                )));
            }
        }
        if s.installs_done.len() != self.installs.len() {
            return Err(mismatch(
                "bond installs",
                self.installs.len(),
                s.installs_done.len(),
            ));
        }

        {
            let b = BallsMut::of(&self.world);
            let (mut pos, mut vel, mut spin) = (b.pos, b.vel, b.spin);
            let (mut force, mut moment, mut stiffness) = (b.force, b.moment, b.stiffness);
            pos.copy_from_slice(&s.balls.pos);
            vel.copy_from_slice(&s.balls.vel);
            spin.copy_from_slice(&s.balls.spin);
            force.copy_from_slice(&s.balls.force);
            moment.copy_from_slice(&s.balls.moment);
            stiffness.copy_from_slice(&s.balls.stiffness);
        }
        {
            let b = BlocksMut::of(&self.world);
            let (mut pos, mut vel, mut spin) = (b.pos, b.vel, b.spin);
            let (mut force, mut moment, mut stiffness) = (b.force, b.moment, b.stiffness);
            let (mut orientation, mut momentum) = (b.orientation, b.momentum);
            pos.copy_from_slice(&s.blocks.pos);
            vel.copy_from_slice(&s.blocks.vel);
            spin.copy_from_slice(&s.blocks.spin);
            force.copy_from_slice(&s.blocks.force);
            moment.copy_from_slice(&s.blocks.moment);
            stiffness.copy_from_slice(&s.blocks.stiffness);
            orientation.copy_from_slice(&s.blocks.orientation);
            momentum.copy_from_slice(&s.blocks.momentum);
        }
        {
            let c = ClumpsMut::of(&self.world);
            let (mut pos, mut vel, mut spin) = (c.pos, c.vel, c.spin);
            let (mut force, mut moment, mut stiffness) = (c.force, c.moment, c.stiffness);
            let (mut orientation, mut momentum) = (c.orientation, c.momentum);
            pos.copy_from_slice(&s.clumps.pos);
            vel.copy_from_slice(&s.clumps.vel);
            spin.copy_from_slice(&s.clumps.spin);
            force.copy_from_slice(&s.clumps.force);
            moment.copy_from_slice(&s.clumps.moment);
            stiffness.copy_from_slice(&s.clumps.stiffness);
            orientation.copy_from_slice(&s.clumps.orientation);
            momentum.copy_from_slice(&s.clumps.momentum);
        }
        for (here, there) in self.walls_mut().iter_mut().zip(s.walls) {
            *here = there.into_owned();
        }
        for (m, (_, lanes)) in self.models.iter_mut().zip(s.models) {
            for (lane, saved) in m.lanes.iter_mut().zip(lanes) {
                lane.store = saved.store.into_owned();
                lane.lone = saved.lone.into_owned();
            }
            // Planned again for this run's threads at the next pass.
            m.plan = Default::default();
            m.holds = true;
        }
        self.cells = s.cells.map(Cow::into_owned);
        self.cell = s.cell.map(Cow::into_owned);
        self.contact_pairs = s.contact_pairs.into_iter().collect();
        self.proximity_ids = s.proximity_ids.into_iter().collect();
        self.wall_info = s.wall_info.into_iter().collect();
        for ((_, done), saved) in self.installs.iter_mut().zip(s.installs_done) {
            *done = saved;
        }
        self.guard.set(s.guard.0, s.guard.1);
        self.energy_last = s.energy_last;
        self.breaks.clear();
        self.step = s.step;
        self.time = s.time;
        self.dt = s.dt;
        self.step_start = s.step_start;
        self.next_contact_id = s.next_contact_id;
        self.unheld = s.unheld;
        self.sums_suspect = s.sums_suspect;
        self.stage_times = Default::default();
        Ok(())
    }
}

/// serde for the model outputs of a store (an sdk type, which knows
/// nothing of serde): each as its eight numbers and two words.
pub(crate) mod outputs {
    use serde::{Deserialize, Deserializer, Serializer};
    use talus_sdk::ContactOutput;

    type Flat = ([f64; 3], [f64; 3], [f64; 2], u32, u32);

    pub(crate) fn serialize<S: Serializer>(v: &[ContactOutput], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            v.iter()
                .map(|o| (o.force, o.moment, o.stiffness, o.status, o.reserved)),
        )
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<ContactOutput>, D::Error> {
        let flat = Vec::<Flat>::deserialize(d)?;
        Ok(flat
            .into_iter()
            .map(
                |(force, moment, stiffness, status, reserved)| ContactOutput {
                    force,
                    moment,
                    stiffness,
                    status,
                    reserved,
                },
            )
            .collect())
    }
}
