//! Narrow-phase kernels on pre-generated seeded inputs: the closest point on
//! a triangle, and the whole per-contact resolution of ball-ball and
//! ball-facet contacts (contact plane, frame update, relative-motion
//! increments), as `Simulation::resolve` does it for each stored contact.
//!
//! The contacts are warm: their frames are initialised before timing, so
//! every timed call carries an existing frame to the new normal.

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_core::contact::{self, EndMotion, Plane};
use talus_core::geometry::closest_point_triangle;
use talus_core::Vec3;
use talus_sdk::ContactInput;

/// Items per timed call (the engine's batch size).
const N: usize = 1024;
const SEED: u64 = 0x0007_a105;
const R: f64 = 1.0e-3;
const DT: f64 = 2.0e-6;

fn rng(stream: u64) -> ChaCha8Rng {
    let mut r = ChaCha8Rng::seed_from_u64(SEED);
    r.set_stream(stream);
    r
}

fn unit(r: &mut ChaCha8Rng) -> Vec3 {
    loop {
        let v = Vec3::new(
            r.random_range(-1.0..1.0),
            r.random_range(-1.0..1.0),
            r.random_range(-1.0..1.0),
        );
        let l = v.length();
        if l > 1e-3 && l <= 1.0 {
            return v / l;
        }
    }
}

fn small(r: &mut ChaCha8Rng, scale: f64) -> Vec3 {
    unit(r) * r.random_range(0.0..scale)
}

/// A triangle of size about 4R near the origin and a query point in a
/// cube around it, so that faces, edges and vertices are all hit.
struct TriangleQuery {
    p: Vec3,
    abc: [Vec3; 3],
}

fn triangle_queries() -> Vec<TriangleQuery> {
    let mut r = rng(1);
    (0..N)
        .map(|_| {
            let abc = [
                small(&mut r, 4.0 * R),
                small(&mut r, 4.0 * R),
                small(&mut r, 4.0 * R),
            ];
            let p = Vec3::new(
                r.random_range(-5.0 * R..5.0 * R),
                r.random_range(-5.0 * R..5.0 * R),
                r.random_range(-5.0 * R..5.0 * R),
            );
            TriangleQuery { p, abc }
        })
        .collect()
}

fn motion(r: &mut ChaCha8Rng, x: Vec3) -> EndMotion {
    EndMotion {
        x,
        v: small(r, 0.1),
        w: small(r, 100.0),
    }
}

/// Two balls of radius R whose centres are 2R apart to within +-1 %
/// (most overlap slightly), with random velocities and spins.
#[derive(Clone, Copy)]
struct BallBall {
    e1: EndMotion,
    e2: EndMotion,
    plane: Plane,
    input: ContactInput,
}

fn ball_ball_contacts() -> Vec<BallBall> {
    let mut r = rng(2);
    (0..N)
        .map(|_| {
            let x1 = small(&mut r, 0.05);
            let x2 = x1 + unit(&mut r) * (2.0 * R * r.random_range(0.99..1.01));
            let (e1, e2) = (motion(&mut r, x1), motion(&mut r, x2));
            let mut plane = Plane::default();
            let (n, gap, xc) = contact::plane_ball_ball(x1, R, x2, R, plane.n);
            contact::update_frame(&mut plane, n, e1.w, e2.w, DT);
            plane.xc = xc;
            plane.gap = gap;
            BallBall {
                e1,
                e2,
                plane,
                input: ContactInput::default(),
            }
        })
        .collect()
}

/// A ball near a triangle of size about 8R whose plane it touches to
/// within +-1 % of R, at a random point over or just beside the face;
/// the wall end is still (a fixed box).
#[derive(Clone, Copy)]
struct BallFacet {
    e1: EndMotion,
    abc: [Vec3; 3],
    normal: Vec3,
    wall: EndMotion,
    plane: Plane,
    input: ContactInput,
}

