//! Runs that end early: SIGINT and SIGTERM stop after a whole step with a
//! closed dataset and exit 130 / 143; `kill -9` leaves every closed part
//! readable and `run.json` saying up to which step the data is whole.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use arrow::array::{Array, UInt64Array};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use talus_host::fixtures::workspace_root;

/// One falling ball for as long as the test lets it run, a bodies row
/// every `every` steps.
fn endless(dir: &Path, every: u64, part_seconds: f64) -> PathBuf {
    let text = format!(
        r#"[run]
steps = 1000000000000
dt = 1e-6
gravity = [0.0, 0.0, -9.81]

[[models]]
model = "linear"
groups = ["grain", "grain"]
properties = {{ kn = 1.0e4, ks = 2.857e3, fric = 0.5 }}

[[balls]]
kind = "list"
group = "grain"
density = 2500.0
balls = [ {{ pos = [0.0, 0.0, 0.0], radius = 0.001 }} ]

[output]
contacts = 0
bodies = {every}
walls = 0
part_seconds = {part_seconds:?}
"#
    );
    let path = dir.join("endless.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn start(config: &Path, out: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(["run", "--quiet", "--out"])
        .arg(out)
        .arg(config)
        .current_dir(workspace_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the talus binary starts")
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(child.id().to_string())
        .status()
        .expect("kill runs");
    assert!(status.success());
}

fn run_json(out: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join("run.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Waits until the run has closed at least one bodies part (a hang guard
/// bounds the wait).
fn wait_for_a_closed_part(out: &Path) {
    let start = Instant::now();
    while closed_parts(&out.join("bodies")).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no part closed within 120 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn closed_parts(dir: &Path) -> Vec<PathBuf> {
    let mut parts: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    parts.retain(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("part-") && n.ends_with(".parquet"))
    });
    parts.sort();
    parts
}

/// The `step` column of every closed part of `table`, in part order.
fn steps(out: &Path, table: &str) -> Vec<u64> {
    let mut steps = Vec::new();
    for part in closed_parts(&out.join(table)) {
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&part).unwrap())
            .unwrap_or_else(|e| panic!("{} is not a readable Parquet file: {e}", part.display()))
            .build()
            .unwrap();
        for batch in reader {
            let batch = batch.unwrap();
            let column = batch.column_by_name("step").unwrap();
            let column = column.as_any().downcast_ref::<UInt64Array>().unwrap();
            steps.extend(column.values().iter().copied());
        }
    }
    steps
}

/// The rows of a one-ball run recorded every `every` steps, up to `last`.
fn expected_steps(every: u64, last: u64) -> Vec<u64> {
    (0..=last / every).map(|k| k * every).collect()
}

fn stops_cleanly_on(name: &str, status: i32) {
    let tmp = tempfile::tempdir().unwrap();
    let config = endless(tmp.path(), 100, 0.2);
    let out = tmp.path().join("out");
    let child = start(&config, &out);
    wait_for_a_closed_part(&out);
    signal(&child, name);
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(status), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains(name), "{stderr}");

    let json = run_json(&out);
    let progress = &json["progress"];
    assert_eq!(progress["state"], "interrupted", "{progress}");
    assert_eq!(progress["signal"], format!("SIG{name}"), "{progress}");
    let last = progress["complete_through_step"].as_u64().unwrap();
    assert!(
        stderr.contains(&format!("after step {last}:")),
        "the message names the step run.json gives ({last}): {stderr}"
    );
    // No part in flight is left behind, and the rows are those of every
    // recorded step up to the last one, once each.
    let hidden: Vec<_> = std::fs::read_dir(out.join("bodies"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
    assert_eq!(steps(&out, "bodies"), expected_steps(100, last));
}

#[test]
fn sigint_finishes_the_step_closes_the_dataset_and_exits_130() {
    stops_cleanly_on("INT", 130);
}

#[test]
fn sigterm_finishes_the_step_closes_the_dataset_and_exits_143() {
    stops_cleanly_on("TERM", 143);
}

/// `kill -9` at a moment the test does not choose to line up with any
/// step: every closed part reads, `run.json` says the run did not finish,
/// and every recorded step up to the step it names is in the closed
/// parts.
#[test]
fn kill_9_leaves_readable_parts_and_says_how_far_the_data_is_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let config = endless(tmp.path(), 10, 0.2);
    let out = tmp.path().join("out");
    let child = start(&config, &out);
    wait_for_a_closed_part(&out);
    // A delay that differs from run to run (the clock's nanoseconds), so
    // the kill lands at no particular step.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    std::thread::sleep(Duration::from_millis(300 + u64::from(nanos % 700)));
    let mut child = child;
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success());

    let json = run_json(&out);
    let progress = &json["progress"];
    assert_eq!(progress["state"], "running", "{progress}");
    let whole = progress["complete_through_step"]
        .as_u64()
        .expect("a closed part means a step up to which the data is whole");
    let steps = steps(&out, "bodies");
    assert!(steps.len() as u64 > whole / 10, "rows up to {whole}");
    assert_eq!(
        steps[..=(whole / 10) as usize],
        expected_steps(10, whole)[..],
        "the rows up to step {whole}"
    );
    // Rows past that step, in parts closed after run.json was written,
    // carry on in order.
    assert!(steps.windows(2).all(|w| w[1] == w[0] + 10));
    // pandas reads the folder as the rows of the closed parts.
    let o = Command::new("python3")
        .arg("-c")
        .arg("import sys, pandas as pd; print(len(pd.read_parquet(sys.argv[1] + '/bodies')))")
        .arg(&out)
        .output()
        .expect("python3 runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        steps.len().to_string()
    );
}

