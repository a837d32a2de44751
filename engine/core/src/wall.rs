//! Faceted walls: triangle meshes with facet/edge/vertex adjacency that
//! move kinematically (they do not obey the equations of motion).
//!
//! Reads: a welded mesh (vertices, triangles) and an optional rigid motion.
//! Writes: current vertex positions, facet normals and extents each step,
//! and the total force and moment that contacts put on the wall.
//! Invariants: facet normals follow the right-hand rule over the vertex
//! order and are consistent between neighbours (a shared edge is traversed
//! in opposite directions by its two facets); rigid motion keeps the shape
//! because vertices are always placed from the reference shape by the
//! accumulated rotation, never rotated incrementally.

use crate::error::SetupError;
use crate::math::{Aabb, Quat, Vec3};
use rustc_hash::FxHashMap;

/// Whether a wall keeps only the associative logic or adds the full-mode
/// checks (segment check, state continuity, proximity contacts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Resolution {
    /// Associative logic only (rules 1-3).
    #[default]
    Reduced,
    /// Associative logic plus the full-mode additions.
    Full,
}

/// Rigid motion of a wall: translation of the reference point and rotation
/// about it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RigidMotion {
    /// Translational velocity of the reference point (m/s).
    pub velocity: Vec3,
    /// Angular velocity about the reference point (rad/s).
    pub spin: Vec3,
}

/// Bit of [`Wall::inactive`]: the front side (the side the facet normal
/// points to) does not interact.
pub const FRONT: u8 = 1;
/// Bit of [`Wall::inactive`]: the back side does not interact.
pub const BACK: u8 = 2;

/// A faceted wall.
#[derive(Clone, Debug)]
pub struct Wall {
    /// User-facing id (1-based, in creation order).
    pub id: u64,
    /// Name from the config.
    pub name: String,
    /// Group id (index into the simulation's group names).
    pub group: u16,
    /// Contact resolution mode.
    pub resolution: Resolution,
    /// Cutoff angle for state continuity in full mode (rad).
    pub cutoff_angle: f64,
    /// Reference shape: vertices relative to the initial reference point.
    local: Vec<Vec3>,
    /// Current vertex positions (m).
    pub vertices: Vec<Vec3>,
    /// Facets as vertex index triples.
    pub facets: Vec<[u32; 3]>,
    /// Facet across edge k of each facet (edge k: vertex k to k+1), or -1.
    pub neighbours: Vec<[i32; 3]>,
    /// Current unit normal of each facet.
    pub normals: Vec<Vec3>,
    /// Per facet, the sides that do not interact ([`FRONT`], [`BACK`]).
    pub inactive: Vec<u8>,
    /// Reference point (centre of rotation) now (m).
    pub centre: Vec3,
    /// Accumulated rotation since the start.
    pub orientation: Quat,
    /// Rigid motion.
    pub motion: RigidMotion,
    /// Total force from all contacts this step (N).
    pub force: Vec3,
    /// Total moment about `centre` from all contacts this step (N m).
    pub moment: Vec3,
}

