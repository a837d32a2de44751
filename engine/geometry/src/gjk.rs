//! GJK distance between two convex shapes given by support mappings.
//!
//! Reads: two [`SupportMap`] shapes in the same (global) frame. Writes: the
//! distance and the witness points, or the overlap verdict with the final
//! simplex (which seeds EPA).
//! Invariant: `point_a` lies on A, `point_b` on B, `distance = |point_b -
//! point_a|`, and `normal = (point_b - point_a) / distance` points from A
//! (end1) to B (end2). The loop stops when the duality gap falls below the
//! tolerance, when a support point repeats, when the distance stops
//! decreasing, or at the iteration cap (a failure value).
//!
//! # References
//! Gilbert, Johnson and Keerthi (1988); van den Bergen (1999) for the
//! termination test; Ericson, *Real-Time Collision Detection* (2005) for the
//! closest point of a simplex.

use glam::DVec3;

use crate::error::GeometryError;
use crate::support::{cso_support, CsoPoint, SupportMap};

/// Options of [`gjk_distance_with`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GjkOptions {
    /// Iteration cap; default 128.
    pub max_iterations: u32,
    /// Relative tolerance on the distance; default 1e-13.
    pub relative_tolerance: f64,
    /// Tolerance relative to the shapes' size below which the shapes count
    /// as touching (overlapping); default 1e-14.
    pub touching_tolerance: f64,
}

impl Default for GjkOptions {
    fn default() -> Self {
        Self {
            max_iterations: 128,
            relative_tolerance: 1e-13,
            touching_tolerance: 1e-14,
        }
    }
}

/// Closest points of two separated shapes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Separation {
    /// Distance between the shapes (m) (positive gap).
    pub distance: f64,
    /// Closest point on A (m).
    pub point_a: DVec3,
    /// Closest point on B (m).
    pub point_b: DVec3,
    /// Unit vector from A to B.
    pub normal: DVec3,
}

/// Result of a GJK query.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[expect(
    clippy::large_enum_variant,
    reason = "the simplex stays inline so GJK never allocates"
)]
pub enum Proximity {
    /// The shapes are apart by more than the touching tolerance.
    Separated(Separation),
    /// The shapes overlap or touch; the simplex seeds EPA.
    Overlapping(Simplex),
}

/// The final GJK simplex (up to four points of the Minkowski difference).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Simplex {
    pub(crate) points: [CsoPoint; 4],
    pub(crate) len: usize,
}

impl Default for Simplex {
    fn default() -> Self {
        let zero = CsoPoint {
            w: DVec3::ZERO,
            a: DVec3::ZERO,
            b: DVec3::ZERO,
        };
        Self {
            points: [zero; 4],
            len: 0,
        }
    }
}

impl Simplex {
    /// Number of points (0 to 4).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the simplex is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The points in use.
    pub(crate) fn as_slice(&self) -> &[CsoPoint] {
        &self.points[..self.len]
    }

    fn push(&mut self, p: CsoPoint) {
        self.points[self.len] = p;
        self.len += 1;
    }
}

/// GJK distance with default options.
///
/// # Errors
/// [`GeometryError::NonFinite`] if a support point is not finite,
/// [`GeometryError::IterationCap`] if the loop does not converge.
pub fn gjk_distance<A, B>(a: &A, b: &B) -> Result<Proximity, GeometryError>
where
    A: SupportMap + ?Sized,
    B: SupportMap + ?Sized,
{
    gjk_distance_with(a, b, GjkOptions::default())
}

/// GJK distance with explicit options.
///
/// # Errors
/// As [`gjk_distance`].
pub fn gjk_distance_with<A, B>(
    a: &A,
    b: &B,
    options: GjkOptions,
) -> Result<Proximity, GeometryError>
where
    A: SupportMap + ?Sized,
    B: SupportMap + ?Sized,
{
    gjk_distance_from(a, b, DVec3::ZERO, options)
}

