//! The checks the tables share: integers, densities, damping, fixities,
//! seeds, regions, lattices, random packings, group names, and the keys
//! of a table's `kind` ([`KindTable`]).

use std::ops::Range;

use serde_spanned::Spanned;

use super::{Ctx, Result};
use crate::error::{ConfigError, ErrorKind};
use crate::limits::{self, Approx};
use crate::spec::{BlockResolutionSpec, DofSpec, Int, KgPerM3, Num, RegionSpec, Unitless, Vec3};
use talus_core::generate::lattice_counts;
use talus_core::math::v3;
use talus_core::{Aabb, BlockResolution};

/// A `block_resolution` value.
pub(super) fn block_resolution(r: BlockResolutionSpec) -> BlockResolution {
    match r {
        BlockResolutionSpec::Full => BlockResolution::Full,
        BlockResolutionSpec::Reduced => BlockResolution::Reduced,
        BlockResolutionSpec::Potential => BlockResolution::Potential,
    }
}

pub(super) fn int_at_least(ctx: &Ctx<'_>, v: &Spanned<Int>, min: i64, what: &str) -> Result<i64> {
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
pub(super) fn density(
    ctx: &Ctx<'_>,
    d: &Option<Spanned<Num<KgPerM3>>>,
    table: &str,
) -> Result<Option<f64>> {
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
pub(super) fn damping(
    ctx: &Ctx<'_>,
    d: &Option<Spanned<Num<Unitless>>>,
    table: &str,
) -> Result<f64> {
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
pub(super) fn fix_flags(f: &Option<Spanned<Vec<Spanned<DofSpec>>>>) -> [bool; 6] {
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
pub(super) fn seed_or(
    ctx: &Ctx<'_>,
    s: &Option<Spanned<Int>>,
    run_seed: u64,
    table: &str,
) -> Result<u64> {
    match s {
        Some(s) => Ok(int_at_least(ctx, s, 0, &format!("'seed' in {table}"))? as u64),
        None => Ok(run_seed),
    }
}

/// `max_attempts` of a random fill (> 0), default 1000.
pub(super) fn max_attempts(ctx: &Ctx<'_>, m: &Option<Spanned<Int>>, table: &str) -> Result<u32> {
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
pub(super) fn lattice_sites(region: &Aabb, spacing: f64, counts: Option<[usize; 3]>) -> f64 {
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
pub(super) fn packing(
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
pub(super) fn lattice_cells(
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

pub(super) fn vec3_or<U>(v: &Option<Spanned<Vec3<U>>>, default: [f64; 3]) -> [f64; 3] {
    v.as_ref().map_or(default, |v| v.get_ref().0)
}

/// A group name of a body or wall: non-empty, not the wildcard.
pub(super) fn group_name(
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

pub(super) fn region(ctx: &Ctx<'_>, r: &Spanned<RegionSpec>, table: &str) -> Result<Aabb> {
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

pub(super) fn check_min_max(
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
pub(super) fn mesh_scale(
    ctx: &Ctx<'_>,
    s: &Option<Spanned<Num<Unitless>>>,
    table: &str,
) -> Result<f64> {
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

pub(super) fn positive(
    ctx: &Ctx<'_>,
    span: &Range<usize>,
    v: f64,
    what: &str,
    unit: &str,
) -> Result<f64> {
    if v > 0.0 {
        Ok(v)
    } else {
        Err(ctx.invalid(span, format!("{what} must be > 0 ({unit}), got {v:?}")))
    }
}

/// A `[[...]]` table with a `kind`, its foreign keys rejected: makes the
/// "missing key" errors of its kind.
pub(super) struct KindTable<'a> {
    ctx: &'a Ctx<'a>,
    span: Range<usize>,
    kind: &'static str,
    table: &'a str,
}

impl<'a> KindTable<'a> {
    /// Rejects the keys in `present` (name, span if given) that `kind`
    /// does not use: those not in `allowed` (the kind's own keys); the
    /// message lists `common` and `allowed`.
    pub(super) fn new(
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
    pub(super) fn missing(&self, key: &str) -> ConfigError {
        self.ctx.missing(
            &self.span,
            format!(
                "missing key '{key}' in {} (kind = \"{}\")",
                self.table, self.kind
            ),
        )
    }
}

pub(super) fn span_of<T>(v: &Option<Spanned<T>>) -> Option<Range<usize>> {
    v.as_ref().map(Spanned::span)
}
