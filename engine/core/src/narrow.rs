//! The narrow phase of the contact pass: the contact plane of each
//! contact from its pieces, the frame update and the relative-motion
//! increments that make the model input.
//!
//! Reads: piece kinematics, the wall stage's closest facet points.
//! Writes: the contact plane and the model input.
//! Invariants: n points from end1 to end2, n = s x t, gap < 0 is overlap.

use crate::body::{walls, BallsRef};
use crate::contact::{self, EndMotion, BATCH, ENGINE_BITS, RELEASED};
use crate::math::Vec3;
use crate::piece::Piece;
use crate::sim::*;
use crate::wall::Wall;
use rayon::prelude::*;
use talus_sdk::ContactInput;

/// The ball columns contact resolution reads.
#[derive(Clone, Copy)]
pub(crate) struct Kinematics<'a> {
    pub(crate) pos: &'a [Vec3],
    pub(crate) vel: &'a [Vec3],
    pub(crate) spin: &'a [Vec3],
    pub(crate) radius: &'a [f64],
}

impl Simulation {
    /// Brings the contact plane (location, normal, gap) of open contacts
    /// that the cycle skipped up to date, for output. Frames of open
    /// contacts of overlap-only models are not maintained (see
    /// `docs/physics.md`).
    pub(crate) fn refresh_open_contacts(&mut self) {
        let balls = BallsRef::of(&self.world);
        let (pos, radius) = (&*balls.pos, &*balls.radius);
        let walls = &*walls(&self.world);
        let owner = &self.facet_owner;
        for m in &mut self.models {
            let st = &mut m.store;
            st.plane
                .par_iter_mut()
                .zip(st.setup.par_iter())
                .zip(st.end1.par_iter().zip(st.end2.par_iter()))
                .with_min_len(BATCH)
                .for_each(|((plane, setup), (&a, &b))| {
                    if setup.flags & RELEASED == 0 {
                        return;
                    }
                    let a = a.index();
                    let (x, r) = (pos[a], radius[a]);
                    let (n, gap, xc) = if b.is_facet() {
                        let (wi, f) = owner[b.index()];
                        let wall = &walls[wi as usize];
                        let (xf, region) = wall.closest_point(f as usize, x);
                        plane.region = region.code();
                        contact::plane_ball_facet(x, r, xf, wall.normals[f as usize])
                    } else {
                        let b = b.index();
                        contact::plane_ball_ball(x, r, pos[b], radius[b], plane.n)
                    };
                    plane.n = n;
                    plane.gap = gap;
                    plane.xc = xc;
                });
        }
    }
}

/// Resolves one contact: contact plane, frame and increments, written to
/// `input`; returns false, leaving `input` alone, for an open contact its
/// model has released.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn resolve_one(
    kin: &Kinematics<'_>,
    walls: &[Wall],
    owner: &[(u32, u32)],
    plane: &mut contact::Plane,
    setup: &contact::Setup,
    a: Piece,
    b: Piece,
    dt: f64,
    overlap_only: bool,
    input: &mut ContactInput,
) -> bool {
    let a = a.index();
    let ra = kin.radius[a];
    let xa = kin.pos[a];
    let open_released = overlap_only && setup.flags & RELEASED != 0;
    let (n, gap, xc, e2, region, rb) = if b.is_facet() {
        // `wall_gaps` found the closest facet point, its region and the gap
        // this step and left the point in `xc`.
        if open_released && plane.gap > 0.0 {
            return false;
        }
        let (wi, f) = owner[b.index()];
        let wall = &walls[wi as usize];
        let (n, gap, xc) = contact::plane_ball_facet(xa, ra, plane.xc, wall.normals[f as usize]);
        let e2 = if wall.vertex_velocity.is_empty() {
            EndMotion {
                x: wall.centre,
                v: wall.motion.velocity,
                w: wall.motion.spin,
            }
        } else {
            // A deforming facet: the material velocity at the wall contact
            // point, without a spin of its own.
            EndMotion {
                x: xc,
                v: wall.point_velocity(f as usize, plane.xc),
                w: Vec3::ZERO,
            }
        };
        (n, gap, xc, e2, plane.region, 0.0)
    } else {
        let b = b.index();
        let rb = kin.radius[b];
        let xb = kin.pos[b];
        if open_released {
            // Still apart? Then nothing changes for the model; the plane of
            // such contacts is refreshed only when it is recorded
            // (`refresh_open_contacts`).
            let d2 = (xb - xa).length_squared();
            if d2 > (ra + rb) * (ra + rb) {
                return false;
            }
        }
        let (n, gap, xc) = contact::plane_ball_ball(xa, ra, xb, rb, plane.n);
        (
            n,
            gap,
            xc,
            EndMotion {
                x: xb,
                v: kin.vel[b],
                w: kin.spin[b],
            },
            0,
            rb,
        )
    };
    plane.xc = xc;
    plane.gap = gap;
    plane.region = region;
    let open = overlap_only && gap > 0.0;
    *input = ContactInput {
        gap,
        mass: setup.mass,
        radius: [ra, rb],
        prop_set: setup.prop_set,
        flags: setup.flags & !ENGINE_BITS,
        ..Default::default()
    };
    if open {
        plane.n = n;
        plane.initialised = false;
        return true;
    }
    let e1 = EndMotion {
        x: xa,
        v: kin.vel[a],
        w: kin.spin[a],
    };
    contact::update_frame(plane, n, e1.w, e2.w, dt);
    contact::increments(plane, &e1, &e2, dt, input);
    true
}
