//! The exact closest point of a superellipsoid's surface to a point, and
//! the signed distance.
//!
//! The work is done in units of the longest semi-axis and in the octant of
//! the positive coordinates: by the solid's mirror symmetries, the surface
//! point nearest to a query point lies in the query's octant (mirroring a
//! candidate into it never moves it away), so the query's signs are
//! dropped and put back at the end.
//!
//! Everything is written with `E(x) = N(x)^2`, the square of the solid's
//! nested norm ([`Superellipsoid::norm`]). `E` is convex and homogeneous
//! of degree 2, so its Hessian depends on the direction only and stays
//! bounded for exponents of at least 2 (the surface's curvature is finite);
//! at `n1 = n2 = 2` it is the ellipsoid's quadratic form.
//!
//! The local tool is descent on the surface: Newton's method on the
//! distance restricted to the surface, with steps brought back to it along
//! the ray from the centre and a line search, so the distance falls at
//! every step and the method ends at a local minimum.
//!
//! - A point `q` outside: descent starts where the ray from the centre to
//!   `q` leaves the solid. Its answer `p` is certified when `q` lies on the
//!   outward normal at `p`: the tangent plane there then separates `q` from
//!   the convex solid, so no point of the solid is nearer. When it is not
//!   (a local minimum on the far side), the proximal path decides: the
//!   nearest point is `p(t)`, the minimiser of `|p - q|^2 / 2 + t E(p) / 2`,
//!   for the `t > 0` at which `N(p(t)) = 1`. For each `t` that function is
//!   strongly convex (its Hessian is at least the identity), so Newton's
//!   method with a line search finds `p(t)` from anywhere; `N(p(t))` falls
//!   from `N(q)` at `t = 0` and is below 1 once `t > R^2 (|q| / r - 1)` (`R`
//!   the bounding radius, `r` the shortest semi-axis), so the root is
//!   bracketed and found by Newton's method in `t` with bisection as the
//!   safeguard. (For the ellipsoid this is Eberly's method, with `p(t)` in
//!   closed form.)
//! - A point inside: the distance has several local minima on the surface
//!   (a rounded box has one per face) and none of them can be certified
//!   as cheaply. Descent starts from the four points where the surface
//!   meets the lines from `q` along +x, +y, +z and away from the centre,
//!   and the nearest of the four minima is taken. This is the one part
//!   without a proof: the tests check it against dense samplings of the
//!   surface over the whole range of shapes, points near the centre and
//!   near the diagonals included.

use talus_sdk::ClosestPoint;

use crate::geometry::{norm2, Superellipsoid};

/// The norm, its gradient and the Hessian of `E = N^2` at a point.
struct Local {
    norm: f64,
    grad: [f64; 3],
    hess_e: [[f64; 3]; 3],
}

fn dot(u: [f64; 3], v: [f64; 3]) -> f64 {
    u[0] * v[0] + u[1] * v[1] + u[2] * v[2]
}

fn sub(u: [f64; 3], v: [f64; 3]) -> [f64; 3] {
    [u[0] - v[0], u[1] - v[1], u[2] - v[2]]
}

fn length(u: [f64; 3]) -> f64 {
    dot(u, u).sqrt()
}

fn cross(u: [f64; 3], v: [f64; 3]) -> [f64; 3] {
    [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ]
}

/// Two unit vectors that make a right-handed orthonormal frame with the
/// unit vector `n`.
fn tangents(n: [f64; 3]) -> ([f64; 3], [f64; 3]) {
    // The coordinate axis furthest from n.
    let k = (0..3)
        .min_by(|&i, &j| n[i].abs().total_cmp(&n[j].abs()))
        .unwrap_or(0);
    let mut axis = [0.0; 3];
    axis[k] = 1.0;
    let e1 = cross(n, axis);
    let e1 = e1.map(|v| v / length(e1));
    (e1, cross(n, e1))
}

