//! talus-benches: criterion benches of talus kernels.
//!
//! The crate has no library code of its own; the benches live in
//! `benches/` and run with
//!
//! ```text
//! cargo bench -p talus-benches                 # all of them
//! cargo bench -p talus-benches --bench narrow_phase
//! cargo bench -p talus-benches --bench plugin_batch
//! cargo bench -p talus-benches --bench recording     # cost of one output frame
//! ```
//!
//! Every input is generated before timing from a fixed seed, so two runs
//! time the same work. CI only compiles them (`cargo bench --no-run`);
//! whole-engine throughput against the peer codes is measured by the
//! scripts in `tools/bench` (see `docs/benchmarks.md`).
