//! A read-only view of a simulation between cycles, for output: rows of
//! contacts, bodies and walls with public ids, plus the step, the time and
//! the model state slots each model declares.
//!
//! Reads: the bodies, the contact stores, the wall logic's links and the
//! facet owners. Writes: nothing but the contact planes of open contacts
//! the cycle skipped, which [`Simulation::snapshot`] brings up to date
//! before handing rows out.
//! Invariant: rows name bodies by their public ids, made here from the
//! dense indices: a ball's id is its index + 1, a wall's id its index + 1,
//! and a facet is its wall's id with its index (from 0) in that wall's
//! triangle list; code outside the core never sees how a contact stores
//! its ends. A snapshot borrows the simulation, so no cycle runs while one
//! is alive.

use crate::block::BlockShape;
use crate::body::{BallsRef, BlocksRef, ClumpsRef, Col, WallBody};
use crate::geometry::Region;
use crate::math::{Quat, Vec3};
use crate::piece::{PairKind, Piece, PieceKind};
use crate::sim::{ModelRuntime, Simulation};
use crate::wall::Wall;
use talus_sdk::STATUS_ACTIVE;

/// One end of a contact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PieceId {
    /// The ball of id `id`.
    Ball {
        /// Ball id (from 1, in creation order).
        id: u64,
    },
    /// The block of id `id`.
    Block {
        /// Block id (from 1, in creation order among blocks).
        id: u64,
    },
    /// Pebble `index` of the clump of id `clump`.
    Pebble {
        /// Clump id (from 1, in creation order among clumps).
        clump: u64,
        /// Pebble index in the clump's template (from 0).
        index: u32,
    },
    /// Facet `index` of the wall of id `wall`.
    Facet {
        /// Wall id (from 1, in the order walls were added).
        wall: u64,
        /// Facet index in the wall's triangle list (from 0).
        index: u32,
    },
}

impl std::fmt::Display for PieceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            PieceId::Ball { id } => write!(f, "ball {id}"),
            PieceId::Block { id } => write!(f, "block {id}"),
            PieceId::Pebble { clump, index } => write!(f, "pebble {index} of clump {clump}"),
            PieceId::Facet { wall, index } => write!(f, "facet {index} of wall {wall}"),
        }
    }
}

impl PieceId {
    /// The id of the body the piece belongs to: the ball's, block's or
    /// clump's id, or the facet's wall id.
    #[inline]
    pub fn body(self) -> u64 {
        match self {
            PieceId::Ball { id } | PieceId::Block { id } => id,
            PieceId::Pebble { clump, .. } => clump,
            PieceId::Facet { wall, .. } => wall,
        }
    }

    /// The facet index in its wall, `None` for any other piece.
    #[inline]
    pub fn facet(self) -> Option<u32> {
        match self {
            PieceId::Facet { index, .. } => Some(index),
            _ => None,
        }
    }

    /// The pebble index in its clump's template, `None` for any other
    /// piece.
    #[inline]
    pub fn pebble(self) -> Option<u32> {
        match self {
            PieceId::Pebble { index, .. } => Some(index),
            _ => None,
        }
    }

    /// The kind of the body the piece belongs to, `None` for a facet.
    #[inline]
    pub fn body_kind(self) -> Option<BodyKind> {
        match self {
            PieceId::Ball { .. } => Some(BodyKind::Ball),
            PieceId::Block { .. } => Some(BodyKind::Block),
            PieceId::Pebble { .. } => Some(BodyKind::Clump),
            PieceId::Facet { .. } => None,
        }
    }

    /// The id of piece `p` (`walls` gives a facet's wall id, `pebbles`
    /// the clump of a pebble row).
    fn of(p: Piece, sim: &Simulation, walls: &[Wall], pebbles: &Pebbles<'_>) -> PieceId {
        match p.kind() {
            PieceKind::Ball if p.index() >= pebbles.free => {
                let c = pebbles.owner[p.index()] as usize;
                PieceId::Pebble {
                    clump: c as u64 + 1,
                    index: (p.index() - pebbles.first[c] as usize) as u32,
                }
            }
            PieceKind::Ball => PieceId::Ball {
                id: ball_id(p.index()),
            },
            PieceKind::Block | PieceKind::Convex => PieceId::Block {
                id: p.index() as u64 + 1,
            },
            PieceKind::Facet => {
                let (w, f) = sim.facet_owner[p.index()];
                PieceId::Facet {
                    wall: walls[w as usize].id,
                    index: f,
                }
            }
        }
    }

