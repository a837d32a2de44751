//! The dataset writer: a bounded queue in front of one background thread.
//!
//! Reads: [`Frame`]s from the simulation thread. Writes: the dataset folder
//! (`run.json` from the calling thread, part files from the background
//! thread).
//! Invariant: frames are validated and schema-checked on the calling thread,
//! so the background thread fails on I/O, not on a malformed frame; at most `queue_depth` frames
//! wait in the queue plus one being written, and [`DatasetWriter::send`]
//! blocks instead of letting the queue grow. Whatever way the writer ends
//! (finish, drop, unwinding, a write error), every part that was not broken
//! by the error is closed and renamed to its final name.

use std::fs;
use std::io::Write;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};

use parquet::basic::{Compression as ParquetCompression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::convert::{arrow_schema, record_batch};
use crate::error::{io_error, OutputError, OutputErrorKind};
use crate::frame::{Frame, Signature, Table};
use crate::part::{is_part_file, TableParts};

/// Name of the run metadata file at the top of a dataset.
pub const RUN_JSON: &str = "run.json";
/// Temporary name of `run.json` while it is written (hidden, like parts in
/// flight).
const RUN_JSON_TMP: &str = ".run.json.tmp";

/// Compression codec of the part files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// No compression: fastest to write, largest files.
    Uncompressed,
    /// Zstandard at the given level (1 to 22). Level 1 already shrinks
    /// simulation output well at a small CPU cost; higher levels trade
    /// writer time for size.
    Zstd {
        /// Compression level, 1 (fast) to 22 (small).
        level: i32,
    },
}

impl Default for Compression {
    fn default() -> Self {
        Compression::Zstd { level: 1 }
    }
}

/// Settings of a [`DatasetWriter`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterOptions {
    /// Frames that may wait between the simulation and the writer thread
    /// before [`DatasetWriter::send`] blocks. One more frame can be in the
    /// writer's hands. 0 makes every send wait until the writer takes the
    /// frame. Default 4.
    pub queue_depth: usize,
    /// Rows after which a part file is closed and a new one started
    /// (at least 1). Default 1 000 000.
    pub max_rows_per_part: usize,
    /// Codec of the part files. Default zstd level 1.
    pub compression: Compression,
    /// When the folder already holds a dataset, remove its `run.json` and
    /// the part files of its tables instead of refusing to start.
    /// Other files are left alone. Default false.
    pub overwrite: bool,
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            queue_depth: 4,
            max_rows_per_part: 1_000_000,
            compression: Compression::default(),
            overwrite: false,
        }
    }
}

/// What one table received.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableSummary {
    /// Rows written.
    pub rows: u64,
    /// Closed part files, in order.
    pub parts: Vec<PathBuf>,
}

/// What a finished [`DatasetWriter`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputSummary {
    /// The `contacts/` table.
    pub contacts: TableSummary,
    /// The `bodies/` table.
    pub bodies: TableSummary,
    /// The `walls/` table.
    pub walls: TableSummary,
    /// The `shape_vertices/` table.
    pub shape_vertices: TableSummary,
    /// The `shape_faces/` table.
    pub shape_faces: TableSummary,
    /// The `bonds/` table.
    pub bonds: TableSummary,
}

impl OutputSummary {
    /// The summary of one table.
    pub fn table(&self, table: Table) -> &TableSummary {
        match table {
            Table::Contacts => &self.contacts,
            Table::Bodies => &self.bodies,
            Table::Walls => &self.walls,
            Table::ShapeVertices => &self.shape_vertices,
            Table::ShapeFaces => &self.shape_faces,
            Table::Bonds => &self.bonds,
        }
    }
}

struct Message {
    table: Table,
    frame: Frame,
}

/// Called by the background thread before it writes each frame. Lets the
/// tests hold the writer still to observe the queue bound.
type FrameHook = Box<dyn FnMut() + Send>;

type SharedFailure = Arc<Mutex<Option<Arc<OutputError>>>>;

