//! `[cell]`: the periodic cell.
//!
//! Guarantees of [`CellSettings`]: the cell is a box (`min` < `max` on
//! every axis) or a corner `origin` with three edge vectors `edges` that
//! span a positive volume (a right-handed set), never both; `periodic`
//! has three flags (default: every axis periodic); `velocity_gradient`
//! is three rows of three numbers (1/s, default zero), row `i` holding
//! `dv_i/dx_j`. Any body kind may sit in the cell; whether it is wide
//! enough for its bodies is checked when the run starts.

use serde_spanned::Spanned;

use super::bonds::when;
use super::{Ctx, Result};
use crate::spec::{CellServoSpec, CellSpec, Meters, PerS, Vec3};
use crate::types::CellSettings;
use talus_core::math::{v3, Mat3};
use talus_core::{Cell, CellServo, CellStage, When};

/// Three rows of three numbers as a matrix (rows as given).
fn rows<U>(ctx: &Ctx<'_>, v: &Spanned<Vec<Spanned<Vec3<U>>>>, what: &str) -> Result<[[f64; 3]; 3]> {
    let list = v.get_ref();
    if list.len() != 3 {
        return Err(ctx.invalid(
            &v.span(),
            format!(
                "{what} must be three rows of three numbers, [[..], [..], [..]], got {} rows",
                list.len()
            ),
        ));
    }
    Ok([
        list[0].get_ref().0,
        list[1].get_ref().0,
        list[2].get_ref().0,
    ])
}

/// A velocity gradient as three rows `dv_i/dx_j` (1/s).
fn gradient(ctx: &Ctx<'_>, v: &Spanned<Vec<Spanned<Vec3<PerS>>>>, what: &str) -> Result<Mat3> {
    let r = rows(ctx, v, what)?;
    // Rows as written: `L[i][j] = dv_i/dx_j`.
    Ok(Mat3::from_cols_array_2d(&r).transpose())
}

pub(super) fn cell_settings(ctx: &Ctx<'_>, spec: Spanned<CellSpec>) -> Result<CellSettings> {
    let span = spec.span();
    let c = spec.into_inner();
    let vec = |v: &Spanned<Vec3<Meters>>| v3(v.get_ref().0);
    let (origin, h) = match (&c.min, &c.max, &c.origin, &c.edges) {
        (Some(min), Some(max), None, None) => {
            let (lo, hi) = (vec(min), vec(max));
            if !(lo.cmplt(hi).all()) {
                return Err(ctx.invalid(
                    &max.span(),
                    format!("'max' in [cell] must exceed 'min' on every axis, got min = {lo} and max = {hi}"),
                ));
            }
            (lo, Mat3::from_diagonal(hi - lo))
        }
        (None, None, Some(origin), Some(edges)) => {
            let e = rows(ctx, edges, "'edges' in [cell]")?;
            // Each row is an edge: the columns of the cell matrix.
            let h = Mat3::from_cols(v3(e[0]), v3(e[1]), v3(e[2]));
            if h.determinant().is_nan() || h.determinant() <= 0.0 {
                return Err(ctx.invalid(
                    &edges.span(),
                    format!(
                        "'edges' in [cell] must span a positive volume (a right-handed set of three edges), got a volume of {:e} m^3",
                        h.determinant()
                    ),
                ));
            }
            (vec(origin), h)
        }
        _ => {
            let at = [&c.min, &c.max, &c.origin]
                .into_iter()
                .flatten()
                .map(Spanned::span)
                .next()
                .or(c.edges.as_ref().map(Spanned::span))
                .unwrap_or(span);
            return Err(ctx.invalid(
                &at,
                "[cell] needs either 'min' and 'max' (a box) or 'origin' and 'edges' (three edge vectors), not both and not half of one",
            ));
        }
    };
    let periodic = c
        .periodic
        .as_ref()
        .map(|p| *p.get_ref())
        .unwrap_or([true; 3]);
    let l = match &c.velocity_gradient {
        None => Mat3::ZERO,
        Some(v) => gradient(ctx, v, "'velocity_gradient' in [cell]")?,
    };
    let mut cell = Cell::new(origin, h, periodic, l)
        .map_err(|e| ctx.invalid(&span, format!("[cell]: {e}")))?;
    // A stage's servo may leave out the gain and the rate cap: it keeps
    // those of the servo before it.
    let mut last: Option<CellServo> = None;
    if let Some(s) = &c.servo {
        let sv = servo(ctx, s, periodic, last, "[cell.servo]")?;
        last = Some(sv);
        cell = cell.with_servo(sv);
    }
    let mut stages = Vec::with_capacity(c.stages.len());
    let mut previous: Option<When> = None;
    for (i, st) in c.stages.iter().enumerate() {
        let table = format!("[[cell.stages]] #{}", i + 1);
        let st_span = st.span();
        let st = st.get_ref();
        let Some(at) = when(ctx, &st.at_step, &st.at_time, &table, 1)? else {
            return Err(ctx.invalid(
                &st_span,
                format!("{table} needs 'at_step' or 'at_time': when the stage begins"),
            ));
        };
        // Stages begin in list order: a later one given an earlier
        // moment of the same kind would begin with its predecessor.
        let at_span = st
            .at_step
            .as_ref()
            .map(Spanned::span)
            .or(st.at_time.as_ref().map(Spanned::span))
            .unwrap_or(st_span.clone());
        match (previous, at) {
            (Some(When::Step(a)), When::Step(b)) if b <= a => {
                return Err(ctx.invalid(
                    &at_span,
                    format!(
                    "'at_step' in {table} must come after the stage before it (step {a}), got {b}"
                ),
                ))
            }
            (Some(When::Time(a)), When::Time(b)) if b <= a => {
                return Err(ctx.invalid(
                    &at_span,
                    format!(
                    "'at_time' in {table} must come after the stage before it ({a} s), got {b} s"
                ),
                ))
            }
            _ => {}
        }
        previous = Some(at);
        let velocity_gradient = match &st.velocity_gradient {
            None => Mat3::ZERO,
            Some(v) => gradient(ctx, v, &format!("'velocity_gradient' in {table}"))?,
        };
        let stage_servo = match &st.servo {
            None => None,
            Some(s) => {
                let sv = servo(ctx, s, periodic, last, &format!("'servo' in {table}"))?;
                last = Some(sv);
                Some(sv)
            }
        };
        if stage_servo.is_none() && st.velocity_gradient.is_none() {
            return Err(ctx.invalid(
                &st_span,
                format!(
                    "{table} gives neither 'velocity_gradient' nor 'servo'; a stage that holds \
                     the cell still says so with velocity_gradient = [[0, 0, 0], [0, 0, 0], [0, 0, 0]]"
                ),
            ));
        }
        stages.push(CellStage {
            at,
            velocity_gradient,
            servo: stage_servo,
        });
    }
    cell = cell.with_stages(stages);
    let lo = origin.to_array();
    let hi = (origin + h.x_axis + h.y_axis + h.z_axis).to_array();
    ctx.extent(lo, hi, 0.0);
    Ok(CellSettings {
        cell,
        location: ctx.loc(&span),
    })
}

