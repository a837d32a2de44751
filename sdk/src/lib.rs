//! talus-sdk: the stable plugin interface of the talus DEM engine.
//!
//! A plugin is a dynamic library (or, for the embedded defaults, an rlib)
//! that hands the engine one root module, [`PluginModRef`]. The root module
//! lists contact models; each model is a [`ModelEntry`]: a descriptor (name,
//! properties with units and ranges, per-contact state slots, activity and
//! propagation rules) and one batch force-displacement function.
//!
//! Goals, in order:
//! 1. Nothing undefined crosses the boundary: only `#[repr(C)]` data that
//!    derives `StableAbi`; panics are caught on the plugin side.
//! 2. Loading a plugin built against an incompatible sdk fails with a clear
//!    error at load time, never a crash later.
//! 3. Calls are per batch (thousands of contacts), so the boundary costs
//!    nothing measurable and kernels can vectorise.
//! 4. Writing a model is small: implement [`ContactModel`] and invoke
//!    [`define_plugin!`] and [`export_plugin!`].
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
//! The sdk crate's own version is the ABI version: abi_stable compares it
//! (semver rules; for 0.x the minor must match) and checks the full type
//! layout of the root module when a library is loaded. New root-module
//! fields are only ever appended after the `last_prefix_field`.

#![warn(missing_docs)]

pub use abi_stable;

use abi_stable::{
    declare_root_module_statics,
    library::RootModule,
    package_version_strings,
    sabi_types::VersionStrings,
    std_types::{ROption, RResult, RSlice, RSliceMut, RStr, RString, RVec},
    StableAbi,
};

mod driver;
pub mod flags;

pub use driver::{guarded_models, run_batch, run_propagate, ContactModel};

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
    /// Radii of the end1 and end2 pieces (m); 0 for a wall facet.
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
    /// Reserved, keep zero.
    pub reserved: u32,
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

/// One property a model takes, with its unit, default and allowed range.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq)]
pub struct PropertyDesc {
    /// Name as written in configs (snake case).
    pub name: RString,
    /// SI unit, e.g. "N/m"; "-" for dimensionless.
    pub unit: RString,
    /// Default value; `RNone` means the property is required.
    pub default: ROption<f64>,
    /// Smallest allowed value (inclusive).
    pub min: f64,
    /// Largest allowed value (inclusive).
    pub max: f64,
    /// One-line description.
    pub doc: RString,
}

/// One per-contact state slot; its name becomes an output column.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq)]
pub struct StateSlotDesc {
    /// Column name (snake case).
    pub name: RString,
    /// SI unit.
    pub unit: RString,
    /// One-line description.
    pub doc: RString,
}

/// How a model decides that a contact carries force.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    /// Active exactly while the pieces overlap (`gap < 0`). Declaring it
    /// promises that, once the model has been called for an open contact
    /// (`gap > 0`) and answered inactive, further calls while the contact
    /// stays open would give the same answer: zero force, the same status
    /// and stiffness, and no state change. The engine then stops calling
    /// the model for that contact until it closes, and skips the frame
    /// update and increments of open contacts.
    Overlap = 0,
    /// The model decides from its state (e.g. a bond active in tension);
    /// the descriptor's `activity_doc` says how.
    Custom = 1,
}

/// How a model's non-geometric state moves when the active wall contact
/// passes from one facet to another, or when contacts merge.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Propagation {
    /// State is not carried over.
    None = 0,
    /// The target receives a copy of the source state.
    Copy = 1,
    /// The source state is added to the target state slot by slot.
    Add = 2,
    /// The model's own `propagate` callback decides.
    Custom = 3,
}

/// Everything the engine and users need to know about a model.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq)]
pub struct ModelDescriptor {
    /// Model name used in configs, e.g. "linear".
    pub name: RString,
    /// Model version (semver).
    pub version: RString,
    /// One-paragraph description.
    pub summary: RString,
    /// Reference to the literature, or empty.
    pub citation: RString,
    /// Properties in the order the batch call receives them.
    pub properties: RVec<PropertyDesc>,
    /// Per-contact state slots in storage order.
    pub state: RVec<StateSlotDesc>,
    /// Activity rule.
    pub activity: Activity,
    /// How activity is decided, for the docs.
    pub activity_doc: RString,
    /// State propagation rule between wall facets.
    pub propagation: Propagation,
}

/// Batch force-displacement call. `state` holds `inputs.len() * n_state`
/// values; `outputs` has the same length as `inputs`.
pub type BatchFn = extern "C" fn(
    ctx: &BatchContext<'_>,
    inputs: RSlice<'_, ContactInput>,
    state: RSliceMut<'_, f64>,
    outputs: RSliceMut<'_, ContactOutput>,
) -> RResult<(), BatchError>;

/// State propagation callback: merges `from` into `to` with the property
/// set `props`.
pub type PropagateFn = extern "C" fn(
    props: RSlice<'_, f64>,
    from: RSlice<'_, f64>,
    to: RSliceMut<'_, f64>,
) -> RResult<(), RString>;

