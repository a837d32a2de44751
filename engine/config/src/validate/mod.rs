//! `*Spec` -> validated types.
//!
//! Reads: a [`ConfigSpec`] with spans, the config's folder (for relative
//! paths), and the data files it references (meshes, positions). Writes: a
//! [`RunConfig`]. Invariant: the first rule that fails stops validation with
//! an error at the key (or table) that broke it; defaults are applied here
//! and only here.
//!
//! This module holds [`Ctx`] (the source text, for located errors, and the
//! folder relative paths start from), [`validate`] itself (with the
//! `[[plugins]]` paths and the cross-table rules: one model per group pair,
//! unique wall and shape names) and the checks the tables share. Each table
//! has its own submodule: `run` (`[run]`), `models` (`[[models]]`), `balls`
//! (`[[balls]]`), `walls` (`[[walls]]` and its sub-tables), `shapes`
//! (`[[shapes]]`), `blocks` (`[[blocks]]`), `bonds` (`[[bonds]]`) and
//! `output` (`[output]`).

mod balls;
mod blocks;
mod bonds;
mod cell;
mod models;
mod output;
mod run;
mod shapes;
mod walls;

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde_spanned::Spanned;

use crate::error::{ConfigError, ErrorKind, Location, Source};
use crate::limits::{self, Approx, Bytes, Count, Machine};
use crate::mesh::FileIssue;
use crate::spec::{
    BlockResolutionSpec, ConfigSpec, DofSpec, Int, KgPerM3, Num, RegionSpec, ShapeKindSpec,
    Unitless, Vec3,
};
use crate::types::{PluginPath, RunConfig};
use talus_core::generate::lattice_counts;
use talus_core::math::v3;
use talus_core::{Aabb, BlockResolution};

use balls::ball_source;
use blocks::{block_source, ShapeIndex};
use models::model;
use output::output_settings;
use run::run_settings;
use shapes::{shape_sources, template_source};
use walls::wall_source;

type Result<T> = std::result::Result<T, ConfigError>;

struct Ctx<'a> {
    src: &'a Source<'a>,
    /// Folder that relative paths in the config are resolved against.
    dir: PathBuf,
    /// What the machine offers the run.
    machine: Machine,
    /// What the tables validated so far will need.
    budget: RefCell<Budget>,
}

/// The run's needs as the tables are validated: memory and the extent of
/// the model (for the cell space).
struct Budget {
    /// Estimated bytes.
    bytes: f64,
    /// Bounding box of every region, position and wall vertex so far (m).
    lo: [f64; 3],
    hi: [f64; 3],
    /// Largest body radius so far (m; a block's bounding radius).
    largest: f64,
}

