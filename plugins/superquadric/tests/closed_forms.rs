//! The superellipsoid against closed forms and brute force: the ellipsoid
//! and the sphere at exponents 2, a fine integration for volume and
//! inertia, dense samplings of the surface for the support map, the
//! bounding radius and the closest point, and the batched ABI calls
//! against the single ones.

use std::f64::consts::PI;

use talus_plugin_superquadric::Superellipsoid;
use talus_sdk::abi_stable::std_types::{RSlice, RSliceMut};
use talus_sdk::shape::{run_closest_point, run_mass, run_support};
use talus_sdk::{ClosestPoint, ShapeModel, ShapeQuery};

/// splitmix64: a small deterministic generator for test inputs.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [lo, hi).
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }

    /// A direction with components in [-1, 1), not zero.
    fn direction(&mut self) -> [f64; 3] {
        loop {
            let d = [0; 3].map(|_| self.range(-1.0, 1.0));
            if d.iter().any(|v| v.abs() > 1e-3) {
                return d;
            }
        }
    }
}

fn dot(u: [f64; 3], v: [f64; 3]) -> f64 {
    u[0] * v[0] + u[1] * v[1] + u[2] * v[2]
}

fn length(u: [f64; 3]) -> f64 {
    dot(u, u).sqrt()
}

fn shape(a: f64, b: f64, c: f64, n1: f64, n2: f64) -> Superellipsoid {
    Superellipsoid::new(a, b, c, n1, n2).unwrap()
}

/// Shapes across the allowed range: near-ellipsoids, near-boxes, mixed
/// exponents, elongated and flat.
fn shapes() -> Vec<Superellipsoid> {
    vec![
        shape(1.0, 0.7, 0.4, 2.0, 2.0),
        shape(1.0, 1.0, 1.0, 4.0, 4.0),
        shape(0.5, 1.2, 0.8, 3.0, 6.0),
        shape(1.0, 0.6, 0.8, 10.0, 10.0),
        shape(2.0, 0.5, 0.5, 2.0, 10.0),
        shape(0.3, 0.3, 1.5, 10.0, 2.0),
        shape(1.0, 0.8, 0.05, 2.5, 7.5),
    ]
}

/// Points of the whole surface on a `rows x 2 rows` grid of the
/// superquadric angles.
fn sample_surface(s: &Superellipsoid, rows: usize) -> Vec<[f64; 3]> {
    let mut points = Vec::with_capacity(2 * rows * (rows + 1));
    for i in 0..=rows {
        let eta = -PI / 2.0 + PI * i as f64 / rows as f64;
        for j in 0..2 * rows {
            let omega = PI * j as f64 / rows as f64;
            points.push(s.surface_point(eta, omega));
        }
    }
    points
}

#[test]
fn exponents_two_give_the_ellipsoid_s_support_points() {
    let mut rng = Rng(1);
    for _ in 0..50 {
        let (a, b, c) = (
            rng.range(0.1, 3.0),
            rng.range(0.1, 3.0),
            rng.range(0.1, 3.0),
        );
        let s = shape(a, b, c, 2.0, 2.0);
        let size = a.max(b).max(c);
        for _ in 0..40 {
            // A^2 d / |A d| with A = diag(a, b, c).
            let d = rng.direction();
            let ad = [a * d[0], b * d[1], c * d[2]];
            let norm = length(ad);
            let expected = [a * ad[0] / norm, b * ad[1] / norm, c * ad[2] / norm];
            let got = s.support(d);
            for k in 0..3 {
                assert!(
                    (got[k] - expected[k]).abs() <= 1e-12 * size,
                    "{d:?}: {got:?} vs {expected:?}"
                );
            }
        }
    }
    // With equal semi-axes, the sphere's r d / |d|.
    let s = shape(0.8, 0.8, 0.8, 2.0, 2.0);
    for _ in 0..200 {
        let d = rng.direction();
        let (got, n) = (s.support(d), length(d));
        for k in 0..3 {
            assert!((got[k] - 0.8 * d[k] / n).abs() <= 1e-12, "{d:?}: {got:?}");
        }
    }
    // Axis directions give the axis points exactly.
    let s = shape(1.0, 2.0, 3.0, 2.0, 2.0);
    assert_eq!(s.support([0.0, 0.0, -5.0]), [0.0, 0.0, -3.0]);
    assert_eq!(s.support([0.0, 1e-300, 0.0]), [0.0, 2.0, 0.0]);
}

