//! The contacts table: one row per contact, with its ends, the plane, the
//! force and moment in the contact frame and in global axes, the six-DOF
//! displacements where a pairing chose that frame, and the models' state.

use super::{pair_name, step_and_time, Recorder, StateColumn};
use talus_core::snapshot::ContactRow;
use talus_core::Snapshot;
use talus_output::{Column, Frame};

/// The six-DOF displacements of a contact (name, unit, description), in
/// the order of [`talus_core::contact::Displacements`].
const SIX_DOF_COLUMNS: [(&str, &str, &str); 6] = [
    ("u_n", "m", "six-DOF frame: normal displacement, the gap"),
    (
        "u_s",
        "m",
        "six-DOF frame: shear displacement along s, summed in the mid-step frames",
    ),
    (
        "u_t",
        "m",
        "six-DOF frame: shear displacement along t, summed in the mid-step frames",
    ),
    (
        "phi_t",
        "rad",
        "six-DOF frame: twist about n, summed in the mid-step frames",
    ),
    (
        "phi_bs",
        "rad",
        "six-DOF frame: bend about s, summed in the mid-step frames",
    ),
    (
        "phi_bt",
        "rad",
        "six-DOF frame: bend about t, summed in the mid-step frames",
    ),
];

/// The contacts table's columns after `gap`, one value each per contact
/// (name, unit, description), in the order of [`contact_values`].
const CONTACT_SCALARS: [(&str, &str, &str); 24] = [
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

/// The values of [`CONTACT_SCALARS`] for one contact.
#[inline]
fn contact_values(c: &ContactRow<'_>) -> [f64; 24] {
    let (xc, n, s, t) = (c.xc, c.n, c.s, c.t);
    let (fl, fg, ml, mg) = (c.force_local, c.force, c.moment_local, c.moment);
    [
        xc.x, xc.y, xc.z, n.x, n.y, n.z, s.x, s.y, s.z, t.x, t.y, t.z, fl[0], fl[1], fl[2], fg.x,
        fg.y, fg.z, ml[0], ml[1], ml[2], mg.x, mg.y, mg.z,
    ]
}

impl Recorder {
    /// One row per contact.
    pub fn contacts(&self, snap: &Snapshot<'_>) -> Frame {
        let n = snap.n_contacts();
        let mut id = Vec::with_capacity(n);
        let mut kind = Vec::with_capacity(n);
        let mut end1 = Vec::with_capacity(n);
        let mut end2 = Vec::with_capacity(n);
        let mut body2 = Vec::with_capacity(n);
        let mut facet = Vec::with_capacity(n);
        let mut pebbles: [Vec<i64>; 2] = std::array::from_fn(|_| Vec::with_capacity(n));
        let mut region = Vec::with_capacity(n);
        let mut model = Vec::with_capacity(n);
        let mut active = Vec::with_capacity(n);
        let mut linked_to = Vec::with_capacity(n);
        let mut proximity = Vec::with_capacity(n);
        let mut gap = Vec::with_capacity(n);
        let mut scalars: [Vec<f64>; 24] = std::array::from_fn(|_| Vec::with_capacity(n));
        let mut state: Vec<Vec<Option<f64>>> = (0..self.state_columns.len())
            .map(|_| Vec::with_capacity(n))
            .collect();
        let n_dof = if self.six_dof { n } else { 0 };
        let mut dof: [Vec<Option<f64>>; 6] = std::array::from_fn(|_| Vec::with_capacity(n_dof));
        let or_minus_one = |id: Option<u64>| id.map_or(-1, |id| id as i64);
        for c in snap.contacts() {
            id.push(c.id);
            kind.push(pair_name(c.end1, c.end2));
            for (col, end) in pebbles.iter_mut().zip([c.end1, c.end2]) {
                col.push(end.pebble().map_or(-1, i64::from));
            }
            end1.push(c.end1.body());
            // A facet end is named by its index in its wall.
            end2.push(c.end2.facet().map_or(c.end2.body(), u64::from));
            body2.push(c.end2.body());
            facet.push(c.end2.facet().map_or(-1, i64::from));
            region.push(c.region.map_or("", |r| r.name()).to_string());
            model.push(c.model_name.to_string());
            active.push(c.active);
            linked_to.push(or_minus_one(c.linked_to));
            proximity.push(or_minus_one(c.proximity));
            gap.push(c.gap);
            for (col, v) in scalars.iter_mut().zip(contact_values(&c)) {
                col.push(v);
            }
            for (col, sc) in state.iter_mut().zip(&self.state_columns) {
                col.push(sc.slot_of_model[c.model].map(|s| c.state[s]));
            }
            if self.six_dof {
                for (k, col) in dof.iter_mut().enumerate() {
                    col.push(c.dof.map(|u| u[k]));
                }
            }
        }
        let mut f = step_and_time(snap, n)
            .push(
                "id",
                "-",
                "contact id, stable for the contact's life",
                Column::U64(id),
            )
            .push(
                "kind",
                "",
                "pair kind: the kinds of end1 and end2 (ball, pebble, block, facet), e.g. ball-facet",
                Column::Str(kind),
            )
            .push(
                "end1",
                "-",
                "ball, block or clump id of end1 (see kind)",
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
                "facet index for contacts with a wall facet, else -1",
                Column::I64(facet),
            )
            .push(
                "pebble1",
                "-",
                "pebble index of end1 in its clump's shape (clump_pebbles), else -1",
                Column::I64(std::mem::take(&mut pebbles[0])),
            )
            .push(
                "pebble2",
                "-",
                "pebble index of end2 in its clump's shape (clump_pebbles), else -1",
                Column::I64(std::mem::take(&mut pebbles[1])),
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
        for ((name, unit, doc), col) in CONTACT_SCALARS.into_iter().zip(scalars) {
            f = f.push(name, unit, doc, Column::F64(col));
        }
        if self.six_dof {
            for ((name, unit, doc), col) in SIX_DOF_COLUMNS.into_iter().zip(dof) {
                let column = if self.all_six_dof {
                    Column::F64(col.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect())
                } else {
                    Column::OptF64(col)
                };
                f = f.push(name, unit, doc, column);
            }
        }
        let all_models = |sc: &StateColumn| sc.slot_of_model.iter().all(Option::is_some);
        for (sc, col) in self.state_columns.iter().zip(state) {
            let column = if all_models(sc) {
                Column::F64(col.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect())
            } else {
                Column::OptF64(col)
            };
            f = f.push(sc.name.clone(), sc.unit.clone(), sc.doc.clone(), column);
        }
        f
    }
}
