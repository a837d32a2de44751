//! Named degenerate cases and Monte Carlo checks of the overlap volume.

mod reference;

use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geometry::{
    closest_surface_point, contact_ball_rblock, contact_rblock_rblock_volume, epa_penetration,
    gjk_distance, overlap_polyhedron, ConvexPolyhedron, FacetCache, GeometryError, OverlapCache,
    Proximity, Sphere,
};

fn cube(h: f64) -> ConvexPolyhedron {
    ConvexPolyhedron::cuboid(DVec3::splat(h)).unwrap()
}

fn moved(p: &ConvexPolyhedron, r: DQuat, t: DVec3) -> ConvexPolyhedron {
    p.transformed(r, t)
}

fn gjk_gap(a: &ConvexPolyhedron, b: &ConvexPolyhedron) -> f64 {
    match gjk_distance(a, b).unwrap() {
        Proximity::Separated(s) => s.distance,
        _ => -epa_penetration(a, b).map(|p| p.depth).unwrap_or(0.0),
    }
}

/// Overlap volume and centroid against the clipping reference.
fn check_overlap(a: &ConvexPolyhedron, b: &ConvexPolyhedron) {
    let (v, c) = reference::clip(a, &reference::triangle_planes(b)).unwrap();
    let o = overlap_polyhedron(a, b, &mut OverlapCache::default()).unwrap();
    assert!((o.volume - v).abs() <= 1e-9 * v, "{} vs {v}", o.volume);
    let scale = a.bounding_radius() + b.bounding_radius();
    assert!((o.centroid - c).length() <= 1e-9 * scale);
}

#[test]
fn touching_faces() {
    let a = cube(1.0);
    let b = moved(&a, DQuat::IDENTITY, DVec3::new(2.0, 0.3, 0.1));
    assert!(gjk_gap(&a, &b).abs() <= 1e-12);
    match overlap_polyhedron(&a, &b, &mut OverlapCache::default()) {
        Ok(o) => assert!(o.thin && o.volume == 0.0),
        Err(e) => assert_eq!(e, GeometryError::NotOverlapping),
    }
}

#[test]
fn faces_1e12_apart_and_overlapping() {
    let a = cube(1.0);
    for gap in [1e-12, -1e-12] {
        let b = moved(&a, DQuat::IDENTITY, DVec3::new(2.0 + gap, 0.3, 0.1));
        assert!((gjk_gap(&a, &b) - gap).abs() <= 1e-9, "gap {gap}");
        match overlap_polyhedron(&a, &b, &mut OverlapCache::default()) {
            Ok(o) => assert!(o.volume <= 1e-9 * a.volume() && o.centroid.is_finite()),
            Err(e) => assert_eq!(e, GeometryError::NotOverlapping),
        }
    }
}

#[test]
fn edge_edge_crossing() {
    let q = std::f64::consts::FRAC_PI_4;
    let a = moved(&cube(1.0), DQuat::from_rotation_y(q), DVec3::ZERO);
    for gap in [0.1, -0.1] {
        let c = 2.0 * 2f64.sqrt() + gap;
        let b = moved(
            &cube(1.0),
            DQuat::from_rotation_x(q),
            DVec3::new(0.0, 0.0, c),
        );
        let g = gjk_gap(&a, &b);
        if gap > 0.0 {
            assert!((g - gap).abs() <= 1e-12);
        } else {
            let (sat, _) = reference::penetration(a.vertices(), b.vertices());
            assert!((g + sat).abs() <= 1e-9);
            check_overlap(&a, &b);
        }
    }
}

#[test]
fn identical_polyhedra() {
    let a = moved(
        &ConvexPolyhedron::from_points(&[
            DVec3::new(0.1, 0.2, 0.3),
            DVec3::new(1.0, 0.0, 0.2),
            DVec3::new(0.0, 1.1, -0.2),
            DVec3::new(-0.3, 0.1, 1.0),
            DVec3::new(0.5, 0.5, 0.5),
            DVec3::new(-0.4, -0.6, 0.1),
        ])
        .unwrap(),
        DQuat::from_rotation_z(0.3),
        DVec3::new(5.0, -2.0, 1.0),
    );
    let o = overlap_polyhedron(&a, &a, &mut OverlapCache::default()).unwrap();
    assert!((o.volume - a.volume()).abs() <= 1e-9 * a.volume());
    assert!((o.centroid - a.centroid()).length() <= 1e-9);
    let (sat, _) = reference::penetration(a.vertices(), a.vertices());
    assert!((epa_penetration(&a, &a).unwrap().depth - sat).abs() <= 1e-7);
}

#[test]
fn one_inside_the_other() {
    let big = cube(2.0);
    let small = moved(
        &cube(0.5),
        DQuat::from_rotation_x(0.4),
        DVec3::new(0.3, -0.2, 0.1),
    );
    let c = contact_rblock_rblock_volume(&big, &small, &mut OverlapCache::default()).unwrap();
    assert!((c.overlap.volume - small.volume()).abs() <= 1e-9 * small.volume());
    assert!((c.overlap.centroid - small.centroid()).length() <= 1e-9);
    // The surfaces do not cross: the normal comes from EPA.
    assert!(!c.normal_from_fit);
    assert!((c.normal.length() - 1.0).abs() < 1e-12);
    let (sat, _) = reference::penetration(big.vertices(), small.vertices());
    assert!((epa_penetration(&big, &small).unwrap().depth - sat).abs() <= 1e-7);
}

