//! `[[blocks]]` and `[[clumps]]`: one source of rigid bodies, by kind
//! (random fill, lattice, list or CSV file of poses). A clump table is a
//! block table whose shapes are clump shapes and whose list rows sit under
//! `clumps`.
//!
//! Guarantees of [`BlockSource`]: only the keys of the chosen kind; shape
//! names that `[[shapes]]` defines (a mesh shape's bare name stands for all
//! its objects in a fill, and must name one object in a list or file);
//! `shapes` and `weights` only for fills, weights >= 0 with a positive sum;
//! a group name that is neither empty nor `"*"`; density > 0; damping in
//! [0, 1); rotation fixed as a whole or not at all; unit quaternions
//! (within 1e-3, then normalised). Per kind: regions with min < max that
//! hold every chosen shape's bounding sphere (random fill), a lattice
//! spacing that keeps the blocks apart and `counts` that fit the region,
//! and explicit rows that each name one shape.

use std::collections::HashMap;

use serde_spanned::Spanned;

use super::balls::DEFAULT_BALL_GROUP;
use super::{
    damping, density, fix_flags, group_name, int_at_least, lattice_cells, lattice_sites,
    max_attempts, packing, positive, region, seed_or, span_of, vec3_or, Ctx, KindTable, Result,
};
use crate::error::ConfigError;
use crate::limits::{self, Approx, Bytes, Count};
use crate::mesh::FileIssue;
use crate::positions::{read_csv_rows, CsvSchema};
use crate::spec::{BlockKindSpec, BlockSpec, OrientationSpec, QuatSpec, BLOCK_COMMON_KEYS};
use crate::types::{BlockKind, BlockRow, BlockSource};
use talus_core::generate::{lattice_block_spacing, BlockMix, BlockOrientation, Template};
use talus_core::math::Quat;
use talus_core::{Aabb, Fixity};

/// How far from 1 the length of a given quaternion may be: four decimals
/// typed by hand (`[0.7071, 0, 0, 0.7071]`) pass, a forgotten component
/// does not.
const UNIT_TOLERANCE: f64 = 1e-3;

/// The shapes the config defines, by the names `[[blocks]]` (block
/// shapes) or `[[clumps]]` (clump shapes) may use.
pub(super) struct ShapeIndex<T> {
    shapes: Vec<T>,
    /// Full names (`name`, `name/object`) to indices.
    by_name: HashMap<String, u32>,
    /// Bare names of mesh tables to the indices of their objects.
    by_mesh: HashMap<String, Vec<u32>>,
    /// The names of the shapes of the other kind (clump shapes for
    /// blocks, block shapes for clumps), for a message that says so.
    others: Vec<String>,
}

impl<T: Template + Clone> ShapeIndex<T> {
    pub(super) fn new(shapes: Vec<T>) -> ShapeIndex<T> {
        let mut by_name = HashMap::new();
        let mut by_mesh: HashMap<String, Vec<u32>> = HashMap::new();
        for (k, s) in shapes.iter().enumerate() {
            let name = s.name();
            by_name.insert(name.to_owned(), k as u32);
            if let Some((mesh, _)) = name.split_once('/') {
                by_mesh.entry(mesh.to_owned()).or_default().push(k as u32);
            }
        }
        ShapeIndex {
            shapes,
            by_name,
            by_mesh,
            others: Vec::new(),
        }
    }

    /// The index, knowing the names of the other kind's shapes.
    pub(super) fn with_others(mut self, others: impl Iterator<Item = String>) -> Self {
        self.others = others.collect();
        self
    }

    /// The shapes a name stands for: one, or every object of a mesh.
    fn resolve(&self, ctx: &Ctx<'_>, name: &Spanned<String>, table: &str) -> Result<Vec<u32>> {
        let text = name.get_ref().trim();
        if let Some(&k) = self.by_name.get(text) {
            return Ok(vec![k]);
        }
        if let Some(ks) = self.by_mesh.get(text) {
            return Ok(ks.clone());
        }
        if self.others.iter().any(|o| o == text) {
            let (this, other) = if T::BODY == "clump" {
                ("a block shape", "[[blocks]]")
            } else {
                ("a clump shape", "[[clumps]]")
            };
            return Err(ctx.invalid(
                &name.span(),
                format!("'{text}' in {table} is {this}; use it in {other}"),
            ));
        }
        let known = if self.shapes.is_empty() {
            format!("no [[shapes]] table defines a {} shape", T::BODY)
        } else {
            let mut names: Vec<&str> = self.shapes.iter().map(|s| s.name()).collect();
            let more = names.len().saturating_sub(12);
            names.truncate(12);
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            format!("defined {} shapes: {}{tail}", T::BODY, names.join(", "))
        };
        Err(ctx.invalid(
            &name.span(),
            format!("unknown {} shape '{text}' in {table}; {known}", T::BODY),
        ))
    }

