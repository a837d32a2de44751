//! Rounded blocks (erode/dilate), their mass properties, and facets
//! extruded into blocks.
//!
//! Reads: a [`ConvexPolyhedron`] and a rounding radius, or a wall facet and
//! an extrusion direction. Writes: a [`RoundedPolyhedron`] (core block plus
//! radius: the Minkowski sum with a ball), its exact volume, centroid and
//! inertia, or an extruded block.
//! Invariant: a rounded block's surface is at exactly `radius` from its
//! core; `erode` keeps every bounding plane's normal and moves it inwards by
//! the radius, so `eroded(p, r)` has the same faces as `p` with rounded edges
//! and corners. The mass properties of a rounded block of radius zero are
//! those of its core, to the bit.
//!
//! # Mass properties of a rounded block
//!
//! Every point of `core ⊕ ball(r)` outside the core has one nearest core
//! point, on a face, an edge or at a vertex; sorting the points by that
//! feature cuts the shell around the core into pieces that meet only on
//! their boundaries. A face here is a bounding plane (coplanar triangles
//! form one face, and the edges between them are not edges of the solid),
//! with outward unit normal `n`. Each piece's volume `V`, first moment
//! `∫ x dV` and second moment `∫ x xᵀ dV` are exact closed forms, taken
//! about the core's vertex mean and added to the core's tetrahedral sums
//! (see [`crate::mass`]) before the shift to the centroid. With the radius
//! `r` (m), volumes are in m^3, first moments in m^4, second moments in m^5
//! (unit density).
//!
//! - **Face prism**: `x = y + t n`, `y` in a face triangle `T`,
//!   `0 <= t <= r`. With `A` the triangle's area projected on `n`, `c` its
//!   centroid and `S_T = A/12 (a aᵀ + b bᵀ + c' c'ᵀ + s sᵀ)` its second
//!   area moment (`s = a + b + c'`, corners `a, b, c'`): `V = A r`,
//!   `∫ x = A r (c + r/2 n)`,
//!   `∫ x xᵀ = r S_T + r²/2 A (c nᵀ + n cᵀ) + r³/3 A n nᵀ`.
//! - **Edge wedge**: `x = m + s e + ρ (cos θ u + sin θ w)` along an edge of
//!   length `L`, midpoint `m`, unit direction `e`, between faces of normals
//!   `n1 = u` and `n2 = cos φ u + sin φ w` (`w = e × u`, `e` oriented so
//!   that `0 < φ < π`); `φ` is the exterior dihedral angle, `π` minus the
//!   interior one. The Jacobian is `ρ`; integrating `s` over `[-L/2, L/2]`,
//!   `ρ` over `[0, r]` and `θ` over `[0, φ]`, with
//!   `g = ∫ (cos θ u + sin θ w) dθ = sin φ u + (1 - cos φ) w`:
//!   `V = φ r² L / 2`, `∫ x = V m + L r³/3 g`,
//!   `∫ x xᵀ = V m mᵀ + (φ r²/2) (L³/12) e eᵀ + L r³/3 (m gᵀ + g mᵀ)
//!   + L r⁴/4 [(φ/2 + sin 2φ/4) u uᵀ + (φ/2 - sin 2φ/4) w wᵀ
//!   + sin²φ/2 (u wᵀ + w uᵀ)]`.
//!   An edge between two triangles of one face has `φ = 0` and no wedge.
//! - **Vertex sector**: `x = p + ρ ν`, `ν` in the vertex's normal cone `K`
//!   (the spherical polygon whose corners are the normals of the vertex's
//!   faces, in order around it), `0 <= ρ <= r`. The radial part integrates
//!   exactly (`∫ ρ^k ρ² dρ = r^(k+3)/(k+3)`), leaving the solid angle
//!   `Ω = ∫_K dω`, `a = ∫_K ν dω` and `B = ∫_K ν νᵀ dω`:
//!   `V = r³/3 Ω`, `∫ x = V p + r⁴/4 a`,
//!   `∫ x xᵀ = V p pᵀ + r⁴/4 (p aᵀ + a pᵀ) + r⁵/5 B`.
//!   All three are closed forms over the polygon's arcs `ν_k -> ν_(k+1)`
//!   (counter-clockwise seen from outside; arc angle `θ_k`, unit normal
//!   `m_k = ν_k × ν_(k+1) / |ν_k × ν_(k+1)|`, pointing into `K`).
//!   `Ω` is the sum of the spherical triangles fanned from the polygon's
//!   mean direction `c`, each by Van Oosterom and Strackee's
//!   `tan(Ω_k/2) = det[c ν_k ν_(k+1)] / (1 + c·ν_k + ν_k·ν_(k+1) + ν_(k+1)·c)`.
//!   For `a` and `B`, apply the divergence theorem on the unit cone
//!   `C = {t ν : ν in K, 0 <= t <= 1}`, whose boundary is the cap `K`
//!   (outward normal `ν`) and one flat circular sector `F_k` per arc
//!   (outward normal `-m_k`). With `∇(|x|²/2) = x`:
//!   `∫_C x dV = a/4 = ∫_∂C |x|²/2 n dS = a/2 - Σ θ_k/8 m_k`, so
//!   `a = 1/2 Σ θ_k m_k`. With `∂_j x_i = δ_ij`:
//!   `δ_ij Ω/3 = ∫_∂C x_i n_j dS = B_ij - Σ m_kj ∫_(F_k) x_i dS`, and
//!   `∫_(F_k) x dS = 1/3 (sin θ_k ν_k + (1 - cos θ_k) τ_k)` with
//!   `τ_k = m_k × ν_k`, so `B = Ω/3 1 + Σ G_k m_kᵀ` with `G_k` that flat
//!   sector's first moment (symmetrised, which changes nothing in exact
//!   arithmetic). No quadrature is involved; every term is computed to
//!   rounding error of its own size. Arcs are shared by the two ends of an
//!   edge in opposite directions, so the sectors add up to one whole ball.
//!
//! The pieces sum to the Steiner volume `V + A r + M r² + 4/3 π r³`
//! (`A` the surface area, `M` half the sum over edges of length times
//! exterior angle).

