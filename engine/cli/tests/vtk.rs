//! The VTK series for ParaView (`[output] vtk = N`): read back with real
//! VTK readers and compared with the Parquet tables of the same run,
//! complete after a kill, and without effect on the run; and the PNG
//! that `tools/py/render_frame.py` draws from a dataset.
//!
//! Needs `python3` with polars, numpy, vtk, pyvista and matplotlib (`.ci/run`
//! installs them); a missing package fails the test.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use talus_host::fixtures::workspace_root;

/// Balls, blocks (one turned), a static open box and a lid moving down:
/// by the end, contacts of every pair kind exist.
const SCENE: &str = r#"
[run]
steps = 800
dt = "auto"
gravity = [0.0, 0.0, -9.81]
seed = 7

[[models]]
model = "linear"
groups = ["*", "*"]
properties = { kn = 2e4, ks = 1e4, fric = 0.5, dp_nratio = 0.2 }

[[balls]]
kind = "random"
group = "grain"
count = 80
radius = [0.004, 0.006]
density = 2500.0
region = { min = [0.0, 0.0, 0.03], max = [0.1, 0.1, 0.08] }

# One ball on the second brick, one on the floor with a third on top of
# it (a ball-ball contact from the start, whatever the pour does).
[[balls]]
kind = "list"
group = "marker"
density = 2500.0
radius = 0.005
balls = [
  { pos = [0.0499, 0.05, 0.0198] },
  { pos = [0.015, 0.085, 0.0049] },
  { pos = [0.015, 0.085, 0.0148] },
]

[[shapes]]
name = "brick"
kind = "box"
size = [0.02, 0.03, 0.015]

# Two bricks side by side on the floor, touching; a third, turned, above.
[[blocks]]
kind = "list"
group = "rock"
density = 2600.0
blocks = [
  { shape = "brick", pos = [0.03, 0.05, 0.0074] },
  { shape = "brick", pos = [0.0499, 0.05, 0.0074] },
  { shape = "brick", pos = [0.08, 0.02, 0.02], orientation = [0.9238795, 0.0, 0.3826834, 0.0] },
]

[[walls]]
name = "box"
kind = "box"
group = "box"
min = [0.0, 0.0, 0.0]
max = [0.1, 0.1, 0.2]
open = ["+z"]

[[walls]]
name = "lid"
kind = "box"
group = "lid"
min = [0.01, 0.01, 0.15]
max = [0.09, 0.09, 0.16]

[walls.motion]
velocity = [0.0, 0.0, -1.0]
"#;

/// The scene with its `[output]` table.
fn scene(output: &str) -> String {
    format!("{SCENE}\n[output]\n{output}\n")
}

fn talus(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(args)
        .current_dir(workspace_root())
        .output()
        .expect("the talus binary runs")
}

/// Runs `config` (written into `dir`) to `dir/out` with `threads`.
fn run(dir: &Path, name: &str, config: &str, threads: &str) -> std::path::PathBuf {
    let cfg = dir.join(format!("{name}.toml"));
    std::fs::write(&cfg, config).unwrap();
    let out = dir.join(name);
    let o = talus(&[
        "run",
        cfg.to_str().unwrap(),
        "--quiet",
        "--threads",
        threads,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

fn python(args: &[&str]) -> Output {
    Command::new("python3")
        .args(args)
        .output()
        .expect("python3 runs")
}

fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn the_series_reads_back_with_the_values_of_the_parquet_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(
        tmp.path(),
        "scene",
        &scene("contacts = 100\nbodies = 100\nwalls = 100\nvtk = 100"),
        "2",
    );
    let script = workspace_root().join("engine/cli/tests/vtk_readback.py");
    assert_ok(&python(&[script.to_str().unwrap(), out.to_str().unwrap()]));
}

/// Clumps of two shapes dropped into a box settle onto its floor and on
/// each other.
const CLUMPS: &str = r#"
[run]
steps = 8000
dt = "auto"
gravity = [0.0, 0.0, -9.81]
seed = 3

[[models]]
model = "linear"
groups = ["*", "*"]
properties = { kn = 2e4, ks = 1e4, fric = 0.5, dp_nratio = 0.3 }

[[shapes]]
name = "peanut"
kind = "clump"
pebbles = [{ pos = [-0.004, 0.0, 0.0], radius = 0.005 }, { pos = [0.004, 0.0, 0.0], radius = 0.005 }]

[[shapes]]
name = "ell"
kind = "clump"
pebbles = [
  { pos = [0.0, 0.0, 0.0], radius = 0.005 },
  { pos = [0.007, 0.0, 0.0], radius = 0.004 },
  { pos = [0.0, 0.006, 0.001], radius = 0.004 },
]

[[clumps]]
kind = "random"
group = "grain"
shapes = ["peanut", "ell"]
count = 40
density = 2500.0
damping = 0.3
region = { min = [0.0, 0.0, 0.0], max = [0.06, 0.06, 0.16] }

[[walls]]
name = "box"
kind = "box"
group = "box"
min = [0.0, 0.0, 0.0]
max = [0.06, 0.06, 0.2]
open = ["+z"]

[output]
contacts = 1000
bodies = 1000
vtk = 1000
"#;

#[test]
fn clump_pebbles_rebuild_from_the_tables_as_the_docs_say() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(tmp.path(), "clumps", CLUMPS, "2");
    let script = workspace_root().join("engine/cli/tests/clump_readback.py");
    assert_ok(&python(&[script.to_str().unwrap(), out.to_str().unwrap()]));
}

/// The bytes of every Parquet part of the tables a run records each frame.
fn parquet_bytes(out: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all = Vec::new();
    for table in ["bodies", "contacts", "walls"] {
        let mut parts: Vec<_> = std::fs::read_dir(out.join(table))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        parts.sort();
        for p in parts {
            let name = format!("{table}/{}", p.file_name().unwrap().to_string_lossy());
            all.push((name, std::fs::read(&p).unwrap()));
        }
    }
    all
}

#[test]
fn writing_vtk_frames_does_not_change_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let tables = "contacts = 50\nbodies = 50\nwalls = 50";
    let without = run(tmp.path(), "without", &scene(tables), "2");
    assert!(!without.join("vtk").exists());
    let reference = parquet_bytes(&without);
    assert!(reference.len() >= 3);
    // A frame every step, with 1 and 2 threads: the same bits.
    for threads in ["1", "2"] {
        let name = format!("every_step_{threads}");
        let with = run(
            tmp.path(),
            &name,
            &scene(&format!("{tables}\nvtk = 1")),
            threads,
        );
        assert!(with.join("vtk/walls-0000000800.vtp").exists());
        assert!(parquet_bytes(&with) == reference, "{threads} threads");
    }
}