impl Ctx<'_> {
    fn loc(&self, span: &Range<usize>) -> Location {
        self.src.loc(span)
    }

    fn invalid(&self, span: &Range<usize>, msg: impl std::fmt::Display) -> ConfigError {
        self.src.err(ErrorKind::InvalidValue, span, msg)
    }

    fn missing(&self, span: &Range<usize>, msg: impl std::fmt::Display) -> ConfigError {
        self.src.err(ErrorKind::MissingKey, span, msg)
    }

    /// Resolves `written` against the config's folder and checks that it
    /// exists.
    fn existing_path(&self, written: &Spanned<String>, what: &str, table: &str) -> Result<PathBuf> {
        let span = written.span();
        let text = written.get_ref();
        if text.trim().is_empty() {
            return Err(self.invalid(&span, format!("'path' in {table} is empty")));
        }
        let resolved = self.dir.join(text);
        if !resolved.exists() {
            let shown = std::path::absolute(&resolved).unwrap_or_else(|_| resolved.clone());
            return Err(self.src.err(
                ErrorKind::MissingFile,
                &span,
                format!(
                    "{what} '{text}' not found (resolved to '{}'; relative paths are relative to the config file's folder)",
                    shown.display()
                ),
            ));
        }
        Ok(resolved)
    }

    /// Resolves and reads a data file (mesh, positions, poses, vertex
    /// velocities): it must be a regular file (a FIFO or device would
    /// block or never end) that the machine's memory can hold.
    fn data_file(
        &self,
        written: &Spanned<String>,
        what: &str,
        table: &str,
    ) -> Result<(PathBuf, Vec<u8>)> {
        let path = self.existing_path(written, what, table)?;
        let span = written.span();
        let meta = std::fs::metadata(&path).map_err(|e| {
            self.src.err(
                ErrorKind::Io,
                &span,
                format!("cannot read '{}': {e}", path.display()),
            )
        })?;
        if !meta.is_file() {
            return Err(self.invalid(
                &span,
                format!(
                    "{what} '{}' in {table} is {}, not a regular file; give the path of a file",
                    written.get_ref(),
                    file_type(&meta)
                ),
            ));
        }
        let room = self.machine.memory as f64 - self.budget.borrow().bytes;
        if meta.len() as f64 > room {
            return Err(self.invalid(
                &span,
                format!(
                    "{what} '{}' in {table} holds {}; reading it needs more than the {} of memory left for it ({} available, from {})",
                    written.get_ref(),
                    Bytes(meta.len() as f64),
                    Bytes(room.max(0.0)),
                    Bytes(self.machine.memory as f64),
                    self.machine.memory_source
                ),
            ));
        }
        let bytes = self.read(&path, &span)?;
        Ok((path, bytes))
    }

    /// Counts `bytes` of memory for `what` (a phrase naming the table and
    /// what it makes), refused when the run would then need more than the
    /// machine has.
    fn reserve(&self, span: &Range<usize>, bytes: f64, what: impl std::fmt::Display) -> Result<()> {
        let mut budget = self.budget.borrow_mut();
        let total = budget.bytes + bytes;
        let have = self.machine.memory as f64;
        // A NaN or infinite need is refused too.
        if total.is_nan() || total > have {
            let before = if bytes >= 0.99 * total {
                String::new()
            } else {
                format!(
                    " ({} for these, {} for what comes before them)",
                    Bytes(bytes),
                    Bytes(budget.bytes)
                )
            };
            return Err(self.invalid(
                span,
                format!(
                    "{what}: the run would need about {} of memory{before}, more than the {} this machine has available (from {})",
                    Bytes(total),
                    Bytes(have),
                    self.machine.memory_source
                ),
            ));
        }
        budget.bytes = total;
        Ok(())
    }

    /// Takes `lo..hi` (m) into the model's extent and `radius` (m) into its
    /// largest body, for the cell space.
    fn extent(&self, lo: [f64; 3], hi: [f64; 3], radius: f64) {
        let mut budget = self.budget.borrow_mut();
        for axis in 0..3 {
            budget.lo[axis] = budget.lo[axis].min(lo[axis]);
            budget.hi[axis] = budget.hi[axis].max(hi[axis]);
        }
        budget.largest = budget.largest.max(radius);
    }

    /// Counts the engine's cell space over the model's extent.
    fn reserve_cells(&self, span: &Range<usize>) -> Result<()> {
        let (extent, largest) = {
            let b = self.budget.borrow();
            let extent: [f64; 3] = std::array::from_fn(|k| (b.hi[k] - b.lo[k]).max(0.0));
            (extent, b.largest)
        };
        if largest <= 0.0 {
            return Ok(());
        }
        // The engine's cells: twice the largest radius and tolerance.
        let n = limits::cells(extent, 2.2 * largest);
        self.reserve(
            span,
            n * limits::CELL_BYTES,
            format_args!("the cell space ({} cells)", Count(n)),
        )
    }

    /// A coordinate `v` (m) of `what` within [`limits::MAX_COORDINATE`].
    fn coordinates(&self, span: &Range<usize>, v: [f64; 3], what: &str) -> Result<()> {
        match limits::too_far(v) {
            None => Ok(()),
            Some(why) => Err(self.invalid(span, format!("{what} {why}"))),
        }
    }

    /// Reads a referenced data file.
    fn read(&self, path: &Path, key_span: &Range<usize>) -> Result<Vec<u8>> {
        std::fs::read(path).map_err(|e| {
            self.src.err(
                ErrorKind::Io,
                key_span,
                format!("cannot read '{}': {e}", path.display()),
            )
        })
    }

    /// An error inside a data file, pointing into that file and naming
    /// where the config refers to it.
    fn data_error(&self, file: &Path, key_span: &Range<usize>, issue: FileIssue) -> ConfigError {
        let msg = format!("{} (file given at {})", issue.message, self.loc(key_span));
        match issue.line {
            Some(line) => ConfigError::at(
                ErrorKind::DataFile,
                Location {
                    file: file.to_path_buf(),
                    line,
                    col: issue.col,
                },
                msg,
            ),
            None => ConfigError::in_file(ErrorKind::DataFile, file, msg),
        }
    }
}

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

