//! Keeps idle pool threads awake through the short serial stages of a
//! cycle.
//!
//! A cycle alternates parallel regions (law of motion, ball-facet gaps, the
//! contact pass) with serial stages of some tens of microseconds (contact
//! detection, the wall logic, the held-back force sums). That is long
//! enough for rayon's idle workers to go to sleep, and waking them again
//! for the next region costs a system call and a trip through the
//! scheduler each time, a large share of a sub-millisecond step. While a
//! [`Spinners`] guard lives, every other worker of the current pool runs a
//! job that only spins, so the next region finds them awake.
//!
//! Rule: no rayon call may run while a guard lives (a thread waiting in
//! rayon could pick up a spinner and wait for itself); the spinners also
//! give up on their own after [`MAX_SPIN`], so a broken rule costs that
//! much time, never a hang.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest a spinner runs.
const MAX_SPIN: Duration = Duration::from_millis(20);

/// Spinning jobs on the other threads of the current pool, stopped on drop.
pub(crate) struct Spinners {
    stop: Arc<AtomicBool>,
}

impl Spinners {
    /// Starts one spinner per other thread of the current pool; `None` on
    /// one thread.
    pub(crate) fn start() -> Option<Spinners> {
        let threads = rayon::current_num_threads();
        if threads < 2 {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        for _ in 1..threads {
            let stop = Arc::clone(&stop);
            rayon::spawn(move || {
                let start = Instant::now();
                let mut spins = 0u32;
                while !stop.load(Ordering::Acquire) {
                    std::hint::spin_loop();
                    spins = spins.wrapping_add(1);
                    if spins.is_multiple_of(4096) && start.elapsed() > MAX_SPIN {
                        return;
                    }
                }
            });
        }
        Some(Spinners { stop })
    }
}

impl Drop for Spinners {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    #[test]
    fn one_thread_starts_nothing() {
        assert!(pool(1).install(Spinners::start).is_none());
    }

    #[test]
    fn regions_after_a_guard_run_on_all_threads() {
        pool(2).install(|| {
            for _ in 0..200 {
                let guard = Spinners::start();
                assert!(guard.is_some());
                drop(guard);
                let sum: u64 = (0..10_000u64).into_par_iter().sum();
                assert_eq!(sum, 49_995_000);
            }
        });
    }

    #[test]
    fn a_region_under_a_guard_still_finishes() {
        // Breaking the rule costs at most the spinners' time limit.
        pool(2).install(|| {
            let start = Instant::now();
            let _guard = Spinners::start();
            let sum: u64 = (0..10_000u64).into_par_iter().sum();
            assert_eq!(sum, 49_995_000);
            assert!(start.elapsed() < Duration::from_secs(5));
        });
    }
}
