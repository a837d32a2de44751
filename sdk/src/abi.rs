//! The exported form of a plugin: the root module and one growable record
//! per model. Only these types (and those of the batch call) cross the
//! library boundary; abi_stable checks their layout when a library loads.
//!
//! Both records are prefix types: a later sdk may append fields after the
//! `last_prefix_field`, and then reads them from a library built before
//! they existed as their default (which must mean "what older sdks did").
//! Rules and activity travel as integer codes, not enums, so that a new
//! rule changes no layout either; an engine that meets a code it does not
//! know refuses the model when it reads it ([`ModelEntry::from_abi`]).
//!
//! A model record is built once per library and leaked: everything in it
//! is `'static` and `Copy` (strings as `RStr`, lists as `RSlice`), which is
//! what prefix-type accessors need, and the library is never unloaded.

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
use crate::{BatchContext, BatchError, ContactInput, ContactOutput};

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
    pub models: extern "C" fn() -> RVec<ModelModRef>,
}

impl RootModule for PluginModRef {
    declare_root_module_statics! {PluginModRef}
    const BASE_NAME: &'static str = "talus_plugin";
    const NAME: &'static str = "talus_plugin";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
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

fn leak_str(text: &str) -> RStr<'static> {
    RStr::from_str(Box::leak(text.to_owned().into_boxed_str()))
}

fn leak_slice<T>(items: Vec<T>) -> RSlice<'static, T> {
    RSlice::from_slice(Box::leak(items.into_boxed_slice()))
}

impl ModelEntry {
    /// The exported record of this model. It is leaked: call it once per
    /// model and library ([`crate::define_plugin!`] does).
    pub fn to_abi(&self) -> ModelModRef {
        let d = &self.descriptor;
        let properties = d
            .properties
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
            properties: leak_slice(properties),
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
        let properties = record
            .properties()
            .iter()
            .map(|p| PropertyDesc {
                name: p.name.to_string(),
                unit: p.unit.to_string(),
                default: p.default.into_option(),
                min: p.min,
                max: p.max,
                doc: p.doc.to_string(),
            })
            .collect();
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
                properties,
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