#[test]
fn exponents_two_give_the_ellipsoid_s_volume_and_moments() {
    for (a, b, c) in [
        (1.0, 1.0, 1.0),
        (1.0, 2.0, 3.0),
        (0.02, 0.5, 0.1),
        (7.0, 3.0, 5.0),
    ] {
        let s = shape(a, b, c, 2.0, 2.0);
        let volume = 4.0 / 3.0 * PI * a * b * c;
        let expected = [
            volume * (b * b + c * c) / 5.0,
            volume * (a * a + c * c) / 5.0,
            volume * (a * a + b * b) / 5.0,
        ];
        assert!((s.volume() - volume).abs() <= 1e-12 * volume, "{a} {b} {c}");
        let got = s.principal_moments();
        for k in 0..3 {
            assert!(
                (got[k] - expected[k]).abs() <= 1e-12 * expected[k],
                "{got:?} vs {expected:?}"
            );
        }
        // The sphere's radius, or the longest semi-axis.
        assert_eq!(s.bounding_radius(), a.max(b).max(c));
    }
}

/// Volume and the integrals of x^2, y^2, z^2 over the solid, by an
/// `m x m` midpoint rule in the plane (the extent along z is exact). The
/// substitutions `x = a (1 - u^2)`, `y = y_max (1 - v^2)` remove the
/// steep ends of the integrands at the rim.
fn integrate(s: &Superellipsoid, m: usize) -> [f64; 4] {
    let (n1, n2) = (s.n1, s.n2);
    let h = 1.0 / m as f64;
    let mut sums = [0.0; 4];
    for i in 0..m {
        let u = (i as f64 + 0.5) * h;
        let x = s.a * (1.0 - u * u);
        let dx = 2.0 * s.a * u * h;
        let y_max = s.b * (1.0 - (x / s.a).powf(n2)).max(0.0).powf(1.0 / n2);
        for j in 0..m {
            let v = (j as f64 + 0.5) * h;
            let y = y_max * (1.0 - v * v);
            let dy = 2.0 * y_max * v * h;
            let rho = ((x / s.a).powf(n2) + (y / s.b).powf(n2)).powf(1.0 / n2);
            let z = s.c * (1.0 - rho.powf(n1)).max(0.0).powf(1.0 / n1);
            // Eight octants: the column from -z to z, four times.
            let w = 4.0 * dx * dy;
            sums[0] += w * 2.0 * z;
            sums[1] += w * 2.0 * z * x * x;
            sums[2] += w * 2.0 * z * y * y;
            sums[3] += w * 2.0 * z * z * z / 3.0;
        }
    }
    sums
}

#[test]
fn volume_and_moments_match_a_fine_integration() {
    for s in shapes() {
        let coarse = integrate(&s, 300);
        let fine = integrate(&s, 600);
        let [vol, xx, yy, zz] = fine;
        let moments = [yy + zz, xx + zz, xx + yy];
        let closed = s.principal_moments();
        let coarse_moments = [
            coarse[2] + coarse[3],
            coarse[1] + coarse[3],
            coarse[1] + coarse[2],
        ];
        // The rule's error is estimated from the two resolutions; the
        // closed forms must lie within a few times of it.
        let check = |what: &str, closed: f64, fine: f64, coarse: f64| {
            let error = (fine - coarse).abs().max(1e-12 * fine);
            assert!(
                (closed - fine).abs() <= 4.0 * error && error < 1e-4 * fine,
                "{s:?} {what}: closed {closed}, integrated {fine} (error about {error})"
            );
        };
        check("volume", s.volume(), vol, coarse[0]);
        for k in 0..3 {
            check("moment", closed[k], moments[k], coarse_moments[k]);
        }
    }
}

#[test]
fn support_points_lie_on_the_surface_and_are_furthest() {
    let mut rng = Rng(2);
    for s in shapes() {
        let samples = sample_surface(&s, 150);
        for _ in 0..60 {
            let d = rng.direction();
            let p = s.support(d);
            assert!(
                (s.norm(p) - 1.0).abs() <= 1e-14,
                "{s:?} {d:?}: N = {}",
                s.norm(p)
            );
            let best = samples.iter().map(|&x| dot(d, x)).fold(f64::MIN, f64::max);
            assert!(
                dot(d, p) >= best - 1e-12,
                "{s:?} {d:?}: {} < {best}",
                dot(d, p)
            );
        }
    }
}

#[test]
fn the_bounding_radius_is_the_farthest_surface_point() {
    for s in shapes() {
        let r = s.bounding_radius();
        let far = sample_surface(&s, 400)
            .iter()
            .map(|&x| length(x))
            .fold(0.0, f64::max);
        assert!(
            far <= r * (1.0 + 1e-14),
            "{s:?}: a point at {far} beyond {r}"
        );
        assert!(
            far >= r * (1.0 - 1e-4),
            "{s:?}: no point near {r} (farthest {far})"
        );
    }
}