    /// The public id of piece `p`.
    pub(crate) fn public(p: Piece, sim: &Simulation) -> PieceId {
        let walls = crate::body::walls(&sim.world);
        let (balls, clumps) = (sim.balls(), sim.clumps());
        let pebbles = Pebbles {
            free: sim.first_pebble_row(),
            owner: &balls.owner,
            first: &clumps.first,
        };
        PieceId::of(p, sim, &walls, &pebbles)
    }

    /// Whether the piece is a wall facet.
    #[inline]
    pub fn is_facet(self) -> bool {
        matches!(self, PieceId::Facet { .. })
    }
}

/// Where the pebble rows are: from ball row `free` on, each owned by the
/// clump `owner[row]`, whose first row is `first[clump]`.
struct Pebbles<'a> {
    free: usize,
    owner: &'a [u32],
    first: &'a [u32],
}

/// One contact as it stands after the last cycle.
#[derive(Clone, Copy, Debug)]
pub struct ContactRow<'a> {
    /// Contact id, stable for the contact's life and never reused.
    pub id: u64,
    /// End1: the lower piece of the pair (a ball before a block).
    pub end1: PieceId,
    /// End2: a ball, a block or a facet.
    pub end2: PieceId,
    /// The kind of the pair (ball-ball, ball-facet, ball-block).
    pub pair: PairKind,
    /// Index of the contact's model (see [`Snapshot::models`]).
    pub model: usize,
    /// Name of the contact's model.
    pub model_name: &'a str,
    /// Whether the contact carries force this step.
    pub active: bool,
    /// Ball-facet contacts: the id of the contact that carries this one's
    /// load in its place, as the last wall logic decided.
    pub linked_to: Option<u64>,
    /// Ball-facet contacts: the id of the proximity contact this one
    /// belongs to.
    pub proximity: Option<u64>,
    /// Ball-facet contacts: where on the facet the wall contact point lies.
    pub region: Option<Region>,
    /// Gap (m); negative is overlap.
    pub gap: f64,
    /// Contact location (m).
    pub xc: Vec3,
    /// Unit normal, from end1 to end2.
    pub n: Vec3,
    /// Contact-plane axis s.
    pub s: Vec3,
    /// Contact-plane axis t (`n = s x t`).
    pub t: Vec3,
    /// Force on end2 in the contact frame (n, s, t) (N); the normal part
    /// is positive when compressive.
    pub force_local: [f64; 3],
    /// The same force in global axes (N).
    pub force: Vec3,
    /// Moment on end2 in the contact frame: twist about n, bend about s
    /// and t (N m).
    pub moment_local: [f64; 3],
    /// The same moment in global axes (N m).
    pub moment: Vec3,
    /// The model's state slots, in the order the model declares them
    /// (see [`ModelInfo::state_slots`]).
    pub state: &'a [f64],
    /// With the six-DOF frame (see [`crate::ContactFrame`]): the
    /// generalized displacements `[u_n, u_s, u_t, phi_t, phi_bs, phi_bt]`
    /// (m, m, m, rad, rad, rad; see [`crate::contact::Displacements`]),
    /// `u_n` being [`ContactRow::gap`] (brought up to date for open
    /// contacts as the gap is).
    pub dof: Option<crate::contact::Displacements>,
}

/// The kind of a body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyKind {
    /// A ball.
    Ball,
    /// A convex polyhedral rigid block.
    Block,
    /// A clump of spherical pebbles.
    Clump,
}

impl BodyKind {
    /// The name used in output and messages.
    pub const fn name(self) -> &'static str {
        match self {
            BodyKind::Ball => "ball",
            BodyKind::Block => "block",
            BodyKind::Clump => "clump",
        }
    }
}

