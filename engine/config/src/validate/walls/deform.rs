//! `[walls.deform]`: deformable wall motion, resolved per vertex.
//!
//! Guarantees of the [`Deformation`]: one velocity per mesh vertex, from
//! `velocity + gradient (x - center)` (a 3-row gradient) and then the rows
//! of an optional vertex velocity file, each row matched to exactly one
//! vertex; schedule knots with as many factors as times, at least one, and
//! times strictly increasing.

use super::super::{vec3_or, Ctx, Result};
use crate::mesh::FileIssue;
use crate::spec::DeformSpec;
use crate::types::MeshData;
use talus_core::wall::Deformation;
use talus_core::Vec3;

/// Per-vertex velocities of `[walls.deform]`: `velocity + gradient (x -
/// center)` at each vertex's initial position (center: the mean of the
/// vertices), and the time schedule of the factor.
pub(super) fn deformation(
    ctx: &Ctx<'_>,
    d: &DeformSpec,
    mesh: &MeshData,
    table: &str,
) -> Result<Deformation> {
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
        let (path, bytes) = ctx.data_file(file, "vertex velocity file", table)?;
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
    Ok(Deformation {
        velocity: vertex_velocity.into_iter().map(Vec3::from_array).collect(),
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