    /// The one shape a name stands for, in a list or file.
    fn one(&self, ctx: &Ctx<'_>, name: &Spanned<String>, what: &str) -> Result<u32> {
        let ks = self.resolve(ctx, name, what)?;
        if let [k] = ks[..] {
            return Ok(k);
        }
        let names: Vec<&str> = ks.iter().map(|&k| self.shapes[k as usize].name()).collect();
        Err(ctx.invalid(
            &name.span(),
            format!(
                "'{}' in {what} names {} shapes (the objects of a mesh file); name one of: {}",
                name.get_ref().trim(),
                ks.len(),
                names.join(", ")
            ),
        ))
    }
}

/// A quaternion `[w, x, y, z]` of unit length (within [`UNIT_TOLERANCE`]),
/// normalised.
fn unit_quat(q: [f64; 4]) -> std::result::Result<Quat, String> {
    let [w, x, y, z] = q;
    let quat = Quat::from_xyzw(x, y, z, w);
    let len = quat.length();
    if (len - 1.0).abs() > UNIT_TOLERANCE {
        return Err(format!(
            "must be a unit quaternion [w, x, y, z] (length 1 within {UNIT_TOLERANCE}), got length {len:.6}"
        ));
    }
    Ok(quat / len)
}

fn quat_key(ctx: &Ctx<'_>, q: &Spanned<QuatSpec>, what: &str) -> Result<Quat> {
    unit_quat(q.get_ref().0).map_err(|e| ctx.invalid(&q.span(), format!("{what} {e}")))
}

/// One `[[blocks]]` or `[[clumps]]` table (by the shapes of `index`): the
/// keys every kind shares here, the kind's own keys in [`random`],
/// [`lattice`], [`list`] and [`file`](fn@file).
pub(super) fn block_source<T: Template + Clone>(
    ctx: &Ctx<'_>,
    b: Spanned<BlockSpec>,
    table: &str,
    run_seed: u64,
    index: &ShapeIndex<T>,
) -> Result<BlockSource> {
    let table_span = b.span();
    let location = ctx.loc(&table_span);
    let b = b.into_inner();
    let kind = *b.kind.get_ref();

    let present = [
        ("count", span_of(&b.count)),
        ("region", span_of(&b.region)),
        ("orientation", span_of(&b.orientation)),
        ("seed", span_of(&b.seed)),
        ("max_attempts", span_of(&b.max_attempts)),
        ("spacing", span_of(&b.spacing)),
        ("counts", span_of(&b.counts)),
        ("blocks", span_of(&b.blocks)),
        ("clumps", span_of(&b.clumps)),
        ("path", span_of(&b.path)),
    ];
    let kind_table = KindTable::new(
        ctx,
        table_span.clone(),
        kind.as_str(),
        &present,
        (kind.keys(rows_key::<T>()), BLOCK_COMMON_KEYS),
        table,
    )?;
    let require = |key: &str| kind_table.missing(key);

    let group = group_name(ctx, &b.group, DEFAULT_BALL_GROUP, table)?;
    let density = density(ctx, &b.density, table)?.ok_or_else(|| {
        ctx.missing(
            &table_span,
            format!("missing key 'density' in {table} (kg/m^3, > 0)"),
        )
    })?;
    let damping = damping(ctx, &b.damping, table)?;
    let flags = fix_flags(&b.fix);
    let turning = flags[3..].iter().filter(|&&f| f).count();
    if turning != 0 && turning != 3 {
        let span = b.fix.as_ref().map_or(table_span.clone(), Spanned::span);
        return Err(ctx.invalid(
            &span,
            format!("'fix' in {table}: a {}'s rotation is fixed as a whole; give all of \"rx\", \"ry\", \"rz\" or none", T::BODY),
        ));
    }

    let choices = choices(ctx, &b, table, index)?;
    let kind = match kind {
        BlockKindSpec::Random => random(ctx, &b, table, run_seed, choices, index, &require)?,
        BlockKindSpec::Lattice => lattice(ctx, &b, table, run_seed, choices, index, &require)?,
        BlockKindSpec::List => list(ctx, &b, table, index, &require)?,
        BlockKindSpec::File => file(ctx, &b, table, index, &require)?,
    };
    account(ctx, &b, table, &kind, density, index)?;
    Ok(BlockSource {
        location,
        group,
        density,
        damping,
        velocity: vec3_or(&b.velocity, [0.0; 3]),
        spin: vec3_or(&b.spin, [0.0; 3]),
        fix: Fixity::from_flags(flags),
        kind,
    })
}

