//! `*Spec` -> validated types.
//!
//! Reads: a [`ConfigSpec`] with spans, the config's folder (for relative
//! paths), and the data files it references (meshes, positions). Writes: a
//! [`RunConfig`]. Invariant: the first rule that fails stops validation with
//! an error at the key (or table) that broke it; defaults are applied here
//! and only here.
//!
//! This module holds [`validate`] itself (with the `[[plugins]]` paths and
//! the cross-table rules: one model per group pair, unique wall and shape
//! names). `ctx` holds [`Ctx`] (the source text, for located errors, the
//! folder relative paths start from, and the run's memory budget) and
//! `checks` the checks the tables share. Each table has its own submodule:
//! `run` (`[run]`), `models` (`[[models]]`), `balls` (`[[balls]]`), `walls`
//! (`[[walls]]` and its sub-tables), `shapes` (`[[shapes]]`), `blocks`
//! (`[[blocks]]` and `[[clumps]]`), `bonds` (`[[bonds]]`), `cell`
//! (`[cell]`) and `output` (`[output]`).

mod balls;
mod blocks;
mod bonds;
mod cell;
mod checks;
mod ctx;
mod models;
mod output;
mod run;
mod shapes;
mod walls;

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;

use serde_spanned::Spanned;

use crate::error::{ConfigError, ErrorKind, Location, Source};
use crate::limits::{self, Machine};
use crate::spec::{ConfigSpec, ShapeKindSpec};
use crate::types::{PluginPath, RunConfig};

use balls::ball_source;
use blocks::{block_source, ShapeIndex};
use checks::{
    block_resolution, check_min_max, damping, density, fix_flags, group_name, int_at_least,
    lattice_cells, lattice_sites, max_attempts, mesh_scale, packing, positive, region, seed_or,
    span_of, vec3_or, KindTable,
};
use ctx::{file_type, Budget, Ctx};
use models::model;
use output::output_settings;
use run::run_settings;
use shapes::{shape_sources, template_source};
use walls::wall_source;

type Result<T> = std::result::Result<T, ConfigError>;

