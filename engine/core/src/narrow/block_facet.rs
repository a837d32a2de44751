//! The block-facet kernel: the facet extruded into a prism on the side
//! away from the block (seed 001), resolved against the block as two
//! blocks are (see `block_block.rs`), the query in the block's principal
//! frame. The prism is as deep as the block is wide, so every part of the
//! block behind the facet lies in it.
//!
//! A block pressed on a flat region of a wall made of many facets meets
//! each of them; with one force per facet, a force that grows with the
//! depth would grow with the number of facets under the block. So the
//! wall stage ([`Simulation::block_wall_stage`]) resolves every
//! block-facet contact first, then lets one contact per block, wall and
//! plane carry the load of all the coplanar facets the block overlaps:
//! the overlap volumes and areas add up, the location is the centroid of
//! the whole overlap (the volume-weighted mean of the parts), the normal
//! that of the common plane and the gap the deepest. The others
//! are suppressed for the step. The carrier keeps carrying while it
//! overlaps; when it leaves, the member with the largest overlap takes
//! over its state by the model's propagation rules, with its frame. A
//! block on one facet and on two hundred coplanar ones thus feels the same
//! force at the same place.
//!
//! Facet sides: the side of the block's centroid when the contact is apart
//! decides where the prism goes, and stays while the block overlaps the
//! facet (a block pushed past the facet's plane is still pushed back).

use super::block_block::{
    bond_radius, hold_warm_start, mode_of, overlap_of, query_rounded, set_vec, slot as base,
    vec_at, Other,
};
use super::facet_stage::{
    add_wall_end, clusters_of, facet_found, facet_lever, plane_clusters, resolve_facet_lane,
    take_over,
};
use super::{
    add_block_end, facet_motion, plane_geometry, rigid_motion, BlockScene, Carried, FacetImage,
    Found, Masses, PairKernel, Scene,
};
use crate::block::BlockResolution;
use crate::body::{walls, BlocksRef};
use crate::cell::Cell;
use crate::cell_walls::facet_shift;
use crate::contact::ContactStore;
use crate::contact::{self, Applied, Plane, CARRIED, HELD, SIDE_OFF};
use crate::error::StepError;
use crate::inputs::Geometry;
use crate::math::{Quat, Vec3};
use crate::piece::{PairKind, Piece};
use crate::sim::Simulation;
use crate::sums::{End, Sums};
use crate::wall::Wall;
use talus_geometry::{extrude_facet, AreaMoments, ConvexPolyhedron, SupportMap, Triangle};
use talus_sdk::{flags, ContactOutput};

/// A block (end1) and a wall facet (end2).
pub(crate) struct BlockFacet;

/// Where each value sits in a block-facet contact's cache, after the
/// block-block values.
mod slot {
    use super::base;
    /// The side of the facet the block is on: +1 along its normal, -1
    /// against it, 0 not decided yet.
    pub(super) const SIDE: usize = base::LEN;
    /// This step's plane as the wall stage leaves it for the pass: the
    /// normal (3 values), the location (3) and the gap.
    pub(super) const N: usize = SIDE + 1;
    pub(super) const XC: usize = N + 3;
    pub(super) const GAP: usize = XC + 3;
    /// The location in the block's frame (3 values), and the gradients of
    /// the area vector's three components under a translation and a
    /// rotation (about that location) of the facet, in the block's frame
    /// (18 values, NaN where not resolved): what a cluster's merge needs.
    pub(super) const LOCAL_XC: usize = GAP + 1;
    pub(super) const JACOBIAN: usize = LOCAL_XC + 3;
    /// Values per contact.
    pub(super) const LEN: usize = JACOBIAN + 18;
}

/// A triangle swept along `e`: the facet's prism as a support map, with
/// nothing built.
pub(super) struct Swept {
    pub(super) facet: Triangle,
    pub(super) e: Vec3,
}

impl Other for Swept {
    fn shifted(&self, by: Vec3) -> Self {
        Swept {
            facet: Triangle {
                vertices: self.facet.vertices.map(|v| v + by),
            },
            e: self.e,
        }
    }

    fn polyhedron(&self) -> Option<ConvexPolyhedron> {
        extrude_facet(&self.facet, self.e, self.e.length()).ok()
    }
}

