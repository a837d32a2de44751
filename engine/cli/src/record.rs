//! Turns the state of a [`Simulation`] into output frames (one row per
//! contact, ball or wall at the recorded step). The column set is fixed for
//! a run, so every frame of a table has the same schema.

use talus_core::geometry::Region;
use talus_core::{Simulation, Vec3};
use talus_output::{Column, Frame};

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
}

impl Recorder {
    /// Plans the state columns: a slot name shared by several models with
    /// the same unit becomes one column; otherwise the column is prefixed
    /// with the model name.
    pub fn new(sim: &Simulation) -> Recorder {
        let mut cols: Vec<StateColumn> = Vec::new();
        let n_models = sim.models.len();
        for (mi, m) in sim.models.iter().enumerate() {
            for (si, slot) in m.entry.descriptor.state.iter().enumerate() {
                let name = slot.name.to_string();
                let unit = slot.unit.to_string();
                let existing = cols.iter_mut().find(|c| c.name == name);
                match existing {
                    Some(c) if c.unit == unit => c.slot_of_model[mi] = Some(si),
                    Some(_) => {
                        let mut slot_of_model = vec![None; n_models];
                        slot_of_model[mi] = Some(si);
                        cols.push(StateColumn {
                            name: format!("{}_{}", m.name, name),
                            unit,
                            doc: slot.doc.to_string(),
                            slot_of_model,
                        });
                    }
                    None => {
                        let mut slot_of_model = vec![None; n_models];
                        slot_of_model[mi] = Some(si);
                        cols.push(StateColumn {
                            name,
                            unit,
                            doc: slot.doc.to_string(),
                            slot_of_model,
                        });
                    }
                }
            }
        }
        Recorder {
            state_columns: cols,
        }
    }

