//! talus-sdk: the stable plugin interface of the talus DEM engine.
//!
//! A plugin is a dynamic library (or, for the embedded defaults, an rlib)
//! that hands the engine one root module, [`PluginModRef`]. The root module
//! lists contact models and shapes. A model is a [`ModelDescriptor`] (name,
//! properties with units and ranges, per-contact state slots with their
//! propagation rules, activity rule, the optional inputs it reads) and one
//! batch force-displacement function, which the sdk generates around a
//! per-contact kernel. A shape (since 0.3.4, module [`shape`]) is a convex
//! body kind: a [`ShapeDescriptor`] and batched mass-property, support and
//! optional closest-point functions, generated around a [`ShapeModel`].
//!
//! Goals, in order:
//! 1. Nothing undefined crosses the boundary: only `#[repr(C)]` data that
//!    derives `StableAbi`; panics are caught on the plugin side.
//! 2. Loading a plugin built against an incompatible sdk fails with a clear
//!    error at load time, never a crash later.
//! 3. The interface grows without breaking built plugins: new inputs are
//!    new column ids, new descriptor fields are appended to prefix types,
//!    new rules are new codes (see "Versioning").
//! 4. Calls are per batch (thousands of contacts), so the boundary costs
//!    nothing measurable and kernels can vectorise.
//! 5. Writing a model is small: implement [`ContactModel`] (a descriptor
//!    from the builder, a per-run `prepare`, a per-contact kernel) and
//!    invoke [`define_plugin!`] and [`export_plugin!`]. The driver handles
//!    the engine's skip flags, panics and the batch layout.
//!
//! # Sign conventions
//! - The contact normal `n` points from end1 to end2; `n = s x t`.
//! - The gap `g` is the signed surface separation: `g < 0` is overlap.
//! - Relative displacement increments are those of end2 relative to end1;
//!   a positive normal increment means the pieces move apart.
//! - The model returns the force in the contact frame: `Fn > 0` is
//!   compressive (it pushes the pieces apart). The engine applies `+F` on
//!   end2 and `-F` on end1 at the contact location; moments likewise.
//!
//! # Versioning
//! The sdk crate's own version is the ABI version: the engine loads a
//! library built with the same `0.minor` (any patch), and abi_stable then
//! checks the full type layout of the root module. Within one minor the
//! interface only grows, in three ways that leave every checked layout as
//! it was:
//! - a new optional input is a new id in [`inputs`] (the batch carries
//!   inputs as `{id, width, values}` columns, so no type changes);
//! - a new descriptor field is appended to the model record
//!   ([`abi::ModelMod`], a prefix type) after its `last_prefix_field`, and
//!   reads as its default from a library that predates it;
//! - a new rule or activity kind is a new code (the records hold integer
//!   codes, not enums); an engine refuses a model using a code it does not
//!   know, at load time.
//!
//! Root-module fields, likewise, are only ever appended after the
//! `last_prefix_field`, each with an accessor that returns `None` for a
//! library built before the field existed (the shape list, added in
//! 0.3.4, is the first).
//!
//! abi_stable's layout check accepts a library whose prefix types have
//! more fields than the engine's, but not fewer, even past the
//! `last_prefix_field`. So an append also keeps the layout it extends in
//! [`abi::legacy`]: the engine checks a library that does not match the
//! current layout against those, and then reads it through the current
//! accessors.

#![warn(missing_docs)]

pub use abi_stable;

use abi_stable::{
    std_types::{RResult, RSlice, RSliceMut, RStr, RString},
    StableAbi,
};

pub mod abi;
mod descriptor;
mod driver;
pub mod flags;
pub mod inputs;
pub mod report;
pub mod shape;

pub use abi::{ModelModRef, PluginModRef, ShapeModRef};
pub use descriptor::{
    Activity, ModelDescriptor, ModelEntry, Propagation, PropertyDesc, StateEvent, StateSlotDesc,
    Swap,
};
pub use driver::{guarded_records, run_batch, run_custom_state, Contact, ContactModel};
pub use shape::{
    shape_entry, ClosestPoint, ClosestPointFn, FeatureFn, FeatureRule, MassFn, MassProperties,
    ShapeDescriptor, ShapeEntry, ShapeModel, ShapeQuery, SupportFn,
};

