//! The batch driver: turns a per-contact [`ContactModel`] into the batch
//! ABI call. It cuts the batch into runs of one property set, prepares the
//! model once per run, handles the engine's skip flags, checks the slices
//! and input columns, and catches panics so that none crosses the
//! boundary.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use abi_stable::std_types::{RErr, ROk, RResult, RSlice, RSliceMut, RString};

use crate::descriptor::{ModelDescriptor, ModelEntry, StateEvent};
use crate::shape::ShapeEntry;
use crate::{flags, inputs, BatchContext, BatchError, ContactInput, ContactOutput, InputColumn};

/// One contact as the kernel sees it: its base input (through `Deref`,
/// so `contact.gap` works) and its values of the optional inputs the model
/// asked for.
#[derive(Clone, Copy, Debug)]
pub struct Contact<'a> {
    input: &'a ContactInput,
    index: usize,
    columns: &'a [InputColumn<'a>],
}

impl<'a> Contact<'a> {
    /// A contact of a batch: `input` is contact `index` of the batch whose
    /// optional inputs are `columns`.
    pub fn new(input: &'a ContactInput, index: usize, columns: &'a [InputColumn<'a>]) -> Self {
        Contact {
            input,
            index,
            columns,
        }
    }

    /// The base input.
    #[inline]
    pub fn input(&self) -> &'a ContactInput {
        self.input
    }

    /// The contact's index in its batch.
    #[inline]
    pub fn index(&self) -> usize {
        self.index
    }

    /// This contact's values of optional input `id` (`width` of them, see
    /// [`crate::inputs`]), or `None` if the batch does not carry it. The
    /// engine carries every input the descriptor asks for (the driver
    /// checks), so `None` means the model did not ask.
    #[inline]
    pub fn get(&self, id: u32) -> Option<&'a [f64]> {
        let column = self.columns.iter().find(|c| c.id == id)?;
        let w = column.width as usize;
        column
            .values
            .as_slice()
            .get(self.index * w..(self.index + 1) * w)
    }

    /// The value of a one-wide optional input `id`, or `None` (see
    /// [`Contact::get`]).
    #[inline]
    pub fn scalar(&self, id: u32) -> Option<f64> {
        self.get(id)?.first().copied()
    }

    /// The value of a three-wide optional input `id`, or `None` (see
    /// [`Contact::get`]).
    #[inline]
    pub fn vector(&self, id: u32) -> Option<[f64; 3]> {
        self.get(id)?.try_into().ok()
    }
}

impl std::ops::Deref for Contact<'_> {
    type Target = ContactInput;

    #[inline]
    fn deref(&self) -> &ContactInput {
        self.input
    }
}

/// A contact model written as a per-contact kernel.
///
/// The sdk generates the batch call around it ([`crate::entry`],
/// [`crate::define_plugin!`]). For each run of consecutive contacts that
/// share a property set, the driver calls [`ContactModel::prepare`] once,
/// then, contact by contact:
///
/// - a contact flagged [`flags::IDLE`] is skipped: its state and output
///   stay exactly as they are;
/// - a contact flagged [`flags::SUPPRESSED`] gets [`ContactOutput::INACTIVE`]
///   (no force, no stiffness) and [`ContactModel::suppressed`], which by
///   default leaves its state alone;
/// - any other contact goes to [`ContactModel::force_displacement`].
///
/// The whole loop is generic over the model, so the kernel inlines into
/// it: what `prepare` computes is computed once per run, and a model pays
/// nothing for the features it does not use. A panic anywhere becomes a
/// [`BatchError`] naming the contact.
pub trait ContactModel: Sized {
    /// The model's declaration (see [`ModelDescriptor`] and its builder).
    fn descriptor() -> ModelDescriptor;

    /// The model for one property set and timestep `dt` (s), called once
    /// per run of contacts that share the set. `props` follows the order of
    /// the descriptor's properties and has been range-checked by the
    /// engine. Take per-run work here (reciprocals, square roots of
    /// properties), not in the kernel.
    fn prepare(props: &[f64], dt: f64) -> Self;