/// Eberly's nearest point on an ellipsoid, for `q` outside in the positive
/// octant: `p_i = a_i^2 q_i / (t + a_i^2)` with the root `t > 0` of
/// `sum (a_i q_i / (t + a_i^2))^2 = 1`, found by bisection.
fn ellipsoid_nearest(axes: [f64; 3], q: [f64; 3]) -> [f64; 3] {
    let f = |t: f64| {
        (0..3)
            .map(|i| (axes[i] * q[i] / (t + axes[i] * axes[i])).powi(2))
            .sum::<f64>()
            - 1.0
    };
    let (mut lo, mut hi) = (
        0.0,
        10.0 * length(q) * axes.iter().fold(0.0f64, |m, a| m.max(*a)),
    );
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let t = 0.5 * (lo + hi);
    std::array::from_fn(|i| axes[i] * axes[i] * q[i] / (t + axes[i] * axes[i]))
}

fn check_closest(s: &Superellipsoid, q: [f64; 3], c: &ClosestPoint) {
    let size = s.a.max(s.b).max(s.c);
    assert!(
        (s.norm(c.point) - 1.0).abs() <= 1e-13,
        "{s:?} {q:?}: {c:?} off the surface"
    );
    assert!(
        (length(c.normal) - 1.0).abs() <= 1e-14,
        "{s:?} {q:?}: {c:?}"
    );
    for k in 0..3 {
        let back = c.point[k] + c.distance * c.normal[k];
        assert!(
            (back - q[k]).abs() <= 1e-11 * size,
            "{s:?} {q:?}: {c:?} does not lead back"
        );
    }
    assert_eq!(c.distance > 0.0, s.norm(q) > 1.0, "{s:?} {q:?}: {c:?}");
}

#[test]
fn closest_points_on_an_ellipsoid_match_eberly() {
    let mut rng = Rng(3);
    for _ in 0..30 {
        let axes = [
            rng.range(0.2, 2.0),
            rng.range(0.2, 2.0),
            rng.range(0.2, 2.0),
        ];
        let s = shape(axes[0], axes[1], axes[2], 2.0, 2.0);
        for _ in 0..20 {
            let d = rng.direction();
            let q = s
                .support(d)
                .map(|v| v * rng.range(1.0, 4.0) + rng.range(-0.1, 0.1));
            if s.norm(q) <= 1.0 {
                continue;
            }
            let c = s.closest_point(q);
            check_closest(&s, q, &c);
            let expected = ellipsoid_nearest(axes, q.map(f64::abs));
            for k in 0..3 {
                assert!(
                    (c.point[k].abs() - expected[k]).abs() <= 1e-12,
                    "{axes:?} {q:?}: {c:?} vs {expected:?}"
                );
            }
        }
    }
}

/// Points of the surface in the positive octant: a grid of the
/// superquadric angles, and the support points of a grid of directions
/// (which crowd where the first grid thins out, at the edges).
fn sample_octant(s: &Superellipsoid, rows: usize) -> Vec<[f64; 3]> {
    let mut points = Vec::with_capacity(2 * (rows + 1) * (rows + 1));
    for i in 0..=rows {
        let u = PI / 2.0 * i as f64 / rows as f64;
        for j in 0..=rows {
            let v = PI / 2.0 * j as f64 / rows as f64;
            points.push(s.surface_point(u, v));
            points.push(s.support([u.cos() * v.cos(), u.cos() * v.sin(), u.sin()]));
        }
    }
    points
}

#[test]
fn closest_points_are_nearest_among_dense_surface_samples() {
    let mut rng = Rng(4);
    let mut list = shapes();
    for _ in 0..6 {
        let exponent = |rng: &mut Rng| match rng.next_u64() % 4 {
            0 => 2.0,
            1 => 10.0,
            _ => rng.range(2.0, 10.0),
        };
        let (n1, n2) = (exponent(&mut rng), exponent(&mut rng));
        list.push(shape(
            1.0,
            rng.range(0.01, 1.0),
            rng.range(0.01, 1.0),
            n1,
            n2,
        ));
    }
    for s in list {
        let samples = sample_octant(&s, 200);
        let axes = [s.a, s.b, s.c];
        let size = s.a.max(s.b).max(s.c);
        for k in 0..80 {
            let q: [f64; 3] = match k % 5 {
                // Inside, on the ray to a random surface point.
                0 => s.support(rng.direction()).map(|v| v * rng.range(0.0, 1.0)),
                // Near the diagonal of the bounding box, where the faces
                // compete.
                1 => {
                    let t = rng.range(0.0, 1.0);
                    axes.map(|a| t * a * rng.range(0.95, 1.0))
                }
                // Near the centre, at a similar distance from every face.
                2 => {
                    let t = rng.range(0.0, 1.0) * s.a.min(s.b).min(s.c);
                    [0; 3].map(|_| t * rng.range(0.9, 1.1))
                }
                // Close to the surface, on either side.
                3 => s
                    .support(rng.direction())
                    .map(|v| v * rng.range(0.98, 1.02)),
                _ => axes.map(|a| a * rng.range(-1.5, 1.5)),
            };
            let q = q.map(|v| {
                if rng.next_u64().is_multiple_of(2) {
                    v
                } else {
                    -v
                }
            });
            let c = s.closest_point(q);
            check_closest(&s, q, &c);
            let mirrored = q.map(f64::abs);
            let gap = samples
                .iter()
                .map(|&x| length([x[0] - mirrored[0], x[1] - mirrored[1], x[2] - mirrored[2]]))
                .fold(f64::MAX, f64::min);
            assert!(
                c.distance.abs() <= gap + 1e-12 * size,
                "{s:?} {q:?}: {c:?}, a sample is {gap} away"
            );
        }
        // The centre: the nearest point ends the shortest semi-axis.
        let c = s.closest_point([0.0; 3]);
        assert!(
            (c.distance + s.a.min(s.b).min(s.c)).abs() <= 1e-14 * size,
            "{s:?}: {c:?}"
        );
    }
}

