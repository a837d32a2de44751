//! `[[shapes]] kind = "clump"` and `[[clumps]]`: what valid tables give,
//! then the errors they can raise, each at its `file:line:col`.

mod common;

use common::*;
use talus_config::{BlockKind, ErrorKind};

const PEANUT: &str = "[[shapes]]\nname = \"peanut\"\nkind = \"clump\"\n\
    pebbles = [{ pos = [-0.5, 0, 0], radius = 1.0 }, { pos = [0.5, 0, 0], radius = 1.0 }]\n";
const BRICK: &str = "[[shapes]]\nname = \"brick\"\nkind = \"box\"\nsize = [0.1, 0.2, 0.4]\n";

fn clumps(table: &str) -> String {
    format!("{RUN}{PEANUT}{BRICK}[[clumps]]\ndensity = 2600.0\n{table}")
}

#[test]
fn clump_shapes_are_templates_with_the_union_mass_properties() {
    let text = clumps(
        "kind = \"list\"\nshape = \"peanut\"\nclumps = [{ pos = [0, 0, 5] }, { pos = [5, 0, 5], spin = [0, 0, 1] }]\n",
    );
    let cfg = parse(&text).unwrap();
    assert_eq!(cfg.shapes.len(), 1, "the brick is a block shape");
    assert_eq!(cfg.templates.len(), 1);
    let t = &cfg.templates[0].template;
    assert_eq!(t.name, "peanut");
    assert_eq!(t.pebbles.len(), 2);
    // Two unit balls 1 apart: 2 (4/3 pi) less the lens of two caps of
    // height 1/2, pi h^2 (3 - h) / 3 each.
    let cap = std::f64::consts::PI * 0.25 * 2.5 / 3.0;
    let v = 2.0 * 4.0 / 3.0 * std::f64::consts::PI - 2.0 * cap;
    assert!(((t.volume - v) / v).abs() < 1e-4, "{} vs {v}", t.volume);
    assert_eq!(cfg.clumps.len(), 1);
    let BlockKind::Explicit(rows) = &cfg.clumps[0].kind else {
        panic!("a list")
    };
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].pos, Some([5.0, 0.0, 5.0]));
    assert_eq!(rows[1].spin, Some([0.0, 0.0, 1.0]));
}

#[test]
fn a_fill_of_clumps_takes_the_blocks_keys() {
    let text = clumps(
        "kind = \"random\"\nshape = \"peanut\"\ncount = 20\nregion = { min = [0, 0, 0], max = [20, 20, 20] }\n",
    );
    let cfg = parse(&text).unwrap();
    let BlockKind::Random { count, choices, .. } = &cfg.clumps[0].kind else {
        panic!("a random fill")
    };
    assert_eq!((*count, choices.as_slice()), (20, &[(0, 1.0)][..]));
    let text = clumps(
        "kind = \"lattice\"\nshape = \"peanut\"\nregion = { min = [0, 0, 0], max = [9, 9, 9] }\n",
    );
    let cfg = parse(&text).unwrap();
    let BlockKind::Lattice { spacing, .. } = &cfg.clumps[0].kind else {
        panic!("a lattice")
    };
    // The peanut is 3 long along x, as written (no orientation).
    assert!((spacing - 3.0).abs() < 1e-9, "{spacing}");
}

#[test]
fn shapes_of_the_other_kind_are_refused_by_name() {
    let text = clumps("kind = \"list\"\nshape = \"brick\"\nclumps = [{ pos = [0, 0, 5] }]\n");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_at(
        &e,
        &text,
        "\"brick\"\nclumps",
        &["'brick' in [[clumps]] #1 is a block shape; use it in [[blocks]]"],
    );
    let text = format!(
        "{RUN}{PEANUT}[[blocks]]\nkind = \"list\"\ndensity = 1.0\nshape = \"peanut\"\nblocks = [{{ pos = [0, 0, 5] }}]\n"
    );
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "\"peanut\"\nblocks",
        &["'peanut' in [[blocks]] #1 is a clump shape; use it in [[clumps]]"],
    );
}

#[test]
fn a_clump_list_takes_its_rows_under_clumps() {
    let text = clumps("kind = \"list\"\nshape = \"peanut\"\nblocks = [{ pos = [0, 0, 5] }]\n");
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "[{ pos = [0, 0, 5] }]",
        &["key 'blocks' does not apply", "clumps"],
    );
}

