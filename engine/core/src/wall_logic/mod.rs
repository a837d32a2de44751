//! Wall logic: which of a ball's overlapping contacts with one wall carry
//! force this step, and how contact state moves between them.
//!
//! Reads: for every overlapping ball-facet contact of one (ball, wall)
//! pair, the wall contact point, gap, region and whether the contact carried
//! force last step. Writes: a [`Decision`] — force carriers, links,
//! proximity contacts and state transfers — that the simulation applies
//! before the contacts reach their models.
//! Invariants: rows come sorted by increasing gap (largest overlap first),
//! ties by region (face, then edge, then vertex) and then by facet index
//! ([`row_order`]), so every choice below is deterministic; at most one
//! contact carries force per linked set, per segment-check conflict and per
//! proximity contact.
//!
//! The pieces only need a centre, a radius and a wall, so clump pebbles can
//! reuse them unchanged.

use crate::geometry::Region;
use crate::math::Vec3;
use crate::wall::{Resolution, Wall};
use talus_sdk::{Propagation, StateSlotDesc, Swap};

/// One overlapping ball-facet contact of a (ball, wall) pair.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// Facet index in the wall.
    pub facet: u32,
    /// Gap (m), negative.
    pub gap: f64,
    /// Region code of the wall contact point.
    pub region: u8,
    /// Wall contact point: the facet point closest to the ball centre (m).
    pub wp: Vec3,
    /// How far the facet was moved to meet the ball (whole edge vectors of
    /// a periodic cell, see `cell_walls`; zero otherwise): `wp` is a point
    /// of the facet so moved.
    pub shift: Vec3,
    /// Whether the contact carried force last step.
    pub carried: bool,
    /// Proximity contact the contact belonged to last step, or 0.
    pub prev_proximity: u64,
    /// Model index of the contact.
    pub model: u16,
}

/// The order in which [`decide`] takes the rows of one (ball, wall) pair:
/// by increasing gap, an exact tie to the face region before an edge and
/// an edge before a vertex, then by facet index.
///
/// The region breaks ties because a contact point in a facet's face gives
/// the contact that facet's normal exactly, while the same gap seen from a
/// neighbour's edge (the centre a rounding error away from the edge) gives
/// a normal tilted by that offset over the distance to the centre: of two
/// equal overlaps the face contact is the one whose plane is exact.
pub fn row_order(a: &Row, b: &Row) -> std::cmp::Ordering {
    let rank = |r: &Row| match Region::from_code(r.region) {
        Region::Face => 0u8,
        Region::Edge(_) => 1,
        Region::Vertex(_) => 2,
    };
    a.gap
        .total_cmp(&b.gap)
        .then(rank(a).cmp(&rank(b)))
        .then(a.facet.cmp(&b.facet))
}

/// A proximity contact: several overlapping contacts at a concave feature
/// whose load one member (the leader) carries with a merged plane.
#[derive(Clone, Debug, PartialEq)]
pub struct Proximity {
    /// Row indices of the members, in row order.
    pub members: Vec<usize>,
    /// The member that carries the merged force.
    pub leader: usize,
    /// Overlap-weighted mean of the members' contact normals (unit).
    pub normal: Vec3,
    /// Mean gap of the members (m).
    pub gap: f64,
    /// Id inherited from last step (the smallest previous proximity id of
    /// the members), or 0 when the caller must give it a fresh one.
    pub inherited_id: u64,
}

/// Non-geometric state moving from one contact to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// Row that carried force last step and no longer does.
    pub from: usize,
    /// Row that carries force now.
    pub to: usize,
    /// Whether `to` did not carry force last step (it takes over rather
    /// than absorbs).
    pub fresh: bool,
}

