//! The batch driver: turns a per-contact [`ContactModel`] into the batch
//! ABI call, catching panics so that none crosses the boundary.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use abi_stable::std_types::{RErr, ROk, RResult, RSlice, RSliceMut, RString};

use crate::{BatchContext, BatchError, ContactInput, ContactOutput};

/// A contact model written as a per-contact kernel.
///
/// The sdk generates the batch loop around [`ContactModel::force_displacement`];
/// a panic inside the kernel becomes a [`BatchError`] naming the contact.
pub trait ContactModel: Sized {
    /// The model's declaration (name, properties, state slots, rules).
    fn descriptor() -> crate::ModelDescriptor;

    /// Builds the model for one property set; `props` follows the order of
    /// the descriptor's properties and has been range-checked by the engine.
    fn from_props(props: &[f64]) -> Self;

    /// Updates `state` (this contact's slots) and writes `out` for one
    /// contact and one timestep of length `dt`.
    fn force_displacement(
        &self,
        dt: f64,
        input: &ContactInput,
        state: &mut [f64],
        out: &mut ContactOutput,
    );

    /// Runs the model over consecutive contacts that all use this property
    /// set: `state` holds `n_state` slots per contact and `outputs` one
    /// entry per input. Before it works on contact `i` the method sets
    /// `cursor` to `i`, so that a panic names that contact. Contacts
    /// flagged [`crate::flags::IDLE`] must be left untouched (state and
    /// output).
    ///
    /// The default calls [`ContactModel::force_displacement`] per contact
    /// that is not idle.
    /// A model overrides it to take per-set work (reciprocals, square
    /// roots of properties) out of the loop; the results must be the ones
    /// the per-contact call gives.
    fn force_displacement_run(
        &self,
        dt: f64,
        inputs: &[ContactInput],
        state: &mut [f64],
        n_state: usize,
        outputs: &mut [ContactOutput],
        cursor: &Cell<usize>,
    ) {
        for (i, (input, out)) in inputs.iter().zip(outputs.iter_mut()).enumerate() {
            if input.flags & crate::flags::IDLE != 0 {
                continue;
            }
            cursor.set(i);
            let slots = &mut state[i * n_state..(i + 1) * n_state];
            self.force_displacement(dt, input, slots, out);
        }
    }

    /// Merges the state `from` into `to` when the descriptor's propagation
    /// rule is `Custom`. The default copies.
    fn propagate(&self, from: &[f64], to: &mut [f64]) {
        to.copy_from_slice(from);
    }
}

thread_local! {
    /// Whether this thread is inside a batch call of the driver.
    static IN_BATCH: Cell<bool> = const { Cell::new(false) };
}

/// Keeps the default panic hook from printing a message and backtrace for
/// panics that the driver catches and reports as errors; panics elsewhere
/// still reach the previous hook. Installed once per copy of std (a cdylib
/// plugin has its own).
fn quiet_caught_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_BATCH.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// Marks the current thread as inside a batch call until dropped.
struct BatchScope;

impl BatchScope {
    fn enter() -> BatchScope {
        quiet_caught_panics();
        IN_BATCH.with(|b| b.set(true));
        BatchScope
    }
}

impl Drop for BatchScope {
    fn drop(&mut self) {
        IN_BATCH.with(|b| b.set(false));
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        format!("panicked: {s}")
    } else if let Some(s) = payload.downcast_ref::<String>() {
        format!("panicked: {s}")
    } else {
        "panicked".to_string()
    }
}

fn check_lengths(
    ctx: &BatchContext<'_>,
    n_inputs: usize,
    n_state: usize,
    n_outputs: usize,
) -> Result<(), String> {
    let per_contact = ctx.n_state as usize;
    let per_set = ctx.n_props as usize;
    if per_set > 0 && !ctx.props.len().is_multiple_of(per_set) {
        return Err(format!(
            "{} property values do not form sets of {per_set}",
            ctx.props.len()
        ));
    }
    if n_outputs != n_inputs || n_state != n_inputs * per_contact {
        return Err(format!(
            "batch slices disagree: {n_inputs} inputs, {n_outputs} outputs, {n_state} state values"
        ));
    }
    Ok(())
}

