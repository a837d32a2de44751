//! How fast data written on one CPU reaches another: two threads take turns
//! updating one 2 MiB buffer, and the time per turn is printed next to the
//! time one thread alone needs for the same update.
//!
//! On a machine whose CPUs share a last-level cache a turn costs about what
//! the lone update does; when the two threads sit on cores without a shared
//! cache (a virtual machine's CPUs may be placed either way, and the
//! placement can change from one minute to the next), every turn fetches
//! the buffer from the other core's cache and costs two or three times
//! more. `tools/bench/compare.sh` records the ratio after every
//! multi-threaded run, because talus's threads hand ball and contact data
//! to each other every step and feel the placement.
//!
//! A second probe tells whether the two CPUs compute independently: both
//! threads run the same arithmetic at once (eight independent chains of
//! multiply-adds, in registers), against one thread alone. Near 1 they
//! are separate cores; near 2 they share one core's execution units (two
//! hyperthreads of a core) or the host time-slices them, and every code's
//! second thread then adds little.
//!
//! usage: handover \[TURNS\]   (default 2000; prints `handover_us=.. alone_us=..
//! handover_ratio=.. together_ratio=..`)

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// 2 MiB of f64.
const LEN: usize = 1 << 18;

/// The shared buffer; the turn counter decides who may touch it.
struct Buffer(std::cell::UnsafeCell<Vec<f64>>);

// SAFETY: only the thread whose turn it is touches the buffer, and turns
// pass with release/acquire on the counter.
unsafe impl Sync for Buffer {}

fn update(v: &mut [f64]) {
    for x in v.iter_mut() {
        *x = *x * 0.5 + 1.0;
    }
}

/// Takes `turns` turns of parity `me` (0 or 1); returns the seconds spent
/// updating.
fn take_turns(buf: &Buffer, turn: &AtomicU64, me: u64, turns: u64) -> f64 {
    let mut busy = 0.0;
    for k in 0..turns {
        while turn.load(Ordering::Acquire) != 2 * k + me {
            std::hint::spin_loop();
        }
        let t = Instant::now();
        // SAFETY: it is this thread's turn (see `Buffer`).
        update(unsafe { &mut *buf.0.get() });
        busy += t.elapsed().as_secs_f64();
        turn.store(2 * k + me + 1, Ordering::Release);
    }
    busy
}

/// Eight independent multiply-add chains, `rounds` times; returns the
/// seconds taken.
fn arithmetic(rounds: u64) -> f64 {
    let t = Instant::now();
    let mut x = [1.0f64, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7];
    for _ in 0..rounds {
        for v in x.iter_mut() {
            *v = std::hint::black_box(*v).mul_add(0.999_999, 1e-9);
        }
    }
    std::hint::black_box(x);
    t.elapsed().as_secs_f64()
}

fn main() {
    let turns: u64 = match std::env::args().nth(1) {
        None => 2000,
        Some(s) => match s.parse() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("handover: expected a positive number of turns, got {s:?}");
                std::process::exit(2);
            }
        },
    };
    let buf = Arc::new(Buffer(std::cell::UnsafeCell::new(vec![1.0; LEN])));
    let turn = Arc::new(AtomicU64::new(0));
    let other = {
        let (buf, turn) = (Arc::clone(&buf), Arc::clone(&turn));
        std::thread::spawn(move || take_turns(&buf, &turn, 1, turns))
    };
    let mine = take_turns(&buf, &turn, 0, turns);
    let theirs = other.join().expect("the other thread finished");
    let handover = (mine + theirs) / (2 * turns) as f64;

    let mut alone = vec![1.0; LEN];
    let t = Instant::now();
    for _ in 0..turns {
        update(&mut alone);
    }
    let alone = t.elapsed().as_secs_f64() / turns as f64;
    std::hint::black_box(&alone);

    const ROUNDS: u64 = 5_000_000;
    let single = arithmetic(ROUNDS);
    let other = std::thread::spawn(|| arithmetic(ROUNDS));
    let mine = arithmetic(ROUNDS);
    let theirs = other.join().expect("the other thread finished");
    println!(
        "handover_us={:.1} alone_us={:.1} handover_ratio={:.2} together_ratio={:.2}",
        handover * 1e6,
        alone * 1e6,
        handover / alone,
        mine.max(theirs) / single
    );
}
