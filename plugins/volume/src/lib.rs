//! talus-plugin-volume: the volume-stiffness contact model, one of the
//! engine's default models, meant for convex polyhedral blocks (it works
//! for any pair of shapes whose overlap volume and contact area the engine
//! can give, balls and facets included).
//!
//! The physics lives in [`kernel`] as pure functions; this file is only the
//! glue to the plugin sdk: the model's descriptor and its
//! [`talus_sdk::ContactModel`] implementation, which reads the two optional
//! inputs the model asks for. The crate builds as an rlib (the engine
//! embeds it through [`root_module`]) and as a cdylib, which exports its
//! loader symbol only with the `export` feature:
//!
//! ```text
//! cargo build --release -p talus-plugin-volume --features export
//! ```

#![warn(missing_docs)]

pub mod kernel;

use talus_sdk::{
    inputs, Activity, Contact, ContactModel, ContactOutput, ModelDescriptor, Propagation,
    PropertyDesc, StateSlotDesc, Swap,
};

use kernel::{Overlap, Prepared, VolumeProps, VolumeState, RESTITUTION_MIN};

/// The volume model for one run of contacts: the constants of its property
/// set and timestep (see [`kernel`] for the physics).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Volume {
    /// Per-run constants.
    pub prepared: Prepared,
}

impl ContactModel for Volume {
    fn descriptor() -> ModelDescriptor {
        let stiffness =
            |name: &str, doc: &str| PropertyDesc::new(name, "N/m^3", doc).default(0.0).min(0.0);
        // The two force slots are recomputed from the overlap every step, so
        // nothing is carried over to another facet's contact. The shear
        // spring is history, and it follows the load across facets as the
        // linear model's does: copied, not added (adding is for bonds, and
        // on a merge it would sum components taken in two different frames).
        let recomputed = |name: &str, unit: &str, doc: &str| {
            StateSlotDesc::new(name, unit, doc).propagation(Propagation::None)
        };
        let shear = |name: &str, doc: &str| {
            StateSlotDesc::new(name, "N", doc).propagation(Propagation::Copy)
        };
        ModelDescriptor::new("volume", env!("CARGO_PKG_VERSION"))
            .summary(
                "Volume-stiffness contact for convex blocks: normal force kn times the \
                 overlap volume (for two blocks in potential resolution, the gradient of the \
                 potential kn V^2 / (2 A), which is kn V for faces pressed flat) plus a dashpot set by the restitution coefficient e on the \
                 tangent stiffness kn * contact area, never tensile; incremental shear \
                 spring of stiffness ks * contact area capped by Coulomb friction fric \
                 times the elastic normal force.",
            )
            .citation(
                "Nassauer and Kuna (2013), Granular Matter 15(3) 349-355; \
                 Schwager and Poeschel (2007), Granular Matter 9, 465-469",
            )
            .activity(
                Activity::Overlap,
                "active while the pieces overlap (gap < 0) and the engine has not \
                 suppressed the contact; an overlapping contact with a non-finite or \
                 negative volume or area carries no force that step",
            )
            .input(inputs::OVERLAP_VOLUME)
            .input(inputs::CONTACT_AREA)
            .input(inputs::TWIST_ARM)
            .input(inputs::AREA_GRADIENT)
            .input(inputs::AREA_GYRATION)
            .property(stiffness(
                "kn",
                "volume stiffness: normal force per unit overlap volume",
            ))
            .property(stiffness(
                "ks",
                "shear stiffness per unit contact area (shear spring ks * area)",
            ))
            .property(
                PropertyDesc::new("fric", "-", "friction coefficient")
                    .default(0.0)
                    .min(0.0),
            )
            .property(
                PropertyDesc::new(
                    "e",
                    "-",
                    "normal restitution coefficient (1: no damping; exact for a constant contact area)",
                )
                .default(1.0)
                .range(RESTITUTION_MIN, 1.0),
            )
            .state(recomputed(
                "fn_volume",
                "N",
                "elastic normal force kn * overlap volume",
            ))
            .state(shear("fs_s", "shear spring force on end2 along s").swap(Swap::Negate))
            .state(shear("fs_t", "shear spring force on end2 along t"))
            .state(recomputed(
                "slipping",
                "-",
                "1 while the contact slides, else 0",
            ))
    }

