//! talus-plugin-linearbond: the linear model in parallel with a bond of
//! finite size that carries force and moment until it breaks (PFC's
//! "linear parallel bond"), one of the engine's default models.
//!
//! The physics lives in [`kernel`]; this file is the glue to the plugin
//! sdk. The linear part is the linear model's own kernel, so an unbonded
//! linearbond contact is a linear contact bit for bit. The crate builds as
//! an rlib (embedded in the engine through [`root_module`]) and as a
//! cdylib, which exports its loader symbol only with the `export` feature:
//!
//! ```text
//! cargo build --release -p talus-plugin-linearbond --features export
//! ```

#![warn(missing_docs)]

pub mod kernel;

use talus_plugin_linear::kernel::{LinearProps, Prepared as LinearPrepared};
use talus_plugin_linear::Linear;
use talus_sdk::{
    inputs, Activity, Contact, ContactModel, ContactOutput, ModelDescriptor, Propagation,
    PropertyDesc, StateEvent, StateSlotDesc, Swap,
};

use kernel::{BondProps, BondState, Springs};

/// The linearbond model for one run of contacts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinearBond {
    /// The property set.
    pub props: BondProps,
    /// The linear part's per-run constants.
    pub linear: LinearPrepared,
    /// The bond springs of the last pair of radii a bonded contact had.
    springs: Option<([u64; 2], Springs)>,
    /// `(mass bits, (cn, cs))` of the last contact whose linear part
    /// carried force.
    dashpots: Option<(u64, (f64, f64))>,
}

impl ContactModel for LinearBond {
    fn descriptor() -> ModelDescriptor {
        let linear = Linear::descriptor();
        let mut d = ModelDescriptor::new("linearbond", env!("CARGO_PKG_VERSION"))
            .summary(
                "The linear model in parallel with a bond: a disc of radius pb_rmul times \
                 the smaller piece's radius whose normal and shear springs (pb_kn, pb_ks per \
                 unit area) carry force, twist and bend moment from the step the bond is \
                 installed; it breaks when its largest tensile stress exceeds pb_ten, or its \
                 largest shear stress exceeds pb_coh plus the normal stress times \
                 tan(pb_fa). Strengths scatter per bond with pb_ten_sd and pb_coh_sd.",
            )
            .citation(
                "Potyondy and Cundall (2004), Int. J. Rock Mech. Min. Sci. 41(8) 1329-1364; \
                 Itasca PFC documentation, Linear Parallel Bond Model",
            )
            .activity(
                Activity::Custom,
                "active while the pieces overlap (the linear part) or while the contact \
                 holds a bond, whatever the gap; a bonded contact asks the engine to keep \
                 it while the pieces are apart",
            )
            .input(inputs::PAIR_RANDOM);
        for p in linear.properties {
            d = d.property(p);
        }
        let stiffness = |name: &str, doc: &str| PropertyDesc::new(name, "N/m^3", doc).min(0.0);
        let strength = |name: &str, doc: &str| PropertyDesc::new(name, "Pa", doc).min(0.0);
        let scatter =
            |name: &str, doc: &str| PropertyDesc::new(name, "Pa", doc).default(0.0).min(0.0);
        d = d
            .property(stiffness(
                "pb_kn",
                "bond normal stiffness: normal stress per unit normal displacement",
            ))
            .property(stiffness(
                "pb_ks",
                "bond shear stiffness: shear stress per unit shear displacement",
            ))
            .property(
                PropertyDesc::new(
                    "pb_rmul",
                    "-",
                    "bond radius as a multiple of the smaller piece's radius",
                )
                .default(1.0)
                .min(0.0),
            )
            .property(strength("pb_ten", "tensile strength (mean)"))
            .property(scatter(
                "pb_ten_sd",
                "standard deviation of the tensile strength",
            ))
            .property(strength("pb_coh", "cohesion (mean)"))
            .property(scatter("pb_coh_sd", "standard deviation of the cohesion"))
            .property(
                PropertyDesc::new(
                    "pb_fa",
                    "deg",
                    "friction angle: the shear strength grows with the normal stress times its tangent",
                )
                .default(0.0)
                .min(0.0)
                .max(89.0),
            )
            .property(
                PropertyDesc::new(
                    "pb_mcf",
                    "-",
                    "moment-contribution factor of the moments to the stresses",
                )
                .default(1.0)
                .range(0.0, 1.0),
            );
        for s in linear.state {
            d = d.state(s);
        }
        // The bond itself follows its load across wall facets by the
        // model's own rule (the target becomes bonded with the source's
        // strengths); its force and moment add; the stresses are
        // recomputed by every call.
        let own = |name: &str, unit: &str, doc: &str| {
            StateSlotDesc::new(name, unit, doc).propagation(Propagation::Custom)
        };
        let added = |name: &str, unit: &str, doc: &str| {
            StateSlotDesc::new(name, unit, doc).propagation(Propagation::Add)
        };
        let recomputed = |name: &str, doc: &str| {
            StateSlotDesc::new(name, "Pa", doc).propagation(Propagation::None)
        };
        // When the ends swap, the frame turns half a turn about s and the
        // force and moment on the new end2 are the opposite vectors: their
        // s components change sign, the n and t ones keep theirs.
        d.state(own(
            "pb_state",
            "-",
            "0 never bonded, 1 bonded, 2 broken in tension, 3 broken in shear",
        ))
        .state(own("pb_ten_c", "Pa", "this bond's tensile strength"))
        .state(own("pb_coh_c", "Pa", "this bond's cohesion"))
        .state(added(
            "pb_fn",
            "N",
            "bond normal force, compressive positive",
        ))
        .state(added("pb_fs_s", "N", "bond shear force on end2 along s").swap(Swap::Negate))
        .state(added("pb_fs_t", "N", "bond shear force on end2 along t"))
        .state(added("pb_mt", "N m", "bond twist moment on end2 about n"))
        .state(added("pb_mb_s", "N m", "bond bend moment on end2 about s").swap(Swap::Negate))
        .state(added("pb_mb_t", "N m", "bond bend moment on end2 about t"))
        .state(recomputed(
            "pb_sigma",
            "largest tensile stress in the bond (at failure once broken)",
        ))
        .state(recomputed(
            "pb_tau",
            "largest shear stress in the bond (at failure once broken)",
        ))
    }

