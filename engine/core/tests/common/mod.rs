//! Helpers shared by the core's integration tests: a simulation with the
//! linear model embedded, ball and block templates and flat meshes.
#![allow(dead_code, reason = "each test binary uses a subset")]

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use talus_core::math::Quat;
use talus_core::{BallInit, BlockInit, Fixity, Settings, Simulation, Timestep, Vec3};
use talus_geometry::{random_block, ConvexPolyhedron, RandomBlock};

pub const RADIUS: f64 = 0.01;
pub const DENSITY: f64 = 2500.0;
pub const KN: f64 = 1.0e6;

pub fn mass() -> f64 {
    DENSITY * 4.0 / 3.0 * std::f64::consts::PI * RADIUS.powi(3)
}

pub fn linear_sim(dt: f64, props: [f64; 5]) -> (Simulation, u16, u16) {
    let mut sim = Simulation::new(Settings {
        gravity: Vec3::ZERO,
        timestep: Timestep::Fixed(dt),
        ..Settings::default()
    });
    let g = sim.group("grain");
    let w = sim.group("wall");
    let root = talus_plugin_linear::root_module();
    let entry = talus_sdk::ModelEntry::from_abi((root.models())()[0]).unwrap();
    let m = sim.add_model(entry);
    sim.assign(g, g, m, props.to_vec()).unwrap();
    sim.assign(g, w, m, props.to_vec()).unwrap();
    (sim, g, w)
}

pub fn ball(pos: Vec3, velocity: Vec3, group: u16) -> BallInit {
    BallInit {
        pos,
        radius: RADIUS,
        density: DENSITY,
        velocity,
        spin: Vec3::ZERO,
        group,
        damping: 0.0,
        fixity: Default::default(),
    }
}

/// A flat square wall in the plane z = 0, [-h, h]^2, made of `n x n`
/// squares split into two triangles each, normals +z.
pub fn flat_mesh(h: f64, n: usize) -> (Vec<[f64; 3]>, Vec<[u32; 3]>) {
    let mut v = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            v.push([
                -h + 2.0 * h * i as f64 / n as f64,
                -h + 2.0 * h * j as f64 / n as f64,
                0.0,
            ]);
        }
    }
    let id = |i: usize, j: usize| (j * (n + 1) + i) as u32;
    let mut t = Vec::new();
    for j in 0..n {
        for i in 0..n {
            t.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
            t.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
        }
    }
    (v, t)
}

/// A block of `shape` at `pos` turned by `orientation`: at rest, free,
/// undamped, density 2000 kg/m^3, group 0.
pub fn block(shape: u32, pos: Vec3, orientation: Quat) -> BlockInit {
    BlockInit {
        shape,
        pos,
        orientation,
        velocity: Vec3::ZERO,
        spin: Vec3::ZERO,
        density: 2000.0,
        group: 0,
        damping: 0.0,
        fixity: Fixity::from_flags([false; 6]),
    }
}

/// A unit vector drawn uniformly (by rejection from the cube).
pub fn random_direction(rng: &mut ChaCha8Rng) -> Vec3 {
    loop {
        let v = Vec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        );
        let l = v.length();
        if (0.1..=1.0).contains(&l) {
            return v / l;
        }
    }
}

/// A seeded random convex block of about 2 cm (8 to 12 corners).
pub fn pebble(seed: u64) -> ConvexPolyhedron {
    let spec = RandomBlock {
        semi_axes: Vec3::new(0.012, 0.01, 0.008),
        min_vertices: 8,
        max_vertices: 12,
        roughness: 0.2,
    };
    random_block(&spec, seed).unwrap()
}