/// Solves `m x = r` by Gaussian elimination with partial pivoting; `None`
/// for a singular matrix.
fn solve<const N: usize>(mut m: [[f64; N]; N], mut r: [f64; N]) -> Option<[f64; N]> {
    for col in 0..N {
        let pivot = (col..N).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        if m[pivot][col] == 0.0 || !m[pivot][col].is_finite() {
            return None;
        }
        m.swap(col, pivot);
        r.swap(col, pivot);
        let top = m[col];
        for row in col + 1..N {
            let f = m[row][col] / top[col];
            for (v, t) in m[row].iter_mut().zip(top).skip(col) {
                *v -= f * t;
            }
            r[row] -= f * r[col];
        }
    }
    let mut x = [0.0; N];
    for row in (0..N).rev() {
        let tail: f64 = (row + 1..N).map(|k| m[row][k] * x[k]).sum();
        x[row] = (r[row] - tail) / m[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

impl Superellipsoid {
    /// `N`, `grad N` and the Hessian of `N^2` at `p` (not the origin). The
    /// last two depend on the direction of `p` only, so they are taken at
    /// the surface point `p / N(p)`, where `F = N^n1` is 1.
    fn local(&self, p: [f64; 3]) -> Local {
        let (n1, n2) = (self.n1, self.n2);
        let norm = self.norm(p);
        let unit = if norm > 0.0 {
            p.map(|v| v / norm)
        } else {
            [self.a, 0.0, 0.0]
        };
        let (x, y, z) = (unit[0] / self.a, unit[1] / self.b, unit[2] / self.c);
        let rho = norm2(x.abs(), y.abs(), n2);
        let (xi, eta) = if rho > 0.0 {
            (x.abs() / rho, y.abs() / rho)
        } else {
            (0.0, 0.0)
        };
        let zeta = z.abs();
        let (sx, sy, sz) = (1f64.copysign(x), 1f64.copysign(y), 1f64.copysign(z));
        let ring = rho.powf(n1 - 1.0);
        let grad = [
            ring * xi.powf(n2 - 1.0) * sx / self.a,
            ring * eta.powf(n2 - 1.0) * sy / self.b,
            zeta.powf(n1 - 1.0) * sz / self.c,
        ];
        // The Hessian of F = N^n1 on the surface, then that of N^2.
        let curl = n1 * rho.powf(n1 - 2.0);
        let diagonal =
            |t: f64| curl * ((n1 - n2) * t.powf(2.0 * n2 - 2.0) + (n2 - 1.0) * t.powf(n2 - 2.0));
        let mut h = [[0.0; 3]; 3];
        h[0][0] = diagonal(xi) / (self.a * self.a);
        h[1][1] = diagonal(eta) / (self.b * self.b);
        h[0][1] = curl * (n1 - n2) * (xi * eta).powf(n2 - 1.0) * sx * sy / (self.a * self.b);
        h[1][0] = h[0][1];
        h[2][2] = n1 * (n1 - 1.0) * zeta.powf(n1 - 2.0) / (self.c * self.c);
        let mut hess_e = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                hess_e[i][j] = 2.0 / n1 * h[i][j] + 2.0 * (2.0 - n1) * grad[i] * grad[j];
            }
        }
        Local { norm, grad, hess_e }
    }

    /// The minimiser of `|p - q|^2 / 2 + t N(p)^2 / 2` for `t >= 0`,
    /// starting from `p`.
    fn proximal(&self, q: [f64; 3], t: f64, mut p: [f64; 3]) -> [f64; 3] {
        let objective = |p: [f64; 3]| {
            let d = sub(p, q);
            0.5 * dot(d, d) + 0.5 * t * self.norm(p).powi(2)
        };
        for _ in 0..100 {
            let l = self.local(p);
            let g: [f64; 3] = std::array::from_fn(|i| p[i] - q[i] + t * l.norm * l.grad[i]);
            let h: [[f64; 3]; 3] = std::array::from_fn(|i| {
                std::array::from_fn(|j| f64::from(u8::from(i == j)) + 0.5 * t * l.hess_e[i][j])
            });
            let Some(step) = solve(h, g.map(|v| -v)) else {
                break;
            };
            let size = length(step);
            // Full steps near the minimiser, where the objective's changes
            // drown in rounding; a backtracking line search further out.
            let mut alpha = 1.0;
            if size > 1e-6 {
                let (start, slope) = (objective(p), dot(g, step));
                while alpha > 1e-12
                    && objective(std::array::from_fn(|i| p[i] + alpha * step[i]))
                        > start + 1e-4 * alpha * slope
                {
                    alpha *= 0.5;
                }
            }
            p = std::array::from_fn(|i| p[i] + alpha * step[i]);
            if size <= 1e-16 {
                break;
            }
        }
        p
    }

    /// The surface point nearest to `q`, for `q` in the closed positive
    /// octant, outside the solid (`N(q) >= 1`), in units of the longest
    /// semi-axis.
    ///
    /// Descent from the point where the ray from the centre to `q` leaves
    /// the solid is fast, and its answer can be certified: a surface point
    /// `p` from which `q` lies along the outward normal is the nearest,
    /// since the tangent plane at `p` separates `q` from the convex solid.
    /// Without that (descent ended at a local minimum on the far side, or
    /// did not converge), the proximal path decides.
    fn nearest_from_outside(&self, q: [f64; 3]) -> [f64; 3] {
        let p = self.descend_from(q, q.map(|v| v / self.norm(q)));
        let l = self.local(p);
        let normal = l.grad.map(|g| g / length(l.grad));
        let away = sub(q, p);
        let along = dot(away, normal);
        let across = length(std::array::from_fn(|i| away[i] - along * normal[i]));
        if along >= 0.0 && across <= 1e-13 * (1.0 + along) {
            return p;
        }
        self.nearest_by_proximal_path(q)
    }

    /// The surface point nearest to `q` outside the solid by the proximal
    /// path (see the module's documentation): slower, but it cannot end
    /// anywhere else.
    fn nearest_by_proximal_path(&self, q: [f64; 3]) -> [f64; 3] {
        let inner = self.a.min(self.b).min(self.c);
        let outer = self.bounding_radius();
        let (mut lo, mut hi) = (
            0.0,
            2.0 * outer * outer * (length(q) / inner - 1.0) + 1e-300,
        );
        let (mut t, mut p) = (0.0, q);
        for _ in 0..200 {
            let l = self.local(p);
            let f = l.norm - 1.0;
            if f.abs() <= 1e-15 {
                break;
            }
            if f > 0.0 {
                lo = t;
            } else {
                hi = t;
            }
            if hi - lo <= 1e-16 * hi {
                break;
            }
            // d N(p(t)) / dt = -N grad N . (I + t H / 2)^-1 grad N.
            let h: [[f64; 3]; 3] = std::array::from_fn(|i| {
                std::array::from_fn(|j| f64::from(u8::from(i == j)) + 0.5 * t * l.hess_e[i][j])
            });
            let slope = solve(h, l.grad).map(|v| -l.norm * dot(l.grad, v));
            let newton = slope.map_or(f64::NAN, |s| t - f / s);
            t = if newton > lo && newton < hi {
                newton
            } else {
                0.5 * (lo + hi)
            };
            p = self.proximal(q, t, p);
        }
        p
    }

    /// The nearest surface point to `q` that descent from the surface point
    /// `p` reaches: Newton's method on the surface (the Hessian of the
    /// Lagrangian in the tangent plane, shifted where it is not positive),
    /// with steps brought back to the surface along the ray from the centre
    /// and a backtracking line search on the distance, which therefore
    /// falls at every step.
    fn descend_from(&self, q: [f64; 3], mut p: [f64; 3]) -> [f64; 3] {
        let half_square = |p: [f64; 3]| 0.5 * dot(sub(p, q), sub(p, q));
        for _ in 0..100 {
            let l = self.local(p);
            let normal = l.grad.map(|g| g / length(l.grad));
            let g = sub(p, q);
            let (e1, e2) = tangents(normal);
            let gradient = [dot(g, e1), dot(g, e2)];
            if gradient[0].hypot(gradient[1]) <= 1e-15 {
                break;
            }
            // The Lagrangian |p - q|^2 / 2 - lambda (N - 1) has the Hessian
            // I - lambda Hess N, and Hess N = Hess E / 2 on the tangent
            // plane (E = N^2, N = 1, grad N normal to it).
            let lambda = dot(g, l.grad) / dot(l.grad, l.grad);
            let hess = |u: [f64; 3], v: [f64; 3]| {
                let hv: [f64; 3] = std::array::from_fn(|i| dot(l.hess_e[i], v));
                dot(u, v) - 0.5 * lambda * dot(u, hv)
            };
            let (h11, h12, h22) = (hess(e1, e1), hess(e1, e2), hess(e2, e2));
            // The smallest eigenvalue; a shift makes the model convex.
            let low = 0.5 * (h11 + h22) - (0.25 * (h11 - h22).powi(2) + h12 * h12).sqrt();
            let shift = if low > 1e-3 { 0.0 } else { 1e-3 - low };
            let (m11, m22) = (h11 + shift, h22 + shift);
            let det = m11 * m22 - h12 * h12;
            let s1 = -(m22 * gradient[0] - h12 * gradient[1]) / det;
            let s2 = -(m11 * gradient[1] - h12 * gradient[0]) / det;
            let step: [f64; 3] = std::array::from_fn(|i| s1 * e1[i] + s2 * e2[i]);
            let slope = s1 * gradient[0] + s2 * gradient[1];
            let start = half_square(p);
            let size = s1.hypot(s2);
            let mut alpha = 1.0;
            let next = loop {
                let trial: [f64; 3] = std::array::from_fn(|i| p[i] + alpha * step[i]);
                let norm = self.norm(trial);
                let trial = trial.map(|v| v / norm);
                // Near the minimum the distance's changes drown in
                // rounding: there the Newton step is taken as it is.
                if size < 1e-7 || half_square(trial) <= start + 1e-4 * alpha * slope {
                    break Some(trial);
                }
                alpha *= 0.5;
                if alpha < 1e-12 {
                    break None;
                }
            };
            match next {
                Some(next) => p = next,
                None => break,
            }
            if size <= 1e-16 {
                break;
            }
        }
        p
    }

    /// The surface point nearest to `q`, for `q` in the closed positive
    /// octant, inside the solid, in units of the longest semi-axis.
    fn nearest_from_inside(&self, q: [f64; 3]) -> [f64; 3] {
        let (n1, n2) = (self.n1, self.n2);
        let (x, y, z) = (q[0] / self.a, q[1] / self.b, q[2] / self.c);
        // Where the surface meets the lines from q along +x, +y and +z.
        let rho_at = (1.0 - z.powf(n1)).max(0.0).powf(1.0 / n1);
        let rho_q = norm2(x, y, n2);
        let along = |own: f64, other: f64| {
            (rho_at.powf(n2) - other.powf(n2))
                .max(0.0)
                .powf(1.0 / n2)
                .max(own)
        };
        let mut seeds = vec![
            [self.a * along(x, y), q[1], q[2]],
            [q[0], self.b * along(y, x), q[2]],
            [
                q[0],
                q[1],
                self.c * (1.0 - rho_q.powf(n1)).max(0.0).powf(1.0 / n1).max(z),
            ],
        ];
        let norm = self.norm(q);
        if norm > 0.0 {
            seeds.push(q.map(|v| v / norm));
        }
        let distance = |p: [f64; 3]| length(sub(p, q));
        seeds
            .into_iter()
            .map(|s| self.descend_from(q, s))
            .min_by(|u, v| distance(*u).total_cmp(&distance(*v)))
            .unwrap_or(q)
    }

    /// The surface point nearest to `query`, the outward normal there and
    /// the signed distance (positive outside).
    pub fn closest_point(&self, query: [f64; 3]) -> ClosestPoint {
        let scale = self.a.max(self.b).max(self.c);
        let unit = Superellipsoid {
            a: self.a / scale,
            b: self.b / scale,
            c: self.c / scale,
            ..*self
        };
        let q = query.map(|v| (v / scale).abs());
        let outside = unit.norm(q) >= 1.0;
        let p = if outside {
            unit.nearest_from_outside(q)
        } else {
            unit.nearest_from_inside(q)
        };
        let grad = unit.local(p).grad;
        let size = length(grad);
        // Back to the query's octant (the nearest point lies in it; a
        // component that rounding left just below zero is mirrored too).
        let point: [f64; 3] = std::array::from_fn(|i| (scale * p[i]).abs().copysign(query[i]));
        let normal: [f64; 3] = std::array::from_fn(|i| (grad[i] / size).abs().copysign(query[i]));
        let gap = scale * length(sub(p, q));
        ClosestPoint {
            point,
            normal,
            distance: if outside { gap } else { -gap },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sphere_gives_the_radial_point() {
        let s = Superellipsoid::new(2.0, 2.0, 2.0, 2.0, 2.0).unwrap();
        for q in [
            [3.0, 4.0, 0.0],
            [0.3, -0.4, 1.2],
            [-5.0, 0.0, 1e-9],
            [0.0, 0.0, -2.0],
        ] {
            let c = s.closest_point(q);
            let r = length(q);
            let radial = q.map(|v| 2.0 * v / r);
            assert!((c.distance - (r - 2.0)).abs() < 1e-14, "{q:?}: {c:?}");
            for i in 0..3 {
                assert!((c.point[i] - radial[i]).abs() < 1e-14, "{q:?}: {c:?}");
                assert!((c.normal[i] - q[i] / r).abs() < 1e-14, "{q:?}: {c:?}");
            }
        }
    }

    #[test]
    fn the_centre_of_a_box_is_nearest_to_its_closest_face() {
        let s = Superellipsoid::new(1.0, 0.6, 0.8, 8.0, 8.0).unwrap();
        let c = s.closest_point([0.0; 3]);
        assert!((c.distance + 0.6).abs() < 1e-14, "{c:?}");
        assert!((c.point[1].abs() - 0.6).abs() < 1e-14, "{c:?}");
        assert!((c.normal[1].abs() - 1.0).abs() < 1e-14, "{c:?}");
    }

    #[test]
    fn linear_systems() {
        let x = solve([[2.0, 1.0], [1.0, 3.0]], [3.0, 5.0]).unwrap();
        assert!((x[0] - 0.8).abs() < 1e-15 && (x[1] - 1.4).abs() < 1e-15);
        let x = solve([[0.0, 1.0], [1.0, 0.0]], [2.0, 3.0]).unwrap();
        assert_eq!(x, [3.0, 2.0]);
        assert!(solve([[1.0, 2.0], [2.0, 4.0]], [1.0, 1.0]).is_none());
    }
}

#[cfg(test)]
mod derivative_tests {
    use super::*;

    #[test]
    fn the_hessian_and_gradient_match_finite_differences() {
        let shapes = [
            Superellipsoid::new(1.0, 0.43, 0.40, 2.0, 6.4).unwrap(),
            Superellipsoid::new(1.0, 0.7, 0.5, 3.0, 5.0).unwrap(),
            Superellipsoid::new(1.0, 0.7, 0.5, 7.0, 2.5).unwrap(),
        ];
        for s in shapes {
            for p in [
                [0.3, 0.2, 0.35],
                [0.9, 0.1, 0.05],
                [0.05, 0.02, 0.39],
                [0.5, 0.3, 0.2],
            ] {
                let l = s.local(p);
                let grad_e = |x: [f64; 3]| {
                    let l = s.local(x);
                    l.grad.map(|g| 2.0 * l.norm * g)
                };
                let h = 1e-6;
                for j in 0..3 {
                    let mut up = p;
                    up[j] += h;
                    let mut down = p;
                    down[j] -= h;
                    let (gu, gd) = (grad_e(up), grad_e(down));
                    for i in 0..3 {
                        let fd = (gu[i] - gd[i]) / (2.0 * h);
                        let h_ij = l.hess_e[i][j];
                        assert!(
                            (fd - h_ij).abs() < 1e-5 * (1.0 + fd.abs()),
                            "{s:?} {p:?} {i} {j}: {h_ij} vs {fd}"
                        );
                    }
                }
                for j in 0..3 {
                    let mut up = p;
                    up[j] += h;
                    let mut down = p;
                    down[j] -= h;
                    let fd = (s.norm(up) - s.norm(down)) / (2.0 * h);
                    assert!(
                        (fd - l.grad[j]).abs() < 1e-7,
                        "grad {j}: {} vs {fd}",
                        l.grad[j]
                    );
                }
            }
        }
    }
}

#[test]
fn descent_and_the_proximal_path_agree_outside() {
    let s = Superellipsoid::new(1.0, 0.3, 0.6, 3.0, 8.0).unwrap();
    for q in [
        [1.2, 0.1, 0.3],
        [0.0, 0.31, 0.0],
        [2.0, 2.0, 2.0],
        [0.05, 0.02, 0.9],
        [0.9, 0.29, 0.01],
    ] {
        let by_descent = s.nearest_from_outside(q);
        let by_path = s.nearest_by_proximal_path(q);
        for k in 0..3 {
            assert!(
                (by_descent[k] - by_path[k]).abs() < 1e-13,
                "{q:?}: {by_descent:?} vs {by_path:?}"
            );
        }
    }
}
