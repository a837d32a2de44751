//! The superellipsoid in closed form: its norm, support map, bounding
//! radius, volume and moments of inertia.
//!
//! The solid is `N(x) <= 1` with the nested norm
//!
//! ```text
//! N(x, y, z) = || ( ||(x/a, y/b)||_n2 , z/c ) ||_n1
//! ```
//!
//! where `||(u, v)||_n = (|u|^n + |v|^n)^(1/n)`; so its surface is
//! `(|x/a|^n2 + |y/b|^n2)^(n1/n2) + |z/c|^n1 = 1`. With `n1 = n2 = 2` it is
//! the ellipsoid of semi-axes `a, b, c`; larger exponents square its
//! sections (`n2` those across z, `n1` those along it) towards the box
//! `2a x 2b x 2c`.
//!
//! Every formula here follows from the nesting, one two-dimensional norm
//! inside another:
//!
//! - Support map. For a direction `d`, let `p = a|dx|`, `q = b|dy|`,
//!   `r = c|dz|` and `m_i = n_i / (n_i - 1)`, the dual exponents. Hölder's
//!   inequality, once in the plane and once outside it, gives the support
//!   function as the dual nested norm,
//!   `h(d) = ||( ||(p, q)||_m2 , r )||_m1`, and the point where equality
//!   holds: with `s = ||(p, q)||_m2` and `S = ||(s, r)||_m1`,
//!   `rho = (s/S)^(m1-1)`, `z/c = (r/S)^(m1-1)`,
//!   `x/a = rho (p/s)^(m2-1)`, `y/b = rho (q/s)^(m2-1)` (signs from `d`).
//!   This is the point where the gradient of the surface's function is
//!   parallel to `d`; at `n = 2` it is the ellipsoid's `A^2 d / |A d|`.
//! - Bounding radius. The largest `x^2 + y^2` on the superellipse
//!   `|x/a|^n + |y/b|^n = 1` is reached where `x^(n-2)/a^n = y^(n-2)/b^n`,
//!   which gives the radius `||(a, b)||_e` with `e = 2n / (n - 2)`
//!   (`max(a, b)` at `n = 2`). The nesting gives, in space,
//!   `R = ||( ||(a, b)||_e2 , c )||_e1`.
//! - Volume and inertia: the beta-function formulas of Jaklič, Leonardis
//!   and Solina (2000), section 2.5, with `eps_i = 2 / n_i`. The centroid
//!   is the origin and the axes are principal, by symmetry.

use crate::special::beta;

/// A superellipsoid: semi-axes `a, b, c` (m) along x, y, z and exponents
/// `n1` (along z) and `n2` (across z), as checked by
/// [`Superellipsoid::new`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Superellipsoid {
    /// Semi-axis along x (m).
    pub a: f64,
    /// Semi-axis along y (m).
    pub b: f64,
    /// Semi-axis along z (m).
    pub c: f64,
    /// Exponent of the sections containing z (north-south).
    pub n1: f64,
    /// Exponent of the sections across z (east-west).
    pub n2: f64,
}

/// Smallest allowed exponent: below 2 the surface's curvature is infinite
/// at the tips on the axes, and below 1 the solid is no longer convex.
pub const MIN_EXPONENT: f64 = 2.0;
/// Largest allowed exponent: near-boxes with edges rounded to about a
/// tenth of the semi-axes.
pub const MAX_EXPONENT: f64 = 10.0;
/// Largest allowed ratio of the longest to the shortest semi-axis.
pub const MAX_ASPECT: f64 = 1e3;

/// `||(x, y)||_e` for `x, y >= 0` and `e >= 1` (`e` may be infinite),
/// scaled so that nothing overflows or underflows needlessly.
pub(crate) fn norm2(x: f64, y: f64, e: f64) -> f64 {
    let (big, small) = if x >= y { (x, y) } else { (y, x) };
    if big == 0.0 {
        return 0.0;
    }
    if e == f64::INFINITY {
        return big;
    }
    big * (1.0 + (small / big).powf(e)).powf(1.0 / e)
}

