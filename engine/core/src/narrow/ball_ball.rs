//! The ball-ball kernel: the plane between two spheres.

use super::{Found, PairKernel, Scene};
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

    #[inline(always)]
    fn find(
        scene: &Scene<'_>,
        plane: &Plane,
        xa: Vec3,
        ra: f64,
        b: Piece,
        released: bool,
    ) -> Option<Found> {
        let b = b.index();
        let rb = scene.radius[b];
        let xb = scene.pos[b];
        if released {
            // Still apart? Then nothing changes for the model; the plane of
            // such contacts is refreshed only when it is recorded
            // (`refresh_open_contacts`).
            let d2 = (xb - xa).length_squared();
            if d2 > (ra + rb) * (ra + rb) {
                return None;
            }
        }
        let (n, gap, xc) = contact::plane_ball_ball(xa, ra, xb, rb, plane.n);
        Some(Found {
            n,
            gap,
            xc,
            end2: EndMotion {
                x: xb,
                v: scene.vel[b],
                w: scene.spin[b],
            },
            region: 0,
            r2: rb,
        })
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
    fn add_end2(sums: &mut Sums<'_>, _scene: &Scene<'_>, b: Piece, ap: &Applied, _carry: u8) {
        sums.ball(
            b.index() as u32,
            End::Two,
            ap.force,
            ap.torque2,
            ap.stiffness,
        );
    }

    fn geometry(scene: &Scene<'_>, plane: &Plane, a: Piece, b: Piece) -> Geometry {
        Geometry {
            gap: plane.gap,
            r1: scene.radius[a.index()],
            r2: Some(scene.radius[b.index()]),
            x1: scene.pos[a.index()],
            x2: scene.pos[b.index()],
            xc: plane.xc,
            frame: [plane.n, plane.s, plane.t],
        }
    }

    fn refresh(scene: &Scene<'_>, plane: &mut Plane, a: Piece, b: Piece) {
        let (a, b) = (a.index(), b.index());
        let (n, gap, xc) = contact::plane_ball_ball(
            scene.pos[a],
            scene.radius[a],
            scene.pos[b],
            scene.radius[b],
            plane.n,
        );
        plane.n = n;
        plane.gap = gap;
        plane.xc = xc;
    }

    fn effective_mass(mass: &[f64], a: Piece, b: Piece) -> f64 {
        let (ma, mb) = (mass[a.index()], mass[b.index()]);
        ma * mb / (ma + mb)
    }
}