use glam::{DMat3, DVec3};

use crate::epa::epa_penetration;
use crate::error::GeometryError;
use crate::gjk::{gjk_distance, Proximity};
use crate::hull::{absolute_tolerance, Hull, DEFAULT_RELATIVE_TOLERANCE};
use crate::mass::{vertex_mean, MassProperties, Moments, TetraSums};
use crate::polyhedron::{ConvexPolyhedron, Plane};
use crate::support::{SupportMap, Triangle};

/// A convex block with rounded edges and corners: `core ⊕ ball(radius)`.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundedPolyhedron {
    /// The sharp core block.
    pub core: ConvexPolyhedron,
    /// Rounding radius (m).
    pub radius: f64,
}

impl RoundedPolyhedron {
    /// `block` rounded outwards: the core is `block` itself (PFC's dilate).
    ///
    /// # Errors
    /// [`GeometryError::InvalidArgument`] for a negative or non-finite
    /// radius.
    pub fn dilated(block: &ConvexPolyhedron, radius: f64) -> Result<Self, GeometryError> {
        if !radius.is_finite() || radius < 0.0 {
            return Err(GeometryError::InvalidArgument(
                "radius must be finite and >= 0",
            ));
        }
        Ok(Self {
            core: block.clone(),
            radius,
        })
    }

    /// `block` rounded within its own faces: the core is `block` eroded by
    /// `radius` (PFC's erode).
    ///
    /// # Errors
    /// As [`erode`].
    pub fn eroded(block: &ConvexPolyhedron, radius: f64) -> Result<Self, GeometryError> {
        Ok(Self {
            core: erode(block, radius)?,
            radius,
        })
    }

    /// Exact volume, centroid and inertia (unit density) of the rounded
    /// block: the core plus one prism per face, one cylindrical wedge per
    /// edge and one ball sector per vertex (see the module docs). A radius
    /// of zero gives the core's own [`ConvexPolyhedron::mass_properties`].
    pub fn mass_properties(&self) -> MassProperties {
        let origin = vertex_mean(self.core.vertices());
        let mut sums = TetraSums::of_surface(self.core.vertices(), self.core.facets(), origin);
        sums.add(&shell_moments(&self.core, self.radius, origin));
        sums.finish(origin)
    }

