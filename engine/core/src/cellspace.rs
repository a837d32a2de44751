//! Broad phase: the cell space, a uniform grid of cells holding pieces.
//!
//! Reads: piece extents (balls and wall facets). Writes: each piece's cell
//! extent (its extent enlarged by the tolerance) and its cell memberships,
//! and the list of piece pairs whose cell extents came to overlap.
//! Invariants: a ball is re-binned only when its centre has moved more
//! than the tolerance from where it was last binned (its reference
//! position), a facet when its extent leaves its cell extent. Two balls are
//! near while their reference positions are closer than `r1 + r2 + 2 tol`
//! (so no contact can start unseen while neither is re-binned); a ball and
//! a facet are near while their cell extents overlap. Candidate lists come
//! out sorted, so contact creation order (and contact ids) do not depend on
//! cell contents or thread count.

use crate::cell::nearest;
use crate::cell::Cell;
use crate::math::{Aabb, Mat3, Vec3};
use crate::piece::{Piece, PieceKind};
use rayon::prelude::*;

/// Moved pieces from which [`CellSpace::candidates`] works in parallel.
const PARALLEL_MOVED: usize = 32;

/// Candidate pairs from which they are sorted in parallel (below, a split
/// costs more than it saves).
const PARALLEL_SORT: usize = 1 << 14;

/// Cell coordinate range covered by an extent, inclusive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct CellRange {
    lo: [i32; 3],
    hi: [i32; 3],
}

/// The uniform grid.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct CellSpace {
    origin: Vec3,
    inv_size: f64,
    dims: [i32; 3],
    cells: Vec<Vec<Piece>>,
    /// Tolerance added on every side of a piece extent (m).
    pub tolerance: f64,
    /// Cell extent of every ball.
    pub ball_extent: Vec<Aabb>,
    /// Reference position of every ball (centre when last binned); kept
    /// apart from the radius, which the law of motion does not read.
    ball_ref: Vec<Vec3>,
    /// Radius of every ball enlarged by the tolerance.
    ball_reach: Vec<f64>,
    ball_range: Vec<CellRange>,
    /// Blocks, binned as their bounding spheres (rotation then never
    /// re-bins them): cell extent, reference position, reach, range.
    pub block_extent: Vec<Aabb>,
    block_ref: Vec<Vec3>,
    block_reach: Vec<f64>,
    block_range: Vec<CellRange>,
    block_moved: Vec<bool>,
    /// Each block row's piece: a block, or a convex body.
    block_piece: Vec<Piece>,
    /// Cell extent of every facet (global facet index).
    pub facet_extent: Vec<Aabb>,
    facet_range: Vec<CellRange>,
    /// Pieces re-binned since the last call to [`CellSpace::candidates`].
    moved: Vec<Piece>,
    /// The same as marks per ball and per facet.
    ball_moved: Vec<bool>,
    facet_moved: Vec<bool>,
    /// How many re-binnings happened (for statistics).
    pub rebins: u64,
    /// The grid of a periodic cell, when there is one (see
    /// [`PeriodicGrid`]).
    periodic: Option<PeriodicGrid>,
}

/// The cell space of a periodic cell: the grid lies in the fractional
/// coordinates `u = G^-1 (x - origin)` of a grid matrix `G`, the cell
/// matrix when the grid was last laid out. Along a periodic axis it tiles
/// `[0, 1)` with whole cells and cell ranges wrap round, so every piece is
/// binned once whatever side of the boundary it reaches over; along a
/// non-periodic axis it covers the domain and clamps, as the plain grid
/// does.
///
/// # Invariant
/// A deforming cell drifts away from `G`: a piece's image moves by
/// `(h - G) m` from where the grid puts it. Every range is laid out from
/// the piece's box enlarged by `margin`, and the grid is laid out again
/// (every piece re-binned) before the drift, summed over the periodic
/// edges, exceeds it; two near pieces then always share a cell (see
/// `docs/architecture.md`).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct PeriodicGrid {
    origin: Vec3,
    g: Mat3,
    g_inv: Mat3,
    /// The current cell matrix and its inverse: images for [`CellSpace::near`].
    h: Mat3,
    h_inv: Mat3,
    periodic: [bool; 3],
    /// Lower bound and cells per unit of `u`, per axis.
    lo: [f64; 3],
    scale: [f64; 3],
    /// The domain of the non-periodic axes (m), kept to lay out again.
    domain: Aabb,
    /// The smallest cell side the grid may have (m).
    cell_size: f64,
    /// Enlargement of every box before it is binned (m).
    margin: f64,
}

