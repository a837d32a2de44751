//! Blocks from the config to the Parquet dataset and back: the shapes and
//! poses a run writes rebuild, in Python, the block vertices the engine
//! holds, and the config's placement conventions hold.
//!
//! The Python side is the `block_vertices` example of `docs/output.md`,
//! run as written there: it rotates the recorded shape vertices by the
//! recorded quaternions with numpy. The Rust side poses the engine's own
//! shapes with the geometry kernel (`ConvexPolyhedron::transformed`) at the
//! same step of the same run (runs are deterministic), and states by hand
//! where the config puts the blocks at step 0.

use std::path::Path;
use std::process::Command;

use serde_json::json;
use talus_core::math::{Quat, Vec3};
use talus_core::snapshot::BodyKind;
use talus_core::Simulation;
use talus_host::fixtures::workspace_root;

/// 45 degrees about z.
const TURN: [f64; 4] = [0.923_879_532_511_286_7, 0.0, 0.0, 0.382_683_432_365_089_8];

/// A wedge given by its corners (a triangular prism), with no `pos`: it
/// stays where its corners are written.
const WEDGE: [[f64; 3]; 6] = [
    [2.0, 0.0, 0.0],
    [2.3, 0.0, 0.0],
    [2.0, 0.2, 0.0],
    [2.0, 0.0, 0.5],
    [2.3, 0.0, 0.5],
    [2.0, 0.2, 0.5],
];

const STEPS: u64 = 40;

/// The brick, turned by [`TURN`] about its centre (0, 0, 1), spinning.
const BRICK_ROW: &str =
    "[[blocks]]\nkind = \"list\"\ndensity = 2000.0\nblocks = [{ shape = \"brick\", \
    pos = [0.0, 0.0, 1.0], orientation = [@q], spin = [10.0, 20.0, 30.0] }]\n";
/// The wedge, where its corners are written.
const WEDGE_ROW: &str = "[[blocks]]\nkind = \"list\"\ndensity = 2000.0\n\
    blocks = [{ shape = \"wedge\", spin = [0.0, -4.0, 1.0] }]\n";
/// A random fill of stones and bricks, uniformly random orientations.
const FILL: &str = "[[blocks]]\nkind = \"random\"\nshapes = [\"stone\", \"brick\"]\ncount = 5\n\
    density = 2500.0\nvelocity = [1.0, 0.0, 0.0]\nspin = [0.0, 0.0, 5.0]\n\
    region = { min = [1.0, 1.0, 0.0], max = [3.0, 3.0, 2.0] }\n";

/// The run config: the shapes, then `blocks` (tables of [[blocks]]).
fn config(blocks: &str) -> String {
    let wedge: Vec<String> = WEDGE
        .iter()
        .map(|p| format!("[{}, {}, {}]", p[0], p[1], p[2]))
        .collect();
    let [w, x, y, z] = TURN;
    format!(
        r#"
[run]
steps = {STEPS}
dt = 1e-3
gravity = [0.0, 0.0, -9.81]
seed = 5

[[models]]
model = "linear"
groups = ["*", "*"]
properties = {{ kn = 1e5, ks = 1e5 }}

[[shapes]]
name = "brick"
kind = "box"
size = [0.1, 0.2, 0.4]

[[shapes]]
name = "stone"
kind = "random"
vertices = [8, 12]
axes = [0.1, 0.08, 0.05]
roughness = 0.3
seed = 2

[[shapes]]
name = "wedge"
kind = "vertices"
points = [{}]

{}
[output]
contacts = 0
bodies = 20
walls = 0
"#,
        wedge.join(", "),
        blocks.replace("@q", &format!("{w}, {x}, {y}, {z}"))
    )
}

/// Every block's vertices in the world, by block id, as the engine poses
/// its shapes.
fn engine_vertices(sim: &mut Simulation) -> serde_json::Value {
    let snap = sim.snapshot();
    let mut blocks = serde_json::Map::new();
    for b in snap.bodies().filter(|b| b.kind == BodyKind::Block) {
        let shape = &snap.shapes()[b.shape.unwrap() as usize];
        let posed = shape.polyhedron.transformed(b.orientation, b.pos);
        let v: Vec<[f64; 3]> = posed.vertices().iter().map(|p| p.to_array()).collect();
        blocks.insert(b.id.to_string(), json!(v));
    }
    json!({ "step": snap.step(), "blocks": blocks })
}