/// Writes a dataset folder: `run.json` plus one folder of Parquet part files
/// per [`Table`].
///
/// Frames go through a bounded queue to a single background thread that
/// encodes and writes them, so the simulation only waits on the disk when
/// the queue is full. Call [`DatasetWriter::finish`] at the end of a run to
/// learn about late write errors; dropping the writer without it still
/// closes every part properly.
pub struct DatasetWriter {
    dir: PathBuf,
    tx: Option<SyncSender<Message>>,
    thread: Option<JoinHandle<Result<OutputSummary, Arc<OutputError>>>>,
    signatures: Mutex<[Option<Signature>; Table::ALL.len()]>,
    failure: SharedFailure,
}

impl std::fmt::Debug for DatasetWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatasetWriter")
            .field("dir", &self.dir)
            .field("running", &self.thread.is_some())
            .finish_non_exhaustive()
    }
}

fn writer_properties(options: &WriterOptions) -> Result<WriterProperties, OutputError> {
    let compression = match options.compression {
        Compression::Uncompressed => ParquetCompression::UNCOMPRESSED,
        Compression::Zstd { level } => {
            let level = ZstdLevel::try_new(level).map_err(|e| OutputErrorKind::InvalidOption {
                option: "compression",
                reason: e.to_string().to_lowercase(),
            })?;
            ParquetCompression::ZSTD(level)
        }
    };
    Ok(WriterProperties::builder()
        .set_compression(compression)
        .build())
}