/// As [`gjk_distance_with`], started along `normal` (from A to B) instead of
/// the line between the shapes' interior points: the normal of the last
/// query between the same two shapes makes the usual warm start, where a
/// coherent pair converges in one or two support queries. A zero or
/// non-finite `normal` starts from the interior points.
///
/// # Errors
/// As [`gjk_distance`].
pub fn gjk_distance_from<A, B>(
    a: &A,
    b: &B,
    normal: DVec3,
    options: GjkOptions,
) -> Result<Proximity, GeometryError>
where
    A: SupportMap + ?Sized,
    B: SupportMap + ?Sized,
{
    let ca = a.interior_point();
    let cb = b.interior_point();
    if !ca.is_finite() || !cb.is_finite() {
        return Err(GeometryError::NonFinite);
    }
    // v estimates the point of A - B closest to the origin, against the
    // normal from A to B.
    let mut v = if normal != DVec3::ZERO && normal.is_finite() {
        -normal
    } else {
        ca - cb
    };
    if v == DVec3::ZERO {
        v = DVec3::X;
    }
    let mut simplex = Simplex::default();
    let mut weights = [0.0f64; 4];
    let mut scale = (ca - cb).length();
    let mut vv = f64::INFINITY;
    for _ in 0..options.max_iterations {
        let w = cso_support(a, b, -v);
        if !w.w.is_finite() {
            return Err(GeometryError::NonFinite);
        }
        scale = scale.max(w.w.length()).max(w.a.length()).max(w.b.length());
        let eps_abs = options.touching_tolerance * scale;
        if !simplex.is_empty() {
            let gap = vv - v.dot(w.w);
            let len = vv.sqrt();
            if gap <= options.relative_tolerance * vv + eps_abs * len
                || simplex.as_slice().iter().any(|p| p.w == w.w)
            {
                return Ok(separated(&simplex, &weights, v));
            }
        }
        let previous = (simplex, weights, v);
        simplex.push(w);
        match closest_on_simplex(&mut simplex, &mut weights) {
            None => return Ok(Proximity::Overlapping(simplex)),
            Some(nv) => {
                let nvv = nv.length_squared();
                if nvv.sqrt() <= eps_abs {
                    return Ok(Proximity::Overlapping(simplex));
                }
                if nvv >= vv {
                    // Rounding stalled the descent: the previous estimate
                    // is the best one.
                    let (s, wt, pv) = previous;
                    return Ok(separated(&s, &wt, pv));
                }
                v = nv;
                vv = nvv;
            }
        }
    }
    Err(GeometryError::IterationCap { stage: "gjk" })
}

fn separated(simplex: &Simplex, weights: &[f64; 4], v: DVec3) -> Proximity {
    let mut pa = DVec3::ZERO;
    let mut pb = DVec3::ZERO;
    for (p, &l) in simplex.as_slice().iter().zip(weights) {
        pa += p.a * l;
        pb += p.b * l;
    }
    let distance = v.length();
    Proximity::Separated(Separation {
        distance,
        point_a: pa,
        point_b: pb,
        normal: -v / distance,
    })
}

/// A sub-simplex: which points (indices) are kept, with their weights.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sub {
    pub keep: [usize; 3],
    pub weights: [f64; 3],
    pub len: usize,
}

impl Sub {
    fn one(i: usize) -> Self {
        Self {
            keep: [i, 0, 0],
            weights: [1.0, 0.0, 0.0],
            len: 1,
        }
    }
    fn two(i: usize, j: usize, t: f64) -> Self {
        Self {
            keep: [i, j, 0],
            weights: [1.0 - t, t, 0.0],
            len: 2,
        }
    }
}

