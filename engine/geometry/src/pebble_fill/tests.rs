//! Unit tests of the pebble fill's parts.

use super::bvh::{point_triangle_distance2, Bvh};
use super::grid::ball_nodes;
use super::*;

/// The twelve outward triangles of the box `[lo, hi]`.
fn box_triangles(lo: DVec3, hi: DVec3) -> Vec<[DVec3; 3]> {
    let corner = |i: usize| {
        DVec3::new(
            if i & 1 == 0 { lo.x } else { hi.x },
            if i & 2 == 0 { lo.y } else { hi.y },
            if i & 4 == 0 { lo.z } else { hi.z },
        )
    };
    let faces = [
        [0, 4, 6, 2],
        [1, 3, 7, 5],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 2, 3, 1],
        [4, 5, 7, 6],
    ];
    faces
        .iter()
        .flat_map(|f| {
            [
                [corner(f[0]), corner(f[1]), corner(f[2])],
                [corner(f[0]), corner(f[2]), corner(f[3])],
            ]
        })
        .collect()
}

/// Winding number about `(x, y, z)` counted along the line in +x.
fn winding(solid: &Solid, x: f64, y: f64, z: f64) -> i32 {
    let all: Vec<u32> = (0..solid.triangles.len() as u32).collect();
    let mut hits = Vec::new();
    solid.crossings(y, z, &all, &mut hits);
    hits.iter().filter(|h| h.0 > x).map(|h| h.1).sum()
}

#[test]
fn lines_through_edges_and_vertices_cross_the_surface_once() {
    let solid = Solid::new(&box_triangles(DVec3::splat(-1.0), DVec3::splat(1.0))).unwrap();
    // Through the diagonals of the +-x faces (shared edges), through
    // their corners (vertices of up to six triangles), along the
    // edges of the side faces, and through plain face points.
    for (y, z) in [
        (0.0, 0.0),
        (0.5, 0.5),
        (-0.5, 0.5),
        (0.3, -0.3),
        (1.0, 1.0),
        (-1.0, 1.0),
        (1.0, -1.0),
        (-1.0, -1.0),
        (1.0, 0.2),
        (-0.7, -1.0),
    ] {
        let mut hits = Vec::new();
        let all: Vec<u32> = (0..12).collect();
        solid.crossings(y, z, &all, &mut hits);
        let signs: Vec<i32> = hits.iter().map(|h| h.1).collect();
        let on_boundary = y.abs() == 1.0 || z.abs() == 1.0;
        if on_boundary {
            // On the box's side: all in or all out, consistently.
            assert!(signs.is_empty() || signs == [-1, 1], "({y}, {z}): {hits:?}");
        } else {
            assert_eq!(signs, [-1, 1], "({y}, {z}): {hits:?}");
            assert_eq!(hits[0].0, -1.0);
            assert_eq!(hits[1].0, 1.0);
            assert_eq!(winding(&solid, 0.0, y, z), 1);
            assert_eq!(winding(&solid, 1.5, y, z), 0);
            assert_eq!(winding(&solid, -1.5, y, z), 0);
        }
    }
}

#[test]
fn point_triangle_distance_matches_brute_force() {
    let (a, b, c) = (
        DVec3::new(0.1, -0.2, 0.3),
        DVec3::new(1.2, 0.1, -0.1),
        DVec3::new(0.3, 0.9, 0.2),
    );
    // Dense barycentric sampling of the triangle as the reference.
    let n = 400;
    for p in [
        DVec3::new(0.4, 0.3, 1.0),
        DVec3::new(-1.0, -1.0, 0.0),
        DVec3::new(2.0, 0.0, 0.0),
        DVec3::new(0.5, 2.0, -0.5),
        DVec3::new(0.7, -0.5, 0.1),
        DVec3::new(0.5, 0.2, 0.15),
    ] {
        let mut brute = f64::INFINITY;
        for i in 0..=n {
            for j in 0..=n - i {
                let (u, v) = (i as f64 / n as f64, j as f64 / n as f64);
                let q = a + (b - a) * u + (c - a) * v;
                brute = brute.min((p - q).length_squared());
            }
        }
        let exact = point_triangle_distance2(p, a, b, c);
        assert!(exact <= brute + 1e-12, "{p}: {exact} > {brute}");
        assert!(
            brute.sqrt() - exact.sqrt() < 4e-3,
            "{p}: {exact} vs {brute}"
        );
    }
    // A degenerate (collinear) triangle is its longest edge.
    let d = point_triangle_distance2(DVec3::Y, DVec3::ZERO, DVec3::X, DVec3::X * 2.0);
    assert_eq!(d, 1.0);
}