/// The key of a list's rows: `blocks` or `clumps`.
fn rows_key<T: Template>() -> &'static [&'static str] {
    if T::BODY == "clump" {
        &["clumps"]
    } else {
        &["blocks"]
    }
}

/// The shapes of a fill with their weights, from `shape` or `shapes` (and
/// `weights`); `None` for a list or file, which name their shapes per row
/// or through `shape` alone. A mesh's bare name shares its weight equally
/// among its objects.
fn choices<T: Template + Clone>(
    ctx: &Ctx<'_>,
    b: &BlockSpec,
    table: &str,
    index: &ShapeIndex<T>,
) -> Result<Option<Vec<(u32, f64)>>> {
    let fill = matches!(
        b.kind.get_ref(),
        BlockKindSpec::Random | BlockKindSpec::Lattice
    );
    if let (Some(_), Some(list)) = (&b.shape, &b.shapes) {
        return Err(ctx.invalid(
            &list.span(),
            format!("{table} has both 'shape' and 'shapes'; give one"),
        ));
    }
    if let (None, Some(w)) = (&b.shapes, &b.weights) {
        return Err(ctx.invalid(
            &w.span(),
            format!("'weights' in {table} goes with 'shapes' (one weight per shape)"),
        ));
    }
    if !fill {
        if let Some(list) = &b.shapes {
            return Err(ctx.invalid(
                &list.span(),
                format!("'shapes' in {table} is for random and lattice fills; a list or file takes one 'shape' (and a list row its own 'shape')"),
            ));
        }
        return Ok(None);
    }
    let (names, weights): (Vec<&Spanned<String>>, Vec<f64>) = match (&b.shape, &b.shapes) {
        (Some(one), None) => (vec![one], vec![1.0]),
        (None, Some(list)) => {
            let names: Vec<&Spanned<String>> = list.get_ref().iter().collect();
            if names.is_empty() {
                return Err(ctx.invalid(
                    &list.span(),
                    format!("'shapes' in {table} is empty; name at least one shape"),
                ));
            }
            let weights = match &b.weights {
                None => vec![1.0; names.len()],
                Some(w) => {
                    let values: Vec<f64> = w.get_ref().iter().map(|v| v.get_ref().0).collect();
                    if values.len() != names.len() {
                        return Err(ctx.invalid(
                            &w.span(),
                            format!(
                                "'weights' in {table} has {} number(s) for {} shape(s); give one weight per shape",
                                values.len(),
                                names.len()
                            ),
                        ));
                    }
                    for v in w.get_ref() {
                        if v.get_ref().0 < 0.0 {
                            return Err(ctx.invalid(
                                &v.span(),
                                format!(
                                    "each of 'weights' in {table} must be >= 0, got {:?}",
                                    v.get_ref().0
                                ),
                            ));
                        }
                    }
                    if values.iter().sum::<f64>() <= 0.0 {
                        return Err(ctx.invalid(
                            &w.span(),
                            format!("'weights' in {table} are all zero; at least one must be > 0"),
                        ));
                    }
                    values
                }
            };
            (names, weights)
        }
        _ => {
            return Err(ctx.missing(
                &b.kind.span(),
                format!("{table} needs 'shape' (a name) or 'shapes' (a list of names)"),
            ))
        }
    };
    let mut out = Vec::new();
    for (name, weight) in names.into_iter().zip(weights) {
        let ks = index.resolve(ctx, name, table)?;
        let share = weight / ks.len() as f64;
        out.extend(ks.into_iter().map(|k| (k, share)));
    }
    Ok(Some(out))
}

