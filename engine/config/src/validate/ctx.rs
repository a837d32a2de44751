//! [`Ctx`], what every table's validation works in: the source text (for
//! located errors), the folder relative paths start from, and the run's
//! needs so far (memory and the model's extent), refused once they pass
//! what the machine has.

use std::cell::RefCell;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde_spanned::Spanned;

use super::Result;
use crate::error::{ConfigError, ErrorKind, Location, Source};
use crate::limits::{self, Bytes, Count, Machine};
use crate::mesh::FileIssue;

pub(super) struct Ctx<'a> {
    pub(super) src: &'a Source<'a>,
    /// Folder that relative paths in the config are resolved against.
    pub(super) dir: PathBuf,
    /// What the machine offers the run.
    pub(super) machine: Machine,
    /// What the tables validated so far will need.
    pub(super) budget: RefCell<Budget>,
}

/// The run's needs as the tables are validated: memory and the extent of
/// the model (for the cell space).
pub(super) struct Budget {
    /// Estimated bytes.
    pub(super) bytes: f64,
    /// Bounding box of every region, position and wall vertex so far (m).
    pub(super) lo: [f64; 3],
    pub(super) hi: [f64; 3],
    /// Largest body radius so far (m; a block's bounding radius).
    pub(super) largest: f64,
}

