//! The pressed surface of an overlap (end1's faces inside end2) against
//! central differences of the overlap itself: the area vector and its
//! moment are the gradient of the overlap volume under a rigid motion of
//! end2, and `area_gradient` is the gradient of the contact area; the
//! elastic foundation's force and moment are the gradient of its energy.

use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geometry::{
    overlap_polyhedron, random_block, ConvexPolyhedron, OverlapCache, OverlapPolyhedron,
    RandomBlock,
};

fn random_unit(rng: &mut ChaCha8Rng) -> DVec3 {
    loop {
        let v = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        );
        if (0.01..1.0).contains(&v.length_squared()) {
            return v.normalize();
        }
    }
}

/// The overlap of `a` and `b`, b moved rigidly by translation `u` and
/// rotation `w` (scaled axis) about `about`.
/// Volume and pressed surface (about `about`) of the pair moved so.
fn moved(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
    u: DVec3,
    w: DVec3,
    about: DVec3,
) -> (f64, DVec3) {
    let o = overlap_moved(a, b, u, w, about);
    (o.volume, o.pressed_surface(about).area_vector)
}

fn overlap_moved(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
    u: DVec3,
    w: DVec3,
    about: DVec3,
) -> OverlapPolyhedron {
    let q = DQuat::from_scaled_axis(w);
    let b = b.transformed(q, about - q * about + u);
    overlap_polyhedron(a, &b, &mut OverlapCache::default()).unwrap()
}

/// Random blocks `a` and `b` of case `case`, b turned at random and
/// pressed into a along a random direction by a random depth, with their
/// overlap; `None` for an overlap too small to difference.
fn pressed_pair(
    case: u64,
    rng: &mut ChaCha8Rng,
) -> Option<(ConvexPolyhedron, ConvexPolyhedron, OverlapPolyhedron)> {
    let spec = RandomBlock {
        semi_axes: DVec3::new(1.0, 0.8, 0.6),
        min_vertices: 8,
        max_vertices: 20,
        roughness: 0.2,
    };
    let a = random_block(&spec, 2 * case).unwrap();
    let b0 = random_block(&spec, 2 * case + 1).unwrap();
    let q = DQuat::from_scaled_axis(random_unit(rng) * rng.random_range(0.0..3.0));
    let dir = random_unit(rng);
    let volume_at = |s: f64| {
        overlap_polyhedron(
            &a,
            &b0.transformed(q, dir * s),
            &mut OverlapCache::default(),
        )
        .map(|o| o.volume)
        .unwrap_or(0.0)
    };
    // Where b along `dir` last overlaps a, by bisection; then pressed in.
    let (mut lo, mut hi) = (0.0, 4.0);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if volume_at(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let b = b0.transformed(q, dir * (lo - rng.random_range(0.02..0.3)));
    let o = overlap_polyhedron(&a, &b, &mut OverlapCache::default()).unwrap();
    (!o.thin && o.volume >= 1e-6).then_some((a, b, o))
}

#[test]
fn pressed_surface_is_the_volume_gradient_and_area_gradient_matches_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut checked = 0;
    for case in 0..60u64 {
        let Some((a, b, o)) = pressed_pair(case, &mut rng) else {
            continue;
        };
        let about = o.centroid + random_unit(&mut rng) * 0.3;
        let p = o.pressed_surface(about);
        let area = p.area_vector.length();
        let n = p.area_vector / area;
        let [gu, gw] = o.area_gradient(n, about);
        // The one-pass answer: the same surface about the centroid, the
        // line of action, and rows that are the axes' area gradients.
        let pc = o.pressed_contact().unwrap();
        let at_c = o.pressed_surface(o.centroid);
        assert_eq!(pc.surface, at_c);
        let at = o.centroid + n.cross(at_c.moment / area);
        assert!((pc.location - at).length() < 1e-15 * (1.0 + at.length()));
        for (row, axis) in pc.jacobian.iter().zip([DVec3::X, DVec3::Y, DVec3::Z]) {
            let g = o.area_gradient(axis, pc.location);
            for (x, y) in row.iter().zip(g) {
                assert!(
                    (*x - y).length() <= 1e-12 * (1.0 + y.length()),
                    "case {case}"
                );
            }
        }
        let h = 1e-6;
        for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
            // Translation.
            let (vp, sp) = moved(&a, &b, axis * h, DVec3::ZERO, about);
            let (vm, sm) = moved(&a, &b, -axis * h, DVec3::ZERO, about);
            let dv = (vp - vm) / (2.0 * h);
            assert!(
                (dv + p.area_vector.dot(axis)).abs() < 1e-6 * area,
                "case {case}: dV/du {dv} vs {}",
                -p.area_vector.dot(axis)
            );
            let da = (sp.length() - sm.length()) / (2.0 * h);
            assert!(
                (da - gu.dot(axis)).abs() < 1e-5 * (1.0 + gu.length()),
                "case {case}: dA/du {da} vs {}",
                gu.dot(axis)
            );
            // Rotation about `about`.
            let (vp, sp) = moved(&a, &b, DVec3::ZERO, axis * h, about);
            let (vm, sm) = moved(&a, &b, DVec3::ZERO, -axis * h, about);
            let dv = (vp - vm) / (2.0 * h);
            assert!(
                (dv + p.moment.dot(axis)).abs() < 1e-6 * area,
                "case {case}: dV/dw {dv} vs {}",
                -p.moment.dot(axis)
            );
            let da = (sp.length() - sm.length()) / (2.0 * h);
            assert!(
                (da - gw.dot(axis)).abs() < 1e-5 * (1.0 + gw.length()),
                "case {case}: dA/dw {da} vs {}",
                gw.dot(axis)
            );
        }
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} overlapping cases");
}

