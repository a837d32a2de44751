//! Valid configs that read files: meshes (STL ASCII and binary, OBJ),
//! positions (xyz, CSV), plugins; and the generated box walls.

mod common;

use std::collections::HashMap;

use common::*;
use talus_config::{BallKind, MeshData, WallSource};
use talus_core::generate::RadiusDist;
use talus_core::wall::Resolution;

fn one_wall(dir: &TempDir, wall: &str) -> WallSource {
    let text = format!("{RUN}[[walls]]\nname = \"w\"\n{wall}");
    let cfg = talus_config::parse_str(&text, &dir.path().join("x.toml")).unwrap();
    cfg.walls.into_iter().next().unwrap()
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn normal(m: &MeshData, t: [u32; 3]) -> [f64; 3] {
    let (a, b, c) = (
        m.vertices[t[0] as usize],
        m.vertices[t[1] as usize],
        m.vertices[t[2] as usize],
    );
    let (e1, e2) = (sub(b, a), sub(c, a));
    [
        e1[1] * e2[2] - e1[2] * e2[1],
        e1[2] * e2[0] - e1[0] * e2[2],
        e1[0] * e2[1] - e1[1] * e2[0],
    ]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn edge_uses(m: &MeshData) -> HashMap<(u32, u32), usize> {
    let mut edges = HashMap::new();
    for t in &m.triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            *edges.entry((a.min(b), a.max(b))).or_insert(0) += 1;
        }
    }
    edges
}

/// Every normal points away from (`sign = 1`) or towards (`sign = -1`) the
/// centre.
fn assert_normals(m: &MeshData, centre: [f64; 3], sign: f64) {
    for &t in &m.triangles {
        let out = sub(m.vertices[t[0] as usize], centre);
        assert!(sign * dot(normal(m, t), out) > 0.0, "triangle {t:?}");
    }
}

#[test]
fn box_wall_triangles_normals_and_edges() {
    let dir = TempDir::new("box");
    for divisions in [1usize, 2, 4] {
        let wall = one_wall(
            &dir,
            &format!(
                "kind = \"box\"\nmin = [-0.5, 0, 1]\nmax = [0.5, 2, 4]\ndivisions = {divisions}\n"
            ),
        );
        let m = &wall.mesh;
        assert_eq!(m.triangles.len(), 12 * divisions * divisions);
        // Inward: every normal points at the box centre.
        assert_normals(m, [0.0, 1.0, 2.5], -1.0);
        assert!(
            edge_uses(m).values().all(|&n| n == 2),
            "closed box must be watertight"
        );
        assert_eq!(wall.group, "wall");
        assert_eq!(wall.resolution, Resolution::Reduced);
        assert_eq!(wall.cutoff_angle_deg, 10.0);
        assert!(wall.motion.is_none());
    }

    let wall = one_wall(
        &dir,
        "kind = \"box\"\nmin = [0, 0, 0]\nmax = [1, 1, 1]\ndivisions = 3\nopen = [\"+z\", \"-x\"]\n",
    );
    assert_eq!(wall.mesh.triangles.len(), 12 * 9 - 2 * 2 * 9);
    assert_normals(&wall.mesh, [0.5; 3], -1.0);
    assert!(wall
        .mesh
        .vertices
        .iter()
        .all(|v| v.iter().all(|c| (0.0..=1.0).contains(c))));
}

#[test]
fn wall_options_and_motion() {
    let dir = TempDir::new("wall-options");
    let wall = one_wall(
        &dir,
        "kind = \"box\"\ngroup = \"lid\"\nmin = [0, 0, 0]\nmax = [1, 1, 1]\nresolution = \"full\"\n\
         cutoff_angle = 30\n[walls.motion]\nvelocity = [0, 0, -0.1]\nspin = [0, 0, 1]\n",
    );
    assert_eq!(wall.group, "lid");
    assert_eq!(wall.resolution, Resolution::Full);
    assert_eq!(wall.cutoff_angle_deg, 30.0);
    let motion = wall.motion.unwrap();
    assert_eq!(motion.velocity.to_array(), [0.0, 0.0, -0.1]);
    assert_eq!(motion.spin.to_array(), [0.0, 0.0, 1.0]);
    assert_eq!(wall.centre, None);
    assert_eq!(wall.mesh.centroid(), [0.5; 3]);
}

