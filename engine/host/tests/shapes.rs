//! Shape plugins: the superquadric plugin loaded from disk as a third
//! party's would be, the fixtures that panic or were built against another
//! sdk, the rules checked at registration, and `describe_shape`.

use std::f64::consts::PI;

use talus_host::fixtures::{build_fixture, build_plugin_cdylib};
use talus_host::{describe_shape, HostErrorKind, ModelRegistry, Origin};
use talus_sdk::{
    ClosestPoint, Contact, ContactModel, ContactOutput, FeatureRule, MassProperties,
    ModelDescriptor, PropertyDesc, ShapeDescriptor, ShapeModel, SDK_VERSION,
};

fn superquadric() -> (ModelRegistry, std::path::PathBuf) {
    let lib = build_plugin_cdylib("talus-plugin-superquadric");
    let mut registry = ModelRegistry::new();
    assert_eq!(registry.load_path(&lib).unwrap(), 1);
    (registry, lib)
}

#[test]
fn the_superquadric_library_loads_and_lists_its_shape() {
    let (registry, lib) = superquadric();
    assert!(registry.models().is_empty());
    let names: Vec<&str> = registry.shapes().iter().map(|s| s.name()).collect();
    assert_eq!(names, ["superellipsoid"]);
    let shape = registry.shape("superellipsoid").unwrap();
    assert_eq!(shape.plugin, "talus-plugin-superquadric");
    assert_eq!(shape.origin, Origin::Library(lib.clone()));
    assert_eq!(shape.sdk_version, SDK_VERSION);
    assert_eq!(shape.n_props(), 5);
    assert!(shape.has_closest_point());
    assert_eq!(shape.entry.descriptor.features, FeatureRule::Smooth);

    let text = describe_shape(shape);
    println!("{text}");
    for needle in [
        "superellipsoid 0.1.0 (shape)\n",
        "plugin:      talus-plugin-superquadric",
        &format!("sdk:         {SDK_VERSION}"),
        &lib.display().to_string(),
        "features:    smooth",
        "exact:       closest point",
        "Jaklic",
        "a     m     required  [0, inf)",
        "n1    -     2         [2, 10]",
        "n2    -     2         [2, 10]",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
}

#[test]
fn the_loaded_superellipsoid_answers_through_the_abi() {
    let (registry, _) = superquadric();
    let shape = registry.shape("superellipsoid").unwrap();
    // A sphere of radius 0.5 and an ellipsoid, as two property sets.
    let sets = [0.5, 0.5, 0.5, 2.0, 2.0, 1.0, 2.0, 3.0, 2.0, 2.0];
    let mass = shape.mass_properties(&sets[..5]).unwrap();
    let volume = 4.0 / 3.0 * PI * 0.125;
    let moment = 0.4 * volume * 0.25;
    assert!((mass.volume - volume).abs() <= 1e-12 * volume, "{mass:?}");
    for k in 0..3 {
        assert!(
            (mass.inertia[k][k] - moment).abs() <= 1e-12 * moment,
            "{mass:?}"
        );
    }
    assert_eq!((mass.centroid, mass.bounding_radius), ([0.0; 3], 0.5));
    assert_eq!(
        shape.mass_properties(&sets[5..]).unwrap().bounding_radius,
        3.0
    );

    let directions = [[1.0, 2.0, 2.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]];
    let mut points = [[0.0; 3]; 3];
    shape
        .support(&sets, &[0, 1, 1], &directions, &mut points)
        .unwrap();
    let sphere = [1.0, 2.0, 2.0].map(|v| 0.5 * v / 3.0);
    for k in 0..3 {
        assert!((points[0][k] - sphere[k]).abs() < 1e-15, "{points:?}");
    }
    assert_eq!(points[1..], [[0.0, 0.0, -3.0], [0.0, 2.0, 0.0]]);

    let queries = [[0.0, 3.0, 4.0], [0.1, 0.0, 0.0]];
    let mut closest = [ClosestPoint::default(); 2];
    shape
        .closest_points(&sets, &[], &queries, &mut closest)
        .unwrap();
    assert!((closest[0].distance - 4.5).abs() < 1e-14, "{closest:?}");
    assert!((closest[1].distance + 0.4).abs() < 1e-14, "{closest:?}");
    assert_eq!(closest[1].normal, [1.0, 0.0, 0.0]);

    let mut features = [7; 2];
    shape.features(&sets, &[], &queries, &mut features).unwrap();
    assert_eq!(features, [0, 0]);
    // Smooth: the engine never asks for features.
    assert!(!shape.has_features());
}

#[test]
fn bad_values_and_bad_queries_are_errors_naming_the_shape() {
    let (registry, _) = superquadric();
    let shape = registry.shape("superellipsoid").unwrap();
    let err = shape
        .mass_properties(&[0.0, 1.0, 1.0, 2.0, 2.0])
        .unwrap_err();
    let message = err.to_string();
    assert_eq!(err.index, None);
    for needle in [
        "\"superellipsoid\"",
        "talus-plugin-superquadric",
        "semi-axis a = 0",
    ] {
        assert!(message.contains(needle), "missing {needle} in {message}");
    }
    let err = shape.mass_properties(&[1.0, 1.0]).unwrap_err();
    assert!(
        err.message.contains("2 property values given, 5 declared"),
        "{err}"
    );

    let mut points = [[0.0; 3]; 2];
    let good = [1.0, 1.0, 1.0, 4.0, 4.0];
    let err = shape
        .support(
            &good,
            &[],
            &[[1.0, 0.0, 0.0], [0.0, f64::NAN, 0.0]],
            &mut points,
        )
        .unwrap_err();
    assert_eq!(err.index, Some(1));
    assert!(err.to_string().contains("query 1"), "{err}");
    let err = shape
        .support(&good, &[0], &[[1.0, 0.0, 0.0]; 2], &mut points)
        .unwrap_err();
    assert!(
        err.message.contains("2 queries but 1 property sets"),
        "{err}"
    );
}

#[test]
fn a_panicking_support_function_names_the_shape_and_the_query() {
    let lib = build_fixture("shape_panicking");
    let mut registry = ModelRegistry::new();
    assert_eq!(registry.load_path(&lib).unwrap(), 1);
    let shape = registry.shape("test_panic_ball").unwrap();
    let directions = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-1.0, 0.5, 0.0]];
    let mut points = [[0.0; 3]; 3];
    let err = shape
        .support(&[2.0], &[], &directions, &mut points)
        .unwrap_err();
    let message = err.to_string();
    println!("{message}");
    assert_eq!(err.index, Some(2));
    for needle in [
        "shape \"test_panic_ball\"",
        "talus-fixture-shape-panicking",
        "query 2",
        "panicked: direction [-1.0, 0.5, 0.0] points towards -x",
    ] {
        assert!(message.contains(needle), "missing {needle} in {message}");
    }
    // The engine survived, and the shape still works.
    shape
        .support(&[2.0], &[], &directions[..2], &mut points[..2])
        .unwrap();
    assert_eq!(points[..2], [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]]);
    assert!(!shape.has_closest_point());
    let err = shape
        .closest_points(&[2.0], &[], &[[0.0; 3]], &mut [ClosestPoint::default()])
        .unwrap_err();
    assert!(err.message.contains("no closest-point routine"), "{err}");
}

