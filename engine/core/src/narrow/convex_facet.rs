//! The convex-facet kernel: a convex body of a plugin shape against a wall
//! facet extruded into a prism on the side away from the body, as for
//! blocks (`block_facet.rs`), resolved by GJK on the pair moved apart
//! (`talus_geometry::signed`). Where the body's deepest point lies over
//! the facet, the prism's face is what it meets, and the normal is the
//! facet's and the gap exact.
//!
//! A body on a flat region of a wall meets every facet of it that it
//! overlaps; a force per facet would grow with their number. So the wall
//! stage ([`Simulation::convex_wall_stage`]) resolves every convex-facet
//! contact first, then, per body, wall and plane, lets one contact carry
//! the plane of the deepest of the coplanar facets the body overlaps (a
//! body's surface is convex: on one plane it has one deepest point) and
//! suppresses the others for the step. The carrier keeps carrying while it
//! overlaps; when it leaves, the deepest member takes over its state by
//! the model's propagation rules, with its frame. A body on one facet and
//! on many coplanar ones feels the same force at the same place.
//!
//! Facet sides as for blocks: the side of the body's centroid while apart
//! decides where the prism goes, and stays while the body overlaps.

use super::block_block::{set_vec, vec_at};
use super::block_facet::{corners, out_of_reach, Swept};
use super::convex::{contact_of, note_fault, posed, track_feature};
use super::facet_stage::{
    add_wall_end, facet_found, facet_lever, plane_clusters, resolve_facet_lane, take_over,
};
use super::{add_block_end, plane_geometry, BlockScene, Found, Masses, PairKernel, Scene};
use crate::body::{walls, BlocksRef};
use crate::cell::Cell;
use crate::cell_walls::facet_shift;
use crate::contact::{Applied, Plane, CARRIED};
use crate::error::StepError;
use crate::inputs::Geometry;
use crate::math::Vec3;
use crate::piece::{PairKind, Piece};
use crate::sim::Simulation;
use crate::sums::{End, Sums};
use crate::wall::Wall;
use std::cell::RefCell;
use talus_geometry::{SupportMap, Triangle};
use talus_sdk::{flags, ContactOutput};

/// A convex body (end1) and a wall facet (end2).
pub(crate) struct ConvexFacet;

/// Where each value sits in a convex-facet contact's cache.
mod slot {
    /// The last normal found (3 values), the next search's start.
    pub(super) const HINT: usize = 0;
    /// The side of the facet the body is on: +1 along its normal, -1
    /// against it, 0 not decided yet.
    pub(super) const SIDE: usize = 3;
    /// This step's plane as the wall stage leaves it for the pass: the
    /// normal (3 values), the location (3) and the gap.
    pub(super) const N: usize = 4;
    pub(super) const XC: usize = 7;
    pub(super) const GAP: usize = 10;
    /// The feature of the body's contact point plus one, and whether this
    /// step moved it to another (see `convex::track_feature`).
    pub(super) const FEATURE: usize = 11;
    pub(super) const MOVED: usize = 12;
    /// Values per contact.
    pub(super) const LEN: usize = 13;
}

/// Resolves the contact of convex body `i` with facet `f` of `wall`
/// (normal from the body to the facet, gap, location), keeping the side
/// and the last normal in `cache`; `None` when the query failed.
fn resolve(
    k: &BlockScene<'_>,
    (wall, cell): (&Wall, Option<&Cell>),
    (f, facet): (usize, Piece),
    cache: &mut [f64],
    i: usize,
) -> Option<(Vec3, f64, Vec3)> {
    let c = k.pos[i];
    let radius = k.shapes[k.shape[i] as usize].radius;
    // The facet moved to the body in a periodic cell (`cell_walls`).
    let t = facet_shift(cell, wall, f, c);
    let tri = corners(wall, f).map(|v| v + t);
    let normal = wall.normals[f];
    let apart = cache[slot::GAP] > 0.0 || cache[slot::SIDE] == 0.0;
    if apart {
        cache[slot::SIDE] = if normal.dot(c - tri[0]) >= 0.0 {
            1.0
        } else {
            -1.0
        };
    }
    let body = Piece::convex(i as u32);
    let fault = RefCell::new(None);
    let shape = posed(k, i, &fault);
    // From the body into the facet: against the normal of its side.
    let n = -cache[slot::SIDE] * normal;
    // The face region: the body's deepest point along the normal lies over
    // the facet, and the contact is the facet's plane against it, exactly
    // (what GJK with the prism converges to there).
    let deepest = shape.support_point(n);
    if over_triangle(deepest, tri, normal) {
        note_fault(k, body, facet, fault);
        if !deepest.is_finite() {
            return None;
        }
        let gap = (tri[0] - deepest).dot(n);
        set_vec(cache, slot::HINT, n);
        return Some((n, gap, deepest + 0.5 * gap * n));
    }
    let swept = Swept {
        facet: Triangle { vertices: tri },
        e: normal * (-cache[slot::SIDE] * 2.0 * radius),
    };
    let found = contact_of(&shape, &swept, vec_at(cache, slot::HINT), false);
    let failed = fault.borrow().is_some();
    note_fault(k, body, facet, fault);
    let Some(found) = found.filter(|_| !failed) else {
        if !failed {
            k.guard.note(k.step, body, facet);
        }
        return None;
    };
    set_vec(cache, slot::HINT, found.normal);
    // Halfway between the body's deepest point and the facet's plane (the
    // prism's witness is any point of its face).
    let xc = found.point_a + 0.5 * found.gap * found.normal;
    Some((found.normal, found.gap, xc))
}

