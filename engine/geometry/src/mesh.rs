//! Rigid blocks from mesh files: each closed convex object of an OBJ or
//! STL file becomes one block.
//!
//! Reads: the bytes of an `.obj` (through `tobj`, polygons triangulated) or
//! `.stl` (ASCII or binary, through [`crate::stl`]) file, or a triangle soup.
//! Writes: one [`MeshBlock`] per object, in file order, or a [`MeshError`]
//! naming the file, the object and why it is not a block.
//! Invariant: a block is returned only for an object whose surface is
//! closed, consistently oriented, encloses volume and is convex within the
//! tolerance; the block is the convex hull of the object's vertices, in the
//! file's coordinates.
//!
//! # Objects
//!
//! Vertices with the same coordinates (bit for bit) are one vertex; STL
//! files repeat each corner per triangle and OBJ files may too. The
//! triangles are then split into connected parts across shared edges. In
//! an OBJ file each object (`o`/`g` section, as `tobj` reads them) is split
//! on its own and a part is named after its object (`name`, or `name part
//! k` when it falls into several parts); in an STL file the parts are
//! named after the file stem the same way.
//!
//! # Checks, in order
//!
//! With `size` the object's bounding-box diagonal and `tol =
//! relative_tolerance * size` ([`MeshOptions`], default 1e-6: STL stores
//! coordinates in single precision, so a flat face read back has corners
//! about 1e-7 of the size off its plane):
//!
//! 1. every edge is shared by exactly two triangles, running opposite ways
//!    (otherwise: open edges, edges with more than two triangles, or
//!    triangles that disagree on the outside);
//! 2. the enclosed volume is more than `tol * area` (a closed surface with
//!    all triangles turned inside out is turned back, not refused);
//! 3. no edge is reflex: across every edge, the far corner of each triangle
//!    lies at most `tol` above the plane of the other;
//! 4. no vertex lies deeper than `tol` inside the hull of the vertices;
//! 5. the enclosed volume matches the hull's within `tol * area` (a surface
//!    that wraps twice passes 3 and 4 but encloses twice the volume).

use std::collections::HashMap;
use std::fmt;
use std::io::Cursor;
use std::path::{Path, PathBuf};

use glam::DVec3;

use crate::error::GeometryError;
use crate::mass::mass_properties;
use crate::polyhedron::ConvexPolyhedron;

/// Options of the mesh reader.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeshOptions {
    /// Tolerance of the closedness and convexity checks, relative to each
    /// object's bounding-box diagonal; default 1e-6.
    pub relative_tolerance: f64,
}

impl Default for MeshOptions {
    fn default() -> Self {
        Self {
            relative_tolerance: 1e-6,
        }
    }
}

/// One block read from a mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshBlock {
    /// The object's name (see the module docs).
    pub name: String,
    /// The block, in the file's coordinates (m).
    pub block: ConvexPolyhedron,
}

/// Why a mesh file gave no blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshError {
    /// The file (or the label given to an in-memory mesh).
    pub file: PathBuf,
    /// The object at fault, when one is.
    pub object: Option<String>,
    /// What is wrong (boxed: the kinds carry points and counts, and an
    /// error should stay small to pass around).
    pub kind: Box<MeshErrorKind>,
}

/// What is wrong with a mesh or one of its objects.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum MeshErrorKind {
    /// The file could not be read.
    Read(String),
    /// The extension is neither `.obj` nor `.stl`.
    UnknownFormat,
    /// The parser refused the file.
    Parse(String),
    /// No triangle at all.
    Empty,
    /// Edges used by one triangle only.
    Open {
        /// Number of such edges.
        edges: usize,
        /// End points of the first one.
        first: [DVec3; 2],
    },
    /// Edges shared by more than two triangles.
    NonManifold {
        /// Number of such edges.
        edges: usize,
        /// End points of the first one.
        first: [DVec3; 2],
    },
    /// Edges whose two triangles run the same way along them (the
    /// triangles disagree on which side is outside).
    Inconsistent {
        /// Number of such edges.
        edges: usize,
        /// End points of the first one.
        first: [DVec3; 2],
    },
    /// The surface encloses no volume (within the tolerance).
    NoVolume,
    /// A reflex (inward-folding) edge: the object is not convex.
    Reflex {
        /// Number of reflex edges.
        edges: usize,
        /// End points of the first one.
        first: [DVec3; 2],
        /// How far the far corner of one triangle of the first one rises
        /// above the other's plane (m).
        rise: f64,
        /// The tolerance (m).
        tolerance: f64,
    },
    /// A vertex lies inside the hull of the vertices: not convex.
    Interior {
        /// The deepest such vertex.
        vertex: DVec3,
        /// Its depth below the hull surface (m).
        depth: f64,
        /// The tolerance (m).
        tolerance: f64,
    },
    /// The surface encloses another volume than its hull (it wraps twice
    /// or crosses itself).
    VolumeMismatch {
        /// Volume enclosed by the surface (m^3).
        mesh: f64,
        /// Volume of the hull (m^3).
        hull: f64,
    },
    /// The hull of the object's vertices failed.
    Hull(GeometryError),
}

