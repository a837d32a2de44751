//! Tests of the mesh import (`mesh.rs`).
use super::*;

/// A scratch file that is removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    /// `name` in a folder of its own, so that tests running at once never
    /// remove each other's folder.
    fn new(name: &str, contents: &[u8]) -> Scratch {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("talus-geometry-{}-{k}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, contents).unwrap();
        Scratch(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// OBJ text of an axis-aligned box as object `name`, its vertices
/// numbered from `base` (OBJ indices are file-wide), quads wound
/// outwards, leaving out the faces listed in `skip` (0..6).
fn obj_box(name: &str, min: [f64; 3], max: [f64; 3], base: usize, skip: &[usize]) -> String {
    let mut s = format!("o {name}\n");
    for i in 0..8 {
        let c = |k: usize| if i >> k & 1 == 0 { min[k] } else { max[k] };
        s += &format!("v {} {} {}\n", c(0), c(1), c(2));
    }
    // Corner i has bits (x, y, z); faces -x, +x, -y, +y, -z, +z.
    let faces = [
        [0, 4, 6, 2],
        [1, 3, 7, 5],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 2, 3, 1],
        [4, 5, 7, 6],
    ];
    for (k, f) in faces.iter().enumerate() {
        if !skip.contains(&k) {
            let [a, b, c, d] = f.map(|v| v + base + 1);
            s += &format!("f {a} {b} {c} {d}\n");
        }
    }
    s
}

/// OBJ text of an L-shaped prism (extruded along z): a non-convex but
/// closed, consistently wound solid.
fn obj_l_prism() -> String {
    let outline = [
        [0.0, 0.0],
        [2.0, 0.0],
        [2.0, 1.0],
        [1.0, 1.0],
        [1.0, 2.0],
        [0.0, 2.0],
    ];
    let mut s = String::from("o ell\n");
    for z in [0.0, 1.0] {
        for [x, y] in outline {
            s += &format!("v {x} {y} {z}\n");
        }
    }
    // Bottom (wound clockwise seen from above: outward is -z) and top,
    // as two convex quads each, then the six side walls.
    s += "f 1 4 3 2\nf 1 6 5 4\nf 7 8 9 10\nf 7 10 11 12\n";
    for i in 0..6 {
        let j = (i + 1) % 6;
        s += &format!("f {} {} {} {}\n", i + 1, j + 1, j + 7, i + 7);
    }
    s
}

#[test]
fn obj_with_two_boxes_gives_two_blocks() {
    let text = obj_box("left", [0.0; 3], [1.0; 3], 0, &[])
        + &obj_box("right", [2.0, 0.0, 0.0], [3.0, 0.5, 2.0], 8, &[]);
    let file = Scratch::new("two_boxes.obj", text.as_bytes());
    let blocks = blocks_from_file(&file.0).unwrap();
    assert_eq!(blocks.len(), 2);
    assert_eq!(
        (blocks[0].name.as_str(), blocks[1].name.as_str()),
        ("left", "right")
    );
    assert!((blocks[0].block.volume() - 1.0).abs() < 1e-12);
    assert!((blocks[1].block.volume() - 1.0).abs() < 1e-12);
    assert!((blocks[1].block.centroid() - DVec3::new(2.5, 0.25, 1.0)).length() < 1e-12);
    // Inside-out winding is turned back, not refused.
    let inside_out = text
        .replace("f ", "f_")
        .lines()
        .fold(String::new(), |s, l| {
            if let Some(rest) = l.strip_prefix("f_") {
                let rev: Vec<&str> = rest.split(' ').rev().collect();
                s + "f " + &rev.join(" ") + "\n"
            } else {
                s + l + "\n"
            }
        });
    let flipped = Scratch::new("two_boxes_flipped.obj", inside_out.as_bytes());
    let again = blocks_from_file(&flipped.0).unwrap();
    for (a, b) in again.iter().zip(&blocks) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.block.mass_properties(), b.block.mass_properties());
    }
}

#[test]
fn one_object_in_two_pieces_gives_two_named_blocks() {
    // One OBJ object (the second box's `o` line dropped) made of two
    // disjoint boxes: split by connectivity.
    let text = obj_box("pair", [0.0; 3], [1.0; 3], 0, &[])
        + &obj_box("x", [5.0; 3], [6.0; 3], 8, &[]).replace("o x\n", "");
    let file = Scratch::new("pair.obj", text.as_bytes());
    let names: Vec<String> = blocks_from_file(&file.0)
        .unwrap()
        .into_iter()
        .map(|b| b.name)
        .collect();
    assert_eq!(names, ["pair part 1", "pair part 2"]);
}

#[test]
fn non_convex_obj_is_refused_with_its_reflex_edge() {
    let file = Scratch::new("ell.obj", obj_l_prism().as_bytes());
    let err = blocks_from_file(&file.0).unwrap_err();
    assert_eq!(err.object.as_deref(), Some("ell"));
    let MeshErrorKind::Reflex { edges, first, .. } = *err.kind else {
        panic!("{err}");
    };
    // The inner corner of the L, (1, 1, z), is the one reflex edge.
    assert_eq!(edges, 1);
    assert_eq!(
        first,
        [DVec3::new(1.0, 1.0, 0.0), DVec3::new(1.0, 1.0, 1.0)]
    );
    let message = err.to_string();
    eprintln!("{message}");
    assert!(message.contains("ell.obj: object 'ell': not convex: 1 reflex edge(s)"));
    assert!(message.contains("(1, 1, 0) to (1, 1, 1)"), "{message}");
}

