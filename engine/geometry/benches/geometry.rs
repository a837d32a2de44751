#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]
//! Geometry kernel benchmarks: ours and parry3d-f64 side by side on the same
//! seeded, pre-generated blocks of 8, 20 and 60 vertices.
//!
//! Run: `cargo bench -p talus-geometry -- --warm-up-time 1 --measurement-time 3`

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use glam::{DQuat, DVec3};
use parry3d_f64::math::{Pose, Vector};
use parry3d_f64::query::PointQuery;
use parry3d_f64::shape::{ConvexPolyhedron as ParryPolyhedron, Shape};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geometry::{
    closest_surface_point, closest_surface_point_scan, convex_hull, epa_penetration, gjk_distance,
    mass_properties, overlap_polyhedron, ConvexPolyhedron, FacetCache, OverlapCache, Proximity,
};

const SIZES: [usize; 3] = [8, 20, 60];

/// `n` points on a slightly flattened unit sphere: all are hull vertices.
fn cloud(n: usize, rng: &mut ChaCha8Rng) -> Vec<DVec3> {
    (0..n)
        .map(|_| loop {
            let p = DVec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            let l = p.length();
            if l > 0.2 && l < 1.0 {
                break p / l * DVec3::new(1.0, 0.8, 0.6);
            }
        })
        .collect()
}

fn to_parry(p: &ConvexPolyhedron) -> ParryPolyhedron {
    let pts: Vec<Vector> = p
        .vertices()
        .iter()
        .map(|v| Vector::new(v.x, v.y, v.z))
        .collect();
    ParryPolyhedron::from_convex_hull(&pts).expect("parry hull")
}

/// Block A at the origin and block B placed along `dir` so that their gap
/// along that direction is `gap` (negative: overlap).
fn pair(n: usize, gap: f64, seed: u64) -> (ConvexPolyhedron, ConvexPolyhedron) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let a = ConvexPolyhedron::from_points(&cloud(n, &mut rng)).unwrap();
    let b0 = ConvexPolyhedron::from_points(&cloud(n, &mut rng)).unwrap();
    let r = DQuat::from_euler(glam::EulerRot::XYZ, 0.4, -0.3, 0.7);
    let b0 = b0.transformed(r, DVec3::ZERO);
    let dir = DVec3::new(1.0, 0.3, 0.2).normalize();
    // Bisect for the touching placement along `dir`, then add the gap.
    let (mut lo, mut hi) = (0.0, 4.0);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        let b = b0.transformed(DQuat::IDENTITY, dir * mid);
        match gjk_distance(&a, &b).unwrap() {
            Proximity::Separated(_) => hi = mid,
            _ => lo = mid,
        }
    }
    let b = b0.transformed(DQuat::IDENTITY, dir * (hi + gap));
    (a, b)
}