/// A `block_resolution` value.
fn block_resolution(r: BlockResolutionSpec) -> BlockResolution {
    match r {
        BlockResolutionSpec::Full => BlockResolution::Full,
        BlockResolutionSpec::Reduced => BlockResolution::Reduced,
        BlockResolutionSpec::Potential => BlockResolution::Potential,
    }
}

fn int_at_least(ctx: &Ctx<'_>, v: &Spanned<Int>, min: i64, what: &str) -> Result<i64> {
    let n = v.get_ref().0;
    if n < min {
        return Err(ctx.invalid(
            &v.span(),
            format!("{what} must be an integer >= {min}, got {n}"),
        ));
    }
    Ok(n)
}

/// `density` (kg/m^3, > 0) when given.
fn density(ctx: &Ctx<'_>, d: &Option<Spanned<Num<KgPerM3>>>, table: &str) -> Result<Option<f64>> {
    match d {
        Some(d) => Ok(Some(positive(
            ctx,
            &d.span(),
            d.get_ref().0,
            &format!("'density' in {table}"),
            "kg/m^3",
        )?)),
        None => Ok(None),
    }
}

/// `damping`: the local damping coefficient, in [0, 1), default 0.
fn damping(ctx: &Ctx<'_>, d: &Option<Spanned<Num<Unitless>>>, table: &str) -> Result<f64> {
    let Some(d) = d else {
        return Ok(0.0);
    };
    let v = d.get_ref().0;
    if !(0.0..1.0).contains(&v) {
        return Err(ctx.invalid(
            &d.span(),
            format!("'damping' in {table} must be in [0, 1), got {v:?}"),
        ));
    }
    Ok(v)
}

/// `fix`: per degree of freedom (x, y, z, rx, ry, rz), whether it is fixed.
fn fix_flags(f: &Option<Spanned<Vec<Spanned<DofSpec>>>>) -> [bool; 6] {
    let mut fixed = [false; 6];
    for dof in f.iter().flat_map(|f| f.get_ref()) {
        let k = match dof.get_ref() {
            DofSpec::X => 0,
            DofSpec::Y => 1,
            DofSpec::Z => 2,
            DofSpec::Rx => 3,
            DofSpec::Ry => 4,
            DofSpec::Rz => 5,
        };
        fixed[k] = true;
    }
    fixed
}

/// `seed` (>= 0), default the run's seed.
fn seed_or(ctx: &Ctx<'_>, s: &Option<Spanned<Int>>, run_seed: u64, table: &str) -> Result<u64> {
    match s {
        Some(s) => Ok(int_at_least(ctx, s, 0, &format!("'seed' in {table}"))? as u64),
        None => Ok(run_seed),
    }
}

/// `max_attempts` of a random fill (> 0), default 1000.
fn max_attempts(ctx: &Ctx<'_>, m: &Option<Spanned<Int>>, table: &str) -> Result<u32> {
    let Some(m) = m else {
        return Ok(1000);
    };
    let n = int_at_least(ctx, m, 1, &format!("'max_attempts' in {table}"))?;
    u32::try_from(n).map_err(|_| {
        ctx.invalid(
            &m.span(),
            format!("'max_attempts' in {table} must be at most {}", u32::MAX),
        )
    })
}

