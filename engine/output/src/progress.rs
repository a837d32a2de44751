//! `run.json` and the `progress` entry that says how far the data goes.
//!
//! Reads: the caller's run description ([`DatasetWriter::write_run_json`])
//! and the step marks of [`DatasetWriter::mark_complete`]. Writes:
//! `DIR/run.json`, atomically (a hidden temporary file, synced, then
//! renamed), from whichever thread changed what it says.
//! Invariant: `progress.complete_through_step` never names a step whose
//! frames are not all in closed parts: it only advances when the writer has
//! closed every table's part after taking in every frame sent before the
//! mark was read.
//!
//! [`DatasetWriter::write_run_json`]: crate::DatasetWriter::write_run_json
//! [`DatasetWriter::mark_complete`]: crate::DatasetWriter::mark_complete

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::{io_error, OutputError, OutputErrorKind};

/// Name of the run metadata file at the top of a dataset.
pub const RUN_JSON: &str = "run.json";
/// Temporary name of `run.json` while it is written (hidden, like parts in
/// flight).
pub(crate) const RUN_JSON_TMP: &str = ".run.json.tmp";

/// How a dataset's run stands, as `progress.state` in `run.json` says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunState {
    /// The run has not ended. Found in a folder no process writes any
    /// more, it means the run was killed.
    Running,
    /// The run reached its end.
    Finished,
    /// The run was stopped by a signal (`"SIGINT"`, `"SIGTERM"`) after a
    /// whole step.
    Interrupted(String),
    /// The run stopped on an error (the message).
    Failed(String),
}

impl RunState {
    fn name(&self) -> &'static str {
        match self {
            RunState::Running => "running",
            RunState::Finished => "finished",
            RunState::Interrupted(_) => "interrupted",
            RunState::Failed(_) => "failed",
        }
    }
}

/// The step marks the simulation thread leaves for the writer thread: the
/// last step whose frames have all been sent, plus one (0 = none yet).
#[derive(Debug, Default)]
pub(crate) struct Marks(AtomicU64);

impl Marks {
    pub(crate) fn set(&self, step: u64) {
        self.0.store(step.saturating_add(1), Ordering::Release);
    }

    pub(crate) fn get(&self) -> Option<u64> {
        self.0.load(Ordering::Acquire).checked_sub(1)
    }
}

struct Inner {
    base: Option<serde_json::Value>,
    state: RunState,
    complete: Option<u64>,
    /// `complete` as last written, to skip rewriting an unchanged file.
    written: Option<(String, Option<u64>)>,
}

/// `run.json` shared between the calling thread and the writer thread.
#[derive(Clone)]
pub(crate) struct RunJson {
    dir: PathBuf,
    inner: Arc<Mutex<Inner>>,
}

impl RunJson {
    pub(crate) fn new(dir: &Path) -> Self {
        Self {
            dir: dir.to_owned(),
            inner: Arc::new(Mutex::new(Inner {
                base: None,
                state: RunState::Running,
                complete: None,
                written: None,
            })),
        }
    }

    /// Replaces the run description and writes the file.
    pub(crate) fn set_base(&self, base: &serde_json::Value) -> Result<(), OutputError> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.base = Some(base.clone());
        self.write(&mut inner, true)
    }

    /// Records that every frame up to `step` is in closed parts; rewrites
    /// the file when that moves the mark.
    pub(crate) fn set_complete(&self, step: Option<u64>) -> Result<(), OutputError> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if step > inner.complete {
            inner.complete = step;
        }
        self.write(&mut inner, false)
    }

    /// Records how the run ended and writes the file.
    pub(crate) fn set_state(&self, state: RunState) -> Result<(), OutputError> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.state = state;
        self.write(&mut inner, false)
    }

    fn write(&self, inner: &mut Inner, force: bool) -> Result<(), OutputError> {
        let Some(base) = &inner.base else {
            return Ok(());
        };
        let key = (inner.state.name().to_owned(), inner.complete);
        if !force && inner.written.as_ref() == Some(&key) {
            return Ok(());
        }
        let mut json = base.clone();
        let mut progress = serde_json::json!({
            "state": inner.state.name(),
            "complete_through_step": inner.complete,
        });
        match &inner.state {
            RunState::Interrupted(signal) => progress["signal"] = signal.clone().into(),
            RunState::Failed(message) => progress["error"] = message.clone().into(),
            RunState::Running | RunState::Finished => {}
        }
        if let Some(object) = json.as_object_mut() {
            object.insert("progress".to_owned(), progress);
        }
        write_atomically(&self.dir, &json)?;
        inner.written = Some(key);
        Ok(())
    }
}

fn write_atomically(dir: &Path, json: &serde_json::Value) -> Result<(), OutputError> {
    let path = dir.join(RUN_JSON);
    let tmp = dir.join(RUN_JSON_TMP);
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
