//! `[walls.servo]`: servo control of a wall's translation.
//!
//! Guarantees of [`Servo`]: a unit direction (the given one must not be
//! zero); a target load > 0 N, given as a force or as a stress times the
//! wall's area projected on the plane normal to the direction; a positive
//! `gain`, (m/s)/N, and `max_speed`, m/s.

use serde_spanned::Spanned;

use super::super::{positive, Ctx, Result};
use super::area_vector;
use crate::spec::ServoSpec;
use crate::types::MeshData;
use talus_core::math::v3;
use talus_core::wall::Servo;

/// `[walls.servo]`: the direction is normalised; a stress becomes a force
/// over the wall's area projected on the plane normal to the direction.
pub(super) fn servo(
    ctx: &Ctx<'_>,
    sv: &Spanned<ServoSpec>,
    mesh: &MeshData,
    table: &str,
) -> Result<Servo> {
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
