//! The kernels of convex bodies (shapes that plugins add, see
//! [`crate::convex`]) with balls, blocks and each other.
//!
//! - ball-convex: the shape's exact closest point to the ball's centre
//!   when the plugin gives one (as for a block, the normal is the
//!   surface's there); otherwise the ball and the shape as two support
//!   maps;
//! - convex-convex: the signed distance of the two support maps by
//!   Newton's method over the normal (`talus_geometry::signed`), started
//!   from the contact's last normal; for shapes with flat faces or edges,
//!   where that does not converge, by GJK on the pair moved apart;
//! - block-convex: the block (its core dilated by its rounding) and the
//!   shape by GJK on the pair moved apart.
//!
//! In every case the normal points from end1 to end2, the gap is the
//! signed distance and the location lies halfway between the convex
//! end's witness point (its deepest point in the other when they overlap)
//! and the other's surface, along the normal: the other's witness may be
//! any point of a flat face. The last normal is kept in the contact's cache and starts the
//! next step's search.

use super::block_block::{set_vec, vec_at};
use super::{
    add_ball_end1, add_block_end, ball_motion, plane_geometry, rigid_image, rigid_motion,
    BlockScene, Found, Masses, PairKernel, Scene,
};
use crate::contact::{Applied, Plane};
use crate::convex::Posed;
use crate::inputs::Geometry;
use crate::math::Vec3;
use crate::piece::{PairKind, Piece};
use crate::sums::{End, Sums};
use std::cell::RefCell;
use talus_geometry::support::Sphere;
use talus_geometry::{
    signed_distance, smooth_signed_distance, SignedContact, SignedOptions, SupportMap,
};
use talus_sdk::ContactOutput;

/// Newton steps before a pair counts as not smooth.
const NEWTON_STEPS: u32 = 24;

/// Where each value sits in a convex contact's cache.
mod slot {
    /// The last normal found (3 values), the next search's start.
    pub(super) const HINT: usize = 0;
    /// The feature of each end's contact point plus one (zero while not
    /// known, and for ends without features): see [`super::track_feature`].
    pub(super) const FEATURE1: usize = 3;
    pub(super) const FEATURE2: usize = 4;
    /// One when this step's resolution moved the contact's point to
    /// another feature of an end, else zero.
    pub(super) const MOVED: usize = 5;
    /// Values per contact.
    pub(super) const LEN: usize = 6;
}

/// The cache of a convex contact (see [`slot`]).
const CACHE: usize = slot::LEN;

/// Notes the feature of surface point `x` of `body` in `cache[at]` (the
/// feature plus one); returns whether it differs from a known one, i.e.
/// the contact's point moved to another feature. A shape without features
/// (the sdk's `FeatureRule::Smooth`) is not asked.
#[inline]
pub(super) fn track_feature(body: &Posed<'_>, x: Vec3, cache: &mut [f64], at: usize) -> bool {
    if !body.has_features() {
        return false;
    }
    let Some(f) = body.feature(x) else {
        return false;
    };
    let code = f64::from(f) + 1.0;
    let before = std::mem::replace(&mut cache[at], code);
    before != 0.0 && before != code
}

/// A ball (end1) and a convex body (end2).
pub(crate) struct BallConvex;

/// A block (end1) and a convex body (end2).
pub(crate) struct BlockConvex;

/// Two convex bodies.
pub(crate) struct ConvexConvex;

/// Body row `i` (a convex body) in world axes.
#[inline]
pub(super) fn posed<'a>(
    k: &'a BlockScene<'_>,
    i: usize,
    fault: &'a RefCell<Option<String>>,
) -> Posed<'a> {
    posed_at(k, i, k.pos[i], fault)
}

/// Body row `i` (a convex body) in world axes with its centroid at `x`
/// (its own, or an image in a periodic cell).
#[inline]
fn posed_at<'a>(
    k: &'a BlockScene<'_>,
    i: usize,
    x: Vec3,
    fault: &'a RefCell<Option<String>>,
) -> Posed<'a> {
    let shape = &k.shapes[k.shape[i] as usize];
    // Pieces of kind convex are made only for rows whose shape is one.
    let g = shape
        .convex
        .as_ref()
        .expect("a convex piece has a plugin shape");
    Posed::new(g, k.orientation[i], x, fault)
}

/// Notes a plugin failure of the contact of `a` and `b`, if there was one.
#[inline]
pub(super) fn note_fault(k: &BlockScene<'_>, a: Piece, b: Piece, fault: RefCell<Option<String>>) {
    if let Some(message) = fault.into_inner() {
        k.guard.fail(k.step, a, b, message);
    }
}

