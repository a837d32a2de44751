//! The contact pass: per chunk of [`BATCH`] contacts, the narrow phase,
//! one model call per run of busy contacts, and what each contact applies
//! added to the sums of its ends while the chunk is in cache.
//!
//! Reads: the contact stores, ball kinematics, walls.
//! Writes: contact planes, inputs, model state and outputs, the carry
//! byte, the ball and wall sums.
//! Invariant: every ball adds its contributions in (model, lane, slot)
//! order, whatever the thread count (see
//! [`Simulation::resolve_and_forces`]); each lane's chunks run through its
//! own monomorphised [`run_chunk`].

use crate::body::{walls, walls_mut, BallsMut, BlocksMut};
use crate::bond::InstallNow;
use crate::contact::six_dof::FrameUpdate;
use crate::contact::{self, ContactStore, BATCH, BOND_NEAREST, CARRY_FORCE, CARRY_STIFFNESS};
use crate::error::StepError;
use crate::inputs;
use crate::lane::{Lane, RunChunk};
use crate::math::Vec3;
use crate::motion::*;
use crate::narrow::*;
use crate::pass::segments::*;
use crate::piece::{pair_key, PairKind};
use crate::sim::*;
use crate::sums::*;
use crate::team::{self};
use crate::timestep::*;
use talus_sdk::abi_stable::std_types::{RSlice, RSliceMut};
use talus_sdk::{flags, BatchContext, ContactInput};

impl Simulation {
    /// Contact resolution, force-displacement and force sums, after the
    /// wall stage ([`Simulation::wall_stage`]: the wall logic needs the gaps
    /// of all ball-facet contacts before any of them reaches its model).
    ///
    /// One pass per chunk of [`BATCH`] contacts resolves the geometry, calls the model once for the chunk, converts
    /// the result to global force and moments and adds them to the sums of
    /// the ends while the chunk's data is still in cache.
    ///
    /// # Determinism
    /// Every ball sums its contributions in (model, lane, slot) order. With
    /// more than one thread, a model's contacts are cut into segments, one
    /// per thread, each a run of consecutive chunks of every lane
    /// ([`SegmentPlan`]); a segment runs its lanes in order. A segment adds
    /// directly to the balls no other segment reaches; its contributions to
    /// the others wait in lists by lane and by the thread part of their
    /// ball, and once all segments are done each part adds its lists lane
    /// by lane, segment by segment. Walls sum lane by lane, chunk by chunk
    /// ([`WallPartials`]). Every ball thus adds in the
    /// order of the serial pass, and the sums have the same bits for any
    /// thread count.
    pub(crate) fn resolve_and_forces(&mut self, dt: f64) -> Result<(), StepError> {
        let installs = self.installs_now();
        let broke = self.contact_pass(dt, &installs)?;
        self.shape_fault()?;
        self.log_breaks(&broke);
        Ok(())
    }

