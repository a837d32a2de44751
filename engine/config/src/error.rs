//! Errors and source positions.
//!
//! Reads: byte offsets into the config text (from serde/toml spans) and line
//! numbers of data files. Writes: [`Location`] (file, 1-based line and
//! column) and [`ConfigError`]. Invariant: every error names a file, and
//! every error about a key or a data line also names its line and column.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// A position in a file: 1-based line and column (columns count characters,
/// not bytes).
///
/// Displays as `file:line:col`, the form editors and terminals understand.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Location {
    /// The file as the user named it (config path, or a data file resolved
    /// against the config's folder).
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.col)
    }
}

/// What went wrong, for callers that react to the category rather than to
/// the message.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The config file or a referenced file could not be read.
    Io,
    /// A referenced file or folder (plugin, mesh, positions) does not exist.
    MissingFile,
    /// The text is not valid TOML.
    Syntax,
    /// A key that the table does not allow; the message lists the allowed keys.
    UnknownKey,
    /// A required key is absent.
    MissingKey,
    /// A value of the wrong type or shape (string for a number, 2 numbers
    /// for a vector), or a string outside its allowed choices; the message
    /// says what was expected.
    WrongType,
    /// A value of the right type outside its allowed range or inconsistent
    /// with other keys (negative radius, min >= max, steps and time both given).
    InvalidValue,
    /// A wall name or a model group pair given twice.
    Duplicate,
    /// Malformed content in a data file (xyz, CSV, STL, OBJ); the location
    /// is in that file.
    DataFile,
    /// Raised later by the engine through [`error_at`] for an item that this
    /// crate passed through unchecked (model properties, ball placement).
    Rejected,
}

/// Where an error points to: a position, or a whole file when no position
/// makes sense (an unreadable file).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    At(Location),
    File(PathBuf),
}

/// The one error type of talus-config.
///
/// Its `Display` is a single line: `file:line:col: message` (or
/// `file: message` when the whole file is at fault).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct ConfigError {
    kind: ErrorKind,
    place: Place,
    message: String,
}

impl ConfigError {
    pub(crate) fn at(kind: ErrorKind, location: Location, message: impl fmt::Display) -> Self {
        Self {
            kind,
            place: Place::At(location),
            message: message.to_string(),
        }
    }

    pub(crate) fn in_file(kind: ErrorKind, file: &Path, message: impl fmt::Display) -> Self {
        Self {
            kind,
            place: Place::File(file.to_path_buf()),
            message: message.to_string(),
        }
    }

    /// The category of the error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The position the error points to, if it points to one.
    pub fn location(&self) -> Option<&Location> {
        match &self.place {
            Place::At(loc) => Some(loc),
            Place::File(_) => None,
        }
    }

    /// The file the error is about (the config file or a data file).
    pub fn file(&self) -> &Path {
        match &self.place {
            Place::At(loc) => &loc.file,
            Place::File(file) => file,
        }
    }

    /// The message without the position prefix.
    pub fn message(&self) -> &str {
        &self.message
    }

    fn render(&self) -> String {
        match &self.place {
            Place::At(loc) => format!("{loc}: {}", self.message),
            Place::File(file) => format!("{}: {}", file.display(), self.message),
        }
    }
}

/// An error at a location carried by a validated item, for checks that only
/// the engine can make (model properties against the model descriptor, ball
/// placement).
///
/// ```
/// use talus_config::{error_at, Location};
/// let loc = Location { file: "x.toml".into(), line: 12, col: 1 };
/// let err = error_at(&loc, "model linear: missing required property kn");
/// assert_eq!(err.to_string(), "x.toml:12:1: model linear: missing required property kn");
/// ```
pub fn error_at(loc: &Location, msg: impl fmt::Display) -> ConfigError {
    ConfigError::at(ErrorKind::Rejected, loc.clone(), msg)
}

/// Byte offset -> 1-based line and column, for one text.
#[derive(Debug, Clone)]
pub(crate) struct LineIndex {
    /// Byte offset of the first character of each line.
    starts: Vec<usize>,
}

impl LineIndex {
    pub(crate) fn new(text: &str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self { starts }
    }

    /// Line and column of `offset` (clamped to the text), both 1-based.
    pub(crate) fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = offset.min(text.len());
        let line_idx = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line_idx];
        // Count characters, not bytes; fall back to bytes inside a code point.
        let col = text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (line_idx + 1, col + 1)
    }
}

/// The config text with its file name: turns spans into locations.
#[derive(Debug, Clone)]
pub(crate) struct Source<'a> {
    pub(crate) file: &'a Path,
    pub(crate) text: &'a str,
    lines: LineIndex,
}

impl<'a> Source<'a> {
    pub(crate) fn new(file: &'a Path, text: &'a str) -> Self {
        Self {
            file,
            text,
            lines: LineIndex::new(text),
        }
    }

    pub(crate) fn loc(&self, span: &Range<usize>) -> Location {
        let (line, col) = self.lines.line_col(self.text, span.start);
        Location {
            file: self.file.to_path_buf(),
            line,
            col,
        }
    }

    pub(crate) fn err(
        &self,
        kind: ErrorKind,
        span: &Range<usize>,
        msg: impl fmt::Display,
    ) -> ConfigError {
        ConfigError::at(kind, self.loc(span), msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_is_one_based_and_counts_characters() {
        let text = "a = 1\nbé = 2\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_col(text, 0), (1, 1));
        assert_eq!(idx.line_col(text, 4), (1, 5));
        assert_eq!(idx.line_col(text, 6), (2, 1));
        // 'é' is two bytes: the '=' after it is the 4th character.
        let eq = text.find("= 2").unwrap();
        assert_eq!(idx.line_col(text, eq), (2, 4));
        assert_eq!(idx.line_col(text, text.len()), (3, 1));
    }

    #[test]
    fn display_is_file_line_col() {
        let err = ConfigError::at(
            ErrorKind::InvalidValue,
            Location {
                file: "c/x.toml".into(),
                line: 3,
                col: 7,
            },
            "bad",
        );
        assert_eq!(err.to_string(), "c/x.toml:3:7: bad");
        let err = ConfigError::in_file(ErrorKind::Io, Path::new("c/x.toml"), "cannot read");
        assert_eq!(err.to_string(), "c/x.toml: cannot read");
        assert!(err.location().is_none());
    }
}
