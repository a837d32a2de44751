//! Clump templates from a closed surface mesh: the solid filled with a
//! chosen number of overlapping pebbles, and the fidelity they reach.
//!
//! Reads: a triangle soup (three corners per triangle), the number of
//! pebbles wanted and [`FillOptions`].
//! Writes: a [`PebbleFill`]: the pebbles `(centre, radius)` in the mesh's
//! coordinates, in the order chosen, and the [`Fidelity`] they reach; or a
//! [`FillError`] saying why the mesh cannot be filled.
//! Invariant: every pebble is a ball inside the solid: its centre is a grid
//! sample inside the mesh and its radius that sample's exact distance to
//! the surface, so it pokes out by rounding only. The same input gives the
//! same bits.
//!
//! # Checks
//!
//! The mesh may be non-convex and may have several parts (or cavities),
//! but it must be a closed, consistently oriented surface: corners equal
//! bit for bit are one vertex (as in [`crate::mesh`]), and every edge must
//! be shared by exactly two triangles running opposite ways. A surface
//! wound inside out as a whole is turned back; one that encloses no
//! volume (within 1e-6 of its bounding-box diagonal times its area, as
//! [`crate::mesh`] judges it) is refused.
//!
//! # Method
//!
//! A greedy cover of the solid by maximal inscribed balls, on a grid:
//!
//! 1. Samples: the nodes of a regular grid of spacing `h` = the longest
//!    side of the bounding box over [`FillOptions::resolution`], with a
//!    node at the box's centre. A node is inside when the winding number
//!    of the surface about it is positive, counted along the grid line in
//!    `+x` through it: each triangle the line crosses adds `+1` or `-1`
//!    after the node, by the sign of its normal's `x`. Whether the line
//!    crosses a triangle is decided by the signs of the three edge
//!    functions in the `(y, z)` plane; an edge function that is exactly
//!    zero (the line passes through an edge or a vertex, as it does for a
//!    box on its own grid) takes the sign it would have with the line
//!    moved by an infinitesimal `(e, e^2)` in `(y, z)`. That rule depends
//!    on the edge alone and flips with it, so the triangles around an
//!    edge or vertex the line passes through agree: one crossing where
//!    the surface passes through the line, none (or a cancelling pair)
//!    where it only touches it. The count is then right whatever the
//!    mesh's alignment with the grid (exactly so when the edge functions
//!    are exact, as for faces on grid planes; otherwise up to points
//!    within rounding of an edge).
//! 2. Candidates: at each inside node, the largest ball centred there
//!    that stays inside, of radius the exact distance to the nearest
//!    triangle (closest point on a triangle by its Voronoi regions, the
//!    triangles in a bounding-volume hierarchy); a node nearer the
//!    surface than 1e-6 of the box's diagonal counts as on it, not
//!    inside. Balls nested in a
//!    neighbour's are dropped: a node is dropped when one of its 26
//!    neighbours is deeper by at least 0.85 of their distance apart (the
//!    depth grows at most as fast as the distance, and exactly as fast
//!    along a ray away from the nearest surface point; a ball never
//!    covers more than one that holds it). What remains is a thick
//!    sampling of the medial axis, the centres of the maximal balls.
//! 3. Choice: the candidate whose ball covers the most inside nodes goes
//!    first, then repeatedly the one covering the most not yet covered
//!    (a node is covered when it is inside a chosen ball by a relative
//!    margin of 1e-9, so that nodes on a ball's sphere never decide a
//!    choice by a rounding of its radius), ties to the lowest node index
//!    (`x` fastest, then `y`, then `z`). As a candidate's gain only
//!    falls, gains are re-counted lazily, only for the candidate on top
//!    of the queue, which chooses the same pebbles as re-counting all.
//!    It stops at `count` pebbles, or earlier when no candidate would
//!    cover a node not yet covered (then `pebbles.len() < count`: what is
//!    left is nodes within a fraction of `h` of the surface, and a finer
//!    grid is the way to more).
//!
//! This is the grid form of sphere-tree fitting by medial-axis
//! approximation (Bradshaw and O'Sullivan, ACM Trans. Graph. 2004),
//! choosing greedily as for set cover (lazily: Minoux 1978); unlike
//! placing balls tangent to the surface at its vertices along the inward
//! normal (Ferellec and McDowell, Granular Matter 2010), it needs no
//! normals and treats every mesh the same way, at the cost of a centre
//! quantised to the grid (the depth is 1-Lipschitz, so some candidate
//! within `h sqrt(3) / 2` of a medial point has a radius within that of
//! the maximal ball there).
//!
//! # Fidelity
//!
//! See [`Fidelity`]. The volumes are integrated along lines in `+x`
//! through the cell centres of a `(y, z)` grid [`FillOptions::refinement`]
//! times finer than the choosing one: along each line the solid's
//! intervals (between crossings, by the winding number as above) and the
//! union's (the pebbles' chords, merged) are exact, and their lengths and
//! the length of their overlap are summed times the cell area (the
//! midpoint rule in `(y, z)`). That gives the union's volume, the Jaccard
//! index `|union ∩ solid| / |union ∪ solid|`, and the union's volume over
//! the mesh's (the mesh's exact, by tetrahedral sums). Checked against
//! the power-cell quadrature of [`sphere_union`](crate::sphere_union()),
//! the union's volume is within 3e-3 at the default options and 1e-3 at
//! twice the resolution (the error is the midpoint rule's across the
//! balls' rims). The surface's gap to the union is measured exactly at
//! the mesh's vertices and triangle centroids.
//!
//! # Cost
//!
//! `O(n^3)` inside tests and distance queries (`n` = the resolution), each
//! query about `O(log T)` for `T` triangles, though a point deep in a
//! round solid is nearly as far from many triangles and visits more;
//! the choice costs the sizes of the balls counted, and the fidelity
//! `(refinement n)^2` lines. A 1280-triangle non-convex grain at the
//! default options fills with 20 pebbles in about 60 ms in release on one
//! core, most of it the distance queries (`docs/physics.md` has the
//! figures; `cargo run --release -p talus-geometry --example
//! pebble_fill_cost` measures them).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;