/// For `x, y >= 0` and an exponent `n` (dual exponent `m = n / (n - 1)`),
/// with `N = (x^m + y^m)^(1/m)`: `((x / N)^(m - 1), (y / N)^(m - 1), N)`,
/// all zero when `x` and `y` are.
///
/// One power, one logarithm and two exponentials where the nested norms
/// took four powers: with `t = (small / big)^m`, `N = big (1 + t)^(1/m)`
/// and `(big / N)^(m - 1) = (1 + t)^(-1/n)`, since `(m - 1) / m = 1 / n`.
/// An axis direction (`small` zero) gives exactly 1 and 0.
fn split(x: f64, y: f64, n: f64) -> (f64, f64, f64) {
    let (big, small) = if x >= y { (x, y) } else { (y, x) };
    if big == 0.0 {
        return (0.0, 0.0, 0.0);
    }
    let m = n / (n - 1.0);
    let ratio = small / big;
    let g = ratio.powf(m - 1.0);
    let l = (g * ratio).ln_1p();
    let f_big = (-l / n).exp();
    let (f_small, norm) = (g * f_big, big * (l / m).exp());
    if x >= y {
        (f_big, f_small, norm)
    } else {
        (f_small, f_big, norm)
    }
}

impl Superellipsoid {
    /// A superellipsoid, or why the values do not make one: the semi-axes
    /// must be finite and positive, at most [`MAX_ASPECT`] times one
    /// another, and the exponents in `[MIN_EXPONENT, MAX_EXPONENT]`.
    pub fn new(a: f64, b: f64, c: f64, n1: f64, n2: f64) -> Result<Self, String> {
        for (name, v) in [("a", a), ("b", b), ("c", c)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!(
                    "semi-axis {name} = {v} must be finite and positive"
                ));
            }
        }
        for (name, n) in [("n1", n1), ("n2", n2)] {
            if !(MIN_EXPONENT..=MAX_EXPONENT).contains(&n) {
                return Err(format!(
                    "exponent {name} = {n} lies outside [{MIN_EXPONENT}, {MAX_EXPONENT}]"
                ));
            }
        }
        let (lo, hi) = (a.min(b).min(c), a.max(b).max(c));
        if hi > MAX_ASPECT * lo {
            return Err(format!(
                "the semi-axes {a}, {b}, {c} differ by more than a factor {MAX_ASPECT}"
            ));
        }
        Ok(Superellipsoid { a, b, c, n1, n2 })
    }

    /// The nested norm `N(x)`: 1 on the surface, less inside.
    pub fn norm(&self, x: [f64; 3]) -> f64 {
        let rho = norm2((x[0] / self.a).abs(), (x[1] / self.b).abs(), self.n2);
        norm2(rho, (x[2] / self.c).abs(), self.n1)
    }

    /// The point of the surface furthest along `d` (finite, non-zero).
    pub fn support(&self, d: [f64; 3]) -> [f64; 3] {
        // Scale d so that its largest component is 1: the support point
        // does not depend on |d|, and nothing below can underflow.
        let top = d.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let p = self.a * (d[0] / top).abs();
        let q = self.b * (d[1] / top).abs();
        let r = self.c * (d[2] / top).abs();
        // The in-plane split first (its norm s is the radius the split
        // along z needs), then the split along z.
        let (fp, fq, s) = split(p, q, self.n2);
        let (fs, w, _) = split(s, r, self.n1);
        let (u, v) = (fs * fp, fs * fq);
        [
            (self.a * u).copysign(d[0]),
            (self.b * v).copysign(d[1]),
            (self.c * w).copysign(d[2]),
        ]
    }

    /// Radius of the smallest sphere about the centre that holds the
    /// solid.
    pub fn bounding_radius(&self) -> f64 {
        let e = |n: f64| {
            if n == 2.0 {
                f64::INFINITY
            } else {
                2.0 * n / (n - 2.0)
            }
        };
        norm2(norm2(self.a, self.b, e(self.n2)), self.c, e(self.n1))
    }

    /// Volume (m^3): `2 a b c e1 e2 B(e1/2 + 1, e1) B(e2/2, e2/2)`.
    pub fn volume(&self) -> f64 {
        let (e1, e2) = (2.0 / self.n1, 2.0 / self.n2);
        2.0 * self.a
            * self.b
            * self.c
            * e1
            * e2
            * beta(e1 / 2.0 + 1.0, e1)
            * beta(e2 / 2.0, e2 / 2.0)
    }

    /// Principal moments of inertia about x, y, z for unit density (m^5).
    pub fn principal_moments(&self) -> [f64; 3] {
        let (a, b, c) = (self.a, self.b, self.c);
        let (e1, e2) = (2.0 / self.n1, 2.0 / self.n2);
        let k = 0.5 * a * b * c * e1 * e2;
        // In-plane term (carries a^2 or b^2) and the term along z.
        let plane = beta(1.5 * e2, 0.5 * e2) * beta(0.5 * e1, 2.0 * e1 + 1.0);
        let along = 4.0 * beta(0.5 * e2, 0.5 * e2 + 1.0) * beta(1.5 * e1, e1 + 1.0);
        [
            k * (b * b * plane + c * c * along),
            k * (a * a * plane + c * c * along),
            k * (a * a + b * b) * plane,
        ]
    }

    /// The surface point of the superquadric angles `eta` (latitude) and
    /// `omega` (longitude), in radians: `x = a C(eta)^e1 C(omega)^e2`,
    /// `y = b C(eta)^e1 S(omega)^e2`, `z = c S(eta)^e1`, with `e = 2/n` and
    /// `C(t)^e` the signed power of the cosine (`S` the sine's).
    pub fn surface_point(&self, eta: f64, omega: f64) -> [f64; 3] {
        let (e1, e2) = (2.0 / self.n1, 2.0 / self.n2);
        let pow = |t: f64, e: f64| t.abs().powf(e).copysign(t);
        let ring = pow(eta.cos(), e1);
        [
            self.a * ring * pow(omega.cos(), e2),
            self.b * ring * pow(omega.sin(), e2),
            self.c * pow(eta.sin(), e1),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_are_refused_with_a_message() {
        let cases = [
            ((0.0, 1.0, 1.0, 2.0, 2.0), "semi-axis a = 0"),
            ((1.0, -1.0, 1.0, 2.0, 2.0), "semi-axis b = -1"),
            ((1.0, 1.0, f64::NAN, 2.0, 2.0), "semi-axis c = NaN"),
            ((1.0, 1.0, f64::INFINITY, 2.0, 2.0), "semi-axis c = inf"),
            ((1.0, 1.0, 1.0, 1.5, 2.0), "n1 = 1.5"),
            ((1.0, 1.0, 1.0, 2.0, 10.5), "n2 = 10.5"),
            ((1.0, 1.0, 1.0, f64::NAN, 2.0), "n1 = NaN"),
            ((1.0, 1.0, 2e3, 2.0, 2.0), "factor"),
        ];
        for ((a, b, c, n1, n2), expected) in cases {
            let err = Superellipsoid::new(a, b, c, n1, n2).unwrap_err();
            assert!(err.contains(expected), "{err} (expected {expected:?})");
        }
        assert!(Superellipsoid::new(1.0, 1e3, 1.0, 2.0, 10.0).is_ok());
    }

    #[test]
    fn surface_points_lie_on_the_surface() {
        let s = Superellipsoid::new(1.0, 0.4, 2.5, 3.0, 7.0).unwrap();
        for i in 0..20 {
            for j in 0..40 {
                let eta = -1.5 + 0.15 * f64::from(i);
                let omega = 0.157 * f64::from(j);
                let n = s.norm(s.surface_point(eta, omega));
                assert!((n - 1.0).abs() < 1e-14, "{eta} {omega}: {n}");
            }
        }
    }

    #[test]
    fn the_norm_scales() {
        let s = Superellipsoid::new(1.0, 2.0, 3.0, 4.0, 2.5).unwrap();
        let x = [0.3, -0.7, 1.1];
        let n = s.norm(x);
        assert!((s.norm(x.map(|v| 3.0 * v)) - 3.0 * n).abs() < 1e-15);
        assert_eq!(s.norm([0.0; 3]), 0.0);
        assert_eq!(s.norm([-1.0, 0.0, 0.0]), 1.0);
        assert_eq!(s.norm([0.0, 0.0, 6.0]), 2.0);
    }
}
