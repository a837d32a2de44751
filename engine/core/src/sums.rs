//! Force sums: the columns the segments of the contact pass add what each
//! contact applies to, and the check that they stayed finite.
//!
//! Invariant: a ball that one segment alone reaches gets its contributions
//! directly; the others are held back and added by the thread part that
//! owns the ball, in slot order, so the sums have the same bits on any
//! thread count. Walls sum chunk by chunk.

use crate::body::{walls, BallsRef, BlocksRef};
use crate::contact::ContactStore;
use crate::error::StepError;
use crate::math::Vec3;
use crate::narrow::*;
use crate::sim::*;
use std::marker::PhantomData;

/// The force, moment and stiffness sums of the balls, which the segments
/// of a contact pass add to at the same time, each to balls that no other
/// segment adds to directly.
#[derive(Clone, Copy)]
pub(crate) struct Columns<'a> {
    pub(crate) force: *mut Vec3,
    pub(crate) moment: *mut Vec3,
    pub(crate) stiffness: *mut f64,
    /// The length of all three columns.
    pub(crate) len: usize,
    pub(crate) _borrow: PhantomData<&'a mut [f64]>,
}

// SAFETY: the columns are only reached through `Columns::add`, whose
// callers guarantee that no two threads reach the same ball at the same
// time.
unsafe impl Send for Columns<'_> {}
unsafe impl Sync for Columns<'_> {}

