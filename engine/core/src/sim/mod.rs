//! The simulation: its bodies, models, contacts and settings, and the
//! calls that build one (groups, balls, walls, models and their
//! assignment to group pairs).
//!
//! The cycle itself is in `crate::step`, one module per stage.

use crate::balls::BallInit;
use crate::block::BlockResolution;
use crate::blowup::BlowUpLimits;
use crate::body::{self, BallBundle, BallsMut, BallsRef, Col, ColMut, WallBody, WallBundle};
use crate::cellspace::CellSpace;
use crate::contact::{ContactFrame, ContactStore, CARRY_FORCE};
use crate::error::SetupError;
use crate::lane::Lane;
use crate::math::Vec3;
use crate::pass::segments::SegmentPlan;
use crate::pass::*;
use crate::piece::{PairKind, Piece};
use crate::step::*;
use crate::team::Team;
use crate::timestep::*;
use crate::wall::Wall;
use rustc_hash::{FxHashMap, FxHashSet};
use talus_sdk::ModelEntry;

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
    /// How block-block contacts are resolved: `Full` at the centroid of
    /// the overlap volume, `Reduced` at the centroid of the cut area.
    pub block_resolution: BlockResolution,
    /// The run's seed: what the engine draws per pair of pieces
    /// ([`talus_sdk::inputs::PAIR_RANDOM`]) follows from it.
    pub seed: u64,
    /// When a run counts as blown up (see [`crate::blowup`]).
    pub blowup: BlowUpLimits,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            gravity: Vec3::ZERO,
            timestep: Timestep::Auto {
                safety: DEFAULT_SAFETY,
            },
            cell_tolerance: None,
            block_resolution: BlockResolution::Full,
            seed: 0,
            blowup: BlowUpLimits::default(),
        }
    }
}

/// See [`Simulation::block_fallbacks`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockFallbacks {
    /// Times a block contact kept its last normal or plane.
    pub count: u64,
    /// The first: its step and its two pieces.
    pub first: Option<(u64, crate::snapshot::PieceId, crate::snapshot::PieceId)>,
}

/// A contact model in use, with its property sets and its contacts, one
/// lane per pair kind.
#[derive(Clone)]
pub struct ModelRuntime {
    /// Model name.
    pub name: String,
    /// The plugin's entry (descriptor and kernels).
    pub entry: ModelEntry,
    /// How its contacts carry their frame (every lane of the runtime the
    /// same).
    pub frame: ContactFrame,
    /// Properties per set.
    pub n_props: usize,
    /// Property sets, row-major.
    pub props: Vec<f64>,
    /// The model's contacts, one lane per pair kind in [`PairKind::ALL`]
    /// order (see [`crate::lane`]).
    pub lanes: Vec<Lane>,
    /// The cut of the model's contact pass into segments, across its
    /// lanes.
    pub(crate) plan: SegmentPlan,
    /// Whether a contact of the model may be held (see
    /// [`crate::pass::ChunkPass`]'s `holds`): true until a pass has shown
    /// otherwise.
    pub(crate) holds: bool,
}

impl ModelRuntime {
    /// The lane of the model's `pair` contacts.
    pub fn lane(&self, pair: PairKind) -> &Lane {
        &self.lanes[pair.index()]
    }

    /// The contacts of kind `pair`.
    pub fn store(&self, pair: PairKind) -> &ContactStore {
        &self.lanes[pair.index()].store
    }

    /// State slots per contact.
    pub fn n_state(&self) -> usize {
        self.entry.descriptor.state.len()
    }

    /// Number of contacts, all lanes.
    pub fn n_contacts(&self) -> usize {
        self.lanes.iter().map(|l| l.store.len()).sum()
    }
}