/// The foundation's energy (every plane a surface) of the pair moved so.
fn energy_moved(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
    u: DVec3,
    w: DVec3,
    about: DVec3,
) -> f64 {
    overlap_moved(a, b, u, w, about)
        .foundation(about, |_, _| true, true)
        .energy
}

#[test]
fn foundation_of_faces_pressed_flat_is_a_bed_of_springs() {
    // A box pressed by h into the middle of a larger one's top face, its
    // sides taken as no surfaces: the energy is A h^2 / 2 and the force
    // h A up, through the centroid.
    let a = ConvexPolyhedron::cuboid(DVec3::new(2.0, 2.0, 1.0)).unwrap();
    let h = 0.01;
    let b = ConvexPolyhedron::cuboid(DVec3::new(0.4, 0.3, 0.5))
        .unwrap()
        .transformed(DQuat::IDENTITY, DVec3::new(0.1, -0.2, 1.5 - h));
    let o = overlap_polyhedron(&a, &b, &mut OverlapCache::default()).unwrap();
    let area = 0.8 * 0.6;
    let f = o.foundation(o.centroid, |_, p| p.normal.z.abs() > 0.5, true);
    assert!((f.energy - area * h * h / 2.0).abs() < 1e-12 * area * h * h);
    assert!((f.force - DVec3::Z * area * h).length() < 1e-12 * area * h);
    assert!(f.moment.length() < 1e-12 * area * h);
    // With the sides as surfaces too, the springs along the sides are
    // shorter: along a side the distance is min(z, h - z, s) instead of
    // min(z, h - z), which takes h^3 / 24 per unit length of side from
    // the integral, so the energy is A h^2 / 2 - P h^3 / 12 (P the
    // perimeter) up to the corners' share, of order h^4.
    let all = o.foundation(o.centroid, |_, _| true, true);
    let perimeter = 2.0 * (0.8 + 0.6);
    let expected = area * h * h / 2.0 - perimeter * h.powi(3) / 12.0;
    assert!(
        (all.energy - expected).abs() < 4.0 * h.powi(4),
        "{} vs {expected}",
        all.energy
    );
}

/// On random pairs of blocks pressed together at random, the foundation's
/// force and moment are minus the gradient of its energy under a rigid
/// motion of end2 (central differences).
#[test]
fn foundation_force_is_the_gradient_of_its_energy() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mut checked = 0;
    for case in 0..60u64 {
        let Some((a, b, o)) = pressed_pair(case, &mut rng) else {
            continue;
        };
        let about = o.centroid + random_unit(&mut rng) * 0.3;
        let f = o.foundation(about, |_, _| true, true);
        let scale = f.force.length();
        let h = 1e-6;
        for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
            let de = |u: DVec3, w: DVec3| {
                (energy_moved(&a, &b, u, w, about) - energy_moved(&a, &b, -u, -w, about))
                    / (2.0 * h)
            };
            let du = de(axis * h, DVec3::ZERO);
            assert!(
                (du + f.force.dot(axis)).abs() < 1e-6 * scale,
                "case {case}: dE/du {du} vs {}",
                -f.force.dot(axis)
            );
            let dw = de(DVec3::ZERO, axis * h);
            assert!(
                (dw + f.moment.dot(axis)).abs() < 1e-6 * scale,
                "case {case}: dE/dw {dw} vs {}",
                -f.moment.dot(axis)
            );
        }
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} overlapping cases");
}

#[test]
fn pressed_moments_of_faces_pressed_flat_are_those_of_the_shared_face() {
    // A 2 m cube pressed 0.1 m into another moved 0.5 m along x and turned
    // a little about z: end1's face inside end2 is 1.5 m by 2 m, about
    // (0.25, 0, 1); the side strips inside end2 face away from z and count
    // nothing.
    let a = ConvexPolyhedron::cuboid(DVec3::ONE).unwrap();
    let b = a.transformed(DQuat::IDENTITY, DVec3::new(0.5, 0.0, 1.9));
    let o = overlap_polyhedron(&a, &b, &mut OverlapCache::default()).unwrap();
    let m = o.pressed_moments(DVec3::Z);
    assert!((m.area - 3.0).abs() < 1e-12, "{}", m.area);
    let c = DVec3::new(0.25, 0.0, 1.0);
    let [ixx, iyy, ixy] = m.in_plane(c, DVec3::X, DVec3::Y);
    assert!((ixx - 2.0 * 1.5f64.powi(3) / 12.0).abs() < 1e-12, "{ixx}");
    assert!((iyy - 1.5 * 8.0 / 12.0).abs() < 1e-12, "{iyy}");
    assert!(ixy.abs() < 1e-12, "{ixy}");
    // On random pairs the tensor about the centroid is positive
    // semi-definite, and its area at least the pressed surface's (faces
    // turned away from `n` are left out, not taken off).
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for case in 0..200 {
        let Some((_, _, o)) = pressed_pair(case, &mut rng) else {
            continue;
        };
        let s = o.pressed_surface(o.centroid).area_vector;
        if s.length() <= 0.0 {
            continue;
        }
        let n = s.normalize();
        let m = o.pressed_moments(n);
        assert!(
            m.area >= s.length() * (1.0 - 1e-12),
            "{} {}",
            m.area,
            s.length()
        );
        let (u, v) = (n.any_orthonormal_pair().0, n.any_orthonormal_pair().1);
        let [iuu, ivv, iuv] = m.in_plane(o.centroid, u, v);
        let scale = iuu.abs().max(ivv.abs()).max(1e-300);
        assert!(iuu >= -1e-12 * scale && ivv >= -1e-12 * scale);
        assert!(iuu * ivv - iuv * iuv >= -1e-10 * scale * scale);
    }
}
