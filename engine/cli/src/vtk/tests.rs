//! Tests of the VTK writer: the XML of each part, read back with
//! roxmltree and the data decoded, against the values written.

use super::*;
use base64::Engine as _;
use talus_core::Simulation;

/// A prepared simulation of the config `text`.
fn prepared(text: &str) -> Simulation {
    let cfg = talus_config::parse_str(text, Path::new("test.toml")).unwrap();
    let reg = crate::default_registry().unwrap();
    let mut sim = crate::scene::build(&cfg, &reg).unwrap();
    sim.prepare().unwrap();
    sim
}

/// A data array decoded by an independent base64 decoder: its
/// attributes and its values as raw little-endian bytes, after
/// checking the UInt64 byte count in front of them.
struct Decoded {
    name: String,
    vtk_type: String,
    components: usize,
    tuples: usize,
    bytes: Vec<u8>,
}

impl Decoded {
    fn f64s(&self) -> Vec<f64> {
        assert_eq!(self.vtk_type, "Float64", "{}", self.name);
        let c = self.bytes.chunks_exact(8);
        c.map(|b| f64::from_le_bytes(b.try_into().unwrap()))
            .collect()
    }

    fn i64s(&self) -> Vec<i64> {
        assert_eq!(self.vtk_type, "Int64", "{}", self.name);
        let c = self.bytes.chunks_exact(8);
        c.map(|b| i64::from_le_bytes(b.try_into().unwrap()))
            .collect()
    }
}

fn decode(node: roxmltree::Node<'_, '_>) -> Decoded {
    assert_eq!(node.attribute("format"), Some("binary"));
    let text = node.text().unwrap_or("").trim();
    let raw = base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap_or_else(|e| panic!("{:?}: {e}", node.attribute("Name")));
    let (head, bytes) = raw.split_at(8);
    let count = u64::from_le_bytes(head.try_into().unwrap()) as usize;
    assert_eq!(count, bytes.len(), "{:?}", node.attribute("Name"));
    let attr = |k: &str| node.attribute(k).unwrap().to_string();
    let number = |k: &str| node.attribute(k).map_or(1, |v| v.parse().unwrap());
    let d = Decoded {
        name: attr("Name"),
        vtk_type: attr("type"),
        components: number("NumberOfComponents"),
        tuples: number("NumberOfTuples"),
        bytes: bytes.to_vec(),
    };
    let size = match d.vtk_type.as_str() {
        "Float64" | "Int64" => 8,
        "Int32" => 4,
        "String" => 0,
        t => panic!("unexpected type {t}"),
    };
    if size > 0 {
        assert_eq!(d.bytes.len(), size * d.components * d.tuples, "{}", d.name);
    }
    d
}

/// One parsed `.vtp` file: the piece's counts and every array, by
/// section (`FieldData`, `PointData`, `CellData`, `Points`, and the
/// cell tag).
struct Vtp {
    n_points: usize,
    n_cells: usize,
    arrays: Vec<(String, Decoded)>,
}

impl Vtp {
    fn get(&self, section: &str, name: &str) -> &Decoded {
        self.arrays
            .iter()
            .find(|(s, a)| s == section && a.name == name)
            .map(|(_, a)| a)
            .unwrap_or_else(|| panic!("no {section}/{name}"))
    }
}

/// Parses a `.vtp` file with a strict XML parser and checks what the
/// VTK XML PolyData format requires: the root element and its byte
/// order and header type, one piece whose point and cell arrays have
/// one tuple per point and per cell, offsets that end each cell of
/// `size` points and point indices in range.
fn parse(xml: &[u8], cells: &str, size: usize) -> Vtp {
    let text = std::str::from_utf8(xml).unwrap();
    let doc = roxmltree::Document::parse(text).unwrap();
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "VTKFile");
    assert_eq!(root.attribute("type"), Some("PolyData"));
    assert_eq!(root.attribute("byte_order"), Some("LittleEndian"));
    assert_eq!(root.attribute("header_type"), Some("UInt64"));
    let poly = root.first_element_child().unwrap();
    assert_eq!(poly.tag_name().name(), "PolyData");
    let pieces: Vec<_> = poly
        .children()
        .filter(|n| n.has_tag_name("Piece"))
        .collect();
    assert_eq!(pieces.len(), 1);
    let piece = pieces[0];
    let count = |k: &str| -> usize { piece.attribute(k).unwrap().parse().unwrap() };
    let n_points = count("NumberOfPoints");
    let n_cells = count(&format!("NumberOf{cells}"));
    for other in ["Verts", "Lines", "Strips", "Polys"] {
        if other != cells {
            assert_eq!(count(&format!("NumberOf{other}")), 0);
        }
    }
    let mut arrays = Vec::new();
    for section in poly.children().chain(piece.children()) {
        if !section.is_element() || section.has_tag_name("Piece") {
            continue;
        }
        let tag = section.tag_name().name().to_string();
        for a in section.children().filter(|n| n.is_element()) {
            arrays.push((tag.clone(), decode(a)));
        }
    }
    let vtp = Vtp {
        n_points,
        n_cells,
        arrays,
    };
    for (section, a) in &vtp.arrays {
        match section.as_str() {
            "PointData" => assert_eq!(a.tuples, n_points, "{}", a.name),
            "CellData" => assert_eq!(a.tuples, n_cells, "{}", a.name),
            _ => {}
        }
    }
    let points = vtp.get("Points", "Points");
    assert_eq!((points.components, points.tuples), (3, n_points));
    let conn = vtp.get(cells, "connectivity").i64s();
    let offsets = vtp.get(cells, "offsets").i64s();
    assert_eq!(conn.len(), size * n_cells);
    let ends: Vec<i64> = (1..=n_cells).map(|k| (k * size) as i64).collect();
    assert_eq!(offsets, ends);
    assert!(conn.iter().all(|&k| k >= 0 && (k as usize) < n_points));
    vtp
}

