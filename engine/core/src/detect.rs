//! Contact detection: re-binning in the cell space, dropping contacts whose
//! pieces' cell extents parted (unless their model holds them), creating contacts for new candidate pairs
//! in the lane of their model and pair kind, and keeping each lane's
//! chunks grouped by busy and idle contacts.
//!
//! Reads: the re-bin flags of the law of motion, piece extents.
//! Writes: the contact stores (new contacts with stable ids; removals).
//! Invariant: at most one contact per piece pair; new contacts are created
//! in sorted pair order, so ids do not depend on the thread count.

use crate::body::{walls, BallsRef, BlocksRef, Owner};
use crate::contact::{ContactStore, BATCH, HELD, RELEASED};
use crate::narrow::Masses;
use crate::piece::{pair_key, PairKind, Piece, PieceKind};
use crate::sim::*;
use crate::team::{self};
use rayon::prelude::*;

impl Simulation {
    /// Contact detection: re-bin moved pieces, drop contacts whose cell
    /// extents separated, create contacts for new candidate pairs.
    pub(crate) fn detect(&mut self) {
        let Some(cells) = self.cells.as_mut() else {
            return;
        };
        let balls = BallsRef::of(&self.world);
        let walls = walls(&self.world);
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
                cells.update_ball(i, balls.pos[i], balls.radius[i]);
            }
        }
        // Pebbles the clump stage moved out of their cell extent.
        for &i in &self.pebble_moves {
            let i = i as usize;
            cells.update_ball(i, balls.pos[i], balls.radius[i]);
        }
        let blocks = BlocksRef::of(&self.world);
        for (i, &x) in blocks.pos.iter().enumerate() {
            cells.update_block(i, x);
        }
        for (g, &(w, f)) in self.facet_owner.iter().enumerate() {
            let wall = &walls[w as usize];
            if wall.is_moving() {
                cells.update_facet(g, wall.facet_extent(f as usize));
            }
        }
        // A contact its model let go of (a bond broke) may lie between
        // pieces long apart: every contact is looked at once.
        if std::mem::take(&mut self.unheld) {
            let lanes = self.models.iter_mut().flat_map(|m| &mut m.lanes);
            for lane in lanes {
                let st = &mut lane.store;
                for slot in (0..st.len()).rev() {
                    let (a, b) = (st.end1[slot], st.end2[slot]);
                    if st.setup[slot].flags & HELD != 0 || cells.near(a, b) {
                        continue;
                    }
                    self.contact_pairs.remove(&pair_key(a, b));
                    st.swap_remove(slot);
                }
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
                .flat_map(|m| &m.lanes)
                .map(|lane| {
                    let st = &lane.store;
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
        let lanes = self.models.iter_mut().flat_map(|m| &mut m.lanes);
        for (lane, moved) in lanes.zip(&moved) {
            let st = &mut lane.store;
            for &slot in moved.iter().rev() {
                let slot = slot as usize;
                let (a, b) = (st.end1[slot], st.end2[slot]);
                // A contact its model holds (a bond) stays however far.
                if st.setup[slot].flags & HELD != 0 || cells.near(a, b) {
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
            // The pebbles of one clump never touch each other.
            if a.is_ball() && b.is_ball() {
                let owner = balls.owner[a.index()];
                if owner != Owner::FREE.0 && owner == balls.owner[b.index()] {
                    continue;
                }
            }
            let group = |p: Piece| match p.kind() {
                PieceKind::Ball => balls.group[p.index()],
                PieceKind::Block | PieceKind::Convex => blocks.group[p.index()],
                PieceKind::Facet => walls[self.facet_owner[p.index()].0 as usize].group,
            };
            let (ga, gb) = (group(a), group(b));
            let Some(&(m, set)) = self.assignment.get(&(ga.min(gb), ga.max(gb))) else {
                // Unassigned pairs are refused before step 0; nothing to do.
                continue;
            };
            let Some(pair) = PairKind::of(a, b) else {
                // Pieces without a kernel yet: refused before step 0.
                continue;
            };
            let lane = &mut self.models[m as usize].lanes[pair.index()];
            let masses = Masses {
                balls: &balls.mass,
                blocks: &blocks.mass,
            };
            let mc = (lane.kernel.mass)(&masses, a, b);
            let id = self.next_contact_id;
            self.next_contact_id += 1;
            let slot = lane.store.push(id, a, b, set, mc);
            let resolution = self
                .pair_resolution
                .get(&(ga.min(gb), ga.max(gb)))
                .copied()
                .unwrap_or(self.settings.block_resolution);
            let n = lane.store.cache_stride;
            (lane.kernel.init)(&mut lane.store.cache[slot * n..(slot + 1) * n], resolution);
            self.contact_pairs.insert(key);
        }
        self.candidates = cand;
    }

    /// Regroups the contacts within each chunk of [`BATCH`] slots of every
    /// lane: busy contacts first, then idle ones (released by their model
    /// and apart), each group in its old order. Every [`KIND_SAMPLE`] steps
    /// the kinds of each chunk are counted, and the chunks that have
    /// drifted out of order (see [`ContactStore::note_switches`]) are
    /// regrouped; with `always`, every chunk is, now.
    ///
    /// The contact pass branches on whether a contact is busy or idle, and
    /// where the two alternate at random the processor guesses wrong about
    /// half the time (a dense pack at rest holds ~40 % idle contacts);
    /// grouped, the branches are predictable. Contacts stay in
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
        for m in self.models.iter_mut() {
            for (l, lane) in m.lanes.iter_mut().enumerate() {
                let (st, owners) = (&mut lane.store, m.plan.owners(threads, l));
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
                st.regroup_chunks(&due, owners, contact_kind);
            }
        }
    }
}

/// Steps between two counts of the contact kinds in each chunk (see
/// [`Simulation::regroup_contacts`]).
pub(crate) const KIND_SAMPLE: u64 = 16;

/// The kind of the contact in `slot` for the order of a lane's slots:
/// busy (0) or released (1).
pub(crate) fn contact_kind(st: &ContactStore, slot: usize) -> usize {
    usize::from(st.setup[slot].flags & RELEASED != 0)
}