    fn prepare(props: &[f64], dt: f64) -> Self {
        let props = BondProps::from_slice(props);
        LinearBond {
            props,
            linear: LinearPrepared::new(&props.linear, dt),
            springs: None,
            dashpots: None,
        }
    }

    #[inline(always)]
    fn force_displacement(&mut self, contact: &Contact<'_>, state: &mut [f64]) -> ContactOutput {
        let slots = slots(state);
        let mut s = BondState::load(slots);
        let random = match contact.get(inputs::PAIR_RANDOM) {
            Some(&[a, b]) => [a, b],
            _ => [0.5; 2],
        };
        let (p, lp, memo) = (&self.props, &self.linear, &mut self.springs);
        // Contacts of one run mostly share their radii and effective mass
        // (equal balls): the bond's springs and the dashpot coefficients
        // are made again only when those change.
        let springs = |radius: [f64; 2]| {
            let bits = radius.map(f64::to_bits);
            match *memo {
                Some((b, k)) if b == bits => k,
                _ => {
                    let k = Springs::new(p, radius);
                    *memo = Some((bits, k));
                    k
                }
            }
        };
        let memo_c = &mut self.dashpots;
        let dashpots = |mass: f64| lp.dashpots_kept(memo_c, mass);
        let (out, _) = kernel::force_displacement_with(
            p,
            lp,
            dashpots,
            springs,
            contact.input(),
            random,
            &mut s,
        );
        s.store(slots);
        out
    }

    #[inline]
    fn suppressed(&mut self, contact: &Contact<'_>, state: &mut [f64]) {
        let slots = slots(state);
        let mut s = BondState::load(slots);
        kernel::release(contact.input(), &mut s);
        s.store(slots);
    }

    fn custom_state(event: StateEvent, _props: &[f64], from: &[f64], to: &mut [f64]) {
        match event {
            StateEvent::TakeOver | StateEvent::Merge => {
                let source = BondState::load(from);
                let mut target = BondState::load(to);
                kernel::propagate(&source, &mut target);
                target.store(to);
            }
            // The custom slots are scalars of the bond that do not depend
            // on which end is which.
            StateEvent::Swap => to.copy_from_slice(from),
        }
    }
}

/// A contact's state block as the fixed-size array the kernel reads.
#[inline(always)]
fn slots(state: &mut [f64]) -> &mut [f64; BondState::SLOTS] {
    let n = state.len();
    state
        .try_into()
        .unwrap_or_else(|_| panic!("expected {} state slots, got {n}", BondState::SLOTS))
}

// The property layout the kernel reads is the descriptor's.
const _: () = assert!(BondProps::COUNT == LinearProps::COUNT + 9);

talus_sdk::define_plugin!("talus-plugin-linearbond", [LinearBond]);

#[cfg(feature = "export")]
talus_sdk::export_plugin!();

#[cfg(test)]
mod tests {
    use super::*;
    use talus_sdk::ModelEntry;

    #[test]
    fn descriptor_matches_kernel_layout() {
        let d = LinearBond::descriptor();
        assert_eq!(d.properties.len(), BondProps::COUNT);
        assert_eq!(d.state.len(), BondState::SLOTS);
        let names: Vec<&str> = d.properties.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            &names[LinearProps::COUNT..],
            [
                "pb_kn",
                "pb_ks",
                "pb_rmul",
                "pb_ten",
                "pb_ten_sd",
                "pb_coh",
                "pb_coh_sd",
                "pb_fa",
                "pb_mcf"
            ]
        );
        let state: Vec<&str> = d.state.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(state[7], "pb_state");
        assert_eq!(state[10], "pb_fn");
        assert_eq!(state[17], "pb_tau");
    }

    /// Through the custom rule: a bonded source makes an unbonded target
    /// bonded with its strengths; an unbonded source changes nothing.
    #[test]
    fn the_bond_follows_its_load_to_another_facet() {
        let n = BondState::SLOTS;
        let mut from = vec![0.0; n];
        let mut bonded = BondState::load(&from);
        bonded.bond = kernel::status::BONDED;
        bonded.ten_c = 3.0;
        bonded.coh_c = 4.0;
        bonded.store(&mut from);
        let mut to = vec![0.0; n];
        LinearBond::custom_state(StateEvent::TakeOver, &[], &from, &mut to);
        let t = BondState::load(&to);
        assert!(t.bonded());
        assert_eq!((t.ten_c, t.coh_c), (3.0, 4.0));
        let mut to2 = to.clone();
        LinearBond::custom_state(StateEvent::Merge, &[], &vec![0.0; n], &mut to2);
        assert_eq!(to, to2);
    }

    #[test]
    fn root_module_lists_linearbond() {
        let root = root_module();
        let models = root.models()();
        assert_eq!(models.len(), 1);
        let entry = ModelEntry::from_abi(models[0]).unwrap();
        assert_eq!(entry.descriptor, LinearBond::descriptor());
    }
}
