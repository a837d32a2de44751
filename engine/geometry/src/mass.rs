//! Mass properties of closed triangulated solids by tetrahedral decomposition.
//!
//! Reads: vertices and outward counter-clockwise triangles. Writes: volume,
//! centroid, inertia tensor about the centroid (unit density) and its
//! principal axes.
//! Invariant: the inertia tensor is symmetric; `principal_axes` is a proper
//! rotation (columns orthonormal, determinant +1) with
//! `inertia = axes * diag(principal_moments) * axes^T`, moments ascending.
//!
//! # Model
//!
//! Each triangle `(a, b, c)` forms a tetrahedron with a reference point `o`
//! (the vertex mean, for conditioning). With `u = a - o`, `v = b - o`,
//! `w = c - o` and `J = det[u v w]` (six times the signed volume), the
//! second moment of the tetrahedron about `o` is
//! `J / 120 * (u u^T + v v^T + w w^T + s s^T)` with `s = u + v + w`, and its
//! first moment is `J / 24 * s`. Summing these over the surface and moving
//! the second moment `S` to the centroid gives the inertia tensor
//! `I = tr(S) 1 - S`. The sums also take the moments of solids that are not
//! tetrahedra (the rounded shell of [`crate::rounding`]) before that last
//! step, about the same reference point.
//!
//! # Units
//!
//! Volume in m^3, inertia in m^5 (multiply by the density in kg/m^3 to get
//! kg m^2).

use glam::{DMat3, DQuat, DVec3};

/// Volume, centroid and inertia of a solid of unit density.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MassProperties {
    /// Volume (m^3).
    pub volume: f64,
    /// Centroid (centre of volume) (m).
    pub centroid: DVec3,
    /// Inertia tensor about the centroid for unit density (m^5).
    pub inertia: DMat3,
    /// Principal moments, ascending (m^5).
    pub principal_moments: DVec3,
    /// Principal axes as columns, matching `principal_moments`.
    pub principal_axes: DMat3,
}

impl MassProperties {
    /// Mass for the given density (kg).
    pub fn mass(&self, density: f64) -> f64 {
        self.volume * density
    }

    /// Inertia tensor about the centroid for the given density (kg m^2).
    pub fn inertia_for_density(&self, density: f64) -> DMat3 {
        self.inertia * density
    }

    /// Rotation from the principal frame to the frame of the shape:
    /// `principal_axes` as a unit quaternion (the axes form a right-handed
    /// orthonormal basis, so this is a proper rotation).
    pub fn principal_rotation(&self) -> DQuat {
        DQuat::from_mat3(&self.principal_axes).normalize()
    }
}

/// Mass properties of the closed surface `(vertices, triangles)`.
///
/// The surface must be closed with outward counter-clockwise triangles; a
/// surface of zero volume gives a zero volume and the vertex mean as
/// centroid.
pub fn mass_properties(vertices: &[DVec3], triangles: &[[u32; 3]]) -> MassProperties {
    let origin = vertex_mean(vertices);
    TetraSums::of_surface(vertices, triangles, origin).finish(origin)
}

/// Mean of `vertices` (the origin zero when there are none): the reference
/// point of the tetrahedral sums, chosen for conditioning.
pub(crate) fn vertex_mean(vertices: &[DVec3]) -> DVec3 {
    if vertices.is_empty() {
        DVec3::ZERO
    } else {
        vertices.iter().copied().sum::<DVec3>() / vertices.len() as f64
    }
}

/// Volume integrals of a solid of unit density about a reference point
/// `o`: `volume = ∫ dV` (m^3), `first = ∫ (x - o) dV` (m^4) and
/// `second = ∫ (x - o)(x - o)^T dV` (m^5) (symmetric).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Moments {
    /// Volume (m^3).
    pub(crate) volume: f64,
    /// First moment about the reference point (m^4).
    pub(crate) first: DVec3,
    /// Second moment about the reference point (m^5).
    pub(crate) second: DMat3,
}

impl Moments {
    /// No volume.
    pub(crate) const ZERO: Self = Self {
        volume: 0.0,
        first: DVec3::ZERO,
        second: DMat3::ZERO,
    };
}

impl std::ops::AddAssign for Moments {
    fn add_assign(&mut self, other: Self) {
        self.volume += other.volume;
        self.first += other.first;
        self.second += other.second;
    }
}

/// Sums of the tetrahedral formulas over a closed surface, about a
/// reference point, in the scale the formulas give them: `6 V`,
/// `24 ∫ (x - o) dV` and `120 ∫ (x - o)(x - o)^T dV` (upper triangle only),
/// so that no tetrahedron pays a division.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TetraSums {
    six_volume: f64,
    first: DVec3,
    second: [[f64; 3]; 3],
}

impl TetraSums {
    /// No volume.
    pub(crate) const ZERO: Self = Self {
        six_volume: 0.0,
        first: DVec3::ZERO,
        second: [[0.0; 3]; 3],
    };

    /// Sums over the tetrahedra `(origin, a, b, c)` of every triangle.
    pub(crate) fn of_surface(vertices: &[DVec3], triangles: &[[u32; 3]], origin: DVec3) -> Self {
        let mut six_volume = 0.0;
        let mut first = DVec3::ZERO;
        let mut second = [[0.0f64; 3]; 3];
        for t in triangles {
            let u = vertices[t[0] as usize] - origin;
            let v = vertices[t[1] as usize] - origin;
            let w = vertices[t[2] as usize] - origin;
            let j = u.dot(v.cross(w));
            let s = u + v + w;
            six_volume += j;
            first += s * j;
            for r in 0..3 {
                for c in r..3 {
                    second[r][c] += j * (u[r] * u[c] + v[r] * v[c] + w[r] * w[c] + s[r] * s[c]);
                }
            }
        }
        Self {
            six_volume,
            first,
            second,
        }
    }

