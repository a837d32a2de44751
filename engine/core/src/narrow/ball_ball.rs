//! The ball-ball kernel: the plane between two spheres.

use super::{
    add_ball_end1, ball_motion, image_centre, image_velocity, plane_geometry, Ahead, Found, Masses,
    PairKernel, Scene,
};
use crate::contact::{self, Applied, EndMotion, Plane};
use crate::inputs::Geometry;
use crate::math::Vec3;
use crate::piece::{PairKind, Piece};
use crate::sums::{End, Sums};
use talus_sdk::ContactOutput;

/// Two balls; end2 is a ball too.
pub(crate) struct BallBall;

impl PairKernel for BallBall {
    const PAIR: PairKind = PairKind::BallBall;
    const AHEAD: bool = true;

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
        let rb = scene.radius[b];
        // In a periodic cell, end2's image nearest to end1 (its velocity
        // only once the pair is found to touch).
        let xb = image_centre(scene, xa, b);
        if released {
            // Still apart? Then nothing changes for the model; the plane of
            // such contacts is refreshed only when it is recorded
            // (`refresh_open_contacts`).
            let d2 = (xb - xa).length_squared();
            if d2 > (ra + rb) * (ra + rb) {
                return None;
            }
        }
        Some(found(scene, plane, a, b, &offset(xa, xb)))
    }

    #[inline(always)]
    fn ahead(scene: &Scene<'_>, a: Piece, b: Piece, released: bool) -> Ahead {
        // A released pair is most likely still apart, and its test needs
        // neither the root nor the reciprocal: it is left to `find`.
        if released {
            return Ahead::default();
        }
        let xa = scene.pos[a.index()];
        offset(xa, image_centre(scene, xa, b.index()))
    }

    #[inline(always)]
    fn find_ahead(
        scene: &Scene<'_>,
        plane: &mut Plane,
        cache: &mut [f64],
        a: Piece,
        b: Piece,
        released: bool,
        ahead: &Ahead,
    ) -> Option<Found> {
        if !ahead.ready {
            return Self::find(scene, plane, cache, a, b, released);
        }
        // (`ahead` leaves a released contact to `find`.)
        debug_assert!(!released);
        Some(found(scene, plane, a.index(), b.index(), ahead))
    }

    #[inline(always)]
    fn lever(
        scene: &Scene<'_>,
        p: &Plane,
        o: &ContactOutput,
        _f: Vec3,
        a: Piece,
        b: Piece,
    ) -> (Vec3, Vec3) {
        // The lever arms are `xc - x1 = l1 n` and `xc - x2 = -l2 n` with
        // `l = R + g / 2`, and `n x f` is `Fs t - Ft s` in the right-handed
        // frame, so neither centre nor cross product is needed.
        let half_gap = 0.5 * p.gap;
        let nf = p.t * o.force[1] - p.s * o.force[2];
        (
            nf * (scene.radius[a.index()] + half_gap),
            nf * -(scene.radius[b.index()] + half_gap),
        )
    }

    #[inline(always)]
    fn add_end1(sums: &mut Sums<'_>, a: Piece, ap: &Applied) {
        add_ball_end1(sums, a, ap);
    }

    #[inline(always)]
    fn add_end2(sums: &mut Sums<'_>, _scene: &Scene<'_>, b: Piece, ap: &Applied, _carry: u8) {
        sums.ball(
            b.index() as u32,
            End::Two,
            ap.force,
            ap.torque2,
            ap.stiffness,
        );
    }

    fn geometry(scene: &Scene<'_>, plane: &Plane, _cache: &[f64], a: Piece, b: Piece) -> Geometry {
        let (a, b) = (a.index(), b.index());
        let (r, x) = (scene.radius, scene.pos);
        let xb = image_centre(scene, x[a], b);
        plane_geometry(plane, r[a], Some(r[b]), x[a], xb)
    }

    fn refresh(scene: &Scene<'_>, plane: &mut Plane, _cache: &mut [f64], a: Piece, b: Piece) {
        let (a, b) = (a.index(), b.index());
        let xb = image_centre(scene, scene.pos[a], b);
        let (n, gap, xc) =
            contact::plane_ball_ball(scene.pos[a], scene.radius[a], xb, scene.radius[b], plane.n);
        plane.n = n;
        plane.gap = gap;
        plane.xc = xc;
    }

    fn effective_mass(masses: &Masses<'_>, a: Piece, b: Piece) -> f64 {
        let (ma, mb) = (masses.balls[a.index()], masses.balls[b.index()]);
        ma * mb / (ma + mb)
    }
}

/// End2's centre `xb`, the offset from end1's centre `xa`, its length
/// and its reciprocal: the part of two balls' plane that waits on a
/// square root and a division.
#[inline(always)]
fn offset(xa: Vec3, xb: Vec3) -> Ahead {
    let d_vec = xb - xa;
    let d = d_vec.length();
    Ahead {
        xb,
        d_vec,
        d,
        inv: 1.0 / d,
        ready: true,
    }
}

/// The plane of two balls and their motion, from end2's centre, the
/// offset, its length and reciprocal (see [`BallBall::ahead`]).
#[inline(always)]
fn found(scene: &Scene<'_>, plane: &Plane, a: usize, b: usize, ahead: &Ahead) -> Found {
    let (ra, xa) = (scene.radius[a], scene.pos[a]);
    let rb = scene.radius[b];
    let Ahead {
        xb, d_vec, d, inv, ..
    } = *ahead;
    let (n, gap, xc) = contact::plane_ball_ball_at(xa, ra, d_vec, (d, inv), rb, plane.n);
    Found {
        n,
        gap,
        xc,
        end1: ball_motion(scene, a),
        end2: EndMotion {
            x: xb,
            v: image_velocity(scene, xb, b),
            w: scene.spin[b],
        },
        region: 0,
        radius: [ra, rb],
    }
}
