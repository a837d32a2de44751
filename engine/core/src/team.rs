//! A team of busy-waiting threads for the parallel regions of a cycle.
//!
//! A cycle of a small system lasts a fraction of a millisecond and holds
//! five or six parallel regions separated by short serial stages. Rayon's
//! idle workers, and its threads waiting for a stolen half of a split, yield
//! a few dozen times and then sleep on a futex; under a hypervisor a
//! sleeping thread's virtual CPU halts, and waking it can take tens of
//! microseconds. Once one wake-up is late the other thread of the region
//! waits long enough to fall asleep as well, and a run can settle into a
//! mode where every step pays for sleeps (measured on two threads: about
//! one voluntary context switch per step and the run 50 % slower than in
//! the other mode, in which it may equally stay). MPI codes poll and do not
//! see this.
//!
//! A [`Team`] holds one job on every other thread of the current pool.
//! The jobs spin, waiting for regions that the stepping thread opens with
//! [`map`]: the region's items are claimed one at a time by every thread
//! of the team, the stepping thread included, and each thread spins (never
//! sleeps) until the region is done. Between regions the jobs also run
//! whatever rayon work the pool has, so plain rayon calls keep working
//! while a team lives. The jobs leave when the team drops, or on their own
//! once nothing has touched the team for [`IDLE_LIMIT`] (a caller that
//! stops stepping without dropping the simulation costs that much CPU).
//!
//! Results never depend on which thread ran an item: [`map`] returns them
//! in item order. Without a team (one thread, or a pool whose threads are
//! held by other work), [`map`] runs on rayon.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use rayon::prelude::*;

/// A job leaves after this long without a touch.
const IDLE_LIMIT: Duration = Duration::from_millis(50);

/// How long [`Team::start`] waits for every job to be picked up (a new
/// pool's threads may still be starting).
const START_LIMIT: Duration = Duration::from_millis(50);

/// Spins between two offers of the CPU to other threads.
const YIELD_EVERY: u32 = 64;

/// Spins between two looks at the clock.
const CLOCK_EVERY: u32 = 256;

/// How long a thread that has finished its part of a region waits before
/// it helps with a part that another thread is working through (see
/// `Region::work`).
const PATIENCE: Duration = Duration::from_micros(20);

struct Shared {
    /// Jobs asked for (the team has one more member, the stepping thread).
    jobs: usize,
    stop: AtomicBool,
    /// Jobs started and not yet left.
    running: AtomicUsize,
    /// Nanoseconds from `origin` to the last touch.
    /// (On a line of its own: the stepping thread writes it twice per
    /// region, the jobs read it rarely.)
    touched: Line<AtomicU64>,
    origin: Instant,
    /// The open region, or null.
    region: AtomicPtr<Region<'static>>,
    /// Bumped when a region opens, so that a job looks at most once.
    epoch: AtomicU64,
    /// Jobs that may be looking at `region`.
    inside: AtomicUsize,
}

impl Shared {
    fn since_origin(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }

    fn touch(&self) {
        self.touched.0.store(self.since_origin(), Ordering::Relaxed);
    }
}

/// One parallel region: `n` tasks, cut into one contiguous part per
/// thread of the team.
///
/// A thread takes the tasks of its own part from the front, then helps
/// with the other parts from their back. The same thread thus runs the
/// same tasks in every region of the same shape (the law of motion's ball
/// blocks, the contact pass's segments), and their data stays in its
/// cache: when the two cores share no cache (a virtual machine's CPUs may
/// be placed that way), data that changes hands between steps costs more
/// than twice as much to reach.
struct Region<'a> {
    /// Per part, the untaken tasks `front..back` packed as
    /// `front << 32 | back`, each on a cache line of its own: a thread
    /// takes its tasks without pulling the line from another core.
    parts: Vec<Line<AtomicU64>>,
    /// The first task of each part.
    starts: Vec<u64>,
    /// Tasks done, added once per thread and region.
    done: Line<AtomicUsize>,
    task: &'a (dyn Fn(usize) + Sync),
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