/// The wall logic's result for one (ball, wall) pair; vectors are indexed
/// by row.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decision {
    /// Whether the row carries force this step.
    pub carries: Vec<bool>,
    /// The row that carries the load on behalf of this one, if another.
    pub linked_to: Vec<Option<usize>>,
    /// Index into `proximity` of the row's proximity contact.
    pub proximity_of: Vec<Option<usize>>,
    /// Proximity contacts (full mode).
    pub proximity: Vec<Proximity>,
    /// State transfers in the order they must be applied (full mode).
    pub transfers: Vec<Transfer>,
}

fn root(p: &mut [usize], mut i: usize) -> usize {
    while p[i] != i {
        p[i] = p[p[i]];
        i = p[i];
    }
    i
}

/// Joins the sets of `i` and `j`; the smaller index (the larger overlap)
/// stays the root.
fn join(p: &mut [usize], i: usize, j: usize) {
    let (a, b) = (root(p, i), root(p, j));
    if a != b {
        p[a.max(b)] = a.min(b);
    }
}

/// Parameter in (0, 1) at which the segment `a -> b` passes through the
/// triangle `(p, q, r)`, if it does. Touching the triangle's plane at the
/// segment's end (the wall contact point of a facet sharing an edge) does
/// not count: the crossing must lie before `1 - 1e-9`.
pub fn segment_crosses_triangle(a: Vec3, b: Vec3, [p, q, r]: [Vec3; 3]) -> Option<f64> {
    let d = b - a;
    let (e1, e2) = (q - p, r - p);
    let h = d.cross(e2);
    let det = e1.dot(h);
    // Parallel (or degenerate) segment: it cannot pass through the face.
    let scale = d.length_squared().sqrt() * e1.length() * e2.length();
    if det.abs() <= 1e-12 * scale {
        return None;
    }
    let inv = 1.0 / det;
    let s = a - p;
    let u = s.dot(h) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let qv = s.cross(e1);
    let v = d.dot(qv) * inv;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = e2.dot(qv) * inv;
    (t > 1e-9 && t < 1.0 - 1e-9).then_some(t)
}

/// Decides the force carriers of one ball's overlapping contacts with one
/// wall.
///
/// `x` is the ball centre; `rows` are sorted by [`row_order`].
///
/// # Model
/// Both modes: contacts whose wall contact points lie on an edge or vertex
/// shared with another overlapping contact's facet are linked, and only the
/// largest overlap of a linked set carries force. Full mode adds, in order:
/// the segment check (a carrier whose centre-to-contact-point segment
/// crosses another carrier's facet, or is crossed, conflicts with it; the
/// largest overlap of a conflict set survives); proximity contacts
/// (surviving carriers whose facet normals lie within the cutoff angle
/// merge, then overlapping contacts on edge-adjacent facets within the
/// cutoff of a member join; the merged contact has the overlap-weighted
/// normal and the mean gap, and one member carries it); and state
/// transfers (a carrier receives the state of a linked contact that carried
/// force last step and no longer does, when their facet normals lie within
/// the cutoff angle and they share a model).
pub fn decide(wall: &Wall, x: Vec3, rows: &[Row]) -> Decision {
    let mut out = Decision::default();
    decide_into(wall, x, rows, &mut Scratch::default(), &mut out);
    out
}

/// Work space of [`decide_into`], kept between calls so that deciding
/// many pairs allocates nothing once it has grown.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    assoc: Vec<usize>,
    set: Vec<usize>,
    roots: Vec<usize>,
    conflict: Vec<usize>,
    survivors: Vec<usize>,
    merge: Vec<usize>,
    final_carrier: Vec<usize>,
}

