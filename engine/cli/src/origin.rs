//! Where in the config an engine error comes from.
//!
//! Reads: a validated [`RunConfig`] and an engine error (which names balls
//! and blocks by id, walls, shapes and models by name, groups by name).
//! Writes: the error at the `file:line:col` of the table that made the
//! item, so that every message about the config has a location. The ids
//! follow from the config alone: [`crate::scene::populate`] adds the balls
//! and blocks of each table in file order, each table exactly as many as
//! it asks for (or the build fails first).

use anyhow::Error;
use talus_config::{error_at, BallKind, BlockKind, BlockSource, Location, RunConfig};
use talus_core::generate::lattice_counts;
use talus_core::snapshot::BodyKind;
use talus_core::{SetupError, StepError};

/// How many bodies a generator makes: `count`, or the lattice's sites.
fn lattice_total(region: &talus_core::Aabb, spacing: f64, counts: Option<[usize; 3]>) -> u64 {
    lattice_counts(region, spacing, counts)
        .iter()
        .map(|&n| n as u64)
        .product()
}

/// The table whose bodies hold the 1-based `id`, given each table's body
/// count in file order.
fn by_id<'a>(id: u64, tables: impl Iterator<Item = (u64, &'a Location)>) -> Option<&'a Location> {
    let mut last = 0;
    for (n, loc) in tables {
        last += n;
        if id <= last {
            return Some(loc);
        }
    }
    None
}

/// The `[[balls]]` table of ball `id`.
pub fn ball(cfg: &RunConfig, id: u64) -> Option<&Location> {
    by_id(
        id,
        cfg.balls.iter().map(|b| {
            let n = match &b.kind {
                BallKind::Random { count, .. } => *count as u64,
                BallKind::Lattice {
                    spacing,
                    region,
                    counts,
                    ..
                } => lattice_total(region, *spacing, *counts),
                BallKind::Explicit(rows) => rows.len() as u64,
            };
            (n, &b.location)
        }),
    )
}

/// The `[[blocks]]` table of block `id`.
pub fn block(cfg: &RunConfig, id: u64) -> Option<&Location> {
    rigid(&cfg.blocks, id)
}

/// The `[[clumps]]` table of clump `id`.
pub fn clump(cfg: &RunConfig, id: u64) -> Option<&Location> {
    rigid(&cfg.clumps, id)
}

/// The table of `sources` (blocks or clumps) that made body `id`.
fn rigid(sources: &[BlockSource], id: u64) -> Option<&Location> {
    by_id(
        id,
        sources.iter().map(|b| {
            let n = match &b.kind {
                BlockKind::Random { count, .. } => *count as u64,
                BlockKind::Lattice {
                    spacing,
                    region,
                    counts,
                    ..
                } => lattice_total(region, *spacing, *counts),
                BlockKind::Explicit(rows) => rows.len() as u64,
            };
            (n, &b.location)
        }),
    )
}

/// The first table that puts something in group `name`.
pub fn group<'a>(cfg: &'a RunConfig, name: &str) -> Option<&'a Location> {
    let balls = cfg.balls.iter().map(|b| (&b.group, &b.location));
    let blocks = cfg.blocks.iter().map(|b| (&b.group, &b.location));
    let clumps = cfg.clumps.iter().map(|b| (&b.group, &b.location));
    let walls = cfg.walls.iter().map(|w| (&w.group, &w.location));
    balls
        .chain(blocks)
        .chain(clumps)
        .chain(walls)
        .find(|(g, _)| *g == name)
        .map(|(_, loc)| loc)
}

fn wall<'a>(cfg: &'a RunConfig, name: &str) -> Option<&'a Location> {
    cfg.walls
        .iter()
        .find(|w| w.name == name)
        .map(|w| &w.location)
}

fn model<'a>(cfg: &'a RunConfig, name: &str) -> Option<&'a Location> {
    cfg.models
        .iter()
        .find(|m| m.model == name)
        .map(|m| &m.location)
}

fn shape<'a>(cfg: &'a RunConfig, name: &str) -> Option<&'a Location> {
    cfg.shapes
        .iter()
        .find(|s| s.shape.name == name)
        .map(|s| &s.location)
}

/// The table a setup error is about; `[run]` when it is about the run as
/// a whole.
fn of_setup<'a>(cfg: &'a RunConfig, e: &SetupError) -> Option<&'a Location> {
    match e {
        SetupError::Wall { wall: name, .. } => wall(cfg, name),
        SetupError::Ball { id, .. } => ball(cfg, *id),
        SetupError::Block { id, .. } => block(cfg, *id),
        SetupError::Clump { id, .. } => clump(cfg, *id),
        SetupError::Shape { shape: name, .. } => shape(cfg, name),
        SetupError::MissingPairing(_, b) => group(cfg, b),
        SetupError::Model { model: name, .. } => model(cfg, name),
        SetupError::Cell { .. } => cfg.cell.as_ref().map(|c| &c.location),
        _ => None,
    }
}

/// An error of the engine before step 1, at the table it comes from.
pub fn located(cfg: &RunConfig, e: &StepError) -> Error {
    let at = match e {
        StepError::Setup(s) => of_setup(cfg, s),
        StepError::BlowUp(b) => match b.kind {
            BodyKind::Ball => ball(cfg, b.id),
            BodyKind::Block => block(cfg, b.id),
            BodyKind::Clump => clump(cfg, b.id),
        },
        StepError::Model { model: name, .. } | StepError::NonFiniteForce { model: name, .. } => {
            model(cfg, name)
        }
        StepError::Wall { wall: name, .. } => wall(cfg, name),
        StepError::Cell { .. } => cfg.cell.as_ref().map(|c| &c.location),
        _ => None,
    };
    error_at(at.unwrap_or(&cfg.run.location), e).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_map_to_their_tables_in_file_order() {
        let text = "[run]\nsteps = 1\n\
            [[balls]]\nkind = \"lattice\"\nradius = 0.5\ndensity = 1\nregion = { min = [0, 0, 0], max = [2, 2, 1] }\n\
            [[balls]]\nkind = \"list\"\nradius = 0.1\ndensity = 1\nballs = [{ pos = [5, 5, 5] }, { pos = [6, 5, 5] }]\n";
        let cfg = talus_config::parse_str(text, "x.toml".as_ref()).unwrap();
        let line = |id| ball(&cfg, id).map(|l| l.line);
        // The lattice makes 2 x 2 x 1 balls.
        assert_eq!([line(1), line(4)], [Some(3), Some(3)]);
        assert_eq!([line(5), line(6)], [Some(8), Some(8)]);
        assert_eq!(line(7), None);
        let e = located(&cfg, &StepError::Timestep("none".into()));
        assert!(e.to_string().starts_with("x.toml:1:1: "), "{e}");
    }
}