use glam::DVec3;

use crate::mass::mass_properties;
use crate::mesh::{closed_edge_pairs, merge_equal_vertices, MeshErrorKind};

/// Tolerance of the enclosed-volume check, and the depth below which a
/// node counts as on the surface, relative to the bounding-box diagonal
/// (the default of [`crate::MeshOptions`]).
const RELATIVE_TOLERANCE: f64 = 1e-6;

/// A node is dropped as a candidate when a neighbour is deeper by this
/// fraction of their distance apart (method, step 2).
const NESTED_SLOPE: f64 = 0.85;

/// Relative margin of the coverage test (method, step 3).
const COVER_MARGIN: f64 = 1e-9;

/// Largest [`FillOptions::resolution`] (a grid of 257^3 nodes, 140 MB of
/// depths).
const MAX_RESOLUTION: usize = 256;

/// Largest `resolution * refinement` of the Jaccard grid.
const MAX_FINE_RESOLUTION: usize = 1024;

/// Largest number of triangles in a leaf of the bounding-volume hierarchy.
const LEAF_SIZE: usize = 4;

/// Options of [`fill_with_pebbles`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FillOptions {
    /// Grid steps along the longest side of the mesh's bounding box, for
    /// the grid on which pebbles are chosen (2 to 256); default 40. The
    /// spacing `h` is that side over `resolution`; the cost grows as its
    /// cube.
    pub resolution: usize,
    /// How many times finer than the choosing grid the grid of the
    /// Jaccard estimate is (1 to 8, and `resolution * refinement` at most
    /// 1024); default 2.
    pub refinement: usize,
}

impl Default for FillOptions {
    fn default() -> Self {
        Self {
            resolution: 40,
            refinement: 2,
        }
    }
}

/// How well the pebbles fill the mesh: the fidelity reached, for the user
/// to judge the template by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fidelity {
    /// Volume enclosed by the mesh [m^3] (exact, tetrahedral sums).
    pub mesh_volume: f64,
    /// Volume of the union of the pebbles [m^3], every point counted once,
    /// integrated along the lines of the fine grid (module docs: within
    /// 3e-3 at the default options).
    pub union_volume: f64,
    /// `union_volume / mesh_volume`: 1 for a perfect fill, and at most 1
    /// (to the integration's accuracy) since the pebbles lie inside.
    pub volume_ratio: f64,
    /// Jaccard index `|union ∩ solid| / |union ∪ solid|` (1 for a perfect
    /// fill, 0 for none), integrated along lines in `+x` through the cell
    /// centres of a `(y, z)` grid [`FillOptions::refinement`] times finer
    /// than the one the pebbles were chosen on (spacing
    /// [`Fidelity::jaccard_spacing`]), exact along each line. With the
    /// pebbles inside it equals `volume_ratio` up to the integration
    /// error.
    pub jaccard: f64,
    /// Spacing of the `(y, z)` grid of lines of the volume integrals and
    /// the Jaccard index [m].
    pub jaccard_spacing: f64,
    /// Largest distance by which the mesh surface lies outside the union
    /// [m], sampled at the mesh's vertices and triangle centroids (0 where
    /// a pebble reaches the surface).
    pub surface_gap: f64,
    /// Diagonal of the mesh's bounding box [m], the scale of
    /// `surface_gap`.
    pub size: f64,
}

