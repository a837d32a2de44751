//! The checked surface ([`Solid`]): welded vertices, outward triangles,
//! its box and volume, and where a grid line in `+x` crosses it (the
//! winding number of the module docs, method, step 1).

use glam::DVec3;

use super::bvh::Bvh;
use super::grid::Axis;
use super::RELATIVE_TOLERANCE;
use crate::mass::mass_properties;
use crate::mesh::{closed_edge_pairs, merge_equal_vertices, MeshErrorKind};

/// The checked surface: welded vertices, outward triangles, bounding box,
/// volume and the hierarchy of the distance queries.
pub(super) struct Solid {
    pub(super) points: Vec<DVec3>,
    pub(super) triangles: Vec<[u32; 3]>,
    pub(super) lo: DVec3,
    pub(super) hi: DVec3,
    pub(super) volume: f64,
    pub(super) bvh: Bvh,
}

impl Solid {
    pub(super) fn new(soup: &[[DVec3; 3]]) -> Result<Self, MeshErrorKind> {
        if soup.is_empty() {
            return Err(MeshErrorKind::Empty);
        }
        let corners: Vec<DVec3> = soup.iter().flatten().copied().collect();
        let indices: Vec<[u32; 3]> = (0..soup.len() as u32)
            .map(|t| [3 * t, 3 * t + 1, 3 * t + 2])
            .collect();
        let (points, mut triangles) = merge_equal_vertices(&corners, &indices);
        closed_edge_pairs(&points, &triangles)?;

        let (lo, hi) = points.iter().fold(
            (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
            |(lo, hi), &p| (lo.min(p), hi.max(p)),
        );
        let at = |v: u32| points[v as usize];
        let area: f64 = triangles
            .iter()
            .map(|t| 0.5 * (at(t[1]) - at(t[0])).cross(at(t[2]) - at(t[0])).length())
            .sum();
        let mut volume = mass_properties(&points, &triangles).volume;
        if volume.abs() <= RELATIVE_TOLERANCE * (hi - lo).length() * area {
            return Err(MeshErrorKind::NoVolume);
        }
        if volume < 0.0 {
            for t in &mut triangles {
                t.swap(1, 2);
            }
            volume = -volume;
        }
        let corners: Vec<[DVec3; 3]> = triangles.iter().map(|t| t.map(at)).collect();
        let bvh = Bvh::new(corners);
        Ok(Self {
            points,
            triangles,
            lo,
            hi,
            volume,
            bvh,
        })
    }

    /// The triangles that the line `{(x, y, z)}` in `+x` crosses, as
    /// `(x, +1 leaving | -1 entering)`, sorted by `x`; `candidates` are the
    /// triangles whose `(y, z)` box holds the line.
    pub(super) fn crossings(&self, y: f64, z: f64, candidates: &[u32], out: &mut Vec<(f64, i32)>) {
        out.clear();
        for &t in candidates {
            let [a, b, c] = self.triangles[t as usize].map(|v| self.points[v as usize]);
            if let Some(hit) = line_crossing(a, b, c, y, z) {
                out.push(hit);
            }
        }
        out.sort_unstable_by(|p, q| p.0.total_cmp(&q.0).then(p.1.cmp(&q.1)));
    }

    /// For each line of a family in `+x` at heights `ys` (index `j`) and
    /// `zs` (index `k`), the triangles whose `(y, z)` box may hold it, in
    /// triangle order: `(start, list)` with line `j + ys.len() k` owning
    /// `list[start[l]..start[l + 1]]`.
    pub(super) fn line_buckets(&self, ys: &Axis, zs: &Axis) -> (Vec<usize>, Vec<u32>) {
        let lines = ys.n * zs.n;
        let ranges: Vec<_> = self
            .triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|v| self.points[v as usize]);
                let lo = a.min(b).min(c);
                let hi = a.max(b).max(c);
                (ys.range(lo.y, hi.y), zs.range(lo.z, hi.z))
            })
            .collect();
        let mut start = vec![0usize; lines + 1];
        for ((j0, j1), (k0, k1)) in &ranges {
            for k in *k0..*k1 {
                for j in *j0..*j1 {
                    start[j + ys.n * k + 1] += 1;
                }
            }
        }
        for l in 0..lines {
            start[l + 1] += start[l];
        }
        let mut fill = start.clone();
        let mut list = vec![0u32; start[lines]];
        for (t, ((j0, j1), (k0, k1))) in ranges.iter().enumerate() {
            for k in *k0..*k1 {
                for j in *j0..*j1 {
                    let l = j + ys.n * k;
                    list[fill[l]] = t as u32;
                    fill[l] += 1;
                }
            }
        }
        (start, list)
    }
}

/// Where the line through `(y, z)` in `+x` crosses the triangle `abc`, and
/// whether it leaves (`+1`, the normal's `x` positive) or enters (`-1`)
/// there; `None` when it misses (see the module docs for the rule on
/// edges and vertices).
fn line_crossing(a: DVec3, b: DVec3, c: DVec3, y: f64, z: f64) -> Option<(f64, i32)> {
    let (pa, pb, pc) = ([a.y - y, a.z - z], [b.y - y, b.z - z], [c.y - y, c.z - z]);
    let (w_ab, s_ab) = edge_function(pa, pb);
    let (w_bc, s_bc) = edge_function(pb, pc);
    let (w_ca, s_ca) = edge_function(pc, pa);
    if s_ab == 0 || s_ab != s_bc || s_bc != s_ca {
        return None;
    }
    // Barycentric weights: the weight of a is the area of (p, b, c).
    let sum = w_ab + w_bc + w_ca;
    let x = if sum != 0.0 {
        (w_bc * a.x + w_ca * b.x + w_ab * c.x) / sum
    } else {
        (a.x + b.x + c.x) / 3.0
    };
    Some((x, s_ab))
}

/// Twice the signed area of `(line, u, v)` in the `(y, z)` plane (the line
/// at the origin), and its sign, taken for a zero area as with the line
/// moved by `(e, e^2)`: `-sign(dz)`, else `sign(dy)`, of `d = v - u`.
/// Swapping `u` and `v` negates both exactly.
#[inline]
fn edge_function(u: [f64; 2], v: [f64; 2]) -> (f64, i32) {
    let w = u[0] * v[1] - u[1] * v[0];
    let s = if w > 0.0 {
        1
    } else if w < 0.0 {
        -1
    } else {
        let (dy, dz) = (v[0] - u[0], v[1] - u[1]);
        if dz > 0.0 || (dz == 0.0 && dy < 0.0) {
            -1
        } else if dz < 0.0 || dy > 0.0 {
            1
        } else {
            0
        }
    };
    (w, s)
}
