//! The model registry: every contact model and shape kind the engine can
//! use, from the embedded default plugins and from libraries loaded at run
//! time.
//!
//! Reads root modules (embedded or opened by [`crate::load`]); holds one
//! [`RegisteredModel`] per model name and one [`RegisteredShape`] per shape
//! name. Invariants: names are unique among models and among shapes (a
//! later registration of a name replaces the earlier one in place) and
//! every registered descriptor has passed [`crate::validate`].

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use abi_stable::std_types::{RSlice, RSliceMut};
use talus_sdk::{
    inputs, BatchContext, BatchError, ContactInput, ContactOutput, InputColumn, ModelEntry,
    PluginModRef, ShapeEntry,
};

use crate::load::open_library;
use crate::validate::{check_properties, check_shape_properties, validate_entry, validate_shape};
use crate::{HostError, HostErrorKind, PropertyError, RegisteredShape};

/// Where a registered model comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Linked into the executable (the engine's default plugins).
    Embedded,
    /// Loaded from this dynamic library file.
    Library(PathBuf),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Embedded => f.write_str("embedded"),
            Origin::Library(path) => write!(f, "library {}", path.display()),
        }
    }
}

/// A contact model ready for use: its entry (descriptor and batch
/// function), the plugin that provides it and where that plugin came from.
#[derive(Clone)]
pub struct RegisteredModel {
    /// The model's descriptor and functions, as the plugin returned them.
    pub entry: talus_sdk::ModelEntry,
    /// Name of the plugin that provides the model.
    pub plugin: String,
    /// The sdk version the plugin was built with (it may be older than the
    /// engine's within the same `0.minor`).
    pub sdk_version: String,
    /// Where the plugin came from.
    pub origin: Origin,
}

impl fmt::Debug for RegisteredModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredModel")
            .field("descriptor", &self.entry.descriptor)
            .field("plugin", &self.plugin)
            .field("sdk_version", &self.sdk_version)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl RegisteredModel {
    /// The model's name.
    pub fn name(&self) -> &str {
        self.entry.descriptor.name.as_str()
    }

    /// Number of properties per property set.
    pub fn n_props(&self) -> usize {
        self.entry.descriptor.properties.len()
    }

    /// Number of state slots per contact.
    pub fn n_state(&self) -> usize {
        self.entry.descriptor.state.len()
    }

    /// Calls the model's batch function on `inputs` with a timestep `dt`
    /// (s), the property sets `props` (row-major, `n_props` values per set,
    /// as returned by [`ModelRegistry::resolve_properties`]), the values of
    /// optional inputs `columns` (`(id, values)` with `width` values per
    /// contact; only those the model asks for are passed on), the
    /// contacts' state (`n_state` values per contact) and one output per
    /// input.
    ///
    /// The plugin catches its own panics; an `Err` names the index of the
    /// contact in the batch and what went wrong, including an input the
    /// model asks for that `columns` lacks (but one that only some pairs
    /// have, which is then left out as in the engine's other batches).
    pub fn run_batch(
        &self,
        dt: f64,
        props: &[f64],
        inputs: &[ContactInput],
        columns: &[(u32, &[f64])],
        state: &mut [f64],
        outputs: &mut [ContactOutput],
    ) -> Result<(), BatchError> {
        let mut given = Vec::with_capacity(self.entry.descriptor.inputs.len());
        for &id in &self.entry.descriptor.inputs {
            let found = columns.iter().find(|(c, _)| *c == id);
            // An input only some pairs have may be left out, as the
            // engine leaves it out of the other pairs' batches.
            let optional = inputs::info(id).is_some_and(|i| !i.every_batch);
            let Some(&(_, values)) = found else {
                if optional {
                    continue;
                }
                return Err(BatchError {
                    index: 0,
                    message: format!("no values given for input {}", inputs::name(id)).into(),
                });
            };
            given.push(InputColumn {
                id,
                // Registered models only ask for ids this sdk defines.
                width: inputs::width(id).unwrap_or(1),
                values: RSlice::from_slice(values),
            });
        }
        let ctx = BatchContext {
            dt,
            props: RSlice::from_slice(props),
            n_props: self.n_props() as u32,
            n_state: self.n_state() as u32,
            columns: RSlice::from_slice(&given),
        };
        (self.entry.batch)(
            &ctx,
            RSlice::from_slice(inputs),
            RSliceMut::from_mut_slice(state),
            RSliceMut::from_mut_slice(outputs),
        )
        .into_result()
    }
}

