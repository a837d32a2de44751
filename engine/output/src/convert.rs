//! Frame -> Arrow conversion.
//!
//! Reads: a validated [`Frame`]. Writes: an Arrow [`RecordBatch`].
//! Invariant: this is the only module that names Arrow types; the type
//! mapping here is the one documented in `docs/output.md`. Numeric and
//! boolean vectors are moved into Arrow buffers without copying.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringDictionaryBuilder,
    UInt32Array, UInt64Array,
};
use arrow::datatypes::{DataType, Field as ArrowField, Int32Type, Metadata, Schema, SchemaRef};

use crate::error::{OutputError, OutputErrorKind};
use crate::frame::{Column, ColumnKind, Frame, Signature, Table};

/// Field metadata key holding the unit of a column.
pub const UNIT_KEY: &str = "unit";
/// Field metadata key holding the description of a column.
pub const DOC_KEY: &str = "doc";
/// Schema metadata key holding the table name (`contacts`, `bodies`, `walls`).
pub const TABLE_KEY: &str = "talus.table";
/// Schema metadata key holding the version of talus that wrote the file.
pub const VERSION_KEY: &str = "talus.version";

fn data_type(kind: ColumnKind) -> DataType {
    match kind {
        ColumnKind::U64 => DataType::UInt64,
        ColumnKind::I64 => DataType::Int64,
        ColumnKind::U32 => DataType::UInt32,
        ColumnKind::F64 | ColumnKind::OptF64 => DataType::Float64,
        ColumnKind::Bool => DataType::Boolean,
        ColumnKind::Str => {
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
        }
    }
}

/// The Arrow schema of a table whose frames have the signature `sig`.
pub(crate) fn arrow_schema(table: Table, sig: &Signature) -> SchemaRef {
    let fields: Vec<ArrowField> = sig
        .columns
        .iter()
        .map(|(field, kind)| {
            let nullable = *kind == ColumnKind::OptF64;
            ArrowField::new(&*field.name, data_type(*kind), nullable).with_metadata(
                Metadata::new()
                    .with(UNIT_KEY, &*field.unit)
                    .with(DOC_KEY, &*field.doc),
            )
        })
        .collect();
    let metadata = Metadata::new()
        .with(TABLE_KEY, table.dir_name())
        .with(VERSION_KEY, env!("CARGO_PKG_VERSION"));
    Arc::new(Schema::new_with_metadata(fields, metadata))
}

/// Moves the columns of `frame` into a record batch of `schema`.
pub(crate) fn record_batch(
    table: Table,
    schema: &SchemaRef,
    frame: Frame,
) -> Result<RecordBatch, OutputError> {
    let arrow_err = |source| -> OutputError { OutputErrorKind::Arrow { table, source }.into() };
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(frame.columns.len());
    for column in frame.columns {
        let array: ArrayRef = match column {
            Column::U64(v) => Arc::new(UInt64Array::from(v)),
            Column::I64(v) => Arc::new(Int64Array::from(v)),
            Column::U32(v) => Arc::new(UInt32Array::from(v)),
            Column::F64(v) => Arc::new(Float64Array::from(v)),
            Column::OptF64(v) => Arc::new(Float64Array::from(v)),
            Column::Bool(v) => Arc::new(BooleanArray::from(v)),
            Column::Str(v) => {
                let mut builder = StringDictionaryBuilder::<Int32Type>::new();
                for value in &v {
                    builder.append(value).map_err(arrow_err)?;
                }
                Arc::new(builder.finish())
            }
        };
        arrays.push(array);
    }
    RecordBatch::try_new(schema.clone(), arrays).map_err(arrow_err)
}