/// `orientation` of a fill: `"random"` or a turn from the shapes' frames.
fn orientation(
    ctx: &Ctx<'_>,
    b: &BlockSpec,
    table: &str,
    default: BlockOrientation,
) -> Result<BlockOrientation> {
    match &b.orientation {
        None => Ok(default),
        Some(o) => match o.get_ref() {
            OrientationSpec::Random => Ok(BlockOrientation::Random),
            OrientationSpec::Fixed(q) => unit_quat(q.0)
                .map(BlockOrientation::Fixed)
                .map_err(|e| ctx.invalid(&o.span(), format!("'orientation' in {table} {e}"))),
        },
    }
}

/// `kind = "random"`: count, region (holding every chosen shape's bounding
/// sphere), orientation (default random), seed (default `run_seed`) and
/// attempt limit (default 1000).
fn random<T: Template + Clone>(
    ctx: &Ctx<'_>,
    b: &BlockSpec,
    table: &str,
    run_seed: u64,
    choices: Option<Vec<(u32, f64)>>,
    index: &ShapeIndex<T>,
    require: &dyn Fn(&str) -> ConfigError,
) -> Result<BlockKind> {
    let choices = choices.expect("a fill has choices");
    let count = b.count.as_ref().ok_or_else(|| require("count"))?;
    let count = int_at_least(ctx, count, 1, &format!("'count' in {table}"))? as usize;
    let region_spec = b.region.as_ref().ok_or_else(|| require("region"))?;
    let region = region(ctx, region_spec, table)?;
    for &(k, _) in &choices {
        let shape = &index.shapes[k as usize];
        let size = region.max - region.min;
        if 2.0 * shape.bounding_radius() > size.min_element() {
            return Err(ctx.invalid(
                &region_spec.span(),
                format!(
                    "region of {table} cannot hold shape '{}': its bounding sphere is {:?} m across, the region's smallest side {:?} m",
                    shape.name(),
                    2.0 * shape.bounding_radius(),
                    size.min_element()
                ),
            ));
        }
    }
    Ok(BlockKind::Random {
        orientation: orientation(ctx, b, table, BlockOrientation::Random)?,
        choices,
        count,
        region,
        seed: seed_or(ctx, &b.seed, run_seed, table)?,
        max_attempts: max_attempts(ctx, &b.max_attempts, table)?,
    })
}

/// `kind = "lattice"`: region, orientation (default the identity), spacing
/// (default and least: what keeps the blocks apart), counts and seed.
fn lattice<T: Template + Clone>(
    ctx: &Ctx<'_>,
    b: &BlockSpec,
    table: &str,
    run_seed: u64,
    choices: Option<Vec<(u32, f64)>>,
    index: &ShapeIndex<T>,
    require: &dyn Fn(&str) -> ConfigError,
) -> Result<BlockKind> {
    let choices = choices.expect("a fill has choices");
    let orientation = orientation(ctx, b, table, BlockOrientation::Fixed(Quat::IDENTITY))?;
    let least = lattice_block_spacing(&BlockMix {
        shapes: &index.shapes,
        choices: &choices,
        orientation,
    });
    let spacing = match &b.spacing {
        None => least,
        Some(s) => {
            let v = positive(
                ctx,
                &s.span(),
                s.get_ref().0,
                &format!("'spacing' in {table}"),
                "m",
            )?;
            // The least spacing is computed; a hand-typed copy of it may
            // round a little below.
            if v < least * (1.0 - 1e-9) {
                let why = match orientation {
                    BlockOrientation::Random => "the largest bounding-sphere diameter",
                    BlockOrientation::Fixed(_) => "the widest side of their boxes, as oriented",
                };
                return Err(ctx.invalid(
                    &s.span(),
                    format!("'spacing' in {table} must be >= {least:?} m ({why}) so {}s do not overlap, got {v:?}", T::BODY),
                ));
            }
            v.max(least)
        }
    };
    let region_spec = b.region.as_ref().ok_or_else(|| require("region"))?;
    let region: Aabb = region(ctx, region_spec, table)?;
    let counts = lattice_cells(
        ctx,
        &b.counts,
        region_spec,
        &region,
        spacing,
        table,
        rows_key::<T>()[0],
    )?;
    Ok(BlockKind::Lattice {
        choices,
        orientation,
        spacing,
        region,
        counts,
        seed: seed_or(ctx, &b.seed, run_seed, table)?,
    })
}

