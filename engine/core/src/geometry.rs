//! Narrow-phase geometry of balls against facets.
//!
//! Reads: a point and a triangle. Writes: the closest point on the triangle
//! and the feature (face, edge, vertex) it lies on.
//! Invariant: edge `k` runs from vertex `k` to vertex `(k + 1) % 3`, so the
//! facet normal follows the right-hand rule over the vertex order.

use crate::math::Vec3;

/// The part of a facet on which a closest point lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Region {
    /// The interior of the face.
    Face,
    /// Edge `k`: from vertex `k` to vertex `(k + 1) % 3`.
    Edge(u8),
    /// Vertex `k`.
    Vertex(u8),
}

impl Region {
    /// Compact code for storage and output: 0 face, 1..=3 edges, 4..=6 vertices.
    pub fn code(self) -> u8 {
        match self {
            Region::Face => 0,
            Region::Edge(k) => 1 + k,
            Region::Vertex(k) => 4 + k,
        }
    }

    /// Inverse of [`Region::code`].
    pub fn from_code(c: u8) -> Region {
        match c {
            0 => Region::Face,
            1..=3 => Region::Edge(c - 1),
            _ => Region::Vertex(c - 4),
        }
    }

    /// Name used in output ("face", "edge1".."edge3", "vertex1".."vertex3").
    pub fn name(self) -> &'static str {
        match self {
            Region::Face => "face",
            Region::Edge(0) => "edge1",
            Region::Edge(1) => "edge2",
            Region::Edge(_) => "edge3",
            Region::Vertex(0) => "vertex1",
            Region::Vertex(1) => "vertex2",
            Region::Vertex(_) => "vertex3",
        }
    }
}

/// Closest point on triangle `(a, b, c)` to `p`, with its region.
///
/// Walks the Voronoi regions of the vertices, then the edges, then the face,
/// using only dot products of edge vectors (barycentric form), so no square
/// root and no division unless the point projects onto an edge or the face.
pub fn closest_point_triangle(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> (Vec3, Region) {
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = ab.dot(ap);
    let d2 = ac.dot(ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, Region::Vertex(0));
    }
    let bp = p - b;
    let d3 = ab.dot(bp);
    let d4 = ac.dot(bp);
    if d3 >= 0.0 && d4 <= d3 {
        return (b, Region::Vertex(1));
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (a + ab * v, Region::Edge(0));
    }
    let cp = p - c;
    let d5 = ab.dot(cp);
    let d6 = ac.dot(cp);
    if d6 >= 0.0 && d5 <= d6 {
        return (c, Region::Vertex(2));
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (a + ac * w, Region::Edge(2));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (b + (c - b) * w, Region::Edge(1));
    }
    let denom = 1.0 / (va + vb + vc);
    let v = vb * denom;
    let w = vc * denom;
    (a + ab * v + ac * w, Region::Face)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Independent reference: the minimum over the in-plane projection (when
    /// it falls inside), the three edge segments and the three vertices.
    fn brute(p: Vec3, t: [Vec3; 3]) -> (Vec3, Region, f64) {
        let mut best = (t[0], Region::Vertex(0), f64::INFINITY);
        let consider = |q: Vec3, r: Region, best: &mut (Vec3, Region, f64)| {
            let d = (p - q).length();
            if d < best.2 {
                *best = (q, r, d);
            }
        };
        for (k, &v) in t.iter().enumerate() {
            consider(v, Region::Vertex(k as u8), &mut best);
        }
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            let e = b - a;
            let s = (p - a).dot(e) / e.length_squared();
            if s > 0.0 && s < 1.0 {
                consider(a + e * s, Region::Edge(k as u8), &mut best);
            }
        }
        let n = (t[1] - t[0]).cross(t[2] - t[0]);
        let q = p - n * ((p - t[0]).dot(n) / n.length_squared());
        let inside = (0..3).all(|k| {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            (b - a).cross(q - a).dot(n) > 0.0
        });
        if inside {
            consider(q, Region::Face, &mut best);
        }
        best
    }

    fn vec() -> impl Strategy<Value = Vec3> {
        (-2.0..2.0f64, -2.0..2.0f64, -2.0..2.0f64).prop_map(|(x, y, z)| Vec3::new(x, y, z))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20000, ..ProptestConfig::default() })]
        #[test]
        fn closest_point_and_region_match_brute_force(p in vec(), a in vec(), b in vec(), c in vec()) {
            let n = (b - a).cross(c - a);
            // Needle-thin triangles make the regions ill-conditioned in both
            // methods; they are covered by the distance check below only.
            let scale = (b - a).length().max((c - a).length()).max((c - b).length());
            prop_assume!(n.length() > 1e-3 * scale * scale);
            let (q, r) = closest_point_triangle(p, a, b, c);
            let (qb, rb, db) = brute(p, [a, b, c]);
            prop_assert!(((p - q).length() - db).abs() < 1e-9, "distance {} vs {}", (p - q).length(), db);
            prop_assert!((q - qb).length() < 1e-7 * (1.0 + scale));
            // Compare regions only away from region boundaries, where the
            // classification is unambiguous.
            let margin = 1e-6 * scale;
            let near_boundary = (0..3).any(|k| {
                let t = [a, b, c];
                let (u, v) = (t[k], t[(k + 1) % 3]);
                let e = v - u;
                let s = (q - u).dot(e) / e.length_squared();
                let on_line = (q - (u + e * s)).length() < margin;
                on_line && (s.abs() < 1e-6 || (1.0 - s).abs() < 1e-6 || r == Region::Face)
                    || (q - u).length() < margin && r != Region::Vertex(k as u8)
            }) || (r == Region::Face) != (rb == Region::Face) && db.abs() < margin;
            if !near_boundary {
                prop_assert_eq!(r, rb);
            }
        }
    }

    #[test]
    fn regions_of_a_unit_triangle() {
        let (a, b, c) = (Vec3::ZERO, Vec3::X, Vec3::Y);
        assert_eq!(
            closest_point_triangle(Vec3::new(0.2, 0.2, 1.0), a, b, c).1,
            Region::Face
        );
        assert_eq!(
            closest_point_triangle(Vec3::new(0.5, -1.0, 0.0), a, b, c).1,
            Region::Edge(0)
        );
        assert_eq!(
            closest_point_triangle(Vec3::new(1.0, 1.0, 0.0), a, b, c).1,
            Region::Edge(1)
        );
        assert_eq!(
            closest_point_triangle(Vec3::new(-1.0, 0.5, 0.0), a, b, c).1,
            Region::Edge(2)
        );
        assert_eq!(
            closest_point_triangle(Vec3::new(-1.0, -1.0, 0.0), a, b, c).1,
            Region::Vertex(0)
        );
        assert_eq!(
            closest_point_triangle(Vec3::new(2.0, -0.1, 0.0), a, b, c).1,
            Region::Vertex(1)
        );
        assert_eq!(
            closest_point_triangle(Vec3::new(-0.1, 2.0, 0.0), a, b, c).1,
            Region::Vertex(2)
        );
        for k in 0..7u8 {
            assert_eq!(Region::from_code(k).code(), k);
        }
    }
}
