//! `[[shapes]]` and `[[blocks]]`: what valid tables give, then one test per
//! error they can raise (kind, `file:line:col` and the key words of the
//! message, as in `errors.rs`).

mod common;

use common::*;
use talus_config::{BlockKind, ErrorKind, RunConfig};
use talus_core::generate::{lattice_block_spacing, BlockMix, BlockOrientation};
use talus_core::math::Quat;
use talus_core::BlockShape;

const BRICK: &str = "[[shapes]]\nname = \"brick\"\nkind = \"box\"\nsize = [0.1, 0.2, 0.4]\n";
const TET: &str = "[[shapes]]\nname = \"tet\"\nkind = \"tetrahedron\"\nedge = 0.2\n";

/// A random fill of bricks with `extra` keys appended.
fn fill(extra: &str) -> String {
    format!(
        "{RUN}{BRICK}[[blocks]]\nkind = \"random\"\nshape = \"brick\"\ncount = 10\ndensity = 2600.0\n\
         region = {{ min = [0, 0, 0], max = [2, 2, 2] }}\n{extra}"
    )
}

/// A shape table of kind `kind` with `keys`, after `[run]`.
fn shape(kind: &str, keys: &str) -> String {
    format!("{RUN}[[shapes]]\nname = \"s\"\nkind = \"{kind}\"\n{keys}")
}

/// OBJ text of an axis-aligned box as object `name`, vertices numbered
/// from `base` (OBJ indices are file-wide), quads wound outwards.
fn obj_box(name: &str, min: [f64; 3], max: [f64; 3], base: usize) -> String {
    let mut s = format!("o {name}\n");
    for i in 0..8 {
        let c = |k: usize| if i >> k & 1 == 0 { min[k] } else { max[k] };
        s += &format!("v {} {} {}\n", c(0), c(1), c(2));
    }
    for f in [
        [0, 4, 6, 2],
        [1, 3, 7, 5],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 2, 3, 1],
        [4, 5, 7, 6],
    ] {
        let [a, b, c, d] = f.map(|v| v + base + 1);
        s += &format!("f {a} {b} {c} {d}\n");
    }
    s
}

/// OBJ text of an L-shaped prism: closed and consistently wound, but not
/// convex (one reflex edge, at x = y = 1).
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
    s += "f 1 4 3 2\nf 1 6 5 4\nf 7 8 9 10\nf 7 10 11 12\n";
    for i in 0..6 {
        let j = (i + 1) % 6;
        s += &format!("f {} {} {} {}\n", i + 1, j + 1, j + 7, i + 7);
    }
    s
}

fn parse_ok(text: &str) -> RunConfig {
    parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn shape_of<'a>(cfg: &'a RunConfig, name: &str) -> &'a BlockShape {
    &cfg.shapes
        .iter()
        .find(|s| s.shape.name == name)
        .unwrap_or_else(|| panic!("no shape {name}"))
        .shape
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

// ---- valid tables ----------------------------------------------------------

#[test]
fn named_shapes_have_their_closed_form_volumes() {
    let text = format!(
        "{RUN}{BRICK}{TET}[[shapes]]\nname = \"oct\"\nkind = \"octahedron\"\nedge = 0.3\n\
         [[shapes]]\nname = \"hex\"\nkind = \"prism\"\nsides = 6\nradius = 0.1\nheight = 0.5\n"
    );
    let cfg = parse_ok(&text);
    let names: Vec<&str> = cfg.shapes.iter().map(|s| s.shape.name.as_str()).collect();
    assert_eq!(names, ["brick", "tet", "oct", "hex"]);
    let s2 = 2f64.sqrt();
    let hexagon = 1.5 * 3f64.sqrt() * 0.1 * 0.1;
    for (name, volume) in [
        ("brick", 0.1 * 0.2 * 0.4),
        ("tet", 0.2f64.powi(3) / (6.0 * s2)),
        ("oct", s2 * 0.3f64.powi(3) / 3.0),
        ("hex", hexagon * 0.5),
    ] {
        let v = shape_of(&cfg, name).volume;
        assert!(rel(v, volume) < 1e-12, "{name}: {v} vs {volume}");
    }
    // Table positions are kept for the engine's messages.
    assert_eq!(cfg.shapes[1].location.line, pos_of(&text, TET).0);
}