/// One body as it stands after the last cycle.
#[derive(Clone, Copy, Debug)]
pub struct BodyRow<'a> {
    /// Body id, from 1 in creation order within its kind.
    pub id: u64,
    /// The body's kind.
    pub kind: BodyKind,
    /// Name of the body's group.
    pub group: &'a str,
    /// Radius (m): a ball's, or the bounding radius of a block's shape or
    /// a clump's template about its centroid.
    pub radius: f64,
    /// Rotation from the body frame to the world (a block's or clump's
    /// principal frame; the identity for a ball, whose spin is not
    /// integrated into an orientation).
    pub orientation: Quat,
    /// A block's shape index (see [`Snapshot::shapes`]) or a clump's
    /// template index (see [`Snapshot::templates`]).
    pub shape: Option<u32>,
    /// Mass (kg).
    pub mass: f64,
    /// Centre (m).
    pub pos: Vec3,
    /// Velocity at the last half step (m/s).
    pub vel: Vec3,
    /// Angular velocity at the last half step (rad/s).
    pub spin: Vec3,
    /// Resultant contact force of the last cycle (N).
    pub force: Vec3,
    /// Resultant contact moment about the centre of the last cycle (N m).
    pub moment: Vec3,
}

/// One wall as it stands after the last cycle.
#[derive(Clone, Copy, Debug)]
pub struct WallRow<'a> {
    /// Wall id (from 1, in the order walls were added).
    pub id: u64,
    /// Wall name.
    pub name: &'a str,
    /// Reference point, the centre of rotation (m).
    pub centre: Vec3,
    /// Velocity of the reference point (m/s).
    pub velocity: Vec3,
    /// Angular velocity (rad/s).
    pub spin: Vec3,
    /// Total contact force on the wall (N).
    pub force: Vec3,
    /// Total contact moment about the reference point (N m).
    pub moment: Vec3,
    /// Current vertex positions (m): where the wall's motion has taken
    /// them by the end of the last cycle.
    pub vertices: &'a [Vec3],
    /// The facets as triples of indices into [`WallRow::vertices`], in
    /// the order of the facet indices of contact rows.
    pub facets: &'a [[u32; 3]],
}

/// A state slot a model declares: one value per contact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateSlot<'a> {
    /// Slot name (snake case).
    pub name: &'a str,
    /// SI unit.
    pub unit: &'a str,
    /// One-line description.
    pub doc: &'a str,
}

/// A contact model in use.
#[derive(Clone, Copy)]
pub struct ModelInfo<'a> {
    model: &'a ModelRuntime,
}

impl<'a> ModelInfo<'a> {
    /// The model's name.
    pub fn name(&self) -> &'a str {
        &self.model.name
    }

    /// How the model's contacts (of this runtime) carry their frame.
    pub fn frame(&self) -> crate::ContactFrame {
        self.model.frame
    }

    /// The state slots the model declares, in the order of
    /// [`ContactRow::state`].
    pub fn state_slots(&self) -> impl ExactSizeIterator<Item = StateSlot<'a>> + 'a {
        self.model.entry.descriptor.state.iter().map(|s| StateSlot {
            name: s.name.as_str(),
            unit: s.unit.as_str(),
            doc: s.doc.as_str(),
        })
    }
}

/// A read-only view of a simulation between cycles (see the module
/// header); made by [`Simulation::snapshot`].
pub struct Snapshot<'a> {
    sim: &'a Simulation,
    balls: BallsRef<'a>,
    blocks: BlocksRef<'a>,
    clumps: ClumpsRef<'a>,
    /// Ball rows before the first pebble.
    free: usize,
    walls: Col<'a, WallBody>,
    /// Per lane (models in order, lanes in pair-kind order), the contact
    /// planes brought up to date; empty for a view that reads the stored
    /// ones.
    planes: Vec<Vec<crate::contact::Plane>>,
}

