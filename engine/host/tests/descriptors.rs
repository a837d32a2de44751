//! Descriptor validation at registration, the replacement rule and the
//! `describe` text, with plugins embedded in this test binary.

use talus_host::{describe, HostErrorKind, ModelRegistry, Origin};
use talus_sdk::{
    inputs, Activity, Contact, ContactModel, ContactOutput, ModelDescriptor, Propagation,
    PropertyDesc, StateSlotDesc,
};

/// A model whose descriptor is the valid `base` one with mutation `K`
/// applied (0 leaves it valid).
struct Mutant<const K: usize>;

fn base() -> ModelDescriptor {
    ModelDescriptor::new("mutant", "0.3.1")
        .summary("a test model")
        .property(PropertyDesc::new("k", "N/m", "stiffness").min(0.0))
        .property(
            PropertyDesc::new("ratio", "-", "a ratio")
                .default(0.5)
                .range(0.0, 1.0),
        )
        .state(StateSlotDesc::new("force", "N", "a force").propagation(Propagation::None))
        .activity(Activity::Overlap, "active while overlapping")
        .input(inputs::CONTACT_AREA)
}

impl<const K: usize> ContactModel for Mutant<K> {
    fn descriptor() -> ModelDescriptor {
        let mut d = base();
        match K {
            1 => d.name = "Mutant".into(),
            2 => d.version = "1.0".into(),
            3 => d = d.property(PropertyDesc::new("k", "N/m", "again").range(0.0, 1.0)),
            4 => d.properties[1].default = Some(2.0),
            5 => d.properties[1].min = 3.0,
            6 => d.properties[0].max = f64::NAN,
            7 => d = d.state(StateSlotDesc::new("force", "N", "again")),
            8 => d = d.state(StateSlotDesc::new("Bad-name", "N", "bad")),
            10 => d.properties[0].unit = "".into(),
            11 => d = d.activity(Activity::Custom, ""),
            12 => d = d.input(999),
            13 => d = d.input(inputs::CONTACT_AREA),
            _ => {}
        }
        d
    }

    fn prepare(_props: &[f64], _dt: f64) -> Self {
        Mutant
    }

    fn force_displacement(&mut self, _: &Contact<'_>, _: &mut [f64]) -> ContactOutput {
        ContactOutput::default()
    }
}

/// A second valid model, to test replacement by name.
struct Other;

impl ContactModel for Other {
    fn descriptor() -> ModelDescriptor {
        ModelDescriptor {
            name: "other".into(),
            ..base()
        }
    }

    fn prepare(_props: &[f64], _dt: f64) -> Self {
        Other
    }

    fn force_displacement(&mut self, _: &Contact<'_>, _: &mut [f64]) -> ContactOutput {
        ContactOutput::default()
    }
}

macro_rules! plugins {
    ($($module:ident: $plugin:literal => [$($model:ty),+];)+) => {
        $(mod $module {
            #[allow(unused_imports)]
            use super::*;
            talus_sdk::define_plugin!($plugin, [$($model),+]);
        })+
    };
}

plugins! {
    valid: "valid" => [Mutant<0>, Other];
    again: "again" => [Mutant<0>];
    twice: "twice" => [Mutant<0>, Mutant<0>];
    m1: "m1" => [Mutant<1>];
    m2: "m2" => [Mutant<2>];
    m3: "m3" => [Mutant<3>];
    m4: "m4" => [Mutant<4>];
    m5: "m5" => [Mutant<5>];
    m6: "m6" => [Mutant<6>];
    m7: "m7" => [Mutant<7>];
    m8: "m8" => [Mutant<8>];
    m10: "m10" => [Mutant<10>];
    m11: "m11" => [Mutant<11>];
    m12: "my-plugin" => [Mutant<12>];
    m13: "m13" => [Mutant<13>];
}

#[test]
fn valid_descriptors_register_in_order() {
    let mut registry = ModelRegistry::new();
    registry.add_embedded(valid::root_module()).unwrap();
    let names: Vec<&str> = registry.models().iter().map(|m| m.name()).collect();
    assert_eq!(names, ["mutant", "other"]);
    let m = registry.get("mutant").unwrap();
    assert_eq!(m.plugin, "valid");
    assert_eq!(m.origin, Origin::Embedded);
    assert_eq!((m.n_props(), m.n_state()), (2, 1));
    assert_eq!(m.entry.descriptor, base());
    let text = describe(m);
    assert!(text.contains("inputs:      contact_area (m^2)"), "{text}");
    assert!(text.contains("force  N     none  keep"), "{text}");
}

/// A model that asks for an input id this engine does not know is refused
/// with one line naming the plugin, the model and the input.
#[test]
fn an_unknown_input_is_refused_in_one_line() {
    let err = ModelRegistry::new()
        .add_embedded(m12::root_module())
        .unwrap_err();
    let message = err.to_string();
    assert_eq!(message.lines().count(), 1, "{message}");
    for needle in [
        "\"my-plugin\"",
        "\"mutant\"",
        "input id 999",
        talus_sdk::SDK_VERSION,
    ] {
        assert!(message.contains(needle), "missing {needle} in {message}");
    }
}

