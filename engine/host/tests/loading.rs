//! Loading plugins from disk: the good fixture, each failure mode, and the
//! linear model's cdylib against its embedded build (bit for bit).
//!
//! The fixture libraries are built by nested cargo into
//! `<workspace>/target/fixtures`, once per test binary (see
//! `talus_host::fixtures`).

use std::fs;
use std::path::{Path, PathBuf};

use talus_host::fixtures::{build_fixture, build_plugin_cdylib, fixture_target_dir};
use talus_host::{describe, HostErrorKind, ModelRegistry, Origin, PropertyError};
use talus_sdk::{
    flags, ContactInput, ContactOutput, SDK_VERSION, STATUS_ACTIVE, STATUS_COULD_BE_ACTIVE,
};

/// A fresh, empty scratch directory for one test, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Self {
        let dir = fixture_target_dir()
            .join("scratch")
            .join(format!("{test}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn contact(gap: f64) -> ContactInput {
    ContactInput {
        gap,
        mass: 1.0,
        ..ContactInput::default()
    }
}

fn props(pairs: &[(&str, f64)]) -> Vec<(String, f64)> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn good_plugin_loads_and_gives_k_times_overlap() {
    let lib = build_fixture("good");
    let mut registry = ModelRegistry::new();
    assert_eq!(registry.load_path(&lib).unwrap(), 1);
    let model = registry
        .get("test_hooke")
        .expect("test_hooke is registered");
    assert_eq!(model.plugin, "talus-fixture-good");
    assert_eq!(model.origin, Origin::Library(lib.clone()));
    assert_eq!(model.n_state(), 1);
    // Loading the same file again registers the same model again, once.
    assert_eq!(registry.load_path(&lib).unwrap(), 1);
    assert_eq!(registry.models().len(), 1);
    let model = registry.get("test_hooke").unwrap();

    let k = 2.5e6;
    let set = registry
        .resolve_properties("test_hooke", &props(&[("k", k)]))
        .unwrap();
    assert_eq!(set, [k]);

    let gaps = [-1e-3, 0.0, 2e-3, -4e-5];
    let inputs: Vec<ContactInput> = gaps.iter().map(|&g| contact(g)).collect();
    let mut state = vec![0.0; inputs.len()];
    let mut outputs = vec![ContactOutput::default(); inputs.len()];
    model
        .run_batch(1e-4, &set, &inputs, &[], &mut state, &mut outputs)
        .unwrap();
    for ((gap, out), max_overlap) in gaps.iter().zip(&outputs).zip(&state) {
        let overlap = (-gap).max(0.0);
        assert_eq!(out.force, [k * overlap, 0.0, 0.0]);
        assert_eq!(*max_overlap, overlap);
        let status = if overlap > 0.0 {
            STATUS_ACTIVE
        } else {
            STATUS_COULD_BE_ACTIVE
        };
        assert_eq!(out.status, status);
    }

    let text = describe(model);
    println!("{text}");
    assert!(text.starts_with("test_hooke 1.0.0\n"), "{text}");
    assert!(text.contains("required"), "{text}");
    assert!(text.contains("max_overlap"), "{text}");
    assert!(text.contains(&lib.display().to_string()), "{text}");
}

#[test]
fn directory_loads_every_library_in_name_order() {
    let scratch = Scratch::new("directory");
    let dir = &scratch.0;
    fs::copy(
        build_fixture("panicking"),
        dir.join(lib_name("a_panicking")),
    )
    .unwrap();
    fs::copy(build_fixture("good"), dir.join(lib_name("b_good"))).unwrap();
    fs::write(
        dir.join("notes.txt"),
        "not a library, and not named like one",
    )
    .unwrap();
    let mut registry = ModelRegistry::new();
    assert_eq!(registry.load_path(dir).unwrap(), 2);
    let names: Vec<&str> = registry.models().iter().map(|m| m.name()).collect();
    assert_eq!(names, ["test_panic", "test_hooke"]);
    assert_eq!(
        registry.get("test_hooke").unwrap().origin,
        Origin::Library(dir.join(lib_name("b_good")))
    );
}

fn lib_name(stem: &str) -> String {
    talus_host::fixtures::library_file_name(stem)
}

#[test]
fn panicking_plugin_reports_the_contact_and_the_message() {
    let lib = build_fixture("panicking");
    let mut registry = ModelRegistry::new();
    registry.load_path(&lib).unwrap();
    let model = registry.get("test_panic").unwrap();
    let set = registry
        .resolve_properties("test_panic", &props(&[("limit", 1e-3)]))
        .unwrap();

    let inputs: Vec<ContactInput> = [1e-3, -1e-4, 0.0, -5e-3, -1e-2]
        .iter()
        .map(|&g| contact(g))
        .collect();
    let mut outputs = vec![ContactOutput::default(); inputs.len()];
    let err = model
        .run_batch(1e-4, &set, &inputs, &[], &mut [], &mut outputs)
        .unwrap_err();
    assert_eq!(err.index, 3);
    assert!(
        err.message
            .contains("overlap 0.005 exceeds the limit 0.001"),
        "{}",
        err.message
    );

    // The process survived, and the model still works.
    let calm = [contact(-1e-4), contact(1.0)];
    let mut outputs = [ContactOutput::default(); 2];
    model
        .run_batch(1e-4, &set, &calm, &[], &mut [], &mut outputs)
        .unwrap();
}

#[test]
fn old_sdk_is_refused_naming_both_versions() {
    let lib = build_fixture("old_sdk");
    let err = ModelRegistry::new().load_path(&lib).unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(err.kind(), HostErrorKind::VersionMismatch { engine, library, .. }
            if engine == SDK_VERSION && library == "0.2.0"),
        "{err:?}"
    );
    assert!(message.contains(&lib.display().to_string()), "{message}");
    assert!(message.contains("0.2.0"), "{message}");
    assert!(message.contains(SDK_VERSION), "{message}");
    assert_eq!(err.path(), Some(lib.as_path()));
}

