//! The wall stage of a cycle: the gap and region of every ball-facet
//! contact (in parallel), then the wall logic of [`super::decide_into`]
//! over each ball's overlapping facet contacts (serially).
//!
//! Reads: ball positions, facets. Writes: facet-contact planes, the
//! `SUPPRESSED`/`CARRIED` flags, proximity planes, state transfers.
//! Invariant: pairs are decided in (ball, wall, gap, region, facet) order,
//! independent of slots and threads.

use crate::body::{walls, BallsRef};
use crate::cell_walls::facet_shift;
use crate::contact::{self, BATCH, CARRIED, RELEASED, SIDE_OFF};
use crate::error::StepError;
use crate::lane::Lane;
use crate::pass::*;
use crate::piece::PairKind;
use crate::sim::*;
use crate::team::{self};
use crate::wall_logic;
use rustc_hash::FxHashMap;
use talus_sdk::abi_stable::std_types::{RSlice, RSliceMut};
use talus_sdk::{flags, StateEvent};

impl Simulation {
    /// Gap and region of every ball-facet contact, for the wall logic;
    /// returns per model the slots of its ball-facet lane of the overlapping contacts on an
    /// interacting side, in slot order, each with whether it carried force
    /// last step (that mark is cleared here for every facet contact).
    pub(crate) fn wall_gaps(&mut self) -> Vec<Vec<(u32, bool)>> {
        let balls = BallsRef::of(&self.world);
        let (pos, radius) = (&*balls.pos, &*balls.radius);
        let walls = &*walls(&self.world);
        let owner = &self.facet_owner;
        let cell = self.cell.as_ref().filter(|c| c.any_periodic());
        let mut overlapping = Vec::with_capacity(self.models.len());
        let threads = rayon::current_num_threads();
        for m in self.models.iter_mut() {
            let facet_lane = PairKind::BallFacet.index();
            let owners = m.plan.owners(threads, facet_lane);
            let st = &mut m.lanes[facet_lane].store;
            if st.is_empty() {
                overlapping.push(Vec::new());
                continue;
            }
            let chunks = (st.plane.chunks_mut(BATCH).zip(st.setup.chunks_mut(BATCH)))
                .zip(st.end1.chunks(BATCH).zip(st.end2.chunks(BATCH)));
            // Each thread the chunks of its segment of the contact pass.
            let chunks: Vec<_> = chunks.collect();
            let all: Vec<usize> = (0..chunks.len()).collect();
            let cuts = owners.map(|o| contact::item_cuts(o, &all));
            let lists: Vec<Vec<(u32, bool)>> = team::map_cut(
                chunks,
                cuts.as_deref(),
                |ci, ((planes, setups), (end1, end2))| {
                    let mut list = Vec::new();
                    for (k, &b) in end2.iter().enumerate() {
                        let (plane, setup, a) = (&mut planes[k], &mut setups[k], end1[k]);
                        let carried = setup.flags & CARRIED != 0;
                        setup.flags &= !CARRIED;
                        let (wi, f) = owner[b.index()];
                        let wall = &walls[wi as usize];
                        // The ball as the facet sees it: moved to the facet's
                        // image nearest it in a periodic cell (`cell_walls`).
                        let t = facet_shift(cell, wall, f as usize, pos[a.index()]);
                        let x = pos[a.index()] - t;
                        if setup.flags & RELEASED != 0 {
                            // Open and released by its model: only whether it
                            // closes matters. A ball that cannot touch the
                            // facet stays open; its exact plane is refreshed
                            // only for output.
                            let apart = wall.cannot_touch(f as usize, x, radius[a.index()]);
                            if apart {
                                plane.gap = f64::INFINITY;
                                continue;
                            }
                        }
                        let was_overlapping = plane.gap < 0.0;
                        let (xf, region) = wall.closest_point(f as usize, x);
                        plane.gap = (xf - x).length() - radius[a.index()];
                        // The side is chosen when the ball starts to overlap the
                        // facet and kept while it overlaps, so a ball entering
                        // through an inactive side passes without force.
                        if !(was_overlapping && plane.gap < 0.0) {
                            if wall.side_active(f as usize, x) {
                                setup.flags &= !SIDE_OFF;
                            } else {
                                setup.flags |= SIDE_OFF;
                            }
                        }
                        if setup.flags & SIDE_OFF != 0 {
                            setup.flags |= flags::SUPPRESSED;
                        } else {
                            setup.flags &= !flags::SUPPRESSED;
                        }
                        plane.region = region.code();
                        // Kept for contact resolution this step, which turns
                        // it into the contact location (next to the ball).
                        plane.xc = xf + t;
                        if plane.gap < 0.0 && setup.flags & SIDE_OFF == 0 {
                            list.push(((ci * BATCH + k) as u32, carried));
                        }
                    }
                    list
                },
            );
            let list = lists.concat();
            overlapping.push(list);
        }
        overlapping
    }

