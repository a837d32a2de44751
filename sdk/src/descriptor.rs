//! What a model declares about itself: the descriptor, with a builder and
//! defaults, and the rules it names.
//!
//! These are plain Rust types (`String`, `Vec`, enums). They never cross
//! the library boundary as they are: [`crate::abi`] turns a descriptor
//! into the growable, abi_stable-checked form a plugin exports, and reads
//! that form back on the engine side. So a field or a rule added to a
//! later sdk costs built plugins nothing; see the crate docs,
//! "Versioning".

use crate::{BatchFn, StateFn};

/// How a model decides that a contact carries force.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Activity {
    /// Active exactly while the pieces overlap (`gap < 0`). Declaring it
    /// promises that, once the model has been called for an open contact
    /// (`gap > 0`) and answered inactive, further calls while the contact
    /// stays open would give the same answer: zero force, the same status
    /// and stiffness, and no state change. The engine then stops calling
    /// the model for that contact until it closes (the driver skips such
    /// contacts, flagged [`crate::flags::IDLE`]), and skips the frame
    /// update and increments of open contacts.
    #[default]
    Overlap,
    /// The model decides from its state (e.g. a bond active in tension);
    /// the descriptor's `activity_doc` says how.
    Custom,
}

impl Activity {
    /// Code of the rule in the exported descriptor.
    pub const fn code(self) -> u32 {
        match self {
            Activity::Overlap => 0,
            Activity::Custom => 1,
        }
    }

    /// The rule of a code, or `None` for a code this sdk does not know.
    pub const fn from_code(code: u32) -> Option<Activity> {
        match code {
            0 => Some(Activity::Overlap),
            1 => Some(Activity::Custom),
            _ => None,
        }
    }
}

/// What happens to one state slot when the force-carrying wall contact of
/// a ball moves from one facet to another, or when contacts merge into a
/// proximity contact: the old contact's value (the source) meets the new
/// contact's (the target).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Propagation {
    /// The slot is not carried over: the target keeps its own value.
    None,
    /// A target that did not carry force last step takes the source's
    /// value (the linear model's shear force survives a facet crossing); a
    /// target that did keeps its own.
    #[default]
    Copy,
    /// The source's value is added to the target's (a bond's forces and
    /// moments).
    Add,
    /// The model's [`ContactModel::custom_state`](crate::ContactModel::custom_state)
    /// decides.
    Custom,
}

impl Propagation {
    /// Code of the rule in the exported descriptor.
    pub const fn code(self) -> u8 {
        match self {
            Propagation::None => 0,
            Propagation::Copy => 1,
            Propagation::Add => 2,
            Propagation::Custom => 3,
        }
    }

    /// The rule of a code, or `None` for a code this sdk does not know.
    pub const fn from_code(code: u8) -> Option<Propagation> {
        match code {
            0 => Some(Propagation::None),
            1 => Some(Propagation::Copy),
            2 => Some(Propagation::Add),
            3 => Some(Propagation::Custom),
            _ => None,
        }
    }
}

/// What happens to one state slot when the two ends of a contact swap
/// (end1 becomes end2).
///
/// The normal must then flip. The engine turns the contact frame half a
/// turn about `s`: `n` and `t` change sign, `s` stays, and the frame stays
/// right-handed. So a vector that belongs to end2 (a force or moment on
/// end2, end2's motion relative to end1), which becomes its opposite,
/// keeps its `n` and `t` components and changes the sign of its `s`
/// component; a vector fixed in space does the reverse.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Swap {
    /// The value stays: scalars such as energies or a slip flag, and the
    /// `n` and `t` components of a force on end2.
    #[default]
    Keep,
    /// The value changes sign: the `s` component of a force on end2, the
    /// `n` and `t` components of a vector fixed in space.
    Negate,
    /// The model's [`ContactModel::custom_state`](crate::ContactModel::custom_state)
    /// decides.
    Custom,
}