    /// The pass of [`Simulation::resolve_and_forces`] with this step's bond
    /// installs; returns the bonds that broke, `(model, lane, slot)` in
    /// that order.
    fn contact_pass(
        &mut self,
        dt: f64,
        installs: &[Option<InstallNow>],
    ) -> Result<Vec<(usize, usize, usize)>, StepError> {
        let threads = rayon::current_num_threads();
        let skip_below = self.skip_below();
        let mut b = BallsMut::of(&self.world);
        let mut k = BlocksMut::of(&self.world);
        let walls_col = walls(&self.world);
        let scene = Scene {
            pos: &b.pos,
            vel: &b.vel,
            spin: &b.spin,
            radius: &b.radius,
            blocks: BlockScene {
                pos: &k.pos,
                vel: &k.vel,
                spin: &k.spin,
                orientation: &k.orientation,
                shape: &k.shape,
                shapes: &self.shapes,
                guard: &self.guard,
                step: self.step,
            },
            walls: &walls_col,
            owner: &self.facet_owner,
            cell: self.cell.as_ref(),
        };
        // The sums were zeroed by the law of motion as it used them.
        let columns = Columns::new(&mut b.force, &mut b.moment, &mut b.stiffness);
        let block_columns = Columns::new(&mut k.force, &mut k.moment, &mut k.stiffness);
        let n_walls = scene.walls.len();
        let mut wall_sums = vec![(Vec3::ZERO, Vec3::ZERO); n_walls];
        let step = self.step;
        let targets = Targets {
            balls: scene.pos.len(),
            blocks: scene.blocks.pos.len(),
        };
        let n_balls = targets.len();
        // Held-back contributions go to the thread part of their body (the
        // law of motion's parts over balls, then blocks), which adds them up
        // after the pass.
        let parts = ball_parts(n_balls, threads);
        let parts = &parts[..];
        self.sums_suspect = false;
        // Bond breaks of this pass: (model, lane, slot), in that order.
        let mut broke: Vec<(usize, usize, usize)> = Vec::new();
        let seed = self.settings.seed;
        for (mi, m) in self.models.iter_mut().enumerate() {
            // Models active only under overlap need no frame or increments
            // while the gap is open: their state is reset then anyway, and
            // a contact that closes starts a fresh frame.
            let overlap_only = m.entry.descriptor.activity == talus_sdk::Activity::Overlap;
            let n_state = m.entry.descriptor.state.len();
            let ctx = BatchContext {
                dt: self.dt,
                props: RSlice::from_slice(&m.props),
                n_props: m.n_props as u32,
                n_state: n_state as u32,
                columns: RSlice::from_slice(&[]),
            };
            let pointwise: Vec<u32> = (m.entry.descriptor.inputs.iter())
                .copied()
                .filter(|&id| talus_sdk::inputs::info(id).is_none_or(|i| i.every_batch))
                .collect();
            let pass = ChunkPass {
                scene,
                dt,
                overlap_only,
                ctx: &ctx,
                batch: m.entry.batch,
                inputs: [&pointwise, &m.entry.descriptor.inputs],
                n_state,
                skip_below,
                install: installs.get(mi).and_then(Option::as_ref),
                seed,
                geometric: [&pointwise, &m.entry.descriptor.inputs]
                    .map(|ids| ids.iter().any(|&id| inputs::geometric(id))),
                slots: &m.entry.descriptor.state,
                custom_state: m.entry.custom_state,
                keeps: m
                    .entry
                    .descriptor
                    .state
                    .iter()
                    .any(|s| s.propagation != talus_sdk::Propagation::None),
                holds: m.holds,
                look_ahead: self.look_ahead,
            };
            // Whether a contact is held after this pass (see `ChunkPass::holds`).
            let mut holds = false;
            // The ball lanes (ball-ball, ball-facet) come first and run in
            // segments; the rigid lanes after them in units (see
            // `units`).
            let n_lanes = m.lanes.iter().take_while(|l| !l.pair().is_rigid()).count();
            debug_assert!(m.lanes[n_lanes..].iter().all(|l| l.pair().is_rigid()));
            // One segment per thread, two with more threads than CPUs
            // (see `segments_per_thread`); each segment a run of chunks of
            // every ball lane.
            let lane_chunks: Vec<usize> = m.lanes[..n_lanes]
                .iter()
                .map(|l| l.store.len().div_ceil(BATCH))
                .collect();
            let n_chunks: usize = lane_chunks.iter().sum();
            if n_chunks > 0 {
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
                let plan = &mut m.plan;
                if n_seg > 1 {
                    let stores: Vec<&ContactStore> =
                        m.lanes[..n_lanes].iter().map(|l| &l.store).collect();
                    let sized = plan.only.first().is_some_and(|o| o.len() == n_balls);
                    if plan.n_seg != n_seg || !sized || plan.stale(&stores, step) {
                        plan.plan(&stores, n_seg, targets, step);
                    } else if stores.iter().any(|st| st.changed) {
                        plan.update(&stores);
                    }
                }
                // Per lane, segment k holds chunks bounds[l][k]..bounds[l][k + 1].
                let bounds: Vec<Vec<usize>> = if n_seg > 1 {
                    plan.bounds.clone()
                } else {
                    lane_chunks.iter().map(|&n| vec![0, n]).collect()
                };
                let only = &plan.only;
                // Each segment's work: per lane, its kernel, its first slot
                // and its chunks.
                let mut work: Vec<Vec<LaneWork<'_>>> = (0..n_seg).map(|_| Vec::new()).collect();
                for (l, lane) in m.lanes[..n_lanes].iter_mut().enumerate() {
                    let run = lane.kernel.run[usize::from(pass.scene.cell.is_some())];
                    let Lane {
                        store: st, lone, ..
                    } = lane;
                    st.changed = false;
                    st.arrived.clear();
                    // Sized by the wall logic in facet lanes; every chunk needs
                    // its words.
                    lone.resize(lane_chunks[l] * LONE_WORDS, 0);
                    let chunks = st.chunks(lone);
                    let mut rest = chunks.into_iter();
                    for (k, w) in work.iter_mut().enumerate() {
                        let (from, to) = (bounds[l][k], bounds[l][k + 1]);
                        let chunks: Vec<Chunk<'_>> = rest.by_ref().take(to - from).collect();
                        if !chunks.is_empty() {
                            w.push(LaneWork {
                                lane: l,
                                run,
                                start: from * BATCH,
                                chunks,
                            });
                        }
                    }
                }
                let jobs: Vec<_> = work
                    .into_iter()
                    .zip(self.segments.iter_mut())
                    .enumerate()
                    .map(|(k, (work, seg))| (k, work, seg))
                    .collect();
                let n_parts = parts.len() - 1;
                let run_segment = |(k, work, seg): SegmentJob<'_, '_>| {
                    let Segment {
                        scratch,
                        deferred,
                        walls,
                        check,
                        breaks,
                    } = seg;
                    breaks.clear();
                    scratch.unheld = false;
                    scratch.holding = false;
                    deferred.resize_with(n_lanes * n_parts, Vec::new);
                    for d in deferred.iter_mut() {
                        d.clear();
                    }
                    walls.start(n_walls, n_lanes);
                    *check = Vec3::ZERO;
                    for w in work {
                        let mut sums = Sums {
                            columns,
                            blocks: block_columns,
                            walls,
                            only: (n_seg > 1).then(|| (&only[w.lane][..], k as u8)),
                            parts,
                            deferred: &mut deferred[w.lane * n_parts..(w.lane + 1) * n_parts],
                            check: Vec3::ZERO,
                        };
                        for (c, chunk) in w.chunks.into_iter().enumerate() {
                            let r = (w.run)(&pass, chunk, scratch, &mut sums);
                            sums.walls.end_chunk();
                            let first = w.start + c * BATCH;
                            let slots = scratch.broke.drain(..);
                            breaks.extend(slots.map(|i| (w.lane, first + i as usize)));
                            if let Err((i, message)) = r {
                                return Some((w.lane, w.start + c * BATCH + i, message));
                            }
                        }
                        *check += sums.check;
                        walls.end_lane(w.lane);
                    }
                    None
                };
                let failure = if n_seg == 1 {
                    jobs.into_iter().map(run_segment).next().flatten()
                } else {
                    let failures = team::map(jobs, |_, job| run_segment(job));
                    failures.into_iter().flatten().next()
                };
                if let Some((l, k, message)) = failure {
                    let st = &m.lanes[l].store;
                    return Err(StepError::Model {
                        model: m.name.clone(),
                        contact: st.id[k.min(st.len() - 1)],
                        step,
                        message,
                    });
                }
                let segments = &self.segments[..n_seg];
                self.sums_suspect |= !segments.iter().all(|seg| seg.check.is_finite());
                self.unheld |= segments.iter().any(|seg| seg.scratch.unheld);
                holds = segments.iter().any(|seg| seg.scratch.holding);
                // Lane by lane, segment by segment: slot order.
                for l in 0..n_lanes {
                    for seg in segments {
                        let mine = seg.breaks.iter().filter(|b| b.0 == l);
                        broke.extend(mine.map(|&(l, k)| (mi, l, k)));
                    }
                }
                if n_seg > 1 {
                    add_held(segments, n_lanes, n_parts, [columns, block_columns]);
                }
                // Every wall's sums lane by lane, chunk by chunk: the same on
                // any thread count.
                for l in 0..n_lanes {
                    for seg in segments {
                        for &(w, force, moment) in seg.walls.of_lane(l) {
                            let s = &mut wall_sums[w as usize];
                            s.0 += force;
                            s.1 += moment;
                        }
                    }
                }
            }
            let mut rigid_broke = Vec::new();
            let columns = [columns, block_columns];
            let done = self
                .units
                .run(
                    &pass,
                    &mut m.lanes,
                    n_lanes,
                    columns,
                    n_walls,
                    &mut wall_sums,
                    &mut rigid_broke,
                )
                .map_err(|(l, k, message)| {
                    let st = &m.lanes[l].store;
                    StepError::Model {
                        model: m.name.clone(),
                        contact: st.id[k.min(st.len() - 1)],
                        step,
                        message,
                    }
                })?;
            self.sums_suspect |= done.suspect;
            self.unheld |= done.unheld;
            m.holds = holds || done.holding;
            broke.extend(rigid_broke.into_iter().map(|(l, k)| (mi, l, k)));
        }
        drop(walls_col);
        for (w, (force, moment)) in walls_mut(&self.world).iter_mut().zip(wall_sums) {
            w.force = force;
            w.moment = moment;
        }
        Ok(broke)
    }

