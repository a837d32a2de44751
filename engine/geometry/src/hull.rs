//! Robust 3D convex hull (quickhull with conflict lists).
//!
//! Reads: a point cloud. Writes: a closed triangulated hull with outward
//! counter-clockwise triangles and facet adjacency.
//! Invariant: every input point lies on the inner side of every hull
//! triangle plane, or outside it by at most the tolerance `eps`
//! (see [`HullOptions`]); every triangle edge is shared by exactly two
//! triangles, and `neighbors[f][i]` is the triangle across the edge
//! `(triangles[f][i], triangles[f][(i + 1) % 3])`.
//!
//! # Tolerance
//!
//! `eps = relative_tolerance * (max |coordinate| + bounding-box diagonal)`.
//! A point closer than `eps` to the current hull is treated as inside (this
//! merges duplicates and coplanar points); a facet is visible from a point
//! only when the point is more than `eps` above its plane. With the default
//! relative tolerance of 1e-10, points of a unit-size block placed within
//! 1e3 of the origin are merged when closer than about 1e-7 to the hull;
//! near-coplanar points that do stick out by more than `eps` are kept, so
//! neighbouring triangles may be coplanar (they are merged into one
//! bounding plane later by [`crate::ConvexPolyhedron`]).

use glam::DVec3;

use crate::error::GeometryError;

/// Default relative tolerance of hull construction (see the module docs).
pub const DEFAULT_RELATIVE_TOLERANCE: f64 = 1e-10;

/// Options of [`convex_hull_with`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HullOptions {
    /// Tolerance relative to the point cloud scale; default 1e-10.
    pub relative_tolerance: f64,
}

impl Default for HullOptions {
    fn default() -> Self {
        Self {
            relative_tolerance: DEFAULT_RELATIVE_TOLERANCE,
        }
    }
}

/// A closed triangulated convex hull.
#[derive(Debug, Clone, PartialEq)]
pub struct Hull {
    /// Hull vertices (a subset of the input points).
    pub vertices: Vec<DVec3>,
    /// For each hull vertex, its index in the input point slice.
    pub source_indices: Vec<usize>,
    /// Triangles, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
    /// `neighbors[f][i]` is the triangle across edge `i` of triangle `f`.
    pub neighbors: Vec<[u32; 3]>,
    /// Absolute tolerance used (length units).
    pub tolerance: f64,
}

/// Convex hull of `points` with the default tolerance.
///
/// # Errors
/// [`GeometryError::NonFinite`], [`GeometryError::TooFewPoints`],
/// [`GeometryError::Collinear`], [`GeometryError::Coplanar`] for inputs that
/// span no volume, [`GeometryError::IterationCap`] if the construction does
/// not finish (never observed; it is a guard).
pub fn convex_hull(points: &[DVec3]) -> Result<Hull, GeometryError> {
    convex_hull_with(points, HullOptions::default())
}

/// Convex hull of `points` with explicit options.
///
/// # Errors
/// As [`convex_hull`].
pub fn convex_hull_with(points: &[DVec3], options: HullOptions) -> Result<Hull, GeometryError> {
    if points.iter().any(|p| !p.is_finite()) || !options.relative_tolerance.is_finite() {
        return Err(GeometryError::NonFinite);
    }
    if points.len() < 4 {
        return Err(GeometryError::TooFewPoints {
            distinct: points.len(),
        });
    }
    let eps = absolute_tolerance(points, options.relative_tolerance);
    Ok(quickhull(points.to_vec(), eps)?.compact())
}

/// Quickhull over `points` with absolute tolerance `eps`.
pub(crate) fn quickhull(points: Vec<DVec3>, eps: f64) -> Result<IncrementalHull, GeometryError> {
    let seed = initial_simplex(&points, eps)?;
    let mut hull = IncrementalHull::from_tetrahedron(points, seed, eps);
    let n_points = hull.points.len();

    // Conflict lists: each point outside the tetrahedron goes to the face it
    // is farthest above.
    for i in 0..n_points {
        if seed.contains(&i) {
            continue;
        }
        let p = hull.points[i];
        if let Some(f) = hull.farthest_face_above(p, 0..hull.faces.len()) {
            hull.faces[f].outside.push(i);
        }
    }

    // Every step below inserts or drops one point, so `n_points` steps
    // always suffice; the cap only guards against a logic error.
    let cap = n_points + 8;
    let mut steps = 0usize;
    let mut f = 0usize;
    while f < hull.faces.len() {
        if !hull.faces[f].alive || hull.faces[f].outside.is_empty() {
            f += 1;
            continue;
        }
        steps += 1;
        if steps > cap {
            return Err(GeometryError::IterationCap { stage: "hull" });
        }
        let face = &hull.faces[f];
        let (pos, &eye) = face
            .outside
            .iter()
            .enumerate()
            .max_by(|a, b| {
                face.distance(hull.points[*a.1])
                    .total_cmp(&face.distance(hull.points[*b.1]))
            })
            .expect("non-empty outside set");
        match hull.insert(eye, f) {
            Ok(inserted) => {
                let mut orphans = std::mem::take(&mut hull.orphans);
                for &p in &orphans {
                    if p == eye {
                        continue;
                    }
                    let q = hull.points[p];
                    if let Some(nf) = hull.farthest_face_above(q, inserted.clone()) {
                        hull.faces[nf].outside.push(p);
                    }
                }
                orphans.clear();
                hull.orphans = orphans;
                f += 1;
            }
            Err(()) => {
                // The point is so close to the hull that its visible region
                // is not a disc: treat it as inside.
                hull.faces[f].outside.swap_remove(pos);
            }
        }
    }
    Ok(hull)
}