impl fmt::Display for MeshError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(object) = &self.object {
            write!(f, ": object '{object}'")?;
        }
        write!(f, ": {}", self.kind)
    }
}

impl fmt::Display for MeshErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = |v: &DVec3| format!("({}, {}, {})", v.x, v.y, v.z);
        match self {
            Self::Read(e) => write!(f, "cannot read the file: {e}"),
            Self::UnknownFormat => write!(f, "unknown mesh format: expected .obj or .stl"),
            Self::Parse(e) => write!(f, "cannot parse the mesh: {e}"),
            Self::Empty => write!(f, "the mesh has no triangles"),
            Self::Open { edges, first } => write!(
                f,
                "not closed: {edges} open edge(s) (used by one triangle only), the first from {} to {}",
                p(&first[0]),
                p(&first[1])
            ),
            Self::NonManifold { edges, first } => write!(
                f,
                "not a manifold: {edges} edge(s) shared by more than two triangles, the first from {} to {}",
                p(&first[0]),
                p(&first[1])
            ),
            Self::Inconsistent { edges, first } => write!(
                f,
                "inconsistent orientation: across {edges} edge(s) the two triangles disagree on the outside, the first from {} to {}",
                p(&first[0]),
                p(&first[1])
            ),
            Self::NoVolume => write!(f, "the surface encloses no volume"),
            Self::Reflex {
                edges,
                first,
                rise,
                tolerance,
            } => write!(
                f,
                "not convex: {edges} reflex edge(s), the first from {} to {}, where a triangle rises {rise:.3e} above its neighbour's plane (tolerance {tolerance:.3e})",
                p(&first[0]),
                p(&first[1])
            ),
            Self::Interior {
                vertex,
                depth,
                tolerance,
            } => write!(
                f,
                "not convex: vertex {} lies {depth:.3e} inside the convex hull (tolerance {tolerance:.3e})",
                p(vertex)
            ),
            Self::VolumeMismatch { mesh, hull } => write!(
                f,
                "not convex: the surface encloses {mesh:.6e} but its convex hull {hull:.6e} (does it wrap twice or cross itself?)"
            ),
            Self::Hull(e) => write!(f, "no convex hull: {e}"),
        }
    }
}

impl std::error::Error for MeshError {}

/// Blocks of the mesh file at `path` (`.obj` or `.stl`, by extension), with
/// the default options.
///
/// # Errors
/// A [`MeshError`] for the first object that is not a block, or for the
/// file as a whole.
pub fn blocks_from_file(path: &Path) -> Result<Vec<MeshBlock>, MeshError> {
    blocks_from_file_with(path, MeshOptions::default())
}

/// As [`blocks_from_file`], with explicit options.
///
/// # Errors
/// As [`blocks_from_file`].
pub fn blocks_from_file_with(
    path: &Path,
    options: MeshOptions,
) -> Result<Vec<MeshBlock>, MeshError> {
    let fail = |kind| MeshError {
        file: path.to_path_buf(),
        object: None,
        kind: Box::new(kind),
    };
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let format = match ext.as_deref() {
        Some("obj") => MeshFormat::Obj,
        Some("stl") => MeshFormat::Stl,
        _ => return Err(fail(MeshErrorKind::UnknownFormat)),
    };
    let bytes = std::fs::read(path).map_err(|e| fail(MeshErrorKind::Read(e.to_string())))?;
    blocks_from_bytes(&bytes, format, path, options)
}