/// A mesh filled with pebbles.
#[derive(Debug, Clone, PartialEq)]
pub struct PebbleFill {
    /// The pebbles, `(centre, radius)` [m] in the mesh's coordinates, in
    /// the order chosen (each covered the most of what the earlier left).
    pub pebbles: Vec<(DVec3, f64)>,
    /// Spacing `h` of the grid the pebbles were chosen on [m].
    pub spacing: f64,
    /// The fidelity reached.
    pub fidelity: Fidelity,
}

/// Why a mesh could not be filled with pebbles.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FillError {
    /// Zero pebbles were asked for.
    NoPebbles,
    /// A corner coordinate is NaN or infinite.
    NonFinite,
    /// An option is out of its range.
    InvalidOption(&'static str),
    /// The surface is not a closed, consistently oriented surface that
    /// encloses volume (no triangle, open, non-manifold, inconsistent
    /// orientation, no volume).
    Surface(MeshErrorKind),
    /// No node of the grid lies strictly inside the mesh: the solid is
    /// thinner than the grid spacing.
    NoInteriorSample {
        /// The resolution tried.
        resolution: usize,
    },
}

impl fmt::Display for FillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoPebbles => write!(f, "cannot fill a mesh with zero pebbles"),
            Self::NonFinite => write!(f, "the mesh has a non-finite coordinate"),
            Self::InvalidOption(what) => write!(f, "invalid fill option: {what}"),
            Self::Surface(kind) => write!(f, "the mesh cannot be filled: {kind}"),
            Self::NoInteriorSample { resolution } => write!(
                f,
                "no grid node lies inside the mesh at resolution {resolution}: the solid is thinner than the grid spacing (raise the resolution)"
            ),
        }
    }
}

impl std::error::Error for FillError {}

/// Fill the solid bounded by `triangles` (each three corners; outward
/// counter-clockwise, or all inward) with at most `count` pebbles, by the
/// method of the module docs, and measure the fidelity reached.
///
/// # Errors
/// [`FillError::NoPebbles`] for `count == 0`; [`FillError::InvalidOption`];
/// [`FillError::NonFinite`]; [`FillError::Surface`] for a surface that is
/// empty, open, non-manifold, inconsistently oriented or encloses no
/// volume (the message names the count and the first bad edge);
/// [`FillError::NoInteriorSample`] when the grid is too coarse for the
/// solid.
pub fn fill_with_pebbles(
    triangles: &[[DVec3; 3]],
    count: usize,
    options: &FillOptions,
) -> Result<PebbleFill, FillError> {
    if count == 0 {
        return Err(FillError::NoPebbles);
    }
    if !(2..=MAX_RESOLUTION).contains(&options.resolution) {
        return Err(FillError::InvalidOption("resolution must be 2 to 256"));
    }
    if !(1..=8).contains(&options.refinement)
        || options.resolution * options.refinement > MAX_FINE_RESOLUTION
    {
        return Err(FillError::InvalidOption(
            "refinement must be 1 to 8, with resolution * refinement at most 1024",
        ));
    }
    if triangles.iter().flatten().any(|p| !p.is_finite()) {
        return Err(FillError::NonFinite);
    }
    let solid = Solid::new(triangles).map_err(FillError::Surface)?;

    // 1. The choosing grid, with a node at the box's centre.
    let grid = Grid::nodes(&solid, options.resolution);
    let h = grid.h;

    // 2. Depth of every inside node (0 elsewhere), then the candidates.
    let depth = depths(&solid, &grid);
    if depth.iter().all(|&d| d <= 0.0) {
        return Err(FillError::NoInteriorSample {
            resolution: options.resolution,
        });
    }
    let candidates = medial_candidates(&grid, &depth);

    // 3. Greedy cover.
    let pebbles = choose(&grid, &depth, &candidates, count);

    let fidelity = fidelity(&solid, &pebbles, h / options.refinement as f64);
    Ok(PebbleFill {
        pebbles,
        spacing: h,
        fidelity,
    })
}