/// [`decide`] into `out` (overwritten), with reused work space.
pub fn decide_into(wall: &Wall, x: Vec3, rows: &[Row], scratch: &mut Scratch, out: &mut Decision) {
    let Scratch {
        assoc,
        set,
        roots,
        conflict,
        survivors,
        merge,
        final_carrier,
    } = scratch;
    let n = rows.len();
    let full = wall.resolution == Resolution::Full;
    let cos_cut = wall.cutoff_angle.cos() - 1e-12;
    let normal = |i: usize| wall.normals[rows[i].facet as usize];

    // Associative links (rules 1-3).
    assoc.clear();
    assoc.extend(0..n);
    for i in 0..n {
        for j in i + 1..n {
            let (fi, fj) = (rows[i].facet as usize, rows[j].facet as usize);
            let (ri, rj) = (
                Region::from_code(rows[i].region),
                Region::from_code(rows[j].region),
            );
            if wall.shares_feature(fi, ri, fj) || wall.shares_feature(fj, rj, fi) {
                join(assoc, i, j);
            }
        }
    }
    set.clear();
    for i in 0..n {
        let r = root(assoc, i);
        set.push(r);
    }
    roots.clear();
    roots.extend((0..n).filter(|&i| set[i] == i));

    // Segment check among the carriers of the associative logic.
    conflict.clear();
    conflict.extend(0..n);
    if full {
        for (k, &a) in roots.iter().enumerate() {
            for &b in &roots[k + 1..] {
                let crosses = |from: usize, to: usize| {
                    segment_crosses_triangle(
                        x,
                        rows[from].wp,
                        wall.corners(rows[to].facet as usize)
                            .map(|c| c + rows[to].shift),
                    )
                    .is_some()
                };
                if crosses(a, b) || crosses(b, a) {
                    join(conflict, a, b);
                }
            }
        }
    }
    survivors.clear();
    for &a in roots.iter() {
        if root(conflict, a) == a {
            survivors.push(a);
        }
    }

    // Proximity contacts: survivors within the cutoff angle merge, then
    // adjacent overlapping facets within the cutoff join.
    let Decision {
        carries,
        linked_to,
        proximity_of,
        proximity,
        transfers,
    } = out;
    proximity_of.clear();
    proximity_of.resize(n, None);
    proximity.clear();
    if full && survivors.len() > 1 {
        merge.clear();
        merge.extend(0..n);
        for (k, &a) in survivors.iter().enumerate() {
            for &b in &survivors[k + 1..] {
                if normal(a).dot(normal(b)) >= cos_cut {
                    join(merge, a, b);
                }
            }
        }
        for &a in survivors.iter() {
            let r = root(merge, a);
            if r == a && survivors.iter().any(|&b| b != a && root(merge, b) == a) {
                let members: Vec<usize> = survivors
                    .iter()
                    .copied()
                    .filter(|&b| root(merge, b) == a)
                    .collect();
                for &m in &members {
                    proximity_of[m] = Some(proximity.len());
                }
                proximity.push(Proximity {
                    members,
                    leader: a,
                    normal: Vec3::ZERO,
                    gap: 0.0,
                    inherited_id: 0,
                });
            }
        }
        for (p, pc) in proximity.iter_mut().enumerate() {
            loop {
                let joiner = (0..n).find(|&c| {
                    proximity_of[c].is_none()
                        && pc.members.iter().any(|&m| {
                            wall.neighbours[rows[m].facet as usize]
                                .contains(&(rows[c].facet as i32))
                        })
                        && pc
                            .members
                            .iter()
                            .any(|&m| normal(m).dot(normal(c)) >= cos_cut)
                });
                match joiner {
                    Some(c) => {
                        proximity_of[c] = Some(p);
                        pc.members.push(c);
                    }
                    None => break,
                }
            }
            pc.members.sort_unstable();
            let mut weighted = Vec3::ZERO;
            let mut gap_sum = 0.0;
            for &m in &pc.members {
                let d = rows[m].wp - x;
                let len = d.length();
                let cn = if len > 0.0 { d / len } else { -normal(m) };
                weighted += cn * -rows[m].gap;
                gap_sum += rows[m].gap;
            }
            pc.normal = weighted.normalize_or(-normal(pc.members[0]));
            pc.gap = gap_sum / pc.members.len() as f64;
            pc.leader = pc
                .members
                .iter()
                .copied()
                .find(|&m| rows[m].carried)
                .unwrap_or(pc.members[0]);
            pc.inherited_id = pc
                .members
                .iter()
                .map(|&m| rows[m].prev_proximity)
                .filter(|&id| id != 0)
                .min()
                .unwrap_or(0);
        }
    }

    // Who carries the load of each row.
    let carrier = |i: usize, conflict: &mut [usize]| -> usize {
        let mut i = i;
        loop {
            if let Some(p) = proximity_of[i] {
                return proximity[p].leader;
            }
            let s = set[i];
            if s != i {
                i = s;
                continue;
            }
            let c = root(conflict, i);
            if c != i {
                i = c;
                continue;
            }
            return i;
        }
    };
    carries.clear();
    carries.resize(n, false);
    linked_to.clear();
    linked_to.resize(n, None);
    final_carrier.clear();
    final_carrier.resize(n, 0);
    for i in 0..n {
        let c = carrier(i, conflict);
        final_carrier[i] = c;
        if c == i {
            carries[i] = true;
        } else {
            linked_to[i] = Some(c);
        }
    }

    transfers.clear();
    if full {
        for to in (0..n).filter(|&i| carries[i]) {
            for from in 0..n {
                if rows[from].carried
                    && !carries[from]
                    && final_carrier[from] == to
                    && rows[from].model == rows[to].model
                    && normal(from).dot(normal(to)) >= cos_cut
                {
                    transfers.push(Transfer {
                        from,
                        to,
                        fresh: !rows[to].carried,
                    });
                }
            }
        }
    }
}