#[test]
fn random_shape_is_seeded_and_in_its_vertex_range() {
    let keys = "vertices = [8, 12]\naxes = [0.3, 0.2, 0.1]\nroughness = 0.2\n";
    let a = parse_ok(&shape("random", &format!("{keys}seed = 4\n")));
    let n = a.shapes[0].shape.polyhedron.vertices().len();
    assert!((8..=12).contains(&n), "{n} vertices");
    let again = parse_ok(&shape("random", &format!("{keys}seed = 4\n")));
    assert_eq!(a.shapes, again.shapes);
    // Without a seed the run's seed is used.
    let by_run = parse_ok(&shape("random", keys).replace("steps = 10", "steps = 10\nseed = 4"));
    assert_eq!(by_run.shapes[0].shape, a.shapes[0].shape);
    let other = parse_ok(&shape("random", &format!("{keys}seed = 5\n")));
    assert_ne!(other.shapes[0].shape, a.shapes[0].shape);
}

#[test]
fn vertex_shape_keeps_where_it_was_given() {
    // A unit cube with corners at 10..11: centroid 10.5.
    let mut pts = Vec::new();
    for i in 0..8 {
        pts.push(format!(
            "[{}, {}, {}]",
            10 + (i & 1),
            10 + (i >> 1 & 1),
            10 + (i >> 2 & 1)
        ));
    }
    let text = shape("vertices", &format!("points = [{}]\n", pts.join(", ")));
    let s = &parse_ok(&text).shapes[0].shape;
    assert!(rel(s.volume, 1.0) < 1e-12);
    assert!((s.input_centroid - talus_core::Vec3::splat(10.5)).length() < 1e-12);
    // With hull = true an inner point is dropped, not refused.
    pts.push("[10.5, 10.5, 10.5]".into());
    let text = shape(
        "vertices",
        &format!("points = [{}]\nhull = true\n", pts.join(", ")),
    );
    assert_eq!(
        parse_ok(&text).shapes[0].shape.polyhedron.vertices().len(),
        8
    );
}

#[test]
fn mesh_objects_become_shapes_named_after_the_table() {
    let dir = TempDir::new("mesh-shapes");
    let obj = obj_box("left", [0.0; 3], [1.0; 3], 0)
        + &obj_box("right", [2.0, 0.0, 0.0], [3.0, 0.5, 2.0], 8);
    dir.write("rocks.obj", obj);
    let text = format!(
        "{RUN}[[shapes]]\nname = \"rocks\"\nkind = \"mesh\"\npath = \"rocks.obj\"\nscale = 0.1\n\
         [[blocks]]\nkind = \"random\"\nshapes = [\"rocks\", \"rocks/left\"]\nweights = [2, 1]\n\
         count = 3\ndensity = 1.0\nregion = {{ min = [0, 0, 0], max = [1, 1, 1] }}\n"
    );
    let cfg = talus_config::parse_str(&text, &dir.path().join("c.toml")).unwrap();
    let names: Vec<&str> = cfg.shapes.iter().map(|s| s.shape.name.as_str()).collect();
    assert_eq!(names, ["rocks/left", "rocks/right"]);
    assert!(rel(shape_of(&cfg, "rocks/left").volume, 1e-3) < 1e-12);
    assert!(rel(shape_of(&cfg, "rocks/right").volume, 1e-3) < 1e-12);
    // The bare name shares its weight among the objects.
    let BlockKind::Random { choices, .. } = &cfg.blocks[0].kind else {
        panic!()
    };
    assert_eq!(choices, &[(0, 1.0), (1, 1.0), (0, 1.0)]);
}

#[test]
fn block_fills_take_their_defaults() {
    let cfg = parse_ok(&fill("").replace("steps = 10", "steps = 10\nseed = 9"));
    let b = &cfg.blocks[0];
    assert_eq!(
        (b.group.as_str(), b.density, b.damping),
        ("default", 2600.0, 0.0)
    );
    let BlockKind::Random {
        orientation,
        seed,
        max_attempts,
        count,
        ..
    } = &b.kind
    else {
        panic!()
    };
    assert_eq!(
        (*orientation, *seed, *max_attempts, *count),
        (BlockOrientation::Random, 9, 1000, 10)
    );

    // A lattice keeps the shapes as given, and its spacing is the least
    // that keeps them apart.
    let text = format!(
        "{RUN}{BRICK}{TET}[[blocks]]\nkind = \"lattice\"\nshapes = [\"brick\", \"tet\"]\n\
         density = 1.0\nregion = {{ min = [0, 0, 0], max = [2, 2, 2] }}\n"
    );
    let cfg = parse_ok(&text);
    let BlockKind::Lattice {
        orientation,
        spacing,
        choices,
        counts,
        ..
    } = &cfg.blocks[0].kind
    else {
        panic!()
    };
    assert_eq!(*orientation, BlockOrientation::Fixed(Quat::IDENTITY));
    assert_eq!(counts, &None);
    let shapes: Vec<BlockShape> = cfg.shapes.iter().map(|s| s.shape.clone()).collect();
    let least = lattice_block_spacing(&BlockMix {
        shapes: &shapes,
        choices,
        orientation: *orientation,
    });
    assert_eq!(*spacing, least);
    // The brick's longest edge, 0.4, is the widest side as given.
    assert!((least - 0.4).abs() < 1e-12, "{least}");
}

