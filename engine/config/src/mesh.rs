//! Wall meshes: the box generator, STL and OBJ readers, and welding.
//!
//! Reads: box corners, or the bytes of an `.stl` (ASCII at full precision
//! or binary, through `talus_geometry::stl`) or `.obj` (through `tobj`,
//! polygons triangulated). Writes: [`MeshData`]. Invariant: the normal
//! `(v1 - v0) x (v2 - v0)` of every triangle points to the active side
//! (into the box for generated boxes; as the file orders its vertices for
//! files); after [`weld`], no two vertices are within the weld tolerance,
//! every vertex is used, and no triangle is degenerate.

use std::collections::HashMap;
use std::io::Cursor;

use crate::types::MeshData;

/// A problem inside a data file: 1-based line and column when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileIssue {
    /// 1-based line, or `None` when no line applies (binary file, whole file).
    pub line: Option<usize>,
    /// 1-based column (1 when unknown).
    pub col: usize,
    pub message: String,
}

impl FileIssue {
    pub(crate) fn at(line: usize, col: usize, message: impl Into<String>) -> Self {
        Self {
            line: Some(line),
            col,
            message: message.into(),
        }
    }

    pub(crate) fn whole(message: impl Into<String>) -> Self {
        Self {
            line: None,
            col: 1,
            message: message.into(),
        }
    }
}

/// Vertices and triangles as read from a file, before welding.
pub(crate) type Soup = (Vec<[f64; 3]>, Vec<[u32; 3]>);

/// Relative weld tolerance: vertices closer than this times the diagonal of
/// the mesh's bounding box are merged.
pub(crate) const WELD_RELATIVE: f64 = 1e-12;

/// Faces of a box in the order of the `open` flags: -x, +x, -y, +y, -z, +z.
/// Each entry: (fixed axis, at max?, u axis, v axis) with `u x v` pointing
/// into the box, so triangles wound (u, v) have inward normals.
const BOX_FACES: [(usize, bool, usize, usize); 6] = [
    (0, false, 1, 2),
    (0, true, 2, 1),
    (1, false, 2, 0),
    (1, true, 0, 2),
    (2, false, 0, 1),
    (2, true, 1, 0),
];

/// The closed faces of an axis-aligned box, each split into
/// `divisions x divisions` squares of two triangles, normals pointing in.
///
/// `open[f]` leaves face `f` out (order -x, +x, -y, +y, -z, +z). Vertices
/// shared between faces are welded.
pub fn box_mesh(min: [f64; 3], max: [f64; 3], open: [bool; 6], divisions: u32) -> MeshData {
    let d = divisions.max(1);
    // The same formula on every face gives bit-identical shared edges.
    let coord = |axis: usize, i: u32| -> f64 {
        if i == d {
            max[axis]
        } else {
            min[axis] + (max[axis] - min[axis]) * (f64::from(i) / f64::from(d))
        }
    };
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    for (face, &(axis, at_max, u, v)) in BOX_FACES.iter().enumerate() {
        if open[face] {
            continue;
        }
        let base = vertices.len() as u32;
        for j in 0..=d {
            for i in 0..=d {
                let mut p = [0.0; 3];
                p[axis] = if at_max { max[axis] } else { min[axis] };
                p[u] = coord(u, i);
                p[v] = coord(v, j);
                vertices.push(p);
            }
        }
        let idx = |i: u32, j: u32| base + j * (d + 1) + i;
        for j in 0..d {
            for i in 0..d {
                let (p00, p10, p11, p01) =
                    (idx(i, j), idx(i + 1, j), idx(i + 1, j + 1), idx(i, j + 1));
                triangles.push([p00, p10, p11]);
                triangles.push([p00, p11, p01]);
            }
        }
    }
    // A box has no degenerate triangles, so welding cannot fail unless every
    // face is open, which validation rejects before calling this.
    weld(&vertices, &triangles).unwrap_or_default()
}

/// Why a mesh could not be welded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WeldIssue {
    /// No triangle is left.
    Empty,
    /// Triangle `triangle` (0-based, input order) has three distinct but
    /// collinear vertices.
    Degenerate { triangle: usize },
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn norm(a: [f64; 3]) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