#[test]
fn bad_layout_is_refused_with_a_short_message() {
    let lib = build_fixture("bad_layout");
    let err = ModelRegistry::new().load_path(&lib).unwrap_err();
    let message = err.to_string();
    println!("{message}");
    assert!(
        matches!(err.kind(), HostErrorKind::LayoutMismatch { .. }),
        "{err:?}"
    );
    assert!(message.contains(&lib.display().to_string()), "{message}");
    assert!(message.contains(SDK_VERSION), "{message}");
    assert!(message.contains("Error:"), "{message}");
    assert!(message.lines().count() < 40, "{message}");
}

#[test]
fn a_text_file_is_not_a_plugin() {
    let scratch = Scratch::new("text");
    let dir = &scratch.0;
    let fake = dir.join(lib_name("foo"));
    fs::write(&fake, "this is not a dynamic library\n").unwrap();
    for path in [fake.as_path(), dir.as_path()] {
        let err = ModelRegistry::new().load_path(path).unwrap_err();
        let message = err.to_string();
        assert!(
            matches!(err.kind(), HostErrorKind::NotAPlugin { .. }),
            "{err:?}"
        );
        assert!(message.contains("not a talus plugin"), "{message}");
        assert!(message.contains(&fake.display().to_string()), "{message}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_library_without_root_module_is_not_a_plugin() {
    // Any shared object without the loader symbol will do: the proc-macro
    // library of abi_stable, which the fixture builds compile anyway.
    build_fixture("good");
    let deps = fixture_target_dir().join("release/deps");
    let proc_macro = fs::read_dir(&deps)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("libabi_stable_derive-") && name.ends_with(".so")
        })
        .expect("abi_stable_derive is built");
    let err = ModelRegistry::new().load_path(&proc_macro).unwrap_err();
    assert!(
        matches!(err.kind(), HostErrorKind::NotAPlugin { .. }),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("exports no talus root module"),
        "{message}"
    );
    assert!(
        message.contains(&proc_macro.display().to_string()),
        "{message}"
    );
}

#[test]
fn a_missing_path_is_reported() {
    let path = Path::new("/nonexistent/talus/libnothing.so");
    let err = ModelRegistry::new().load_path(path).unwrap_err();
    assert!(
        matches!(err.kind(), HostErrorKind::NotFound { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("/nonexistent/talus/libnothing.so"));
}

/// splitmix64: a tiny deterministic generator for test inputs.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [lo, hi).
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }
}

fn random_contacts(rng: &mut Rng, n: usize, n_sets: u32) -> Vec<ContactInput> {
    (0..n)
        .map(|_| {
            let flag_draw = rng.next_u64() % 20;
            let flags = match flag_draw {
                0 => flags::SUPPRESSED,
                1 => flags::NEW,
                _ => 0,
            };
            ContactInput {
                gap: rng.range(-1e-3, 2e-4),
                delta_n: rng.range(-1e-5, 1e-5),
                delta_s: [rng.range(-2e-5, 2e-5), rng.range(-2e-5, 2e-5)],
                theta_t: rng.range(-1e-3, 1e-3),
                theta_b: [rng.range(-1e-3, 1e-3), rng.range(-1e-3, 1e-3)],
                mass: rng.range(1e-3, 10.0),
                radius: [rng.range(1e-3, 1e-1), rng.range(1e-3, 1e-1)],
                prop_set: (rng.next_u64() % u64::from(n_sets)) as u32,
                flags,
            }
        })
        .collect()
}

