//! The contact store: one per lane (model and pair kind), struct of arrays
//! over dense slots, with the engine's own flag bits and the carry codes
//! the contact pass keeps per contact.
//!
//! Invariants: slots move when contacts are removed (swap-remove) or
//! regrouped within their chunk, ids never; `state` holds `stride` values
//! per slot; bits 27-31 of a contact's flags belong to the engine and never
//! reach a model.

use super::Plane;
use crate::piece::Piece;
use talus_sdk::{flags, ContactOutput, STATUS_ACTIVE, STATUS_INACTIVE};

/// Engine-owned bit of a contact's flags (never shown to models): the
/// contact is open and its overlap-only model has already released it, so
/// until it closes the model would only repeat the same answer (zero force,
/// the same timestep stiffness): the contact goes to the model flagged
/// [`flags::IDLE`], which leaves it untouched. This is the contract that
/// `Activity::Overlap` declares.
pub(crate) const RELEASED: u32 = 1 << 31;

/// Engine-owned bit of a ball-facet contact's flags: the wall logic let the
/// contact carry force in the last step (full-mode state continuity reads
/// it).
pub(crate) const CARRIED: u32 = 1 << 30;

/// Engine-owned bit of a ball-facet contact's flags: the ball met the facet
/// from a side that does not interact (decided when the overlap starts and
/// kept while it lasts).
pub(crate) const SIDE_OFF: u32 = 1 << 29;

/// Engine-owned bit: the model asked at its last call that the contact be
/// kept while its pieces are apart ([`talus_sdk::report::HOLD`], a bond):
/// detection does not drop it.
pub(crate) const HELD: u32 = 1 << 28;

/// Engine-owned bit of a ball-facet contact's flags, set for one step by
/// the wall stage of a bond installation: of the ball's contacts with one
/// wall that qualify, this one is nearest, and it alone is bonded.
pub(crate) const BOND_NEAREST: u32 = 1 << 27;

/// Flag bits that never reach models.
pub(crate) const ENGINE_BITS: u32 = RELEASED | CARRIED | SIDE_OFF | HELD | BOND_NEAREST;

/// What a contact puts on its ends this step ([`ContactStore::carry`]):
/// nothing, only timestep stiffness, or force (and stiffness).
pub(crate) const CARRY_NOTHING: u8 = 0;
pub(crate) const CARRY_STIFFNESS: u8 = 1;
pub(crate) const CARRY_FORCE: u8 = 2;
// The contact pass takes a status code as its carry code.
const _: () = assert!(
    CARRY_NOTHING as u32 == STATUS_INACTIVE
        && CARRY_STIFFNESS as u32 == talus_sdk::STATUS_COULD_BE_ACTIVE
        && CARRY_FORCE as u32 == STATUS_ACTIVE
);

/// Contacts per plugin call (and per parallel work item).
pub const BATCH: usize = 1024;

/// Per-contact data that builds the model input: fixed at creation
/// (effective mass, property set) or set by the wall logic (flags).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Setup {
    /// Effective inertial mass (kg).
    pub mass: f64,
    /// Property set of the contact's model assignment.
    pub prop_set: u32,
    /// [`talus_sdk::flags`] bits.
    pub flags: u32,
}