/// `kind = "list"`: the rows of `blocks` (or `clumps`), each with its own
/// shape or the table's `shape`.
fn list<T: Template + Clone>(
    ctx: &Ctx<'_>,
    b: &BlockSpec,
    table: &str,
    index: &ShapeIndex<T>,
    require: &dyn Fn(&str) -> ConfigError,
) -> Result<BlockKind> {
    let default_shape = match &b.shape {
        Some(name) => Some(index.one(ctx, name, table)?),
        None => None,
    };
    let key = rows_key::<T>()[0];
    let rows_spec = if key == "clumps" {
        &b.clumps
    } else {
        &b.blocks
    };
    let list = rows_spec.as_ref().ok_or_else(|| require(key))?;
    if list.get_ref().is_empty() {
        return Err(ctx.invalid(
            &list.span(),
            format!("'{key}' in {table} is empty; give at least one row"),
        ));
    }
    let mut rows = Vec::with_capacity(list.get_ref().len());
    for (i, row) in list.get_ref().iter().enumerate() {
        let row_name = format!("row #{} of '{key}' in {table}", i + 1);
        let spec = row.get_ref();
        let shape = match &spec.shape {
            Some(name) => index.one(ctx, name, &row_name)?,
            None => default_shape.ok_or_else(|| {
                ctx.missing(
                    &row.span(),
                    format!("{row_name} has no 'shape' and {table} has no default 'shape'"),
                )
            })?,
        };
        let orientation = match &spec.orientation {
            Some(q) => quat_key(ctx, q, &format!("'orientation' in {row_name}"))?,
            None => Quat::IDENTITY,
        };
        if let Some(p) = &spec.pos {
            ctx.coordinates(&p.span(), p.get_ref().0, &format!("'pos' of {row_name}"))?;
        }
        rows.push(BlockRow {
            shape,
            pos: spec.pos.as_ref().map(|p| p.get_ref().0),
            orientation,
            velocity: spec.velocity.as_ref().map(|v| v.get_ref().0),
            spin: spec.spin.as_ref().map(|v| v.get_ref().0),
        });
    }
    Ok(BlockKind::Explicit(rows))
}

/// The columns of a block poses CSV: centroid required; orientation,
/// velocity and spin optional, each all together.
const BLOCK_CSV: CsvSchema = CsvSchema {
    columns: &[
        &["x"],
        &["y"],
        &["z"],
        &["qw"],
        &["qx"],
        &["qy"],
        &["qz"],
        &["vx"],
        &["vy"],
        &["vz"],
        &["wx"],
        &["wy"],
        &["wz"],
    ],
    required: &[0, 1, 2],
    together: &[&[3, 4, 5, 6], &[7, 8, 9], &[10, 11, 12]],
    layout: "x,y,z[,qw,qx,qy,qz][,vx,vy,vz][,wx,wy,wz]",
};

/// `kind = "file"`: one body of shape `shape` per row of a CSV file.
fn file<T: Template + Clone>(
    ctx: &Ctx<'_>,
    b: &BlockSpec,
    table: &str,
    index: &ShapeIndex<T>,
    require: &dyn Fn(&str) -> ConfigError,
) -> Result<BlockKind> {
    let shape = index.one(
        ctx,
        b.shape.as_ref().ok_or_else(|| require("shape"))?,
        table,
    )?;
    let path_spec = b.path.as_ref().ok_or_else(|| require("path"))?;
    let key_span = path_spec.span();
    let (path, bytes) = ctx.data_file(path_spec, "poses file", table)?;
    let fail = |issue| ctx.data_error(&path, &key_span, issue);
    let text = String::from_utf8(bytes)
        .map_err(|_| fail(FileIssue::whole("poses file is not valid UTF-8 text")))?;
    let parsed = read_csv_rows(&text, &BLOCK_CSV).map_err(fail)?;
    if parsed.is_empty() {
        return Err(fail(FileIssue::whole(format!(
            "the file holds no {}s",
            T::BODY
        ))));
    }
    let mut rows = Vec::with_capacity(parsed.len());
    for row in &parsed {
        let orientation = match row.all([3, 4, 5, 6]) {
            Some(q) => unit_quat(q).map_err(|e| {
                let col = row.values[3].map_or(1, |v| v.1);
                fail(FileIssue::at(
                    row.line,
                    col,
                    format!("orientation (qw, qx, qy, qz) {e}"),
                ))
            })?,
            None => Quat::IDENTITY,
        };
        if let Some(pos) = row.all([0, 1, 2]) {
            if let Some(why) = limits::too_far(pos) {
                let col = row.values[0].map_or(1, |v| v.1);
                return Err(fail(FileIssue::at(
                    row.line,
                    col,
                    format!("this {} {why}", T::BODY),
                )));
            }
        }
        rows.push(BlockRow {
            shape,
            pos: row.all([0, 1, 2]),
            orientation,
            velocity: row.all([7, 8, 9]),
            spin: row.all([10, 11, 12]),
        });
    }
    Ok(BlockKind::Explicit(rows))
}

