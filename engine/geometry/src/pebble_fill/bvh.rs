//! The bounding-volume hierarchy of the mesh's triangles, for the exact
//! distance from a grid node to the surface.

use glam::DVec3;

use super::LEAF_SIZE;
use crate::gjk::closest_triangle;

/// A node of the bounding-volume hierarchy: its box, and either a leaf's
/// triangles `first..first + count` (of [`Bvh::triangles`]) or, with
/// `count == 0`, two children, the left one next in the array and the
/// right one at `right`.
#[derive(Debug, Clone, Copy)]
struct BvhNode {
    lo: DVec3,
    hi: DVec3,
    first: u32,
    count: u32,
    right: u32,
}

/// A bounding-volume hierarchy of triangles for nearest-distance queries:
/// median splits of the centroids along the longest side, leaves of at
/// most [`LEAF_SIZE`] triangles.
pub(super) struct Bvh {
    nodes: Vec<BvhNode>,
    triangles: Vec<[DVec3; 3]>,
}

impl Bvh {
    pub(super) fn new(triangles: Vec<[DVec3; 3]>) -> Self {
        let centroids: Vec<DVec3> = triangles
            .iter()
            .map(|[a, b, c]| (*a + *b + *c) / 3.0)
            .collect();
        let mut order: Vec<u32> = (0..triangles.len() as u32).collect();
        let mut nodes = Vec::with_capacity(2 * triangles.len() / LEAF_SIZE + 1);
        build(&mut nodes, &mut order, 0, &triangles, &centroids);
        let triangles = order.iter().map(|&t| triangles[t as usize]).collect();
        Self { nodes, triangles }
    }

    /// Distance from `p` to the nearest triangle, and that triangle; `seed`
    /// (a triangle likely near, such as a neighbouring point's nearest)
    /// gives the first upper bound that prunes the search.
    pub(super) fn nearest(&self, p: DVec3, seed: Option<u32>) -> (f64, u32) {
        let (mut best, mut best_index) = match seed {
            Some(t) => {
                let [a, b, c] = self.triangles[t as usize];
                (point_triangle_distance2(p, a, b, c), t)
            }
            None => (f64::INFINITY, 0),
        };
        let mut stack = Vec::with_capacity(64);
        stack.push(0u32);
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n as usize];
            if box_distance2(node, p) >= best {
                continue;
            }
            if node.count > 0 {
                let first = node.first as usize;
                for t in first..first + node.count as usize {
                    let [a, b, c] = self.triangles[t];
                    let d = point_triangle_distance2(p, a, b, c);
                    // Ties to the lower index, whatever the seed.
                    if d < best || (d == best && (t as u32) < best_index) {
                        (best, best_index) = (d, t as u32);
                    }
                }
            } else {
                let (left, right) = (n + 1, node.right);
                let dl = box_distance2(&self.nodes[left as usize], p);
                let dr = box_distance2(&self.nodes[right as usize], p);
                // The nearer child is visited first.
                if dl <= dr {
                    stack.push(right);
                    stack.push(left);
                } else {
                    stack.push(left);
                    stack.push(right);
                }
            }
        }
        (best.sqrt(), best_index)
    }
}

/// Builds the subtree of `order[..]` (offset `offset` in the full order)
/// and returns its index.
fn build(
    nodes: &mut Vec<BvhNode>,
    order: &mut [u32],
    offset: usize,
    triangles: &[[DVec3; 3]],
    centroids: &[DVec3],
) -> u32 {
    let index = nodes.len() as u32;
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    let (mut clo, mut chi) = (lo, hi);
    for &t in order.iter() {
        for p in triangles[t as usize] {
            lo = lo.min(p);
            hi = hi.max(p);
        }
        clo = clo.min(centroids[t as usize]);
        chi = chi.max(centroids[t as usize]);
    }
    nodes.push(BvhNode {
        lo,
        hi,
        first: offset as u32,
        count: order.len() as u32,
        right: 0,
    });
    if order.len() <= LEAF_SIZE {
        return index;
    }
    let spread = chi - clo;
    let axis = if spread.x >= spread.y && spread.x >= spread.z {
        0
    } else if spread.y >= spread.z {
        1
    } else {
        2
    };
    order.sort_unstable_by(|&s, &t| {
        centroids[s as usize][axis]
            .total_cmp(&centroids[t as usize][axis])
            .then(s.cmp(&t))
    });
    let mid = order.len() / 2;
    let (left, right) = order.split_at_mut(mid);
    build(nodes, left, offset, triangles, centroids);
    let right = build(nodes, right, offset + mid, triangles, centroids);
    nodes[index as usize].count = 0;
    nodes[index as usize].right = right;
    index
}

/// Squared distance from `p` to the box of `node` (0 inside).
#[inline]
fn box_distance2(node: &BvhNode, p: DVec3) -> f64 {
    let d = (node.lo - p).max(p - node.hi).max(DVec3::ZERO);
    d.length_squared()
}

/// Squared distance from `p` to the triangle `abc`: the closest point of
/// the triangle moved by `-p` to the origin, as GJK finds it (Voronoi
/// regions; a degenerate triangle by its edges).
#[inline]
pub(super) fn point_triangle_distance2(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> f64 {
    closest_triangle(a - p, b - p, c - p).0.length_squared()
}
