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
    /// Overlap volume [m^3].
    pub volume: f64,
    /// Centroid of the overlap [m].
    pub centroid: DVec3,
    /// Whether the overlap was thinner than the tolerance (then `volume` is
    /// zero and there is no surface).
    pub thin: bool,
    /// Overlap vertices [m].
    pub vertices: Vec<DVec3>,
    /// Interior point the dual map used [m].
    pub interior: DVec3,
    planes: Vec<Plane>,
    n_planes_a: usize,
    dual_triangles: Vec<[u32; 3]>,
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

    /// Total surface area of the overlap [m^2].
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

/// End1's surface inside end2, the part of the overlap's boundary that a
/// rigid motion of end2 does not move, summed as one area vector and its
/// moment.
///
/// A rigid motion of end2 (translation `u`, rotation `w` about a point
/// `o`) changes the overlap volume by `-(S . u + M(o) . w)` to first order,
/// with `S` and `M(o)` the two sums below (they are minus the same sums
/// over end2's faces inside end1, since the overlap's closed surface sums
/// to zero in both).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PressedSurface {
    /// Sum over end1's faces inside end2 of area times outward unit
    /// normal, `S` [m^2].
    pub area_vector: DVec3,
    /// Sum over the same faces of `(c_f - o) x n_f A_f`, with `c_f` the
    /// face's centroid, about the point `o` given [m^3].
    pub moment: DVec3,
}

/// Area vector and centroid (area-weighted, by a fan from the first
/// corner) of the polygon `ring` of `vertices`, the area vector signed by
/// the ring's turn.
fn polygon_area_centroid(vertices: &[DVec3], ring: &[u32]) -> (DVec3, DVec3) {
    let Some(&first) = ring.first() else {
        return (DVec3::ZERO, DVec3::ZERO);
    };
    let o = vertices[first as usize];
    let (mut s, mut c, mut total) = (DVec3::ZERO, DVec3::ZERO, 0.0);
    for w in ring[1..].windows(2) {
        let (p, q) = (vertices[w[0] as usize], vertices[w[1] as usize]);
        let t = 0.5 * (p - o).cross(q - o);
        let a = t.length();
        s += t;
        c += (o + p + q) / 3.0 * a;
        total += a;
    }
    let c = if total > 0.0 { c / total } else { o };
    (s, c)
}

/// End1's pressed surface with the line of action of the overlap volume's
/// gradient and the area vector's gradient about it (see
/// [`OverlapPolyhedron::pressed_contact`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PressedContact {
    /// The pressed surface, its moment about the overlap's centroid.
    pub surface: PressedSurface,
    /// The point of the line of action nearest the centroid `c`:
    /// `c + n x M(c) / |S|`, `n = S / |S|` [m].
    pub location: DVec3,
    /// Row `k`: the gradient of the area vector's component `k` under a
    /// translation, then a rotation about `location`, of end2 [m, m^2].
    pub jacobian: [[DVec3; 2]; 3],
}

impl OverlapPolyhedron {
    /// End1's faces inside end2 as one area vector and its moment about
    /// `about` (see [`PressedSurface`]).
    pub fn pressed_surface(&self, about: DVec3) -> PressedSurface {
        pressed_of(&self.vertices, &self.faces(), about)
    }

    /// The gradient of `n . S` (the contact area when `n` is the direction
    /// of [`PressedSurface::area_vector`] `S`) under a rigid motion of end2:
    /// `[d/du, d/dw]`, for a translation `u` and a rotation `w` about
    /// `about`, with end1 held.
    ///
    /// Each corner of the overlap is where three bounding planes meet; a
    /// motion of end2 carries its own planes along and leaves end1's, so
    /// the corner moves by `dx` with `m . dx = m . v(x)` for each plane of
    /// end2 (`v(x) = u + w x (x - about)`, the velocity of end2 at `x`) and
    /// `m . dx = 0` for each plane of end1 (Cramer's rule). A face of end1
    /// with corners `x_j` in counter-clockwise turn about its normal `m`
    /// changes its area by `1/2 sum_j dx_j . ((x_(j+1) - x_(j-1)) x m)`,
    /// and `n . S` by `n . m` times that. A corner whose planes are close
    /// to dependent (`|det| < 1e-12`, a point where the gradient is not
    /// defined) adds nothing.
    pub fn area_gradient(&self, n: DVec3, about: DVec3) -> [DVec3; 2] {
        let j = self.area_jacobian(&self.faces(), about);
        [0, 1].map(|m| j[0][m] * n.x + j[1][m] * n.y + j[2][m] * n.z)
    }

