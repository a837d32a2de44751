//! The exported form of a plugin: the root module and one growable record
//! per model and per shape. Only these types (and those of the batch and
//! shape calls) cross the library boundary; abi_stable checks their layout
//! when a library loads.
//!
//! All records are prefix types: a later sdk may append fields after the
//! `last_prefix_field`, and then reads them from a library built before
//! they existed as their default (which must mean "what older sdks did").
//! Rules and activity travel as integer codes, not enums, so that a new
//! rule changes no layout either; an engine that meets a code it does not
//! know refuses the model when it reads it ([`ModelEntry::from_abi`]).
//!
//! Optional entry points of a record are `ROption`s of function pointers:
//! `RNone` says the plugin does not provide the routine (and is also what a
//! later, appended entry reads as from an older library).
//!
//! A model record is built once per library and leaked: everything in it
//! is `'static` and `Copy` (strings as `RStr`, lists as `RSlice`), which is
//! what prefix-type accessors need, and the library is never unloaded.

// The records spell out their function types (abi_stable's derive reads a
// function pointer's layout from its written form, not from an alias), and
// the code it generates from them is out of reach of a narrower `allow`.
#![allow(clippy::type_complexity)]

use abi_stable::{
    declare_root_module_statics,
    library::RootModule,
    package_version_strings,
    prefix_type::PrefixTypeTrait,
    sabi_types::VersionStrings,
    std_types::{ROption, RResult, RSlice, RSliceMut, RStr, RString, RVec},
    StableAbi,
};

use crate::descriptor::{
    Activity, ModelDescriptor, ModelEntry, Propagation, PropertyDesc, StateSlotDesc, Swap,
};
use crate::shape::{
    ClosestPoint, FeatureRule, MassProperties, ShapeDescriptor, ShapeEntry, ShapeQuery,
};
use crate::{BatchContext, BatchError, ContactInput, ContactOutput};

/// The root module every plugin library exports.
///
/// Fields after `models` were appended within sdk 0.3: each reads as
/// `None` (its accessor returns an `Option`) from a library built before
/// it existed, which the engine checks against the older root module of
/// [`legacy`].
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginModRef)))]
#[sabi(missing_field(panic))]
pub struct PluginMod {
    /// Name of the plugin library (its crate name).
    pub plugin_name: extern "C" fn() -> RStr<'static>,
    /// The sdk version the plugin was built with.
    pub sdk_version: extern "C" fn() -> RStr<'static>,
    /// The models the plugin provides (possibly none, since sdk 0.3.4).
    #[sabi(last_prefix_field)]
    pub models: extern "C" fn() -> RVec<ModelModRef>,
    /// The shapes the plugin provides (since sdk 0.3.4). A library built
    /// with an older sdk has no such field: `PluginModRef::shapes` then
    /// gives `None`, which means no shapes.
    #[sabi(missing_field(option))]
    pub shapes: extern "C" fn() -> RVec<ShapeModRef>,
}

impl RootModule for PluginModRef {
    declare_root_module_statics! {PluginModRef}
    const BASE_NAME: &'static str = "talus_plugin";
    const NAME: &'static str = "talus_plugin";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}

/// The root modules of earlier sdks of this minor, which the engine checks
/// a library against when it does not match the current [`PluginMod`].
///
/// abi_stable accepts a library whose prefix types have *more* fields than
/// the engine's (a newer plugin), but refuses one with fewer: its layout
/// check reports "too many fields" for the engine's side, even past the
/// `last_prefix_field`. So an engine whose root module has gained a field
/// checks an older library against the root module as that library's sdk
/// declared it, kept here, and then reads the library through the current
/// accessors, which find the appended fields missing (their accessors
/// return `None`). Every appended field adds the layout it extends here;
/// the same holds for the model and shape records, whose older forms would
/// be reached through an older root module of this list.
#[doc(hidden)]
pub mod legacy {
    use abi_stable::{
        declare_root_module_statics, library::RootModule, package_version_strings,
        sabi_types::VersionStrings, std_types::RStr, std_types::RVec, StableAbi,
    };

