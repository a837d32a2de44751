//! SIGINT and SIGTERM during a run: finish the step, close the dataset,
//! exit 130 or 143.
//!
//! Reads: the signals the process receives while an [`Interrupts`] lives.
//! Writes: one flag the run loop polls between steps.
//! Invariant: the first SIGINT or SIGTERM only raises the flag; the run
//! stops at the end of the step in progress. A second one of either kind
//! ends the process at once (exit 128 + the signal's number), for a user
//! who does not want to wait for the step or the dataset to close.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use signal_hook::consts::signal::{SIGINT, SIGTERM};
use signal_hook::SigId;

/// A signal that asks the run to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interrupt {
    /// SIGINT (Ctrl-C): exit status 130.
    Int,
    /// SIGTERM (`kill`, a batch scheduler's time limit): exit status 143.
    Term,
}

impl Interrupt {
    /// The signal's name.
    pub fn name(self) -> &'static str {
        match self {
            Interrupt::Int => "SIGINT",
            Interrupt::Term => "SIGTERM",
        }
    }

    /// The exit status a shell expects after this signal: 128 plus its
    /// number.
    pub fn exit_status(self) -> u8 {
        match self {
            Interrupt::Int => 130,
            Interrupt::Term => 143,
        }
    }

    fn number(self) -> i32 {
        match self {
            Interrupt::Int => SIGINT,
            Interrupt::Term => SIGTERM,
        }
    }
}

/// The handlers of SIGINT and SIGTERM for the span of a run; dropping it
/// gives the signals their default action back.
pub struct Interrupts {
    received: Arc<AtomicUsize>,
    ids: Vec<SigId>,
}

impl Interrupts {
    /// Installs the handlers.
    pub fn install() -> Result<Self> {
        let received = Arc::new(AtomicUsize::new(0));
        let once = Arc::new(AtomicBool::new(false));
        let mut ids = Vec::new();
        for signal in [Interrupt::Int, Interrupt::Term] {
            let n = signal.number();
            // Handlers run in the order they were registered: the first
            // ends the process when an earlier signal already set `once`.
            let status = i32::from(signal.exit_status());
            ids.push(signal_hook::flag::register_conditional_shutdown(
                n,
                status,
                once.clone(),
            )?);
            ids.push(signal_hook::flag::register(n, once.clone())?);
            ids.push(signal_hook::flag::register_usize(
                n,
                received.clone(),
                n as usize,
            )?);
        }
        Ok(Self { received, ids })
    }

    /// The signal received, if any (the last one when both arrived).
    pub fn received(&self) -> Option<Interrupt> {
        match self.received.load(Ordering::Relaxed) {
            0 => None,
            n if n == SIGTERM as usize => Some(Interrupt::Term),
            _ => Some(Interrupt::Int),
        }
    }
}

impl Drop for Interrupts {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// Installs the handlers, naming the failure.
pub(crate) fn install() -> Result<Interrupts> {
    Interrupts::install().context("cannot install the SIGINT and SIGTERM handlers")
}