#[test]
fn bad_pebbles_are_refused_where_they_are() {
    let bad = [
        ("pebbles = []", "[]", "is empty"),
        (
            "pebbles = [{ pos = [0, 0, 0], radius = -1.0 }]",
            "-1.0",
            "'radius' of pebble #1 of [[shapes]] #1",
        ),
        ("pebbles = [{ pos = [0, 0, 0] }]", "{ pos", "radius"),
        (
            "pebbles = [{ pos = [0, 0, 0], radius = 1.0 }]\ndilate = 0.1",
            "0.1",
            "a clump is not rounded",
        ),
    ];
    for (keys, needle, words) in bad {
        let text = format!("{RUN}[[shapes]]\nname = \"s\"\nkind = \"clump\"\n{keys}\n");
        let e = parse_err(&text);
        assert_at(&e, &text, needle, &[words]);
    }
}

/// A closed octahedron as OBJ text, vertices at +-1 on each axis.
fn octahedron_obj() -> String {
    let mut s = String::from("o oct\n");
    for v in ["1 0 0", "-1 0 0", "0 1 0", "0 -1 0", "0 0 1", "0 0 -1"] {
        s += &format!("v {v}\n");
    }
    for f in [
        "1 3 5", "3 2 5", "2 4 5", "4 1 5", "3 1 6", "2 3 6", "4 2 6", "1 4 6",
    ] {
        s += &format!("f {f}\n");
    }
    s
}

#[test]
fn a_mesh_filled_with_pebbles_reports_its_fidelity() {
    let dir = TempDir::new("clump-mesh");
    dir.write("oct.obj", octahedron_obj());
    let table = "[[shapes]]\nname = \"oct\"\nkind = \"clump\"\npath = \"oct.obj\"\nscale = 0.01\ncount = 6\n";
    let text = format!("{RUN}{table}");
    let path = dir.write("c.toml", &text);
    let cfg = talus_config::parse_str(&text, &path).unwrap();
    let t = &cfg.templates[0];
    let fill = t.fill.as_ref().expect("a mesh fill");
    assert_eq!(fill.asked, 6);
    assert!(!t.template.pebbles.is_empty() && t.template.pebbles.len() <= 6);
    // The octahedron of half-diagonal 1 cm: volume 4/3 cm^3; the pebbles
    // lie inside it, so the union is at most that (to the integration's
    // accuracy) and the largest inscribed ball, radius 1/sqrt(3) cm,
    // already fills pi 4/3 (1/sqrt 3)^3 / (4/3) = 0.60 of it.
    let f = &fill.fidelity;
    assert!(
        (f.mesh_volume - 4.0 / 3.0 * 1e-6).abs() < 1e-12,
        "{}",
        f.mesh_volume
    );
    assert!(
        f.volume_ratio > 0.6 && f.volume_ratio < 1.01,
        "{}",
        f.volume_ratio
    );
    let inscribed = 0.01 / 3f64.sqrt();
    let largest = t.template.pebbles.iter().map(|p| p.1).fold(0.0, f64::max);
    assert!(
        largest <= inscribed * (1.0 + 1e-9) && largest > 0.9 * inscribed,
        "{largest}"
    );

    // Without a count, with both pebbles and a path, with an open mesh.
    let no_count = format!("{RUN}{}", table.replace("count = 6\n", ""));
    let e = talus_config::parse_str(&no_count, &path).unwrap_err();
    assert!(e.to_string().contains("count"), "{e}");
    let both = format!("{RUN}{table}pebbles = [{{ pos = [0, 0, 0], radius = 1.0 }}]\n");
    let e = talus_config::parse_str(&both, &path).unwrap_err();
    assert!(e.to_string().contains("both 'pebbles' and 'path'"), "{e}");
    let open: String = octahedron_obj()
        .lines()
        .filter(|l| *l != "f 1 4 6")
        .map(|l| format!("{l}\n"))
        .collect();
    dir.write("oct.obj", open);
    let e = talus_config::parse_str(&text, &path).unwrap_err();
    let shown = e.to_string();
    assert!(
        shown.contains("oct.obj")
            && shown.contains("cannot fill it with pebbles")
            && shown.contains("not closed"),
        "{shown}"
    );
}