impl Swap {
    /// Code of the rule in the exported descriptor.
    pub const fn code(self) -> u8 {
        match self {
            Swap::Keep => 0,
            Swap::Negate => 1,
            Swap::Custom => 2,
        }
    }

    /// The rule of a code, or `None` for a code this sdk does not know.
    pub const fn from_code(code: u8) -> Option<Swap> {
        match code {
            0 => Some(Swap::Keep),
            1 => Some(Swap::Negate),
            2 => Some(Swap::Custom),
            _ => None,
        }
    }
}

/// Why the engine calls a model's custom state rule (the `event` of a
/// [`StateFn`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateEvent {
    /// State moves to a contact that did not carry force last step: it
    /// takes over from the source.
    TakeOver,
    /// State moves to a contact that carried force last step too: it
    /// absorbs the source.
    Merge,
    /// The ends of the contact swapped: `from` is the state before the
    /// swap, `to` the same contact's state after it.
    Swap,
}

impl StateEvent {
    /// Code of the event on the ABI.
    pub const fn code(self) -> u32 {
        match self {
            StateEvent::TakeOver => 1,
            StateEvent::Merge => 2,
            StateEvent::Swap => 3,
        }
    }

    /// The event of a code, or `None` for a code this sdk does not know.
    pub const fn from_code(code: u32) -> Option<StateEvent> {
        match code {
            1 => Some(StateEvent::TakeOver),
            2 => Some(StateEvent::Merge),
            3 => Some(StateEvent::Swap),
            _ => None,
        }
    }
}

/// One property a model takes, with its unit, default and allowed range.
///
/// [`PropertyDesc::new`] gives a required property with an unbounded
/// range; the builder methods change that.
#[derive(Clone, Debug, PartialEq)]
pub struct PropertyDesc {
    /// Name as written in configs (snake case).
    pub name: String,
    /// SI unit, e.g. "N/m"; "-" for dimensionless.
    pub unit: String,
    /// Default value; `None` makes the property required.
    pub default: Option<f64>,
    /// Smallest allowed value (inclusive).
    pub min: f64,
    /// Largest allowed value (inclusive).
    pub max: f64,
    /// One-line description.
    pub doc: String,
}

impl PropertyDesc {
    /// A required property with any finite value allowed.
    pub fn new(name: &str, unit: &str, doc: &str) -> Self {
        PropertyDesc {
            name: name.into(),
            unit: unit.into(),
            default: None,
            min: f64::NEG_INFINITY,
            max: f64::INFINITY,
            doc: doc.into(),
        }
    }

    /// Makes the property optional with default `value`.
    pub fn default(mut self, value: f64) -> Self {
        self.default = Some(value);
        self
    }

    /// Sets the smallest allowed value (inclusive).
    pub fn min(mut self, min: f64) -> Self {
        self.min = min;
        self
    }

    /// Sets the largest allowed value (inclusive).
    pub fn max(mut self, max: f64) -> Self {
        self.max = max;
        self
    }

    /// Sets the allowed range `[min, max]` (inclusive).
    pub fn range(self, min: f64, max: f64) -> Self {
        self.min(min).max(max)
    }
}

/// One per-contact state slot; its name becomes an output column.
///
/// [`StateSlotDesc::new`] gives the rules [`Propagation::Copy`] and
/// [`Swap::Keep`]; the builder methods change them.
#[derive(Clone, Debug, PartialEq)]
pub struct StateSlotDesc {
    /// Column name (snake case).
    pub name: String,
    /// SI unit; "-" for dimensionless.
    pub unit: String,
    /// One-line description.
    pub doc: String,
    /// What the slot does when state moves between wall contacts.
    pub propagation: Propagation,
    /// What the slot does when the ends of the contact swap.
    pub swap: Swap,
}

