//! Signed distance of two convex shapes given only by their support maps,
//! apart or overlapping, for shapes whose surfaces may be curved.
//!
//! Reads: two support maps and a normal to start from. Writes: the gap
//! (negative when they overlap), the normal and the two witness points.
//!
//! # Method
//! For a unit direction `n` (from A to B) the shapes are apart along `n`
//! by `g(n) = min_B y.n - max_A x.n = -(h_A(n) + h_B(-n))`, with `h` the
//! support function. The signed distance is the largest `g` over all
//! directions: the distance when the shapes are apart (what GJK finds),
//! minus the penetration depth when they overlap. EPA finds the latter by
//! refining a polytope of the Minkowski difference, which on a curved
//! surface takes hundreds of support queries and leaves the normal with
//! an error of the square root of its tolerance.
//!
//! Here an overlapping pair is made an apart one instead: B moved along
//! the current normal `m` by a distance `s` a little above its overlap
//! along `m` no longer meets A, and GJK then finds the normal `n` of the
//! moved pair. The best direction `n*` is a fixed point of this map (B
//! moved along `n*` is apart along `n*` with the same witness points), and
//! near it the map shrinks the error of `m` by about `s / (s + R)`, with `R`
//! the sum of the surfaces' radii of curvature there: a contact much
//! shallower than its shapes are round converges in two or three GJK
//! queries, one when started from the last step's normal. The gap is then
//! `g(n)` from the support points along `n`, whose error is of the second
//! order in the normal's.

use glam::DVec3;

use crate::error::GeometryError;
use crate::gjk::{gjk_distance_from, GjkOptions, Proximity};
use crate::support::SupportMap;

/// The contact of two convex shapes found by [`signed_distance`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignedContact {
    /// Signed distance (m): the gap when apart, minus the penetration
    /// depth when overlapping.
    pub gap: f64,
    /// Unit normal from A to B.
    pub normal: DVec3,
    /// The point of A furthest along the normal (m).
    pub point_a: DVec3,
    /// The point of B furthest against the normal (m).
    pub point_b: DVec3,
}

/// Options of [`signed_distance`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignedOptions {
    /// The most GJK queries on moved pairs; default 64.
    pub max_moves: u32,
    /// The change of the normal (its length) below which the moved pair's
    /// normal counts as fixed; default 1e-9. GJK's normal between curved
    /// surfaces is good to about the square root of its relative
    /// tolerance, so a smaller value rarely settles there (the contact
    /// along the last normal is then returned).
    pub normal_tolerance: f64,
    /// Options of every GJK query.
    pub gjk: GjkOptions,
}

impl Default for SignedOptions {
    fn default() -> Self {
        Self {
            max_moves: 64,
            normal_tolerance: 1e-9,
            gjk: GjkOptions::default(),
        }
    }
}

/// A shape moved by a translation.
struct Moved<'a, S: ?Sized> {
    shape: &'a S,
    by: DVec3,
}

impl<S: SupportMap + ?Sized> SupportMap for Moved<'_, S> {
    #[inline]
    fn support_point(&self, dir: DVec3) -> DVec3 {
        self.shape.support_point(dir) + self.by
    }
    #[inline]
    fn interior_point(&self) -> DVec3 {
        self.shape.interior_point() + self.by
    }
}

/// The contact of `a` and `b` along `n`: the gap `g(n)` from their support
/// points.
#[inline]
fn along<A, B>(a: &A, b: &B, n: DVec3) -> SignedContact
where
    A: SupportMap + ?Sized,
    B: SupportMap + ?Sized,
{
    let pa = a.support_point(n);
    let pb = b.support_point(-n);
    SignedContact {
        gap: (pb - pa).dot(n),
        normal: n,
        point_a: pa,
        point_b: pb,
    }
}

