//! Rounded blocks (erode/dilate) and facets extruded into blocks.
//!
//! Reads: a [`ConvexPolyhedron`] and a rounding radius, or a wall facet and
//! an extrusion direction. Writes: a [`RoundedPolyhedron`] (core block plus
//! radius: the Minkowski sum with a ball) or an extruded block.
//! Invariant: a rounded block's surface is at exactly `radius` from its
//! core; `erode` keeps every bounding plane's normal and moves it inwards by
//! the radius, so `eroded(p, r)` has the same faces as `p` with rounded edges
//! and corners.

use glam::DVec3;

use crate::epa::epa_penetration;
use crate::error::GeometryError;
use crate::gjk::{gjk_distance, Proximity};
use crate::polyhedron::{ConvexPolyhedron, Plane};
use crate::support::{SupportMap, Triangle};

/// A convex block with rounded edges and corners: `core ⊕ ball(radius)`.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundedPolyhedron {
    /// The sharp core block.
    pub core: ConvexPolyhedron,
    /// Rounding radius [m].
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
    /// Gap between the rounded surfaces [m]; negative means overlap.
    pub gap: f64,
    /// Unit normal from A to B.
    pub normal: DVec3,
    /// Point of A's rounded surface nearest B (deepest in B) [m].
    pub point_a: DVec3,
    /// Point of B's rounded surface nearest A [m].
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
    ConvexPolyhedron::from_points(&[a, b, c, a + off, b + off, c + off])
}

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
    fn extruded_facet_volume() {
        let t = Triangle {
            vertices: [DVec3::ZERO, DVec3::X, DVec3::Y],
        };
        let p = extrude_facet_away_from(&t, DVec3::new(0.2, 0.2, 1.0), 2.0).unwrap();
        assert!((p.volume() - 1.0).abs() < 1e-12);
        assert!(p.centroid().z < 0.0);
    }
}