impl<'a> Region<'a> {
    /// `cuts`, if given, are the first task of each part and `n`; else the
    /// parts are equal.
    fn new(
        n: usize,
        threads: usize,
        cuts: Option<&[usize]>,
        task: &'a (dyn Fn(usize) + Sync),
    ) -> Region<'a> {
        assert!(n < u32::MAX as usize, "too many tasks for one region");
        let starts: Vec<u64> = match cuts {
            Some(c) => c.iter().map(|&c| c as u64).collect(),
            None => (0..=threads).map(|p| cut(n, threads, p) as u64).collect(),
        };
        Region {
            parts: starts
                .windows(2)
                .map(|w| Line(AtomicU64::new(w[0] << 32 | w[1])))
                .collect(),
            starts,
            done: Line(AtomicUsize::new(0)),
            task,
            panic: Mutex::new(None),
        }
    }

    /// Takes a task of part `p`, from the front or the back.
    fn take(&self, p: usize, front: bool) -> Option<usize> {
        let part = &self.parts[p].0;
        let mut cur = part.load(Ordering::Relaxed);
        loop {
            let (lo, hi) = (cur >> 32, cur & 0xffff_ffff);
            if lo >= hi {
                return None;
            }
            let (next, i) = if front {
                ((lo + 1) << 32 | hi, lo)
            } else {
                (lo << 32 | (hi - 1), hi - 1)
            };
            match part.compare_exchange_weak(cur, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some(i as usize),
                Err(seen) => cur = seen,
            }
        }
    }

    /// Runs tasks for thread `me` of the team until none is left: its own
    /// part first, then the others'. A panicking task is recorded (the
    /// stepping thread raises it once the region is closed) and still
    /// counts as done.
    ///
    /// A thread helps at once with a part whose owner has not begun it
    /// (the owner is late or busy elsewhere), but with a part its owner
    /// is working through only once it has waited [`PATIENCE`]: a task
    /// taken over moves its data to the helper's core and back again the
    /// next step, which costs more than the wait unless the owner has
    /// stalled.
    fn work(&self, me: usize) {
        let threads = self.parts.len();
        let mut done = 0;
        let mut run = |i: usize| {
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| (self.task)(i))) {
                let mut slot = self.panic.lock().unwrap_or_else(|e| e.into_inner());
                slot.get_or_insert(payload);
            }
            done += 1;
        };
        while let Some(i) = self.take(me, true) {
            run(i);
        }
        let mut waiting: Option<Instant> = None;
        let mut patient = true;
        let mut spins = 0u32;
        loop {
            let (mut left, mut took) = (false, false);
            for k in 1..threads {
                let p = (me + k) % threads;
                let cur = self.parts[p].0.load(Ordering::Relaxed);
                let (lo, hi) = (cur >> 32, cur & 0xffff_ffff);
                if lo >= hi {
                    continue;
                }
                left = true;
                let begun = lo != self.starts[p];
                if begun && patient {
                    continue;
                }
                if let Some(i) = self.take(p, false) {
                    run(i);
                    took = true;
                }
            }
            if !left {
                break;
            }
            if !took {
                std::hint::spin_loop();
                spins = spins.wrapping_add(1);
                if patient && spins.is_multiple_of(CLOCK_EVERY / 4) {
                    patient = waiting.get_or_insert_with(Instant::now).elapsed() < PATIENCE;
                }
            }
        }
        if done > 0 {
            self.done.0.fetch_add(done, Ordering::Release);
        }
    }
}

/// A value alone on its cache line (two lines: some cores fetch lines in
/// pairs).
#[repr(align(128))]
struct Line<T>(T);

thread_local! {
    /// The team of the stepping thread, if it has one.
    static CURRENT: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
    /// Whether this thread is inside a region of its team (a nested
    /// [`map`] then runs serially).
    static IN_REGION: Cell<bool> = const { Cell::new(false) };
}

/// Busy-waiting jobs on the other threads of a pool, serving the regions
/// that [`map`] opens on the thread that started them; they leave on drop.
pub(crate) struct Team {
    shared: Arc<Shared>,
    jobs: usize,
    owner: ThreadId,
}

impl Team {
    /// Starts one job per other thread of the current pool, waits until all
    /// run and makes the team the current thread's. `None` on one thread,
    /// or when the jobs were not all picked up in time (those that start
    /// later leave at once).
    pub(crate) fn start() -> Option<Team> {
        let jobs = rayon::current_num_threads().saturating_sub(1);
        if jobs == 0 {
            return None;
        }
        let shared = Arc::new(Shared {
            jobs,
            stop: AtomicBool::new(false),
            running: AtomicUsize::new(0),
            touched: Line(AtomicU64::new(0)),
            origin: Instant::now(),
            region: AtomicPtr::new(std::ptr::null_mut()),
            epoch: AtomicU64::new(0),
            inside: AtomicUsize::new(0),
        });
        for _ in 0..jobs {
            let shared = Arc::clone(&shared);
            rayon::spawn(move || serve(&shared));
        }
        let team = Team {
            shared,
            jobs,
            owner: std::thread::current().id(),
        };
        // The spawned jobs may sit in this thread's own queue: no rayon
        // call until the workers have taken them all, or this thread could
        // take one itself and spin in it.
        let start = Instant::now();
        while team.shared.running.load(Ordering::Acquire) < jobs {
            if start.elapsed() > START_LIMIT {
                return None; // the drop stops the stragglers
            }
            std::hint::spin_loop();
        }
        CURRENT.with(|c| *c.borrow_mut() = Some(Arc::clone(&team.shared)));
        Some(team)
    }

