//! `[[balls]]`: one source of balls, by kind (random, lattice, list or
//! positions file).
//!
//! Guarantees of [`BallSource`]: only the keys of the chosen kind; a group
//! name that is neither empty nor `"*"`; density > 0 (from the key, or for
//! a positions file from an xyz header); damping in [0, 1). Per kind: a
//! positive radius (rmin <= rmax for a random range), regions with
//! min < max, a lattice spacing >= 2 radius whose `counts` fit the region,
//! and explicit rows that each have a radius.

use std::ops::Range;

use serde_spanned::Spanned;

use super::{
    damping, density, fix_flags, group_name, int_at_least, lattice_cells, lattice_sites,
    max_attempts, packing, positive, region, seed_or, span_of, vec3_or, Ctx, KindTable, Result,
};
use crate::error::ConfigError;
use crate::limits::{self, Approx, Bytes, Count};
use crate::mesh::FileIssue;
use crate::positions::{self, PositionsFile};
use crate::spec::{BallKindSpec, BallSpec, PositionsFormat, RadiusSpec, BALL_COMMON_KEYS};
use crate::types::{BallKind, BallRow, BallSource};
use talus_core::generate::RadiusDist;
use talus_core::Fixity;

/// The default group of balls (and of blocks).
pub(crate) const DEFAULT_BALL_GROUP: &str = "default";

fn single_radius(ctx: &Ctx<'_>, r: &Spanned<RadiusSpec>, table: &str, kind: &str) -> Result<f64> {
    match *r.get_ref() {
        RadiusSpec::Fixed(v) => positive(ctx, &r.span(), v, &format!("'radius' in {table}"), "m"),
        RadiusSpec::Range(..) => Err(ctx.invalid(
            &r.span(),
            format!("'radius' in {table} must be a single number for kind = \"{kind}\" ([rmin, rmax] is for kind = \"random\")"),
        )),
    }
}

/// One `[[balls]]` table: the keys every kind shares here, the kind's own
/// keys in [`random`], [`lattice`], [`list`] or [`file`](fn@file).
pub(super) fn ball_source(
    ctx: &Ctx<'_>,
    b: Spanned<BallSpec>,
    table: &str,
    run_seed: u64,
) -> Result<BallSource> {
    let table_span = b.span();
    let location = ctx.loc(&table_span);
    let b = b.into_inner();
    let kind = *b.kind.get_ref();

    let present = [
        ("count", span_of(&b.count)),
        ("radius", span_of(&b.radius)),
        ("region", span_of(&b.region)),
        ("seed", span_of(&b.seed)),
        ("max_attempts", span_of(&b.max_attempts)),
        ("spacing", span_of(&b.spacing)),
        ("counts", span_of(&b.counts)),
        ("balls", span_of(&b.balls)),
        ("path", span_of(&b.path)),
        ("format", span_of(&b.format)),
    ];
    let kind_table = KindTable::new(
        ctx,
        table_span.clone(),
        kind.as_str(),
        &present,
        (kind.keys(), BALL_COMMON_KEYS),
        table,
    )?;
    let require = |key: &str| kind_table.missing(key);

    let group = group_name(ctx, &b.group, DEFAULT_BALL_GROUP, table)?;
    let mut density = density(ctx, &b.density, table)?;
    let damping = damping(ctx, &b.damping, table)?;
    let fix = Fixity::from_flags(fix_flags(&b.fix));

    let kind = match kind {
        BallKindSpec::Random => random(ctx, &b, table, run_seed, density, &require)?,
        BallKindSpec::Lattice => lattice(ctx, &b, table, density, &require)?,
        BallKindSpec::List => list(ctx, &b, table, &require)?,
        BallKindSpec::File => {
            let (kind, header_density) = file(ctx, &b, table, &require)?;
            if density.is_none() {
                density = header_density;
            }
            kind
        }
    };

    let density = density.ok_or_else(|| {
        ctx.missing(
            &table_span,
            format!("missing key 'density' in {table} (kg/m^3, > 0; only an xyz header with 'rho' can supply it)"),
        )
    })?;
    let (smallest, largest) = match &kind {
        BallKind::Random { radius, .. } => (radius.min(), radius.max()),
        BallKind::Lattice { radius, .. } => (*radius, *radius),
        BallKind::Explicit(rows) => rows.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), r| {
            (lo.min(r.radius), hi.max(r.radius))
        }),
    };
    let at = [span_of(&b.radius), span_of(&b.balls), span_of(&b.path)]
        .into_iter()
        .flatten()
        .next()
        .unwrap_or(table_span);
    for r in [smallest, largest] {
        ball_mass(ctx, &at, r, Some(density), table)?;
    }

    Ok(BallSource {
        location,
        group,
        density,
        damping,
        velocity: vec3_or(&b.velocity, [0.0; 3]),
        spin: vec3_or(&b.spin, [0.0; 3]),
        fix,
        kind,
    })
}

