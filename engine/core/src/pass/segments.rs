//! The cut of a model's contact pass into segments, one per thread, and for
//! each ball the one segment that reaches it (which may add to its sums
//! directly) or the mark that several do (their contributions wait).

use crate::contact::{ContactStore, BATCH, RELEASED};
use crate::motion::*;
use crate::piece::Piece;
use crate::team::{self};

/// Segments of the parallel contact pass per thread, cut to equal work
/// (see `SegmentPlan::plan`). More segments would let a thread whose core
/// runs slow be relieved in smaller pieces, but every ball that two
/// segments reach has its contributions held back (dense 10k, two
/// threads, four segments per thread: 2.65 s; two: 2.55-2.62 s; one:
/// 2.48-2.55 s), and with the team a segment is taken by the thread that
/// had it the step before, so its contacts stay in that core's cache.
pub(crate) const SEGMENTS_PER_THREAD: usize = 1;

/// Segments per thread when there are more threads than CPUs: a thread
/// that the system preempts inside its only segment holds up the whole
/// region until it runs again, while with two segments each the other
/// threads take its second one (dense 10k, 1000 steps, three threads on
/// two CPUs: 0.75-0.77 s with one segment per thread, 0.62-0.63 s with
/// two; two threads 0.59 s either way).
pub(crate) const SEGMENTS_PER_THREAD_OVERSUBSCRIBED: usize = 2;

/// Segments of the contact pass per thread for `threads` threads.
pub(crate) fn segments_per_thread(threads: usize) -> usize {
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
pub(crate) const MAX_SEGMENTS: usize = SHARED as usize;

/// [`SegmentPlan::only`] of a ball that several segments reach.
pub(crate) const SHARED: u8 = u8::MAX - 1;

/// [`SegmentPlan::only`] of a ball that no segment reaches.
pub(crate) const UNTOUCHED: u8 = u8::MAX;

/// The segments of one model's contact pass, each a run of consecutive
/// chunks of every lane, and for each ball and lane whether one segment
/// adds the lane's contributions to the ball directly; re-planned only when
/// contacts come or go or the number of segments changes.
///
/// The lane with the most contacts (the lead) is cut at chunk boundaries;
/// the other lanes at the chunk boundary nearest to where their first ends
/// reach the balls at which the lead's segments begin, so that a ball's
/// contacts of every lane tend to fall in one segment, whose thread then
/// adds all of them directly. The lead's cuts are chosen so that the work
/// of all lanes, not of the lead alone, is shared evenly.
///
/// A segment runs its lanes in order during the pass, and the held-back
/// contributions are added after it, lane by lane. So a ball may take a
/// lane's contributions directly only if that lane's contacts with it are
/// all in one segment `k`, and so are those of every lane before (or
/// there are none): from the first lane that breaks this on, all of its
/// contributions wait. Every ball then adds in (lane, slot) order.
#[derive(Clone, Default)]
pub(crate) struct SegmentPlan {
    /// Per lane, per ball: the only segment that adds the lane's
    /// contributions to the ball directly, or [`SHARED`] (they are held
    /// back) or [`UNTOUCHED`] (no segment reaches it in this lane or any
    /// lane before).
    pub(crate) only: Vec<Vec<u8>>,
    pub(crate) n_seg: usize,
    /// Per lane: segment k holds chunks `bounds[l][k]..bounds[l][k + 1]`
    /// of lane `l` (none, in a lane with few chunks).
    pub(crate) bounds: Vec<Vec<usize>>,
    /// Per lane and segment (`lane * n_seg + k`), a bit per ball: whether
    /// the segment has a contact of the lane with it (scratch of `plan`).
    pub(crate) touched: Vec<Vec<u64>>,
    /// The step of the last plan, and the contacts that arrived in a slot
    /// since (see [`SegmentPlan::stale`]).
    pub(crate) planned_at: u64,
    pub(crate) arrivals: usize,
    /// The sum targets of the last plan.
    pub(crate) targets: Targets,
}

/// The bodies whose sums the contact pass adds to, numbered as one range:
/// balls first, then blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Targets {
    pub(crate) balls: usize,
    pub(crate) blocks: usize,
}

impl Targets {
    /// Only balls.
    #[cfg(test)]
    pub(crate) fn balls(n: usize) -> Targets {
        Targets {
            balls: n,
            blocks: 0,
        }
    }

    /// Number of targets.
    pub(crate) fn len(&self) -> usize {
        self.balls + self.blocks
    }

    /// The target of a piece (none for a facet: walls sum apart).
    #[inline]
    pub(crate) fn of(&self, p: Piece) -> Option<usize> {
        if p.is_ball() {
            Some(p.index())
        } else if p.is_rigid() {
            Some(self.balls + p.index())
        } else {
            None
        }
    }
}

