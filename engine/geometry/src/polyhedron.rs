//! Convex polyhedron: vertices, triangulated facets, adjacency, half-spaces.
//!
//! Reads: a point cloud (through [`crate::hull`]) or a set of half-spaces
//! (through the dual-space construction of [`crate::overlap`]). Writes: an
//! immutable [`ConvexPolyhedron`].
//! Invariant: facets are counter-clockwise seen from outside; every facet
//! edge is shared by exactly two facets; every vertex satisfies every
//! bounding plane within `tolerance`; `bounding_planes` holds one plane per
//! group of coplanar facets, with the outward normal of unit length.

use glam::{DQuat, DVec3};

use crate::error::GeometryError;
use crate::hull::{convex_hull_with, Hull, HullOptions};
use crate::mass::{mass_properties, MassProperties};

/// An oriented plane; the inner half-space is `normal . x <= offset`.
///
/// In the `a x + b y + c z <= d` form of the half-space description,
/// `(a, b, c) = normal` and `d = offset`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plane {
    /// Outward unit normal.
    pub normal: DVec3,
    /// Signed distance of the plane from the origin along `normal` (m).
    pub offset: f64,
}

impl Plane {
    /// Plane through `point` with outward unit `normal`.
    pub fn from_point_normal(point: DVec3, normal: DVec3) -> Self {
        Self {
            normal,
            offset: normal.dot(point),
        }
    }

    /// Signed distance of `p` from the plane (positive outside) (m).
    #[inline]
    pub fn signed_distance(&self, p: DVec3) -> f64 {
        self.normal.dot(p) - self.offset
    }

    /// Coefficients `[a, b, c, d]` of `a x + b y + c z <= d`.
    pub fn coefficients(&self) -> [f64; 4] {
        [self.normal.x, self.normal.y, self.normal.z, self.offset]
    }

    /// The plane after rotating about the origin and then translating.
    pub fn transformed(&self, rotation: DQuat, translation: DVec3) -> Self {
        let normal = rotation * self.normal;
        Self {
            normal,
            offset: self.offset + normal.dot(translation),
        }
    }

    /// The same plane with the inner side flipped.
    pub fn flipped(&self) -> Self {
        Self {
            normal: -self.normal,
            offset: -self.offset,
        }
    }
}

/// An edge of a polyhedron and the two facets that share it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    /// End vertices (lower index first).
    pub vertices: [u32; 2],
    /// The two facets on either side.
    pub facets: [u32; 2],
}

/// A closed convex polyhedron with full facet-edge-vertex adjacency.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvexPolyhedron {
    vertices: Vec<DVec3>,
    facets: Vec<[u32; 3]>,
    facet_neighbors: Vec<[u32; 3]>,
    facet_planes: Vec<Plane>,
    facet_bounding_plane: Vec<u32>,
    bounding_planes: Vec<Plane>,
    fan_start: Vec<u32>,
    fans: Vec<u32>,
    ring_start: Vec<u32>,
    rings: Vec<u32>,
    edges: Vec<Edge>,
    mass: MassProperties,
    tolerance: f64,
}

impl ConvexPolyhedron {
    /// Convex hull of a point cloud, with the default hull tolerance.
    ///
    /// # Errors
    /// As [`crate::convex_hull`].
    pub fn from_points(points: &[DVec3]) -> Result<Self, GeometryError> {
        Self::from_points_with(points, HullOptions::default())
    }

    /// Convex hull of a point cloud with explicit hull options.
    ///
    /// # Errors
    /// As [`crate::convex_hull`].
    pub fn from_points_with(points: &[DVec3], options: HullOptions) -> Result<Self, GeometryError> {
        let hull = convex_hull_with(points, options)?;
        Ok(Self::from_hull(hull))
    }

    /// Axis-aligned box centred on the origin with the given half extents.
    ///
    /// # Errors
    /// [`GeometryError::InvalidArgument`] when a half extent is not positive.
    pub fn cuboid(half_extents: DVec3) -> Result<Self, GeometryError> {
        if !half_extents.is_finite() {
            return Err(GeometryError::NonFinite);
        }
        if half_extents.min_element() <= 0.0 {
            return Err(GeometryError::InvalidArgument(
                "half extents must be positive",
            ));
        }
        let mut pts = Vec::with_capacity(8);
        for i in 0..8 {
            pts.push(
                DVec3::new(
                    if i & 1 == 0 { -1.0 } else { 1.0 },
                    if i & 2 == 0 { -1.0 } else { 1.0 },
                    if i & 4 == 0 { -1.0 } else { 1.0 },
                ) * half_extents,
            );
        }
        Self::from_points(&pts)
    }

