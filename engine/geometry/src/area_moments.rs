//! Moments of a contact surface: its area, first and second moments as
//! sums over planar polygons, from which the second moments about any
//! point follow.
//!
//! A contact model that spreads a quantity over the contact surface (a
//! dashpot per unit area, say) needs the surface's second moments about
//! the contact location in the contact plane. The surface may come in
//! parts (the faces of one block inside another, the overlaps of one
//! block with several coplanar facets) and its location is known only
//! once all parts are in, so the moments are kept raw, about the frame's
//! origin: parts then add up, and [`AreaMoments::about`] moves the sum to
//! the location. Reads polygons; writes nothing else. Invariant: with
//! non-negative weights the second moments about any point form a
//! positive semi-definite tensor (checked against a brute-force
//! quadrature in the tests).

use glam::{DMat3, DVec3};

/// Weighted area, first and second moments of a set of planar polygons
/// about the origin of their frame: `m0 = sum w A`, `m1 = sum w integral
/// of x dA` and `m2 = sum w integral of x x^T dA`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AreaMoments {
    /// Weighted area `sum w A` (m^2).
    pub area: f64,
    /// First moment `sum w integral x dA` (m^3).
    pub first: DVec3,
    /// Second moment `sum w integral x x^T dA` (m^4): `xx, yy, zz, xy, xz,
    /// yz`.
    pub second: [f64; 6],
}

impl AreaMoments {
    /// Number of values of [`Self::to_array`].
    pub const LEN: usize = 10;

    /// Adds the planar polygon with corners `corners` (in turn, either
    /// way), its area counted `weight` times. A triangle `p0 p1 p2` of area
    /// `A` has `integral x dA = A (p0 + p1 + p2) / 3` and `integral x x^T
    /// dA = A / 12 (sum p_i p_i^T + (sum p_i)(sum p_i)^T)`; a polygon is
    /// the fan of its triangles from its first corner.
    pub fn add_polygon(&mut self, corners: impl IntoIterator<Item = DVec3>, weight: f64) {
        let mut it = corners.into_iter();
        let Some(o) = it.next() else {
            return;
        };
        let Some(mut p) = it.next() else {
            return;
        };
        for q in it {
            let a = 0.5 * (p - o).cross(q - o).length() * weight;
            let s = o + p + q;
            self.area += a;
            self.first += s * (a / 3.0);
            let f = a / 12.0;
            let mut add = |i: usize, v: f64| self.second[i] += f * v;
            let pair = |x: usize, y: usize| o[x] * o[y] + p[x] * p[y] + q[x] * q[y] + s[x] * s[y];
            add(0, pair(0, 0));
            add(1, pair(1, 1));
            add(2, pair(2, 2));
            add(3, pair(0, 1));
            add(4, pair(0, 2));
            add(5, pair(1, 2));
            p = q;
        }
    }

    /// The sum of two sets of polygons in one frame.
    pub fn plus(self, other: Self) -> Self {
        let mut second = self.second;
        for (s, o) in second.iter_mut().zip(other.second) {
            *s += o;
        }
        AreaMoments {
            area: self.area + other.area,
            first: self.first + other.first,
            second,
        }
    }

    /// The same polygons turned by `r` (a rotation matrix) and moved by
    /// `t`: `x -> r x + t`.
    pub fn transformed(self, r: DMat3, t: DVec3) -> Self {
        let m2 = r * self.second_matrix() * r.transpose();
        let f = r * self.first;
        let m2 = m2
            + DMat3::from_cols(f * t.x, f * t.y, f * t.z)
            + DMat3::from_cols(t * f.x, t * f.y, t * f.z)
            + DMat3::from_cols(t * t.x, t * t.y, t * t.z) * self.area;
        AreaMoments {
            area: self.area,
            first: f + t * self.area,
            second: [
                m2.x_axis.x,
                m2.y_axis.y,
                m2.z_axis.z,
                m2.y_axis.x,
                m2.z_axis.x,
                m2.z_axis.y,
            ],
        }
    }

    /// The second moment about the origin as a symmetric matrix.
    pub fn second_matrix(&self) -> DMat3 {
        let [xx, yy, zz, xy, xz, yz] = self.second;
        DMat3::from_cols(
            DVec3::new(xx, xy, xz),
            DVec3::new(xy, yy, yz),
            DVec3::new(xz, yz, zz),
        )
    }

    /// The second moment about point `x`: `integral (p - x)(p - x)^T dA`
    /// `= m2 - m1 x^T - x m1^T + m0 x x^T`.
    pub fn about(&self, x: DVec3) -> DMat3 {
        let f = self.first;
        self.second_matrix()
            - DMat3::from_cols(f * x.x, f * x.y, f * x.z)
            - DMat3::from_cols(x * f.x, x * f.y, x * f.z)
            + DMat3::from_cols(x * x.x, x * x.y, x * x.z) * self.area
    }

    /// The second moments about `x` along the unit axes `s` and `t`:
    /// `[integral ((p - x) . s)^2, integral ((p - x) . t)^2, integral
    /// ((p - x) . s)((p - x) . t)]` (m^4). With `x` the location and `s`,
    /// `t` the contact plane's axes these are the moments of the contact
    /// surface projected on the plane, per unit weight.
    pub fn in_plane(&self, x: DVec3, s: DVec3, t: DVec3) -> [f64; 3] {
        let j = self.about(x);
        [s.dot(j * s), t.dot(j * t), s.dot(j * t)]
    }