    /// Adds the moments `m` of another solid (about the same reference
    /// point) that shares no volume with this one.
    pub(crate) fn add(&mut self, m: &Moments) {
        self.six_volume += 6.0 * m.volume;
        self.first += 24.0 * m.first;
        for r in 0..3 {
            for c in r..3 {
                self.second[r][c] += 120.0 * m.second.col(c)[r];
            }
        }
    }

    /// Volume, centroid, inertia about the centroid and principal axes of
    /// the summed solid; `origin` is the reference point of the sums. A
    /// solid of zero volume gives zero volume and inertia with `origin` as
    /// centroid.
    pub(crate) fn finish(&self, origin: DVec3) -> MassProperties {
        let volume = self.six_volume / 6.0;
        if volume.abs() <= f64::MIN_POSITIVE {
            return MassProperties {
                volume: 0.0,
                centroid: origin,
                inertia: DMat3::ZERO,
                principal_moments: DVec3::ZERO,
                principal_axes: DMat3::IDENTITY,
            };
        }
        // first / 24 is the first moment; divide by the volume for the offset.
        let offset = self.first / (24.0 * volume);
        let mut s = [[0.0f64; 3]; 3];
        for r in 0..3 {
            for c in r..3 {
                let v = self.second[r][c] / 120.0 - volume * offset[r] * offset[c];
                s[r][c] = v;
                s[c][r] = v;
            }
        }
        let trace = s[0][0] + s[1][1] + s[2][2];
        let mut i = [[0.0f64; 3]; 3];
        for r in 0..3 {
            for c in 0..3 {
                i[r][c] = if r == c { trace - s[r][c] } else { -s[r][c] };
            }
        }
        let inertia = DMat3::from_cols(
            DVec3::new(i[0][0], i[1][0], i[2][0]),
            DVec3::new(i[0][1], i[1][1], i[2][1]),
            DVec3::new(i[0][2], i[1][2], i[2][2]),
        );
        let (principal_moments, principal_axes) = symmetric_eigen(inertia);
        MassProperties {
            volume,
            centroid: origin + offset,
            inertia,
            principal_moments,
            principal_axes,
        }
    }
}

/// Eigen-decomposition of a symmetric 3x3 matrix by cyclic Jacobi rotations.
///
/// Returns ascending eigenvalues and the matching eigenvectors as the columns
/// of a proper rotation. Converges quadratically; capped at 64 sweeps, after
/// which the current (already accurate) estimate is returned.
#[expect(
    clippy::needless_range_loop,
    reason = "index loops mirror the Jacobi rotation formulas"
)]
pub fn symmetric_eigen(m: DMat3) -> (DVec3, DMat3) {
    let mut a = [[0.0f64; 3]; 3];
    for r in 0..3 {
        for c in 0..3 {
            a[r][c] = 0.5 * (m.col(c)[r] + m.col(r)[c]);
        }
    }
    let mut v = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0f64]];
    let scale = a.iter().flatten().fold(0.0f64, |x, y| x.max(y.abs()));
    for _sweep in 0..64 {
        let off = a[0][1].abs() + a[0][2].abs() + a[1][2].abs();
        if off <= 1e-300 || off <= f64::EPSILON * 1e-3 * scale {
            break;
        }
        for (p, q) in [(0usize, 1usize), (0, 2), (1, 2)] {
            if a[p][q] == 0.0 {
                continue;
            }
            let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
            let t = if theta == 0.0 { 1.0 } else { t };
            let c = 1.0 / (t * t + 1.0).sqrt();
            let s = t * c;
            for k in 0..3 {
                let (akp, akq) = (a[k][p], a[k][q]);
                a[k][p] = c * akp - s * akq;
                a[k][q] = s * akp + c * akq;
            }
            for k in 0..3 {
                let (apk, aqk) = (a[p][k], a[q][k]);
                a[p][k] = c * apk - s * aqk;
                a[q][k] = s * apk + c * aqk;
            }
            for row in &mut v {
                let (vkp, vkq) = (row[p], row[q]);
                row[p] = c * vkp - s * vkq;
                row[q] = s * vkp + c * vkq;
            }
        }
    }
    let mut order = [0usize, 1, 2];
    order.sort_by(|&x, &y| a[x][x].total_cmp(&a[y][y]));
    let values = DVec3::new(
        a[order[0]][order[0]],
        a[order[1]][order[1]],
        a[order[2]][order[2]],
    );
    let col = |k: usize| DVec3::new(v[0][k], v[1][k], v[2][k]);
    let (c0, c1) = (col(order[0]), col(order[1]));
    // Rebuild the third axis so the frame is right-handed.
    let c2 = c0.cross(c1);
    (values, DMat3::from_cols(c0, c1, c2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eigen_reconstructs_matrix() {
        let m = DMat3::from_cols(
            DVec3::new(4.0, 1.0, -2.0),
            DVec3::new(1.0, 3.0, 0.5),
            DVec3::new(-2.0, 0.5, 6.0),
        );
        let (l, r) = symmetric_eigen(m);
        let back = r * DMat3::from_diagonal(l) * r.transpose();
        for c in 0..3 {
            assert!((back.col(c) - m.col(c)).length() < 1e-13);
        }
        assert!((r.determinant() - 1.0).abs() < 1e-13);
        assert!(l.x <= l.y && l.y <= l.z);
    }

    #[test]
    fn eigen_of_isotropic_matrix() {
        let (l, r) = symmetric_eigen(DMat3::IDENTITY * 2.5);
        assert_eq!(l, DVec3::splat(2.5));
        assert!((r.determinant() - 1.0).abs() < 1e-15);
    }
}
