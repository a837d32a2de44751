//! Plain columnar frames: what the engine hands to the writer.
//!
//! Reads: nothing. Writes: nothing.
//! Invariant: a [`Frame`] is only written once [`Frame::validate`] has
//! accepted it (one field per column, all columns of equal length, unique
//! non-empty names), so the conversion to Arrow never fails on shape.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use crate::error::{OutputError, OutputErrorKind};

/// The tables of a dataset; each one is a folder of part files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    /// One row per contact per recorded step (`contacts/`).
    Contacts,
    /// One row per body per recorded step (`bodies/`).
    Bodies,
    /// One row per wall per recorded step (`walls/`).
    Walls,
    /// One row per vertex of each block shape, written once
    /// (`shape_vertices/`).
    ShapeVertices,
    /// One row per triangle of each block shape, written once
    /// (`shape_faces/`).
    ShapeFaces,
    /// One row per bond that broke (`bonds/`).
    Bonds,
    /// One row per pebble of each clump shape, written once
    /// (`clump_pebbles/`).
    ClumpPebbles,
    /// One row per recorded step of a run with a periodic cell: its
    /// matrix and stress (`cell/`).
    Cell,
}

impl Table {
    /// Every table, in folder order.
    pub const ALL: [Table; 8] = [
        Table::Contacts,
        Table::Bodies,
        Table::Walls,
        Table::ShapeVertices,
        Table::ShapeFaces,
        Table::Bonds,
        Table::ClumpPebbles,
        Table::Cell,
    ];

    /// Name of the table's folder inside the dataset (`"contacts"`, ...),
    /// also stored in the `talus.table` schema metadata key.
    pub const fn dir_name(self) -> &'static str {
        match self {
            Table::Contacts => "contacts",
            Table::Bodies => "bodies",
            Table::Walls => "walls",
            Table::ShapeVertices => "shape_vertices",
            Table::ShapeFaces => "shape_faces",
            Table::Bonds => "bonds",
            Table::ClumpPebbles => "clump_pebbles",
            Table::Cell => "cell",
        }
    }

    pub(crate) const fn index(self) -> usize {
        match self {
            Table::Contacts => 0,
            Table::Bodies => 1,
            Table::Walls => 2,
            Table::ShapeVertices => 3,
            Table::ShapeFaces => 4,
            Table::Bonds => 5,
            Table::ClumpPebbles => 6,
            Table::Cell => 7,
        }
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.dir_name())
    }
}

/// The type of a [`Column`], without its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ColumnKind {
    /// Written as Arrow `UInt64`, not nullable.
    U64,
    /// Written as Arrow `Int64`, not nullable.
    I64,
    /// Written as Arrow `UInt32`, not nullable.
    U32,
    /// Written as Arrow `Float64`, not nullable.
    F64,
    /// Written as Arrow `Float64`, nullable.
    OptF64,
    /// Written as Arrow `Boolean`, not nullable.
    Bool,
    /// Written as Arrow `Dictionary(Int32, Utf8)`, not nullable.
    Str,
}

impl fmt::Display for ColumnKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ColumnKind::U64 => "u64",
            ColumnKind::I64 => "i64",
            ColumnKind::U32 => "u32",
            ColumnKind::F64 => "f64",
            ColumnKind::OptF64 => "optional f64",
            ColumnKind::Bool => "bool",
            ColumnKind::Str => "string",
        })
    }
}

/// The values of one column of a [`Frame`].
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    /// Unsigned 64-bit integers (ids, step numbers).
    U64(Vec<u64>),
    /// Signed 64-bit integers.
    I64(Vec<i64>),
    /// Unsigned 32-bit integers (small indices, counts).
    U32(Vec<u32>),
    /// Finite or non-finite doubles; never null.
    F64(Vec<f64>),
    /// Doubles that may be missing (`None` is written as null).
    OptF64(Vec<Option<f64>>),
    /// Flags.
    Bool(Vec<bool>),
    /// Short repeated labels (kinds, model names); written
    /// dictionary-encoded, so repeating a value costs almost nothing.
    Str(Vec<String>),
}

