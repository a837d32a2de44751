//! The signed distance of curved shapes against a brute-force search over
//! directions: Newton's answer is the largest separation along any
//! direction, and GJK on the moved pair finds the same gap.

use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geometry::{signed_distance, smooth_signed_distance, SignedOptions, SupportMap};

/// An ellipsoid of semi-axes `a`, turned by `q`, centred at `c`.
struct Ellipsoid {
    a: DVec3,
    q: DQuat,
    c: DVec3,
}

impl SupportMap for Ellipsoid {
    fn support_point(&self, dir: DVec3) -> DVec3 {
        let d = self.q.conjugate() * dir;
        self.c + self.q * (d * self.a * self.a / (d * self.a).length())
    }
    fn interior_point(&self) -> DVec3 {
        self.c
    }
}

/// The separation of `a` and `b` along unit `n`.
fn along(a: &Ellipsoid, b: &Ellipsoid, n: DVec3) -> f64 {
    (b.support_point(-n) - a.support_point(n)).dot(n)
}

fn random_ellipsoid(rng: &mut ChaCha8Rng, c: DVec3) -> Ellipsoid {
    let a = DVec3::new(
        rng.random_range(0.3..1.0),
        rng.random_range(0.3..1.0),
        rng.random_range(0.3..1.0),
    );
    let axis = DVec3::new(rng.random(), rng.random(), rng.random()) - 0.5;
    let q = DQuat::from_axis_angle(axis.normalize(), rng.random_range(0.0..3.0));
    Ellipsoid { a, q, c }
}

#[test]
fn newton_finds_the_largest_separation_and_gjk_agrees() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut overlapping = 0;
    for _ in 0..200 {
        let a = random_ellipsoid(&mut rng, DVec3::ZERO);
        let dir = (DVec3::new(rng.random(), rng.random(), rng.random()) - 0.5).normalize();
        let distance = rng.random_range(0.6..2.2);
        let b = random_ellipsoid(&mut rng, dir * distance);
        let c = smooth_signed_distance(&a, &b, DVec3::ZERO, 64).unwrap();
        overlapping += usize::from(c.gap < 0.0);
        // The gap is the separation along the normal found...
        assert!((c.gap - along(&a, &b, c.normal)).abs() < 1e-12);
        // ...and no direction nearby or anywhere separates them more.
        for k in 0..400 {
            let r = if k < 200 { 1e-3 } else { 2.0 };
            let off = DVec3::new(rng.random(), rng.random(), rng.random()) - 0.5;
            let n = (c.normal + r * off).normalize();
            assert!(along(&a, &b, n) <= c.gap + 1e-12, "{n} beats {}", c.normal);
        }
        // GJK on the moved pair: never above the largest separation, and
        // close to it (its normal good to about the square root of GJK's
        // tolerance, the gap to the second order of that; slower to
        // settle in deep overlaps, whose shapes here are about a unit
        // wide).
        let g = signed_distance(&a, &b, DVec3::ZERO, SignedOptions::default()).unwrap();
        assert!(g.gap <= c.gap + 1e-12, "{} vs {}", g.gap, c.gap);
        assert!(c.gap - g.gap < 1e-7, "{} vs {}", g.gap, c.gap);
        assert!((g.normal - c.normal).length() < 1e-3);
    }
    assert!(
        (40..160).contains(&overlapping),
        "{overlapping} of 200 overlap"
    );
}