    /// Intersection of the half-spaces `planes`, given a point strictly
    /// inside all of them (dual-space construction).
    ///
    /// # Errors
    /// [`GeometryError::NoInteriorPoint`] when `interior` is not inside every
    /// half-space by more than the tolerance, [`GeometryError::InvalidArgument`]
    /// when the intersection is unbounded, and the hull errors.
    pub fn from_half_spaces(planes: &[Plane], interior: DVec3) -> Result<Self, GeometryError> {
        let corners = crate::overlap::half_space_vertices(planes, interior)?;
        Self::from_points(&corners)
    }

    /// Builds the adjacency and half-space form of a hull.
    pub(crate) fn from_hull(hull: Hull) -> Self {
        let Hull {
            vertices,
            triangles: facets,
            neighbors: facet_neighbors,
            tolerance,
            ..
        } = hull;
        let n_v = vertices.len();
        let facet_planes: Vec<Plane> = facets
            .iter()
            .map(|t| {
                let (a, b, c) = (
                    vertices[t[0] as usize],
                    vertices[t[1] as usize],
                    vertices[t[2] as usize],
                );
                let n = (b - a).cross(c - a).normalize_or_zero();
                Plane {
                    normal: n,
                    offset: n.dot((a + b + c) / 3.0),
                }
            })
            .collect();

        // Facets around each vertex, in order, walking across edges.
        let mut first_facet = vec![u32::MAX; n_v];
        for (f, t) in facets.iter().enumerate() {
            for &v in t {
                if first_facet[v as usize] == u32::MAX {
                    first_facet[v as usize] = f as u32;
                }
            }
        }
        let mut fan_start = Vec::with_capacity(n_v + 1);
        let mut fans = Vec::with_capacity(facets.len() * 3);
        let mut ring_start = Vec::with_capacity(n_v + 1);
        let mut rings = Vec::with_capacity(facets.len() * 3);
        for v in 0..n_v as u32 {
            fan_start.push(fans.len() as u32);
            ring_start.push(rings.len() as u32);
            let start = first_facet[v as usize];
            let mut f = start;
            for _ in 0..facets.len() {
                fans.push(f);
                let t = facets[f as usize];
                let i = (0..3).find(|&i| t[i] == v).unwrap_or(0);
                // Edge i goes v -> t[i + 1]; its far vertex is a ring member.
                rings.push(t[(i + 1) % 3]);
                f = facet_neighbors[f as usize][i];
                if f == start {
                    break;
                }
            }
        }
        fan_start.push(fans.len() as u32);
        ring_start.push(rings.len() as u32);

        let mut edges = Vec::with_capacity(facets.len() * 3 / 2);
        for (f, t) in facets.iter().enumerate() {
            for i in 0..3 {
                let (a, b) = (t[i], t[(i + 1) % 3]);
                if a < b {
                    edges.push(Edge {
                        vertices: [a, b],
                        facets: [f as u32, facet_neighbors[f][i]],
                    });
                }
            }
        }

        // Group coplanar facets into bounding planes (union-find).
        let mut parent: Vec<u32> = (0..facets.len() as u32).collect();
        fn find(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                parent[x as usize] = parent[parent[x as usize] as usize];
                x = parent[x as usize];
            }
            x
        }
        for e in &edges {
            let [f, g] = e.facets;
            let (pf, pg) = (facet_planes[f as usize], facet_planes[g as usize]);
            let far = facets[g as usize]
                .iter()
                .map(|&v| vertices[v as usize])
                .map(|p| pf.signed_distance(p).abs())
                .fold(0.0f64, f64::max);
            if pf.normal.dot(pg.normal) > 1.0 - 1e-12 && far <= tolerance {
                let (rf, rg) = (find(&mut parent, f), find(&mut parent, g));
                parent[rf.max(rg) as usize] = rf.min(rg);
            }
        }
        let mut facet_bounding_plane = vec![u32::MAX; facets.len()];
        let mut sums: Vec<DVec3> = Vec::new();
        for f in 0..facets.len() {
            let root = find(&mut parent, f as u32) as usize;
            if facet_bounding_plane[root] == u32::MAX {
                facet_bounding_plane[root] = sums.len() as u32;
                sums.push(DVec3::ZERO);
            }
            let id = facet_bounding_plane[root];
            facet_bounding_plane[f] = id;
            let t = facets[f];
            let (a, b, c) = (
                vertices[t[0] as usize],
                vertices[t[1] as usize],
                vertices[t[2] as usize],
            );
            sums[id as usize] += (b - a).cross(c - a);
        }
        let mut bounding_planes: Vec<Plane> = sums
            .iter()
            .map(|s| Plane {
                normal: s.normalize_or_zero(),
                offset: f64::NEG_INFINITY,
            })
            .collect();
        for (f, t) in facets.iter().enumerate() {
            let bp = &mut bounding_planes[facet_bounding_plane[f] as usize];
            for &v in t {
                bp.offset = bp.offset.max(bp.normal.dot(vertices[v as usize]));
            }
        }