/// The contact of two support maps from the last normal `hint`: Newton's
/// method when both may be smooth, GJK on the moved pair otherwise or when
/// Newton does not converge.
#[inline]
pub(super) fn contact_of<A, B>(a: &A, b: &B, hint: Vec3, smooth: bool) -> Option<SignedContact>
where
    A: SupportMap + ?Sized,
    B: SupportMap + ?Sized,
{
    if smooth {
        if let Ok(c) = smooth_signed_distance(a, b, hint, NEWTON_STEPS) {
            return Some(c);
        }
    }
    signed_distance(a, b, hint, SignedOptions::default())
        .ok()
        .filter(|c| c.gap.is_finite() && c.normal.is_finite())
}

/// A block's solid in world axes: its core turned and moved, dilated by
/// its rounding.
struct BlockSolid<'a> {
    core: talus_geometry::support::Posed<'a, talus_geometry::ConvexPolyhedron>,
    rounding: f64,
}

impl SupportMap for BlockSolid<'_> {
    #[inline]
    fn support_point(&self, dir: Vec3) -> Vec3 {
        self.core.support_point(dir) + self.rounding * dir.normalize_or_zero()
    }
    #[inline]
    fn interior_point(&self) -> Vec3 {
        self.core.interior_point()
    }
}

/// Block row `i` with its centroid at `x`.
fn block_solid<'a>(k: &'a BlockScene<'_>, i: usize, x: Vec3) -> BlockSolid<'a> {
    let shape = &k.shapes[k.shape[i] as usize];
    BlockSolid {
        core: talus_geometry::support::Posed {
            shape: &shape.polyhedron,
            rotation: k.orientation[i],
            translation: x,
        },
        rounding: shape.rounding,
    }
}

/// Whether `a` and `b` are apart along the unit normal `m` (from A to B):
/// a plane between them, so their contact is open whatever its exact gap.
/// Two support queries, where finding the gap takes tens.
#[inline]
fn apart_along<A, B>(a: &A, b: &B, m: Vec3) -> bool
where
    A: SupportMap + ?Sized,
    B: SupportMap + ?Sized,
{
    m != Vec3::ZERO && (b.support_point(-m) - a.support_point(m)).dot(m) > 0.0
}

/// Whether the bounding spheres of rows `i` and `j` are apart, `j`'s
/// centroid at `xj`.
#[inline]
fn out_of_reach(k: &BlockScene<'_>, i: usize, j: usize, xj: Vec3) -> bool {
    let reach = k.shapes[k.shape[i] as usize].radius + k.shapes[k.shape[j] as usize].radius;
    (k.pos[i] - xj).length_squared() > reach * reach
}

/// Whether a released contact of two rows of the block archetype is
/// still open: their bounding spheres apart, or the two apart along the
/// contact's last normal; end2's centroid at `xb` (its image nearest
/// end1).
#[inline(always)]
fn still_apart(
    k: &BlockScene<'_>,
    cache: &[f64],
    (a, b): (Piece, Piece),
    xb: Vec3,
    block: bool,
) -> bool {
    let (i, j) = (a.index(), b.index());
    if out_of_reach(k, i, j, xb) {
        return true;
    }
    let fault = RefCell::new(None);
    let m = vec_at(cache, slot::HINT);
    let apart = {
        // About end1's centroid, as `rigid_plane` queries.
        let pb = posed_at(k, j, xb - k.pos[i], &fault);
        if block {
            apart_along(&block_solid(k, i, Vec3::ZERO), &pb, m)
        } else {
            apart_along(&posed_at(k, i, Vec3::ZERO, &fault), &pb, m)
        }
    };
    // A failed query is found again, and reported, by the full search.
    apart && fault.into_inner().is_none()
}