/// Validates a parsed config. `src.file` is the config's path as given.
pub(crate) fn validate(src: &Source<'_>, spec: ConfigSpec, machine: Machine) -> Result<RunConfig> {
    let dir = match src.file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let ctx = Ctx {
        src,
        dir,
        machine,
        budget: RefCell::new(Budget {
            bytes: limits::BASE_BYTES,
            lo: [f64::INFINITY; 3],
            hi: [f64::NEG_INFINITY; 3],
            largest: 0.0,
        }),
    };

    let run_span = spec.run.as_ref().map(Spanned::span).unwrap_or_default();
    let run = match spec.run {
        Some(run) => run_settings(&ctx, run)?,
        None => {
            return Err(ctx.missing(
                &(0..0),
                "missing table [run]; it needs 'steps' (integer > 0) or 'time' (s)",
            ))
        }
    };

    let mut plugins = Vec::with_capacity(spec.plugins.len());
    for (i, p) in spec.plugins.into_iter().enumerate() {
        let table = format!("[[plugins]] #{}", i + 1);
        let p = p.into_inner();
        let path = ctx.existing_path(&p.path, "plugin path", &table)?;
        // A library or a folder of them; anything else would block or fail
        // deep in the loader.
        if let Ok(meta) = std::fs::metadata(&path) {
            if !(meta.is_file() || meta.is_dir()) {
                return Err(ctx.invalid(
                    &p.path.span(),
                    format!(
                        "plugin path '{}' in {table} is {}; give a library or a folder of libraries",
                        p.path.get_ref(),
                        file_type(&meta)
                    ),
                ));
            }
        }
        plugins.push(PluginPath {
            path,
            written: p.path.get_ref().clone(),
            location: ctx.loc(&p.path.span()),
        });
    }

    let mut models = Vec::with_capacity(spec.models.len());
    let mut pairs: HashMap<(String, String), Location> = HashMap::new();
    for (i, m) in spec.models.into_iter().enumerate() {
        let table = format!("[[models]] #{}", i + 1);
        let (assignment, groups_span) = model(&ctx, m, &table)?;
        let [a, b] = assignment.groups.clone();
        let key = if a <= b { (a, b) } else { (b, a) };
        if let Some(first) = pairs.get(&key) {
            return Err(ctx.src.err(
                ErrorKind::Duplicate,
                &groups_span,
                format!(
                    "group pair ({}, {}) in {table} already has a model (assigned at {first}); a pair may be assigned once",
                    key.0, key.1
                ),
            ));
        }
        pairs.insert(key, assignment.location.clone());
        models.push(assignment);
    }

    let mut balls = Vec::with_capacity(spec.balls.len());
    for (i, b) in spec.balls.into_iter().enumerate() {
        let table = format!("[[balls]] #{}", i + 1);
        balls.push(ball_source(&ctx, b, &table, run.seed)?);
    }

    let mut walls = Vec::with_capacity(spec.walls.len());
    let mut names: HashMap<String, Location> = HashMap::new();
    for (i, w) in spec.walls.into_iter().enumerate() {
        let table = format!("[[walls]] #{}", i + 1);
        let name_span = w.get_ref().name.span();
        let wall = wall_source(&ctx, w, &table)?;
        if let Some(first) = names.get(&wall.name) {
            return Err(ctx.src.err(
                ErrorKind::Duplicate,
                &name_span,
                format!(
                    "duplicate wall name '{}' in {table} (first used at {first}); wall names must be unique",
                    wall.name
                ),
            ));
        }
        names.insert(wall.name.clone(), ctx.loc(&name_span));
        walls.push(wall);
    }

    let mut shapes = Vec::with_capacity(spec.shapes.len());
    let mut templates = Vec::new();
    let mut shape_names: HashMap<String, Location> = HashMap::new();
    for (i, s) in spec.shapes.into_iter().enumerate() {
        let table = format!("[[shapes]] #{}", i + 1);
        let name_span = s.get_ref().name.span();
        let made = if *s.get_ref().kind.get_ref() == ShapeKindSpec::Clump {
            let t = template_source(&ctx, s, &table)?;
            let name = t.template.name.clone();
            templates.push(t);
            vec![(name, templates.last().map(|t| t.location.clone()))]
        } else {
            let sources = shape_sources(&ctx, s, &table, run.seed)?;
            let first = shapes.len();
            shapes.extend(sources);
            shapes[first..]
                .iter()
                .map(|s| (s.shape.name.clone(), Some(s.location.clone())))
                .collect()
        };
        for (name, location) in made {
            let location = location.expect("just made");
            // A mesh shape's bare name stands for its objects: it must not
            // be taken either.
            let bare = name.split_once('/').map(|(mesh, _)| mesh.to_owned());
            for taken in std::iter::once(name.clone()).chain(bare) {
                match shape_names.get(&taken) {
                    Some(first) if *first != location => {
                        return Err(ctx.src.err(
                            ErrorKind::Duplicate,
                            &name_span,
                            format!(
                                "duplicate shape name '{taken}' in {table} (first used at {first}); shape names must be unique"
                            ),
                        ));
                    }
                    _ => {
                        shape_names.insert(taken, location.clone());
                    }
                }
            }
        }
    }

    let index = ShapeIndex::new(shapes.iter().map(|s| s.shape.clone()).collect())
        .with_others(templates.iter().map(|t| t.template.name.clone()));
    let mut blocks = Vec::with_capacity(spec.blocks.len());
    for (i, b) in spec.blocks.into_iter().enumerate() {
        let table = format!("[[blocks]] #{}", i + 1);
        blocks.push(block_source(&ctx, b, &table, run.seed, &index)?);
    }
    let index = ShapeIndex::new(templates.iter().map(|t| t.template.clone()).collect())
        .with_others(shapes.iter().map(|s| s.shape.name.clone()));
    let mut clumps = Vec::with_capacity(spec.clumps.len());
    for (i, b) in spec.clumps.into_iter().enumerate() {
        let table = format!("[[clumps]] #{}", i + 1);
        clumps.push(block_source(&ctx, b, &table, run.seed, &index)?);
    }

    let mut bonds = Vec::with_capacity(spec.bonds.len());
    for (i, b) in spec.bonds.into_iter().enumerate() {
        let table = format!("[[bonds]] #{}", i + 1);
        bonds.push(bonds::bond_rule(&ctx, b, &table, &pairs)?);
    }

    let cell = match spec.cell {
        None => None,
        Some(c) => Some(cell::cell_settings(&ctx, c)?),
    };

    ctx.reserve_cells(&run_span)?;
    let output = output_settings(&ctx, spec.output)?;

    Ok(RunConfig {
        source: src.file.to_path_buf(),
        text: src.text.to_owned(),
        run,
        plugins,
        models,
        balls,
        walls,
        shapes,
        blocks,
        templates,
        clumps,
        bonds,
        cell,
        output,
    })
}
