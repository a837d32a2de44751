//! Accuracy of talus-geometry and parry3d-f64 against the brute-force
//! references of the test suite, on the same seeded random blocks. The
//! numbers back the dependency decision in `docs/geometry.md`.
//!
//! Run: `cargo run --release -p talus-geometry --example parry_accuracy`

#[path = "../tests/reference/mod.rs"]
mod reference;

use glam::{DQuat, DVec3};
use parry3d_f64::math::{Pose, Vector};
use parry3d_f64::query::PointQuery;
use parry3d_f64::shape::{ConvexPolyhedron as ParryPolyhedron, Shape};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geometry::{
    closest_surface_point, epa_penetration, gjk_distance, ConvexPolyhedron, FacetCache, Proximity,
};

fn v(p: DVec3) -> Vector {
    Vector::new(p.x, p.y, p.z)
}

fn random_block(rng: &mut ChaCha8Rng, n: usize) -> ConvexPolyhedron {
    loop {
        let s = DVec3::new(
            rng.random_range(0.3..1.5),
            rng.random_range(0.3..1.5),
            rng.random_range(0.3..1.5),
        );
        let pts: Vec<DVec3> = (0..n)
            .map(|_| {
                DVec3::new(
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                ) * s
            })
            .collect();
        if let Ok(p) = ConvexPolyhedron::from_points(&pts) {
            if p.volume() > 0.02 {
                let q = DQuat::from_euler(
                    glam::EulerRot::XYZ,
                    rng.random_range(0.0..6.0),
                    rng.random_range(0.0..6.0),
                    rng.random_range(0.0..6.0),
                );
                return p.transformed(q, DVec3::ZERO);
            }
        }
    }
}

fn parry_of(p: &ConvexPolyhedron) -> Option<ParryPolyhedron> {
    let pts: Vec<Vector> = p.vertices().iter().map(|&x| v(x)).collect();
    ParryPolyhedron::from_convex_hull(&pts)
}

#[derive(Default)]
struct Stat {
    max: f64,
    over: usize,
    fail: usize,
    n: usize,
}

impl Stat {
    fn add(&mut self, err: f64, limit: f64) {
        self.n += 1;
        self.max = self.max.max(err);
        if err > limit {
            self.over += 1;
        }
    }
    fn row(&self, name: &str, limit: f64) {
        println!(
            "| {name} | {} | {:.1e} | {} (> {limit:.0e}) | {} |",
            self.n, self.max, self.over, self.fail
        );
    }
}