    /// Radius, in metres, of the smallest sphere centred on the core's
    /// centroid that encloses the rounded block: the core's bounding radius
    /// plus the rounding radius. The rounded block's own centroid is in
    /// general elsewhere; a sphere about it needs the distance between the
    /// two centroids added.
    pub fn bounding_radius(&self) -> f64 {
        self.core.bounding_radius() + self.radius
    }

    /// Axis-aligned bounding box `(min, max)` of the rounded block: the
    /// core's grown by the radius on every side (exact: each face of the
    /// box touches a rounded corner).
    pub fn extent(&self) -> (DVec3, DVec3) {
        let (lo, hi) = self.core.extent();
        let r = DVec3::splat(self.radius);
        (lo - r, hi + r)
    }
}

/// `a bᵀ`.
fn outer(a: DVec3, b: DVec3) -> DMat3 {
    DMat3::from_cols(a * b.x, a * b.y, a * b.z)
}

/// `a bᵀ + b aᵀ`.
fn sym_outer(a: DVec3, b: DVec3) -> DMat3 {
    outer(a, b) + outer(b, a)
}

/// Moments about `origin` of the shell `(core ⊕ ball(r)) \ core`: face
/// prisms, edge wedges and vertex sectors (module docs).
fn shell_moments(core: &ConvexPolyhedron, r: f64, origin: DVec3) -> Moments {
    let vertices = core.vertices();
    let planes = core.bounding_planes();
    let face_of = core.facet_bounding_plane();
    let mut total = Moments::ZERO;

    // Face prisms, one per triangle, extruded along its face's normal.
    for (t, &face) in core.facets().iter().zip(face_of) {
        let n = planes[face as usize].normal;
        let [a, b, c] = t.map(|i| vertices[i as usize] - origin);
        let area = 0.5 * (b - a).cross(c - a).dot(n);
        let s = a + b + c;
        let centre = s / 3.0;
        let area_moment = (outer(a, a) + outer(b, b) + outer(c, c) + outer(s, s)) * (area / 12.0);
        total += Moments {
            volume: area * r,
            first: (centre + n * (0.5 * r)) * (area * r),
            second: area_moment * r
                + sym_outer(centre, n) * (0.5 * r * r * area)
                + outer(n, n) * (r * r * r / 3.0 * area),
        };
    }

    // Edge wedges between distinct faces.
    for e in core.edges() {
        let [f, g] = e.facets;
        let (i, j) = (face_of[f as usize], face_of[g as usize]);
        if i == j {
            continue;
        }
        let (n1, n2) = (planes[i as usize].normal, planes[j as usize].normal);
        let p = vertices[e.vertices[0] as usize] - origin;
        let q = vertices[e.vertices[1] as usize] - origin;
        let length = p.distance(q);
        let cross = n1.cross(n2);
        let phi = cross.length().atan2(n1.dot(n2));
        if length == 0.0 || phi == 0.0 {
            continue;
        }
        let mut axis = (q - p) / length;
        if cross.dot(axis) < 0.0 {
            axis = -axis;
        }
        let u = (n1 - axis * n1.dot(axis)).normalize();
        let w = axis.cross(u);
        let mid = 0.5 * (p + q);
        let (sin_phi, cos_phi) = phi.sin_cos();
        let half_sin = (0.5 * phi).sin();
        let g = u * sin_phi + w * (2.0 * half_sin * half_sin);
        let sin_2phi = 2.0 * sin_phi * cos_phi;
        let volume = 0.5 * phi * r * r * length;
        let r3l = r * r * r / 3.0 * length;
        let r4l = r * r * r * r / 4.0 * length;
        let cross_section = outer(u, u) * (0.5 * phi + 0.25 * sin_2phi)
            + outer(w, w) * (0.5 * phi - 0.25 * sin_2phi)
            + sym_outer(u, w) * (0.5 * sin_phi * sin_phi);
        total += Moments {
            volume,
            first: mid * volume + g * r3l,
            second: outer(mid, mid) * volume
                + outer(axis, axis) * (volume * length * length / 12.0)
                + sym_outer(mid, g) * r3l
                + cross_section * r4l,
        };
    }

    // Vertex sectors over the normal cones.
    let mut faces: Vec<u32> = Vec::new();
    let mut cone: Vec<DVec3> = Vec::new();
    for (v, &vertex) in vertices.iter().enumerate() {
        vertex_faces(core, v, &mut faces);
        if faces.len() < 3 {
            // A vertex inside a face or an edge: its cone has no area.
            continue;
        }
        cone.clear();
        cone.extend(faces.iter().map(|&face| planes[face as usize].normal));
        let (omega, a, b) = cone_integrals(&cone);
        let p = vertex - origin;
        let volume = r * r * r / 3.0 * omega;
        let r4 = r * r * r * r / 4.0;
        let r5 = r * r * r * r * r / 5.0;
        total += Moments {
            volume,
            first: p * volume + a * r4,
            second: outer(p, p) * volume + sym_outer(p, a) * r4 + b * r5,
        };
    }
    total
}