    /// One row per contact.
    pub fn contacts(&self, sim: &Simulation) -> Frame {
        let n = sim.n_contacts();
        let mut id = Vec::with_capacity(n);
        let mut kind = Vec::with_capacity(n);
        let mut end1 = Vec::with_capacity(n);
        let mut end2 = Vec::with_capacity(n);
        let mut body2 = Vec::with_capacity(n);
        let mut facet = Vec::with_capacity(n);
        let mut region = Vec::with_capacity(n);
        let mut model = Vec::with_capacity(n);
        let mut active = Vec::with_capacity(n);
        let mut linked_to = Vec::with_capacity(n);
        let mut proximity = Vec::with_capacity(n);
        let mut gap = Vec::with_capacity(n);
        let mut vecs: Vec<Vec<f64>> = (0..24).map(|_| Vec::with_capacity(n)).collect();
        let mut state: Vec<Vec<Option<f64>>> = (0..self.state_columns.len())
            .map(|_| Vec::with_capacity(n))
            .collect();
        for (mi, m) in sim.models.iter().enumerate() {
            let st = &m.store;
            for k in 0..st.len() {
                let p = &st.plane[k];
                let o = &st.output[k];
                id.push(st.id[k]);
                end1.push(st.end1[k].index() as u64 + 1);
                let b = st.end2[k];
                if b.is_facet() {
                    let (w, f) = sim.facet_owner[b.index()];
                    kind.push("ball-facet".to_string());
                    end2.push(f as u64);
                    body2.push(sim.walls()[w as usize].id);
                    facet.push(f as i64);
                    region.push(Region::from_code(p.region).name().to_string());
                } else {
                    kind.push("ball-ball".to_string());
                    end2.push(b.index() as u64 + 1);
                    body2.push(b.index() as u64 + 1);
                    facet.push(-1);
                    region.push(String::new());
                }
                model.push(m.name.clone());
                active.push(o.status == talus_sdk::STATUS_ACTIVE);
                let (linked, pc) = sim.wall_links(mi, k);
                let or_none = |id: u64| if id == 0 { -1 } else { id as i64 };
                linked_to.push(or_none(linked));
                proximity.push(or_none(pc));
                gap.push(p.gap);
                let fg = sim.contact_force(mi, k);
                let mg = sim.contact_moment(mi, k);
                let values = [
                    p.xc.x,
                    p.xc.y,
                    p.xc.z,
                    p.n.x,
                    p.n.y,
                    p.n.z,
                    p.s.x,
                    p.s.y,
                    p.s.z,
                    p.t.x,
                    p.t.y,
                    p.t.z,
                    o.force[0],
                    o.force[1],
                    o.force[2],
                    fg.x,
                    fg.y,
                    fg.z,
                    o.moment[0],
                    o.moment[1],
                    o.moment[2],
                    mg.x,
                    mg.y,
                    mg.z,
                ];
                for (col, v) in vecs.iter_mut().zip(values) {
                    col.push(v);
                }
                let block = st.state_of(k);
                for (c, sc) in state.iter_mut().zip(&self.state_columns) {
                    c.push(sc.slot_of_model[mi].map(|s| block[s]));
                }
            }
        }
        let step = vec![sim.step; n];
        let time = vec![sim.time; n];
        let mut f = Frame::new()
            .push("step", "-", "cycle number", Column::U64(step))
            .push("time", "s", "simulated time", Column::F64(time))
            .push(
                "id",
                "-",
                "contact id, stable for the contact's life",
                Column::U64(id),
            )
            .push("kind", "", "ball-ball or ball-facet", Column::Str(kind))
            .push("end1", "-", "ball id of end1", Column::U64(end1))
            .push(
                "end2",
                "-",
                "ball id of end2, or facet index in its wall",
                Column::U64(end2),
            )
            .push(
                "body2",
                "-",
                "ball id or wall id of end2",
                Column::U64(body2),
            )
            .push(
                "facet",
                "-",
                "facet index for ball-facet contacts, else -1",
                Column::I64(facet),
            )
            .push(
                "region",
                "",
                "facet region of the wall contact point (face, edgeK, vertexK)",
                Column::Str(region),
            )
            .push("model", "", "contact model name", Column::Str(model))
            .push(
                "active",
                "",
                "whether the contact carries force",
                Column::Bool(active),
            )
            .push(
                "linked_to",
                "-",
                "ball-facet: id of the contact that carries this one's load (wall logic), else -1",
                Column::I64(linked_to),
            )
            .push(
                "proximity",
                "-",
                "ball-facet: id of the proximity contact this one belongs to, else -1",
                Column::I64(proximity),
            )
            .push(
                "gap",
                "m",
                "contact gap, negative is overlap",
                Column::F64(gap),
            );
        let names = [
            ("xc_x", "m", "contact location"),
            ("xc_y", "m", "contact location"),
            ("xc_z", "m", "contact location"),
            ("n_x", "-", "unit normal, end1 to end2"),
            ("n_y", "-", "unit normal, end1 to end2"),
            ("n_z", "-", "unit normal, end1 to end2"),
            ("s_x", "-", "contact-plane axis s"),
            ("s_y", "-", "contact-plane axis s"),
            ("s_z", "-", "contact-plane axis s"),
            ("t_x", "-", "contact-plane axis t"),
            ("t_y", "-", "contact-plane axis t"),
            ("t_z", "-", "contact-plane axis t"),
            ("f_n", "N", "normal force on end2, > 0 compressive"),
            ("f_s", "N", "shear force on end2 along s"),
            ("f_t", "N", "shear force on end2 along t"),
            ("fx", "N", "global force on end2"),
            ("fy", "N", "global force on end2"),
            ("fz", "N", "global force on end2"),
            ("m_t", "N m", "twisting moment on end2 about n"),
            ("m_bs", "N m", "bending moment on end2 about s"),
            ("m_bt", "N m", "bending moment on end2 about t"),
            ("mx", "N m", "global moment on end2"),
            ("my", "N m", "global moment on end2"),
            ("mz", "N m", "global moment on end2"),
        ];
        for ((name, unit, doc), col) in names.into_iter().zip(vecs) {
            f = f.push(name, unit, doc, Column::F64(col));
        }
        let all_models = |sc: &StateColumn| sc.slot_of_model.iter().all(Option::is_some);
        for (sc, col) in self.state_columns.iter().zip(state) {
            let column = if all_models(sc) {
                Column::F64(col.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect())
            } else {
                Column::OptF64(col)
            };
            f = f.push(&sc.name, &sc.unit, &sc.doc, column);
        }
        f
    }

    /// One row per ball.
    pub fn bodies(&self, sim: &Simulation) -> Frame {
        let b = sim.balls();
        let n = b.len();
        let names = sim.group_names();
        let scalar = |f: &dyn Fn(usize) -> f64| Column::F64((0..n).map(f).collect());
        let mut frame = Frame::new()
            .push("step", "-", "cycle number", Column::U64(vec![sim.step; n]))
            .push(
                "time",
                "s",
                "simulated time",
                Column::F64(vec![sim.time; n]),
            )
            .push("id", "-", "ball id", Column::U64((1..=n as u64).collect()))
            .push(
                "kind",
                "",
                "body kind",
                Column::Str(vec!["ball".to_string(); n]),
            )
            .push(
                "group",
                "",
                "group name",
                Column::Str((0..n).map(|i| names[b.group[i] as usize].clone()).collect()),
            )
            .push("radius", "m", "radius", scalar(&|i| b.radius[i]))
            .push("mass", "kg", "mass", scalar(&|i| b.mass[i]));
        push_vec3(&mut frame, ["x", "y", "z"], "m", "centre", &b.pos);
        push_vec3(
            &mut frame,
            ["vx", "vy", "vz"],
            "m/s",
            "velocity (half step)",
            &b.vel,
        );
        push_vec3(
            &mut frame,
            ["wx", "wy", "wz"],
            "rad/s",
            "angular velocity (half step)",
            &b.spin,
        );
        push_vec3(
            &mut frame,
            ["fx", "fy", "fz"],
            "N",
            "resultant contact force",
            &b.force,
        );
        push_vec3(
            &mut frame,
            ["mx", "my", "mz"],
            "N m",
            "resultant contact moment",
            &b.moment,
        );
        frame
    }

