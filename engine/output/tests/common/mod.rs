//! Helpers shared by the integration tests: scratch folders, a synthetic
//! dataset and a Parquet reader.

#![allow(dead_code, reason = "each test target uses a different subset")]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::array::RecordBatch;
use arrow::compute::concat_batches;
use arrow::datatypes::SchemaRef;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use talus_output::{Column, DatasetWriter, Frame, Table, WriterOptions};

/// A fresh, empty path under cargo's scratch folder for integration tests.
pub fn scratch_dir(name: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("talus-output-{}-{name}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Reads a whole Parquet file with the arrow reader: its schema (with the
/// metadata restored from the embedded Arrow schema) and all its rows.
pub fn read_parquet(path: &Path) -> (SchemaRef, RecordBatch) {
    let file = File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap_or_else(|e| panic!("{} is not a valid parquet file: {e}", path.display()));
    let schema = builder.schema().clone();
    let batches: Vec<RecordBatch> = builder
        .build()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let batch = concat_batches(&schema, &batches).unwrap();
    (schema, batch)
}

/// Files in `dir` whose name ends with `suffix`, sorted.
pub fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_str().is_some_and(|p| p.ends_with(suffix)))
        .collect();
    files.sort();
    files
}

/// A contacts frame for one recorded step: `n` contacts with every column
/// type, including a nullable column and dictionary-encoded labels.
pub fn contacts_frame(step: u64, n: usize) -> Frame {
    let dt = 1e-5;
    let time = step as f64 * dt;
    let ids: Vec<u64> = (0..n as u64).collect();
    let active: Vec<bool> = (0..n).map(|i| (i + step as usize) % 3 > 0).collect();
    let gap: Vec<f64> = (0..n)
        .map(|i| {
            if active[i] {
                -1e-5 * (i as f64 + 1.0)
            } else {
                1e-4
            }
        })
        .collect();
    let f_n: Vec<f64> = (0..n)
        .map(|i| {
            if active[i] {
                1e3 * (i as f64 + 1.0) + step as f64
            } else {
                0.0
            }
        })
        .collect();
    let slip: Vec<Option<f64>> = (0..n)
        .map(|i| (i % 2 == 0).then_some(0.01 * i as f64))
        .collect();
    Frame::new()
        .push("step", "", "step number", Column::U64(vec![step; n]))
        .push("time", "s", "simulated time", Column::F64(vec![time; n]))
        .push("id", "", "contact id", Column::U64(ids))
        .push(
            "end1_piece",
            "",
            "piece index of end 1",
            Column::U32((0..n as u32).collect()),
        )
        .push(
            "end2_piece",
            "",
            "piece index of end 2 (-1 for a wall facet without piece)",
            Column::I64((0..n as i64).map(|i| i - 1).collect()),
        )
        .push(
            "end2_kind",
            "",
            "kind of end 2",
            Column::Str(
                (0..n)
                    .map(|i| if i % 4 == 0 { "wall" } else { "ball" }.to_owned())
                    .collect(),
            ),
        )
        .push(
            "model",
            "",
            "contact model name",
            Column::Str(vec!["linear".to_owned(); n]),
        )
        .push(
            "active",
            "",
            "true when the contact carries force",
            Column::Bool(active),
        )
        .push(
            "gap",
            "m",
            "contact gap; negative is overlap",
            Column::F64(gap),
        )
        .push("f_n", "N", "normal force magnitude", Column::F64(f_n))
        .push(
            "slip",
            "m",
            "accumulated slip; null when the model keeps none",
            Column::OptF64(slip),
        )
}

/// A bodies frame for one recorded step.
pub fn bodies_frame(step: u64, n: usize) -> Frame {
    Frame::new()
        .push("step", "", "step number", Column::U64(vec![step; n]))
        .push(
            "time",
            "s",
            "simulated time",
            Column::F64(vec![step as f64 * 1e-5; n]),
        )
        .push("id", "", "body id", Column::U64((0..n as u64).collect()))
        .push(
            "kind",
            "",
            "body kind",
            Column::Str(vec!["ball".to_owned(); n]),
        )
        .push(
            "x",
            "m",
            "position x",
            Column::F64((0..n).map(|i| i as f64 * 0.01).collect()),
        )
        .push("v_z", "m/s", "velocity z", Column::F64(vec![-0.1; n]))
}

/// A walls frame for one recorded step.
pub fn walls_frame(step: u64) -> Frame {
    Frame::new()
        .push("step", "", "step number", Column::U64(vec![step; 2]))
        .push(
            "time",
            "s",
            "simulated time",
            Column::F64(vec![step as f64 * 1e-5; 2]),
        )
        .push("id", "", "wall id", Column::U64(vec![0, 1]))
        .push(
            "name",
            "",
            "wall name",
            Column::Str(vec!["floor".into(), "lid".into()]),
        )
        .push("f_z", "N", "total force z", Column::F64(vec![10.0, -10.0]))
}

/// The state a killed process leaves behind: 35 contact rows sent with
/// 10-row parts, then the writer forgotten (never finished nor dropped), so
/// its thread stays blocked with the last 5 rows in a part in flight.
/// Returns once the three full parts are closed. The wait is for
/// correctness, with a generous cap; nothing is timed.
pub fn crashed_dataset(name: &str) -> PathBuf {
    let dir = scratch_dir(name);
    // Parts close when full only (no closing by age), and every frame is
    // large enough to be written as it comes rather than gathered.
    let options = WriterOptions {
        max_rows_per_part: 10_000,
        max_part_age: None,
        ..WriterOptions::default()
    };
    let writer = DatasetWriter::create(&dir, options).unwrap();
    writer
        .write_run_json(&serde_json::json!({"status": "running"}))
        .unwrap();
    for step in 0..5 {
        writer
            .send(Table::Contacts, contacts_frame(step, 9_000))
            .unwrap();
    }
    std::mem::forget(writer);
    let contacts = dir.join("contacts");
    let mut waited = 0;
    while files_ending(&contacts, ".parquet").len() < 4 {
        assert!(waited < 600, "the writer never closed four parts");
        std::thread::sleep(std::time::Duration::from_millis(100));
        waited += 1;
    }
    dir
}