#[test]
fn the_hierarchy_finds_the_nearest_triangle() {
    let mut soup = box_triangles(DVec3::new(-1.0, -0.5, -0.25), DVec3::new(1.0, 0.5, 0.25));
    soup.extend(box_triangles(DVec3::splat(2.0), DVec3::splat(3.0)));
    let bvh = Bvh::new(soup.clone());
    for p in [
        DVec3::ZERO,
        DVec3::new(0.9, 0.1, 0.0),
        DVec3::new(2.5, 2.5, 2.4),
        DVec3::new(1.6, 1.6, 1.6),
        DVec3::new(-3.0, 0.0, 7.0),
    ] {
        let brute = soup
            .iter()
            .map(|[a, b, c]| point_triangle_distance2(p, *a, *b, *c))
            .fold(f64::INFINITY, f64::min)
            .sqrt();
        let (d, t) = bvh.nearest(p, None);
        assert_eq!(d, brute, "{p}");
        for seed in [0, 7, 23] {
            assert_eq!(bvh.nearest(p, Some(seed)), (d, t), "{p} {seed}");
        }
    }
}

#[test]
fn the_lazy_greedy_chooses_as_recounting_every_candidate_does() {
    // A non-convex solid: an L-shaped prism, as two boxes' worth of
    // triangles would leave T-junctions, built from its outline.
    let outline = [
        [0.0, 0.0],
        [2.0, 0.0],
        [2.0, 1.0],
        [1.0, 1.0],
        [1.0, 2.0],
        [0.0, 2.0],
    ]
    .map(|[x, y]| DVec3::new(x, y, 0.0));
    let up = DVec3::Z * 0.7;
    let mut soup = vec![
        [outline[0], outline[3], outline[2]],
        [outline[0], outline[2], outline[1]],
        [outline[0], outline[5], outline[4]],
        [outline[0], outline[4], outline[3]],
    ];
    for t in soup.clone() {
        soup.push([t[0] + up, t[2] + up, t[1] + up]);
    }
    for i in 0..6 {
        let (a, b) = (outline[i], outline[(i + 1) % 6]);
        soup.push([a, b, b + up]);
        soup.push([a, b + up, a + up]);
    }
    let solid = Solid::new(&soup).unwrap();
    let grid = Grid::nodes(&solid, 24);
    let depth = depths(&solid, &grid);
    let candidates = medial_candidates(&grid, &depth);
    // The medial sheets of a thin prism: about a third of the nodes.
    let inside = depth.iter().filter(|&&d| d > 0.0).count();
    assert!(
        candidates.len() < inside / 2,
        "{} of {inside}",
        candidates.len()
    );
    let count = 12;
    let lazy = choose(&grid, &depth, &candidates, count);

    let mut open: Vec<bool> = depth.iter().map(|&d| d > 0.0).collect();
    let reach = |c: usize| {
        let r = depth[c] / grid.h;
        r * r * (1.0 - COVER_MARGIN)
    };
    let mut eager = Vec::new();
    for _ in 0..count {
        let mut best = (0, usize::MAX);
        for &c in &candidates {
            let gain = ball_nodes(&grid, c, reach(c), &mut open, false);
            if gain > best.0 {
                best = (gain, c);
            }
        }
        if best.0 == 0 {
            break;
        }
        ball_nodes(&grid, best.1, reach(best.1), &mut open, true);
        eager.push((grid.position(best.1), depth[best.1]));
    }
    assert_eq!(lazy, eager);
    assert_eq!(lazy.len(), count);
    // Both arms of the L get pebbles.
    assert!(lazy.iter().any(|p| p.0.x > 1.2) && lazy.iter().any(|p| p.0.y > 1.2));
}