/// Absolute tolerance for a point cloud (see the module docs).
pub(crate) fn absolute_tolerance(points: &[DVec3], relative: f64) -> f64 {
    let mut lo = DVec3::splat(f64::INFINITY);
    let mut hi = DVec3::splat(f64::NEG_INFINITY);
    let mut max_abs = 0.0f64;
    for &p in points {
        lo = lo.min(p);
        hi = hi.max(p);
        max_abs = max_abs.max(p.abs().max_element());
    }
    relative * (max_abs + (hi - lo).length()).max(f64::MIN_POSITIVE)
}

/// Four points spanning a tetrahedron of non-negligible volume.
pub(crate) fn initial_simplex(points: &[DVec3], eps: f64) -> Result<[usize; 4], GeometryError> {
    // Extreme points along the axes; the farthest pair among them starts the
    // simplex.
    let mut extremes = [0usize; 6];
    for (i, p) in points.iter().enumerate() {
        for axis in 0..3 {
            if p[axis] < points[extremes[2 * axis]][axis] {
                extremes[2 * axis] = i;
            }
            if p[axis] > points[extremes[2 * axis + 1]][axis] {
                extremes[2 * axis + 1] = i;
            }
        }
    }
    let (mut i0, mut i1, mut best) = (0, 0, -1.0);
    for &a in &extremes {
        for &b in &extremes {
            let d = points[a].distance_squared(points[b]);
            if d > best {
                (i0, i1, best) = (a, b, d);
            }
        }
    }
    if best.sqrt() <= eps {
        return Err(GeometryError::TooFewPoints { distinct: 1 });
    }
    let axis = (points[i1] - points[i0]).normalize();
    let (mut i2, mut best) = (0, -1.0);
    for (i, &p) in points.iter().enumerate() {
        let r = p - points[i0];
        let d = (r - axis * r.dot(axis)).length_squared();
        if d > best {
            (i2, best) = (i, d);
        }
    }
    if best.sqrt() <= eps {
        return Err(GeometryError::Collinear);
    }
    let normal = (points[i1] - points[i0])
        .cross(points[i2] - points[i0])
        .normalize();
    let (mut i3, mut best) = (0, -1.0);
    for (i, &p) in points.iter().enumerate() {
        let d = (p - points[i0]).dot(normal).abs();
        if d > best {
            (i3, best) = (i, d);
        }
    }
    if best <= eps {
        return Err(GeometryError::Coplanar);
    }
    Ok([i0, i1, i2, i3])
}

/// One triangle of an [`IncrementalHull`].
#[derive(Debug, Clone)]
pub(crate) struct Face {
    pub v: [usize; 3],
    pub adj: [usize; 3],
    pub normal: DVec3,
    pub offset: f64,
    pub alive: bool,
    pub outside: Vec<usize>,
    stamp: u32,
}

impl Face {
    fn new(points: &[DVec3], v: [usize; 3]) -> Self {
        let (a, b, c) = (points[v[0]], points[v[1]], points[v[2]]);
        let n = (b - a).cross(c - a);
        let len = n.length();
        let normal = if len > 0.0 { n / len } else { DVec3::ZERO };
        let offset = normal.dot((a + b + c) / 3.0);
        Self {
            v,
            adj: [usize::MAX; 3],
            normal,
            offset,
            alive: true,
            outside: Vec::new(),
            stamp: 0,
        }
    }

    /// Signed distance of `p` above the face plane.
    #[inline]
    pub fn distance(&self, p: DVec3) -> f64 {
        self.normal.dot(p) - self.offset
    }
}

/// Hull under construction, shared by quickhull and EPA.
#[derive(Debug, Clone)]
pub(crate) struct IncrementalHull {
    pub points: Vec<DVec3>,
    pub faces: Vec<Face>,
    pub eps: f64,
    stamp: u32,
    /// Outside points of the faces removed by the last insertion.
    pub orphans: Vec<usize>,
    visible: Vec<usize>,
    horizon: Vec<(usize, usize, usize)>,
}