fn check_unit_cube(wall: &WallSource, scale: f64, shift: [f64; 3]) {
    let m = &wall.mesh;
    assert_eq!(m.vertices.len(), 8, "welded vertex count");
    assert_eq!(m.triangles.len(), 12);
    assert!(edge_uses(m).values().all(|&n| n == 2));
    let centre = [
        0.5 * scale + shift[0],
        0.5 * scale + shift[1],
        0.5 * scale + shift[2],
    ];
    assert_normals(m, centre, 1.0);
    for v in &m.vertices {
        for axis in 0..3 {
            let local = (v[axis] - shift[axis]) / scale;
            assert!(local.abs() < 1e-12 || (local - 1.0).abs() < 1e-12, "{v:?}");
        }
    }
}

#[test]
fn stl_ascii_round_trip() {
    let dir = TempDir::new("stl-ascii");
    dir.write("meshes/cube.stl", ascii_stl(&cube_triangles()));
    let wall = one_wall(&dir, "kind = \"mesh\"\npath = \"meshes/cube.stl\"\n");
    check_unit_cube(&wall, 1.0, [0.0; 3]);
}

#[test]
fn stl_binary_round_trip_with_solid_header() {
    let dir = TempDir::new("stl-binary");
    dir.write("cube.stl", binary_stl(&cube_triangles()));
    let wall = one_wall(
        &dir,
        "kind = \"mesh\"\npath = \"cube.stl\"\nscale = 2.0\ntranslate = [1, 2, 3]\n",
    );
    check_unit_cube(&wall, 2.0, [1.0, 2.0, 3.0]);
}

/// A tetrahedron with coordinates that single precision does not hold.
const FINE: [[f64; 3]; 4] = [
    [0.0, 0.0, 1e-3],
    [0.1, 0.0, 1e-3],
    [0.0, 0.123456789012345, 1e-3],
    [0.0, 0.0, 0.3000000000000001],
];
/// Its faces, outward.
const FINE_FACES: [[usize; 3]; 4] = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]];

fn fine_stl() -> String {
    let mut s = String::from("solid fine\n");
    for f in FINE_FACES {
        s.push_str("facet normal 0 0 0\nouter loop\n");
        for v in f {
            let [x, y, z] = FINE[v];
            s.push_str(&format!("vertex {x:e} {y:e} {z:e}\n"));
        }
        s.push_str("endloop\nendfacet\n");
    }
    s + "endsolid fine\n"
}

#[test]
fn ascii_stl_walls_and_shapes_keep_every_digit() {
    let dir = TempDir::new("stl-digits");
    dir.write("fine.stl", fine_stl());
    let wall = one_wall(&dir, "kind = \"mesh\"\npath = \"fine.stl\"\n");
    let mut got = wall.mesh.vertices.clone();
    got.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mut want = FINE.to_vec();
    want.sort_by(|a, b| a.partial_cmp(b).unwrap());
    // Bit for bit: through f32, 1e-3 would come back as 1.0000000474974513e-3.
    assert_eq!(got, want);

    // A shape from the STL equals the shape from an OBJ of the same digits.
    let mut obj = String::from("o fine\n");
    for [x, y, z] in FINE {
        obj.push_str(&format!("v {x:e} {y:e} {z:e}\n"));
    }
    for f in FINE_FACES {
        obj.push_str(&format!("f {} {} {}\n", f[0] + 1, f[1] + 1, f[2] + 1));
    }
    dir.write("fine.obj", obj);
    let shape = |file: &str| {
        let text = format!("{RUN}[[shapes]]\nname = \"s\"\nkind = \"mesh\"\npath = \"{file}\"\n");
        let cfg = talus_config::parse_str(&text, &dir.path().join("x.toml")).unwrap();
        cfg.shapes.into_iter().next().unwrap().shape
    };
    let (from_stl, from_obj) = (shape("fine.stl"), shape("fine.obj"));
    assert_eq!(from_stl.polyhedron, from_obj.polyhedron);
    assert_eq!(from_stl.input_centroid, from_obj.input_centroid);
    assert_eq!(from_stl.volume, from_obj.volume);
}