/// The format of mesh bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeshFormat {
    /// Wavefront OBJ.
    Obj,
    /// STL, ASCII or binary.
    Stl,
}

/// Blocks of a mesh held in memory; `label` stands for the file in
/// messages (and its stem names STL parts).
///
/// # Errors
/// As [`blocks_from_file`].
pub fn blocks_from_bytes(
    bytes: &[u8],
    format: MeshFormat,
    label: &Path,
    options: MeshOptions,
) -> Result<Vec<MeshBlock>, MeshError> {
    let objects = match format {
        MeshFormat::Obj => read_obj(bytes),
        MeshFormat::Stl => read_stl(bytes, label),
    }
    .map_err(|e| MeshError {
        file: label.to_path_buf(),
        object: None,
        kind: Box::new(MeshErrorKind::Parse(e)),
    })?;
    let mut blocks = Vec::new();
    for (name, vertices, triangles) in &objects {
        blocks.extend(blocks_from_triangles(
            name, vertices, triangles, label, options,
        )?);
    }
    if blocks.is_empty() {
        return Err(MeshError {
            file: label.to_path_buf(),
            object: None,
            kind: Box::new(MeshErrorKind::Empty),
        });
    }
    Ok(blocks)
}

/// Blocks of one triangle soup named `name` (indices into `vertices`,
/// which must be in range): its connected parts, each checked and hulled.
///
/// # Errors
/// A [`MeshError`] naming `file` and the first part that is not a block.
pub fn blocks_from_triangles(
    name: &str,
    vertices: &[DVec3],
    triangles: &[[u32; 3]],
    file: &Path,
    options: MeshOptions,
) -> Result<Vec<MeshBlock>, MeshError> {
    let (points, triangles) = merge_equal_vertices(vertices, triangles);
    let parts = connected_parts(&triangles);
    let mut blocks = Vec::with_capacity(parts.len());
    for (k, part) in parts.iter().enumerate() {
        let part_name = if parts.len() == 1 {
            name.to_string()
        } else {
            format!("{name} part {}", k + 1)
        };
        let fail = |kind| MeshError {
            file: file.to_path_buf(),
            object: Some(part_name.clone()),
            kind: Box::new(kind),
        };
        // Local numbering of the part's vertices, in order of first use.
        let mut local = HashMap::new();
        let mut corners = Vec::new();
        let tris: Vec<[u32; 3]> = part
            .iter()
            .map(|&t| {
                triangles[t].map(|v| {
                    *local.entry(v).or_insert_with(|| {
                        corners.push(points[v as usize]);
                        (corners.len() - 1) as u32
                    })
                })
            })
            .collect();
        let block = check_convex(&corners, tris, options.relative_tolerance).map_err(fail)?;
        blocks.push(MeshBlock {
            name: part_name,
            block,
        });
    }
    Ok(blocks)
}

/// One object of a file: name, vertices, triangles.
type Object = (String, Vec<DVec3>, Vec<[u32; 3]>);

fn read_obj(bytes: &[u8]) -> Result<Vec<Object>, String> {
    let options = tobj::LoadOptions {
        triangulate: true,
        ..Default::default()
    };
    let (models, _) = tobj::load_obj_buf(&mut Cursor::new(bytes), &options, |_| {
        // Materials do not shape blocks.
        Err(tobj::LoadError::OpenFileFailed)
    })
    .map_err(|e| e.to_string())?;
    models
        .into_iter()
        .map(|model| {
            let mesh = model.mesh;
            let vertices: Vec<DVec3> = mesh
                .positions
                .chunks_exact(3)
                .map(|c| DVec3::new(c[0], c[1], c[2]))
                .collect();
            if mesh.indices.iter().any(|&i| i as usize >= vertices.len()) {
                return Err(format!(
                    "object '{}' has a face with a missing vertex",
                    model.name
                ));
            }
            let triangles = mesh
                .indices
                .chunks_exact(3)
                .map(|t| [t[0], t[1], t[2]])
                .collect();
            Ok((model.name, vertices, triangles))
        })
        .collect()
}