#[test]
fn base64_matches_the_rfc_vectors_in_any_pushes() {
    let cases = [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ];
    for (plain, coded) in cases {
        for split in 0..=plain.len() {
            let mut out = Vec::new();
            let mut enc = Base64::new(&mut out);
            enc.push(&plain.as_bytes()[..split]);
            enc.push(&plain.as_bytes()[split..]);
            enc.finish();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                coded,
                "{plain:?} at {split}"
            );
        }
    }
}

const RUN: &str = "[run]\nsteps = 10\ndt = 1e-5\ngravity = [0, 0, -9.81]\n\
    [[models]]\nmodel = \"linear\"\ngroups = [\"*\", \"*\"]\n\
    properties = { kn = 1e5, ks = 5e4, fric = 0.5 }\n";

#[test]
fn a_frame_without_contacts_is_well_formed() {
    let text = format!(
        "{RUN}[[balls]]\nkind = \"list\"\ngroup = \"grain\"\ndensity = 2500.0\n\
         radius = 0.001\nballs = [{{ pos = [0.25, -0.5, 2.0], velocity = [1.0, 0.0, 0.0] }}]\n"
    );
    let mut sim = prepared(&text);
    let snap = sim.snapshot();
    assert!(part_xml(Part::Blocks, &snap).is_none());
    assert!(part_xml(Part::Walls, &snap).is_none());

    let contacts = parse(&part_xml(Part::Contacts, &snap).unwrap(), "Lines", 2);
    assert_eq!((contacts.n_points, contacts.n_cells), (0, 0));
    assert_eq!(contacts.get("CellData", "force").components, 3);
    assert_eq!(contacts.get("FieldData", "step").i64s(), [0]);
    assert_eq!(contacts.get("FieldData", "TimeValue").f64s(), [0.0]);

    let balls = parse(&part_xml(Part::Balls, &snap).unwrap(), "Verts", 1);
    assert_eq!((balls.n_points, balls.n_cells), (1, 1));
    assert_eq!(balls.get("Points", "Points").f64s(), [0.25, -0.5, 2.0]);
    assert_eq!(balls.get("PointData", "radius").f64s(), [0.001]);
    assert_eq!(balls.get("PointData", "id").i64s(), [1]);
    // Before step 1 the velocity is the one the config gives.
    let v = balls.get("PointData", "velocity").f64s();
    assert_eq!(v, [1.0, 0.0, 0.0]);
    let names = &balls.get("FieldData", "group_names").bytes;
    let group = balls.get("PointData", "group");
    let index = i32::from_le_bytes(group.bytes[..4].try_into().unwrap()) as usize;
    let names: Vec<&[u8]> = names.split(|&b| b == 0).collect();
    assert_eq!(names[index], b"grain");
}