    /// Marks activity: the jobs keep waiting for another [`IDLE_LIMIT`].
    pub(crate) fn touch(&self) {
        self.shared.touch();
    }

    /// Whether every job still runs and the team serves the current thread.
    pub(crate) fn is_serving(&self) -> bool {
        self.shared.running.load(Ordering::Acquire) == self.jobs
            && self.owner == std::thread::current().id()
    }
}

impl Drop for Team {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if self.owner == std::thread::current().id() {
            CURRENT.with(|c| {
                let mut c = c.borrow_mut();
                if c.as_ref().is_some_and(|s| Arc::ptr_eq(s, &self.shared)) {
                    *c = None;
                }
            });
        }
    }
}

/// The body of a team's job.
fn serve(shared: &Shared) {
    if shared.stop.load(Ordering::Acquire) {
        return;
    }
    // The stepping thread is member 0.
    let me = shared.running.fetch_add(1, Ordering::AcqRel) + 1;
    let limit = IDLE_LIMIT.as_nanos() as u64;
    let mut seen = 0u64;
    let mut spins = 0u32;
    while !shared.stop.load(Ordering::Acquire) {
        let epoch = shared.epoch.load(Ordering::Acquire);
        if epoch != seen {
            seen = epoch;
            // Announce, then look: the stepping thread closes the region
            // before it waits for `inside` to drop to zero, so a region
            // seen here stays alive until the decrement.
            shared.inside.fetch_add(1, Ordering::SeqCst);
            let region = shared.region.load(Ordering::SeqCst);
            if !region.is_null() {
                // SAFETY: see above; the region outlives this use.
                unsafe { &*region }.work(me);
            }
            shared.inside.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        // Other rayon work only once the whole team runs: before that,
        // this thread could pick up another job of the team and run it
        // nested, one thread serving twice.
        if shared.running.load(Ordering::Relaxed) == shared.jobs {
            if let Some(rayon::Yield::Executed) = rayon::yield_now() {
                continue;
            }
        }
        std::hint::spin_loop();
        spins = spins.wrapping_add(1);
        // Now and then let another thread have this CPU (the output
        // writer, say): spinning through its time slices would leave it
        // to preempt a thread in the middle of a region.
        if spins.is_multiple_of(YIELD_EVERY) {
            std::thread::yield_now();
        }
        // Idle: no touch for a while and no region open (a region with a
        // long task keeps the threads that finished theirs).
        if spins.is_multiple_of(CLOCK_EVERY) && shared.region.load(Ordering::Relaxed).is_null() {
            let touched = shared.touched.0.load(Ordering::Relaxed);
            if shared.since_origin().saturating_sub(touched) > limit {
                break;
            }
        }
    }
    shared.running.fetch_sub(1, Ordering::AcqRel);
}

/// The first of `n` items in part `p` of a region on `threads` threads
/// (`n` for `p == threads`): thread `p` of a team starts on the items
/// `cut(n, threads, p)..cut(n, threads, p + 1)`.
pub(crate) fn cut(n: usize, threads: usize, p: usize) -> usize {
    p * n / threads
}

/// A raw pointer that may cross threads; the region hands every index to
/// exactly one thread.
struct Slots<T>(*mut T);

// SAFETY: each index is read or written by one thread only, and the owner
// waits for all of them before touching the vector again.
unsafe impl<T: Send> Sync for Slots<T> {}

impl<T> Slots<T> {
    fn at(&self, i: usize) -> *mut T {
        // SAFETY (of callers): `i` is below the vector's length.
        unsafe { self.0.add(i) }
    }
}

/// `f(i, item)` for every item, in parallel, results in item order: on the
/// current thread's team when it has one, on rayon otherwise.
pub(crate) fn map<T, R, F>(items: Vec<T>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(usize, T) -> R + Sync,
{
    map_cut(items, None, f)
}

/// [`map`] with the items of thread `p` of the team given as
/// `cuts[p]..cuts[p + 1]`, so that work on the same data as another region
/// (the contact pass's segments, say) goes to the same thread. `cuts` that
/// do not fit (not one part per thread, not ascending from 0 to the number
/// of items) are ignored.
pub(crate) fn map_cut<T, R, F>(items: Vec<T>, cuts: Option<&[usize]>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(usize, T) -> R + Sync,
{
    let n = items.len();
    let team = if n > 1 && !IN_REGION.get() {
        CURRENT.with(|c| c.borrow().clone())
    } else {
        None
    };
    let Some(shared) = team else {
        if n <= 1 || IN_REGION.get() || rayon::current_num_threads() == 1 {
            return items
                .into_iter()
                .enumerate()
                .map(|(i, t)| f(i, t))
                .collect();
        }
        return items
            .into_par_iter()
            .enumerate()
            .with_max_len(1)
            .map(|(i, t)| f(i, t))
            .collect();
    };
    let mut items = std::mem::ManuallyDrop::new(items);
    let mut out: Vec<R> = Vec::with_capacity(n);
    let (input, output) = (Slots(items.as_mut_ptr()), Slots(out.as_mut_ptr()));
    let task = |i: usize| {
        // SAFETY: `i < n`, claimed once; the item is moved out exactly once
        // and its result written exactly once.
        let item = unsafe { input.at(i).read() };
        let r = f(i, item);
        unsafe { output.at(i).write(r) };
    };
    let threads = shared.jobs + 1;
    let cuts = cuts.filter(|c| {
        c.len() == threads + 1 && c[0] == 0 && c[threads] == n && c.windows(2).all(|w| w[0] <= w[1])
    });
    let region = Region::new(n, threads, cuts, &task);
    shared.touch();
    // SAFETY: the region is closed and no job looks at it any more before
    // this function returns (or unwinds): see the end of the region below.
    let erased = &region as *const Region<'_> as *mut Region<'static>;
    shared.region.store(erased, Ordering::SeqCst);
    shared.epoch.fetch_add(1, Ordering::SeqCst);
    IN_REGION.set(true);
    region.work(0);
    while region.done.0.load(Ordering::Acquire) < n {
        std::hint::spin_loop();
    }
    shared.region.store(std::ptr::null_mut(), Ordering::SeqCst);
    while shared.inside.load(Ordering::SeqCst) != 0 {
        std::hint::spin_loop();
    }
    // The idle time counts from the end of the region.
    shared.touch();
    IN_REGION.set(false);
    // SAFETY: every item was moved out (the vector only frees its buffer),
    // and on success every result was written.
    unsafe { items.set_len(0) };
    drop(std::mem::ManuallyDrop::into_inner(items));
    if let Some(payload) = region.panic.into_inner().unwrap_or_else(|e| e.into_inner()) {
        // Items and results of the tasks that ran are leaked, not dropped.
        resume_unwind(payload);
    }
    unsafe { out.set_len(n) };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// A team for the current pool; tests run side by side on two cores,
    /// so a start may need another try.
    fn new_team() -> Team {
        let start = Instant::now();
        loop {
            if let Some(team) = Team::start() {
                return team;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "no team");
        }
    }

    /// `map` of `n` items, each waiting until `threads` of them have
    /// started: finishes only if that many threads take part.
    fn meet(threads: usize, n: usize) -> Vec<usize> {
        let seen = AtomicUsize::new(0);
        map((0..n).collect(), |i, item| {
            assert_eq!(i, item);
            if seen.fetch_add(1, Ordering::AcqRel) < threads {
                let start = Instant::now();
                // Miri's clock runs with the instructions it interprets.
                let limit = Duration::from_secs(if cfg!(miri) { 3600 } else { 10 });
                while seen.load(Ordering::Acquire) < threads {
                    assert!(start.elapsed() < limit, "not in parallel");
                    std::hint::spin_loop();
                }
            }
            item * 10
        })
    }

    #[test]
    fn one_thread_starts_nothing_and_maps_serially() {
        pool(1).install(|| {
            assert!(Team::start().is_none());
            let out = map((0..5).collect::<Vec<usize>>(), |i, x| i + x);
            assert_eq!(out, vec![0, 2, 4, 6, 8]);
        });
    }

    #[test]
    fn regions_use_every_thread_and_keep_the_order() {
        pool(3).install(|| {
            let team = new_team();
            assert!(team.is_serving());
            // Under Miri (tools/miri.sh) a few rounds already take minutes.
            for _ in 0..if cfg!(miri) { 2 } else { 50 } {
                team.touch();
                let out = meet(3, 7);
                assert_eq!(out, (0..7).map(|i| i * 10).collect::<Vec<_>>());
                // Owned items that need dropping, and plain rayon calls.
                let words = map((0..9).map(|i| format!("w{i}")).collect(), |_, s| s + "!");
                assert_eq!(words[8], "w8!");
                let sum: u64 = (0..10_000u64).into_par_iter().sum();
                assert_eq!(sum, 49_995_000);
            }
        });
    }

    #[test]
    fn given_cuts_decide_where_each_thread_starts() {
        pool(2).install(|| {
            let team = new_team();
            for cuts in [[0, 6, 8], [0, 2, 8]] {
                team.touch();
                // Item 0 (the stepping thread's first) waits until another
                // item has started, so the job picks its first item while
                // the stepping thread cannot take any.
                let first_other = AtomicUsize::new(usize::MAX);
                let out = map_cut((0..8).collect(), Some(&cuts), |i, x: usize| {
                    if i == 0 {
                        let start = Instant::now();
                        while first_other.load(Ordering::Acquire) == usize::MAX {
                            assert!(start.elapsed() < Duration::from_secs(10), "alone");
                            std::hint::spin_loop();
                        }
                    } else {
                        let _ = first_other.compare_exchange(
                            usize::MAX,
                            i,
                            Ordering::AcqRel,
                            Ordering::Relaxed,
                        );
                    }
                    x * 2
                });
                assert_eq!(out, (0..8).map(|x| x * 2).collect::<Vec<_>>());
                assert_eq!(first_other.load(Ordering::Acquire), cuts[1], "{cuts:?}");
            }
            // Cuts that do not fit are ignored: equal parts.
            for bad in [&[0, 3][..], &[0, 5, 4], &[1, 4, 8], &[0, 4, 9]] {
                team.touch();
                let out = map_cut((0..8).collect(), Some(bad), |_, x: usize| x + 1);
                assert_eq!(out, (1..9).collect::<Vec<_>>(), "{bad:?}");
            }
        });
    }

    #[test]
    fn without_a_team_map_runs_on_rayon() {
        pool(2).install(|| {
            assert_eq!(meet(2, 4), vec![0, 10, 20, 30]);
        });
    }

    #[test]
    fn a_nested_map_runs_serially() {
        pool(2).install(|| {
            let _team = new_team();
            let out = map(vec![3usize, 4], |_, n| {
                map((0..n).collect(), |_, x: usize| x).len()
            });
            assert_eq!(out, vec![3, 4]);
        });
    }

    #[test]
    fn a_panicking_task_panics_on_the_stepping_thread_after_the_region() {
        pool(2).install(|| {
            let _team = new_team();
            let finished = AtomicUsize::new(0);
            let result = catch_unwind(AssertUnwindSafe(|| {
                map((0..8usize).collect(), |i, _| {
                    if i == 5 {
                        panic!("task five");
                    }
                    finished.fetch_add(1, Ordering::AcqRel);
                })
            }));
            let payload = result.expect_err("the panic comes through");
            assert_eq!(payload.downcast_ref::<&str>(), Some(&"task five"));
            assert_eq!(finished.load(Ordering::Acquire), 7);
            // The next region runs.
            assert_eq!(meet(2, 4), vec![0, 10, 20, 30]);
        });
    }

    #[test]
    fn jobs_leave_on_drop_and_when_untouched() {
        pool(2).install(|| {
            let team = new_team();
            let shared = Arc::clone(&team.shared);
            drop(team);
            assert!(CURRENT.with(|c| c.borrow().is_none()));
            let start = Instant::now();
            while shared.running.load(Ordering::Acquire) > 0 {
                assert!(start.elapsed() < Duration::from_secs(5));
                std::hint::spin_loop();
            }

            let team = new_team();
            team.touch();
            let start = Instant::now();
            while team.is_serving() {
                assert!(start.elapsed() < Duration::from_secs(5));
                std::thread::sleep(Duration::from_millis(1));
            }
            assert!(start.elapsed() >= IDLE_LIMIT / 2);
            // A region still completes, on this thread alone.
            let out = map((0..4usize).collect(), |_, x| x + 1);
            assert_eq!(out, vec![1, 2, 3, 4]);
        });
    }
}