/// All contact models and shape kinds known to a run, by name.
///
/// Models and shapes are registered from embedded plugins
/// ([`ModelRegistry::add_embedded`]) and from plugin libraries on disk
/// ([`ModelRegistry::load_path`]); a plugin may provide either or both.
/// Every descriptor is validated when it is registered. A model whose name
/// is already registered replaces the earlier one, keeping its position in
/// [`ModelRegistry::models`]: this lets a user load the cdylib build of a
/// default model over the embedded one, and when two libraries define the
/// same name, the one loaded later wins. Replacing is silent. Shapes follow
/// the same rule among shapes ([`ModelRegistry::shapes`]); a model and a
/// shape may share a name.
///
/// Libraries are never unloaded, even when all their models are replaced.
#[derive(Clone, Debug, Default)]
pub struct ModelRegistry {
    models: Vec<RegisteredModel>,
    shapes: Vec<RegisteredShape>,
}

impl ModelRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers the models and shapes of a plugin linked into the
    /// executable (for example `talus_plugin_linear::root_module()`).
    ///
    /// On error nothing is registered.
    pub fn add_embedded(&mut self, root: PluginModRef) -> Result<(), HostError> {
        let found = collect(root, Origin::Embedded)?;
        self.register(found);
        Ok(())
    }

    /// Loads plugin libraries and registers their models and shapes;
    /// returns how many models and shapes were registered (replacements
    /// included).
    ///
    /// A file is loaded as one plugin library. A directory is scanned (not
    /// recursively) for the platform's library files, `lib*.so` on Linux,
    /// `lib*.dylib` on macOS and `*.dll` on Windows, which are loaded in
    /// order of file name.
    ///
    /// On error nothing is registered, but libraries opened before the
    /// failing one stay loaded.
    pub fn load_path(&mut self, path: &Path) -> Result<usize, HostError> {
        let meta = fs::metadata(path).map_err(|error| io_error(path, error))?;
        let files = if meta.is_dir() {
            library_files(path)?
        } else {
            vec![path.to_path_buf()]
        };
        let mut found = Found::default();
        for file in files {
            let root = open_library(&file)?;
            let more = collect(root, Origin::Library(file))?;
            found.models.extend(more.models);
            found.shapes.extend(more.shapes);
        }
        let count = found.models.len() + found.shapes.len();
        self.register(found);
        Ok(count)
    }

    /// The model registered under `name`.
    pub fn get(&self, name: &str) -> Option<&RegisteredModel> {
        self.models.iter().find(|m| m.name() == name)
    }

    /// All registered models, in order of first registration of each name.
    pub fn models(&self) -> &[RegisteredModel] {
        &self.models
    }

    /// The shape registered under `name`.
    pub fn shape(&self, name: &str) -> Option<&RegisteredShape> {
        self.shapes.iter().find(|s| s.name() == name)
    }

    /// All registered shapes, in order of first registration of each name.
    pub fn shapes(&self) -> &[RegisteredShape] {
        &self.shapes
    }

    /// Checks the properties given to `model` against its descriptor and
    /// returns its full property set in descriptor order, defaults filled
    /// in.
    ///
    /// Errors: an unknown model (listing the registered ones), an unknown
    /// property (listing the allowed ones), a property given twice, a
    /// missing required property, a value that is not finite or lies
    /// outside the declared `[min, max]`.
    pub fn resolve_properties(
        &self,
        model: &str,
        given: &[(String, f64)],
    ) -> Result<Vec<f64>, PropertyError> {
        let Some(registered) = self.get(model) else {
            return Err(PropertyError::UnknownModel {
                model: model.to_string(),
                available: self.models.iter().map(|m| m.name().to_string()).collect(),
            });
        };
        check_properties(&registered.entry.descriptor, given)
    }

    /// [`ModelRegistry::resolve_properties`] for the shape kind `shape`.
    pub fn resolve_shape_properties(
        &self,
        shape: &str,
        given: &[(String, f64)],
    ) -> Result<Vec<f64>, PropertyError> {
        let Some(registered) = self.shape(shape) else {
            return Err(PropertyError::UnknownShape {
                shape: shape.to_string(),
                available: self.shapes.iter().map(|s| s.name().to_string()).collect(),
            });
        };
        check_shape_properties(&registered.entry.descriptor, given)
    }

    fn register(&mut self, found: Found) {
        for model in found.models {
            replace_or_push(&mut self.models, model, RegisteredModel::name);
        }
        for shape in found.shapes {
            replace_or_push(&mut self.shapes, shape, RegisteredShape::name);
        }
    }
}