/// The plane (normal, gap, location) of two rows of the block archetype,
/// end2 a convex body with its centroid at `xb` (its image nearest end1)
/// and end1 a block (`block`) or a convex body. With `track`, the
/// features of the ends' points are noted in the cache (see
/// [`slot::MOVED`]).
#[inline(always)]
fn rigid_plane(
    k: &BlockScene<'_>,
    cache: &mut [f64],
    (a, b): (Piece, Piece),
    xb: Vec3,
    block: bool,
    track: bool,
) -> Option<(Vec3, f64, Vec3)> {
    let (i, j) = (a.index(), b.index());
    let fault = RefCell::new(None);
    let hint = vec_at(cache, slot::HINT);
    // The pair is queried about end1's centroid: its answer then depends
    // on the two bodies' relative pose alone, not on where in the world
    // (or in which image of a periodic cell) they meet, and its
    // tolerances act on coordinates of the bodies' size.
    let origin = k.pos[i];
    let found = {
        let pb = posed_at(k, j, xb - origin, &fault);
        let pa = (!block).then(|| posed_at(k, i, Vec3::ZERO, &fault));
        let found = match &pa {
            None => contact_of(&block_solid(k, i, Vec3::ZERO), &pb, hint, false),
            Some(pa) => contact_of(pa, &pb, hint, true),
        };
        if let Some(c) = found.filter(|_| track) {
            // Each end's point: end2's witness, and end1's the gap back
            // along the normal.
            let p2 = c.point_b;
            let moved2 = track_feature(&pb, p2, cache, slot::FEATURE2);
            let moved1 = pa
                .is_some_and(|pa| track_feature(&pa, p2 - c.gap * c.normal, cache, slot::FEATURE1));
            cache[slot::MOVED] = f64::from(u8::from(moved1 || moved2));
        }
        found
    };
    let failed = fault.borrow().is_some();
    note_fault(k, a, b, fault);
    let Some(c) = found.filter(|_| !failed) else {
        if !failed {
            k.guard.note(k.step, a, b);
        }
        return None;
    };
    set_vec(cache, slot::HINT, c.normal);
    // Halfway between the convex end's witness and the other's surface:
    // a block's witness on a face is any point of it.
    let xc = origin + (c.point_b - 0.5 * c.gap * c.normal);
    Some((c.normal, c.gap, xc))
}

/// What a contact between two rows of the block archetype shares, for
/// [`BlockConvex`] and [`ConvexConvex`].
macro_rules! rigid_pair_kernel {
    ($kernel:ty, $pair:expr, $block:expr) => {
        impl PairKernel for $kernel {
            const PAIR: PairKind = $pair;
            const CACHE: usize = CACHE;

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
                let k = &scene.blocks;
                cache[slot::MOVED] = 0.0;
                // In a periodic cell, end2's image nearest to end1.
                let (xa, xb) = (
                    k.pos[a.index()],
                    rigid_image(scene, k.pos[a.index()], b.index()),
                );
                if released && still_apart(k, cache, (a, b), xb, $block) {
                    return None;
                }
                let (n, gap, xc) = rigid_plane(k, cache, (a, b), xb, $block, true)?;
                if released && gap > 0.0 {
                    return None;
                }
                Some(Found {
                    n,
                    gap,
                    xc,
                    end1: rigid_motion(scene, a.index(), xa),
                    end2: rigid_motion(scene, b.index(), xb),
                    region: 0,
                    radius: [0.0, 0.0],
                })
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
                let x1 = scene.blocks.pos[a.index()];
                let x2 = rigid_image(scene, x1, b.index());
                ((p.xc - x1).cross(f), (p.xc - x2).cross(f))
            }

            #[inline(always)]
            fn add_end1(sums: &mut Sums<'_>, a: Piece, ap: &Applied) {
                add_block_end(sums, a, End::One, ap);
            }

            #[inline(always)]
            fn add_end2(
                sums: &mut Sums<'_>,
                _scene: &Scene<'_>,
                b: Piece,
                ap: &Applied,
                _carry: u8,
            ) {
                add_block_end(sums, b, End::Two, ap);
            }

            fn geometry(
                scene: &Scene<'_>,
                plane: &Plane,
                _cache: &[f64],
                a: Piece,
                b: Piece,
            ) -> Geometry {
                let x1 = scene.blocks.pos[a.index()];
                plane_geometry(plane, 0.0, None, x1, rigid_image(scene, x1, b.index()))
            }

            fn refresh(
                scene: &Scene<'_>,
                plane: &mut Plane,
                cache: &mut [f64],
                a: Piece,
                b: Piece,
            ) {
                let xb = rigid_image(scene, scene.blocks.pos[a.index()], b.index());
                if let Some(found) = rigid_plane(&scene.blocks, cache, (a, b), xb, $block, false) {
                    (plane.n, plane.gap, plane.xc) = found;
                }
            }

            fn effective_mass(masses: &Masses<'_>, a: Piece, b: Piece) -> f64 {
                let (ma, mb) = (masses.blocks[a.index()], masses.blocks[b.index()]);
                ma * mb / (ma + mb)
            }
        }
    };
}

rigid_pair_kernel!(BlockConvex, PairKind::BlockConvex, true);
rigid_pair_kernel!(ConvexConvex, PairKind::ConvexConvex, false);

