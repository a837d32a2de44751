//! Part files of one table: open, append row groups, close, roll over.
//!
//! Reads: record batches of one table. Writes: `DIR/<table>/part-NNNNN.parquet`.
//! Invariant: a part is written under the hidden name
//! `.part-NNNNN.parquet.tmp` and renamed to `part-NNNNN.parquet` only after
//! its footer is written and the file is synced, so every file matching
//! `*.parquet` is a complete Parquet file, and folder readers (pyarrow
//! datasets, hence `pandas.read_parquet(folder)`), which skip names
//! starting with `.` or `_`, never open a part in flight.
//! A part never holds more than `max_rows` rows; each slice of a frame that
//! lands in a part is one row group (or more, if it exceeds the row-group
//! limit of the writer properties).

use std::fs::{self, File};
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use crate::error::{io_error, OutputError, OutputErrorKind};
use crate::frame::Table;

/// Final name of part number `index`.
pub(crate) fn part_name(index: u32) -> String {
    format!("part-{index:05}.parquet")
}

/// Name of part number `index` while it is being written.
pub(crate) fn tmp_part_name(index: u32) -> String {
    format!(".part-{index:05}.parquet.tmp")
}

/// True for the names this crate gives to part files, closed or in flight.
pub(crate) fn is_part_file(name: &str) -> bool {
    let name = name.strip_prefix('.').unwrap_or(name);
    name.starts_with("part-") && (name.ends_with(".parquet") || name.ends_with(".parquet.tmp"))
}

/// Encoded bytes a row group may hold in memory before it is written out.
const MAX_ROW_GROUP_BYTES: usize = 64 << 20;

struct OpenPart {
    writer: ArrowWriter<BufWriter<File>>,
    tmp_path: PathBuf,
    final_path: PathBuf,
    rows: usize,
}

/// Writer state of one table, owned by the background thread.
pub(crate) struct TableParts {
    table: Table,
    dir: PathBuf,
    props: WriterProperties,
    max_rows: usize,
    schema: Option<SchemaRef>,
    open: Option<OpenPart>,
    next_index: u32,
    rows: u64,
    closed: Vec<PathBuf>,
}

fn parquet_error(path: &Path, source: parquet::errors::ParquetError) -> OutputError {
    OutputErrorKind::Parquet {
        path: path.to_owned(),
        source,
    }
    .into()
}

impl TableParts {
    pub(crate) fn new(
        table: Table,
        dir: PathBuf,
        props: WriterProperties,
        max_rows: usize,
    ) -> Self {
        Self {
            table,
            dir,
            props,
            max_rows,
            schema: None,
            open: None,
            next_index: 0,
            rows: 0,
            closed: Vec::new(),
        }
    }

    pub(crate) fn table(&self) -> Table {
        self.table
    }

    /// The schema of the table, once its first frame has been seen.
    pub(crate) fn schema(&self) -> Option<&SchemaRef> {
        self.schema.as_ref()
    }

    /// Sets the table's schema, and with it the encodings: dictionary
    /// pages only for the label columns (Arrow dictionaries). Simulation
    /// numbers rarely repeat, so a dictionary of them is built only to be
    /// thrown away when it grows too large, at a cost that dominated the
    /// writer thread; zstd takes what repetition there is.
    pub(crate) fn set_schema(&mut self, schema: SchemaRef) {
        let mut props = self
            .props
            .clone()
            .into_builder()
            .set_dictionary_enabled(false);
        for field in schema.fields() {
            if matches!(field.data_type(), DataType::Dictionary(..)) {
                props = props
                    .set_column_dictionary_enabled(ColumnPath::from(field.name().as_str()), true);
            }
        }
        self.props = props.build();
        self.schema = Some(schema);
    }

    /// Closed parts, those kept from before a resume included.
    pub(crate) fn closed_count(&self) -> u32 {
        self.next_index - u32::from(self.open.is_some())
    }

    /// Keeps the first `count` parts of the table's folder, as a
    /// checkpoint found them, and removes every other part file (later
    /// parts, parts left in flight); new parts are numbered from `count`.
    /// The rows of the kept parts are counted from their footers.
    pub(crate) fn keep_first(&mut self, count: u32) -> Result<(), OutputError> {
        fs::create_dir_all(&self.dir).map_err(|e| io_error("create folder", &self.dir, e))?;
        let entries = fs::read_dir(&self.dir).map_err(|e| io_error("list folder", &self.dir, e))?;
        let mut kept = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| io_error("list folder", &self.dir, e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str().filter(|n| is_part_file(n)) else {
                continue;
            };
            let index = name
                .strip_prefix("part-")
                .and_then(|n| n.strip_suffix(".parquet"))
                .and_then(|n| n.parse::<u32>().ok());
            match index {
                Some(k) if k < count => kept.push((k, entry.path())),
                _ => fs::remove_file(entry.path())
                    .map_err(|e| io_error("remove part file", entry.path(), e))?,
            }
        }
        kept.sort();
        if kept.iter().map(|(k, _)| *k).ne(0..count) {
            return Err(OutputErrorKind::MissingParts {
                dir: self.dir.clone(),
                expected: count,
                found: kept.len() as u32,
            }
            .into());
        }
        for (_, path) in &kept {
            let file = File::open(path).map_err(|e| io_error("open part file", path, e))?;
            let reader = parquet::file::reader::SerializedFileReader::new(file)
                .map_err(|e| parquet_error(path, e))?;
            use parquet::file::reader::FileReader;
            self.rows += reader.metadata().file_metadata().num_rows() as u64;
        }
        self.closed = kept.into_iter().map(|(_, p)| p).collect();
        self.next_index = count;
        Ok(())
    }

