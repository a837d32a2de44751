//! The wall stage of a cycle (gaps of every ball-facet contact, then the
//! wall logic) on a floor of 20 000 facets with a layer of balls resting on
//! it, in reduced and in full resolution; the throughput is per (ball,
//! wall) pair with overlapping contacts, the unit the issue reports.
//!
//! The floor has the settle box's footprint (52.5 x 42 mm, 100 x 100
//! squares of two triangles: 0.525 x 0.42 mm), the balls R = 1 mm with
//! overlaps from 1e-4 R to 1e-2 R at seeded random spots, so their wall
//! contact points fall on faces, edges and vertices alike.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_core::balls::{BallInit, Fixity};
use talus_core::wall::Resolution;
use talus_core::{Settings, Simulation, Timestep, Vec3, Wall};

const R: f64 = 1.0e-3;
const LX: f64 = 0.0525;
const LY: f64 = 0.042;
const SQUARES: usize = 100;

fn floor() -> Wall {
    let mut v = Vec::new();
    for j in 0..=SQUARES {
        for i in 0..=SQUARES {
            v.push([
                LX * i as f64 / SQUARES as f64,
                LY * j as f64 / SQUARES as f64,
                0.0,
            ]);
        }
    }
    let id = |i: usize, j: usize| (j * (SQUARES + 1) + i) as u32;
    let mut t = Vec::new();
    for j in 0..SQUARES {
        for i in 0..SQUARES {
            t.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
            t.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
        }
    }
    Wall::new("floor", &v, &t, None).expect("a valid floor")
}

fn layer(mode: Resolution) -> Simulation {
    let mut sim = Simulation::new(Settings {
        gravity: Vec3::ZERO,
        timestep: Timestep::Fixed(1e-6),
        ..Settings::default()
    });
    let g = sim.group("grain");
    let w = sim.group("wall");
    let root = talus_plugin_linear::root_module();
    let entry = talus_sdk::ModelEntry::from_abi((root.models())()[0]).expect("linear");
    let m = sim.add_model(entry);
    let props = vec![1.0e5, 2.857e4, 0.5, 0.2, 0.0];
    sim.assign(g, g, m, props.clone()).unwrap();
    sim.assign(g, w, m, props).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(0x0f1e_2d3c);
    let (nx, ny) = (24, 19);
    for j in 0..ny {
        for i in 0..nx {
            let x = (i as f64 + 0.5) * LX / nx as f64 + rng.random_range(-0.05..0.05) * R;
            let y = (j as f64 + 0.5) * LY / ny as f64 + rng.random_range(-0.05..0.05) * R;
            let overlap = R * 10f64.powf(rng.random_range(-4.0..-2.0));
            sim.add_ball(BallInit {
                pos: Vec3::new(x, y, R - overlap),
                radius: R,
                density: 2500.0,
                velocity: Vec3::ZERO,
                spin: Vec3::ZERO,
                group: g,
                damping: 0.0,
                fixity: Fixity::from_flags([true; 6]),
            })
            .unwrap();
        }
    }
    let mut wall = floor();
    wall.resolution = mode;
    sim.add_wall(wall, w);
    sim.prepare().unwrap();
    sim.cycle().unwrap();
    sim
}

fn bench_wall_stage(c: &mut Criterion) {
    let mut g = c.benchmark_group("wall_stage_floor20k");
    for (name, mode) in [("reduced", Resolution::Reduced), ("full", Resolution::Full)] {
        let mut sim = layer(mode);
        let pairs = sim.wall_stage().unwrap();
        assert_eq!(pairs, 24 * 19, "every ball overlaps the floor");
        g.throughput(Throughput::Elements(pairs as u64));
        g.bench_function(name, |b| b.iter(|| sim.wall_stage().unwrap()));
    }
    g.finish();
}

criterion_group!(benches, bench_wall_stage);
criterion_main!(benches);
