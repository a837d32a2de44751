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
    inputs, Activity, Contact, ContactModel, ContactOutput, ModelDescriptor, Propagation,
    PropertyDesc, StateSlotDesc, Swap, STATUS_ACTIVE,
};

use kernel::{LinearProps, LinearState, Prepared};

/// The linear model for one run of contacts: the constants of its property
/// set and timestep (see [`kernel`] for the physics), and the dashpot
/// coefficients of the last effective mass it met.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Linear {
    /// Per-run constants.
    pub prepared: Prepared,
    /// `(mass bits, (cn, cs))` of the last contact that carried force.
    dashpots: Option<(u64, (f64, f64))>,
    /// Whether the run's batch carries `area_gyration` (every contact of
    /// a batch shares its columns), once the first damped contact asked.
    surface: Option<bool>,
}

impl ContactModel for Linear {
    fn descriptor() -> ModelDescriptor {
        // Every property is optional, zero by default and never negative.
        let prop = |name: &str, unit: &str, doc: &str| {
            PropertyDesc::new(name, unit, doc).default(0.0).min(0.0)
        };
        let ratio = |name: &str, doc: &str| prop(name, "-", doc).max(1.0);
        // Every slot moves with the load when it crosses to another facet
        // (the shear spring keeps its force, the energies their totals)
        // and is a scalar that stays when the ends swap, except the shear
        // force on end2 along s: the frame turns half a turn about s, and
        // the force on the new end2 is the opposite of the old one.
        let slot = |name: &str, unit: &str, doc: &str| {
            StateSlotDesc::new(name, unit, doc)
                .propagation(Propagation::Copy)
                .swap(Swap::Keep)
        };
        ModelDescriptor::new("linear", env!("CARGO_PKG_VERSION"))
            .summary(
                "Linear spring-dashpot contact: normal force kn times overlap plus an \
                 optional normal dashpot, never tensile; incremental shear spring ks \
                 capped by Coulomb friction fric times the linear normal force, plus an \
                 optional shear dashpot. Tracks strain, slip and dashpot energies.",
            )
            .citation(
                "Cundall and Strack (1979), Geotechnique 29(1) 47-65; \
                 Itasca PFC documentation, Linear Model",
            )
            .activity(
                Activity::Overlap,
                "active while the pieces overlap (gap < 0) and the engine has not \
                 suppressed the contact",
            )
            .property(prop("kn", "N/m", "normal stiffness"))
            .property(prop("ks", "N/m", "shear stiffness"))
            .property(prop("fric", "-", "friction coefficient"))
            .property(ratio(
                "dp_nratio",
                "normal critical damping ratio of the dashpot",
            ))
            .property(ratio(
                "dp_sratio",
                "shear critical damping ratio of the dashpot",
            ))
            .state(slot("fn_linear", "N", "linear normal force kn * overlap"))
            .state(slot("fs_s", "N", "shear spring force on end2 along s").swap(Swap::Negate))
            .state(slot("fs_t", "N", "shear spring force on end2 along t"))
            .state(slot("e_strain", "J", "strain energy stored in the springs"))
            .state(slot(
                "e_slip",
                "J",
                "energy dissipated by frictional slip (cumulative)",
            ))
            .state(slot(
                "e_dashpot",
                "J",
                "energy dissipated by the dashpots (cumulative)",
            ))
            .state(slot("slipping", "-", "1 while the contact slides, else 0"))
            // The normal dashpot spread over a block's face contact.
            .input(inputs::AREA_GYRATION)
    }

    fn prepare(props: &[f64], dt: f64) -> Self {
        Linear {
            prepared: Prepared::new(&LinearProps::from_slice(props), dt),
            dashpots: None,
            surface: None,
        }
    }

    #[inline(always)]
    fn force_displacement(&mut self, contact: &Contact<'_>, state: &mut [f64]) -> ContactOutput {
        let slots = slots(state);
        let mut s = LinearState::load(slots);
        let (p, memo) = (&self.prepared, &mut self.dashpots);
        let dashpots = |mass: f64| p.dashpots_kept(memo, mass);
        let mut out = kernel::force_displacement_with(p, dashpots, contact.input(), &mut s);
        // The normal dashpot spread over a contact surface (blocks only:
        // other batches carry no such column).
        let surface = &mut self.surface;
        let mut has_surface =
            || *surface.get_or_insert_with(|| contact.get(inputs::AREA_GYRATION).is_some());
        if p.props.dp_nratio > 0.0 && out.status == STATUS_ACTIVE && has_surface() {
            if let Some(&[gss, gtt, gst]) = contact.get(inputs::AREA_GYRATION) {
                let input = contact.input();
                let (cn, _) = p.dashpots_kept(memo, input.mass);
                let (m, e) =
                    talus_sdk::spread_dashpot(cn, p.inv_dt, [gss, gtt, gst], input.theta_b);
                out.moment = [0.0, m[0], m[1]];
                s.e_dashpot += e;
            }
        }
        s.store(slots);
        out
    }

