//! Errors of the engine core: one typed error for setup, one for stepping.

use thiserror::Error;

/// Something in the model cannot be simulated; found before step 0.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum SetupError {
    /// A wall's mesh is unusable.
    #[error("wall '{wall}': {message}")]
    Wall {
        /// Wall name.
        wall: String,
        /// What is wrong.
        message: String,
    },
    /// A ball is invalid.
    #[error("ball {id}: {message}")]
    Ball {
        /// Ball id.
        id: u64,
        /// What is wrong.
        message: String,
    },
    /// A block is invalid.
    #[error("block {id}: {message}")]
    Block {
        /// Block id.
        id: u64,
        /// What is wrong.
        message: String,
    },
    /// A clump is invalid.
    #[error("clump {id}: {message}")]
    Clump {
        /// Clump id.
        id: u64,
        /// What is wrong.
        message: String,
    },
    /// A clump template is invalid.
    #[error("clump template '{template}': {message}")]
    Template {
        /// Template name.
        template: String,
        /// What is wrong.
        message: String,
    },
    /// The run needs something the engine does not do yet.
    #[error("not supported yet: {0}")]
    Unsupported(String),
    /// A block shape is invalid.
    #[error("shape '{shape}': {message}")]
    Shape {
        /// Shape name.
        shape: String,
        /// What is wrong.
        message: String,
    },
    /// A bond install cannot work.
    #[error("bonds: {message}")]
    Bonds {
        /// What is wrong.
        message: String,
    },
    /// Two groups that can touch have no contact model.
    #[error("no contact model is assigned to groups '{0}' and '{1}'; add a [[models]] entry with groups = [\"{0}\", \"{1}\"]")]
    MissingPairing(String, String),
    /// A model was given the wrong number of property values.
    #[error("model '{model}': {message}")]
    Model {
        /// Model name.
        model: String,
        /// What is wrong.
        message: String,
    },
    /// A generator cannot place its balls.
    #[error("{0}")]
    Generate(String),
    /// The periodic cell cannot hold this run.
    #[error("cell: {message}")]
    Cell {
        /// What is wrong.
        message: String,
    },
}

/// The run cannot continue.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum StepError {
    /// A plugin returned an error (or panicked) in its batch call.
    #[error("model '{model}' failed at contact {contact} (step {step}): {message}")]
    Model {
        /// Model name.
        model: String,
        /// Contact id.
        contact: u64,
        /// Step number.
        step: u64,
        /// The plugin's message.
        message: String,
    },
    /// A body moved or turned too far in one step, its state became NaN
    /// or infinite, or the kinetic energy jumped (see [`crate::blowup`]).
    #[error("{0}")]
    BlowUp(crate::blowup::BlowUp),
    /// A plugin shape's query failed (an error it returned, a panic it
    /// raised, a point that is not finite).
    #[error("shape '{shape}' ({kind}) failed at the contact of {ends} (step {step}): {message}")]
    Shape {
        /// The shape's name in the config.
        shape: String,
        /// The shape kind (the plugin's name for it).
        kind: String,
        /// The contact's two ends, as words ("ball 3 and body 7").
        ends: String,
        /// The step.
        step: u64,
        /// The shape's message.
        message: String,
    },
    /// A contact produced a non-finite force.
    #[error("contact {contact} (model '{model}') returned a non-finite force at step {step}")]
    NonFiniteForce {
        /// Contact id.
        contact: u64,
        /// Model name.
        model: String,
        /// Step number.
        step: u64,
    },
    /// A wall's mesh became unusable as it moved.
    #[error("wall '{wall}' at step {step}: {message}")]
    Wall {
        /// Wall name.
        wall: String,
        /// Facet at fault.
        facet: usize,
        /// Step number.
        step: u64,
        /// What happened, naming the facet.
        message: String,
    },
    /// The model failed its checks before step 0.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The automatic timestep could not be found.
    #[error("no timestep: {0}")]
    Timestep(String),
    /// The periodic cell became too thin for its balls.
    #[error("cell at step {step}: {message}")]
    Cell {
        /// The step.
        step: u64,
        /// What happened.
        message: String,
    },
}