impl Ctx<'_> {
    pub(super) fn loc(&self, span: &Range<usize>) -> Location {
        self.src.loc(span)
    }

    pub(super) fn invalid(&self, span: &Range<usize>, msg: impl std::fmt::Display) -> ConfigError {
        self.src.err(ErrorKind::InvalidValue, span, msg)
    }

    pub(super) fn missing(&self, span: &Range<usize>, msg: impl std::fmt::Display) -> ConfigError {
        self.src.err(ErrorKind::MissingKey, span, msg)
    }

    /// Resolves `written` against the config's folder and checks that it
    /// exists.
    pub(super) fn existing_path(
        &self,
        written: &Spanned<String>,
        what: &str,
        table: &str,
    ) -> Result<PathBuf> {
        let span = written.span();
        let text = written.get_ref();
        if text.trim().is_empty() {
            return Err(self.invalid(&span, format!("'path' in {table} is empty")));
        }
        let resolved = self.dir.join(text);
        if !resolved.exists() {
            let shown = std::path::absolute(&resolved).unwrap_or_else(|_| resolved.clone());
            return Err(self.src.err(
                ErrorKind::MissingFile,
                &span,
                format!(
                    "{what} '{text}' not found (resolved to '{}'; relative paths are relative to the config file's folder)",
                    shown.display()
                ),
            ));
        }
        Ok(resolved)
    }

    /// Resolves and reads a data file (mesh, positions, poses, vertex
    /// velocities): it must be a regular file (a FIFO or device would
    /// block or never end) that the machine's memory can hold.
    pub(super) fn data_file(
        &self,
        written: &Spanned<String>,
        what: &str,
        table: &str,
    ) -> Result<(PathBuf, Vec<u8>)> {
        let path = self.existing_path(written, what, table)?;
        let span = written.span();
        let meta = std::fs::metadata(&path).map_err(|e| {
            self.src.err(
                ErrorKind::Io,
                &span,
                format!("cannot read '{}': {e}", path.display()),
            )
        })?;
        if !meta.is_file() {
            return Err(self.invalid(
                &span,
                format!(
                    "{what} '{}' in {table} is {}, not a regular file; give the path of a file",
                    written.get_ref(),
                    file_type(&meta)
                ),
            ));
        }
        let room = self.machine.memory as f64 - self.budget.borrow().bytes;
        if meta.len() as f64 > room {
            return Err(self.invalid(
                &span,
                format!(
                    "{what} '{}' in {table} holds {}; reading it needs more than the {} of memory left for it ({} available, from {})",
                    written.get_ref(),
                    Bytes(meta.len() as f64),
                    Bytes(room.max(0.0)),
                    Bytes(self.machine.memory as f64),
                    self.machine.memory_source
                ),
            ));
        }
        let bytes = self.read(&path, &span)?;
        Ok((path, bytes))
    }

    /// Counts `bytes` of memory for `what` (a phrase naming the table and
    /// what it makes), refused when the run would then need more than the
    /// machine has.
    pub(super) fn reserve(
        &self,
        span: &Range<usize>,
        bytes: f64,
        what: impl std::fmt::Display,
    ) -> Result<()> {
        let mut budget = self.budget.borrow_mut();
        let total = budget.bytes + bytes;
        let have = self.machine.memory as f64;
        // A NaN or infinite need is refused too.
        if total.is_nan() || total > have {
            let before = if bytes >= 0.99 * total {
                String::new()
            } else {
                format!(
                    " ({} for these, {} for what comes before them)",
                    Bytes(bytes),
                    Bytes(budget.bytes)
                )
            };
            return Err(self.invalid(
                span,
                format!(
                    "{what}: the run would need about {} of memory{before}, more than the {} this machine has available (from {})",
                    Bytes(total),
                    Bytes(have),
                    self.machine.memory_source
                ),
            ));
        }
        budget.bytes = total;
        Ok(())
    }

    /// Takes `lo..hi` (m) into the model's extent and `radius` (m) into its
    /// largest body, for the cell space.
    pub(super) fn extent(&self, lo: [f64; 3], hi: [f64; 3], radius: f64) {
        let mut budget = self.budget.borrow_mut();
        for axis in 0..3 {
            budget.lo[axis] = budget.lo[axis].min(lo[axis]);
            budget.hi[axis] = budget.hi[axis].max(hi[axis]);
        }
        budget.largest = budget.largest.max(radius);
    }

    /// Counts the engine's cell space over the model's extent.
    pub(super) fn reserve_cells(&self, span: &Range<usize>) -> Result<()> {
        let (extent, largest) = {
            let b = self.budget.borrow();
            let extent: [f64; 3] = std::array::from_fn(|k| (b.hi[k] - b.lo[k]).max(0.0));
            (extent, b.largest)
        };
        if largest <= 0.0 {
            return Ok(());
        }
        // The engine's cells: twice the largest radius and tolerance.
        let n = limits::cells(extent, 2.2 * largest);
        self.reserve(
            span,
            n * limits::CELL_BYTES,
            format_args!("the cell space ({} cells)", Count(n)),
        )
    }

    /// A coordinate `v` (m) of `what` within [`limits::MAX_COORDINATE`].
    pub(super) fn coordinates(&self, span: &Range<usize>, v: [f64; 3], what: &str) -> Result<()> {
        match limits::too_far(v) {
            None => Ok(()),
            Some(why) => Err(self.invalid(span, format!("{what} {why}"))),
        }
    }

    /// Reads a referenced data file.
    pub(super) fn read(&self, path: &Path, key_span: &Range<usize>) -> Result<Vec<u8>> {
        std::fs::read(path).map_err(|e| {
            self.src.err(
                ErrorKind::Io,
                key_span,
                format!("cannot read '{}': {e}", path.display()),
            )
        })
    }

    /// An error inside a data file, pointing into that file and naming
    /// where the config refers to it.
    pub(super) fn data_error(
        &self,
        file: &Path,
        key_span: &Range<usize>,
        issue: FileIssue,
    ) -> ConfigError {
        let msg = format!("{} (file given at {})", issue.message, self.loc(key_span));
        match issue.line {
            Some(line) => ConfigError::at(
                ErrorKind::DataFile,
                Location {
                    file: file.to_path_buf(),
                    line,
                    col: issue.col,
                },
                msg,
            ),
            None => ConfigError::in_file(ErrorKind::DataFile, file, msg),
        }
    }
}

/// What kind of file system entry `meta` describes, for messages.
pub(super) fn file_type(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    "a special file"
}