    fn prepare(props: &[f64], dt: f64) -> Self {
        Volume {
            prepared: Prepared::new(&VolumeProps::from_slice(props), dt),
        }
    }

    #[inline(always)]
    fn force_displacement(&mut self, contact: &Contact<'_>, state: &mut [f64]) -> ContactOutput {
        let slots = slots(state);
        let mut s = VolumeState::load(slots);
        // The engine carries every input the descriptor asks for; a missing
        // one reads as NaN, which the kernel answers with no force.
        let overlap = Overlap {
            volume: contact.scalar(inputs::OVERLAP_VOLUME).unwrap_or(f64::NAN),
            area: contact.scalar(inputs::CONTACT_AREA).unwrap_or(f64::NAN),
            twist_arm: contact.scalar(inputs::TWIST_ARM).unwrap_or(0.0),
            area_gradient: contact
                .get(inputs::AREA_GRADIENT)
                .and_then(|g| <[f64; 6]>::try_from(g).ok()),
            gyration: contact
                .get(inputs::AREA_GYRATION)
                .and_then(|g| <[f64; 3]>::try_from(g).ok()),
        };
        let out = kernel::force_displacement(&self.prepared, contact.input(), overlap, &mut s);
        s.store(slots);
        out
    }

    #[inline]
    fn suppressed(&mut self, _contact: &Contact<'_>, state: &mut [f64]) {
        let slots = slots(state);
        let mut s = VolumeState::load(slots);
        kernel::release(&mut s);
        s.store(slots);
    }
}

/// A contact's state block as the fixed-size array the kernel reads.
#[inline(always)]
fn slots(state: &mut [f64]) -> &mut [f64; VolumeState::SLOTS] {
    let n = state.len();
    state
        .try_into()
        .unwrap_or_else(|_| panic!("expected {} state slots, got {n}", VolumeState::SLOTS))
}

talus_sdk::define_plugin!("talus-plugin-volume", [Volume]);

#[cfg(feature = "export")]
talus_sdk::export_plugin!();

#[cfg(test)]
mod tests {
    use super::*;
    use talus_sdk::abi_stable::std_types::{RSlice, RSliceMut};
    use talus_sdk::{flags, BatchContext, ContactInput, InputColumn, ModelEntry};

    #[test]
    fn descriptor_asks_for_volume_and_area_and_matches_the_kernel() {
        let d = Volume::descriptor();
        assert_eq!(d.name, "volume");
        assert_eq!(d.activity, Activity::Overlap);
        assert!(d.inputs.contains(&inputs::OVERLAP_VOLUME));
        assert!(d.inputs.contains(&inputs::CONTACT_AREA));
        assert_eq!(d.properties.len(), VolumeProps::COUNT);
        let props: Vec<(&str, &str, Option<f64>)> = d
            .properties
            .iter()
            .map(|p| (p.name.as_str(), p.unit.as_str(), p.default))
            .collect();
        assert_eq!(
            props,
            [
                ("kn", "N/m^3", Some(0.0)),
                ("ks", "N/m^3", Some(0.0)),
                ("fric", "-", Some(0.0)),
                ("e", "-", Some(1.0)),
            ]
        );
        // The defaults, read in descriptor order, are the kernel's.
        let defaults: Vec<f64> = d.properties.iter().filter_map(|p| p.default).collect();
        assert_eq!(VolumeProps::from_slice(&defaults), VolumeProps::default());
        let rules: Vec<(&str, Propagation, Swap)> = d
            .state
            .iter()
            .map(|s| (s.name.as_str(), s.propagation, s.swap))
            .collect();
        assert_eq!(
            rules,
            [
                ("fn_volume", Propagation::None, Swap::Keep),
                ("fs_s", Propagation::Copy, Swap::Negate),
                ("fs_t", Propagation::Copy, Swap::Keep),
                ("slipping", Propagation::None, Swap::Keep),
            ]
        );
        assert_eq!(d.state.len(), VolumeState::SLOTS);
    }