/// Whether `p` projects onto the triangle `tri` of unit normal `normal`
/// (its edges included).
#[inline]
fn over_triangle(p: Vec3, tri: [Vec3; 3], normal: Vec3) -> bool {
    (0..3).all(|e| {
        let (a, b) = (tri[e], tri[(e + 1) % 3]);
        (b - a).cross(p - a).dot(normal) >= 0.0
    })
}

/// Whether body `i` lies wholly on its side of the plane of facet `f` of
/// `wall` (one support query): a released contact that stays open.
#[inline]
fn above_plane(
    k: &BlockScene<'_>,
    i: usize,
    (wall, cell): (&Wall, Option<&Cell>),
    f: u32,
    cache: &[f64],
) -> bool {
    let side = cache[slot::SIDE];
    if side == 0.0 {
        return false;
    }
    let f = f as usize;
    let n = -side * wall.normals[f];
    let fault = RefCell::new(None);
    let deepest = posed(k, i, &fault).support_point(n);
    let t = facet_shift(cell, wall, f, k.pos[i]);
    fault.into_inner().is_none() && (corners(wall, f)[0] + t - deepest).dot(n) > 0.0
}

#[inline]
fn stored(cache: &[f64]) -> (Vec3, f64, Vec3) {
    (
        vec_at(cache, slot::N),
        cache[slot::GAP],
        vec_at(cache, slot::XC),
    )
}

fn store(cache: &mut [f64], (n, gap, xc): (Vec3, f64, Vec3)) {
    set_vec(cache, slot::N, n);
    set_vec(cache, slot::XC, xc);
    cache[slot::GAP] = gap;
}

impl PairKernel for ConvexFacet {
    const PAIR: PairKind = PairKind::ConvexFacet;
    const CACHE: usize = slot::LEN;

    #[inline(always)]
    fn took_over(cache: &[f64]) -> bool {
        cache[slot::MOVED] != 0.0
    }

    #[inline(always)]
    fn find(
        scene: &Scene<'_>,
        _plane: &mut Plane,
        cache: &mut [f64],
        a: Piece,
        b: Piece,
        released: bool,
    ) -> Option<Found> {
        // The wall stage resolved the contact this step.
        let (n, gap, xc) = stored(cache);
        cache[slot::MOVED] = 0.0;
        if released && gap > 0.0 {
            return None;
        }
        let k = &scene.blocks;
        let fault = RefCell::new(None);
        let body = posed(k, a.index(), &fault);
        if body.has_features() {
            // The body's point: the gap back from the location.
            let moved = track_feature(&body, xc - 0.5 * gap * n, cache, slot::FEATURE);
            cache[slot::MOVED] = f64::from(u8::from(moved));
            note_fault(k, a, b, fault);
        }
        Some(facet_found(scene, (n, gap, xc), a, b))
    }

    #[inline(always)]
    fn lever(
        scene: &Scene<'_>,
        p: &Plane,
        _o: &ContactOutput,
        f: Vec3,
        a: Piece,
        b: Piece,
    ) -> (Vec3, Vec3) {
        facet_lever(scene, p, f, a, b)
    }

    #[inline(always)]
    fn add_end1(sums: &mut Sums<'_>, a: Piece, ap: &Applied) {
        add_block_end(sums, a, End::One, ap);
    }

    #[inline(always)]
    fn add_end2(sums: &mut Sums<'_>, scene: &Scene<'_>, b: Piece, ap: &Applied, carry: u8) {
        add_wall_end(sums, scene, b, ap, carry);
    }

