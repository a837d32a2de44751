//! `[cell]`, the periodic cell: its box or edges, its velocity gradient,
//! its servo and its later stages.

use super::values::{Int, Meters, Num, Pascals, PerPaS, PerS, Seconds, Vec3};
use super::S;

/// `[cell]`: the periodic cell, as a box (`min`, `max`) or a corner and
/// three edge vectors (`origin`, `edges`).
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table [cell] with min and max, or origin and edges"
)]
pub(crate) struct CellSpec {
    pub min: Option<S<Vec3<Meters>>>,
    pub max: Option<S<Vec3<Meters>>>,
    pub origin: Option<S<Vec3<Meters>>>,
    pub edges: Option<S<Vec<S<Vec3<Meters>>>>>,
    pub periodic: Option<S<[bool; 3]>>,
    pub velocity_gradient: Option<S<Vec<S<Vec3<PerS>>>>>,
    pub servo: Option<S<CellServoSpec>>,
    #[serde(default)]
    pub stages: Vec<S<CellStageSpec>>,
}

/// `[[cell.stages]]`: a later stage of the cell's motion.
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table [[cell.stages]] with at_step or at_time, and velocity_gradient or servo"
)]
pub(crate) struct CellStageSpec {
    pub at_step: Option<S<Int>>,
    pub at_time: Option<S<Num<Seconds>>>,
    pub velocity_gradient: Option<S<Vec<S<Vec3<PerS>>>>>,
    pub servo: Option<S<CellServoSpec>>,
}

/// `[cell.servo]`.
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table [cell.servo] with control, stress, gain and max_rate"
)]
pub(crate) struct CellServoSpec {
    pub control: S<[bool; 3]>,
    pub stress: S<Vec3<Pascals>>,
    pub gain: Option<S<Num<PerPaS>>>,
    pub max_rate: Option<S<Num<PerS>>>,
}