    /// The ten values: area, first moment, second moment.
    pub fn to_array(&self) -> [f64; Self::LEN] {
        let [xx, yy, zz, xy, xz, yz] = self.second;
        let f = self.first;
        [self.area, f.x, f.y, f.z, xx, yy, zz, xy, xz, yz]
    }

    /// The moments from the values of [`Self::to_array`].
    pub fn from_slice(v: &[f64]) -> Self {
        AreaMoments {
            area: v[0],
            first: DVec3::new(v[1], v[2], v[3]),
            second: [v[4], v[5], v[6], v[7], v[8], v[9]],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DQuat;

    /// `integral f dA` over the triangle `a b c` by the midpoint rule on a
    /// grid of `n^2` sub-triangles.
    fn quadrature(a: DVec3, b: DVec3, c: DVec3, n: usize, f: impl Fn(DVec3) -> f64) -> f64 {
        let (u, v) = ((b - a) / n as f64, (c - a) / n as f64);
        let small = 0.5 * u.cross(v).length();
        let mut sum = 0.0;
        for i in 0..n {
            for j in 0..n - i {
                let p = a + u * i as f64 + v * j as f64;
                sum += f(p + (u + v) / 3.0) * small;
                if i + j + 1 < n {
                    sum += f(p + (u + v) * (2.0 / 3.0)) * small;
                }
            }
        }
        sum
    }

    fn pentagon() -> Vec<DVec3> {
        let q = DQuat::from_scaled_axis(DVec3::new(0.3, -0.5, 0.2));
        [
            (1.0, 0.0),
            (0.4, 0.9),
            (-0.7, 0.6),
            (-0.8, -0.5),
            (0.3, -0.9),
        ]
        .map(|(x, y)| q * DVec3::new(x, y, 0.0) + DVec3::new(2.0, -1.0, 0.5))
        .to_vec()
    }

    #[test]
    fn a_polygon_against_quadrature() {
        let poly = pentagon();
        let mut m = AreaMoments::default();
        m.add_polygon(poly.iter().copied(), 2.0);
        let x = DVec3::new(1.7, -0.8, 0.9);
        let (s, t) = (DVec3::new(0.6, 0.8, 0.0), DVec3::new(0.0, 0.0, 1.0));
        let got = m.in_plane(x, s, t);
        let mut want = [0.0; 3];
        let mut area = 0.0;
        for w in poly[1..].windows(2) {
            let tri = (poly[0], w[0], w[1]);
            let q = |f: &dyn Fn(DVec3) -> f64| 2.0 * quadrature(tri.0, tri.1, tri.2, 400, f);
            area += q(&|_| 1.0);
            want[0] += q(&|p| (p - x).dot(s).powi(2));
            want[1] += q(&|p| (p - x).dot(t).powi(2));
            want[2] += q(&|p| (p - x).dot(s) * (p - x).dot(t));
        }
        assert!((m.area - area).abs() < 1e-10 * area, "{} {area}", m.area);
        for k in 0..3 {
            let scale = want[0].abs().max(want[1].abs());
            assert!(
                (got[k] - want[k]).abs() < 1e-5 * scale,
                "{k}: {got:?} {want:?}"
            );
        }
    }

    #[test]
    fn a_square_about_its_centre_and_moved_by_a_rigid_motion() {
        // A w by h rectangle in the xy plane: w^3 h / 12 and w h^3 / 12.
        let (w, h) = (3.0, 2.0);
        let rect = [(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)].map(|(x, y)| DVec3::new(x, y, 0.0));
        let mut m = AreaMoments::default();
        m.add_polygon(rect, 1.0);
        let c = DVec3::new(0.5 * w, 0.5 * h, 0.0);
        let [ixx, iyy, ixy] = m.in_plane(c, DVec3::X, DVec3::Y);
        assert!((ixx - w.powi(3) * h / 12.0).abs() < 1e-12);
        assert!((iyy - w * h.powi(3) / 12.0).abs() < 1e-12);
        assert!(ixy.abs() < 1e-12);
        // Turned and moved, the moments about the moved centre along the
        // turned axes are the same.
        let q = DQuat::from_scaled_axis(DVec3::new(0.4, 0.1, -0.7));
        let t = DVec3::new(-1.0, 4.0, 2.5);
        let moved = m.transformed(DMat3::from_quat(q), t);
        let again = moved.in_plane(q * c + t, q * DVec3::X, q * DVec3::Y);
        for (a, b) in again.iter().zip([ixx, iyy, ixy]) {
            assert!((a - b).abs() < 1e-11, "{again:?}");
        }
        // Two halves add up to the whole.
        let (mut l, mut r) = (AreaMoments::default(), AreaMoments::default());
        let half = 0.5 * w;
        l.add_polygon(
            [
                rect[0],
                DVec3::new(half, 0.0, 0.0),
                DVec3::new(half, h, 0.0),
                rect[3],
            ],
            1.0,
        );
        r.add_polygon(
            [
                DVec3::new(half, 0.0, 0.0),
                rect[1],
                rect[2],
                DVec3::new(half, h, 0.0),
            ],
            1.0,
        );
        let whole = l.plus(r).in_plane(c, DVec3::X, DVec3::Y);
        for (a, b) in whole.iter().zip([ixx, iyy, ixy]) {
            assert!((a - b).abs() < 1e-12, "{whole:?}");
        }
        let back = AreaMoments::from_slice(&m.to_array());
        assert_eq!(back, m);
    }
}