impl Simulation {
    /// A read-only view of the simulation for output, in which the
    /// planes of the open contacts the last cycle skipped are brought up
    /// to date (their location, normal, gap and facet region, from the
    /// current positions), so every contact row describes the current
    /// geometry. The refreshed planes are copies: the stored ones, which
    /// the next cycle turns a contact's frame from, stay as they were, so
    /// taking snapshots at any steps never changes the run.
    ///
    /// # Panics
    /// While a [`crate::BallsMut`] of this simulation is alive.
    pub fn snapshot(&mut self) -> Snapshot<'_> {
        let planes = self.refreshed_planes();
        Snapshot {
            planes,
            ..self.view()
        }
    }

    /// The same view as [`Simulation::snapshot`] without its refresh: the
    /// rows of open contacts the last cycle skipped keep the location,
    /// normal, gap and region of the cycle that last resolved them; every
    /// other row is current. Cheaper than [`Simulation::snapshot`] for
    /// output that needs only bodies, walls and active contacts.
    ///
    /// # Panics
    /// While a [`crate::BallsMut`] of this simulation is alive.
    pub fn view(&self) -> Snapshot<'_> {
        Snapshot {
            sim: self,
            balls: self.balls(),
            blocks: self.blocks(),
            clumps: self.clumps(),
            free: self.first_pebble_row(),
            walls: self.walls(),
            planes: Vec::new(),
        }
    }
}

impl<'a> Snapshot<'a> {
    /// Cycles done.
    pub fn step(&self) -> u64 {
        self.sim.step
    }

    /// Simulated time (s).
    pub fn time(&self) -> f64 {
        self.sim.time
    }

    /// The periodic cell's matrix and stress, if the run has a cell (see
    /// [`Simulation::cell_state`]).
    pub fn cell(&self) -> Option<crate::cell::CellState> {
        self.sim.cell_state()
    }

    /// The contact models in use, by index (the [`ContactRow::model`] of
    /// their contacts).
    pub fn models(&self) -> impl ExactSizeIterator<Item = ModelInfo<'a>> + 'a {
        self.sim.models.iter().map(|model| ModelInfo { model })
    }

    /// Number of contacts.
    pub fn n_contacts(&self) -> usize {
        self.sim.n_contacts()
    }

    /// Every contact, model by model, each model's lane by lane (in
    /// [`PairKind::ALL`] order), each lane's in slot order.
    pub fn contacts(&self) -> impl Iterator<Item = ContactRow<'_>> + '_ {
        let sim = self.sim;
        let walls = &*self.walls;
        let pebbles = Pebbles {
            free: self.free,
            owner: &self.balls.owner,
            first: &self.clumps.first,
        };
        let lanes = sim.models.iter().enumerate();
        let lanes = lanes.flat_map(|(mi, m)| m.lanes.iter().map(move |lane| (mi, m, lane)));
        lanes.enumerate().flat_map(move |(li, (mi, m, lane))| {
            let pebbles = Pebbles { ..pebbles };
            let (st, pair) = (&lane.store, lane.pair());
            let planes = self.planes.get(li).unwrap_or(&st.plane);
            (0..st.len()).map(move |k| {
                let (p, o) = (&planes[k], &st.output[k]);
                let b = st.end2[k];
                let end2 = PieceId::of(b, sim, walls, &pebbles);
                let (region, links) = if b.is_facet() {
                    let links = sim
                        .wall_info
                        .get(&(mi as u16, pair, k as u32))
                        .copied()
                        .unwrap_or((0, 0));
                    (Some(Region::from_code(p.region)), links)
                } else {
                    (None, (0, 0))
                };
                let id_or_none = |id: u64| (id != 0).then_some(id);
                let global = |v: [f64; 3]| p.n * v[0] + p.s * v[1] + p.t * v[2];
                ContactRow {
                    id: st.id[k],
                    end1: PieceId::of(st.end1[k], sim, walls, &pebbles),
                    end2,
                    pair,
                    model: mi,
                    model_name: &m.name,
                    active: o.status == STATUS_ACTIVE,
                    linked_to: id_or_none(links.0),
                    proximity: id_or_none(links.1),
                    region,
                    gap: p.gap,
                    xc: p.xc,
                    n: p.n,
                    s: p.s,
                    t: p.t,
                    force_local: o.force,
                    force: global(o.force),
                    moment_local: o.moment,
                    moment: global(o.moment),
                    state: st.state_of(k),
                    dof: st.dof.get(k).map(|u| {
                        let mut u = *u;
                        u[0] = p.gap;
                        u
                    }),
                }
            })
        })
    }

    /// The group names, by group index; [`BodyRow::group`] is one of them.
    pub fn group_names(&self) -> &[String] {
        self.sim.group_names()
    }

    /// Number of bodies (balls, blocks and clumps; pebbles are pieces of
    /// their clumps).
    pub fn n_bodies(&self) -> usize {
        self.free + self.blocks.len() + self.clumps.len()
    }