/// The checked surface: welded vertices, outward triangles, bounding box,
/// volume and the hierarchy of the distance queries.
struct Solid {
    points: Vec<DVec3>,
    triangles: Vec<[u32; 3]>,
    lo: DVec3,
    hi: DVec3,
    volume: f64,
    bvh: Bvh,
}

impl Solid {
    fn new(soup: &[[DVec3; 3]]) -> Result<Self, MeshErrorKind> {
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
    fn crossings(&self, y: f64, z: f64, candidates: &[u32], out: &mut Vec<(f64, i32)>) {
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
    fn line_buckets(&self, ys: &Axis, zs: &Axis) -> (Vec<usize>, Vec<u32>) {
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

/// Positions along one axis of a grid: `centre + (i - shift) h` for
/// `i < n`.
struct Axis {
    centre: f64,
    shift: f64,
    h: f64,
    n: usize,
}

impl Axis {
    #[inline]
    fn at(&self, i: usize) -> f64 {
        self.centre + (i as f64 - self.shift) * self.h
    }

    /// Indices `i0..i1` whose positions may lie in `[lo, hi]` (one more
    /// each side, for rounding).
    fn range(&self, lo: f64, hi: f64) -> (usize, usize) {
        let index = |x: f64| (x - self.centre) / self.h + self.shift;
        let i0 = (index(lo).floor() - 1.0).max(0.0);
        let i1 = (index(hi).ceil() + 2.0).min(self.n as f64).max(i0);
        (i0 as usize, i1 as usize)
    }
}

/// A regular grid: node `(i, j, k)` at `centre + ((i, j, k) - shift) h`,
/// index `i + n0 (j + n1 k)`.
struct Grid {
    centre: DVec3,
    h: f64,
    n: [usize; 3],
    shift: DVec3,
}

impl Grid {
    /// The choosing grid of `solid`: `resolution` steps along the longest
    /// side of its box, a node at the box's centre, covering the box.
    fn nodes(solid: &Solid, resolution: usize) -> Self {
        let extent = solid.hi - solid.lo;
        let h = extent.max_element() / resolution as f64;
        let half_steps = (extent / (2.0 * h))
            .to_array()
            .map(|e| (e - 1e-9).ceil().max(0.0));
        Grid {
            centre: 0.5 * (solid.lo + solid.hi),
            h,
            n: half_steps.map(|m| 2 * m as usize + 1),
            shift: DVec3::from_array(half_steps),
        }
    }

    fn axis(&self, a: usize) -> Axis {
        Axis {
            centre: self.centre[a],
            shift: self.shift[a],
            h: self.h,
            n: self.n[a],
        }
    }

    fn len(&self) -> usize {
        self.n[0] * self.n[1] * self.n[2]
    }

    fn index(&self, i: usize, j: usize, k: usize) -> usize {
        i + self.n[0] * (j + self.n[1] * k)
    }

    fn position(&self, index: usize) -> DVec3 {
        let i = index % self.n[0];
        let j = index / self.n[0] % self.n[1];
        let k = index / (self.n[0] * self.n[1]);
        DVec3::new(self.axis(0).at(i), self.axis(1).at(j), self.axis(2).at(k))
    }
}

/// Distance to the surface of every node inside the solid, 0 for the
/// others (and for nodes on the surface, within [`RELATIVE_TOLERANCE`] of
/// the box's diagonal: a line along an edge may count them in).
fn depths(solid: &Solid, grid: &Grid) -> Vec<f64> {
    let on_surface = RELATIVE_TOLERANCE * (solid.hi - solid.lo).length();
    let (xs, ys, zs) = (grid.axis(0), grid.axis(1), grid.axis(2));
    let (start, list) = solid.line_buckets(&ys, &zs);
    let mut depth = vec![0.0; grid.len()];
    let mut hits = Vec::new();
    for k in 0..zs.n {
        for j in 0..ys.n {
            let l = j + ys.n * k;
            let (y, z) = (ys.at(j), zs.at(k));
            solid.crossings(y, z, &list[start[l]..start[l + 1]], &mut hits);
            let mut winding: i32 = hits.iter().map(|h| h.1).sum();
            let mut next = 0;
            // The previous inside node's nearest triangle seeds the search.
            let mut seed = None;
            for i in 0..xs.n {
                let x = xs.at(i);
                while next < hits.len() && hits[next].0 <= x {
                    winding -= hits[next].1;
                    next += 1;
                }
                if winding <= 0 {
                    continue;
                }
                let (d, t) = solid.bvh.nearest(DVec3::new(x, y, z), seed);
                if d > on_surface {
                    depth[grid.index(i, j, k)] = d;
                }
                seed = Some(t);
            }
        }
    }
    depth
}

/// Inside nodes whose ball is not (nearly) nested in a neighbour's, in
/// index order (method, step 2).
fn medial_candidates(grid: &Grid, depth: &[f64]) -> Vec<usize> {
    let [n0, n1, n2] = grid.n.map(|n| n as isize);
    let mut offsets = Vec::with_capacity(26);
    for dk in -1isize..=1 {
        for dj in -1isize..=1 {
            for di in -1isize..=1 {
                if (di, dj, dk) != (0, 0, 0) {
                    let reach = ((di * di + dj * dj + dk * dk) as f64).sqrt();
                    offsets.push((di, dj, dk, NESTED_SLOPE * reach * grid.h));
                }
            }
        }
    }
    let mut candidates = Vec::new();
    for k in 0..n2 {
        for j in 0..n1 {
            for i in 0..n0 {
                let here = grid.index(i as usize, j as usize, k as usize);
                let d = depth[here];
                if d <= 0.0 {
                    continue;
                }
                let nested = offsets.iter().any(|&(di, dj, dk, rise)| {
                    let (a, b, c) = (i + di, j + dj, k + dk);
                    (0..n0).contains(&a)
                        && (0..n1).contains(&b)
                        && (0..n2).contains(&c)
                        && depth[grid.index(a as usize, b as usize, c as usize)] >= d + rise
                });
                if !nested {
                    candidates.push(here);
                }
            }
        }
    }
    candidates
}

/// The greedy cover (method, step 3): at most `count` pebbles.
fn choose(grid: &Grid, depth: &[f64], candidates: &[usize], count: usize) -> Vec<(DVec3, f64)> {
    // Nodes inside and not yet covered.
    let mut open: Vec<bool> = depth.iter().map(|&d| d > 0.0).collect();
    let reach = |c: usize| {
        let r = depth[c] / grid.h;
        r * r * (1.0 - COVER_MARGIN)
    };
    let mut queue: BinaryHeap<(usize, Reverse<usize>, usize)> = candidates
        .iter()
        .map(|&c| {
            (
                ball_nodes(grid, c, reach(c), &mut open, false),
                Reverse(c),
                0,
            )
        })
        .collect();
    let mut pebbles = Vec::with_capacity(count.min(candidates.len()));
    while pebbles.len() < count {
        let Some((gain, Reverse(c), counted_at)) = queue.pop() else {
            break;
        };
        if counted_at == pebbles.len() {
            // Counted since the last choice: no other can cover more.
            if gain == 0 {
                break;
            }
            ball_nodes(grid, c, reach(c), &mut open, true);
            pebbles.push((grid.position(c), depth[c]));
        } else {
            let gain = ball_nodes(grid, c, reach(c), &mut open, false);
            queue.push((gain, Reverse(c), pebbles.len()));
        }
    }
    pebbles
}

/// The open nodes within `sqrt(reach2)` steps of node `centre`; closed as
/// well when `close`.
fn ball_nodes(grid: &Grid, centre: usize, reach2: f64, open: &mut [bool], close: bool) -> usize {
    let [n0, n1, n2] = grid.n.map(|n| n as isize);
    let ci = (centre % grid.n[0]) as isize;
    let cj = (centre / grid.n[0] % grid.n[1]) as isize;
    let ck = (centre / (grid.n[0] * grid.n[1])) as isize;
    let r = reach2.max(0.0).sqrt().floor() as isize;
    let mut total = 0;
    for dk in -r..=r {
        let k = ck + dk;
        if !(0..n2).contains(&k) {
            continue;
        }
        for dj in -r..=r {
            let j = cj + dj;
            let rest = reach2 - (dk * dk + dj * dj) as f64;
            if !(0..n1).contains(&j) || rest < 0.0 {
                continue;
            }
            let w = rest.sqrt().floor() as isize;
            let (i0, i1) = ((ci - w).max(0), (ci + w).min(n0 - 1));
            if i0 > i1 {
                continue;
            }
            let row = grid.index(0, j as usize, k as usize);
            let slice = &mut open[row + i0 as usize..=row + i1 as usize];
            total += slice.iter().filter(|&&o| o).count();
            if close {
                slice.fill(false);
            }
        }
    }
    total
}

/// The fidelity of `pebbles` in `solid`, the volumes integrated along the
/// lines of a grid of spacing `hf`.
fn fidelity(solid: &Solid, pebbles: &[(DVec3, f64)], hf: f64) -> Fidelity {
    // Lines in +x through the cell centres of a grid in (y, z) over the
    // box of the solid and the pebbles.
    let (mut lo, mut hi) = (solid.lo, solid.hi);
    for &(c, r) in pebbles {
        lo = lo.min(c - DVec3::splat(r));
        hi = hi.max(c + DVec3::splat(r));
    }
    let axis = |a: usize| {
        let n = ((hi[a] - lo[a]) / hf - 1e-6).ceil().max(1.0);
        Axis {
            centre: 0.5 * (lo[a] + hi[a]),
            shift: 0.5 * n - 0.5,
            h: hf,
            n: n as usize,
        }
    };
    let (ys, zs) = (axis(1), axis(2));
    let (start, list) = solid.line_buckets(&ys, &zs);
    // Lengths along the lines inside the solid, the union, both.
    let (mut solid_length, mut union_length, mut both_length) = (0.0, 0.0, 0.0);
    let mut hits = Vec::new();
    let (mut inside, mut chords, mut union) = (Vec::new(), Vec::new(), Vec::new());
    for k in 0..zs.n {
        for j in 0..ys.n {
            let l = j + ys.n * k;
            let (y, z) = (ys.at(j), zs.at(k));
            // The solid: where the winding number is positive.
            solid.crossings(y, z, &list[start[l]..start[l + 1]], &mut hits);
            inside.clear();
            let mut winding: i32 = hits.iter().map(|h| h.1).sum();
            for pair in hits.windows(2) {
                winding -= pair[0].1;
                if winding > 0 && pair[1].0 > pair[0].0 {
                    match inside.last_mut() {
                        Some((_, end)) if *end == pair[0].0 => *end = pair[1].0,
                        _ => inside.push((pair[0].0, pair[1].0)),
                    }
                }
            }
            // The union: the pebbles' chords, merged.
            chords.clear();
            for &(c, r) in pebbles {
                let rest = r * r - (y - c.y) * (y - c.y) - (z - c.z) * (z - c.z);
                if rest > 0.0 {
                    let half = rest.sqrt();
                    chords.push((c.x - half, c.x + half));
                }
            }
            chords.sort_unstable_by(|p, q| p.0.total_cmp(&q.0).then(p.1.total_cmp(&q.1)));
            union.clear();
            for &(a, b) in &chords {
                match union.last_mut() {
                    Some((_, end)) if a <= *end => *end = end.max(b),
                    _ => union.push((a, b)),
                }
            }
            solid_length += inside.iter().map(|(a, b)| b - a).sum::<f64>();
            union_length += union.iter().map(|(a, b)| b - a).sum::<f64>();
            both_length += overlap_length(&inside, &union);
        }
    }
    let cell = hf * hf;
    let union_volume = union_length * cell;
    let either = solid_length + union_length - both_length;

    // The surface's gap to the union, at vertices and centroids.
    let gap = |x: DVec3| {
        pebbles
            .iter()
            .map(|&(c, r)| (x - c).length() - r)
            .fold(f64::INFINITY, f64::min)
            .max(0.0)
    };
    let centroids = solid
        .triangles
        .iter()
        .map(|t| t.map(|v| solid.points[v as usize]))
        .map(|[a, b, c]| (a + b + c) / 3.0);
    let surface_gap = solid
        .points
        .iter()
        .copied()
        .chain(centroids)
        .map(gap)
        .fold(0.0, f64::max);

    Fidelity {
        mesh_volume: solid.volume,
        union_volume,
        volume_ratio: union_volume / solid.volume,
        jaccard: if either > 0.0 {
            both_length / either
        } else {
            0.0
        },
        jaccard_spacing: hf,
        surface_gap,
        size: (solid.hi - solid.lo).length(),
    }
}

/// Total length common to two sorted lists of disjoint intervals.
fn overlap_length(a: &[(f64, f64)], b: &[(f64, f64)]) -> f64 {
    let (mut i, mut j, mut total) = (0, 0, 0.0);
    while i < a.len() && j < b.len() {
        let (lo, hi) = (a[i].0.max(b[j].0), a[i].1.min(b[j].1));
        if hi > lo {
            total += hi - lo;
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

mod bvh;
use bvh::Bvh;
#[cfg(test)]
mod tests;
