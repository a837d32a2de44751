//! Brute-force references for the property tests, written independently of
//! the code under test: no hull, GJK, EPA, traversal or dual map here, only
//! exhaustive enumeration over vertices, and polygon clipping.
#![allow(dead_code)]

use glam::{DQuat, DVec3};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, RngAlgorithm, RngSeed};
use talus_geometry::ConvexPolyhedron;

/// Fixed-seed proptest configuration with `cases` cases.
pub fn config(cases: u32, seed: u64) -> Config {
    Config {
        cases,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        max_shrink_iters: 2000,
        max_global_rejects: 100_000,
        max_local_rejects: 100_000,
        ..Config::default()
    }
}

/// Squared distance from `p` to segment `ab` and the closest point.
pub fn point_segment(p: DVec3, a: DVec3, b: DVec3) -> (f64, DVec3) {
    let ab = b - a;
    let len2 = ab.length_squared();
    let t = if len2 > 0.0 {
        ((p - a).dot(ab) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let q = a + ab * t;
    ((p - q).length_squared(), q)
}

/// Squared distance from `p` to triangle `abc` and the closest point:
/// projection when it falls inside, otherwise the best edge.
pub fn point_triangle(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> (f64, DVec3) {
    let n = (b - a).cross(c - a);
    let nn = n.length_squared();
    if nn > 1e-300 {
        let q = p - n * ((p - a).dot(n) / nn);
        let u = (b - q).cross(c - q).dot(n) / nn;
        let v = (c - q).cross(a - q).dot(n) / nn;
        let w = 1.0 - u - v;
        if u >= 0.0 && v >= 0.0 && w >= 0.0 {
            return ((p - q).length_squared(), q);
        }
    }
    let e = [
        point_segment(p, a, b),
        point_segment(p, b, c),
        point_segment(p, c, a),
    ];
    e.into_iter().min_by(|x, y| x.0.total_cmp(&y.0)).unwrap()
}

/// Squared distance between segments `p1 q1` and `p2 q2`: the interior
/// stationary point when it is inside the parameter square, else the best
/// endpoint-to-segment distance.
pub fn segment_segment(p1: DVec3, q1: DVec3, p2: DVec3, q2: DVec3) -> f64 {
    let d1 = q1 - p1;
    let d2 = q2 - p2;
    let r = p1 - p2;
    let (a, e, b) = (d1.dot(d1), d2.dot(d2), d1.dot(d2));
    let (c, f) = (d1.dot(r), d2.dot(r));
    let denom = a * e - b * b;
    let mut best = f64::INFINITY;
    if denom > 1e-14 * a * e && denom > 0.0 {
        let s = (b * f - c * e) / denom;
        let t = (a * f - b * c) / denom;
        if (0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&t) {
            best = (p1 + d1 * s - (p2 + d2 * t)).length_squared();
        }
    }
    best.min(point_segment(p1, p2, q2).0)
        .min(point_segment(q1, p2, q2).0)
        .min(point_segment(p2, p1, q1).0)
        .min(point_segment(q2, p1, q1).0)
}

/// Distance between the convex hulls of two vertex sets (assumed disjoint):
/// minimum over vertex–triangle pairs (all vertex triples) and segment–
/// segment pairs (all vertex pairs).
pub fn distance(va: &[DVec3], vb: &[DVec3]) -> f64 {
    let mut best = f64::INFINITY;
    for (x, ys) in [(va, vb), (vb, va)] {
        for &p in x {
            for i in 0..ys.len() {
                for j in i + 1..ys.len() {
                    for k in j + 1..ys.len() {
                        best = best.min(point_triangle(p, ys[i], ys[j], ys[k]).0);
                    }
                }
            }
        }
    }
    for i in 0..va.len() {
        for j in i + 1..va.len() {
            for k in 0..vb.len() {
                for l in k + 1..vb.len() {
                    best = best.min(segment_segment(va[i], va[j], vb[k], vb[l]));
                }
            }
        }
    }
    best.sqrt()
}

/// Candidate separating axes: normals of all vertex triples of each set and
/// cross products of all vertex-pair directions of A and of B.
fn candidate_axes(va: &[DVec3], vb: &[DVec3]) -> Vec<DVec3> {
    let mut axes = Vec::new();
    for v in [va, vb] {
        for i in 0..v.len() {
            for j in i + 1..v.len() {
                for k in j + 1..v.len() {
                    let n = (v[j] - v[i]).cross(v[k] - v[i]);
                    if n.length_squared() > 1e-24 {
                        axes.push(n.normalize());
                    }
                }
            }
        }
    }
    for i in 0..va.len() {
        for j in i + 1..va.len() {
            for k in 0..vb.len() {
                for l in k + 1..vb.len() {
                    let n = (va[j] - va[i]).cross(vb[l] - vb[k]);
                    if n.length_squared() > 1e-24 {
                        axes.push(n.normalize());
                    }
                }
            }
        }
    }
    axes
}

/// Penetration depth by the separating axis theorem: the minimum over
/// candidate unit axes `u` (both signs) of `max_a a.u - min_b b.u`. Negative
/// when the shapes are apart. Returns the depth and the axis (from A to B).
pub fn penetration(va: &[DVec3], vb: &[DVec3]) -> (f64, DVec3) {
    let mut best = (f64::INFINITY, DVec3::ZERO);
    for axis in candidate_axes(va, vb) {
        for u in [axis, -axis] {
            let ha = va
                .iter()
                .map(|a| a.dot(u))
                .fold(f64::NEG_INFINITY, f64::max);
            let lb = vb.iter().map(|b| b.dot(u)).fold(f64::INFINITY, f64::min);
            if ha - lb < best.0 {
                best = (ha - lb, u);
            }
        }
    }
    best
}

/// Outward planes `(n, d)` (inside: `n.x <= d`) of a block's triangles,
/// recomputed here from the vertices.
pub fn triangle_planes(p: &ConvexPolyhedron) -> Vec<(DVec3, f64)> {
    p.facets()
        .iter()
        .map(|t| {
            let (a, b, c) = (
                p.vertices()[t[0] as usize],
                p.vertices()[t[1] as usize],
                p.vertices()[t[2] as usize],
            );
            let n = (b - a).cross(c - a).normalize();
            (n, n.dot(a))
        })
        .collect()
}

/// A face of a polyhedron under clipping: polygon and outward unit normal.
struct Face {
    pts: Vec<DVec3>,
    n: DVec3,
}

/// Volume and centroid of block `a` clipped by the half-spaces `planes`
/// (Sutherland–Hodgman on every face plus a cap per plane; volume and first
/// moment by the divergence theorem). `None` when nothing remains.
pub fn clip(a: &ConvexPolyhedron, planes: &[(DVec3, f64)]) -> Option<(f64, DVec3)> {
    let mut faces: Vec<Face> = a
        .facets()
        .iter()
        .map(|t| {
            let pts: Vec<DVec3> = t.iter().map(|&i| a.vertices()[i as usize]).collect();
            let n = (pts[1] - pts[0]).cross(pts[2] - pts[0]).normalize();
            Face { pts, n }
        })
        .collect();
    // Triangulated faces give each plane twice: clip once per plane.
    let mut unique: Vec<(DVec3, f64)> = Vec::new();
    for &(n, d) in planes {
        if !unique
            .iter()
            .any(|&(m, e)| m.dot(n) > 1.0 - 1e-12 && (e - d).abs() < 1e-12)
        {
            unique.push((n, d));
        }
    }
    for &(n, d) in &unique {
        let mut cap = Vec::new();
        let mut next = Vec::new();
        for f in &faces {
            // A face lying in the plane with the same orientation is
            // replaced by the cap.
            if f.n.dot(n) > 0.0 && f.pts.iter().all(|p| (n.dot(*p) - d).abs() <= 1e-12) {
                cap.extend_from_slice(&f.pts);
                continue;
            }
            let mut out = Vec::new();
            let m = f.pts.len();
            for i in 0..m {
                let (p, q) = (f.pts[i], f.pts[(i + 1) % m]);
                let (sp, sq) = (n.dot(p) - d, n.dot(q) - d);
                if sp <= 0.0 {
                    out.push(p);
                    if sp == 0.0 {
                        cap.push(p);
                    }
                }
                if (sp < 0.0 && sq > 0.0) || (sp > 0.0 && sq < 0.0) {
                    let x = p + (q - p) * (sp / (sp - sq));
                    out.push(x);
                    cap.push(x);
                }
            }
            if out.len() >= 3 {
                next.push(Face { pts: out, n: f.n });
            }
        }
        if cap.len() >= 3 {
            let c = cap.iter().copied().sum::<DVec3>() / cap.len() as f64;
            let u = n.any_orthonormal_vector();
            let v = n.cross(u);
            cap.sort_by(|x, y| {
                let ax = (*x - c).dot(v).atan2((*x - c).dot(u));
                let ay = (*y - c).dot(v).atan2((*y - c).dot(u));
                ax.total_cmp(&ay)
            });
            next.push(Face { pts: cap, n });
        }
        faces = next;
        if faces.is_empty() {
            return None;
        }
    }
    // V = 1/3 sum n.x dA ; M_i = 1/2 sum n_i x_i^2 dA (quadratic rule on a
    // fan, exact for quadratics).
    let mut vol = 0.0;
    let mut mom = DVec3::ZERO;
    for f in &faces {
        let o = f.pts[0];
        for k in 1..f.pts.len() - 1 {
            let (b, c) = (f.pts[k], f.pts[k + 1]);
            let area = 0.5 * (b - o).cross(c - o).length();
            vol += area * f.n.dot(o + b + c) / 9.0;
            let mids = [(o + b) * 0.5, (b + c) * 0.5, (c + o) * 0.5];
            let sq = mids.iter().map(|m| *m * *m).sum::<DVec3>() / 3.0;
            mom += f.n * sq * area * 0.5;
        }
    }
    if vol <= 0.0 {
        return None;
    }
    Some((vol, mom / vol))
}

/// Closest point on a block's surface by scanning all its triangles.
pub fn closest_point(p: &ConvexPolyhedron, q: DVec3) -> (f64, DVec3) {
    p.facets()
        .iter()
        .map(|t| {
            point_triangle(
                q,
                p.vertices()[t[0] as usize],
                p.vertices()[t[1] as usize],
                p.vertices()[t[2] as usize],
            )
        })
        .min_by(|x, y| x.0.total_cmp(&y.0))
        .unwrap()
}

/// A unit quaternion from four normal-ish numbers.
pub fn rotation() -> impl Strategy<Value = DQuat> {
    (-1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64)
        .prop_filter("non-zero", |(a, b, c, d)| {
            a * a + b * b + c * c + d * d > 1e-2
        })
        .prop_map(|(a, b, c, d)| DQuat::from_xyzw(a, b, c, d).normalize())
}

/// A vector with coordinates in `[-r, r]`.
pub fn vector(r: f64) -> impl Strategy<Value = DVec3> {
    (-r..r, -r..r, -r..r).prop_map(|(x, y, z)| DVec3::new(x, y, z))
}

/// A random convex block: the hull of `n` points in a box of random
/// aspect, randomly rotated, centred near the origin.
pub fn block(n: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = ConvexPolyhedron> {
    (
        proptest::collection::vec(vector(1.0), n),
        (0.3..1.5f64, 0.3..1.5f64, 0.3..1.5f64),
        rotation(),
    )
        .prop_filter_map("degenerate cloud", |(pts, (sx, sy, sz), r)| {
            let s = DVec3::new(sx, sy, sz);
            let pts: Vec<DVec3> = pts.iter().map(|p| r * (*p * s)).collect();
            ConvexPolyhedron::from_points(&pts)
                .ok()
                .filter(|p| p.volume() > 0.02)
        })
}