/// The contacts of one lane (one model, one pair kind): dense slots, one
/// contiguous state block. Slots move when contacts are removed (swap-remove), ids never.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ContactStore {
    /// Stable contact id.
    pub id: Vec<u64>,
    /// end1: always a ball.
    pub end1: Vec<Piece>,
    /// end2: a piece of the lane's second kind.
    pub end2: Vec<Piece>,
    /// Contact plane and gap.
    pub plane: Vec<Plane>,
    /// Effective mass, property set and flags.
    pub setup: Vec<Setup>,
    /// Model output of the current step.
    #[serde(with = "crate::checkpoint::outputs")]
    pub output: Vec<ContactOutput>,
    /// One byte per contact: whether it puts nothing (0), only a timestep
    /// stiffness (1) or a force (2) on its ends this step, so that passes
    /// over the contacts skip idle ones without reading their output.
    pub carry: Vec<u8>,
    /// Model state, `stride` values per contact (the first `n_state` used).
    pub state: Vec<f64>,
    /// State slots per contact.
    pub n_state: usize,
    /// The narrow phase's own values per contact, `cache_stride` per slot
    /// (warm starts of the block kernels); empty in lanes whose kernel
    /// keeps none.
    pub cache: Vec<f64>,
    /// Cache values per contact (0: none).
    pub cache_stride: usize,
    /// In lanes with the six-DOF frame, the generalized displacements of
    /// each contact (see [`super::six_dof::Displacements`]); empty in the
    /// others.
    pub dof: Vec<super::Displacements>,
    /// Whether the lane keeps [`ContactStore::dof`] (its model pairing
    /// chose the six-DOF frame).
    pub six_dof: bool,
    /// Storage per contact in `state`: `max(n_state, 1)`, so that chunks of
    /// the state line up with chunks of contacts even without state.
    pub stride: usize,
    /// Set whenever a contact is added or removed (contacts may change
    /// chunk; a regrouping moves them only within theirs); the contact
    /// pass clears it once it has brought its segment plan up to date.
    pub changed: bool,
    /// The slots a contact arrived in (added, or moved in by a removal)
    /// since `changed` was last cleared; the contact pass clears it too.
    pub arrived: Vec<u32>,
    /// Per chunk of [`BATCH`] slots: how its contacts' kinds alternate
    /// (see [`ContactStore::note_switches`]).
    order: Vec<ChunkOrder>,
    /// Per chunk of [`BATCH`] slots: how many of its contacts the last
    /// contact pass found busy, which chooses the next pass's loop (see
    /// `pass::run_chunk_any`; both loops give the same bits, so a count
    /// that is out of date, or lost in a checkpoint, costs time only).
    #[serde(skip)]
    pub(crate) busy: Vec<u32>,
}

/// How the kinds of one chunk's contacts alternate, for
/// [`ContactStore::note_switches`].
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
struct ChunkOrder {
    /// Changes of kind beyond the floor, summed since the last regrouping.
    pub(crate) excess: u32,
    /// Changes of kind in the first step after the last regrouping.
    pub(crate) floor: u32,
    /// Set by a regrouping: the next step's count becomes the floor.
    pub(crate) floor_pending: bool,
}

impl ContactStore {
    /// An empty store for a model with `n_state` state slots.
    pub fn new(n_state: usize) -> ContactStore {
        ContactStore::with_cache(n_state, 0)
    }

    /// An empty store for a model with `n_state` state slots, whose
    /// kernel keeps `cache_stride` values per contact.
    pub fn with_cache(n_state: usize, cache_stride: usize) -> ContactStore {
        ContactStore {
            n_state,
            stride: n_state.max(1),
            cache_stride,
            ..Default::default()
        }
    }

    /// Number of contacts.
    pub fn len(&self) -> usize {
        self.id.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }

    /// The model state of the contact in `slot`.
    pub fn state_of(&self, slot: usize) -> &[f64] {
        &self.state[slot * self.stride..slot * self.stride + self.n_state]
    }

    /// Appends a contact with zeroed state; returns its slot.
    pub fn push(&mut self, id: u64, end1: Piece, end2: Piece, prop_set: u32, mass: f64) -> usize {
        self.changed = true;
        self.arrived.push(self.id.len() as u32);
        self.id.push(id);
        self.end1.push(end1);
        self.end2.push(end2);
        self.plane.push(Plane::default());
        let facet = if end2.is_facet() {
            flags::END2_FACET
        } else {
            0
        };
        self.setup.push(Setup {
            mass,
            prop_set,
            flags: flags::NEW | facet,
        });
        self.output.push(ContactOutput::default());
        self.carry.push(0);
        self.state.extend(std::iter::repeat_n(0.0, self.stride));
        self.cache
            .extend(std::iter::repeat_n(0.0, self.cache_stride));
        if self.six_dof {
            self.dof.push([0.0; 6]);
        }
        self.id.len() - 1
    }

    /// Notes, per chunk, how often a contact of another kind (ball-ball or
    /// ball-facet, busy or idle) than the one before it is met by the steps
    /// since the last count.
    ///
    /// Contacts that flicker between touching and not make some changes
    /// whatever the order, so a chunk's first count after its regrouping
    /// is taken as its floor, and only what lies above it is summed. A
    /// change costs the contact pass a mispredicted branch or two per step,
    /// a regrouping about one contact's move per contact of the chunk; it
    /// is due once the excess adds up to the chunk's length, which keeps
    /// the two costs even.
    pub fn note_switches(&mut self, counts: &[u32]) {
        self.order.resize(counts.len(), ChunkOrder::default());
        for (o, &n) in self.order.iter_mut().zip(counts) {
            if o.floor_pending {
                o.floor = n;
                o.floor_pending = false;
            } else {
                o.excess = o.excess.saturating_add(n.saturating_sub(o.floor));
            }
        }
    }

