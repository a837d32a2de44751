//! Raw configuration, straight from serde.
//!
//! Reads: TOML text (through `toml`). Writes: `*Spec` types whose fields keep
//! their byte spans (`Spanned`). Invariant: only the shape of the input is
//! checked here (known keys, types, units in the "expected ..." wording);
//! ranges, defaults and cross-key rules belong to `validate`.
//!
//! Values use small newtypes ([`Num`], [`Vec3`], [`Int`], choice enums) whose
//! serde `expecting` text names the type and unit, so a wrong type reads
//! "expected a number (m)" rather than "expected f64".
//!
//! This module holds the whole file ([`ConfigSpec`]) and its tables; the
//! parts live in submodules: `values` (the newtypes and the values of more
//! than one form), `choices` (the string-valued choices, and the keys each
//! kind of table allows), `cell` (`[cell]`) and `shapes` (`[[shapes]]`,
//! `[[blocks]]` and `[[clumps]]`).

mod cell;
mod choices;
mod shapes;
mod values;

use serde_spanned::Spanned;

pub(crate) use cell::{CellServoSpec, CellSpec};
pub(crate) use choices::{
    BallKindSpec, BlockKindSpec, BlockResolutionSpec, DofSpec, FaceSpec, FrameSpec,
    PositionsFormat, ResolutionSpec, ShapeKindSpec, SideSpec, WallKindSpec, BALL_COMMON_KEYS,
    BLOCK_COMMON_KEYS, SHAPE_COMMON_KEYS, WALL_COMMON_KEYS,
};
pub(crate) use shapes::{BlockSpec, PebbleSpec, ShapeSpec};
pub(crate) use values::{
    Degrees, DtSpec, Int, KgPerM3, Meters, MetersPerS, MetersPerS2, MetersPerSPerN, Newtons, Num,
    OrientationSpec, Pascals, PerS, PropertiesSpec, QuatSpec, RadPerS, RadiusSpec, Seconds,
    Unitless, Vec3,
};

type S<T> = Spanned<T>;

/// The whole file.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a TOML document")]
pub(crate) struct ConfigSpec {
    pub run: Option<S<RunSpec>>,
    #[serde(default)]
    pub plugins: Vec<S<PluginSpec>>,
    #[serde(default)]
    pub models: Vec<S<ModelSpec>>,
    #[serde(default)]
    pub balls: Vec<S<BallSpec>>,
    #[serde(default)]
    pub walls: Vec<S<WallSpec>>,
    #[serde(default)]
    pub shapes: Vec<S<ShapeSpec>>,
    #[serde(default)]
    pub blocks: Vec<S<BlockSpec>>,
    #[serde(default)]
    pub clumps: Vec<S<BlockSpec>>,
    #[serde(default)]
    pub bonds: Vec<S<BondSpec>>,
    pub cell: Option<S<CellSpec>>,
    pub output: Option<S<OutputSpec>>,
}

/// `[run]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [run]")]
pub(crate) struct RunSpec {
    pub steps: Option<S<Int>>,
    pub time: Option<S<Num<Seconds>>>,
    pub dt: Option<S<DtSpec>>,
    pub safety: Option<S<Num<Unitless>>>,
    pub gravity: Option<S<Vec3<MetersPerS2>>>,
    pub threads: Option<S<Int>>,
    pub seed: Option<S<Int>>,
    pub cell_tolerance: Option<S<Num<Meters>>>,
    pub block_resolution: Option<S<BlockResolutionSpec>>,
    pub blowup_fraction: Option<S<Num<Unitless>>>,
    pub blowup_energy_jump: Option<S<Num<Unitless>>>,
}

/// `[[plugins]]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [[plugins]] with a path")]
pub(crate) struct PluginSpec {
    pub path: S<String>,
}

/// `[[models]]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [[models]]")]
pub(crate) struct ModelSpec {
    pub model: S<String>,
    pub groups: S<Vec<S<String>>>,
    pub properties: Option<S<PropertiesSpec>>,
    pub block_resolution: Option<S<BlockResolutionSpec>>,
    pub frame: Option<S<FrameSpec>>,
    pub no_ratchet: Option<S<bool>>,
}

/// `[[bonds]]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [[bonds]]")]
pub(crate) struct BondSpec {
    pub groups: S<Vec<S<String>>>,
    pub gap: Option<S<Num<Meters>>>,
    pub at_step: Option<S<Int>>,
    pub at_time: Option<S<Num<Seconds>>>,
}

/// `region = { min = [..], max = [..] }`.
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table { min = [x, y, z], max = [x, y, z] } (m)"
)]
pub(crate) struct RegionSpec {
    pub min: S<Vec3<Meters>>,
    pub max: S<Vec3<Meters>>,
}