/// Applies each state slot's propagation rule (see
/// [`talus_sdk::Propagation`]) for one [`Transfer`]: `from` is the
/// source's state, `to` the target's; `first_into_fresh` says that the
/// target did not carry force last step and receives its first transfer of
/// this step. Slots declared `Custom` go to `custom(from, to)` (the model's
/// callback) after the others are done, and only those slots keep what it
/// writes.
///
/// Returns whether any slot moved (`Copy` into a fresh target, `Add`,
/// `Custom`); when none does, the transfer is a no-op and the target keeps
/// its own frame too. With every slot `Copy`, as for the linear model, this
/// is a copy into a fresh target's first transfer and nothing otherwise.
pub fn transfer_state(
    slots: &[StateSlotDesc],
    from: &[f64],
    to: &mut [f64],
    t: &Transfer,
    first_into_fresh: bool,
    custom: impl FnOnce(&[f64], &mut [f64]) -> Result<(), String>,
) -> Result<bool, String> {
    let moves = |rule: Propagation| match rule {
        Propagation::None => false,
        Propagation::Copy => t.fresh,
        Propagation::Add | Propagation::Custom => true,
    };
    if !slots.iter().any(|s| moves(s.propagation)) {
        return Ok(false);
    }
    let mut any_custom = false;
    for ((slot, &source), target) in slots.iter().zip(from).zip(to.iter_mut()) {
        match slot.propagation {
            Propagation::None => {}
            Propagation::Copy => {
                if first_into_fresh {
                    *target = source;
                }
            }
            Propagation::Add => *target += source,
            Propagation::Custom => any_custom = true,
        }
    }
    if any_custom {
        let decided = to.to_vec();
        custom(from, to)?;
        for ((slot, target), &value) in slots.iter().zip(to.iter_mut()).zip(&decided) {
            if slot.propagation != Propagation::Custom {
                *target = value;
            }
        }
    }
    Ok(true)
}