impl SupportMap for Swept {
    #[inline]
    fn support_point(&self, dir: Vec3) -> Vec3 {
        let p = self.facet.support_point(dir);
        if dir.dot(self.e) > 0.0 {
            p + self.e
        } else {
            p
        }
    }

    #[inline]
    fn interior_point(&self) -> Vec3 {
        self.facet.interior_point() + 0.5 * self.e
    }
}

/// The corners of facet `f` of `wall`.
#[inline]
pub(super) fn corners(wall: &Wall, f: usize) -> [Vec3; 3] {
    wall.facets[f].map(|v| wall.vertices[v as usize])
}

/// Resolves the contact between block `i` and facet `f` of `wall` in world
/// axes (normal from the block to the facet, gap, location), keeping the
/// side, the warm starts and the overlap volume and area in `cache`;
/// `None` when the query failed.
fn resolve(
    k: &BlockScene<'_>,
    (wall, cell): (&Wall, Option<&Cell>),
    (f, piece): (usize, Piece),
    cache: &mut [f64],
    i: usize,
) -> Option<(Vec3, f64, Vec3)> {
    let shape = &k.shapes[k.shape[i] as usize];
    let (q, c) = (k.orientation[i], k.pos[i]);
    let to_local = q.conjugate();
    // The facet moved to the block in a periodic cell (`cell_walls`).
    let t = facet_shift(cell, wall, f, c);
    let local = corners(wall, f).map(|v| to_local * (v + t - c));
    let normal = to_local * wall.normals[f];
    // The side: decided while apart (or first met), kept while overlapping.
    let apart = cache[slot::GAP] > 0.0 || cache[slot::SIDE] == 0.0;
    if apart {
        // The block's centroid is the local origin.
        let side = if normal.dot(-local[0]) >= 0.0 {
            1.0
        } else {
            -1.0
        };
        cache[slot::SIDE] = side;
    }
    let e = normal * (-cache[slot::SIDE] * 2.0 * shape.radius);
    let facet = Triangle { vertices: local };
    let swept = Swept { facet, e };
    let note = || k.guard.note(k.step, Piece::block(i as u32), piece);
    let potential = mode_of(cache) == BlockResolution::Potential;
    let radii = [shape.rounding, 0.0];
    let Some(l) = query_rounded(&shape.polyhedron, &swept, radii, cache, potential) else {
        note();
        return None;
    };
    if l.fell_back {
        note();
    }
    set_vec(cache, slot::LOCAL_XC, l.xc);
    match l.jacobian {
        Some(rows) => {
            for (k, [du, dw]) in rows.into_iter().enumerate() {
                set_vec(cache, slot::JACOBIAN + 6 * k, du);
                set_vec(cache, slot::JACOBIAN + 6 * k + 3, dw);
            }
        }
        None => cache[slot::JACOBIAN..slot::JACOBIAN + 18].fill(f64::NAN),
    }
    Some((q * l.n, l.gap, q * l.xc + c))
}

/// Whether block `i`'s bounding sphere misses facet `f` of `wall` (moved
/// to the block in a periodic cell): apart from the facet's bounding
/// sphere or from its plane.
#[inline]
pub(super) fn out_of_reach(
    k: &BlockScene<'_>,
    i: usize,
    (wall, cell): (&Wall, Option<&Cell>),
    f: u32,
) -> bool {
    let (c, r) = (k.pos[i], k.shapes[k.shape[i] as usize].radius);
    let f = f as usize;
    let c = c - facet_shift(cell, wall, f, c);
    let (centre, radius) = wall.spheres[f];
    let reach = r + radius;
    (c - centre).length_squared() > reach * reach
        || wall.normals[f].dot(c - corners(wall, f)[0]).abs() > r
}