fn query<'a>(props: &'a [f64], sets: &'a [u32]) -> ShapeQuery<'a> {
    ShapeQuery {
        props: RSlice::from_slice(props),
        n_props: 5,
        sets: RSlice::from_slice(sets),
    }
}

#[test]
fn batched_calls_equal_single_ones() {
    let list = shapes();
    let props: Vec<f64> = list
        .iter()
        .flat_map(|s| [s.a, s.b, s.c, s.n1, s.n2])
        .collect();
    let mut rng = Rng(5);
    let n = 500;
    let sets: Vec<u32> = (0..n)
        .map(|_| (rng.next_u64() % list.len() as u64) as u32)
        .collect();
    let directions: Vec<[f64; 3]> = (0..n).map(|_| rng.direction()).collect();
    let mut points = vec![[f64::NAN; 3]; n];
    run_support::<Superellipsoid>(
        &query(&props, &sets),
        RSlice::from_slice(&directions),
        RSliceMut::from_mut_slice(&mut points),
    )
    .unwrap();
    let queries: Vec<[f64; 3]> = (0..n)
        .map(|i| points[i].map(|v| v * rng.range(0.5, 1.5)))
        .collect();
    let mut closest = vec![ClosestPoint::default(); n];
    run_closest_point::<Superellipsoid>(
        &query(&props, &sets),
        RSlice::from_slice(&queries),
        RSliceMut::from_mut_slice(&mut closest),
    )
    .unwrap();
    for i in 0..n {
        let s = &list[sets[i] as usize];
        assert_eq!(
            points[i].map(f64::to_bits),
            s.support(directions[i]).map(f64::to_bits),
            "{i}"
        );
        assert_eq!(closest[i], s.closest_point(queries[i]), "{i}");
    }
}

#[test]
fn bad_values_give_messages_not_panics_or_nan() {
    let cases: [(&[f64], &str); 6] = [
        (&[0.0, 1.0, 1.0, 2.0, 2.0], "semi-axis a = 0"),
        (&[1.0, 1.0, 1.0, 2.0, 1.0], "exponent n2 = 1"),
        (&[1.0, 1.0, f64::NAN, 2.0, 2.0], "semi-axis c = NaN"),
        (
            &[1e200, 1e200, 1e200, 2.0, 2.0],
            "outside the range of numbers",
        ),
        (
            &[1e-200, 1e-200, 1e-200, 2.0, 2.0],
            "outside the range of numbers",
        ),
        (&[1.0, 1.0, 1.0, 2.0], "expected 5 property values"),
    ];
    for (props, expected) in cases {
        let err = run_mass::<Superellipsoid>(RSlice::from_slice(props)).unwrap_err();
        assert!(
            err.contains(expected),
            "{props:?}: {err} (expected {expected:?})"
        );
        let mut out = [[0.0; 3]];
        let err = run_support::<Superellipsoid>(
            &query(props, &[]),
            RSlice::from_slice(&[[1.0, 0.0, 0.0]]),
            RSliceMut::from_mut_slice(&mut out),
        )
        .unwrap_err();
        assert_eq!(err.index, 0);
    }
    // Extreme but valid queries give finite answers.
    let s = shape(1.0, 0.5, 0.002, 10.0, 2.0);
    for q in [
        [1e12, -3e11, 2e12],
        [1e-12, 0.0, 0.0],
        [0.0; 3],
        [0.0, 0.0, 0.002],
    ] {
        let c = s.closest_point(q);
        assert!(
            c.point
                .iter()
                .chain(&c.normal)
                .chain([&c.distance])
                .all(|v| v.is_finite()),
            "{q:?}: {c:?}"
        );
    }
    let mass = Superellipsoid::mass_properties(&s);
    assert!(mass.volume > 0.0 && mass.bounding_radius >= 1.0);
}
