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
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use parquet::basic::{Compression as ParquetCompression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::convert::{arrow_schema, record_batch};
use crate::error::{io_error, OutputError, OutputErrorKind};
use crate::frame::{Frame, Signature, Table};
use crate::part::{is_part_file, TableParts};
use crate::progress::{Marks, RunJson, RunState, RUN_JSON, RUN_JSON_TMP};

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
    /// Wall time after which the writer closes the parts in flight of
    /// every table, whatever their row counts, so that a killed process
    /// loses at most about this much of its output. `None` closes parts
    /// only when they are full or the writer finishes. Default 10 s.
    pub max_part_age: Option<Duration>,
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            queue_depth: 4,
            max_rows_per_part: 1_000_000,
            compression: Compression::default(),
            overwrite: false,
            max_part_age: Some(Duration::from_secs(10)),
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
    /// The `clump_pebbles/` table.
    pub clump_pebbles: TableSummary,
    /// The `cell/` table.
    pub cell: TableSummary,
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
            Table::ClumpPebbles => &self.clump_pebbles,
            Table::Cell => &self.cell,
        }
    }
}

/// Rows gathered per table before they are converted and written.
const GATHER_ROWS: usize = 8192;

enum Message {
    Frame(Table, Frame),
    /// Close every part and answer with the number of closed parts per
    /// table.
    Sync(mpsc::Sender<PartCounts>),
}