    /// The clump templates, by index, each in its principal frame: the
    /// pebble at `c` of a clump sits at `orientation * c + centre` in the
    /// world.
    pub fn templates(&self) -> &[crate::clump::ClumpTemplate] {
        self.sim.templates()
    }

    /// The block shapes, by index, each in its principal frame: a block's
    /// vertex `v` sits at `orientation * v + centre` in the world.
    pub fn shapes(&self) -> &[BlockShape] {
        self.sim.shapes()
    }

    /// Every body: balls in index order, then blocks, then clumps, each in
    /// index order.
    pub fn bodies(&self) -> impl ExactSizeIterator<Item = BodyRow<'_>> + '_ {
        let b = &self.balls;
        let groups = self.sim.group_names();
        let (group, radius, mass) = (&*b.group, &*b.radius, &*b.mass);
        let (pos, vel, spin) = (&*b.pos, &*b.vel, &*b.spin);
        let (force, moment) = (&*b.force, &*b.moment);
        let balls = (0..self.free).map(move |i| BodyRow {
            id: ball_id(i),
            kind: BodyKind::Ball,
            group: &groups[group[i] as usize],
            radius: radius[i],
            orientation: Quat::IDENTITY,
            shape: None,
            mass: mass[i],
            pos: pos[i],
            vel: vel[i],
            spin: spin[i],
            force: force[i],
            moment: moment[i],
        });
        let k = &self.blocks;
        let shapes = self.sim.shapes();
        let blocks = (0..k.len()).map(move |i| BodyRow {
            id: i as u64 + 1,
            kind: BodyKind::Block,
            group: &groups[k.group[i] as usize],
            radius: shapes[k.shape[i] as usize].radius,
            orientation: k.orientation[i],
            shape: Some(k.shape[i]),
            mass: k.mass[i],
            pos: k.pos[i],
            vel: k.vel[i],
            spin: k.spin[i],
            force: k.force[i],
            moment: k.moment[i],
        });
        let c = &self.clumps;
        let templates = self.sim.templates();
        let clumps = (0..c.len()).map(move |i| BodyRow {
            id: i as u64 + 1,
            kind: BodyKind::Clump,
            group: &groups[c.group[i] as usize],
            radius: templates[c.template[i] as usize].radius,
            orientation: c.orientation[i],
            shape: Some(c.template[i]),
            mass: c.mass[i],
            pos: c.pos[i],
            vel: c.vel[i],
            spin: c.spin[i],
            force: c.force[i],
            moment: c.moment[i],
        });
        let n = self.n_bodies();
        Exact(balls.chain(blocks).chain(clumps), n)
    }

    /// Number of walls.
    pub fn n_walls(&self) -> usize {
        self.walls.len()
    }

    /// Every wall, in index order.
    pub fn walls(&self) -> impl ExactSizeIterator<Item = WallRow<'_>> + '_ {
        self.walls.iter().map(|w| WallRow {
            id: w.id,
            name: &w.name,
            centre: w.centre,
            velocity: w.motion.velocity,
            spin: w.motion.spin,
            force: w.force,
            moment: w.moment,
            vertices: &w.vertices,
            facets: &w.facets,
        })
    }
}

/// Public id of the ball with index `index`.
#[inline]
fn ball_id(index: usize) -> u64 {
    index as u64 + 1
}

/// An iterator with the length it is known to have (a chain of two exact
/// ones is not `ExactSizeIterator` in std).
struct Exact<I>(I, usize);

impl<I: Iterator> Iterator for Exact<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        let item = self.0.next();
        if item.is_some() {
            self.1 -= 1;
        }
        item
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.1, Some(self.1))
    }
}

impl<I: Iterator> ExactSizeIterator for Exact<I> {}

#[cfg(test)]
mod tests {
    use crate::balls::BallInit;
    use crate::geometry::Region;
    use crate::math::Vec3;
    use crate::snapshot::{BodyKind, PieceId};
    use crate::{Settings, Simulation, Timestep, Wall};

