//! The tables written once per run: the block shapes (`shape_vertices`,
//! `shape_faces`) and the clump shapes (`clump_pebbles`), each in its
//! principal frame with where that frame sits in the frame it was written
//! in.

use super::{add_quaternion, Recorder, Vec3Columns};
use talus_core::Snapshot;
use talus_output::{Column, Field, Frame};

/// What a shape is, for the vertex table: `"polyhedron"` with no values,
/// or a plugin shape's kind with its values as a JSON object.
fn shape_kind(s: &talus_core::BlockShape) -> (String, String) {
    let Some(c) = &s.convex else {
        return ("polyhedron".to_string(), String::new());
    };
    let names = c.shape.property_names();
    let object: serde_json::Map<String, serde_json::Value> = names
        .into_iter()
        .zip(c.values.iter())
        .map(|(k, &v)| (k, serde_json::json!(v)))
        .collect();
    (
        c.shape.kind().to_string(),
        serde_json::Value::Object(object).to_string(),
    )
}

impl Recorder {
    /// One row per pebble of every clump shape, in the shape's principal
    /// frame (centroid at the origin): a clump's pebble at `p` sits at
    /// `R(q) p + c` in the world, `q` and `c` from the bodies table.
    /// Written once per run.
    pub fn clump_pebbles(&self, snap: &Snapshot<'_>) -> Frame {
        let templates = snap.templates();
        let n: usize = templates.iter().map(|t| t.pebbles.len()).sum();
        let mut shape = Vec::with_capacity(n);
        let mut name = Vec::with_capacity(n);
        let mut pebble = Vec::with_capacity(n);
        let mut radius = Vec::with_capacity(n);
        let mut coords = Vec3Columns::with_capacity(n);
        let mut written = Vec3Columns::with_capacity(n);
        let mut turn: [Vec<f64>; 4] = std::array::from_fn(|_| Vec::with_capacity(n));
        for (k, t) in templates.iter().enumerate() {
            let q = t.input_rotation;
            for (i, &(c, r)) in t.pebbles.iter().enumerate() {
                shape.push(k as i64);
                name.push(t.name.clone());
                pebble.push(i as u32);
                radius.push(r);
                coords.push([c]);
                written.push([t.input_centroid]);
                for (col, x) in turn.iter_mut().zip([q.w, q.x, q.y, q.z]) {
                    col.push(x);
                }
            }
        }
        let mut frame = Frame::new()
            .push(
                "shape",
                "-",
                "clump shape index, as in the bodies table",
                Column::I64(shape),
            )
            .push("name", "", "shape name from the config", Column::Str(name))
            .push(
                "pebble",
                "-",
                "pebble index within the shape, from 0 (pebble1, pebble2 of contacts)",
                Column::U32(pebble),
            );
        coords.add_to(
            &mut frame,
            &[(
                ["x", "y", "z"],
                "m",
                "pebble centre in the shape's principal frame (centroid at the origin)",
            )],
        );
        let mut frame = frame.push("radius", "m", "pebble radius", Column::F64(radius));
        add_written_frame(&mut frame, written, turn);
        frame
    }