fn ball_facet_contacts() -> Vec<BallFacet> {
    let mut r = rng(3);
    (0..N)
        .map(|_| {
            let a = small(&mut r, 0.05);
            let u = unit(&mut r);
            let w = unit(&mut r).cross(u).normalize();
            let (b, c) = (a + u * 8.0 * R, a + w * 8.0 * R);
            let normal = (b - a).cross(c - a).normalize();
            let (s, t) = (r.random_range(-0.1..0.7), r.random_range(-0.1..0.7));
            let foot = a + (b - a) * s + (c - a) * t;
            let x1 = foot + normal * (R * r.random_range(0.99..1.01));
            let e1 = motion(&mut r, x1);
            let wall = EndMotion {
                x: a,
                v: Vec3::ZERO,
                w: Vec3::ZERO,
            };
            let mut plane = Plane::default();
            let (xf, region) = closest_point_triangle(x1, a, b, c);
            let (n, gap, xc) = contact::plane_ball_facet(x1, R, xf, normal);
            contact::update_frame(&mut plane, n, e1.w, wall.w, DT);
            plane.xc = xc;
            plane.gap = gap;
            plane.region = region.code();
            BallFacet {
                e1,
                abc: [a, b, c],
                normal,
                wall,
                plane,
                input: ContactInput::default(),
            }
        })
        .collect()
}

fn bench_closest_point(c: &mut Criterion) {
    let queries = triangle_queries();
    let mut g = c.benchmark_group("closest_point_triangle");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("mixed_regions_1024", |bch| {
        bch.iter(|| {
            for q in &queries {
                let [a, b, c] = q.abc;
                black_box(closest_point_triangle(black_box(q.p), a, b, c));
            }
        })
    });
    g.finish();
}

fn bench_ball_ball(c: &mut Criterion) {
    let contacts = ball_ball_contacts();
    let mut g = c.benchmark_group("contact_ball_ball");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("plane_1024", |bch| {
        bch.iter(|| {
            for k in &contacts {
                black_box(contact::plane_ball_ball(
                    black_box(k.e1.x),
                    R,
                    k.e2.x,
                    R,
                    k.plane.n,
                ));
            }
        })
    });
    g.bench_function("plane_frame_increments_1024", |bch| {
        bch.iter_batched_ref(
            || contacts.clone(),
            |work| {
                for k in work.iter_mut() {
                    let (n, gap, xc) = contact::plane_ball_ball(k.e1.x, R, k.e2.x, R, k.plane.n);
                    contact::update_frame(&mut k.plane, n, k.e1.w, k.e2.w, DT);
                    k.plane.xc = xc;
                    k.plane.gap = gap;
                    k.input.gap = gap;
                    contact::increments(&k.plane, &k.e1, &k.e2, DT, &mut k.input);
                }
                black_box(&*work);
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

fn bench_ball_facet(c: &mut Criterion) {
    let contacts = ball_facet_contacts();
    let mut g = c.benchmark_group("contact_ball_facet");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("plane_frame_increments_1024", |bch| {
        bch.iter_batched_ref(
            || contacts.clone(),
            |work| {
                for k in work.iter_mut() {
                    let [a, b, c] = k.abc;
                    let (xf, region) = closest_point_triangle(k.e1.x, a, b, c);
                    let (n, gap, xc) = contact::plane_ball_facet(k.e1.x, R, xf, k.normal);
                    contact::update_frame(&mut k.plane, n, k.e1.w, k.wall.w, DT);
                    k.plane.xc = xc;
                    k.plane.gap = gap;
                    k.plane.region = region.code();
                    k.input.gap = gap;
                    contact::increments(&k.plane, &k.e1, &k.wall, DT, &mut k.input);
                }
                black_box(&*work);
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(
    benches,
    bench_closest_point,
    bench_ball_ball,
    bench_ball_facet
);
criterion_main!(benches);