/// Version of this sdk; it is also the ABI version checked at load time.
pub const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Kinematic input of one contact for one force-displacement call.
///
/// All increments are for the current timestep and expressed in the
/// contact frame `(n, s, t)`.
///
/// # Units
/// Lengths in m, angles in rad, mass in kg.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactInput {
    /// Contact gap `g` (m); negative is overlap.
    pub gap: f64,
    /// Relative normal-displacement increment (m); positive opens.
    pub delta_n: f64,
    /// Relative shear-displacement increment along (s, t) (m).
    pub delta_s: [f64; 2],
    /// Relative twist-rotation increment about n (rad).
    pub theta_t: f64,
    /// Relative bend-rotation increment about (s, t) (rad).
    pub theta_b: [f64; 2],
    /// Effective inertial mass of the contact (kg).
    pub mass: f64,
    /// Radii of the end1 and end2 pieces (m); 0 for a wall facet and a
    /// block, except that two blocks flagged [`flags::BOND`] or bonded
    /// both get the radius of the disc of their contact area at bonding.
    pub radius: [f64; 2],
    /// Index of the property set of this contact (row of `BatchContext::props`).
    pub prop_set: u32,
    /// Bit flags, see [`flags`].
    pub flags: u32,
}

/// What a model returns for one contact.
///
/// # Units
/// Forces in N, moments in N m, translational stiffness in N/m,
/// rotational stiffness in N m/rad.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactOutput {
    /// Force in the contact frame: (Fn, Fss, Fst); Fn > 0 is compressive.
    pub force: [f64; 3],
    /// Moment in the contact frame: (Mt, Mbs, Mbt).
    pub moment: [f64; 3],
    /// Stiffnesses this contact adds to timestep estimation:
    /// (translational, rotational). Zero when the contact is inactive and
    /// cannot become active soon.
    pub stiffness: [f64; 2],
    /// Activity after this call: [`STATUS_INACTIVE`], [`STATUS_COULD_BE_ACTIVE`]
    /// or [`STATUS_ACTIVE`].
    pub status: u32,
    /// Report bits of this call, see [`report`]; zero reports nothing.
    /// (The field kept its first name so that plugins built before the
    /// bits existed, which write zero here, still load.)
    pub reserved: u32,
}

impl ContactOutput {
    /// No force, no stiffness, [`STATUS_INACTIVE`]: what the driver writes
    /// for a contact the engine suppressed.
    pub const INACTIVE: ContactOutput = ContactOutput {
        force: [0.0; 3],
        moment: [0.0; 3],
        stiffness: [0.0; 2],
        status: STATUS_INACTIVE,
        reserved: 0,
    };

    /// A contact that carries `force` (contact frame, on end2) and adds
    /// `stiffness` to the timestep estimate; no moment.
    #[inline]
    pub const fn active(force: [f64; 3], stiffness: [f64; 2]) -> ContactOutput {
        ContactOutput {
            force,
            stiffness,
            status: STATUS_ACTIVE,
            ..ContactOutput::INACTIVE
        }
    }

    /// A contact without force that may soon carry some; it adds
    /// `stiffness` to the timestep estimate.
    #[inline]
    pub const fn could_be_active(stiffness: [f64; 2]) -> ContactOutput {
        ContactOutput {
            stiffness,
            status: STATUS_COULD_BE_ACTIVE,
            ..ContactOutput::INACTIVE
        }
    }

    /// This output with `moment` (contact frame, on end2).
    #[inline]
    pub const fn with_moment(self, moment: [f64; 3]) -> ContactOutput {
        ContactOutput { moment, ..self }
    }

    /// This output with the [`report`] bits `bits` set as well.
    #[inline]
    pub const fn reporting(self, bits: u32) -> ContactOutput {
        ContactOutput {
            reserved: self.reserved | bits,
            ..self
        }
    }
}