/// Applies each state slot's rule for swapped ends (see
/// [`talus_sdk::Swap`]) to one contact's `state`; slots declared `Custom`
/// go to `custom(before, state)` (the model's callback, `before` the state
/// before the swap) after the others are done, and only those slots keep
/// what it writes.
///
/// The engine swaps the ends of no contact yet (ball-ball contacts keep
/// their creation order, and a facet is always end2); this is the rule the
/// first stage that reorders ends must apply, together with turning the
/// contact frame half a turn about `s` (`n` and `t` change sign).
pub fn swap_state(
    slots: &[StateSlotDesc],
    state: &mut [f64],
    custom: impl FnOnce(&[f64], &mut [f64]) -> Result<(), String>,
) -> Result<(), String> {
    let before = state.to_vec();
    let mut any_custom = false;
    for (slot, value) in slots.iter().zip(state.iter_mut()) {
        match slot.swap {
            Swap::Keep => {}
            Swap::Negate => *value = -*value,
            Swap::Custom => any_custom = true,
        }
    }
    if any_custom {
        let decided = state.to_vec();
        custom(&before, state)?;
        for ((slot, value), &kept) in slots.iter().zip(state.iter_mut()).zip(&decided) {
            if slot.swap != Swap::Custom {
                *value = kept;
            }
        }
    }
    Ok(())
}