impl PeriodicGrid {
    fn new(cell: &Cell, domain: Aabb, cell_size: f64, margin: f64) -> (PeriodicGrid, [i32; 3]) {
        let mut grid = PeriodicGrid {
            origin: cell.origin,
            g: cell.h(),
            g_inv: cell.h().inverse(),
            h: cell.h(),
            h_inv: cell.h().inverse(),
            periodic: cell.periodic,
            lo: [0.0; 3],
            scale: [1.0; 3],
            domain,
            cell_size,
            margin,
        };
        let dims = grid.lay_out(cell);
        (grid, dims)
    }

    /// Lays the grid out on the cell as it is now; returns its dims.
    fn lay_out(&mut self, cell: &Cell) -> [i32; 3] {
        self.g = cell.h();
        self.g_inv = self.g.inverse();
        self.h = self.g;
        self.h_inv = self.g_inv;
        let widths = cell.widths();
        let span = self.frac_box(&self.domain);
        let mut dims = [1; 3];
        for k in 0..3 {
            if self.periodic[k] {
                // Whole cells at least `cell_size` wide.
                dims[k] = ((widths[k] / self.cell_size).floor() as i32).max(1);
                self.lo[k] = 0.0;
                self.scale[k] = dims[k] as f64;
            } else {
                let (lo, hi) = (span.min[k], span.max[k]);
                let extent = (hi - lo) * widths[k];
                dims[k] = ((extent / self.cell_size).ceil() as i32).clamp(1, 1 << 20);
                self.lo[k] = lo;
                self.scale[k] = dims[k] as f64 / (hi - lo).max(f64::MIN_POSITIVE);
            }
        }
        // Keep the grid below ~8 million cells.
        while dims.iter().map(|&d| d as f64).product::<f64>() > 8.0e6 {
            for (k, n) in dims.iter_mut().enumerate() {
                let d = ((*n as f64 / 1.25).floor() as i32).max(1);
                self.scale[k] *= d as f64 / *n as f64;
                *n = d;
            }
        }
        dims
    }

    /// The box in fractional coordinates of `G` that holds `b`.
    fn frac_box(&self, b: &Aabb) -> Aabb {
        let mut out = Aabb::EMPTY;
        for c in 0..8 {
            let corner = Vec3::new(
                if c & 1 == 0 { b.min.x } else { b.max.x },
                if c & 2 == 0 { b.min.y } else { b.max.y },
                if c & 4 == 0 { b.min.z } else { b.max.z },
            );
            out.include(self.g_inv * (corner - self.origin));
        }
        out
    }

    /// The cell range of a box: along a periodic axis `lo` in
    /// `[0, dims)` and `hi - lo < dims` (the range wraps past the last
    /// cell), along the others clamped.
    fn range(&self, b: &Aabb, dims: [i32; 3]) -> CellRange {
        let f = self.frac_box(&b.enlarged(self.margin));
        let mut r = CellRange::default();
        for (k, &n) in dims.iter().enumerate() {
            let lo = ((f.min[k] - self.lo[k]) * self.scale[k]).floor();
            let hi = ((f.max[k] - self.lo[k]) * self.scale[k]).floor();
            if self.periodic[k] {
                let (lo, hi) = (lo.clamp(-1e9, 1e9) as i64, hi.clamp(-1e9, 1e9) as i64);
                if hi - lo + 1 >= n as i64 {
                    r.lo[k] = 0;
                    r.hi[k] = n - 1;
                } else {
                    r.lo[k] = lo.rem_euclid(n as i64) as i32;
                    r.hi[k] = r.lo[k] + (hi - lo) as i32;
                }
            } else {
                r.lo[k] = (lo.clamp(-1e9, 1e9) as i32).clamp(0, n - 1);
                r.hi[k] = (hi.clamp(-1e9, 1e9) as i32).clamp(0, n - 1);
            }
        }
        r
    }

    /// How far the cell has drifted from the grid: the sum over the
    /// periodic edges of how far each moved (m).
    fn drift(&self, h: Mat3) -> f64 {
        (0..3)
            .filter(|&k| self.periodic[k])
            .map(|k| (h.col(k) - self.g.col(k)).length())
            .sum()
    }