/// The work of a lane's chunks before each chunk boundary (busy contacts
/// weigh [`BUSY_WEIGHT`] idle ones): entry `c` is the work of chunks
/// `0..c`.
fn work_before(st: &ContactStore) -> Vec<usize> {
    let weights = team::map(st.setup.chunks(BATCH).collect(), |_, c| {
        let idle = c.iter().filter(|s| s.flags & RELEASED != 0).count();
        c.len() + (c.len() - idle) * (BUSY_WEIGHT - 1)
    });
    std::iter::once(0)
        .chain(weights.iter().scan(0, |sum, w| {
            *sum += w;
            Some(*sum)
        }))
        .collect()
}

/// Steps between two cuts of the contact pass into segments (see
/// [`SegmentPlan::stale`]).
pub(crate) const REPLAN_STEPS: u64 = 64;

/// What a busy contact costs the contact pass against an idle one, for
/// cutting the pass into segments of equal work (about 900 instructions
/// against 50).
pub(crate) const BUSY_WEIGHT: usize = 16;

impl SegmentPlan {
    /// Cuts the lanes `stores` of a model into `n_seg` segments of about
    /// equal work over all lanes (busy contacts weigh [`BUSY_WEIGHT`] idle
    /// ones): the lead (the largest store) into runs of whole chunks, every
    /// segment at least one chunk when there are enough, the others where
    /// their chunks' first ends reach the lead's segment balls; then finds for
    /// each ball whether one segment reaches it or more. The cut decides
    /// only which contributions wait, never the order of any sum.
    pub(crate) fn plan(
        &mut self,
        stores: &[&ContactStore],
        n_seg: usize,
        targets: Targets,
        step: u64,
    ) {
        let n_balls = targets.len();
        self.targets = targets;
        self.planned_at = step;
        self.arrivals = 0;
        self.n_seg = n_seg;
        self.bounds.resize_with(stores.len(), Vec::new);
        let lead = (0..stores.len()).max_by_key(|&l| (stores[l].len(), usize::MAX - l));
        let Some(lead) = lead else {
            return;
        };
        // Work before each chunk boundary of every lane.
        let before: Vec<Vec<usize>> = stores.iter().map(|st| work_before(st)).collect();
        let total: usize = before.iter().map(|b| b.last().copied().unwrap_or(0)).sum();
        let store = stores[lead];
        let n_chunks = store.len().div_ceil(BATCH);
        let first_end = |st: &ContactStore, c: usize| targets.of(st.end1[c * BATCH]).unwrap_or(0);
        // Where lane `l` is cut for a cut of the lead before chunk `c`:
        // the first chunk whose first end reaches the lead's first ball
        // there; the chunk before it holds contacts on both sides of that
        // ball and goes to the side that has more of them.
        let cut_of = |l: usize, c: usize| -> usize {
            let st = stores[l];
            let n = st.len().div_ceil(BATCH);
            if c >= n_chunks {
                return n;
            }
            let split = first_end(store, c);
            let mut at = (0..n).find(|&d| first_end(st, d) >= split).unwrap_or(n);
            if at > 0 {
                let slots = (at - 1) * BATCH..(at * BATCH).min(st.len());
                let after = st.end1[slots.clone()]
                    .iter()
                    .filter(|&&a| targets.of(a).unwrap_or(0) >= split);
                if 2 * after.count() > slots.len() {
                    at -= 1;
                }
            }
            at
        };
        // Per cut of the lead, each other lane's cut, and the work of
        // every lane before them: the lead's cut is chosen on that total,
        // so that a lane that gathers in one part of the assembly (the
        // balls against a floor) does not weigh on one segment alone.
        let others: Vec<Vec<usize>> = (0..stores.len())
            .map(|l| {
                if l == lead {
                    (0..=n_chunks).collect()
                } else {
                    (0..=n_chunks).map(|c| cut_of(l, c)).collect()
                }
            })
            .collect();
        let work_at =
            |c: usize| -> usize { (0..stores.len()).map(|l| before[l][others[l][c]]).sum() };
        let mut prev = 0;
        let mut lead_bounds = vec![0];
        for k in 1..n_seg {
            // The lead's chunk boundary whose total work before it is
            // nearest k / n_seg of all, keeping at least one chunk in
            // every segment if it can.
            let (lo, hi) = if n_chunks >= n_seg {
                (prev + 1, n_chunks - (n_seg - k))
            } else {
                (prev, n_chunks)
            };
            let at = (lo..=hi)
                .min_by_key(|&c| (work_at(c) * n_seg).abs_diff(k * total))
                .unwrap_or(lo);
            lead_bounds.push(at);
            prev = at;
        }
        lead_bounds.push(n_chunks);
        for (l, bounds) in self.bounds.iter_mut().enumerate() {
            let n = stores[l].len().div_ceil(BATCH);
            bounds.clear();
            bounds.push(0);
            for &c in &lead_bounds[1..n_seg] {
                let prev = *bounds.last().unwrap();
                bounds.push(others[l][c].clamp(prev, n));
            }
            bounds.push(n);
        }
        // The balls each segment touches in each lane, in parallel; then
        // each ball's segment per lane, the balls in parallel.
        let bounds = &self.bounds;
        let n_lanes = stores.len();
        self.touched.resize_with(n_lanes * n_seg, Vec::new);
        let touched = &mut self.touched[..n_lanes * n_seg];
        team::map(touched.iter_mut().collect(), |i, bits| {
            let (st, b, k) = (stores[i / n_seg], &bounds[i / n_seg], i % n_seg);
            bits.clear();
            bits.resize(n_balls.div_ceil(64), 0);
            let slots = (b[k] * BATCH).min(st.len())..(b[k + 1] * BATCH).min(st.len());
            for (&a, &b) in st.end1[slots.clone()].iter().zip(&st.end2[slots]) {
                for t in [targets.of(a), targets.of(b)].into_iter().flatten() {
                    bits[t / 64] |= 1 << (t % 64);
                }
            }
        });
        let touched = &self.touched[..n_lanes * n_seg];
        self.only.resize_with(n_lanes, Vec::new);
        for only in &mut self.only {
            only.resize(n_balls, UNTOUCHED);
        }
        let block = ball_block(n_balls);
        let mut columns: Vec<std::slice::ChunksMut<'_, u8>> =
            self.only.iter_mut().map(|o| o.chunks_mut(block)).collect();
        let blocks: Vec<Vec<&mut [u8]>> = (0..n_balls.div_ceil(block).max(1))
            .map(|_| columns.iter_mut().filter_map(|c| c.next()).collect())
            .collect();
        team::map(blocks, |c, mut only| {
            for j in 0..only.first().map_or(0, |o| o.len()) {
                let i = c * block + j;
                let by = |bits: &Vec<u64>| bits[i / 64] & (1 << (i % 64)) != 0;
                // The ball's segment so far, UNTOUCHED before any, SHARED
                // from the first lane that breaks it.
                let mut seg = UNTOUCHED;
                for (l, lane) in only.iter_mut().enumerate() {
                    if seg != SHARED {
                        let lane_bits = &touched[l * n_seg..(l + 1) * n_seg];
                        let mut reach = lane_bits.iter().enumerate().filter(|(_, b)| by(b));
                        seg = match (reach.next(), reach.next()) {
                            (None, _) => seg,
                            (Some((k, _)), None) if seg == UNTOUCHED || seg == k as u8 => k as u8,
                            _ => SHARED,
                        };
                    }
                    lane[j] = seg;
                }
            }
        });
    }