fn main() {
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let (mut gjk_t, mut gjk_p, mut epa_t, mut epa_p) = (
        Stat::default(),
        Stat::default(),
        Stat::default(),
        Stat::default(),
    );
    let (mut cp_t, mut cp_p) = (Stat::default(), Stat::default());
    for _ in 0..4000 {
        let n = rng.random_range(4..=10);
        let a = random_block(&mut rng, n);
        let b0 = random_block(&mut rng, n);
        let reach = if rng.random_bool(0.5) { 2.5 } else { 0.8 };
        let off = DVec3::new(
            rng.random_range(-reach..reach),
            rng.random_range(-reach..reach),
            rng.random_range(-reach..reach),
        );
        let b = b0.transformed(DQuat::IDENTITY, off);
        let (Some(pa), Some(pb)) = (parry_of(&a), parry_of(&b)) else {
            gjk_p.fail += 1;
            continue;
        };
        let (sat, _) = reference::penetration(a.vertices(), b.vertices());
        if sat < -1e-6 {
            let want = reference::distance(a.vertices(), b.vertices());
            match gjk_distance(&a, &b) {
                Ok(Proximity::Separated(s)) => gjk_t.add((s.distance - want).abs(), 1e-9),
                _ => gjk_t.fail += 1,
            }
            match parry3d_f64::query::distance(&Pose::IDENTITY, &pa, &Pose::IDENTITY, &pb) {
                Ok(d) => gjk_p.add((d.distance - want).abs(), 1e-9),
                Err(_) => gjk_p.fail += 1,
            }
        } else if sat > 1e-6 {
            match epa_penetration(&a, &b) {
                Ok(p) => epa_t.add((p.depth - sat).abs(), 1e-7),
                Err(_) => epa_t.fail += 1,
            }
            match parry3d_f64::query::contact(&Pose::IDENTITY, &pa, &Pose::IDENTITY, &pb, 0.0) {
                Ok(Some(c)) => epa_p.add((-c.dist - sat).abs(), 1e-7),
                _ => epa_p.fail += 1,
            }
        }
        // Closest point of a random query outside block A.
        let q = DVec3::new(
            rng.random_range(-3.0..3.0),
            rng.random_range(-3.0..3.0),
            rng.random_range(-3.0..3.0),
        );
        if !a.contains(q, 1e-6) {
            let (_, want) = reference::closest_point(&a, q);
            let sp = closest_surface_point(&a, q, &mut FacetCache::default());
            cp_t.add((sp.point - want).length(), 1e-9);
            let pp = pa.project_point(&Pose::IDENTITY, v(q), true);
            let got = DVec3::new(pp.point.x, pp.point.y, pp.point.z);
            cp_p.add((got - want).length(), 1e-9);
        }
    }
    println!("| query | cases | max error | cases over limit | failures |");
    println!("| --- | --- | --- | --- | --- |");
    gjk_t.row("GJK distance, talus", 1e-9);
    gjk_p.row("GJK distance, parry", 1e-9);
    epa_t.row("EPA depth, talus", 1e-7);
    epa_p.row("EPA depth, parry", 1e-7);
    cp_t.row("closest point, talus", 1e-9);
    cp_p.row("closest point, parry", 1e-9);

    // Hull robustness: flat, duplicated and near-duplicated clouds.
    let flats = [1.0, 1e-3, 1e-6, 1e-9];
    let mut hull_t: Vec<Stat> = flats.iter().map(|_| Stat::default()).collect();
    let mut hull_p: Vec<Stat> = flats.iter().map(|_| Stat::default()).collect();
    for k in 0..2000 {
        let fi = k % 4;
        let flat = flats[fi];
        let mut pts: Vec<DVec3> = (0..rng.random_range(4..40))
            .map(|_| {
                DVec3::new(
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0) * flat,
                )
            })
            .collect();
        for i in 0..pts.len().min(5) {
            pts.push(pts[i]);
            pts.push(pts[i] + DVec3::splat(1e-13));
        }
        let outside = |tri: &[[u32; 3]], vs: &[DVec3]| {
            // Orientation-agnostic: flip if the triangles face inwards.
            let o = vs[0];
            let vol: f64 = tri
                .iter()
                .map(|t| {
                    (vs[t[0] as usize] - o)
                        .dot((vs[t[1] as usize] - o).cross(vs[t[2] as usize] - o))
                })
                .sum();
            let sign = if vol < 0.0 { -1.0 } else { 1.0 };
            let mut worst = 0.0f64;
            for t in tri {
                let (a, b, c) = (vs[t[0] as usize], vs[t[1] as usize], vs[t[2] as usize]);
                let n = (b - a).cross(c - a).normalize_or_zero() * sign;
                for p in &pts {
                    worst = worst.max(n.dot(*p - a));
                }
            }
            worst
        };
        match talus_geometry::convex_hull(&pts) {
            Ok(h) => hull_t[fi].add(outside(&h.triangles, &h.vertices), 1e-9),
            Err(_) => hull_t[fi].fail += 1,
        }
        let ppts: Vec<Vector> = pts.iter().map(|&p| v(p)).collect();
        match std::panic::catch_unwind(|| parry3d_f64::transformation::convex_hull(&ppts)) {
            Ok((vs, tri)) if !tri.is_empty() => {
                let vs: Vec<DVec3> = vs.iter().map(|p| DVec3::new(p.x, p.y, p.z)).collect();
                hull_p[fi].add(outside(&tri, &vs), 1e-9);
            }
            _ => hull_p[fi].fail += 1,
        }
    }
    for (i, f) in flats.iter().enumerate() {
        let name = format!("hull, points outside a facet plane, thickness {f:.0e}");
        hull_t[i].row(&format!("{name}, talus"), 1e-9);
        hull_p[i].row(&format!("{name}, parry"), 1e-9);
    }

    // Mass properties of an icosahedron under rotation and translation.
    let phi = (1.0 + 5f64.sqrt()) / 2.0;
    let mut ico = Vec::new();
    for p in [1.0, -1.0] {
        for q in [phi, -phi] {
            ico.push(DVec3::new(0.0, p, q));
            ico.push(DVec3::new(p, q, 0.0));
            ico.push(DVec3::new(q, 0.0, p));
        }
    }
    let vol = 5.0 * (3.0 + 5f64.sqrt()) / 12.0 * 8.0;
    let inertia = vol * phi * phi * 4.0 / 10.0;
    let (mut m_t, mut m_p) = (Stat::default(), Stat::default());
    for _ in 0..200 {
        let r = DQuat::from_euler(
            glam::EulerRot::XYZ,
            rng.random_range(0.0..6.0),
            rng.random_range(0.0..6.0),
            rng.random_range(0.0..6.0),
        );
        let t = DVec3::new(
            rng.random_range(-10.0..10.0),
            rng.random_range(-10.0..10.0),
            rng.random_range(-10.0..10.0),
        );
        let pts: Vec<DVec3> = ico.iter().map(|&p| r * p + t).collect();
        let ours = ConvexPolyhedron::from_points(&pts).unwrap();
        let m = ours.mass_properties();
        let err = ((m.volume - vol) / vol)
            .abs()
            .max(((m.principal_moments.x - inertia) / inertia).abs())
            .max(((m.principal_moments.z - inertia) / inertia).abs());
        m_t.add(err, 1e-12);
        let p = parry_of(&ours).unwrap().mass_properties(1.0);
        let pm = p.principal_inertia();
        let err = ((p.mass() - vol) / vol)
            .abs()
            .max(((pm.x - inertia) / inertia).abs())
            .max(((pm.z - inertia) / inertia).abs());
        m_p.add(err, 1e-12);
    }
    m_t.row("icosahedron mass/inertia relative error, talus", 1e-12);
    m_p.row("icosahedron mass/inertia relative error, parry", 1e-12);
}
