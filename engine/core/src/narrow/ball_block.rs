//! The ball-block kernel: the ball's centre against the block's surface,
//! by the geometry kernel's closest-point traversal in the block's
//! principal frame, started from the facet where the last search of the
//! same contact ended.

use super::{
    add_ball_end1, add_block_end, ball_motion, plane_geometry, rigid_image, rigid_motion, Carried,
    Found, Masses, PairKernel, Scene,
};
use crate::contact::{Applied, Plane};
use crate::inputs::Geometry;
use crate::math::Vec3;
use crate::piece::{PairKind, Piece};
use crate::sums::{End, Sums};
use talus_geometry::{closest_surface_point, FacetCache};
use talus_sdk::ContactOutput;

/// A ball (end1) and a block (end2).
pub(crate) struct BallBlock;

/// The closest surface point to `x` in world axes of the block with its
/// centroid at `c` (its own or an image): the point, the signed distance
/// from `x` (negative inside) and the outward normal there seen from `x`;
/// `plane.feature` is the traversal's start and end facet.
#[inline(always)]
fn closest(
    scene: &Scene<'_>,
    plane: &mut Plane,
    x: Vec3,
    block: usize,
    c: Vec3,
) -> (Vec3, f64, Vec3) {
    let k = &scene.blocks;
    let shape = &k.shapes[k.shape[block] as usize];
    let q = k.orientation[block];
    let local = q.conjugate() * (x - c);
    let mut cache = FacetCache {
        facet: plane.feature,
        ..Default::default()
    };
    let sp = closest_surface_point(&shape.polyhedron, local, &mut cache);
    plane.feature = sp.facet;
    (q * sp.point + c, sp.signed_distance, q * sp.normal)
}

/// The plane of ball `a` against block `b` with its centroid at `c` (the
/// image nearest the ball): normal from the ball to the block, gap,
/// location; the block's closest surface point to the ball's centre, a
/// rounded block's surface lying `rounding` out from its core's.
#[inline(always)]
fn ball_block_plane(
    scene: &Scene<'_>,
    plane: &mut Plane,
    a: usize,
    b: usize,
    c: Vec3,
) -> (Vec3, f64, Vec3) {
    let (ra, xa) = (scene.radius[a], scene.pos[a]);
    let (point, distance, outward) = closest(scene, plane, xa, b, c);
    let k = &scene.blocks;
    let rounding = k.shapes[k.shape[b] as usize].rounding;
    // From the ball towards the block: against the outward normal.
    let n = -outward;
    let xc = 0.5 * (xa + n * ra + point + outward * rounding);
    (n, distance - ra - rounding, xc)
}

impl PairKernel for BallBlock {
    const PAIR: PairKind = PairKind::BallBlock;

    #[inline(always)]
    fn find(
        scene: &Scene<'_>,
        plane: &mut Plane,
        _cache: &mut [f64],
        a: Piece,
        b: Piece,
        released: bool,
    ) -> Option<Found> {
        let (a, b) = (a.index(), b.index());
        let (ra, xa) = (scene.radius[a], scene.pos[a]);
        let k = &scene.blocks;
        // In a periodic cell, the block's image nearest to the ball.
        let c = rigid_image(scene, xa, b);
        if released {
            // Still out of reach of the block's bounding sphere? Then
            // nothing changes for the model.
            let reach = ra + k.shapes[k.shape[b] as usize].radius;
            if (xa - c).length_squared() > reach * reach {
                return None;
            }
        }
        let (n, gap, xc) = ball_block_plane(scene, plane, a, b, c);
        if released && gap > 0.0 {
            return None;
        }
        Some(Found {
            n,
            gap,
            xc,
            end1: ball_motion(scene, a),
            end2: rigid_motion(scene, b, c),
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

    /// The block seen from the ball as the plane tangent at its closest
    /// point (as a facet is).
    fn geometry(scene: &Scene<'_>, plane: &Plane, _cache: &[f64], a: Piece, b: Piece) -> Geometry {
        let (a, b) = (a.index(), b.index());
        let x1 = scene.pos[a];
        plane_geometry(plane, scene.radius[a], None, x1, rigid_image(scene, x1, b))
    }

    fn refresh(scene: &Scene<'_>, plane: &mut Plane, _cache: &mut [f64], a: Piece, b: Piece) {
        let (a, b) = (a.index(), b.index());
        let c = rigid_image(scene, scene.pos[a], b);
        (plane.n, plane.gap, plane.xc) = ball_block_plane(scene, plane, a, b, c);
    }

    fn effective_mass(masses: &Masses<'_>, a: Piece, b: Piece) -> f64 {
        let (ma, mb) = (masses.balls[a.index()], masses.blocks[b.index()]);
        ma * mb / (ma + mb)
    }

    const CARRIES_BONDS: bool = true;

    /// The ball keeps its radius in the model input and the block has
    /// none, as in resolution, so a bond takes its section from the ball.
    #[inline(always)]
    fn carried(
        scene: &Scene<'_>,
        _plane: &Plane,
        _cache: &mut [f64],
        a: Piece,
        b: Piece,
    ) -> Option<Carried> {
        let (a, b) = (a.index(), b.index());
        let c = rigid_image(scene, scene.pos[a], b);
        Some(Carried {
            end1: ball_motion(scene, a),
            end2: rigid_motion(scene, b, c),
            radius: [scene.radius[a], 0.0],
        })
    }
}
