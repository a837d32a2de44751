//! Overlap polyhedron of two convex blocks by half-space duality, and the
//! contact plane of the volume-stiffness model.
//!
//! Reads: two [`ConvexPolyhedron`]s in the global frame and a per-contact
//! [`OverlapCache`]. Writes: the [`OverlapPolyhedron`] (volume, centroid,
//! surface, intersection line of the two surfaces) and the cache.
//!
//! # Model
//!
//! With a point `x0` strictly inside both blocks, every bounding plane
//! `n . x <= d` has slack `h = d - n . x0 > 0` and maps to the dual point
//! `n / h`. The convex hull of the dual points is the polar of the overlap
//! (relative to `x0`): its vertices are the planes that bound the overlap,
//! and each hull triangle with plane `m . y = e` maps back to the overlap
//! vertex `x0 + m / e`. The dual triangles around one dual vertex give, in
//! order, the corners of that overlap face. Volume and centroid follow from
//! cones with apex `x0` over the faces, each face split from the foot of
//! `x0` on its plane.
//!
//! Invariant: `x0` is inside both blocks by more than the thin-overlap
//! tolerance (`1e-9 * (r_a + r_b)`, with `r` the bounding radii); overlaps
//! thinner than that are reported with `thin = true`, zero volume and the
//! best interior point found as centroid. `normal` points from A (end1) to
//! B (end2).
//!
//! The interior point is the previous centroid when it is still inside with
//! at least a tenth of its previous margin (a cache hit); otherwise it is
//! the centroid of the common area of the two blocks cut by the plane
//! halfway between the EPA deepest points (a cache miss).
//!
//! # References
//! Preparata and Muller (1979); Günther and Wong (1991) for the dual
//! approach to polyhedral intersection.

use glam::DVec3;

use crate::cut::{area_centroid_2d, clip_convex_2d, convex_hull_2d, PlaneFrame};
use crate::epa::{epa_penetration, Penetration};
use crate::error::GeometryError;
use crate::hull::{absolute_tolerance, quickhull, DEFAULT_RELATIVE_TOLERANCE};
use crate::mass::symmetric_eigen;
use crate::polyhedron::{ConvexPolyhedron, Plane};

/// Which block a face of the overlap comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Block A, end1 of the contact.
    End1,
    /// Block B, end2 of the contact.
    End2,
}

/// A face of the overlap polyhedron.
#[derive(Debug, Clone, PartialEq)]
pub struct OverlapFace {
    /// The bounding plane the face lies on.
    pub plane: Plane,
    /// The block owning that plane.
    pub end: End,
    /// Index of the plane in that block's `bounding_planes()`.
    pub plane_index: u32,
    /// Corners (indices into `OverlapPolyhedron::vertices`), in cyclic
    /// order. Nearly coincident corners may repeat where more than three
    /// planes meet.
    pub corners: Vec<u32>,
}

/// The overlap of two convex blocks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OverlapPolyhedron {
    /// Overlap volume (m^3).
    pub volume: f64,
    /// Centroid of the overlap (m).
    pub centroid: DVec3,
    /// Whether the overlap was thinner than the tolerance (then `volume` is
    /// zero and there is no surface).
    pub thin: bool,
    /// Overlap vertices (m).
    pub vertices: Vec<DVec3>,
    /// Interior point the dual map used (m).
    pub interior: DVec3,
    pub(crate) planes: Vec<Plane>,
    pub(crate) n_planes_a: usize,
    pub(crate) dual_triangles: Vec<[u32; 3]>,
    dual_neighbors: Vec<[u32; 3]>,
}

impl OverlapPolyhedron {
    /// The overlap faces with their corner rings.
    pub fn faces(&self) -> Vec<OverlapFace> {
        let mut seen = vec![false; self.planes.len()];
        let mut faces = Vec::new();
        for (t, tri) in self.dual_triangles.iter().enumerate() {
            for &i in tri {
                if seen[i as usize] {
                    continue;
                }
                seen[i as usize] = true;
                let mut corners = Vec::new();
                let mut cur = t;
                for _ in 0..self.dual_triangles.len() {
                    corners.push(cur as u32);
                    let c = (0..3)
                        .find(|&c| self.dual_triangles[cur][c] == i)
                        .unwrap_or(0);
                    cur = self.dual_neighbors[cur][c] as usize;
                    if cur == t {
                        break;
                    }
                }
                let (end, plane_index) = if (i as usize) < self.n_planes_a {
                    (End::End1, i)
                } else {
                    (End::End2, i - self.n_planes_a as u32)
                };
                faces.push(OverlapFace {
                    plane: self.planes[i as usize],
                    end,
                    plane_index,
                    corners,
                });
            }
        }
        faces
    }