/// The distinct faces (bounding-plane indices) around vertex `v`,
/// counter-clockwise seen from outside, into `faces`. Their normals are the
/// corners of the vertex's normal cone in the same order.
fn vertex_faces(core: &ConvexPolyhedron, v: usize, faces: &mut Vec<u32>) {
    // The fan runs clockwise seen from outside; the Gauss map keeps that
    // sense, so reversing it gives a counter-clockwise polygon. Coplanar
    // triangles around the vertex are consecutive in the fan.
    faces.clear();
    for &f in core.vertex_facets(v).iter().rev() {
        let face = core.facet_bounding_plane()[f as usize];
        if faces.last() != Some(&face) {
            faces.push(face);
        }
    }
    if faces.len() > 1 && faces.first() == faces.last() {
        faces.pop();
    }
}

/// Solid angle `Ω`, `∫ ν dω` and `∫ ν νᵀ dω` over the convex spherical
/// polygon with unit corners `cone` (counter-clockwise seen from outside,
/// within an open hemisphere), by the closed forms of the module docs.
fn cone_integrals(cone: &[DVec3]) -> (f64, DVec3, DMat3) {
    let centre = cone.iter().copied().sum::<DVec3>().normalize();
    let mut omega = 0.0;
    let mut a = DVec3::ZERO;
    let mut flat_moments = DMat3::ZERO;
    for (k, &nu) in cone.iter().enumerate() {
        let next = cone[(k + 1) % cone.len()];
        // det[c nu next], written with differences for nearly parallel
        // corners.
        let det = centre.dot((nu - centre).cross(next - centre));
        let den = 1.0 + centre.dot(nu) + nu.dot(next) + next.dot(centre);
        omega += 2.0 * det.atan2(den);
        let cross = nu.cross(next);
        let sin_len = cross.length();
        if sin_len == 0.0 {
            continue;
        }
        let theta = sin_len.atan2(nu.dot(next));
        let m = cross / sin_len;
        a += m * (0.5 * theta);
        let tangent = m.cross(nu);
        let half_sin = (0.5 * theta).sin();
        let flat_first = (nu * theta.sin() + tangent * (2.0 * half_sin * half_sin)) / 3.0;
        flat_moments += sym_outer(flat_first, m) * 0.5;
    }
    (omega, a, DMat3::IDENTITY * (omega / 3.0) + flat_moments)
}

impl SupportMap for RoundedPolyhedron {
    #[inline]
    fn support_point(&self, dir: DVec3) -> DVec3 {
        self.core.support_point(dir) + dir.normalize_or_zero() * self.radius
    }
    #[inline]
    fn interior_point(&self) -> DVec3 {
        self.core.centroid()
    }
}

/// `block` with every bounding plane moved inwards by `radius`.
///
/// # Errors
/// [`GeometryError::InvalidArgument`] for a negative or non-finite radius,
/// [`GeometryError::NoInteriorPoint`] when the block is too thin to erode by
/// `radius` (its centroid is not deeper than `radius`).
pub fn erode(block: &ConvexPolyhedron, radius: f64) -> Result<ConvexPolyhedron, GeometryError> {
    if !radius.is_finite() || radius < 0.0 {
        return Err(GeometryError::InvalidArgument(
            "radius must be finite and >= 0",
        ));
    }
    if radius == 0.0 {
        return Ok(block.clone());
    }
    let planes: Vec<Plane> = block
        .bounding_planes()
        .iter()
        .map(|p| Plane {
            normal: p.normal,
            offset: p.offset - radius,
        })
        .collect();
    ConvexPolyhedron::from_half_spaces(&planes, block.centroid())
}