    use super::ModelModRef;

    /// The root module of sdk 0.3.0 to 0.3.3, before the shape list: the
    /// current [`super::PluginMod`] up to its `last_prefix_field`.
    #[repr(C)]
    #[derive(StableAbi)]
    #[sabi(kind(Prefix(prefix_ref = PluginModRef)))]
    #[sabi(missing_field(panic))]
    pub struct PluginMod {
        /// Name of the plugin library.
        pub plugin_name: extern "C" fn() -> RStr<'static>,
        /// The sdk version the plugin was built with.
        pub sdk_version: extern "C" fn() -> RStr<'static>,
        /// The models the plugin provides.
        #[sabi(last_prefix_field)]
        pub models: extern "C" fn() -> RVec<ModelModRef>,
    }

    impl RootModule for PluginModRef {
        declare_root_module_statics! {PluginModRef}
        const BASE_NAME: &'static str = "talus_plugin";
        const NAME: &'static str = "talus_plugin";
        const VERSION_STRINGS: VersionStrings = package_version_strings!();
    }
}

/// A property in exported form (see [`PropertyDesc`]).
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug)]
pub struct PropertyAbi {
    /// Name as written in configs.
    pub name: RStr<'static>,
    /// SI unit.
    pub unit: RStr<'static>,
    /// Default value, or none for a required property.
    pub default: ROption<f64>,
    /// Smallest allowed value.
    pub min: f64,
    /// Largest allowed value.
    pub max: f64,
    /// One-line description.
    pub doc: RStr<'static>,
}

/// A state slot in exported form (see [`StateSlotDesc`]).
///
/// Further per-slot attributes will not be added here (that would change
/// this layout) but as new model-record fields holding one value per slot.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug)]
pub struct StateSlotAbi {
    /// Column name.
    pub name: RStr<'static>,
    /// SI unit.
    pub unit: RStr<'static>,
    /// One-line description.
    pub doc: RStr<'static>,
    /// [`Propagation::code`] of the slot's propagation rule.
    pub propagation: u8,
    /// [`Swap::code`] of the slot's rule for swapped ends.
    pub swap: u8,
}

/// A model in exported form: its descriptor and entry points.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = ModelModRef)))]
#[sabi(missing_field(default))]
pub struct ModelMod {
    /// Model name.
    pub name: RStr<'static>,
    /// Model version (semver).
    pub version: RStr<'static>,
    /// One-paragraph description.
    pub summary: RStr<'static>,
    /// Reference to the literature, or empty.
    pub citation: RStr<'static>,
    /// Properties, in the order the model receives them.
    pub properties: RSlice<'static, PropertyAbi>,
    /// State slots, in storage order.
    pub state: RSlice<'static, StateSlotAbi>,
    /// [`Activity::code`] of the activity rule.
    pub activity: u32,
    /// How activity is decided, in words.
    pub activity_doc: RStr<'static>,
    /// Ids of the optional inputs the model reads ([`crate::inputs`]).
    pub inputs: RSlice<'static, u32>,
    /// The batch force-displacement call (a [`crate::BatchFn`]).
    pub batch: extern "C" fn(
        &BatchContext<'_>,
        RSlice<'_, ContactInput>,
        RSliceMut<'_, f64>,
        RSliceMut<'_, ContactOutput>,
    ) -> RResult<(), BatchError>,
    /// The custom state rule (a [`crate::StateFn`]).
    #[sabi(last_prefix_field)]
    pub custom_state: extern "C" fn(
        u32,
        RSlice<'_, f64>,
        RSlice<'_, f64>,
        RSliceMut<'_, f64>,
    ) -> RResult<(), RString>,
}