    /// Total surface area of the overlap (m^2).
    pub fn surface_area(&self) -> f64 {
        self.faces()
            .iter()
            .map(|f| {
                let c = &f.corners;
                let o = self.vertices[c[0] as usize];
                let mut s = DVec3::ZERO;
                for k in 1..c.len().saturating_sub(1) {
                    s += (self.vertices[c[k] as usize] - o)
                        .cross(self.vertices[c[k + 1] as usize] - o);
                }
                0.5 * s.length()
            })
            .sum()
    }

    /// Segments of the intersection line of the two block surfaces: the
    /// overlap edges between a face of A and a face of B.
    pub fn intersection_segments(&self) -> Vec<[DVec3; 2]> {
        let mut out = Vec::new();
        for (t, tri) in self.dual_triangles.iter().enumerate() {
            for c in 0..3 {
                let (i, j) = (tri[c] as usize, tri[(c + 1) % 3] as usize);
                let nb = self.dual_neighbors[t][c] as usize;
                if (i < self.n_planes_a) != (j < self.n_planes_a) && t < nb {
                    out.push([self.vertices[t], self.vertices[nb]]);
                }
            }
        }
        out
    }
}

/// Per-contact cache of the overlap computation, with counters.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OverlapCache {
    /// Interior point to try first (the previous centroid).
    pub interior: Option<DVec3>,
    /// Margin of that point inside both blocks when it was stored (m).
    pub margin: f64,
    /// Calls that reused the cached interior point.
    pub hits: u64,
    /// Calls that had to search for an interior point.
    pub misses: u64,
    /// Calls that found the overlap thinner than the tolerance.
    pub thin: u64,
}

impl OverlapCache {
    /// Fraction of calls that reused the cached interior point.
    pub fn hit_rate(&self) -> f64 {
        let n = self.hits + self.misses;
        if n == 0 {
            0.0
        } else {
            self.hits as f64 / n as f64
        }
    }
}

pub(crate) fn min_slack(planes: &[Plane], x: DVec3) -> f64 {
    planes
        .iter()
        .map(|p| p.offset - p.normal.dot(x))
        .fold(f64::INFINITY, f64::min)
}

/// Overlap polyhedron of blocks A (end1) and B (end2).
///
/// # Errors
/// [`GeometryError::NotOverlapping`] when they are apart, and the
/// GJK/EPA/hull errors.
pub fn overlap_polyhedron(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
    cache: &mut OverlapCache,
) -> Result<OverlapPolyhedron, GeometryError> {
    overlap_polyhedron_inner(a, b, cache).map(|(o, _)| o)
}

