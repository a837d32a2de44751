//! The promise that matters to users: polars, pandas and pyarrow read the
//! dataset as written. Writes a small multi-part dataset, then runs
//! `tools/py/check_dataset.py` on it.
//!
//! This test needs `python3` with polars, pandas and pyarrow. It fails
//! (rather than skipping) when they are missing, so that CI cannot pass
//! without exercising the Python readers.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{bodies_frame, contacts_frame, crashed_dataset, scratch_dir, walls_frame};
use talus_output::{DatasetWriter, Table, WriterOptions};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root exists")
}

fn python_has(modules: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {modules}")])
        .output()
        .is_ok_and(|out| out.status.success())
}

#[test]
fn python_readers_agree_on_the_dataset() {
    assert!(
        python_has("polars, pandas, pyarrow"),
        "python3 with polars, pandas and pyarrow is required for this test: \
         run `pip install polars pandas pyarrow` (and matplotlib for the plot check)"
    );

    let dir = scratch_dir("python");
    let options = WriterOptions {
        // Small parts so that the readers have to stitch several files,
        // each with its own string dictionaries.
        max_rows_per_part: 40,
        ..WriterOptions::default()
    };
    let writer = DatasetWriter::create(&dir, options).unwrap();
    writer
        .write_run_json(&serde_json::json!({
            "talus": env!("CARGO_PKG_VERSION"),
            "units": "SI",
        }))
        .unwrap();
    for (i, step) in (0..500).step_by(50).enumerate() {
        writer
            .send(Table::Contacts, contacts_frame(step, 9 + i))
            .unwrap();
        writer.send(Table::Bodies, bodies_frame(step, 6)).unwrap();
        writer.send(Table::Walls, walls_frame(step)).unwrap();
    }
    let summary = writer.finish().unwrap();
    assert!(summary.contacts.parts.len() > 1);

    let png = dir.join("contacts.png");
    let with_plot = python_has("matplotlib");
    let output = run_check(&dir, with_plot.then_some(png.as_path()));
    assert!(
        output.status.success(),
        "check_dataset.py failed ({}):\n{}",
        output.status,
        describe(&output)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    let expected_rows = format!("contacts: {} rows", summary.contacts.rows);
    assert!(
        stdout.contains(&expected_rows),
        "unexpected summary: {stdout}"
    );
    if with_plot {
        assert!(
            png.is_file(),
            "plot_contacts did not write {}",
            png.display()
        );
    }

    // The checker is not vacuous: a broken part file makes it fail.
    std::fs::write(dir.join("contacts/part-99999.parquet"), b"not parquet").unwrap();
    let output = run_check(&dir, None);
    assert!(
        !output.status.success(),
        "check_dataset.py accepted a corrupt part:\n{}",
        describe(&output)
    );
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("FAILED"),
        "{}",
        describe(&output)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A run without any contact still leaves a contacts table that polars
/// and pandas read as zero rows with the right columns.
#[test]
fn python_readers_accept_a_table_without_rows() {
    assert!(
        python_has("polars, pandas, pyarrow"),
        "python3 with polars, pandas and pyarrow is required for this test: \
         run `pip install polars pandas pyarrow`"
    );
    let dir = scratch_dir("python-empty");
    let writer = DatasetWriter::create(&dir, WriterOptions::default()).unwrap();
    for step in [0, 100] {
        writer
            .send(Table::Contacts, contacts_frame(step, 0))
            .unwrap();
        writer.send(Table::Bodies, bodies_frame(step, 3)).unwrap();
    }
    writer.finish().unwrap();
    let output = run_check(&dir, None);
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("contacts: 0 rows, 1 parts, 11 columns"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// After a crash, the part in flight is a hidden `.tmp` file that neither
/// the polars glob nor pandas' folder reader picks up.
#[test]
fn python_readers_skip_the_part_in_flight_after_a_crash() {
    assert!(
        python_has("polars, pandas, pyarrow"),
        "python3 with polars, pandas and pyarrow is required for this test: \
         run `pip install polars pandas pyarrow`"
    );
    let dir = crashed_dataset("python-crash");
    let output = run_check(&dir, None);
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("contacts: 40000 rows, 4 parts"), "{stdout}");
    // Best effort: the forgotten writer thread still holds the .tmp open.
    let _ = std::fs::remove_dir_all(&dir);
}

fn run_check(dir: &Path, plot: Option<&Path>) -> Output {
    let root = workspace_root();
    let mut command = Command::new("python3");
    command.arg(root.join("tools/py/check_dataset.py")).arg(dir);
    if let Some(png) = plot {
        command.arg("--plot").arg(png);
    }
    command
        .current_dir(&root)
        .output()
        .expect("failed to run python3")
}

fn describe(output: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