    /// The separation `b - a` to the nearest image of `b`.
    #[inline]
    fn separation(&self, a: Vec3, b: Vec3) -> Vec3 {
        let d = b - a;
        let s = self.h_inv * d;
        let m = Vec3::new(
            if self.periodic[0] { nearest(s.x) } else { 0.0 },
            if self.periodic[1] { nearest(s.y) } else { 0.0 },
            if self.periodic[2] { nearest(s.z) } else { 0.0 },
        );
        d - self.h * m
    }
}

/// The re-binning rule: a centre now at `centre`, binned at `reference`,
/// has moved more than the tolerance (`tol2` is its square).
#[inline]
pub fn left_reference(reference: Vec3, centre: Vec3, tol2: f64) -> bool {
    (centre - reference).length_squared() > tol2
}

impl CellSpace {
    /// A grid covering `domain` with cubic cells of side `cell_size`.
    /// Pieces outside the domain are kept in the border cells, which stays
    /// correct (every candidate is confirmed on the cell extents) and only
    /// costs speed.
    pub fn new(domain: Aabb, cell_size: f64, tolerance: f64) -> CellSpace {
        let ext = domain.max - domain.min;
        let mut size = cell_size;
        // Keep the grid below ~8 million cells whatever the domain.
        while (ext.x / size).ceil() * (ext.y / size).ceil() * (ext.z / size).ceil() > 8.0e6 {
            size *= 1.25;
        }
        let dims = [
            ((ext.x / size).ceil() as i32).max(1),
            ((ext.y / size).ceil() as i32).max(1),
            ((ext.z / size).ceil() as i32).max(1),
        ];
        CellSpace {
            origin: domain.min,
            inv_size: 1.0 / size,
            dims,
            cells: vec![Vec::new(); (dims[0] * dims[1] * dims[2]) as usize],
            tolerance,
            ball_extent: Vec::new(),
            ball_ref: Vec::new(),
            ball_reach: Vec::new(),
            ball_range: Vec::new(),
            block_extent: Vec::new(),
            block_ref: Vec::new(),
            block_reach: Vec::new(),
            block_range: Vec::new(),
            block_moved: Vec::new(),
            block_piece: Vec::new(),
            facet_extent: Vec::new(),
            facet_range: Vec::new(),
            moved: Vec::new(),
            ball_moved: Vec::new(),
            facet_moved: Vec::new(),
            rebins: 0,
            periodic: None,
        }
    }

    /// A grid for the periodic cell `cell` (see `PeriodicGrid`), with
    /// cells no thinner than `cell_size` and the non-periodic axes
    /// covering `domain`.
    pub fn periodic(cell: &Cell, domain: Aabb, cell_size: f64, tolerance: f64) -> CellSpace {
        // A one-cell plain grid, whose layout is replaced right away.
        let unit = Aabb {
            min: Vec3::ZERO,
            max: Vec3::ONE,
        };
        let mut cs = CellSpace::new(unit, 1.0, tolerance);
        let (grid, dims) = PeriodicGrid::new(cell, domain, cell_size, tolerance);
        cs.dims = dims;
        cs.cells = vec![Vec::new(); (dims[0] * dims[1] * dims[2]) as usize];
        cs.periodic = Some(grid);
        cs
    }

    /// Follows the cell to its current shape: the images of
    /// [`CellSpace::near`] come from it, and once it has drifted from the
    /// grid by the grid's margin the grid is laid out on it again and
    /// every piece re-binned (flagged as moved). Does nothing for a grid
    /// without a periodic cell.
    pub fn follow(&mut self, cell: &Cell) {
        let Some(grid) = self.periodic.as_mut() else {
            return;
        };
        if grid.drift(cell.h()) <= grid.margin {
            grid.h = cell.h();
            grid.h_inv = cell.h().inverse();
            return;
        }
        let dims = grid.lay_out(cell);
        self.dims = dims;
        self.cells = vec![Vec::new(); (dims[0] * dims[1] * dims[2]) as usize];
        self.moved.clear();
        for i in 0..self.ball_extent.len() {
            let r = self.range_of(&self.ball_extent[i]);
            self.ball_range[i] = r;
            self.bin(Piece::ball(i as u32), r);
            self.moved.push(Piece::ball(i as u32));
            self.ball_moved[i] = true;
        }
        for i in 0..self.block_extent.len() {
            let r = self.range_of(&self.block_extent[i]);
            self.block_range[i] = r;
            self.bin(Piece::block(i as u32), r);
            self.moved.push(Piece::block(i as u32));
            self.block_moved[i] = true;
        }
        for g in 0..self.facet_extent.len() {
            let r = self.range_of(&self.facet_extent[g]);
            self.facet_range[g] = r;
            self.bin(Piece::facet(g as u32), r);
            self.moved.push(Piece::facet(g as u32));
            self.facet_moved[g] = true;
        }
    }