mod stage;

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn point(rng: &mut ChaCha8Rng) -> Vec3 {
        Vec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
    }

    /// Independent reference: where the segment meets the triangle's plane,
    /// and whether that point lies inside by the signs of the three
    /// sub-triangle normals; `None` also for cases within `margin` of an
    /// edge or of the segment's ends, which the comparison skips.
    fn reference(a: Vec3, b: Vec3, tri: [Vec3; 3], margin: f64) -> Option<Option<f64>> {
        let [p, q, r] = tri;
        let n = (q - p).cross(r - p);
        let denom = n.dot(b - a);
        if denom.abs() < 1e-6 * n.length() * (b - a).length() {
            return None;
        }
        let t = n.dot(p - a) / denom;
        if (t - 0.0).abs() < margin || (t - 1.0).abs() < margin {
            return None;
        }
        let x = a + (b - a) * t;
        let signs = [
            (q - p).cross(x - p),
            (r - q).cross(x - q),
            (p - r).cross(x - r),
        ];
        let scale = n.length();
        let mut inside = true;
        for (k, s) in signs.iter().enumerate() {
            let e = [q - p, r - q, p - r][k].length();
            let d = s.dot(n) / scale / e; // signed distance to edge k
            if d.abs() < margin {
                return None;
            }
            inside &= d > 0.0;
        }
        Some((inside && t > 0.0 && t < 1.0).then_some(t))
    }

    #[test]
    fn segment_crossing_matches_an_independent_reference() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (mut hits, mut checked) = (0, 0);
        for _ in 0..20_000 {
            let tri = [point(&mut rng), point(&mut rng), point(&mut rng)];
            let (a, b) = (point(&mut rng), point(&mut rng));
            let Some(expected) = reference(a, b, tri, 1e-7) else {
                continue;
            };
            let got = segment_crosses_triangle(a, b, tri);
            assert_eq!(got.is_some(), expected.is_some(), "{a} {b} {tri:?}");
            if let (Some(g), Some(e)) = (got, expected) {
                assert!((g - e).abs() < 1e-9);
                hits += 1;
            }
            checked += 1;
        }
        assert!(
            checked > 15_000 && hits > 1_000,
            "{checked} checked, {hits} hits"
        );
    }

    #[test]
    fn a_segment_ending_on_the_triangle_does_not_cross_it() {
        let tri = [Vec3::ZERO, Vec3::X, Vec3::Y];
        let a = Vec3::new(0.2, 0.2, 1.0);
        assert!(segment_crosses_triangle(a, Vec3::new(0.2, 0.2, 0.0), tri).is_none());
        assert!(segment_crosses_triangle(a, Vec3::new(0.2, 0.2, -1.0), tri).is_some());
        // In the plane: never a crossing.
        assert!(
            segment_crosses_triangle(Vec3::new(-1.0, 0.1, 0.0), Vec3::new(2.0, 0.1, 0.0), tri)
                .is_none()
        );
    }

    fn slots(rules: &[(Propagation, Swap)]) -> Vec<StateSlotDesc> {
        rules
            .iter()
            .enumerate()
            .map(|(k, &(p, w))| {
                StateSlotDesc::new(&format!("s{k}"), "-", "")
                    .propagation(p)
                    .swap(w)
            })
            .collect()
    }

    fn no_custom(_: &[f64], _: &mut [f64]) -> Result<(), String> {
        panic!("no slot is custom")
    }

    #[test]
    fn every_slot_follows_its_own_propagation_rule() {
        use Propagation::*;
        let rules = slots(&[(None, Swap::Keep), (Copy, Swap::Keep), (Add, Swap::Keep)]);
        let from = [1.0, 2.0, 3.0];
        let fresh = Transfer {
            from: 0,
            to: 1,
            fresh: true,
        };
        let held = Transfer {
            fresh: false,
            ..fresh
        };
        let mut to = [10.0, 20.0, 30.0];
        assert_eq!(
            transfer_state(&rules, &from, &mut to, &fresh, true, no_custom),
            Ok(true)
        );
        assert_eq!(to, [10.0, 2.0, 33.0]);
        // A second transfer into the same fresh target adds but copies no
        // more; one into a target that carried force only adds.
        let mut to = [10.0, 20.0, 30.0];
        assert_eq!(
            transfer_state(&rules, &from, &mut to, &fresh, false, no_custom),
            Ok(true)
        );
        assert_eq!(to, [10.0, 20.0, 33.0]);
        let mut to = [10.0, 20.0, 30.0];
        assert_eq!(
            transfer_state(&rules, &from, &mut to, &held, false, no_custom),
            Ok(true)
        );
        assert_eq!(to, [10.0, 20.0, 33.0]);
        // Copy alone into a target that carried force moves nothing.
        let copy = slots(&[(Copy, Swap::Keep); 3]);
        let mut to = [10.0, 20.0, 30.0];
        assert_eq!(
            transfer_state(&copy, &from, &mut to, &held, false, no_custom),
            Ok(false)
        );
        assert_eq!(to, [10.0, 20.0, 30.0]);
        let nothing = slots(&[(None, Swap::Keep); 3]);
        assert_eq!(
            transfer_state(&nothing, &from, &mut to, &fresh, true, no_custom),
            Ok(false)
        );
    }

    #[test]
    fn custom_slots_keep_only_what_the_callback_writes_to_them() {
        use Propagation::*;
        let rules = slots(&[
            (Copy, Swap::Keep),
            (Custom, Swap::Custom),
            (Add, Swap::Negate),
        ]);
        let from = [1.0, 2.0, 3.0];
        let fresh = Transfer {
            from: 0,
            to: 1,
            fresh: true,
        };
        let mut to = [10.0, 20.0, 30.0];
        let scribble = |from: &[f64], to: &mut [f64]| {
            // The other slots already hold their result here.
            assert_eq!(to, [1.0, 20.0, 33.0]);
            to.iter_mut().zip(from).for_each(|(t, f)| *t = 100.0 * f);
            Ok(())
        };
        assert_eq!(
            transfer_state(&rules, &from, &mut to, &fresh, true, scribble),
            Ok(true)
        );
        assert_eq!(to, [1.0, 200.0, 33.0]);
        let failing = |_: &[f64], _: &mut [f64]| Err("no".to_string());
        assert_eq!(
            transfer_state(&rules, &from, &mut to, &fresh, true, failing),
            Err("no".to_string())
        );

        let mut state = [1.0, 2.0, 3.0];
        let swap = |before: &[f64], state: &mut [f64]| {
            assert_eq!(before, [1.0, 2.0, 3.0]);
            state.fill(7.0);
            Ok(())
        };
        swap_state(&rules, &mut state, swap).unwrap();
        assert_eq!(state, [1.0, 7.0, -3.0]);
    }
}
