//! A run whose ball-ball pairing chooses the six-DOF frame: the same
//! contact Parquet on one and two threads, and the six displacement
//! columns filled for that pairing's contacts only.

use std::path::{Path, PathBuf};
use std::process::Command;
use talus_host::fixtures::workspace_root;

/// Balls dropped into a box with spin: ball-ball contacts carry their
/// frame by the six-DOF update (with the no-ratchet branch vectors),
/// ball-facet contacts by the default one.
fn config() -> String {
    let pairing = |groups: &str, extra: &str| {
        format!(
            "[[models]]\nmodel = \"linear\"\ngroups = {groups}\n{extra}\
             properties = {{ kn = 1.0e5, ks = 2.857e4, fric = 0.5, dp_nratio = 0.2 }}\n"
        )
    };
    format!(
        "[run]\nseed = 5\nsteps = 300\ndt = \"auto\"\ngravity = [0.0, 0.0, -9.81]\n{}{}{BALLS_AND_BOX}",
        pairing("[\"*\", \"*\"]", ""),
        pairing(
            "[\"grain\", \"grain\"]",
            "frame = \"six_dof\"\nno_ratchet = true\n"
        ),
    )
}

const BALLS_AND_BOX: &str = r#"
[[balls]]
kind = "random"
group = "grain"
count = 400
radius = [0.0009, 0.0011]
density = 2500.0
velocity = [-0.3, -0.2, -2.0]
spin = [40.0, -25.0, 10.0]
region = { min = [0.0, 0.0, 0.0], max = [0.02, 0.02, 0.03] }

[[walls]]
name = "box"
kind = "box"
group = "box"
min = [0.0002, 0.0002, 0.0002]
max = [0.0198, 0.0198, 0.05]
open = ["+z"]

[output]
contacts = 50
bodies = 0
walls = 0
part_seconds = 3600.0
"#;

/// Runs the config on `threads` threads into `dir/name`; returns the
/// output folder.
fn run(dir: &Path, threads: &str, name: &str) -> PathBuf {
    let cfg = dir.join("frame.toml");
    std::fs::write(&cfg, config()).unwrap();
    let out = dir.join(name);
    let o = Command::new(env!("CARGO_BIN_EXE_talus"))
        .args([
            "run",
            cfg.to_str().unwrap(),
            "--threads",
            threads,
            "--quiet",
        ])
        .args(["--out", out.to_str().unwrap()])
        .current_dir(workspace_root())
        .output()
        .expect("the talus binary runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// The bytes of every contact part of a run, in name order.
fn contact_parts(out: &Path) -> Vec<Vec<u8>> {
    let mut parts: Vec<PathBuf> = std::fs::read_dir(out.join("contacts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    parts.sort();
    parts.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

#[test]
fn a_six_dof_pairing_writes_its_displacements_and_the_same_bits_on_two_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let one = run(tmp.path(), "1", "t1");
    let two = run(tmp.path(), "2", "t2");
    assert!(
        contact_parts(&one) == contact_parts(&two),
        "contact Parquet differs between 1 and 2 threads"
    );
    // Ball-ball rows carry the displacements (u_n is the gap, and the
    // spinning balls twist and bend), ball-facet rows carry nulls.
    let script = "import sys, polars as pl\n\
        c = pl.read_parquet(sys.argv[1] + '/contacts/*.parquet')\n\
        bb = c.filter(pl.col('kind') == 'ball-ball')\n\
        bf = c.filter(pl.col('kind') == 'ball-facet')\n\
        cols = ['u_n', 'u_s', 'u_t', 'phi_t', 'phi_bs', 'phi_bt']\n\
        assert bb.height > 100 and bf.height > 10, (bb.height, bf.height)\n\
        assert all(bb[k].null_count() == 0 for k in cols)\n\
        assert all(bf[k].null_count() == bf.height for k in cols)\n\
        assert (bb['u_n'] == bb['gap']).all()\n\
        act = bb.filter(pl.col('active'))\n\
        assert act.height > 10 and act['phi_t'].abs().max() > 0 and act['phi_bs'].abs().max() > 0\n\
        print('ok')\n";
    let o = Command::new("python3")
        .args(["-c", script])
        .arg(&one)
        .output()
        .expect("python3 runs");
    assert!(
        String::from_utf8_lossy(&o.stdout).trim() == "ok",
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
