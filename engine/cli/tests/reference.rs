//! Same physics across refactors: two runs compared, column for column,
//! with outputs kept from an earlier build (`tests/reference/*/expected`).
//!
//! The cases are the settle example (3000 steps: balls raining into a
//! faceted box, reduced-mode walls) and the busy V-trough of the end-to-end
//! tests (full-mode walls, linked and proximity contacts). Every column the
//! reference has must be present with the same values for the same (step,
//! id); new columns are allowed. A change that moves these numbers on
//! purpose (new physics) must say so and write the reference again with
//! the command in `tests/reference/README.md`.

use std::path::Path;
use std::process::Command;
use talus_host::fixtures::workspace_root;

fn run_and_compare(case: &str, steps: Option<&str>, threads: &str) {
    let case_dir = workspace_root()
        .join("engine/cli/tests/reference")
        .join(case);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let config = case_dir.join("config.toml");
    let mut args = vec![
        "run".to_string(),
        config.display().to_string(),
        "--quiet".into(),
        "--threads".into(),
        threads.into(),
        "--out".into(),
        out.display().to_string(),
    ];
    if let Some(steps) = steps {
        args.extend(["--steps".to_string(), steps.to_string()]);
    }
    let o = Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(&args)
        .current_dir(&case_dir)
        .output()
        .expect("the talus binary runs");
    assert!(
        o.status.success(),
        "{case}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    compare(&case_dir.join("expected"), &out, case);
}

fn compare(expected: &Path, actual: &Path, case: &str) {
    let o = Command::new("python3")
        .arg(workspace_root().join("tools/py/compare_datasets.py"))
        .arg(expected)
        .arg(actual)
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "{case}: the outputs differ from the reference:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn settle_example_gives_the_reference_values() {
    run_and_compare("settle", Some("3000"), "2");
}

#[test]
fn full_mode_trough_gives_the_reference_values() {
    run_and_compare("trough", None, "1");
}

/// The comparison itself must see a difference: the settle reference
/// against the trough's is refused.
#[test]
fn the_comparison_refuses_another_dataset() {
    let root = workspace_root().join("engine/cli/tests/reference");
    let o = Command::new("python3")
        .arg(workspace_root().join("tools/py/compare_datasets.py"))
        .arg(root.join("settle/expected"))
        .arg(root.join("trough/expected"))
        .output()
        .expect("python3 runs");
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("rows expected"));
}

/// With a tolerance the comparison accepts what a reordered sum does (a
/// relative change of 1e-14 in one column) and still refuses a change of
/// 1e-6; without one it refuses both.
#[test]
fn the_tolerance_accepts_rounding_and_refuses_more() {
    let expected = workspace_root().join("engine/cli/tests/reference/trough/expected");
    let tmp = tempfile::tempdir().unwrap();
    let perturbed = |name: &str, factor: &str| {
        let dir = tmp.path().join(name);
        let o = Command::new("python3")
            .arg("-c")
            .arg(
                "import sys, shutil, polars as pl\n\
                 shutil.copytree(sys.argv[1], sys.argv[2])\n\
                 p = sys.argv[2] + '/contacts/part-00000.parquet'\n\
                 pl.read_parquet(p).with_columns(pl.col('f_n') * float(sys.argv[3])).write_parquet(p)",
            )
            .arg(&expected)
            .arg(&dir)
            .arg(factor)
            .output()
            .expect("python3 runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        dir
    };
    let passes = |tolerance: Option<&str>, actual: &Path| {
        let mut cmd = Command::new("python3");
        cmd.arg(workspace_root().join("tools/py/compare_datasets.py"));
        if let Some(t) = tolerance {
            cmd.args(["--tolerance", t]);
        }
        cmd.arg(&expected).arg(actual);
        cmd.output().expect("python3 runs").status.success()
    };
    let (rounding, change) = (
        perturbed("rounding", "1.00000000000001"),
        perturbed("change", "1.000001"),
    );
    assert!(!passes(None, &rounding));
    assert!(passes(Some("1e-12"), &rounding));
    assert!(!passes(Some("1e-12"), &change));
}