    /// The pressed surface, the line of action of the volume's gradient and
    /// the area vector's whole gradient about it, from one listing of the
    /// overlap's faces; `None` when end1 has no surface inside end2.
    pub fn pressed_contact(&self) -> Option<PressedContact> {
        let faces = self.faces();
        let surface = pressed_of(&self.vertices, &faces, self.centroid);
        let area = surface.area_vector.length();
        if area.is_nan() || area <= 0.0 {
            return None;
        }
        let n = surface.area_vector / area;
        let location = self.centroid + n.cross(surface.moment / area);
        Some(PressedContact {
            surface,
            location,
            jacobian: self.area_jacobian(&faces, location),
        })
    }

    /// Row `k`: the gradient of the area vector's component `k` (see
    /// [`OverlapPolyhedron::area_gradient`], with `n` the axis `k`).
    fn area_jacobian(&self, faces: &[OverlapFace], about: DVec3) -> [[DVec3; 2]; 3] {
        let mut rows = [[DVec3::ZERO; 2]; 3];
        for f in faces {
            if f.end != End::End1 {
                continue;
            }
            let m = f.plane.normal;
            let ring = &f.corners;
            let k = ring.len();
            if k < 3 {
                continue;
            }
            let (s, _) = polygon_area_centroid(&self.vertices, ring);
            let turn = if s.dot(m) < 0.0 { -1.0 } else { 1.0 };
            // The gradient of this face's area.
            let (mut du, mut dw) = (DVec3::ZERO, DVec3::ZERO);
            for j in 0..k {
                let t = ring[j] as usize;
                let x = self.vertices[t];
                let (prev, next) = (
                    self.vertices[ring[(j + k - 1) % k] as usize],
                    self.vertices[ring[(j + 1) % k] as usize],
                );
                // What this corner's motion adds: r . dx.
                let r = (next - prev).cross(m) * (0.5 * turn);
                let tri = self.dual_triangles[t];
                let [ni, nj, nk] = tri.map(|p| self.planes[p as usize].normal);
                let det = ni.dot(nj.cross(nk));
                if det.abs() < 1e-12 || !det.is_finite() {
                    continue;
                }
                let cof = [nj.cross(nk), nk.cross(ni), ni.cross(nj)];
                for (c, &p) in cof.iter().zip(&tri) {
                    if (p as usize) < self.n_planes_a {
                        continue;
                    }
                    let mp = self.planes[p as usize].normal;
                    let g = r.dot(*c) / det;
                    du += mp * g;
                    dw += (x - about).cross(mp) * g;
                }
            }
            for (row, mk) in rows.iter_mut().zip(m.to_array()) {
                row[0] += mk * du;
                row[1] += mk * dw;
            }
        }
        rows
    }
}

/// End1's faces among `faces` (corners in `vertices`) as one area vector
/// and its moment about `about`.
fn pressed_of(vertices: &[DVec3], faces: &[OverlapFace], about: DVec3) -> PressedSurface {
    let mut out = PressedSurface::default();
    for f in faces {
        if f.end != End::End1 {
            continue;
        }
        let (s, c) = polygon_area_centroid(vertices, &f.corners);
        let sf = f.plane.normal * s.length();
        out.area_vector += sf;
        out.moment += (c - about).cross(sf);
    }
    out
}

/// The resultant of an elastic foundation spread over an overlap, per unit
/// stiffness.
///
/// The foundation stores `k * 2 * integral of d(x) over the overlap`, with
/// `d(x)` the distance from `x` to the nearest of the two surfaces that
/// press on each other: for two faces pressed flat by `h` that is
/// `k A h^2 / 2`, a bed of springs of stiffness `k` per unit area and unit
/// depth. A rigid motion of end2 changes it by minus `k` times
/// `force . u + moment(o) . w` (translation `u`, rotation `w` about `o`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Foundation {
    /// Force on end2 per unit stiffness [m^3]: `-2 sum_j m_j V_j` over the
    /// cells of end2's surfaces (see [`OverlapPolyhedron::foundation`]).
    pub force: DVec3,
    /// Moment on end2 about the point given, per unit stiffness [m^4]:
    /// `-2 sum_j (c_j - o) x m_j V_j`.
    pub moment: DVec3,
    /// The stored energy per unit stiffness, `2 sum_j V_j d_j(c_j)` over
    /// every cell [m^4]; computed only when asked for (else zero).
    pub energy: f64,
}