/// How many sites a lattice has: `counts`, or as many `spacing`s as fit
/// the region per axis; counted in floating point, so a region of 1e9
/// spacings cubed gives 1e27, not an overflow.
fn lattice_sites(region: &Aabb, spacing: f64, counts: Option<[usize; 3]>) -> f64 {
    match counts {
        Some(n) => n.iter().map(|&c| c as f64).product(),
        None => (0..3)
            .map(|axis| ((region.max[axis] - region.min[axis]) / spacing * (1.0 + 1e-12)).floor())
            .product(),
    }
}

/// Refuses `n` random bodies of bounding radius at least `radius` (m) in
/// `region` when even the densest packing of equal balls could not hold
/// them.
fn packing(
    ctx: &Ctx<'_>,
    span: &Range<usize>,
    n: usize,
    radius: f64,
    region: &Aabb,
    what: &str,
) -> Result<()> {
    let size = region.max - region.min;
    let room = size.x * size.y * size.z;
    let need = n as f64 * 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3);
    if need <= limits::DENSEST_PACKING * room {
        return Ok(());
    }
    Err(ctx.invalid(
        span,
        format!(
            "{n} {what} of radius {} m fill {} m^3, but the region holds {} m^3 and no packing of equal balls fills more than 74 % of space; lower the count or enlarge the region",
            Approx(radius),
            Approx(need),
            Approx(room)
        ),
    ))
}

/// The cells of a lattice of `noun` (balls, blocks): with `counts` they
/// must fit the region, without it the region must hold at least one
/// `spacing` on every axis.
fn lattice_cells(
    ctx: &Ctx<'_>,
    counts: &Option<Spanned<Vec<Spanned<Int>>>>,
    region_spec: &Spanned<RegionSpec>,
    region: &Aabb,
    spacing: f64,
    table: &str,
    noun: &str,
) -> Result<Option<[usize; 3]>> {
    let Some(c) = counts else {
        let n = lattice_counts(region, spacing, None);
        if let Some(axis) = n.iter().position(|&c| c == 0) {
            return Err(ctx.invalid(
                &region_spec.span(),
                format!(
                    "region of {table} is smaller than one lattice spacing ({spacing:?} m) along {}",
                    ["x", "y", "z"][axis]
                ),
            ));
        }
        return Ok(None);
    };
    let list = c.get_ref();
    if list.len() != 3 {
        return Err(ctx.invalid(
            &c.span(),
            format!(
                "'counts' in {table} must be [nx, ny, nz], got {} number(s)",
                list.len()
            ),
        ));
    }
    let mut n = [0usize; 3];
    for (slot, v) in n.iter_mut().zip(list) {
        *slot = int_at_least(ctx, v, 1, &format!("each entry of 'counts' in {table}"))? as usize;
    }
    for (axis, name) in ["x", "y", "z"].iter().enumerate() {
        let need = n[axis] as f64 * spacing;
        let have = region.max[axis] - region.min[axis];
        if need > have * (1.0 + 1e-12) {
            return Err(ctx.invalid(
                &c.span(),
                format!(
                    "'counts' in {table}: {} {noun} at spacing {spacing:?} m need {need:?} m along {name}, but the region is {have:?} m",
                    n[axis]
                ),
            ));
        }
    }
    Ok(Some(n))
}

fn vec3_or<U>(v: &Option<Spanned<Vec3<U>>>, default: [f64; 3]) -> [f64; 3] {
    v.as_ref().map_or(default, |v| v.get_ref().0)
}

/// A group name of a body or wall: non-empty, not the wildcard.
fn group_name(
    ctx: &Ctx<'_>,
    g: &Option<Spanned<String>>,
    default: &str,
    table: &str,
) -> Result<String> {
    let Some(g) = g else {
        return Ok(default.to_owned());
    };
    let name = g.get_ref().trim();
    if name.is_empty() {
        return Err(ctx.invalid(&g.span(), format!("'group' in {table} must not be empty")));
    }
    if name == "*" {
        return Err(ctx.invalid(
            &g.span(),
            format!("'group' in {table} cannot be \"*\": it is the wildcard of [[models]] groups"),
        ));
    }
    Ok(name.to_owned())
}