    /// The least [`ContactStore::carry`] a contact needs to enter the sums:
    /// with a fixed timestep nobody reads the stiffness sums.
    pub(crate) fn skip_below(&self) -> u8 {
        if matches!(self.settings.timestep, Timestep::Auto { .. }) {
            CARRY_STIFFNESS
        } else {
            CARRY_FORCE
        }
    }
}

/// The contributions the segments held back, each thread part those of
/// its balls, lane by lane and in each lane segment by segment: in (lane,
/// slot) order for every ball.
fn add_held(segments: &[Segment], n_lanes: usize, n_parts: usize, columns: [Columns<'_>; 2]) {
    let held = |p: usize| {
        for l in 0..n_lanes {
            for seg in segments {
                for d in &seg.deferred[l * n_parts + p] {
                    // SAFETY: the segments have finished, and part `p`
                    // alone holds target `d.target`.
                    unsafe { d.add_to(columns) };
                }
            }
        }
    };
    let n_held: usize = segments
        .iter()
        .map(|s| s.deferred.iter().map(Vec::len).sum::<usize>())
        .sum();
    if n_held < PARALLEL_HELD {
        (0..n_parts).for_each(held);
    } else {
        team::map((0..n_parts).collect(), |_, p| held(p));
    }
}

/// Buffers of one segment of the contact pass.
#[derive(Default)]
pub(crate) struct Segment {
    pub(crate) scratch: Scratch,
    /// Held-back contributions by lane and thread part of their ball
    /// (`lane * parts + part`, see [`ball_parts`]), in slot order.
    pub(crate) deferred: Vec<Vec<Deferred>>,
    pub(crate) walls: WallPartials,
    /// [`Sums::check`] of the segment's last pass.
    pub(crate) check: Vec3,
    /// The bonds that broke in the segment's last pass: (lane, slot), in
    /// the order the segment ran them.
    pub(crate) breaks: Vec<(usize, usize)>,
}

/// One segment's work: its index, its chunks of each lane and its buffers.
pub(crate) type SegmentJob<'c, 's> = (usize, Vec<LaneWork<'c>>, &'s mut Segment);

/// The chunks of one lane in one segment, with the lane's kernel.
pub(crate) struct LaneWork<'c> {
    pub(crate) lane: usize,
    pub(crate) run: RunChunk,
    /// The lane slot of the first chunk's first contact.
    pub(crate) start: usize,
    pub(crate) chunks: Vec<Chunk<'c>>,
}