/// A DEM model: balls, walls, contact models and their contacts.
pub struct Simulation {
    /// Global settings.
    pub settings: Settings,
    /// The bodies: one archetype per kind (see [`crate::body`]); read
    /// them with [`Simulation::balls`] and [`Simulation::walls`].
    pub(crate) world: hecs::World,
    /// Global facet index -> (wall, facet).
    pub(crate) facet_owner: Vec<(u32, u32)>,
    /// Block shapes, by index (see [`Simulation::add_shape`]).
    pub(crate) shapes: Vec<crate::block::BlockShape>,
    /// Clump templates, by index (see [`Simulation::add_template`]).
    pub(crate) templates: Vec<crate::clump::ClumpTemplate>,
    /// Contact models in use.
    pub models: Vec<ModelRuntime>,
    pub(crate) groups: Vec<String>,
    pub(crate) assignment: FxHashMap<(u16, u16), (u16, u32)>,
    /// Block resolution per pair of groups (lower group first) where it
    /// differs from [`Settings::block_resolution`].
    pub(crate) pair_resolution: FxHashMap<(u16, u16), BlockResolution>,
    /// Block contacts that fell back on their last normal or plane.
    pub(crate) guard: crate::narrow::GuardLog,
    /// The pairs (see `pair_key`) that have a contact.
    pub(crate) contact_pairs: FxHashSet<u64>,
    /// Contact id -> proximity-contact id, from the last wall logic.
    pub(crate) proximity_ids: FxHashMap<u64, u64>,
    /// (model, lane, slot) -> (linked-to contact id, proximity id), 0 for
    /// none.
    pub(crate) wall_info: FxHashMap<(u16, PairKind, u32), (u64, u64)>,
    pub(crate) cells: Option<CellSpace>,
    /// The periodic cell, if any (see [`crate::cell`]).
    pub(crate) cell: Option<crate::cell::Cell>,
    /// The least width the periodic cell may have across a periodic edge
    /// (m); set before step 0.
    pub(crate) cell_min_width: f64,
    /// The walls cut to fit the periodic cell before step 0: name, facets
    /// before and after (see `cell_walls`).
    pub(crate) wall_cuts: Vec<(String, usize, usize)>,
    pub(crate) candidates: Vec<(Piece, Piece)>,
    /// Per-segment buffers of the contact pass, reused from step to step.
    pub(crate) segments: Vec<Segment>,
    /// Per-unit buffers of the contact pass's rigid lanes.
    pub(crate) units: crate::pass::units::Units,
    /// Whether the last contact pass produced a force or torque that may
    /// not be finite (see [`Simulation::check_sums`]).
    pub(crate) sums_suspect: bool,
    /// Per ball: moved out of its cell extent in the last law of motion.
    pub(crate) rebin: Vec<bool>,
    /// The pebble rows that moved out of their cell extent in the last
    /// clump stage, ascending.
    pub(crate) pebble_moves: Vec<u32>,
    /// Per block of [`Simulation::rebin_block`] balls of the last law of
    /// motion: its first ball that failed the blow-up screen (see
    /// [`crate::blowup::Screen`]; or `usize::MAX`), and how many of its
    /// balls it flagged for re-binning.
    pub(crate) motion_blocks: Vec<(usize, u32)>,
    pub(crate) rebin_block: usize,
    /// The smallest ball radius (m), for the blow-up screen of the law of
    /// motion; set before step 0.
    pub(crate) ball_radius_min: f64,
    /// The step and total kinetic energy (J) of the last energy check
    /// ([`Simulation::check_energy`]).
    pub(crate) energy_last: (u64, f64),
    /// Per ball: overlapping facet contacts in this step's wall logic
    /// (zero between calls).
    pub(crate) wall_touches: Vec<u8>,
    pub(crate) next_contact_id: u64,
    /// Per ball: the stiffness of one just-touching contact with the
    /// stiffest model its group is assigned (N/m), the floor of its
    /// timestep stiffness.
    pub(crate) k_probe: Vec<f64>,
    /// Per assigned pair of groups: the stiffness its model reports for
    /// the probe contact (N/m; see [`Simulation::probe_models`]).
    pub(crate) probe_k: FxHashMap<(u16, u16), f64>,
    /// Per block: the same floor as `k_probe` (N/m).
    pub(crate) k_probe_blocks: Vec<f64>,
    /// Per clump: the same floor as `k_probe` (N/m).
    pub(crate) k_probe_clumps: Vec<f64>,
    /// Per block shape and per clump template, set as each is added: how
    /// much lighter a body of it is at its most mobile contact point than
    /// at its centroid (see [`crate::timestep::turn_factor`]).
    pub(crate) turn_shapes: Vec<f64>,
    pub(crate) turn_templates: Vec<f64>,
    /// Bond installs (see [`Simulation::install_bonds`]), each with
    /// whether it has happened.
    pub(crate) installs: Vec<(crate::bond::BondInstall, bool)>,
    /// Bonds broken since the last [`Simulation::take_bond_breaks`].
    pub(crate) breaks: Vec<crate::bond::BondBreak>,
    /// Whether a contact stopped asking to be held in the last contact
    /// pass: the next detection looks at every contact, not only those
    /// whose pieces moved.
    pub(crate) unheld: bool,
    /// Simulated time at the start of the current step (s).
    pub(crate) step_start: f64,
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
    pub(crate) team: Option<Team>,
    /// The step from which a team that failed to start is tried again.
    pub(crate) team_retry: u64,
    /// Which loop the contact pass runs on chunks of kernels that can
    /// compute ahead: `None` chooses by chunk (see
    /// `pass::run_chunk_any`), `Some` always the one with look-ahead or
    /// always the one without, so that tests can hold the two to the same
    /// bits.
    pub(crate) look_ahead: Option<bool>,
}