/// The `block_vertices` example of docs/output.md.
fn docs_example() -> String {
    let doc = std::fs::read_to_string(workspace_root().join("docs/output.md")).unwrap();
    let start = doc
        .find("```python\nimport numpy as np\nimport polars as pl\n\n\ndef block_vertices")
        .expect("docs/output.md has the block_vertices example");
    let code = &doc[start + "```python\n".len()..];
    let end = code.find("\nfaces = ").expect("the example's usage lines");
    code[..end].to_string()
}

const CHECK: &str = r#"
import json
import sys

out, reference = sys.argv[1], sys.argv[2]
ref = json.load(open(reference))
worst = 0.0
n = 0
# At the last recorded step: the engine's own vertices, vertex by vertex.
got = block_vertices(out, ref["last"]["step"])
for bid, verts in ref["last"]["blocks"].items():
    rows = got.filter(pl.col("id") == int(bid)).sort("vertex")
    p = rows.select("x", "y", "z").to_numpy()
    e = np.array(verts)
    assert p.shape == e.shape, (bid, p.shape, e.shape)
    worst = max(worst, float(np.abs(p - e).max()))
    n += len(e)
assert worst <= 1e-12, f"rebuilt vertices differ from the engine's by {worst}"
# At step 0: where the config says the listed blocks are (as sets of corners).
start = block_vertices(out, 0)
for bid, corners in ref["start"].items():
    p = start.filter(pl.col("id") == int(bid)).select("x", "y", "z").to_numpy()
    e = np.array(corners)
    assert p.shape == e.shape, (bid, p.shape, e.shape)
    gap = max(float(np.min(np.linalg.norm(p - c, axis=1))) for c in e)
    assert gap <= 1e-12, f"block {bid} at step 0 is {gap} m off the config's corners"
# Faces: counter-clockwise from outside in the principal frame.
verts = pl.read_parquet(f"{out}/shape_vertices/*.parquet")
faces = pl.read_parquet(f"{out}/shape_faces/*.parquet")
for (shape,), f in faces.group_by("shape"):
    v = verts.filter(pl.col("shape") == shape).sort("vertex").select("x", "y", "z").to_numpy()
    t = f.select("v0", "v1", "v2").to_numpy()
    a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
    normal = np.cross(b - a, c - a)
    assert (np.einsum("ij,ij->i", normal, (a + b + c) / 3.0) > 0).all(), shape
    # Closed surface: the divergence theorem gives the volume, > 0.
    assert np.einsum("ij,ij->i", a, np.cross(b, c)).sum() > 0


def qmul(p, q):
    w1, x1, y1, z1 = p
    w2, x2, y2, z2 = q
    return np.array([
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
    ])


# Poses back into a config: the orientation q * conj(frame_q) turns the
# shape's written frame, the centroid is the position (the written one's
# centroid for a block listed without a position).
bodies = pl.read_parquet(f"{out}/bodies/*.parquet").filter(pl.col("step") == 0)
for bid, (pos, q_cfg) in ref["poses"].items():
    b = bodies.filter(pl.col("id") == int(bid)).row(0, named=True)
    s = verts.filter(pl.col("shape") == b["shape"]).row(0, named=True)
    q = np.array([b["qw"], b["qx"], b["qy"], b["qz"]])
    back = np.array([s["frame_qw"], -s["frame_qx"], -s["frame_qy"], -s["frame_qz"]])
    got, e = qmul(q, back), np.array(q_cfg)
    err = min(np.abs(got - e).max(), np.abs(got + e).max())
    assert err <= 1e-12, f"block {bid}: orientation {got} vs the config's {e}"
    if pos is None:
        pos = [s["frame_x"], s["frame_y"], s["frame_z"]]
    off = np.abs(np.array([b["x"], b["y"], b["z"]]) - np.array(pos)).max()
    assert off <= 1e-12, f"block {bid}: position off by {off}"
print(f"ok: {n} vertices within {worst:.1e} m")
"#;

