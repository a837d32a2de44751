//! EPA: penetration depth and vector of two overlapping convex shapes.
//!
//! Reads: two [`SupportMap`] shapes that GJK found overlapping (and its final
//! simplex). Writes: a [`Penetration`].
//! Invariant: `normal` is a unit vector from A (end1) to B (end2);
//! translating B by `depth * normal` brings the shapes into touching contact;
//! `point_a - point_b = depth * normal`, with `point_a` the deepest point of A
//! (inside B) and `point_b` the deepest point of B (inside A).
//!
//! The polytope is expanded with the same incremental hull as
//! [`crate::hull`], so a new support point removes exactly the faces it sees
//! and the horizon is re-closed; the loop stops when the support along the
//! nearest face normal adds less than the tolerance, when the polytope can no
//! longer grow, or at the iteration cap (a failure value).
//!
//! # References
//! van den Bergen (1999, 2001), *Collision detection in interactive 3D
//! environments*.

use glam::DVec3;

use crate::error::GeometryError;
use crate::gjk::{gjk_distance_with, GjkOptions, Proximity, Simplex};
use crate::hull::{initial_simplex, IncrementalHull};
use crate::support::{cso_support, CsoPoint, SupportMap};

/// Options of [`epa_penetration_with`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpaOptions {
    /// Iteration cap (support queries after the initial polytope); default 256.
    pub max_iterations: u32,
    /// Tolerance on the depth relative to the shapes' size; default 1e-12.
    pub relative_tolerance: f64,
}

impl Default for EpaOptions {
    fn default() -> Self {
        Self {
            max_iterations: 256,
            relative_tolerance: 1e-12,
        }
    }
}

/// Penetration of two overlapping shapes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Penetration {
    /// Penetration depth (m) (the gap is `-depth`); may be a few rounding
    /// errors below zero for touching shapes.
    pub depth: f64,
    /// Unit vector from A to B: the direction to move B to separate them.
    pub normal: DVec3,
    /// Deepest point of A (inside B) (m).
    pub point_a: DVec3,
    /// Deepest point of B (inside A) (m).
    pub point_b: DVec3,
}

/// Penetration of two shapes with default options; runs GJK first.
///
/// # Errors
/// [`GeometryError::NotOverlapping`] when GJK finds the shapes apart, the GJK
/// errors, [`GeometryError::Coplanar`] when the Minkowski difference is flat
/// (two flat shapes), [`GeometryError::IterationCap`].
pub fn epa_penetration<A, B>(a: &A, b: &B) -> Result<Penetration, GeometryError>
where
    A: SupportMap + ?Sized,
    B: SupportMap + ?Sized,
{
    epa_penetration_with(a, b, EpaOptions::default())
}

/// As [`epa_penetration`] with explicit options.
///
/// # Errors
/// As [`epa_penetration`].
pub fn epa_penetration_with<A, B>(
    a: &A,
    b: &B,
    options: EpaOptions,
) -> Result<Penetration, GeometryError>
where
    A: SupportMap + ?Sized,
    B: SupportMap + ?Sized,
{
    match gjk_distance_with(a, b, GjkOptions::default())? {
        Proximity::Separated(_) => Err(GeometryError::NotOverlapping),
        Proximity::Overlapping(simplex) => epa_from_simplex(a, b, &simplex, options),
    }
}

