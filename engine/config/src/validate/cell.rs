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

use super::{Ctx, Result};
use crate::spec::{CellServoSpec, CellSpec, Meters, Vec3};
use crate::types::CellSettings;
use talus_core::math::{v3, Mat3};
use talus_core::{Cell, CellServo};

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
        Some(v) => {
            let r = rows(ctx, v, "'velocity_gradient' in [cell]")?;
            // Rows as written: `L[i][j] = dv_i/dx_j`.
            Mat3::from_cols_array_2d(&r).transpose()
        }
    };
    let mut cell = Cell::new(origin, h, periodic, l)
        .map_err(|e| ctx.invalid(&span, format!("[cell]: {e}")))?;
    if let Some(s) = &c.servo {
        cell = cell.with_servo(servo(ctx, s.get_ref(), periodic)?);
    }
    let lo = origin.to_array();
    let hi = (origin + h.x_axis + h.y_axis + h.z_axis).to_array();
    ctx.extent(lo, hi, 0.0);
    Ok(CellSettings {
        cell,
        location: ctx.loc(&span),
    })
}

/// `[cell.servo]`: the controlled axes must be periodic, at least one;
/// `gain` and `max_rate` > 0. The config's stresses press (positive in
/// compression, as a wall servo's `stress`); the engine's targets are
/// tension positive.
fn servo(ctx: &Ctx<'_>, s: &CellServoSpec, periodic: [bool; 3]) -> Result<CellServo> {
    let control = *s.control.get_ref();
    if !control.iter().any(|&c| c) {
        return Err(ctx.invalid(
            &s.control.span(),
            "'control' in [cell.servo] must hold the stress along at least one axis",
        ));
    }
    if let Some(k) = (0..3).find(|&k| control[k] && !periodic[k]) {
        return Err(ctx.invalid(
            &s.control.span(),
            format!(
                "'control' in [cell.servo] holds axis {k}, along which the cell is not periodic; \
                 a servo acts on periodic axes only"
            ),
        ));
    }
    let positive = |x: f64, span: std::ops::Range<usize>, what: &str, unit: &str| {
        if x > 0.0 {
            Ok(x)
        } else {
            Err(ctx.invalid(
                &span,
                format!("'{what}' in [cell.servo] must be > 0 ({unit}), got {x:?}"),
            ))
        }
    };
    let gain = positive(s.gain.get_ref().0, s.gain.span(), "gain", "1/(Pa s)")?;
    let max_rate = positive(s.max_rate.get_ref().0, s.max_rate.span(), "max_rate", "1/s")?;
    let stress = s.stress.get_ref().0;
    Ok(CellServo {
        target: std::array::from_fn(|k| control[k].then_some(-stress[k])),
        gain,
        max_rate,
    })
}
