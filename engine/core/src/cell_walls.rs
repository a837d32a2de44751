//! Walls in a periodic cell.
//!
//! Bodies repeat with the cell; walls do not. A facet meets a body at the
//! body's image nearest to the facet, which is the same as moving the
//! facet by whole edge vectors of the cell to the body: every kernel and
//! the wall stage work with the facet so moved ([`facet_shift`]), and the
//! contact plane stays in the body's frame (its location next to the body
//! as it is stored, so the law of motion, the wall logic, the cell stress
//! and the output read it as any other). A floor under a cell periodic at
//! its sides thus carries a body that straddles a side face with both of
//! its parts, and a ball that leaves through a side face keeps its contact
//! with the facet it was on, history included.
//!
//! One image only may touch a facet, so a facet must be small against the
//! cell: before step 0 every wall of a run with a periodic cell is cut
//! (each facet into four at its edge midpoints, as often as needed, which
//! leaves its surface as it was) until no facet's bounding radius exceeds
//! [`FACET_FRACTION`] of the smallest periodic width. With the bodies'
//! reach below a quarter of every width (see `check_cell_widths`), the
//! image within reach of a facet is then the nearest to its centre. A
//! deforming cell is checked every step for both.

use crate::cell::Cell;
use crate::error::SetupError;
use crate::math::Vec3;
use crate::sim::Simulation;
use crate::wall::Wall;

/// The bounding radius a facet of a wall in a periodic cell may have, as a
/// fraction of the cell's smallest periodic width.
pub(crate) const FACET_FRACTION: f64 = 0.125;

/// Facets a wall may have after it was cut to fit a periodic cell; a wall
/// that would need more is refused (mesh it finer, or make the cell wider).
pub(crate) const MAX_CUT_FACETS: usize = 1 << 20;

/// The shift (whole edge vectors of `cell`) that brings facet `f` of
/// `wall` to its image nearest a body at `x`: zero without a cell, and for
/// a body near the facet inside it.
#[inline(always)]
pub(crate) fn facet_shift(cell: Option<&Cell>, wall: &Wall, f: usize, x: Vec3) -> Vec3 {
    match cell {
        None => Vec3::ZERO,
        Some(c) => c.image_shift(x, wall.spheres[f].0),
    }
}

/// A facet as a body meets it in a periodic cell: moved by `shift` (whole
/// edge vectors, [`facet_shift`]), and so moving faster than the wall by
/// `drift`, the mean-field velocity between the two places (`L shift`: the
/// images of a wall move with the cell as a body's do).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FacetImage {
    pub(crate) shift: Vec3,
    pub(crate) drift: Vec3,
}

impl FacetImage {
    /// Facet `f` of `wall` as a body at `x` meets it; none without a cell.
    #[inline(always)]
    pub(crate) fn of(cell: Option<&Cell>, wall: &Wall, f: usize, x: Vec3) -> FacetImage {
        match cell {
            None => FacetImage::default(),
            Some(c) => {
                let shift = facet_shift(cell, wall, f, x);
                FacetImage {
                    shift,
                    drift: c.velocity_gradient * shift,
                }
            }
        }
    }
}

/// Joins the open edges of `wall` that are images of each other across
/// the periodic faces of `cell` (a floor that spans the cell has its four
/// sides so), as neighbours: the wall logic then sees a ball that touches
/// both sides of the seam on one surface, as it does across any other
/// edge. An edge is joined only to one that runs the other way, as a
/// shared edge of a consistently oriented mesh does.
fn join_seams(wall: &mut Wall, cell: &Cell) {
    let open: Vec<(usize, usize)> = (0..wall.facets.len())
        .flat_map(|f| (0..3).map(move |k| (f, k)))
        .filter(|&(f, k)| wall.neighbours[f][k] < 0)
        .collect();
    let mut extent = crate::math::Aabb::EMPTY;
    for &v in &wall.vertices {
        extent.include(v);
    }
    let tol = 1e-9 * (extent.max - extent.min).length();
    let ends = |wall: &Wall, (f, k): (usize, usize)| {
        let t = wall.facets[f];
        (
            wall.vertices[t[k] as usize],
            wall.vertices[t[(k + 1) % 3] as usize],
        )
    };
    for (i, &a) in open.iter().enumerate() {
        if wall.neighbours[a.0][a.1] >= 0 {
            continue;
        }
        let (p, q) = ends(wall, a);
        for &b in &open[i + 1..] {
            if b.0 == a.0 || wall.neighbours[b.0][b.1] >= 0 {
                continue;
            }
            // `b` runs from q to p, moved by whole edges of the cell.
            let (q2, p2) = ends(wall, b);
            let t = cell.image_shift(q, q2);
            if t == Vec3::ZERO || (q2 + t - q).length() > tol || (p2 + t - p).length() > tol {
                continue;
            }
            wall.neighbours[a.0][a.1] = b.0 as i32;
            wall.neighbours[b.0][b.1] = a.0 as i32;
            break;
        }
    }
}

/// The largest bounding radius of a facet of `wall`.
fn facet_radius(wall: &Wall) -> f64 {
    wall.spheres.iter().map(|s| s.1).fold(0.0, f64::max)
}

impl Simulation {
    /// Cuts the walls of a run with a periodic cell until every facet is
    /// small enough for one image of a body to meet it (see the module
    /// docs); renumbers the facets after. Walls that fit are left as they
    /// are, so running it again changes nothing.
    pub(crate) fn fit_walls_to_cell(&mut self) -> Result<(), SetupError> {
        let Some(cell) = self.cell.clone().filter(|c| c.any_periodic()) else {
            return Ok(());
        };
        let widths = cell.widths();
        let width = (0..3)
            .filter(|&k| cell.periodic[k])
            .map(|k| widths[k])
            .fold(f64::INFINITY, f64::min);
        let limit = FACET_FRACTION * width;
        let mut cuts = Vec::new();
        for wall in self.walls_mut().iter_mut() {
            let before = wall.facets.len();
            while facet_radius(wall) > limit {
                if 4 * wall.facets.len() > MAX_CUT_FACETS {
                    return Err(SetupError::Wall {
                        wall: wall.name.clone(),
                        message: format!(
                            "its facets are too large for the periodic cell: a facet may reach \
                             {limit:.6e} m from its centre (an eighth of the cell's smallest \
                             periodic width), and cutting them to that size would take more \
                             than {MAX_CUT_FACETS} facets; mesh the wall finer or widen the cell"
                        ),
                    });
                }
                *wall = wall.subdivided()?;
            }
            if wall.facets.len() != before {
                cuts.push((wall.name.clone(), before, wall.facets.len()));
            }
        }
        for wall in self.walls_mut().iter_mut() {
            join_seams(wall, &cell);
        }
        if !cuts.is_empty() {
            self.facet_owner.clear();
            let counts: Vec<usize> = self.walls().iter().map(|w| w.facets.len()).collect();
            for (w, n) in counts.into_iter().enumerate() {
                self.facet_owner
                    .extend((0..n as u32).map(|f| (w as u32, f)));
            }
        }
        self.wall_cuts.extend(cuts);
        Ok(())
    }

    /// The walls that were cut to fit the periodic cell before step 0
    /// (see `cell_walls`): name, facets as given and as cut.
    pub fn wall_cuts(&self) -> &[(String, usize, usize)] {
        &self.wall_cuts
    }

    /// The largest bounding radius of any wall facet (m), 0 without walls:
    /// what a facet adds to the width a periodic cell must keep.
    pub(crate) fn facet_reach(&self) -> f64 {
        self.walls().iter().map(facet_radius).fold(0.0, f64::max)
    }
}