    /// The kernel: updates `state` (this contact's slots, as many as the
    /// descriptor declares) and returns what the contact does this step.
    /// It may keep per-run memory in `self` (the same value serves the
    /// whole run, in batch order).
    fn force_displacement(&mut self, contact: &Contact<'_>, state: &mut [f64]) -> ContactOutput;

    /// Called for a contact the engine suppressed this step, after the
    /// driver wrote [`ContactOutput::INACTIVE`] as its output. The default
    /// leaves the state untouched; a model that must release force history
    /// then (while keeping cumulative quantities) overrides it.
    #[inline]
    fn suppressed(&mut self, contact: &Contact<'_>, state: &mut [f64]) {
        let _ = (contact, state);
    }

    /// The model's rule for its state slots declared `Custom` (propagation
    /// or swap); see [`crate::StateFn`]. `props` is the target contact's
    /// property set, `from` the source state, `to` the target state, whose
    /// other slots already hold their result (writes to them are undone).
    /// The default copies `from` into `to`.
    fn custom_state(event: StateEvent, props: &[f64], from: &[f64], to: &mut [f64]) {
        let _ = (event, props);
        to.copy_from_slice(from);
    }
}

thread_local! {
    /// Whether this thread is inside a guarded call of the driver.
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

/// Marks the current thread as inside a guarded call until dropped.
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

/// Runs the body of a batch entry point with panics caught: an error or a
/// panic becomes a [`BatchError`] at the index that `cursor` holds then.
#[inline(always)]
pub(crate) fn guard_batch(
    cursor: &Cell<usize>,
    body: impl FnOnce() -> Result<(), String>,
) -> RResult<(), BatchError> {
    let _scope = BatchScope::enter();
    let message = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => return ROk(()),
        Ok(Err(message)) => message,
        Err(payload) => panic_message(payload.as_ref()),
    };
    RErr(BatchError {
        index: cursor.get() as u64,
        message: RString::from(message),
    })
}

/// Runs the body of an entry point that answers a value or a message,
/// with panics caught: a panic becomes the message `"panicked: ..."`.
pub(crate) fn guard_call<T>(body: impl FnOnce() -> Result<T, String>) -> RResult<T, RString> {
    let _scope = BatchScope::enter();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => ROk(value),
        Ok(Err(message)) => RErr(RString::from(message)),
        Err(payload) => RErr(RString::from(panic_message(payload.as_ref()))),
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
    for c in ctx.columns.iter() {
        if inputs::width(c.id).is_some_and(|w| w != c.width) {
            return Err(format!(
                "input {} comes {} wide, expected {}",
                inputs::name(c.id),
                c.width,
                inputs::width(c.id).unwrap_or(0)
            ));
        }
        if c.values.len() != n_inputs * c.width as usize {
            return Err(format!(
                "input {} has {} values for {n_inputs} contacts of width {}",
                inputs::name(c.id),
                c.values.len(),
                c.width
            ));
        }
    }
    Ok(())
}

/// Runs model `m` over one run of contacts (`first` is the batch index of
/// the first), each with its state slots from `slots`.
#[inline(always)]
fn run_contacts<'s, M: ContactModel>(
    m: &mut M,
    first: usize,
    inputs: &[ContactInput],
    outputs: &mut [ContactOutput],
    slots: impl Iterator<Item = &'s mut [f64]>,
    columns: &[InputColumn<'_>],
    cursor: &Cell<usize>,
) {
    let contacts = inputs.iter().zip(outputs.iter_mut()).zip(slots);
    for (k, ((input, out), state)) in contacts.enumerate() {
        if input.flags & (flags::IDLE | flags::SUPPRESSED) != 0 {
            if input.flags & flags::IDLE != 0 {
                continue;
            }
            cursor.set(first + k);
            *out = ContactOutput::INACTIVE;
            m.suppressed(&Contact::new(input, first + k, columns), state);
            continue;
        }
        cursor.set(first + k);
        *out = m.force_displacement(&Contact::new(input, first + k, columns), state);
    }
}

/// The batch ABI entry point for model `M` (see [`crate::BatchFn`]).
pub extern "C" fn run_batch<M: ContactModel>(
    ctx: &BatchContext<'_>,
    inputs: RSlice<'_, ContactInput>,
    mut state: RSliceMut<'_, f64>,
    mut outputs: RSliceMut<'_, ContactOutput>,
) -> RResult<(), BatchError> {
    // Index in the batch of the contact being processed.
    let cursor = Cell::new(0usize);
    guard_batch(&cursor, || {
        // The engine takes both lengths from this model's descriptor when
        // it loads the plugin; only the slices are checked here.
        let n_props = ctx.n_props as usize;
        let n_state = ctx.n_state as usize;
        check_lengths(ctx, inputs.len(), state.len(), outputs.len())?;
        let n_sets = ctx.props.len().checked_div(n_props).unwrap_or(1);
        let state = state.as_mut_slice();
        let outputs = outputs.as_mut_slice();
        let columns = ctx.columns.as_slice();
        // Runs of consecutive contacts with the same property set share
        // one prepared model: contacts of one batch mostly share a set.
        let mut lo = 0;
        while lo < inputs.len() {
            cursor.set(lo);
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
            let mut m = M::prepare(&ctx.props[k * n_props..(k + 1) * n_props], ctx.dt);
            let (run_in, run_out) = (&inputs[lo..hi], &mut outputs[lo..hi]);
            if n_state == 0 {
                let none = std::iter::repeat_with(<&mut [f64]>::default);
                run_contacts(&mut m, lo, run_in, run_out, none, columns, &cursor);
            } else {
                let slots = state[lo * n_state..hi * n_state].chunks_exact_mut(n_state);
                run_contacts(&mut m, lo, run_in, run_out, slots, columns, &cursor);
            }
            lo = hi;
        }
        Ok(())
    })
}

/// The custom-state ABI entry point for model `M` (see [`crate::StateFn`]).
pub extern "C" fn run_custom_state<M: ContactModel>(
    event: u32,
    props: RSlice<'_, f64>,
    from: RSlice<'_, f64>,
    mut to: RSliceMut<'_, f64>,
) -> RResult<(), RString> {
    guard_call(|| {
        let Some(event) = StateEvent::from_code(event) else {
            return Err(format!("unknown state event {event}"));
        };
        if from.len() != to.len() {
            return Err(format!(
                "state rule between blocks of {} and {} slots",
                from.len(),
                to.len()
            ));
        }
        M::custom_state(event, props.as_slice(), from.as_slice(), to.as_mut_slice());
        Ok(())
    })
}

/// Builds the exported records of a plugin's models and shapes, catching
/// a panic in a `descriptor()`: unwinding out of the `extern "C"`
/// root-module functions would abort the engine. A plugin with a panicking
/// descriptor reports neither models nor shapes (not just fewer), which the
/// engine refuses with a message naming the library.
#[doc(hidden)]
pub fn guarded_records(
    models: fn() -> Vec<ModelEntry>,
    shapes: fn() -> Vec<ShapeEntry>,
) -> (Vec<crate::ModelModRef>, Vec<crate::ShapeModRef>) {
    let _scope = BatchScope::enter();
    catch_unwind(|| {
        let models = models().iter().map(ModelEntry::to_abi).collect();
        let shapes = shapes().iter().map(ShapeEntry::to_abi).collect();
        (models, shapes)
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts its calls per contact in slot 0, echoes the gap, and marks
    /// suppressed contacts in slot 1 (when `SEE` is set).
    struct Echo<const SEE: bool>;

    impl<const SEE: bool> ContactModel for Echo<SEE> {
        fn descriptor() -> ModelDescriptor {
            ModelDescriptor::new("echo", "0.1.0")
        }
        fn prepare(_: &[f64], _: f64) -> Self {
            Echo
        }
        fn force_displacement(&mut self, c: &Contact<'_>, state: &mut [f64]) -> ContactOutput {
            state[0] += 1.0;
            ContactOutput::active([c.gap, 0.0, 0.0], [1.0, 0.0])
        }
        fn suppressed(&mut self, _: &Contact<'_>, state: &mut [f64]) {
            if SEE {
                state[1] = -1.0;
            }
        }
    }

    fn ctx<'a>(columns: &'a [InputColumn<'a>], n_state: u32) -> BatchContext<'a> {
        BatchContext {
            dt: 1e-3,
            props: RSlice::from_slice(&[]),
            n_props: 0,
            n_state,
            columns: RSlice::from_slice(columns),
        }
    }

    fn run<M: ContactModel>(
        ctx: &BatchContext<'_>,
        inputs: &[ContactInput],
        state: &mut [f64],
        outputs: &mut [ContactOutput],
    ) -> Result<(), BatchError> {
        run_batch::<M>(
            ctx,
            RSlice::from_slice(inputs),
            RSliceMut::from_mut_slice(state),
            RSliceMut::from_mut_slice(outputs),
        )
        .into_result()
    }

    #[test]
    fn idle_and_suppressed_contacts_are_handled_by_the_driver() {
        let kinds = [0, flags::IDLE, flags::SUPPRESSED, 0, flags::IDLE, 0];
        let inputs: Vec<ContactInput> = kinds
            .iter()
            .enumerate()
            .map(|(i, &f)| ContactInput {
                gap: -(i as f64),
                flags: f | if i == 2 { flags::NEW } else { 0 },
                ..ContactInput::default()
            })
            .collect();
        let before = ContactOutput {
            force: [7.0; 3],
            status: 9,
            ..ContactOutput::default()
        };
        for see in [false, true] {
            let mut state = vec![10.0; 2 * kinds.len()];
            let mut outputs = vec![before; kinds.len()];
            let ctx = ctx(&[], 2);
            if see {
                run::<Echo<true>>(&ctx, &inputs, &mut state, &mut outputs).unwrap();
            } else {
                run::<Echo<false>>(&ctx, &inputs, &mut state, &mut outputs).unwrap();
            }
            for (i, &f) in kinds.iter().enumerate() {
                let slots = &state[2 * i..2 * i + 2];
                if f == flags::IDLE {
                    assert_eq!((slots, outputs[i]), (&[10.0, 10.0][..], before), "{i}");
                } else if f == flags::SUPPRESSED {
                    assert_eq!(outputs[i], ContactOutput::INACTIVE);
                    let marked = if see { -1.0 } else { 10.0 };
                    assert_eq!(slots, [10.0, marked], "{i}");
                } else {
                    assert_eq!(slots, [11.0, 10.0], "{i}");
                    assert_eq!(outputs[i].force[0], -(i as f64));
                }
            }
        }
    }

    /// Reads the overlap volume and the first branch vector.
    struct Reader;

    impl ContactModel for Reader {
        fn descriptor() -> ModelDescriptor {
            ModelDescriptor::new("reader", "0.1.0")
                .input(inputs::OVERLAP_VOLUME)
                .input(inputs::BRANCH_1)
        }
        fn prepare(_: &[f64], _: f64) -> Self {
            Reader
        }
        fn force_displacement(&mut self, c: &Contact<'_>, _: &mut [f64]) -> ContactOutput {
            let v = c.scalar(inputs::OVERLAP_VOLUME).unwrap();
            let b = c.vector(inputs::BRANCH_1).unwrap();
            assert_eq!(c.get(inputs::CONTACT_AREA), None);
            ContactOutput::active([v, b[0], b[2]], [0.0; 2])
        }
    }

    #[test]
    fn kernels_read_their_contact_s_values_of_optional_inputs() {
        let inputs = vec![ContactInput::default(); 3];
        let volume = [1.0, 2.0, 3.0];
        let branch: Vec<f64> = (0..9).map(f64::from).collect();
        let columns = [
            InputColumn {
                id: inputs::BRANCH_1,
                width: 3,
                values: RSlice::from_slice(&branch),
            },
            InputColumn {
                id: inputs::OVERLAP_VOLUME,
                width: 1,
                values: RSlice::from_slice(&volume),
            },
        ];
        let mut outputs = vec![ContactOutput::default(); 3];
        let ctx = ctx(&columns, 0);
        assert_eq!(ctx.column(inputs::OVERLAP_VOLUME), Some(&volume[..]));
        run::<Reader>(&ctx, &inputs, &mut [], &mut outputs).unwrap();
        let forces: Vec<[f64; 3]> = outputs.iter().map(|o| o.force).collect();
        assert_eq!(forces, [[1.0, 0.0, 2.0], [2.0, 3.0, 5.0], [3.0, 6.0, 8.0]]);

        // A column of the wrong length or width is refused, not read.
        let short = [InputColumn {
            id: inputs::OVERLAP_VOLUME,
            width: 1,
            values: RSlice::from_slice(&volume[..2]),
        }];
        let err = run::<Reader>(&ctx_of(&short), &inputs, &mut [], &mut outputs).unwrap_err();
        assert!(
            err.message.contains("overlap_volume has 2 values"),
            "{err:?}"
        );
        let wide = [InputColumn {
            id: inputs::OVERLAP_VOLUME,
            width: 3,
            values: RSlice::from_slice(&branch),
        }];
        let err = run::<Reader>(&ctx_of(&wide), &inputs, &mut [], &mut outputs).unwrap_err();
        assert!(err.message.contains("3 wide, expected 1"), "{err:?}");
        // A column the model needs but the engine left out: the kernel's
        // `unwrap` panics, and the panic comes back naming contact 0.
        let err = run::<Reader>(&ctx_of(&[]), &inputs, &mut [], &mut outputs).unwrap_err();
        assert_eq!(err.index, 0);
        assert!(err.message.starts_with("panicked"), "{err:?}");
    }

    fn ctx_of<'a>(columns: &'a [InputColumn<'a>]) -> BatchContext<'a> {
        ctx(columns, 0)
    }

    /// Counts how often `prepare` runs, through slot 0 of each contact.
    struct Runs {
        id: f64,
    }

    thread_local! {
        static PREPARED: Cell<u32> = const { Cell::new(0) };
    }

    impl ContactModel for Runs {
        fn descriptor() -> ModelDescriptor {
            ModelDescriptor::new("runs", "0.1.0")
        }
        fn prepare(props: &[f64], _: f64) -> Self {
            PREPARED.with(|p| p.set(p.get() + 1));
            Runs { id: props[0] }
        }
        fn force_displacement(&mut self, c: &Contact<'_>, state: &mut [f64]) -> ContactOutput {
            if c.gap > 0.0 {
                panic!("open contact {}", c.index());
            }
            state[0] = self.id;
            ContactOutput::default()
        }
    }

    #[test]
    fn one_prepare_per_run_of_a_property_set_and_errors_name_the_contact() {
        let sets = [0u32, 0, 1, 1, 1, 0];
        let inputs: Vec<ContactInput> = sets
            .iter()
            .map(|&s| ContactInput {
                prop_set: s,
                ..ContactInput::default()
            })
            .collect();
        let props = [10.0, 20.0];
        let ctx = BatchContext {
            props: RSlice::from_slice(&props),
            n_props: 1,
            ..ctx(&[], 1)
        };
        let mut state = vec![0.0; 6];
        let mut outputs = vec![ContactOutput::default(); 6];
        PREPARED.with(|p| p.set(0));
        run::<Runs>(&ctx, &inputs, &mut state, &mut outputs).unwrap();
        assert_eq!(PREPARED.with(Cell::get), 3);
        assert_eq!(state, [10.0, 10.0, 20.0, 20.0, 20.0, 10.0]);

        let mut open = inputs.clone();
        open[4].gap = 1.0;
        let err = run::<Runs>(&ctx, &open, &mut state, &mut outputs).unwrap_err();
        assert_eq!(err.index, 4);
        assert_eq!(err.message, "panicked: open contact 4");

        let mut bad = inputs;
        bad[3].prop_set = 2;
        let err = run::<Runs>(&ctx, &bad, &mut state, &mut outputs).unwrap_err();
        assert_eq!(err.index, 3);
        assert!(
            err.message.contains("property set 2 out of range"),
            "{err:?}"
        );
    }

    #[test]
    fn custom_state_reports_unknown_events_and_panics() {
        let from = [1.0, 2.0];
        let mut to = [0.0; 2];
        let call = |event: u32, to: &mut [f64]| {
            run_custom_state::<Runs>(
                event,
                RSlice::from_slice(&[]),
                RSlice::from_slice(&from),
                RSliceMut::from_mut_slice(to),
            )
            .into_result()
        };
        call(StateEvent::Merge.code(), &mut to).unwrap();
        assert_eq!(to, from);
        let err = call(77, &mut to).unwrap_err();
        assert_eq!(err.as_str(), "unknown state event 77");
        let err = call(StateEvent::Swap.code(), &mut to[..1]).unwrap_err();
        assert!(err.contains("blocks of 2 and 1"), "{err}");
    }
}
