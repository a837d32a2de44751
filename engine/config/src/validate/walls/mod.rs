//! `[[walls]]`: one wall, built as a welded triangle mesh from a box or a
//! mesh file, with how it moves.
//!
//! Guarantees of [`WallSource`]: a non-empty name (unique across walls,
//! checked in [`super::validate`]); only the keys of the chosen kind; a
//! group name that is neither empty nor `"*"`; `cutoff_angle` in [0, 90]
//! degrees; a box with min < max, 1 to 256 divisions and at least one
//! face kept; a mesh file of a known format (STL or OBJ), scaled (> 0),
//! translated and welded. At most one of `[walls.motion]`,
//! `[walls.deform]` and `[walls.servo]`. The deformation, servo and
//! inactive sides are validated in the submodules `deform`, `servo` and
//! `inactive`.

mod deform;
mod inactive;
mod servo;

use std::ops::Range;
use std::path::Path;

use serde_spanned::Spanned;

use super::{
    check_min_max, group_name, int_at_least, mesh_scale, span_of, vec3_or, Ctx, KindTable, Result,
};
use crate::error::ConfigError;
use crate::limits::{self, Approx, Count};
use crate::mesh::{self, FileIssue, WeldIssue};
use crate::spec::{FaceSpec, MotionSpec, ResolutionSpec, WallKindSpec, WallSpec, WALL_COMMON_KEYS};
use crate::types::{MeshData, WallSource};
use talus_core::math::v3;
use talus_core::wall::{Resolution, RigidMotion};

use deform::deformation;
use inactive::inactive_sides;
use servo::servo;

/// The default group of walls.
pub(crate) const DEFAULT_WALL_GROUP: &str = "wall";

pub(super) fn wall_source(ctx: &Ctx<'_>, w: Spanned<WallSpec>, table: &str) -> Result<WallSource> {
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
    let kind_table = KindTable::new(
        ctx,
        table_span.clone(),
        kind.as_str(),
        &present,
        (kind.keys(), WALL_COMMON_KEYS),
        table,
    )?;
    let require = |key: &str| kind_table.missing(key);

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
            ctx.coordinates(&min.span(), lo, &format!("'min' of {table}"))?;
            ctx.coordinates(&max.span(), hi, &format!("'max' of {table}"))?;
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
            let faces = open.iter().filter(|&&o| !o).count();
            if faces == 0 {
                let span = w.open.as_ref().map_or(table_span.clone(), Spanned::span);
                return Err(ctx.invalid(
                    &span,
                    format!("'open' in {table} leaves out all six faces; the box would be empty"),
                ));
            }
            let (divisions, at) = match &w.divisions {
                None => (1, table_span.clone()),
                Some(d) => {
                    let n = int_at_least(ctx, d, 1, &format!("'divisions' in {table}"))?;
                    if n > limits::MAX_DIVISIONS {
                        return Err(ctx.invalid(
                            &d.span(),
                            format!(
                                "'divisions' in {table} must be at most {}, got {n}: a flat face gains no geometry from finer facets, only memory and time ({n} would make {} triangles)",
                                limits::MAX_DIVISIONS,
                                Count(2.0 * faces as f64 * (n as f64).powi(2))
                            ),
                        ));
                    }
                    (n as u32, d.span())
                }
            };
            let triangles = 2.0 * faces as f64 * f64::from(divisions).powi(2);
            ctx.reserve(
                &at,
                triangles * limits::TRIANGLE_BYTES,
                format_args!("{table} makes {} triangles", Count(triangles)),
            )?;
            ctx.extent(lo, hi, 0.0);
            mesh::box_mesh(lo, hi, open, divisions)
        }
        WallKindSpec::Mesh => mesh_file(ctx, &w, table, &require)?,
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

/// `[walls.motion]`: the motion, and the centre of rotation when given.
fn motion(m: &MotionSpec) -> (RigidMotion, Option<talus_core::Vec3>) {
    let motion = RigidMotion {
        velocity: v3(vec3_or(&m.velocity, [0.0; 3])),
        spin: v3(vec3_or(&m.spin, [0.0; 3])),
    };
    (motion, m.center.as_ref().map(|c| v3(c.get_ref().0)))
}

/// `kind = "mesh"`: the file's triangles, scaled (`scale`, > 0, default
/// 1), moved (`translate`), turned inside out if asked (`flip_normals`)
/// and welded.
fn mesh_file(
    ctx: &Ctx<'_>,
    w: &WallSpec,
    table: &str,
    require: &dyn Fn(&str) -> ConfigError,
) -> Result<MeshData> {
    let path_spec = w.path.as_ref().ok_or_else(|| require("path"))?;
    let key_span = path_spec.span();
    let written = path_spec.get_ref();
    let scale = mesh_scale(ctx, &w.scale, table)?;
    let translate = vec3_or(&w.translate, [0.0; 3]);
    let flip = w.flip_normals.as_ref().is_some_and(|f| *f.get_ref());
    let ext = Path::new(written)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let reader: fn(&[u8]) -> std::result::Result<mesh::Soup, FileIssue> = match ext.as_deref() {
        Some("stl") => mesh::read_stl,
        Some("obj") => mesh::read_obj,
        _ => {
            return Err(ctx.invalid(
                &key_span,
                format!("mesh file '{written}' in {table} has an unsupported format; use .stl (ASCII or binary) or .obj"),
            ))
        }
    };
    let (path, bytes) = ctx.data_file(path_spec, "mesh file", table)?;
    let (mut vertices, mut triangles) =
        reader(&bytes).map_err(|issue| ctx.data_error(&path, &key_span, issue))?;
    drop(bytes);
    ctx.reserve(
        &key_span,
        triangles.len() as f64 * limits::TRIANGLE_BYTES,
        format_args!(
            "mesh file '{written}' of {table} holds {} triangles",
            triangles.len()
        ),
    )?;
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for v in &mut vertices {
        for axis in 0..3 {
            v[axis] = v[axis] * scale + translate[axis];
            lo[axis] = lo[axis].min(v[axis]);
            hi[axis] = hi[axis].max(v[axis]);
        }
    }
    if !triangles.is_empty() {
        // Blame what moved the vertices out, else the file.
        let (span, what) = match (&w.scale, &w.translate) {
            (Some(s), _) if scale != 1.0 => (
                s.span(),
                format!(
                    "scaled by 'scale' = {}, a vertex of mesh file '{written}' in {table}",
                    Approx(scale)
                ),
            ),
            (_, Some(t)) => (
                t.span(),
                format!("moved by 'translate', a vertex of mesh file '{written}' in {table}"),
            ),
            _ => (
                key_span.clone(),
                format!("a vertex of mesh file '{written}' in {table}"),
            ),
        };
        let far = std::array::from_fn(|k| {
            if lo[k].abs() > hi[k].abs() {
                lo[k]
            } else {
                hi[k]
            }
        });
        ctx.coordinates(&span, far, &what)?;
        ctx.extent(lo, hi, 0.0);
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
        ctx.data_error(&path, &key_span, FileIssue::whole(msg))
    })
}
