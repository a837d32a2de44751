//! talus-plugin-linear: the linear contact model (PFC's "linear"), one of
//! the engine's default models.
//!
//! The physics lives in [`kernel`] as pure functions; this file is only the
//! glue to the plugin sdk: the model's descriptor and its
//! [`talus_sdk::ContactModel`] implementation. The crate builds as an rlib
//! (the engine embeds it through [`root_module`]) and as a cdylib; the
//! cdylib exports its loader symbol only with the `export` feature:
//!
//! ```text
//! cargo build --release -p talus-plugin-linear --features export
//! ```

#![warn(missing_docs)]

pub mod kernel;

use talus_sdk::{
    flags, property, state_slot, Activity, ContactInput, ContactModel, ContactOutput,
    ModelDescriptor, Propagation,
};

use std::cell::Cell;

use kernel::{LinearProps, LinearState};

/// The linear model for one property set (see [`kernel`] for the physics).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Linear(pub LinearProps);

impl ContactModel for Linear {
    fn descriptor() -> ModelDescriptor {
        let unbounded = (0.0, f64::INFINITY);
        ModelDescriptor {
            name: "linear".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            summary: "Linear spring-dashpot contact: normal force kn times overlap plus an \
                      optional normal dashpot, never tensile; incremental shear spring ks \
                      capped by Coulomb friction fric times the linear normal force, plus an \
                      optional shear dashpot. Tracks strain, slip and dashpot energies."
                .into(),
            citation: "Cundall and Strack (1979), Geotechnique 29(1) 47-65; \
                       Itasca PFC documentation, Linear Model"
                .into(),
            properties: vec![
                property("kn", "N/m", Some(0.0), unbounded, "normal stiffness"),
                property("ks", "N/m", Some(0.0), unbounded, "shear stiffness"),
                property("fric", "-", Some(0.0), unbounded, "friction coefficient"),
                property(
                    "dp_nratio",
                    "-",
                    Some(0.0),
                    (0.0, 1.0),
                    "normal critical damping ratio of the dashpot",
                ),
                property(
                    "dp_sratio",
                    "-",
                    Some(0.0),
                    (0.0, 1.0),
                    "shear critical damping ratio of the dashpot",
                ),
            ]
            .into(),
            state: vec![
                state_slot("fn_linear", "N", "linear normal force kn * overlap"),
                state_slot("fs_s", "N", "shear spring force on end2 along s"),
                state_slot("fs_t", "N", "shear spring force on end2 along t"),
                state_slot("e_strain", "J", "strain energy stored in the springs"),
                state_slot(
                    "e_slip",
                    "J",
                    "energy dissipated by frictional slip (cumulative)",
                ),
                state_slot(
                    "e_dashpot",
                    "J",
                    "energy dissipated by the dashpots (cumulative)",
                ),
                state_slot("slipping", "-", "1 while the contact slides, else 0"),
            ]
            .into(),
            activity: Activity::Overlap,
            activity_doc: "active while the pieces overlap (gap < 0) and the engine has not \
                           suppressed the contact"
                .into(),
            propagation: Propagation::Copy,
        }
    }

    fn from_props(props: &[f64]) -> Self {
        Linear(LinearProps::from_slice(props))
    }

    fn force_displacement(
        &self,
        dt: f64,
        input: &ContactInput,
        state: &mut [f64],
        out: &mut ContactOutput,
    ) {
        let mut contact = LinearState::load(state);
        *out = kernel::force_displacement(&self.0, dt, input, &mut contact);
        contact.store(state);
    }