#[test]
fn list_rows_fall_back_to_the_table() {
    let h = 0.5f64.sqrt();
    let text = format!(
        "{RUN}{BRICK}{TET}[[blocks]]\nkind = \"list\"\nshape = \"brick\"\ndensity = 1.0\n\
         velocity = [1, 0, 0]\nfix = [\"rx\", \"ry\", \"rz\"]\nblocks = [\n\
         {{ pos = [0, 0, 1] }},\n\
         {{ shape = \"tet\", pos = [1, 0, 1], orientation = [0.7071, 0, 0, 0.7071], velocity = [0, 0, -1], spin = [0, 0, 3] }},\n\
         {{ shape = \"tet\" }},\n]\n"
    );
    let cfg = parse_ok(&text);
    let BlockKind::Explicit(rows) = &cfg.blocks[0].kind else {
        panic!()
    };
    assert_eq!(rows.len(), 3);
    assert_eq!(
        (rows[0].shape, rows[0].pos, rows[0].velocity),
        (0, Some([0.0, 0.0, 1.0]), None)
    );
    assert_eq!(rows[0].orientation, Quat::IDENTITY);
    assert_eq!((rows[1].shape, rows[1].spin), (1, Some([0.0, 0.0, 3.0])));
    // Four decimals pass and are normalised.
    let q = rows[1].orientation;
    assert!((q.length() - 1.0).abs() < 1e-15);
    assert!((q.w - h).abs() < 1e-4 && (q.z - h).abs() < 1e-4);
    assert_eq!(rows[2].pos, None, "no pos: where the shape was given");
    assert!(cfg.blocks[0].fix.fixed(3) && cfg.blocks[0].fix.fixed(5));
}

#[test]
fn poses_file_rows() {
    let dir = TempDir::new("poses");
    dir.write(
        "poses.csv",
        "# centroid and orientation\nx, y, z, qw, qx, qy, qz, wz, wx, wy\n\
         0, 0, 1, 1, 0, 0, 0, 0, 0, 5\n\n1, 2, 3, 0, 1, 0, 0, 1, 0, 0\n",
    );
    let text = format!(
        "{RUN}{BRICK}[[blocks]]\nkind = \"file\"\nshape = \"brick\"\ndensity = 1.0\npath = \"poses.csv\"\n"
    );
    let cfg = talus_config::parse_str(&text, &dir.path().join("c.toml")).unwrap();
    let BlockKind::Explicit(rows) = &cfg.blocks[0].kind else {
        panic!()
    };
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].pos, Some([1.0, 2.0, 3.0]));
    assert_eq!(rows[1].orientation, Quat::from_xyzw(1.0, 0.0, 0.0, 0.0));
    assert_eq!(rows[0].spin, Some([0.0, 5.0, 0.0]));
    assert_eq!(rows[1].velocity, None);
}

// ---- errors: [[shapes]] ----------------------------------------------------

#[test]
fn unknown_and_foreign_shape_keys() {
    let text = shape("box", "size = [1, 1, 1]\nsizes = 2\n");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::UnknownKey);
    assert_at(
        &e,
        &text,
        "sizes",
        &[
            "unknown key 'sizes' in [[shapes]] #1",
            "allowed for kind = \"box\": name, kind, dilate, erode, size",
        ],
    );
    let text = shape("box", "size = [1, 1, 1]\nedge = 2\n");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::UnknownKey);
    assert_error(
        &e,
        std::path::Path::new(ORIGIN),
        pos_after(&text, "edge = "),
        &[
            "'edge' does not apply to kind = \"box\"",
            "name, kind, dilate, erode, size",
        ],
    );
    let text = shape("sphere", "");
    assert_at(
        &parse_err(&text),
        &text,
        "\"sphere\"",
        &[
            "'kind' in [[shapes]] #1",
            "\"box\", \"tetrahedron\", \"octahedron\", \"prism\", \"random\", \"vertices\", \"mesh\"",
        ],
    );
}

