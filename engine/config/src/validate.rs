//! `*Spec` -> validated types.
//!
//! Reads: a [`ConfigSpec`] with spans, the config's folder (for relative
//! paths), and the data files it references (meshes, positions). Writes: a
//! [`RunConfig`]. Invariant: the first rule that fails stops validation with
//! an error at the key (or table) that broke it; defaults are applied here
//! and only here.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde_spanned::Spanned;

use crate::error::{ConfigError, ErrorKind, Location, Source};
use crate::mesh::{self, FileIssue, WeldIssue};
use crate::positions::{self, PositionsFile};
use crate::spec::{
    BallKindSpec, BallSpec, ConfigSpec, DeformSpec, DofSpec, DtSpec, FaceSpec, InactiveSpec, Int,
    ModelSpec, MotionSpec, OutputSpec, PositionsFormat, RadiusSpec, RegionSpec, ResolutionSpec,
    RunSpec, ServoSpec, SideSpec, Vec3, WallKindSpec, WallSpec, BALL_COMMON_KEYS, WALL_COMMON_KEYS,
};
use crate::types::{
    BallKind, BallRow, BallSource, Deform, Duration, MeshData, ModelAssignment, OutputSettings,
    PluginPath, RunConfig, RunSettings, WallSource,
};
use talus_core::generate::{lattice_counts, RadiusDist};
use talus_core::math::v3;
use talus_core::wall::{Resolution, RigidMotion, Servo};
use talus_core::{Aabb, Fixity, Timestep};

/// The default group of balls.
pub(crate) const DEFAULT_BALL_GROUP: &str = "default";
/// The default group of walls.
pub(crate) const DEFAULT_WALL_GROUP: &str = "wall";

type Result<T> = std::result::Result<T, ConfigError>;

