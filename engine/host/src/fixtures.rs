//! Test support (feature `fixtures`): builds plugin libraries with nested
//! cargo so that tests can load them from disk.
//!
//! Everything goes into one shared target directory,
//! `<workspace>/target/fixtures`, so dependencies are compiled once for all
//! fixtures. Each library is built at most once per process (a `OnceLock`
//! per library); later calls return the cached path, or repeat the cached
//! failure.
//!
//! - [`build_fixture`]`("good")` builds the standalone crate
//!   `tests/fixtures/plugins/good` and returns its cdylib.
//! - [`build_plugin_cdylib`]`("talus-plugin-linear")` builds a workspace
//!   plugin with `--features export` and returns its cdylib.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

/// The root of the talus workspace (where the workspace `Cargo.toml` is).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("talus-host lives two levels below the workspace root")
        .to_path_buf()
}

/// The target directory shared by every fixture build:
/// `<workspace>/target/fixtures`.
pub fn fixture_target_dir() -> PathBuf {
    workspace_root().join("target").join("fixtures")
}

/// The file name of the dynamic library of crate `crate_name` on this
/// platform, e.g. `libgood.so` on Linux.
pub fn library_file_name(crate_name: &str) -> String {
    format!(
        "{}{}{}",
        std::env::consts::DLL_PREFIX,
        crate_name.replace('-', "_"),
        std::env::consts::DLL_SUFFIX
    )
}

/// Builds the fixture plugin `tests/fixtures/plugins/<name>` (package
/// `talus-fixture-<name>`) in release mode and returns the path of its
/// cdylib.
///
/// The build runs
/// `cargo build --release --manifest-path tests/fixtures/plugins/<name>/Cargo.toml --target-dir <workspace>/target/fixtures`
/// with the environment variable `TALUS_FIXTURE_SDK_VERSION` set to this
/// engine's sdk version (the `bad_layout` fixture claims it).
///
/// # Panics
/// If cargo fails; the message carries cargo's stderr.
pub fn build_fixture(name: &str) -> PathBuf {
    let manifest = workspace_root()
        .join("tests/fixtures/plugins")
        .join(name)
        .join("Cargo.toml");
    let crate_name = format!("talus_fixture_{name}");
    cached(&format!("fixture {name}"), || {
        cargo_build(&manifest, &[], &crate_name)
    })
}

/// Builds the cdylib of the workspace plugin `package` (for example
/// `talus-plugin-linear`) with its `export` feature, in release mode, and
/// returns its path.
///
/// The build runs
/// `cargo build --release -p <package> --features export --manifest-path <workspace>/Cargo.toml --target-dir <workspace>/target/fixtures`.
///
/// # Panics
/// If cargo fails; the message carries cargo's stderr.
pub fn build_plugin_cdylib(package: &str) -> PathBuf {
    let manifest = workspace_root().join("Cargo.toml");
    cached(&format!("plugin {package}"), || {
        cargo_build(
            &manifest,
            &["-p", package, "--features", "export"],
            &package.replace('-', "_"),
        )
    })
}

type BuildCell = Arc<OnceLock<Result<PathBuf, String>>>;

fn cached(key: &str, build: impl FnOnce() -> Result<PathBuf, String>) -> PathBuf {
    static BUILDS: Mutex<BTreeMap<String, BuildCell>> = Mutex::new(BTreeMap::new());
    let cell = {
        let mut builds = BUILDS.lock().unwrap_or_else(|e| e.into_inner());
        builds.entry(key.to_string()).or_default().clone()
    };
    match cell.get_or_init(build) {
        Ok(path) => path.clone(),
        Err(message) => panic!("{message}"),
    }
}

fn cargo_build(manifest: &Path, extra: &[&str], crate_name: &str) -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target_dir = fixture_target_dir();
    let mut command = Command::new(&cargo);
    command
        .arg("build")
        .arg("--release")
        .arg("--manifest-path")
        .arg(manifest)
        .arg("--target-dir")
        .arg(&target_dir)
        .args(extra)
        .env("TALUS_FIXTURE_SDK_VERSION", talus_sdk::SDK_VERSION)
        // A jobserver inherited from an outer cargo would not be ours.
        .env_remove("CARGO_MAKEFLAGS")
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS");
    let output = command
        .output()
        .map_err(|e| format!("cannot run {}: {e}", Path::new(&cargo).display()))?;
    if !output.status.success() {
        return Err(format!(
            "building {} failed ({}):\n{}",
            manifest.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let library = target_dir
        .join("release")
        .join(library_file_name(crate_name));
    if library.is_file() {
        Ok(library)
    } else {
        Err(format!(
            "cargo built {} but {} is missing",
            manifest.display(),
            library.display()
        ))
    }
}