/// The blocks of a source weighed before any is made: each shape's mass
/// and moments usable at `density`; random fills that the region could
/// hold; their memory; the extent they cover.
fn account<T: Template + Clone>(
    ctx: &Ctx<'_>,
    b: &BlockSpec,
    table: &str,
    kind: &BlockKind,
    density: f64,
    index: &ShapeIndex<T>,
) -> Result<()> {
    let shape = |k: u32| &index.shapes[k as usize];
    let mut used: Vec<u32> = match kind {
        BlockKind::Random { choices, .. } | BlockKind::Lattice { choices, .. } => {
            choices.iter().map(|c| c.0).collect()
        }
        BlockKind::Explicit(rows) => rows.iter().map(|r| r.shape).collect(),
    };
    used.sort_unstable();
    used.dedup();
    let at_density = span_of(&b.density).unwrap_or_else(|| b.kind.span());
    for &k in &used {
        let s = shape(k);
        let mass = density * s.volume();
        let moments = (
            density * s.unit_moments().min_element(),
            density * s.unit_moments().max_element(),
        );
        if let Some(why) = limits::mass_issue(mass, moments) {
            return Err(ctx.invalid(
                &at_density,
                format!(
                    "a {} of shape '{}' (volume {} m^3) at density {} kg/m^3 in {table} cannot be simulated: {why}",
                    T::BODY,
                    s.name(),
                    Approx(s.volume()),
                    Approx(density)
                ),
            ));
        }
    }
    let radii = used.iter().map(|&k| shape(k).bounding_radius());
    let pieces = used.iter().map(|&k| shape(k).pieces()).max().unwrap_or(1) as f64;
    let smallest = radii.clone().fold(f64::INFINITY, f64::min);
    let largest = radii.fold(0.0, f64::max);
    let (n, at, why) = match kind {
        BlockKind::Random { count, region, .. } => {
            let at = span_of(&b.count).unwrap_or_else(|| b.kind.span());
            packing(
                ctx,
                &at,
                *count,
                smallest,
                region,
                &format!("{}s (bounding spheres)", T::BODY),
            )?;
            ctx.extent(region.min.to_array(), region.max.to_array(), largest);
            (*count as f64, at, String::new())
        }
        BlockKind::Lattice {
            spacing,
            region,
            counts,
            ..
        } => {
            ctx.extent(region.min.to_array(), region.max.to_array(), largest);
            let at = span_of(&b.counts)
                .or_else(|| span_of(&b.region))
                .unwrap_or_else(|| b.kind.span());
            let why = if counts.is_some() {
                " (its 'counts')".to_owned()
            } else {
                format!(
                    " (its region holds that many spacings of {} m)",
                    Approx(*spacing)
                )
            };
            (lattice_sites(region, *spacing, *counts), at, why)
        }
        BlockKind::Explicit(rows) => {
            for row in rows {
                let s = shape(row.shape);
                let c = row.pos.unwrap_or_else(|| s.input_centroid().to_array());
                let r = s.bounding_radius();
                ctx.extent(c.map(|x| x - r), c.map(|x| x + r), r);
            }
            let at = span_of(&b.blocks)
                .or_else(|| span_of(&b.clumps))
                .or_else(|| span_of(&b.path))
                .unwrap_or_else(|| b.kind.span());
            (rows.len() as f64, at, String::new())
        }
    };
    // A clump's pebbles each cost about what a block does, with their
    // contacts.
    let each = pieces * limits::block_bytes();
    ctx.reserve(
        &at,
        n * each,
        format_args!(
            "{table} makes {} {}s{why}, about {} each with their contacts",
            Count(n),
            T::BODY,
            Bytes(each)
        ),
    )
}