    /// The first chunk of each thread's segment in lane `lane` and the
    /// number of its chunks, when the plan has one segment per thread of
    /// `threads`.
    pub(crate) fn owners(&self, threads: usize, lane: usize) -> Option<&[usize]> {
        let bounds = self.bounds.get(lane)?;
        (threads > 1 && self.n_seg == threads && bounds.len() == threads + 1).then_some(&bounds[..])
    }

    /// Brings the plan up to date after contacts were added and removed,
    /// without a new cut: new chunks join the last segment, and a ball
    /// with a contact that arrived in another segment than its only one
    /// becomes shared. A ball stays shared until the next plan even if
    /// one of its segments lost its contacts with it: its contributions
    /// wait, and are added in slot order all the same.
    pub(crate) fn update(&mut self, stores: &[&ContactStore]) {
        for (l, (st, bounds)) in stores.iter().zip(&mut self.bounds).enumerate() {
            let n_chunks = st.len().div_ceil(BATCH);
            for b in bounds.iter_mut() {
                *b = (*b).min(n_chunks);
            }
            bounds[self.n_seg] = n_chunks;
            self.arrivals += st.arrived.len();
            for &slot in &st.arrived {
                let slot = slot as usize;
                if slot >= st.len() {
                    continue; // removed again since
                }
                let chunk = slot / BATCH;
                let k = (bounds.partition_point(|&b| b <= chunk) - 1) as u8;
                for end in [st.end1[slot], st.end2[slot]] {
                    if let Some(t) = self.targets.of(end) {
                        // The body's running segment, in this lane and
                        // every one after it, now includes segment k.
                        for only in &mut self.only[l..] {
                            let o = &mut only[t];
                            *o = match *o {
                                UNTOUCHED => k,
                                o if o == k => k,
                                _ => SHARED,
                            };
                        }
                    }
                }
            }
        }
    }

    /// Whether the segments are due for a new cut: the work drifts as
    /// contacts come, go, touch and part, so the plan is made anew every
    /// [`REPLAN_STEPS`] steps, or once the contacts that arrived in a slot
    /// since the last plan make an eighth of the lanes'.
    pub(crate) fn stale(&self, stores: &[&ContactStore], step: u64) -> bool {
        let arrived: usize = stores.iter().map(|st| st.arrived.len()).sum();
        let len: usize = stores.iter().map(|st| st.len()).sum();
        step >= self.planned_at + REPLAN_STEPS || (self.arrivals + arrived) * 8 > len
    }
}
