//! Ball–polyhedron closest point by surface traversal (shortest link).
//!
//! Reads: a [`ConvexPolyhedron`], a query point (a ball centre) and a
//! per-contact [`FacetCache`] holding the facet where the previous search
//! ended. Writes: the closest surface point, its feature and the updated
//! cache.
//! Invariant: for a query outside the block the result is the unique
//! closest surface point; for a query inside, it is the projection on the
//! nearest bounding plane and the signed distance is negative. Each
//! traversal step strictly decreases the distance, so the walk ends; its
//! end is certified by the normal-cone test, and a failed certificate (or
//! the step cap) falls back to a full scan, which the cache counts.
//!
//! # References
//! Nezami et al. (2006), the shortest link method.

use glam::DVec3;

use crate::gjk::closest_triangle;
use crate::polyhedron::ConvexPolyhedron;
use crate::support::Sphere;

/// The surface feature that holds a closest point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SurfaceFeature {
    /// The interior of a facet.
    Facet(u32),
    /// The interior of the edge between two vertices.
    Edge(u32, u32),
    /// A vertex.
    Vertex(u32),
}

/// Closest point on a polyhedron surface.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SurfacePoint {
    /// The surface point (m).
    pub point: DVec3,
    /// A facet containing `point` (the next search starts here).
    pub facet: u32,
    /// The feature holding `point`.
    pub feature: SurfaceFeature,
    /// Distance from the query to the surface, negative inside (m).
    pub signed_distance: f64,
    /// Outward unit normal of the surface at `point` seen from the query:
    /// `(query - point) / distance` outside, the nearest plane's normal
    /// inside.
    pub normal: DVec3,
}

/// Per-contact traversal cache with counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FacetCache {
    /// Facet where the last search ended.
    pub facet: u32,
    /// Searches that ended on their start facet.
    pub hits: u64,
    /// Searches that moved to another facet.
    pub misses: u64,
    /// Searches that needed the full scan (query inside, or failed
    /// certificate).
    pub fallbacks: u64,
}

impl FacetCache {
    /// Fraction of searches that ended where they started.
    pub fn hit_rate(&self) -> f64 {
        let n = self.hits + self.misses + self.fallbacks;
        if n == 0 {
            0.0
        } else {
            self.hits as f64 / n as f64
        }
    }
}

/// Closest point of facet `f` to `q`, with its feature.
fn facet_closest(poly: &ConvexPolyhedron, f: u32, q: DVec3) -> (DVec3, SurfaceFeature, f64) {
    let t = poly.facets()[f as usize];
    let (a, b, c) = poly.triangle(&t);
    let (v, sub) = closest_triangle(a - q, b - q, c - q);
    let keep = sub.keep;
    let feature = match sub.len {
        1 => SurfaceFeature::Vertex(t[keep[0]]),
        2 => SurfaceFeature::Edge(t[keep[0]], t[keep[1]]),
        _ => SurfaceFeature::Facet(f),
    };
    (v + q, feature, v.length_squared())
}

/// Closest surface point of `poly` to `query`, walking from the cached facet.
pub fn closest_surface_point(
    poly: &ConvexPolyhedron,
    query: DVec3,
    cache: &mut FacetCache,
) -> SurfacePoint {
    let n_f = poly.facets().len() as u32;
    let start = if cache.facet < n_f { cache.facet } else { 0 };
    let mut f = start;
    let (mut p, mut feature, mut d2) = facet_closest(poly, f, query);
    let mut certified = false;
    for _ in 0..n_f {
        // Candidate facets: those touching the current feature.
        let mut best: Option<(u32, DVec3, SurfaceFeature, f64)> = None;
        let mut consider = |g: u32| {
            if g == f {
                return;
            }
            let (pg, fg, dg) = facet_closest(poly, g, query);
            if dg < d2 * (1.0 - 1e-12) && best.is_none_or(|b| dg < b.3) {
                best = Some((g, pg, fg, dg));
            }
        };
        match feature {
            SurfaceFeature::Facet(_) => {
                if poly.facet_planes()[f as usize].signed_distance(query) >= 0.0 {
                    certified = true;
                    break;
                }
                for &g in &poly.facet_neighbors()[f as usize] {
                    consider(g);
                }
            }
            SurfaceFeature::Edge(u, v) => {
                for &g in poly.vertex_facets(u as usize) {
                    consider(g);
                }
                for &g in poly.vertex_facets(v as usize) {
                    consider(g);
                }
            }
            SurfaceFeature::Vertex(u) => {
                for &g in poly.vertex_facets(u as usize) {
                    consider(g);
                }
            }
        }
        match best {
            Some((g, pg, fg, dg)) => {
                (f, p, feature, d2) = (g, pg, fg, dg);
            }
            None => {
                certified = match feature {
                    SurfaceFeature::Facet(_) => false,
                    SurfaceFeature::Edge(u, v) => normal_cone_holds(poly, query, p, &[u, v]),
                    SurfaceFeature::Vertex(u) => normal_cone_holds(poly, query, p, &[u]),
                };
                break;
            }
        }
    }
    if certified {
        if f == start {
            cache.hits += 1;
        } else {
            cache.misses += 1;
        }
        cache.facet = f;
        let d = d2.sqrt();
        let normal = if d > 0.0 {
            (query - p) / d
        } else {
            poly.facet_planes()[f as usize].normal
        };
        return SurfacePoint {
            point: p,
            facet: f,
            feature,
            signed_distance: d,
            normal,
        };
    }
    cache.fallbacks += 1;
    let sp = closest_surface_point_scan(poly, query);
    cache.facet = sp.facet;
    sp
}