    /// Whether the grid tiles a periodic cell.
    pub fn is_periodic(&self) -> bool {
        self.periodic.is_some()
    }

    fn range_of(&self, b: &Aabb) -> CellRange {
        if let Some(grid) = &self.periodic {
            return grid.range(b, self.dims);
        }
        let f = |p: Vec3| -> [i32; 3] {
            let q = (p - self.origin) * self.inv_size;
            [
                (q.x.floor() as i32).clamp(0, self.dims[0] - 1),
                (q.y.floor() as i32).clamp(0, self.dims[1] - 1),
                (q.z.floor() as i32).clamp(0, self.dims[2] - 1),
            ]
        };
        CellRange {
            lo: f(b.min),
            hi: f(b.max),
        }
    }

    fn for_cells(dims: [i32; 3], r: CellRange, mut f: impl FnMut(usize)) {
        Self::for_cells_at(dims, r, |c, _| f(c));
    }

    /// [`CellSpace::for_cells`] that also passes the cell's coordinates
    /// (as the range gives them: past the last cell where a periodic range
    /// wraps round; the cell index is wrapped).
    fn for_cells_at(dims: [i32; 3], r: CellRange, mut f: impl FnMut(usize, [i32; 3])) {
        // A range starts inside the grid and spans fewer cells than the
        // axis has, so one subtraction wraps it.
        let wrap = |x: i32, n: i32| if x >= n { x - n } else { x };
        for z in r.lo[2]..=r.hi[2] {
            for y in r.lo[1]..=r.hi[1] {
                let row = ((wrap(z, dims[2]) * dims[1] + wrap(y, dims[1])) * dims[0]) as usize;
                for x in r.lo[0]..=r.hi[0] {
                    f(row + wrap(x, dims[0]) as usize, [x, y, z]);
                }
            }
        }
    }

    /// The cell range of a piece reference.
    #[inline]
    fn range_of_piece(&self, piece: Piece) -> CellRange {
        match piece.kind() {
            PieceKind::Facet => self.facet_range[piece.index()],
            PieceKind::Block | PieceKind::Convex => self.block_range[piece.index()],
            PieceKind::Ball => self.ball_range[piece.index()],
        }
    }

    /// A sphere piece's reference position and reach.
    #[inline]
    fn sphere(&self, piece: Piece) -> (Vec3, f64) {
        let i = piece.index();
        if piece.is_rigid() {
            (self.block_ref[i], self.block_reach[i])
        } else {
            (self.ball_ref[i], self.ball_reach[i])
        }
    }

    /// Adds the next block row (index = number of rows added so far), as
    /// the sphere of radius `radius` about its centroid; a piece of kind
    /// convex with `convex` (a body of a plugin shape), else a block.
    pub fn add_block(&mut self, centre: Vec3, radius: f64, convex: bool) {
        let index = self.block_extent.len() as u32;
        let piece = if convex {
            Piece::convex(index)
        } else {
            Piece::block(index)
        };
        self.block_piece.push(piece);
        let ce = Aabb::of_sphere(centre, radius + self.tolerance);
        let r = self.range_of(&ce);
        self.block_extent.push(ce);
        self.block_ref.push(centre);
        self.block_reach.push(radius + self.tolerance);
        self.block_range.push(r);
        self.bin(piece, r);
        self.moved.push(piece);
        self.block_moved.push(true);
    }

    /// Re-bins block `i` if its centroid moved more than the tolerance
    /// since it was last binned; returns whether it did.
    pub fn update_block(&mut self, i: usize, centre: Vec3) -> bool {
        let tol2 = self.tolerance * self.tolerance;
        if !left_reference(self.block_ref[i], centre, tol2) {
            return false;
        }
        self.block_ref[i] = centre;
        let ce = Aabb::of_sphere(centre, self.block_reach[i]);
        let r = self.range_of(&ce);
        let old = self.block_range[i];
        let piece = self.block_piece[i];
        if r != old {
            self.unbin(piece, old);
            self.bin(piece, r);
        }
        self.block_extent[i] = ce;
        self.block_range[i] = r;
        self.moved.push(piece);
        self.block_moved[i] = true;
        self.rebins += 1;
        true
    }