/// Contact between two rounded blocks, A (end1) and B (end2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundedContact {
    /// Gap between the rounded surfaces (m); negative means overlap.
    pub gap: f64,
    /// Unit normal from A to B.
    pub normal: DVec3,
    /// Point of A's rounded surface nearest B (deepest in B) (m).
    pub point_a: DVec3,
    /// Point of B's rounded surface nearest A (m).
    pub point_b: DVec3,
}

/// Gap and normal of two rounded blocks from their cores: GJK alone while
/// the cores are apart (the common case, as rounding intends), EPA on the
/// cores only when they overlap.
///
/// # Errors
/// The GJK/EPA errors.
pub fn contact_rounded(
    a: &RoundedPolyhedron,
    b: &RoundedPolyhedron,
) -> Result<RoundedContact, GeometryError> {
    let (core_gap, normal, pa, pb) = match gjk_distance(&a.core, &b.core)? {
        Proximity::Separated(s) => (s.distance, s.normal, s.point_a, s.point_b),
        _ => {
            let p = epa_penetration(&a.core, &b.core)?;
            (-p.depth, p.normal, p.point_a, p.point_b)
        }
    };
    Ok(RoundedContact {
        gap: core_gap - a.radius - b.radius,
        normal,
        point_a: pa + normal * a.radius,
        point_b: pb - normal * b.radius,
    })
}

/// A wall facet extruded by `length` along `direction` into a prism block
/// (block–facet contacts treat the facet as this block).
///
/// # Errors
/// [`GeometryError::InvalidArgument`] when `length` is not positive or the
/// direction is parallel to the facet, and the hull errors for a
/// degenerate facet.
pub fn extrude_facet(
    facet: &Triangle,
    direction: DVec3,
    length: f64,
) -> Result<ConvexPolyhedron, GeometryError> {
    if !direction.is_finite() || !length.is_finite() {
        return Err(GeometryError::NonFinite);
    }
    if length <= 0.0 {
        return Err(GeometryError::InvalidArgument(
            "extrusion length must be positive",
        ));
    }
    let d = direction.normalize_or_zero();
    if d == DVec3::ZERO {
        return Err(GeometryError::InvalidArgument(
            "extrusion direction is zero",
        ));
    }
    let [a, b, c] = facet.vertices;
    let n = (b - a).cross(c - a).normalize_or_zero();
    if n.dot(d).abs() < 1e-9 {
        return Err(GeometryError::InvalidArgument(
            "extrusion direction is parallel to the facet",
        ));
    }
    let off = d * length;
    Ok(prism([a, b, c], off))
}

/// The prism swept by triangle `[a, b, c]` along `off` (not parallel to
/// it), built from its known faces: the two triangles and three sides
/// split in two. The same polyhedron as the hull of the six corners, at
/// a fraction of a hull's cost (the block-facet kernel builds one per
/// overlapping pair and step).
fn prism([a, b, c]: [DVec3; 3], off: DVec3) -> ConvexPolyhedron {
    // Corners 0-2 the base, 3-5 the top, the base counter-clockwise seen
    // from the top's side.
    let (b, c) = if (b - a).cross(c - a).dot(off) > 0.0 {
        (b, c)
    } else {
        (c, b)
    };
    let vertices = vec![a, b, c, a + off, b + off, c + off];
    let tolerance = absolute_tolerance(&vertices, DEFAULT_RELATIVE_TOLERANCE);
    ConvexPolyhedron::from_hull(Hull {
        vertices,
        source_indices: (0..6).collect(),
        triangles: PRISM_TRIANGLES.to_vec(),
        neighbors: PRISM_NEIGHBORS.to_vec(),
        tolerance,
    })
}

/// A prism's triangles over its corners (0-2 the base, counter-clockwise
/// seen from the top's side, 3-5 the top), counter-clockwise seen from
/// outside: the base, the top, then each side split in two.
const PRISM_TRIANGLES: [[u32; 3]; 8] = [
    [0, 2, 1],
    [3, 4, 5],
    [0, 1, 4],
    [0, 4, 3],
    [1, 2, 5],
    [1, 5, 4],
    [2, 0, 3],
    [2, 3, 5],
];

