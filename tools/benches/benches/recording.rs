//! The fixed cost of one recorded frame: a one-ball run (one bodies row, a
//! contacts frame with no row) recorded every step, through the whole
//! output path (snapshot, frame, checks, queue, writer thread, Parquet),
//! and the same with 2 balls in contact (one contacts row).
//!
//! One dataset stays open across the samples, as in a run: the queue to
//! the writer thread is bounded, so once it is full each send waits for
//! the writer, and the time per frame is the steady cost of the whole path
//! (the calling thread's and the writer thread's), what a frame adds to a
//! run that records every step.

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use talus_cli::record::Recorder;
use talus_core::Simulation;
use talus_output::{DatasetWriter, Table, WriterOptions};

const ONE_BALL: &str = r#"
[run]
steps = 1
dt = 1e-6
gravity = [0.0, 0.0, -9.81]

[[models]]
model = "linear"
groups = ["grain", "grain"]
properties = { kn = 1.0e4, ks = 2.857e3, fric = 0.5 }

[[balls]]
kind = "list"
group = "grain"
density = 2500.0
balls = [ { pos = [0.0, 0.0, 0.0], radius = 0.001 } ]
"#;

fn simulation(dir: &Path, text: &str) -> Simulation {
    let path = dir.join("frame.toml");
    std::fs::write(&path, text).expect("a scratch config");
    let (cfg, reg) = talus_cli::load(&path).expect("a valid config");
    let mut sim = talus_cli::scene::build(&cfg, &reg).expect("a scene");
    sim.prepare().expect("a prepared run");
    sim
}

/// Times `iters` frames of `tables` into an open dataset.
fn frames(sim: &mut Simulation, writer: &DatasetWriter, tables: &[Table], iters: u64) -> Duration {
    let recorder = Recorder::new(&sim.snapshot());
    let start = Instant::now();
    for step in 0..iters {
        let snap = sim.snapshot();
        for table in tables {
            let frame = match table {
                Table::Bodies => recorder.bodies(&snap),
                _ => recorder.contacts(&snap),
            };
            writer.send(*table, frame).expect("a frame");
        }
        writer.mark_complete(step);
    }
    start.elapsed()
}

fn recording(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("talus-bench-recording-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let mut one = simulation(&dir, ONE_BALL);
    let two_text = ONE_BALL.replace(
        "{ pos = [0.0, 0.0, 0.0], radius = 0.001 } ]",
        "{ pos = [0.0, 0.0, 0.0], radius = 0.001 }, { pos = [0.0, 0.0, 0.0019], radius = 0.001 } ]",
    );
    let mut two = simulation(&dir, &two_text);
    assert_eq!(two.n_contacts(), 1);

    let options = WriterOptions {
        overwrite: true,
        ..WriterOptions::default()
    };
    let dataset =
        |name: &str| DatasetWriter::create(dir.join(name), options.clone()).expect("a dataset");
    let (bodies, empty, contacts) = (dataset("bodies"), dataset("empty"), dataset("contacts"));
    let mut group = c.benchmark_group("frame");
    group.bench_function("bodies, 1 ball", |b| {
        b.iter_custom(|iters| frames(&mut one, &bodies, &[Table::Bodies], iters))
    });
    group.bench_function("contacts, none", |b| {
        b.iter_custom(|iters| frames(&mut one, &empty, &[Table::Contacts], iters))
    });
    group.bench_function("contacts, 1", |b| {
        b.iter_custom(|iters| frames(&mut two, &contacts, &[Table::Contacts], iters))
    });
    group.finish();
    for writer in [bodies, empty, contacts] {
        writer.finish().expect("a closed dataset");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, recording);
criterion_main!(benches);