    fn bin(&mut self, piece: Piece, r: CellRange) {
        let dims = self.dims;
        let cells = &mut self.cells;
        Self::for_cells(dims, r, |c| cells[c].push(piece));
    }

    fn unbin(&mut self, piece: Piece, r: CellRange) {
        let dims = self.dims;
        let cells = &mut self.cells;
        Self::for_cells(dims, r, |c| {
            if let Some(k) = cells[c].iter().position(|&p| p == piece) {
                cells[c].swap_remove(k);
            }
        });
    }

    /// Adds the next ball (index = number of balls added so far).
    pub fn add_ball(&mut self, centre: Vec3, radius: f64) {
        let index = self.ball_extent.len() as u32;
        let ce = Aabb::of_sphere(centre, radius + self.tolerance);
        let r = self.range_of(&ce);
        self.ball_extent.push(ce);
        self.ball_ref.push(centre);
        self.ball_reach.push(radius + self.tolerance);
        self.ball_range.push(r);
        self.bin(Piece::ball(index), r);
        self.moved.push(Piece::ball(index));
        self.ball_moved.push(true);
    }

    /// Adds facet `global` (must equal the number of facets added so far).
    pub fn add_facet(&mut self, extent: Aabb) {
        let index = self.facet_extent.len() as u32;
        let ce = extent.enlarged(self.tolerance);
        let r = self.range_of(&ce);
        self.facet_extent.push(ce);
        self.facet_range.push(r);
        self.bin(Piece::facet(index), r);
        self.moved.push(Piece::facet(index));
        self.facet_moved.push(true);
    }

    /// Per ball: the centre at its last binning (see [`left_reference`]),
    /// what [`CellSpace::must_rebin`] compares against.
    pub fn ball_refs(&self) -> &[Vec3] {
        &self.ball_ref
    }

    /// Whether ball `i` with its centre at `centre` needs re-binning: its
    /// centre moved more than the tolerance since it was last binned.
    #[inline]
    pub fn must_rebin(&self, i: usize, centre: Vec3) -> bool {
        left_reference(self.ball_ref[i], centre, self.tolerance * self.tolerance)
    }

    /// Re-bins ball `i` if [`CellSpace::must_rebin`]; returns whether it
    /// did. The cell extent then still contains the ball's extent.
    #[inline]
    pub fn update_ball(&mut self, i: usize, centre: Vec3, radius: f64) -> bool {
        if !self.must_rebin(i, centre) {
            return false;
        }
        self.ball_ref[i] = centre;
        self.ball_reach[i] = radius + self.tolerance;
        let ce = Aabb::of_sphere(centre, radius + self.tolerance);
        let r = self.range_of(&ce);
        let old = self.ball_range[i];
        if r != old {
            self.unbin(Piece::ball(i as u32), old);
            self.bin(Piece::ball(i as u32), r);
        }
        self.ball_extent[i] = ce;
        self.ball_range[i] = r;
        self.moved.push(Piece::ball(i as u32));
        self.ball_moved[i] = true;
        self.rebins += 1;
        true
    }

    /// Re-bins facet `g` if its extent left its cell extent.
    pub fn update_facet(&mut self, g: usize, extent: Aabb) -> bool {
        if self.facet_extent[g].contains(&extent) {
            return false;
        }
        let ce = extent.enlarged(self.tolerance);
        let r = self.range_of(&ce);
        let old = self.facet_range[g];
        if r != old {
            self.unbin(Piece::facet(g as u32), old);
            self.bin(Piece::facet(g as u32), r);
        }
        self.facet_extent[g] = ce;
        self.facet_range[g] = r;
        self.moved.push(Piece::facet(g as u32));
        self.facet_moved[g] = true;
        self.rebins += 1;
        true
    }

    /// Whether anything was re-binned since the last [`CellSpace::candidates`].
    pub fn any_moved(&self) -> bool {
        !self.moved.is_empty()
    }