struct Ctx<'a> {
    src: &'a Source<'a>,
    /// Folder that relative paths in the config are resolved against.
    dir: PathBuf,
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
pub(crate) fn validate(src: &Source<'_>, spec: ConfigSpec) -> Result<RunConfig> {
    let dir = match src.file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let ctx = Ctx { src, dir };

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

    let output = output_settings(&ctx, spec.output)?;

    Ok(RunConfig {
        source: src.file.to_path_buf(),
        text: src.text.to_owned(),
        run,
        plugins,
        models,
        balls,
        walls,
        output,
    })
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

fn run_settings(ctx: &Ctx<'_>, run: Spanned<RunSpec>) -> Result<RunSettings> {
    let run_span = run.span();
    let run = run.into_inner();

    let duration = match (&run.steps, &run.time) {
        (Some(_), Some(time)) => {
            return Err(ctx.invalid(
                &time.span(),
                "'steps' and 'time' are both given in [run]; give exactly one",
            ))
        }
        (None, None) => {
            return Err(ctx.missing(
                &run_span,
                "[run] needs exactly one of 'steps' (integer > 0) or 'time' (s, > 0)",
            ))
        }
        (Some(steps), None) => {
            Duration::Steps(int_at_least(ctx, steps, 1, "'steps' in [run]")? as u64)
        }
        (None, Some(time)) => {
            let t = time.get_ref().0;
            if t <= 0.0 {
                return Err(ctx.invalid(
                    &time.span(),
                    format!("'time' in [run] must be > 0 (s), got {t:?}"),
                ));
            }
            Duration::Time(t)
        }
    };

    let dt = match run.dt.as_ref().map(|d| (*d.get_ref(), d.span())) {
        None | Some((DtSpec::Auto, _)) => {
            let safety = match &run.safety {
                None => 0.8,
                Some(s) => {
                    let v = s.get_ref().0;
                    if !(v > 0.0 && v <= 1.0) {
                        return Err(ctx.invalid(
                            &s.span(),
                            format!("'safety' in [run] must be in (0, 1], got {v:?}"),
                        ));
                    }
                    v
                }
            };
            Timestep::Auto { safety }
        }
        Some((DtSpec::Fixed(v), span)) => {
            if v <= 0.0 {
                return Err(ctx.invalid(
                    &span,
                    format!("'dt' in [run] must be \"auto\" or a number > 0 (s), got {v:?}"),
                ));
            }
            if let Some(s) = &run.safety {
                return Err(ctx.invalid(
                    &s.span(),
                    "'safety' in [run] only applies with dt = \"auto\"; remove it or set dt = \"auto\"",
                ));
            }
            Timestep::Fixed(v)
        }
    };

    let threads = match &run.threads {
        Some(t) => int_at_least(ctx, t, 0, "'threads' in [run]")? as usize,
        None => 0,
    };
    let seed = match &run.seed {
        Some(s) => int_at_least(ctx, s, 0, "'seed' in [run]")? as u64,
        None => 1,
    };
    let cell_tolerance = match &run.cell_tolerance {
        None => None,
        Some(c) => {
            let v = c.get_ref().0;
            if v < 0.0 {
                return Err(ctx.invalid(
                    &c.span(),
                    format!("'cell_tolerance' in [run] must be >= 0 (m), got {v:?}"),
                ));
            }
            (v > 0.0).then_some(v)
        }
    };

    Ok(RunSettings {
        duration,
        dt,
        gravity: vec3_or(&run.gravity, [0.0; 3]),
        threads,
        seed,
        cell_tolerance,
    })
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

/// The validated rule and the span of its `groups` (what duplicates point at).
fn model(
    ctx: &Ctx<'_>,
    m: Spanned<ModelSpec>,
    table: &str,
) -> Result<(ModelAssignment, Range<usize>)> {
    let location = ctx.loc(&m.span());
    let m = m.into_inner();
    let name = m.model.get_ref().trim();
    if name.is_empty() {
        return Err(ctx.invalid(
            &m.model.span(),
            format!("'model' in {table} must not be empty"),
        ));
    }
    let groups_span = m.groups.span();
    let groups = m.groups.into_inner();
    if groups.len() != 2 {
        return Err(ctx.invalid(
            &groups_span,
            format!(
                "'groups' in {table} needs exactly two group names (\"*\" matches any group), got {}",
                groups.len()
            ),
        ));
    }
    let mut names = [String::new(), String::new()];
    for (slot, g) in names.iter_mut().zip(&groups) {
        let n = g.get_ref().trim();
        if n.is_empty() {
            return Err(ctx.invalid(
                &g.span(),
                format!("group names in 'groups' of {table} must not be empty"),
            ));
        }
        *slot = n.to_owned();
    }
    let mut properties: Vec<(String, f64, Location)> = m
        .properties
        .map(|p| {
            p.into_inner()
                .0
                .into_iter()
                .map(|(k, v)| (k.get_ref().clone(), v.get_ref().0, ctx.loc(&k.span())))
                .collect()
        })
        .unwrap_or_default();
    // toml's map order depends on its features; sort so the order is fixed.
    properties.sort_by(|a, b| a.0.cmp(&b.0));
    let assignment = ModelAssignment {
        model: name.to_owned(),
        groups: names,
        properties,
        location,
    };
    Ok((assignment, groups_span))
}

fn region(ctx: &Ctx<'_>, r: &Spanned<RegionSpec>, table: &str) -> Result<Aabb> {
    let spec = r.get_ref();
    let (min, max) = (spec.min.get_ref().0, spec.max.get_ref().0);
    check_min_max(ctx, &r.span(), min, max, &format!("region of {table}"))?;
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

fn positive(ctx: &Ctx<'_>, span: &Range<usize>, v: f64, what: &str, unit: &str) -> Result<f64> {
    if v > 0.0 {
        Ok(v)
    } else {
        Err(ctx.invalid(span, format!("{what} must be > 0 ({unit}), got {v:?}")))
    }
}

/// Rejects keys that the chosen kind does not use.
fn reject_foreign_keys(
    ctx: &Ctx<'_>,
    present: &[(&str, Option<Range<usize>>)],
    allowed: &[&str],
    common: &[&str],
    kind: &str,
    table: &str,
) -> Result<()> {
    for (key, span) in present {
        if let Some(span) = span {
            if !allowed.contains(key) {
                let all: Vec<&str> = common.iter().chain(allowed).copied().collect();
                return Err(ctx.src.err(
                    ErrorKind::UnknownKey,
                    span,
                    format!(
                        "key '{key}' does not apply to kind = \"{kind}\" in {table}; allowed: {}",
                        all.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn span_of<T>(v: &Option<Spanned<T>>) -> Option<Range<usize>> {
    v.as_ref().map(Spanned::span)
}

fn single_radius(ctx: &Ctx<'_>, r: &Spanned<RadiusSpec>, table: &str, kind: &str) -> Result<f64> {
    match *r.get_ref() {
        RadiusSpec::Fixed(v) => positive(ctx, &r.span(), v, &format!("'radius' in {table}"), "m"),
        RadiusSpec::Range(..) => Err(ctx.invalid(
            &r.span(),
            format!("'radius' in {table} must be a single number for kind = \"{kind}\" ([rmin, rmax] is for kind = \"random\")"),
        )),
    }
}

fn ball_source(
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
    reject_foreign_keys(
        ctx,
        &present,
        kind.keys(),
        BALL_COMMON_KEYS,
        kind.as_str(),
        table,
    )?;

    let require = |key: &str| {
        ctx.missing(
            &table_span,
            format!(
                "missing key '{key}' in {table} (kind = \"{}\")",
                kind.as_str()
            ),
        )
    };

    let group = group_name(ctx, &b.group, DEFAULT_BALL_GROUP, table)?;
    let mut density = match &b.density {
        Some(d) => Some(positive(
            ctx,
            &d.span(),
            d.get_ref().0,
            &format!("'density' in {table}"),
            "kg/m^3",
        )?),
        None => None,
    };
    let damping = match &b.damping {
        None => 0.0,
        Some(d) => {
            let v = d.get_ref().0;
            if !(0.0..1.0).contains(&v) {
                return Err(ctx.invalid(
                    &d.span(),
                    format!("'damping' in {table} must be in [0, 1), got {v:?}"),
                ));
            }
            v
        }
    };
    let mut fixed = [false; 6];
    for dof in b.fix.iter().flat_map(|f| f.get_ref()) {
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
    let fix = Fixity::from_flags(fixed);

    let kind = match kind {
        BallKindSpec::Random => {
            let count = b.count.as_ref().ok_or_else(|| require("count"))?;
            let count = int_at_least(ctx, count, 1, &format!("'count' in {table}"))? as usize;
            let r = b.radius.as_ref().ok_or_else(|| require("radius"))?;
            let radius = match *r.get_ref() {
                RadiusSpec::Fixed(v) => RadiusDist::Fixed(positive(
                    ctx,
                    &r.span(),
                    v,
                    &format!("'radius' in {table}"),
                    "m",
                )?),
                RadiusSpec::Range(lo, hi) => {
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
            let seed = match &b.seed {
                Some(s) => int_at_least(ctx, s, 0, &format!("'seed' in {table}"))? as u64,
                None => run_seed,
            };
            let max_attempts = match &b.max_attempts {
                Some(m) => {
                    let n = int_at_least(ctx, m, 1, &format!("'max_attempts' in {table}"))?;
                    u32::try_from(n).map_err(|_| {
                        ctx.invalid(
                            &m.span(),
                            format!("'max_attempts' in {table} must be at most {}", u32::MAX),
                        )
                    })?
                }
                None => 1000,
            };
            BallKind::Random {
                count,
                radius,
                region,
                seed,
                max_attempts,
            }
        }
        BallKindSpec::Lattice => {
            let r = b.radius.as_ref().ok_or_else(|| require("radius"))?;
            let radius = single_radius(ctx, r, table, "lattice")?;
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
            let counts = match &b.counts {
                None => {
                    let n = lattice_counts(&region, spacing, None);
                    if let Some(axis) = n.iter().position(|&c| c == 0) {
                        return Err(ctx.invalid(
                            &region_spec.span(),
                            format!(
                                "region of {table} is smaller than one lattice spacing ({spacing:?} m) along {}",
                                ["x", "y", "z"][axis]
                            ),
                        ));
                    }
                    None
                }
                Some(c) => {
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
                        *slot =
                            int_at_least(ctx, v, 1, &format!("each entry of 'counts' in {table}"))?
                                as usize;
                    }
                    for (axis, name) in ["x", "y", "z"].iter().enumerate() {
                        let need = n[axis] as f64 * spacing;
                        let have = region.max[axis] - region.min[axis];
                        if need > have * (1.0 + 1e-12) {
                            return Err(ctx.invalid(
                                &c.span(),
                                format!(
                                    "'counts' in {table}: {} balls at spacing {spacing:?} m need {need:?} m along {name}, but the region is {have:?} m",
                                    n[axis]
                                ),
                            ));
                        }
                    }
                    Some(n)
                }
            };
            BallKind::Lattice {
                radius,
                spacing,
                region,
                counts,
            }
        }
        BallKindSpec::List => {
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
                            format!(
                                "{row_name} has no 'radius' and {table} has no default 'radius'"
                            ),
                        )
                    })?,
                };
                rows.push(BallRow {
                    pos: spec.pos.get_ref().0,
                    radius,
                    velocity: spec.velocity.as_ref().map(|v| v.get_ref().0),
                });
            }
            BallKind::Explicit(rows)
        }
        BallKindSpec::File => {
            let path_spec = b.path.as_ref().ok_or_else(|| require("path"))?;
            let key_span = path_spec.span();
            let path = ctx.existing_path(path_spec, "positions file", table)?;
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
            let bytes = ctx.read(&path, &key_span)?;
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
                rows.push(BallRow {
                    pos: row.pos,
                    radius,
                    velocity: row.velocity,
                });
            }
            if density.is_none() {
                density = parsed.header_density;
            }
            BallKind::Explicit(rows)
        }
    };

    let density = density.ok_or_else(|| {
        ctx.missing(
            &table_span,
            format!("missing key 'density' in {table} (kg/m^3, > 0; only an xyz header with 'rho' can supply it)"),
        )
    })?;

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

fn wall_source(ctx: &Ctx<'_>, w: Spanned<WallSpec>, table: &str) -> Result<WallSource> {
    let table_span = w.span();
    let location = ctx.loc(&table_span);
    let w = w.into_inner();
    let kind = *w.kind.get_ref();

    let name = w.name.get_ref().trim();
    if name.is_empty() {
        return Err(ctx.invalid(
            &w.name.span(),
            format!("'name' in {table} must not be empty"),
        ));
    }

    let present = [
        ("min", span_of(&w.min)),
        ("max", span_of(&w.max)),
        ("open", span_of(&w.open)),
        ("divisions", span_of(&w.divisions)),
        ("path", span_of(&w.path)),
        ("scale", span_of(&w.scale)),
        ("translate", span_of(&w.translate)),
        ("flip_normals", span_of(&w.flip_normals)),
    ];
    reject_foreign_keys(
        ctx,
        &present,
        kind.keys(),
        WALL_COMMON_KEYS,
        kind.as_str(),
        table,
    )?;
    let require = |key: &str| {
        ctx.missing(
            &table_span,
            format!(
                "missing key '{key}' in {table} (kind = \"{}\")",
                kind.as_str()
            ),
        )
    };

    let group = group_name(ctx, &w.group, DEFAULT_WALL_GROUP, table)?;
    let resolution = match w.resolution.as_ref().map(|r| *r.get_ref()) {
        None | Some(ResolutionSpec::Reduced) => Resolution::Reduced,
        Some(ResolutionSpec::Full) => Resolution::Full,
    };
    let cutoff_angle_deg = match &w.cutoff_angle {
        None => 10.0,
        Some(a) => {
            let v = a.get_ref().0;
            if !(0.0..=90.0).contains(&v) {
                return Err(ctx.invalid(
                    &a.span(),
                    format!("'cutoff_angle' in {table} must be in [0, 90] (degrees), got {v:?}"),
                ));
            }
            v
        }
    };
    let (motion, centre) = match &w.motion {
        Some(m) => {
            let (motion, centre) = motion(m.get_ref());
            (Some(motion), centre)
        }
        None => (None, None),
    };

    let mesh = match kind {
        WallKindSpec::Box => {
            let min = w.min.as_ref().ok_or_else(|| require("min"))?;
            let max = w.max.as_ref().ok_or_else(|| require("max"))?;
            let (lo, hi) = (min.get_ref().0, max.get_ref().0);
            check_min_max(ctx, &min.span(), lo, hi, &format!("box of {table}"))?;
            let mut open = [false; 6];
            for face in w.open.iter().flat_map(|o| o.get_ref()) {
                let idx = match face.get_ref() {
                    FaceSpec::MinusX => 0,
                    FaceSpec::PlusX => 1,
                    FaceSpec::MinusY => 2,
                    FaceSpec::PlusY => 3,
                    FaceSpec::MinusZ => 4,
                    FaceSpec::PlusZ => 5,
                };
                open[idx] = true;
            }
            if open.iter().all(|&o| o) {
                let span = w.open.as_ref().map_or(table_span.clone(), Spanned::span);
                return Err(ctx.invalid(
                    &span,
                    format!("'open' in {table} leaves out all six faces; the box would be empty"),
                ));
            }
            let divisions = match &w.divisions {
                None => 1,
                Some(d) => {
                    let n = int_at_least(ctx, d, 1, &format!("'divisions' in {table}"))?;
                    // 12 d^2 triangles must stay indexable by u32 and sane in memory.
                    if n > 4096 {
                        return Err(ctx.invalid(
                            &d.span(),
                            format!("'divisions' in {table} must be at most 4096, got {n}"),
                        ));
                    }
                    n as u32
                }
            };
            mesh::box_mesh(lo, hi, open, divisions)
        }
        WallKindSpec::Mesh => {
            let path_spec = w.path.as_ref().ok_or_else(|| require("path"))?;
            let key_span = path_spec.span();
            let path = ctx.existing_path(path_spec, "mesh file", table)?;
            let scale = match &w.scale {
                None => 1.0,
                Some(s) => positive(
                    ctx,
                    &s.span(),
                    s.get_ref().0,
                    &format!("'scale' in {table}"),
                    "dimensionless",
                )?,
            };
            let translate = vec3_or(&w.translate, [0.0; 3]);
            let flip = w.flip_normals.as_ref().is_some_and(|f| *f.get_ref());
            mesh_file(
                ctx,
                &path,
                &key_span,
                path_spec.get_ref(),
                scale,
                translate,
                flip,
                table,
            )?
        }
    };

    let inactive = match &w.inactive {
        None => Vec::new(),
        Some(list) => inactive_sides(ctx, list.get_ref(), &mesh, table)?,
    };
    let exclusive = |a: &str, b: &str, span: Range<usize>| {
        ctx.invalid(
            &span,
            format!("{table} has both [walls.{a}] and [walls.{b}]; a wall moves one way only"),
        )
    };
    if let (Some(_), Some(d)) = (&w.motion, &w.deform) {
        return Err(exclusive("motion", "deform", d.span()));
    }
    if let (Some(_), Some(sv)) = (&w.motion, &w.servo) {
        return Err(exclusive("motion", "servo", sv.span()));
    }
    if let (Some(_), Some(sv)) = (&w.deform, &w.servo) {
        return Err(exclusive("deform", "servo", sv.span()));
    }
    let deform = match &w.deform {
        None => None,
        Some(d) => Some(deformation(ctx, d.get_ref(), &mesh, table)?),
    };
    let servo = match &w.servo {
        None => None,
        Some(sv) => Some(servo(ctx, sv, &mesh, table)?),
    };

    Ok(WallSource {
        location,
        name: name.to_owned(),
        group,
        resolution,
        cutoff_angle_deg,
        motion,
        centre,
        deform,
        servo,
        inactive,
        mesh,
    })
}

/// `(v1 - v0) x (v2 - v0)` of triangle `t`: along its normal, twice its
/// area long.
fn area_vector(mesh: &MeshData, t: &[u32; 3]) -> [f64; 3] {
    let c = |k: usize| mesh.vertices[t[k] as usize];
    let (a, b, e) = (c(0), c(1), c(2));
    let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
    let v = [e[0] - a[0], e[1] - a[1], e[2] - a[2]];
    [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ]
}

/// Per-vertex velocities of `[walls.deform]`: `velocity + gradient (x -
/// center)` at each vertex's initial position (center: the mean of the
/// vertices), and the time schedule of the factor.
fn deformation(ctx: &Ctx<'_>, d: &DeformSpec, mesh: &MeshData, table: &str) -> Result<Deform> {
    let v0 = vec3_or(&d.velocity, [0.0; 3]);
    let mut g = [[0.0; 3]; 3];
    if let Some(rows) = &d.gradient {
        if rows.get_ref().len() != 3 {
            return Err(ctx.invalid(
                &rows.span(),
                format!(
                    "'gradient' in [walls.deform] of {table} must have 3 rows [[dvx/dx, dvx/dy, dvx/dz], ..] (1/s), got {}",
                    rows.get_ref().len()
                ),
            ));
        }
        for (i, row) in rows.get_ref().iter().enumerate() {
            g[i] = row.get_ref().0;
        }
    }
    let n = mesh.vertices.len().max(1) as f64;
    let c = match &d.center {
        Some(c) => c.get_ref().0,
        None => [0, 1, 2].map(|k| mesh.vertices.iter().map(|v| v[k]).sum::<f64>() / n),
    };
    let mut vertex_velocity: Vec<[f64; 3]> = mesh
        .vertices
        .iter()
        .map(|x| {
            let r = [x[0] - c[0], x[1] - c[1], x[2] - c[2]];
            [0, 1, 2].map(|i| v0[i] + g[i][0] * r[0] + g[i][1] * r[1] + g[i][2] * r[2])
        })
        .collect();
    if let Some(file) = &d.vertex_velocities {
        let path = ctx.existing_path(file, "vertex velocity file", table)?;
        let bytes = ctx.read(&path, &file.span())?;
        let rows = vertex_rows(&bytes, mesh)
            .map_err(|issue| ctx.data_error(&path, &file.span(), issue))?;
        for (k, v) in rows {
            vertex_velocity[k] = v;
        }
    }
    let mut schedule = Vec::new();
    if let Some(sch) = &d.schedule {
        let spec = sch.get_ref();
        let (times, factors) = (spec.time.get_ref(), spec.factor.get_ref());
        if times.is_empty() || times.len() != factors.len() {
            return Err(ctx.invalid(
                &sch.span(),
                format!(
                    "'schedule' in [walls.deform] of {table} needs as many factors as times, at least one; got {} times and {} factors",
                    times.len(),
                    factors.len()
                ),
            ));
        }
        for (k, t) in times.iter().enumerate() {
            if k > 0 && t.get_ref().0 <= times[k - 1].get_ref().0 {
                return Err(ctx.invalid(
                    &t.span(),
                    format!("'schedule' times in [walls.deform] of {table} must increase strictly"),
                ));
            }
            schedule.push((t.get_ref().0, factors[k].get_ref().0));
        }
    }
    Ok(Deform {
        vertex_velocity,
        schedule,
    })
}

/// Rows `x y z vx vy vz` (commas or blanks between numbers, `#` starts a
/// comment) of a vertex velocity file, each matched to the mesh vertex at
/// that position (within 1e-6 of the mesh's diagonal): (vertex, velocity).
/// A row that matches no vertex, or a vertex matched twice, is an error
/// at its line.
fn vertex_rows(
    bytes: &[u8],
    mesh: &MeshData,
) -> std::result::Result<Vec<(usize, [f64; 3])>, FileIssue> {
    let text =
        std::str::from_utf8(bytes).map_err(|_| FileIssue::whole("the file is not UTF-8 text"))?;
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for v in &mesh.vertices {
        for k in 0..3 {
            lo[k] = lo[k].min(v[k]);
            hi[k] = hi[k].max(v[k]);
        }
    }
    let diag = (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>().sqrt();
    let tol2 = (1e-6 * diag).powi(2);
    let mut taken = vec![0usize; mesh.vertices.len()];
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let content = line.split('#').next().unwrap_or("");
        let fields: Vec<&str> = content
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|f| !f.is_empty())
            .collect();
        if fields.is_empty() {
            continue;
        }
        if fields.len() != 6 {
            return Err(FileIssue::at(
                n,
                1,
                format!(
                    "expected 6 numbers 'x y z vx vy vz' (m, m/s), found {} fields",
                    fields.len()
                ),
            ));
        }
        let mut x = [0.0; 6];
        for (slot, f) in x.iter_mut().zip(&fields) {
            *slot = match f.parse::<f64>() {
                Ok(v) if v.is_finite() => v,
                _ => return Err(FileIssue::at(n, 1, format!("'{f}' is not a finite number"))),
            };
        }
        let nearest = mesh
            .vertices
            .iter()
            .enumerate()
            .map(|(k, v)| (k, (0..3).map(|a| (v[a] - x[a]).powi(2)).sum::<f64>()))
            .min_by(|p, q| p.1.total_cmp(&q.1));
        match nearest {
            Some((k, d2)) if d2 <= tol2 => {
                if taken[k] != 0 {
                    return Err(FileIssue::at(
                        n,
                        1,
                        format!("this row and line {} name the same vertex", taken[k]),
                    ));
                }
                taken[k] = n;
                rows.push((k, [x[3], x[4], x[5]]));
            }
            _ => {
                return Err(FileIssue::at(
                    n,
                    1,
                    format!(
                        "no mesh vertex at ({}, {}, {}); positions must match a vertex of the wall",
                        x[0], x[1], x[2]
                    ),
                ))
            }
        }
    }
    Ok(rows)
}

/// `[walls.servo]`: the direction is normalised; a stress becomes a force
/// over the wall's area projected on the plane normal to the direction.
fn servo(ctx: &Ctx<'_>, sv: &Spanned<ServoSpec>, mesh: &MeshData, table: &str) -> Result<Servo> {
    let s = sv.get_ref();
    let what = format!("[walls.servo] of {table}");
    let d = s.direction.get_ref().0;
    let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
    if len.is_nan() || len <= 0.0 {
        return Err(ctx.invalid(
            &s.direction.span(),
            format!("'direction' in {what} must not be zero"),
        ));
    }
    let direction = d.map(|x| x / len);
    let target_force = match (&s.force, &s.stress) {
        (Some(f), None) => positive(
            ctx,
            &f.span(),
            f.get_ref().0,
            &format!("'force' in {what}"),
            "N",
        )?,
        (None, Some(p)) => {
            let stress = positive(
                ctx,
                &p.span(),
                p.get_ref().0,
                &format!("'stress' in {what}"),
                "Pa",
            )?;
            let area: f64 = mesh
                .triangles
                .iter()
                .map(|t| {
                    let n = area_vector(mesh, t);
                    0.5 * (n[0] * direction[0] + n[1] * direction[1] + n[2] * direction[2]).abs()
                })
                .sum();
            if area <= 0.0 {
                return Err(ctx.invalid(
                    &p.span(),
                    format!("'stress' in {what} needs a wall with area across 'direction'; this wall has none"),
                ));
            }
            stress * area
        }
        _ => {
            return Err(ctx.invalid(
                &sv.span(),
                format!("{what} needs exactly one of 'force' (N) and 'stress' (Pa)"),
            ))
        }
    };
    let gain = positive(
        ctx,
        &s.gain.span(),
        s.gain.get_ref().0,
        &format!("'gain' in {what}"),
        "(m/s)/N",
    )?;
    let max_speed = positive(
        ctx,
        &s.max_speed.span(),
        s.max_speed.get_ref().0,
        &format!("'max_speed' in {what}"),
        "m/s",
    )?;
    Ok(Servo {
        direction: v3(direction),
        target: target_force,
        gain,
        max_speed,
    })
}

/// Per-facet inactive sides from the `inactive` entries of a wall: bit 1
/// front, bit 2 back. Each entry selects facets by index list, by normal
/// direction (within `angle` degrees, default 1) or by region (facet
/// centroid inside, bounds included); without a selector it takes every
/// facet. A selector that picks no facet is an error: it is almost surely
/// a mistake in the config.
fn inactive_sides(
    ctx: &Ctx<'_>,
    entries: &[Spanned<InactiveSpec>],
    mesh: &MeshData,
    table: &str,
) -> Result<Vec<u8>> {
    let n = mesh.triangles.len();
    let mut mask = vec![0u8; n];
    let corner = |t: &[u32; 3], k: usize| mesh.vertices[t[k] as usize];
    for (i, entry) in entries.iter().enumerate() {
        let what = format!("inactive #{} of {table}", i + 1);
        let e = entry.get_ref();
        let bits = match e.side.get_ref() {
            SideSpec::Front => 1,
            SideSpec::Back => 2,
            SideSpec::Both => 3,
        };
        let selectors = [span_of(&e.facets), span_of(&e.normal), span_of(&e.region)];
        if selectors.iter().flatten().count() > 1 {
            return Err(ctx.invalid(
                &entry.span(),
                format!(
                    "{what} has more than one of 'facets', 'normal', 'region'; use one per entry"
                ),
            ));
        }
        if e.angle.is_some() && e.normal.is_none() {
            return Err(ctx.invalid(
                &e.angle.as_ref().map_or(entry.span(), Spanned::span),
                format!("'angle' in {what} needs 'normal'"),
            ));
        }
        let mut picked = vec![false; n];
        if let Some(list) = &e.facets {
            for f in list.get_ref() {
                let k = f.get_ref().0;
                if k < 0 || k as usize >= n {
                    return Err(ctx.invalid(
                        &f.span(),
                        format!("facet {k} in {what} does not exist: the wall has {n} facets, numbered from 0"),
                    ));
                }
                picked[k as usize] = true;
            }
        } else if let Some(dir) = &e.normal {
            let d = dir.get_ref().0;
            let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            if len.is_nan() || len <= 0.0 {
                return Err(
                    ctx.invalid(&dir.span(), format!("'normal' in {what} must not be zero"))
                );
            }
            let angle = match &e.angle {
                None => 1.0,
                Some(a) => {
                    let v = a.get_ref().0;
                    if !(0.0..=180.0).contains(&v) {
                        return Err(ctx.invalid(
                            &a.span(),
                            format!("'angle' in {what} must be in [0, 180] (degrees), got {v:?}"),
                        ));
                    }
                    v
                }
            };
            let cos_min = angle.to_radians().cos() - 1e-12;
            for (f, t) in mesh.triangles.iter().enumerate() {
                let nf = area_vector(mesh, t);
                let nl = (nf[0] * nf[0] + nf[1] * nf[1] + nf[2] * nf[2]).sqrt();
                let cos = (nf[0] * d[0] + nf[1] * d[1] + nf[2] * d[2]) / (nl * len);
                picked[f] = cos >= cos_min;
            }
        } else if let Some(r) = &e.region {
            let region = region(ctx, r, &what)?;
            for (f, t) in mesh.triangles.iter().enumerate() {
                let centroid: Vec<f64> = (0..3)
                    .map(|axis| (0..3).map(|k| corner(t, k)[axis]).sum::<f64>() / 3.0)
                    .collect();
                picked[f] = (0..3).all(|axis| {
                    centroid[axis] >= region.min[axis] && centroid[axis] <= region.max[axis]
                });
            }
        } else {
            picked.fill(true);
        }
        if !picked.contains(&true) {
            return Err(ctx.invalid(&entry.span(), format!("{what} selects no facet")));
        }
        for (m, p) in mask.iter_mut().zip(picked) {
            if p {
                *m |= bits;
            }
        }
    }
    Ok(mask)
}

/// `[walls.motion]`: the motion, and the centre of rotation when given.
fn motion(m: &MotionSpec) -> (RigidMotion, Option<talus_core::Vec3>) {
    let motion = RigidMotion {
        velocity: v3(vec3_or(&m.velocity, [0.0; 3])),
        spin: v3(vec3_or(&m.spin, [0.0; 3])),
    };
    (motion, m.center.as_ref().map(|c| v3(c.get_ref().0)))
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site; the arguments are the wall's mesh keys"
)]
fn mesh_file(
    ctx: &Ctx<'_>,
    path: &Path,
    key_span: &Range<usize>,
    written: &str,
    scale: f64,
    translate: [f64; 3],
    flip: bool,
    table: &str,
) -> Result<MeshData> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let reader: fn(&[u8]) -> std::result::Result<mesh::Soup, FileIssue> = match ext.as_deref() {
        Some("stl") => mesh::read_stl,
        Some("obj") => mesh::read_obj,
        _ => {
            return Err(ctx.invalid(
                key_span,
                format!("mesh file '{written}' in {table} has an unsupported format; use .stl (ASCII or binary) or .obj"),
            ))
        }
    };
    let bytes = ctx.read(path, key_span)?;
    let (mut vertices, mut triangles) =
        reader(&bytes).map_err(|issue| ctx.data_error(path, key_span, issue))?;
    for v in &mut vertices {
        for axis in 0..3 {
            v[axis] = v[axis] * scale + translate[axis];
        }
    }
    if flip {
        for t in &mut triangles {
            t.swap(1, 2);
        }
    }
    mesh::weld(&vertices, &triangles).map_err(|issue| {
        let msg = match issue {
            WeldIssue::Empty => "the mesh has no triangles (after merging coincident vertices)".to_owned(),
            WeldIssue::Degenerate { triangle } => format!(
                "triangle #{} (index {triangle}) is degenerate: its corners are distinct but collinear",
                triangle + 1
            ),
        };
        ctx.data_error(path, key_span, FileIssue::whole(msg))
    })
}

fn output_settings(ctx: &Ctx<'_>, output: Option<Spanned<OutputSpec>>) -> Result<OutputSettings> {
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
            contacts: 1000,
            bodies: 1000,
            walls: 100,
            overwrite: true,
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
        contacts: every(&o.contacts, "contacts", 1000)?,
        bodies: every(&o.bodies, "bodies", 1000)?,
        walls: every(&o.walls, "walls", 100)?,
        overwrite: o.overwrite.as_ref().is_none_or(|v| *v.get_ref()),
    })
}
