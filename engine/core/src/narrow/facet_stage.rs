//! What the facet stages of rigid bodies share, blocks' and convex
//! bodies' alike: every contact of a lane resolved in parallel units, the
//! contacts grouped per body, wall and plane (a body on a flat region of
//! a wall meets every facet of it it overlaps, and one contact carries
//! them), and the hand-over of state when another member takes over.

use super::block_facet::corners;
use super::{facet_motion, rigid_motion, FacetImage, Found, Scene};
use crate::cell_walls::facet_shift;
use crate::contact::{Applied, ContactStore, Plane, CARRIED, CARRY_FORCE, HELD, RELEASED};
use crate::error::StepError;
use crate::math::Vec3;
use crate::pass::units::for_each_unit;
use crate::piece::Piece;
use crate::sums::Sums;
use crate::wall::{Wall, BACK, FRONT};
use crate::wall_logic::{self, Transfer};
use talus_sdk::abi_stable::std_types::{RSlice, RSliceMut};
use talus_sdk::{flags, StateEvent};

/// The parallel part of a rigid body's facet stage, shared by blocks and
/// convex bodies: every contact of the lane `st` resolved by `resolve`
/// (which stores its plane in the cache) unless it was released and
/// `apart` says it is still out of reach, and suppressed on a side of
/// its facet marked inactive. Bonded contacts are left as they are. `slots` gives the cache's length and where
/// the side sits in it. Runs in units (see [`for_each_unit`]).
pub(super) fn resolve_facet_lane(
    st: &mut ContactStore,
    (walls, owner): (&[Wall], &[(u32, u32)]),
    (len, side_at): (usize, usize),
    apart: impl Fn(usize, &Wall, u32, &[f64]) -> bool + Sync,
    resolve: impl Fn(&Wall, (usize, Piece), &mut [f64], usize) + Sync,
) {
    let ends = (&st.end1[..], &st.end2[..]);
    for_each_unit(
        &mut st.setup,
        &mut st.cache,
        len,
        ends,
        |_, setup, cache, end1, end2| {
            for (j, s) in setup.iter_mut().enumerate() {
                s.flags &= !flags::SUPPRESSED;
                // A bonded contact keeps its plane, carried by the pass,
                // and the overlap it bonded with, which sizes the bond.
                if s.flags & HELD != 0 {
                    continue;
                }
                let cache = &mut cache[j * len..(j + 1) * len];
                let (wi, f) = owner[end2[j].index()];
                let wall = &walls[wi as usize];
                let body = end1[j].index();
                if s.flags & RELEASED != 0 && apart(body, wall, f, cache) {
                    continue;
                }
                resolve(wall, (f as usize, end2[j]), cache, body);
                // A body on a side of the facet marked inactive (the side
                // decided while apart) meets nothing.
                let side = if cache[side_at] < 0.0 { BACK } else { FRONT };
                if wall.inactive[f as usize] & side != 0 {
                    s.flags = (s.flags | flags::SUPPRESSED) & !CARRIED;
                }
            }
        },
    );
}

/// The contacts of one rigid body with the coplanar facets of one wall on
/// one side, that overlap, carried last step or are bonded.
pub(super) struct Cluster {
    /// The body's row.
    pub(super) body: usize,
    /// The wall's index.
    pub(super) wall: usize,
    /// The first member's facet.
    pub(super) facet: usize,
    /// The side of the facets the body is on (+1 along the normal).
    pub(super) side: f64,
    /// The members' slots, in slot order.
    pub(super) members: Vec<u32>,
}

/// The clusters of a rigid-body facet lane, in (body, wall, slot) order:
/// each (body, wall) pair's overlapping, carrying or bonded, not
/// suppressed contacts split by plane and side. `slots` gives the cache's
/// length and where the gap and the side sit in it; `tol(body)` the
/// distance within which a facet lies in another's plane.
pub(super) fn plane_clusters(
    st: &ContactStore,
    owner: &[(u32, u32)],
    walls: &[Wall],
    (len, gap, side): (usize, usize, usize),
    tol: impl Fn(usize) -> f64,
) -> Vec<Cluster> {
    let keep = |s: usize| {
        let flags = st.setup[s].flags;
        (st.cache[s * len + gap] < 0.0 || flags & (CARRIED | HELD) != 0)
            && flags & flags::SUPPRESSED == 0
    };
    clusters_of(st, owner, walls, (len, side), tol, keep)
}

/// The contacts `keep` takes of a rigid-body facet lane, grouped by body
/// and wall, then by plane and side, in (body, wall, slot) order.
pub(super) fn clusters_of(
    st: &ContactStore,
    owner: &[(u32, u32)],
    walls: &[Wall],
    (len, side): (usize, usize),
    tol: impl Fn(usize) -> f64,
    keep: impl Fn(usize) -> bool,
) -> Vec<Cluster> {
    let mut touching: Vec<(u32, u32, u32)> = (0..st.len())
        .filter(|&s| keep(s))
        .map(|s| {
            let wall = owner[st.end2[s].index()].0;
            (st.end1[s].index() as u32, wall, s as u32)
        })
        .collect();
    touching.sort_unstable();
    let mut clusters = Vec::new();
    for group in touching.chunk_by(|x, y| (x.0, x.1) == (y.0, y.1)) {
        let (body, wi) = (group[0].0 as usize, group[0].1 as usize);
        let wall = &walls[wi];
        let fs: Vec<(usize, f64)> = group
            .iter()
            .map(|&(_, _, s)| {
                let f = owner[st.end2[s as usize].index()].1 as usize;
                (f, st.cache[s as usize * len + side])
            })
            .collect();
        let mut done = vec![false; group.len()];
        for i in 0..group.len() {
            if done[i] {
                continue;
            }
            let (fi, si) = fs[i];
            let mut members = Vec::new();
            for j in i..group.len() {
                let (fj, sj) = fs[j];
                if !done[j] && sj == si && coplanar(wall, fi, fj, tol(body)) {
                    done[j] = true;
                    members.push(group[j].2);
                }
            }
            clusters.push(Cluster {
                body,
                wall: wi,
                facet: fi,
                side: si,
                members,
            });
        }
    }
    clusters
}