impl Simulation {
    /// An empty simulation.
    pub fn new(settings: Settings) -> Simulation {
        Simulation {
            settings,
            facet_owner: Vec::new(),
            shapes: Vec::new(),
            templates: Vec::new(),
            models: Vec::new(),
            world: hecs::World::new(),
            groups: Vec::new(),
            assignment: FxHashMap::default(),
            pair_resolution: FxHashMap::default(),
            guard: crate::narrow::GuardLog::new(),
            contact_pairs: FxHashSet::default(),
            proximity_ids: FxHashMap::default(),
            wall_info: FxHashMap::default(),
            cells: None,
            cell: None,
            cell_min_width: 0.0,
            wall_cuts: Vec::new(),
            candidates: Vec::new(),
            segments: Vec::new(),
            units: Default::default(),
            sums_suspect: false,
            rebin: Vec::new(),
            pebble_moves: Vec::new(),
            motion_blocks: Vec::new(),
            rebin_block: 1,
            ball_radius_min: 0.0,
            energy_last: (0, 0.0),
            wall_touches: Vec::new(),
            next_contact_id: 1,
            k_probe: Vec::new(),
            probe_k: FxHashMap::default(),
            k_probe_blocks: Vec::new(),
            k_probe_clumps: Vec::new(),
            turn_shapes: Vec::new(),
            turn_templates: Vec::new(),
            installs: Vec::new(),
            breaks: Vec::new(),
            unheld: false,
            step_start: 0.0,
            step: 0,
            time: 0.0,
            dt: 0.0,
            stage_times: StageTimes::default(),
            team: None,
            team_retry: 0,
            look_ahead: None,
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

    /// Adds a ball; returns its id (dense index + 1). Balls are added
    /// before any clump (whose pebbles take the ball rows after them).
    pub fn add_ball(&mut self, b: BallInit) -> Result<u64, SetupError> {
        let id = self.n_balls() as u64 + 1;
        if self.n_clumps() > 0 {
            return Err(SetupError::Ball {
                id,
                message: "balls are added before clumps (the clumps' pebbles follow the balls)"
                    .into(),
            });
        }
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
        self.world.spawn(BallBundle::new(&b));
        Ok(id)
    }

    /// Adds a wall in group `group`; returns its id (1-based).
    pub fn add_wall(&mut self, mut wall: Wall, group: u16) -> u64 {
        let index = self.n_walls() as u32;
        wall.id = index as u64 + 1;
        wall.group = group;
        for f in 0..wall.facets.len() {
            self.facet_owner.push((index, f as u32));
        }
        self.world.spawn(WallBundle::new(wall));
        wall_id(index)
    }

    /// Every ball's columns, read-only (index `i` is the ball of id `i + 1`;
    /// the rows from [`Simulation::n_balls`] on are the pebbles of the
    /// clumps, see [`crate::clump`]).
    ///
    /// # Panics
    /// While a [`BallsMut`] of this simulation is alive.
    pub fn balls(&self) -> BallsRef<'_> {
        BallsRef::of(&self.world)
    }

    /// Every ball's columns, to change the state of balls between cycles.
    pub fn balls_mut(&mut self) -> BallsMut<'_> {
        BallsMut::of(&self.world)
    }

