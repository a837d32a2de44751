//! The sdk grows without breaking built plugins: a plugin built against a
//! frozen copy of sdk 0.3.0 (`tests/fixtures/sdk-0.3.0`, fixture
//! `sdk_0_3_0`) loads into this engine, whatever 0.3.x its sdk is, passes
//! abi_stable's version and layout checks, and runs correctly, on its own
//! and next to a model that reads an input sdk 0.3.0 did not have
//! (`contact_point`, added in 0.3.1). Its root module predates the shape
//! list (0.3.4): the engine reads it as a plugin without shapes.

use std::f64::consts::PI;

use talus_core::{BallInit, PairKind, Settings, Simulation, Timestep, Vec3, Wall};
use talus_host::fixtures::{build_fixture, build_plugin_cdylib};
use talus_host::{describe, ModelRegistry, Origin};
use talus_sdk::{
    inputs, Contact, ContactInput, ContactModel, ContactOutput, ModelDescriptor, PropertyDesc,
    StateSlotDesc, SDK_VERSION, STATUS_ACTIVE,
};

/// A model of this sdk that reads `contact_point`, an input sdk 0.3.0 did
/// not define: a linear spring `k * overlap` that records where it acts.
struct Pinned {
    k: f64,
}

impl ContactModel for Pinned {
    fn descriptor() -> ModelDescriptor {
        ModelDescriptor::new("test_pinned", "0.1.0")
            .property(PropertyDesc::new("k", "N/m", "normal stiffness").min(0.0))
            .state(StateSlotDesc::new("x", "m", "contact point x"))
            .state(StateSlotDesc::new("y", "m", "contact point y"))
            .state(StateSlotDesc::new("z", "m", "contact point z"))
            .input(inputs::CONTACT_POINT)
    }

    fn prepare(props: &[f64], _dt: f64) -> Self {
        Pinned { k: props[0] }
    }

    fn force_displacement(&mut self, c: &Contact<'_>, state: &mut [f64]) -> ContactOutput {
        state.copy_from_slice(&c.vector(inputs::CONTACT_POINT).unwrap());
        if c.gap >= 0.0 {
            return ContactOutput::could_be_active([self.k, 0.0]);
        }
        ContactOutput::active([-self.k * c.gap, 0.0, 0.0], [self.k, 0.0])
    }
}

talus_sdk::define_plugin!("growth-test", [Pinned]);

/// A registry with the 0.3.0 plugin loaded from disk and [`Pinned`]
/// embedded.
fn both() -> ModelRegistry {
    let mut registry = ModelRegistry::new();
    registry.load_path(&build_fixture("sdk_0_3_0")).unwrap();
    registry.add_embedded(root_module()).unwrap();
    registry
}

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
    // The root module has no shape list, which reads as no shapes (not as
    // a panic of abi_stable's accessor for a missing field).
    assert!(registry.shapes().is_empty());
    let old = registry.get("test_volume").unwrap();
    assert_eq!(old.origin, Origin::Library(lib.clone()));
    // Built with 0.3.0, loaded by a newer 0.3.x engine.
    assert_eq!(old.sdk_version, "0.3.0");
    assert!(SDK_VERSION.starts_with("0.3."), "{SDK_VERSION}");
    assert_ne!(SDK_VERSION, "0.3.0");
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

/// A library from before the shape list and one with shapes, loaded into
/// one registry in either order: each is checked against its own root
/// module, and the old one still gives no shapes.
#[test]
fn old_plugins_and_shape_plugins_load_side_by_side() {
    let old = build_fixture("sdk_0_3_0");
    let shapes = build_plugin_cdylib("talus-plugin-superquadric");
    for order in [[&old, &shapes], [&shapes, &old]] {
        let mut registry = ModelRegistry::new();
        for lib in order {
            assert_eq!(registry.load_path(lib).unwrap(), 1);
        }
        let models: Vec<&str> = registry.models().iter().map(|m| m.name()).collect();
        let kinds: Vec<&str> = registry.shapes().iter().map(|s| s.name()).collect();
        assert_eq!(
            (models, kinds),
            (vec!["test_volume"], vec!["superellipsoid"])
        );
        assert_eq!(registry.get("test_volume").unwrap().sdk_version, "0.3.0");
    }
}

#[test]
fn the_new_input_exists_only_in_the_newer_sdk() {
    // The frozen copy's list of inputs ends before contact_point: the old
    // plugin cannot know it, and this engine provides it.
    let frozen = include_str!("../../../tests/fixtures/sdk-0.3.0/src/inputs.rs");
    assert!(!frozen.contains("CONTACT_POINT"));
    assert!(inputs::info(inputs::CONTACT_POINT).is_some());
    let registry = both();
    let new = registry.get("test_pinned").unwrap();
    assert_eq!(new.sdk_version, SDK_VERSION);
    assert_eq!(new.entry.descriptor.inputs, [inputs::CONTACT_POINT]);
}

