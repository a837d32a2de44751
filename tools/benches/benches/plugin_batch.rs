//! The linear model over 1024 pre-generated contacts: one batch call
//! through the plugin's root module (the path the engine takes, across the
//! `extern "C"` boundary with the sdk's batch driver), against the same
//! kernel called directly per contact from Rust (load state, kernel, store
//! state), and against one root-module call per contact.
//!
//! Inputs are warm: every contact has been through one call before timing
//! (shear springs loaded, some sliding). About 80 % of the contacts
//! overlap; the rest are could-be-active ones with a small positive gap,
//! as in a settled bed.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_plugin_linear::kernel::{self, LinearProps, LinearState};
use talus_sdk::abi_stable::std_types::{RSlice, RSliceMut};
use talus_sdk::{BatchContext, ContactInput, ContactOutput, ModelEntry};

const N: usize = 1024;
const SEED: u64 = 0x0007_a105;
const DT: f64 = 2.0e-6;
/// kn, ks, fric, dp_nratio, dp_sratio: the peer benchmark's ball-ball set.
const PROPS: [f64; 5] = [1.0e5, 28571.43, 0.5, 0.2155, 0.0];

fn inputs() -> Vec<ContactInput> {
    let mut r = ChaCha8Rng::seed_from_u64(SEED);
    (0..N)
        .map(|_| {
            let gap = if r.random_bool(0.8) {
                -r.random_range(1.0e-9..1.0e-6)
            } else {
                r.random_range(0.0..1.0e-4)
            };
            ContactInput {
                gap,
                delta_n: r.random_range(-1.0e-9..1.0e-9),
                delta_s: [
                    r.random_range(-1.0e-9..1.0e-9),
                    r.random_range(-1.0e-9..1.0e-9),
                ],
                theta_t: r.random_range(-1.0e-6..1.0e-6),
                theta_b: [
                    r.random_range(-1.0e-6..1.0e-6),
                    r.random_range(-1.0e-6..1.0e-6),
                ],
                mass: 5.236e-6,
                radius: [1.0e-3, 1.0e-3],
                prop_set: 0,
                flags: 0,
            }
        })
        .collect()
}

fn bench_linear(c: &mut Criterion) {
    let root = talus_plugin_linear::root_module();
    let linear = root.models()()
        .into_iter()
        .map(|m| ModelEntry::from_abi(m).expect("a readable model record"))
        .find(|m| m.descriptor.name == "linear")
        .expect("the linear plugin lists the linear model");
    let batch = linear.batch;
    let n_state = linear.descriptor.state.len();
    let ctx = BatchContext {
        dt: DT,
        props: RSlice::from_slice(&PROPS),
        n_props: PROPS.len() as u32,
        n_state: n_state as u32,
        columns: RSlice::from_slice(&[]),
    };
    let inputs = inputs();
    let mut state = vec![0.0; N * n_state];
    let mut outputs = vec![ContactOutput::default(); N];
    let call = |state: &mut [f64], outputs: &mut [ContactOutput]| {
        batch(
            &ctx,
            RSlice::from_slice(&inputs),
            RSliceMut::from_mut_slice(state),
            RSliceMut::from_mut_slice(outputs),
        )
        .into_result()
        .expect("linear batch call");
    };
    // Warm start: shear springs carry load before timing.
    call(&mut state, &mut outputs);
    let warm_state = state.clone();

    let mut g = c.benchmark_group("plugin_batch_linear");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("root_module_batch_1024", |bch| {
        let mut state = warm_state.clone();
        bch.iter(|| {
            call(&mut state, &mut outputs);
            black_box(&outputs);
        })
    });
    g.bench_function("root_module_per_contact_1024", |bch| {
        let mut state = warm_state.clone();
        bch.iter(|| {
            for (i, input) in inputs.iter().enumerate() {
                batch(
                    &ctx,
                    RSlice::from_slice(std::slice::from_ref(input)),
                    RSliceMut::from_mut_slice(&mut state[i * n_state..(i + 1) * n_state]),
                    RSliceMut::from_mut_slice(std::slice::from_mut(&mut outputs[i])),
                )
                .into_result()
                .expect("linear batch call");
            }
            black_box(&outputs);
        })
    });
    let props = LinearProps::from_slice(&PROPS);
    g.bench_function("kernel_direct_1024", |bch| {
        let mut state = warm_state.clone();
        bch.iter(|| {
            for (i, input) in inputs.iter().enumerate() {
                let slots = &mut state[i * n_state..(i + 1) * n_state];
                let mut s = LinearState::load(slots);
                outputs[i] = kernel::force_displacement(&props, DT, black_box(input), &mut s);
                s.store(slots);
            }
            black_box(&outputs);
        })
    });
    g.finish();
}

criterion_group!(benches, bench_linear);
criterion_main!(benches);