/// Buffers a chunk pass reuses from chunk to chunk.
#[derive(Default)]
pub(crate) struct Scratch {
    /// The model input of each contact of the chunk.
    pub(crate) inputs: Vec<ContactInput>,
    /// The values of the optional input columns of a run.
    pub(crate) columns: Vec<f64>,
    /// The runs of the chunk's contacts that go to the model, as slot
    /// ranges within the chunk.
    pub(crate) runs: Vec<(usize, usize)>,
    /// The chunk's contacts whose bond broke (slots within the chunk).
    pub(crate) broke: Vec<u32>,
    /// Whether a contact of the pass stopped asking to be held.
    pub(crate) unheld: bool,
    /// Whether a contact of the pass is held after it.
    pub(crate) holding: bool,
}

/// Released contacts between two busy ones of a chunk that still join
/// their run, flagged idle, rather than cut it in two (a model call costs
/// about as much as a few idle contacts in it).
pub(crate) const IDLE_GAP: usize = 8;

/// What the model reads of an idle contact in a run: the flag, and the
/// property set, so that runs of one set stay unbroken. The rest of the
/// input is left from another contact, except the gap: NaN, so that a
/// model that forgets the flag computes no force from stale kinematics
/// (the linear model then repeats its released answer).
#[inline]
pub(crate) fn idle_input(input: &mut ContactInput, setup: &contact::Setup) {
    input.flags = flags::IDLE;
    input.prop_set = setup.prop_set;
    input.gap = f64::NAN;
}