    /// Every wall, in index order (the wall of id `w + 1` at `w`).
    pub fn walls(&self) -> Col<'_, WallBody> {
        body::walls(&self.world)
    }

    /// Every wall, to change walls between cycles.
    pub fn walls_mut(&mut self) -> ColMut<'_, WallBody> {
        body::walls_mut(&self.world)
    }

    /// Number of balls (not counting the clumps' pebbles).
    pub fn n_balls(&self) -> usize {
        self.first_pebble_row()
    }

    /// Number of walls.
    pub fn n_walls(&self) -> usize {
        self.walls().len()
    }

    /// Registers a model whose contacts carry their frame by the default
    /// update; returns its index.
    pub fn add_model(&mut self, entry: ModelEntry) -> usize {
        self.add_model_with_frame(entry, ContactFrame::Rotations)
    }

    /// Registers a model whose contacts carry their frame as `frame` says;
    /// returns its index. One model may be registered once per frame: its
    /// pairings that choose another frame are another runtime of it, with
    /// lanes of their own, so that each lane's loop has one frame update.
    pub fn add_model_with_frame(&mut self, entry: ModelEntry, frame: ContactFrame) -> usize {
        let n_state = entry.descriptor.state.len();
        self.models.push(ModelRuntime {
            name: entry.descriptor.name.to_string(),
            n_props: entry.descriptor.properties.len(),
            entry,
            frame,
            props: Vec::new(),
            lanes: PairKind::ALL
                .iter()
                .map(|&p| Lane::new(p, n_state, frame))
                .collect(),
            plan: SegmentPlan::default(),
            holds: true,
        });
        self.models.len() - 1
    }

    /// Index of the model named `name` with the default frame update, if
    /// registered.
    pub fn model_index(&self, name: &str) -> Option<usize> {
        self.model_index_with_frame(name, ContactFrame::Rotations)
    }

    /// Index of the model named `name` registered with `frame`, if any.
    pub fn model_index_with_frame(&self, name: &str, frame: ContactFrame) -> Option<usize> {
        self.models
            .iter()
            .position(|m| m.name == name && m.frame == frame)
    }

    /// Assigns `model` with property values `props` (descriptor order) to
    /// contacts between groups `g1` and `g2`. A shorter list leaves the
    /// trailing properties at their declared defaults (an error for one
    /// without a default), so that code written before a model gained a
    /// property keeps working.
    pub fn assign(
        &mut self,
        g1: u16,
        g2: u16,
        model: usize,
        mut props: Vec<f64>,
    ) -> Result<(), SetupError> {
        let m = &mut self.models[model];
        let declared = &m.entry.descriptor.properties;
        if props.len() < m.n_props && declared.len() == m.n_props {
            for d in &declared[props.len()..] {
                match d.default {
                    Some(v) => props.push(v),
                    None => break,
                }
            }
        }
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

    /// Resolves the block contacts between groups `g1` and `g2` (block
    /// with block, and block with facet) in `resolution` instead of the
    /// run's [`Settings::block_resolution`].
    pub fn set_block_resolution(&mut self, g1: u16, g2: u16, resolution: BlockResolution) {
        self.pair_resolution
            .insert((g1.min(g2), g1.max(g2)), resolution);
    }

    /// Block contacts whose overlap the kernels could not trust (a volume
    /// above either block's, a centroid outside either, no overlap
    /// polyhedron, a failed query): how many times one kept its last
    /// normal or plane, and the first (step and pieces).
    pub fn block_fallbacks(&self) -> BlockFallbacks {
        let (count, first) = self.guard.read();
        let first = first.map(|(step, a, b)| {
            let id = |p| crate::snapshot::PieceId::public(p, self);
            (step, id(a), id(b))
        });
        BlockFallbacks { count, first }
    }

    /// The first failure of a plugin shape's query since the last call, as
    /// the error that stops the run.
    pub(crate) fn shape_fault(&self) -> Result<(), crate::error::StepError> {
        let Some((step, a, b, message)) = self.guard.take_fault() else {
            return Ok(());
        };
        let blocks = crate::body::BlocksRef::of(&self.world);
        let (shape, kind) = [a, b]
            .into_iter()
            .filter(|p| p.is_convex())
            .map(|p| &self.shapes[blocks.shape[p.index()] as usize])
            .find_map(|s| Some((s.name.clone(), s.convex.as_ref()?.shape.kind().to_string())))
            .unwrap_or_default();
        let id = |p| crate::snapshot::PieceId::public(p, self).to_string();
        Err(crate::error::StepError::Shape {
            shape,
            kind,
            ends: format!("{} and {}", id(a), id(b)),
            step,
            message,
        })
    }

    /// Bonds every contact between `install.groups` whose gap is below
    /// `install.gap`, at `install.at` (see [`crate::bond`]). The pair of
    /// groups must have a model, and one that is not active only under
    /// overlap: a bond holds in tension, which such a model cannot. Bodies
    /// of plugin shapes do not bond.
    pub fn install_bonds(&mut self, install: crate::bond::BondInstall) -> Result<(), SetupError> {
        let (a, b) = install.groups;
        let name = |g: u16| self.groups.get(g as usize).cloned().unwrap_or_default();
        let pair = format!("groups '{}' and '{}'", name(a), name(b));
        let Some(&(m, _)) = self.assignment.get(&(a.min(b), a.max(b))) else {
            return Err(SetupError::Bonds {
                message: format!("{pair} have no contact model to bond with"),
            });
        };
        let model = &self.models[m as usize];
        if model.entry.descriptor.activity == talus_sdk::Activity::Overlap {
            return Err(SetupError::Bonds {
                message: format!(
                    "{pair} are assigned model '{}', which is active only while the pieces \
                     overlap and so cannot hold a bond; assign a bonding model such as \
                     'linearbond'",
                    model.name
                ),
            });
        }
        let blocks = crate::body::BlocksRef::of(&self.world);
        // Convex bodies of plugin shapes do not bond: their contacts have
        // no section to give a bond.
        let shapes = &self.shapes;
        let has_convex = |g: u16| {
            (0..blocks.len())
                .any(|i| blocks.group[i] == g && shapes[blocks.shape[i] as usize].convex.is_some())
        };
        if has_convex(a) || has_convex(b) {
            return Err(SetupError::Bonds {
                message: format!(
                    "{pair}: a group holds bodies of a plugin shape, which do not bond \
                     (balls, clumps and blocks do)"
                ),
            });
        }
        drop(blocks);
        if !(install.gap.is_finite()) {
            return Err(SetupError::Bonds {
                message: format!(
                    "{pair}: the bonding gap must be finite, got {}",
                    install.gap
                ),
            });
        }
        self.installs.push((install, false));
        Ok(())
    }

    /// The bonds broken since the last call, in the order they broke (by
    /// step, then model, pair kind and contact slot).
    pub fn take_bond_breaks(&mut self) -> Vec<crate::bond::BondBreak> {
        std::mem::take(&mut self.breaks)
    }

    /// Number of contacts.
    pub fn n_contacts(&self) -> usize {
        self.models.iter().map(ModelRuntime::n_contacts).sum()
    }

    /// Number of active contacts in the last cycle: counted on the carry
    /// column, one byte per contact, which holds the status of every
    /// contact's last model call (the outputs are ~100 bytes apart).
    pub fn n_active(&self) -> usize {
        let lanes = self.models.iter().flat_map(|m| &m.lanes);
        lanes
            .map(|l| l.store.carry.iter().filter(|&&c| c == CARRY_FORCE).count())
            .sum()
    }
}

/// Public id of the wall with index `index`.
#[inline]
pub fn wall_id(index: u32) -> u64 {
    index as u64 + 1
}

mod setup;
#[cfg(test)]
mod tests;