#[test]
fn obj_round_trip_and_flip() {
    let dir = TempDir::new("obj");
    dir.write("cube.obj", cube_obj());
    let wall = one_wall(&dir, "kind = \"mesh\"\npath = \"cube.obj\"\n");
    check_unit_cube(&wall, 1.0, [0.0; 3]);

    let flipped = one_wall(
        &dir,
        "kind = \"mesh\"\npath = \"cube.obj\"\nflip_normals = true\n",
    );
    assert_normals(&flipped.mesh, [0.5; 3], -1.0);
}

#[test]
fn xyz_peer_header_gives_radius_and_density() {
    let dir = TempDir::new("xyz");
    dir.write(
        "data/lat3.xyz",
        "# Lx 5.25e-02 Ly 4.2e-02 Lz 6.2e-02 R 1.000000e-03 rho 2500.0 N 3\n\
         1.0e-03 1.0e-03 1.0e-03\n\
         3.0e-03 1.0e-03 1.0e-03\n\
         5.0e-03 1.0e-03 1.0e-03\n",
    );
    let text =
        format!("{RUN}[[balls]]\nkind = \"file\"\ngroup = \"grain\"\npath = \"data/lat3.xyz\"\n");
    let cfg = talus_config::parse_str(&text, &dir.path().join("x.toml")).unwrap();
    let src = &cfg.balls[0];
    assert_eq!(src.density, 2500.0);
    assert_eq!(src.group, "grain");
    let BallKind::Explicit(rows) = &src.kind else {
        panic!("file balls become explicit rows");
    };
    assert_eq!(rows.len(), 3);
    assert!(rows
        .iter()
        .all(|r| r.radius == 1e-3 && r.velocity.is_none()));
    assert_eq!(rows[1].pos, [3.0e-3, 1.0e-3, 1.0e-3]);

    // The radius key overrides the header; a row's own radius wins over both.
    dir.write("data/mixed.xyz", "# R 1e-3 rho 2500\n0 0 0\n1 1 1 4e-3\n");
    let text = format!(
        "{RUN}[[balls]]\nkind = \"file\"\npath = \"data/mixed.xyz\"\nradius = 2e-3\ndensity = 1000.0\n"
    );
    let cfg = talus_config::parse_str(&text, &dir.path().join("x.toml")).unwrap();
    assert_eq!(cfg.balls[0].density, 1000.0);
    let BallKind::Explicit(rows) = &cfg.balls[0].kind else {
        panic!()
    };
    assert_eq!(rows[0].radius, 2e-3);
    assert_eq!(rows[1].radius, 4e-3);
}

#[test]
fn csv_positions_with_velocity() {
    let dir = TempDir::new("csv");
    dir.write(
        "p.csv",
        "x,y,z,radius,vx,vy,vz\n0,0,0,0.5,1,0,0\n2,0,0,0.25,0,0,0\n",
    );
    let text = format!("{RUN}[[balls]]\nkind = \"file\"\ndensity = 7800.0\npath = \"p.csv\"\n");
    let cfg = talus_config::parse_str(&text, &dir.path().join("x.toml")).unwrap();
    let BallKind::Explicit(rows) = &cfg.balls[0].kind else {
        panic!()
    };
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].radius, 0.5);
    assert_eq!(rows[0].velocity, Some([1.0, 0.0, 0.0]));
    assert_eq!(rows[1].pos, [2.0, 0.0, 0.0]);

    // An explicit format beats the extension.
    dir.write("p.txt", "x,y,z\n1,2,3\n");
    let text = format!(
        "{RUN}[[balls]]\nkind = \"file\"\ndensity = 1.0\nradius = 0.1\npath = \"p.txt\"\nformat = \"csv\"\n"
    );
    let cfg = talus_config::parse_str(&text, &dir.path().join("x.toml")).unwrap();
    let BallKind::Explicit(rows) = &cfg.balls[0].kind else {
        panic!()
    };
    assert_eq!(rows[0].pos, [1.0, 2.0, 3.0]);
    assert_eq!(rows[0].radius, 0.1);
}

