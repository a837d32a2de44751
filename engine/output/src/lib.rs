//! talus-output: the run's columnar output as a Parquet dataset.
//!
//! The engine core produces plain columns ([`Frame`]s of [`Column`]s, no
//! Arrow types); this crate is the only one in talus that writes Parquet.
//! A run's output folder looks like
//!
//! ```text
//! OUT/run.json
//! OUT/contacts/part-00000.parquet, part-00001.parquet, ...
//! OUT/bodies/part-00000.parquet, ...
//! OUT/walls/part-00000.parquet, ...
//! OUT/shape_vertices/part-00000.parquet    (block shapes, written once)
//! OUT/shape_faces/part-00000.parquet
//! OUT/bonds/part-00000.parquet            (bonds that broke)
//! OUT/clump_pebbles/part-00000.parquet    (clump shapes, written once)
//! OUT/cell/part-00000.parquet             (the periodic cell, per frame)
//! ```
//!
//! and `polars.scan_parquet("OUT/contacts/*.parquet")` or
//! `pandas.read_parquet("OUT/contacts")` read a table directly.
//!
//! Goals, in order:
//! 1. Every file named `*.parquet` is complete and readable, whatever way
//!    the run ends; a crash loses at most the parts in flight, which close
//!    after a set wall time, and `run.json` says up to which step the data
//!    is whole.
//! 2. The simulation thread does not wait on the disk: frames go through a
//!    bounded queue to one background writer thread.
//! 3. Files are self-describing: units and descriptions travel in the
//!    Arrow field metadata.
//!
//! See `docs/output.md` for the layout, the type mapping and reading
//! recipes.
//!
//! ```no_run
//! use talus_output::{Column, DatasetWriter, Frame, Table, WriterOptions};
//! # fn main() -> Result<(), talus_output::OutputError> {
//! let writer = DatasetWriter::create("out", WriterOptions::default())?;
//! writer.write_run_json(&serde_json::json!({ "talus": "0.1.0" }))?;
//! let frame = Frame::new()
//!     .push("step", "", "step number", Column::U64(vec![100, 100]))
//!     .push("time", "s", "simulated time", Column::F64(vec![1e-3, 1e-3]))
//!     .push("gap", "m", "contact gap; negative is overlap", Column::F64(vec![-2e-5, 1e-6]));
//! writer.send(Table::Contacts, frame)?;
//! let summary = writer.finish()?;
//! assert_eq!(summary.contacts.rows, 2);
//! # Ok(())
//! # }
//! ```

mod convert;
mod error;
mod frame;
mod part;
mod progress;
mod writer;

pub use convert::{DOC_KEY, TABLE_KEY, UNIT_KEY, VERSION_KEY};
pub use error::{OutputError, OutputErrorKind};
pub use frame::{Column, ColumnKind, Field, Frame, Table};
pub use progress::{RunState, RUN_JSON};
pub use writer::{
    Compression, DatasetWriter, OutputSummary, PartCounts, TableSummary, WriterOptions,
};

#[cfg(test)]
mod tests;