fn overlap_polyhedron_inner(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
    cache: &mut OverlapCache,
) -> Result<(OverlapPolyhedron, Option<Penetration>), GeometryError> {
    let (lo_a, hi_a) = a.extent();
    let (lo_b, hi_b) = b.extent();
    if lo_a.cmpgt(hi_b).any() || lo_b.cmpgt(hi_a).any() {
        return Err(GeometryError::NotOverlapping);
    }
    let mut planes = Vec::with_capacity(a.bounding_planes().len() + b.bounding_planes().len());
    planes.extend_from_slice(a.bounding_planes());
    planes.extend_from_slice(b.bounding_planes());
    let thin_tol = 1e-9 * (a.bounding_radius() + b.bounding_radius());

    let mut penetration = None;
    let cached = cache
        .interior
        .map(|x| (x, min_slack(&planes, x)))
        .filter(|&(_, s)| s > thin_tol && s >= 0.1 * cache.margin);
    let (x0, slack) = match cached {
        Some(found) => {
            cache.hits += 1;
            found
        }
        None => {
            cache.misses += 1;
            let pen = epa_penetration(a, b)?;
            penetration = Some(pen);
            let mut found = interior_by_slicing(a, b, &planes, &pen);
            if found.1 < 0.1 * pen.depth {
                // The cut missed the bulk of the overlap (skewed contact):
                // average the overlap's corners found by brute force.
                let other = interior_by_corners(a, b, &planes);
                if other.1 > found.1 {
                    found = other;
                }
            }
            found
        }
    };
    if slack <= thin_tol {
        cache.thin += 1;
        cache.interior = None;
        cache.margin = 0.0;
        return Ok((
            OverlapPolyhedron {
                centroid: x0,
                interior: x0,
                thin: true,
                ..Default::default()
            },
            penetration,
        ));
    }
    let mut overlap = dual_overlap(planes, a.bounding_planes().len(), x0)?;
    cache.interior = Some(overlap.centroid);
    cache.margin = min_slack(&overlap.planes, overlap.centroid);
    if cache.margin.is_nan() || cache.margin <= thin_tol {
        // The centroid of a very flat overlap sits too close to a face to
        // seed the next call; fall back to this call's interior point.
        cache.interior = Some(x0);
        cache.margin = slack;
    }
    overlap.interior = x0;
    Ok((overlap, penetration))
}

/// Interior point of the overlap: the better of the midpoint of the deepest
/// points and the centroid of the common area of the two cuts by the plane
/// halfway between them.
fn interior_by_slicing(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
    planes: &[Plane],
    pen: &Penetration,
) -> (DVec3, f64) {
    let mid = 0.5 * (pen.point_a + pen.point_b);
    let mut best = (mid, min_slack(planes, mid));
    let plane = Plane::from_point_normal(mid, pen.normal);
    let frame = PlaneFrame::new(&plane);
    let sec = |p: &ConvexPolyhedron| {
        crate::cut::section(p, &plane)
            .map(|s| convex_hull_2d(s.polygon.iter().map(|&q| frame.to_2d(q)).collect()))
            .unwrap_or_default()
    };
    let (pa, pb) = (sec(a), sec(b));
    if pa.len() >= 3 && pb.len() >= 3 {
        let common = clip_convex_2d(&pa, &pb);
        let (area, c) = area_centroid_2d(&common);
        if area > 0.0 {
            let c = frame.to_3d(c);
            let s = min_slack(planes, c);
            if s > best.1 {
                best = (c, s);
            }
        }
    }
    best
}

/// Interior point of the overlap: the mean of its corners, found by brute
/// force as the vertices of each block inside the other and the crossings of
/// each block's edges with the other's planes that lie inside both.
fn interior_by_corners(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
    planes: &[Plane],
) -> (DVec3, f64) {
    let tol = a.tolerance().max(b.tolerance());
    let mut sum = DVec3::ZERO;
    let mut count = 0usize;
    let mut add = |p: DVec3| {
        if a.contains(p, tol) && b.contains(p, tol) {
            sum += p;
            count += 1;
        }
    };
    for (x, y) in [(a, b), (b, a)] {
        for &v in x.vertices() {
            add(v);
        }
        for e in x.edges() {
            let (p, q) = (
                x.vertices()[e.vertices[0] as usize],
                x.vertices()[e.vertices[1] as usize],
            );
            for pl in y.bounding_planes() {
                let (sp, sq) = (pl.signed_distance(p), pl.signed_distance(q));
                if (sp < 0.0) != (sq < 0.0) {
                    add(p.lerp(q, sp / (sp - sq)));
                }
            }
        }
    }
    if count == 0 {
        return (DVec3::ZERO, f64::NEG_INFINITY);
    }
    let c = sum / count as f64;
    (c, min_slack(planes, c))
}