/// The contact carries no force and will not soon.
pub const STATUS_INACTIVE: u32 = 0;
/// The contact carries no force now but may soon; it takes part in
/// timestep estimation.
pub const STATUS_COULD_BE_ACTIVE: u32 = 1;
/// The contact carries force.
pub const STATUS_ACTIVE: u32 = 2;

/// Shared data for one batch call.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug)]
pub struct BatchContext<'a> {
    /// Timestep (s).
    pub dt: f64,
    /// Property sets, row-major: `n_sets x n_props`, in descriptor order.
    pub props: RSlice<'a, f64>,
    /// Number of properties per set (length of the descriptor's list).
    pub n_props: u32,
    /// Number of state slots per contact (length of the descriptor's list).
    pub n_state: u32,
    /// The optional inputs the model asked for, one column per id and
    /// nothing else; empty for a model that asks for none.
    pub columns: RSlice<'a, InputColumn<'a>>,
}

impl<'a> BatchContext<'a> {
    /// The values of optional input `id` for the whole batch (`width`
    /// values per contact, in batch order), or `None` if the batch has no
    /// such column.
    pub fn column(&self, id: u32) -> Option<&'a [f64]> {
        self.columns
            .as_slice()
            .iter()
            .find(|c| c.id == id)
            .map(|c| c.values.as_slice())
    }
}

/// One optional input of a batch: `width` values per contact, contact `i`
/// at `values[i * width..(i + 1) * width]`.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug)]
pub struct InputColumn<'a> {
    /// Input id (see [`inputs`]).
    pub id: u32,
    /// Values per contact.
    pub width: u32,
    /// `n_contacts * width` values.
    pub values: RSlice<'a, f64>,
}

/// An error a model reports from a batch call.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq)]
pub struct BatchError {
    /// Index in the batch of the contact being processed.
    pub index: u64,
    /// What went wrong, lowercase, without the model name.
    pub message: RString,
}

/// Batch force-displacement call. `state` holds `inputs.len() * n_state`
/// values; `outputs` has the same length as `inputs`.
pub type BatchFn = extern "C" fn(
    ctx: &BatchContext<'_>,
    inputs: RSlice<'_, ContactInput>,
    state: RSliceMut<'_, f64>,
    outputs: RSliceMut<'_, ContactOutput>,
) -> RResult<(), BatchError>;

/// A model's custom state rule: the engine calls it for the slots whose
/// propagation or swap rule is `Custom`, with an event code
/// ([`StateEvent::code`]), the property set of the target contact, the
/// source state `from` and the target state `to`. The other slots of `to`
/// already hold their result, and the engine keeps those whatever the call
/// writes.
pub type StateFn = extern "C" fn(
    event: u32,
    props: RSlice<'_, f64>,
    from: RSlice<'_, f64>,
    to: RSliceMut<'_, f64>,
) -> RResult<(), RString>;

/// Returns [`SDK_VERSION`] with a `'static` lifetime for the root module.
pub extern "C" fn sdk_version() -> RStr<'static> {
    RStr::from_str(SDK_VERSION)
}

