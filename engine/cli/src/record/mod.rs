//! The output schema: turns a [`Snapshot`] of the simulation into output
//! frames (one row per contact, body or wall at the recorded step, and the
//! block shapes once per run).
//!
//! Reads: the snapshot's rows, its step and time, and the models' state
//! slots. Writes: [`Frame`]s of named columns with units and descriptions.
//! Invariant: the column set is fixed for a run (the state columns are
//! planned once, from the models), so every frame of a table has the same
//! schema, the one `docs/output.md` lists. Nothing here knows how the core
//! stores contacts or numbers bodies: the ids come with the rows.
//!
//! This module holds the [`Recorder`], what the tables share, and the
//! bodies, walls and bonds tables; `contacts` makes the contacts table,
//! `cell` the cell's, and `shapes` the tables written once per run.

use talus_core::snapshot::PieceId;
use talus_core::{BondBreak, Snapshot, Vec3};
use talus_output::{Column, Field, Frame};

/// A model state column: its name in the output and, per model, the slot
/// index that feeds it.
struct StateColumn {
    name: String,
    unit: String,
    doc: String,
    slot_of_model: Vec<Option<usize>>,
}

/// The output layout of a run's state columns.
pub struct Recorder {
    state_columns: Vec<StateColumn>,
    /// Whether the contacts table has the six-DOF columns
    /// ([`contacts::SIX_DOF_COLUMNS`]): some model pairing chose that frame.
    six_dof: bool,
    /// Whether every model pairing chose it (then no row is null).
    all_six_dof: bool,
}

/// The vector columns of the bodies table after the orientation (component
/// names, unit, description), in the order of the values
/// [`Recorder::bodies`] pushes.
const BODY_VECTORS: [([&str; 3], &str, &str); 4] = [
    (["vx", "vy", "vz"], "m/s", "velocity (half step)"),
    (["wx", "wy", "wz"], "rad/s", "angular velocity (half step)"),
    (["fx", "fy", "fz"], "N", "resultant contact force"),
    (["mx", "my", "mz"], "N m", "resultant contact moment"),
];

/// The centre of the bodies table.
const BODY_CENTRE: [([&str; 3], &str, &str); 1] =
    [(["x", "y", "z"], "m", "centre (a block's centroid)")];