/// A servo table (`[cell.servo]` or a stage's `servo`): the controlled
/// axes must be periodic, at least one; `gain` and `max_rate` > 0, taken
/// from `last` (the servo before it) where left out. The config's
/// stresses press (positive in compression, as a wall servo's `stress`);
/// the engine's targets are tension positive.
fn servo(
    ctx: &Ctx<'_>,
    spec: &Spanned<CellServoSpec>,
    periodic: [bool; 3],
    last: Option<CellServo>,
    what: &str,
) -> Result<CellServo> {
    let s = spec.get_ref();
    let control = *s.control.get_ref();
    if !control.iter().any(|&c| c) {
        return Err(ctx.invalid(
            &s.control.span(),
            format!("'control' in {what} must hold the stress along at least one axis"),
        ));
    }
    if let Some(k) = (0..3).find(|&k| control[k] && !periodic[k]) {
        return Err(ctx.invalid(
            &s.control.span(),
            format!(
                "'control' in {what} holds axis {k}, along which the cell is not periodic; \
                 a servo acts on periodic axes only"
            ),
        ));
    }
    let positive = |v: &Option<Spanned<f64>>, inherited: Option<f64>, key: &str, unit: &str| match v
    {
        Some(x) if *x.get_ref() > 0.0 => Ok(*x.get_ref()),
        Some(x) => Err(ctx.invalid(
            &x.span(),
            format!(
                "'{key}' in {what} must be > 0 ({unit}), got {:?}",
                x.get_ref()
            ),
        )),
        None => inherited.ok_or_else(|| {
            ctx.invalid(
                &spec.span(),
                format!("{what} needs '{key}' ({unit}): no servo before it gives one to keep"),
            )
        }),
    };
    let gain = s
        .gain
        .as_ref()
        .map(|x| Spanned::new(x.span(), x.get_ref().0));
    let rate = s
        .max_rate
        .as_ref()
        .map(|x| Spanned::new(x.span(), x.get_ref().0));
    let gain = positive(&gain, last.map(|l| l.gain), "gain", "1/(Pa s)")?;
    let max_rate = positive(&rate, last.map(|l| l.max_rate), "max_rate", "1/s")?;
    let stress = s.stress.get_ref().0;
    Ok(CellServo {
        target: std::array::from_fn(|k| control[k].then_some(-stress[k])),
        gain,
        max_rate,
    })
}
