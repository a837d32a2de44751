//! Opening plugin libraries: the only place that touches dynamic linking.
//!
//! Reads a library file; returns its root module or an error that names the
//! file. Invariant: a library, once opened, is never unloaded (the models'
//! function pointers and strings point into it for the rest of the process).

use std::path::{Path, PathBuf};

use abi_stable::library::{lib_header_from_path, LibraryError};
use talus_sdk::abi::legacy;
use talus_sdk::{PluginModRef, SDK_VERSION};

use crate::validate::parse_version;
use crate::{HostError, HostErrorKind};

/// Lines of abi_stable's layout report that an error shows at most.
const MAX_REPORT_LINES: usize = 20;

/// Opens the library at `path` and returns its checked root module.
///
/// The version is checked by the host first (so that a mismatch gives a
/// one-line message), then abi_stable checks the version again and the
/// full type layout of the root module: that of this sdk, or else that of
/// the earlier sdk of this minor whose root module was shorter.
pub(crate) fn open_library(path: &Path) -> Result<PluginModRef, HostError> {
    // `lib_header_from_path` leaks the library handle on success, so the
    // library stays mapped for the life of the process.
    let header = lib_header_from_path(path).map_err(|e| classify(path, None, e))?;
    let library_version = header.version_strings().version.as_str().to_string();
    if !sdk_versions_compatible(SDK_VERSION, &library_version) {
        return Err(HostErrorKind::VersionMismatch {
            path: path.to_path_buf(),
            engine: SDK_VERSION.to_string(),
            library: library_version,
        }
        .into());
    }
    let init = |result: Result<PluginModRef, LibraryError>| {
        result.map_err(|e| classify(path, Some(&library_version), e))
    };
    // Not `RootModule::load_from_file`: that caches a single module per
    // root-module type and process, and we load many plugins.
    let current = match header.ensure_layout::<PluginModRef>() {
        Ok(()) => return init(header.init_root_module::<PluginModRef>()),
        Err(error) => error,
    };
    // abi_stable refuses a library whose root module has fewer fields than
    // this engine's (see `talus_sdk::abi::legacy`): a plugin built before
    // the shape list was appended is checked against the root module of
    // its sdk instead. A mismatch with both is reported against the
    // current layout.
    if header.ensure_layout::<legacy::PluginModRef>().is_err() {
        return Err(classify(path, Some(&library_version), current));
    }
    // SAFETY: the library's root module has the layout of the legacy root
    // module, checked just above, and `PluginModRef` has that layout up to
    // and including its `last_prefix_field`, past which its accessors read
    // only the fields that the library's own metadata marks as present:
    // the appended shape list comes back as `None`.
    init(unsafe { header.init_root_module_with_unchecked_layout::<PluginModRef>() })
}

/// Whether a library built with sdk `library` can be used by an engine with
/// sdk `engine`: before 1.0 the minor versions must be equal; from 1.0 the
/// majors must be equal and the library's minor at least the engine's (a
/// newer library only appends root-module fields).
pub(crate) fn sdk_versions_compatible(engine: &str, library: &str) -> bool {
    let (Some(engine), Some(library)) = (parse_version(engine), parse_version(library)) else {
        return false;
    };
    if engine.0 == 0 {
        library.0 == 0 && library.1 == engine.1
    } else {
        library.0 == engine.0 && library.1 >= engine.1
    }
}