/// One row of `kind = "list"`.
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table { pos = [x, y, z], radius = r, velocity = [vx, vy, vz] }"
)]
pub(crate) struct BallRowSpec {
    pub pos: S<Vec3<Meters>>,
    pub radius: Option<S<Num<Meters>>>,
    pub velocity: Option<S<Vec3<MetersPerS>>>,
}

/// `[[balls]]`: one flat table for every kind; `validate` rejects the keys
/// that the chosen kind does not use.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [[balls]]")]
pub(crate) struct BallSpec {
    pub kind: S<BallKindSpec>,
    pub group: Option<S<String>>,
    pub density: Option<S<Num<KgPerM3>>>,
    pub damping: Option<S<Num<Unitless>>>,
    pub velocity: Option<S<Vec3<MetersPerS>>>,
    pub spin: Option<S<Vec3<RadPerS>>>,
    pub fix: Option<S<Vec<S<DofSpec>>>>,
    pub count: Option<S<Int>>,
    pub radius: Option<S<RadiusSpec>>,
    pub region: Option<S<RegionSpec>>,
    pub seed: Option<S<Int>>,
    pub max_attempts: Option<S<Int>>,
    pub spacing: Option<S<Num<Meters>>>,
    pub counts: Option<S<Vec<S<Int>>>>,
    pub balls: Option<S<Vec<S<BallRowSpec>>>>,
    pub path: Option<S<String>>,
    pub format: Option<S<PositionsFormat>>,
}

/// `[walls.motion]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [walls.motion]")]
pub(crate) struct MotionSpec {
    pub velocity: Option<S<Vec3<MetersPerS>>>,
    pub spin: Option<S<Vec3<RadPerS>>>,
    pub center: Option<S<Vec3<Meters>>>,
}

/// `[walls.deform]`: per-vertex velocities from an affine field.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [walls.deform]")]
pub(crate) struct DeformSpec {
    pub velocity: Option<S<Vec3<MetersPerS>>>,
    pub gradient: Option<S<Vec<S<Vec3<PerS>>>>>,
    pub center: Option<S<Vec3<Meters>>>,
    pub schedule: Option<S<ScheduleSpec>>,
    pub vertex_velocities: Option<S<String>>,
}

/// `schedule = { time = [..], factor = [..] }`.
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table { time = [t0, t1, ..] (s), factor = [f0, f1, ..] }"
)]
pub(crate) struct ScheduleSpec {
    pub time: S<Vec<S<Num<Seconds>>>>,
    pub factor: S<Vec<S<Num<Unitless>>>>,
}

/// `[walls.servo]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [walls.servo]")]
pub(crate) struct ServoSpec {
    pub direction: S<Vec3<Unitless>>,
    pub force: Option<S<Num<Newtons>>>,
    pub stress: Option<S<Num<Pascals>>>,
    pub gain: S<Num<MetersPerSPerN>>,
    pub max_speed: S<Num<MetersPerS>>,
}

/// An entry of `[[walls]] inactive`: a side and at most one facet selector.
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table { side = \"front\" | \"back\" | \"both\" } with at most one of facets = [i, ..], normal = [x, y, z] (and angle), region = { min, max }"
)]
pub(crate) struct InactiveSpec {
    pub side: S<SideSpec>,
    pub facets: Option<S<Vec<S<Int>>>>,
    pub normal: Option<S<Vec3<Unitless>>>,
    pub angle: Option<S<Num<Degrees>>>,
    pub region: Option<S<RegionSpec>>,
}

/// `[[walls]]`: one flat table for both kinds, like [`BallSpec`].
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [[walls]]")]
pub(crate) struct WallSpec {
    pub name: S<String>,
    pub kind: S<WallKindSpec>,
    pub group: Option<S<String>>,
    pub resolution: Option<S<ResolutionSpec>>,
    pub cutoff_angle: Option<S<Num<Degrees>>>,
    pub motion: Option<S<MotionSpec>>,
    pub deform: Option<S<DeformSpec>>,
    pub servo: Option<S<ServoSpec>>,
    pub inactive: Option<S<Vec<S<InactiveSpec>>>>,
    pub min: Option<S<Vec3<Meters>>>,
    pub max: Option<S<Vec3<Meters>>>,
    pub open: Option<S<Vec<S<FaceSpec>>>>,
    pub divisions: Option<S<Int>>,
    pub path: Option<S<String>>,
    pub scale: Option<S<Num<Unitless>>>,
    pub translate: Option<S<Vec3<Meters>>>,
    pub flip_normals: Option<S<bool>>,
}

/// `[output]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [output]")]
pub(crate) struct OutputSpec {
    pub dir: Option<S<String>>,
    pub contacts: Option<S<Int>>,
    pub bodies: Option<S<Int>>,
    pub walls: Option<S<Int>>,
    pub cell: Option<S<Int>>,
    pub vtk: Option<S<Int>>,
    pub overwrite: Option<S<bool>>,
    pub part_seconds: Option<S<Num<Seconds>>>,
    pub checkpoint: Option<S<Int>>,
}