impl Column {
    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::U32(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::OptF64(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }

    /// Appends the values of `other`, a column of the same kind (a column
    /// of another kind is a bug of the caller: it is ignored in release
    /// builds).
    fn append(&mut self, other: Column) {
        match (self, other) {
            (Column::U64(a), Column::U64(b)) => a.extend(b),
            (Column::I64(a), Column::I64(b)) => a.extend(b),
            (Column::U32(a), Column::U32(b)) => a.extend(b),
            (Column::F64(a), Column::F64(b)) => a.extend(b),
            (Column::OptF64(a), Column::OptF64(b)) => a.extend(b),
            (Column::Bool(a), Column::Bool(b)) => a.extend(b),
            (Column::Str(a), Column::Str(b)) => a.extend(b),
            (a, b) => debug_assert!(false, "{} appended to {}", b.kind(), a.kind()),
        }
    }

    /// True when the column holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The column's type.
    pub fn kind(&self) -> ColumnKind {
        match self {
            Column::U64(_) => ColumnKind::U64,
            Column::I64(_) => ColumnKind::I64,
            Column::U32(_) => ColumnKind::U32,
            Column::F64(_) => ColumnKind::F64,
            Column::OptF64(_) => ColumnKind::OptF64,
            Column::Bool(_) => ColumnKind::Bool,
            Column::Str(_) => ColumnKind::Str,
        }
    }
}

/// Name, unit and description of one column.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field {
    /// Column name, unique within a frame (`"gap"`, `"f_n"`, ...).
    pub name: Cow<'static, str>,
    /// SI unit (`"m"`, `"N"`, `"N m"`, `"s"`), `"-"` for a dimensionless
    /// quantity, `""` when a unit makes no sense (ids, labels, flags).
    /// Stored under the `unit` key of the Arrow field metadata.
    pub unit: Cow<'static, str>,
    /// One-sentence description, stored under the `doc` key of the Arrow
    /// field metadata.
    pub doc: Cow<'static, str>,
}

impl Field {
    /// Builds a field from its name, unit and description. Static strings
    /// are kept by reference, so a frame's fields cost no allocation.
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        unit: impl Into<Cow<'static, str>>,
        doc: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self {
            name: name.into(),
            unit: unit.into(),
            doc: doc.into(),
        }
    }
}

/// A block of rows for one table: one [`Field`] per [`Column`], all columns
/// of the same length.
///
/// ```
/// use talus_output::{Column, Frame};
/// let frame = Frame::new()
///     .push("step", "", "step number", Column::U64(vec![10, 10]))
///     .push("gap", "m", "contact gap; negative is overlap", Column::F64(vec![-1e-4, 2e-5]));
/// assert_eq!(frame.n_rows(), 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Frame {
    /// Column descriptions, in column order.
    pub fields: Vec<Field>,
    /// Column values, parallel to `fields`.
    pub columns: Vec<Column>,
}

impl Frame {
    /// An empty frame with no column.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a column and returns the frame, for chaining.
    #[must_use]
    pub fn push(
        mut self,
        name: impl Into<Cow<'static, str>>,
        unit: impl Into<Cow<'static, str>>,
        doc: impl Into<Cow<'static, str>>,
        column: Column,
    ) -> Self {
        self.add(Field::new(name, unit, doc), column);
        self
    }

    /// Appends a column in place.
    pub fn add(&mut self, field: Field, column: Column) {
        self.fields.push(field);
        self.columns.push(column);
    }

    /// Appends the rows of `other`, a frame with the same fields.
    pub(crate) fn append(&mut self, other: Frame) {
        debug_assert_eq!(self.fields, other.fields);
        for (column, more) in self.columns.iter_mut().zip(other.columns) {
            column.append(more);
        }
    }

    /// Number of rows: the length of the first column (0 without columns).
    pub fn n_rows(&self) -> usize {
        self.columns.first().map_or(0, Column::len)
    }

    /// Checks the frame's shape: at least one column, one field per column,
    /// equal column lengths, and (with `names`) unique non-empty names.
    /// A frame whose fields match those of an earlier valid frame needs
    /// no second look at its names.
    pub(crate) fn validate(&self, table: Table, names: bool) -> Result<(), OutputError> {
        let invalid = |reason: String| -> OutputError {
            OutputErrorKind::InvalidFrame { table, reason }.into()
        };
        if self.fields.len() != self.columns.len() {
            return Err(invalid(format!(
                "{} fields but {} columns",
                self.fields.len(),
                self.columns.len()
            )));
        }
        if self.columns.is_empty() {
            return Err(invalid("the frame has no column".to_owned()));
        }
        let n_rows = self.n_rows();
        let mut seen = HashSet::with_capacity(if names { self.fields.len() } else { 0 });
        for (field, column) in self.fields.iter().zip(&self.columns) {
            if names && field.name.is_empty() {
                return Err(invalid("a column has an empty name".to_owned()));
            }
            if names && !seen.insert(field.name.as_ref()) {
                return Err(invalid(format!("column `{}` appears twice", field.name)));
            }
            if column.len() != n_rows {
                return Err(invalid(format!(
                    "column `{}` has {} rows but column `{}` has {}",
                    field.name,
                    column.len(),
                    self.fields[0].name,
                    n_rows
                )));
            }
        }
        Ok(())
    }
}

