//! talus-config: the run configuration of talus.
//!
//! This crate turns a TOML file into a validated [`RunConfig`] before
//! anything runs. It is the only crate of the workspace that parses TOML and
//! the only one that reads input geometry and positions files (STL, OBJ,
//! xyz, CSV); the engine receives plain data in SI units.
//!
//! Pipeline: text -> `*Spec` (serde, `deny_unknown_fields`, every value with
//! its span) -> validated types (defaults applied, ranges and cross-key
//! rules checked, referenced files read, meshes welded). Every error is one
//! line naming the file, line and column: see [`ConfigError`]. Items that
//! the engine checks later (model properties, ball generators) carry a
//! [`Location`], and [`error_at`] builds an error there. Every generator,
//! mesh option and data file is weighed against the machine ([`limits`],
//! [`Machine`]) before anything is made or read.
//!
//! The validated types hold the engine's own types (from talus-core) where
//! the engine consumes a value as is (timestep, fixity, regions, radius
//! distributions, wall resolution, rigid and servo motion), so nothing is
//! converted after validation. Lattice sizes come from the engine's ball
//! generators ([`talus_core::generate`]).
//!
//! The file format is documented in `docs/config.md`.
//!
//! ```
//! let text = r#"
//! [run]
//! steps = 100
//!
//! [[balls]]
//! kind = "lattice"
//! radius = 0.001
//! density = 2500.0
//! region = { min = [0, 0, 0], max = [0.01, 0.01, 0.01] }
//! "#;
//! let cfg = talus_config::parse_str(text, "demo.toml".as_ref()).unwrap();
//! assert_eq!(cfg.run.duration, talus_config::Duration::Steps(100));
//! assert_eq!(cfg.output.dir, std::path::Path::new("out/demo"));
//! ```

mod diagnose;
mod error;
pub mod limits;
mod mesh;
mod positions;
mod spec;
mod types;
mod validate;

pub use mesh::box_mesh;
use std::path::Path;

pub use error::{error_at, ConfigError, ErrorKind, Location};
pub use limits::Machine;
pub use types::{
    BallKind, BallRow, BallSource, BlockKind, BlockRow, BlockSource, BondRule, CellSettings,
    Duration, MeshData, ModelAssignment, OutputSettings, PluginPath, PluginShape, RunConfig,
    RunSettings, ShapeSource, TemplateSource, WallSource,
};

/// Reads, parses and validates the config file at `path`, and reads the
/// files it references (relative to the config file's folder).
pub fn load(path: &Path) -> Result<RunConfig, ConfigError> {
    let bytes = std::fs::read(path).map_err(|e| {
        let kind = if e.kind() == std::io::ErrorKind::NotFound {
            ErrorKind::MissingFile
        } else {
            ErrorKind::Io
        };
        ConfigError::in_file(kind, path, format!("cannot read config file: {e}"))
    })?;
    let text = String::from_utf8(bytes).map_err(|e| not_utf8(path, &e))?;
    parse_str(&text, path)
}

/// The error for a config that is not UTF-8, at the first bad byte.
fn not_utf8(path: &Path, e: &std::string::FromUtf8Error) -> ConfigError {
    let bytes = e.as_bytes();
    let at = e.utf8_error().valid_up_to();
    let valid = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
    let src = error::Source::new(path, valid);
    src.err(
        ErrorKind::Syntax,
        &(at..at),
        format!(
            "byte 0x{:02X} is not UTF-8 text; a TOML file must be UTF-8 (save it as UTF-8)",
            bytes[at]
        ),
    )
}

/// Parses and validates config `text` as if it were the file `origin`:
/// `origin` names the file in messages, its folder anchors relative paths,
/// and its stem gives the default output folder. Referenced files are read.
pub fn parse_str(text: &str, origin: &Path) -> Result<RunConfig, ConfigError> {
    parse_str_on(text, origin, Machine::this())
}

/// As [`parse_str`], weighing the config against `machine` rather than
/// this machine as it is now (its memory and CPUs bound generators, mesh
/// options, data files and `threads`).
pub fn parse_str_on(text: &str, origin: &Path, machine: Machine) -> Result<RunConfig, ConfigError> {
    let src = error::Source::new(origin, text);
    let root = toml::de::DeTable::parse(text).map_err(|e| diagnose::from_syntax(&src, &e))?;
    let spec: spec::ConfigSpec =
        toml::from_str(text).map_err(|e| diagnose::from_serde(&src, root.get_ref(), &e))?;
    validate::validate(&src, spec, machine)
}
