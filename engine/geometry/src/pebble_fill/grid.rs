//! The choosing grid and what is chosen on it (the module docs' method,
//! steps 1 to 3): the depth of every inside node, the candidates of the
//! medial axis, and the greedy cover that picks the pebbles.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use glam::DVec3;

use super::solid::Solid;
use super::{COVER_MARGIN, NESTED_SLOPE, RELATIVE_TOLERANCE};

/// Positions along one axis of a grid: `centre + (i - shift) h` for
/// `i < n`.
pub(super) struct Axis {
    pub(super) centre: f64,
    pub(super) shift: f64,
    pub(super) h: f64,
    pub(super) n: usize,
}

impl Axis {
    #[inline]
    pub(super) fn at(&self, i: usize) -> f64 {
        self.centre + (i as f64 - self.shift) * self.h
    }

    /// Indices `i0..i1` whose positions may lie in `[lo, hi]` (one more
    /// each side, for rounding).
    pub(super) fn range(&self, lo: f64, hi: f64) -> (usize, usize) {
        let index = |x: f64| (x - self.centre) / self.h + self.shift;
        let i0 = (index(lo).floor() - 1.0).max(0.0);
        let i1 = (index(hi).ceil() + 2.0).min(self.n as f64).max(i0);
        (i0 as usize, i1 as usize)
    }
}

/// A regular grid: node `(i, j, k)` at `centre + ((i, j, k) - shift) h`,
/// index `i + n0 (j + n1 k)`.
pub(super) struct Grid {
    centre: DVec3,
    pub(super) h: f64,
    n: [usize; 3],
    shift: DVec3,
}

impl Grid {
    /// The choosing grid of `solid`: `resolution` steps along the longest
    /// side of its box, a node at the box's centre, covering the box.
    pub(super) fn nodes(solid: &Solid, resolution: usize) -> Self {
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

    pub(super) fn position(&self, index: usize) -> DVec3 {
        let i = index % self.n[0];
        let j = index / self.n[0] % self.n[1];
        let k = index / (self.n[0] * self.n[1]);
        DVec3::new(self.axis(0).at(i), self.axis(1).at(j), self.axis(2).at(k))
    }
}

/// Distance to the surface of every node inside the solid, 0 for the
/// others (and for nodes on the surface, within [`RELATIVE_TOLERANCE`] of
/// the box's diagonal: a line along an edge may count them in).
pub(super) fn depths(solid: &Solid, grid: &Grid) -> Vec<f64> {
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
pub(super) fn medial_candidates(grid: &Grid, depth: &[f64]) -> Vec<usize> {
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
pub(super) fn choose(
    grid: &Grid,
    depth: &[f64],
    candidates: &[usize],
    count: usize,
) -> Vec<(DVec3, f64)> {
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
pub(super) fn ball_nodes(
    grid: &Grid,
    centre: usize,
    reach2: f64,
    open: &mut [bool],
    close: bool,
) -> usize {
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