    #[inline]
    fn suppressed(&mut self, contact: &Contact<'_>, state: &mut [f64]) {
        let slots = slots(state);
        let mut s = LinearState::load(slots);
        kernel::release(contact.input(), &mut s);
        s.store(slots);
    }
}

/// A contact's state block as the fixed-size array the kernel reads: one
/// length check per contact instead of one per slot.
#[inline(always)]
fn slots(state: &mut [f64]) -> &mut [f64; LinearState::SLOTS] {
    match state.try_into() {
        Ok(slots) => slots,
        Err(_) => panic!("expected {} state slots per contact", LinearState::SLOTS),
    }
}

talus_sdk::define_plugin!("talus-plugin-linear", [Linear]);

#[cfg(feature = "export")]
talus_sdk::export_plugin!();

#[cfg(test)]
mod tests {
    use super::*;
    use talus_sdk::abi_stable::std_types::{RSlice, RSliceMut};
    use talus_sdk::{flags, BatchContext, ContactInput, ModelEntry, STATUS_INACTIVE};

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
        assert!(d.state.iter().all(|s| s.propagation == Propagation::Copy));
        assert_eq!(d.inputs, [talus_sdk::inputs::AREA_GYRATION]);
    }

    /// Runs the linear model's batch call as the engine does.
    fn batch(props: &[f64], inputs: &[ContactInput], state: &mut [f64], out: &mut [ContactOutput]) {
        let ctx = BatchContext {
            dt: 1e-6,
            props: RSlice::from_slice(props),
            n_props: LinearProps::COUNT as u32,
            n_state: LinearState::SLOTS as u32,
            columns: RSlice::from_slice(&[]),
        };
        talus_sdk::run_batch::<Linear>(
            &ctx,
            RSlice::from_slice(inputs),
            RSliceMut::from_mut_slice(state),
            RSliceMut::from_mut_slice(out),
        )
        .into_result()
        .unwrap();
    }

    /// Through the driver: idle contacts keep their state and output,
    /// suppressed ones carry nothing and keep only their cumulative
    /// energies, and the others get what a batch without the skipped ones
    /// gives them.
    #[test]
    fn skipped_contacts_in_a_batch() {
        let props = [1e5, 3e4, 0.5, 0.2, 0.1];
        let n = LinearState::SLOTS;
        let inputs: Vec<ContactInput> = (0..9)
            .map(|i| ContactInput {
                gap: -1e-5 * i as f64,
                delta_n: -1e-7,
                delta_s: [2e-7 * i as f64, -1e-7],
                mass: 1e-3,
                flags: [0, flags::IDLE, flags::SUPPRESSED][i % 3],
                ..ContactInput::default()
            })
            .collect();
        let initial: Vec<f64> = (0..inputs.len() * n).map(|v| v as f64 * 0.01).collect();
        let before = ContactOutput::could_be_active([5.0, 0.0]);
        let mut state = initial.clone();
        let mut out = vec![before; inputs.len()];
        batch(&props, &inputs, &mut state, &mut out);

        let busy: Vec<usize> = (0..9).filter(|i| i % 3 == 0).collect();
        let only: Vec<ContactInput> = busy.iter().map(|&i| inputs[i]).collect();
        let mut alone_state: Vec<f64> = Vec::new();
        for &i in &busy {
            alone_state.extend_from_slice(&initial[i * n..(i + 1) * n]);
        }
        let mut alone_out = vec![ContactOutput::default(); only.len()];
        batch(&props, &only, &mut alone_state, &mut alone_out);
        for i in 0..9 {
            let slots = &state[i * n..(i + 1) * n];
            let old = &initial[i * n..(i + 1) * n];
            match i % 3 {
                0 => {
                    let j = i / 3;
                    assert_eq!(slots, &alone_state[j * n..(j + 1) * n]);
                    assert_eq!(out[i], alone_out[j]);
                }
                1 => {
                    assert_eq!(slots, old);
                    assert_eq!(out[i], before);
                }
                _ => {
                    assert_eq!(out[i], ContactOutput::INACTIVE);
                    assert_eq!(out[i].status, STATUS_INACTIVE);
                    // Force history cleared, energies (slots 4 and 5) kept.
                    assert_eq!(slots, [0.0, 0.0, 0.0, 0.0, old[4], old[5], 0.0]);
                }
            }
        }
    }

    #[test]
    fn root_module_lists_linear() {
        let root = root_module();
        let models = root.models()();
        assert_eq!(models.len(), 1);
        let entry = ModelEntry::from_abi(models[0]).unwrap();
        assert_eq!(entry.descriptor, Linear::descriptor());
        assert_eq!(root.sdk_version()().as_str(), talus_sdk::SDK_VERSION);
    }
}
