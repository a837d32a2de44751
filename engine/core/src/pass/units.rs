//! The rigid lanes of the contact pass, cut into units of [`UNIT`]
//! contacts that any thread of the team may take.
//!
//! A contact with a block or a convex body costs tens to hundreds of
//! times a ball pair's, and the cost varies from pair to pair (an
//! overlapping pair's hull, a Newton search that creeps): a thousand
//! blocks make a chunk or two, which the segments of the ball lanes would
//! hand to one thread whole. Units are small, so the team's work stealing
//! evens the threads out whatever each unit costs.
//!
//! Reads and writes what [`run_chunk`](super::run_chunk) does.
//! Invariant: every body adds the rigid lanes' contributions in (lane,
//! slot) order on any thread count. On one thread the units run in order
//! and add directly; on more, every contribution waits in its unit's list
//! and the lists are added after the region, unit by unit. Walls sum
//! unit by unit in both cases, so wall totals do not depend on the thread
//! count either.

use super::{Chunk, ChunkPass, Scratch, LONE_WORDS};
use crate::contact::BATCH;
use crate::lane::{Lane, RunChunk};
use crate::math::Vec3;
use crate::pass::segments::SHARED;
use crate::sums::{Columns, Deferred, Sums, WallPartials};
use crate::team;

/// Contacts per unit: small enough that a thousand rigid contacts make
/// sixty work items, large enough that a unit's fixed cost (a model call,
/// its wall partials) stays a few percent of its contacts' (superquadrics
/// 1k collapse on two threads: 9.6 s in chunks of 1024, 6.3 s in units of
/// 16).
pub(crate) const UNIT: usize = 16;

// A unit's `lone` bits are one word, cut from a chunk's words.
const _: () = assert!(64usize.is_multiple_of(UNIT) && BATCH.is_multiple_of(UNIT));

/// Buffers of one unit, reused from step to step.
#[derive(Default)]
pub(crate) struct UnitBuf {
    scratch: Scratch,
    /// Every contribution of the unit, in slot order, when the units run
    /// on more than one thread.
    held: Vec<Deferred>,
    walls: WallPartials,
    check: Vec3,
    /// Slots (within the unit) of the bonds that broke.
    broke: Vec<u32>,
    /// The slot (within the unit) and message of a model failure.
    failure: Option<(usize, String)>,
}

/// The rigid-lane buffers of the contact pass.
#[derive(Default)]
pub(crate) struct Units {
    bufs: Vec<UnitBuf>,
    /// [`SHARED`] for every sum target: the segment mark that holds every
    /// contribution back.
    all_held: Vec<u8>,
    /// The `lone` word of every unit, lane by lane.
    lone: Vec<u64>,
}

/// What the rigid lanes of one model's pass leave besides the sums.
pub(crate) struct UnitsDone {
    /// Whether a force or torque of theirs may not be finite.
    pub(crate) suspect: bool,
    /// Whether a contact stopped asking to be held.
    pub(crate) unheld: bool,
    /// Whether a contact is held after the pass.
    pub(crate) holding: bool,
}

/// One unit's work.
struct UnitWork<'c> {
    lane: usize,
    run: RunChunk,
    /// The lane slot of the unit's first contact.
    first: usize,
    chunk: Chunk<'c>,
}

/// A model failure: lane, slot and message.
pub(crate) type Failure = (usize, usize, String);