impl OverlapPolyhedron {
    /// The elastic foundation of this overlap (see [`Foundation`]), about
    /// the point `about`.
    ///
    /// `surface(end, plane)` says which bounding planes are surfaces that
    /// press (a facet swept into a prism presses with the facet's plane
    /// only; its sides and far end only bound the prism). The distance to
    /// the nearest surface is the least slack over the surface planes, so
    /// the overlap falls into one convex cell per surface plane, where
    /// that plane is the nearest: the cell of plane `j` (normal `m_j`,
    /// offset `e_j`) is the half-spaces `m_j . x <= e_j` and
    /// `(m_k - m_j) . x <= e_k - e_j` for every other surface plane `k`,
    /// with the overlap's other planes as they are; its volume `V_j` and
    /// centroid `c_j` come from the same half-space duality as the
    /// overlap's. A motion of end2 moves only its own planes, and moves
    /// the slack of a point in the cell of its plane `j` by `m_j . u`
    /// (translation) or `((x - o) x m_j) . w` (rotation), whence the sums.
    /// Cells whose face is too small to hold an interior point add
    /// nothing. With `energy` the cells of end1's planes are built too,
    /// for the stored energy.
    pub fn foundation(
        &self,
        about: DVec3,
        surface: impl Fn(End, &Plane) -> bool,
        energy: bool,
    ) -> Foundation {
        let mut out = Foundation::default();
        if self.thin || self.planes.is_empty() {
            return out;
        }
        let end_of = |i: usize| {
            if i < self.n_planes_a {
                End::End1
            } else {
                End::End2
            }
        };
        let is_surface: Vec<bool> = (0..self.planes.len())
            .map(|i| surface(end_of(i), &self.planes[i]))
            .collect();
        let faces = self.faces();
        // A plane that bounds the overlap only where it is a face; every
        // surface plane takes part in the distance, face or not.
        let mut on_overlap = vec![false; self.planes.len()];
        for f in &faces {
            let i = f.plane_index as usize
                + if f.end == End::End1 {
                    0
                } else {
                    self.n_planes_a
                };
            on_overlap[i] = true;
        }
        // With every plane a surface, the nearest surface is always one of
        // the overlap's faces: the others need not take part.
        let all_surfaces = is_surface.iter().all(|&x| x);
        let scale = self
            .vertices
            .iter()
            .map(|v| v.distance(self.centroid))
            .fold(0.0, f64::max);
        for f in &faces {
            if f.end == End::End1 && !energy {
                continue;
            }
            let j = f.plane_index as usize
                + if f.end == End::End1 {
                    0
                } else {
                    self.n_planes_a
                };
            if !is_surface[j] {
                continue;
            }
            let pj = self.planes[j];
            let mut cell = Vec::with_capacity(self.planes.len());
            cell.push(pj);
            for (k, pk) in self.planes.iter().enumerate() {
                if k == j {
                    continue;
                }
                if is_surface[k] && (on_overlap[k] || !all_surfaces) {
                    let d = pk.normal - pj.normal;
                    let len = d.length();
                    if len <= 1e-12 {
                        continue;
                    }
                    cell.push(Plane {
                        normal: d / len,
                        offset: (pk.offset - pj.offset) / len,
                    });
                } else if on_overlap[k] {
                    cell.push(*pk);
                }
            }
            // An interior point: just inside the face's centroid.
            let (_, c) = polygon_area_centroid(&self.vertices, &f.corners);
            let slack = |x: DVec3| min_slack(&cell[1..], x);
            let room = slack(c);
            if room.is_nan() || room <= 1e-9 * scale {
                continue;
            }
            let x0 = c - pj.normal * (0.25 * room);
            if min_slack(&cell, x0) <= 1e-12 * scale {
                continue;
            }
            let Ok(part) = dual_overlap(cell, 0, x0) else {
                continue;
            };
            if f.end == End::End2 {
                out.force -= 2.0 * part.volume * pj.normal;
                out.moment -= 2.0 * part.volume * (part.centroid - about).cross(pj.normal);
            }
            if energy {
                out.energy += 2.0 * part.volume * (pj.offset - pj.normal.dot(part.centroid));
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
    /// Margin of that point inside both blocks when it was stored [m].
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

fn min_slack(planes: &[Plane], x: DVec3) -> f64 {
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
fn dual_overlap(
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