        let mass = mass_properties(&vertices, &facets);
        Self {
            vertices,
            facets,
            facet_neighbors,
            facet_planes,
            facet_bounding_plane,
            bounding_planes,
            fan_start,
            fans,
            ring_start,
            rings,
            edges,
            mass,
            tolerance,
        }
    }

    /// Vertices (m).
    pub fn vertices(&self) -> &[DVec3] {
        &self.vertices
    }

    /// Triangulated facets (vertex indices, counter-clockwise from outside).
    pub fn facets(&self) -> &[[u32; 3]] {
        &self.facets
    }

    /// `facet_neighbors()[f][i]` is the facet across edge
    /// `(facets()[f][i], facets()[f][(i + 1) % 3])`.
    pub fn facet_neighbors(&self) -> &[[u32; 3]] {
        &self.facet_neighbors
    }

    /// Plane of each triangulated facet.
    pub fn facet_planes(&self) -> &[Plane] {
        &self.facet_planes
    }

    /// Index into [`Self::bounding_planes`] of each facet.
    pub fn facet_bounding_plane(&self) -> &[u32] {
        &self.facet_bounding_plane
    }

    /// Half-space form: one plane per group of coplanar facets.
    pub fn bounding_planes(&self) -> &[Plane] {
        &self.bounding_planes
    }

    /// Edges with their two facets.
    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }

    /// Facets around vertex `v`, in cyclic order.
    pub fn vertex_facets(&self, v: usize) -> &[u32] {
        &self.fans[self.fan_start[v] as usize..self.fan_start[v + 1] as usize]
    }

    /// Vertices joined to vertex `v` by an edge, in cyclic order.
    pub fn vertex_neighbors(&self, v: usize) -> &[u32] {
        &self.rings[self.ring_start[v] as usize..self.ring_start[v + 1] as usize]
    }

    /// Mass properties for unit density.
    pub fn mass_properties(&self) -> &MassProperties {
        &self.mass
    }

    /// Volume (m^3).
    pub fn volume(&self) -> f64 {
        self.mass.volume
    }

    /// Centroid (m).
    pub fn centroid(&self) -> DVec3 {
        self.mass.centroid
    }

    /// Absolute tolerance the polyhedron was built with (m).
    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }

    /// Total surface area (m^2).
    pub fn surface_area(&self) -> f64 {
        self.facets
            .iter()
            .map(|t| {
                let (a, b, c) = self.triangle(t);
                0.5 * (b - a).cross(c - a).length()
            })
            .sum()
    }

    /// Radius of the smallest centroid-centred sphere enclosing the block (m).
    pub fn bounding_radius(&self) -> f64 {
        let c = self.centroid();
        self.vertices
            .iter()
            .map(|v| v.distance(c))
            .fold(0.0, f64::max)
    }

    /// Axis-aligned bounding box `(min, max)` (the extent).
    pub fn extent(&self) -> (DVec3, DVec3) {
        let mut lo = DVec3::splat(f64::INFINITY);
        let mut hi = DVec3::splat(f64::NEG_INFINITY);
        for &v in &self.vertices {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        (lo, hi)
    }

    /// Corner positions of facet `t`.
    #[inline]
    pub(crate) fn triangle(&self, t: &[u32; 3]) -> (DVec3, DVec3, DVec3) {
        (
            self.vertices[t[0] as usize],
            self.vertices[t[1] as usize],
            self.vertices[t[2] as usize],
        )
    }

    /// Whether `p` is inside or within `tolerance` of the polyhedron.
    pub fn contains(&self, p: DVec3, tolerance: f64) -> bool {
        self.bounding_planes
            .iter()
            .all(|pl| pl.signed_distance(p) <= tolerance)
    }

    /// Largest signed distance of `p` over the bounding planes (negative
    /// inside: minus the distance to the nearest bounding plane).
    pub fn max_plane_distance(&self, p: DVec3) -> f64 {
        self.bounding_planes
            .iter()
            .map(|pl| pl.signed_distance(p))
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// Index of a vertex farthest along `dir` (a support vertex).
    ///
    /// Small blocks are scanned; larger ones are climbed along vertex
    /// neighbours, which reaches the global maximum on a convex polyhedron.
    pub fn support_vertex(&self, dir: DVec3) -> usize {
        self.support_vertex_from(dir, 0)
    }

    /// As [`Self::support_vertex`], starting the climb at vertex `start`
    /// (pass the previous answer for coherent queries).
    pub fn support_vertex_from(&self, dir: DVec3, start: usize) -> usize {
        let n = self.vertices.len();
        if n <= 24 {
            let mut best = 0;
            let mut best_d = f64::NEG_INFINITY;
            for (i, v) in self.vertices.iter().enumerate() {
                let d = v.dot(dir);
                if d > best_d {
                    best_d = d;
                    best = i;
                }
            }
            return best;
        }
        let mut cur = start.min(n - 1);
        let mut cur_d = self.vertices[cur].dot(dir);
        for _ in 0..n {
            let mut moved = false;
            for &w in self.vertex_neighbors(cur) {
                let d = self.vertices[w as usize].dot(dir);
                if d > cur_d {
                    cur_d = d;
                    cur = w as usize;
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
        cur
    }

    /// The polyhedron rotated about the origin, then translated.
    pub fn transformed(&self, rotation: DQuat, translation: DVec3) -> Self {
        let mut out = self.clone();
        for v in &mut out.vertices {
            *v = rotation * *v + translation;
        }
        for p in out
            .facet_planes
            .iter_mut()
            .chain(out.bounding_planes.iter_mut())
        {
            *p = p.transformed(rotation, translation);
        }
        let m = glam::DMat3::from_quat(rotation);
        out.mass.centroid = rotation * self.mass.centroid + translation;
        out.mass.inertia = m * self.mass.inertia * m.transpose();
        out.mass.principal_axes = m * self.mass.principal_axes;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cube_topology_and_planes() {
        let c = ConvexPolyhedron::cuboid(DVec3::new(1.0, 2.0, 3.0)).unwrap();
        assert_eq!(c.vertices().len(), 8);
        assert_eq!(c.facets().len(), 12);
        assert_eq!(c.edges().len(), 18);
        assert_eq!(c.bounding_planes().len(), 6);
        for v in 0..8 {
            assert_eq!(c.vertex_facets(v).len(), c.vertex_neighbors(v).len());
            assert!(c.vertex_facets(v).len() >= 3);
        }
        assert!((c.volume() - 48.0).abs() < 1e-12);
        assert!((c.surface_area() - 88.0).abs() < 1e-12);
        let mut offsets: Vec<f64> = c.bounding_planes().iter().map(|p| p.offset).collect();
        offsets.sort_by(f64::total_cmp);
        assert_eq!(offsets, vec![1.0, 1.0, 2.0, 2.0, 3.0, 3.0]);
    }

    #[test]
    fn half_space_construction_round_trip() {
        let c = ConvexPolyhedron::cuboid(DVec3::new(1.0, 0.5, 0.25)).unwrap();
        let back = ConvexPolyhedron::from_half_spaces(c.bounding_planes(), DVec3::ZERO).unwrap();
        assert!((back.volume() - c.volume()).abs() < 1e-12);
    }
}