    /// Two touching balls resting on the second facet of the second of two
    /// walls, with the linear model, after one cycle.
    fn on_the_second_wall() -> Simulation {
        let mut sim = Simulation::new(Settings {
            gravity: Vec3::new(0.0, 0.0, -9.81),
            timestep: Timestep::Fixed(1e-6),
            ..Settings::default()
        });
        let (g, w) = (sim.group("grain"), sim.group("wall"));
        let root = talus_plugin_linear::root_module();
        let m = sim.add_model(talus_sdk::ModelEntry::from_abi((root.models())()[0]).unwrap());
        let props = vec![1e5, 5e4, 0.5, 0.1, 0.1];
        sim.assign(g, g, m, props.clone()).unwrap();
        sim.assign(g, w, m, props).unwrap();
        for x in [-0.3, -0.3 + 0.0019] {
            sim.add_ball(BallInit {
                pos: Vec3::new(x, 0.3, 0.00099),
                radius: 1e-3,
                density: 2500.0,
                velocity: Vec3::ZERO,
                spin: Vec3::ZERO,
                group: g,
                damping: 0.0,
                fixity: Default::default(),
            })
            .unwrap();
        }
        let far = [[0.0, 0.0, -1.0], [1.0, 0.0, -1.0], [0.0, 1.0, -1.0]];
        sim.add_wall(Wall::new("far", &far, &[[0, 1, 2]], None).unwrap(), w);
        // Facet 1 holds the points with y > x.
        let square = [
            [-1.0, -1.0, 0.0],
            [1.0, -1.0, 0.0],
            [1.0, 1.0, 0.0],
            [-1.0, 1.0, 0.0],
        ];
        let floor = Wall::new("floor", &square, &[[0, 1, 2], [0, 2, 3]], None).unwrap();
        sim.add_wall(floor, w);
        sim.cycle().unwrap();
        sim
    }

    #[test]
    fn rows_name_bodies_and_facets_by_their_public_ids() {
        let mut sim = on_the_second_wall();
        let snap = sim.snapshot();
        assert_eq!((snap.step(), snap.time()), (1, 1e-6));
        let all: Vec<_> = snap.contacts().collect();
        assert_eq!(all.len(), snap.n_contacts());
        // Facet 0's bounding sphere reaches the balls too: those contacts
        // exist, open.
        assert!(all
            .iter()
            .all(|c| c.active == (c.end2 != PieceId::Facet { wall: 2, index: 0 })));
        let mut rows: Vec<_> = all.into_iter().filter(|c| c.active).collect();
        rows.sort_by_key(|c| (c.end1.body(), c.end2.is_facet()));
        let ends: Vec<_> = rows.iter().map(|c| (c.end1, c.end2)).collect();
        let facet = PieceId::Facet { wall: 2, index: 1 };
        assert_eq!(
            ends,
            [
                (PieceId::Ball { id: 1 }, PieceId::Ball { id: 2 }),
                (PieceId::Ball { id: 1 }, facet),
                (PieceId::Ball { id: 2 }, facet),
            ]
        );
        let slots = snap.models().next().unwrap().state_slots().len();
        for c in &rows {
            assert!(c.gap < 0.0, "contact {}", c.id);
            assert_eq!(c.model_name, "linear");
            assert_eq!(c.state.len(), slots);
            assert_eq!((c.linked_to, c.proximity), (None, None));
            let expected = c.end2.is_facet().then_some(Region::Face);
            assert_eq!(c.region, expected);
            let [f_n, f_s, f_t] = c.force_local;
            assert_eq!(c.force, c.n * f_n + c.s * f_s + c.t * f_t);
            assert!(f_n > 0.0, "compressive");
        }
        let bodies: Vec<_> = snap.bodies().map(|b| (b.id, b.kind, b.group)).collect();
        assert_eq!(
            bodies,
            [(1, BodyKind::Ball, "grain"), (2, BodyKind::Ball, "grain")]
        );
        let walls: Vec<_> = snap.walls().map(|w| (w.id, w.name)).collect();
        assert_eq!(walls, [(1, "far"), (2, "floor")]);
        // A wall that does not move keeps the vertices it was given.
        let floor = snap.walls().nth(1).unwrap();
        assert_eq!(floor.facets, [[0, 1, 2], [0, 2, 3]]);
        assert_eq!(floor.vertices[2], Vec3::new(1.0, 1.0, 0.0));
        assert_eq!(snap.group_names(), ["grain", "wall"]);
    }
}