/// `kind = "random"`: count, radius (fixed or a range), region, and the
/// seed (default `run_seed`) and attempt limit (default 1000) of the engine's
/// placement.
fn random(
    ctx: &Ctx<'_>,
    b: &BallSpec,
    table: &str,
    run_seed: u64,
    density: Option<f64>,
    require: &dyn Fn(&str) -> ConfigError,
) -> Result<BallKind> {
    let count = b.count.as_ref().ok_or_else(|| require("count"))?;
    let count = int_at_least(ctx, count, 1, &format!("'count' in {table}"))? as usize;
    let r = b.radius.as_ref().ok_or_else(|| require("radius"))?;
    let radius = match *r.get_ref() {
        RadiusSpec::Fixed(v) => {
            ball_mass(ctx, &r.span(), v, density, table)?;
            RadiusDist::Fixed(positive(
                ctx,
                &r.span(),
                v,
                &format!("'radius' in {table}"),
                "m",
            )?)
        }
        RadiusSpec::Range(lo, hi) => {
            ball_mass(ctx, &r.span(), lo, density, table)?;
            ball_mass(ctx, &r.span(), hi, density, table)?;
            positive(
                ctx,
                &r.span(),
                lo,
                &format!("rmin of 'radius' in {table}"),
                "m",
            )?;
            if lo > hi {
                return Err(ctx.invalid(
                    &r.span(),
                    format!("'radius' in {table} is [rmin, rmax] with rmin <= rmax, got rmin = {lo:?} > rmax = {hi:?}"),
                ));
            }
            RadiusDist::Uniform(lo, hi)
        }
    };
    let region = region(
        ctx,
        b.region.as_ref().ok_or_else(|| require("region"))?,
        table,
    )?;
    let count_span = b.count.as_ref().map(|c| c.span()).unwrap_or_default();
    packing(ctx, &count_span, count, radius.min(), &region, "balls")?;
    reserve_balls(ctx, &count_span, count as f64, table, "")?;
    ctx.extent(region.min.to_array(), region.max.to_array(), radius.max());
    let seed = seed_or(ctx, &b.seed, run_seed, table)?;
    let max_attempts = max_attempts(ctx, &b.max_attempts, table)?;
    Ok(BallKind::Random {
        count,
        radius,
        region,
        seed,
        max_attempts,
    })
}