#[test]
fn old_and_new_models_run_side_by_side_in_one_batch_of_columns() {
    let registry = both();
    let (old, new) = (
        registry.get("test_volume").unwrap(),
        registry.get("test_pinned").unwrap(),
    );
    let gaps = [-2e-5, 3e-6, -1e-7];
    let batch: Vec<ContactInput> = gaps.iter().map(|&g| contact(g)).collect();
    let (volume, area): (Vec<f64>, Vec<f64>) = gaps.iter().map(|&g| lens(g)).unzip();
    let point: Vec<f64> = (0..9).map(|v| v as f64 * 0.5).collect();
    // One set of columns for the whole batch; each model gets its own.
    let columns = [
        (inputs::CONTACT_POINT, &point[..]),
        (inputs::OVERLAP_VOLUME, &volume[..]),
        (inputs::CONTACT_AREA, &area[..]),
    ];
    let (mut s_old, mut s_new) = (vec![0.0; 6], vec![0.0; 9]);
    let mut out_old = vec![ContactOutput::default(); 3];
    let mut out_new = vec![ContactOutput::default(); 3];
    let (kv, k) = (5e11, 1e4);
    old.run_batch(1e-6, &[kv], &batch, &columns, &mut s_old, &mut out_old)
        .unwrap();
    new.run_batch(1e-6, &[k], &batch, &columns, &mut s_new, &mut out_new)
        .unwrap();
    assert_eq!(s_new, point);
    for (i, &gap) in gaps.iter().enumerate() {
        let overlap = (-gap).max(0.0);
        assert_eq!(out_old[i].force[0], kv * volume[i], "contact {i}");
        assert_eq!(out_new[i].force[0], k * overlap, "contact {i}");
        assert_eq!(s_old[2 * i + 1], area[i]);
    }
}

/// Both models in one run of the engine: the 0.3.0 plugin between balls,
/// [`Pinned`] between balls and a wall. The contact pass builds each
/// model's columns from the geometry, so the old plugin's force is the
/// volume stiffness times the lens of the closed form, and the new model
/// sees where its contact is.
#[test]
fn old_and_new_models_run_side_by_side_in_a_simulation() {
    let registry = both();
    let mut sim = Simulation::new(Settings {
        gravity: Vec3::ZERO,
        timestep: Timestep::Fixed(1e-7),
        cell_tolerance: Some(1e-4),
        ..Settings::default()
    });
    let (g, w) = (sim.group("grain"), sim.group("wall"));
    let add =
        |sim: &mut Simulation, name: &str| sim.add_model(registry.get(name).unwrap().entry.clone());
    let (m_old, m_new) = (add(&mut sim, "test_volume"), add(&mut sim, "test_pinned"));
    let (kv, k) = (4e12, 1e5);
    sim.assign(g, g, m_old, vec![kv]).unwrap();
    sim.assign(g, w, m_new, vec![k]).unwrap();
    let (r, h_floor, h_pair) = (1e-3, 1e-5, 4e-5);
    let below = Vec3::new(0.0, 0.0, r - h_floor);
    let above = below + Vec3::new(0.0, 0.0, 2.0 * r - h_pair);
    for pos in [below, above] {
        sim.add_ball(BallInit {
            pos,
            radius: r,
            density: 2500.0,
            velocity: Vec3::ZERO,
            spin: Vec3::ZERO,
            group: g,
            damping: 0.0,
            fixity: Default::default(),
        })
        .unwrap();
    }
    let s = 0.01;
    let plate = [[-s, -s, 0.0], [s, -s, 0.0], [0.0, s, 0.0]];
    sim.add_wall(Wall::new("plate", &plate, &[[0, 1, 2]], None).unwrap(), w);
    sim.prepare().unwrap();

    let pair = sim.models[m_old].store(PairKind::BallBall);
    assert_eq!(pair.len(), 1);
    let (v, _) = lens(-h_pair);
    let force = pair.output[0].force[0];
    assert!(
        (force - kv * v).abs() <= 1e-9 * kv * v,
        "{force} vs {}",
        kv * v
    );
    assert_eq!(force, kv * pair.state_of(0)[0]);

    let floor = sim.models[m_new].store(PairKind::BallFacet);
    assert_eq!(floor.len(), 1);
    let xc = floor.plane[0].xc;
    assert_eq!(floor.state_of(0), xc.to_array());
    // The contact point lies in the middle of the overlap, below the ball.
    assert!(
        (xc - Vec3::new(0.0, 0.0, -h_floor / 2.0)).length() < 1e-15,
        "{xc}"
    );
    assert_eq!(floor.output[0].force[0], k * -floor.plane[0].gap);
}
