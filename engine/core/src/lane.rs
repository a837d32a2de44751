//! Lanes: the contacts of one model and one pair kind, and the table of
//! kernels that works on them.
//!
//! Every model has one lane per [`PairKind`], in [`PairKind::ALL`] order.
//! A contact lives in the lane of its model and of the kinds of its two
//! pieces from creation to removal; it never changes lane. Each lane holds
//! its kernels, taken from `KERNELS` when the lane is made, before step
//! 0: the contact pass, the finiteness check and the plane refresh call
//! them once per chunk or once per lane, and within them every loop is
//! monomorphic (one pair kind, no branch on it).
//!
//! Invariants: the contact pass visits models in order, each model's lanes
//! in [`PairKind::ALL`] order and each lane in slot order, so every ball
//! adds its contributions in (model, lane, slot) order whatever the thread
//! count; only facet lanes (ball-facet, block-facet, convex-facet) take
//! part in the wall stage.

use crate::block::BlockResolution;
use crate::contact::six_dof::{FrameUpdate, Rotations, SixDof};
use crate::contact::{ContactFrame, ContactStore};
use crate::narrow::{
    self, BallBall, BallBlock, BallConvex, BallFacet, BlockBlock, BlockConvex, BlockFacet,
    ConvexConvex, ConvexFacet, Masses, PairKernel, Scene,
};
use crate::pass::{self, Chunk, ChunkPass, Scratch};
use crate::piece::{PairKind, Piece};
use crate::sums::Sums;

/// The contacts of one model and one pair kind, with what the contact
/// pass keeps of them from step to step.
#[derive(Clone)]
pub struct Lane {
    pair: PairKind,
    /// The lane's contacts.
    pub store: ContactStore,
    /// A bit per slot, set anew by each step's wall logic: the contact is
    /// its ball's only overlapping facet contact, so it carries its load.
    /// The contact pass turns the bit into `CARRIED` as it visits the
    /// contact (on the thread that works on its chunk, rather than the
    /// serial wall logic writing into every thread's chunks). Zero in
    /// lanes without facets.
    pub(crate) lone: Vec<u64>,
    pub(crate) kernel: &'static LaneKernel,
}

impl Lane {
    /// An empty lane of kind `pair` for a model with `n_state` state
    /// slots, whose contacts carry their frame as `frame` says.
    pub(crate) fn new(pair: PairKind, n_state: usize, frame: ContactFrame) -> Lane {
        let table = match frame {
            ContactFrame::Rotations => &KERNELS,
            ContactFrame::SixDof { no_ratchet: false } => &KERNELS_SIX_DOF,
            ContactFrame::SixDof { no_ratchet: true } => &KERNELS_NO_RATCHET,
        };
        let kernel = &table[pair.index()];
        let mut store = ContactStore::with_cache(n_state, kernel.cache);
        store.six_dof = frame != ContactFrame::Rotations;
        Lane {
            pair,
            store,
            lone: Vec::new(),
            kernel,
        }
    }

    /// The pair kind of every contact of the lane.
    pub fn pair(&self) -> PairKind {
        self.pair
    }
}

/// The lane's contact-pass kernel over one chunk (see
/// [`pass::run_chunk`]); an error carries the slot within the chunk.
pub(crate) type RunChunk =
    fn(&ChunkPass<'_>, Chunk<'_>, &mut Scratch, &mut Sums<'_>) -> Result<(), (usize, String)>;

/// The kernels of one pair kind, each monomorphised for it.
pub(crate) struct LaneKernel {
    pub(crate) pair: PairKind,
    /// Cache values per contact ([`PairKernel::CACHE`]).
    pub(crate) cache: usize,
    /// The contact pass over one chunk: without a periodic cell, and with
    /// one.
    pub(crate) run: [RunChunk; 2],
    /// The first slot, if any, whose contact puts a non-finite force or
    /// moment into the sums (its carry at least the given code).
    pub(crate) first_non_finite: fn(&Scene<'_>, &ContactStore, u8) -> Option<usize>,
    /// The planes of the released contacts brought up to date.
    pub(crate) refresh: fn(&Scene<'_>, &ContactStore) -> Vec<crate::contact::Plane>,
    /// The effective inertial mass of a new contact (kg).
    pub(crate) mass: fn(&Masses<'_>, Piece, Piece) -> f64,
    /// Sets up a new contact's cache ([`PairKernel::init`]).
    pub(crate) init: fn(&mut [f64], BlockResolution),
}

const fn kernels_of<K: PairKernel, F: FrameUpdate>() -> LaneKernel {
    LaneKernel {
        pair: K::PAIR,
        cache: K::CACHE,
        run: [
            pass::run_chunk_any::<K, F, false>,
            pass::run_chunk_any::<K, F, true>,
        ],
        first_non_finite: crate::sums::first_non_finite::<K>,
        refresh: narrow::refresh_lane::<K>,
        mass: K::effective_mass,
        init: K::init,
    }
}

/// The kernels of every pair kind, at the kind's index, for a frame
/// update `F`.
const fn table<F: FrameUpdate>() -> [LaneKernel; PairKind::ALL.len()] {
    let table = [
        kernels_of::<BallBall, F>(),
        kernels_of::<BallFacet, F>(),
        kernels_of::<BallBlock, F>(),
        kernels_of::<BlockBlock, F>(),
        kernels_of::<BlockFacet, F>(),
        kernels_of::<BallConvex, F>(),
        kernels_of::<BlockConvex, F>(),
        kernels_of::<ConvexConvex, F>(),
        kernels_of::<ConvexFacet, F>(),
    ];
    // Each kind's kernels sit at its index.
    let mut i = 0;
    while i < table.len() {
        assert!(table[i].pair as usize == i);
        i += 1;
    }
    table
}

/// The kernels of every pair kind with the default frame update (seed
/// 002's two rotations): the table from which most lanes take their own.
pub(crate) static KERNELS: [LaneKernel; PairKind::ALL.len()] = table::<Rotations>();

/// The same with the six-DOF frame (seed 004), branch vectors to the
/// contact location.
static KERNELS_SIX_DOF: [LaneKernel; PairKind::ALL.len()] = table::<SixDof<false>>();

/// The same with the six-DOF frame and the no-ratchet branch vectors.
static KERNELS_NO_RATCHET: [LaneKernel; PairKind::ALL.len()] = table::<SixDof<true>>();