    /// Wall logic over every ball's overlapping contacts with each wall
    /// ([`wall_logic::decide`]): marks the contacts that do not carry force
    /// `SUPPRESSED`, gives proximity-contact leaders their merged plane and,
    /// in full mode, moves state between contacts by each model's
    /// propagation rule.
    pub(crate) fn wall_logic(
        &mut self,
        overlapping: &[Vec<(u32, bool)>],
    ) -> Result<usize, StepError> {
        #[derive(Clone, Copy)]
        struct Entry {
            ball: u32,
            wall: u32,
            slot: u32,
            id: u64,
            row: wall_logic::Row,
        }
        // Most balls overlap a single facet of any wall (a ball resting on
        // a flat floor): such a lone contact carries its own load and the
        // logic has nothing to decide (full mode included: there is
        // nothing to merge or move), so it is marked at once; only balls
        // with several overlapping facet contacts are sorted into pairs.
        let touches = &mut self.wall_touches;
        let cell = self.cell.as_ref().filter(|c| c.any_periodic());
        let balls = BallsRef::of(&self.world);
        let walls = walls(&self.world);
        touches.resize(balls.len(), 0);
        let facet_lane = PairKind::BallFacet.index();
        for (m, list) in self.models.iter().zip(overlapping) {
            for &(k, _) in list {
                let t = &mut touches[m.lanes[facet_lane].store.end1[k as usize].index()];
                *t = t.saturating_add(1);
            }
        }
        let mut pairs = 0;
        let mut entries: Vec<Entry> = Vec::new();
        for (mi, (m, list)) in self.models.iter_mut().zip(overlapping).enumerate() {
            let Lane {
                store: st, lone, ..
            } = &mut m.lanes[facet_lane];
            lone.clear();
            lone.resize(st.len().div_ceil(BATCH) * LONE_WORDS, 0);
            for &(k, carried) in list {
                let k = k as usize;
                if touches[st.end1[k].index()] == 1 {
                    lone[k / 64] |= 1 << (k % 64);
                    pairs += 1;
                    continue;
                }
                let b = st.end2[k];
                let (w, f) = self.facet_owner[b.index()];
                let id = st.id[k];
                let x = balls.pos[st.end1[k].index()];
                let shift = facet_shift(cell, &walls[w as usize], f as usize, x);
                entries.push(Entry {
                    ball: st.end1[k].index() as u32,
                    wall: w,
                    slot: k as u32,
                    id,
                    row: wall_logic::Row {
                        facet: f,
                        gap: st.plane[k].gap,
                        region: st.plane[k].region,
                        wp: st.plane[k].xc,
                        shift,
                        carried,
                        prev_proximity: if self.proximity_ids.is_empty() {
                            0
                        } else {
                            self.proximity_ids.get(&id).copied().unwrap_or(0)
                        },
                        model: mi as u16,
                    },
                });
            }
        }
        for (m, list) in self.models.iter().zip(overlapping) {
            for &(k, _) in list {
                touches[m.lanes[facet_lane].store.end1[k as usize].index()] = 0;
            }
        }
        self.wall_info.clear();
        let mut proximity_ids = FxHashMap::default();
        if entries.is_empty() {
            self.proximity_ids = proximity_ids;
            return Ok(pairs);
        }
        // Ordered by (ball, wall), then gap and facet within a pair: the
        // pairs by a sort of small keys (moving the entries costs more than
        // comparing them), the few pairs with several contacts after.
        let mut order: Vec<(u64, u32)> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| ((e.ball as u64) << 32 | e.wall as u64, i as u32))
            .collect();
        order.sort_unstable();
        let mut entries: Vec<Entry> = order.iter().map(|&(_, i)| entries[i as usize]).collect();
        let mut start = 0;
        while start < order.len() {
            let mut end = start + 1;
            while end < order.len() && order[end].0 == order[start].0 {
                end += 1;
            }
            if end - start > 1 {
                entries[start..end].sort_unstable_by(|x, y| wall_logic::row_order(&x.row, &y.row));
            }
            start = end;
        }
        let mut rows: Vec<wall_logic::Row> = Vec::new();
        let mut taken_ids: Vec<u64> = Vec::new();
        let mut state_copy: Vec<f64> = Vec::new();
        let mut scratch = wall_logic::Scratch::default();
        let mut decision = wall_logic::Decision::default();
        let mut start = 0;
        while start < entries.len() {
            let key = (entries[start].ball, entries[start].wall);
            let mut end = start + 1;
            while end < entries.len() && (entries[end].ball, entries[end].wall) == key {
                end += 1;
            }
            let group = &entries[start..end];
            let wall = &walls[key.1 as usize];
            pairs += 1;
            // A lone contact of a ball that touches several walls.
            if group.len() == 1 {
                let e = &group[0];
                let st = &mut self.models[e.row.model as usize].lanes[facet_lane].store;
                st.setup[e.slot as usize].flags |= CARRIED;
                start = end;
                continue;
            }
            rows.clear();
            rows.extend(group.iter().map(|e| e.row));
            let x = balls.pos[key.0 as usize];
            let r = balls.radius[key.0 as usize];
            wall_logic::decide_into(wall, x, &rows, &mut scratch, &mut decision);
            // Proximity ids: inherited when unique among this step's, else new.
            let mut pc_ids = Vec::with_capacity(decision.proximity.len());
            for pc in &decision.proximity {
                let id = if pc.inherited_id != 0 && !taken_ids.contains(&pc.inherited_id) {
                    pc.inherited_id
                } else {
                    let id = self.next_contact_id;
                    self.next_contact_id += 1;
                    id
                };
                taken_ids.push(id);
                pc_ids.push(id);
            }
            // State transfers read the source before anything else changes.
            for (ti, t) in decision.transfers.iter().enumerate() {
                let (src, dst) = (&group[t.from], &group[t.to]);
                let m = &mut self.models[src.row.model as usize];
                let (from, to) = (src.slot as usize, dst.slot as usize);
                let store = &mut m.lanes[facet_lane].store;
                let n_state = store.n_state;
                let first_into_fresh =
                    t.fresh && !decision.transfers[..ti].iter().any(|u| u.to == t.to);
                state_copy.clear();
                state_copy.extend_from_slice(store.state_of(from));
                let stride = store.stride;
                let set = store.setup[to].prop_set as usize;
                let props = &m.props[set * m.n_props..(set + 1) * m.n_props];
                let target = &mut store.state[to * stride..to * stride + n_state];
                let event = if t.fresh {
                    StateEvent::TakeOver
                } else {
                    StateEvent::Merge
                };
                let custom = |from: &[f64], to: &mut [f64]| {
                    (m.entry.custom_state)(
                        event.code(),
                        RSlice::from_slice(props),
                        RSlice::from_slice(from),
                        RSliceMut::from_mut_slice(to),
                    )
                    .into_result()
                    .map_err(|e| e.to_string())
                };
                let slots = &m.entry.descriptor.state;
                let moved = wall_logic::transfer_state(
                    slots,
                    &state_copy,
                    target,
                    t,
                    first_into_fresh,
                    custom,
                )
                .map_err(|message| StepError::Model {
                    model: m.name.clone(),
                    contact: dst.id,
                    step: self.step,
                    message: format!("propagation failed: {message}"),
                })?;
                if !moved {
                    continue;
                }
                if first_into_fresh {
                    // The frame travels with the state, so state held in
                    // contact-plane axes keeps its direction in space.
                    let store = &mut m.lanes[facet_lane].store;
                    let p = store.plane[from];
                    let q = &mut store.plane[to];
                    q.n = p.n;
                    q.s = p.s;
                    q.t = p.t;
                    q.initialised = p.initialised;
                    // So do the six-DOF displacements, the contact's
                    // history in that frame (the normal one follows the
                    // new carrier's gap when the pass refreshes it).
                    if store.six_dof {
                        store.dof[to] = store.dof[from];
                    }
                    store.setup[to].flags &= !flags::NEW;
                }
            }
            for (i, e) in group.iter().enumerate() {
                let st = &mut self.models[e.row.model as usize].lanes[facet_lane].store;
                let k = e.slot as usize;
                if decision.carries[i] {
                    st.setup[k].flags |= CARRIED;
                } else {
                    st.setup[k].flags |= flags::SUPPRESSED;
                }
                let linked = decision.linked_to[i].map_or(0, |j| group[j].id);
                let pc = decision.proximity_of[i].map_or(0, |p| pc_ids[p]);
                if pc != 0 {
                    proximity_ids.insert(e.id, pc);
                }
                if linked != 0 || pc != 0 {
                    let key = (e.row.model, PairKind::BallFacet, e.slot);
                    self.wall_info.insert(key, (linked, pc));
                }
            }
            for pc in &decision.proximity {
                // The leader's wall point moves to where the merged normal
                // and mean gap put it; contact resolution then builds the
                // merged plane from it like any ball-facet plane.
                let e = &group[pc.leader];
                let st = &mut self.models[e.row.model as usize].lanes[facet_lane].store;
                st.plane[e.slot as usize].xc = x + pc.normal * (r + pc.gap);
            }
            start = end;
        }
        self.proximity_ids = proximity_ids;
        Ok(pairs)
    }

    /// The wall part of a cycle on the current positions: gaps of every
    /// ball-facet contact, then the wall logic. Returns the number of
    /// (ball, wall) pairs with overlapping contacts. A cycle runs it before
    /// the contact pass; public for benchmarks.
    pub fn wall_stage(&mut self) -> Result<usize, StepError> {
        if self.cells.is_none() {
            self.prepare()?;
        }
        let overlapping = self.wall_gaps();
        let pairs = self.wall_logic(&overlapping)?;
        self.block_wall_stage()?;
        self.convex_wall_stage()?;
        self.shape_fault()?;
        Ok(pairs)
    }
}
