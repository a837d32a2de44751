//! `[[shapes]]`: block shapes, by kind (box, tetrahedron, octahedron,
//! prism, random, vertices or mesh file), and clump shapes (`kind =
//! "clump"`, a list of pebbles).
//!
//! Guarantees of [`ShapeSource`]: only the keys of the chosen kind; a
//! non-empty name without `/` (mesh objects are named `name/object`),
//! unique across shapes (checked in [`super::validate`]); positive sizes;
//! for a random shape a vertex range `4 <= min <= max` and a roughness in
//! [0, 1); for a vertex list at least four points spanning a volume, each
//! a corner of their hull unless `hull = true`; for a mesh file a known
//! format and objects that are each closed and convex; at most one of
//! `dilate` and `erode`, a radius >= 0, and an erosion that leaves a core.
//! Every shape has a volume and is stored in the principal frame of the
//! (rounded) solid. A clump shape has at least one pebble, each with a
//! finite centre and a positive radius, and no rounding; its mass
//! properties are those of the union of its pebbles.

use std::ops::Range;
use std::path::Path;

use serde_spanned::Spanned;

use super::{int_at_least, mesh_scale, positive, seed_or, span_of, Ctx, KindTable, Result};
use crate::error::ConfigError;
use crate::limits::{self, Approx};
use crate::mesh::FileIssue;
use crate::spec::{Int, ShapeKindSpec, ShapeSpec, SHAPE_COMMON_KEYS};
use crate::types::{MeshFill, ShapeSource, TemplateSource};
use talus_core::math::{v3, Vec3};
use talus_core::BlockShape;
use talus_geometry::{
    blocks_from_bytes, box_block, erode, fill_with_pebbles, octahedron_block, prism_block,
    random_block, tetrahedron_block, ConvexPolyhedron, FillOptions, GeometryError, MeshErrorKind,
    MeshFormat, MeshOptions, RandomBlock,
};