#[test]
fn shape_needs_its_keys_and_a_name() {
    let text = shape("prism", "sides = 5\nheight = 1\n");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::MissingKey);
    assert_at(
        &e,
        &text,
        "[[shapes]]",
        &["missing key 'radius' in [[shapes]] #1 (kind = \"prism\")"],
    );
    let text = shape("box", "size = [1, 1, 1]\n").replace("\"s\"", "\" \"");
    assert_at(
        &parse_err(&text),
        &text,
        "\" \"",
        &["'name' in [[shapes]] #1 must not be empty"],
    );
    let text = shape("box", "size = [1, 1, 1]\n").replace("\"s\"", "\"a/b\"");
    assert_at(
        &parse_err(&text),
        &text,
        "\"a/b\"",
        &["must not contain '/'"],
    );
}

#[test]
fn shape_sizes_must_be_positive() {
    let text = shape("box", "size = [1, 0, 1]\n");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_at(
        &e,
        &text,
        "[1, 0",
        &["edge y of 'size' in [[shapes]] #1 must be > 0 (m), got 0.0"],
    );
    let text = shape("tetrahedron", "edge = -0.1\n");
    assert_at(
        &parse_err(&text),
        &text,
        "-0.1",
        &["'edge' in [[shapes]] #1 must be > 0"],
    );
    let text = shape("prism", "sides = 2\nradius = 1\nheight = 1\n");
    assert_at(
        &parse_err(&text),
        &text,
        "2\n",
        &["'sides' in [[shapes]] #1", ">= 3"],
    );
    let text = shape("prism", "sides = 6\nradius = 1\nheight = 0\n");
    assert_error(
        &parse_err(&text),
        std::path::Path::new(ORIGIN),
        pos_after(&text, "height = "),
        &["'height' in [[shapes]] #1 must be > 0"],
    );
}

#[test]
fn random_shape_ranges() {
    let base = "axes = [1, 1, 1]\n";
    let text = shape("random", &format!("vertices = [3, 10]\n{base}"));
    assert_at(
        &parse_err(&text),
        &text,
        "3,",
        &["each bound of 'vertices' in [[shapes]] #1", ">= 4"],
    );
    let text = shape("random", &format!("vertices = [10, 5]\n{base}"));
    assert_at(
        &parse_err(&text),
        &text,
        "[10, 5]",
        &["4 <= min <= max", "got [10, 5]"],
    );
    let text = shape("random", &format!("vertices = [6]\n{base}"));
    assert_at(
        &parse_err(&text),
        &text,
        "[6]",
        &["'vertices' in [[shapes]] #1 must be [min, max]"],
    );
    let text = shape("random", "vertices = [6, 8]\naxes = [1, 0, 1]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "[1, 0, 1]",
        &["semi-axis y of 'axes'", "> 0"],
    );
    let text = shape(
        "random",
        &format!("vertices = [6, 8]\n{base}roughness = 1.0\n"),
    );
    assert_at(
        &parse_err(&text),
        &text,
        "1.0",
        &["'roughness' in [[shapes]] #1 must be in [0, 1)"],
    );
}