/// Whether facets `f` and `g` of `wall` lie in one plane (normals within
/// about 1e-6 rad, and `g`'s first corner within `tol` of `f`'s plane).
fn coplanar(wall: &Wall, f: usize, g: usize, tol: f64) -> bool {
    let (nf, ng) = (wall.normals[f], wall.normals[g]);
    let (pf, pg) = (corners(wall, f)[0], corners(wall, g)[0]);
    nf.dot(ng) >= 1.0 - 1e-12 && nf.dot(pg - pf).abs() <= tol
}

/// Moves the state of contact `from`, which carried last step, to `to`,
/// which takes over, by the model's propagation rules, with the frame
/// and the six-DOF displacements.
pub(super) fn take_over(
    m: &mut crate::sim::ModelRuntime,
    lane: usize,
    from: usize,
    to: usize,
    step: u64,
    state: &mut Vec<f64>,
) -> Result<(), StepError> {
    let st = &mut m.lanes[lane].store;
    state.clear();
    state.extend_from_slice(st.state_of(from));
    let (n_state, stride) = (st.n_state, st.stride);
    let set = st.setup[to].prop_set as usize;
    let props = &m.props[set * m.n_props..(set + 1) * m.n_props];
    let target = &mut st.state[to * stride..to * stride + n_state];
    let entry = &m.entry;
    let custom = |from: &[f64], to: &mut [f64]| {
        (entry.custom_state)(
            StateEvent::TakeOver.code(),
            RSlice::from_slice(props),
            RSlice::from_slice(from),
            RSliceMut::from_mut_slice(to),
        )
        .into_result()
        .map_err(|e| e.to_string())
    };
    let t = Transfer {
        from: 0,
        to: 1,
        fresh: true,
    };
    let moved =
        wall_logic::transfer_state(&entry.descriptor.state, state, target, &t, true, custom)
            .map_err(|message| StepError::Model {
                model: m.name.clone(),
                contact: st.id[to],
                step,
                message: format!("propagation failed: {message}"),
            })?;
    if moved {
        let p = st.plane[from];
        let q = &mut st.plane[to];
        (q.n, q.s, q.t, q.initialised) = (p.n, p.s, p.t, p.initialised);
        if st.six_dof {
            st.dof[to] = st.dof[from];
        }
        st.setup[to].flags &= !flags::NEW;
    }
    Ok(())
}

/// The contact of rigid body `a` with facet `b` as its wall stage left it
/// (`(n, gap, xc)`): the body's rigid motion and the facet's (its image's
/// in a periodic cell) at the location.
#[inline(always)]
pub(super) fn facet_found(
    scene: &Scene<'_>,
    (n, gap, xc): (Vec3, f64, Vec3),
    a: Piece,
    b: Piece,
) -> Found {
    let (wi, f) = scene.owner[b.index()];
    let wall = &scene.walls[wi as usize];
    let x1 = scene.blocks.pos[a.index()];
    let image = FacetImage::of(scene.cell, wall, f as usize, x1);
    Found {
        n,
        gap,
        xc,
        end1: rigid_motion(scene, a.index(), x1),
        end2: facet_motion(wall, f as usize, (xc, xc), image),
        region: 0,
        radius: [0.0, 0.0],
    }
}

/// The lever arms of force `f` at `p.xc` on rigid body `a` (about its
/// centroid) and on facet `b`'s wall (about its centre, moved to the
/// image nearest the body in a periodic cell).
#[inline(always)]
pub(super) fn facet_lever(
    scene: &Scene<'_>,
    p: &Plane,
    f: Vec3,
    a: Piece,
    b: Piece,
) -> (Vec3, Vec3) {
    let x1 = scene.blocks.pos[a.index()];
    let (wi, facet) = scene.owner[b.index()];
    let wall = &scene.walls[wi as usize];
    let x2 = wall.centre + facet_shift(scene.cell, wall, facet as usize, x1);
    ((p.xc - x1).cross(f), (p.xc - x2).cross(f))
}

/// Adds a force carrier's force and moment to facet `b`'s wall (a wall
/// takes no timestep stiffness).
#[inline(always)]
pub(super) fn add_wall_end(
    sums: &mut Sums<'_>,
    scene: &Scene<'_>,
    b: Piece,
    ap: &Applied,
    carry: u8,
) {
    if carry >= CARRY_FORCE {
        sums.wall(scene.owner[b.index()].0, ap.force, ap.torque2);
    }
}
