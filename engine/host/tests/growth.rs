//! The sdk grows without breaking built plugins: a plugin built against a
//! frozen copy of sdk 0.3.0 (`tests/fixtures/sdk-0.3.0`, fixture
//! `sdk_0_3_0`) loads into this engine, whatever 0.3.x its sdk is, passes
//! abi_stable's version and layout checks, and runs a batch correctly.

use std::f64::consts::PI;

use talus_host::fixtures::build_fixture;
use talus_host::{describe, ModelRegistry, Origin};
use talus_sdk::{inputs, ContactInput, ContactOutput, SDK_VERSION, STATUS_ACTIVE};

fn contact(gap: f64) -> ContactInput {
    ContactInput {
        gap,
        mass: 1.0,
        radius: [1e-3, 1e-3],
        ..ContactInput::default()
    }
}

/// The overlap volume and contact area of two 1 mm balls at gap `gap`
/// (closed forms of the lens of equal spheres: two caps of height h/2).
fn lens(gap: f64) -> (f64, f64) {
    let (r, h) = (1e-3, (-gap).max(0.0));
    let cap = PI * (h / 2.0).powi(2) * (3.0 * r - h / 2.0) / 3.0;
    (2.0 * cap, PI * (h / 2.0) * (2.0 * r - h / 2.0))
}

#[test]
fn a_plugin_built_against_sdk_0_3_0_loads_and_runs() {
    let lib = build_fixture("sdk_0_3_0");
    let mut registry = ModelRegistry::new();
    assert_eq!(registry.load_path(&lib).unwrap(), 1);
    let old = registry.get("test_volume").unwrap();
    assert_eq!(old.origin, Origin::Library(lib.clone()));
    assert_eq!(old.sdk_version, "0.3.0");
    assert!(SDK_VERSION.starts_with("0.3."), "{SDK_VERSION}");
    assert_eq!(
        old.entry.descriptor.inputs,
        [inputs::OVERLAP_VOLUME, inputs::CONTACT_AREA]
    );
    assert!(describe(old).contains("sdk:         0.3.0"));

    let kv = 2e12;
    let set = registry
        .resolve_properties("test_volume", &[("kv".to_string(), kv)])
        .unwrap();
    let gaps = [-2e-5, 3e-6, -1e-7, -4e-4];
    let batch: Vec<ContactInput> = gaps.iter().map(|&g| contact(g)).collect();
    let (volume, area): (Vec<f64>, Vec<f64>) = gaps.iter().map(|&g| lens(g)).unzip();
    let columns = [
        (inputs::CONTACT_AREA, &area[..]),
        (inputs::OVERLAP_VOLUME, &volume[..]),
    ];
    let mut state = vec![0.0; 2 * gaps.len()];
    let mut out = vec![ContactOutput::default(); gaps.len()];
    // Two steps: the largest volume is kept, the area is the last one.
    for _ in 0..2 {
        old.run_batch(1e-6, &set, &batch, &columns, &mut state, &mut out)
            .unwrap();
    }
    for (i, &gap) in gaps.iter().enumerate() {
        let (v, a) = lens(gap);
        if gap < 0.0 {
            assert_eq!(out[i].status, STATUS_ACTIVE);
            assert_eq!(out[i].force, [kv * v, 0.0, 0.0], "contact {i}");
            assert_eq!(out[i].stiffness, [kv * a, 0.0], "contact {i}");
        } else {
            assert_eq!(out[i].force, [0.0; 3]);
        }
        assert_eq!(state[2 * i..2 * i + 2], [v, a], "contact {i}");
    }
    // Without the columns it asks for, the model is not run blind.
    let err = old
        .run_batch(1e-6, &set, &batch, &columns[..1], &mut state, &mut out)
        .unwrap_err();
    assert!(err.message.contains("overlap_volume"), "{err:?}");
}