#[test]
fn vertex_points_must_be_corners_of_a_solid() {
    let text = shape("vertices", "points = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "[[0, 0, 0]",
        &["'points' in [[shapes]] #1 must hold at least 4 points, got 3"],
    );
    let text = shape(
        "vertices",
        "points = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]\n",
    );
    assert_at(
        &parse_err(&text),
        &text,
        "[[0, 0, 0]",
        &["'points' in [[shapes]] #1 span no volume", "coplanar"],
    );
    let text = shape(
        "vertices",
        "points = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.1, 0.1, 0.1]]\n",
    );
    assert_at(
        &parse_err(&text),
        &text,
        "[0.1, 0.1, 0.1]",
        &[
            "point #5 of 'points' in [[shapes]] #1 is not a corner",
            "hull = true",
        ],
    );
    let text = shape(
        "vertices",
        "points = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0]]\n",
    );
    let e = parse_err(&text);
    let last = text.rfind("[1, 0, 0]").unwrap();
    assert_error(
        &e,
        std::path::Path::new(ORIGIN),
        pos_at(&text, last),
        &["point #5 of 'points' in [[shapes]] #1 repeats point #2"],
    );
}

#[test]
fn mesh_shape_file_errors_name_the_file_and_object() {
    let dir = TempDir::new("mesh-errors");
    let write = |text: &str| dir.write("c.toml", text);
    let cfg_text =
        |file: &str| format!("{RUN}[[shapes]]\nname = \"m\"\nkind = \"mesh\"\npath = \"{file}\"\n");

    let text = cfg_text("nothere.obj");
    let e = talus_config::load(&write(&text)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MissingFile);
    assert!(
        e.to_string().contains("mesh file 'nothere.obj' not found"),
        "{e}"
    );

    dir.write("m.ply", "ply\n");
    let text = cfg_text("m.ply");
    let e = talus_config::load(&write(&text)).unwrap_err();
    assert_error(
        &e,
        &dir.path().join("c.toml"),
        pos_of(&text, "\"m.ply\""),
        &["unsupported format", ".obj or .stl"],
    );

    // Not convex: refused naming the file, the object and the reflex edge.
    dir.write("ell.obj", obj_l_prism());
    let text = cfg_text("ell.obj");
    let e = talus_config::load(&write(&text)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DataFile);
    let shown = e.to_string();
    assert!(
        shown.starts_with(&format!("{}: ", dir.path().join("ell.obj").display())),
        "{shown}"
    );
    for w in [
        "object 'ell': not convex: 1 reflex edge(s)",
        "(1, 1, 0) to (1, 1, 1)",
        "closed convex solid",
        "file given at",
    ] {
        assert!(shown.contains(w), "expected '{w}' in: {shown}");
    }

    // Open: a box without its lid.
    let lidless: String = obj_box("lidless", [0.0; 3], [1.0; 3], 0)
        .lines()
        .filter(|l| *l != "f 5 6 8 7")
        .map(|l| format!("{l}\n"))
        .collect();
    dir.write("lid.obj", lidless);
    let e = talus_config::load(&write(&cfg_text("lid.obj"))).unwrap_err();
    assert!(
        e.to_string()
            .contains("object 'lidless': not closed: 4 open edge(s)"),
        "{e}"
    );
}

#[test]
fn shape_names_are_unique() {
    let text = format!("{RUN}{BRICK}{}", BRICK.replace("0.4", "0.5"));
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::Duplicate);
    let second = text.rfind("\"brick\"").unwrap();
    assert_error(
        &e,
        std::path::Path::new(ORIGIN),
        pos_at(&text, second),
        &[
            "duplicate shape name 'brick' in [[shapes]] #2",
            "first used at",
        ],
    );

    // A mesh's bare name is taken by its objects.
    let dir = TempDir::new("mesh-names");
    dir.write("rocks.obj", obj_box("a", [0.0; 3], [1.0; 3], 0));
    let text = format!(
        "{RUN}[[shapes]]\nname = \"rocks\"\nkind = \"mesh\"\npath = \"rocks.obj\"\n{}",
        BRICK.replace("brick", "rocks")
    );
    let e = talus_config::parse_str(&text, &dir.path().join("c.toml")).unwrap_err();
    assert!(
        e.to_string()
            .contains("duplicate shape name 'rocks' in [[shapes]] #2"),
        "{e}"
    );
}

// ---- errors: [[blocks]] ----------------------------------------------------

#[test]
fn unknown_shape_name_lists_the_defined_ones() {
    let text = fill("").replace("shape = \"brick\"", "shape = \"bricks\"");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_at(
        &e,
        &text,
        "\"bricks\"",
        &["unknown block shape 'bricks' in [[blocks]] #1; defined block shapes: brick"],
    );
    let text = fill("").replace(BRICK, "");
    assert_at(
        &parse_err(&text),
        &text,
        "\"brick\"",
        &[
            "unknown block shape 'brick'",
            "no [[shapes]] table defines a block shape",
        ],
    );
}

