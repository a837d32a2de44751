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
use crate::geometry::closest_point_triangle;
use crate::math::{Aabb, Quat, Vec3};
use rustc_hash::FxHashMap;

/// Whether a wall keeps only the associative logic or adds the full-mode
/// checks (segment check, state continuity, proximity contacts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Resolution {
    /// Associative logic only (rules 1-3).
    #[default]
    Reduced,
    /// Associative logic plus the full-mode additions.
    Full,
}

/// Rigid motion of a wall: translation of the reference point and rotation
/// about it.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RigidMotion {
    /// Translational velocity of the reference point (m/s).
    pub velocity: Vec3,
    /// Angular velocity about the reference point (rad/s).
    pub spin: Vec3,
}

/// Deformable motion: every vertex has its own velocity, the product of a
/// fixed per-vertex velocity and a factor tabulated over time.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Deformation {
    /// Velocity of each vertex at factor 1 (m/s).
    pub velocity: Vec<Vec3>,
    /// `(time, factor)` knots, increasing in time; the factor is linear
    /// between knots and held beyond the ends. Empty: factor 1.
    pub schedule: Vec<(f64, f64)>,
}

impl Deformation {
    /// The factor of the schedule at `time`.
    pub fn factor(&self, time: f64) -> f64 {
        let s = &self.schedule;
        match s.iter().position(|&(t, _)| t > time) {
            None => s.last().map_or(1.0, |k| k.1),
            Some(0) => s[0].1,
            Some(i) => {
                let ((t0, f0), (t1, f1)) = (s[i - 1], s[i]);
                f0 + (f1 - f0) * (time - t0) / (t1 - t0)
            }
        }
    }
}

/// Servo control of a rigid wall's translation: the wall moves along
/// `direction` (into the material) at `gain (target - load)`, capped at
/// `max_speed`, where `load = -force . direction` is the force the
/// material pushes back with.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Servo {
    /// Unit direction in which the wall advances to raise its load.
    pub direction: Vec3,
    /// Target load (N).
    pub target: f64,
    /// Gain ((m/s)/N), > 0.
    pub gain: f64,
    /// Speed cap (m/s), > 0.
    pub max_speed: f64,
}

impl Servo {
    /// The load the wall carries now (N).
    pub fn load(&self, force: Vec3) -> f64 {
        -force.dot(self.direction)
    }

    /// The velocity for the next step given the wall's total force.
    pub fn velocity(&self, force: Vec3) -> Vec3 {
        let speed =
            (self.gain * (self.target - self.load(force))).clamp(-self.max_speed, self.max_speed);
        self.direction * speed
    }
}

/// A wall whose mesh became unusable while it moved.
#[derive(Clone, Debug, PartialEq)]
pub struct WallFault {
    /// Facet at fault.
    pub facet: usize,
    /// What happened.
    pub message: String,
}

/// Bit of [`Wall::inactive`]: the front side (the side the facet normal
/// points to) does not interact.
pub const FRONT: u8 = 1;
/// Bit of [`Wall::inactive`]: the back side does not interact.
pub const BACK: u8 = 2;

