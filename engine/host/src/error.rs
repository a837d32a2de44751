//! Typed errors of the plugin host.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::Origin;

/// An error from finding, loading or registering a plugin.
///
/// The message is lowercase and names the library (or says the plugin was
/// embedded); [`HostError::kind`] gives the structured cause.
#[derive(Debug, Error)]
#[error("{kind}")]
pub struct HostError {
    kind: HostErrorKind,
}

impl HostError {
    /// The structured cause.
    pub fn kind(&self) -> &HostErrorKind {
        &self.kind
    }

    /// The library file or directory the error is about, if any.
    pub fn path(&self) -> Option<&Path> {
        match &self.kind {
            HostErrorKind::NotFound { path }
            | HostErrorKind::Io { path, .. }
            | HostErrorKind::NotAPlugin { path, .. }
            | HostErrorKind::VersionMismatch { path, .. }
            | HostErrorKind::LayoutMismatch { path, .. }
            | HostErrorKind::AbiStableMismatch { path, .. }
            | HostErrorKind::InitFailed { path, .. } => Some(path),
            HostErrorKind::InvalidDescriptor { origin, .. }
            | HostErrorKind::InvalidShape { origin, .. } => match origin {
                Origin::Library(path) => Some(path),
                Origin::Embedded => None,
            },
        }
    }
}

impl From<HostErrorKind> for HostError {
    fn from(kind: HostErrorKind) -> Self {
        Self { kind }
    }
}

/// What went wrong while loading or registering a plugin.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum HostErrorKind {
    /// The plugin path does not exist.
    #[error("plugin path {} does not exist", path.display())]
    NotFound {
        /// The path given.
        path: PathBuf,
    },
    /// The plugin path exists but cannot be read.
    #[error("cannot read plugin path {}: {error}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// The file is not a dynamic library, or it exports no talus root
    /// module.
    #[error("{} is not a talus plugin: {reason}", path.display())]
    NotAPlugin {
        /// The library file.
        path: PathBuf,
        /// Why, in a few words.
        reason: String,
    },
    /// The library was built against an sdk version this engine cannot use.
    #[error(
        "cannot load plugin {}: it was built with talus sdk {library}, but this engine has \
         sdk {engine}; rebuild the plugin against talus-sdk {engine}",
        path.display()
    )]
    VersionMismatch {
        /// The library file.
        path: PathBuf,
        /// The engine's sdk version ([`talus_sdk::SDK_VERSION`]).
        engine: String,
        /// The sdk version the library declares.
        library: String,
    },
    /// The library's root module does not have the layout of this engine's
    /// sdk, although the versions agree.
    #[error(
        "cannot load plugin {}: its root module does not match the layout of this engine's \
         sdk (engine sdk {engine}, library built with sdk {library}); rebuild the plugin \
         against talus-sdk {engine}\n{details}",
        path.display()
    )]
    LayoutMismatch {
        /// The library file.
        path: PathBuf,
        /// The engine's sdk version.
        engine: String,
        /// The sdk version the library declares.
        library: String,
        /// The trailing `Error:` blocks of abi_stable's report (at most
        /// about 20 lines).
        details: String,
    },
    /// The library was built with a version of abi_stable whose loader
    /// header this engine does not understand.
    #[error(
        "cannot load plugin {}: it was built with an incompatible version of abi_stable \
         ({details})",
        path.display()
    )]
    AbiStableMismatch {
        /// The library file.
        path: PathBuf,
        /// What the headers say.
        details: String,
    },
    /// The library's root-module constructor failed or panicked.
    #[error("cannot load plugin {}: {reason}", path.display())]
    InitFailed {
        /// The library file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A model's descriptor breaks a rule (names, ranges, version...).
    #[error("invalid model {model:?} in plugin {plugin:?} ({origin}): {reason}")]
    InvalidDescriptor {
        /// Where the plugin came from.
        origin: Origin,
        /// The plugin's name.
        plugin: String,
        /// The model's name as declared (possibly the offending value).
        model: String,
        /// The broken rule.
        reason: String,
    },
    /// A shape's descriptor breaks a rule (names, ranges, version, a
    /// feature rule without its routine...).
    #[error("invalid shape {shape:?} in plugin {plugin:?} ({origin}): {reason}")]
    InvalidShape {
        /// Where the plugin came from.
        origin: Origin,
        /// The plugin's name.
        plugin: String,
        /// The shape's name as declared (possibly the offending value).
        shape: String,
        /// The broken rule.
        reason: String,
    },
}