impl IncrementalHull {
    /// Starts from the tetrahedron `t` (indices into `points`).
    pub fn from_tetrahedron(points: Vec<DVec3>, t: [usize; 4], eps: f64) -> Self {
        let [a, b, c, d] = t;
        let above = (points[b] - points[a])
            .cross(points[c] - points[a])
            .dot(points[d] - points[a])
            > 0.0;
        // Orient every face so that the opposite vertex lies below it.
        let tris = if above {
            [[a, c, b], [a, b, d], [b, c, d], [c, a, d]]
        } else {
            [[a, b, c], [a, d, b], [b, d, c], [c, d, a]]
        };
        let mut faces: Vec<Face> = tris.iter().map(|&v| Face::new(&points, v)).collect();
        link_adjacency(&mut faces);
        Self {
            points,
            faces,
            eps,
            stamp: 0,
            orphans: Vec::new(),
            visible: Vec::new(),
            horizon: Vec::new(),
        }
    }

    /// Among `candidates`, the live face that `p` lies farthest above (by
    /// more than `eps`).
    pub fn farthest_face_above(
        &self,
        p: DVec3,
        candidates: std::ops::Range<usize>,
    ) -> Option<usize> {
        let mut best = None;
        let mut best_d = self.eps;
        for f in candidates {
            let face = &self.faces[f];
            if !face.alive {
                continue;
            }
            let d = face.distance(p);
            if d > best_d {
                best_d = d;
                best = Some(f);
            }
        }
        best
    }

    /// Adds point `eye` (an index into `points`), which must lie above the
    /// live face `seed`. Returns the range of the new faces. The outside
    /// points of the removed faces are left in `orphans`.
    ///
    /// Fails, leaving the hull unchanged, when the region visible from the
    /// point is not a topological disc (possible only for points within a
    /// few rounding errors of the hull).
    pub fn insert(&mut self, eye: usize, seed: usize) -> Result<std::ops::Range<usize>, ()> {
        self.stamp = self.stamp.wrapping_add(1).max(1);
        let stamp = self.stamp;
        let p = self.points[eye];
        self.visible.clear();
        self.horizon.clear();
        self.visible.push(seed);
        self.faces[seed].stamp = stamp;
        let mut k = 0;
        while k < self.visible.len() {
            let f = self.visible[k];
            k += 1;
            for i in 0..3 {
                let n = self.faces[f].adj[i];
                if self.faces[n].stamp == stamp {
                    continue;
                }
                if self.faces[n].distance(p) > self.eps {
                    self.faces[n].stamp = stamp;
                    self.visible.push(n);
                }
            }
        }
        // Collect the horizon. A new face (a, b, eye) that would fold
        // inwards against its horizon neighbour (the neighbour's far vertex
        // lies above it) means the neighbour is visible within the
        // tolerance: add it and collect again, so the hull stays convex
        // instead of amplifying an eps-sized error at a thin facet.
        for _round in 0..self.faces.len() {
            self.horizon.clear();
            for &f in &self.visible {
                let face = &self.faces[f];
                for i in 0..3 {
                    let n = face.adj[i];
                    if self.faces[n].stamp != stamp {
                        self.horizon.push((face.v[i], face.v[(i + 1) % 3], n));
                    }
                }
            }
            let mut grown = false;
            for h in 0..self.horizon.len() {
                let (a, b, n) = self.horizon[h];
                if self.faces[n].stamp == stamp {
                    continue;
                }
                let far = self.faces[n]
                    .v
                    .into_iter()
                    .find(|&v| v != a && v != b)
                    .unwrap_or(a);
                let probe = Face::new(&self.points, [a, b, eye]);
                if probe.normal != DVec3::ZERO && probe.distance(self.points[far]) > self.eps {
                    self.faces[n].stamp = stamp;
                    self.visible.push(n);
                    grown = true;
                }
            }
            if !grown {
                break;
            }
        }
        // Order the horizon into one closed loop; refuse anything else.
        let m = self.horizon.len();
        if m < 3 {
            return Err(());
        }
        for i in 0..m - 1 {
            let end = self.horizon[i].1;
            let next = (i + 1..m).find(|&j| self.horizon[j].0 == end).ok_or(())?;
            self.horizon.swap(i + 1, next);
        }
        if self.horizon[m - 1].1 != self.horizon[0].0 {
            return Err(());
        }
        // A loop that visits a vertex twice is not a simple horizon.
        for i in 0..m {
            for j in i + 1..m {
                if self.horizon[i].0 == self.horizon[j].0 {
                    return Err(());
                }
            }
        }

        for &f in &self.visible {
            let face = &mut self.faces[f];
            face.alive = false;
            self.orphans.append(&mut face.outside);
        }
        let first = self.faces.len();
        for (k, &(a, b, n)) in self.horizon.iter().enumerate() {
            let mut face = Face::new(&self.points, [a, b, eye]);
            let me = first + k;
            face.adj = [n, first + (k + 1) % m, first + (k + m - 1) % m];
            let nf = &mut self.faces[n];
            for j in 0..3 {
                if nf.v[j] == b && nf.v[(j + 1) % 3] == a {
                    nf.adj[j] = me;
                }
            }
            self.faces.push(face);
        }
        Ok(first..first + m)
    }

