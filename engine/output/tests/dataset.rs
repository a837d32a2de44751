//! Dataset-level behaviour of `DatasetWriter`, checked by reading the files
//! back with the parquet crate's arrow reader.

mod common;

use std::fs;
use std::path::Path;

use arrow::array::{
    Array, AsArray, BooleanArray, DictionaryArray, Float64Array, Int64Array, StringArray,
    UInt32Array, UInt64Array,
};
use arrow::datatypes::{DataType, Int32Type};
use common::{
    bodies_frame, contacts_frame, crashed_dataset, files_ending, read_parquet, scratch_dir,
    walls_frame,
};
use talus_output::{
    Column, Compression, DatasetWriter, Frame, OutputErrorKind, Table, WriterOptions, DOC_KEY,
    TABLE_KEY, UNIT_KEY,
};

fn options(max_rows_per_part: usize) -> WriterOptions {
    WriterOptions {
        max_rows_per_part,
        ..WriterOptions::default()
    }
}

fn total_rows(dir: &Path) -> usize {
    files_ending(dir, ".parquet")
        .iter()
        .map(|path| read_parquet(path).1.num_rows())
        .sum()
}

#[test]
fn round_trip_keeps_values_types_and_metadata() {
    let dir = scratch_dir("round-trip");
    let writer = DatasetWriter::create(&dir, WriterOptions::default()).unwrap();
    let first = contacts_frame(10, 5);
    let second = contacts_frame(20, 4);
    writer.send(Table::Contacts, first.clone()).unwrap();
    writer.send(Table::Contacts, second.clone()).unwrap();
    let summary = writer.finish().unwrap();
    assert_eq!(summary.contacts.rows, 9);
    assert_eq!(summary.contacts.parts.len(), 1);
    assert!(summary.bodies.parts.is_empty());

    let part = dir.join("contacts").join("part-00000.parquet");
    assert_eq!(summary.contacts.parts, vec![part.clone()]);
    let (schema, batch) = read_parquet(&part);
    assert_eq!(batch.num_rows(), 9);
    assert_eq!(
        schema.metadata().get(TABLE_KEY).map(String::as_str),
        Some("contacts")
    );

    let expected_types = [
        ("step", DataType::UInt64, false),
        ("time", DataType::Float64, false),
        ("id", DataType::UInt64, false),
        ("end1_piece", DataType::UInt32, false),
        ("end2_piece", DataType::Int64, false),
        (
            "end2_kind",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            false,
        ),
        (
            "model",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            false,
        ),
        ("active", DataType::Boolean, false),
        ("gap", DataType::Float64, false),
        ("f_n", DataType::Float64, false),
        ("slip", DataType::Float64, true),
    ];
    assert_eq!(schema.fields().len(), expected_types.len());
    for ((name, data_type, nullable), field) in expected_types.iter().zip(schema.fields()) {
        assert_eq!(field.name(), name);
        assert_eq!(field.data_type(), data_type, "type of {name}");
        assert_eq!(field.is_nullable(), *nullable, "nullability of {name}");
    }
    for (frame_field, field) in first.fields.iter().zip(schema.fields()) {
        assert_eq!(
            field.metadata().get(UNIT_KEY).map(String::as_str),
            Some(&*frame_field.unit)
        );
        assert_eq!(
            field.metadata().get(DOC_KEY).map(String::as_str),
            Some(&*frame_field.doc)
        );
    }

    // Values: the file holds the first frame followed by the second.
    let expect = |name: &str| -> Column {
        let idx = first.fields.iter().position(|f| f.name == name).unwrap();
        match (&first.columns[idx], &second.columns[idx]) {
            (Column::U64(a), Column::U64(b)) => Column::U64([a.clone(), b.clone()].concat()),
            (Column::U32(a), Column::U32(b)) => Column::U32([a.clone(), b.clone()].concat()),
            (Column::I64(a), Column::I64(b)) => Column::I64([a.clone(), b.clone()].concat()),
            (Column::F64(a), Column::F64(b)) => Column::F64([a.clone(), b.clone()].concat()),
            (Column::OptF64(a), Column::OptF64(b)) => {
                Column::OptF64([a.clone(), b.clone()].concat())
            }
            (Column::Bool(a), Column::Bool(b)) => Column::Bool([a.clone(), b.clone()].concat()),
            (Column::Str(a), Column::Str(b)) => Column::Str([a.clone(), b.clone()].concat()),
            _ => unreachable!(),
        }
    };
    let col = |name: &str| batch.column_by_name(name).unwrap().clone();

    let step = col("step");
    let step = step.as_any().downcast_ref::<UInt64Array>().unwrap();
    assert_eq!(Column::U64(step.values().to_vec()), expect("step"));
    let piece = col("end1_piece");
    let piece = piece.as_any().downcast_ref::<UInt32Array>().unwrap();
    assert_eq!(Column::U32(piece.values().to_vec()), expect("end1_piece"));
    let piece2 = col("end2_piece");
    let piece2 = piece2.as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(Column::I64(piece2.values().to_vec()), expect("end2_piece"));
    for name in ["time", "gap", "f_n"] {
        let values = col(name);
        let values = values.as_any().downcast_ref::<Float64Array>().unwrap();
        // Bit-exact: Parquet stores doubles as they are.
        let got: Vec<u64> = values.values().iter().map(|v| v.to_bits()).collect();
        let Column::F64(want) = expect(name) else {
            unreachable!()
        };
        let want: Vec<u64> = want.iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, want, "column {name}");
    }
    let slip = col("slip");
    let slip = slip.as_any().downcast_ref::<Float64Array>().unwrap();
    assert!(slip.null_count() > 0);
    assert_eq!(Column::OptF64(slip.iter().collect()), expect("slip"));
    let active = col("active");
    let active = active.as_any().downcast_ref::<BooleanArray>().unwrap();
    assert_eq!(
        Column::Bool(active.iter().map(Option::unwrap).collect()),
        expect("active")
    );
    for name in ["end2_kind", "model"] {
        let labels = col(name);
        let labels = labels
            .as_any()
            .downcast_ref::<DictionaryArray<Int32Type>>()
            .unwrap();
        let dict: &StringArray = labels.values().as_string();
        let got: Vec<String> = labels
            .keys()
            .values()
            .iter()
            .map(|&k| dict.value(k as usize).to_owned())
            .collect();
        assert_eq!(Column::Str(got), expect(name), "column {name}");
    }

    assert!(files_ending(&dir.join("contacts"), ".tmp").is_empty());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn parts_roll_over_at_max_rows() {
    let dir = scratch_dir("rollover");
    let writer = DatasetWriter::create(&dir, options(10)).unwrap();
    // 5 frames of 7 rows, then one frame larger than a whole part.
    for step in 0..5 {
        writer
            .send(Table::Contacts, contacts_frame(step, 7))
            .unwrap();
    }
    writer.send(Table::Contacts, contacts_frame(5, 25)).unwrap();
    let summary = writer.finish().unwrap();

    let parts = files_ending(&dir.join("contacts"), ".parquet");
    assert_eq!(summary.contacts.parts, parts);
    assert_eq!(summary.contacts.rows, 60);
    let rows: Vec<usize> = parts.iter().map(|p| read_parquet(p).1.num_rows()).collect();
    assert_eq!(rows, vec![10; 6]);
    let names: Vec<String> = parts
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names[0], "part-00000.parquet");
    assert_eq!(names[5], "part-00005.parquet");

    // Concatenated in name order, the parts give the rows in send order.
    let steps: Vec<u64> = parts
        .iter()
        .flat_map(|p| {
            let batch = read_parquet(p).1;
            let steps = batch.column_by_name("step").unwrap();
            steps
                .as_any()
                .downcast_ref::<UInt64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect();
    let expected: Vec<u64> = (0..5u64).flat_map(|s| [s; 7]).chain([5u64; 25]).collect();
    assert_eq!(steps, expected);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn dropped_writer_leaves_only_closed_parts() {
    let dir = scratch_dir("drop");
    {
        let writer = DatasetWriter::create(&dir, options(10)).unwrap();
        for step in 0..4 {
            writer
                .send(Table::Contacts, contacts_frame(step, 7))
                .unwrap();
            writer.send(Table::Bodies, bodies_frame(step, 3)).unwrap();
        }
        // Simulates a run that stops on an error: no finish.
        drop(writer);
    }
    for table in Table::ALL {
        assert!(
            files_ending(&dir.join(table.dir_name()), ".tmp").is_empty(),
            "a .tmp file was left in {table}"
        );
    }
    assert_eq!(total_rows(&dir.join("contacts")), 28);
    assert_eq!(total_rows(&dir.join("bodies")), 12);
    assert!(files_ending(&dir.join("walls"), ".parquet").is_empty());
    fs::remove_dir_all(&dir).unwrap();
}

/// A process killed mid-run never gets to close its parts (see
/// `crashed_dataset`). Readers globbing `*.parquet` must only ever see
/// complete files; the part in flight is a hidden `.tmp` file.
#[test]
fn crash_leaves_hidden_tmp_part_and_valid_parquet_files() {
    let dir = crashed_dataset("crash");
    let contacts = dir.join("contacts");
    let tmp = files_ending(&contacts, ".tmp");
    assert_eq!(tmp.len(), 1, "expected the part in flight as a .tmp file");
    assert!(tmp[0].ends_with(".part-00004.parquet.tmp"));
    assert_eq!(total_rows(&contacts), 40_000);

    // A new run in the same folder sees the leftovers as a dataset.
    let err = DatasetWriter::create(&dir, WriterOptions::default()).unwrap_err();
    assert!(matches!(err.kind(), OutputErrorKind::DatasetExists { .. }));
    // Best effort: the forgotten writer thread still holds the .tmp open.
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn schema_change_is_refused_and_names_the_column() {
    let dir = scratch_dir("schema");
    let writer = DatasetWriter::create(&dir, WriterOptions::default()).unwrap();
    writer.send(Table::Contacts, contacts_frame(0, 3)).unwrap();

    let mut changed = contacts_frame(1, 3);
    let idx = changed.fields.iter().position(|f| f.name == "f_n").unwrap();
    changed.columns[idx] = Column::OptF64(vec![Some(1.0); 3]);
    let err = writer.send(Table::Contacts, changed).unwrap_err();
    match err.kind() {
        OutputErrorKind::SchemaMismatch { table, column, .. } => {
            assert_eq!(*table, Table::Contacts);
            assert_eq!(column, "f_n");
        }
        other => panic!("unexpected error: {other}"),
    }
    let message = err.to_string();
    assert!(
        message.contains("contacts") && message.contains("`f_n`"),
        "{message}"
    );

    // Tables are independent, and the writer keeps working.
    writer.send(Table::Bodies, bodies_frame(0, 2)).unwrap();
    writer.send(Table::Contacts, contacts_frame(2, 3)).unwrap();
    let summary = writer.finish().unwrap();
    assert_eq!(summary.contacts.rows, 6);
    assert_eq!(summary.bodies.rows, 2);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn malformed_frames_are_refused() {
    let dir = scratch_dir("malformed");
    let writer = DatasetWriter::create(&dir, WriterOptions::default()).unwrap();
    let ragged = Frame::new()
        .push("a", "", "", Column::U64(vec![1, 2]))
        .push("b", "", "", Column::Bool(vec![true]));
    let err = writer.send(Table::Walls, ragged).unwrap_err();
    assert!(matches!(
        err.kind(),
        OutputErrorKind::InvalidFrame {
            table: Table::Walls,
            ..
        }
    ));
    assert!(err.to_string().contains("`b` has 1 rows"), "{err}");
    writer.finish().unwrap();
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn existing_dataset_is_refused_unless_overwrite() {
    let dir = scratch_dir("overwrite");
    let writer = DatasetWriter::create(&dir, options(5)).unwrap();
    writer
        .write_run_json(&serde_json::json!({"run": 1}))
        .unwrap();
    writer.send(Table::Contacts, contacts_frame(0, 12)).unwrap();
    assert_eq!(writer.finish().unwrap().contacts.parts.len(), 3);
    fs::write(dir.join("notes.txt"), "kept").unwrap();

    let err = DatasetWriter::create(&dir, WriterOptions::default()).unwrap_err();
    assert!(matches!(err.kind(), OutputErrorKind::DatasetExists { .. }));
    assert!(
        err.to_string().contains(&dir.display().to_string()),
        "{err}"
    );

    let overwrite = WriterOptions {
        overwrite: true,
        ..WriterOptions::default()
    };
    let writer = DatasetWriter::create(&dir, overwrite).unwrap();
    assert!(!dir.join("run.json").exists());
    writer.send(Table::Contacts, contacts_frame(1, 2)).unwrap();
    writer.finish().unwrap();
    assert_eq!(files_ending(&dir.join("contacts"), ".parquet").len(), 1);
    assert_eq!(total_rows(&dir.join("contacts")), 2);
    assert_eq!(fs::read_to_string(dir.join("notes.txt")).unwrap(), "kept");

    // An existing folder without a dataset is simply used.
    let other = scratch_dir("overwrite-empty");
    fs::create_dir_all(&other).unwrap();
    fs::write(other.join("config.toml"), "").unwrap();
    DatasetWriter::create(&other, WriterOptions::default())
        .unwrap()
        .finish()
        .unwrap();
    fs::remove_dir_all(&dir).unwrap();
    fs::remove_dir_all(&other).unwrap();
}

#[test]
fn run_json_is_replaced_atomically() {
    let dir = scratch_dir("run-json");
    let writer = DatasetWriter::create(&dir, WriterOptions::default()).unwrap();
    writer
        .write_run_json(&serde_json::json!({"status": "running"}))
        .unwrap();
    writer
        .write_run_json(&serde_json::json!({"status": "done", "steps": 100}))
        .unwrap();
    writer.finish().unwrap();
    let text = fs::read_to_string(dir.join("run.json")).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["status"], "done");
    assert!(!dir.join(".run.json.tmp").exists());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn table_with_only_empty_frames_gets_an_empty_part() {
    let dir = scratch_dir("empty");
    let writer = DatasetWriter::create(&dir, WriterOptions::default()).unwrap();
    writer.send(Table::Contacts, contacts_frame(0, 0)).unwrap();
    writer.send(Table::Walls, walls_frame(0)).unwrap();
    let summary = writer.finish().unwrap();
    assert_eq!(summary.contacts.rows, 0);
    assert_eq!(summary.contacts.parts.len(), 1);
    let (schema, batch) = read_parquet(&summary.contacts.parts[0]);
    assert_eq!(batch.num_rows(), 0);
    assert_eq!(
        schema
            .field_with_name("gap")
            .unwrap()
            .metadata()
            .get(UNIT_KEY)
            .unwrap(),
        "m"
    );
    // A table that never received a frame has no part at all.
    assert!(summary.bodies.parts.is_empty());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn write_error_stops_the_writer_and_keeps_other_tables() {
    let dir = scratch_dir("write-error");
    let writer = DatasetWriter::create(&dir, WriterOptions::default()).unwrap();
    writer.send(Table::Bodies, bodies_frame(0, 4)).unwrap();
    // Removing the table folder makes opening the first contacts part fail.
    fs::remove_dir_all(dir.join("contacts")).unwrap();
    let mut send_error = None;
    // Frames large enough to be written as they come, not gathered.
    for step in 0..20 {
        if let Err(err) = writer.send(Table::Contacts, contacts_frame(step, 10_000)) {
            send_error = Some(err);
            break;
        }
    }
    let send_error = send_error.expect("sends kept succeeding after the writer failed");
    let OutputErrorKind::WriterFailed { source } = send_error.kind() else {
        panic!("unexpected error: {send_error}");
    };
    assert!(matches!(source.kind(), OutputErrorKind::Io { .. }));
    assert!(source.to_string().contains("contacts"), "{source}");
    drop(send_error);

    let err = writer.finish().unwrap_err();
    match err.kind() {
        OutputErrorKind::Io { action, path, .. } => {
            assert_eq!(*action, "create part file");
            assert!(path.ends_with("contacts/.part-00000.parquet.tmp"));
        }
        other => panic!("unexpected error: {other}"),
    }
    // The bodies part, in flight when the writer failed, was still closed.
    assert_eq!(total_rows(&dir.join("bodies")), 4);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_options_and_paths_are_refused() {
    let dir = scratch_dir("options");
    let zero_rows = DatasetWriter::create(&dir, options(0)).unwrap_err();
    assert!(matches!(
        zero_rows.kind(),
        OutputErrorKind::InvalidOption {
            option: "max_rows_per_part",
            ..
        }
    ));
    let level = WriterOptions {
        compression: Compression::Zstd { level: 99 },
        ..WriterOptions::default()
    };
    let err = DatasetWriter::create(&dir, level).unwrap_err();
    assert!(matches!(
        err.kind(),
        OutputErrorKind::InvalidOption {
            option: "compression",
            ..
        }
    ));

    fs::create_dir_all(dir.parent().unwrap()).unwrap();
    fs::write(&dir, "not a folder").unwrap();
    let err = DatasetWriter::create(&dir, WriterOptions::default()).unwrap_err();
    assert!(matches!(err.kind(), OutputErrorKind::NotADirectory { .. }));
    fs::remove_file(&dir).unwrap();
}

#[test]
fn uncompressed_output_reads_back() {
    let dir = scratch_dir("uncompressed");
    let plain = WriterOptions {
        compression: Compression::Uncompressed,
        ..WriterOptions::default()
    };
    let writer = DatasetWriter::create(&dir, plain).unwrap();
    writer.send(Table::Walls, walls_frame(3)).unwrap();
    let summary = writer.finish().unwrap();
    assert_eq!(read_parquet(&summary.walls.parts[0]).1.num_rows(), 2);
    fs::remove_dir_all(&dir).unwrap();
}