/// Reduces `simplex` to the smallest sub-simplex containing the point closest
/// to the origin, writes its barycentric weights, and returns that point; or
/// `None` when the origin is inside the tetrahedron.
pub(crate) fn closest_on_simplex(simplex: &mut Simplex, weights: &mut [f64; 4]) -> Option<DVec3> {
    let p = &simplex.points;
    let (v, sub, map): (DVec3, Sub, [usize; 4]) = match simplex.len {
        1 => {
            weights[0] = 1.0;
            return Some(p[0].w);
        }
        2 => {
            let (v, s) = closest_segment(p[0].w, p[1].w);
            (v, s, [0, 1, 2, 3])
        }
        3 => {
            let (v, s) = closest_triangle(p[0].w, p[1].w, p[2].w);
            (v, s, [0, 1, 2, 3])
        }
        _ => {
            let faces = [[0usize, 1, 2, 3], [0, 2, 3, 1], [0, 3, 1, 2], [1, 3, 2, 0]];
            let mut best: Option<(f64, DVec3, Sub, [usize; 4])> = None;
            for f in faces {
                let (a, b, c, d) = (p[f[0]].w, p[f[1]].w, p[f[2]].w, p[f[3]].w);
                let n = (b - a).cross(c - a);
                let side_o = -a.dot(n);
                let side_d = (d - a).dot(n);
                if side_o * side_d > 0.0 {
                    continue;
                }
                let (v, s) = closest_triangle(a, b, c);
                let d2 = v.length_squared();
                if best.is_none_or(|bst| d2 < bst.0) {
                    best = Some((d2, v, s, f));
                }
            }
            let (_, v, s, f) = best?;
            (v, s, f)
        }
    };
    // The kept points move to the front in place, by swaps: copying the
    // whole simplex (four points of three vectors each) in and out per
    // iteration cost more than the rest of this function.
    let (mut at, mut held) = ([0usize, 1, 2, 3], [0usize, 1, 2, 3]);
    for k in 0..sub.len {
        let from = at[map[sub.keep[k]]];
        if from != k {
            simplex.points.swap(k, from);
            let (here, there) = (held[k], held[from]);
            held.swap(k, from);
            (at[here], at[there]) = (from, k);
        }
        weights[k] = sub.weights[k];
    }
    simplex.len = sub.len;
    Some(v)
}

/// Closest point of segment `ab` to the origin.
fn closest_segment(a: DVec3, b: DVec3) -> (DVec3, Sub) {
    let ab = b - a;
    let denom = ab.length_squared();
    let t = if denom > 0.0 { -a.dot(ab) / denom } else { 0.0 };
    if t <= 0.0 {
        (a, Sub::one(0))
    } else if t >= 1.0 {
        (b, Sub::one(1))
    } else {
        (a + ab * t, Sub::two(0, 1, t))
    }
}