#[test]
fn open_obj_is_refused_with_its_open_edge_count() {
    let text = obj_box("lidless", [0.0; 3], [1.0; 3], 0, &[5]);
    let file = Scratch::new("lidless.obj", text.as_bytes());
    let err = blocks_from_file(&file.0).unwrap_err();
    assert!(
        matches!(*err.kind, MeshErrorKind::Open { edges: 4, .. }),
        "{err}"
    );
    let message = err.to_string();
    eprintln!("{message}");
    assert!(message.contains("lidless.obj: object 'lidless': not closed: 4 open edge(s)"));
}

#[test]
fn other_defects_are_named() {
    // Two boxes sharing an edge in one object: non-manifold.
    let text = obj_box("a", [0.0; 3], [1.0; 3], 0, &[])
        + &obj_box("x", [1.0, 1.0, 0.0], [2.0, 2.0, 1.0], 8, &[]).replace("o x\n", "");
    let file = Scratch::new("edge_touch.obj", text.as_bytes());
    let err = blocks_from_file(&file.0).unwrap_err();
    assert!(
        matches!(*err.kind, MeshErrorKind::NonManifold { .. }),
        "{err}"
    );
    // One face wound the wrong way.
    let text = obj_box("b", [0.0; 3], [1.0; 3], 0, &[]).replace("f 5 6 8 7", "f 7 8 6 5");
    let file = Scratch::new("one_flipped.obj", text.as_bytes());
    let err = blocks_from_file(&file.0).unwrap_err();
    assert!(
        matches!(*err.kind, MeshErrorKind::Inconsistent { edges: 4, .. }),
        "{err}"
    );
    // Unknown extension, missing file, parse error.
    let err = blocks_from_file(Path::new("blocks.ply")).unwrap_err();
    assert_eq!(*err.kind, MeshErrorKind::UnknownFormat);
    let err = blocks_from_file(Path::new("/nonexistent/talus/blocks.obj")).unwrap_err();
    assert!(matches!(*err.kind, MeshErrorKind::Read(_)));
    let file = Scratch::new("garbage.obj", b"v 1 2\nf 1 2 3\n");
    assert!(blocks_from_file(&file.0).is_err());
}

#[test]
fn dented_but_locally_convex_surface_is_refused() {
    // A box whose top face is split at a centre vertex pushed down: the
    // edges to that vertex fold inwards.
    let mut text = obj_box("dent", [0.0; 3], [1.0; 3], 0, &[5]);
    text += "v 0.5 0.5 0.9\n";
    for (a, b) in [(5, 6), (6, 8), (8, 7), (7, 5)] {
        text += &format!("f {a} {b} 9\n");
    }
    let file = Scratch::new("dent.obj", text.as_bytes());
    let err = blocks_from_file(&file.0).unwrap_err();
    assert!(
        matches!(*err.kind, MeshErrorKind::Reflex { edges: 4, .. }),
        "{err}"
    );
    // Pushed up instead: convex, one more vertex.
    let text = text.replace("v 0.5 0.5 0.9", "v 0.5 0.5 1.2");
    let file = Scratch::new("bump.obj", text.as_bytes());
    let blocks = blocks_from_file(&file.0).unwrap();
    assert_eq!(blocks[0].block.vertices().len(), 9);
}

/// STL bytes (ASCII) of the triangles of `blocks`.
fn ascii_stl(blocks: &[ConvexPolyhedron]) -> String {
    let mut s = String::from("solid test\n");
    for b in blocks {
        for t in b.facets() {
            s += "facet normal 0 0 0\nouter loop\n";
            for &v in t {
                let p = b.vertices()[v as usize];
                s += &format!("vertex {} {} {}\n", p.x, p.y, p.z);
            }
            s += "endloop\nendfacet\n";
        }
    }
    s + "endsolid test\n"
}

#[test]
fn stl_files_ascii_and_binary() {
    let a = crate::shapes::octahedron_block(1.0).unwrap();
    let b = crate::shapes::box_block(DVec3::new(0.5, 1.0, 2.0))
        .unwrap()
        .transformed(glam::DQuat::IDENTITY, DVec3::new(3.0, 0.0, 0.0));
    let file = Scratch::new("pair.stl", ascii_stl(&[a.clone(), b.clone()]).as_bytes());
    let blocks = blocks_from_file(&file.0).unwrap();
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0].name, "pair part 1");
    // Single precision in the file.
    assert!((blocks[0].block.volume() - a.volume()).abs() < 1e-6);
    assert!((blocks[1].block.volume() - b.volume()).abs() < 1e-6);

    // Binary, with a header that starts with "solid" as many do.
    let mut bin = Vec::new();
    let mut header = [b' '; 80];
    header[..12].copy_from_slice(b"solid binary");
    bin.extend_from_slice(&header);
    bin.extend_from_slice(&(a.facets().len() as u32).to_le_bytes());
    for t in a.facets() {
        bin.extend_from_slice(&[0u8; 12]);
        for &v in t {
            for c in a.vertices()[v as usize].to_array() {
                bin.extend_from_slice(&(c as f32).to_le_bytes());
            }
        }
        bin.extend_from_slice(&[0u8; 2]);
    }
    let file = Scratch::new("octa.stl", &bin);
    let blocks = blocks_from_file(&file.0).unwrap();
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].name, "octa");
    assert!((blocks[0].block.volume() - a.volume()).abs() < 1e-6);
}
