//! The narrow phase of the contact pass: one kernel per pair kind
//! ([`PairKernel`]) gives a contact's plane from its pieces, the motion of
//! its second end, the lever arms of its force and where end2's share of
//! the sums goes; the frame update and the relative-motion increments that
//! make the model input are shared by every kind ([`resolve_one`]).
//!
//! Reads: piece kinematics, the wall stage's closest facet points.
//! Writes: the contact plane and the model input.
//! Invariants: n points from end1 to end2, n = s x t, gap < 0 is overlap.
//! A kernel is chosen per lane before step 0 (see [`crate::lane`]), so the
//! loops that call it hold no branch on the pair kind.

use crate::block::BlockResolution;
use crate::block::BlockShape;
use crate::body::{walls, BallsRef, BlocksRef};
pub(crate) use crate::cell_walls::FacetImage;
use crate::contact::six_dof::{self, FrameUpdate};
use crate::contact::{
    self, Applied, Displacements, EndMotion, Plane, Setup, ENGINE_BITS, HELD, RELEASED,
};
use crate::inputs::Geometry;
use crate::math::{Quat, Vec3};
use crate::piece::{PairKind, Piece};
use crate::sim::*;
use crate::sums::{End, Sums};
use crate::wall::Wall;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use talus_sdk::{ContactInput, ContactOutput, STATUS_ACTIVE, STATUS_INACTIVE};

mod ball_ball;
mod ball_block;
mod ball_facet;
mod block_block;
pub(crate) mod block_facet;
mod convex;
mod convex_facet;
mod facet_stage;

pub(crate) use ball_ball::BallBall;
pub(crate) use ball_block::BallBlock;
pub(crate) use ball_facet::BallFacet;
pub(crate) use block_block::BlockBlock;
pub(crate) use block_facet::BlockFacet;
pub(crate) use convex::{BallConvex, BlockConvex, ConvexConvex};
pub(crate) use convex_facet::ConvexFacet;

/// The masses of the bodies, for the effective mass of a new contact.
#[derive(Clone, Copy)]
pub(crate) struct Masses<'a> {
    pub(crate) balls: &'a [f64],
    pub(crate) blocks: &'a [f64],
}

/// What the kernels read of the bodies in one stage: the ball columns,
/// the block columns and shapes, the walls and each global facet's (wall,
/// facet).
#[derive(Clone, Copy)]
pub(crate) struct Scene<'a> {
    pub(crate) pos: &'a [Vec3],
    pub(crate) vel: &'a [Vec3],
    pub(crate) spin: &'a [Vec3],
    pub(crate) radius: &'a [f64],
    pub(crate) blocks: BlockScene<'a>,
    pub(crate) walls: &'a [Wall],
    pub(crate) owner: &'a [(u32, u32)],
    /// The periodic cell, if the run has one: contacts between pieces
    /// that repeat (balls, pebbles, blocks, convex bodies) take the
    /// nearest image of end2, and every such end moves with the mean
    /// field (see [`crate::cell`]).
    pub(crate) cell: Option<&'a crate::cell::Cell>,
}

/// The block columns the kernels read, with where they note the
/// contacts whose geometry they could not trust.
#[derive(Clone, Copy)]
pub(crate) struct BlockScene<'a> {
    pub(crate) pos: &'a [Vec3],
    pub(crate) vel: &'a [Vec3],
    pub(crate) spin: &'a [Vec3],
    pub(crate) orientation: &'a [Quat],
    pub(crate) shape: &'a [u32],
    pub(crate) shapes: &'a [BlockShape],
    /// The run's record of block contacts that fell back on their last
    /// normal or plane, and the step being resolved.
    pub(crate) guard: &'a GuardLog,
    pub(crate) step: u64,
}

static NO_GUARD: GuardLog = GuardLog::new();

impl Default for BlockScene<'_> {
    fn default() -> Self {
        BlockScene {
            pos: &[],
            vel: &[],
            spin: &[],
            orientation: &[],
            shape: &[],
            shapes: &[],
            guard: &NO_GUARD,
            step: 0,
        }
    }
}