    fn geometry(scene: &Scene<'_>, plane: &Plane, _cache: &[f64], a: Piece, b: Piece) -> Geometry {
        let (wi, f) = scene.owner[b.index()];
        let (wall, x1) = (&scene.walls[wi as usize], scene.blocks.pos[a.index()]);
        let centre = wall.centre + facet_shift(scene.cell, wall, f as usize, x1);
        plane_geometry(plane, 0.0, None, x1, centre)
    }

    fn refresh(scene: &Scene<'_>, plane: &mut Plane, cache: &mut [f64], a: Piece, b: Piece) {
        let (wi, f) = scene.owner[b.index()];
        let wall = &scene.walls[wi as usize];
        let at = (f as usize, b);
        if let Some(found) = resolve(&scene.blocks, (wall, scene.cell), at, cache, a.index()) {
            store(cache, found);
            (plane.n, plane.gap, plane.xc) = found;
        }
    }

    /// A wall does not move under contact forces: the body's own mass.
    fn effective_mass(masses: &Masses<'_>, a: Piece, _b: Piece) -> f64 {
        masses.blocks[a.index()]
    }
}

impl Simulation {
    /// The convex part of the wall stage: every convex-facet contact
    /// resolved (in parallel), then for each body, wall and plane one
    /// contact carrying the deepest plane of the coplanar facets the body
    /// overlaps (serially, in (body, wall, slot) order; see the module
    /// docs).
    pub(crate) fn convex_wall_stage(&mut self) -> Result<(), StepError> {
        let lane = PairKind::ConvexFacet.index();
        if self.models.iter().all(|m| m.lanes[lane].store.is_empty()) {
            return Ok(());
        }
        let blocks = BlocksRef::of(&self.world);
        let walls = &*walls(&self.world);
        let k = BlockScene::of(&blocks, &self.shapes, &self.guard, self.step);
        let owner = &self.facet_owner;
        let cell = self.cell.as_ref().filter(|c| c.any_periodic());
        let step = self.step;
        let mut state = Vec::new();
        for m in self.models.iter_mut() {
            let st = &mut m.lanes[lane].store;
            let apart = |i: usize, wall: &Wall, f: u32, cache: &[f64]| {
                out_of_reach(&k, i, (wall, cell), f) || above_plane(&k, i, (wall, cell), f, cache)
            };
            let resolve = |wall: &Wall, facet: (usize, Piece), cache: &mut [f64], i: usize| {
                if let Some(found) = resolve(&k, (wall, cell), facet, cache, i) {
                    store(cache, found);
                }
            };
            let slots = (slot::LEN, slot::SIDE);
            resolve_facet_lane(st, (walls, owner), slots, apart, resolve);
            let tol = |b: usize| 1e-9 * k.shapes[k.shape[b] as usize].radius;
            let slots = (slot::LEN, slot::GAP, slot::SIDE);
            for c in plane_clusters(st, owner, walls, slots, tol) {
                carry_deepest(m, lane, &c.members, step, &mut state)?;
            }
        }
        Ok(())
    }
}

/// Lets one contact of `members` (slots of one body's contacts with
/// coplanar facets of one wall, in slot order) carry the deepest plane of
/// those that overlap; see the module docs.
fn carry_deepest(
    m: &mut crate::sim::ModelRuntime,
    lane: usize,
    members: &[u32],
    step: u64,
    state: &mut Vec<f64>,
) -> Result<(), StepError> {
    let st = &mut m.lanes[lane].store;
    let at = |s: u32, v: usize| s as usize * slot::LEN + v;
    let previous = members
        .iter()
        .copied()
        .find(|&s| st.setup[s as usize].flags & CARRIED != 0);
    for &s in members {
        st.setup[s as usize].flags &= !CARRIED;
    }
    let gap = |s: u32| st.cache[at(s, slot::GAP)];
    let over: Vec<u32> = members.iter().copied().filter(|&s| gap(s) < 0.0).collect();
    let Some(&first) = over.first() else {
        return Ok(());
    };
    let deepest = over
        .iter()
        .copied()
        .fold(first, |best, s| if gap(s) < gap(best) { s } else { best });
    let carrier = match previous {
        Some(p) if over.contains(&p) => p,
        _ => deepest,
    };
    if carrier != deepest {
        let plane = stored(&st.cache[at(deepest, 0)..at(deepest, slot::LEN)]);
        store(&mut st.cache[at(carrier, 0)..at(carrier, slot::LEN)], plane);
    }
    for &s in &over {
        if s != carrier {
            st.setup[s as usize].flags |= flags::SUPPRESSED;
        }
    }
    st.setup[carrier as usize].flags |= CARRIED;
    if let Some(p) = previous.filter(|&p| p != carrier) {
        take_over(m, lane, p as usize, carrier as usize, step, state)?;
    }
    Ok(())
}
