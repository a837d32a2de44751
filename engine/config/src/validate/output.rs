//! `[output]`: where and how often the run writes.
//!
//! Guarantees of [`OutputSettings`]: a non-empty folder (default
//! `out/<config file stem>`, relative to the working directory), record
//! intervals >= 0 steps (0 = never; defaults 1000 contacts, 1000 bodies,
//! 100 walls, 100 cell rows, 0 VTK frames), `overwrite` defaulting to true,
//! `part_seconds` > 0 s (default 10 s) and a checkpoint interval >= 0
//! steps (0 = only when interrupted).

use std::path::PathBuf;

use serde_spanned::Spanned;

use super::{int_at_least, positive, Ctx, Result};

/// Wall-clock seconds a part stays open by default.
const DEFAULT_PART_SECONDS: f64 = 10.0;
use crate::spec::{Int, OutputSpec};
use crate::types::OutputSettings;

pub(super) fn output_settings(
    ctx: &Ctx<'_>,
    output: Option<Spanned<OutputSpec>>,
) -> Result<OutputSettings> {
    let stem = ctx
        .src
        .file
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .unwrap_or("run");
    let default_dir = PathBuf::from("out").join(stem);
    let Some(output) = output else {
        return Ok(OutputSettings {
            dir: default_dir,
            dir_location: None,
            contacts: 1000,
            bodies: 1000,
            walls: 100,
            cell: 100,
            vtk: 0,
            overwrite: true,
            part_seconds: DEFAULT_PART_SECONDS,
            checkpoint: 0,
        });
    };
    let o = output.into_inner();
    let dir = match &o.dir {
        None => default_dir,
        Some(d) => {
            if d.get_ref().trim().is_empty() {
                return Err(ctx.invalid(&d.span(), "'dir' in [output] must not be empty"));
            }
            PathBuf::from(d.get_ref())
        }
    };
    let every = |v: &Option<Spanned<Int>>, key: &str, default: u64| -> Result<u64> {
        match v {
            None => Ok(default),
            Some(v) => Ok(int_at_least(ctx, v, 0, &format!("'{key}' in [output]"))? as u64),
        }
    };
    Ok(OutputSettings {
        dir,
        dir_location: o.dir.as_ref().map(|d| ctx.loc(&d.span())),
        contacts: every(&o.contacts, "contacts", 1000)?,
        bodies: every(&o.bodies, "bodies", 1000)?,
        walls: every(&o.walls, "walls", 100)?,
        cell: every(&o.cell, "cell", 100)?,
        vtk: every(&o.vtk, "vtk", 0)?,
        overwrite: o.overwrite.as_ref().is_none_or(|v| *v.get_ref()),
        checkpoint: every(&o.checkpoint, "checkpoint", 0)?,
        part_seconds: match &o.part_seconds {
            None => DEFAULT_PART_SECONDS,
            Some(v) => positive(
                ctx,
                &v.span(),
                v.get_ref().0,
                "'part_seconds' in [output]",
                "s",
            )?,
        },
    })
}