    /// Whether a piece was re-binned since the last
    /// [`CellSpace::candidates`]; only pairs with such a piece can have
    /// stopped being [`CellSpace::near`].
    #[inline]
    pub fn moved(&self, piece: Piece) -> bool {
        match piece.kind() {
            PieceKind::Facet => self.facet_moved[piece.index()],
            PieceKind::Block | PieceKind::Convex => self.block_moved[piece.index()],
            PieceKind::Ball => self.ball_moved[piece.index()],
        }
    }

    /// Cell extent of a piece reference.
    #[inline]
    pub fn extent(&self, piece: Piece) -> &Aabb {
        match piece.kind() {
            PieceKind::Facet => &self.facet_extent[piece.index()],
            PieceKind::Block | PieceKind::Convex => &self.block_extent[piece.index()],
            PieceKind::Ball => &self.ball_extent[piece.index()],
        }
    }

    /// Whether two pieces are near enough to keep (or create) a contact:
    /// the enlarged spheres of two balls or blocks overlap (at the nearest
    /// image in a periodic cell), or the cell extents of one of them and a
    /// facet do (in a periodic cell the body's image nearest the facet:
    /// facets do not repeat, see `cell_walls`).
    #[inline]
    pub fn near(&self, a: Piece, b: Piece) -> bool {
        if a.is_ball() && b.is_ball() {
            let (pa, ra) = (self.ball_ref[a.index()], self.ball_reach[a.index()]);
            let (pb, rb) = (self.ball_ref[b.index()], self.ball_reach[b.index()]);
            self.spheres_meet(pa, ra, pb, rb)
        } else if !a.is_facet() && !b.is_facet() {
            let ((pa, ra), (pb, rb)) = (self.sphere(a), self.sphere(b));
            self.spheres_meet(pa, ra, pb, rb)
        } else {
            let (ea, eb) = (self.extent(a), self.extent(b));
            match &self.periodic {
                None => ea.overlaps(eb),
                Some(grid) => {
                    let (ca, cb) = (ea.centre(), eb.centre());
                    let s = grid.separation(ca, cb) - (cb - ca);
                    ea.overlaps(&eb.translated(s))
                }
            }
        }
    }

    /// Whether the spheres `(pa, ra)` and `(pb, rb)` meet, at the nearest
    /// image of `pb` in a periodic cell.
    #[inline(always)]
    fn spheres_meet(&self, pa: Vec3, ra: f64, pb: Vec3, rb: f64) -> bool {
        let d = match &self.periodic {
            None => pa - pb,
            Some(grid) => grid.separation(pa, pb),
        };
        d.length_squared() <= (ra + rb) * (ra + rb)
    }

