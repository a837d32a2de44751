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
//!
//! The parts live in submodules: `solid` (the checked surface and the
//! crossings of grid lines), `bvh` (the distance queries), `grid` (the
//! choosing grid, the depths, the candidates and the greedy cover) and
//! `fidelity`.

use std::fmt;

use glam::DVec3;

use crate::mesh::MeshErrorKind;
use fidelity::fidelity;
use grid::{choose, depths, medial_candidates, Grid};
use solid::Solid;

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
    /// Volume enclosed by the mesh (m^3) (exact, tetrahedral sums).
    pub mesh_volume: f64,
    /// Volume of the union of the pebbles (m^3), every point counted once,
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
    /// the Jaccard index (m).
    pub jaccard_spacing: f64,
    /// Largest distance by which the mesh surface lies outside the union
    /// (m), sampled at the mesh's vertices and triangle centroids (0 where
    /// a pebble reaches the surface).
    pub surface_gap: f64,
    /// Diagonal of the mesh's bounding box (m), the scale of
    /// `surface_gap`.
    pub size: f64,
}

/// A mesh filled with pebbles.
#[derive(Debug, Clone, PartialEq)]
pub struct PebbleFill {
    /// The pebbles, `(centre, radius)` (m) in the mesh's coordinates, in
    /// the order chosen (each covered the most of what the earlier left).
    pub pebbles: Vec<(DVec3, f64)>,
    /// Spacing `h` of the grid the pebbles were chosen on (m).
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

mod bvh;
mod fidelity;
mod grid;
mod solid;
#[cfg(test)]
mod tests;