/// Merges vertices closer than [`WELD_RELATIVE`] x the bounding-box
/// diagonal, drops triangles that collapse (two corners merged) and unused
/// vertices, and rejects triangles whose distinct corners are collinear.
///
/// Vertices keep the order of their first use. Indices must be in range.
pub(crate) fn weld(vertices: &[[f64; 3]], triangles: &[[u32; 3]]) -> Result<MeshData, WeldIssue> {
    if triangles.is_empty() {
        return Err(WeldIssue::Empty);
    }
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for t in triangles {
        for &i in t {
            let p = vertices[i as usize];
            for axis in 0..3 {
                lo[axis] = lo[axis].min(p[axis]);
                hi[axis] = hi[axis].max(p[axis]);
            }
        }
    }
    let tol = WELD_RELATIVE * norm(sub(hi, lo));
    if tol <= 0.0 {
        // Every vertex is the same point: every triangle collapses.
        return Err(WeldIssue::Empty);
    }

    // Grid hashing with cell size `tol`: a vertex within `tol` of another
    // lies in the same or a neighbouring cell.
    let cell = |p: [f64; 3]| -> [i64; 3] {
        std::array::from_fn(|axis| ((p[axis] - lo[axis]) / tol).floor() as i64)
    };
    let mut grid: HashMap<[i64; 3], Vec<u32>> = HashMap::new();
    let mut reps: Vec<[f64; 3]> = Vec::new();
    let mut map: Vec<Option<u32>> = vec![None; vertices.len()];
    for &i in triangles.iter().flatten() {
        if map[i as usize].is_some() {
            continue;
        }
        let p = vertices[i as usize];
        let c = cell(p);
        let mut found = None;
        'search: for dx in -1..=1 {
            for dy in -1..=1 {
                for dz in -1..=1 {
                    if let Some(list) = grid.get(&[c[0] + dx, c[1] + dy, c[2] + dz]) {
                        for &r in list {
                            if norm(sub(reps[r as usize], p)) <= tol {
                                found = Some(r);
                                break 'search;
                            }
                        }
                    }
                }
            }
        }
        let r = found.unwrap_or_else(|| {
            let r = reps.len() as u32;
            reps.push(p);
            grid.entry(c).or_default().push(r);
            r
        });
        map[i as usize] = Some(r);
    }
    let rep_of = |i: u32| map[i as usize].expect("every used vertex is mapped");

    let mut kept: Vec<[u32; 3]> = Vec::with_capacity(triangles.len());
    for (t_idx, t) in triangles.iter().enumerate() {
        let w = [rep_of(t[0]), rep_of(t[1]), rep_of(t[2])];
        if w[0] == w[1] || w[1] == w[2] || w[0] == w[2] {
            continue;
        }
        let e1 = sub(reps[w[1] as usize], reps[w[0] as usize]);
        let e2 = sub(reps[w[2] as usize], reps[w[0] as usize]);
        // Scale-free: the sine of the corner angle at v0.
        if norm(cross(e1, e2)) <= 1e-12 * norm(e1) * norm(e2) {
            return Err(WeldIssue::Degenerate { triangle: t_idx });
        }
        kept.push(w);
    }
    if kept.is_empty() {
        return Err(WeldIssue::Empty);
    }

    // Compact: keep only vertices used by the kept triangles.
    let mut new_idx: Vec<Option<u32>> = vec![None; reps.len()];
    let mut out_vertices = Vec::new();
    for t in &mut kept {
        for i in t.iter_mut() {
            let n = *new_idx[*i as usize].get_or_insert_with(|| {
                out_vertices.push(reps[*i as usize]);
                (out_vertices.len() - 1) as u32
            });
            *i = n;
        }
    }
    Ok(MeshData {
        vertices: out_vertices,
        triangles: kept,
    })
}

/// Reads an STL file (ASCII at full precision, or binary). Vertex order is
/// kept; the stored facet normals are ignored.
pub(crate) fn read_stl(bytes: &[u8]) -> Result<Soup, FileIssue> {
    let facets = talus_geometry::stl::read_stl(bytes).map_err(|e| FileIssue {
        line: e.line,
        col: e.col,
        message: if e.line.is_some() {
            format!("cannot read ASCII STL: {}", e.message)
        } else {
            e.message
        },
    })?;
    let vertices = facets.iter().flatten().copied().collect();
    let triangles = (0..facets.len() as u32)
        .map(|t| [3 * t, 3 * t + 1, 3 * t + 2])
        .collect();
    Ok((vertices, triangles))
}