impl StateSlotDesc {
    /// A slot that is copied between wall contacts and kept on a swap.
    pub fn new(name: &str, unit: &str, doc: &str) -> Self {
        StateSlotDesc {
            name: name.into(),
            unit: unit.into(),
            doc: doc.into(),
            propagation: Propagation::Copy,
            swap: Swap::Keep,
        }
    }

    /// Sets the propagation rule.
    pub fn propagation(mut self, rule: Propagation) -> Self {
        self.propagation = rule;
        self
    }

    /// Sets the rule for swapped ends.
    pub fn swap(mut self, rule: Swap) -> Self {
        self.swap = rule;
        self
    }
}

/// Everything the engine and users need to know about a model.
///
/// Built with [`ModelDescriptor::new`] and the builder methods; the fields
/// are public, so a descriptor can be written out in full as well.
///
/// ```
/// use talus_sdk::{inputs, ModelDescriptor, PropertyDesc, StateSlotDesc};
///
/// let d = ModelDescriptor::new("volume_spring", "0.1.0")
///     .summary("Fn = kv * overlap volume.")
///     .property(PropertyDesc::new("kv", "N/m^3", "volume stiffness").min(0.0))
///     .state(StateSlotDesc::new("e_strain", "J", "stored energy"))
///     .input(inputs::OVERLAP_VOLUME);
/// assert_eq!(d.properties[0].default, None);
/// assert_eq!(d.inputs, [inputs::OVERLAP_VOLUME]);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelDescriptor {
    /// Model name used in configs, e.g. "linear".
    pub name: String,
    /// Model version (semver).
    pub version: String,
    /// One-paragraph description.
    pub summary: String,
    /// Reference to the literature, or empty.
    pub citation: String,
    /// Properties in the order the model receives them.
    pub properties: Vec<PropertyDesc>,
    /// Per-contact state slots in storage order.
    pub state: Vec<StateSlotDesc>,
    /// Activity rule (default [`Activity::Overlap`]).
    pub activity: Activity,
    /// How activity is decided, in words (required for
    /// [`Activity::Custom`]).
    pub activity_doc: String,
    /// The optional inputs the model reads (ids of [`crate::inputs`]), in
    /// the order the model likes; each is given once.
    pub inputs: Vec<u32>,
}

impl ModelDescriptor {
    /// A model with no properties, no state and no optional inputs,
    /// active while its pieces overlap.
    pub fn new(name: &str, version: &str) -> Self {
        ModelDescriptor {
            name: name.into(),
            version: version.into(),
            ..ModelDescriptor::default()
        }
    }

    /// Sets the one-paragraph summary.
    pub fn summary(mut self, text: &str) -> Self {
        self.summary = text.into();
        self
    }

    /// Sets the citation.
    pub fn citation(mut self, text: &str) -> Self {
        self.citation = text.into();
        self
    }

    /// Appends a property.
    pub fn property(mut self, property: PropertyDesc) -> Self {
        self.properties.push(property);
        self
    }

    /// Appends a state slot.
    pub fn state(mut self, slot: StateSlotDesc) -> Self {
        self.state.push(slot);
        self
    }

    /// Sets the activity rule and says in words how it works.
    pub fn activity(mut self, rule: Activity, doc: &str) -> Self {
        self.activity = rule;
        self.activity_doc = doc.into();
        self
    }

    /// Asks for an optional input (an id of [`crate::inputs`]).
    pub fn input(mut self, id: u32) -> Self {
        self.inputs.push(id);
        self
    }
}

/// A model as the engine uses it: its descriptor and its two entry points.
///
/// A plugin builds it with [`crate::entry`]; the engine gets it back from
/// a loaded library with [`ModelEntry::from_abi`](crate::ModelEntry::from_abi).
#[derive(Clone, Debug)]
pub struct ModelEntry {
    /// The model's declaration.
    pub descriptor: ModelDescriptor,
    /// The force-displacement call over a batch of contacts.
    pub batch: BatchFn,
    /// The model's custom state rule (see [`StateFn`]).
    pub custom_state: StateFn,
}