/// An error from a call into a shape plugin: the plugin's message (its
/// panics caught, its refusal of property values, a result that breaks
/// the interface's rules), with the shape, its plugin and the index of the
/// query (direction or point) in the batch, if the error is about one.
#[derive(Debug, Clone, PartialEq, Error)]
#[error(
    "shape {shape:?} of plugin {plugin:?}{}: {message}",
    index.map_or_else(String::new, |i| format!(", query {i}"))
)]
pub struct ShapeCallError {
    /// The shape's name.
    pub shape: String,
    /// The plugin's name.
    pub plugin: String,
    /// Index of the query in the batch, if the error is about one.
    pub index: Option<u64>,
    /// What went wrong, in the plugin's words or the host's.
    pub message: String,
}

/// An error in the properties given to a model (see
/// [`ModelRegistry::resolve_properties`](crate::ModelRegistry::resolve_properties)).
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum PropertyError {
    /// No model of that name is registered.
    #[error(
        "unknown contact model {model:?}; registered models: {}",
        list(available)
    )]
    UnknownModel {
        /// The name asked for.
        model: String,
        /// The registered model names.
        available: Vec<String>,
    },
    /// No shape kind of that name is registered.
    #[error(
        "unknown shape kind {shape:?}; registered shape kinds: {}",
        list(available)
    )]
    UnknownShape {
        /// The name asked for.
        shape: String,
        /// The registered shape kinds.
        available: Vec<String>,
    },
    /// The model has no property of that name.
    #[error(
        "{noun} {model:?} has no property {name:?}; allowed properties: {}",
        list(allowed)
    )]
    UnknownProperty {
        /// The model or shape kind.
        model: String,
        /// What `model` names: "model" or "shape".
        noun: &'static str,
        /// The unknown name.
        name: String,
        /// The model's property names, in descriptor order.
        allowed: Vec<String>,
    },
    /// A property is given more than once.
    #[error("property {name:?} of {noun} {model:?} is given more than once")]
    Duplicate {
        /// The model or shape kind.
        model: String,
        /// What `model` names: "model" or "shape".
        noun: &'static str,
        /// The repeated name.
        name: String,
    },
    /// A property without default is not given.
    #[error("{noun} {model:?} requires property {name:?} ({unit}), which has no default")]
    Missing {
        /// The model or shape kind.
        model: String,
        /// What `model` names: "model" or "shape".
        noun: &'static str,
        /// The missing property.
        name: String,
        /// Its unit.
        unit: String,
    },
    /// A value is NaN or infinite.
    #[error("property {name:?} of {noun} {model:?} must be a finite number, got {value}")]
    NotFinite {
        /// The model or shape kind.
        model: String,
        /// What `model` names: "model" or "shape".
        noun: &'static str,
        /// The property.
        name: String,
        /// The value given.
        value: f64,
    },
    /// A value lies outside the property's range.
    #[error(
        "property {name:?} of {noun} {model:?} is {value}, outside its range {}",
        range_text(*min, *max)
    )]
    OutOfRange {
        /// The model or shape kind.
        model: String,
        /// What `model` names: "model" or "shape".
        noun: &'static str,
        /// The property.
        name: String,
        /// The value given.
        value: f64,
        /// Smallest allowed value.
        min: f64,
        /// Largest allowed value.
        max: f64,
    },
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// Formats a closed range, writing an infinite end as open: `[0, inf)`.
pub(crate) fn range_text(min: f64, max: f64) -> String {
    let lower = if min == f64::NEG_INFINITY {
        "(-inf".to_string()
    } else {
        format!("[{min}")
    };
    let upper = if max == f64::INFINITY {
        "inf)".to_string()
    } else {
        format!("{max}]")
    };
    format!("{lower}, {upper}")
}