    /// Live faces with vertices renumbered densely.
    pub fn compact(&self) -> Hull {
        let mut new_face = vec![u32::MAX; self.faces.len()];
        let mut n_faces = 0u32;
        for (i, f) in self.faces.iter().enumerate() {
            if f.alive {
                new_face[i] = n_faces;
                n_faces += 1;
            }
        }
        let mut new_vertex = vec![u32::MAX; self.points.len()];
        let mut vertices = Vec::new();
        let mut source_indices = Vec::new();
        let mut triangles = Vec::with_capacity(n_faces as usize);
        let mut neighbors = Vec::with_capacity(n_faces as usize);
        for f in self.faces.iter().filter(|f| f.alive) {
            let mut t = [0u32; 3];
            for (i, &v) in f.v.iter().enumerate() {
                if new_vertex[v] == u32::MAX {
                    new_vertex[v] = vertices.len() as u32;
                    vertices.push(self.points[v]);
                    source_indices.push(v);
                }
                t[i] = new_vertex[v];
            }
            triangles.push(t);
            neighbors.push([new_face[f.adj[0]], new_face[f.adj[1]], new_face[f.adj[2]]]);
        }
        Hull {
            vertices,
            source_indices,
            triangles,
            neighbors,
            tolerance: self.eps,
        }
    }
}

/// Fills `adj` of a small closed face set by matching reversed edges.
fn link_adjacency(faces: &mut [Face]) {
    for f in 0..faces.len() {
        for i in 0..3 {
            let (a, b) = (faces[f].v[i], faces[f].v[(i + 1) % 3]);
            for g in 0..faces.len() {
                if g == f {
                    continue;
                }
                for j in 0..3 {
                    if faces[g].v[j] == b && faces[g].v[(j + 1) % 3] == a {
                        faces[f].adj[i] = g;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube_corners() -> Vec<DVec3> {
        let mut v = Vec::new();
        for i in 0..8 {
            v.push(DVec3::new(
                (i & 1) as f64,
                ((i >> 1) & 1) as f64,
                ((i >> 2) & 1) as f64,
            ));
        }
        v
    }

    fn check_closed(h: &Hull) {
        for (f, t) in h.triangles.iter().enumerate() {
            for i in 0..3 {
                let n = h.neighbors[f][i] as usize;
                let (a, b) = (t[i], t[(i + 1) % 3]);
                let nt = h.triangles[n];
                assert!((0..3).any(|j| nt[j] == b && nt[(j + 1) % 3] == a));
            }
        }
        // Euler characteristic of a closed triangulated sphere.
        assert_eq!(h.vertices.len(), 2 + h.triangles.len() / 2);
    }

    #[test]
    fn cube_with_duplicates_and_face_points() {
        let mut pts = cube_corners();
        pts.extend(cube_corners());
        pts.push(DVec3::new(0.5, 0.5, 0.0));
        pts.push(DVec3::new(0.5, 0.5, 0.5));
        pts.push(DVec3::new(1.0, 0.3, 0.7));
        let h = convex_hull(&pts).unwrap();
        assert_eq!(h.vertices.len(), 8);
        assert_eq!(h.triangles.len(), 12);
        check_closed(&h);
    }

    #[test]
    fn degenerate_inputs_fail_cleanly() {
        let line: Vec<DVec3> = (0..10).map(|i| DVec3::X * i as f64).collect();
        assert_eq!(convex_hull(&line), Err(GeometryError::Collinear));
        let plane: Vec<DVec3> = (0..10)
            .map(|i| DVec3::new(i as f64, (i * i) as f64, 0.0))
            .collect();
        assert_eq!(convex_hull(&plane), Err(GeometryError::Coplanar));
        let same = vec![DVec3::ONE; 5];
        assert!(matches!(
            convex_hull(&same),
            Err(GeometryError::TooFewPoints { .. })
        ));
        let nan = vec![DVec3::NAN; 5];
        assert_eq!(convex_hull(&nan), Err(GeometryError::NonFinite));
    }
}