/// The files the index of `dir` lists, after checking that the index is a
/// complete collection.
fn listed(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("run.pvd")).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(doc.root_element().attribute("type"), Some("Collection"));
    doc.descendants()
        .filter(|n| n.has_tag_name("DataSet"))
        .map(|n| n.attribute("file").unwrap().to_string())
        .collect()
}

#[test]
fn a_killed_run_leaves_an_index_of_complete_frames() {
    let tmp = tempfile::tempdir().unwrap();
    let config = scene("contacts = 0\nbodies = 0\nwalls = 0\nvtk = 1")
        .replace("steps = 800", "steps = 100000000");
    let cfg = tmp.path().join("long.toml");
    std::fs::write(&cfg, config).unwrap();
    let out = tmp.path().join("long");
    let mut child = Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(["run", cfg.to_str().unwrap(), "--quiet", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the talus binary starts");
    let vtk = out.join("vtk");
    // A hang guard, not a speed bound: the run writes a frame a step.
    let start = Instant::now();
    while std::fs::read_to_string(vtk.join("run.pvd")).map_or(0, |t| t.matches("<DataSet").count())
        < 40
    {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no frames written"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let files = listed(&vtk);
    assert!(files.len() >= 40);
    for f in &files {
        let text = std::fs::read_to_string(vtk.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert_eq!(doc.root_element().attribute("type"), Some("PolyData"));
    }
    // Every frame lists its four parts.
    assert_eq!(files.len() % 4, 0);
    let last = files.last().unwrap().replace("contacts-", "balls-");
    assert_ok(&python(&[
        "-c",
        "import sys, vtk\n\
         r = vtk.vtkXMLPolyDataReader(); r.SetFileName(sys.argv[1]); r.Update()\n\
         assert r.GetErrorCode() == 0 and r.GetOutput().GetNumberOfPoints() == 83\n",
        vtk.join(last).to_str().unwrap(),
    ]));
}

/// Width and height of a PNG, from its IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn render_frame_draws_a_png_of_the_frame() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(tmp.path(), "scene", &scene("bodies = 300\nvtk = 300"), "2");
    let script = workspace_root().join("tools/py/render_frame.py");
    let png = tmp.path().join("frame.png");
    let o = python(&[
        script.to_str().unwrap(),
        out.to_str().unwrap(),
        png.to_str().unwrap(),
        "--step",
        "300",
        "--size",
        "640x480",
    ]);
    assert_ok(&o);
    assert!(
        String::from_utf8_lossy(&o.stderr).is_empty(),
        "walls come from the frame's own VTK file"
    );
    assert_eq!(png_size(&std::fs::read(&png).unwrap()), (640, 480));
    // Not blank: many colours, and the balls' colours from the colour map
    // cover a fair share of the picture.
    let check = "import sys\n\
        import numpy as np\n\
        import matplotlib.image as im\n\
        a = im.imread(sys.argv[1])[:, :, :3]\n\
        colours = len(np.unique(a.reshape(-1, 3), axis=0))\n\
        assert colours > 50, colours\n\
        saturated = (a.max(axis=2) - a.min(axis=2)) > 0.2\n\
        assert saturated.mean() > 0.02, saturated.mean()\n";
    assert_ok(&python(&["-c", check, png.to_str().unwrap()]));

    // A step that was not recorded is refused with the recorded range.
    let o = python(&[
        script.to_str().unwrap(),
        out.to_str().unwrap(),
        png.to_str().unwrap(),
        "--step",
        "7",
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("step 7 is not recorded") && !err.contains("Traceback"),
        "{err}"
    );

    // Without VTK files the walls are not drawn, and the script says so.
    let plain = run(tmp.path(), "plain", &scene("bodies = 300"), "2");
    let o = python(&[
        script.to_str().unwrap(),
        plain.to_str().unwrap(),
        png.to_str().unwrap(),
    ]);
    assert_ok(&o);
    assert!(String::from_utf8_lossy(&o.stderr).contains("walls not drawn"));
}