fn read_stl(bytes: &[u8], label: &Path) -> Result<Vec<Object>, String> {
    let facets = crate::stl::read_stl(bytes).map_err(|e| e.to_string())?;
    let vertices = facets
        .iter()
        .flatten()
        .map(|&v| DVec3::from_array(v))
        .collect();
    let triangles = (0..facets.len() as u32)
        .map(|t| [3 * t, 3 * t + 1, 3 * t + 2])
        .collect();
    let stem = label
        .file_stem()
        .map_or_else(|| "solid".into(), |s| s.to_string_lossy().into_owned());
    Ok(vec![(stem, vertices, triangles)])
}

/// Vertices with identical coordinates merged (first occurrence kept, in
/// order of use); triangles renumbered.
pub(crate) fn merge_equal_vertices(
    vertices: &[DVec3],
    triangles: &[[u32; 3]],
) -> (Vec<DVec3>, Vec<[u32; 3]>) {
    // +0.0 and -0.0 are the same coordinate.
    let key = |p: DVec3| (p + DVec3::ZERO).to_array().map(f64::to_bits);
    let mut index = HashMap::new();
    let mut points = Vec::new();
    let triangles = triangles
        .iter()
        .map(|t| {
            t.map(|v| {
                let p = vertices[v as usize];
                *index.entry(key(p)).or_insert_with(|| {
                    points.push(p);
                    (points.len() - 1) as u32
                })
            })
        })
        .collect();
    (points, triangles)
}

/// Undirected key of the edge `a -> b` and whether it runs low to high.
#[inline]
fn edge_key(a: u32, b: u32) -> ((u32, u32), bool) {
    if a < b {
        ((a, b), true)
    } else {
        ((b, a), false)
    }
}

/// Every edge use: (undirected key, triangle, runs low to high), sorted by
/// key then triangle, so that the uses of one edge are adjacent.
fn edge_uses(triangles: &[[u32; 3]]) -> Vec<((u32, u32), usize, bool)> {
    let mut uses: Vec<_> = triangles
        .iter()
        .enumerate()
        .flat_map(|(f, t)| {
            (0..3).map(move |i| {
                let (key, up) = edge_key(t[i], t[(i + 1) % 3]);
                (key, f, up)
            })
        })
        .collect();
    uses.sort_unstable();
    uses
}