    /// Calls the model as the engine does: through the batch function of
    /// the exported model record, with the volume and area columns given
    /// (or `None` to leave them out) and a timestep of 1 us.
    fn batch(
        props: &[f64],
        inputs: &[ContactInput],
        columns: Option<(&[f64], &[f64])>,
        state: &mut [f64],
        out: &mut [ContactOutput],
    ) {
        let entry = ModelEntry::from_abi(root_module().models()()[0]).unwrap();
        let column = |id, values| InputColumn {
            id,
            width: 1,
            values: RSlice::from_slice(values),
        };
        let cols = match columns {
            Some((volume, area)) => vec![
                column(inputs::OVERLAP_VOLUME, volume),
                column(inputs::CONTACT_AREA, area),
            ],
            None => Vec::new(),
        };
        let ctx = BatchContext {
            dt: 1e-6,
            props: RSlice::from_slice(props),
            n_props: props.len() as u32,
            n_state: (state.len() / inputs.len()) as u32,
            columns: RSlice::from_slice(&cols),
        };
        let status = (entry.batch)(
            &ctx,
            inputs.into(),
            RSliceMut::from_mut_slice(state),
            RSliceMut::from_mut_slice(out),
        );
        if let Err(e) = status.into_result() {
            panic!("batch failed at contact {}: {}", e.index, e.message);
        }
    }

    /// Through the driver, each contact reads its own row of the volume
    /// and area columns and gets what the kernel gives it; a suppressed
    /// contact loses its shear history.
    #[test]
    fn batch_reads_each_contact_s_volume_and_area() {
        let props = [2e9, 1e9, 0.4, 0.6];
        let n = VolumeState::SLOTS;
        let inputs: Vec<ContactInput> = (0..6)
            .map(|i| ContactInput {
                gap: -1e-5 * (i + 1) as f64,
                delta_n: -1e-8,
                delta_s: [1e-7 * i as f64, -2e-7],
                mass: 0.5,
                flags: if i == 4 { flags::SUPPRESSED } else { 0 },
                ..ContactInput::default()
            })
            .collect();
        let volume: Vec<f64> = (0..6).map(|i| 1e-10 * (i * i + 1) as f64).collect();
        let area: Vec<f64> = (0..6).map(|i| 1e-5 * (i + 1) as f64).collect();
        let initial: Vec<f64> = (0..6 * n).map(|v| v as f64 * 0.01).collect();
        let mut state = initial.clone();
        let mut out = vec![ContactOutput::default(); 6];
        batch(
            &props,
            &inputs,
            Some((&volume, &area)),
            &mut state,
            &mut out,
        );
        let p = Prepared::new(&VolumeProps::from_slice(&props), 1e-6);
        for i in 0..6 {
            let slots = &state[i * n..(i + 1) * n];
            if i == 4 {
                assert_eq!(out[i], ContactOutput::INACTIVE);
                assert_eq!(slots, [0.0; 4]);
                continue;
            }
            let mut s = VolumeState::load(initial[i * n..(i + 1) * n].try_into().unwrap());
            let overlap = Overlap {
                volume: volume[i],
                area: area[i],
                ..Overlap::default()
            };
            let expected = kernel::force_displacement(&p, &inputs[i], overlap, &mut s);
            assert_eq!(out[i], expected, "contact {i}");
            assert_eq!(VolumeState::load(slots.try_into().unwrap()), s);
            assert!(out[i].force[0] > props[0] * volume[i], "dashpot pushes");
        }
    }

    /// Should a batch come without the columns, the contacts carry no force
    /// and nothing panics.
    #[test]
    fn missing_columns_give_no_force() {
        let inputs = [ContactInput {
            gap: -1e-4,
            mass: 1.0,
            ..ContactInput::default()
        }];
        let mut state = [1.0, 2.0, 3.0, 0.0];
        let mut out = [ContactOutput::default()];
        batch(&[1e9, 1e9, 0.5, 1.0], &inputs, None, &mut state, &mut out);
        assert_eq!(out[0], ContactOutput::could_be_active([0.0; 2]));
        assert_eq!(state, [0.0; 4]);
    }

    #[test]
    fn root_module_lists_volume() {
        let root = root_module();
        let models = root.models()();
        assert_eq!(models.len(), 1);
        let entry = ModelEntry::from_abi(models[0]).unwrap();
        assert_eq!(entry.descriptor, Volume::descriptor());
        assert_eq!(root.plugin_name()().as_str(), "talus-plugin-volume");
        assert_eq!(root.sdk_version()().as_str(), talus_sdk::SDK_VERSION);
    }
}