/// What every chunk of one model's contacts needs this step.
pub(crate) struct ChunkPass<'a> {
    pub(crate) scene: Scene<'a>,
    pub(crate) dt: f64,
    pub(crate) overlap_only: bool,
    pub(crate) ctx: &'a BatchContext<'a>,
    pub(crate) batch: talus_sdk::BatchFn,
    /// The optional inputs the model asks for (ids): those every batch
    /// carries, then all of them (for lanes of pairs with a contact
    /// surface, [`PairKernel::SURFACE`]).
    pub(crate) inputs: [&'a [u32]; 2],
    pub(crate) n_state: usize,
    /// The least [`ContactStore::carry`] a contact needs to enter the sums.
    pub(crate) skip_below: u8,
    /// The bonds this step installs for the model, if any.
    pub(crate) install: Option<&'a InstallNow>,
    /// The run's seed (see [`talus_sdk::inputs::PAIR_RANDOM`]).
    pub(crate) seed: u64,
    /// Whether an input of each list of `inputs` needs each contact's
    /// geometry (see [`inputs::geometric`]).
    pub(crate) geometric: [bool; 2],
    /// The model's state slots, with their propagation rules.
    pub(crate) slots: &'a [talus_sdk::StateSlotDesc],
    /// The model's custom state rule.
    pub(crate) custom_state: talus_sdk::StateFn,
    /// Whether a take-over carries any state slot over (a rule other than
    /// `None`; see [`resolve_one`]).
    pub(crate) keeps: bool,
    /// Whether a contact of the model may be held ([`contact::HELD`]) as the pass
    /// starts: one was after the model's last pass (or the model has not
    /// run yet).
    pub(crate) holds: bool,
    /// [`Simulation::look_ahead`].
    pub(crate) look_ahead: Option<bool>,
}

impl ChunkPass<'_> {
    /// The values of property set `set`.
    fn props_of(&self, set: u32) -> &[f64] {
        let n = self.ctx.n_props as usize;
        let set = set as usize;
        &self.ctx.props.as_slice()[set * n..(set + 1) * n]
    }
}

/// A contact whose point moved to another feature of an end takes over
/// from itself as a new contact, as a wall facet's contact takes over
/// from its neighbour's: its state is the model's take-over of the old
/// state into a fresh (zero) one, slot by slot by the propagation rules
/// (`None` starts from zero, `Copy` and `Add` carry the value, `Custom`
/// asks the model). The frame went with it in [`resolve_one`].
fn take_over_in_place(
    pass: &ChunkPass<'_>,
    props: &[f64],
    state: &mut [f64],
) -> Result<(), String> {
    let from = state.to_vec();
    state.fill(0.0);
    let custom = |from: &[f64], to: &mut [f64]| {
        (pass.custom_state)(
            talus_sdk::StateEvent::TakeOver.code(),
            RSlice::from_slice(props),
            RSlice::from_slice(from),
            RSliceMut::from_mut_slice(to),
        )
        .into_result()
        .map_err(|e| e.to_string())
    };
    let t = crate::wall_logic::Transfer {
        from: 0,
        to: 1,
        fresh: true,
    };
    crate::wall_logic::transfer_state(pass.slots, &from, state, &t, true, custom)
        .map(|_| ())
        .map_err(|message| format!("propagation failed: {message}"))
}

/// [`run_chunk`] for a lane of kernel `K`: with the first part of each
/// contact's resolution made ahead (see [`PairKernel::ahead`]) where the
/// kernel can and at least one in five of the chunk's contacts was busy
/// in the last pass, without it where fewer were.
///
/// Most idle contacts are released and still apart, which their kernel
/// tells in a few instructions without that part: where nearly all
/// contacts are (a settling pack), the look-ahead's bookkeeping costs
/// more than it saves (settle 10k on one thread, every chunk with it:
/// 25 % more time for the whole run), and where many are busy (a dense
/// pack) it saves the wait on each normal's square root and division
/// (dense 10k: about 10 % less). Both give the same bits (a test holds
/// them to it).
#[inline(never)]
pub(crate) fn run_chunk_any<K: PairKernel, F: FrameUpdate, const CELL: bool>(
    pass: &ChunkPass<'_>,
    ch: Chunk<'_>,
    scratch: &mut Scratch,
    sums: &mut Sums<'_>,
) -> Result<(), (usize, String)> {
    let busy = *ch.busy as usize * 5 >= ch.setup.len();
    if K::AHEAD && pass.look_ahead.unwrap_or(busy) {
        return run_chunk::<K, F, CELL, true>(pass, ch, scratch, sums);
    }
    run_chunk::<K, F, CELL, false>(pass, ch, scratch, sums)
}