/// The signed distance of `a` and `b` (see the module docs), started from
/// `hint`, a normal from A to B (the last one found for the pair); a zero
/// or non-finite hint starts from the line between the interior points.
/// Overlapping pairs converge to the best direction nearest the start;
/// a normal that has not settled after [`SignedOptions::max_moves`] moves
/// gives the contact along the last one (its gap a lower bound).
///
/// # Errors
/// [`GeometryError::NonFinite`] for a support point that is not finite,
/// GJK's errors.
pub fn signed_distance<A, B>(
    a: &A,
    b: &B,
    hint: DVec3,
    options: SignedOptions,
) -> Result<SignedContact, GeometryError>
where
    A: SupportMap + ?Sized,
    B: SupportMap + ?Sized,
{
    let hint = hint.normalize_or_zero();
    match gjk_distance_from(a, b, hint, options.gjk)? {
        Proximity::Separated(s) => {
            return Ok(SignedContact {
                gap: s.distance,
                normal: s.normal,
                point_a: s.point_a,
                point_b: s.point_b,
            })
        }
        Proximity::Overlapping(_) => {}
    }
    let (ca, cb) = (a.interior_point(), b.interior_point());
    let mut m = if hint != DVec3::ZERO {
        hint
    } else {
        (cb - ca).try_normalize().unwrap_or(DVec3::Z)
    };
    let mut c = along(a, b, m);
    for _ in 0..options.max_moves {
        if !c.gap.is_finite() || !c.point_a.is_finite() || !c.point_b.is_finite() {
            return Err(GeometryError::NonFinite);
        }
        let size = (c.point_a - ca).length() + (c.point_b - cb).length();
        // Half the overlap again, and a little more for touching pairs,
        // keeps the moved pair clearly apart.
        let s = (-1.5 * c.gap).max(0.0) + 1e-9 * size;
        let moved = Moved {
            shape: b,
            by: s * m,
        };
        match gjk_distance_from(a, &moved, m, options.gjk)? {
            Proximity::Separated(sep) => {
                let n = sep.normal;
                let settled = (n - m).length() <= options.normal_tolerance;
                m = n;
                c = along(a, b, m);
                if settled {
                    return Ok(c);
                }
            }
            // Rounding at a grazing touch: the pair along `m` is what
            // there is.
            Proximity::Overlapping(_) => return Ok(c),
        }
    }
    Ok(c)
}

/// Two unit vectors orthogonal to `m` and to each other.
#[inline]
fn tangents(m: DVec3) -> (DVec3, DVec3) {
    let e1 = m.any_orthonormal_vector();
    (e1, m.cross(e1))
}

/// The gradient of `g` on the sphere at `n`, in the tangent basis
/// `(e1, e2)` of the point `m` the step starts from, `scale` being
/// `|m + u|` for `n = (m + u) / |m + u|`.
#[inline]
fn gradient(c: &SignedContact, (e1, e2): (DVec3, DVec3), scale: f64) -> [f64; 2] {
    let w = c.point_b - c.point_a;
    let t = (w - w.dot(c.normal) * c.normal) / scale;
    [t.dot(e1), t.dot(e2)]
}