/// Whether `query - p` lies in the normal cone of the feature with vertices
/// `feature` (p is then the global closest point of an outside query).
fn normal_cone_holds(poly: &ConvexPolyhedron, query: DVec3, p: DVec3, feature: &[u32]) -> bool {
    let d = query - p;
    let scale = poly.bounding_radius().max(f64::MIN_POSITIVE);
    let tol = 1e-12 * scale * d.length();
    feature.iter().all(|&u| {
        poly.vertex_neighbors(u as usize)
            .iter()
            .all(|&w| d.dot(poly.vertices()[w as usize] - p) <= tol)
    })
}

/// Closest surface point by scanning every facet (reference path).
pub fn closest_surface_point_scan(poly: &ConvexPolyhedron, query: DVec3) -> SurfacePoint {
    // Inside: project on the nearest bounding plane.
    let mut nearest = (f64::NEG_INFINITY, 0usize);
    for (f, pl) in poly.facet_planes().iter().enumerate() {
        let s = pl.signed_distance(query);
        if s > nearest.0 {
            nearest = (s, f);
        }
    }
    if nearest.0 <= 0.0 {
        let (s, f) = nearest;
        let n = poly.facet_planes()[f].normal;
        return SurfacePoint {
            point: query - n * s,
            facet: f as u32,
            feature: SurfaceFeature::Facet(f as u32),
            signed_distance: s,
            normal: n,
        };
    }
    let mut best = (f64::INFINITY, 0u32, DVec3::ZERO, SurfaceFeature::Facet(0));
    for f in 0..poly.facets().len() as u32 {
        let (p, feat, d2) = facet_closest(poly, f, query);
        if d2 < best.0 {
            best = (d2, f, p, feat);
        }
    }
    let (d2, f, p, feature) = best;
    let d = d2.sqrt();
    SurfacePoint {
        point: p,
        facet: f,
        feature,
        signed_distance: d,
        normal: if d > 0.0 {
            (query - p) / d
        } else {
            poly.facet_planes()[f as usize].normal
        },
    }
}

/// Contact between a ball (end1) and a rigid block (end2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BallBlockContact {
    /// Gap (m); negative means overlap.
    pub gap: f64,
    /// Unit normal from the ball (end1) to the block (end2).
    pub normal: DVec3,
    /// Contact location: midway between the block's closest surface point
    /// and the ball surface point facing it (m).
    pub location: DVec3,
    /// The block's closest surface point (m).
    pub block_point: DVec3,
}

/// Ball–rblock contact by surface traversal from the cached facet.
pub fn contact_ball_rblock(
    ball: &Sphere,
    block: &ConvexPolyhedron,
    cache: &mut FacetCache,
) -> BallBlockContact {
    let sp = closest_surface_point(block, ball.center, cache);
    // The block surface lies along -sp.normal from the ball centre.
    let normal = -sp.normal;
    let ball_point = ball.center + normal * ball.radius;
    BallBlockContact {
        gap: sp.signed_distance - ball.radius,
        normal,
        location: 0.5 * (ball_point + sp.point),
        block_point: sp.point,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cube_regions() {
        let c = ConvexPolyhedron::cuboid(DVec3::ONE).unwrap();
        let mut cache = FacetCache::default();
        for (q, want, dist) in [
            (DVec3::new(3.0, 0.2, 0.1), DVec3::new(1.0, 0.2, 0.1), 2.0),
            (
                DVec3::new(2.0, 2.0, 0.5),
                DVec3::new(1.0, 1.0, 0.5),
                2f64.sqrt(),
            ),
            (
                DVec3::new(-2.0, -2.0, -2.0),
                DVec3::splat(-1.0),
                3f64.sqrt(),
            ),
            (DVec3::new(0.5, 0.1, 0.0), DVec3::new(1.0, 0.1, 0.0), -0.5),
        ] {
            let sp = closest_surface_point(&c, q, &mut cache);
            assert!((sp.point - want).length() < 1e-14, "{q} -> {}", sp.point);
            assert!((sp.signed_distance - dist).abs() < 1e-14);
        }
    }
}