#[test]
fn shape_and_shapes_and_weights_go_together() {
    let text = fill("shapes = [\"brick\"]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "[\"brick\"]",
        &["[[blocks]] #1 has both 'shape' and 'shapes'"],
    );
    let text = fill("weights = [1]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "[1]",
        &["'weights' in [[blocks]] #1 goes with 'shapes'"],
    );
    let only = |extra: &str| {
        format!("{TET}{}", fill(extra))
            .replace("shape = \"brick\"\n", "shapes = [\"brick\", \"tet\"]\n")
    };
    let text = only("weights = [1, 2, 3]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "[1, 2, 3]",
        &["'weights' in [[blocks]] #1 has 3 number(s) for 2 shape(s)"],
    );
    let text = only("weights = [1, -2]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "-2",
        &["each of 'weights' in [[blocks]] #1 must be >= 0"],
    );
    let text = only("weights = [0, 0]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "[0, 0]",
        &["'weights' in [[blocks]] #1 are all zero"],
    );
    let text = fill("").replace("shape = \"brick\"", "shapes = []");
    assert_at(
        &parse_err(&text),
        &text,
        "[]",
        &["'shapes' in [[blocks]] #1 is empty"],
    );
    let text = fill("").replace("shape = \"brick\"\n", "");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::MissingKey);
    assert_at(
        &e,
        &text,
        "\"random\"",
        &["[[blocks]] #1 needs 'shape' (a name) or 'shapes'"],
    );
    let text = format!(
        "{RUN}{BRICK}[[blocks]]\nkind = \"list\"\nshapes = [\"brick\"]\ndensity = 1.0\nblocks = [{{ pos = [0, 0, 0] }}]\n"
    );
    assert_at(
        &parse_err(&text),
        &text,
        "[\"brick\"]",
        &["'shapes' in [[blocks]] #1 is for random and lattice fills"],
    );
}

#[test]
fn common_block_keys() {
    let text = fill("").replace("density = 2600.0\n", "");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::MissingKey);
    assert_at(
        &e,
        &text,
        "[[blocks]]",
        &["missing key 'density' in [[blocks]] #1"],
    );
    let text = fill("").replace("density = 2600.0", "density = -1");
    assert_at(
        &parse_err(&text),
        &text,
        "-1",
        &["'density' in [[blocks]] #1 must be > 0"],
    );
    let text = fill("fix = [\"z\", \"rx\"]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "[\"z\", \"rx\"]",
        &[
            "a block's rotation is fixed as a whole",
            "\"rx\", \"ry\", \"rz\"",
        ],
    );
    let text = fill("damping = 1.5\n");
    assert_at(
        &parse_err(&text),
        &text,
        "1.5",
        &["'damping' in [[blocks]] #1 must be in [0, 1)"],
    );
    let text = fill("group = \"*\"\n");
    assert_at(&parse_err(&text), &text, "\"*\"", &["cannot be \"*\""]);
    let text = fill("spacing = 1.0\n");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::UnknownKey);
    assert_error(
        &e,
        std::path::Path::new(ORIGIN),
        pos_after(&text, "spacing = "),
        &[
            "'spacing' does not apply to kind = \"random\"",
            "count, region, orientation",
        ],
    );
}

#[test]
fn random_fill_values() {
    let text = fill("").replace("count = 10", "count = 0");
    assert_error(
        &parse_err(&text),
        std::path::Path::new(ORIGIN),
        pos_after(&text, "count = "),
        &["'count' in [[blocks]] #1", ">= 1"],
    );
    let text = fill("").replace("max = [2, 2, 2]", "max = [2, 0, 2]");
    assert_at(
        &parse_err(&text),
        &text,
        "{ min",
        &["region of [[blocks]] #1: min must be < max", "along y"],
    );
    let text = fill("").replace("max = [2, 2, 2]", "max = [2, 2, 0.3]");
    assert_at(
        &parse_err(&text),
        &text,
        "{ min",
        &[
            "region of [[blocks]] #1 cannot hold shape 'brick'",
            "bounding sphere",
        ],
    );
    let text = fill("max_attempts = 0\n");
    assert_error(
        &parse_err(&text),
        std::path::Path::new(ORIGIN),
        pos_after(&text, "max_attempts = "),
        &["'max_attempts' in [[blocks]] #1", ">= 1"],
    );
    let text = fill("orientation = [1, 0, 0, 1]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "[1, 0, 0, 1]",
        &[
            "'orientation' in [[blocks]] #1 must be a unit quaternion",
            "length 1.414214",
        ],
    );
    let text = fill("orientation = \"randomly\"\n");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::WrongType);
    assert_at(
        &e,
        &text,
        "\"randomly\"",
        &[
            "'orientation' in [[blocks]] #1",
            "\"random\" or an array of 4 numbers",
        ],
    );
    let text = fill("orientation = [1, 0, 0]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "[1, 0, 0]",
        &[
            "wrong length for 'orientation'",
            "4 numbers [w, x, y, z]",
            "found 3",
        ],
    );
}