    /// One row per wall.
    pub fn walls(&self, sim: &Simulation) -> Frame {
        let w = sim.walls();
        let n = w.len();
        let vectors =
            |f: &dyn Fn(&talus_core::Wall) -> Vec3| -> Vec<Vec3> { w.iter().map(f).collect() };
        let mut frame = Frame::new()
            .push("step", "-", "cycle number", Column::U64(vec![sim.step; n]))
            .push(
                "time",
                "s",
                "simulated time",
                Column::F64(vec![sim.time; n]),
            )
            .push(
                "id",
                "-",
                "wall id",
                Column::U64(w.iter().map(|w| w.id).collect()),
            )
            .push(
                "name",
                "",
                "wall name",
                Column::Str(w.iter().map(|w| w.name.clone()).collect()),
            );
        let table: [([&str; 3], &str, &str, Vec<Vec3>); 5] = [
            (
                ["cx", "cy", "cz"],
                "m",
                "reference point (centre of rotation)",
                vectors(&|w| w.centre),
            ),
            (
                ["vx", "vy", "vz"],
                "m/s",
                "translational velocity",
                vectors(&|w| w.motion.velocity),
            ),
            (
                ["wx", "wy", "wz"],
                "rad/s",
                "angular velocity",
                vectors(&|w| w.motion.spin),
            ),
            (
                ["fx", "fy", "fz"],
                "N",
                "total contact force on the wall",
                vectors(&|w| w.force),
            ),
            (
                ["mx", "my", "mz"],
                "N m",
                "total moment about the reference point",
                vectors(&|w| w.moment),
            ),
        ];
        for (names, unit, doc, values) in &table {
            push_vec3(&mut frame, *names, unit, doc, values);
        }
        frame
    }
}

/// Appends the three components of a vector column as `names[0..3]`.
fn push_vec3(frame: &mut Frame, names: [&str; 3], unit: &str, doc: &str, values: &[Vec3]) {
    for (k, name) in names.into_iter().enumerate() {
        frame.add(
            talus_output::Field::new(name, unit, doc),
            Column::F64(values.iter().map(|v| v[k]).collect()),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use talus_core::{BallInit, Settings, Timestep, Wall};

    /// The column names and units that docs/output.md lists for `table`,
    /// in order (`None` for the unit of model-state columns, which come
    /// from the models).
    fn documented(table: &str) -> Vec<(String, Option<String>)> {
        let doc = include_str!("../../../docs/output.md");
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
    /// model, after one cycle.
    fn small_run() -> Simulation {
        let mut sim = Simulation::new(Settings {
            gravity: Vec3::new(0.0, 0.0, -9.81),
            timestep: Timestep::Fixed(1e-6),
            cell_tolerance: None,
        });
        let (g, w) = (sim.group("grain"), sim.group("wall"));
        let root = talus_plugin_linear::root_module();
        let entry = talus_sdk::ModelEntry::from_abi((root.models())()[0]).unwrap();
        let m = sim.add_model(entry);
        let props = vec![1e5, 5e4, 0.5, 0.1, 0.1];
        sim.assign(g, g, m, props.clone()).unwrap();
        sim.assign(g, w, m, props).unwrap();
        for x in [0.0, 0.0019] {
            sim.add_ball(BallInit {
                pos: Vec3::new(x, 0.0, 0.00099),
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
        let v = [[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]];
        sim.add_wall(Wall::new("floor", &v, &[[0, 1, 2]], None).unwrap(), w);
        sim.cycle().unwrap();
        sim
    }

    #[test]
    fn docs_list_the_columns_a_run_writes() {
        let sim = small_run();
        let rec = Recorder::new(&sim);
        let contacts = rec.contacts(&sim);
        assert_eq!(
            contacts.n_rows(),
            3,
            "two ball-facet and one ball-ball contact"
        );
        for (table, frame) in [
            ("contacts", contacts),
            ("bodies", rec.bodies(&sim)),
            ("walls", rec.walls(&sim)),
        ] {
            let written: Vec<(String, String)> = frame
                .fields
                .iter()
                .map(|f| (f.name.clone(), f.unit.clone()))
                .collect();
            let listed = documented(table);
            let names = |v: &[(String, String)]| v.iter().map(|c| c.0.clone()).collect::<Vec<_>>();
            let listed_names: Vec<String> = listed.iter().map(|c| c.0.clone()).collect();
            assert_eq!(
                names(&written),
                listed_names,
                "{table}: docs/output.md vs record.rs"
            );
            for ((name, unit), (_, doc_unit)) in written.iter().zip(&listed) {
                if let Some(doc_unit) = doc_unit {
                    assert_eq!(unit, doc_unit, "{table}.{name}: unit");
                }
            }
        }
    }
}