/// Reads an OBJ file; every object's polygons, triangulated as fans.
/// Materials are ignored.
pub(crate) fn read_obj(bytes: &[u8]) -> Result<Soup, FileIssue> {
    let mut cursor = Cursor::new(bytes);
    let options = tobj::LoadOptions {
        triangulate: true,
        ..Default::default()
    };
    let result = tobj::load_obj_buf(&mut cursor, &options, |_| {
        Err(tobj::LoadError::OpenFileFailed)
    });
    let (models, _materials) = result.map_err(|e| {
        // tobj reads line by line: the failing line is the last one
        // consumed.
        let consumed = (cursor.position() as usize).min(bytes.len());
        let before = &bytes[..consumed.saturating_sub(1)];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        FileIssue::at(line, 1, format!("malformed OBJ: {e}"))
    })?;
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    for model in models {
        let base = vertices.len() as u32;
        let mesh = model.mesh;
        vertices.extend(mesh.positions.chunks_exact(3).map(|c| [c[0], c[1], c[2]]));
        let n = mesh.positions.len() / 3;
        for t in mesh.indices.chunks_exact(3) {
            if t.iter().any(|&i| i as usize >= n) {
                return Err(FileIssue::whole("OBJ face refers to a missing vertex"));
            }
            triangles.push([base + t[0], base + t[1], base + t[2]]);
        }
    }
    Ok((vertices, triangles))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn normal(m: &MeshData, t: [u32; 3]) -> [f64; 3] {
        let p = |i: u32| m.vertices[i as usize];
        cross(sub(p(t[1]), p(t[0])), sub(p(t[2]), p(t[0])))
    }

    fn edge_counts(m: &MeshData) -> HashMap<(u32, u32), usize> {
        let mut edges = HashMap::new();
        for t in &m.triangles {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                *edges.entry((a.min(b), a.max(b))).or_insert(0) += 1;
            }
        }
        edges
    }

    #[test]
    fn closed_box_is_watertight_with_inward_normals() {
        let (min, max) = ([-1.0, 0.0, 2.0], [3.0, 0.5, 4.0]);
        let centre = [1.0, 0.25, 3.0];
        for d in [1u32, 2, 3, 5] {
            let m = box_mesh(min, max, [false; 6], d);
            assert_eq!(m.triangles.len(), 12 * (d * d) as usize);
            // Euler: a closed surface split this way has 6 d^2 + 2 vertices.
            assert_eq!(m.vertices.len(), 6 * (d * d) as usize + 2);
            for &t in &m.triangles {
                let n = normal(&m, t);
                let c = m.vertices[t[0] as usize];
                let to_centre = sub(centre, c);
                let dot: f64 = (0..3).map(|a| n[a] * to_centre[a]).sum();
                assert!(dot > 0.0, "normal of {t:?} points out");
            }
            assert!(edge_counts(&m).values().all(|&c| c == 2));
        }
    }

    #[test]
    fn open_faces_are_left_out() {
        let m = box_mesh(
            [0.0; 3],
            [1.0; 3],
            [false, false, false, false, false, true],
            2,
        );
        assert_eq!(m.triangles.len(), 5 * 8);
        // The rim of the open face is a boundary: its edges are used once.
        let once = edge_counts(&m).values().filter(|&&c| c == 1).count();
        assert_eq!(once, 4 * 2);
    }

    #[test]
    fn weld_merges_close_vertices_and_drops_collapsed_triangles() {
        let v = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [1.0 + 1e-14, 0.0, 0.0],
            [1.0, 1.0, 0.0],
            [5.0, 5.0, 5.0], // unused
        ];
        let t = [[0, 1, 2], [3, 4, 2], [0, 1, 3]];
        let m = weld(&v, &t).unwrap();
        assert_eq!(m.vertices.len(), 4);
        assert_eq!(m.triangles, vec![[0, 1, 2], [1, 3, 2]]);
    }

    #[test]
    fn weld_rejects_collinear_and_empty() {
        let v = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [2.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
        ];
        assert_eq!(
            weld(&v, &[[0, 1, 3], [0, 1, 2]]),
            Err(WeldIssue::Degenerate { triangle: 1 })
        );
        assert_eq!(weld(&v, &[]), Err(WeldIssue::Empty));
        assert_eq!(weld(&v, &[[0, 0, 1]]), Err(WeldIssue::Empty));
    }
}