/// Whether block `i` lies wholly on one side of the plane of facet `f` of
/// `wall` (moved to the block in a periodic cell), clear of it: then it is
/// apart from the facet, whose points all lie in that plane, by at least
/// the distance between them. One support query of the block, where a
/// resolution would run GJK against the facet's prism: most of the
/// contacts a block keeps with the facets of a box while it falls or
/// rests beside a wall are clear of their planes.
#[inline]
fn clear_of_plane(
    k: &BlockScene<'_>,
    i: usize,
    (wall, cell): (&Wall, Option<&Cell>),
    f: u32,
) -> bool {
    let shape = &k.shapes[k.shape[i] as usize];
    let (q, c) = (k.orientation[i], k.pos[i]);
    let f = f as usize;
    let c = c - facet_shift(cell, wall, f, c);
    let n = wall.normals[f];
    let d = n.dot(c - wall.vertices[wall.facets[f][0] as usize]);
    // The block's reach from its centroid towards the plane.
    let towards = q.conjugate() * if d > 0.0 { -n } else { n };
    let reach = shape.polyhedron.support_point(towards).dot(towards) + shape.rounding;
    d.abs() > reach
}

/// This step's plane from the cache: normal, gap, location.
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

impl PairKernel for BlockFacet {
    const PAIR: PairKind = PairKind::BlockFacet;
    const CACHE: usize = slot::LEN;
    const SURFACE: bool = true;

