//! talus-core: the DEM engine without any input or output.
//!
//! It owns the bodies (balls, clumps, rigid blocks, convex bodies of
//! plugin shapes, faceted walls), the cell-space broad phase,
//! the narrow phase, contact resolution with the contact-plane update, the
//! calls into contact-model plugins and the law of motion. Configuration
//! parsing, plugin loading and Parquet output live in sibling crates.
//!
//! Goals, in order: correct physics (checked against closed forms),
//! the same bits for any thread count, speed, ease of extension.
//!
//! Conventions: SI units; the contact normal points from end1 to end2; a
//! negative gap is overlap; the model force acts `+F` on end2 and `-F` on
//! end1 at the contact location.

#![warn(missing_docs)]

pub mod balls;
pub mod block;
pub mod blowup;
pub mod body;
pub mod bond;
pub mod cell;
mod cell_walls;
pub mod cellspace;
pub mod checkpoint;
pub mod clump;
pub mod contact;
pub mod convex;
mod detect;
pub mod error;
pub mod generate;
pub mod geometry;
pub mod inputs;
pub mod lane;
pub mod math;
mod motion;
mod narrow;
mod pass;
pub mod piece;
pub mod rigid;
pub mod sim;
pub mod snapshot;
mod step;
mod sums;
mod team;
mod timestep;
pub mod wall;
pub mod wall_logic;

pub use balls::{BallInit, Fixity};
pub use block::{BlockInit, BlockResolution, BlockShape};
pub use blowup::{BlowUp, BlowUpLimits};
pub use body::{BallsMut, BallsRef};
pub use bond::{BondBreak, BondInstall, BreakMode};
pub use cell::{Cell, CellServo, CellStage, CellState};
pub use clump::{ClumpInit, ClumpTemplate};
pub use contact::{ContactFrame, BATCH};
pub use convex::{ConvexShape, ShapeMass, ShapePoint};
pub use error::{SetupError, StepError};
pub use lane::Lane;
pub use math::{Aabb, Vec3};
pub use pass::segments::available_cpus;
pub use piece::{PairKind, Piece, PieceKind};
pub use sim::{BlockFallbacks, Settings, Simulation};
pub use snapshot::Snapshot;
pub use step::StageTimes;
pub use step::When;
pub use timestep::{Timestep, DEFAULT_SAFETY};
pub use wall::{Resolution, RigidMotion, Wall};