/// Block contacts whose overlap the kernels could not trust (a volume
/// above either block's, a centroid outside either, no polyhedron, a
/// failed query): how many times, and the first (lowest step, then
/// lowest pair of pieces), so that the count and the report are the
/// same on any thread count.
///
/// It also keeps the first failure of a plugin shape's query (lowest step,
/// then pair of pieces), which stops the run after the stage.
#[derive(Debug, Default)]
pub(crate) struct GuardLog {
    count: AtomicU64,
    first: Mutex<Option<(u64, Piece, Piece)>>,
    fault: Mutex<Option<ShapeFault>>,
}

/// A plugin shape's query that failed: the step, the contact's pieces and
/// the shape's message.
pub(crate) type ShapeFault = (u64, Piece, Piece, String);

impl GuardLog {
    pub(crate) const fn new() -> GuardLog {
        GuardLog {
            count: AtomicU64::new(0),
            first: Mutex::new(None),
            fault: Mutex::new(None),
        }
    }

    /// Notes that a shape query of the contact of `a` and `b` failed at
    /// `step` with `message`.
    pub(crate) fn fail(&self, step: u64, a: Piece, b: Piece, message: String) {
        let mut fault = self.fault.lock().unwrap_or_else(|e| e.into_inner());
        if fault
            .as_ref()
            .is_none_or(|f| (step, a, b) < (f.0, f.1, f.2))
        {
            *fault = Some((step, a, b, message));
        }
    }

    /// The first failure noted since the last call, if any.
    pub(crate) fn take_fault(&self) -> Option<ShapeFault> {
        self.fault.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Notes that the contact of `a` and `b` fell back at `step`.
    pub(crate) fn note(&self, step: u64, a: Piece, b: Piece) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        if first.is_none_or(|f| (step, a, b) < f) {
            *first = Some((step, a, b));
        }
    }

    /// Sets the count and the first (a run continued from a checkpoint).
    pub(crate) fn set(&self, count: u64, first: Option<(u64, Piece, Piece)>) {
        self.count.store(count, Ordering::Relaxed);
        *self.first.lock().unwrap_or_else(|e| e.into_inner()) = first;
    }

    /// The count and the first, as noted so far.
    pub(crate) fn read(&self) -> (u64, Option<(u64, Piece, Piece)>) {
        let first = *self.first.lock().unwrap_or_else(|e| e.into_inner());
        (self.count.load(Ordering::Relaxed), first)
    }
}

impl<'a> BlockScene<'a> {
    /// The columns of `blocks`, the shape table and the guard log, at
    /// `step`.
    pub(crate) fn of(
        blocks: &'a BlocksRef<'a>,
        shapes: &'a [BlockShape],
        guard: &'a GuardLog,
        step: u64,
    ) -> Self {
        BlockScene {
            pos: &blocks.pos,
            vel: &blocks.vel,
            spin: &blocks.spin,
            orientation: &blocks.orientation,
            shape: &blocks.shape,
            shapes,
            guard,
            step,
        }
    }
}

/// What a kernel computes of a contact's plane before the contact's turn
/// comes (see [`PairKernel::ahead`]): for two balls, end2's centre, the
/// offset of the centres, its length and the reciprocal of that, whose
/// square root and division would otherwise hold up the frame update,
/// which waits on the normal.
#[derive(Clone, Copy, Default)]
pub(crate) struct Ahead {
    /// End2's centre (its image nearest to end1 in a periodic cell).
    pub(crate) xb: Vec3,
    /// `xb - x1`.
    pub(crate) d_vec: Vec3,
    /// `|d_vec|`.
    pub(crate) d: f64,
    /// `1 / d`.
    pub(crate) inv: f64,
    /// Whether the values above were computed (false by default, and for
    /// a released contact, which the kernel's `find` resolves).
    pub(crate) ready: bool,
}