/// Adds four unitless columns `names` (w, x, y, z) holding quaternions,
/// each described by `doc`.
fn add_quaternion(
    frame: &mut Frame,
    names: [&'static str; 4],
    doc: &'static str,
    cols: [Vec<f64>; 4],
) {
    for (name, col) in names.into_iter().zip(cols) {
        frame.add(Field::new(name, "-", doc), Column::F64(col));
    }
}

/// The orientation columns of the bodies table.
const BODY_ORIENTATION: [&str; 4] = ["qw", "qx", "qy", "qz"];

/// The vector columns of the walls table, in the order of the values
/// [`Recorder::walls`] pushes.
const WALL_VECTORS: [([&str; 3], &str, &str); 5] = [
    (
        ["cx", "cy", "cz"],
        "m",
        "reference point (centre of rotation)",
    ),
    (["vx", "vy", "vz"], "m/s", "translational velocity"),
    (["wx", "wy", "wz"], "rad/s", "angular velocity"),
    (["fx", "fy", "fz"], "N", "total contact force on the wall"),
    (
        ["mx", "my", "mz"],
        "N m",
        "total moment about the reference point",
    ),
];

/// `N` vector columns, each as its three components.
struct Vec3Columns<const N: usize>([[Vec<f64>; 3]; N]);

impl<const N: usize> Vec3Columns<N> {
    fn with_capacity(n: usize) -> Self {
        Vec3Columns(std::array::from_fn(|_| {
            std::array::from_fn(|_| Vec::with_capacity(n))
        }))
    }

    /// Appends one row: a vector per column.
    #[inline]
    fn push(&mut self, row: [Vec3; N]) {
        for (col, v) in self.0.iter_mut().zip(row) {
            col[0].push(v.x);
            col[1].push(v.y);
            col[2].push(v.z);
        }
    }

    /// Adds the columns to `frame`, named and described by `fields`.
    fn add_to(
        self,
        frame: &mut Frame,
        fields: &[([&'static str; 3], &'static str, &'static str); N],
    ) {
        for ((names, unit, doc), parts) in fields.iter().zip(self.0) {
            for (name, part) in names.iter().zip(parts) {
                frame.add(Field::new(*name, *unit, *doc), Column::F64(part));
            }
        }
    }
}

/// The `step` and `time` columns every table opens with, for `n` rows.
fn step_and_time(snap: &Snapshot<'_>, n: usize) -> Frame {
    Frame::new()
        .push(
            "step",
            "-",
            "cycle number",
            Column::U64(vec![snap.step(); n]),
        )
        .push(
            "time",
            "s",
            "simulated time",
            Column::F64(vec![snap.time(); n]),
        )
}

impl Recorder {
    /// Plans the state columns: a slot name shared by several models with
    /// the same unit becomes one column; otherwise the column is prefixed
    /// with the model name.
    pub fn new(snap: &Snapshot<'_>) -> Recorder {
        let mut cols: Vec<StateColumn> = Vec::new();
        let n_models = snap.models().len();
        for (mi, m) in snap.models().enumerate() {
            for (si, slot) in m.state_slots().enumerate() {
                let existing = cols.iter_mut().find(|c| c.name == slot.name);
                let name = match existing {
                    Some(c) if c.unit == slot.unit => {
                        c.slot_of_model[mi] = Some(si);
                        continue;
                    }
                    Some(_) => format!("{}_{}", m.name(), slot.name),
                    None => slot.name.to_string(),
                };
                let mut slot_of_model = vec![None; n_models];
                slot_of_model[mi] = Some(si);
                cols.push(StateColumn {
                    name,
                    unit: slot.unit.to_string(),
                    doc: slot.doc.to_string(),
                    slot_of_model,
                });
            }
        }
        let six_dof = snap.models().any(|m| m.frame().six_dof());
        let all_six_dof = snap.models().all(|m| m.frame().six_dof());
        Recorder {
            state_columns: cols,
            six_dof,
            all_six_dof,
        }
    }

    /// One row per body: balls, then blocks, then clumps.
    pub fn bodies(&self, snap: &Snapshot<'_>) -> Frame {
        let n = snap.n_bodies();
        let mut id = Vec::with_capacity(n);
        let mut kind = Vec::with_capacity(n);
        let mut group = Vec::with_capacity(n);
        let mut shape = Vec::with_capacity(n);
        let mut radius = Vec::with_capacity(n);
        let mut mass = Vec::with_capacity(n);
        let mut centre = Vec3Columns::with_capacity(n);
        let mut quat: [Vec<f64>; 4] = std::array::from_fn(|_| Vec::with_capacity(n));
        let mut vectors = Vec3Columns::with_capacity(n);
        for b in snap.bodies() {
            id.push(b.id);
            kind.push(b.kind.name().to_string());
            group.push(b.group.to_string());
            shape.push(b.shape.map_or(-1, i64::from));
            radius.push(b.radius);
            mass.push(b.mass);
            centre.push([b.pos]);
            let q = b.orientation;
            for (col, v) in quat.iter_mut().zip([q.w, q.x, q.y, q.z]) {
                col.push(v);
            }
            vectors.push([b.vel, b.spin, b.force, b.moment]);
        }
        let mut frame = step_and_time(snap, n)
            .push(
                "id",
                "-",
                "body id within its kind (balls, blocks and clumps are each numbered from 1)",
                Column::U64(id),
            )
            .push(
                "kind",
                "",
                "body kind: ball, block or clump",
                Column::Str(kind),
            )
            .push("group", "", "group name", Column::Str(group))
            .push(
                "shape",
                "-",
                "block shape index (shape_vertices, shape_faces) or clump shape index (clump_pebbles), -1 for balls",
                Column::I64(shape),
            )
            .push(
                "radius",
                "m",
                "radius; for a block or clump the bounding radius about its centroid",
                Column::F64(radius),
            )
            .push("mass", "kg", "mass", Column::F64(mass));
        centre.add_to(&mut frame, &BODY_CENTRE);
        add_quaternion(
            &mut frame,
            BODY_ORIENTATION,
            "orientation quaternion, body (principal) frame to world; identity for balls",
            quat,
        );
        vectors.add_to(&mut frame, &BODY_VECTORS);
        frame
    }

    /// One row per wall.
    pub fn walls(&self, snap: &Snapshot<'_>) -> Frame {
        let n = snap.n_walls();
        let mut id = Vec::with_capacity(n);
        let mut name = Vec::with_capacity(n);
        let mut vectors = Vec3Columns::with_capacity(n);
        for w in snap.walls() {
            id.push(w.id);
            name.push(w.name.to_string());
            vectors.push([w.centre, w.velocity, w.spin, w.force, w.moment]);
        }
        let mut frame = step_and_time(snap, n)
            .push("id", "-", "wall id", Column::U64(id))
            .push("name", "", "wall name", Column::Str(name));
        vectors.add_to(&mut frame, &WALL_VECTORS);
        frame
    }

    /// One row per broken bond, each at its own step (rows come from
    /// [`talus_core::Simulation::take_bond_breaks`]); the model's state
    /// columns hold what the model kept at the break (the stresses at
    /// failure among them).
    pub fn bonds(&self, rows: &[BondBreak]) -> Frame {
        let n = rows.len();
        let mut step = Vec::with_capacity(n);
        let mut time = Vec::with_capacity(n);
        let mut id = Vec::with_capacity(n);
        let mut kind = Vec::with_capacity(n);
        let mut end1 = Vec::with_capacity(n);
        let mut end2 = Vec::with_capacity(n);
        let mut body2 = Vec::with_capacity(n);
        let mut facet = Vec::with_capacity(n);
        let mut pebbles: [Vec<i64>; 2] = std::array::from_fn(|_| Vec::with_capacity(n));
        let mut mode = Vec::with_capacity(n);
        let mut position = Vec3Columns::<1>::with_capacity(n);
        let mut state: Vec<Vec<Option<f64>>> = (0..self.state_columns.len())
            .map(|_| Vec::with_capacity(n))
            .collect();
        for b in rows {
            step.push(b.step);
            time.push(b.time);
            id.push(b.contact);
            kind.push(pair_name(b.end1, b.end2));
            for (col, end) in pebbles.iter_mut().zip([b.end1, b.end2]) {
                col.push(end.pebble().map_or(-1, i64::from));
            }
            end1.push(b.end1.body());
            end2.push(b.end2.facet().map_or(b.end2.body(), u64::from));
            body2.push(b.end2.body());
            facet.push(b.end2.facet().map_or(-1, i64::from));
            mode.push(b.mode.name().to_string());
            position.push([b.position]);
            for (col, sc) in state.iter_mut().zip(&self.state_columns) {
                col.push(sc.slot_of_model[b.model].map(|s| b.state[s]));
            }
        }
        let mut f = Frame::new()
            .push(
                "step",
                "-",
                "cycle in which the bond broke",
                Column::U64(step),
            )
            .push(
                "time",
                "s",
                "simulated time at the end of that cycle",
                Column::F64(time),
            )
            .push(
                "id",
                "-",
                "contact id (as in the contacts table)",
                Column::U64(id),
            )
            .push(
                "kind",
                "",
                "pair kind, as in the contacts table",
                Column::Str(kind),
            )
            .push(
                "end1",
                "-",
                "ball, block or clump id of end1",
                Column::U64(end1),
            )
            .push(
                "end2",
                "-",
                "ball, block or clump id of end2, or facet index in its wall",
                Column::U64(end2),
            )
            .push(
                "body2",
                "-",
                "ball, block, clump or wall id of end2",
                Column::U64(body2),
            )
            .push(
                "facet",
                "-",
                "facet index for a bond to a wall, else -1",
                Column::I64(facet),
            )
            .push(
                "pebble1",
                "-",
                "pebble index of end1 in its clump's shape, else -1",
                Column::I64(std::mem::take(&mut pebbles[0])),
            )
            .push(
                "pebble2",
                "-",
                "pebble index of end2 in its clump's shape, else -1",
                Column::I64(std::mem::take(&mut pebbles[1])),
            )
            .push(
                "mode",
                "",
                "how it broke: tension or shear",
                Column::Str(mode),
            );
        position.add_to(&mut f, &BOND_POSITION);
        for (sc, col) in self.state_columns.iter().zip(state) {
            f = f.push(
                sc.name.clone(),
                sc.unit.clone(),
                sc.doc.clone(),
                Column::OptF64(col),
            );
        }
        f
    }
}

/// The location column of the bonds table.
const BOND_POSITION: [([&str; 3], &str, &str); 1] =
    [(["x", "y", "z"], "m", "contact location when the bond broke")];

/// The pair kind of a contact as its ends' kinds: the engine's lane kind
/// with a clump's pebble named as such (a pebble is resolved as a ball).
fn pair_name(end1: PieceId, end2: PieceId) -> String {
    let kind = |p: PieceId| match p {
        PieceId::Ball { .. } => "ball",
        PieceId::Pebble { .. } => "pebble",
        PieceId::Block { .. } => "block",
        PieceId::Facet { .. } => "facet",
    };
    format!("{}-{}", kind(end1), kind(end2))
}

mod cell;
mod contacts;
mod shapes;

#[cfg(test)]
mod tests {
    use super::*;
    use talus_core::{BallInit, Settings, Simulation, Timestep, Wall};

    /// The column names and units that docs/output.md lists for `table`,
    /// in order (`None` for the unit of model-state columns, which come
    /// from the models).
    fn documented(table: &str) -> Vec<(String, Option<String>)> {
        let doc = include_str!("../../../../docs/output.md");
        let head = format!("### {table}/");
        let start = doc
            .find(&head)
            .unwrap_or_else(|| panic!("no {head} in docs/output.md"));
        let mut out = Vec::new();
        for line in doc[start..].lines().skip(1) {
            if line.starts_with("###") || line.starts_with("## ") {
                break;
            }
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            if cells.len() < 5 || cells[1] == "column" || cells[1].starts_with("---") {
                continue;
            }
            let (names, unit) = (cells[1], cells[3]);
            if names == "*model state*" {
                let list = &cells[4][cells[4].find("(linear: ").expect("linear's slots")..];
                let list = &list[..list.find(')').unwrap()];
                for name in list.split('`').skip(1).step_by(2) {
                    out.push((name.to_string(), None));
                }
                continue;
            }
            for name in names.split(", ") {
                let expanded: Vec<String> = match name.strip_suffix("..") {
                    // `s_x..`: the three components.
                    Some(stem) => ["x", "y", "z"]
                        .iter()
                        .map(|c| format!("{}{c}", &stem[..stem.len() - 1]))
                        .collect(),
                    None => vec![name.to_string()],
                };
                for n in expanded {
                    out.push((n, Some(unit.to_string())));
                }
            }
        }
        out
    }

    /// Two touching balls resting on a one-facet floor, with the linear
    /// model (the ball-facet pairing with the six-DOF frame), after one
    /// cycle.
    fn small_run() -> Simulation {
        let mut sim = Simulation::new(Settings {
            gravity: Vec3::new(0.0, 0.0, -9.81),
            timestep: Timestep::Fixed(1e-6),
            ..Settings::default()
        });
        let (g, w) = (sim.group("grain"), sim.group("wall"));
        let root = talus_plugin_linear::root_module();
        let entry = talus_sdk::ModelEntry::from_abi((root.models())()[0]).unwrap();
        let m = sim.add_model(entry.clone());
        let six_dof = talus_core::ContactFrame::SixDof { no_ratchet: false };
        let m6 = sim.add_model_with_frame(entry, six_dof);
        let props = vec![1e5, 5e4, 0.5, 0.1, 0.1];
        sim.assign(g, g, m, props.clone()).unwrap();
        sim.assign(g, w, m6, props).unwrap();
        // Inside one facet of the floor as the cell cuts it (squares of
        // 12.5 mm split along y = x).
        for x in [0.003, 0.0049] {
            sim.add_ball(BallInit {
                pos: Vec3::new(x, 0.008, 0.00099),
                radius: 1e-3,
                density: 2500.0,
                velocity: Vec3::ZERO,
                spin: Vec3::ZERO,
                group: g,
                damping: 0.0,
                fixity: Default::default(),
            })
            .unwrap();
        }
        let v = [
            [-0.05, -0.05, 0.0],
            [0.05, -0.05, 0.0],
            [0.05, 0.05, 0.0],
            [-0.05, 0.05, 0.0],
        ];
        let floor = Wall::new("floor", &v, &[[0, 1, 2], [0, 2, 3]], None).unwrap();
        sim.add_wall(floor, w);
        // Periodic across x and y, the floor below spanning the cell.
        let cell = talus_core::Cell::from_box(
            Vec3::new(-0.05, -0.05, -0.01),
            Vec3::new(0.05, 0.05, 0.05),
            [true, true, false],
            talus_core::math::Mat3::ZERO,
        )
        .unwrap();
        sim.set_cell(cell);
        sim.cycle().unwrap();
        sim
    }

    /// A break row of the first contact of `snap`, for the schema.
    fn broken(snap: &Snapshot<'_>) -> talus_core::BondBreak {
        let c = snap.contacts().next().expect("a contact");
        talus_core::BondBreak {
            step: snap.step(),
            time: snap.time(),
            contact: c.id,
            end1: c.end1,
            end2: c.end2,
            model: c.model,
            position: c.xc,
            mode: talus_core::BreakMode::Shear,
            state: c.state.to_vec(),
        }
    }

    #[test]
    fn docs_list_the_columns_a_run_writes() {
        let mut sim = small_run();
        let snap = sim.snapshot();
        let rec = Recorder::new(&snap);
        let contacts = rec.contacts(&snap);
        assert_eq!(
            contacts.n_rows(),
            5,
            "one ball-ball contact, and per ball two ball-facet ones (the \
             two triangles of the square it is in, whose boxes it reaches)"
        );
        for (table, frame) in [
            ("contacts", contacts),
            ("bodies", rec.bodies(&snap)),
            ("walls", rec.walls(&snap)),
            ("shape_vertices", rec.shape_vertices(&snap)),
            ("shape_faces", rec.shape_faces(&snap)),
            ("bonds", rec.bonds(&[broken(&snap)])),
            ("clump_pebbles", rec.clump_pebbles(&snap)),
            ("cell", rec.cell(&snap).expect("a cell")),
        ] {
            let written: Vec<(String, String)> = frame
                .fields
                .iter()
                .map(|f| (f.name.to_string(), f.unit.to_string()))
                .collect();
            let listed = documented(table);
            let names = |v: &[(String, String)]| v.iter().map(|c| c.0.clone()).collect::<Vec<_>>();
            let listed_names: Vec<String> = listed.iter().map(|c| c.0.clone()).collect();
            assert_eq!(
                names(&written),
                listed_names,
                "{table}: docs/output.md vs record/"
            );
            for ((name, unit), (_, doc_unit)) in written.iter().zip(&listed) {
                if let Some(doc_unit) = doc_unit {
                    assert_eq!(unit, doc_unit, "{table}.{name}: unit");
                }
            }
        }
    }
}