/// Defines `pub fn root_module() -> PluginModRef` for lists of models and
/// shapes.
///
/// ```text
/// talus_sdk::define_plugin!("my_plugin", [MyModel]);              // models
/// talus_sdk::define_plugin!("my_plugin", shapes: [MyShape]);       // shapes
/// talus_sdk::define_plugin!("my_plugin", models: [MyModel], shapes: [MyShape]);
/// talus_sdk::export_plugin!();
/// ```
///
/// The records are built (and leaked) once per process, at the first call
/// of the root module's `models` or `shapes`.
#[macro_export]
macro_rules! define_plugin {
    ($plugin:expr, [$($model:ty),+ $(,)?]) => {
        $crate::define_plugin!(@root $plugin, [$($model),+], []);
    };
    ($plugin:expr, models: [$($model:ty),* $(,)?], shapes: [$($shape:ty),* $(,)?] $(,)?) => {
        $crate::define_plugin!(@root $plugin, [$($model),*], [$($shape),*]);
    };
    ($plugin:expr, shapes: [$($shape:ty),* $(,)?] $(,)?) => {
        $crate::define_plugin!(@root $plugin, [], [$($shape),*]);
    };
    (@root $plugin:expr, [$($model:ty),*], [$($shape:ty),*]) => {
        extern "C" fn __talus_plugin_name() -> $crate::abi_stable::std_types::RStr<'static> {
            $crate::abi_stable::std_types::RStr::from_str($plugin)
        }

        fn __talus_build_models() -> ::std::vec::Vec<$crate::ModelEntry> {
            ::std::vec![$($crate::entry::<$model>()),*]
        }

        fn __talus_build_shapes() -> ::std::vec::Vec<$crate::ShapeEntry> {
            ::std::vec![$($crate::shape_entry::<$shape>()),*]
        }

        type __TalusRecords = (
            ::std::vec::Vec<$crate::ModelModRef>,
            ::std::vec::Vec<$crate::ShapeModRef>,
        );

        fn __talus_records() -> &'static __TalusRecords {
            static RECORDS: ::std::sync::OnceLock<__TalusRecords> = ::std::sync::OnceLock::new();
            RECORDS.get_or_init(|| {
                $crate::guarded_records(__talus_build_models, __talus_build_shapes)
            })
        }

        extern "C" fn __talus_models()
            -> $crate::abi_stable::std_types::RVec<$crate::ModelModRef>
        {
            __talus_records().0.iter().copied().collect()
        }

        extern "C" fn __talus_shapes()
            -> $crate::abi_stable::std_types::RVec<$crate::ShapeModRef>
        {
            __talus_records().1.iter().copied().collect()
        }

        /// The plugin's root module (also used to embed it statically).
        pub fn root_module() -> $crate::PluginModRef {
            use $crate::abi_stable::prefix_type::PrefixTypeTrait;
            $crate::abi::PluginMod {
                plugin_name: __talus_plugin_name,
                sdk_version: $crate::sdk_version,
                models: __talus_models,
                shapes: __talus_shapes,
            }
            .leak_into_prefix()
        }
    };
}

/// Exports the root module defined by [`define_plugin!`] from a cdylib.
///
/// A plugin that is also linked statically next to other plugins (the
/// engine's embedded defaults) must put this behind a cargo feature: the
/// exported symbol has one fixed name, so two of them cannot share one
/// executable.
#[macro_export]
macro_rules! export_plugin {
    () => {
        #[no_mangle]
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        pub static _1as_0lib_1header_0root_bmodule_bloader: $crate::abi_stable::library::LibHeader = {
            extern "C" fn erased_root_module() -> $crate::abi_stable::library::RootModuleResult {
                $crate::abi_stable::library::__call_root_module_loader(root_module)
            }
            // SAFETY: `erased_root_module` returns the module of type
            // `PluginModRef`, the type the header is built for.
            unsafe {
                $crate::abi_stable::library::LibHeader::from_constructor::<$crate::PluginModRef>(
                    erased_root_module,
                    $crate::abi_stable::library::CheckTypeLayout::Yes,
                )
            }
        };
    };
}

/// The stiffness a spring `k` (N/m, or N m/rad) with a viscous dashpot of
/// critical damping ratio `ratio` reports in [`ContactOutput::stiffness`]:
/// `k / f^2` with `f = sqrt(1 + ratio^2) - ratio`, the stiffness of the
/// undamped spring that has the same stable step.
///
/// A dashpot whose force is taken from the relative velocity of the half
/// step before (the increments the engine gives) lowers the stable step of
/// its spring from `w dt <= 2` to `w dt <= 2 f`, `w` the undamped
/// frequency: by 18 % at a ratio of 0.2, 55 % at 0.9. Reported this way,
/// the damped contact keeps the margin that the engine's safety factor
/// gives an undamped one; reported as `k`, a contact damped near the
/// critical ratio gains energy in an impact at the automatic step.
pub fn damped_stiffness(k: f64, ratio: f64) -> f64 {
    let b = ratio.max(0.0);
    let f = (1.0 + b * b).sqrt() - b;
    k / (f * f)
}