#[test]
fn plugins_resolve_against_the_config_folder() {
    let dir = TempDir::new("plugins");
    dir.write("configs/plugins/libmine.so", "");
    std::fs::create_dir_all(dir.path().join("configs/more")).unwrap();
    let text =
        format!("{RUN}[[plugins]]\npath = \"plugins/libmine.so\"\n[[plugins]]\npath = \"more\"\n");
    let origin = dir.path().join("configs/run.toml");
    let cfg = talus_config::parse_str(&text, &origin).unwrap();
    assert_eq!(cfg.plugins.len(), 2);
    assert_eq!(
        cfg.plugins[0].path,
        dir.path().join("configs/plugins/libmine.so")
    );
    assert_eq!(cfg.plugins[0].written, "plugins/libmine.so");
    assert_eq!(cfg.plugins[1].path, dir.path().join("configs/more"));
    assert_eq!(cfg.plugins[0].location.line, 4);
}

#[test]
fn load_reads_the_file_and_keeps_its_text() {
    let dir = TempDir::new("load");
    let text = format!("{RUN}[[balls]]\nkind = \"random\"\ncount = 100\nradius = [0.001, 0.002]\ndensity = 2500.0\nregion = {{ min = [0, 0, 0], max = [0.1, 0.1, 0.1] }}\n");
    let path = dir.write("settle.toml", &text);
    let cfg = talus_config::load(&path).unwrap();
    assert_eq!(cfg.text, text);
    assert_eq!(cfg.source, path);
    assert_eq!(cfg.output.dir, std::path::Path::new("out/settle"));
    let BallKind::Random {
        radius,
        seed,
        max_attempts,
        count,
        ..
    } = cfg.balls[0].kind
    else {
        panic!()
    };
    assert_eq!(radius, RadiusDist::Uniform(0.001, 0.002));
    assert_eq!((count, seed, max_attempts), (100, 1, 1000));
}

#[test]
fn documented_example_is_valid() {
    let doc = include_str!("../../../docs/config.md");
    let start = doc
        .rfind("```toml\n[run]")
        .expect("complete example in docs/config.md")
        + "```toml\n".len();
    let example = &doc[start..start + doc[start..].find("```").unwrap()];
    let dir = TempDir::new("doc-example");
    dir.write(
        "configs/data/lat10k.xyz",
        "# Lx 5.25e-02 Ly 4.2e-02 Lz 6.2e-02 R 1.000000e-03 rho 2500.0 N 2\n1e-3 1e-3 1e-3\n3e-3 1e-3 1e-3\n",
    );
    dir.write("configs/meshes/paddle.obj", cube_obj());
    let cfg = talus_config::parse_str(example, &dir.path().join("configs/settle.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cfg.balls[0].density, 2500.0);
    assert_eq!(cfg.walls.len(), 2);
    assert_eq!(cfg.walls[0].mesh.triangles.len(), 5 * 2 * 16);
    assert_eq!(cfg.walls[1].mesh.vertices.len(), 8);
    let rule = cfg.model_for("grain", "wall").unwrap();
    let fric = rule.properties.iter().find(|p| p.0 == "fric").unwrap();
    assert_eq!(fric.1, 0.3);
    assert_eq!(cfg.output.dir, std::path::Path::new("out/settle"));
}