#[test]
fn lattice_values() {
    let lattice = |extra: &str| {
        format!(
            "{RUN}{BRICK}[[blocks]]\nkind = \"lattice\"\nshape = \"brick\"\ndensity = 1.0\n\
             region = {{ min = [0, 0, 0], max = [1, 1, 1] }}\n{extra}"
        )
    };
    let text = lattice("spacing = 0.3\n");
    assert_at(
        &parse_err(&text),
        &text,
        "0.3",
        &["'spacing' in [[blocks]] #1 must be >= 0.4", "widest side"],
    );
    let text = lattice("spacing = 0.3\norientation = \"random\"\n");
    assert_at(
        &parse_err(&text),
        &text,
        "0.3",
        &["bounding-sphere diameter"],
    );
    let text = lattice("spacing = 1.5\n");
    assert_at(
        &parse_err(&text),
        &text,
        "{ min",
        &["region of [[blocks]] #1 is smaller than one lattice spacing"],
    );
    let text = lattice("counts = [3, 1, 1]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "[3, 1, 1]",
        &["'counts' in [[blocks]] #1: 3 blocks at spacing", "along x"],
    );
}

#[test]
fn list_rows() {
    let list = |table: &str, rows: &str| {
        format!(
            "{RUN}{BRICK}{TET}[[blocks]]\nkind = \"list\"\ndensity = 1.0\n{table}blocks = [\n{rows}]\n"
        )
    };
    let text = list("", "");
    assert_at(
        &parse_err(&text),
        &text,
        "[\n]",
        &["'blocks' in [[blocks]] #1 is empty"],
    );
    let text = list("", "{ pos = [0, 0, 0] },\n");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::MissingKey);
    assert_at(
        &e,
        &text,
        "{ pos",
        &["row #1 of 'blocks' in [[blocks]] #1 has no 'shape' and [[blocks]] #1 has no default 'shape'"],
    );
    let text = list(
        "shape = \"tet\"\n",
        "{ pos = [0, 0, 0] },\n{ orientation = [0.5, 0.5, 0.5, 0.4] },\n",
    );
    assert_at(
        &parse_err(&text),
        &text,
        "[0.5",
        &["'orientation' in row #2 of 'blocks' in [[blocks]] #1 must be a unit quaternion"],
    );
    let text = list("", "{ shape = \"cube\" },\n");
    assert_at(
        &parse_err(&text),
        &text,
        "\"cube\"",
        &["unknown block shape 'cube' in row #1 of 'blocks' in [[blocks]] #1"],
    );
    let text = list("", "{ pos = [0, 0, 0], turn = 1 },\n");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::UnknownKey);
    assert_at(
        &e,
        &text,
        "turn",
        &[
            "unknown key 'turn'",
            "shape, pos, orientation, velocity, spin",
        ],
    );

    // A mesh's bare name names several shapes: a row must pick one.
    let dir = TempDir::new("list-mesh");
    dir.write(
        "two.obj",
        obj_box("a", [0.0; 3], [1.0; 3], 0) + &obj_box("b", [2.0; 3], [3.0; 3], 8),
    );
    let text = format!(
        "{RUN}[[shapes]]\nname = \"two\"\nkind = \"mesh\"\npath = \"two.obj\"\n\
         [[blocks]]\nkind = \"list\"\ndensity = 1.0\nblocks = [{{ shape = \"two\" }}]\n"
    );
    let e = talus_config::parse_str(&text, &dir.path().join("c.toml")).unwrap_err();
    assert!(
        e.to_string()
            .contains("'two' in row #1 of 'blocks' in [[blocks]] #1 names 2 shapes (the objects of a mesh file); name one of: two/a, two/b"),
        "{e}"
    );
}