impl Units {
    /// Runs lanes `from..` of `lanes` (all rigid) in units: resolution,
    /// model calls, sums. Adds the walls' partial sums to `wall_sums`
    /// (lane by lane, unit by unit) and appends the bonds that broke as
    /// (lane, slot), in that order. `columns` are the balls' and the
    /// blocks' sums.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run(
        &mut self,
        pass: &ChunkPass<'_>,
        lanes: &mut [Lane],
        from: usize,
        columns: [Columns<'_>; 2],
        n_walls: usize,
        wall_sums: &mut [(Vec3, Vec3)],
        broke: &mut Vec<(usize, usize)>,
    ) -> Result<UnitsDone, Failure> {
        let n_units: usize = lanes[from..]
            .iter()
            .map(|l| l.store.len().div_ceil(UNIT))
            .sum();
        let mut done = UnitsDone {
            suspect: false,
            unheld: false,
            holding: false,
        };
        if n_units == 0 {
            return Ok(done);
        }
        let parallel = rayon::current_num_threads() > 1 && n_units > 1;
        let [balls, blocks] = columns;
        let n_targets = balls.len + blocks.len;
        if parallel && self.all_held.len() != n_targets {
            self.all_held.clear();
            self.all_held.resize(n_targets, SHARED);
        }
        if self.bufs.len() < n_units {
            self.bufs.resize_with(n_units, UnitBuf::default);
        }
        // Each unit's bits of its lane's `lone` (set by the wall logic in
        // facet lanes, per chunk of `BATCH`).
        self.lone.clear();
        for lane in &mut lanes[from..] {
            let len = lane.store.len();
            lane.lone.resize(len.div_ceil(BATCH) * LONE_WORDS, 0);
            let mask = (1u64 << UNIT) - 1;
            let words = (0..len.div_ceil(UNIT)).map(|u| {
                let s = u * UNIT;
                (lane.lone[s / 64] >> (s % 64)) & mask
            });
            self.lone.extend(words);
        }
        let mut work = Vec::with_capacity(n_units);
        let mut lone = &self.lone[..];
        for (l, lane) in lanes.iter_mut().enumerate().skip(from) {
            let run = lane.kernel.run[usize::from(pass.scene.cell.is_some())];
            let st = &mut lane.store;
            st.changed = false;
            st.arrived.clear();
            let n = st.len().div_ceil(UNIT);
            let (mine, rest) = lone.split_at(n);
            lone = rest;
            let units = st.chunks_of(UNIT, mine).into_iter().enumerate();
            work.extend(units.map(|(u, chunk)| UnitWork {
                lane: l,
                run,
                first: u * UNIT,
                chunk,
            }));
        }
        let all_held = &self.all_held[..];
        let parts = [0, n_targets as u32];
        let run_unit = |w: UnitWork<'_>, buf: &mut UnitBuf| {
            let UnitBuf {
                scratch,
                held,
                walls,
                check,
                broke,
                failure,
            } = buf;
            scratch.unheld = false;
            scratch.holding = false;
            held.clear();
            walls.start(n_walls, 1);
            let mut sums = Sums {
                columns: balls,
                blocks,
                walls,
                only: parallel.then_some((all_held, 0)),
                parts: &parts,
                deferred: std::slice::from_mut(held),
                check: Vec3::ZERO,
            };
            let r = (w.run)(pass, w.chunk, scratch, &mut sums);
            sums.walls.end_chunk();
            *check = sums.check;
            broke.clear();
            broke.append(&mut scratch.broke);
            *failure = r.err();
        };
        let bufs = &mut self.bufs[..n_units];
        let mut heads: Vec<(usize, usize)> = Vec::with_capacity(n_units);
        heads.extend(work.iter().map(|w| (w.lane, w.first)));
        if parallel {
            let jobs: Vec<_> = work.into_iter().zip(bufs.iter_mut()).collect();
            team::map(jobs, |_, (w, buf)| run_unit(w, buf));
        } else {
            for (w, buf) in work.into_iter().zip(bufs.iter_mut()) {
                run_unit(w, buf);
                if buf.failure.is_some() {
                    break;
                }
            }
        }
        for (&(lane, first), buf) in heads.iter().zip(bufs.iter_mut()) {
            if let Some((k, message)) = buf.failure.take() {
                return Err((lane, first + k, message));
            }
            done.suspect |= !buf.check.is_finite();
            done.unheld |= buf.scratch.unheld;
            done.holding |= buf.scratch.holding;
            broke.extend(buf.broke.iter().map(|&k| (lane, first + k as usize)));
            for d in &buf.held {
                // SAFETY: the region is over; this thread alone adds.
                unsafe { d.add_to(columns) }
            }
            for &(w, force, moment) in &buf.walls.partial {
                let s = &mut wall_sums[w as usize];
                s.0 += force;
                s.1 += moment;
            }
        }
        Ok(done)
    }
}

/// `f` over every unit of [`UNIT`] slots of a lane's columns, in
/// parallel on the team: for the rigid facet lanes' part of the wall
/// stage, whose contacts cost as unevenly as in the pass. `cache` has
/// `stride` values per slot. `f` gets the unit's first slot.
pub(crate) fn for_each_unit<S: Send, P: Sync>(
    rows: &mut [S],
    cache: &mut [f64],
    stride: usize,
    ends: (&[P], &[P]),
    f: impl Fn(usize, &mut [S], &mut [f64], &[P], &[P]) + Sync,
) {
    let n = rows.len().div_ceil(UNIT);
    let caches = crate::contact::cache_chunks(cache, stride, UNIT, n);
    let items: Vec<_> = rows
        .chunks_mut(UNIT)
        .zip(caches)
        .zip(ends.0.chunks(UNIT).zip(ends.1.chunks(UNIT)))
        .collect();
    team::map(items, |u, ((rows, cache), (e1, e2))| {
        f(u * UNIT, rows, cache, e1, e2)
    });
}