/// The bend moment `(Mbs, Mbt)` on end2 (N m) of a normal dashpot `c`
/// (N s/m) spread evenly over a contact surface, `c / A` per unit area,
/// and the energy it takes out over the step (J).
///
/// `g = [gss, gtt, gst]` are the surface's second moments per unit area
/// about the contact location ([`inputs::AREA_GYRATION`], m^2),
/// `theta_b` the step's bend increments (rad) and `inv_dt` the inverse
/// step (1/s). A relative rotation `w = theta_b / dt` moves the surface
/// point at in-plane offset `(y_s, y_t)` along the normal at
/// `w_s y_t - w_t y_s`; the dashpot's pressure against that motion sums
/// to `Mbs = -c (gtt w_s - gst w_t)` and `Mbt = -c (gss w_t - gst w_s)`
/// about the location. Its force sums to a dashpot at the surface's
/// centroid, which a model applies as its own normal dashpot. The energy
/// `-(Mb . theta_b)` is never negative, `g` being positive semi-definite.
#[inline]
pub fn spread_dashpot(c: f64, inv_dt: f64, g: [f64; 3], theta_b: [f64; 2]) -> ([f64; 2], f64) {
    let [gss, gtt, gst] = g;
    let [ws, wt] = theta_b.map(|a| a * inv_dt);
    let m = [-c * (gtt * ws - gst * wt), -c * (gss * wt - gst * ws)];
    (m, -(m[0] * theta_b[0] + m[1] * theta_b[1]))
}