    /// The chunks due for a regrouping by kind (all of them if `always`).
    pub fn regroup_due(&self, always: bool) -> Vec<usize> {
        let n = self.len().div_ceil(BATCH);
        (0..n)
            .filter(|&c| always || self.order.get(c).is_some_and(|o| o.excess > BATCH as u32))
            .collect()
    }

    /// Regroups the contacts of each chunk in `chunks` (ascending) by
    /// `group` (stable: each group in its old order, groups in increasing
    /// order), the chunks in parallel; returns how many chunks had a
    /// contact move. With `owners`, thread `p` of the team regroups the
    /// chunks from `owners[p]` to `owners[p + 1]` (those of its segment of
    /// the contact pass).
    pub fn regroup_chunks(
        &mut self,
        chunks: &[usize],
        owners: Option<&[usize]>,
        group: impl Fn(&Self, usize) -> usize + Sync,
    ) -> usize {
        // Slots within a chunk are numbered in 16 bits.
        const _: () = assert!(BATCH <= 1 << 16);
        fn reorder<T: Copy>(v: &mut [T], order: &[u16], per: usize) {
            if per == 0 {
                return;
            }
            let old = v.to_vec();
            for (to, &k) in v.chunks_exact_mut(per).zip(order) {
                let k = k as usize;
                to.copy_from_slice(&old[k * per..(k + 1) * per]);
            }
        }
        for &c in chunks {
            if let Some(o) = self.order.get_mut(c) {
                o.excess = 0;
                o.floor_pending = true;
            }
        }
        // The new order of every chunk that changes, by chunk.
        let n_chunks = self.len().div_ceil(BATCH);
        let mut orders: Vec<Option<Vec<u16>>> = vec![None; n_chunks];
        let found: Vec<(usize, Vec<u16>)> = {
            let st = &*self;
            let due: Vec<usize> = chunks.iter().copied().filter(|&c| c < n_chunks).collect();
            let cuts = owners.map(|o| item_cuts(o, &due));
            let found = crate::team::map_cut(due, cuts.as_deref(), |_, c| {
                let start = c * BATCH;
                let len = BATCH.min(st.len() - start);
                let mut order: Vec<u16> = (0..len as u16).collect();
                order.sort_by_key(|&k| group(st, start + k as usize));
                let moved = order.iter().enumerate().any(|(i, &k)| i != k as usize);
                moved.then_some((c, order))
            });
            found.into_iter().flatten().collect()
        };
        let moved = found.len();
        if moved == 0 {
            return 0;
        }
        for (c, order) in found {
            orders[c] = Some(order);
        }
        // `changed` stays as it is: the contacts keep their chunk, hence
        // their segment of the parallel pass.
        let n = self.stride;
        let columns = self.id.chunks_mut(BATCH).zip(self.end1.chunks_mut(BATCH));
        let columns = columns.zip(
            self.end2
                .chunks_mut(BATCH)
                .zip(self.plane.chunks_mut(BATCH)),
        );
        let columns = columns.zip(
            self.setup
                .chunks_mut(BATCH)
                .zip(self.output.chunks_mut(BATCH)),
        );
        let columns = columns.zip(
            self.carry
                .chunks_mut(BATCH)
                .zip(self.state.chunks_mut(BATCH * n)),
        );
        let nc = self.cache_stride;
        let nd = usize::from(self.six_dof);
        let columns = columns.zip(
            cache_chunks(&mut self.cache, nc, BATCH, n_chunks)
                .into_iter()
                .zip(cache_chunks(&mut self.dof, nd, BATCH, n_chunks)),
        );
        // Only the chunks that change.
        let changed: Vec<usize> = (0..n_chunks).filter(|&c| orders[c].is_some()).collect();
        let cuts = owners.map(|o| item_cuts(o, &changed));
        let jobs = columns
            .zip(&orders)
            .filter_map(|(c, order)| Some((c, order.as_ref()?)));
        crate::team::map_cut(
            jobs.collect(),
            cuts.as_deref(),
            |_, ((columns, (cache, dof)), order)| {
                let ((((id, end1), (end2, plane)), (setup, output)), (carry, state)) = columns;
                reorder(id, order, 1);
                reorder(end1, order, 1);
                reorder(end2, order, 1);
                reorder(plane, order, 1);
                reorder(setup, order, 1);
                reorder(output, order, 1);
                reorder(carry, order, 1);
                reorder(state, order, n);
                reorder(cache, order, nc);
                reorder(dof, order, nd);
            },
        );
        moved
    }