/// Closed parts per table, in [`Table::ALL`] order: what a dataset
/// continued from a checkpoint keeps.
pub type PartCounts = [u32; Table::ALL.len()];

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
    run_json: RunJson,
    marks: Arc<Marks>,
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
    /// `bonds/`, `clump_pebbles/`) and starts the background writer.
    ///
    /// A folder that already holds a `run.json` or part files is refused
    /// with [`OutputErrorKind::DatasetExists`] unless
    /// [`WriterOptions::overwrite`] is set, in which case exactly those
    /// files are removed first. An existing folder without them is used
    /// as it is.
    pub fn create(dir: impl AsRef<Path>, options: WriterOptions) -> Result<Self, OutputError> {
        Self::create_with_hook(dir.as_ref(), options, None)
    }

    /// Opens the dataset in `dir` to continue it from a checkpoint that
    /// was taken when each table had `parts` closed parts (see
    /// [`DatasetWriter::sync`]): the parts after those, and any part left
    /// in flight, are removed, and new parts are numbered on from there.
    /// `run.json` is left as it is until [`DatasetWriter::write_run_json`].
    pub fn resume(
        dir: impl AsRef<Path>,
        options: WriterOptions,
        parts: PartCounts,
    ) -> Result<Self, OutputError> {
        Self::open(dir.as_ref(), options, None, Some(parts))
    }

    pub(crate) fn create_with_hook(
        dir: &Path,
        options: WriterOptions,
        hook: Option<FrameHook>,
    ) -> Result<Self, OutputError> {
        Self::open(dir, options, hook, None)
    }

    fn open(
        dir: &Path,
        options: WriterOptions,
        hook: Option<FrameHook>,
        resume: Option<PartCounts>,
    ) -> Result<Self, OutputError> {
        if options.max_rows_per_part == 0 {
            return Err(OutputErrorKind::InvalidOption {
                option: "max_rows_per_part",
                reason: "must be at least 1".to_owned(),
            }
            .into());
        }
        let props = writer_properties(&options)?;
        if resume.is_none() {
            prepare_dir(dir, options.overwrite)?;
        }
        let mut tables = Table::ALL.map(|table| {
            TableParts::new(
                table,
                dir.join(table.dir_name()),
                props.clone(),
                options.max_rows_per_part,
            )
        });
        if let Some(counts) = resume {
            for (parts, count) in tables.iter_mut().zip(counts) {
                parts.keep_first(count)?;
            }
        }
        let (tx, rx) = mpsc::sync_channel(options.queue_depth);
        let failure = SharedFailure::default();
        let run_json = RunJson::new(dir);
        let marks = Arc::new(Marks::default());
        let background = Background {
            tables,
            hook,
            busy: None,
            max_part_age: options.max_part_age,
            queue_depth: options.queue_depth,
            pending: Table::ALL.map(|_| None),
            oldest: None,
            last_close: Instant::now(),
            marks: marks.clone(),
            run_json: run_json.clone(),
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
            run_json,
            marks,
        })
    }

    /// The dataset folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `DIR/run.json` (pretty-printed) atomically: the text goes to
    /// `.run.json.tmp`, is synced, then renamed over `run.json`. Call it
    /// again to replace the file (for example with end-of-run figures).
    ///
    /// When `json` is an object, the writer adds a `progress` entry and
    /// keeps it current: `state` (`"running"` until the writer finishes,
    /// then `"finished"`, `"interrupted"` or `"failed"`, see
    /// [`DatasetWriter::finish_as`]) and `complete_through_step`, the last
    /// step given to [`DatasetWriter::mark_complete`] whose frames are all
    /// in closed parts (`null` before the first).
    pub fn write_run_json(&self, json: &serde_json::Value) -> Result<(), OutputError> {
        self.run_json.set_base(json)
    }

    /// Writes every frame sent so far, closes the parts in flight of every
    /// table and returns how many closed parts each table has: the
    /// dataset as it stands at a checkpoint. Waits for the writer.
    pub fn sync(&self) -> Result<PartCounts, OutputError> {
        let (reply, answer) = mpsc::channel();
        let tx = self
            .tx
            .as_ref()
            .expect("the sender lives until finish or drop");
        tx.send(Message::Sync(reply))
            .map_err(|_| self.stopped_error())?;
        answer.recv().map_err(|_| self.stopped_error())
    }

    /// Tells the writer that every frame of steps up to `step` has been
    /// sent. Costs one atomic store: call it after each step's frames. The
    /// writer moves `progress.complete_through_step` in `run.json` up to
    /// the last such step each time it closes the parts in flight.
    pub fn mark_complete(&self, step: u64) {
        self.marks.set(step);
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
        tx.send(Message::Frame(table, frame))
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
        match tx.try_send(Message::Frame(table, frame)) {
            Ok(()) => Ok(true),
            Err(TrySendError::Full(_)) => Ok(false),
            Err(TrySendError::Disconnected(_)) => Err(self.stopped_error()),
        }
    }

    fn check(&self, table: Table, frame: &Frame) -> Result<(), OutputError> {
        let mut signatures = self
            .signatures
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match &signatures[table.index()] {
            Some(signature) => {
                // Equal to the first frame's fields, so the names are
                // unique and non-empty already.
                signature.check(table, frame)?;
                frame.validate(table, false)
            }
            None => {
                frame.validate(table, true)?;
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
    /// background thread; `run.json` then says the run finished. Returns
    /// what each table received, or the first error the background writer
    /// met.
    pub fn finish(self) -> Result<OutputSummary, OutputError> {
        self.finish_as(RunState::Finished)
    }

    /// As [`DatasetWriter::finish`], with `state` as the run's end in
    /// `run.json` (a write error turns it into [`RunState::Failed`]).
    pub fn finish_as(mut self, state: RunState) -> Result<OutputSummary, OutputError> {
        let result = self.shutdown();
        let state = match &result {
            Ok(_) => state,
            Err(e) => RunState::Failed(format!("the output writer failed: {e}")),
        };
        self.run_json.set_complete(self.marks.get())?;
        self.run_json.set_state(state)?;
        result
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
        if self.thread.is_some() {
            let _ = self.shutdown();
            let _ = self.run_json.set_complete(self.marks.get());
            let _ = self.run_json.set_state(RunState::Failed(
                "the run ended without finishing its dataset".to_owned(),
            ));
        }
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
    max_part_age: Option<Duration>,
    queue_depth: usize,
    /// Rows taken in but not yet written, per table.
    pending: [Option<Frame>; Table::ALL.len()],
    /// When the oldest rows not yet in a closed part were taken in.
    oldest: Option<Instant>,
    /// When the parts in flight were last closed.
    last_close: Instant,
    marks: Arc<Marks>,
    run_json: RunJson,
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
        loop {
            // With nothing in flight the writer still wakes now and then to
            // move the mark of completeness in `run.json`.
            let deadline = self
                .max_part_age
                .map(|age| self.oldest.unwrap_or(self.last_close) + age);
            let message = match deadline {
                None => match rx.recv() {
                    Ok(message) => message,
                    Err(_) => return Ok(()),
                },
                Some(deadline) => {
                    match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                        Ok(message) => message,
                        Err(RecvTimeoutError::Timeout) => {
                            self.close_all(rx)?;
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => return Ok(()),
                    }
                }
            };
            self.take(message)?;
            if deadline.is_some_and(|d| Instant::now() >= d) {
                self.close_all(rx)?;
            }
        }
    }

    /// Closes the parts in flight of every table once it has taken in
    /// every frame sent before the last step mark, then moves the mark of
    /// completeness in `run.json` to that step.
    fn close_all(&mut self, rx: &Receiver<Message>) -> Result<(), OutputError> {
        let marked = self.marks.get();
        // Frames sent before the mark was set are in the queue now, ahead
        // of any sent after it; the queue holds at most `queue_depth`.
        for _ in 0..self.queue_depth {
            match rx.try_recv() {
                Ok(message) => self.take(message)?,
                Err(_) => break,
            }
        }
        self.close_parts()?;
        self.run_json.set_complete(marked)
    }

    /// Writes what is gathered and closes the part in flight of every
    /// table.
    fn close_parts(&mut self) -> Result<(), OutputError> {
        for table in Table::ALL {
            self.write_pending(table)?;
            self.tables[table.index()].close()?;
        }
        self.oldest = None;
        self.last_close = Instant::now();
        Ok(())
    }

    /// Takes one frame in. Small frames are gathered per table and
    /// converted and written together once they hold [`GATHER_ROWS`] rows
    /// (or the parts close): Arrow and Parquet have a cost per batch and
    /// column that would otherwise dominate frames of a few rows.
    fn take(&mut self, message: Message) -> Result<(), OutputError> {
        let (table, frame) = match message {
            Message::Frame(table, frame) => (table, frame),
            Message::Sync(reply) => {
                // Every frame marked before this message is in the parts.
                let marked = self.marks.get();
                self.close_parts()?;
                self.run_json.set_complete(marked)?;
                // A caller that stopped waiting has nothing to learn.
                let _ = reply.send(self.tables.each_ref().map(TableParts::closed_count));
                return Ok(());
            }
        };
        if let Some(hook) = self.hook.as_mut() {
            hook();
        }
        let parts = &mut self.tables[table.index()];
        if parts.schema().is_none() {
            parts.set_schema(arrow_schema(table, &Signature::of(&frame)));
        }
        if frame.n_rows() == 0 {
            return Ok(());
        }
        self.oldest.get_or_insert_with(Instant::now);
        let pending = &mut self.pending[table.index()];
        match pending {
            None => *pending = Some(frame),
            Some(gathered) => gathered.append(frame),
        }
        if pending.as_ref().is_some_and(|f| f.n_rows() >= GATHER_ROWS) {
            self.write_pending(table)?;
        }
        Ok(())
    }

    /// Converts and writes the rows gathered for `table`.
    fn write_pending(&mut self, table: Table) -> Result<(), OutputError> {
        let Some(frame) = self.pending[table.index()].take() else {
            return Ok(());
        };
        let parts = &mut self.tables[table.index()];
        let schema = parts
            .schema()
            .expect("the schema is set when the first frame is taken")
            .clone();
        // A conversion error leaves the part in flight intact, so only the
        // write itself is marked as busy.
        let batch = record_batch(table, &schema, frame)?;
        self.busy = Some(table);
        parts.write(&batch)?;
        self.busy = None;
        Ok(())
    }

    /// Writes what is gathered and closes every table's part, returning
    /// the first error.
    fn finish_all(&mut self) -> Result<(), OutputError> {
        let mut first_error = None;
        for table in Table::ALL {
            let written = self.write_pending(table);
            if let Err(error) = written.and_then(|()| self.tables[table.index()].finish()) {
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
            clump_pebbles: table(&self.tables[6]),
            cell: table(&self.tables[7]),
        }
    }
}
