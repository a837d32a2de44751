//! The gradients of an overlap under a rigid motion of one block: end1's
//! pressed surface (the overlap volume's gradient), the contact area's
//! gradient, and the elastic foundation's resultant.
//!
//! Reads: an [`OverlapPolyhedron`] (its faces, corners and the three planes
//! of each corner). Writes: [`PressedSurface`], [`PressedContact`],
//! [`Foundation`]. Invariant: every gradient is that of a function of the
//! two blocks' relative pose, checked against central differences in
//! `tests/pressed_surface.rs`.

use glam::DVec3;

use crate::area_moments::AreaMoments;
use crate::overlap::{dual_overlap, min_slack, End, OverlapFace, OverlapPolyhedron};
use crate::polyhedron::Plane;

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
    /// normal, `S` (m^2).
    pub area_vector: DVec3,
    /// Sum over the same faces of `(c_f - o) x n_f A_f`, with `c_f` the
    /// face's centroid, about the point `o` given (m^3).
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
    /// The pressed surface's moments along `n` (see
    /// [`OverlapPolyhedron::pressed_moments`]).
    pub moments: AreaMoments,
    /// The point of the line of action nearest the centroid `c`:
    /// `c + n x M(c) / |S|`, `n = S / |S|` (m).
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

    /// The moments of end1's pressed surface seen along `n` (a unit
    /// vector), each face's area counted `n . m` times (`m` its outward
    /// normal), or not at all where that is negative: the surface as it
    /// projects on a plane normal to `n`. For two faces pressed flat that
    /// is the face of end1 inside end2; the strips of end1's sides inside
    /// end2 count little or nothing.
    pub fn pressed_moments(&self, n: DVec3) -> AreaMoments {
        moments_of(&self.vertices, &self.faces(), n)
    }

    /// [`Self::pressed_surface`] about `about` and [`Self::pressed_moments`]
    /// along its direction (zero moments when its area is not positive),
    /// from one listing of the faces.
    pub fn pressed_with_moments(&self, about: DVec3) -> (PressedSurface, AreaMoments) {
        let faces = self.faces();
        let surface = pressed_of(&self.vertices, &faces, about);
        let area = surface.area_vector.length();
        let moments = if area > 0.0 {
            moments_of(&self.vertices, &faces, surface.area_vector / area)
        } else {
            AreaMoments::default()
        };
        (surface, moments)
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
            moments: moments_of(&self.vertices, &faces, n),
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

/// The moments of end1's faces among `faces` seen along `n` (see
/// [`OverlapPolyhedron::pressed_moments`]).
fn moments_of(vertices: &[DVec3], faces: &[OverlapFace], n: DVec3) -> AreaMoments {
    let mut out = AreaMoments::default();
    for f in faces {
        let w = f.plane.normal.dot(n);
        if f.end != End::End1 || w <= 0.0 || f.corners.len() < 3 {
            continue;
        }
        out.add_polygon(f.corners.iter().map(|&c| vertices[c as usize]), w);
    }
    out
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
    /// Force on end2 per unit stiffness (m^3): `-2 sum_j m_j V_j` over the
    /// cells of end2's surfaces (see [`OverlapPolyhedron::foundation`]).
    pub force: DVec3,
    /// Moment on end2 about the point given, per unit stiffness (m^4):
    /// `-2 sum_j (c_j - o) x m_j V_j`.
    pub moment: DVec3,
    /// The stored energy per unit stiffness, `2 sum_j V_j d_j(c_j)` over
    /// every cell (m^4); computed only when asked for (else zero).
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