/// A model as the root module lists it.
#[repr(C)]
#[derive(StableAbi, Clone)]
pub struct ModelEntry {
    /// The model's declaration.
    pub descriptor: ModelDescriptor,
    /// The force-displacement kernel over a batch of contacts (a [`BatchFn`]).
    pub batch: extern "C" fn(
        &BatchContext<'_>,
        RSlice<'_, ContactInput>,
        RSliceMut<'_, f64>,
        RSliceMut<'_, ContactOutput>,
    ) -> RResult<(), BatchError>,
    /// Propagation callback (a [`PropagateFn`]), used when
    /// `descriptor.propagation` is `Custom`.
    pub propagate: ROption<
        extern "C" fn(RSlice<'_, f64>, RSlice<'_, f64>, RSliceMut<'_, f64>) -> RResult<(), RString>,
    >,
}

/// The root module every plugin library exports.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginModRef)))]
#[sabi(missing_field(panic))]
pub struct PluginMod {
    /// Name of the plugin library (its crate name).
    pub plugin_name: extern "C" fn() -> RStr<'static>,
    /// The sdk version the plugin was built with.
    pub sdk_version: extern "C" fn() -> RStr<'static>,
    /// The models the plugin provides.
    #[sabi(last_prefix_field)]
    pub models: extern "C" fn() -> RVec<ModelEntry>,
}

impl RootModule for PluginModRef {
    declare_root_module_statics! {PluginModRef}
    const BASE_NAME: &'static str = "talus_plugin";
    const NAME: &'static str = "talus_plugin";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}

/// Returns [`SDK_VERSION`] with a `'static` lifetime for the root module.
pub extern "C" fn sdk_version() -> RStr<'static> {
    RStr::from_str(SDK_VERSION)
}

/// Builds a [`PropertyDesc`] (a convenience for descriptors).
pub fn property(
    name: &str,
    unit: &str,
    default: Option<f64>,
    range: (f64, f64),
    doc: &str,
) -> PropertyDesc {
    PropertyDesc {
        name: name.into(),
        unit: unit.into(),
        default: default.into(),
        min: range.0,
        max: range.1,
        doc: doc.into(),
    }
}

/// Builds a [`StateSlotDesc`] (a convenience for descriptors).
pub fn state_slot(name: &str, unit: &str, doc: &str) -> StateSlotDesc {
    StateSlotDesc {
        name: name.into(),
        unit: unit.into(),
        doc: doc.into(),
    }
}

/// Defines `pub fn root_module() -> PluginModRef` for a list of models.
///
/// ```text
/// talus_sdk::define_plugin!("my_plugin", [MyModel]);
/// talus_sdk::export_plugin!();
/// ```
#[macro_export]
macro_rules! define_plugin {
    ($plugin:expr, [$($model:ty),+ $(,)?]) => {
        extern "C" fn __talus_plugin_name() -> $crate::abi_stable::std_types::RStr<'static> {
            $crate::abi_stable::std_types::RStr::from_str($plugin)
        }

        fn __talus_build_models() -> $crate::abi_stable::std_types::RVec<$crate::ModelEntry> {
            let mut models = $crate::abi_stable::std_types::RVec::new();
            $( models.push($crate::entry::<$model>()); )+
            models
        }

        extern "C" fn __talus_models() -> $crate::abi_stable::std_types::RVec<$crate::ModelEntry> {
            $crate::guarded_models(__talus_build_models)
        }

        /// The plugin's root module (also used to embed it statically).
        pub fn root_module() -> $crate::PluginModRef {
            use $crate::abi_stable::prefix_type::PrefixTypeTrait;
            $crate::PluginMod {
                plugin_name: __talus_plugin_name,
                sdk_version: $crate::sdk_version,
                models: __talus_models,
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

/// Builds the [`ModelEntry`] of a [`ContactModel`] (used by [`define_plugin!`]).
pub fn entry<M: ContactModel>() -> ModelEntry {
    let descriptor = M::descriptor();
    let propagate: Option<PropagateFn> = if descriptor.propagation == Propagation::Custom {
        Some(run_propagate::<M>)
    } else {
        None
    };
    ModelEntry {
        descriptor,
        batch: run_batch::<M>,
        propagate: propagate.into(),
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
mod guard_tests {
    use super::*;

    struct Broken;

    impl ContactModel for Broken {
        fn descriptor() -> ModelDescriptor {
            panic!("descriptor is broken")
        }
        fn from_props(_: &[f64]) -> Self {
            Broken
        }
        fn force_displacement(
            &self,
            _: f64,
            _: &ContactInput,
            _: &mut [f64],
            _: &mut ContactOutput,
        ) {
        }
    }

    define_plugin!("broken", [Broken]);

    #[test]
    fn a_panicking_descriptor_gives_an_empty_model_list() {
        let root = root_module();
        assert!((root.models())().is_empty());
        assert_eq!((root.plugin_name())().as_str(), "broken");
    }
}
