//! The one error type of the crate.
//!
//! Reads: nothing. Writes: nothing.
//! Invariant: every failure that touches the file system names the path it
//! was working on; the underlying cause is reachable through
//! [`std::error::Error::source`], never repeated in the message.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use crate::frame::Table;

/// Error returned by every fallible function of `talus-output`.
///
/// The message is a short lowercase sentence; match on [`OutputError::kind`]
/// to react to a particular failure.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct OutputError {
    kind: OutputErrorKind,
}

impl OutputError {
    /// What went wrong.
    pub fn kind(&self) -> &OutputErrorKind {
        &self.kind
    }

    /// Consumes the error and returns what went wrong.
    pub fn into_kind(self) -> OutputErrorKind {
        self.kind
    }
}

impl From<OutputErrorKind> for OutputError {
    fn from(kind: OutputErrorKind) -> Self {
        Self { kind }
    }
}

/// The failures `talus-output` can report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputErrorKind {
    /// A [`crate::WriterOptions`] value is out of its valid range.
    #[error("invalid output writer option `{option}`: {reason}")]
    InvalidOption {
        /// Name of the option.
        option: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The output folder already holds a dataset and `overwrite` is off.
    #[error(
        "output folder {} already holds a dataset (found {}); \
         choose another folder or enable overwrite",
        path.display(), found.display()
    )]
    DatasetExists {
        /// The output folder.
        path: PathBuf,
        /// One of the files that belong to the previous dataset.
        found: PathBuf,
    },
    /// The output path exists but is not a folder.
    #[error("output path {} exists and is not a folder", path.display())]
    NotADirectory {
        /// The offending path.
        path: PathBuf,
    },
    /// A dataset to continue lacks parts that its checkpoint counted.
    #[error(
        "{} should hold parts 0 to {} from the checkpoint, found {found} of them",
        dir.display(),
        expected.saturating_sub(1)
    )]
    MissingParts {
        /// The table's folder.
        dir: PathBuf,
        /// Parts the checkpoint counted.
        expected: u32,
        /// Parts with those numbers found.
        found: u32,
    },
    /// A file-system operation failed.
    #[error("cannot {action} {}", path.display())]
    Io {
        /// What was being done (`"create folder"`, `"rename"`, ...).
        action: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// A frame is malformed (column count, lengths, names).
    #[error("invalid frame for table {table}: {reason}")]
    InvalidFrame {
        /// The table the frame was sent to.
        table: Table,
        /// What is wrong with it.
        reason: String,
    },
    /// A frame's columns differ from those of the first frame sent to the
    /// same table.
    #[error(
        "schema mismatch in table {table}: column `{column}` {reason} \
         (every frame of a table must have the fields of its first frame)"
    )]
    SchemaMismatch {
        /// The table the frame was sent to.
        table: Table,
        /// The first column (in order) that differs.
        column: String,
        /// How it differs.
        reason: String,
    },
    /// Arrow refused to build a record batch from a frame.
    #[error("cannot convert a frame of table {table} to arrow")]
    Arrow {
        /// The table the frame was sent to.
        table: Table,
        /// Arrow's error.
        #[source]
        source: arrow::error::ArrowError,
    },
    /// The Parquet writer failed on a part file.
    #[error("cannot write parquet file {}", path.display())]
    Parquet {
        /// The part file (its `.tmp` name while it is open).
        path: PathBuf,
        /// The Parquet crate's error.
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// `run.json` could not be serialised.
    #[error("cannot serialise {}", path.display())]
    Json {
        /// The path of `run.json`.
        path: PathBuf,
        /// serde_json's error.
        #[source]
        source: serde_json::Error,
    },
    /// The background writer thread could not be started.
    #[error("cannot start the background output writer thread")]
    Spawn {
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The background writer stopped on an error earlier; no more frames
    /// can be written. The source is the error that stopped it.
    #[error("the background output writer has stopped")]
    WriterFailed {
        /// The error that stopped the writer thread.
        #[source]
        source: Arc<OutputError>,
    },
    /// The background writer thread panicked.
    #[error("the background output writer panicked: {message}")]
    WriterPanicked {
        /// The panic payload, when it was a string.
        message: String,
    },
}

/// Shorthand for building an [`OutputErrorKind::Io`] error.
pub(crate) fn io_error(
    action: &'static str,
    path: impl Into<PathBuf>,
    source: io::Error,
) -> OutputError {
    OutputErrorKind::Io {
        action,
        path: path.into(),
        source,
    }
    .into()
}
