//! Shapes of plugins from the config to the engine: superellipsoids of the
//! out-of-tree `superquadric` plugin, loaded from disk as a third party's,
//! placed by `[[shapes]] kind = "plugin"` and `[[blocks]]`. A sphere of it
//! rests where a ball of its radius rests; a cube-like one carries its
//! weight; the config's mistakes are named where they are written.

use std::path::{Path, PathBuf};

use talus_host::fixtures::{build_fixture, build_plugin_cdylib};

fn write_config(dir: &Path, shape: &str, body: &str) -> PathBuf {
    let lib = build_plugin_cdylib("talus-plugin-superquadric");
    let text = format!(
        r#"[run]
steps = 10
dt = "auto"
gravity = [0.0, 0.0, -9.81]

[[plugins]]
path = "{lib}"

[[walls]]
name = "floor"
kind = "box"
min = [-0.1, -0.1, 0.0]
max = [0.1, 0.1, 0.1]
open = ["+z"]
group = "walls"

[[shapes]]
name = "grain"
kind = "plugin"
shape = "superellipsoid"
{shape}

{body}

[[models]]
model = "linear"
groups = ["*", "*"]
properties = {{ kn = 1e5, ks = 5e4, fric = 0.5 }}
"#,
        lib = lib.display()
    );
    let path = dir.join("run.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("talus-sq-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Settles the config's bodies under local damping; returns the
/// simulation.
fn settle(path: &Path, steps: usize) -> talus_core::Simulation {
    let (cfg, reg) = talus_cli::load(path).unwrap();
    let mut sim = talus_cli::scene::build(&cfg, &reg).unwrap();
    for _ in 0..steps {
        sim.cycle().unwrap();
    }
    sim
}

/// The message of a config the engine cannot be built from.
fn build_error(path: &Path) -> String {
    let (cfg, reg) = talus_cli::load(path).unwrap();
    match talus_cli::scene::build(&cfg, &reg) {
        Ok(_) => panic!("the config was accepted"),
        Err(e) => e.to_string(),
    }
}

const ONE_BODY: &str = r#"[[blocks]]
kind = "list"
shape = "grain"
density = 2500.0
damping = 0.7
blocks = [{ pos = [0.003, -0.002, 0.012] }]
"#;

const ONE_BALL: &str = r#"[[balls]]
kind = "list"
density = 2500.0
damping = 0.7
radius = 0.01
balls = [{ pos = [0.003, -0.002, 0.012] }]
"#;

#[test]
fn a_sphere_of_the_plugin_rests_where_the_ball_of_its_radius_rests() {
    let dir = temp("sphere");
    let sphere = "properties = { a = 0.01, b = 0.01, c = 0.01, n1 = 2.0, n2 = 2.0 }";
    let body = settle(&write_config(&dir, sphere, ONE_BODY), 20_000);
    let ball = settle(&write_config(&dir, sphere, ONE_BALL), 20_000);
    let (zb, zs) = (ball.balls().pos[0].z, body.blocks().pos[0].z);
    // The same mass on the same stiffness: the same overlap.
    let mass = (body.blocks().mass[0], ball.balls().mass[0]);
    assert!((mass.0 - mass.1).abs() < 1e-9 * mass.1, "{mass:?}");
    assert!(
        (zb - zs).abs() < 1e-9 * 0.01,
        "ball at {zb}, sphere at {zs}"
    );
    let weight = mass.0 * 9.81;
    let floor = body.walls()[0].force.z;
    assert!(
        ((floor + weight) / weight).abs() < 1e-9,
        "{floor} vs {weight}"
    );
}

#[test]
fn a_cube_like_superellipsoid_carries_its_weight() {
    // Exponents 10: nearly flat faces. One contact point carries a body
    // on a face (the deepest point), and near a flat face that point
    // moves with the tilt as its ninth root, so the body keeps rocking by
    // a little that local damping does not take out: the floor carries
    // the weight on average over the rocking, the body sits flat.
    let dir = temp("cube");
    let cube = "properties = { a = 0.01, b = 0.008, c = 0.006, n1 = 10.0, n2 = 10.0 }";
    let mut sim = settle(&write_config(&dir, cube, ONE_BODY), 20_000);
    let weight = sim.blocks().mass[0] * 9.81;
    let (mut mean, n) = (0.0, 5000);
    for _ in 0..n {
        sim.cycle().unwrap();
        mean += sim.walls()[0].force.z / n as f64;
    }
    assert!(
        ((mean + weight) / weight).abs() < 1e-3,
        "{mean} vs {weight}"
    );
    // Flat on its smallest half-size: the body's frame is its principal
    // one, its height the half-size c less the overlap.
    let z = sim.blocks().pos[0].z;
    assert!((z - 0.006).abs() < 2e-3 * 0.006, "{z}");
    // Its shortest axis (the principal axis of the largest moment, z)
    // stays upright.
    let up = sim.blocks().orientation[0] * talus_core::Vec3::Z;
    assert!(up.z > 1.0 - 1e-6, "the short axis points along {up}");
}

#[test]
fn mistakes_in_a_plugin_shape_are_named_where_they_are_written() {
    let dir = temp("errors");
    for (shape, expected) in [
        (
            "properties = { a = 0.01, b = 0.01, c = 0.01, n1 = 2.0, n3 = 2.0 }",
            "shape \"superellipsoid\" has no property \"n3\"",
        ),
        (
            "properties = { a = 0.01, b = 0.01, c = 0.01, n1 = 12.0 }",
            "outside its range",
        ),
        (
            "properties = { b = 0.01, c = 0.01 }",
            "requires property \"a\"",
        ),
    ] {
        let path = write_config(&dir, shape, ONE_BODY);
        let e = build_error(&path);
        assert!(e.contains(expected), "{e}");
        assert!(
            e.contains("run.toml:") && e.contains("shape 'grain'"),
            "{e}"
        );
    }
    let path = write_config(&dir, "properties = {}", ONE_BODY);
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("shape = \"superellipsoid\"", "shape = \"superellipse\"");
    std::fs::write(&path, text).unwrap();
    let e = build_error(&path);
    assert!(
        e.contains("unknown shape kind \"superellipse\"") && e.contains("superellipsoid"),
        "{e}"
    );
}

#[test]
fn a_lattice_of_plugin_shapes_needs_a_spacing_that_fits_them() {
    // The config reads a plugin shape before its plugin loads, so only
    // the run can size the lattice: one without a spacing is refused,
    // naming the least that fits.
    let dir = temp("lattice");
    let sphere = "properties = { a = 0.01, b = 0.01, c = 0.01 }";
    let lattice = |spacing: &str| {
        format!(
            "[[blocks]]\nkind = \"lattice\"\nshape = \"grain\"\ndensity = 2500.0\n\
             counts = [2, 2, 1]\n{spacing}region = {{ min = [-0.05, -0.05, 0.02], max = [0.05, 0.05, 0.08] }}\n"
        )
    };
    let e = build_error(&write_config(&dir, sphere, &lattice("")));
    assert!(
        e.contains("give 'spacing' of at least 2e-2 m") || e.contains("is below 2e-2 m"),
        "{e}"
    );
    let (cfg, reg) =
        talus_cli::load(&write_config(&dir, sphere, &lattice("spacing = 0.025\n"))).unwrap();
    let sim = talus_cli::scene::build(&cfg, &reg)
        .map_err(|e| e.to_string())
        .unwrap();
    assert_eq!(sim.n_blocks(), 4);
}

#[test]
fn a_shape_plugin_that_panics_is_named_with_its_message() {
    // The fixture's support function panics for directions towards -x:
    // making the shape asks for its outline in every direction, so the
    // run is refused before step 1, naming the shape and the panic.
    let dir = temp("panic");
    let lib = build_fixture("shape_panicking");
    let path = write_config(&dir, "properties = { r = 0.01 }", ONE_BODY);
    let text = std::fs::read_to_string(&path).unwrap();
    let ours = text.lines().find(|l| l.starts_with("path = ")).unwrap();
    let text = text
        .replace(ours, &format!("path = \"{}\"", lib.display()))
        .replace("shape = \"superellipsoid\"", "shape = \"test_panic_ball\"");
    std::fs::write(&path, text).unwrap();
    let e = build_error(&path);
    assert!(
        e.contains("shape 'grain'") && e.contains("points towards -x"),
        "{e}"
    );
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
}

/// The dataset says what each plugin shape is: its vertex rows carry the
/// kind and the property values, and the outline's vertices, turned back
/// into the shape's own frame by the frame columns, lie on the surface
/// those values give (checked in Python from the Parquet files).
#[test]
fn the_shape_table_names_a_plugin_shape_and_its_values() {
    let dir = temp("table");
    let shape = "properties = { a = 0.012, b = 0.007, c = 0.005, n1 = 4.0, n2 = 3.0 }";
    let cfg = write_config(&dir, shape, ONE_BODY);
    let out = dir.join("out");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(["run", cfg.to_str().unwrap(), "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let script = r#"
import json, sys
import numpy as np
import polars as pl
v = pl.read_parquet(f"{sys.argv[1]}/shape_vertices/*.parquet")
assert set(v["kind"]) == {"superellipsoid"}, set(v["kind"])
p = json.loads(v["properties"][0])
assert p == {"a": 0.012, "b": 0.007, "c": 0.005, "n1": 4.0, "n2": 3.0}, p
r = v.row(0, named=True)
w, x, y, z = (r[k] for k in ("frame_qw", "frame_qx", "frame_qy", "frame_qz"))
R = np.array([
    [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
    [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
    [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
])
q = v.select("x", "y", "z").to_numpy() @ R.T + np.array([r["frame_x"], r["frame_y"], r["frame_z"]])
a, b, c, n1, n2 = (p[k] for k in ("a", "b", "c", "n1", "n2"))
f = (np.abs(q[:, 0] / a) ** n2 + np.abs(q[:, 1] / b) ** n2) ** (n1 / n2) + np.abs(q[:, 2] / c) ** n1
assert v.height > 100 and np.abs(f - 1).max() < 1e-6, (v.height, np.abs(f - 1).max())
print("ok", v.height)
"#;
    let o = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(&out)
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