#[test]
fn a_frame_with_blocks_is_well_formed() {
    let text = format!(
        "{RUN}[[shapes]]\nname = \"cube\"\nkind = \"box\"\nsize = [2.0, 2.0, 2.0]\n\
         [[blocks]]\nkind = \"list\"\ngroup = \"rock\"\ndensity = 2600.0\n\
         blocks = [{{ shape = \"cube\", pos = [0.0, 0.0, 1.5] }}, \
         {{ shape = \"cube\", pos = [5.0, 0.0, 1.5] }}]\n\
         [[walls]]\nname = \"floor\"\nkind = \"box\"\ngroup = \"floor\"\n\
         min = [-2.0, -2.0, 0.0]\nmax = [8.0, 2.0, 4.0]\nopen = [\"+z\"]\n"
    );
    let mut sim = prepared(&text);
    let snap = sim.snapshot();
    assert!(part_xml(Part::Balls, &snap).is_none());

    // Two cubes of side 2: 8 corners and 12 triangles each, at their
    // centre plus or minus 1 on every axis.
    let blocks = parse(&part_xml(Part::Blocks, &snap).unwrap(), "Polys", 3);
    assert_eq!((blocks.n_points, blocks.n_cells), (16, 24));
    let points = blocks.get("Points", "Points").f64s();
    for (k, centre) in [[0.0, 0.0, 1.5], [5.0, 0.0, 1.5]].into_iter().enumerate() {
        let mut corners: Vec<[i32; 3]> = points[24 * k..24 * (k + 1)]
            .chunks_exact(3)
            .map(|p| {
                std::array::from_fn(|i| {
                    let d = p[i] - centre[i];
                    assert!((d.abs() - 1.0).abs() < 1e-12, "{p:?}");
                    d.signum() as i32
                })
            })
            .collect();
        corners.sort();
        corners.dedup();
        assert_eq!(corners.len(), 8);
    }
    let id = blocks.get("CellData", "id").i64s();
    assert_eq!(id, [[1; 12], [2; 12]].concat());
    assert_eq!(blocks.get("CellData", "spin").components, 3);

    // An open box of five faces, each cut in two triangles at least.
    let walls = parse(&part_xml(Part::Walls, &snap).unwrap(), "Polys", 3);
    assert!(walls.n_cells >= 10);
    let corners = walls.get("Points", "Points").f64s();
    for p in corners.chunks_exact(3) {
        let inside = [(-2.0, 8.0), (-2.0, 2.0), (0.0, 4.0)];
        assert!(p
            .iter()
            .zip(inside)
            .all(|(x, (lo, hi))| (lo..=hi).contains(x)));
    }
    assert!(walls.get("CellData", "wall").i64s().iter().all(|&w| w == 1));
    assert_eq!(walls.get("FieldData", "wall_names").bytes, b"floor\0");

    let contacts = parse(&part_xml(Part::Contacts, &snap).unwrap(), "Lines", 2);
    assert_eq!(contacts.n_cells, 0, "the cubes hover");
}

#[test]
fn a_series_lists_exactly_its_frames_and_replaces_an_older_one() {
    let tmp = tempfile::tempdir().unwrap();
    let text = format!(
        "{RUN}[[balls]]\nkind = \"list\"\ndensity = 2500.0\nradius = 0.001\n\
         balls = [{{ pos = [0.0, 0.0, 1.0] }}]\n"
    );
    let mut sim = prepared(&text);
    let series = Series::start(tmp.path(), 5, true).unwrap().unwrap();
    series.write(&sim.snapshot()).unwrap();
    for _ in 0..5 {
        sim.cycle().unwrap();
    }
    series.write(&sim.snapshot()).unwrap();
    let dir = tmp.path().join(FOLDER);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let expected = [
        "balls-0000000000.vtp",
        "balls-0000000005.vtp",
        "contacts-0000000000.vtp",
        "contacts-0000000005.vtp",
        "run.pvd",
    ];
    assert_eq!(names, expected, "no temporary file is left");
    let index = std::fs::read_to_string(dir.join(INDEX)).unwrap();
    let doc = roxmltree::Document::parse(&index).unwrap();
    assert_eq!(doc.root_element().attribute("type"), Some("Collection"));
    let listed: Vec<(f64, &str, &str)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("DataSet"))
        .map(|n| {
            let time = n.attribute("timestep").unwrap().parse().unwrap();
            (
                time,
                n.attribute("part").unwrap(),
                n.attribute("file").unwrap(),
            )
        })
        .collect();
    let t5 = sim.time;
    assert_eq!(
        listed,
        [
            (0.0, "0", "balls-0000000000.vtp"),
            (0.0, "3", "contacts-0000000000.vtp"),
            (t5, "0", "balls-0000000005.vtp"),
            (t5, "3", "contacts-0000000005.vtp"),
        ]
    );

    // Another file in the folder stays; the series' files are refused
    // without overwrite and removed with it.
    std::fs::write(dir.join("notes.txt"), "keep").unwrap();
    let refused = Series::start(tmp.path(), 5, false).err().unwrap();
    assert!(refused.to_string().contains("older run"), "{refused}");
    assert!(Series::start(tmp.path(), 0, true).unwrap().is_none());
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(left.len(), 1);
    assert!(dir.join("notes.txt").exists());
}

#[test]
fn only_the_series_file_names_are_ours() {
    for name in [
        "run.pvd",
        ".run.pvd.tmp",
        "balls-0000000012.vtp",
        ".walls-0000000000.vtp.tmp",
        "contacts-12345678901.vtp",
    ] {
        assert!(ours(name), "{name}");
    }
    for name in [
        "notes.txt",
        "balls.vtp",
        "balls-12a.vtp",
        "run.pvd.bak",
        "x-1.vtp",
        ".run.pvd",
        ".balls-0000000001.vtp",
    ] {
        assert!(!ours(name), "{name}");
    }
}