/// The servo compression example with a checkpoint every 500 steps,
/// contacts and bodies recorded often, and parts closed every 0.3 s.
fn checkpointed_compression(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(workspace_root().join("configs/compress.toml")).unwrap();
    let start = text.find("[output]").unwrap();
    let text = format!(
        "{}[output]\ncontacts = 2000\nbodies = 1000\nwalls = 100\nvtk = 5000\ncheckpoint = 500\npart_seconds = 0.3\n",
        &text[..start]
    );
    let path = dir.join("compress.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn talus(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(args)
        .current_dir(workspace_root())
        .output()
        .expect("the talus binary runs")
}

/// Every table of two datasets holds the same rows, bit for bit.
fn same_rows(a: &Path, b: &Path) {
    let o = Command::new("python3")
        .arg("-c")
        .arg(
            r#"
import os, sys
import numpy as np, pandas as pd
a, b = sys.argv[1], sys.argv[2]
for t in ["contacts", "bodies", "walls", "bonds", "shape_vertices", "shape_faces"]:
    parts = lambda d: sorted(f for f in os.listdir(f"{d}/{t}") if f.endswith(".parquet"))
    if not parts(a):
        assert not parts(b), t
        continue
    x, y = pd.read_parquet(f"{a}/{t}"), pd.read_parquet(f"{b}/{t}")
    assert list(x.columns) == list(y.columns), t
    assert len(x) == len(y), (t, len(x), len(y))
    for c in x.columns:
        u, v = x[c].to_numpy(), y[c].to_numpy()
        if u.dtype.kind == "f":
            assert np.array_equal(u.view(np.uint64), v.view(np.uint64)), (t, c)
        else:
            assert (u == v).all(), (t, c)
    print(t, len(x))
"#,
        )
        .arg(a)
        .arg(b)
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "the datasets differ:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("contacts") && stdout.contains("walls"),
        "{stdout}"
    );
}

/// Runs `config` to step 30 000 into `out`, anew (`--out`) or continued
/// from its checkpoint (`--resume`).
fn run_to_the_end(config: &Path, out: &Path, threads: &str, how: &str) {
    let o = talus(&[
        "run",
        config.to_str().unwrap(),
        "--steps",
        "30000",
        "--threads",
        threads,
        "--quiet",
        how,
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(run_json(out)["progress"]["state"], "finished");
}

fn start_for(config: &Path, out: &Path, threads: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_talus"))
        .args([
            "run",
            "--quiet",
            "--steps",
            "30000",
            "--threads",
            threads,
            "--out",
        ])
        .arg(out)
        .arg(config)
        .current_dir(workspace_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the talus binary starts")
}

fn wait_for_a_checkpoint(out: &Path) {
    let start = Instant::now();
    while !out.join("checkpoint.bin").exists() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no checkpoint within 120 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Killed with `kill -9` at no particular step on one thread, continued
/// with `--resume` on two: the dataset equals the uninterrupted run's.
#[test]
fn a_killed_run_resumed_equals_the_uninterrupted_run() {
    let tmp = tempfile::tempdir().unwrap();
    let config = checkpointed_compression(tmp.path());
    let whole = tmp.path().join("whole");
    run_to_the_end(&config, &whole, "1", "--out");

    let killed = tmp.path().join("killed");
    let mut child = start_for(&config, &killed, "1");
    wait_for_a_checkpoint(&killed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    std::thread::sleep(Duration::from_millis(u64::from(nanos % 500)));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        run_json(&killed)["progress"]["state"],
        "running",
        "the run ended before the kill; the test needs a longer run"
    );
    run_to_the_end(&config, &killed, "2", "--resume");
    same_rows(&whole, &killed);
}

/// Stopped by SIGINT on two threads (a checkpoint at the step it stops
/// at), continued on one: the dataset equals the uninterrupted run's.
#[test]
fn an_interrupted_run_resumed_equals_the_uninterrupted_run() {
    let tmp = tempfile::tempdir().unwrap();
    let config = checkpointed_compression(tmp.path());
    let whole = tmp.path().join("whole");
    run_to_the_end(&config, &whole, "2", "--out");

    let stopped = tmp.path().join("stopped");
    let child = start_for(&config, &stopped, "2");
    wait_for_a_checkpoint(&stopped);
    signal(&child, "INT");
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("--resume"), "{stderr}");
    run_to_the_end(&config, &stopped, "1", "--resume");
    same_rows(&whole, &stopped);
}
