//! Support mappings of convex shapes.
//!
//! Reads: a shape and a direction. Writes: the point of the shape farthest
//! along that direction.
//! Invariant: `support_point(d)` maximises `x . d` over the shape for every
//! non-zero `d` (ties broken arbitrarily); the direction need not be unit
//! length. Every shape also names an interior point, used to seed searches.

use glam::{DQuat, DVec3};

use crate::polyhedron::ConvexPolyhedron;

/// A convex shape given by its support mapping.
///
/// Implement this for any convex shape (the sdk does for third-party shape
/// kinds); [`crate::gjk_distance`] and [`crate::epa_penetration`] then work
/// with it against every other shape.
pub trait SupportMap {
    /// A point of the shape farthest along `dir` (which need not be unit).
    fn support_point(&self, dir: DVec3) -> DVec3;
    /// A point inside the shape (the centroid for solids).
    fn interior_point(&self) -> DVec3;
}

impl<T: SupportMap + ?Sized> SupportMap for &T {
    #[inline]
    fn support_point(&self, dir: DVec3) -> DVec3 {
        (**self).support_point(dir)
    }
    #[inline]
    fn interior_point(&self) -> DVec3 {
        (**self).interior_point()
    }
}

impl SupportMap for ConvexPolyhedron {
    #[inline]
    fn support_point(&self, dir: DVec3) -> DVec3 {
        self.vertices()[self.support_vertex(dir)]
    }
    #[inline]
    fn interior_point(&self) -> DVec3 {
        self.centroid()
    }
}

/// A ball.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sphere {
    /// Centre (m).
    pub center: DVec3,
    /// Radius (m).
    pub radius: f64,
}

impl SupportMap for Sphere {
    #[inline]
    fn support_point(&self, dir: DVec3) -> DVec3 {
        self.center + dir.normalize_or_zero() * self.radius
    }
    #[inline]
    fn interior_point(&self) -> DVec3 {
        self.center
    }
}

/// A triangle (a wall facet), a flat convex shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Triangle {
    /// Corners (m).
    pub vertices: [DVec3; 3],
}

impl SupportMap for Triangle {
    #[inline]
    fn support_point(&self, dir: DVec3) -> DVec3 {
        let [a, b, c] = self.vertices;
        let (da, db, dc) = (a.dot(dir), b.dot(dir), c.dot(dir));
        if da >= db && da >= dc {
            a
        } else if db >= dc {
            b
        } else {
            c
        }
    }
    #[inline]
    fn interior_point(&self) -> DVec3 {
        (self.vertices[0] + self.vertices[1] + self.vertices[2]) / 3.0
    }
}

/// A shape placed by a rotation about its local origin and a translation,
/// without copying it.
#[derive(Debug, Clone, Copy)]
pub struct Posed<'a, S: ?Sized> {
    /// The shape in its local frame.
    pub shape: &'a S,
    /// Rotation applied first.
    pub rotation: DQuat,
    /// Translation applied second (m).
    pub translation: DVec3,
}

impl<S: SupportMap + ?Sized> SupportMap for Posed<'_, S> {
    #[inline]
    fn support_point(&self, dir: DVec3) -> DVec3 {
        let local = self.shape.support_point(self.rotation.inverse() * dir);
        self.rotation * local + self.translation
    }
    #[inline]
    fn interior_point(&self) -> DVec3 {
        self.rotation * self.shape.interior_point() + self.translation
    }
}

/// A point of the Minkowski difference `A - B` with its two witnesses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CsoPoint {
    /// `a - b`.
    pub w: DVec3,
    /// Support point of A.
    pub a: DVec3,
    /// Support point of B.
    pub b: DVec3,
}

/// Support point of `A - B` along `dir`.
#[inline]
pub(crate) fn cso_support<A: SupportMap + ?Sized, B: SupportMap + ?Sized>(
    a: &A,
    b: &B,
    dir: DVec3,
) -> CsoPoint {
    let pa = a.support_point(dir);
    let pb = b.support_point(-dir);
    CsoPoint {
        w: pa - pb,
        a: pa,
        b: pb,
    }
}
