//! `inactive` entries of `[[walls]]`: the facet sides that do not
//! interact.
//!
//! Guarantees of the mask: one byte per facet (bit 1 front, bit 2 back);
//! each entry has at most one selector (`facets`, `normal` or `region`),
//! `angle` only with `normal` and in [0, 180] degrees, facet indices that
//! exist, a non-zero normal, a region with min < max, and selects at least
//! one facet.

use serde_spanned::Spanned;

use super::super::{region, span_of, Ctx, Result};
use super::area_vector;
use crate::spec::{InactiveSpec, SideSpec};
use crate::types::MeshData;

/// Per-facet inactive sides from the `inactive` entries of a wall: bit 1
/// front, bit 2 back. Each entry selects facets by index list, by normal
/// direction (within `angle` degrees, default 1) or by region (facet
/// centroid inside, bounds included); without a selector it takes every
/// facet. A selector that picks no facet is an error: it is almost surely
/// a mistake in the config.
pub(super) fn inactive_sides(
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