    fn init(cache: &mut [f64], resolution: BlockResolution) {
        super::block_block::init(cache, resolution);
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
        if released && gap > 0.0 {
            return None;
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

    fn geometry(scene: &Scene<'_>, plane: &Plane, cache: &[f64], a: Piece, b: Piece) -> Geometry {
        let (wi, f) = scene.owner[b.index()];
        let (wall, x1) = (&scene.walls[wi as usize], scene.blocks.pos[a.index()]);
        let centre = wall.centre + facet_shift(scene.cell, wall, f as usize, x1);
        Geometry {
            overlap: Some(overlap_of(
                cache,
                (scene.blocks.orientation[a.index()], x1),
                plane,
            )),
            ..plane_geometry(plane, 0.0, None, x1, centre)
        }
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

    /// A wall does not move under contact forces: the block's own mass.
    fn effective_mass(masses: &Masses<'_>, a: Piece, _b: Piece) -> f64 {
        masses.blocks[a.index()]
    }

    /// A bond between a block and a wall is carried as one between two
    /// blocks: the wall's material point at the location moves with the
    /// wall (its rigid motion, or the facet's velocity field where the
    /// wall deforms), and the facet it bonded on stays its facet.
    const CARRIES_BONDS: bool = true;

    #[inline(always)]
    fn carried(
        scene: &Scene<'_>,
        plane: &Plane,
        cache: &mut [f64],
        a: Piece,
        b: Piece,
    ) -> Option<Carried> {
        let i = a.index();
        hold_warm_start(cache, scene.blocks.orientation[i], plane.n);
        let (wi, f) = scene.owner[b.index()];
        let wall = &scene.walls[wi as usize];
        let image = FacetImage::of(scene.cell, wall, f as usize, scene.blocks.pos[i]);
        Some(Carried {
            end1: rigid_motion(scene, i, scene.blocks.pos[i]),
            end2: facet_motion(wall, f as usize, (plane.xc, plane.xc), image),
            radius: bond_radius(cache),
        })
    }

    #[inline(always)]
    fn bond_radius(cache: &[f64], _radius: [f64; 2]) -> [f64; 2] {
        bond_radius(cache)
    }
}

impl Simulation {
    /// The block part of the wall stage: every block-facet contact
    /// resolved (in parallel), then for each block, wall and plane one
    /// contact carrying the load of every coplanar facet the block
    /// overlaps (serially, in (block, wall, slot) order; see the module
    /// docs).
    pub(crate) fn block_wall_stage(&mut self) -> Result<(), StepError> {
        let lane = PairKind::BlockFacet.index();
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
            // A contact its model released while open stays apart, its
            // plane as it was, while the block's bounding sphere misses
            // the facet's or the block is clear of the facet's plane.
            let apart = |i: usize, wall: &Wall, f: u32, _: &[f64]| {
                out_of_reach(&k, i, (wall, cell), f) || clear_of_plane(&k, i, (wall, cell), f)
            };
            let resolve = |wall: &Wall, facet: (usize, Piece), cache: &mut [f64], i: usize| {
                // A failed query keeps the last plane.
                if let Some(found) = resolve(&k, (wall, cell), facet, cache, i) {
                    store(cache, found);
                }
            };
            let slots = (slot::LEN, slot::SIDE);
            resolve_facet_lane(st, (walls, owner), slots, apart, resolve);
            let tol = |b: usize| 1e-9 * k.shapes[k.shape[b] as usize].radius;
            let slots = (slot::LEN, slot::GAP, slot::SIDE);
            for c in plane_clusters(st, owner, walls, slots, tol) {
                // From the block into the facets: against the normal of
                // the side the block is on.
                let n = -c.side * walls[c.wall].normals[c.facet];
                let pose = (k.orientation[c.body], k.pos[c.body]);
                carry_plane(m, lane, &c.members, (n, pose), step, &mut state)?;
            }
        }
        Ok(())
    }
}

/// Marks with [`BOND_NEAREST`](contact::BOND_NEAREST) the block-facet
/// contacts of `st` that bond now: of each block's contacts with the
/// coplanar facets of one wall on one side that `bonds` accepts (by
/// property set and gap), not suppressed, one: the one carrying their
/// load, else the one with the least gap, then the lowest facet. A
/// block's face thus bonds to a flat wall once, however finely meshed,
/// with the overlap of every facet under it. `tol(block)` is the
/// distance within which a facet lies in another's plane.
pub(crate) fn choose_bond_carriers(
    st: &mut ContactStore,
    owner: &[(u32, u32)],
    walls: &[Wall],
    tol: impl Fn(usize) -> f64,
    bonds: impl Fn(u32, f64) -> bool,
) {
    let gap = |s: usize| st.cache[s * slot::LEN + slot::GAP];
    let keep = |s: usize| {
        let setup = &st.setup[s];
        setup.flags & (flags::SUPPRESSED | SIDE_OFF) == 0 && bonds(setup.prop_set, gap(s))
    };
    let clusters = clusters_of(st, owner, walls, (slot::LEN, slot::SIDE), tol, keep);
    let facet = |s: usize| owner[st.end2[s].index()].1;
    let chosen: Vec<usize> = clusters
        .iter()
        .map(|c| {
            let members = c.members.iter().map(|&s| s as usize);
            let carrier = members.clone().find(|&s| st.setup[s].flags & CARRIED != 0);
            carrier.unwrap_or_else(|| {
                members
                    .min_by(|&a, &b| gap(a).total_cmp(&gap(b)).then(facet(a).cmp(&facet(b))))
                    .expect("a cluster has members")
            })
        })
        .collect();
    for s in chosen {
        st.setup[s].flags |= contact::BOND_NEAREST;
    }
}

/// A cluster's merged contact: the plane in world axes, and what the
/// model reads (the gradient in the block's frame, NaN where there is
/// none).
struct Merged {
    n: Vec3,
    gap: f64,
    xc: Vec3,
    volume: f64,
    area: f64,
    twist: f64,
    gradient: [Vec3; 2],
    /// The parts' contact surfaces together (block frame).
    moments: AreaMoments,
}

/// Merges the overlapping members `over` of a cluster (each one's cache
/// from `cache`) of a block at `pos` turned by `q`: volumes add up and the
/// gap is the deepest.
///
/// In potential resolution the parts are the pieces of one pressed surface, so
/// their area vectors `S_i = A_i n_i`, their moments and their gradients
/// add up, each moment about the part's location `p_i` being its twist
/// `A_i tau_i n_i`: `S = sum S_i`, `M(o) = sum (A_i tau_i n_i +
/// (p_i - o) x S_i)`, and the merged contact is that of the whole surface,
/// as if the facets were one (normal `S / |S|`, location
/// `x = o + n x M(o) / |S|` with `o` the area-weighted mean of the `p_i`,
/// twist arm `M(o) . n / |S|`, the area `|S|` and its gradient `n . dS`,
/// each part's rotation gradient moved from `p_i` to `x` by
/// `dS/dw(x) = dS/dw(p_i) + (p_i - x) x dS/du`). All of it is in the
/// block's frame. In full and reduced resolution (or when a part has no
/// gradient) the area is that of the summed area vectors `|sum S_i|`
/// (on a face pressed flat the parts' areas add up, and the strips of
/// the block's sides that each part cuts off cancel as they do on one
/// facet; a plain sum of the `A_i` would count them), the location is
/// the volume-weighted mean of the parts' (the centroid of the whole
/// overlap, in full resolution), the normal the plane's, `normal`, and
/// there is no gradient.
fn merged<'c>(
    over: &[u32],
    cache: impl Fn(u32) -> &'c [f64],
    normal: Vec3,
    (q, pos): (Quat, Vec3),
) -> Merged {
    let (mut volume, mut area, mut gap) = (0.0, 0.0, f64::INFINITY);
    let (mut xv, mut xa, mut x_sum) = (Vec3::ZERO, Vec3::ZERO, Vec3::ZERO);
    let mut s_sum = Vec3::ZERO;
    let mut exact = true;
    let mut moments = AreaMoments::default();
    for &s in over {
        let c = cache(s);
        moments = moments.plus(AreaMoments::from_slice(&c[base::MOMENTS..]));
        let (_, g, x) = stored(c);
        let (v, a) = (c[base::VOLUME], c[base::AREA]);
        volume += v;
        area += a;
        gap = gap.min(g);
        xv += v * x;
        xa += a * vec_at(c, slot::LOCAL_XC);
        x_sum += x;
        s_sum += a * vec_at(c, base::NORMAL);
        exact &= mode_of(c) == BlockResolution::Potential && c[slot::JACOBIAN].is_finite();
    }
    let s_len = s_sum.length();
    if !exact || s_len.is_nan() || s_len <= 0.0 || area <= 0.0 {
        let mean = x_sum / over.len() as f64;
        return Merged {
            n: normal,
            gap,
            xc: if volume > 0.0 { xv / volume } else { mean },
            volume,
            area: if s_len > 0.0 && s_len.is_finite() {
                s_len
            } else {
                area
            },
            twist: 0.0,
            gradient: [Vec3::NAN; 2],
            moments,
        };
    }
    let o = xa / area;
    let mut moment = Vec3::ZERO;
    for &s in over {
        let c = cache(s);
        let (n, a) = (vec_at(c, base::NORMAL), c[base::AREA]);
        let p = vec_at(c, slot::LOCAL_XC);
        moment += a * c[base::TWIST] * n + (p - o).cross(a * n);
    }
    let n = s_sum / s_len;
    let arm = moment / s_len;
    let x = o + n.cross(arm);
    let mut gradient = [Vec3::ZERO; 2];
    for &s in over {
        let c = cache(s);
        let p = vec_at(c, slot::LOCAL_XC);
        for (k, nk) in n.to_array().into_iter().enumerate() {
            let du = vec_at(c, slot::JACOBIAN + 6 * k);
            let dw = vec_at(c, slot::JACOBIAN + 6 * k + 3) + (p - x).cross(du);
            gradient[0] += nk * du;
            gradient[1] += nk * dw;
        }
    }
    Merged {
        n: q * n,
        gap,
        xc: q * x + pos,
        volume,
        area: s_len,
        twist: arm.dot(n),
        gradient,
        moments,
    }
}

/// Lets one contact of `members` (slots of one block's contacts with
/// coplanar facets of one wall, in slot order) carry the load of all
/// those that overlap; see the module docs.
fn carry_plane(
    m: &mut crate::sim::ModelRuntime,
    lane: usize,
    members: &[u32],
    (normal, pose): (Vec3, (Quat, Vec3)),
    step: u64,
    state: &mut Vec<f64>,
) -> Result<(), StepError> {
    let st = &mut m.lanes[lane].store;
    let at = |s: u32, v: usize| s as usize * slot::LEN + v;
    // A bonded member carries while its bond holds, with the plane the
    // pass carries for it: the others are suppressed, overlapping or not,
    // so that the block's load on this plane goes through the bond's
    // contact alone.
    if members
        .iter()
        .any(|&s| st.setup[s as usize].flags & HELD != 0)
    {
        for &s in members {
            let f = &mut st.setup[s as usize].flags;
            if *f & HELD != 0 {
                *f |= CARRIED;
            } else {
                *f = (*f | flags::SUPPRESSED) & !CARRIED;
            }
        }
        return Ok(());
    }
    let previous = members
        .iter()
        .copied()
        .find(|&s| st.setup[s as usize].flags & CARRIED != 0);
    for &s in members {
        st.setup[s as usize].flags &= !CARRIED;
    }
    let over: Vec<u32> = members
        .iter()
        .copied()
        .filter(|&s| st.cache[at(s, slot::GAP)] < 0.0)
        .collect();
    if over.is_empty() {
        return Ok(());
    }
    let volume = |s: u32| st.cache[at(s, base::VOLUME)];
    let carrier = match previous {
        Some(p) if over.contains(&p) => p,
        _ => over.iter().copied().fold(
            over[0],
            |best, s| if volume(s) > volume(best) { s } else { best },
        ),
    };
    if over.len() > 1 {
        let plane = merged(
            &over,
            |s| &st.cache[at(s, 0)..at(s, slot::LEN)],
            normal,
            pose,
        );
        let c = &mut st.cache[at(carrier, 0)..at(carrier, slot::LEN)];
        store(c, (plane.n, plane.gap, plane.xc));
        c[base::VOLUME] = plane.volume;
        c[base::AREA] = plane.area;
        c[base::TWIST] = plane.twist;
        set_vec(c, base::GRADIENT, plane.gradient[0]);
        set_vec(c, base::GRADIENT + 3, plane.gradient[1]);
        c[base::MOMENTS..base::MOMENTS + AreaMoments::LEN]
            .copy_from_slice(&plane.moments.to_array());
        for &s in &over {
            if s != carrier {
                st.setup[s as usize].flags |= flags::SUPPRESSED;
            }
        }
    }
    st.setup[carrier as usize].flags |= CARRIED;
    if let Some(p) = previous.filter(|&p| p != carrier) {
        take_over(m, lane, p as usize, carrier as usize, step, state)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BlockShape;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use talus_geometry::{random_block, RandomBlock};

    /// A block that the support test finds clear of a facet's plane is
    /// apart from the facet by the kernel's own resolution (GJK against
    /// the facet's prism), sharp or rounded, on either side; and the test
    /// spares the resolution of most placements beside the facet.
    #[test]
    fn a_block_clear_of_a_facet_plane_is_apart_from_the_facet() {
        let wall = Wall::new(
            "floor",
            &[[-1.0, -1.0, 0.0], [2.0, -1.0, 0.0], [-1.0, 2.0, 0.0]],
            &[[0, 1, 2]],
            None,
        )
        .unwrap();
        let spec = RandomBlock {
            semi_axes: Vec3::new(0.5, 0.3, 0.2),
            min_vertices: 8,
            max_vertices: 20,
            roughness: 0.3,
        };
        let core = random_block(&spec, 7).unwrap();
        let shapes = [
            BlockShape::new("sharp", &core).unwrap(),
            BlockShape::rounded("rounded", &core, 0.05).unwrap(),
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let (mut clear, mut apart_not_clear, mut touching) = (0, 0, 0);
        for _ in 0..4000 {
            let shape = rng.random_range(0..2u32);
            let pos = Vec3::new(
                rng.random_range(-1.5..2.5),
                rng.random_range(-1.5..2.5),
                rng.random_range(-0.8..0.8),
            );
            let axis = Vec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            let q = Quat::from_axis_angle(axis.normalize(), rng.random_range(0.0..6.3));
            let k = BlockScene {
                pos: &[pos],
                orientation: &[q],
                shape: &[shape],
                shapes: &shapes,
                ..BlockScene::default()
            };
            let mut cache = vec![0.0; slot::LEN];
            BlockFacet::init(&mut cache, BlockResolution::Full);
            let at = (0, Piece::facet(0));
            let Some((_, gap, _)) = resolve(&k, (&wall, None), at, &mut cache, 0) else {
                panic!("no resolution at {pos} {q}");
            };
            if clear_of_plane(&k, 0, (&wall, None), 0) {
                assert!(
                    gap > 0.0,
                    "clear of the plane, yet gap {gap:e} at {pos} {q}"
                );
                clear += 1;
            } else if gap > 0.0 {
                apart_not_clear += 1;
            } else {
                touching += 1;
            }
        }
        // Beside the facet (its plane crossed, the triangle missed) the
        // test cannot tell; it still spares most of the apart placements.
        assert!(clear > 2 * apart_not_clear, "{clear} {apart_not_clear}");
        assert!(
            apart_not_clear > 0 && touching > 100,
            "{apart_not_clear} {touching}"
        );
    }
}