/// The signed distance of two smooth, strictly convex shapes (see the
/// module docs) by Newton's method on `g` over the unit sphere, the
/// Hessian from differences of the gradient (the support points along
/// two nearby directions): quadratic convergence, three support queries
/// per shape and step, a handful of steps from a fresh start and one or
/// two from the last step's normal. Exact to rounding where
/// [`signed_distance`] stops at GJK's accuracy.
///
/// # Errors
/// [`GeometryError::NonFinite`] for a support point that is not finite;
/// [`GeometryError::IterationCap`] when the steps do not converge in
/// `max_steps`, as on a shape with flat faces or edges, whose support
/// function has kinks (use [`signed_distance`] then).
pub fn smooth_signed_distance<A, B>(
    a: &A,
    b: &B,
    hint: DVec3,
    max_steps: u32,
) -> Result<SignedContact, GeometryError>
where
    A: SupportMap + ?Sized,
    B: SupportMap + ?Sized,
{
    let (ca, cb) = (a.interior_point(), b.interior_point());
    let mut m = hint
        .try_normalize()
        .or_else(|| (cb - ca).try_normalize())
        .unwrap_or(DVec3::Z);
    let mut c = along(a, b, m);
    let size = (c.point_a - ca).length() + (c.point_b - cb).length();
    if !c.gap.is_finite() || !size.is_finite() {
        return Err(GeometryError::NonFinite);
    }
    const H: f64 = 1e-6;
    for _ in 0..max_steps {
        let basis = tangents(m);
        let g0 = gradient(&c, basis, 1.0);
        if g0[0].hypot(g0[1]) <= 1e-14 * size {
            return Ok(c);
        }
        // The Hessian, column by column, from the gradient at m + H e_j.
        let mut hess = [[0.0; 2]; 2];
        for (j, e) in [basis.0, basis.1].into_iter().enumerate() {
            let v = m + H * e;
            let len = v.length();
            let cj = along(a, b, v / len);
            let gj = gradient(&cj, basis, len);
            hess[0][j] = (gj[0] - g0[0]) / H;
            hess[1][j] = (gj[1] - g0[1]) / H;
        }
        let off = 0.5 * (hess[0][1] + hess[1][0]);
        let (h00, h11) = (hess[0][0], hess[1][1]);
        let det = h00 * h11 - off * off;
        // Near a maximum the Hessian is negative definite; away from it
        // (a deep overlap started far off) the step climbs the gradient
        // instead, scaled by the size of the pair. A kink or a flat face
        // keeps failing the test and runs out of steps.
        let (u0, u1) = if h00 < 0.0 && det > 0.0 {
            (
                -(h11 * g0[0] - off * g0[1]) / det,
                -(h00 * g0[1] - off * g0[0]) / det,
            )
        } else {
            (g0[0] / size, g0[1] / size)
        };
        let step = u0.hypot(u1);
        let mut k = if step > 0.5 { 0.5 / step } else { 1.0 };
        // Backtracking: a step that does not raise `g` is halved (near a
        // flat face the curvature changes fast and a full step
        // overshoots); one too short to matter ends the search there.
        let cn = loop {
            let next = (m + k * (u0 * basis.0 + u1 * basis.1)).normalize();
            let cn = along(a, b, next);
            if !cn.gap.is_finite() || !cn.point_a.is_finite() || !cn.point_b.is_finite() {
                return Err(GeometryError::NonFinite);
            }
            if cn.gap >= c.gap - 1e-15 * size {
                break Some(cn);
            }
            k *= 0.5;
            if k * step <= 1e-13 {
                break None;
            }
        };
        let Some(cn) = cn else {
            return Ok(c);
        };
        m = cn.normal;
        c = cn;
        if k * step <= 1e-13 {
            return Ok(c);
        }
    }
    Err(GeometryError::IterationCap {
        stage: "smooth signed distance",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::Sphere;

    fn ball(c: DVec3, r: f64) -> Sphere {
        Sphere {
            center: c,
            radius: r,
        }
    }

    #[test]
    fn two_balls_apart_and_overlapping_match_the_closed_form() {
        let a = ball(DVec3::new(0.1, -0.2, 0.3), 1.0);
        for (d, r) in [(2.5, 0.7), (1.6, 0.7), (1.2, 0.5), (1.69, 0.7)] {
            let dir = DVec3::new(0.3, -0.5, 0.8).normalize();
            let b = ball(a.center + d * dir, r);
            for hint in [DVec3::ZERO, DVec3::X, dir] {
                let c = signed_distance(&a, &b, hint, SignedOptions::default()).unwrap();
                let gap = d - 1.0 - r;
                assert!((c.gap - gap).abs() < 1e-12, "{} vs {gap}", c.gap);
                // GJK's normal between curved surfaces: about the square
                // root of its tolerance.
                assert!((c.normal - dir).length() < 1e-6, "{:?}", c.normal);
                assert!((c.point_a - (a.center + dir)).length() < 1e-6);
                let c = smooth_signed_distance(&a, &b, hint, 32).unwrap();
                assert!((c.gap - gap).abs() < 1e-13, "{} vs {gap}", c.gap);
                assert!((c.normal - dir).length() < 1e-12, "{:?}", c.normal);
            }
        }
    }
}