    fn force_displacement_run(
        &self,
        dt: f64,
        inputs: &[ContactInput],
        state: &mut [f64],
        n_state: usize,
        outputs: &mut [ContactOutput],
        cursor: &Cell<usize>,
    ) {
        assert!(
            n_state == LinearState::SLOTS && state.len() == inputs.len() * n_state,
            "expected {} state slots per contact",
            LinearState::SLOTS
        );
        let p = kernel::Prepared::new(&self.0, dt);
        // Contacts of one run mostly share their effective mass (equal
        // balls), so the two square roots of the dashpot coefficients are
        // taken again only when the mass changes.
        let mut memo: Option<(u64, (f64, f64))> = None;
        let contacts = inputs
            .iter()
            .zip(state.chunks_exact_mut(LinearState::SLOTS))
            .zip(outputs.iter_mut());
        for (i, ((input, slots), out)) in contacts.enumerate() {
            if input.flags & flags::IDLE != 0 {
                continue;
            }
            cursor.set(i);
            let mut contact = LinearState::load(slots);
            let dashpots = |mass: f64| match memo {
                Some((bits, c)) if bits == mass.to_bits() => c,
                _ => {
                    let c = p.dashpots(mass);
                    memo = Some((mass.to_bits(), c));
                    c
                }
            };
            *out = kernel::force_displacement_with(&p, dashpots, input, &mut contact);
            contact.store(slots);
        }
    }
}

talus_sdk::define_plugin!("talus-plugin-linear", [Linear]);

#[cfg(feature = "export")]
talus_sdk::export_plugin!();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_matches_kernel_layout() {
        let d = Linear::descriptor();
        assert_eq!(d.properties.len(), LinearProps::COUNT);
        assert_eq!(d.state.len(), LinearState::SLOTS);
        let names: Vec<&str> = d.state.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "fn_linear",
                "fs_s",
                "fs_t",
                "e_strain",
                "e_slip",
                "e_dashpot",
                "slipping"
            ]
        );
    }

    /// Idle contacts keep their state and output, and the others get what
    /// a batch without the idle ones gives them.
    #[test]
    fn idle_contacts_are_skipped_in_a_run() {
        let model = Linear::from_props(&[1e5, 3e4, 0.5, 0.2, 0.1]);
        let n = LinearState::SLOTS;
        let inputs: Vec<ContactInput> = (0..6)
            .map(|i| ContactInput {
                gap: -1e-5 * i as f64,
                delta_n: -1e-7,
                delta_s: [2e-7 * i as f64, -1e-7],
                mass: 1e-3,
                flags: if i % 3 == 1 { flags::IDLE } else { 0 },
                ..ContactInput::default()
            })
            .collect();
        let run = |inputs: &[ContactInput]| {
            let mut state: Vec<f64> = (0..inputs.len() * n).map(|v| v as f64 * 0.01).collect();
            let mut out = vec![ContactOutput::default(); inputs.len()];
            let initial = state.clone();
            let cursor = Cell::new(0);
            model.force_displacement_run(1e-6, inputs, &mut state, n, &mut out, &cursor);
            (initial, state, out)
        };
        let (initial, state, out) = run(&inputs);
        let busy: Vec<usize> = (0..6).filter(|i| i % 3 != 1).collect();
        let only: Vec<ContactInput> = busy.iter().map(|&i| inputs[i]).collect();
        let mut alone_state: Vec<f64> = Vec::new();
        for &i in &busy {
            alone_state.extend_from_slice(&initial[i * n..(i + 1) * n]);
        }
        let mut alone_out = vec![ContactOutput::default(); only.len()];
        let cursor = Cell::new(0);
        model.force_displacement_run(1e-6, &only, &mut alone_state, n, &mut alone_out, &cursor);
        let mut j = 0;
        for i in 0..6 {
            let slots = &state[i * n..(i + 1) * n];
            if i % 3 == 1 {
                assert_eq!(slots, &initial[i * n..(i + 1) * n]);
                assert_eq!(out[i], ContactOutput::default());
            } else {
                assert_eq!(slots, &alone_state[j * n..(j + 1) * n]);
                assert_eq!(out[i], alone_out[j]);
                j += 1;
            }
        }
    }

    #[test]
    fn root_module_lists_linear() {
        let root = root_module();
        let models = root.models()();
        assert_eq!(models.len(), 1);
        assert_eq!(models[0].descriptor.name.as_str(), "linear");
        assert_eq!(root.sdk_version()().as_str(), talus_sdk::SDK_VERSION);
    }
}