/// What makes two frames compatible: names, types, units and docs, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Signature {
    pub(crate) columns: Vec<(Field, ColumnKind)>,
}

impl Signature {
    pub(crate) fn of(frame: &Frame) -> Self {
        Self {
            columns: frame
                .fields
                .iter()
                .cloned()
                .zip(frame.columns.iter().map(Column::kind))
                .collect(),
        }
    }

    /// Compares `frame` with this signature without allocating in the
    /// common case; returns the first differing column and how it differs.
    pub(crate) fn check(&self, table: Table, frame: &Frame) -> Result<(), OutputError> {
        let mismatch = |column: &str, reason: String| -> OutputError {
            OutputErrorKind::SchemaMismatch {
                table,
                column: column.to_owned(),
                reason,
            }
            .into()
        };
        for (idx, ((expected, kind), (field, column))) in self
            .columns
            .iter()
            .zip(frame.fields.iter().zip(&frame.columns))
            .enumerate()
        {
            if field.name != expected.name {
                return Err(mismatch(
                    &expected.name,
                    format!("expected at position {idx}, found `{}` instead", field.name),
                ));
            }
            if column.kind() != *kind {
                return Err(mismatch(
                    &expected.name,
                    format!("has type {} instead of {kind}", column.kind()),
                ));
            }
            if field.unit != expected.unit {
                return Err(mismatch(
                    &expected.name,
                    format!("has unit `{}` instead of `{}`", field.unit, expected.unit),
                ));
            }
            if field.doc != expected.doc {
                return Err(mismatch(
                    &expected.name,
                    "has a different doc string".to_owned(),
                ));
            }
        }
        if frame.fields.len() < self.columns.len() {
            let missing = &self.columns[frame.fields.len()].0.name;
            return Err(mismatch(missing, "is missing".to_owned()));
        }
        if frame.fields.len() > self.columns.len() {
            let extra = &frame.fields[self.columns.len()].name;
            return Err(mismatch(extra, "is not in the first frame".to_owned()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_columns() -> Frame {
        Frame::new()
            .push("id", "", "contact id", Column::U64(vec![1, 2]))
            .push("gap", "m", "gap", Column::F64(vec![0.0, 1.0]))
    }

    #[test]
    fn validate_rejects_unequal_lengths() {
        let frame = two_columns().push("f_n", "N", "normal force", Column::F64(vec![1.0]));
        let err = frame.validate(Table::Contacts, true).unwrap_err();
        assert!(matches!(err.kind(), OutputErrorKind::InvalidFrame { .. }));
        assert!(err.to_string().contains("`f_n` has 1 rows"), "{err}");
    }

    #[test]
    fn validate_rejects_duplicate_and_missing_fields() {
        let dup = two_columns().push("id", "", "again", Column::U64(vec![1, 2]));
        assert!(dup
            .validate(Table::Bodies, true)
            .unwrap_err()
            .to_string()
            .contains("twice"));
        let mut short = two_columns();
        short.fields.pop();
        assert!(short.validate(Table::Bodies, true).is_err());
        assert!(Frame::new().validate(Table::Walls, false).is_err());
    }

    #[test]
    fn signature_names_first_differing_column() {
        let sig = Signature::of(&two_columns());
        assert!(sig.check(Table::Contacts, &two_columns()).is_ok());

        let retyped = Frame::new()
            .push("id", "", "contact id", Column::U64(vec![1]))
            .push("gap", "m", "gap", Column::OptF64(vec![None]));
        let err = sig.check(Table::Contacts, &retyped).unwrap_err();
        match err.kind() {
            OutputErrorKind::SchemaMismatch { table, column, .. } => {
                assert_eq!(*table, Table::Contacts);
                assert_eq!(column, "gap");
            }
            other => panic!("unexpected error {other:?}"),
        }

        let shorter = Frame::new().push("id", "", "contact id", Column::U64(vec![1]));
        let err = sig.check(Table::Contacts, &shorter).unwrap_err();
        assert!(err.to_string().contains("`gap` is missing"), "{err}");

        let unit = Frame::new()
            .push("id", "", "contact id", Column::U64(vec![1]))
            .push("gap", "mm", "gap", Column::F64(vec![0.0]));
        let err = sig.check(Table::Contacts, &unit).unwrap_err();
        assert!(err.to_string().contains("unit `mm`"), "{err}");
    }
}
