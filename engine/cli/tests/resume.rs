//! A simulation restored from a checkpoint continues to the same bits as
//! the run it was taken from, on one thread or two: the example configs
//! (servo walls, bonds that break, blocks, clumps) checkpointed part way.

use std::path::Path;

use talus_core::checkpoint::Checkpoint;
use talus_core::Simulation;
use talus_host::fixtures::workspace_root;

fn build(config: &Path) -> (Simulation, String) {
    let (cfg, reg) = talus_cli::load(config).expect("the example loads");
    let mut sim = talus_cli::scene::build(&cfg, &reg).expect("the scene builds");
    sim.prepare().expect("the scene prepares");
    (sim, cfg.text.clone())
}

fn cycles(sim: &mut Simulation, to: u64, breaks: &mut Vec<String>) {
    while sim.step < to {
        sim.cycle().expect("a cycle");
        for b in sim.take_bond_breaks() {
            breaks.push(format!("{b:?}"));
        }
    }
}

/// Every body, wall and contact value the output can show, as bits.
fn fingerprint(sim: &mut Simulation) -> Vec<u64> {
    let snap = sim.snapshot();
    let mut bits = vec![snap.step(), snap.time().to_bits()];
    let v = |bits: &mut Vec<u64>, v: talus_core::Vec3| {
        bits.extend([v.x.to_bits(), v.y.to_bits(), v.z.to_bits()]);
    };
    for b in snap.bodies() {
        bits.push(b.id);
        for x in [b.pos, b.vel, b.spin, b.force, b.moment] {
            v(&mut bits, x);
        }
        bits.extend(b.orientation.to_array().map(f64::to_bits));
    }
    for w in snap.walls() {
        for x in [w.centre, w.velocity, w.force, w.moment] {
            v(&mut bits, x);
        }
    }
    for c in snap.contacts() {
        bits.extend([c.id, u64::from(c.active), c.gap.to_bits()]);
        for x in [c.xc, c.n, c.force, c.moment] {
            v(&mut bits, x);
        }
        bits.extend(c.state.iter().map(|s| s.to_bits()));
    }
    bits
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

/// Runs `config` to `total` steps on one thread; again to `at`,
/// checkpointed there, restored into a fresh simulation and run on to
/// `total` on two threads; the two must agree bit for bit, and on the
/// bonds that broke after `at`.
fn resumes_bit_for_bit(config: &str, at: u64, total: u64) {
    let path = workspace_root().join(config);
    let (reference, reference_breaks) = pool(1).install(|| {
        let (mut sim, _) = build(&path);
        let mut breaks = Vec::new();
        cycles(&mut sim, total, &mut breaks);
        (fingerprint(&mut sim), breaks)
    });
    let (bytes, before) = pool(1).install(|| {
        let (mut sim, tag) = build(&path);
        let mut breaks = Vec::new();
        cycles(&mut sim, at, &mut breaks);
        assert!(sim.n_contacts() > 0, "{config}: no contact by step {at}");
        (sim.checkpoint(&tag), breaks.len())
    });
    let (resumed, resumed_breaks) = pool(2).install(|| {
        let (mut sim, tag) = build(&path);
        let checkpoint = Checkpoint::read(&bytes).expect("the checkpoint reads");
        assert_eq!(checkpoint.tag(), tag);
        assert_eq!(checkpoint.step(), at);
        sim.restore(checkpoint).expect("the checkpoint fits");
        let mut breaks = Vec::new();
        cycles(&mut sim, total, &mut breaks);
        (fingerprint(&mut sim), breaks)
    });
    assert_eq!(
        resumed_breaks[..],
        reference_breaks[before..],
        "{config}: breaks"
    );
    assert!(
        resumed == reference,
        "{config}: the resumed run differs from the uninterrupted one"
    );
}

#[test]
fn servo_compression_resumes_bit_for_bit() {
    resumes_bit_for_bit("configs/compress.toml", 3000, 3600);
}

#[test]
fn bonded_disc_resumes_bit_for_bit_breaks_included() {
    resumes_bit_for_bit("configs/brazilian.toml", 400, 700);
}

#[test]
fn blocks_resume_bit_for_bit() {
    resumes_bit_for_bit("configs/blocks.toml", 1500, 1800);
}

/// Clumps carry their pose and angular momentum in the checkpoint, their
/// pebbles' rows among the balls.
#[test]
fn clumps_resume_bit_for_bit() {
    resumes_bit_for_bit("configs/clumps.toml", 2500, 3000);
}

/// Blocks and clumps on a floor under a cell periodic at its sides: the
/// floor as cut to fit the cell, its seams joined, comes back from the
/// checkpoint as it was written.
#[test]
fn a_bed_on_a_floor_in_a_periodic_cell_resumes_bit_for_bit() {
    resumes_bit_for_bit("configs/periodic_pour.toml", 2500, 3000);
}

/// Bonded block contacts carry their plane (and their contact area at
/// bonding) in the store: a checkpoint taken while they hold resumes to
/// the same bits, and to the same breaks after it.
#[test]
fn bonded_blocks_resume_bit_for_bit_breaks_included() {
    resumes_bit_for_bit("configs/bonded_blocks.toml", 700, 1300);
}

#[test]
fn a_checkpoint_refuses_another_setup_and_damage() {
    let (sim, tag) = build(&workspace_root().join("configs/compress.toml"));
    let bytes = sim.checkpoint(&tag);
    let (mut other, _) = build(&workspace_root().join("configs/brazilian.toml"));
    let err = other
        .restore(Checkpoint::read(&bytes).unwrap())
        .unwrap_err();
    assert!(err.to_string().contains("does not fit"), "{err}");
    let err = Checkpoint::read(&bytes[..bytes.len() / 2])
        .err()
        .expect("a cut checkpoint is refused");
    assert!(err.to_string().contains("damaged"), "{err}");
    let err = Checkpoint::read(b"not a checkpoint")
        .err()
        .expect("other bytes are refused");
    assert!(err.to_string().contains("marker"), "{err}");
}

/// Balls, blocks, a box and a lid that comes down on them: every pair
/// kind, contacts that part and meet again.
const MIXED: &str = r#"
[run]
steps = 600
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

[[shapes]]
name = "brick"
kind = "box"
size = [0.02, 0.03, 0.015]

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

/// Snapshots for output at every step leave the run as it is without
/// them: the planes they bring up to date are copies.
#[test]
fn recording_every_step_does_not_change_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mixed.toml");
    std::fs::write(&path, MIXED).unwrap();
    let run = |record: bool| {
        let (mut sim, _) = build(&path);
        let mut watched = 0;
        while sim.step < 600 {
            sim.cycle().expect("a cycle");
            if record {
                watched += sim.snapshot().contacts().count();
            }
        }
        (fingerprint(&mut sim), watched)
    };
    let (quiet, _) = run(false);
    let (recorded, watched) = run(true);
    assert!(watched > 0, "no contact recorded");
    assert!(quiet == recorded, "recording changed the run");
}