fn region(ctx: &Ctx<'_>, r: &Spanned<RegionSpec>, table: &str) -> Result<Aabb> {
    let spec = r.get_ref();
    let (min, max) = (spec.min.get_ref().0, spec.max.get_ref().0);
    check_min_max(ctx, &r.span(), min, max, &format!("region of {table}"))?;
    ctx.coordinates(
        &spec.min.span(),
        min,
        &format!("'min' of the region of {table}"),
    )?;
    ctx.coordinates(
        &spec.max.span(),
        max,
        &format!("'max' of the region of {table}"),
    )?;
    Ok(Aabb {
        min: v3(min),
        max: v3(max),
    })
}

fn check_min_max(
    ctx: &Ctx<'_>,
    span: &Range<usize>,
    min: [f64; 3],
    max: [f64; 3],
    what: &str,
) -> Result<()> {
    for (axis, name) in ["x", "y", "z"].iter().enumerate() {
        if min[axis] >= max[axis] {
            return Err(ctx.invalid(
                span,
                format!(
                    "{what}: min must be < max on every axis, but along {name} min = {:?} and max = {:?}",
                    min[axis], max[axis]
                ),
            ));
        }
    }
    Ok(())
}

/// `scale` of a mesh file (> 0), default 1.
fn mesh_scale(ctx: &Ctx<'_>, s: &Option<Spanned<Num<Unitless>>>, table: &str) -> Result<f64> {
    match s {
        None => Ok(1.0),
        Some(v) => positive(
            ctx,
            &v.span(),
            v.get_ref().0,
            &format!("'scale' in {table}"),
            "dimensionless",
        ),
    }
}

fn positive(ctx: &Ctx<'_>, span: &Range<usize>, v: f64, what: &str, unit: &str) -> Result<f64> {
    if v > 0.0 {
        Ok(v)
    } else {
        Err(ctx.invalid(span, format!("{what} must be > 0 ({unit}), got {v:?}")))
    }
}

/// A `[[...]]` table with a `kind`, its foreign keys rejected: makes the
/// "missing key" errors of its kind.
struct KindTable<'a> {
    ctx: &'a Ctx<'a>,
    span: Range<usize>,
    kind: &'static str,
    table: &'a str,
}

impl<'a> KindTable<'a> {
    /// Rejects the keys in `present` (name, span if given) that `kind`
    /// does not use: those not in `allowed` (the kind's own keys); the
    /// message lists `common` and `allowed`.
    fn new(
        ctx: &'a Ctx<'a>,
        span: Range<usize>,
        kind: &'static str,
        present: &[(&str, Option<Range<usize>>)],
        (allowed, common): (&[&str], &[&str]),
        table: &'a str,
    ) -> Result<Self> {
        for (key, key_span) in present {
            if let Some(key_span) = key_span {
                if !allowed.contains(key) {
                    let all: Vec<&str> = common.iter().chain(allowed).copied().collect();
                    return Err(ctx.src.err(
                        ErrorKind::UnknownKey,
                        key_span,
                        format!(
                            "key '{key}' does not apply to kind = \"{kind}\" in {table}; allowed: {}",
                            all.join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(KindTable {
            ctx,
            span,
            kind,
            table,
        })
    }

    /// The error for a required key of this kind that the table lacks.
    fn missing(&self, key: &str) -> ConfigError {
        self.ctx.missing(
            &self.span,
            format!(
                "missing key '{key}' in {} (kind = \"{}\")",
                self.table, self.kind
            ),
        )
    }
}

fn span_of<T>(v: &Option<Spanned<T>>) -> Option<Range<usize>> {
    v.as_ref().map(Spanned::span)
}

/// What kind of file system entry `meta` describes, for messages.
fn file_type(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    "a special file"
}