/// A faceted wall.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
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
    /// Per facet, the centroid and the distance from it to the farthest
    /// corner: a sphere holding the facet, for cheap rejection.
    pub spheres: Vec<(Vec3, f64)>,
    /// Per facet and edge k (vertex k to k + 1): the unit in-plane normal
    /// pointing out of the facet and its value `m . p_k` on the edge line,
    /// so `m . x - offset` is how far a point of the plane lies outside
    /// the edge.
    pub edges: Vec<[(Vec3, f64); 3]>,
    /// Per facet, the sides that do not interact ([`FRONT`], [`BACK`]).
    pub inactive: Vec<u8>,
    /// Reference point (centre of rotation) now (m).
    pub centre: Vec3,
    /// Accumulated rotation since the start.
    pub orientation: Quat,
    /// Rigid motion (for a servo wall, the velocity its servo chose).
    pub motion: RigidMotion,
    /// Deformable motion, exclusive with a non-zero rigid motion.
    pub deform: Option<Deformation>,
    /// Current velocity of each vertex of a deformable wall (m/s).
    pub vertex_velocity: Vec<Vec3>,
    /// Servo control of the translation.
    pub servo: Option<Servo>,
    /// Twice the area of each facet at the start, the reference for the
    /// degenerate-facet check of deformable walls (m^2).
    area0: Vec<f64>,
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
        let area0 = facets.iter().map(|f| twice_area(&verts, f)).collect();
        let spheres = facets.iter().map(|f| bounding_sphere(&verts, f)).collect();
        let edges = facets
            .iter()
            .zip(&normals)
            .map(|(f, &n)| edge_planes(&verts, f, n))
            .collect();
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
            spheres,
            edges,
            normals,
            centre,
            orientation: Quat::IDENTITY,
            motion: RigidMotion::default(),
            deform: None,
            vertex_velocity: Vec::new(),
            servo: None,
            area0,
            force: Vec3::ZERO,
            moment: Vec3::ZERO,
        })
    }

    /// The same surface with every facet cut into four at the midpoints of
    /// its edges. A shared edge gets one midpoint, so neighbours stay
    /// neighbours and the children keep their parent's orientation; the
    /// motion, the settings and each facet's inactive sides carry over,
    /// and a deformation's vertex velocities are interpolated along the
    /// edges (the field is linear over each facet, so nothing changes).
    pub fn subdivided(&self) -> Result<Wall, SetupError> {
        let mut vertices = self.vertices.clone();
        let mut local = self.local.clone();
        let mut deform = self.deform.clone();
        let mut vertex_velocity = self.vertex_velocity.clone();
        let mut midpoints: FxHashMap<(u32, u32), u32> = FxHashMap::default();
        let mut facets = Vec::with_capacity(4 * self.facets.len());
        for t in &self.facets {
            let mut mid = |a: u32, b: u32| -> u32 {
                *midpoints.entry((a.min(b), a.max(b))).or_insert_with(|| {
                    let (i, j) = (a as usize, b as usize);
                    let half = |v: &[Vec3]| 0.5 * (v[i] + v[j]);
                    vertices.push(half(&vertices));
                    local.push(half(&local));
                    if let Some(d) = deform.as_mut() {
                        d.velocity.push(half(&d.velocity));
                    }
                    if !vertex_velocity.is_empty() {
                        vertex_velocity.push(half(&vertex_velocity));
                    }
                    (vertices.len() - 1) as u32
                })
            };
            let [a, b, c] = *t;
            let (ab, bc, ca) = (mid(a, b), mid(b, c), mid(c, a));
            facets.extend([[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]);
        }
        let arrays: Vec<[f64; 3]> = vertices.iter().map(|v| v.to_array()).collect();
        let mut wall = Wall::new(&self.name, &arrays, &facets, Some(self.centre))?;
        wall.id = self.id;
        wall.group = self.group;
        wall.resolution = self.resolution;
        wall.cutoff_angle = self.cutoff_angle;
        wall.local = local;
        wall.orientation = self.orientation;
        wall.motion = self.motion;
        wall.deform = deform;
        wall.vertex_velocity = vertex_velocity;
        wall.servo = self.servo;
        wall.force = self.force;
        wall.moment = self.moment;
        wall.inactive = self.inactive.iter().flat_map(|&s| [s; 4]).collect();
        // Each child has a quarter of its parent's starting area.
        wall.area0 = self.area0.iter().flat_map(|&a| [0.25 * a; 4]).collect();
        Ok(wall)
    }

    /// Whether the wall moves at all.
    pub fn is_moving(&self) -> bool {
        self.motion.velocity != Vec3::ZERO
            || self.motion.spin != Vec3::ZERO
            || self.vertex_velocity.iter().any(|v| *v != Vec3::ZERO)
    }

    /// Advances the wall over the step from `time` to `time + dt`.
    ///
    /// Rigid motion: the reference point translates by `v dt`; the
    /// orientation is multiplied by the rotation of angle `|w| dt` about
    /// `w` and renormalised; vertices are rebuilt from the reference shape.
    /// Deformable motion: each vertex moves by its velocity at mid-step
    /// times `dt`; then every facet must keep a fair share of its initial
    /// area and no two facets may cross (see [`Wall::check_mesh`]).
    pub fn advance(&mut self, dt: f64, time: f64) -> Result<(), WallFault> {
        if let Some(d) = &self.deform {
            let k = d.factor(time + 0.5 * dt);
            self.vertex_velocity.clear();
            self.vertex_velocity
                .extend(d.velocity.iter().map(|v| *v * k));
            if k == 0.0 {
                return Ok(());
            }
            for (x, v) in self.vertices.iter_mut().zip(&self.vertex_velocity) {
                *x += *v * dt;
            }
            self.update_facets();
            return self.check_mesh();
        }
        if self.motion.velocity == Vec3::ZERO && self.motion.spin == Vec3::ZERO {
            return Ok(());
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
        self.update_facets();
        Ok(())
    }

    /// Recomputes normals and bounding spheres from the vertices.
    fn update_facets(&mut self) {
        for (i, f) in self.facets.iter().enumerate() {
            self.normals[i] = facet_normal(&self.vertices, f);
            self.spheres[i] = bounding_sphere(&self.vertices, f);
            self.edges[i] = edge_planes(&self.vertices, f, self.normals[i]);
        }
    }

    /// The point of facet `f` closest to `x`, with its region, as
    /// [`closest_point_triangle`] finds it. A point whose foot on the
    /// facet plane lies strictly inside all three edge lines (most ball
    /// contacts with a wall) is answered from the facet's normal and edge
    /// planes: three dot products instead of the walk through the vertex
    /// and edge regions. The two agree to rounding.
    #[inline]
    pub fn closest_point(&self, f: usize, x: Vec3) -> (Vec3, crate::geometry::Region) {
        // `m` lies in the facet plane, so `m . x` is `m . foot`.
        if self.edges[f].iter().all(|&(m, offset)| m.dot(x) < offset) {
            let n = self.normals[f];
            let d = n.dot(x - self.spheres[f].0);
            return (x - n * d, crate::geometry::Region::Face);
        }
        let [p, q, r] = self.corners(f);
        closest_point_triangle(x, p, q, r)
    }

    /// Whether a ball at `x` of radius `r` certainly does not touch facet
    /// `f` (a cheap test; `false` decides nothing). The ball cuts the facet
    /// plane in a disc of radius `sqrt(r^2 - d^2)` around the foot of its
    /// centre; the answer is yes when there is no disc, when the disc
    /// misses the facet's bounding sphere, or when it lies wholly outside
    /// one of the facet's edges.
    #[inline]
    pub fn cannot_touch(&self, f: usize, x: Vec3, r: f64) -> bool {
        let (c, rho) = self.spheres[f];
        let n = self.normals[f];
        let d = n.dot(x - c);
        let reach = r * r - d * d;
        if reach <= 0.0 {
            return true;
        }
        let disc = reach.sqrt();
        let foot = x - n * d;
        let s = disc + rho;
        (foot - c).length_squared() >= s * s
            || self.edges[f]
                .iter()
                // A margin far above rounding keeps the test on the safe side.
                .any(|&(m, offset)| m.dot(foot) - offset > disc * (1.0 + 1e-9))
    }

    /// Checks a deformed mesh: every facet keeps more than a millionth of
    /// its initial area and a finite normal, and no facet crosses another
    /// (an edge of one passing through the other, facets that share a
    /// vertex included; facets sharing an edge cross when they fold flat
    /// onto each other).
    pub fn check_mesh(&self) -> Result<(), WallFault> {
        for (f, t) in self.facets.iter().enumerate() {
            let a = twice_area(&self.vertices, t);
            if a.is_nan() || a <= 1e-6 * self.area0[f] || !self.normals[f].is_finite() {
                return Err(WallFault {
                    facet: f,
                    message: format!(
                        "facet {f} degenerated: its area fell to {:.3e} of the initial area",
                        a / self.area0[f]
                    ),
                });
            }
        }
        // Sweep over x: only facets whose extents overlap are tested.
        let mut order: Vec<(f64, f64, usize)> = (0..self.facets.len())
            .map(|f| {
                let e = self.facet_extent(f);
                (e.min.x, e.max.x, f)
            })
            .collect();
        order.sort_unstable_by(|p, q| p.0.total_cmp(&q.0).then(p.2.cmp(&q.2)));
        for (i, &(_, hi, f)) in order.iter().enumerate() {
            let ef = self.facet_extent(f);
            for &(lo, _, g) in &order[i + 1..] {
                if lo > hi {
                    break;
                }
                if !ef.overlaps(&self.facet_extent(g)) {
                    continue;
                }
                if self.facets_cross(f, g) {
                    let (f, g) = (f.min(g), f.max(g));
                    return Err(WallFault {
                        facet: f,
                        message: format!(
                            "facet {f} intersects facet {g}: the wall folded onto itself"
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// Whether facets `f` and `g` cross each other.
    fn facets_cross(&self, f: usize, g: usize) -> bool {
        let (tf, tg) = (self.facets[f], self.facets[g]);
        let shared = tf.iter().filter(|v| tg.contains(v)).count();
        if shared >= 2 {
            // Neighbours across an edge: crossing means folding flat.
            return self.normals[f].dot(self.normals[g]) < -1.0 + 1e-9;
        }
        // The crossing test ignores the segment's ends, so an edge that
        // leaves a shared vertex does not count as touching there.
        let edges_through = |c: [Vec3; 3], other: [Vec3; 3]| {
            (0..3).any(|k| {
                crate::wall_logic::segment_crosses_triangle(c[k], c[(k + 1) % 3], other).is_some()
            })
        };
        let (cf, cg) = (self.corners(f), self.corners(g));
        edges_through(cf, cg) || edges_through(cg, cf)
    }

    /// Velocity of the wall material at point `p` of facet `f` (m/s): the
    /// rigid motion, or for a deformable wall the vertex velocities
    /// interpolated linearly over the facet.
    #[inline]
    pub fn point_velocity(&self, f: usize, p: Vec3) -> Vec3 {
        if self.vertex_velocity.is_empty() {
            return self.velocity_at(p);
        }
        let t = self.facets[f];
        let [a, b, c] = self.corners(f);
        let n = (b - a).cross(c - a);
        let inv = 1.0 / n.length_squared();
        let wa = (b - p).cross(c - p).dot(n) * inv;
        let wb = (c - p).cross(a - p).dot(n) * inv;
        let wc = 1.0 - wa - wb;
        let v = &self.vertex_velocity;
        v[t[0] as usize] * wa + v[t[1] as usize] * wb + v[t[2] as usize] * wc
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
                self.facets[g].contains(&v) || self.round_corner(f, k as usize, g)
            }
        }
    }

    /// Whether facet `g` is one of those met walking from facet `f` across
    /// the edges that end at its corner `k`, either way round: the fan of
    /// that vertex, through edges joined across the faces of a periodic
    /// cell too (whose two sides have distinct vertices).
    fn round_corner(&self, f: usize, k: usize, g: usize) -> bool {
        for forward in [true, false] {
            let (mut at, mut corner) = (f, k);
            // Fans are small; the bound only guards a malformed mesh.
            for _ in 0..64 {
                // Leaving by the edge that starts at the corner, or by the
                // one that ends there.
                let edge = if forward { corner } else { (corner + 2) % 3 };
                let Ok(next) = usize::try_from(self.neighbours[at][edge]) else {
                    break;
                };
                if next == f {
                    return false;
                }
                if next == g {
                    return true;
                }
                // The shared edge runs the other way in `next`.
                let Some(back) = (0..3).find(|&j| self.neighbours[next][j] == at as i32) else {
                    break;
                };
                corner = if forward { (back + 1) % 3 } else { back };
                at = next;
            }
        }
        false
    }
}

fn bounding_sphere(v: &[Vec3], f: &[u32; 3]) -> (Vec3, f64) {
    let (a, b, c) = (v[f[0] as usize], v[f[1] as usize], v[f[2] as usize]);
    let centre = (a + b + c) / 3.0;
    let r2 = (a - centre)
        .length_squared()
        .max((b - centre).length_squared())
        .max((c - centre).length_squared());
    (centre, r2.sqrt())
}

fn edge_planes(v: &[Vec3], f: &[u32; 3], n: Vec3) -> [(Vec3, f64); 3] {
    std::array::from_fn(|k| {
        let (p, q) = (v[f[k] as usize], v[f[(k + 1) % 3] as usize]);
        // Counter-clockwise corners about n: (q - p) x n points outwards.
        let m = (q - p).cross(n).normalize_or_zero();
        (m, m.dot(p))
    })
}

fn twice_area(v: &[Vec3], f: &[u32; 3]) -> f64 {
    let (a, b, c) = (v[f[0] as usize], v[f[1] as usize], v[f[2] as usize]);
    (b - a).cross(c - a).length()
}

fn facet_normal(v: &[Vec3], f: &[u32; 3]) -> Vec3 {
    let (a, b, c) = (v[f[0] as usize], v[f[1] as usize], v[f[2] as usize]);
    (b - a).cross(c - a).normalize()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Region;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn point(rng: &mut ChaCha8Rng, half: f64) -> Vec3 {
        Vec3::new(
            rng.random_range(-half..half),
            rng.random_range(-half..half),
            rng.random_range(-half..half),
        )
    }

    /// A wall of one random triangle in the unit box, slivers included;
    /// `None` for a degenerate one.
    fn random_facet(rng: &mut ChaCha8Rng) -> Option<Wall> {
        let v = [point(rng, 1.0), point(rng, 1.0), point(rng, 1.0)];
        Wall::new("t", &v.map(|p| p.to_array()), &[[0, 1, 2]], None).ok()
    }

    #[test]
    fn cannot_touch_never_rejects_a_touching_ball() {
        // Random triangles (slivers included) and balls placed around them:
        // whenever the quick test says "cannot touch", the exact distance
        // to the facet must exceed the radius; and it must reject often
        // enough to be worth having.
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let (mut rejected, mut apart) = (0, 0);
        for _ in 0..2000 {
            let Some(wall) = random_facet(&mut rng) else {
                continue;
            };
            let [a, b, c] = wall.corners(0);
            for (m, offset) in wall.edges[0] {
                // Every corner lies on or inside every edge line.
                for p in [a, b, c] {
                    assert!(m.dot(p) - offset < 1e-12);
                }
            }
            for _ in 0..50 {
                let x = point(&mut rng, 1.5);
                let r = rng.random_range(0.01..0.6);
                let (xf, _) = closest_point_triangle(x, a, b, c);
                let dist = (xf - x).length();
                if wall.cannot_touch(0, x, r) {
                    assert!(dist > r, "rejected a ball at {dist} for radius {r}");
                    rejected += 1;
                }
                apart += usize::from(dist > r);
            }
        }
        assert!(
            rejected * 10 > apart * 9,
            "rejected {rejected} of {apart} balls apart"
        );
    }

    #[test]
    fn the_closest_point_of_a_facet_is_that_of_its_triangle() {
        // Random triangles, slivers included, and points around them and
        // off their plane: the face shortcut must give the walk's point to
        // rounding, and its region wherever the foot is not within
        // rounding of an edge line; and it must be taken often.
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let (mut faces, mut points) = (0, 0);
        for _ in 0..2000 {
            let Some(wall) = random_facet(&mut rng) else {
                continue;
            };
            let [a, b, c] = wall.corners(0);
            for k in 0..50 {
                // Half anywhere around, half over the facet and its edges.
                let x = if k % 2 == 0 {
                    point(&mut rng, 1.5)
                } else {
                    let (u, w) = (rng.random_range(-0.2..1.0), rng.random_range(-0.2..1.0));
                    let h = rng.random_range(-0.5..0.5);
                    a + (b - a) * u + (c - a) * w * (1.0 - u) + wall.normals[0] * h
                };
                let (got, region) = wall.closest_point(0, x);
                let (want, want_region) = closest_point_triangle(x, a, b, c);
                let scale = 1.0 + x.length();
                assert!(
                    (got - want).length() <= 1e-12 * scale,
                    "{got} against {want} for {x}"
                );
                let margin = wall.edges[0]
                    .iter()
                    .map(|&(m, offset)| (m.dot(x) - offset).abs())
                    .fold(f64::INFINITY, f64::min);
                if margin > 1e-9 * scale {
                    assert_eq!(region, want_region, "at {x}");
                }
                faces += usize::from(want_region == Region::Face);
                points += 1;
            }
        }
        assert!(faces * 4 > points, "{faces} of {points} in the face region");
    }

    /// A closed octahedron cut twice: every facet's fan round each of its
    /// corners holds exactly the facets that share that vertex.
    #[test]
    fn the_fan_round_a_corner_is_the_facets_sharing_its_vertex() {
        let v = [
            [1.0, 0.0, 0.0],
            [-1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, -1.0, 0.0],
            [0.0, 0.0, 1.0],
            [0.0, 0.0, -1.0],
        ];
        let f = [
            [0, 2, 4],
            [2, 1, 4],
            [1, 3, 4],
            [3, 0, 4],
            [2, 0, 5],
            [1, 2, 5],
            [3, 1, 5],
            [0, 3, 5],
        ];
        let wall = Wall::new("o", &v, &f, None).unwrap();
        let wall = wall.subdivided().unwrap().subdivided().unwrap();
        assert_eq!(wall.facets.len(), 128);
        assert!(wall.neighbours.iter().flatten().all(|&n| n >= 0));
        // An open sheet too: the fan stops at the border both ways.
        let sheet = Wall::new("s", &v[..5], &f[..4], None)
            .unwrap()
            .subdivided()
            .unwrap();
        for w in [&wall, &sheet] {
            for a in 0..w.facets.len() {
                for k in 0..3 {
                    let vertex = w.facets[a][k];
                    for b in (0..w.facets.len()).filter(|&b| b != a) {
                        let shares = w.facets[b].contains(&vertex);
                        assert_eq!(w.round_corner(a, k, b), shares, "{a} {k} {b}");
                    }
                }
            }
        }
    }
}