/// Closest point of triangle `abc` to the origin (Voronoi regions).
pub(crate) fn closest_triangle(a: DVec3, b: DVec3, c: DVec3) -> (DVec3, Sub) {
    let ab = b - a;
    let ac = c - a;
    let d1 = -ab.dot(a);
    let d2 = -ac.dot(a);
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, Sub::one(0));
    }
    let d3 = -ab.dot(b);
    let d4 = -ac.dot(b);
    if d3 >= 0.0 && d4 <= d3 {
        return (b, Sub::one(1));
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let t = d1 / (d1 - d3);
        return (a + ab * t, Sub::two(0, 1, t));
    }
    let d5 = -ab.dot(c);
    let d6 = -ac.dot(c);
    if d6 >= 0.0 && d5 <= d6 {
        return (c, Sub::one(2));
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let t = d2 / (d2 - d6);
        return (a + ac * t, Sub::two(0, 2, t));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (b + (c - b) * t, Sub::two(1, 2, t));
    }
    // Inside the face: project along the normal, which is more accurate than
    // the barycentric combination when the origin is far from the plane.
    let n = ab.cross(ac);
    let nn = n.length_squared();
    if nn <= 0.0 || !nn.is_finite() {
        // Degenerate triangle: the best of its edges.
        let (v1, s1) = closest_segment(a, b);
        let (v2, s2) = closest_segment(a, c);
        let (v3, s3) = closest_segment(b, c);
        let remap = |s: Sub, m: [usize; 2]| Sub {
            keep: [m[s.keep[0]], m[s.keep[1].min(1)], 0],
            ..s
        };
        let mut best = (v1, remap(s1, [0, 1]));
        if v2.length_squared() < best.0.length_squared() {
            best = (v2, remap(s2, [0, 2]));
        }
        if v3.length_squared() < best.0.length_squared() {
            best = (v3, remap(s3, [1, 2]));
        }
        return best;
    }
    let v = n * (a.dot(n) / nn);
    let la = (b - v).cross(c - v).dot(n) / nn;
    let lb = (c - v).cross(a - v).dot(n) / nn;
    let lc = 1.0 - la - lb;
    (
        v,
        Sub {
            keep: [0, 1, 2],
            weights: [la, lb, lc],
            len: 3,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::Sphere;
    use crate::ConvexPolyhedron;

    #[test]
    fn spheres_apart() {
        let a = Sphere {
            center: DVec3::ZERO,
            radius: 1.0,
        };
        let b = Sphere {
            center: DVec3::new(3.0, 0.0, 0.0),
            radius: 0.5,
        };
        let Proximity::Separated(s) = gjk_distance(&a, &b).unwrap() else {
            panic!("expected separation")
        };
        assert!((s.distance - 1.5).abs() < 1e-6);
        assert!((s.normal - DVec3::X).length() < 1e-6);
    }

    #[test]
    fn boxes_face_to_face() {
        let a = ConvexPolyhedron::cuboid(DVec3::ONE).unwrap();
        let b = a.transformed(glam::DQuat::IDENTITY, DVec3::new(2.5, 0.3, -0.2));
        let Proximity::Separated(s) = gjk_distance(&a, &b).unwrap() else {
            panic!("expected separation")
        };
        assert!((s.distance - 0.5).abs() < 1e-14);
        assert!((s.point_b - s.point_a - DVec3::X * 0.5).length() < 1e-14);
        let c = a.transformed(glam::DQuat::IDENTITY, DVec3::new(1.5, 0.3, -0.2));
        assert!(matches!(
            gjk_distance(&a, &c).unwrap(),
            Proximity::Overlapping(_)
        ));
    }

    /// Any start direction, good or bad, gives the distance and the
    /// verdict of the cold start.
    #[test]
    fn a_warm_start_from_any_direction_agrees_with_the_cold_one() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let spec = crate::RandomBlock {
            semi_axes: DVec3::new(1.0, 0.7, 0.5),
            min_vertices: 8,
            max_vertices: 14,
            roughness: 0.3,
        };
        let a = crate::random_block(&spec, 1).unwrap();
        let b = crate::random_block(&spec, 2).unwrap();
        let unit = |rng: &mut rand_chacha::ChaCha8Rng| loop {
            let v = DVec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            if v.length_squared() > 1e-2 && v.length_squared() < 1.0 {
                return v.normalize();
            }
        };
        let mut apart = 0;
        for _ in 0..300 {
            let q = glam::DQuat::from_scaled_axis(unit(&mut rng) * 3.0);
            let t = unit(&mut rng) * rng.random_range(0.5..3.0);
            let b = crate::Posed {
                shape: &b,
                rotation: q,
                translation: t,
            };
            let cold = gjk_distance(&a, &b).unwrap();
            for start in [unit(&mut rng), -unit(&mut rng), DVec3::ZERO] {
                let warm = gjk_distance_from(&a, &b, start, GjkOptions::default()).unwrap();
                match (&cold, &warm) {
                    (Proximity::Separated(c), Proximity::Separated(w)) => {
                        assert!((c.distance - w.distance).abs() < 1e-10, "{c:?} {w:?}");
                        apart += 1;
                    }
                    (Proximity::Overlapping(_), Proximity::Overlapping(_)) => {}
                    _ => panic!("verdicts differ: {cold:?} {warm:?}"),
                }
            }
        }
        assert!(apart > 100, "{apart}");
    }
}
