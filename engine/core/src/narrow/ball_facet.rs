//! The ball-facet kernel: the plane between a ball and the closest point
//! of a wall facet, which the wall stage found this step.

use super::{
    add_ball_end1, ball_motion, facet_motion, plane_geometry, FacetImage, Found, Masses,
    PairKernel, Scene,
};
use crate::cell_walls::facet_shift;
use crate::contact::{self, Applied, Plane, CARRY_FORCE};
use crate::inputs::Geometry;
use crate::math::Vec3;
use crate::piece::{PairKind, Piece};
use crate::sums::Sums;
use talus_sdk::ContactOutput;

/// A ball (end1) and a wall facet (end2).
pub(crate) struct BallFacet;

impl PairKernel for BallFacet {
    const PAIR: PairKind = PairKind::BallFacet;

    #[inline(always)]
    fn find(
        scene: &Scene<'_>,
        plane: &mut Plane,
        _cache: &mut [f64],
        a: Piece,
        b: Piece,
        released: bool,
    ) -> Option<Found> {
        // `wall_gaps` found the closest facet point, its region and the gap
        // this step and left the point in `xc`.
        if released && plane.gap > 0.0 {
            return None;
        }
        let (ra, xa) = (scene.radius[a.index()], scene.pos[a.index()]);
        let (wi, f) = scene.owner[b.index()];
        let wall = &scene.walls[wi as usize];
        let (n, gap, xc) = contact::plane_ball_facet(xa, ra, plane.xc, wall.normals[f as usize]);
        let image = FacetImage::of(scene.cell, wall, f as usize, xa);
        let end2 = facet_motion(wall, f as usize, (plane.xc, xc), image);
        Some(Found {
            n,
            gap,
            xc,
            end1: ball_motion(scene, a.index()),
            end2,
            region: plane.region,
            radius: [ra, 0.0],
        })
    }

    #[inline(always)]
    fn add_end1(sums: &mut Sums<'_>, a: Piece, ap: &Applied) {
        add_ball_end1(sums, a, ap);
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
        let (wi, facet) = scene.owner[b.index()];
        let wall = &scene.walls[wi as usize];
        let x2 = wall.centre + facet_shift(scene.cell, wall, facet as usize, x1);
        ((p.xc - x1).cross(f), (p.xc - x2).cross(f))
    }

    #[inline(always)]
    fn add_end2(sums: &mut Sums<'_>, scene: &Scene<'_>, b: Piece, ap: &Applied, carry: u8) {
        // A wall takes no timestep stiffness.
        if carry >= CARRY_FORCE {
            sums.wall(scene.owner[b.index()].0, ap.force, ap.torque2);
        }
    }

    fn geometry(scene: &Scene<'_>, plane: &Plane, _cache: &[f64], a: Piece, b: Piece) -> Geometry {
        let (w, f) = scene.owner[b.index()];
        let (a, wall) = (a.index(), &scene.walls[w as usize]);
        let centre = wall.centre + facet_shift(scene.cell, wall, f as usize, scene.pos[a]);
        plane_geometry(plane, scene.radius[a], None, scene.pos[a], centre)
    }

    fn refresh(scene: &Scene<'_>, plane: &mut Plane, _cache: &mut [f64], a: Piece, b: Piece) {
        let a = a.index();
        let x = scene.pos[a];
        let (wi, f) = scene.owner[b.index()];
        let wall = &scene.walls[wi as usize];
        // The facet moved to the ball in a periodic cell (`cell_walls`).
        let t = facet_shift(scene.cell, wall, f as usize, x);
        let (xf, region) = wall.closest_point(f as usize, x - t);
        let xf = xf + t;
        plane.region = region.code();
        let (n, gap, xc) =
            contact::plane_ball_facet(x, scene.radius[a], xf, wall.normals[f as usize]);
        plane.n = n;
        plane.gap = gap;
        plane.xc = xc;
    }

    /// A wall does not move under contact forces: the ball's own mass.
    fn effective_mass(masses: &Masses<'_>, a: Piece, _b: Piece) -> f64 {
        masses.balls[a.index()]
    }
}
