//! `[[walls]] inactive`: which facet sides each selector picks on a box
//! (checked against the box's geometry), and the errors of bad entries.

mod common;

use common::*;
use talus_config::{ErrorKind, WallSource};

fn box_with(inactive: &str) -> String {
    format!(
        "{RUN}[[walls]]\nname = \"box\"\nkind = \"box\"\nmin = [0, 0, 0]\nmax = [1, 1, 1]\n\
         divisions = 2\ninactive = {inactive}\n"
    )
}

fn wall(inactive: &str) -> WallSource {
    parse(&box_with(inactive)).unwrap().walls.remove(0)
}

/// Normal (unnormalised) and centroid of facet `f`.
fn facet(w: &WallSource, f: usize) -> ([f64; 3], [f64; 3]) {
    let t = w.mesh.triangles[f];
    let p = |k: usize| w.mesh.vertices[t[k] as usize];
    let (a, b, c) = (p(0), p(1), p(2));
    let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
    let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
    let n = [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ];
    let centroid = [0, 1, 2].map(|i| (a[i] + b[i] + c[i]) / 3.0);
    (n, centroid)
}

#[test]
fn selectors_pick_the_expected_facets() {
    // Every facet, back side.
    let w = wall("[{ side = \"back\" }]");
    assert_eq!(w.mesh.triangles.len(), 48);
    assert!(w.inactive.iter().all(|&m| m == 2));

    // By index.
    let w = wall("[{ side = \"front\", facets = [0, 5] }]");
    for (f, &m) in w.inactive.iter().enumerate() {
        assert_eq!(m, if f == 0 || f == 5 { 1 } else { 0 });
    }

    // By normal: the box's normals point in, so the floor's point to +z.
    let w = wall("[{ side = \"both\", normal = [0, 0, 1], angle = 5 }]");
    for (f, &m) in w.inactive.iter().enumerate() {
        let (n, _) = facet(&w, f);
        let up = n[2] > 0.0 && n[0] == 0.0 && n[1] == 0.0;
        assert_eq!(m, if up { 3 } else { 0 }, "facet {f}");
    }

    // By region: facets whose centroid has x <= 0.5 (the -x wall and half
    // of the four walls around it); entries combine.
    let w = wall(
        "[{ side = \"front\", region = { min = [-1, -1, -1], max = [0.5, 2, 2] } }, \
         { side = \"back\", facets = [1] }]",
    );
    for (f, &m) in w.inactive.iter().enumerate() {
        let (_, c) = facet(&w, f);
        let front = if c[0] <= 0.5 { 1 } else { 0 };
        let back = if f == 1 { 2 } else { 0 };
        assert_eq!(m, front | back, "facet {f}");
    }

    // No entry: every side active.
    let text = format!(
        "{RUN}[[walls]]\nname = \"box\"\nkind = \"box\"\nmin = [0, 0, 0]\nmax = [1, 1, 1]\n"
    );
    assert!(parse(&text).unwrap().walls[0].inactive.is_empty());
}

#[test]
fn bad_entries_are_located_and_explained() {
    let cases = [
        (
            "[{ side = \"up\" }]",
            "\"up\"",
            ErrorKind::WrongType,
            "\"front\", \"back\", \"both\"",
        ),
        (
            "[{ side = \"front\", facets = [48] }]",
            "48",
            ErrorKind::InvalidValue,
            "facet 48 in inactive #1 of [[walls]] #1 does not exist: the wall has 48 facets",
        ),
        (
            "[{ side = \"front\", facets = [1], normal = [0, 0, 1] }]",
            "{ side",
            ErrorKind::InvalidValue,
            "more than one of 'facets', 'normal', 'region'",
        ),
        (
            "[{ side = \"front\", angle = 3 }]",
            "3 }",
            ErrorKind::InvalidValue,
            "'angle' in inactive #1 of [[walls]] #1 needs 'normal'",
        ),
        (
            "[{ side = \"front\", normal = [0, 0, 0] }]",
            "[0, 0, 0] }",
            ErrorKind::InvalidValue,
            "must not be zero",
        ),
        (
            "[{ side = \"front\", normal = [1, 1, 1], angle = 2 }]",
            "{ side",
            ErrorKind::InvalidValue,
            "selects no facet",
        ),
        (
            "[{ side = \"front\", facet = [1] }]",
            "facet =",
            ErrorKind::UnknownKey,
            "unknown key 'facet'",
        ),
    ];
    for (inactive, at, kind, words) in cases {
        let text = box_with(inactive);
        let e = parse_err(&text);
        assert_eq!(e.kind(), kind, "{e}");
        assert_at(&e, &text, at, &[words]);
    }
}