/// Overlap of the half-spaces `planes` (the first `n_planes_a` from block A)
/// around the interior point `x0`.
pub(crate) fn dual_overlap(
    planes: Vec<Plane>,
    n_planes_a: usize,
    x0: DVec3,
) -> Result<OverlapPolyhedron, GeometryError> {
    let (hull, vertices) = dual_hull(&planes, x0)?;
    // Cone volumes with apex x0: for each face i, the triangles (foot_i,
    // q_t, q_next) over its boundary edges give the face's cone exactly,
    // even when the foot of x0 lies outside the face.
    let mut vol6 = 0.0;
    let mut moment = DVec3::ZERO;
    let feet: Vec<DVec3> = planes
        .iter()
        .map(|p| p.normal * (p.offset - p.normal.dot(x0)))
        .collect();
    for (t, tri) in hull.triangles.iter().enumerate() {
        let qt = vertices[t] - x0;
        for c in 0..3 {
            let i = hull.source_indices[tri[c] as usize];
            let qn = vertices[hull.neighbors[t][c] as usize] - x0;
            let f = feet[i];
            let v = f.dot(qt.cross(qn));
            vol6 += v;
            moment += (f + qt + qn) * v;
        }
    }
    let (volume, centroid) = if vol6 != 0.0 {
        (vol6.abs() / 6.0, x0 + moment / (4.0 * vol6))
    } else {
        (0.0, x0)
    };
    let dual_triangles = hull
        .triangles
        .iter()
        .map(|t| t.map(|v| hull.source_indices[v as usize] as u32))
        .collect();
    Ok(OverlapPolyhedron {
        volume,
        centroid,
        thin: false,
        vertices,
        interior: x0,
        planes,
        n_planes_a,
        dual_triangles,
        dual_neighbors: hull.neighbors,
    })
}

/// Dual hull of `planes` about `x0`, and the primal vertex of each dual
/// triangle.
fn dual_hull(
    planes: &[Plane],
    x0: DVec3,
) -> Result<(crate::hull::Hull, Vec<DVec3>), GeometryError> {
    let mut dual = Vec::with_capacity(planes.len());
    for p in planes {
        let h = p.offset - p.normal.dot(x0);
        if h.is_nan() || h <= 0.0 || !h.is_finite() {
            return Err(GeometryError::NoInteriorPoint);
        }
        dual.push(p.normal / h);
    }
    let eps = absolute_tolerance(&dual, DEFAULT_RELATIVE_TOLERANCE);
    let hull = quickhull(dual, eps).map_err(|e| match e {
        GeometryError::Coplanar | GeometryError::Collinear | GeometryError::TooFewPoints { .. } => {
            GeometryError::InvalidArgument("half-space intersection is unbounded")
        }
        other => other,
    })?;
    let hull = hull.compact();
    let mut vertices = Vec::with_capacity(hull.triangles.len());
    for t in &hull.triangles {
        let [i, j, k] = t.map(|v| hull.source_indices[v as usize]);
        let (ni, nj, nk) = (planes[i].normal, planes[j].normal, planes[k].normal);
        let (hi, hj, hk) = (
            planes[i].offset - ni.dot(x0),
            planes[j].offset - nj.dot(x0),
            planes[k].offset - nk.dot(x0),
        );
        // Corner where the three planes meet (Cramer's rule about x0).
        let det = ni.dot(nj.cross(nk));
        if det == 0.0 || !det.is_finite() {
            return Err(GeometryError::InvalidArgument(
                "half-space intersection is unbounded",
            ));
        }
        let q = (nj.cross(nk) * hi + nk.cross(ni) * hj + ni.cross(nj) * hk) / det;
        vertices.push(x0 + q);
    }
    Ok((hull, vertices))
}

/// Corners of the intersection of `planes` around the interior point `x0`
/// (used to build polyhedra from half-spaces).
pub(crate) fn half_space_vertices(
    planes: &[Plane],
    x0: DVec3,
) -> Result<Vec<DVec3>, GeometryError> {
    if planes.len() < 4 {
        return Err(GeometryError::TooFewPoints {
            distinct: planes.len(),
        });
    }
    dual_hull(planes, x0).map(|(_, v)| v)
}