/// Triangles grouped into parts connected across shared edges, each part in
/// triangle order, parts ordered by their first triangle.
fn connected_parts(triangles: &[[u32; 3]]) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..triangles.len()).collect();
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let uses = edge_uses(triangles);
    for pair in uses.windows(2) {
        if pair[0].0 == pair[1].0 {
            let (a, b) = (root(&mut parent, pair[0].1), root(&mut parent, pair[1].1));
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut part_of_root = vec![usize::MAX; triangles.len()];
    let mut parts: Vec<Vec<usize>> = Vec::new();
    for t in 0..triangles.len() {
        let r = root(&mut parent, t);
        if part_of_root[r] == usize::MAX {
            part_of_root[r] = parts.len();
            parts.push(Vec::new());
        }
        parts[part_of_root[r]].push(t);
    }
    parts
}

/// The two triangles across an edge: (the one running low to high, the
/// other, the edge's vertices low to high).
pub(crate) type EdgePair = (usize, usize, (u32, u32));

/// Check 1 of the module docs: every edge of `triangles` (indices into
/// `points`, equal vertices merged) is shared by exactly two triangles
/// running opposite ways. On success, the pairs of triangles across each
/// edge: (the triangle running low to high, the other, the edge); also
/// used by [`crate::pebble_fill`].
pub(crate) fn closed_edge_pairs(
    points: &[DVec3],
    triangles: &[[u32; 3]],
) -> Result<Vec<EdgePair>, MeshErrorKind> {
    let at = |v: u32| points[v as usize];
    let uses = edge_uses(triangles);
    let mut open = (0usize, None);
    let mut crowded = (0usize, None);
    let mut clash = (0usize, None);
    // Pairs of triangles across each good edge: (triangle running low to
    // high, the other, edge).
    let mut pairs = Vec::with_capacity(uses.len() / 2);
    let mut i = 0;
    while i < uses.len() {
        let key = uses[i].0;
        let n = uses[i..].iter().take_while(|u| u.0 == key).count();
        let ends = [at(key.0), at(key.1)];
        let note = |tally: &mut (usize, Option<[DVec3; 2]>)| {
            tally.0 += 1;
            tally.1.get_or_insert(ends);
        };
        match n {
            1 => note(&mut open),
            2 if uses[i].2 == uses[i + 1].2 => note(&mut clash),
            2 => {
                let (up, down) = if uses[i].2 {
                    (uses[i].1, uses[i + 1].1)
                } else {
                    (uses[i + 1].1, uses[i].1)
                };
                pairs.push((up, down, key));
            }
            _ => note(&mut crowded),
        }
        i += n;
    }
    if let (edges, Some(first)) = open {
        return Err(MeshErrorKind::Open { edges, first });
    }
    if let (edges, Some(first)) = crowded {
        return Err(MeshErrorKind::NonManifold { edges, first });
    }
    if let (edges, Some(first)) = clash {
        return Err(MeshErrorKind::Inconsistent { edges, first });
    }
    Ok(pairs)
}

/// The checks of the module docs on one connected part; its hull when they
/// pass.
fn check_convex(
    points: &[DVec3],
    mut triangles: Vec<[u32; 3]>,
    relative_tolerance: f64,
) -> Result<ConvexPolyhedron, MeshErrorKind> {
    if triangles.is_empty() {
        return Err(MeshErrorKind::Empty);
    }
    let (lo, hi) = points.iter().fold(
        (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
        |(lo, hi), &p| (lo.min(p), hi.max(p)),
    );
    let tol = relative_tolerance * (hi - lo).length();
    let at = |v: u32| points[v as usize];

    // 1. Closed, manifold, consistently oriented.
    let pairs = closed_edge_pairs(points, &triangles)?;

    // 2. Encloses volume, outward.
    let area: f64 = triangles
        .iter()
        .map(|t| 0.5 * (at(t[1]) - at(t[0])).cross(at(t[2]) - at(t[0])).length())
        .sum();
    let mut volume = mass_properties(points, &triangles).volume;
    if volume.abs() <= tol * area {
        return Err(MeshErrorKind::NoVolume);
    }
    if volume < 0.0 {
        for t in &mut triangles {
            t.swap(1, 2);
        }
        volume = -volume;
    }

    // 3. No reflex edge. Slivers (area below tol * size) have no reliable
    // plane and are judged from their neighbour's side only.
    let size = (hi - lo).length();
    let plane = |t: [u32; 3]| {
        let n = (at(t[1]) - at(t[0])).cross(at(t[2]) - at(t[0]));
        let len = n.length();
        (len > tol * size).then(|| n / len)
    };
    let far = |t: [u32; 3], (a, b): (u32, u32)| {
        at(t.into_iter().find(|&v| v != a && v != b).unwrap_or(a))
    };
    let mut reflex = (0usize, None);
    for &(f, g, edge) in &pairs {
        let (tf, tg) = (triangles[f], triangles[g]);
        let base = at(edge.0);
        let rise_f = plane(tf).map_or(f64::NEG_INFINITY, |n| n.dot(far(tg, edge) - base));
        let rise_g = plane(tg).map_or(f64::NEG_INFINITY, |n| n.dot(far(tf, edge) - base));
        let rise = rise_f.max(rise_g);
        if rise > tol {
            reflex.0 += 1;
            reflex.1.get_or_insert(([at(edge.0), at(edge.1)], rise));
        }
    }
    if let (edges, Some((first, rise))) = reflex {
        return Err(MeshErrorKind::Reflex {
            edges,
            first,
            rise,
            tolerance: tol,
        });
    }

    // 4. Every vertex on the hull.
    let hull = ConvexPolyhedron::from_points(points).map_err(MeshErrorKind::Hull)?;
    let deepest = points
        .iter()
        .map(|&p| (p, -hull.max_plane_distance(p)))
        .fold((DVec3::ZERO, f64::NEG_INFINITY), |best, x| {
            if x.1 > best.1 {
                x
            } else {
                best
            }
        });
    if deepest.1 > tol {
        return Err(MeshErrorKind::Interior {
            vertex: deepest.0,
            depth: deepest.1,
            tolerance: tol,
        });
    }

    // 5. The same volume as the hull.
    if (volume - hull.volume()).abs() > tol * area {
        return Err(MeshErrorKind::VolumeMismatch {
            mesh: volume,
            hull: hull.volume(),
        });
    }
    Ok(hull)
}

#[cfg(test)]
#[path = "mesh_tests.rs"]
mod tests;