    /// Removes the contact in `slot`; the last contact moves into it.
    pub fn swap_remove(&mut self, slot: usize) {
        self.changed = true;
        let last = self.len() - 1;
        self.id.swap_remove(slot);
        self.end1.swap_remove(slot);
        self.end2.swap_remove(slot);
        self.plane.swap_remove(slot);
        self.setup.swap_remove(slot);
        self.output.swap_remove(slot);
        self.carry.swap_remove(slot);
        let n = self.stride;
        if slot != last {
            self.arrived.push(slot as u32);
            let (head, tail) = self.state.split_at_mut(last * n);
            head[slot * n..(slot + 1) * n].copy_from_slice(&tail[..n]);
        }
        self.state.truncate(last * n);
        let n = self.cache_stride;
        if slot != last && n > 0 {
            let (head, tail) = self.cache.split_at_mut(last * n);
            head[slot * n..(slot + 1) * n].copy_from_slice(&tail[..n]);
        }
        self.cache.truncate(last * n);
        if self.six_dof {
            self.dof.swap_remove(slot);
        }
    }
}

/// A column of `stride` values per contact (the cache, the six-DOF
/// displacements) cut into `n_chunks` chunks of `size` contacts (empty
/// slices when the lane keeps none).
pub(crate) fn cache_chunks<T>(
    cache: &mut [T],
    stride: usize,
    size: usize,
    n_chunks: usize,
) -> Vec<&mut [T]> {
    if stride == 0 {
        (0..n_chunks).map(|_| <&mut [T]>::default()).collect()
    } else {
        cache.chunks_mut(size * stride).collect()
    }
}