#[test]
fn a_later_plugin_replaces_a_model_of_the_same_name_in_place() {
    let mut registry = ModelRegistry::new();
    registry.add_embedded(valid::root_module()).unwrap();
    registry.add_embedded(again::root_module()).unwrap();
    let names: Vec<&str> = registry.models().iter().map(|m| m.name()).collect();
    assert_eq!(names, ["mutant", "other"]);
    assert_eq!(registry.get("mutant").unwrap().plugin, "again");
    assert_eq!(registry.get("other").unwrap().plugin, "valid");
}

#[test]
fn invalid_descriptors_are_refused() {
    let cases = [
        (m1::root_module(), "not snake_case"),
        (m2::root_module(), "major.minor.patch"),
        (m3::root_module(), "declared twice"),
        (m4::root_module(), "outside its range"),
        (m5::root_module(), "invalid range"),
        (m6::root_module(), "invalid range"),
        (m7::root_module(), "declared twice"),
        (m8::root_module(), "not snake_case"),
        (m10::root_module(), "no unit"),
        (m11::root_module(), "activity_doc"),
        (m12::root_module(), "asks for input id 999"),
        (m13::root_module(), "input contact_area is asked for twice"),
        (twice::root_module(), "declares this model twice"),
    ];
    for (root, expected) in cases {
        let mut registry = ModelRegistry::new();
        let Err(err) = registry.add_embedded(root) else {
            panic!("a descriptor breaking {expected:?} was accepted");
        };
        assert!(
            matches!(err.kind(), HostErrorKind::InvalidDescriptor { .. }),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(
            message.contains(expected),
            "{message} (expected {expected:?})"
        );
        assert!(message.contains("embedded"), "{message}");
        assert!(registry.models().is_empty(), "nothing registered on error");
    }
}

#[test]
fn describe_lists_everything_a_user_needs() {
    let mut registry = ModelRegistry::new();
    registry
        .add_embedded(talus_plugin_linear::root_module())
        .unwrap();
    let text = describe(registry.get("linear").unwrap());
    for needle in [
        "linear 0.1.0",
        "plugin:      talus-plugin-linear",
        "origin:      embedded",
        "dp_nratio",
        "[0, 1]",
        "[0, inf)",
        "N/m",
        "fn_linear",
        "e_dashpot",
        "activity:    overlap:",
        "wall  swap",
        "fs_s       N     copy  negate",
        "fs_t       N     copy  keep",
        "Cundall",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    println!("{text}");
}

mod newer {
    //! A plugin whose record uses a rule code of a newer sdk (built by
    //! hand, since this sdk cannot express it).
    use talus_sdk::abi::{ModelMod, PluginMod, StateSlotAbi};
    use talus_sdk::abi_stable::prefix_type::PrefixTypeTrait;
    use talus_sdk::abi_stable::std_types::{RSlice, RStr, RVec};
    use talus_sdk::{ModelModRef, PluginModRef, ShapeModRef};

    extern "C" fn name() -> RStr<'static> {
        RStr::from_str("newer-plugin")
    }

    static SLOTS: [StateSlotAbi; 1] = [StateSlotAbi {
        name: RStr::from_str("spin_memory"),
        unit: RStr::from_str("-"),
        doc: RStr::from_str(""),
        propagation: 1,
        swap: 7,
    }];

    extern "C" fn models() -> RVec<ModelModRef> {
        let valid = talus_sdk::entry::<super::Mutant<0>>();
        let record = ModelMod {
            name: RStr::from_str("from_the_future"),
            version: RStr::from_str("1.0.0"),
            summary: RStr::from_str(""),
            citation: RStr::from_str(""),
            properties: RSlice::from_slice(&[]),
            state: RSlice::from_slice(&SLOTS),
            activity: 0,
            activity_doc: RStr::from_str(""),
            inputs: RSlice::from_slice(&[]),
            batch: valid.batch,
            custom_state: valid.custom_state,
        };
        RVec::from(vec![record.leak_into_prefix()])
    }

    extern "C" fn shapes() -> RVec<ShapeModRef> {
        RVec::new()
    }

    pub fn root_module() -> PluginModRef {
        PluginMod {
            plugin_name: name,
            sdk_version: talus_sdk::sdk_version,
            models,
            shapes,
        }
        .leak_into_prefix()
    }
}

#[test]
fn a_rule_code_of_a_newer_sdk_is_refused_in_one_line() {
    let err = ModelRegistry::new()
        .add_embedded(newer::root_module())
        .unwrap_err();
    assert!(
        matches!(err.kind(), HostErrorKind::InvalidDescriptor { .. }),
        "{err:?}"
    );
    let message = err.to_string();
    assert_eq!(message.lines().count(), 1, "{message}");
    for needle in [
        "\"from_the_future\"",
        "\"newer-plugin\"",
        "\"spin_memory\" declares swap code 7",
        "needs a newer talus",
    ] {
        assert!(message.contains(needle), "missing {needle} in {message}");
    }
}