/// The kind-specific keys of a `[[shapes]]` table with where each is
/// given.
fn present_keys(s: &ShapeSpec) -> [(&'static str, Option<Range<usize>>); 18] {
    [
        ("size", span_of(&s.size)),
        ("edge", span_of(&s.edge)),
        ("sides", span_of(&s.sides)),
        ("radius", span_of(&s.radius)),
        ("height", span_of(&s.height)),
        ("vertices", span_of(&s.vertices)),
        ("axes", span_of(&s.axes)),
        ("roughness", span_of(&s.roughness)),
        ("seed", span_of(&s.seed)),
        ("points", span_of(&s.points)),
        ("hull", span_of(&s.hull)),
        ("path", span_of(&s.path)),
        ("scale", span_of(&s.scale)),
        ("pebbles", span_of(&s.pebbles)),
        ("count", span_of(&s.count)),
        ("resolution", span_of(&s.resolution)),
        ("shape", span_of(&s.shape)),
        ("properties", span_of(&s.properties)),
    ]
}

/// One `[[shapes]]` table of `kind = "clump"`: a clump template from its
/// `pebbles`.
pub(super) fn template_source(
    ctx: &Ctx<'_>,
    s: Spanned<ShapeSpec>,
    table: &str,
) -> Result<TemplateSource> {
    let table_span = s.span();
    let location = ctx.loc(&table_span);
    let s = s.into_inner();
    let name = s.name.get_ref().trim();
    if name.is_empty() || name.contains('/') {
        return Err(ctx.invalid(
            &s.name.span(),
            format!("'name' in {table} must be neither empty nor contain '/'"),
        ));
    }
    let present = present_keys(&s);
    let kind = ShapeKindSpec::Clump;
    let kind_table = KindTable::new(
        ctx,
        table_span.clone(),
        kind.as_str(),
        &present,
        (kind.keys(), SHAPE_COMMON_KEYS),
        table,
    )?;
    if let Some(r) = s.dilate.as_ref().or(s.erode.as_ref()) {
        return Err(ctx.invalid(
            &r.span(),
            format!("{table}: a clump is not rounded ('dilate' and 'erode' are for polyhedral shapes); make the pebbles larger instead"),
        ));
    }
    let (pebbles, fill, at) = match (&s.pebbles, &s.path) {
        (Some(list), None) => {
            for key in [("count", span_of(&s.count)), ("resolution", span_of(&s.resolution)), ("scale", span_of(&s.scale))] {
                if let (k, Some(span)) = key {
                    return Err(ctx.invalid(
                        &span,
                        format!("'{k}' in {table} goes with 'path' (a mesh to fill with pebbles), not with 'pebbles'"),
                    ));
                }
            }
            (listed_pebbles(ctx, list, table)?, None, list.span())
        }
        (None, Some(path)) => {
            let (pebbles, fill) = mesh_pebbles(ctx, &s, path, table, &|k| kind_table.missing(k))?;
            (pebbles, Some(fill), path.span())
        }
        (Some(list), Some(_)) => {
            return Err(ctx.invalid(
                &list.span(),
                format!("{table} has both 'pebbles' and 'path'; give the pebbles or a mesh to fill"),
            ))
        }
        (None, None) => {
            return Err(ctx.missing(
                &table_span,
                format!("{table} needs 'pebbles' (a list of {{ pos, radius }}) or 'path' (a closed mesh to fill with 'count' pebbles)"),
            ))
        }
    };
    let template =
        talus_core::ClumpTemplate::new(name, &pebbles, talus_core::clump::DEFAULT_TOLERANCE)
            .map_err(|e| ctx.invalid(&at, format!("{table}: {e}")))?;
    Ok(TemplateSource {
        location,
        template,
        fill,
    })
}

/// The pebbles of a `pebbles` list.
fn listed_pebbles(
    ctx: &Ctx<'_>,
    list: &Spanned<Vec<Spanned<crate::spec::PebbleSpec>>>,
    table: &str,
) -> Result<Vec<(Vec3, f64)>> {
    let mut pebbles = Vec::with_capacity(list.get_ref().len());
    for (i, p) in list.get_ref().iter().enumerate() {
        let what = format!("pebble #{} of {table}", i + 1);
        let p = p.get_ref();
        ctx.coordinates(
            &p.pos.span(),
            p.pos.get_ref().0,
            &format!("'pos' of {what}"),
        )?;
        let r = length(
            ctx,
            &p.radius.span(),
            p.radius.get_ref().0,
            &format!("'radius' of {what}"),
        )?;
        pebbles.push((v3(p.pos.get_ref().0), r));
    }
    if pebbles.is_empty() {
        return Err(ctx.invalid(
            &list.span(),
            format!("'pebbles' in {table} is empty; give at least one {{ pos = [x, y, z], radius = r }}"),
        ));
    }
    Ok(pebbles)
}

/// The most pebbles a mesh may be filled with: the union's mass
/// properties cost grows with the pebbles and their overlaps.
const MAX_FILL_PEBBLES: i64 = 200;

/// The pebbles that fill the closed mesh of `path` (`count` of them, on a
/// grid of `resolution` steps along the longest side), scaled by `scale`.
fn mesh_pebbles(
    ctx: &Ctx<'_>,
    s: &ShapeSpec,
    path_spec: &Spanned<String>,
    table: &str,
    require: &dyn Fn(&str) -> ConfigError,
) -> Result<(Vec<(Vec3, f64)>, MeshFill)> {
    let key_span = path_spec.span();
    let ext = Path::new(path_spec.get_ref())
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let read = match ext.as_deref() {
        Some("obj") => crate::mesh::read_obj,
        Some("stl") => crate::mesh::read_stl,
        _ => {
            return Err(ctx.invalid(
                &key_span,
                format!(
                    "mesh file '{}' in {table} has an unsupported format; use .obj or .stl (ASCII or binary)",
                    path_spec.get_ref()
                ),
            ))
        }
    };
    let count = s.count.as_ref().ok_or_else(|| require("count"))?;
    let asked = int_at_least(ctx, count, 1, &format!("'count' in {table}"))?;
    if asked > MAX_FILL_PEBBLES {
        return Err(ctx.invalid(
            &count.span(),
            format!("'count' in {table} must be at most {MAX_FILL_PEBBLES} (the union's mass properties grow costly), got {asked}"),
        ));
    }
    let mut options = FillOptions::default();
    if let Some(r) = &s.resolution {
        let v = int_at_least(ctx, r, 2, &format!("'resolution' in {table}"))?;
        if v > 256 {
            return Err(ctx.invalid(
                &r.span(),
                format!("'resolution' in {table} must be at most 256, got {v}"),
            ));
        }
        options.resolution = v as usize;
    }
    let scale = mesh_scale(ctx, &s.scale, table)?;
    let (path, bytes) = ctx.data_file(path_spec, "mesh file", table)?;
    let (vertices, triangles) =
        read(&bytes).map_err(|issue| ctx.data_error(&path, &key_span, issue))?;
    let corner = |i: u32| Vec3::from_array(vertices[i as usize]) * scale;
    let soup: Vec<[Vec3; 3]> = triangles
        .iter()
        .map(|t| [corner(t[0]), corner(t[1]), corner(t[2])])
        .collect();
    let filled = fill_with_pebbles(&soup, asked as usize, &options).map_err(|e| {
        ctx.data_error(
            &path,
            &key_span,
            FileIssue::whole(format!("cannot fill it with pebbles: {e}")),
        )
    })?;
    let fill = MeshFill {
        path,
        asked: asked as usize,
        fidelity: filled.fidelity,
    };
    Ok((filled.pebbles, fill))
}

/// One `[[shapes]]` table: one shape, or one per object of a mesh file.
pub(super) fn shape_sources(
    ctx: &Ctx<'_>,
    s: Spanned<ShapeSpec>,
    table: &str,
    run_seed: u64,
) -> Result<Vec<ShapeSource>> {
    let table_span = s.span();
    let location = ctx.loc(&table_span);
    let s = s.into_inner();
    let kind = *s.kind.get_ref();

    let name = s.name.get_ref().trim();
    if name.is_empty() {
        return Err(ctx.invalid(
            &s.name.span(),
            format!("'name' in {table} must not be empty"),
        ));
    }
    if name.contains('/') {
        return Err(ctx.invalid(
            &s.name.span(),
            format!("'name' in {table} must not contain '/': it separates a mesh shape's name from its objects' names"),
        ));
    }

    let present = present_keys(&s);
    let kind_table = KindTable::new(
        ctx,
        table_span.clone(),
        kind.as_str(),
        &present,
        (kind.keys(), SHAPE_COMMON_KEYS),
        table,
    )?;
    let require = |key: &str| kind_table.missing(key);
    let size = |v: &Option<Spanned<crate::spec::Num<crate::spec::Meters>>>, key: &str| {
        let v = v.as_ref().ok_or_else(|| require(key))?;
        length(
            ctx,
            &v.span(),
            v.get_ref().0,
            &format!("'{key}' in {table}"),
        )
    };
    let round = rounding(ctx, &s, table)?;
    // Where a failure of the geometry kernel is reported.
    let mut at = table_span.clone();

    let built = match kind {
        ShapeKindSpec::Box => {
            let edges = s.size.as_ref().ok_or_else(|| require("size"))?;
            at = edges.span();
            for (k, e) in edges.get_ref().0.iter().enumerate() {
                length(
                    ctx,
                    &at,
                    *e,
                    &format!("edge {} of 'size' in {table}", ["x", "y", "z"][k]),
                )?;
            }
            box_block(v3(edges.get_ref().0))
        }
        ShapeKindSpec::Tetrahedron => tetrahedron_block(size(&s.edge, "edge")?),
        ShapeKindSpec::Octahedron => octahedron_block(size(&s.edge, "edge")?),
        ShapeKindSpec::Prism => {
            let sides = s.sides.as_ref().ok_or_else(|| require("sides"))?;
            let n = int_at_least(ctx, sides, 3, &format!("'sides' in {table}"))?;
            let n = u32::try_from(n)
                .ok()
                .filter(|&n| n <= 4096)
                .ok_or_else(|| {
                    ctx.invalid(
                        &sides.span(),
                        format!("'sides' in {table} must be at most 4096, got {n}"),
                    )
                })?;
            prism_block(n, size(&s.radius, "radius")?, size(&s.height, "height")?)
        }
        ShapeKindSpec::Random => {
            let (spec, seed) = random_spec(ctx, &s, table, run_seed, &require)?;
            let block = random_block(&spec, seed);
            if let (Err(GeometryError::IterationCap { .. }), Some(v)) = (&block, &s.vertices) {
                return Err(ctx.invalid(
                    &v.span(),
                    format!(
                        "{table}: no random shape with {} to {} corners found: the hull of the points drawn keeps too few of them as corners (rough or flat shapes keep few); lower 'vertices' or 'roughness', or make 'axes' less uneven",
                        spec.min_vertices, spec.max_vertices
                    ),
                ));
            }
            block
        }
        ShapeKindSpec::Vertices => {
            let points = s.points.as_ref().ok_or_else(|| require("points"))?;
            at = points.span();
            let hull = s.hull.as_ref().is_some_and(|h| *h.get_ref());
            Ok(vertex_shape(ctx, points, hull, table)?)
        }
        ShapeKindSpec::Mesh => return mesh_shapes(ctx, &s, name, table, location, round, &require),
        ShapeKindSpec::Clump => unreachable!("clump shapes are templates (template_source)"),
        ShapeKindSpec::Plugin => {
            return plugin_shape(ctx, &s, (name, table), location, round, &require)
        }
    };
    let poly = built.map_err(|e| ctx.invalid(&at, format!("{table}: {e}")))?;
    Ok(vec![ShapeSource {
        location,
        shape: shape(ctx, &at, name, &poly, table, round)?,
        plugin: None,
    }])
}

/// `kind = "plugin"`: the shape kind a plugin adds (`shape`) and its
/// property values, checked against the plugin's descriptor once the
/// plugins load; not rounded (the plugin's solid is what it is).
fn plugin_shape(
    ctx: &Ctx<'_>,
    s: &ShapeSpec,
    (name, table): (&str, &str),
    location: crate::Location,
    round: Option<Rounding>,
    require: &dyn Fn(&str) -> ConfigError,
) -> Result<Vec<ShapeSource>> {
    if let Some(r) = round {
        return Err(ctx.invalid(
            &(r.at.0..r.at.1),
            format!("{table}: a shape of a plugin is not rounded ('dilate' and 'erode' are for polyhedra)"),
        ));
    }
    let kind = s.shape.as_ref().ok_or_else(|| require("shape"))?;
    let kind_name = kind.get_ref().trim();
    if kind_name.is_empty() {
        return Err(ctx.invalid(
            &kind.span(),
            format!("'shape' in {table} must not be empty"),
        ));
    }
    let mut properties: Vec<(String, f64, crate::Location)> = s
        .properties
        .as_ref()
        .map(|p| {
            p.get_ref()
                .0
                .iter()
                .map(|(k, v)| (k.get_ref().clone(), v.get_ref().0, ctx.loc(&k.span())))
                .collect()
        })
        .unwrap_or_default();
    properties.sort_by(|a, b| a.0.cmp(&b.0));
    // A stand-in of no size until the CLI makes the shape from its plugin.
    let stand_in = tetrahedron_block(1e-12)
        .map_err(|e| e.to_string())
        .and_then(|p| BlockShape::new(name, &p).map_err(|e| e.to_string()))
        .map_err(|e| ctx.invalid(&kind.span(), format!("{table}: {e}")))?;
    Ok(vec![ShapeSource {
        location,
        shape: stand_in,
        plugin: Some(crate::types::PluginShape {
            kind: kind_name.to_string(),
            kind_location: ctx.loc(&kind.span()),
            properties,
        }),
    }])
}

/// How a shape is rounded (seed 001): `dilate = r` rounds it outwards (the
/// polyhedron is the core), `erode = r` within its own faces (the core is
/// the polyhedron with every face moved in by `r`).
#[derive(Clone, Copy)]
struct Rounding {
    erode: bool,
    radius: f64,
    at: (usize, usize),
}

/// `dilate` or `erode` of a `[[shapes]]` table (at most one, >= 0).
fn rounding(ctx: &Ctx<'_>, s: &ShapeSpec, table: &str) -> Result<Option<Rounding>> {
    let (key, v, erode) = match (&s.dilate, &s.erode) {
        (None, None) => return Ok(None),
        (Some(_), Some(e)) => {
            return Err(ctx.invalid(
                &e.span(),
                format!("{table} has both 'dilate' and 'erode'; a shape is rounded one way"),
            ))
        }
        (Some(d), None) => ("dilate", d, false),
        (None, Some(e)) => ("erode", e, true),
    };
    let radius = v.get_ref().0;
    if radius > 0.0 {
        length(ctx, &v.span(), radius, &format!("'{key}' in {table}"))?;
    }
    if !(radius >= 0.0 && radius.is_finite()) {
        return Err(ctx.invalid(
            &v.span(),
            format!("'{key}' in {table} must be a rounding radius >= 0 m, got {radius}"),
        ));
    }
    let span = v.span();
    Ok(Some(Rounding {
        erode,
        radius,
        at: (span.start, span.end),
    }))
}

/// The engine's shape (principal frame, volume, moments) of `poly`,
/// rounded as asked.
fn shape(
    ctx: &Ctx<'_>,
    at: &Range<usize>,
    name: &str,
    poly: &ConvexPolyhedron,
    table: &str,
    round: Option<Rounding>,
) -> Result<BlockShape> {
    let Some(r) = round else {
        return BlockShape::new(name, poly).map_err(|e| ctx.invalid(at, format!("{table}: {e}")));
    };
    let at = r.at.0..r.at.1;
    let core = if r.erode {
        erode(poly, r.radius).map_err(|e| {
            ctx.invalid(
                &at,
                format!(
                    "{table}: shape '{name}' cannot be eroded by {} m (its faces would meet): {e}",
                    r.radius
                ),
            )
        })?
    } else {
        poly.clone()
    };
    BlockShape::rounded(name, &core, r.radius)
        .map_err(|e| ctx.invalid(&at, format!("{table}: {e}")))
}

/// `kind = "random"`: the vertex range, semi-axes, roughness (default 0)
/// and seed (default `run_seed`).
fn random_spec(
    ctx: &Ctx<'_>,
    s: &ShapeSpec,
    table: &str,
    run_seed: u64,
    require: &dyn Fn(&str) -> ConfigError,
) -> Result<(RandomBlock, u64)> {
    let range = s.vertices.as_ref().ok_or_else(|| require("vertices"))?;
    let bounds: &[Spanned<Int>] = range.get_ref();
    let [lo, hi] = bounds else {
        return Err(ctx.invalid(
            &range.span(),
            format!(
                "'vertices' in {table} must be [min, max], got {} number(s)",
                bounds.len()
            ),
        ));
    };
    let what = format!("each bound of 'vertices' in {table}");
    let (lo_n, hi_n) = (
        int_at_least(ctx, lo, 4, &what)?,
        int_at_least(ctx, hi, 4, &what)?,
    );
    if lo_n > hi_n || hi_n > 10_000 {
        return Err(ctx.invalid(
            &range.span(),
            format!("'vertices' in {table} must be [min, max] with 4 <= min <= max <= 10000, got [{lo_n}, {hi_n}]"),
        ));
    }
    let axes = s.axes.as_ref().ok_or_else(|| require("axes"))?;
    for (k, a) in axes.get_ref().0.iter().enumerate() {
        length(
            ctx,
            &axes.span(),
            *a,
            &format!("semi-axis {} of 'axes' in {table}", ["x", "y", "z"][k]),
        )?;
    }
    let roughness = match &s.roughness {
        None => 0.0,
        Some(r) => {
            let v = r.get_ref().0;
            if !(0.0..1.0).contains(&v) {
                return Err(ctx.invalid(
                    &r.span(),
                    format!("'roughness' in {table} must be in [0, 1), got {v:?}"),
                ));
            }
            v
        }
    };
    let spec = RandomBlock {
        semi_axes: v3(axes.get_ref().0),
        min_vertices: lo_n as usize,
        max_vertices: hi_n as usize,
        roughness,
    };
    Ok((spec, seed_or(ctx, &s.seed, run_seed, table)?))
}

/// `kind = "vertices"`: the hull of the points; unless `hull`, every point
/// must be one of its corners (a point inside, on a face or an edge, or
/// repeated is most likely a typo).
fn vertex_shape(
    ctx: &Ctx<'_>,
    points: &Spanned<Vec<Spanned<crate::spec::Vec3<crate::spec::Meters>>>>,
    hull: bool,
    table: &str,
) -> Result<ConvexPolyhedron> {
    let list: Vec<Vec3> = points.get_ref().iter().map(|p| v3(p.get_ref().0)).collect();
    extent(ctx, &points.span(), &list, &format!("'points' in {table}"))?;
    if list.len() < 4 {
        return Err(ctx.invalid(
            &points.span(),
            format!(
                "'points' in {table} must hold at least 4 points, got {}",
                list.len()
            ),
        ));
    }
    let poly = match ConvexPolyhedron::from_points(&list) {
        Ok(poly) => poly,
        Err(e) => {
            return Err(ctx.invalid(
                &points.span(),
                format!("'points' in {table} span no volume: {e}"),
            ))
        }
    };
    if !hull {
        let tol = poly.tolerance();
        let mut corner_of: Vec<Option<usize>> = vec![None; poly.vertices().len()];
        for (k, (p, spec)) in list.iter().zip(points.get_ref()).enumerate() {
            let corner = poly.vertices().iter().position(|v| v.distance(*p) <= tol);
            let Some(c) = corner else {
                return Err(ctx.invalid(
                    &spec.span(),
                    format!("point #{} of 'points' in {table} is not a corner of the points' convex hull (it lies inside it, on a face or on an edge); remove it, or set hull = true to keep only the hull's corners", k + 1),
                ));
            };
            if let Some(first) = corner_of[c] {
                return Err(ctx.invalid(
                    &spec.span(),
                    format!(
                        "point #{} of 'points' in {table} repeats point #{}",
                        k + 1,
                        first + 1
                    ),
                ));
            }
            corner_of[c] = Some(k);
        }
    }
    Ok(poly)
}

/// `kind = "mesh"`: one shape per closed convex object of the file, named
/// `name/object`, its coordinates multiplied by `scale` (default 1).
fn mesh_shapes(
    ctx: &Ctx<'_>,
    s: &ShapeSpec,
    name: &str,
    table: &str,
    location: crate::error::Location,
    round: Option<Rounding>,
    require: &dyn Fn(&str) -> ConfigError,
) -> Result<Vec<ShapeSource>> {
    let path_spec = s.path.as_ref().ok_or_else(|| require("path"))?;
    let key_span = path_spec.span();
    let ext = Path::new(path_spec.get_ref())
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let format = match ext.as_deref() {
        Some("obj") => MeshFormat::Obj,
        Some("stl") => MeshFormat::Stl,
        _ => {
            return Err(ctx.invalid(
                &key_span,
                format!(
                    "mesh file '{}' in {table} has an unsupported format; use .obj or .stl (ASCII or binary)",
                    path_spec.get_ref()
                ),
            ))
        }
    };
    let scale = mesh_scale(ctx, &s.scale, table)?;
    let (path, bytes) = ctx.data_file(path_spec, "mesh file", table)?;
    let objects =
        blocks_from_bytes(&bytes, format, &path, MeshOptions::default()).map_err(|e| {
            let why = match &e.object {
                Some(object) => format!("object '{object}': {}", e.kind),
                None => e.kind.to_string(),
            };
            let why = match *e.kind {
                MeshErrorKind::Read(_) => why,
                _ => format!(
                    "{why}; every object of a [[shapes]] mesh must be a closed convex solid"
                ),
            };
            mesh_issue(ctx, &path, &key_span, why)
        })?;
    let mut shapes = Vec::with_capacity(objects.len());
    for object in objects {
        let scaled: Vec<Vec3> = object.block.vertices().iter().map(|v| *v * scale).collect();
        let file = format!(
            "object '{}' of mesh file '{}' in {table}",
            object.name,
            path_spec.get_ref()
        );
        match &s.scale {
            Some(sp) if scale != 1.0 => extent(
                ctx,
                &sp.span(),
                &scaled,
                &format!("scaled by 'scale' = {}, {file}", Approx(scale)),
            )?,
            _ => extent(ctx, &key_span, &scaled, &file)?,
        }
        let poly = if scale == 1.0 {
            object.block
        } else {
            ConvexPolyhedron::from_points(&scaled).map_err(|e| {
                mesh_issue(
                    ctx,
                    &path,
                    &key_span,
                    format!("object '{}' scaled by {scale}: {e}", object.name),
                )
            })?
        };
        let full = format!("{name}/{}", object.name);
        shapes.push(ShapeSource {
            plugin: None,
            location: location.clone(),
            shape: shape(ctx, &key_span, &full, &poly, table, round)?,
        });
    }
    Ok(shapes)
}

fn mesh_issue(ctx: &Ctx<'_>, path: &Path, key_span: &Range<usize>, why: String) -> ConfigError {
    ctx.data_error(path, key_span, FileIssue::whole(why))
}

/// A length of a shape (m): positive, and within what the geometry kernel
/// computes with in double precision ([`limits::MIN_SHAPE_LENGTH`] to
/// [`limits::MAX_COORDINATE`]; volumes and moments take powers of it).
fn length(ctx: &Ctx<'_>, span: &Range<usize>, v: f64, what: &str) -> Result<f64> {
    let v = positive(ctx, span, v, what, "m")?;
    if (limits::MIN_SHAPE_LENGTH..=limits::MAX_COORDINATE).contains(&v) {
        return Ok(v);
    }
    Err(ctx.invalid(
        span,
        format!(
            "{what} must be between {} m and {} m, got {} m: a shape's volume and moments of inertia take up to its fifth power, which double precision cannot hold beyond",
            Approx(limits::MIN_SHAPE_LENGTH),
            Approx(limits::MAX_COORDINATE),
            Approx(v)
        ),
    ))
}

/// The points of a shape: within [`limits::MAX_COORDINATE`] of the origin
/// and at least [`limits::MIN_SHAPE_LENGTH`] across, as [`length`] asks of
/// the shapes given by their sizes.
fn extent(ctx: &Ctx<'_>, span: &Range<usize>, points: &[Vec3], what: &str) -> Result<()> {
    let (mut lo, mut hi) = (Vec3::splat(f64::INFINITY), Vec3::splat(f64::NEG_INFINITY));
    for &p in points {
        lo = lo.min(p);
        hi = hi.max(p);
    }
    if let Some(why) = limits::too_far(lo.abs().max(hi.abs()).to_array()) {
        return Err(ctx.invalid(span, format!("{what} {why}")));
    }
    let across = (hi - lo).max_element();
    if across < limits::MIN_SHAPE_LENGTH {
        return Err(ctx.invalid(
            span,
            format!(
                "{what} is {} m across; a shape must be at least {} m across (its moments of inertia take the fifth power of its size)",
                Approx(across),
                Approx(limits::MIN_SHAPE_LENGTH)
            ),
        ));
    }
    Ok(())
}
