//! Helpers shared by the core's integration tests: a simulation with the
//! linear model embedded, ball and block templates, flat meshes, periodic
//! cells, and the thread pools and bit dumps of determinism tests.
#![allow(dead_code, reason = "each test binary uses a subset")]

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use talus_core::math::{Mat3, Quat};
use talus_core::{BallInit, BlockInit, Cell, Fixity, Settings, Simulation, Timestep, Vec3};
use talus_geometry::{random_block, ConvexPolyhedron, RandomBlock};
use talus_sdk::PluginModRef;

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
    add_linear(&mut sim, &[(g, g), (g, w)], &props);
    (sim, g, w)
}

/// Adds the first model of the plugin `root` (the embedded linear and
/// linearbond plugins export one each) to `sim`, and assigns it with
/// `props` to each group pair of `pairs`.
pub fn add_plugin_model(
    sim: &mut Simulation,
    root: PluginModRef,
    pairs: &[(u16, u16)],
    props: &[f64],
) {
    let entry = talus_sdk::ModelEntry::from_abi((root.models())()[0]).unwrap();
    let m = sim.add_model(entry);
    for &(a, b) in pairs {
        sim.assign(a, b, m, props.to_vec()).unwrap();
    }
}

/// Adds the linear model to `sim`, assigned with `props` to each group
/// pair of `pairs`.
pub fn add_linear(sim: &mut Simulation, pairs: &[(u16, u16)], props: &[f64]) {
    add_plugin_model(sim, talus_plugin_linear::root_module(), pairs, props);
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
    square_mesh(-h, h, n)
}

/// A flat square wall in the plane z = 0 over `[lo, hi]^2`, made of
/// `n x n` squares each split along its diagonal from its lowest corner
/// (the split that cutting the two triangles of the whole square into
/// four, again and again, makes), normals +z.
pub fn square_mesh(lo: f64, hi: f64, n: usize) -> (Vec<[f64; 3]>, Vec<[u32; 3]>) {
    let mut v = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            let at = |k: usize| lo + (hi - lo) * k as f64 / n as f64;
            v.push([at(i), at(j), 0.0]);
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

/// A cubic periodic cell of side `side` with velocity gradient `l`.
pub fn cube(side: f64, l: Mat3) -> Cell {
    Cell::from_box(Vec3::ZERO, Vec3::splat(side), [true; 3], l).unwrap()
}

/// Simple shear, `v_x = rate y`.
pub fn shear(rate: f64) -> Mat3 {
    Mat3::from_cols(Vec3::ZERO, Vec3::new(rate, 0.0, 0.0), Vec3::ZERO)
}

/// Runs `f` in a rayon pool of `threads` threads, for runs compared
/// across thread counts.
pub fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(f)
}

/// Appends the bits of the components of `v` to `out`: state that
/// determinism tests compare bit for bit.
pub fn push_bits(out: &mut Vec<u64>, v: Vec3) {
    out.extend(v.to_array().map(f64::to_bits));
}

/// The bits of every ball's position, velocity, spin and force.
pub fn ball_bits(sim: &Simulation) -> Vec<u64> {
    let b = sim.balls();
    let mut out = Vec::new();
    for i in 0..b.len() {
        for v in [b.pos[i], b.vel[i], b.spin[i], b.force[i]] {
            push_bits(&mut out, v);
        }
    }
    out
}

/// Appends the bits of the periodic cell's stress and matrix to `out`.
pub fn push_cell_bits(out: &mut Vec<u64>, sim: &Simulation) {
    let s = sim.cell_state().unwrap();
    out.extend(s.stress.to_cols_array().map(f64::to_bits));
    out.extend(s.h.to_cols_array().map(f64::to_bits));
}