/// Runs `blocks`, rebuilds its blocks in Python from the dataset and
/// checks them against the engine at the last step and against `start`
/// (block id -> corners the config asks for) at step 0, and the poses a
/// config would give them back against `poses` (block id -> position,
/// or null for a block listed without one, and orientation `[w, x, y, z]`).
fn rebuild_case(case: &str, blocks: &str, start: serde_json::Value, poses: serde_json::Value) {
    let tmp = tempfile::tempdir().unwrap();
    let cfg_path = tmp.path().join(format!("{case}.toml"));
    std::fs::write(&cfg_path, config(blocks)).unwrap();
    let out = tmp.path().join("out");
    let opts = talus_cli::RunOptions {
        out: Some(out.clone()),
        quiet: true,
        ..Default::default()
    };
    let summary = talus_cli::run(&cfg_path, &opts).unwrap();
    assert_eq!(summary.steps, STEPS, "{case}");
    assert_eq!(summary.output.shape_vertices.parts.len(), 1, "{case}");

    // The same run again, in process, to the same step.
    let (cfg, reg) = talus_cli::load(&cfg_path).unwrap();
    let mut sim = talus_cli::scene::build(&cfg, &reg).unwrap();
    sim.prepare().unwrap();
    let q0 = sim.blocks().orientation[0];
    for _ in 0..STEPS {
        sim.cycle().unwrap();
    }
    assert!(
        sim.blocks().orientation[0].dot(q0).abs() < 0.9999,
        "{case}: the block turns"
    );
    let reference = json!({ "last": engine_vertices(&mut sim), "start": start, "poses": poses });
    let ref_path = tmp.path().join("reference.json");
    std::fs::write(&ref_path, reference.to_string()).unwrap();

    let script = tmp.path().join("check.py");
    std::fs::write(&script, docs_example() + CHECK).unwrap();
    let o = Command::new("python3")
        .arg(&script)
        .arg(&out)
        .arg(&ref_path)
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "{case}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    eprintln!("{case}: {}", String::from_utf8_lossy(&o.stdout).trim());

    let check = Command::new("python3")
        .arg(workspace_root().join("tools/py/check_dataset.py"))
        .arg(&out)
        .output()
        .expect("python3 runs");
    assert!(
        check.status.success(),
        "{case}: {}",
        String::from_utf8_lossy(&check.stdout)
    );
}

// The engine runs one block at a time until block-block contacts land,
// so each case is a run of its own.

#[test]
fn recorded_pose_rebuilds_a_turned_spinning_brick() {
    // Step 0, by hand: the brick's corners turned by 45 degrees about z
    // around its given centre.
    let turn = Quat::from_xyzw(TURN[1], TURN[2], TURN[3], TURN[0]);
    let mut brick = Vec::new();
    for i in 0..8 {
        let s = |k: usize| if i >> k & 1 == 0 { -0.5 } else { 0.5 };
        let corner = Vec3::new(0.1 * s(0), 0.2 * s(1), 0.4 * s(2));
        brick.push((turn * corner + Vec3::new(0.0, 0.0, 1.0)).to_array());
    }
    let poses = json!({ "1": [[0.0, 0.0, 1.0], TURN] });
    rebuild_case("brick", BRICK_ROW, json!({ "1": brick }), poses);
}

#[test]
fn recorded_pose_rebuilds_a_block_given_by_its_corners() {
    // Step 0: the wedge's corners as written (no pos, no orientation).
    let poses = json!({ "1": [null, [1.0, 0.0, 0.0, 0.0]] });
    rebuild_case("wedge", WEDGE_ROW, json!({ "1": WEDGE }), poses);
}

#[test]
fn recorded_pose_rebuilds_a_randomly_oriented_block() {
    rebuild_case(
        "fill",
        &FILL.replace("count = 5", "count = 1"),
        json!({}),
        json!({}),
    );
}

#[test]
fn random_fill_that_cannot_fit_is_reported_at_its_table() {
    let tmp = tempfile::tempdir().unwrap();
    // Fewer than the densest packing would hold (the config refuses more),
    // more than random placement can reach.
    let text = config(&format!("{BRICK_ROW}{FILL}")).replace("count = 5", "count = 1500");
    let path = tmp.path().join("full.toml");
    std::fs::write(&path, &text).unwrap();
    let e = talus_cli::check(&path).map(|_| ()).unwrap_err().to_string();
    let table = text.find("[[blocks]]\nkind = \"random\"").unwrap();
    let line = text[..table].matches('\n').count() + 1;
    let at = format!(
        "{}:{line}:1: [[blocks]] #2: cannot fit 1500 blocks",
        path.display()
    );
    assert!(e.starts_with(&at), "{e}");
    assert!(e.contains("attempts"), "{e}");
}

