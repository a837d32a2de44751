//! Cost and fidelity of filling meshes with pebbles (`src/pebble_fill/`):
//! the 1280-triangle non-convex grain and the dumbbell of the tests at
//! several resolutions and pebble counts, the best of five runs each, on one thread. The
//! numbers back the figures in `docs/physics.md`.
//!
//! Run: `cargo run --release -p talus-geometry --example pebble_fill_cost`

#[path = "../tests/solids/mod.rs"]
mod solids;

use std::time::{Duration, Instant};

use talus_geometry::{fill_with_pebbles, FillOptions};

fn main() {
    let meshes = [
        ("grain (1280 triangles)", solids::bumpy_grain()),
        ("dumbbell (1872 triangles)", solids::dumbbell()),
    ];
    println!("mesh | resolution | pebbles | time | volume ratio | Jaccard | surface gap / size");
    for (name, mesh) in &meshes {
        for resolution in [24, 40, 64] {
            for count in [1, 5, 20, 100] {
                let options = FillOptions {
                    resolution,
                    ..FillOptions::default()
                };
                let mut best = Duration::MAX;
                let mut fill = None;
                for _ in 0..5 {
                    let start = Instant::now();
                    let f = fill_with_pebbles(mesh, count, &options).expect("a closed mesh");
                    best = best.min(start.elapsed());
                    fill = Some(f);
                }
                let f = fill.expect("five runs");
                let fid = f.fidelity;
                println!(
                    "{name} | {resolution} | {} | {:.1} ms | {:.4} | {:.4} | {:.4}",
                    f.pebbles.len(),
                    best.as_secs_f64() * 1e3,
                    fid.volume_ratio,
                    fid.jaccard,
                    fid.surface_gap / fid.size
                );
            }
        }
    }
}