/// The plane of ball `a` against convex body `b` with its centroid at
/// `xb` (its image nearest the ball): normal from the ball to the body,
/// gap, location. With `track`, the feature of the body's point is noted
/// in the cache (see [`slot::MOVED`]).
#[inline(always)]
fn ball_convex_plane(
    scene: &Scene<'_>,
    cache: &mut [f64],
    a: Piece,
    b: Piece,
    xb: Vec3,
    track: bool,
) -> Option<(Vec3, f64, Vec3)> {
    let (i, j) = (a.index(), b.index());
    let (ra, xa) = (scene.radius[i], scene.pos[i]);
    let k = &scene.blocks;
    let fault = RefCell::new(None);
    let found = {
        let body = posed_at(k, j, xb, &fault);
        let found = if body.has_closest_point() {
            body.closest_point(xa).map(|p| {
                // From the ball towards the body: against the outward
                // normal.
                let n = -p.normal;
                (n, p.distance - ra, 0.5 * (xa + n * ra + p.point))
            })
        } else {
            let ball = Sphere {
                center: xa,
                radius: ra,
            };
            contact_of(&ball, &body, vec_at(cache, slot::HINT), true)
                .map(|c| (c.normal, c.gap, 0.5 * (c.point_a + c.point_b)))
        };
        if let Some((n, gap, xc)) = found.filter(|_| track) {
            let moved = track_feature(&body, xc + 0.5 * gap * n, cache, slot::FEATURE2);
            cache[slot::MOVED] = f64::from(u8::from(moved));
        }
        found
    };
    let failed = fault.borrow().is_some();
    note_fault(k, a, b, fault);
    match found {
        Some(plane) if !failed => {
            set_vec(cache, slot::HINT, plane.0);
            Some(plane)
        }
        _ => {
            if !failed {
                k.guard.note(k.step, a, b);
            }
            None
        }
    }
}

impl PairKernel for BallConvex {
    const PAIR: PairKind = PairKind::BallConvex;
    const CACHE: usize = CACHE;

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
        let (i, j) = (a.index(), b.index());
        let k = &scene.blocks;
        cache[slot::MOVED] = 0.0;
        let ra = scene.radius[i];
        // In a periodic cell, the body's image nearest to the ball.
        let xb = rigid_image(scene, scene.pos[i], j);
        if released {
            let reach = ra + k.shapes[k.shape[j] as usize].radius;
            if (scene.pos[i] - xb).length_squared() > reach * reach {
                return None;
            }
            let fault = RefCell::new(None);
            let ball = Sphere {
                center: scene.pos[i],
                radius: ra,
            };
            let apart = apart_along(
                &ball,
                &posed_at(k, j, xb, &fault),
                vec_at(cache, slot::HINT),
            );
            if apart && fault.into_inner().is_none() {
                return None;
            }
        }
        let (n, gap, xc) = ball_convex_plane(scene, cache, a, b, xb, true)?;
        if released && gap > 0.0 {
            return None;
        }
        Some(Found {
            n,
            gap,
            xc,
            end1: ball_motion(scene, i),
            end2: rigid_motion(scene, j, xb),
            region: 0,
            radius: [ra, 0.0],
        })
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
        let x1 = scene.pos[a.index()];
        let x2 = rigid_image(scene, x1, b.index());
        ((p.xc - x1).cross(f), (p.xc - x2).cross(f))
    }

    #[inline(always)]
    fn add_end1(sums: &mut Sums<'_>, a: Piece, ap: &Applied) {
        add_ball_end1(sums, a, ap);
    }

    #[inline(always)]
    fn add_end2(sums: &mut Sums<'_>, _scene: &Scene<'_>, b: Piece, ap: &Applied, _carry: u8) {
        add_block_end(sums, b, End::Two, ap);
    }

    fn geometry(scene: &Scene<'_>, plane: &Plane, _cache: &[f64], a: Piece, b: Piece) -> Geometry {
        let (a, b) = (a.index(), b.index());
        let x1 = scene.pos[a];
        plane_geometry(plane, scene.radius[a], None, x1, rigid_image(scene, x1, b))
    }

    fn refresh(scene: &Scene<'_>, plane: &mut Plane, cache: &mut [f64], a: Piece, b: Piece) {
        let xb = rigid_image(scene, scene.pos[a.index()], b.index());
        if let Some(found) = ball_convex_plane(scene, cache, a, b, xb, false) {
            (plane.n, plane.gap, plane.xc) = found;
        }
    }

    fn effective_mass(masses: &Masses<'_>, a: Piece, b: Piece) -> f64 {
        let (ma, mb) = (masses.balls[a.index()], masses.blocks[b.index()]);
        ma * mb / (ma + mb)
    }
}
