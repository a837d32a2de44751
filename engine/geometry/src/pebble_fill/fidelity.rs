//! The [`Fidelity`] of a fill: the union's volume and Jaccard index,
//! integrated along the lines of a fine grid, and the surface's gap to
//! the union (the module docs, "Fidelity").

use glam::DVec3;

use super::grid::Axis;
use super::solid::Solid;
use super::Fidelity;

/// The fidelity of `pebbles` in `solid`, the volumes integrated along the
/// lines of a grid of spacing `hf`.
pub(super) fn fidelity(solid: &Solid, pebbles: &[(DVec3, f64)], hf: f64) -> Fidelity {
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