#[test]
fn very_flat_and_very_elongated_blocks() {
    let flat = ConvexPolyhedron::cuboid(DVec3::new(1.0, 1.0, 1e-3)).unwrap();
    let long = ConvexPolyhedron::cuboid(DVec3::new(50.0, 0.5, 0.5)).unwrap();
    let r = DQuat::from_euler(glam::EulerRot::XYZ, 0.3, 0.2, 0.1);
    for (a, b) in [
        (flat.clone(), moved(&flat, r, DVec3::new(0.5, 0.2, 0.0))),
        (long.clone(), moved(&long, r, DVec3::new(1.0, 0.5, 0.2))),
        (flat.clone(), moved(&long, r, DVec3::new(0.2, 0.2, 0.3))),
    ] {
        let (sat, _) = reference::penetration(a.vertices(), b.vertices());
        assert!(sat > 0.0);
        assert!((epa_penetration(&a, &b).unwrap().depth - sat).abs() <= 1e-7);
        check_overlap(&a, &b);
    }
    for (a, b) in [
        (flat.clone(), moved(&flat, r, DVec3::new(0.5, 0.2, 1.0))),
        (long.clone(), moved(&long, r, DVec3::new(1.0, 0.5, 3.0))),
    ] {
        let want = reference::distance(a.vertices(), b.vertices());
        assert!((gjk_gap(&a, &b) - want).abs() <= 1e-9);
    }
}

fn sphere_points(n: usize, seed: u64) -> Vec<DVec3> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| loop {
            let p = DVec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            let l = p.length();
            if l > 0.1 && l < 1.0 {
                break p / l;
            }
        })
        .collect()
}

#[test]
fn four_and_two_hundred_vertex_blocks() {
    let tet = ConvexPolyhedron::from_points(&[DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z]).unwrap();
    assert_eq!(tet.vertices().len(), 4);
    let ball = ConvexPolyhedron::from_points(&sphere_points(200, 7)).unwrap();
    assert_eq!(ball.vertices().len(), 200);
    for t in [
        DVec3::new(0.6, 0.1, 0.2),
        DVec3::new(1.5, 0.4, 0.3),
        DVec3::new(0.2, 0.2, 0.2),
    ] {
        let b = moved(&tet, DQuat::from_rotation_z(0.7), t);
        match gjk_distance(&ball, &b).unwrap() {
            Proximity::Separated(s) => {
                let want = reference::distance(ball.vertices(), b.vertices());
                assert!((s.distance - want).abs() <= 1e-9);
            }
            _ => check_overlap(&ball, &b),
        }
    }
    // Traversal on the 200-vertex block from every facet agrees with the scan.
    let mut cache = FacetCache::default();
    for f in 0..ball.facets().len() as u32 {
        cache.facet = f;
        let q = DVec3::new(1.3, -0.4, 0.8);
        let sp = closest_surface_point(&ball, q, &mut cache);
        let (_, p) = reference::closest_point(&ball, q);
        assert!((sp.point - p).length() <= 1e-9);
    }
}

#[test]
fn non_finite_and_degenerate_inputs_fail_cleanly() {
    assert_eq!(
        ConvexPolyhedron::from_points(&[DVec3::NAN; 6]),
        Err(GeometryError::NonFinite)
    );
    let s = Sphere {
        center: DVec3::NAN,
        radius: 1.0,
    };
    assert_eq!(gjk_distance(&s, &cube(1.0)), Err(GeometryError::NonFinite));
    assert!(ConvexPolyhedron::cuboid(DVec3::new(1.0, 0.0, 1.0)).is_err());
    let c = contact_ball_rblock(
        &Sphere {
            center: DVec3::ZERO,
            radius: 0.5,
        },
        &cube(1.0),
        &mut FacetCache::default(),
    );
    assert!((c.gap + 1.5).abs() < 1e-12);
}

/// Monte Carlo estimate of the overlap volume: the exact value lies within
/// four standard errors.
#[test]
fn overlap_volume_within_monte_carlo_error_bar() {
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let blocks = [
        (sphere_points(20, 1), DVec3::new(0.8, 0.3, 0.1)),
        (sphere_points(60, 2), DVec3::new(0.5, -0.5, 0.4)),
        (sphere_points(8, 3), DVec3::new(0.2, 0.9, -0.3)),
    ];
    for (pts, t) in blocks {
        let a = ConvexPolyhedron::from_points(&pts).unwrap();
        let b = moved(&a, DQuat::from_rotation_y(0.5), t);
        let o = overlap_polyhedron(&a, &b, &mut OverlapCache::default()).unwrap();
        let (pa, pb) = (
            reference::triangle_planes(&a),
            reference::triangle_planes(&b),
        );
        let inside = |pl: &[(DVec3, f64)], p: DVec3| pl.iter().all(|(n, d)| n.dot(p) <= *d);
        let (lo, hi) = (DVec3::splat(-1.0), DVec3::splat(1.0));
        let n = 400_000;
        let mut hits = 0u32;
        let mut sum = DVec3::ZERO;
        for _ in 0..n {
            let p = DVec3::new(
                rng.random_range(lo.x..hi.x),
                rng.random_range(lo.y..hi.y),
                rng.random_range(lo.z..hi.z),
            );
            if inside(&pa, p) && inside(&pb, p) {
                hits += 1;
                sum += p;
            }
        }
        let box_volume = (hi - lo).x * (hi - lo).y * (hi - lo).z;
        let f = hits as f64 / n as f64;
        let estimate = box_volume * f;
        let sigma = box_volume * (f * (1.0 - f) / n as f64).sqrt();
        assert!(
            (o.volume - estimate).abs() <= 4.0 * sigma,
            "{} vs {estimate} ± {sigma}",
            o.volume
        );
        // Centroid: standard error of a mean of uniform samples, bounded by
        // the spread of a unit ball.
        let centroid = sum / hits as f64;
        assert!((o.centroid - centroid).length() <= 4.0 * (1.0 / hits as f64).sqrt());
    }
}