/// The plane of a contact as its kernel finds it, with the ends' motion.
pub(crate) struct Found {
    pub(crate) n: Vec3,
    pub(crate) gap: f64,
    pub(crate) xc: Vec3,
    pub(crate) end1: EndMotion,
    pub(crate) end2: EndMotion,
    /// Region code of a facet's contact point; 0 for other kinds.
    pub(crate) region: u8,
    /// The radii the model input gives for the ends (a ball's radius; 0
    /// for a facet or a block).
    pub(crate) radius: [f64; 2],
}

/// What a bonded contact's kernel gives in place of a resolution: the
/// ends' motion and the radii of the model input (see
/// [`PairKernel::carried`]).
pub(crate) struct Carried {
    pub(crate) end1: EndMotion,
    pub(crate) end2: EndMotion,
    pub(crate) radius: [f64; 2],
}

/// The narrow phase of one pair kind. Every method is called in a loop
/// over one lane's contacts, so it is inlined there: the lane's loop is
/// monomorphic.
pub(crate) trait PairKernel {
    /// The pair kind the kernel resolves.
    const PAIR: PairKind;

    /// Values the kernel keeps per contact from step to step (its warm
    /// starts), in the store's cache column; zero for most kinds.
    const CACHE: usize = 0;

    /// Whether the kernel resolves a contact surface of the pair (blocks
    /// with blocks or facets), so that its lane carries the inputs only
    /// such pairs have (`InputInfo::every_batch` false).
    const SURFACE: bool = false;

    /// Sets up a new contact's cache: `resolution` is the block
    /// resolution of its pair of groups.
    fn init(_cache: &mut [f64], _resolution: BlockResolution) {}

    /// The contact plane of the contact between pieces `a` and `b`, and
    /// their motion, `cache` being the contact's [`Self::CACHE`] values.
    /// With `released` (its model released it while open), `None` when it
    /// is still apart: nothing changes for the model then, and the plane
    /// is left as it was.
    fn find(
        scene: &Scene<'_>,
        plane: &mut Plane,
        cache: &mut [f64],
        a: Piece,
        b: Piece,
        released: bool,
    ) -> Option<Found>;

    /// Whether the pass may compute the first part of each contact's
    /// resolution ([`Self::ahead`]) while the contact before it is
    /// resolved, and hand it to [`Self::find_ahead`].
    const AHEAD: bool = false;

    /// The part of [`Self::find`] that reads only the pieces, computed
    /// for the next contact while this one is resolved (see [`Ahead`]);
    /// `released` as for [`Self::find`]. Only called where
    /// [`Self::AHEAD`].
    #[inline(always)]
    fn ahead(_scene: &Scene<'_>, _a: Piece, _b: Piece, _released: bool) -> Ahead {
        Ahead::default()
    }

    /// [`Self::find`] with what [`Self::ahead`] gave for the contact (or
    /// the default [`Ahead`], not ready, where the pass made none): the
    /// same plane and motion to the bit.
    #[inline(always)]
    fn find_ahead(
        scene: &Scene<'_>,
        plane: &mut Plane,
        cache: &mut [f64],
        a: Piece,
        b: Piece,
        released: bool,
        _ahead: &Ahead,
    ) -> Option<Found> {
        Self::find(scene, plane, cache, a, b, released)
    }

    /// Whether the last [`Self::find`] moved the contact's point to
    /// another feature of an end whose shape has features (the sdk's
    /// `FeatureRule::ByModel`): the contact then takes over from itself
    /// as a new one by its model's rules (see [`resolve_one`]).
    #[inline(always)]
    fn took_over(_cache: &[f64]) -> bool {
        false
    }

    /// The moments of force `f` (global axes, on end2) about each end's
    /// reference point, `(x_c - x_1) x f` and `(x_c - x_2) x f`.
    fn lever(
        scene: &Scene<'_>,
        p: &Plane,
        o: &ContactOutput,
        f: Vec3,
        a: Piece,
        b: Piece,
    ) -> (Vec3, Vec3);