impl<'a> Columns<'a> {
    /// # Panics
    /// If the columns differ in length.
    pub(crate) fn new(
        force: &'a mut [Vec3],
        moment: &'a mut [Vec3],
        stiffness: &'a mut [f64],
    ) -> Self {
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
    pub(crate) unsafe fn add(&self, i: usize, end: End, force: Vec3, torque: Vec3, stiffness: f64) {
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
pub(crate) enum End {
    /// end1, a ball: it gets minus the contact force.
    One,
    /// end2, a ball: it gets the contact force.
    Two,
}

/// The one place a contribution is added to a ball's sums, so that direct
/// and held-back additions make the same operations.
#[inline]
pub(crate) fn add_end(
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
pub(crate) struct Deferred {
    pub(crate) target: u32,
    pub(crate) end: End,
    pub(crate) force: Vec3,
    pub(crate) torque: Vec3,
    pub(crate) stiffness: f64,
}

impl Deferred {
    /// Adds the contribution to its target: a ball below `balls.len`,
    /// else a block.
    ///
    /// # Safety
    /// No other thread adds to the same target meanwhile.
    #[inline]
    pub(crate) unsafe fn add_to(&self, [balls, blocks]: [Columns<'_>; 2]) {
        let t = self.target as usize;
        // SAFETY: as the caller promises.
        unsafe {
            if t < balls.len {
                balls.add(t, self.end, self.force, self.torque, self.stiffness)
            } else {
                blocks.add(
                    t - balls.len,
                    self.end,
                    self.force,
                    self.torque,
                    self.stiffness,
                )
            }
        }
    }
}

/// What the contacts of each chunk apply to the walls, summed in slot
/// order within the chunk; the walls' totals add these up lane by lane and
/// chunk by chunk, so that they do not depend on how the pass is cut into
/// segments.
#[derive(Default)]
pub(crate) struct WallPartials {
    /// The current chunk's sums per wall, and whether the wall is listed
    /// in `touched`.
    pub(crate) acc: Vec<(Vec3, Vec3, bool)>,
    /// The walls the current chunk reached, in the order it reached them.
    pub(crate) touched: Vec<u32>,
    /// (wall, force, moment) per chunk and wall reached, chunk by chunk.
    pub(crate) partial: Vec<(u32, Vec3, Vec3)>,
    /// Per lane, the end of its entries in `partial` (the lanes come in
    /// order; a lane without chunks here ends where the one before did).
    pub(crate) lane_end: Vec<usize>,
}

impl WallPartials {
    pub(crate) fn start(&mut self, n_walls: usize, n_lanes: usize) {
        self.acc.clear();
        self.acc.resize(n_walls, (Vec3::ZERO, Vec3::ZERO, false));
        self.touched.clear();
        self.partial.clear();
        self.lane_end.clear();
        self.lane_end.resize(n_lanes, 0);
    }

    #[inline]
    pub(crate) fn add(&mut self, w: u32, force: Vec3, torque: Vec3) {
        let a = &mut self.acc[w as usize];
        if !a.2 {
            a.2 = true;
            self.touched.push(w);
        }
        a.0 += force;
        a.1 += torque;
    }

    /// Closes the current chunk.
    pub(crate) fn end_chunk(&mut self) {
        for &w in &self.touched {
            let a = &mut self.acc[w as usize];
            self.partial.push((w, a.0, a.1));
            *a = (Vec3::ZERO, Vec3::ZERO, false);
        }
        self.touched.clear();
    }

    /// Closes the chunks of lane `lane` (and of the lanes before it that
    /// had none here).
    pub(crate) fn end_lane(&mut self, lane: usize) {
        let end = self.partial.len();
        for e in &mut self.lane_end[lane..] {
            *e = end;
        }
    }

    /// The partial sums of lane `lane`'s chunks, chunk by chunk.
    pub(crate) fn of_lane(&self, lane: usize) -> &[(u32, Vec3, Vec3)] {
        let from = if lane == 0 {
            0
        } else {
            self.lane_end[lane - 1]
        };
        &self.partial[from..self.lane_end[lane]]
    }
}

/// Held-back contributions below which one thread adds them all.
pub(crate) const PARALLEL_HELD: usize = 512;

/// Where one segment of the contact pass adds what its contacts apply.
pub(crate) struct Sums<'a> {
    /// The balls' sums.
    pub(crate) columns: Columns<'a>,
    /// The blocks' sums; block `j` is target `balls.len + j` of `only`
    /// and of the held-back lists.
    pub(crate) blocks: Columns<'a>,
    pub(crate) walls: &'a mut WallPartials,
    /// The only segment of every ball (see [`SegmentPlan::only`]) and this
    /// segment's index; `None` when the pass is one segment, which adds
    /// everything directly.
    pub(crate) only: Option<(&'a [u8], u8)>,
    /// See [`ball_parts`].
    pub(crate) parts: &'a [u32],
    /// Per thread part, the contributions held back.
    pub(crate) deferred: &'a mut [Vec<Deferred>],
    /// The sum of every component of every force and torque this segment
    /// produced: finite unless one of them is not (or, in theory, the sum
    /// overflows; see [`Simulation::check_sums`]).
    pub(crate) check: Vec3,
}

impl Sums<'_> {
    // Always inlined: as a call (two per contact) it cost 7 % of a dense
    // step (measured: dense 10k, one thread, 3.70 s -> 3.43 s).
    #[inline(always)]
    pub(crate) fn ball(&mut self, i: u32, end: End, force: Vec3, torque: Vec3, stiffness: f64) {
        if self.held(i, end, force, torque, stiffness) {
            return;
        }
        // SAFETY: no other segment reaches ball `i` (or there is no other
        // segment), so none adds to it while the segments run.
        unsafe { self.columns.add(i as usize, end, force, torque, stiffness) };
    }

    /// As [`Sums::ball`] for block `j`.
    #[inline(always)]
    pub(crate) fn block(&mut self, j: u32, end: End, force: Vec3, torque: Vec3, stiffness: f64) {
        let target = self.columns.len as u32 + j;
        if self.held(target, end, force, torque, stiffness) {
            return;
        }
        // SAFETY: as for balls, target by target.
        unsafe { self.blocks.add(j as usize, end, force, torque, stiffness) };
    }

    /// Holds the contribution to `target` back if another segment may
    /// reach it; returns whether it did.
    #[inline(always)]
    fn held(&mut self, target: u32, end: End, force: Vec3, torque: Vec3, stiffness: f64) -> bool {
        if let Some((only, k)) = self.only {
            if only[target as usize] != k {
                // The parts are few: the first bound above `target`.
                let p = self.parts[1..].partition_point(|&b| b <= target);
                self.deferred[p].push(Deferred {
                    target,
                    end,
                    force,
                    torque,
                    stiffness,
                });
                return true;
            }
        }
        false
    }

    #[inline]
    pub(crate) fn wall(&mut self, w: u32, force: Vec3, torque: Vec3) {
        self.walls.add(w, force, torque);
    }
}

impl Simulation {
    /// Checks the force sums of the step. The contact pass adds up every
    /// component of every force and torque it applies, per segment; a
    /// non-finite one makes that total non-finite (an overflow of the
    /// total alone would too), and only then are the contacts searched for
    /// the one that made it. The total costs a few additions per contact
    /// in registers, where a check of the sums themselves read every
    /// ball's force and moment once more (3-4 % of a settle step at 50 000
    /// balls, with a parallel region of its own).
    pub(crate) fn check_sums(&self) -> Result<(), StepError> {
        if !self.sums_suspect {
            return Ok(());
        }
        let b = BallsRef::of(&self.world);
        let blocks = BlocksRef::of(&self.world);
        let walls = walls(&self.world);
        let scene = Scene {
            pos: &b.pos,
            vel: &b.vel,
            spin: &b.spin,
            radius: &b.radius,
            blocks: BlockScene::of(&blocks, &self.shapes, &self.guard, self.step),
            walls: &walls,
            owner: &self.facet_owner,
            cell: self.cell.as_ref(),
        };
        let skip_below = self.skip_below();
        for m in &self.models {
            for lane in &m.lanes {
                let st = &lane.store;
                if let Some(k) = (lane.kernel.first_non_finite)(&scene, st, skip_below) {
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
}

/// The first slot of a lane of `K` contacts whose contact, entering the
/// sums (carry at least `skip_below`), applies a non-finite force or
/// moment.
pub(crate) fn first_non_finite<K: PairKernel>(
    scene: &Scene<'_>,
    st: &ContactStore,
    skip_below: u8,
) -> Option<usize> {
    (0..st.len()).find(|&k| {
        let ap = apply::<K>(scene, &st.plane[k], &st.output[k], st.end1[k], st.end2[k]);
        st.carry[k] >= skip_below
            && !(ap.force.is_finite() && ap.torque1.is_finite() && ap.torque2.is_finite())
    })
}