/// Across edge `k` (corner `k` to corner `k + 1`) of each of
/// [`PRISM_TRIANGLES`], the triangle that runs that edge the other way.
const PRISM_NEIGHBORS: [[u32; 3]; 8] = [
    [6, 4, 2],
    [3, 5, 7],
    [0, 5, 3],
    [2, 1, 6],
    [0, 7, 5],
    [4, 1, 2],
    [0, 3, 7],
    [6, 1, 4],
];

/// Extrusion of a facet away from a block: along the facet normal on the
/// side opposite the block centroid, by `length`.
///
/// # Errors
/// As [`extrude_facet`].
pub fn extrude_facet_away_from(
    facet: &Triangle,
    block_centroid: DVec3,
    length: f64,
) -> Result<ConvexPolyhedron, GeometryError> {
    let [a, b, c] = facet.vertices;
    let mut n = (b - a).cross(c - a).normalize_or_zero();
    if n.dot(block_centroid - a) > 0.0 {
        n = -n;
    }
    extrude_facet(facet, n, length)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each neighbour in the prism's table runs the shared edge the other
    /// way.
    #[test]
    fn the_prism_table_pairs_every_edge_with_its_reverse() {
        for (t, tri) in PRISM_TRIANGLES.iter().enumerate() {
            for k in 0..3 {
                let (u, v) = (tri[k], tri[(k + 1) % 3]);
                let across = PRISM_TRIANGLES[PRISM_NEIGHBORS[t][k] as usize];
                let reverse = (0..3).any(|m| across[m] == v && across[(m + 1) % 3] == u);
                assert!(reverse, "triangle {t}, edge {k}");
            }
        }
    }

    /// The prism built from its faces is the hull of its six corners:
    /// the same volume, centroid, bounding planes and support points, on
    /// random triangles swept either way.
    #[test]
    fn a_prism_from_its_faces_is_the_hull_of_its_corners() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let mut random = || DVec3::new(next(), next(), next());
        for _ in 0..500 {
            let corners = [random(), random(), random()];
            let off = random();
            let n = (corners[1] - corners[0]).cross(corners[2] - corners[0]);
            if n.length() < 1e-3 || n.normalize().dot(off).abs() < 1e-2 {
                continue;
            }
            let built = prism(corners, off);
            let [a, b, c] = corners;
            let hull = ConvexPolyhedron::from_points(&[a, b, c, a + off, b + off, c + off])
                .expect("a prism spans a volume");
            let scale = off.length() + n.length();
            assert!((built.volume() - hull.volume()).abs() <= 1e-12 * hull.volume());
            assert!(built.centroid().distance(hull.centroid()) <= 1e-12 * scale);
            let sorted = |p: &ConvexPolyhedron| {
                let mut planes: Vec<[f64; 4]> = p
                    .bounding_planes()
                    .iter()
                    .map(Plane::coefficients)
                    .collect();
                planes.sort_by(|x, y| x.partial_cmp(y).unwrap());
                planes
            };
            let (x, y) = (sorted(&built), sorted(&hull));
            assert_eq!(x.len(), 5);
            assert_eq!(x.len(), y.len());
            for (p, q) in x.iter().zip(&y) {
                for k in 0..4 {
                    assert!((p[k] - q[k]).abs() <= 1e-12 * scale, "{p:?} {q:?}");
                }
            }
            for _ in 0..20 {
                let dir = random();
                let (p, q) = (built.support_point(dir), hull.support_point(dir));
                assert!((p.dot(dir) - q.dot(dir)).abs() <= 1e-12 * scale);
            }
            assert_eq!(built.edges().len(), hull.edges().len());
        }
    }

    #[test]
    fn erode_cube() {
        let c = ConvexPolyhedron::cuboid(DVec3::ONE).unwrap();
        let e = erode(&c, 0.25).unwrap();
        assert!((e.volume() - 1.5f64.powi(3)).abs() < 1e-12);
        assert_eq!(erode(&c, 1.5), Err(GeometryError::NoInteriorPoint));
    }

    #[test]
    fn rounded_contact_gap() {
        let c = ConvexPolyhedron::cuboid(DVec3::ONE).unwrap();
        let a = RoundedPolyhedron::eroded(&c, 0.1).unwrap();
        let b = RoundedPolyhedron {
            core: a
                .core
                .transformed(glam::DQuat::IDENTITY, DVec3::new(2.1, 0.0, 0.0)),
            radius: 0.1,
        };
        let k = contact_rounded(&a, &b).unwrap();
        assert!((k.gap - 0.1).abs() < 1e-12);
        assert!((k.normal - DVec3::X).length() < 1e-12);
    }

    #[test]
    fn octant_cone_integrals() {
        // Octant x, y, z >= 0: Ω = π/2, ∫ν = π/4 (1, 1, 1),
        // ∫ν_i² = π/6 and ∫ν_i ν_j = 1/3 (i != j).
        let (omega, a, b) = cone_integrals(&[DVec3::X, DVec3::Y, DVec3::Z]);
        let pi = std::f64::consts::PI;
        assert!((omega - pi / 2.0).abs() < 1e-15);
        assert!((a - DVec3::splat(pi / 4.0)).length() < 1e-15);
        for i in 0..3 {
            for j in 0..3 {
                let want = if i == j { pi / 6.0 } else { 1.0 / 3.0 };
                assert!((b.col(j)[i] - want).abs() < 1e-15);
            }
        }
    }

    #[test]
    fn vertex_cones_tile_the_sphere() {
        // Around every vertex the cone comes out counter-clockwise (positive
        // solid angle), and the cones of all vertices make up the sphere:
        // Ω sums to 4π, ∫ν to zero and ∫ν νᵀ to 4π/3 1. Coplanar triangles
        // (the box's) merge into one corner of the cone.
        let pts = [
            DVec3::new(0.9, 0.1, -0.3),
            DVec3::new(-0.7, 0.5, 0.2),
            DVec3::new(0.1, -0.8, 0.6),
            DVec3::new(0.3, 0.6, 0.9),
            DVec3::new(-0.2, -0.4, -0.9),
            DVec3::new(0.5, -0.3, 0.1),
            DVec3::new(-0.6, -0.5, 0.4),
        ];
        let blocks = [
            ConvexPolyhedron::from_points(&pts).unwrap(),
            ConvexPolyhedron::cuboid(DVec3::new(1.0, 2.0, 0.5)).unwrap(),
        ];
        for block in &blocks {
            let mut omega = 0.0;
            let mut a = DVec3::ZERO;
            let mut b = DMat3::ZERO;
            for v in 0..block.vertices().len() {
                let mut faces = Vec::new();
                vertex_faces(block, v, &mut faces);
                let cone: Vec<DVec3> = faces
                    .iter()
                    .map(|&i| block.bounding_planes()[i as usize].normal)
                    .collect();
                let (o, av, bv) = cone_integrals(&cone);
                assert!(o > 0.0);
                omega += o;
                a += av;
                b += bv;
            }
            let pi = std::f64::consts::PI;
            assert!((omega - 4.0 * pi).abs() < 1e-13);
            assert!(a.length() < 1e-13);
            for c in 0..3 {
                assert!((b.col(c) - DMat3::IDENTITY.col(c) * (4.0 * pi / 3.0)).length() < 1e-13);
            }
        }
    }

    #[test]
    fn rounded_extent_and_bounding_radius() {
        let c = ConvexPolyhedron::cuboid(DVec3::new(1.0, 2.0, 3.0)).unwrap();
        let r = RoundedPolyhedron::dilated(&c, 0.5).unwrap();
        assert_eq!(
            r.extent(),
            (DVec3::new(-1.5, -2.5, -3.5), DVec3::new(1.5, 2.5, 3.5))
        );
        assert!((r.bounding_radius() - (14f64.sqrt() + 0.5)).abs() < 1e-15);
    }

    #[test]
    fn extruded_facet_volume() {
        let t = Triangle {
            vertices: [DVec3::ZERO, DVec3::X, DVec3::Y],
        };
        let p = extrude_facet_away_from(&t, DVec3::new(0.2, 0.2, 1.0), 2.0).unwrap();
        assert!((p.volume() - 1.0).abs() < 1e-12);
        assert!(p.centroid().z < 0.0);
    }
}