    /// Adds end1's share of what the contact applies (minus the force).
    fn add_end1(sums: &mut Sums<'_>, a: Piece, ap: &Applied);

    /// Adds end2's share of what the contact applies, `carry` being the
    /// contact's [`contact::ContactStore::carry`] code.
    fn add_end2(sums: &mut Sums<'_>, scene: &Scene<'_>, b: Piece, ap: &Applied, carry: u8);

    /// The geometry of a resolved contact, for the optional model inputs.
    fn geometry(scene: &Scene<'_>, plane: &Plane, cache: &[f64], a: Piece, b: Piece) -> Geometry;

    /// Brings the plane (location, normal, gap; region for facets) of an
    /// open contact that the cycle skipped up to date.
    fn refresh(scene: &Scene<'_>, plane: &mut Plane, cache: &mut [f64], a: Piece, b: Piece);

    /// The effective inertial mass of a contact between `a` and `b`, from
    /// the balls' and the blocks' masses (kg).
    fn effective_mass(masses: &Masses<'_>, a: Piece, b: Piece) -> f64;

    /// Whether a bonded contact of this kind keeps the plane it had when
    /// it bonded, carried with its pieces' relative motion (seed 001's
    /// incremental contact location for blocks), rather than resolving
    /// it again each step as ball and facet contacts do.
    const CARRIES_BONDS: bool = false;

    /// For a bonded ([`HELD`]) contact of a kind that
    /// [`Self::CARRIES_BONDS`]: its ends' motion and the radii of its
    /// model input, with `plane` the plane being carried. The kernel may
    /// prepare its cache for the resolution that follows the bond's
    /// break.
    #[inline(always)]
    fn carried(
        _scene: &Scene<'_>,
        _plane: &Plane,
        _cache: &mut [f64],
        _a: Piece,
        _b: Piece,
    ) -> Option<Carried> {
        None
    }

    /// The radii the model input gives for a contact that bonds in this
    /// step, `radius` being those its kernel found; a bond's section is
    /// made from them, so a kernel whose ends have no radius gives one
    /// here (and the same one in [`Self::carried`] while the bond lasts).
    #[inline(always)]
    fn bond_radius(_cache: &[f64], radius: [f64; 2]) -> [f64; 2] {
        radius
    }
}

impl Simulation {
    /// The contact planes of every lane (models in order, lanes in pair
    /// kind order) with those of open contacts that the cycle skipped
    /// (location, normal, gap) brought up to date, for output. Frames of
    /// open contacts of overlap-only models are not maintained (see
    /// `docs/physics.md`).
    pub(crate) fn refreshed_planes(&self) -> Vec<Vec<contact::Plane>> {
        let balls = BallsRef::of(&self.world);
        let blocks = BlocksRef::of(&self.world);
        let walls = walls(&self.world);
        let scene = Scene {
            pos: &balls.pos,
            vel: &balls.vel,
            spin: &balls.spin,
            radius: &balls.radius,
            // Output only: what it meets is not the cycle's to report.
            blocks: BlockScene::of(&blocks, &self.shapes, &NO_GUARD, self.step),
            walls: &walls,
            owner: &self.facet_owner,
            cell: self.cell.as_ref(),
        };
        let lanes = self.models.iter().flat_map(|m| &m.lanes);
        lanes
            .map(|lane| (lane.kernel.refresh)(&scene, &lane.store))
            .collect()
    }
}

/// The geometry of a resolved contact for the optional model inputs, from
/// its plane and its ends' radii and reference points.
#[inline]
pub(crate) fn plane_geometry(
    plane: &Plane,
    r1: f64,
    r2: Option<f64>,
    x1: Vec3,
    x2: Vec3,
) -> Geometry {
    Geometry {
        gap: plane.gap,
        r1,
        r2,
        x1,
        x2,
        xc: plane.xc,
        frame: [plane.n, plane.s, plane.t],
        overlap: None,
        random: [0.5; 2],
    }
}

/// The motion of ball `i` (centre, velocity, spin).
#[inline(always)]
pub(crate) fn ball_motion(scene: &Scene<'_>, i: usize) -> EndMotion {
    let (x, v) = (scene.pos[i], scene.vel[i]);
    EndMotion {
        x,
        // In a periodic cell the stored velocity is the fluctuation: the
        // mean field at the centre makes the total.
        v: match scene.cell {
            None => v,
            Some(c) => v + c.mean_velocity(x),
        },
        w: scene.spin[i],
    }
}

/// The centre of ball `b`'s image nearest to `x1`, end1's centre when
/// `b` is end2 of a contact (see [`crate::cell::Cell::image_shift`]); the
/// centre itself without a cell.
#[inline(always)]
pub(crate) fn image_centre(scene: &Scene<'_>, x1: Vec3, b: usize) -> Vec3 {
    let x = scene.pos[b];
    match scene.cell {
        None => x,
        Some(c) => x + c.image_shift(x1, x),
    }
}

/// The total velocity of ball `b` at its image centred at `x`: the
/// stored velocity with the mean field at `x` in a periodic cell.
#[inline(always)]
pub(crate) fn image_velocity(scene: &Scene<'_>, x: Vec3, b: usize) -> Vec3 {
    let v = scene.vel[b];
    match scene.cell {
        None => v,
        Some(c) => v + c.mean_velocity(x),
    }
}

/// The centroid of row `j` of the block archetype (a block or a convex
/// body) as end2 of a contact whose end1 is at `x1`: in a periodic cell
/// its image nearest to `x1`, as [`image_centre`] takes a ball's. Every
/// query of the pair places end2 there, so a pair across a face meets as
/// the same pair inside.
#[inline(always)]
pub(crate) fn rigid_image(scene: &Scene<'_>, x1: Vec3, j: usize) -> Vec3 {
    let x = scene.blocks.pos[j];
    match scene.cell {
        None => x,
        Some(c) => x + c.image_shift(x1, x),
    }
}

/// The motion of row `i` of the block archetype with its centroid at `x`
/// (its own, or the image [`rigid_image`] gives): in a periodic cell the
/// stored (fluctuating) velocity plus the mean field at `x`, as for a
/// ball.
#[inline(always)]
pub(crate) fn rigid_motion(scene: &Scene<'_>, i: usize, x: Vec3) -> EndMotion {
    let v = scene.blocks.vel[i];
    EndMotion {
        x,
        v: match scene.cell {
            None => v,
            Some(c) => v + c.mean_velocity(x),
        },
        w: scene.blocks.spin[i],
    }
}

/// The motion of facet `f` of `wall` at a contact, the facet moved to
/// the body by `image` ([`FacetImage`]; none without a periodic cell): the
/// wall's rigid motion about its centre, or for a deforming facet the
/// material velocity at its contact point `wall_point` (a point of the
/// facet so moved), without a spin of its own (reported at the contact
/// location `xc`).
#[inline(always)]
pub(crate) fn facet_motion(
    wall: &Wall,
    f: usize,
    (wall_point, xc): (Vec3, Vec3),
    image: FacetImage,
) -> EndMotion {
    if wall.vertex_velocity.is_empty() {
        EndMotion {
            x: wall.centre + image.shift,
            v: wall.motion.velocity + image.drift,
            w: wall.motion.spin,
        }
    } else {
        EndMotion {
            x: xc,
            v: wall.point_velocity(f, wall_point - image.shift) + image.drift,
            w: Vec3::ZERO,
        }
    }
}

/// Adds end1's share to ball `a`: minus the force, its moment.
#[inline(always)]
pub(crate) fn add_ball_end1(sums: &mut Sums<'_>, a: Piece, ap: &Applied) {
    sums.ball(
        a.index() as u32,
        End::One,
        ap.force,
        ap.torque1,
        ap.stiffness,
    );
}

/// Adds one end's share to block `p`: the force (minus it for end1) and
/// that end's moment.
#[inline(always)]
pub(crate) fn add_block_end(sums: &mut Sums<'_>, p: Piece, end: End, ap: &Applied) {
    let torque = match end {
        End::One => ap.torque1,
        End::Two => ap.torque2,
    };
    sums.block(p.index() as u32, end, ap.force, torque, ap.stiffness);
}

/// The planes of a lane's contacts with those of its released contacts
/// brought up to date by [`PairKernel::refresh`], on copies: the store
/// (and the warm starts the next cycle begins from) stays as the cycle
/// left it, so recording never changes a run.
pub(crate) fn refresh_lane<K: PairKernel>(
    scene: &Scene<'_>,
    st: &contact::ContactStore,
) -> Vec<contact::Plane> {
    let mut planes = st.plane.clone();
    let mut cache = st.cache.clone();
    let n = st.len().div_ceil(contact::BATCH);
    let caches = contact::cache_chunks(&mut cache, K::CACHE, contact::BATCH, n);
    planes
        .par_chunks_mut(contact::BATCH)
        .zip(st.setup.par_chunks(contact::BATCH))
        .zip(caches)
        .zip(
            st.end1
                .par_chunks(contact::BATCH)
                .zip(st.end2.par_chunks(contact::BATCH)),
        )
        .for_each(|(((plane, setup), cache), (end1, end2))| {
            for k in 0..plane.len() {
                if setup[k].flags & RELEASED != 0 {
                    let cache = &mut cache[k * K::CACHE..(k + 1) * K::CACHE];
                    K::refresh(scene, &mut plane[k], cache, end1[k], end2[k]);
                }
            }
        });
    planes
}

/// Which ends of a pair kind are balls (or pebbles): those whose branch
/// vector the no-ratchet choice of the six-DOF frame takes along the
/// normal.
pub(crate) const fn ball_ends(pair: PairKind) -> [bool; 2] {
    match pair {
        PairKind::BallBall => [true, true],
        PairKind::BallFacet | PairKind::BallBlock | PairKind::BallConvex => [true, false],
        _ => [false, false],
    }
}

/// The frame update and the increments of a contact whose plane (location,
/// gap) is this step's and whose normal is `n`, by the lane's frame update
/// `F`; `u` is the contact's six-DOF displacements (not read by the
/// default update).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn frame_and_increments<K: PairKernel, F: FrameUpdate>(
    plane: &mut Plane,
    u: &mut Displacements,
    n: Vec3,
    end1: &EndMotion,
    end2: &EndMotion,
    radius: [f64; 2],
    dt: f64,
    input: &mut ContactInput,
) {
    if F::SIX_DOF {
        let branches = six_dof::Branches {
            radius,
            ball: ball_ends(K::PAIR),
            no_ratchet: F::NO_RATCHET,
        };
        six_dof::update(plane, u, n, (end1, end2), &branches, dt, input);
    } else {
        contact::update_frame(plane, n, end1.w, end2.w, dt);
        contact::increments(plane, end1, end2, dt, input);
    }
}

/// Resolves one contact of kind `K`: contact plane, frame and increments,
/// written to `input`, by the lane's frame update `F` (with `u` the
/// contact's six-DOF displacements); returns false, leaving `input`
/// alone, for an open contact its model has released; `ahead` is what
/// [`PairKernel::ahead`] gave for the contact, or the default.
///
/// A contact whose point moved to another feature of an end
/// ([`PairKernel::took_over`]) takes over from itself as a new contact:
/// `keeps` says whether its model's take-over rules carry any state slot
/// over. If they do, the frame goes with the state (the pass moves the
/// state, see `pass::take_over_in_place`); if not, the contact starts
/// afresh, frame and six-DOF displacements included, and its model sees
/// it as new.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn resolve_one<K: PairKernel, F: FrameUpdate>(
    scene: &Scene<'_>,
    plane: &mut Plane,
    cache: &mut [f64],
    u: &mut Displacements,
    setup: &Setup,
    a: Piece,
    b: Piece,
    dt: f64,
    (overlap_only, keeps): (bool, bool),
    input: &mut ContactInput,
    ahead: &Ahead,
) -> bool {
    if K::CARRIES_BONDS && setup.flags & HELD != 0 {
        if let Some(c) = K::carried(scene, plane, cache, a, b) {
            carry_bonded::<K, F>(plane, u, &c, setup, dt, input);
            return true;
        }
    }
    let released = overlap_only && setup.flags & RELEASED != 0;
    let Some(found) = K::find_ahead(scene, plane, cache, a, b, released, ahead) else {
        return false;
    };
    let Found {
        n,
        gap,
        xc,
        end1,
        end2,
        region,
        radius,
    } = found;
    plane.xc = xc;
    plane.gap = gap;
    plane.region = region;
    let open = overlap_only && gap > 0.0;
    *input = ContactInput {
        gap,
        mass: setup.mass,
        radius,
        prop_set: setup.prop_set,
        flags: setup.flags & !ENGINE_BITS,
        ..Default::default()
    };
    if K::took_over(cache) && !keeps {
        plane.initialised = false;
        if F::SIX_DOF {
            *u = [0.0; 6];
        }
        input.flags |= talus_sdk::flags::NEW;
    }
    if open {
        plane.n = n;
        plane.initialised = false;
        if F::SIX_DOF {
            // The contact starts afresh when it closes, as its frame and
            // the model's state do.
            *u = [gap, 0.0, 0.0, 0.0, 0.0, 0.0];
        }
        return true;
    }
    frame_and_increments::<K, F>(plane, u, n, &end1, &end2, radius, dt, input);
    true
}

/// Carries the plane of a bonded contact over one step with its pieces'
/// motion, and writes the model input.
///
/// # Model
/// Each end's material point at the last location `xc` moves with its
/// body over the step: the body's reference point went from `x - v dt`
/// to `x` (leap-frog: `v` is the step's velocity, `x` the new position)
/// and the body turned by the rotation `R(w dt)` of angle `|w| dt` about
/// `w`, so the point is now at `x + R(w dt) (xc - x + v dt)`. The new
/// location is the mean of the two ends' points, exact for any rigid
/// motion of both pieces together. The normal turns with the mean spin
/// of the ends, by `R(w~ dt)` with `w~ = (w1 + w2) / 2`; `s` and `t`
/// follow by the frame update every contact has. The increments are
/// those of end2 relative to end1 at the new location, from the ends'
/// velocities as for every contact, and the gap grows by the normal
/// increment. Under a rigid motion of both pieces together their
/// material velocities at the location are one, so the increments
/// vanish and the gap stays as it was.
///
/// With the six-DOF frame the normal so turned is the one the frame is
/// carried to, and the accumulated normal displacement is the carried
/// gap.
#[inline(always)]
fn carry_bonded<K: PairKernel, F: FrameUpdate>(
    plane: &mut Plane,
    u: &mut Displacements,
    c: &Carried,
    setup: &Setup,
    dt: f64,
    input: &mut ContactInput,
) {
    let (e1, e2) = (&c.end1, &c.end2);
    let moved =
        |e: &EndMotion| e.x + Quat::from_scaled_axis(e.w * dt) * (plane.xc - e.x + e.v * dt);
    let xc = 0.5 * (moved(e1) + moved(e2));
    let turn = Quat::from_scaled_axis(0.5 * (e1.w + e2.w) * dt);
    let n = (turn * plane.n).normalize();
    plane.xc = xc;
    *input = ContactInput {
        mass: setup.mass,
        radius: c.radius,
        prop_set: setup.prop_set,
        flags: setup.flags & !ENGINE_BITS,
        ..Default::default()
    };
    frame_and_increments::<K, F>(plane, u, n, e1, e2, c.radius, dt, input);
    plane.gap += input.delta_n;
    input.gap = plane.gap;
    if F::SIX_DOF {
        u[0] = plane.gap;
    }
}

/// Converts a model output to what a contact of kind `K` applies in global
/// axes. Only active contacts carry force (sdk contract); could-be-active
/// ones still report stiffness for the timestep.
#[inline(always)]
pub(crate) fn apply<K: PairKernel>(
    scene: &Scene<'_>,
    p: &Plane,
    o: &ContactOutput,
    a: Piece,
    b: Piece,
) -> Applied {
    if o.status != STATUS_ACTIVE {
        let stiffness = if o.status == STATUS_INACTIVE {
            0.0
        } else {
            o.stiffness[0]
        };
        return Applied {
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
    let (torque1, torque2) = K::lever(scene, p, o, f, a, b);
    Applied {
        force: f,
        torque1: -(torque1 + mo),
        torque2: torque2 + mo,
        stiffness: o.stiffness[0],
    }
}