/// For items that are ascending chunk indices, the first item of each
/// thread's part when thread `p` owns the chunks `owners[p]..owners[p + 1]`
/// (and the last thread any chunks after those).
pub(crate) fn item_cuts(owners: &[usize], chunks: &[usize]) -> Vec<usize> {
    let mut cuts: Vec<usize> = owners[..owners.len() - 1]
        .iter()
        .map(|&o| chunks.partition_point(|&c| c < o))
        .collect();
    cuts.push(chunks.len());
    cuts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(crate) fn swap_remove_moves_the_last_state_block() {
        let mut st = ContactStore::new(2);
        for i in 0..3 {
            let k = st.push(i, Piece::ball(0), Piece::ball(1), 0, 1.0);
            st.state[k * 2] = i as f64;
            st.state[k * 2 + 1] = 10.0 + i as f64;
        }
        st.swap_remove(0);
        assert_eq!(st.id, vec![2, 1]);
        assert_eq!(st.state, vec![2.0, 12.0, 1.0, 11.0]);
    }

    /// A store of `n` contacts whose every column tells the contact's
    /// number `k` (id `100 + k`); every fifth has a facet as end2 and
    /// those with `k % 7 < 3` carry flag bit 20.
    pub(crate) fn numbered_store(n: usize) -> ContactStore {
        let mut st = ContactStore::new(2);
        for k in 0..n {
            let end2 = if k % 5 == 0 {
                Piece::facet(k as u32)
            } else {
                Piece::ball(k as u32 + 1)
            };
            let slot = st.push(
                100 + k as u64,
                Piece::ball(k as u32),
                end2,
                (k % 3) as u32,
                k as f64,
            );
            st.plane[slot].gap = k as f64;
            st.output[slot].force[0] = k as f64;
            st.carry[slot] = (k % 3) as u8;
            st.state[2 * slot..2 * slot + 2].copy_from_slice(&[k as f64, -(k as f64)]);
            if k % 7 < 3 {
                st.setup[slot].flags |= 1 << 20;
            }
        }
        st
    }

    pub(crate) fn facet_then_flag(st: &ContactStore, k: usize) -> usize {
        usize::from(st.end2[k].is_facet()) * 2 + usize::from(st.setup[k].flags & (1 << 20) != 0)
    }

    #[test]
    pub(crate) fn a_regrouped_chunk_keeps_each_contacts_data_together() {
        let n = BATCH + 300;
        let mut st = numbered_store(n);
        assert_eq!(st.regroup_chunks(&[1], None, facet_then_flag), 1);
        let number = |slot: usize| (st.id[slot] - 100) as usize;
        for slot in 0..n {
            let k = number(slot);
            assert_eq!(slot / BATCH, k / BATCH, "slot {slot} left its chunk");
            assert_eq!(st.end1[slot], Piece::ball(k as u32));
            assert_eq!(st.setup[slot].mass, k as f64);
            assert_eq!(st.setup[slot].prop_set, (k % 3) as u32);
            assert_eq!(st.plane[slot].gap, k as f64);
            assert_eq!(st.output[slot].force[0], k as f64);
            assert_eq!(st.carry[slot], (k % 3) as u8);
            assert_eq!(st.state_of(slot), [k as f64, -(k as f64)]);
        }
        // The first chunk is as it was; the second is grouped, each group
        // in its old order.
        assert!((0..BATCH).all(|slot| number(slot) == slot));
        for slot in BATCH + 1..n {
            let (g0, g1) = (facet_then_flag(&st, slot - 1), facet_then_flag(&st, slot));
            assert!(
                g0 < g1 || (g0 == g1 && number(slot - 1) < number(slot)),
                "slot {slot}"
            );
        }
        assert!((BATCH..n).any(|slot| number(slot) != slot));
        // Grouped already: nothing moves.
        assert_eq!(st.regroup_chunks(&[1], None, facet_then_flag), 0);
        // Several chunks at once, in parallel: as one by one.
        let mut one_by_one = numbered_store(3 * BATCH + 10);
        let mut at_once = numbered_store(3 * BATCH + 10);
        for c in [0, 3] {
            one_by_one.regroup_chunks(&[c], None, facet_then_flag);
        }
        assert_eq!(
            at_once.regroup_chunks(&[0, 3], Some(&[0, 2, 4]), facet_then_flag),
            2
        );
        assert_eq!(at_once.id, one_by_one.id);
        assert!((BATCH..3 * BATCH).all(|slot| at_once.id[slot] == 100 + slot as u64));
    }

    #[test]
    pub(crate) fn chunks_go_to_the_thread_that_owns_them() {
        // Thread 0 owns chunks 0-2, thread 1 chunks 3-6 and any after.
        let owners = [0, 3, 7];
        assert_eq!(item_cuts(&owners, &[1, 2, 5, 6, 8]), [0, 2, 5]);
        assert_eq!(item_cuts(&owners, &[4, 5]), [0, 0, 2]);
        assert_eq!(item_cuts(&owners, &[0, 1]), [0, 2, 2]);
        assert_eq!(item_cuts(&owners, &[]), [0, 0, 0]);
    }

    #[test]
    pub(crate) fn a_chunk_is_due_once_its_changes_above_the_floor_add_up_to_its_length() {
        let mut st = numbered_store(2 * BATCH);
        let per_step = 10;
        let steps = BATCH / per_step;
        // A fresh store has no floor: every change counts.
        for _ in 0..steps {
            st.note_switches(&[per_step as u32, 0]);
        }
        assert!(st.regroup_due(false).is_empty());
        st.note_switches(&[per_step as u32, 0]);
        assert_eq!(st.regroup_due(false), [0]);
        assert_eq!(st.regroup_due(true), [0, 1]);
        st.regroup_chunks(&[0], None, facet_then_flag);
        assert!(st.regroup_due(false).is_empty());
        // The first count after the regrouping (flickering contacts) is
        // the floor: staying at it never makes the chunk due, going above
        // it does once the excess exceeds the length.
        for _ in 0..10 * BATCH {
            st.note_switches(&[50, 0]);
        }
        assert!(st.regroup_due(false).is_empty());
        for _ in 0..=steps {
            st.note_switches(&[50 + per_step as u32, 0]);
        }
        assert_eq!(st.regroup_due(false), [0]);
    }
}
