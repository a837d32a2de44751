//! Descriptor validation at registration, the replacement rule and the
//! `describe` text, with plugins embedded in this test binary.

use talus_host::{describe, HostErrorKind, ModelRegistry, Origin};
use talus_sdk::{
    property, state_slot, Activity, ContactInput, ContactModel, ContactOutput, ModelDescriptor,
    Propagation,
};

/// A model whose descriptor is the valid `base` one with mutation `K`
/// applied (0 leaves it valid).
struct Mutant<const K: usize>;

fn base() -> ModelDescriptor {
    ModelDescriptor {
        name: "mutant".into(),
        version: "0.3.1".into(),
        summary: "a test model".into(),
        citation: "".into(),
        properties: vec![
            property("k", "N/m", None, (0.0, f64::INFINITY), "stiffness"),
            property("ratio", "-", Some(0.5), (0.0, 1.0), "a ratio"),
        ]
        .into(),
        state: vec![state_slot("force", "N", "a force")].into(),
        activity: Activity::Overlap,
        activity_doc: "active while overlapping".into(),
        propagation: Propagation::None,
    }
}

impl<const K: usize> ContactModel for Mutant<K> {
    fn descriptor() -> ModelDescriptor {
        let mut d = base();
        match K {
            1 => d.name = "Mutant".into(),
            2 => d.version = "1.0".into(),
            3 => d
                .properties
                .push(property("k", "N/m", None, (0.0, 1.0), "again")),
            4 => d.properties[1].default = Some(2.0).into(),
            5 => d.properties[1].min = 3.0,
            6 => d.properties[0].max = f64::NAN,
            7 => d.state.push(state_slot("force", "N", "again")),
            8 => d.state.push(state_slot("Bad-name", "N", "bad")),
            10 => d.properties[0].unit = "".into(),
            11 => {
                d.activity = Activity::Custom;
                d.activity_doc = "".into();
            }
            _ => {}
        }
        d
    }

    fn from_props(_props: &[f64]) -> Self {
        Mutant
    }

    fn force_displacement(
        &self,
        _dt: f64,
        _input: &ContactInput,
        _state: &mut [f64],
        _out: &mut ContactOutput,
    ) {
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

    fn from_props(_props: &[f64]) -> Self {
        Other
    }

    fn force_displacement(&self, _: f64, _: &ContactInput, _: &mut [f64], _: &mut ContactOutput) {}
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
        "propagation: copy",
        "Cundall",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    println!("{text}");
}