/// Least-squares plane through a set of segments (each weighted by its
/// length, integrated along it), with the normal oriented along `toward`.
///
/// Returns `None` when the segments are empty or all on one line.
pub fn fit_contact_plane(segments: &[[DVec3; 2]], toward: DVec3) -> Option<Plane> {
    let mut total = 0.0;
    let mut c = DVec3::ZERO;
    for s in segments {
        let l = s[0].distance(s[1]);
        total += l;
        c += 0.5 * (s[0] + s[1]) * l;
    }
    if total.is_nan() || total <= 0.0 {
        return None;
    }
    c /= total;
    let mut cov = glam::DMat3::ZERO;
    for s in segments {
        let l = s[0].distance(s[1]);
        let m = 0.5 * (s[0] + s[1]) - c;
        let d = s[1] - s[0];
        cov += (outer(m, m) + outer(d, d) / 12.0) * l;
    }
    let (vals, vecs) = symmetric_eigen(cov);
    if vals.y.is_nan() || vals.y <= 1e-12 * vals.z {
        return None;
    }
    let mut n = vecs.col(0);
    if n.dot(toward) < 0.0 {
        n = -n;
    }
    Some(Plane::from_point_normal(c, n))
}

fn outer(a: DVec3, b: DVec3) -> glam::DMat3 {
    glam::DMat3::from_cols(a * b.x, a * b.y, a * b.z)
}

/// Contact of two blocks for the volume-stiffness model.
#[derive(Debug, Clone, PartialEq)]
pub struct VolumeContact {
    /// The overlap polyhedron (volume, centroid = contact location).
    pub overlap: OverlapPolyhedron,
    /// Unit contact normal from A (end1) to B (end2).
    pub normal: DVec3,
    /// Whether `normal` comes from the least-squares fit of the
    /// intersection line (otherwise from EPA, e.g. when one block is inside
    /// the other and the surfaces do not cross).
    pub normal_from_fit: bool,
}

/// Volume-model contact of blocks A (end1) and B (end2): overlap volume and
/// centroid, and the normal of the plane fitted to the intersection line.
///
/// # Errors
/// As [`overlap_polyhedron`].
pub fn contact_rblock_rblock_volume(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
    cache: &mut OverlapCache,
) -> Result<VolumeContact, GeometryError> {
    let (overlap, pen) = overlap_polyhedron_inner(a, b, cache)?;
    let toward = b.centroid() - a.centroid();
    let toward = match pen {
        Some(p) => p.normal,
        None if toward != DVec3::ZERO => toward,
        None => DVec3::X,
    };
    if let Some(plane) = fit_contact_plane(&overlap.intersection_segments(), toward) {
        return Ok(VolumeContact {
            overlap,
            normal: plane.normal,
            normal_from_fit: true,
        });
    }
    let normal = match pen {
        Some(p) => p.normal,
        None => epa_penetration(a, b)?.normal,
    };
    Ok(VolumeContact {
        overlap,
        normal,
        normal_from_fit: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DQuat;

    #[test]
    fn offset_boxes_overlap() {
        let a = ConvexPolyhedron::cuboid(DVec3::ONE).unwrap();
        let b = a.transformed(DQuat::IDENTITY, DVec3::new(1.5, 0.5, 0.25));
        let mut cache = OverlapCache::default();
        let o = overlap_polyhedron(&a, &b, &mut cache).unwrap();
        // 0.5 x 1.5 x 1.75
        assert!((o.volume - 0.5 * 1.5 * 1.75).abs() < 1e-12, "{}", o.volume);
        assert!((o.centroid - DVec3::new(0.75, 0.25, 0.125)).length() < 1e-12);
        assert_eq!(o.faces().len(), 6);
        let area = 2.0 * (0.5 * 1.5 + 0.5 * 1.75 + 1.5 * 1.75);
        assert!((o.surface_area() - area).abs() < 1e-12);
        let again = overlap_polyhedron(&a, &b, &mut cache).unwrap();
        assert_eq!(cache.hits, 1);
        assert!((again.volume - o.volume).abs() < 1e-12);
        let big = ConvexPolyhedron::cuboid(DVec3::new(1.0, 2.0, 2.0))
            .unwrap()
            .transformed(DQuat::IDENTITY, DVec3::new(1.5, 0.0, 0.0));
        let mut cache = OverlapCache::default();
        let c = contact_rblock_rblock_volume(&a, &big, &mut cache).unwrap();
        assert!((c.overlap.volume - 2.0).abs() < 1e-12);
        assert!((c.overlap.centroid - DVec3::new(0.75, 0.0, 0.0)).length() < 1e-12);
        assert!(c.normal_from_fit);
        assert!((c.normal - DVec3::X).length() < 1e-12, "{}", c.normal);
    }
}
