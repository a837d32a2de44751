//! `[[shapes]]` and the bodies made of them, `[[blocks]]` and
//! `[[clumps]]`: flat tables for every kind, with the rows of their lists.

use super::choices::{BlockKindSpec, DofSpec, ShapeKindSpec};
use super::values::{
    Int, KgPerM3, Meters, MetersPerS, Num, OrientationSpec, PropertiesSpec, QuatSpec, RadPerS,
    Unitless, Vec3,
};
use super::{RegionSpec, S};

/// `[[shapes]]`: one flat table for every kind, like [`BallSpec`](super::BallSpec).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [[shapes]]")]
pub(crate) struct ShapeSpec {
    pub name: S<String>,
    pub kind: S<ShapeKindSpec>,
    pub size: Option<S<Vec3<Meters>>>,
    pub edge: Option<S<Num<Meters>>>,
    pub sides: Option<S<Int>>,
    pub radius: Option<S<Num<Meters>>>,
    pub height: Option<S<Num<Meters>>>,
    pub vertices: Option<S<Vec<S<Int>>>>,
    pub axes: Option<S<Vec3<Meters>>>,
    pub roughness: Option<S<Num<Unitless>>>,
    pub seed: Option<S<Int>>,
    pub points: Option<S<Vec<S<Vec3<Meters>>>>>,
    pub hull: Option<S<bool>>,
    pub path: Option<S<String>>,
    pub scale: Option<S<Num<Unitless>>>,
    pub dilate: Option<S<Num<Meters>>>,
    pub erode: Option<S<Num<Meters>>>,
    pub pebbles: Option<S<Vec<S<PebbleSpec>>>>,
    pub count: Option<S<Int>>,
    pub resolution: Option<S<Int>>,
    pub shape: Option<S<String>>,
    pub properties: Option<S<PropertiesSpec>>,
}

/// One pebble of `[[shapes]] kind = "clump"`.
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table { pos = [x, y, z], radius = r }"
)]
pub(crate) struct PebbleSpec {
    pub pos: S<Vec3<Meters>>,
    pub radius: S<Num<Meters>>,
}

/// One row of `[[blocks]] kind = "list"`.
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table { shape = \"name\", pos = [x, y, z], orientation = [w, x, y, z], velocity = [vx, vy, vz], spin = [wx, wy, wz] }"
)]
pub(crate) struct BlockRowSpec {
    pub shape: Option<S<String>>,
    pub pos: Option<S<Vec3<Meters>>>,
    pub orientation: Option<S<QuatSpec>>,
    pub velocity: Option<S<Vec3<MetersPerS>>>,
    pub spin: Option<S<Vec3<RadPerS>>>,
}

/// `[[blocks]]` and `[[clumps]]`: one flat table for every kind, like
/// [`BallSpec`](super::BallSpec) (a list's rows under `blocks` or `clumps`).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [[blocks]] or [[clumps]]")]
pub(crate) struct BlockSpec {
    pub kind: S<BlockKindSpec>,
    pub shape: Option<S<String>>,
    pub shapes: Option<S<Vec<S<String>>>>,
    pub weights: Option<S<Vec<S<Num<Unitless>>>>>,
    pub group: Option<S<String>>,
    pub density: Option<S<Num<KgPerM3>>>,
    pub damping: Option<S<Num<Unitless>>>,
    pub velocity: Option<S<Vec3<MetersPerS>>>,
    pub spin: Option<S<Vec3<RadPerS>>>,
    pub fix: Option<S<Vec<S<DofSpec>>>>,
    pub count: Option<S<Int>>,
    pub region: Option<S<RegionSpec>>,
    pub orientation: Option<S<OrientationSpec>>,
    pub seed: Option<S<Int>>,
    pub max_attempts: Option<S<Int>>,
    pub spacing: Option<S<Num<Meters>>>,
    pub counts: Option<S<Vec<S<Int>>>>,
    pub blocks: Option<S<Vec<S<BlockRowSpec>>>>,
    pub clumps: Option<S<Vec<S<BlockRowSpec>>>>,
    pub path: Option<S<String>>,
}