fn classify(path: &Path, library_version: Option<&str>, error: LibraryError) -> HostError {
    let path: PathBuf = path.to_path_buf();
    let library = library_version.unwrap_or("unknown").to_string();
    let kind = match error {
        LibraryError::OpenError { err, .. } => HostErrorKind::NotAPlugin {
            path,
            reason: format!(
                "cannot open it as a dynamic library ({})",
                one_line(&err.to_string())
            ),
        },
        LibraryError::GetSymbolError { .. } => HostErrorKind::NotAPlugin {
            path,
            reason: "it exports no talus root module (was it built with \
                     talus_sdk::export_plugin!()?)"
                .to_string(),
        },
        LibraryError::IncompatibleVersionNumber {
            expected_version,
            actual_version,
            ..
        } => HostErrorKind::VersionMismatch {
            path,
            engine: expected_version.to_string(),
            library: actual_version.to_string(),
        },
        LibraryError::ParseVersionError(e) => HostErrorKind::VersionMismatch {
            path,
            engine: SDK_VERSION.to_string(),
            library: format!("an unreadable version ({})", one_line(&e.to_string())),
        },
        LibraryError::AbiInstability(report) => HostErrorKind::LayoutMismatch {
            path,
            engine: SDK_VERSION.to_string(),
            library,
            details: error_blocks(&report.to_string(), MAX_REPORT_LINES),
        },
        LibraryError::InvalidAbiHeader(found) => HostErrorKind::AbiStableMismatch {
            path,
            details: format!("library header {found:?}"),
        },
        LibraryError::InvalidCAbi { .. } => HostErrorKind::AbiStableMismatch {
            path,
            details: "the library's C ABI self-test disagrees with the engine's".to_string(),
        },
        LibraryError::RootModule { err, .. } => HostErrorKind::InitFailed {
            path,
            reason: format!(
                "its root module failed to initialise: {}",
                one_line(&err.to_string())
            ),
        },
        other => HostErrorKind::InitFailed {
            path,
            reason: error_blocks(&other.to_string(), MAX_REPORT_LINES),
        },
    };
    kind.into()
}

/// Joins the non-empty lines of a multi-line message with "; ".
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Keeps the `Error:` (and `Extra:`) blocks of an abi_stable layout report:
/// each runs from its heading to the next blank line. Layout dumps and
/// stack traces are dropped; the result has at most `max_lines` lines. A
/// report without such blocks is cut to its last `max_lines` lines.
pub(crate) fn error_blocks(report: &str, max_lines: usize) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let mut inside = false;
    for line in report.lines() {
        let trimmed = line.trim_end();
        if trimmed.starts_with("Error:") || trimmed.starts_with("Extra:") {
            inside = true;
        } else if trimmed.trim().is_empty() {
            inside = false;
            continue;
        }
        if inside {
            kept.push(trimmed);
        }
    }
    if kept.is_empty() {
        let lines: Vec<&str> = report
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.trim().is_empty())
            .collect();
        kept = lines[lines.len().saturating_sub(max_lines)..].to_vec();
    }
    let total = kept.len();
    let mut text = kept
        .into_iter()
        .take(max_lines)
        .collect::<Vec<_>>()
        .join("\n");
    if total > max_lines {
        text.push_str(&format!("\n... ({} more lines)", total - max_lines));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_rules() {
        assert!(sdk_versions_compatible("0.1.0", "0.1.0"));
        assert!(sdk_versions_compatible("0.1.0", "0.1.7"));
        assert!(sdk_versions_compatible("0.1.3", "0.1.0"));
        assert!(!sdk_versions_compatible("0.1.0", "0.0.7"));
        assert!(!sdk_versions_compatible("0.1.0", "0.2.0"));
        assert!(!sdk_versions_compatible("0.1.0", "1.1.0"));
        assert!(sdk_versions_compatible("1.2.0", "1.3.0"));
        assert!(!sdk_versions_compatible("1.2.0", "1.1.9"));
        assert!(!sdk_versions_compatible("1.2.0", "2.2.0"));
        assert!(!sdk_versions_compatible("0.1.0", "garbage"));
    }

    #[test]
    fn error_blocks_keep_only_error_sections() {
        let report = "Compared <this>:\n    big dump\n    more\n\n1 error(s)inside:\n    \
                      <other>\n\nLayout of expected type:\n    x\n\n\nError:mismatched type\n\
                      Expected:\n    u64\nFound:\n    RStr\n\nExtra:\n    note\n\n";
        let blocks = error_blocks(report, 20);
        assert_eq!(
            blocks,
            "Error:mismatched type\nExpected:\n    u64\nFound:\n    RStr\nExtra:\n    note"
        );
        let capped = error_blocks(report, 2);
        assert_eq!(
            capped,
            "Error:mismatched type\nExpected:\n... (5 more lines)"
        );
    }
}
