//! Property tests against brute-force references (fixed seeds, ChaCha).

mod reference;

use glam::{DQuat, DVec3};
use proptest::prelude::*;
use reference::{block, config, rotation, vector};
use talus_geometry::{
    closest_surface_point, contact_rblock_rblock_reduced, contact_rblock_rblock_volume,
    contact_rounded, convex_hull, cut_polyhedron, epa_penetration, gjk_distance,
    overlap_polyhedron, ConvexPolyhedron, FacetCache, GeometryError, OverlapCache, Plane,
    Proximity, RoundedPolyhedron,
};

fn size(a: &ConvexPolyhedron, b: &ConvexPolyhedron) -> f64 {
    a.bounding_radius() + b.bounding_radius()
}

proptest! {
    #![proptest_config(config(2000, 0x7a105))]

    /// The hull contains every input point, is convex and closed, also with
    /// duplicates, near-duplicates, coplanar points and very flat clouds.
    #[test]
    fn hull_is_convex_closed_and_contains_inputs(
        pts in proptest::collection::vec(vector(1.0), 4..60),
        n_dup in 0usize..6,
        flat in prop_oneof![Just(1.0), Just(1e-3), Just(1e-6)],
        r in rotation(),
        t in vector(10.0),
    ) {
        let mut pts: Vec<DVec3> = pts.iter().map(|p| DVec3::new(p.x, p.y, p.z * flat)).collect();
        for i in 0..n_dup.min(pts.len()) {
            pts.push(pts[i]);
            pts.push(pts[i] + DVec3::splat(1e-14));
            // A point on the segment between two inputs (coplanar with them).
            let j = (i + 1) % pts.len();
            pts.push(0.5 * (pts[i] + pts[j]));
        }
        let pts: Vec<DVec3> = pts.iter().map(|p| r * *p + t).collect();
        match convex_hull(&pts) {
            Ok(h) => {
                let tol = h.tolerance;
                let planes: Vec<(DVec3, f64)> = h.triangles.iter().map(|t| {
                    let (a, b, c) = (h.vertices[t[0] as usize], h.vertices[t[1] as usize], h.vertices[t[2] as usize]);
                    let n = (b - a).cross(c - a).normalize();
                    (n, n.dot(a))
                }).collect();
                for &(n, d) in &planes {
                    prop_assert!(n.is_finite());
                    for p in &pts {
                        prop_assert!(n.dot(*p) - d <= 4.0 * tol, "point outside by {}", n.dot(*p) - d);
                    }
                }
                for (f, tri) in h.triangles.iter().enumerate() {
                    for i in 0..3 {
                        let g = h.neighbors[f][i] as usize;
                        let (a, b) = (tri[i], tri[(i + 1) % 3]);
                        let nt = h.triangles[g];
                        prop_assert!((0..3).any(|j| nt[j] == b && nt[(j + 1) % 3] == a));
                    }
                }
                prop_assert_eq!(h.vertices.len(), 2 + h.triangles.len() / 2);
            }
            Err(e) => {
                // Only a cloud that really is (nearly) flat may fail.
                prop_assert!(flat < 1.0, "unexpected {e}");
                prop_assert!(matches!(e, GeometryError::Coplanar | GeometryError::Collinear));
            }
        }
    }

    /// GJK distance and witness points equal the brute-force distance.
    #[test]
    fn gjk_distance_matches_bruteforce(
        a in block(4..=10), b in block(4..=10), offset in vector(2.5),
    ) {
        let b = b.transformed(DQuat::IDENTITY, offset);
        let (sat, _) = reference::penetration(a.vertices(), b.vertices());
        let res = gjk_distance(&a, &b).unwrap();
        if sat < -1e-6 {
            let Proximity::Separated(s) = res else {
                return Err(TestCaseError::fail("separated pair reported overlapping"));
            };
            let want = reference::distance(a.vertices(), b.vertices());
            prop_assert!((s.distance - want).abs() <= 1e-9, "{} vs {}", s.distance, want);
            prop_assert!(((s.point_b - s.point_a).length() - s.distance).abs() <= 1e-9);
            prop_assert!((s.normal.length() - 1.0).abs() < 1e-12);
            prop_assert!(a.contains(s.point_a, 1e-9) && b.contains(s.point_b, 1e-9));
        } else if sat > 1e-6 {
            prop_assert!(matches!(res, Proximity::Overlapping(_)));
        }
    }

    /// EPA depth equals the separating-axis penetration, and the normal
    /// realises it.
    #[test]
    fn epa_depth_matches_bruteforce(
        a in block(4..=10), b in block(4..=10), offset in vector(1.2),
    ) {
        let b = b.transformed(DQuat::IDENTITY, offset);
        let (sat, _) = reference::penetration(a.vertices(), b.vertices());
        prop_assume!(sat > 1e-6);
        let p = epa_penetration(&a, &b).unwrap();
        prop_assert!((p.depth - sat).abs() <= 1e-7, "{} vs {}", p.depth, sat);
        let n = p.normal;
        prop_assert!((n.length() - 1.0).abs() < 1e-12);
        let along = a.vertices().iter().map(|v| v.dot(n)).fold(f64::NEG_INFINITY, f64::max)
            - b.vertices().iter().map(|v| v.dot(n)).fold(f64::INFINITY, f64::min);
        prop_assert!((along - sat).abs() <= 1e-7);
        prop_assert!((p.point_a - p.point_b - n * p.depth).length() <= 1e-9);
    }

    /// Overlap volume and centroid equal the clipping reference; the cached
    /// call agrees with the fresh one; the order of the blocks does not
    /// matter.
    #[test]
    fn overlap_matches_clipping(
        a in block(4..=12), b in block(4..=12), offset in vector(1.2),
    ) {
        let b = b.transformed(DQuat::IDENTITY, offset);
        let reference = reference::clip(&a, &reference::triangle_planes(&b));
        let mut cache = OverlapCache::default();
        let res = overlap_polyhedron(&a, &b, &mut cache);
        let scale = size(&a, &b);
        match reference {
            Some((v, c)) if v > 1e-6 => {
                let o = res.unwrap();
                prop_assert!(!o.thin);
                prop_assert!((o.volume - v).abs() <= 1e-9 * v, "{} vs {}", o.volume, v);
                prop_assert!((o.centroid - c).length() <= 1e-9 * scale, "{} vs {}", o.centroid, c);
                let again = overlap_polyhedron(&a, &b, &mut cache).unwrap();
                prop_assert_eq!(cache.hits, 1);
                prop_assert!((again.volume - v).abs() <= 1e-9 * v);
                let swapped = overlap_polyhedron(&b, &a, &mut OverlapCache::default()).unwrap();
                prop_assert!((swapped.volume - v).abs() <= 1e-9 * v);
                prop_assert!(o.surface_area().is_finite() && o.surface_area() > 0.0);
                let contact = contact_rblock_rblock_volume(&a, &b, &mut OverlapCache::default()).unwrap();
                prop_assert!((contact.normal.length() - 1.0).abs() < 1e-9);
            }
            _ => match res {
                Ok(o) => prop_assert!(o.volume <= 1e-6 + 1e-9 && o.centroid.is_finite()),
                Err(e) => prop_assert_eq!(e, GeometryError::NotOverlapping),
            },
        }
    }

    /// Surface traversal from any start facet finds the brute-force
    /// closest point (outside) or the nearest plane (inside).
    #[test]
    fn traversal_matches_bruteforce(
        a in block(4..=40), q in vector(3.0), start in 0u32..200,
    ) {
        let mut cache = FacetCache { facet: start % a.facets().len() as u32, ..Default::default() };
        let sp = closest_surface_point(&a, q, &mut cache);
        let planes = reference::triangle_planes(&a);
        let outside = planes.iter().map(|(n, d)| n.dot(q) - d).fold(f64::NEG_INFINITY, f64::max);
        if outside > 1e-9 {
            let (d2, p) = reference::closest_point(&a, q);
            prop_assert!((sp.point - p).length() <= 1e-9, "{} vs {}", sp.point, p);
            prop_assert!((sp.signed_distance - d2.sqrt()).abs() <= 1e-12);
        } else if outside < -1e-9 {
            prop_assert!((sp.signed_distance - outside).abs() <= 1e-12);
            prop_assert!(a.contains(sp.point, 1e-9));
        }
        prop_assert!(sp.normal.is_finite() && sp.point.is_finite());
    }

    /// The two pieces of a cut add up to the block.
    #[test]
    fn cut_pieces_add_up(a in block(4..=20), dir in vector(1.0), along in -0.9..0.9f64) {
        prop_assume!(dir.length() > 0.1);
        let n = dir.normalize();
        let lo = a.vertices().iter().map(|v| v.dot(n)).fold(f64::INFINITY, f64::min);
        let hi = a.vertices().iter().map(|v| v.dot(n)).fold(f64::NEG_INFINITY, f64::max);
        let plane = Plane { normal: n, offset: 0.5 * (lo + hi) + 0.5 * along * (hi - lo) };
        let cut = cut_polyhedron(&a, &plane);
        let vb = cut.below.as_ref().map_or(0.0, |p| p.volume());
        let va = cut.above.as_ref().map_or(0.0, |p| p.volume());
        prop_assert!((va + vb - a.volume()).abs() <= 1e-9 * a.volume());
        let reference_below = reference::clip(&a, &[(n, plane.offset)]).map_or(0.0, |r| r.0);
        prop_assert!((vb - reference_below).abs() <= 1e-9 * a.volume());
        prop_assert!(cut.section.is_some());
    }

    /// The reduced contact location lies on the contact plane inside both
    /// blocks.
    #[test]
    fn reduced_contact_is_inside_both(
        a in block(4..=12), b in block(4..=12), offset in vector(1.0),
    ) {
        let b = b.transformed(DQuat::IDENTITY, offset);
        let (sat, _) = reference::penetration(a.vertices(), b.vertices());
        prop_assume!(sat > 1e-3);
        let r = contact_rblock_rblock_reduced(&a, &b).unwrap();
        prop_assert!(r.plane.signed_distance(r.location).abs() <= 1e-9);
        if r.area > 0.0 {
            prop_assert!(a.contains(r.location, 1e-9) && b.contains(r.location, 1e-9));
        }
    }

    /// Rounded blocks: the gap is the core distance minus both radii.
    #[test]
    fn rounded_gap_matches_bruteforce(
        a in block(4..=10), b in block(4..=10), offset in vector(3.0),
        ra in 0.0..0.2f64, rb in 0.0..0.2f64,
    ) {
        let b = b.transformed(DQuat::IDENTITY, offset);
        let (sat, _) = reference::penetration(a.vertices(), b.vertices());
        let ka = RoundedPolyhedron::dilated(&a, ra).unwrap();
        let kb = RoundedPolyhedron::dilated(&b, rb).unwrap();
        let c = contact_rounded(&ka, &kb).unwrap();
        if sat < -1e-6 {
            let want = reference::distance(a.vertices(), b.vertices()) - ra - rb;
            prop_assert!((c.gap - want).abs() <= 1e-9);
        } else if sat > 1e-6 {
            prop_assert!((c.gap + sat + ra + rb).abs() <= 1e-7);
        }
    }

    /// A contact followed over small motions: the cached interior point is
    /// reused and every cached result equals a fresh computation; the
    /// traversal cache follows a moving ball likewise.
    #[test]
    fn caches_follow_small_motions(
        a in block(4..=12), b in block(4..=12), offset in vector(0.8),
        step in vector(0.002), spin in -0.004..0.004f64,
    ) {
        let mut cache = OverlapCache::default();
        let mut facets = FacetCache::default();
        let q0 = offset * 2.0 + DVec3::splat(1.5);
        let mut consecutive = 0;
        let mut previous_ok = false;
        for k in 0..8 {
            let kf = k as f64;
            let bk = b.transformed(DQuat::from_rotation_z(spin * kf), offset + step * kf);
            let fresh = overlap_polyhedron(&a, &bk, &mut OverlapCache::default());
            let cached = overlap_polyhedron(&a, &bk, &mut cache);
            match (fresh, cached) {
                (Ok(f), Ok(c)) => {
                    let ok = !f.thin && f.volume > 1e-3;
                    if ok && previous_ok {
                        consecutive += 1;
                    }
                    previous_ok = ok;
                    prop_assert!((f.volume - c.volume).abs() <= 1e-9 * f.volume.max(1e-9));
                    prop_assert!((f.centroid - c.centroid).length() <= 1e-9 * size(&a, &bk) || f.thin);
                }
                (Err(e1), Err(e2)) => {
                    previous_ok = false;
                    prop_assert_eq!(e1, e2);
                }
                (f, c) => return Err(TestCaseError::fail(format!("{f:?} vs {c:?}"))),
            }
            let q = q0 + step * kf * 10.0;
            let sp = closest_surface_point(&a, q, &mut facets);
            let (d2, p) = reference::closest_point(&a, q);
            if !a.contains(q, 1e-9) {
                prop_assert!((sp.point - p).length() <= 1e-9);
                prop_assert!((sp.signed_distance - d2.sqrt()).abs() <= 1e-12);
            }
        }
        if consecutive > 0 {
            prop_assert!(cache.hits > 0, "{cache:?}");
        }
    }
}