#[test]
fn a_shape_plugin_of_another_sdk_is_refused_in_one_line() {
    let lib = build_fixture("shape_new_sdk");
    let err = ModelRegistry::new().load_path(&lib).unwrap_err();
    let message = err.to_string();
    println!("{message}");
    assert!(
        matches!(err.kind(), HostErrorKind::VersionMismatch { engine, library, .. }
            if engine == SDK_VERSION && library == "0.4.0"),
        "{err:?}"
    );
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains(&lib.display().to_string()), "{message}");
    assert_eq!(err.path(), Some(lib.as_path()));
}

/// An embedded shape whose descriptor is a valid one with mutation `K`
/// applied (0 leaves it valid).
struct Mutant<const K: usize>;

impl<const K: usize> ShapeModel for Mutant<K> {
    fn descriptor() -> ShapeDescriptor {
        let mut d = ShapeDescriptor::new("blob", "0.2.0")
            .summary("a test shape")
            .property(PropertyDesc::new("r", "m", "radius").min(0.0));
        match K {
            1 => d.name = "Blob".into(),
            2 => d.version = "2".into(),
            3 => d = d.property(PropertyDesc::new("r", "m", "again")),
            4 => d.properties[0].unit = String::new(),
            5 => d.features = FeatureRule::ByModel,
            _ => {}
        }
        d
    }
    fn from_properties(props: &[f64]) -> Result<Self, String> {
        let _ = props;
        Ok(Mutant)
    }
    fn mass_properties(&self) -> MassProperties {
        // Broken on purpose: a volume the bounding sphere cannot hold.
        MassProperties {
            volume: 10.0,
            centroid: [0.0; 3],
            inertia: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            bounding_radius: 1.0,
        }
    }
    fn support(&self, d: [f64; 3]) -> [f64; 3] {
        d
    }
}