/// Files of a previous dataset in `dir`: `run.json` (and its temporary
/// copy) and the part files of the table folders.
fn previous_dataset_files(dir: &Path) -> Result<Vec<PathBuf>, OutputError> {
    let mut found = Vec::new();
    for name in [RUN_JSON, RUN_JSON_TMP, "run.json.tmp"] {
        let path = dir.join(name);
        if path.exists() {
            found.push(path);
        }
    }
    for table in Table::ALL {
        let table_dir = dir.join(table.dir_name());
        if !table_dir.is_dir() {
            continue;
        }
        let entries =
            fs::read_dir(&table_dir).map_err(|e| io_error("list folder", &table_dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| io_error("list folder", &table_dir, e))?;
            if entry.file_name().to_str().is_some_and(is_part_file) {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    Ok(found)
}

fn prepare_dir(dir: &Path, overwrite: bool) -> Result<(), OutputError> {
    if dir.exists() {
        if !dir.is_dir() {
            return Err(OutputErrorKind::NotADirectory {
                path: dir.to_owned(),
            }
            .into());
        }
        let previous = previous_dataset_files(dir)?;
        if let Some(first) = previous.first() {
            if !overwrite {
                return Err(OutputErrorKind::DatasetExists {
                    path: dir.to_owned(),
                    found: first.clone(),
                }
                .into());
            }
            for path in &previous {
                fs::remove_file(path).map_err(|e| io_error("remove old file", path, e))?;
            }
        }
    }
    for table in Table::ALL {
        let table_dir = dir.join(table.dir_name());
        fs::create_dir_all(&table_dir).map_err(|e| io_error("create folder", &table_dir, e))?;
    }
    Ok(())
}

impl DatasetWriter {
    /// Creates the dataset folder (and one folder per [`Table`] inside it:
    /// `contacts/`, `bodies/`, `walls/`, `shape_vertices/`, `shape_faces/`,
    /// `bonds/`) and starts the background writer.
    ///
    /// A folder that already holds a `run.json` or part files is refused
    /// with [`OutputErrorKind::DatasetExists`] unless
    /// [`WriterOptions::overwrite`] is set, in which case exactly those
    /// files are removed first. An existing folder without them is used
    /// as it is.
    pub fn create(dir: impl AsRef<Path>, options: WriterOptions) -> Result<Self, OutputError> {
        Self::create_with_hook(dir.as_ref(), options, None)
    }

    pub(crate) fn create_with_hook(
        dir: &Path,
        options: WriterOptions,
        hook: Option<FrameHook>,
    ) -> Result<Self, OutputError> {
        if options.max_rows_per_part == 0 {
            return Err(OutputErrorKind::InvalidOption {
                option: "max_rows_per_part",
                reason: "must be at least 1".to_owned(),
            }
            .into());
        }
        let props = writer_properties(&options)?;
        prepare_dir(dir, options.overwrite)?;

        let tables = Table::ALL.map(|table| {
            TableParts::new(
                table,
                dir.join(table.dir_name()),
                props.clone(),
                options.max_rows_per_part,
            )
        });
        let (tx, rx) = mpsc::sync_channel(options.queue_depth);
        let failure = SharedFailure::default();
        let background = Background {
            tables,
            hook,
            busy: None,
        };
        let thread_failure = failure.clone();
        let thread = thread::Builder::new()
            .name("talus-output".to_owned())
            .spawn(move || background.run(rx, &thread_failure))
            .map_err(|source| OutputErrorKind::Spawn { source })?;

        Ok(Self {
            dir: dir.to_owned(),
            tx: Some(tx),
            thread: Some(thread),
            signatures: Mutex::new(Table::ALL.map(|_| None)),
            failure,
        })
    }

    /// The dataset folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `DIR/run.json` (pretty-printed) atomically: the text goes to
    /// `.run.json.tmp`, is synced, then renamed over `run.json`. Call it
    /// again to replace the file (for example with end-of-run figures).
    pub fn write_run_json(&self, json: &serde_json::Value) -> Result<(), OutputError> {
        let path = self.dir.join(RUN_JSON);
        let tmp = self.dir.join(RUN_JSON_TMP);
        let mut text = serde_json::to_vec_pretty(json).map_err(|source| OutputErrorKind::Json {
            path: path.clone(),
            source,
        })?;
        text.push(b'\n');
        let mut file = fs::File::create(&tmp).map_err(|e| io_error("create", &tmp, e))?;
        file.write_all(&text)
            .and_then(|()| file.sync_all())
            .map_err(|e| io_error("write", &tmp, e))?;
        drop(file);
        fs::rename(&tmp, &path).map_err(|e| io_error("rename", &tmp, e))
    }

    /// Queues `frame` for `table`.
    ///
    /// The frame is checked here, on the calling thread: shape (one field
    /// per column, equal lengths, unique names) and schema (the same names,
    /// types, units and docs, in the same order, as the first frame sent to
    /// the table). Blocks while the queue is full. If the background writer
    /// has stopped on an error, returns [`OutputErrorKind::WriterFailed`]
    /// with that error as its source.
    pub fn send(&self, table: Table, frame: Frame) -> Result<(), OutputError> {
        self.check(table, &frame)?;
        let tx = self
            .tx
            .as_ref()
            .expect("the sender lives until finish or drop");
        tx.send(Message { table, frame })
            .map_err(|_| self.stopped_error())
    }

    /// Like [`DatasetWriter::send`] but never blocks: `Ok(false)` when the
    /// queue is full (the frame is dropped).
    #[cfg(test)]
    pub(crate) fn try_send(&self, table: Table, frame: Frame) -> Result<bool, OutputError> {
        use std::sync::mpsc::TrySendError;
        self.check(table, &frame)?;
        let tx = self
            .tx
            .as_ref()
            .expect("the sender lives until finish or drop");
        match tx.try_send(Message { table, frame }) {
            Ok(()) => Ok(true),
            Err(TrySendError::Full(_)) => Ok(false),
            Err(TrySendError::Disconnected(_)) => Err(self.stopped_error()),
        }
    }

    fn check(&self, table: Table, frame: &Frame) -> Result<(), OutputError> {
        frame.validate(table)?;
        let mut signatures = self
            .signatures
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match &signatures[table.index()] {
            Some(signature) => signature.check(table, frame),
            None => {
                signatures[table.index()] = Some(Signature::of(frame));
                Ok(())
            }
        }
    }

    fn stopped_error(&self) -> OutputError {
        let failure = self.failure.lock().unwrap_or_else(PoisonError::into_inner);
        match failure.as_ref() {
            Some(source) => OutputErrorKind::WriterFailed {
                source: source.clone(),
            }
            .into(),
            // The thread always records its error before it lets go of the
            // queue, so this is only reached if it vanished some other way.
            None => OutputErrorKind::WriterPanicked {
                message: "the writer thread ended without reporting an error".to_owned(),
            }
            .into(),
        }
    }

    /// Writes the frames still queued, closes every part and stops the
    /// background thread. Returns what each table received, or the first
    /// error the background writer met.
    pub fn finish(mut self) -> Result<OutputSummary, OutputError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<OutputSummary, OutputError> {
        // Dropping the sender is the signal to drain the queue and close.
        drop(self.tx.take());
        let Some(thread) = self.thread.take() else {
            return Ok(OutputSummary::default());
        };
        match thread.join() {
            Ok(Ok(summary)) => Ok(summary),
            Ok(Err(error)) => {
                drop(
                    self.failure
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .take(),
                );
                Err(Arc::try_unwrap(error)
                    .unwrap_or_else(|source| OutputErrorKind::WriterFailed { source }.into()))
            }
            Err(payload) => Err(OutputErrorKind::WriterPanicked {
                message: panic_message(payload.as_ref()),
            }
            .into()),
        }
    }
}

impl Drop for DatasetWriter {
    /// Drains the queue and closes every part, so that a run stopped by an
    /// error (or a panic) still leaves a readable dataset. Errors are
    /// ignored here; call [`DatasetWriter::finish`] to see them.
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

/// State of the background thread.
struct Background {
    tables: [TableParts; Table::ALL.len()],
    hook: Option<FrameHook>,
    /// The table being written, so that a panic can be pinned on its part.
    busy: Option<Table>,
}

impl Background {
    fn run(
        mut self,
        rx: Receiver<Message>,
        failure: &SharedFailure,
    ) -> Result<OutputSummary, Arc<OutputError>> {
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| self.drain(&rx)));
        let error = match outcome {
            Ok(Ok(())) => match self.finish_all() {
                Ok(()) => return Ok(self.summary()),
                Err(error) => error,
            },
            Ok(Err(error)) => error,
            Err(payload) => OutputErrorKind::WriterPanicked {
                message: panic_message(payload.as_ref()),
            }
            .into(),
        };
        let error = Arc::new(error);
        *failure.lock().unwrap_or_else(PoisonError::into_inner) = Some(error.clone());
        // Let blocked senders see the failure now rather than after cleanup.
        drop(rx);
        if let Some(table) = self.busy.take() {
            self.tables[table.index()].discard();
        }
        let _ = self.finish_all();
        Err(error)
    }

    fn drain(&mut self, rx: &Receiver<Message>) -> Result<(), OutputError> {
        while let Ok(Message { table, frame }) = rx.recv() {
            if let Some(hook) = self.hook.as_mut() {
                hook();
            }
            let parts = &mut self.tables[table.index()];
            let schema = match parts.schema() {
                Some(schema) => schema.clone(),
                None => {
                    let schema = arrow_schema(table, &Signature::of(&frame));
                    parts.set_schema(schema.clone());
                    schema
                }
            };
            if frame.n_rows() > 0 {
                // A conversion error leaves the part in flight intact, so
                // only the write itself is marked as busy.
                let batch = record_batch(table, &schema, frame)?;
                self.busy = Some(table);
                parts.write(&batch)?;
                self.busy = None;
            }
        }
        Ok(())
    }

    /// Closes every table's part, returning the first error.
    fn finish_all(&mut self) -> Result<(), OutputError> {
        let mut first_error = None;
        for parts in &mut self.tables {
            if let Err(error) = parts.finish() {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    fn summary(&self) -> OutputSummary {
        let table = |parts: &TableParts| TableSummary {
            rows: parts.rows(),
            parts: parts.closed_parts().to_vec(),
        };
        debug_assert!(self
            .tables
            .iter()
            .zip(Table::ALL)
            .all(|(parts, table)| parts.table() == table));
        OutputSummary {
            contacts: table(&self.tables[0]),
            bodies: table(&self.tables[1]),
            walls: table(&self.tables[2]),
            shape_vertices: table(&self.tables[3]),
            shape_faces: table(&self.tables[4]),
            bonds: table(&self.tables[5]),
        }
    }
}
