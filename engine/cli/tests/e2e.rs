//! End-to-end runs of the `talus` binary: every example config, the
//! determinism guarantees, plugin loading through a run, and bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use talus_host::fixtures::{build_fixture, build_plugin_cdylib, workspace_root};

fn talus(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(args)
        .current_dir(workspace_root())
        .output()
        .expect("the talus binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn check_dataset(dir: &Path) {
    let o = Command::new("python3")
        .arg(workspace_root().join("tools/py/check_dataset.py"))
        .arg(dir)
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "check_dataset.py failed on {}:\n{}{}",
        dir.display(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn configs(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            configs(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

#[test]
fn every_example_config_runs_shortened() {
    let mut all = Vec::new();
    configs(&workspace_root().join("configs"), &mut all);
    all.sort();
    assert!(!all.is_empty());
    let tmp = tempfile::tempdir().unwrap();
    for (k, cfg) in all.iter().enumerate() {
        let out = tmp.path().join(format!("run{k}"));
        // An example that loads the superquadric plugin from where the
        // README has it built runs here with the library the tests build.
        let text = std::fs::read_to_string(cfg).unwrap();
        let built = "target/release/libtalus_plugin_superquadric.so\"";
        let cfg = match text.lines().find(|l| l.contains(built)) {
            Some(line) => {
                let lib = build_plugin_cdylib("talus-plugin-superquadric");
                let copy = tmp.path().join(format!("run{k}.toml"));
                let path = format!("path = \"{}\"", lib.display());
                std::fs::write(&copy, text.replace(line, &path)).unwrap();
                copy
            }
            None => cfg.clone(),
        };
        let o = talus(&[
            "run",
            cfg.to_str().unwrap(),
            "--steps",
            "30",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(
            o.status.success(),
            "{} failed:\n{}",
            cfg.display(),
            stderr(&o)
        );
        check_dataset(&out);
    }
}

/// Contact part files of a run, in name order.
fn contact_parts(dir: &Path) -> Vec<Vec<u8>> {
    dataset_parts(dir, "contacts")
}

/// The bytes of every Parquet part of one dataset of a run's output.
fn dataset_parts(dir: &Path, dataset: &str) -> Vec<Vec<u8>> {
    let mut parts: Vec<PathBuf> = std::fs::read_dir(dir.join(dataset))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    parts.sort();
    parts.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

fn write_config(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A small, busy version of the settle example: balls start packed close
/// together so that many contacts are active within a few hundred steps.
/// It needs `trough.obj` ([`TROUGH_OBJ`]) next to it.
/// A V-shaped trough across the box floor: two slopes of 15 degrees
/// meeting along y at x = 10 mm, z = 1 mm.
const TROUGH_OBJ: &str = "v 0 0 0.0036795\nv 0 0.02 0.0036795\nv 0.01 0 0.001\nv 0.01 0.02 0.001\n\
v 0.02 0 0.0036795\nv 0.02 0.02 0.0036795\nf 1 3 4\nf 1 4 2\nf 3 5 6\nf 3 6 4\n";

fn busy_settle(plugins: &str) -> String {
    format!(
        r#"{plugins}
[run]
steps = 400
dt = "auto"
gravity = [0.0, 0.0, -9.81]
seed = 3

[[models]]
model = "linear"
groups = ["*", "*"]
properties = {{ kn = 1.0e5, ks = 2.857e4, fric = 0.5, dp_nratio = 0.2, dp_sratio = 0.1 }}

[[balls]]
kind = "random"
group = "grain"
count = 600
radius = [0.0009, 0.0011]
density = 2500.0
damping = 0.1
velocity = [-0.3, -0.2, -2.0]
region = {{ min = [0.0, 0.0, 0.004], max = [0.02, 0.02, 0.04] }}

# The box is 0.2 mm inside the balls' region, so the outer balls start
# pressed into its sides. Both walls resolve in full mode; the balls land in
# the V of the trough (slopes 30 degrees apart), where they make proximity
# contacts.
[[walls]]
name = "box"
kind = "box"
group = "box"
min = [0.0002, 0.0002, 0.0002]
max = [0.0198, 0.0198, 0.05]
open = ["+z"]
divisions = 12
resolution = "full"
cutoff_angle = 90.0

[[walls]]
name = "trough"
kind = "mesh"
group = "box"
path = "trough.obj"
resolution = "full"
cutoff_angle = 90.0

# The tests compare part files byte for byte, so parts close at the end
# only, not after some wall time.
[output]
contacts = 10
bodies = 0
walls = 100
part_seconds = 3600.0
"#
    )
}

#[test]
fn same_bits_with_one_and_two_threads_and_with_the_cdylib_model() {
    let tmp = tempfile::tempdir().unwrap();
    write_config(tmp.path(), "trough.obj", TROUGH_OBJ);
    let embedded = write_config(tmp.path(), "busy.toml", &busy_settle(""));
    let lib = build_plugin_cdylib("talus-plugin-linear");
    let loaded = write_config(
        tmp.path(),
        "busy_cdylib.toml",
        &busy_settle(&format!(
            "[[plugins]]\npath = {:?}\n",
            lib.display().to_string()
        )),
    );
    let run = |cfg: &Path, threads: &str, name: &str| -> PathBuf {
        let out = tmp.path().join(name);
        let o = talus(&[
            "run",
            cfg.to_str().unwrap(),
            "--threads",
            threads,
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        out
    };
    let one = contact_parts(&run(&embedded, "1", "t1"));
    let two = contact_parts(&run(&embedded, "2", "t2"));
    let dynamic = contact_parts(&run(&loaded, "2", "dyn"));
    // More threads than CPUs: the contact pass takes two segments per
    // thread then, and the run says that fewer threads would do better.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let many = (cpus + 1).to_string();
    let out = tmp.path().join("many");
    let o = talus(&[
        "run",
        embedded.to_str().unwrap(),
        "--threads",
        &many,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("{many} threads on {cpus} CPUs")),
        "no note on more threads than CPUs: {}",
        stderr(&o)
    );
    assert!(
        contact_parts(&out) == one,
        "contact Parquet differs between 1 thread and more threads than CPUs"
    );
    // The wall's force and moment too (the contact pass sums them chunk
    // by chunk, and two threads cut the chunks into two segments).
    let walls = |name: &str| dataset_parts(&tmp.path().join(name), "walls");
    assert!(!walls("t1").is_empty());
    assert!(
        walls("t1") == walls("t2"),
        "wall Parquet differs between 1 and 2 threads"
    );
    assert!(!one.is_empty() && one.iter().map(Vec::len).sum::<usize>() > 10_000);
    // The wall logic had work to do.
    let proximity = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, polars as pl; c = pl.read_parquet(sys.argv[1] + '/contacts/*.parquet'); \
             print(c.filter(pl.col('proximity') >= 0).height, c.filter(pl.col('linked_to') >= 0).height)",
        )
        .arg(tmp.path().join("t1"))
        .output()
        .expect("python3 runs");
    let counts = String::from_utf8_lossy(&proximity.stdout).to_string();
    let counts: Vec<usize> = counts
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    assert!(
        counts[0] > 0 && counts[1] > 0,
        "proximity and linked rows: {counts:?}"
    );
    assert!(
        one == two,
        "contact Parquet differs between 1 and 2 threads"
    );
    assert!(
        one == dynamic,
        "contact Parquet differs between the embedded and the cdylib model"
    );
}

#[test]
fn out_of_tree_plugin_runs_and_panicking_plugin_stops_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let good = build_fixture("good");
    let text = |lib: &Path, model: &str, props: &str| {
        format!(
            r#"[[plugins]]
path = {:?}
[run]
steps = 300
dt = 1e-6
gravity = [0.0, 0.0, -9.81]
[[models]]
model = "{model}"
groups = ["*", "*"]
properties = {{ {props} }}
[[balls]]
kind = "list"
density = 2500.0
radius = 0.001
balls = [ {{ pos = [0.0, 0.0, 0.001] }}, {{ pos = [0.0, 0.0, 0.00305], velocity = [0.0, 0.0, -1.0] }} ]
[[walls]]
name = "floor"
kind = "mesh"
path = "floor.obj"
[output]
contacts = 10
"#,
            lib.display().to_string()
        )
    };
    std::fs::write(
        tmp.path().join("floor.obj"),
        "v -0.01 -0.01 0\nv 0.01 -0.01 0\nv 0.01 0.01 0\nv -0.01 0.01 0\nf 1 2 3\nf 1 3 4\n",
    )
    .unwrap();
    let cfg = write_config(
        tmp.path(),
        "good.toml",
        &text(&good, "test_hooke", "k = 1.0e4"),
    );
    let out = tmp.path().join("good_out");
    let o = talus(&[
        "run",
        cfg.to_str().unwrap(),
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    check_dataset(&out);

    // The model requires k: leaving it out is a config error at the rule.
    let cfg = write_config(tmp.path(), "missing.toml", &text(&good, "test_hooke", ""));
    let o = talus(&["check", cfg.to_str().unwrap()]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("missing.toml:") && e.contains("\"k\"") && e.contains("requires"),
        "{e}"
    );
    assert!(!e.contains("panicked"), "{e}");

    // A model that panics once the overlap exceeds 150 um: more than the
    // engine's probe contact before step 0 (a tenth of the 1 mm radius),
    // less than the falling ball reaches within the run.
    let bad = build_fixture("panicking");
    let cfg = write_config(
        tmp.path(),
        "panic.toml",
        &text(&bad, "test_panic", "limit = 1.5e-4"),
    );
    let out = tmp.path().join("panic_out");
    let o = talus(&[
        "run",
        cfg.to_str().unwrap(),
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("model 'test_panic'") && e.contains("failed at contact"),
        "{e}"
    );
    assert!(e.contains("output written so far"), "{e}");
    assert!(
        !e.contains("panicked at"),
        "the plugin's panic leaked a trace:\n{e}"
    );
    check_dataset(&out);
}

fn expect_config_error(name: &str, text: &str, words: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), name, text);
    let o = talus(&[
        "run",
        cfg.to_str().unwrap(),
        "--quiet",
        "--out",
        tmp.path().join("out").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{name} should fail");
    let e = stderr(&o);
    assert!(
        !e.contains("panicked") && !e.contains("RUST_BACKTRACE"),
        "{name}: panic trace:\n{e}"
    );
    assert_eq!(
        e.trim().lines().count(),
        1,
        "{name}: expected one line:\n{e}"
    );
    for w in words {
        assert!(e.contains(w), "{name}: '{w}' missing from:\n{e}");
    }
}

const BASE: &str = r#"[run]
steps = 10
[[models]]
model = "linear"
groups = ["*", "*"]
properties = { kn = 1e5 }
"#;

#[test]
fn bad_configs_stop_with_one_clear_message() {
    expect_config_error(
        "unknown_key.toml",
        &format!("{BASE}[[balls]]\nkind = \"list\"\ndensity = 1.0\nradiuss = 1.0\nballs = []\n"),
        &["unknown_key.toml:", "radiuss", "allowed"],
    );
    expect_config_error(
        "wrong_type.toml",
        &format!("{BASE}[[balls]]\nkind = \"list\"\ndensity = \"heavy\"\nballs = []\n"),
        &["wrong_type.toml:", "density"],
    );
    expect_config_error(
        "negative_radius.toml",
        &format!("{BASE}[[balls]]\nkind = \"list\"\ndensity = 1.0\nradius = -0.001\nballs = [{{ pos = [0.0, 0.0, 0.0] }}]\n"),
        &["negative_radius.toml:", "radius"],
    );
    expect_config_error(
        "cannot_fit.toml",
        &format!(
            "{BASE}[[balls]]\nkind = \"random\"\ndensity = 1.0\ncount = 150\nradius = 0.001\nmax_attempts = 20\nregion = {{ min = [0.0, 0.0, 0.0], max = [0.01, 0.01, 0.01] }}\n"
        ),
        &["cannot_fit.toml:", "cannot fit 150 balls"],
    );
    expect_config_error(
        "missing_mesh.toml",
        &format!("{BASE}[[walls]]\nname = \"w\"\nkind = \"mesh\"\npath = \"nowhere.stl\"\n"),
        &["missing_mesh.toml:", "nowhere.stl"],
    );
    expect_config_error(
        "bad_property.toml",
        "[run]\nsteps = 10\n[[models]]\nmodel = \"linear\"\ngroups = [\"*\", \"*\"]\nproperties = { kn = 1e5, dp_nratio = 3.0 }\n[[balls]]\nkind = \"list\"\ndensity = 1.0\nradius = 0.001\nballs = [{ pos = [0.0, 0.0, 0.0] }]\n",
        &["bad_property.toml:", "dp_nratio"],
    );
    expect_config_error(
        "unknown_model.toml",
        "[run]\nsteps = 10\n[[models]]\nmodel = \"hertz_typo\"\ngroups = [\"*\", \"*\"]\n[[balls]]\nkind = \"list\"\ndensity = 1.0\nradius = 0.001\nballs = [{ pos = [0.0, 0.0, 0.0] }]\n",
        &["unknown_model.toml:", "hertz_typo", "linear"],
    );
    expect_config_error(
        "no_pairing.toml",
        "[run]\nsteps = 10\n[[models]]\nmodel = \"linear\"\ngroups = [\"a\", \"a\"]\n[[balls]]\nkind = \"list\"\ngroup = \"a\"\ndensity = 1.0\nradius = 0.001\nballs = [{ pos = [0.0, 0.0, 0.0] }]\n[[walls]]\nname = \"w\"\nkind = \"box\"\ngroup = \"b\"\nmin = [-1.0, -1.0, -1.0]\nmax = [1.0, 1.0, 1.0]\n",
        &["no_pairing.toml", "'a'", "'b'"],
    );
    // Bonds: a model that cannot hold one, a group with no bodies, a pair
    // with no model, both times.
    let one_ball = "[[balls]]\nkind = \"list\"\ngroup = \"g\"\ndensity = 1.0\nradius = 0.001\nballs = [{ pos = [0.0, 0.0, 0.0] }]\n";
    expect_config_error(
        "bond_linear.toml",
        &format!("{BASE}{one_ball}[[bonds]]\ngroups = [\"g\", \"g\"]\n"),
        &[
            "bond_linear.toml:",
            "'linear'",
            "cannot hold a bond",
            "linearbond",
        ],
    );
    expect_config_error(
        "bond_nobody.toml",
        &format!("{BASE}{one_ball}[[bonds]]\ngroups = [\"g\", \"rokc\"]\n"),
        &["bond_nobody.toml:", "'rokc'"],
    );
    expect_config_error(
        "bond_nomodel.toml",
        &format!("[run]\nsteps = 10\n[[models]]\nmodel = \"linearbond\"\ngroups = [\"g\", \"g\"]\nproperties = {{ pb_kn = 1.0, pb_ks = 1.0, pb_ten = 1.0, pb_coh = 1.0 }}\n{one_ball}[[bonds]]\ngroups = [\"g\", \"h\"]\n"),
        &["bond_nomodel.toml:", "no contact model"],
    );
    expect_config_error(
        "bond_when.toml",
        &format!(
            "{BASE}{one_ball}[[bonds]]\ngroups = [\"g\", \"g\"]\nat_step = 3\nat_time = 0.1\n"
        ),
        &["bond_when.toml:", "not both"],
    );
}

#[test]
fn plugins_command_lists_embedded_and_loaded_models() {
    let good = build_fixture("good");
    let o = talus(&["plugins", good.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = String::from_utf8_lossy(&o.stdout);
    let linear = ["linear", "kn", "N/m", "fs_s", "copy"];
    let volume = [
        "talus-plugin-volume",
        "N/m^3",
        "overlap_volume (m^3)",
        "contact_area (m^2)",
    ];
    let linearbond = [
        "talus-plugin-linearbond",
        "pb_kn",
        "N/m^3",
        "pair_random",
        "pb_state",
    ];
    for w in linear
        .iter()
        .chain(&volume)
        .chain(&linearbond)
        .chain(&["test_hooke"])
    {
        assert!(
            s.to_lowercase().contains(&w.to_lowercase()),
            "'{w}' missing from:\n{s}"
        );
    }
}

#[test]
fn plugins_command_lists_shapes_and_refuses_another_sdk_in_one_line() {
    let lib = build_plugin_cdylib("talus-plugin-superquadric");
    let o = talus(&["plugins", lib.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = String::from_utf8_lossy(&o.stdout);
    for w in [
        "linear 0.1.0",
        "superellipsoid 0.1.0 (shape)",
        "talus-plugin-superquadric",
        "features:    smooth",
        "a     m     required  [0, inf)",
        "n2    -     2         [2, 10]",
    ] {
        assert!(s.contains(w), "'{w}' missing from:\n{s}");
    }
    let other = build_fixture("shape_new_sdk");
    let o = talus(&["plugins", other.to_str().unwrap()]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(e.contains("built with talus sdk 0.4.0"), "{e}");
}

/// The rows of a walls dataset as (name, time, cz, fz).
fn wall_rows(dir: &Path) -> Vec<(String, f64, f64, f64)> {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::Float64Type;
    let mut parts: Vec<PathBuf> = std::fs::read_dir(dir.join("walls"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    parts.sort();
    let mut rows = Vec::new();
    for p in parts {
        let file = std::fs::File::open(&p).unwrap();
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
        for batch in reader {
            let batch = batch.unwrap();
            let f64_col = |name: &str| {
                batch
                    .column_by_name(name)
                    .unwrap()
                    .as_primitive::<Float64Type>()
                    .clone()
            };
            let names = arrow::compute::cast(
                batch.column_by_name("name").unwrap(),
                &arrow::datatypes::DataType::Utf8,
            )
            .unwrap();
            let names = names.as_string::<i32>();
            let (time, cz, fz) = (f64_col("time"), f64_col("cz"), f64_col("fz"));
            for i in 0..batch.num_rows() {
                assert!(!names.is_null(i));
                rows.push((
                    names.value(i).to_string(),
                    time.value(i),
                    cz.value(i),
                    fz.value(i),
                ));
            }
        }
    }
    rows
}

#[test]
fn servo_platen_holds_its_target_load_within_two_percent() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("compress");
    let o = talus(&[
        "run",
        "configs/compress.toml",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // 100 kPa over the platen's 19.8 mm square.
    let target = 1.0e5 * 0.0198 * 0.0198;
    let platen: Vec<_> = wall_rows(&out)
        .into_iter()
        .filter(|r| r.0 == "platen")
        .collect();
    let (start, end) = (platen.first().unwrap(), platen.last().unwrap());
    assert!(end.1 > 0.24, "the run reached its end time: {}", end.1);
    assert!(end.2 < start.2 - 0.02, "the platen came down onto the bed");
    let settled: Vec<_> = platen.iter().filter(|r| r.1 >= 0.15).collect();
    assert!(settled.len() > 30);
    for (_, t, _, fz) in settled {
        // The beads push the platen up: its load is +fz.
        assert!(
            (fz - target).abs() < 0.02 * target,
            "t = {t}: load {fz} N, target {target} N"
        );
    }
}

/// List rows of `n` bodies along x, `pitch` apart, moving apart at
/// `speed` per pitch (the middle at rest).
fn flying_apart(n: usize, pitch: f64, speed: f64) -> String {
    let rows: Vec<String> = (0..n)
        .map(|k| {
            let x = pitch * k as f64;
            let v = speed * (k as f64 - 0.5 * (n - 1) as f64);
            format!("{{ pos = [{x}, 0.0, 0.0], velocity = [{v}, 0.0, 0.0] }}")
        })
        .collect();
    rows.join(", ")
}

/// Runs `cfg` into `out` and checks in pandas that its three bonds, all
/// formed before the first step, broke in tension, each in one row of
/// the bonds table with the stress above its strength, and that the
/// contacts table says they were bonded; `extra` is more Python on the
/// bonds table `b`.
/// Runs `cfg` into `out`, which must succeed and leave a readable
/// dataset.
fn run_ok(cfg: &Path, out: &Path) {
    let o = talus(&[
        "run",
        cfg.to_str().unwrap(),
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    check_dataset(out);
}

/// Runs the Python `script` (its asserts the checks) on the dataset
/// folder `out`.
fn python_checks(script: &str, out: &Path) {
    let py = Command::new("python3")
        .args(["-c", script, out.to_str().unwrap()])
        .output()
        .expect("python3 runs");
    assert!(
        py.status.success(),
        "{}{}",
        String::from_utf8_lossy(&py.stdout),
        String::from_utf8_lossy(&py.stderr)
    );
}

fn three_bonds_break_in_tension(cfg: &Path, out: &Path, extra: &str) {
    run_ok(cfg, out);
    let script = format!(
        r#"
import sys
import pandas as pd
out = sys.argv[1]
b = pd.read_parquet(out + "/bonds")
assert len(b) == 3, b
assert (b["mode"] == "tension").all(), b["mode"]
assert (b["pb_sigma"] > b["pb_ten_c"]).all(), b[["pb_sigma", "pb_ten_c"]]
{extra}
c = pd.read_parquet(out + "/contacts")
first = c[c["step"] == c["step"].min()]
assert (first["pb_state"] == 1).all() and len(first) == 3, first
assert set(b["id"]) == set(first["id"])
print("ok")
"#
    );
    python_checks(&script, out);
}

/// Four balls in a row, bonded, flying apart: every bond breaks in
/// tension, each in one row of the bonds table with the stress that broke
/// it above its strength (read back in pandas); the contacts table says
/// which contacts are bonded; and the Brazilian example runs shortened
/// with its plot script.
#[test]
fn broken_bonds_are_recorded_and_the_brazilian_example_plots() {
    let tmp = tempfile::tempdir().unwrap();
    let balls = flying_apart(4, 0.002, 5.0);
    let cfg = write_config(
        tmp.path(),
        "apart.toml",
        &format!(
            "[run]\nsteps = 400\ndt = 1e-7\n\
             [[models]]\nmodel = \"linearbond\"\ngroups = [\"g\", \"g\"]\n\
             properties = {{ kn = 1e6, pb_kn = 1e12, pb_ks = 4e11, pb_ten = 1e6, pb_ten_sd = 2e5, pb_coh = 1e7 }}\n\
             [[balls]]\nkind = \"list\"\ngroup = \"g\"\ndensity = 2500.0\nradius = 0.001\nballs = [{balls}]\n\
             [[bonds]]\ngroups = [\"g\", \"g\"]\ngap = 1e-9\n\
             [output]\ndir = \"out\"\ncontacts = 1\nbodies = 0\nwalls = 0\n"
        ),
    );
    three_bonds_break_in_tension(
        &cfg,
        &tmp.path().join("apart"),
        r#"
assert (b["pb_state"] == 2).all()
assert b["pb_ten_c"].nunique() == 3, "strengths scatter"
"#,
    );

    let out = tmp.path().join("brazilian");
    let o = talus(&[
        "run",
        "configs/brazilian.toml",
        "--steps",
        "300",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let png = tmp.path().join("brazilian.png");
    let py = Command::new("python3")
        .arg(workspace_root().join("tools/py/plot_brazilian.py"))
        .args([out.to_str().unwrap(), png.to_str().unwrap()])
        .output()
        .expect("python3 runs");
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    assert!(png.metadata().unwrap().len() > 1000);
}

/// The element tests in a periodic cell, with the second stage brought
/// forward so that 300 steps reach it: each runs, its cell table holds
/// both stages, and `plot_cell.py` reads it as the right test and plots.
#[test]
fn the_periodic_element_tests_run_their_stages_and_plot() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, test) in [("shear", "shear"), ("triaxial", "triaxial")] {
        let text =
            std::fs::read_to_string(workspace_root().join(format!("configs/{name}.toml"))).unwrap();
        assert!(text.contains("at_time = 0.04\n"), "{name}");
        let cfg = write_config(
            tmp.path(),
            &format!("{name}.toml"),
            &text.replace("at_time = 0.04\n", "at_time = 0.0003\n"),
        );
        let out = tmp.path().join(name);
        let o = talus(&[
            "run",
            cfg.to_str().unwrap(),
            "--steps",
            "300",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let png = tmp.path().join(format!("{name}.png"));
        let py = Command::new("python3")
            .arg(workspace_root().join("tools/py/plot_cell.py"))
            .args([out.to_str().unwrap(), png.to_str().unwrap()])
            .output()
            .expect("python3 runs");
        let said = String::from_utf8_lossy(&py.stdout);
        assert!(
            py.status.success(),
            "{}",
            String::from_utf8_lossy(&py.stderr)
        );
        // The last stage is the test's (stage 1), guessed from the cell.
        assert!(said.starts_with(&format!("{test}: stage 1,")), "{said}");
        assert!(png.metadata().unwrap().len() > 1000);
    }
}

/// A bed of balls on a floor with a fixed dt about 30 times the critical
/// one (sqrt(m / k) = 1.0e-5 s for these 1 mm beads and kn = 1e5 N/m):
/// once the balls land, the run must stop with one line naming the
/// blow-up, exit 1, and leave a dataset that reads, complete up to the
/// step before the stop.
#[test]
fn a_fixed_dt_far_above_the_critical_stops_with_one_line_and_a_readable_dataset() {
    let tmp = tempfile::tempdir().unwrap();
    let text = r#"[run]
steps = 2000
dt = 3e-4
gravity = [0.0, 0.0, -9.81]

[[models]]
model = "linear"
groups = ["*", "*"]
properties = { kn = 1.0e5, ks = 2.857e4, fric = 0.5 }

[[balls]]
kind = "lattice"
radius = 0.001
density = 2500.0
spacing = 0.0021
region = { min = [0.0011, 0.0011, 0.0012], max = [0.0099, 0.0099, 0.0042] }

[[walls]]
name = "box"
kind = "box"
min = [0.0, 0.0, 0.0]
max = [0.011, 0.011, 0.02]
open = ["+z"]

[output]
contacts = 1
bodies = 1
"#;
    let cfg = write_config(tmp.path(), "blowup.toml", text);
    // `check` says so before any step: sqrt(m / kn) for one contact is
    // 1.0233e-5 s here (no dashpot), 3e-4 s is 29.32 times that.
    let o = talus(&["check", cfg.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains("dt = 3e-4 s is 29.32 times the largest step")
            && said.contains("(1.023e-5 s at safety 1)"),
        "{said}"
    );
    let out = tmp.path().join("out");
    let o = talus(&[
        "run",
        cfg.to_str().unwrap(),
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "one line:\n{e}");
    assert!(
        !e.contains("panicked") && !e.contains("RUST_BACKTRACE"),
        "{e}"
    );
    for w in [
        "blowup.toml",
        "blow-up at step",
        "ball ",
        "dt = 3e-4 s is above the stable timestep",
        "output written so far",
    ] {
        assert!(e.contains(w), "'{w}' missing from:\n{e}");
    }
    let step: u64 = e
        .split("blow-up at step ")
        .nth(1)
        .and_then(|s| s.split(':').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no step in:\n{e}"));
    assert!(step > 1, "the balls fall a while first:\n{e}");
    check_dataset(&out);
    // Every step before the stop is in the bodies table, the stop's not.
    let py = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, pandas as pd; b = pd.read_parquet(sys.argv[1]); \
             print(b['step'].nunique(), b['step'].max())",
        )
        .arg(out.join("bodies"))
        .output()
        .expect("python3 runs");
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    let seen = String::from_utf8_lossy(&py.stdout).trim().to_string();
    assert_eq!(seen, format!("{step} {}", step - 1));
}

/// `[[bonds]]` between groups of blocks: three cubes in a row, each
/// overlapping the next, bonded and flying apart, break both their bonds
/// in tension (one row each in the bonds table, the stress above the
/// strength); a ball bonded to a block does too, and a cube bonded to
/// a wall.
#[test]
fn bonds_between_blocks_validate_run_and_break() {
    let tmp = tempfile::tempdir().unwrap();
    let head = "[run]\nsteps = 300\ndt = 1e-7\n\
         [[models]]\nmodel = \"linearbond\"\ngroups = [\"g\", \"g\"]\n\
         properties = { kn = 1e6, pb_kn = 1e12, pb_ks = 4e11, pb_ten = 1e6, pb_coh = 1e7 }\n\
         [[shapes]]\nname = \"cube\"\nkind = \"box\"\nsize = [0.01, 0.01, 0.01]\n";
    let blocks = flying_apart(3, 0.00999, 2.0);
    let cfg = write_config(
        tmp.path(),
        "blocks_apart.toml",
        &format!(
            "{head}[[blocks]]\nkind = \"list\"\ngroup = \"g\"\nshape = \"cube\"\ndensity = 2600.0\nblocks = [{blocks}]\n\
             [[balls]]\nkind = \"list\"\ngroup = \"g\"\ndensity = 2600.0\nradius = 0.002\n\
             balls = [{{ pos = [0.0, 0.0, 0.00699], velocity = [0.0, 0.0, 2.0] }}]\n\
             [[bonds]]\ngroups = [\"g\", \"g\"]\n\
             [output]\ndir = \"out\"\ncontacts = 1\nbodies = 0\nwalls = 0\n"
        ),
    );
    three_bonds_break_in_tension(&cfg, &tmp.path().join("apart"), "");

    // A cube pressed into the lid of a box wall (two facets under it),
    // bonded and flying off: one bond, on one facet, breaks in tension.
    let cfg = write_config(
        tmp.path(),
        "bond_block_wall.toml",
        &format!(
            "{head}[[models]]\nmodel = \"linearbond\"\ngroups = [\"g\", \"w\"]\n\
             properties = {{ kn = 1e6, pb_kn = 1e12, pb_ks = 4e11, pb_ten = 1e6, pb_coh = 1e7 }}\n\
             [[blocks]]\nkind = \"list\"\ngroup = \"g\"\nshape = \"cube\"\ndensity = 2600.0\n\
             blocks = [{{ pos = [0.0, 0.0, 0.00499], velocity = [0.0, 0.0, 2.0] }}]\n\
             [[walls]]\nname = \"floor\"\nkind = \"box\"\ngroup = \"w\"\n\
             min = [-0.1, -0.1, -0.01]\nmax = [0.1, 0.1, 0.0]\n\
             [[bonds]]\ngroups = [\"g\", \"w\"]\n\
             [output]\ndir = \"out\"\ncontacts = 1\nbodies = 0\nwalls = 0\n"
        ),
    );
    let out = tmp.path().join("wall");
    run_ok(&cfg, &out);
    let script = r#"
import sys
import pandas as pd
out = sys.argv[1]
b = pd.read_parquet(out + "/bonds")
assert len(b) == 1, b
assert (b["kind"] == "block-facet").all(), b["kind"]
assert (b["mode"] == "tension").all() and (b["facet"] >= 0).all(), b
assert (b["pb_sigma"] > b["pb_ten_c"]).all(), b[["pb_sigma", "pb_ten_c"]]
c = pd.read_parquet(out + "/contacts")
first = c[c["step"] == c["step"].min()]
held = first[first["pb_state"] == 1]
assert len(held) == 1 and set(held["id"]) == set(b["id"]), first
print("ok")
"#;
    python_checks(script, &out);
}

/// A wall cut to fit a periodic cell is named with its facet counts by
/// `check` (and by `run` as a note).
#[test]
fn a_wall_cut_to_fit_the_cell_is_reported() {
    let cfg = workspace_root().join("configs/periodic_pour.toml");
    let o = talus(&["check", cfg.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("wall 'floor': its 2 facets cut into 128"),
        "{out}"
    );
}