fn bench_hull_and_mass(c: &mut Criterion) {
    let mut g = c.benchmark_group("hull");
    for n in SIZES {
        let pts = cloud(n, &mut ChaCha8Rng::seed_from_u64(n as u64));
        let ppts: Vec<Vector> = pts.iter().map(|v| Vector::new(v.x, v.y, v.z)).collect();
        g.bench_with_input(BenchmarkId::new("talus", n), &pts, |bch, p| {
            bch.iter(|| convex_hull(black_box(p)).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("parry", n), &ppts, |bch, p| {
            bch.iter(|| parry3d_f64::transformation::convex_hull(black_box(p)))
        });
    }
    g.finish();
    let mut g = c.benchmark_group("mass");
    for n in SIZES {
        let a = ConvexPolyhedron::from_points(&cloud(n, &mut ChaCha8Rng::seed_from_u64(n as u64)))
            .unwrap();
        let pa = to_parry(&a);
        g.bench_function(BenchmarkId::new("talus", n), |bch| {
            bch.iter(|| mass_properties(black_box(a.vertices()), black_box(a.facets())))
        });
        g.bench_function(BenchmarkId::new("parry", n), |bch| {
            bch.iter(|| black_box(&pa).mass_properties(1.0))
        });
    }
    g.finish();
}

fn bench_gjk_epa(c: &mut Criterion) {
    let mut g = c.benchmark_group("gjk_distance");
    for n in SIZES {
        let (a, b) = pair(n, 0.1, 100 + n as u64);
        let (pa, pb) = (to_parry(&a), to_parry(&b));
        g.bench_function(BenchmarkId::new("talus", n), |bch| {
            bch.iter(|| gjk_distance(black_box(&a), black_box(&b)).unwrap())
        });
        g.bench_function(BenchmarkId::new("parry", n), |bch| {
            bch.iter(|| {
                parry3d_f64::query::distance(&Pose::IDENTITY, black_box(&pa), &Pose::IDENTITY, &pb)
                    .unwrap()
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("epa_penetration");
    for n in SIZES {
        let (a, b) = pair(n, -0.1, 200 + n as u64);
        let (pa, pb) = (to_parry(&a), to_parry(&b));
        g.bench_function(BenchmarkId::new("talus", n), |bch| {
            bch.iter(|| epa_penetration(black_box(&a), black_box(&b)).unwrap())
        });
        g.bench_function(BenchmarkId::new("parry", n), |bch| {
            bch.iter(|| {
                parry3d_f64::query::contact(
                    &Pose::IDENTITY,
                    black_box(&pa),
                    &Pose::IDENTITY,
                    &pb,
                    0.0,
                )
                .unwrap()
            })
        });
    }
    g.finish();
}

fn bench_overlap(c: &mut Criterion) {
    let mut g = c.benchmark_group("overlap_volume");
    for n in SIZES {
        let (a, b) = pair(n, -0.2, 300 + n as u64);
        g.bench_function(BenchmarkId::new("talus_cold", n), |bch| {
            bch.iter(|| {
                let mut cache = OverlapCache::default();
                overlap_polyhedron(black_box(&a), black_box(&b), &mut cache).unwrap()
            })
        });
        let mut cache = OverlapCache::default();
        overlap_polyhedron(&a, &b, &mut cache).unwrap();
        g.bench_function(BenchmarkId::new("talus_cached", n), |bch| {
            bch.iter(|| overlap_polyhedron(black_box(&a), black_box(&b), &mut cache).unwrap())
        });
    }
    g.finish();
}

fn bench_closest(c: &mut Criterion) {
    let mut g = c.benchmark_group("closest_point");
    for n in SIZES {
        let a = ConvexPolyhedron::from_points(&cloud(
            n,
            &mut ChaCha8Rng::seed_from_u64(400 + n as u64),
        ))
        .unwrap();
        let pa = to_parry(&a);
        let q = DVec3::new(1.1, 0.7, -0.4);
        let mut cache = FacetCache::default();
        closest_surface_point(&a, q, &mut cache);
        g.bench_function(BenchmarkId::new("talus_cached", n), |bch| {
            bch.iter(|| closest_surface_point(black_box(&a), black_box(q), &mut cache))
        });
        g.bench_function(BenchmarkId::new("talus_cold", n), |bch| {
            bch.iter(|| {
                let mut cold = FacetCache::default();
                closest_surface_point(black_box(&a), black_box(q), &mut cold)
            })
        });
        g.bench_function(BenchmarkId::new("talus_scan", n), |bch| {
            bch.iter(|| closest_surface_point_scan(black_box(&a), black_box(q)))
        });
        let pq = Vector::new(q.x, q.y, q.z);
        g.bench_function(BenchmarkId::new("parry", n), |bch| {
            bch.iter(|| black_box(&pa).project_point(&Pose::IDENTITY, black_box(pq), true))
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    bench_hull_and_mass,
    bench_gjk_epa,
    bench_overlap,
    bench_closest
);
criterion_main!(benches);