/// Puts `item` in the place of the item of the same name, or at the end.
fn replace_or_push<T>(list: &mut Vec<T>, item: T, name: fn(&T) -> &str) {
    match list.iter_mut().find(|old| name(old) == name(&item)) {
        Some(slot) => *slot = item,
        None => list.push(item),
    }
}

/// The validated models and shapes of one or more plugins.
#[derive(Default)]
struct Found {
    models: Vec<RegisteredModel>,
    shapes: Vec<RegisteredShape>,
}

/// Reads and validates the models and shapes of one plugin.
fn collect(root: PluginModRef, origin: Origin) -> Result<Found, HostError> {
    let plugin = root.plugin_name()().to_string();
    let sdk_version = root.sdk_version()().to_string();
    let records = root.models()();
    // A library built before sdk 0.3.4 has no shape list: no shapes.
    let shape_records = root.shapes().map(|shapes| shapes()).unwrap_or_default();
    let invalid = |model: &str, reason: String| -> HostError {
        HostErrorKind::InvalidDescriptor {
            origin: origin.clone(),
            plugin: plugin.clone(),
            model: model.to_string(),
            reason,
        }
        .into()
    };
    let invalid_shape = |shape: &str, reason: String| -> HostError {
        HostErrorKind::InvalidShape {
            origin: origin.clone(),
            plugin: plugin.clone(),
            shape: shape.to_string(),
            reason,
        }
        .into()
    };
    if records.is_empty() && shape_records.is_empty() {
        return Err(invalid(
            "",
            "the plugin declares no models and no shapes".to_string(),
        ));
    }
    let mut entries: Vec<ModelEntry> = Vec::with_capacity(records.len());
    for record in records {
        let entry = ModelEntry::from_abi(record)
            .map_err(|reason| invalid(record.name().as_str(), reason))?;
        let name = entry.descriptor.name.as_str();
        validate_entry(&entry).map_err(|reason| invalid(name, reason))?;
        if entries.iter().any(|e| e.descriptor.name == name) {
            return Err(invalid(name, "the plugin declares this model twice".into()));
        }
        entries.push(entry);
    }
    let mut shapes: Vec<ShapeEntry> = Vec::with_capacity(shape_records.len());
    for record in shape_records {
        let entry = ShapeEntry::from_abi(record)
            .map_err(|reason| invalid_shape(record.name().as_str(), reason))?;
        let name = entry.descriptor.name.as_str();
        validate_shape(&entry).map_err(|reason| invalid_shape(name, reason))?;
        if shapes.iter().any(|e| e.descriptor.name == name) {
            return Err(invalid_shape(
                name,
                "the plugin declares this shape twice".into(),
            ));
        }
        shapes.push(entry);
    }
    let models = entries
        .into_iter()
        .map(|entry| RegisteredModel {
            entry,
            plugin: plugin.clone(),
            sdk_version: sdk_version.clone(),
            origin: origin.clone(),
        })
        .collect();
    let shapes = shapes
        .into_iter()
        .map(|entry| RegisteredShape {
            entry,
            plugin: plugin.clone(),
            sdk_version: sdk_version.clone(),
            origin: origin.clone(),
        })
        .collect();
    Ok(Found { models, shapes })
}

/// The plugin library files of a directory, sorted by file name.
fn library_files(dir: &Path) -> Result<Vec<PathBuf>, HostError> {
    let prefix = std::env::consts::DLL_PREFIX;
    let suffix = std::env::consts::DLL_SUFFIX;
    let mut files = Vec::new();
    for item in fs::read_dir(dir).map_err(|error| io_error(dir, error))? {
        let item = item.map_err(|error| io_error(dir, error))?;
        let path = item.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.len() > prefix.len() + suffix.len()
            && name.starts_with(prefix)
            && name.ends_with(suffix)
            && path.is_file()
        {
            files.push(path);
        }
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(files)
}

fn io_error(path: &Path, error: io::Error) -> HostError {
    let path = path.to_path_buf();
    if error.kind() == io::ErrorKind::NotFound {
        HostErrorKind::NotFound { path }.into()
    } else {
        HostErrorKind::Io { path, error }.into()
    }
}