/// A model with the name of a shape: models and shapes do not clash.
struct Blob;

impl ContactModel for Blob {
    fn descriptor() -> ModelDescriptor {
        ModelDescriptor::new("blob", "0.1.0")
    }
    fn prepare(_: &[f64], _: f64) -> Self {
        Blob
    }
    fn force_displacement(&mut self, _: &Contact<'_>, _: &mut [f64]) -> ContactOutput {
        ContactOutput::default()
    }
}

macro_rules! shape_plugins {
    ($($module:ident: $plugin:literal => [$($shape:ty),+];)+) => {
        $(mod $module {
            #[allow(unused_imports)]
            use super::*;
            talus_sdk::define_plugin!($plugin, shapes: [$($shape),+]);
        })+
    };
}

shape_plugins! {
    valid: "valid" => [Mutant<0>];
    again: "again" => [Mutant<0>];
    twice: "twice" => [Mutant<0>, Mutant<0>];
    s1: "s1" => [Mutant<1>];
    s2: "s2" => [Mutant<2>];
    s3: "s3" => [Mutant<3>];
    s4: "s4" => [Mutant<4>];
}

mod by_model_without_routine {
    //! A record whose rule is by_model but has no feature routine (the
    //! sdk's builder always gives one; a hand-made record may not).
    use talus_sdk::abi::PluginMod;
    use talus_sdk::abi_stable::prefix_type::PrefixTypeTrait;
    use talus_sdk::abi_stable::std_types::{RStr, RVec};
    use talus_sdk::{ModelModRef, PluginModRef, ShapeModRef};

    extern "C" fn name() -> RStr<'static> {
        RStr::from_str("no-routine")
    }

    extern "C" fn models() -> RVec<ModelModRef> {
        RVec::new()
    }

    extern "C" fn shapes() -> RVec<ShapeModRef> {
        let mut entry = talus_sdk::shape_entry::<super::Mutant<5>>();
        entry.feature = None;
        RVec::from(vec![entry.to_abi()])
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

mod both {
    use super::*;
    talus_sdk::define_plugin!("both", models: [Blob], shapes: [Mutant<0>]);
}

#[test]
fn shape_descriptors_are_checked_at_registration() {
    let cases = [
        (s1::root_module(), "shape name \"Blob\" is not snake_case"),
        (s2::root_module(), "major.minor.patch"),
        (s3::root_module(), "property \"r\" is declared twice"),
        (s4::root_module(), "no unit"),
        (twice::root_module(), "declares this shape twice"),
        (
            by_model_without_routine::root_module(),
            "gives no feature routine",
        ),
    ];
    for (root, expected) in cases {
        let mut registry = ModelRegistry::new();
        let Err(err) = registry.add_embedded(root) else {
            panic!("a shape breaking {expected:?} was accepted");
        };
        assert!(
            matches!(err.kind(), HostErrorKind::InvalidShape { .. }),
            "{err:?}"
        );
        let message = err.to_string();
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(
            message.contains(expected),
            "{message} (expected {expected:?})"
        );
        assert!(message.starts_with("invalid shape"), "{message}");
        assert!(registry.shapes().is_empty(), "nothing registered on error");
    }
}

#[test]
fn shapes_replace_shapes_of_their_name_and_not_models() {
    let mut registry = ModelRegistry::new();
    registry.add_embedded(both::root_module()).unwrap();
    assert_eq!(registry.get("blob").unwrap().plugin, "both");
    assert_eq!(registry.shape("blob").unwrap().plugin, "both");
    registry.add_embedded(valid::root_module()).unwrap();
    registry.add_embedded(again::root_module()).unwrap();
    assert_eq!(registry.shapes().len(), 1);
    assert_eq!(registry.shape("blob").unwrap().plugin, "again");
    assert_eq!(registry.get("blob").unwrap().plugin, "both");
    // The host checks what a shape returns: this one's volume does not fit
    // in its bounding sphere.
    let err = registry
        .shape("blob")
        .unwrap()
        .mass_properties(&[1.0])
        .unwrap_err();
    assert!(err.message.contains("cannot hold a volume"), "{err}");
}