/// Resolves a chunk of `K` contacts, calls the model once for those that
/// need it and adds what each contact applies to `sums`, in slot order. An
/// error carries the slot within the chunk.
///
/// Kept out of line (reached through [`run_chunk_any`]): inlined into the
/// segment loop it ran 10-12 % slower on a dense pack (same
/// instructions, worse register use).
///
/// `CELL` says whether the run has a periodic cell: without one the scene
/// the chunk reads has none at compile time, and the cell's checks in
/// every kernel fold away (dense 10k: 4 % of the pass's instructions).
/// `AHEAD` whether the kernel's look-ahead runs.
#[inline(never)]
pub(crate) fn run_chunk<K: PairKernel, F: FrameUpdate, const CELL: bool, const AHEAD: bool>(
    pass: &ChunkPass<'_>,
    ch: Chunk<'_>,
    scratch: &mut Scratch,
    sums: &mut Sums<'_>,
) -> Result<(), (usize, String)> {
    debug_assert_eq!(CELL, pass.scene.cell.is_some());
    // (A copy whose address goes to no call that is not inlined, so that
    // its `cell` is a constant.)
    let scene = &Scene {
        cell: if CELL { pass.scene.cell } else { None },
        ..pass.scene
    };
    let Scratch {
        inputs,
        columns,
        runs,
        broke,
        unheld,
        holding,
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
    // The contacts whose point moved to another feature of an end (only
    // in lanes of shapes with features).
    let mut moved = [0u64; BATCH / 64];
    let mut called = 0;
    let (inputs, plane) = (&mut inputs[..len], &mut ch.plane[..len]);
    let (setup, end1, end2) = (&ch.setup[..len], &ch.end1[..len], &ch.end2[..len]);
    // The run being extended: its start and one past its last busy
    // contact.
    let mut run: Option<(usize, usize)> = None;
    let mut unused: contact::Displacements = [0.0; 6];
    // With `AHEAD`, the first part of the resolution of contact `k + 1`
    // (see `PairKernel::ahead`) is made while `k` is resolved.
    let released = |k: usize| pass.overlap_only && setup[k].flags & contact::RELEASED != 0;
    let mut next = Ahead::default();
    if AHEAD && len > 0 {
        next = K::ahead(scene, end1[0], end2[0], released(0));
    }
    // The idle bits of each word gather in a register: set one at a
    // time in the array, every released contact waited for the
    // previous one's store to the same word.
    for (w, word) in idle.iter_mut().enumerate().take(len.div_ceil(64)) {
        let mut bits = 0u64;
        for k in w * 64..(w * 64 + 64).min(len) {
            let ahead = next;
            if AHEAD && k + 1 < len {
                next = K::ahead(scene, end1[k + 1], end2[k + 1], released(k + 1));
            }
            // The column is empty in lanes without the six-DOF frame,
            // which never read what they are given in its place.
            let dof = if F::SIX_DOF {
                &mut ch.dof[k]
            } else {
                &mut unused
            };
            let busy = resolve_one::<K, F>(
                scene,
                &mut plane[k],
                &mut ch.cache[k * K::CACHE..(k + 1) * K::CACHE],
                dof,
                &setup[k],
                end1[k],
                end2[k],
                pass.dt,
                (pass.overlap_only, pass.keeps),
                &mut inputs[k],
                &ahead,
            );
            if !busy {
                bits |= 1 << (k % 64);
                continue;
            }
            if K::took_over(&ch.cache[k * K::CACHE..(k + 1) * K::CACHE]) {
                moved[w] |= 1 << (k % 64);
            }
            if let Some(install) = pass.install {
                // With a wall, the one facet contact per ball and wall,
                // or per block, wall and plane, that bonds was chosen
                // before the pass.
                let chosen = match K::PAIR {
                    PairKind::BallFacet | PairKind::BlockFacet => {
                        setup[k].flags & BOND_NEAREST != 0
                    }
                    PairKind::BallConvex
                    | PairKind::BlockConvex
                    | PairKind::ConvexConvex
                    | PairKind::ConvexFacet => false,
                    _ => true,
                };
                if chosen && install.bonds(setup[k].prop_set, plane[k].gap) {
                    inputs[k].flags |= flags::BOND;
                    let cache = &ch.cache[k * K::CACHE..(k + 1) * K::CACHE];
                    inputs[k].radius = K::bond_radius(cache, inputs[k].radius);
                }
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
    *ch.busy = called;
    // An idle contact is released and apart: its carry is what its
    // model last said of it while open (nothing, or a timestep
    // stiffness), so with a fixed timestep it adds nothing to the sums
    // and is left alone. A chunk of idle contacts only is then done; in
    // the others a word of idle contacts is passed over at once (most
    // of a settling pack's contacts are idle, grouped at the end of
    // their chunk's kinds).
    let skip_idle = pass.skip_below > CARRY_STIFFNESS;
    if called == 0 && skip_idle {
        return Ok(());
    }
    let n = pass.n_state;
    // What the model's outputs report beyond force (see `talus_sdk::report`).
    let mut reported = 0u32;
    for (w, &bits) in moved.iter().enumerate() {
        let mut bits = bits;
        while bits != 0 {
            let k = w * 64 + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let props = pass.props_of(setup[k].prop_set);
            take_over_in_place(pass, props, &mut ch.state[k * n..(k + 1) * n])
                .map_err(|message| (k, message))?;
        }
    }
    for &(start, end) in runs.iter() {
        // A model that asks for optional inputs gets their columns for
        // the run; the others share the pass's context.
        let (cols, run_ctx);
        let ids = pass.inputs[usize::from(K::SURFACE)];
        let geometric = pass.geometric[usize::from(K::SURFACE)];
        let ctx = if ids.is_empty() {
            pass.ctx
        } else {
            // The pair's random numbers go to contacts that are new or
            // bond now (NaN to the others); a model that asks for nothing
            // else gets an all-NaN run at the cost of a fill.
            let draws = |k: usize| inputs[k].flags & (flags::NEW | flags::BOND) != 0;
            let geometry = |i: usize| {
                let (k, plane) = (start + i, &ch.plane[start + i]);
                let cache = &ch.cache[k * K::CACHE..(k + 1) * K::CACHE];
                let mut g = if geometric {
                    K::geometry(&pass.scene, plane, cache, end1[k], end2[k])
                } else {
                    inputs::probe_geometry(0.0)
                };
                g.random = if draws(k) {
                    crate::bond::pair_random(pass.seed, pair_key(end1[k], end2[k]))
                } else {
                    [f64::NAN; 2]
                };
                g
            };
            let any = geometric || (start..end).any(draws);
            cols = inputs::columns(ids, end - start, any.then_some(geometry), columns);
            run_ctx = BatchContext {
                columns: RSlice::from_slice(&cols),
                ..*pass.ctx
            };
            &run_ctx
        };
        let r = (pass.batch)(
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
        reported |= ch.output[start..end].iter().fold(0, |r, o| r | o.reserved);
    }
    // The bond bookkeeping of the sums (holds, breaks) is needed where a
    // contact of the model was held after its last pass or one of the
    // chunk reported something; elsewhere, which is every chunk of a
    // model that never bonds, the sums run without it (dense 10k: 1.3 %
    // of a step).
    let rows = Rows {
        plane: ch.plane,
        setup: ch.setup,
        output: ch.output,
        carry: ch.carry,
        end1,
        end2,
    };
    let marks = (&idle, lone, skip_idle);
    let holds = (unheld, holding);
    if pass.holds || reported != 0 {
        sum_chunk::<K, true>(pass, scene, rows, marks, sums, broke, holds);
    } else {
        sum_chunk::<K, false>(pass, scene, rows, marks, sums, broke, holds);
    }
    Ok(())
}

mod chunk;
pub(crate) mod segments;
mod sum;
pub(crate) mod units;

pub(crate) use chunk::{Chunk, LONE_WORDS};
use sum::{sum_chunk, Rows};