    /// Pairs `(a, b)` involving a re-binned piece that are [`CellSpace::near`],
    /// sorted and without duplicates. `a` is always a ball; `b` is a ball
    /// with a larger index or a facet reference. Facet-facet pairs are never
    /// produced (walls do not interact).
    pub fn candidates(&mut self, out: &mut Vec<(Piece, Piece)>) {
        out.clear();
        let moved = std::mem::take(&mut self.moved);
        // Each moved piece's pairs are found independently (in parallel
        // when many moved); the order of the list comes from the sort.
        let this = &*self;
        let periodic = this.periodic.is_some();
        let pairs_of = |pairs: &mut Vec<(Piece, Piece)>, p: Piece| {
            let range = this.range_of_piece(p);
            let ext = *this.extent(p);
            Self::for_cells_at(this.dims, range, |c, at| {
                for &q in &this.cells[c] {
                    if q == p || (p.is_facet() && q.is_facet()) {
                        continue;
                    }
                    if periodic {
                        // Wrapped ranges can overlap in two runs of cells,
                        // and boxes across the boundary do not overlap: the
                        // nearest-image test alone decides, and the sort
                        // below drops the pairs found twice.
                        if !this.near(p, q) {
                            continue;
                        }
                    } else {
                        // Two pieces share every cell of the overlap of
                        // their ranges; the pair is taken from its first
                        // cell only.
                        let rq = this.range_of_piece(q);
                        if (0..3).any(|k| range.lo[k].max(rq.lo[k]) != at[k]) {
                            continue;
                        }
                        if !ext.overlaps(this.extent(q)) || !this.near(p, q) {
                            continue;
                        }
                    }
                    // Normalise: the lower piece first (a ball before a
                    // block before a facet).
                    let pair = (p.min(q), p.max(q));
                    pairs.push(pair);
                }
            });
        };
        if moved.len() < PARALLEL_MOVED {
            for &p in &moved {
                pairs_of(out, p);
            }
        } else {
            // One list per slice of pieces, a few slices per thread.
            let per = moved
                .len()
                .div_ceil(4 * rayon::current_num_threads())
                .max(16);
            let lists = crate::team::map(moved.chunks(per).collect(), |_, pieces| {
                let mut pairs = Vec::new();
                for &p in pieces {
                    pairs_of(&mut pairs, p);
                }
                pairs
            });
            out.extend(lists.into_iter().flatten());
        }
        if out.len() < PARALLEL_SORT {
            out.sort_unstable();
        } else {
            out.par_sort_unstable();
        }
        out.dedup();
        for &p in &moved {
            match p.kind() {
                PieceKind::Facet => self.facet_moved[p.index()] = false,
                PieceKind::Block | PieceKind::Convex => self.block_moved[p.index()] = false,
                PieceKind::Ball => self.ball_moved[p.index()] = false,
            }
        }
        self.moved = moved;
        self.moved.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Every pair with a moved piece that is `near`, by brute force over
    /// all pairs, normalised as `candidates` gives them (ball first; two
    /// balls by index). Facets never move here.
    fn brute(cs: &CellSpace, moved: &[bool], n_facets: usize) -> Vec<(Piece, Piece)> {
        let n = moved.len() as u32;
        let mut pairs = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                if (moved[a as usize] || moved[b as usize])
                    && cs.near(Piece::ball(a), Piece::ball(b))
                {
                    pairs.push((Piece::ball(a), Piece::ball(b)));
                }
            }
            for g in 0..n_facets as u32 {
                if moved[a as usize] && cs.near(Piece::ball(a), Piece::facet(g)) {
                    pairs.push((Piece::ball(a), Piece::facet(g)));
                }
            }
        }
        pairs.sort_unstable();
        pairs
    }

    #[test]
    fn candidates_are_the_near_pairs_of_moved_pieces() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let side = 12.0;
        let domain = Aabb {
            min: Vec3::ZERO,
            max: Vec3::splat(side),
        };
        let (r_max, tol) = (0.5, 0.05);
        let mut cs = CellSpace::new(domain, 2.0 * (r_max + tol), tol);
        let n = 600;
        let mut balls: Vec<(Vec3, f64)> = (0..n)
            .map(|_| {
                let p = Vec3::new(
                    rng.random_range(0.0..side),
                    rng.random_range(0.0..side),
                    rng.random_range(0.0..side),
                );
                (p, rng.random_range(0.2..r_max))
            })
            .collect();
        for &(p, r) in &balls {
            cs.add_ball(p, r);
        }
        // Thin slabs, as wall facets are, across the box.
        let n_facets = 6;
        for k in 0..n_facets {
            let z = side * (k as f64 + 0.5) / n_facets as f64;
            cs.add_facet(Aabb {
                min: Vec3::new(1.0, 1.0 + k as f64, z),
                max: Vec3::new(side - 1.0, 4.0 + k as f64, z + 0.01),
            });
        }
        let mut out = Vec::new();
        // First everything was just added; then a few balls move (the
        // serial path), then many (the parallel one).
        cs.candidates(&mut out);
        let all = brute(&cs, &vec![true; n], n_facets);
        // Facet-facet pairs are never candidates; pairs of a ball and a
        // facet come from the ball's side or the facet's, once.
        assert_eq!(out, all);
        assert!(out.iter().any(|&(_, b)| b.is_facet()));
        for moving in [5, 200] {
            let mut moved = vec![false; n];
            for _ in 0..moving {
                let i = rng.random_range(0..n);
                let step = Vec3::new(
                    rng.random_range(-0.4..0.4),
                    rng.random_range(-0.4..0.4),
                    rng.random_range(-0.4..0.4),
                );
                balls[i].0 = (balls[i].0 + step).clamp(Vec3::ZERO, Vec3::splat(side));
                moved[i] |= cs.update_ball(i, balls[i].0, balls[i].1);
            }
            assert!(moved.iter().filter(|&&m| m).count() * 2 > moving);
            cs.candidates(&mut out);
            assert_eq!(out, brute(&cs, &moved, n_facets), "{moving} moving");
            assert!(!cs.any_moved());
        }
    }
}