/// Builds the [`ModelEntry`] of a [`ContactModel`] (used by
/// [`define_plugin!`], and by tests that hand a model to the engine
/// directly).
pub fn entry<M: ContactModel>() -> ModelEntry {
    ModelEntry {
        descriptor: M::descriptor(),
        batch: run_batch::<M>,
        custom_state: run_custom_state::<M>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exported_symbol_name_matches_abi_stable() {
        // The export macro spells the loader symbol out because the
        // attribute macro of abi_stable needs a direct dependency on it.
        assert_eq!(
            abi_stable::library::ROOT_MODULE_LOADER_NAME,
            "_1as_0lib_1header_0root_bmodule_bloader"
        );
    }
}

#[cfg(test)]
mod spread_tests {
    use super::*;

    #[test]
    fn a_spread_dashpot_sums_the_dashpots_of_its_surface() {
        // A 3 x 2 rectangle turned by 0.4 rad in the (s, t) plane, its
        // centre off the location: the moment of small dashpots `c dA / A`
        // on a fine grid against the closed form.
        let (w, h, turn, centre) = (3.0, 2.0, 0.4f64, [0.5, -0.3]);
        let (c, dt, theta) = (7.0, 1e-3, [2e-4, -5e-4]);
        let (cos, sin) = (turn.cos(), turn.sin());
        let n = 600;
        let (da, area) = (w * h / (n * n) as f64, w * h);
        let (mut m, mut g) = ([0.0; 2], [0.0; 3]);
        for i in 0..n {
            for j in 0..n {
                let u = (i as f64 + 0.5) / n as f64 * w - 0.5 * w;
                let v = (j as f64 + 0.5) / n as f64 * h - 0.5 * h;
                let ys = centre[0] + cos * u - sin * v;
                let yt = centre[1] + sin * u + cos * v;
                // Normal speed of the point, the dashpot's force on end2
                // and its moment about the location ((y x n) . s, . t).
                let vn = (theta[0] * yt - theta[1] * ys) / dt;
                let f = -c / area * vn * da;
                m[0] += yt * f;
                m[1] -= ys * f;
                g[0] += ys * ys * da / area;
                g[1] += yt * yt * da / area;
                g[2] += ys * yt * da / area;
            }
        }
        let (got, energy) = spread_dashpot(c, 1.0 / dt, g, theta);
        for k in 0..2 {
            assert!(
                (got[k] - m[k]).abs() < 1e-9 * m[0].abs().max(m[1].abs()),
                "{got:?} {m:?}"
            );
        }
        assert!(energy > 0.0);
        assert!((energy + got[0] * theta[0] + got[1] * theta[1]).abs() < 1e-24);
    }
}

#[cfg(test)]
mod guard_tests {
    use super::*;

    struct Broken;

    impl ContactModel for Broken {
        fn descriptor() -> ModelDescriptor {
            panic!("descriptor is broken")
        }
        fn prepare(_: &[f64], _: f64) -> Self {
            Broken
        }
        fn force_displacement(&mut self, _: &Contact<'_>, _: &mut [f64]) -> ContactOutput {
            ContactOutput::default()
        }
    }

    define_plugin!("broken", [Broken]);

    #[test]
    fn a_panicking_descriptor_gives_an_empty_model_list() {
        let root = root_module();
        assert!((root.models())().is_empty());
        assert!((root.models())().is_empty());
        assert_eq!((root.plugin_name())().as_str(), "broken");
    }
}

#[cfg(test)]
mod record_tests {
    use super::*;

    struct Full;

    impl ContactModel for Full {
        fn descriptor() -> ModelDescriptor {
            ModelDescriptor::new("full", "1.2.3")
                .summary("every field set")
                .citation("nobody (2024)")
                .property(PropertyDesc::new("k", "N/m", "stiffness").min(0.0))
                .property(
                    PropertyDesc::new("mu", "-", "friction")
                        .default(0.5)
                        .range(0.0, 2.0),
                )
                .state(StateSlotDesc::new("f_s", "N", "shear force").swap(Swap::Negate))
                .state(StateSlotDesc::new("bond", "N", "bond force").propagation(Propagation::Add))
                .state(
                    StateSlotDesc::new("odd", "-", "custom both ways")
                        .propagation(Propagation::Custom)
                        .swap(Swap::Custom),
                )
                .activity(Activity::Custom, "while the bond holds")
                .input(inputs::OVERLAP_VOLUME)
                .input(inputs::BRANCH_2)
        }
        fn prepare(_: &[f64], _: f64) -> Self {
            Full
        }
        fn force_displacement(&mut self, _: &Contact<'_>, _: &mut [f64]) -> ContactOutput {
            ContactOutput::default()
        }
    }

    define_plugin!("full-plugin", [Full]);

    #[test]
    fn a_descriptor_survives_the_exported_record() {
        let root = root_module();
        let records = (root.models())();
        assert_eq!(records.len(), 1);
        let back = ModelEntry::from_abi(records[0]).unwrap();
        assert_eq!(back.descriptor, Full::descriptor());
        // The record is built once: a second call hands out the same one.
        let again = (root.models())();
        assert_eq!(again[0].name().as_ptr(), records[0].name().as_ptr());
    }

    #[test]
    fn unknown_codes_are_named() {
        let mut entry = entry::<Full>();
        entry.descriptor.activity = Activity::Overlap;
        let record = entry.to_abi();
        assert!(ModelEntry::from_abi(record).is_ok());
        use abi_stable::prefix_type::PrefixTypeTrait;
        let odd_slot = abi::StateSlotAbi {
            name: RStr::from_str("weird"),
            unit: RStr::from_str("-"),
            doc: RStr::from_str(""),
            propagation: 9,
            swap: 0,
        };
        let slots: &'static [abi::StateSlotAbi] = Box::leak(Box::new([odd_slot]));
        let base = |activity: u32, state: &'static [abi::StateSlotAbi]| abi::ModelMod {
            name: RStr::from_str("odd"),
            version: RStr::from_str("0.1.0"),
            summary: RStr::from_str(""),
            citation: RStr::from_str(""),
            properties: RSlice::from_slice(&[]),
            state: RSlice::from_slice(state),
            activity,
            activity_doc: RStr::from_str(""),
            inputs: RSlice::from_slice(&[]),
            batch: entry.batch,
            custom_state: entry.custom_state,
        };
        let err = ModelEntry::from_abi(base(7, &[]).leak_into_prefix()).unwrap_err();
        assert!(err.contains("activity code 7"), "{err}");
        let err = ModelEntry::from_abi(base(0, slots).leak_into_prefix()).unwrap_err();
        assert!(
            err.contains("\"weird\" declares propagation code 9"),
            "{err}"
        );
    }
}
