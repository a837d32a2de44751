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