/// A shape in exported form: its descriptor and entry points (see
/// [`crate::ShapeModel`] for what each must do).
///
/// The function types are spelled out rather than named by their aliases
/// ([`crate::SupportFn`]...): abi_stable's derive records a function
/// pointer's layout from its written form.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = ShapeModRef)))]
#[sabi(missing_field(default))]
pub struct ShapeMod {
    /// Shape name.
    pub name: RStr<'static>,
    /// Shape version (semver).
    pub version: RStr<'static>,
    /// One-paragraph description.
    pub summary: RStr<'static>,
    /// Reference to the literature, or empty.
    pub citation: RStr<'static>,
    /// Properties, in the order the shape receives them.
    pub properties: RSlice<'static, PropertyAbi>,
    /// [`FeatureRule::code`] of the rule for contact state across features.
    pub features: u32,
    /// Mass properties from property values (a [`crate::MassFn`]).
    pub mass: extern "C" fn(RSlice<'_, f64>) -> RResult<MassProperties, RString>,
    /// The batched support function (a [`crate::SupportFn`]).
    pub support: extern "C" fn(
        &ShapeQuery<'_>,
        RSlice<'_, [f64; 3]>,
        RSliceMut<'_, [f64; 3]>,
    ) -> RResult<(), BatchError>,
    /// The exact closest-point routine (a [`crate::ClosestPointFn`]), or
    /// `RNone`: the engine then uses GJK on the support function.
    pub closest_point: ROption<
        extern "C" fn(
            &ShapeQuery<'_>,
            RSlice<'_, [f64; 3]>,
            RSliceMut<'_, ClosestPoint>,
        ) -> RResult<(), BatchError>,
    >,
    /// The feature routine (a [`crate::FeatureFn`]); given exactly when
    /// the rule is [`FeatureRule::ByModel`].
    #[sabi(last_prefix_field)]
    pub feature: ROption<
        extern "C" fn(
            &ShapeQuery<'_>,
            RSlice<'_, [f64; 3]>,
            RSliceMut<'_, u32>,
        ) -> RResult<(), BatchError>,
    >,
}

fn leak_str(text: &str) -> RStr<'static> {
    RStr::from_str(Box::leak(text.to_owned().into_boxed_str()))
}

fn leak_slice<T>(items: Vec<T>) -> RSlice<'static, T> {
    RSlice::from_slice(Box::leak(items.into_boxed_slice()))
}

fn properties_to_abi(properties: &[PropertyDesc]) -> RSlice<'static, PropertyAbi> {
    let list = properties
        .iter()
        .map(|p| PropertyAbi {
            name: leak_str(&p.name),
            unit: leak_str(&p.unit),
            default: p.default.into(),
            min: p.min,
            max: p.max,
            doc: leak_str(&p.doc),
        })
        .collect();
    leak_slice(list)
}

fn properties_from_abi(properties: RSlice<'_, PropertyAbi>) -> Vec<PropertyDesc> {
    properties
        .iter()
        .map(|p| PropertyDesc {
            name: p.name.to_string(),
            unit: p.unit.to_string(),
            default: p.default.into_option(),
            min: p.min,
            max: p.max,
            doc: p.doc.to_string(),
        })
        .collect()
}

impl ModelEntry {
    /// The exported record of this model. It is leaked: call it once per
    /// model and library ([`crate::define_plugin!`] does).
    pub fn to_abi(&self) -> ModelModRef {
        let d = &self.descriptor;
        let state = d
            .state
            .iter()
            .map(|s| StateSlotAbi {
                name: leak_str(&s.name),
                unit: leak_str(&s.unit),
                doc: leak_str(&s.doc),
                propagation: s.propagation.code(),
                swap: s.swap.code(),
            })
            .collect();
        ModelMod {
            name: leak_str(&d.name),
            version: leak_str(&d.version),
            summary: leak_str(&d.summary),
            citation: leak_str(&d.citation),
            properties: properties_to_abi(&d.properties),
            state: leak_slice(state),
            activity: d.activity.code(),
            activity_doc: leak_str(&d.activity_doc),
            inputs: leak_slice(d.inputs.clone()),
            batch: self.batch,
            custom_state: self.custom_state,
        }
        .leak_into_prefix()
    }