#[test]
fn poses_file_errors_point_into_the_file() {
    let dir = TempDir::new("poses-errors");
    let text = format!(
        "{RUN}{BRICK}[[blocks]]\nkind = \"file\"\nshape = \"brick\"\ndensity = 1.0\npath = \"p.csv\"\n"
    );
    let load = |csv: &str| {
        dir.write("p.csv", csv);
        talus_config::parse_str(&text, &dir.path().join("c.toml")).unwrap_err()
    };
    let csv_at =
        |line: usize, col: usize| format!("{}:{line}:{col}: ", dir.path().join("p.csv").display());
    let e = load("x,y,z,qw,qx,qy,qz\n0,0,0,1,0,0,0\n0,0,0,1,1,0,0\n");
    assert_eq!(e.kind(), ErrorKind::DataFile);
    let shown = e.to_string();
    assert!(shown.starts_with(&csv_at(3, 7)), "{shown}");
    assert!(
        shown.contains("orientation (qw, qx, qy, qz) must be a unit quaternion"),
        "{shown}"
    );
    assert!(
        shown.contains("file given at configs") || shown.contains("file given at"),
        "{shown}"
    );
    let e = load("x,y,z,qw\n0,0,0,1\n");
    assert!(
        e.to_string()
            .contains("CSV columns qw, qx, qy, qz come all together"),
        "{e}"
    );
    let e = load("x,y,z,r\n0,0,0,1\n");
    assert!(e.to_string().starts_with(&csv_at(1, 7)), "{e}");
    assert!(
        e.to_string()
            .contains("unknown CSV column 'r'; allowed: x, y, z, qw"),
        "{e}"
    );
    let e = load("x,y,z\n");
    assert!(e.to_string().contains("the file holds no blocks"), "{e}");

    let no_shape = text.replace("shape = \"brick\"\n", "");
    let e = talus_config::parse_str(&no_shape, &dir.path().join("c.toml")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MissingKey);
    assert!(
        e.to_string()
            .contains("missing key 'shape' in [[blocks]] #1 (kind = \"file\")"),
        "{e}"
    );
}

#[test]
fn block_resolution_is_set_per_run_and_per_pair_of_groups() {
    use talus_core::BlockResolution as Resolution;
    let text = format!(
        "[run]\nsteps = 10\nblock_resolution = \"reduced\"\n{BRICK}\
         [[models]]\nmodel = \"linear\"\ngroups = [\"*\", \"*\"]\n\
         [[models]]\nmodel = \"linear\"\ngroups = [\"rock\", \"rock\"]\nblock_resolution = \"full\"\n"
    );
    let cfg = parse_ok(&text);
    assert_eq!(cfg.run.block_resolution, Resolution::Reduced);
    let by_groups = |g: &str| {
        cfg.models
            .iter()
            .find(|m| m.groups[0] == g)
            .unwrap()
            .block_resolution
    };
    assert_eq!(by_groups("*"), None);
    assert_eq!(by_groups("rock"), Some(Resolution::Full));
    let potential = parse_ok(&text.replace("\"reduced\"", "\"potential\""));
    assert_eq!(potential.run.block_resolution, Resolution::Potential);
    let err = parse_err(&format!(
        "{RUN}[[models]]\nmodel = \"linear\"\ngroups = [\"*\", \"*\"]\nblock_resolution = \"exact\"\n"
    ));
    assert!(err.to_string().contains("exact"), "{err}");
}

/// `dilate = r` rounds a shape outwards (its polyhedron is the core),
/// `erode = r` within its own faces (the core is moved in by r); a shape
/// takes one or the other, and an erosion that would make the faces meet
/// is refused with the shape's name.
#[test]
fn shapes_are_rounded_by_dilate_or_erode() {
    let (a, b, c, r) = (0.1f64, 0.2f64, 0.4f64, 0.01f64);
    let pi = std::f64::consts::PI;
    let dilated = parse_ok(&format!("{RUN}{BRICK}dilate = {r}\n"));
    let s = &dilated.shapes[0].shape;
    assert_eq!(s.rounding, r);
    let volume = a * b * c
        + 2.0 * r * (a * b + b * c + c * a)
        + pi * r * r * (a + b + c)
        + 4.0 / 3.0 * pi * r.powi(3);
    assert!((s.volume - volume).abs() < 1e-12 * volume);
    // Eroded: the same outer box with rounded edges and corners.
    let eroded = parse_ok(&format!("{RUN}{BRICK}erode = {r}\n"));
    let s = &eroded.shapes[0].shape;
    assert_eq!(s.rounding, r);
    let lost = (4.0 - pi) * r * r * (a + b + c - 6.0 * r) + (8.0 - 4.0 / 3.0 * pi) * r.powi(3);
    assert!((s.volume - (a * b * c - lost)).abs() < 1e-12 * a * b * c);
    let both = parse_err(&format!("{RUN}{BRICK}dilate = {r}\nerode = {r}\n"));
    assert!(
        both.to_string().contains("both 'dilate' and 'erode'"),
        "{both}"
    );
    let thin = parse_err(&format!("{RUN}{BRICK}erode = 0.06\n"));
    let message = thin.to_string();
    assert!(
        message.contains("brick") && message.contains("eroded"),
        "{message}"
    );
    let negative = parse_err(&format!("{RUN}{BRICK}dilate = -0.01\n"));
    assert!(negative.to_string().contains("'dilate'"), "{negative}");
}