/// EPA seeded with a GJK simplex (which may hold 0 to 4 points).
///
/// # Errors
/// As [`epa_penetration`], except that no overlap test is made.
pub fn epa_from_simplex<A, B>(
    a: &A,
    b: &B,
    simplex: &Simplex,
    options: EpaOptions,
) -> Result<Penetration, GeometryError>
where
    A: SupportMap + ?Sized,
    B: SupportMap + ?Sized,
{
    // Initial polytope: the GJK tetrahedron when it is well shaped (the
    // usual case for overlapping shapes); otherwise the GJK simplex plus
    // supports along the axes and the cube diagonals, so that it has volume
    // even when GJK stopped on a face, an edge or a vertex.
    let mut cso: Vec<CsoPoint> = simplex.as_slice().to_vec();
    let well_shaped = cso.len() == 4 && {
        let p: Vec<DVec3> = cso.iter().map(|c| c.w).collect();
        let edge = (1..4).map(|i| (p[i] - p[0]).length()).fold(0.0, f64::max);
        let det = (p[1] - p[0]).dot((p[2] - p[0]).cross(p[3] - p[0]));
        det.abs() > 1e-3 * edge.powi(3)
    };
    if !well_shaped {
        for d in initial_directions() {
            cso.push(cso_support(a, b, d));
        }
    }
    if cso.iter().any(|p| !p.w.is_finite()) {
        return Err(GeometryError::NonFinite);
    }
    let scale = cso
        .iter()
        .map(|p| p.w.length().max(p.a.length()).max(p.b.length()))
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let tol = options.relative_tolerance * scale;
    let points: Vec<DVec3> = cso.iter().map(|p| p.w).collect();
    let seed = initial_simplex(&points, tol * 1e-3)?;
    let mut hull = IncrementalHull::from_tetrahedron(points, seed, tol * 1e-3);
    for i in 0..cso.len() {
        if seed.contains(&i) {
            continue;
        }
        let p = hull.points[i];
        if let Some(f) = hull.farthest_face_above(p, 0..hull.faces.len()) {
            // Failure leaves the hull unchanged; the point is then interior
            // to within rounding.
            let _ = hull.insert(i, f);
            hull.orphans.clear();
        }
    }

    for _ in 0..options.max_iterations {
        let (f, n, offset) = nearest_face(&hull).ok_or(GeometryError::Coplanar)?;
        let w = cso_support(a, b, n);
        if !w.w.is_finite() {
            return Err(GeometryError::NonFinite);
        }
        let gap = n.dot(w.w) - offset;
        // A support point already in the polytope means the face normal is
        // as good as rounding allows (a sliver face can show a spurious gap).
        if gap <= tol || cso.iter().any(|p| p.a == w.a && p.b == w.b) {
            return Ok(finish(&hull, &cso, f));
        }
        cso.push(w);
        hull.points.push(w.w);
        let eye = hull.points.len() - 1;
        if hull.insert(eye, f).is_err() {
            return Ok(finish(&hull, &cso, f));
        }
        hull.orphans.clear();
    }
    Err(GeometryError::IterationCap { stage: "epa" })
}

fn initial_directions() -> [DVec3; 14] {
    let mut d = [DVec3::ZERO; 14];
    d[0] = DVec3::X;
    d[1] = -DVec3::X;
    d[2] = DVec3::Y;
    d[3] = -DVec3::Y;
    d[4] = DVec3::Z;
    d[5] = -DVec3::Z;
    let mut k = 6;
    for sx in [-1.0, 1.0] {
        for sy in [-1.0, 1.0] {
            for sz in [-1.0, 1.0] {
                d[k] = DVec3::new(sx, sy, sz);
                k += 1;
            }
        }
    }
    d
}

/// The live face whose plane is nearest the origin.
fn nearest_face(hull: &IncrementalHull) -> Option<(usize, DVec3, f64)> {
    let mut best: Option<(usize, DVec3, f64)> = None;
    for (i, f) in hull.faces.iter().enumerate() {
        if !f.alive || f.normal == DVec3::ZERO {
            continue;
        }
        if best.is_none_or(|b| f.offset < b.2) {
            best = Some((i, f.normal, f.offset));
        }
    }
    best
}

fn finish(hull: &IncrementalHull, cso: &[CsoPoint], f: usize) -> Penetration {
    let face = &hull.faces[f];
    let n = face.normal;
    let depth = face.offset;
    let [i, j, k] = face.v;
    let (a, b, c) = (cso[i].w, cso[j].w, cso[k].w);
    let p = n * depth;
    let area = (b - a).cross(c - a).dot(n);
    let (la, lb) = if area.abs() > 0.0 {
        (
            (b - p).cross(c - p).dot(n) / area,
            (c - p).cross(a - p).dot(n) / area,
        )
    } else {
        (1.0, 0.0)
    };
    let lc = 1.0 - la - lb;
    let point_a = cso[i].a * la + cso[j].a * lb + cso[k].a * lc;
    let point_b = cso[i].b * la + cso[j].b * lb + cso[k].b * lc;
    Penetration {
        depth,
        normal: n,
        point_a,
        point_b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ConvexPolyhedron;
    use glam::DQuat;

    #[test]
    fn boxes_overlapping_along_x() {
        let a = ConvexPolyhedron::cuboid(DVec3::ONE).unwrap();
        let b = a.transformed(DQuat::IDENTITY, DVec3::new(1.75, 0.3, -0.2));
        let p = epa_penetration(&a, &b).unwrap();
        assert!((p.depth - 0.25).abs() < 1e-12);
        assert!((p.normal - DVec3::X).length() < 1e-12);
        assert!((p.point_a - p.point_b - p.normal * p.depth).length() < 1e-12);
    }

    #[test]
    fn identical_boxes() {
        let a = ConvexPolyhedron::cuboid(DVec3::new(1.0, 2.0, 3.0)).unwrap();
        let p = epa_penetration(&a, &a).unwrap();
        assert!((p.depth - 2.0).abs() < 1e-12);
    }
}