impl Wall {
    /// Builds a wall from a welded mesh, checking that it is usable:
    /// at least one facet, distinct in-range vertices, non-zero area, and
    /// consistently oriented neighbours.
    pub fn new(
        name: &str,
        vertices: &[[f64; 3]],
        facets: &[[u32; 3]],
        centre: Option<Vec3>,
    ) -> Result<Wall, SetupError> {
        let bad = |msg: String| SetupError::Wall {
            wall: name.to_string(),
            message: msg,
        };
        if facets.is_empty() {
            return Err(bad("the mesh has no facets".into()));
        }
        let verts: Vec<Vec3> = vertices.iter().map(|v| Vec3::from_array(*v)).collect();
        if verts.iter().any(|v| !v.is_finite()) {
            return Err(bad("a vertex coordinate is not finite".into()));
        }
        let mut normals = Vec::with_capacity(facets.len());
        for (i, f) in facets.iter().enumerate() {
            if f.iter().any(|&v| v as usize >= verts.len()) {
                return Err(bad(format!(
                    "facet {i} refers to a vertex that does not exist"
                )));
            }
            if f[0] == f[1] || f[1] == f[2] || f[0] == f[2] {
                return Err(bad(format!("facet {i} repeats a vertex")));
            }
            let n = facet_normal(&verts, f);
            if !n.is_finite() {
                return Err(bad(format!("facet {i} has zero area")));
            }
            normals.push(n);
        }
        // Undirected edge -> users as (facet, edge index, runs low to high).
        type EdgeUsers = Vec<(u32, u8, bool)>;
        let mut edges: FxHashMap<(u32, u32), EdgeUsers> = FxHashMap::default();
        for (i, f) in facets.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (f[k], f[(k + 1) % 3]);
                edges
                    .entry((a.min(b), a.max(b)))
                    .or_default()
                    .push((i as u32, k as u8, a < b));
            }
        }
        let mut neighbours = vec![[-1i32; 3]; facets.len()];
        for users in edges.values() {
            if users.len() == 2 {
                let (f0, k0, d0) = users[0];
                let (f1, k1, d1) = users[1];
                if d0 == d1 {
                    return Err(bad(format!(
                        "facets {f0} and {f1} are oriented inconsistently (their shared edge runs the same way in both)"
                    )));
                }
                neighbours[f0 as usize][k0 as usize] = f1 as i32;
                neighbours[f1 as usize][k1 as usize] = f0 as i32;
            }
        }
        let centre = centre.unwrap_or_else(|| {
            let s: Vec3 = verts.iter().copied().sum();
            s / verts.len() as f64
        });
        let local = verts.iter().map(|v| *v - centre).collect();
        Ok(Wall {
            id: 0,
            name: name.to_string(),
            group: 0,
            resolution: Resolution::Reduced,
            cutoff_angle: 10f64.to_radians(),
            local,
            vertices: verts,
            facets: facets.to_vec(),
            neighbours,
            inactive: vec![0; facets.len()],
            normals,
            centre,
            orientation: Quat::IDENTITY,
            motion: RigidMotion::default(),
            force: Vec3::ZERO,
            moment: Vec3::ZERO,
        })
    }

    /// Whether the wall moves at all.
    pub fn is_moving(&self) -> bool {
        self.motion.velocity != Vec3::ZERO || self.motion.spin != Vec3::ZERO
    }

    /// Advances the rigid motion by `dt`: the reference point translates by
    /// `v dt`; the orientation is multiplied by the rotation of angle
    /// `|w| dt` about `w` and renormalised; vertices are rebuilt from the
    /// reference shape.
    pub fn advance(&mut self, dt: f64) {
        if !self.is_moving() {
            return;
        }
        self.centre += self.motion.velocity * dt;
        let w = self.motion.spin;
        let angle = w.length() * dt;
        if angle > 0.0 {
            let dq = Quat::from_axis_angle(w / w.length(), angle);
            self.orientation = (dq * self.orientation).normalize();
        }
        let rot = glam::DMat3::from_quat(self.orientation);
        for (v, l) in self.vertices.iter_mut().zip(&self.local) {
            *v = self.centre + rot * *l;
        }
        for (n, f) in self.normals.iter_mut().zip(&self.facets) {
            *n = facet_normal(&self.vertices, f);
        }
    }

    /// Corner positions of facet `f`.
    #[inline]
    pub fn corners(&self, f: usize) -> [Vec3; 3] {
        let t = self.facets[f];
        [
            self.vertices[t[0] as usize],
            self.vertices[t[1] as usize],
            self.vertices[t[2] as usize],
        ]
    }

    /// Extent (axis-aligned box) of facet `f`.
    pub fn facet_extent(&self, f: usize) -> Aabb {
        let mut b = Aabb::EMPTY;
        for c in self.corners(f) {
            b.include(c);
        }
        b
    }

    /// Velocity of the wall at point `x` (rigid motion about `centre`).
    #[inline]
    pub fn velocity_at(&self, x: Vec3) -> Vec3 {
        self.motion.velocity + self.motion.spin.cross(x - self.centre)
    }

    /// Whether a ball centred at `x` meets an interacting side of facet
    /// `f`. The side is the sign of the distance of `x` from the facet's
    /// plane; a centre on the plane counts as the front.
    #[inline]
    pub fn side_active(&self, f: usize, x: Vec3) -> bool {
        let mask = self.inactive[f];
        if mask == 0 {
            return true;
        }
        let p = self.vertices[self.facets[f][0] as usize];
        let side = if self.normals[f].dot(x - p) >= 0.0 {
            FRONT
        } else {
            BACK
        };
        mask & side == 0
    }

    /// Whether facets `f` and `g` share the feature `region` of `f`: the
    /// edge (as neighbours across it) or the vertex.
    pub fn shares_feature(&self, f: usize, region: crate::geometry::Region, g: usize) -> bool {
        use crate::geometry::Region;
        match region {
            Region::Face => false,
            Region::Edge(k) => self.neighbours[f][k as usize] == g as i32,
            Region::Vertex(k) => {
                let v = self.facets[f][k as usize];
                self.facets[g].contains(&v)
            }
        }
    }
}

fn facet_normal(v: &[Vec3], f: &[u32; 3]) -> Vec3 {
    let (a, b, c) = (v[f[0] as usize], v[f[1] as usize], v[f[2] as usize]);
    (b - a).cross(c - a).normalize()
}