    /// Reads an exported model record back. Fields that the library's sdk
    /// did not have yet take their defaults. Errors name the first rule or
    /// activity code this sdk does not know (the library was built against
    /// a newer sdk).
    pub fn from_abi(record: ModelModRef) -> Result<ModelEntry, String> {
        let activity = Activity::from_code(record.activity()).ok_or_else(|| {
            format!(
                "it declares activity code {}, which this engine does not know; the plugin \
                 needs a newer talus",
                record.activity()
            )
        })?;
        let state = record
            .state()
            .iter()
            .map(|s| {
                let unknown = |what: &str, code: u8| {
                    format!(
                        "state slot {:?} declares {what} code {code}, which this engine does not \
                         know; the plugin needs a newer talus",
                        s.name.as_str()
                    )
                };
                Ok(StateSlotDesc {
                    name: s.name.to_string(),
                    unit: s.unit.to_string(),
                    doc: s.doc.to_string(),
                    propagation: Propagation::from_code(s.propagation)
                        .ok_or_else(|| unknown("propagation", s.propagation))?,
                    swap: Swap::from_code(s.swap).ok_or_else(|| unknown("swap", s.swap))?,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(ModelEntry {
            descriptor: ModelDescriptor {
                name: record.name().to_string(),
                version: record.version().to_string(),
                summary: record.summary().to_string(),
                citation: record.citation().to_string(),
                properties: properties_from_abi(record.properties()),
                state,
                activity,
                activity_doc: record.activity_doc().to_string(),
                inputs: record.inputs().to_vec(),
            },
            batch: record.batch(),
            custom_state: record.custom_state(),
        })
    }
}

impl ShapeEntry {
    /// The exported record of this shape. It is leaked: call it once per
    /// shape and library ([`crate::define_plugin!`] does).
    pub fn to_abi(&self) -> ShapeModRef {
        let d = &self.descriptor;
        ShapeMod {
            name: leak_str(&d.name),
            version: leak_str(&d.version),
            summary: leak_str(&d.summary),
            citation: leak_str(&d.citation),
            properties: properties_to_abi(&d.properties),
            features: d.features.code(),
            mass: self.mass,
            support: self.support,
            closest_point: self.closest_point.into(),
            feature: self.feature.into(),
        }
        .leak_into_prefix()
    }

    /// Reads an exported shape record back. Fields that the library's sdk
    /// did not have yet take their defaults. Errors name a feature-rule
    /// code this sdk does not know (the library was built against a newer
    /// sdk).
    pub fn from_abi(record: ShapeModRef) -> Result<ShapeEntry, String> {
        let features = FeatureRule::from_code(record.features()).ok_or_else(|| {
            format!(
                "it declares feature rule code {}, which this engine does not know; the plugin \
                 needs a newer talus",
                record.features()
            )
        })?;
        Ok(ShapeEntry {
            descriptor: ShapeDescriptor {
                name: record.name().to_string(),
                version: record.version().to_string(),
                summary: record.summary().to_string(),
                citation: record.citation().to_string(),
                properties: properties_from_abi(record.properties()),
                features,
            },
            mass: record.mass(),
            support: record.support(),
            closest_point: record.closest_point().into_option(),
            feature: record.feature().into_option(),
        })
    }
}

#[cfg(test)]
mod tests {
    use abi_stable::abi_stability::abi_checking::check_layout_compatibility;
    use abi_stable::StableAbi;

    use super::{legacy, PluginModRef};

    /// The rule of abi_stable that [`legacy`] answers: a library may have
    /// more root-module fields than the engine, not fewer.
    #[test]
    fn abi_stable_refuses_a_shorter_root_module() {
        let current = <PluginModRef as StableAbi>::LAYOUT;
        let older = <legacy::PluginModRef as StableAbi>::LAYOUT;
        // An engine of this sdk, a library of an older one: refused.
        let err = check_layout_compatibility(current, older).unwrap_err();
        assert!(err.to_string().contains("too many fields"), "{err}");
        // An engine of an older sdk, a library of this one: accepted; and
        // an engine of this sdk checks an older library against `legacy`.
        check_layout_compatibility(older, current).unwrap();
        check_layout_compatibility(older, older).unwrap();
        check_layout_compatibility(current, current).unwrap();
    }
}