    /// Rows written so far (in closed and open parts).
    pub(crate) fn rows(&self) -> u64 {
        self.rows
    }

    /// Paths of the closed parts, in order.
    pub(crate) fn closed_parts(&self) -> &[PathBuf] {
        &self.closed
    }

    fn open_part(&mut self) -> Result<&mut OpenPart, OutputError> {
        if self.open.is_none() {
            let schema = self
                .schema
                .clone()
                .expect("the schema is set before the first part is opened");
            let final_path = self.dir.join(part_name(self.next_index));
            let tmp_path = self.dir.join(tmp_part_name(self.next_index));
            // `create_new` so that a second writer aimed at the same folder
            // fails instead of interleaving bytes with this one.
            let file = File::options()
                .write(true)
                .create_new(true)
                .open(&tmp_path)
                .map_err(|e| io_error("create part file", &tmp_path, e))?;
            let writer =
                ArrowWriter::try_new(BufWriter::new(file), schema, Some(self.props.clone()))
                    .map_err(|e| parquet_error(&tmp_path, e))?;
            self.next_index += 1;
            self.open = Some(OpenPart {
                writer,
                tmp_path,
                final_path,
                rows: 0,
            });
        }
        Ok(self.open.as_mut().expect("opened above"))
    }

    /// Appends `batch`, closing and opening parts so that none exceeds
    /// `max_rows`. On a Parquet or I/O failure the part in flight is
    /// discarded (its `.tmp` file removed): its state can no longer be
    /// trusted, while the parts closed before it stay valid.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<(), OutputError> {
        let n_rows = batch.num_rows();
        let mut offset = 0;
        while offset < n_rows {
            let max_rows = self.max_rows;
            let part = self.open_part()?;
            let take = (n_rows - offset).min(max_rows - part.rows);
            let slice = batch.slice(offset, take);
            // Rows stay in the writer's row group until it is full (or too
            // large in memory) or the part closes: one row group per frame
            // would pay the codec's set-up for every column of every frame.
            let written = part.writer.write(&slice).and_then(|()| {
                if part.writer.in_progress_size() > MAX_ROW_GROUP_BYTES {
                    part.writer.flush()
                } else {
                    Ok(())
                }
            });
            if let Err(source) = written {
                let path = part.tmp_path.clone();
                self.discard();
                return Err(parquet_error(&path, source));
            }
            part.rows += take;
            let full = part.rows >= max_rows;
            self.rows += take as u64;
            offset += take;
            if full {
                self.close()?;
            }
        }
        Ok(())
    }

    /// Closes the part in flight, if any: writes the footer, syncs the file
    /// and renames it to its final name.
    pub(crate) fn close(&mut self) -> Result<(), OutputError> {
        let Some(part) = self.open.take() else {
            return Ok(());
        };
        let OpenPart {
            writer,
            tmp_path,
            final_path,
            ..
        } = part;
        let result = (|| {
            let buffered = writer
                .into_inner()
                .map_err(|e| parquet_error(&tmp_path, e))?;
            let file = buffered
                .into_inner()
                .map_err(|e| io_error("flush part file", &tmp_path, e.into_error()))?;
            file.sync_all()
                .map_err(|e| io_error("sync part file", &tmp_path, e))?;
            drop(file);
            fs::rename(&tmp_path, &final_path)
                .map_err(|e| io_error("rename part file", &tmp_path, e))
        })();
        match result {
            Ok(()) => {
                self.closed.push(final_path);
                Ok(())
            }
            Err(err) => {
                // Best effort: a part that failed to close is not valid and
                // must not be mistaken for data later.
                let _ = fs::remove_file(&tmp_path);
                Err(err)
            }
        }
    }

    /// Drops the part in flight without finishing it and removes its file.
    pub(crate) fn discard(&mut self) {
        if let Some(part) = self.open.take() {
            let tmp_path = part.tmp_path.clone();
            drop(part);
            let _ = fs::remove_file(tmp_path);
        }
    }

    /// Closes the part in flight; a table that received frames but no row
    /// gets one empty part holding its schema, so that readers globbing the
    /// folder find the columns instead of no file at all.
    pub(crate) fn finish(&mut self) -> Result<(), OutputError> {
        if self.open.is_none() && self.closed.is_empty() && self.schema.is_some() {
            self.open_part()?;
        }
        self.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_names_sort_and_hide_parts_in_flight() {
        assert_eq!(part_name(0), "part-00000.parquet");
        assert_eq!(part_name(12345), "part-12345.parquet");
        assert_eq!(tmp_part_name(7), ".part-00007.parquet.tmp");
        for name in [
            part_name(3),
            tmp_part_name(3),
            "part-00003.parquet.tmp".to_owned(),
        ] {
            assert!(is_part_file(&name), "{name}");
        }
        for name in ["run.json", "notes.parquet", ".hidden", "part-1.csv"] {
            assert!(!is_part_file(name), "{name}");
        }
    }
}