#[test]
fn embedded_and_cdylib_linear_give_identical_bits() {
    let lib = build_plugin_cdylib("talus-plugin-linear");
    let mut embedded = ModelRegistry::new();
    embedded
        .add_embedded(talus_plugin_linear::root_module())
        .unwrap();
    let mut loaded = ModelRegistry::new();
    loaded.load_path(&lib).unwrap();
    let a = embedded.get("linear").unwrap();
    let b = loaded.get("linear").unwrap();
    assert_eq!(a.origin, Origin::Embedded);
    assert_eq!(b.origin, Origin::Library(lib.clone()));
    assert_eq!(a.entry.descriptor, b.entry.descriptor);

    let sets = [
        props(&[("kn", 1e6), ("ks", 5e5), ("fric", 0.5)]),
        props(&[
            ("kn", 3e7),
            ("ks", 1e7),
            ("fric", 0.2),
            ("dp_nratio", 0.7),
            ("dp_sratio", 0.3),
        ]),
        props(&[("kn", 2e5), ("dp_nratio", 1.0)]),
    ];
    let mut set_values = Vec::new();
    for set in &sets {
        set_values.extend(embedded.resolve_properties("linear", set).unwrap());
    }

    let n = 1000;
    let n_state = a.n_state();
    let mut rng = Rng(0x7A15_2024);
    let mut state_a = vec![0.0; n * n_state];
    let mut state_b = vec![0.0; n * n_state];
    // Several steps, so that history (shear force, energies) matters.
    for _ in 0..4 {
        let inputs = random_contacts(&mut rng, n, sets.len() as u32);
        let mut out_a = vec![ContactOutput::default(); n];
        let mut out_b = vec![ContactOutput::default(); n];
        a.run_batch(1e-5, &set_values, &inputs, &[], &mut state_a, &mut out_a)
            .unwrap();
        b.run_batch(1e-5, &set_values, &inputs, &[], &mut state_b, &mut out_b)
            .unwrap();
        for (i, (x, y)) in out_a.iter().zip(&out_b).enumerate() {
            let bits = |o: &ContactOutput| {
                let mut v: Vec<u64> = o.force.iter().map(|f| f.to_bits()).collect();
                v.extend(o.moment.iter().map(|f| f.to_bits()));
                v.extend(o.stiffness.iter().map(|f| f.to_bits()));
                v.push(u64::from(o.status));
                v
            };
            assert_eq!(bits(x), bits(y), "contact {i}");
        }
        let bits = |s: &[f64]| s.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&state_a), bits(&state_b));
    }
    // The inputs did exercise the model.
    assert!(
        state_a.chunks(n_state).any(|s| s[6] == 1.0),
        "some contact slides"
    );
    assert!(
        state_a.chunks(n_state).any(|s| s[0] > 0.0),
        "some contact is loaded"
    );
}

#[test]
fn cdylib_linear_replaces_the_embedded_one() {
    let lib = build_plugin_cdylib("talus-plugin-linear");
    let mut registry = ModelRegistry::new();
    registry
        .add_embedded(talus_plugin_linear::root_module())
        .unwrap();
    registry.load_path(&build_fixture("good")).unwrap();
    assert_eq!(registry.get("linear").unwrap().origin, Origin::Embedded);
    assert_eq!(registry.load_path(&lib).unwrap(), 1);
    let names: Vec<&str> = registry.models().iter().map(|m| m.name()).collect();
    assert_eq!(names, ["linear", "test_hooke"]);
    assert_eq!(
        registry.get("linear").unwrap().origin,
        Origin::Library(lib.clone())
    );
}

#[test]
fn property_errors_are_precise() {
    let mut registry = ModelRegistry::new();
    registry
        .add_embedded(talus_plugin_linear::root_module())
        .unwrap();
    registry.load_path(&build_fixture("good")).unwrap();

    // Defaults are filled in, in descriptor order.
    let set = registry
        .resolve_properties("linear", &props(&[("fric", 0.3), ("kn", 1e6)]))
        .unwrap();
    assert_eq!(set, [1e6, 0.0, 0.3, 0.0, 0.0]);

    let err = registry
        .resolve_properties("linear", &props(&[("kn", 1e6), ("mu", 0.3)]))
        .unwrap_err();
    assert!(
        matches!(err, PropertyError::UnknownProperty { .. }),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("\"mu\""), "{message}");
    assert!(
        message.contains("kn, ks, fric, dp_nratio, dp_sratio"),
        "{message}"
    );

    let err = registry.resolve_properties("test_hooke", &[]).unwrap_err();
    assert!(
        matches!(&err, PropertyError::Missing { name, .. } if name == "k"),
        "{err:?}"
    );
    assert!(err.to_string().contains("requires property \"k\""), "{err}");

    let err = registry
        .resolve_properties("linear", &props(&[("dp_nratio", 1.5)]))
        .unwrap_err();
    assert!(matches!(err, PropertyError::OutOfRange { .. }), "{err:?}");
    assert!(err.to_string().contains("[0, 1]"), "{err}");

    let err = registry
        .resolve_properties("linear", &props(&[("kn", -1.0)]))
        .unwrap_err();
    assert!(err.to_string().contains("[0, inf)"), "{err}");

    for bad in [f64::NAN, f64::INFINITY] {
        let err = registry
            .resolve_properties("linear", &props(&[("kn", bad)]))
            .unwrap_err();
        assert!(matches!(err, PropertyError::NotFinite { .. }), "{err:?}");
    }

    let err = registry
        .resolve_properties("linear", &props(&[("kn", 1.0), ("kn", 2.0)]))
        .unwrap_err();
    assert!(matches!(err, PropertyError::Duplicate { .. }), "{err:?}");

    let err = registry.resolve_properties("hertz", &[]).unwrap_err();
    assert!(err.to_string().contains("linear, test_hooke"), "{err}");
}