/// `kind = "lattice"`: radius, spacing (default 2 radius) and region; with
/// `counts` the lattice must fit the region, without it the region must hold
/// at least one spacing on every axis.
fn lattice(
    ctx: &Ctx<'_>,
    b: &BallSpec,
    table: &str,
    density: Option<f64>,
    require: &dyn Fn(&str) -> ConfigError,
) -> Result<BallKind> {
    let r = b.radius.as_ref().ok_or_else(|| require("radius"))?;
    let radius = single_radius(ctx, r, table, "lattice")?;
    ball_mass(ctx, &r.span(), radius, density, table)?;
    let spacing = match &b.spacing {
        None => 2.0 * radius,
        Some(s) => {
            let v = s.get_ref().0;
            if v < 2.0 * radius {
                return Err(ctx.invalid(
                    &s.span(),
                    format!(
                        "'spacing' in {table} must be >= 2 * radius = {:?} (m) so balls do not overlap, got {v:?}",
                        2.0 * radius
                    ),
                ));
            }
            v
        }
    };
    let region_spec = b.region.as_ref().ok_or_else(|| require("region"))?;
    let region = region(ctx, region_spec, table)?;
    let counts = lattice_cells(
        ctx,
        &b.counts,
        region_spec,
        &region,
        spacing,
        table,
        "balls",
    )?;
    let sites = lattice_sites(&region, spacing, counts);
    let at = b
        .counts
        .as_ref()
        .map_or_else(|| region_spec.span(), Spanned::span);
    let why = if counts.is_some() {
        " (its 'counts')".to_owned()
    } else {
        format!(
            " (its region holds that many spacings of {} m)",
            Approx(spacing)
        )
    };
    reserve_balls(ctx, &at, sites, table, &why)?;
    ctx.extent(region.min.to_array(), region.max.to_array(), radius);
    Ok(BallKind::Lattice {
        radius,
        spacing,
        region,
        counts,
    })
}

/// `kind = "list"`: the rows of `balls`, each with its own radius or the
/// table's `radius`.
fn list(
    ctx: &Ctx<'_>,
    b: &BallSpec,
    table: &str,
    require: &dyn Fn(&str) -> ConfigError,
) -> Result<BallKind> {
    let default_radius = match &b.radius {
        Some(r) => Some(single_radius(ctx, r, table, "list")?),
        None => None,
    };
    let list = b.balls.as_ref().ok_or_else(|| require("balls"))?;
    if list.get_ref().is_empty() {
        return Err(ctx.invalid(
            &list.span(),
            format!("'balls' in {table} is empty; give at least one row"),
        ));
    }
    let mut rows = Vec::with_capacity(list.get_ref().len());
    for (i, row) in list.get_ref().iter().enumerate() {
        let row_name = format!("row #{} of 'balls' in {table}", i + 1);
        let spec = row.get_ref();
        let radius = match &spec.radius {
            Some(r) => positive(
                ctx,
                &r.span(),
                r.get_ref().0,
                &format!("'radius' in {row_name}"),
                "m",
            )?,
            None => default_radius.ok_or_else(|| {
                ctx.missing(
                    &row.span(),
                    format!("{row_name} has no 'radius' and {table} has no default 'radius'"),
                )
            })?,
        };
        ctx.coordinates(
            &spec.pos.span(),
            spec.pos.get_ref().0,
            &format!("'pos' of {row_name}"),
        )?;
        rows.push(BallRow {
            pos: spec.pos.get_ref().0,
            radius,
            velocity: spec.velocity.as_ref().map(|v| v.get_ref().0),
        });
    }
    explicit(ctx, &list.span(), rows, table)
}