#[test]
fn blocks_example_builds_what_it_says() {
    // configs/blocks.toml runs shortened with every example (e2e.rs);
    // what it builds is checked here.
    let (cfg, reg) = talus_cli::load(&workspace_root().join("configs/blocks.toml")).unwrap();
    let sim = talus_cli::scene::populate(&cfg, &reg).unwrap();
    assert_eq!(
        (
            sim.n_blocks(),
            sim.shapes().len(),
            sim.walls().len(),
            sim.n_balls()
        ),
        (300, 3, 1, 0)
    );
    let blocks = sim.blocks();
    let shapes = sim.shapes();
    let count = |k: u32| blocks.shape.iter().filter(|&&s| s == k).count();
    // Weights 1 : 1 : 2.
    assert!((50..100).contains(&count(0)) && (50..100).contains(&count(1)));
    assert!((120..180).contains(&count(2)), "{} stones", count(2));
    for i in 0..blocks.len() {
        let r = shapes[blocks.shape[i] as usize].radius;
        for j in 0..i {
            let rj = shapes[blocks.shape[j] as usize].radius;
            assert!((blocks.pos[i] - blocks.pos[j]).length() >= r + rj);
        }
    }
}

#[test]
fn blocks_keep_clear_of_balls_placed_before_them() {
    let tmp = tempfile::tempdir().unwrap();
    let balls = "[[balls]]\nkind = \"random\"\ncount = 100\nradius = 0.05\ndensity = 1.0\n\
                 region = { min = [1.0, 1.0, 0.0], max = [3.0, 3.0, 2.0] }\n";
    let text = config(&format!("{BRICK_ROW}{WEDGE_ROW}{FILL}"))
        .replace("count = 5\n", "count = 20\n")
        + balls;
    let path = tmp.path().join("mixed.toml");
    std::fs::write(&path, text).unwrap();
    // What the config builds, before the engine's checks.
    let (cfg, reg) = talus_cli::load(Path::new(&path)).unwrap();
    let sim = talus_cli::scene::populate(&cfg, &reg).unwrap();
    let (balls, blocks) = (sim.balls(), sim.blocks());
    let shapes = sim.shapes();
    // The 20 random blocks come after the two listed ones.
    assert_eq!(blocks.len(), 22);
    for k in 2..blocks.len() {
        let r = shapes[blocks.shape[k] as usize].radius;
        for i in 0..balls.len() {
            let d = (blocks.pos[k] - balls.pos[i]).length();
            assert!(
                d >= r + balls.radius[i],
                "block {} overlaps ball {}",
                k + 1,
                i + 1
            );
        }
    }
}

#[test]
fn slope_example_shows_the_three_fates() {
    // configs/slope.toml run whole: the cube held by friction stays within
    // the millimetres it slips while landing, the low-friction cube slides
    // metres, the tall column turns over.
    let (cfg, reg) = talus_cli::load(&workspace_root().join("configs/slope.toml")).unwrap();
    let mut sim = talus_cli::scene::build(&cfg, &reg).unwrap();
    let start: Vec<_> = sim.blocks().pos.to_vec();
    let q0: Vec<_> = sim.blocks().orientation.to_vec();
    while sim.time < 3.0 {
        sim.cycle().unwrap();
    }
    let k = sim.blocks();
    let moved: Vec<f64> = (0..3).map(|i| (k.pos[i] - start[i]).length()).collect();
    let turned = |i: usize| (k.orientation[i] * q0[i].conjugate()).to_axis_angle().1;
    assert!(moved[0] < 0.01 && turned(0) < 1e-3, "held: {moved:?}");
    assert!(moved[1] > 5.0 && turned(1) < 1e-2, "slider: {moved:?}");
    assert!(turned(2) > 1.0, "tower turned {}", turned(2));
}
