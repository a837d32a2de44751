//! talus-host: finds, loads and checks contact-model and shape plugins.
//!
//! This is the only crate of the engine that opens dynamic libraries. It
//! turns plugins, embedded (the default models, linked as rlibs) or loaded
//! from disk (cdylibs built against `talus-sdk`), into a [`ModelRegistry`]
//! of validated models that the core calls in batches and of shape kinds
//! ([`RegisteredShape`]: mass properties, support points, closest points),
//! and it checks the property values a run gives each model before step 0.
//!
//! Goals, in order:
//! 1. A bad plugin never crashes the engine: a library that is not a
//!    plugin, was built against another sdk or has another root-module
//!    layout is refused with a short message naming the file and both sdk
//!    versions.
//! 2. Every descriptor is checked once, at registration, so the rest of
//!    the engine trusts it (names, ranges, defaults, version).
//! 3. abi_stable stays confined here and in the sdk.
//!
//! ```no_run
//! use std::path::Path;
//! use talus_host::ModelRegistry;
//!
//! let mut registry = ModelRegistry::new();
//! // registry.add_embedded(talus_plugin_linear::root_module())?;
//! registry.load_path(Path::new("plugins/libmy_model.so"))?;
//! let props = registry.resolve_properties("my_model", &[("k".to_string(), 1e6)])?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Libraries are never unloaded. A model (or shape) registered under a
//! name that is already taken replaces the earlier one (see
//! [`ModelRegistry`]).

#![warn(missing_docs)]

mod describe;
mod error;
mod load;
mod registry;
mod shape;
mod validate;

#[cfg(feature = "fixtures")]
pub mod fixtures;

pub use describe::{describe, describe_shape};
pub use error::{HostError, HostErrorKind, PropertyError, ShapeCallError};
pub use registry::{ModelRegistry, Origin, RegisteredModel};
pub use shape::RegisteredShape;
pub use validate::{check_properties, check_shape_properties};