/// The batch ABI entry point for model `M` (see [`crate::BatchFn`]).
pub extern "C" fn run_batch<M: ContactModel>(
    ctx: &BatchContext<'_>,
    inputs: RSlice<'_, ContactInput>,
    mut state: RSliceMut<'_, f64>,
    mut outputs: RSliceMut<'_, ContactOutput>,
) -> RResult<(), BatchError> {
    // Index of the contact being processed: the start of the current run
    // plus the model's position within it.
    let run_start = Cell::new(0usize);
    let cursor = Cell::new(0usize);
    let _scope = BatchScope::enter();
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<(), String> {
        // The engine takes both lengths from this model's descriptor when
        // it loads the plugin; only the slices are checked here.
        let n_props = ctx.n_props as usize;
        let n_state = ctx.n_state as usize;
        check_lengths(ctx, inputs.len(), state.len(), outputs.len())?;
        let n_sets = ctx.props.len().checked_div(n_props).unwrap_or(1);
        let state = state.as_mut_slice();
        let outputs = outputs.as_mut_slice();
        // Runs of consecutive contacts with the same property set go to
        // the model in one call: contacts of one batch mostly share a set,
        // and the model is built once per run, without allocation.
        let mut lo = 0;
        while lo < inputs.len() {
            run_start.set(lo);
            cursor.set(0);
            let set = inputs[lo].prop_set;
            if set as usize >= n_sets {
                return Err(format!("property set {set} out of range ({n_sets} sets)"));
            }
            let hi = lo
                + inputs[lo..]
                    .iter()
                    .position(|c| c.prop_set != set)
                    .unwrap_or(inputs.len() - lo);
            let k = set as usize;
            let m = M::from_props(&ctx.props[k * n_props..(k + 1) * n_props]);
            m.force_displacement_run(
                ctx.dt,
                &inputs[lo..hi],
                &mut state[lo * n_state..hi * n_state],
                n_state,
                &mut outputs[lo..hi],
                &cursor,
            );
            lo = hi;
        }
        Ok(())
    }));
    match result {
        Ok(Ok(())) => ROk(()),
        Ok(Err(message)) => RErr(BatchError {
            index: (run_start.get() + cursor.get()) as u64,
            message: RString::from(message),
        }),
        Err(payload) => RErr(BatchError {
            index: (run_start.get() + cursor.get()) as u64,
            message: RString::from(panic_message(payload.as_ref())),
        }),
    }
}

/// The propagation ABI entry point for model `M` (see [`crate::PropagateFn`]).
pub extern "C" fn run_propagate<M: ContactModel>(
    props: RSlice<'_, f64>,
    from: RSlice<'_, f64>,
    mut to: RSliceMut<'_, f64>,
) -> RResult<(), RString> {
    let _scope = BatchScope::enter();
    let result = catch_unwind(AssertUnwindSafe(|| {
        if from.len() != to.len() {
            return Err(format!(
                "propagation between state blocks of {} and {} slots",
                from.len(),
                to.len()
            ));
        }
        M::from_props(props.as_slice()).propagate(from.as_slice(), to.as_mut_slice());
        Ok(())
    }));
    match result {
        Ok(Ok(())) => ROk(()),
        Ok(Err(m)) => RErr(RString::from(m)),
        Err(payload) => RErr(RString::from(panic_message(payload.as_ref()))),
    }
}

/// Builds a plugin's model list for the root module, catching a panic in
/// a model's `descriptor()`: unwinding out of the `extern "C"` root-module
/// function would abort the engine. A plugin whose list panics reports no
/// models, which the engine refuses with a message naming the library.
#[doc(hidden)]
pub fn guarded_models(
    build: fn() -> abi_stable::std_types::RVec<crate::ModelEntry>,
) -> abi_stable::std_types::RVec<crate::ModelEntry> {
    let _scope = BatchScope::enter();
    catch_unwind(build).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{flags, ModelDescriptor};

    /// Counts its calls per contact and echoes the gap.
    struct Echo;

    impl ContactModel for Echo {
        fn descriptor() -> ModelDescriptor {
            unreachable!("not needed by the driver")
        }
        fn from_props(_: &[f64]) -> Self {
            Echo
        }
        fn force_displacement(
            &self,
            _: f64,
            input: &ContactInput,
            state: &mut [f64],
            out: &mut ContactOutput,
        ) {
            state[0] += 1.0;
            out.force[0] = input.gap;
        }
    }

    #[test]
    fn idle_contacts_are_left_untouched() {
        let idle = [false, true, true, false, true, false];
        let inputs: Vec<ContactInput> = idle
            .iter()
            .enumerate()
            .map(|(i, &idle)| ContactInput {
                gap: -(i as f64),
                flags: if idle { flags::IDLE } else { 0 },
                ..ContactInput::default()
            })
            .collect();
        let mut state = vec![10.0; idle.len()];
        let before = ContactOutput {
            force: [7.0; 3],
            ..ContactOutput::default()
        };
        let mut outputs = vec![before; idle.len()];
        let ctx = BatchContext {
            dt: 1e-3,
            props: RSlice::from_slice(&[]),
            n_props: 0,
            n_state: 1,
        };
        let r = run_batch::<Echo>(
            &ctx,
            RSlice::from_slice(&inputs),
            RSliceMut::from_mut_slice(&mut state),
            RSliceMut::from_mut_slice(&mut outputs),
        );
        assert!(r.is_ok());
        for (i, &idle) in idle.iter().enumerate() {
            if idle {
                assert_eq!((state[i], outputs[i]), (10.0, before), "contact {i}");
            } else {
                assert_eq!((state[i], outputs[i].force[0]), (11.0, -(i as f64)));
            }
        }
    }
}