    /// One row per vertex of every block shape, in the shape's principal
    /// frame (centroid at the origin): a block's vertex `v` sits at
    /// `R(q) v + c` in the world, `q` and `c` from the bodies table. A
    /// rounded shape's vertices are its core's, with the rounding radius on
    /// every row. Written once per run.
    pub fn shape_vertices(&self, snap: &Snapshot<'_>) -> Frame {
        let n: usize = snap
            .shapes()
            .iter()
            .map(|s| s.polyhedron.vertices().len())
            .sum();
        let mut shape = Vec::with_capacity(n);
        let mut name = Vec::with_capacity(n);
        let mut vertex = Vec::with_capacity(n);
        let mut kind = Vec::with_capacity(n);
        let mut properties = Vec::with_capacity(n);
        let mut rounding = Vec::with_capacity(n);
        let mut coords = Vec3Columns::with_capacity(n);
        let mut written = Vec3Columns::with_capacity(n);
        let mut turn: [Vec<f64>; 4] = std::array::from_fn(|_| Vec::with_capacity(n));
        for (k, s) in snap.shapes().iter().enumerate() {
            let q = s.input_rotation;
            let (what, values) = shape_kind(s);
            for (i, &v) in s.polyhedron.vertices().iter().enumerate() {
                shape.push(k as i64);
                name.push(s.name.clone());
                kind.push(what.clone());
                properties.push(values.clone());
                vertex.push(i as u32);
                rounding.push(s.rounding);
                coords.push([v]);
                written.push([s.input_centroid]);
                for (col, x) in turn.iter_mut().zip([q.w, q.x, q.y, q.z]) {
                    col.push(x);
                }
            }
        }
        let mut frame = Frame::new()
            .push(
                "shape",
                "-",
                "shape index, as in the bodies table",
                Column::I64(shape),
            )
            .push("name", "", "shape name from the config", Column::Str(name))
            .push(
                "vertex",
                "-",
                "vertex index within the shape, from 0",
                Column::U32(vertex),
            )
            .push(
                "kind",
                "",
                "\"polyhedron\", or the kind of a plugin's shape, whose vertices outline it",
                Column::Str(kind),
            )
            .push(
                "properties",
                "",
                "a plugin shape's property values as a JSON object (SI units, the plugin's names); empty for a polyhedron",
                Column::Str(properties),
            );
        coords.add_to(
            &mut frame,
            &[(
                ["x", "y", "z"],
                "m",
                "vertex in the shape's principal frame (centroid at the origin)",
            )],
        );
        let mut frame = frame.push(
            "rounding",
            "m",
            "rounding radius: the block is its polyhedron dilated by a ball of this radius (0: sharp)",
            Column::F64(rounding),
        );
        add_written_frame(&mut frame, written, turn);
        frame
    }

    /// One row per triangle of every block shape's surface, its corners
    /// counter-clockwise seen from outside (the right-hand normal points
    /// out). Written once per run.
    pub fn shape_faces(&self, snap: &Snapshot<'_>) -> Frame {
        let n: usize = snap
            .shapes()
            .iter()
            .map(|s| s.polyhedron.facets().len())
            .sum();
        let mut shape = Vec::with_capacity(n);
        let mut face = Vec::with_capacity(n);
        let mut corners: [Vec<u32>; 3] = std::array::from_fn(|_| Vec::with_capacity(n));
        for (k, s) in snap.shapes().iter().enumerate() {
            for (f, t) in s.polyhedron.facets().iter().enumerate() {
                shape.push(k as i64);
                face.push(f as u32);
                for (col, &v) in corners.iter_mut().zip(t) {
                    col.push(v);
                }
            }
        }
        let mut frame = Frame::new()
            .push(
                "shape",
                "-",
                "shape index, as in the bodies table",
                Column::I64(shape),
            )
            .push(
                "face",
                "-",
                "triangle index within the shape, from 0",
                Column::U32(face),
            );
        for (name, col) in ["v0", "v1", "v2"].into_iter().zip(corners) {
            frame.add(
                Field::new(
                    name,
                    "-",
                    "corner: vertex index in shape_vertices, counter-clockwise from outside",
                ),
                Column::U32(col),
            );
        }
        frame
    }
}

/// Where a shape's principal frame sits in the frame it was written in
/// (its centroid there and the rotation to it), one row per row of the
/// shape: a config orientation is `q * conj(frame_q)`.
fn add_written_frame(frame: &mut Frame, written: Vec3Columns<1>, turn: [Vec<f64>; 4]) {
    written.add_to(
        frame,
        &[(
            ["frame_x", "frame_y", "frame_z"],
            "m",
            "the shape's centroid in the frame it was written in",
        )],
    );
    add_quaternion(
        frame,
        ["frame_qw", "frame_qx", "frame_qy", "frame_qz"],
        "rotation from the principal frame to the frame the shape was written in",
        turn,
    );
}