/// `kind = "file"`: the rows of a positions file (xyz or csv, from `format`
/// or the extension), and the density of an xyz header if it gives one.
/// A row's radius comes from its own column, else the `radius` key, else the
/// xyz header.
fn file(
    ctx: &Ctx<'_>,
    b: &BallSpec,
    table: &str,
    require: &dyn Fn(&str) -> ConfigError,
) -> Result<(BallKind, Option<f64>)> {
    let path_spec = b.path.as_ref().ok_or_else(|| require("path"))?;
    let key_span = path_spec.span();
    let (path, bytes) = ctx.data_file(path_spec, "positions file", table)?;
    let format = match &b.format {
        Some(f) => *f.get_ref(),
        None => match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("xyz") => PositionsFormat::Xyz,
            Some("csv") => PositionsFormat::Csv,
            _ => {
                return Err(ctx.invalid(
                    &key_span,
                    format!(
                        "cannot tell the format of '{}' from its extension; set format = \"xyz\" or \"csv\" in {table}",
                        path_spec.get_ref()
                    ),
                ))
            }
        },
    };
    let text = String::from_utf8(bytes).map_err(|_| {
        ctx.data_error(
            &path,
            &key_span,
            FileIssue::whole("positions file is not valid UTF-8 text"),
        )
    })?;
    let parsed: PositionsFile = match format {
        PositionsFormat::Xyz => positions::read_xyz(&text),
        PositionsFormat::Csv => positions::read_csv(&text),
    }
    .map_err(|issue| ctx.data_error(&path, &key_span, issue))?;
    if parsed.rows.is_empty() {
        return Err(ctx.data_error(
            &path,
            &key_span,
            FileIssue::whole("the file holds no balls"),
        ));
    }
    let key_radius = match &b.radius {
        Some(r) => Some(single_radius(ctx, r, table, "file")?),
        None => None,
    };
    let default_radius = key_radius.or(parsed.header_radius);
    let mut rows = Vec::with_capacity(parsed.rows.len());
    for row in &parsed.rows {
        let radius = match row.radius.or(default_radius) {
            Some(r) => r,
            None => {
                return Err(ctx.data_error(
                    &path,
                    &key_span,
                    FileIssue::at(
                        row.line,
                        1,
                        format!(
                            "no radius for this ball: add a radius column, 'radius' in {table}, or 'R <value>' in an xyz header"
                        ),
                    ),
                ))
            }
        };
        if let Some(why) = limits::too_far(row.pos) {
            return Err(ctx.data_error(
                &path,
                &key_span,
                FileIssue::at(row.line, 1, format!("this ball {why}")),
            ));
        }
        rows.push(BallRow {
            pos: row.pos,
            radius,
            velocity: row.velocity,
        });
    }
    Ok((
        explicit(ctx, &key_span, rows, table)?,
        parsed.header_density,
    ))
}

/// Counts the memory of `n` balls of `table`; `why` says where the count
/// comes from.
fn reserve_balls(ctx: &Ctx<'_>, at: &Range<usize>, n: f64, table: &str, why: &str) -> Result<()> {
    ctx.reserve(
        at,
        n * limits::ball_bytes(),
        format_args!(
            "{table} makes {} balls{why}, about {} each with their contacts",
            Count(n),
            Bytes(limits::ball_bytes())
        ),
    )
}

/// Explicit balls: their memory and extent counted.
fn explicit(ctx: &Ctx<'_>, at: &Range<usize>, rows: Vec<BallRow>, table: &str) -> Result<BallKind> {
    reserve_balls(ctx, at, rows.len() as f64, table, "")?;
    for r in &rows {
        ctx.extent(
            r.pos.map(|c| c - r.radius),
            r.pos.map(|c| c + r.radius),
            r.radius,
        );
    }
    Ok(BallKind::Explicit(rows))
}

/// Refuses a ball of radius `r` (m) whose mass or moment of inertia is not
/// a usable double at `density` (kg/m^3; unknown yet for a positions file).
fn ball_mass(
    ctx: &Ctx<'_>,
    at: &Range<usize>,
    r: f64,
    density: Option<f64>,
    table: &str,
) -> Result<()> {
    let Some(density) = density else {
        return Ok(());
    };
    let (mass, moment) = limits::ball_mass(r, density);
    match limits::mass_issue(mass, (moment, moment)) {
        Some(why) if r > 0.0 => Err(ctx.invalid(
            at,
            format!(
                "a ball of radius {} m and density {} kg/m^3 in {table} cannot be simulated: {why}",
                Approx(r),
                Approx(density)
            ),
        )),
        _ => Ok(()),
    }
}
