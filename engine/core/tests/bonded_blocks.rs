//! Bonds between blocks with the linearbond model: a bonded pair of cubes
//! pulled apart and sheared against the closed forms of the springs and
//! the strengths, the same pair turned rigidly (no increments at all), a
//! ball bonded to a block, a cube bonded to a floor of one facet and of
//! many, and a bonded heap on one and two threads.
//!
//! A bonded block contact keeps the plane it had when it bonded, carried
//! with the pieces (seed 001's incremental contact location), and its
//! bond's section is the disc of the contact area at bonding.

mod common;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::f64::consts::PI;
use talus_core::math::Quat;
use talus_core::{
    BallInit, BlockInit, BlockShape, BondInstall, BreakMode, Fixity, PairKind, Settings,
    Simulation, Timestep, Vec3, When,
};
use talus_geometry::box_block;

const DT: f64 = 1e-7;
const KN: f64 = 1e6;
const PB_KN: f64 = 2e12;
const PB_KS: f64 = 8e11;
/// Edges of the two cubes (m): the smaller one presses a square of its
/// own face into the larger one's, so the contact area is `B * B`.
const A: f64 = 0.02;
const B: f64 = 0.01;

/// Properties of linearbond in descriptor order (kn, ks, fric, dp_nratio,
/// dp_sratio, pb_kn, pb_ks, pb_rmul, pb_ten, pb_ten_sd, pb_coh, pb_coh_sd,
/// pb_fa, pb_mcf).
fn props(ten: f64, coh: f64, fa: f64) -> Vec<f64> {
    vec![
        KN, 0.0, 0.0, 0.0, 0.0, PB_KN, PB_KS, 1.0, ten, 0.0, coh, 0.0, fa, 1.0,
    ]
}

fn linearbond(s: &mut Simulation, g: u16, props: Vec<f64>) {
    let root = talus_plugin_linearbond::root_module();
    let entry = talus_sdk::ModelEntry::from_abi((root.models())()[0]).unwrap();
    let m = s.add_model(entry);
    s.assign(g, g, m, props).unwrap();
}

fn sim(dt: f64) -> Simulation {
    Simulation::new(Settings {
        gravity: Vec3::ZERO,
        timestep: Timestep::Fixed(dt),
        ..Settings::default()
    })
}

/// A cube shape of edge `edge`, and the orientation that places it with
/// its faces on the axes.
fn cube(s: &mut Simulation, name: &str, edge: f64) -> (u32, Quat) {
    let shape = s.add_shape(BlockShape::new(name, &box_block(Vec3::splat(edge)).unwrap()).unwrap());
    (shape, s.shapes()[shape as usize].input_rotation)
}

fn held_block(shape: u32, pos: Vec3, orientation: Quat, group: u16) -> BlockInit {
    BlockInit {
        group,
        fixity: Fixity::from_flags([true; 6]),
        ..common::block(shape, pos, orientation)
    }
}

fn bond_at_start(s: &mut Simulation, g: u16, gap: f64) {
    s.install_bonds(BondInstall {
        groups: (g, g),
        gap,
        at: When::Step(0),
    })
    .unwrap();
    s.prepare().unwrap();
}

/// The large cube at the origin and the small one along +x overlapping
/// it by `u0`, every degree of freedom held (the tests set velocities),
/// bonded at step 0 with property values `props`.
fn cube_pair(props: Vec<f64>, u0: f64, dt: f64) -> Simulation {
    cube_pair_at(props, u0, Vec3::ZERO, dt)
}

/// As [`cube_pair`], the small cube moved across the large one's face by
/// `offset` (y and z, within the face).
fn cube_pair_at(props: Vec<f64>, u0: f64, offset: Vec3, dt: f64) -> Simulation {
    let mut s = sim(dt);
    let g = s.group("rock");
    let (big, qa) = cube(&mut s, "big", A);
    let (small, qb) = cube(&mut s, "small", B);
    s.add_block(held_block(big, Vec3::ZERO, qa, g)).unwrap();
    let at = Vec3::new(0.5 * (A + B) - u0, 0.0, 0.0) + offset;
    s.add_block(held_block(small, at, qb, g)).unwrap();
    linearbond(&mut s, g, props);
    bond_at_start(&mut s, g, 0.0);
    s
}

/// The bond's state slots (by name) of the only contact of `pair`.
fn bond_slots(s: &mut Simulation, pair: PairKind, names: &[&str]) -> Vec<f64> {
    let snap = s.snapshot();
    let model = snap.models().next().unwrap();
    let slots: Vec<&str> = model.state_slots().map(|x| x.name).collect();
    let rows: Vec<_> = snap.contacts().filter(|c| c.pair == pair).collect();
    assert_eq!(rows.len(), 1, "one contact");
    names
        .iter()
        .map(|n| rows[0].state[slots.iter().position(|x| x == n).unwrap()])
        .collect()
}

/// Pulled apart at constant speed along the normal, past the overlap
/// they bonded with: the normal force is the linear spring on the
/// overlap (`kn (u0 - v t)` while it lasts) plus the bond's,
/// `-pb_kn A v dt k` after `k` steps with `A = B^2` the contact area at
/// bonding (`pb_rmul = 1`: the bond is the disc of that area), which
/// stays the bond's section with the blocks apart; the location moves
/// with the mean of the two faces' points, half the small cube's
/// displacement. The bond breaks in the step whose tensile stress
/// `pb_kn v dt k` first exceeds the strength; from then on the contact is
/// resolved again and, apart, carries nothing.
#[test]
fn a_bonded_cube_pair_pulled_apart_follows_both_springs_and_breaks_on_time() {
    let (v, u0) = (0.05, 1e-7);
    let per_step = v * DT;
    // Half a step's stress past step 40: the break is due in step 41.
    let ten = PB_KN * 40.5 * per_step;
    let mut s = cube_pair(props(ten, 1e30, 0.0), u0, DT);
    let area = B * B;
    s.blocks_mut().vel[1] = Vec3::new(v, 0.0, 0.0);
    // The centroid of the overlap, where the contact bonded.
    let xc0 = Vec3::new(0.5 * (A - u0), 0.0, 0.0);
    let mut broke_at = None;
    for k in 1..=70u64 {
        s.cycle().unwrap();
        for b in s.take_bond_breaks() {
            assert_eq!(b.mode, BreakMode::Tension);
            assert!(broke_at.is_none(), "one break");
            broke_at = Some(b.step);
        }
        // The overlap from the positions (the bonded contact carries it
        // by increments, the same to rounding).
        let x = s.blocks().pos[1].x - s.blocks().pos[0].x;
        let linear = KN * (0.5 * (A + B) - x).max(0.0);
        let bond = if k < 41 {
            -PB_KN * area * per_step * k as f64
        } else {
            0.0
        };
        let f = s.blocks().force[1];
        let scale = linear.abs() + bond.abs();
        assert!(
            (f.x - (linear + bond)).abs() <= 1e-9 * scale,
            "step {k}: force {}, closed form {} (linear {linear}, bond {bond})",
            f.x,
            linear + bond
        );
        assert!(f.y.abs() + f.z.abs() <= 1e-12 * scale, "step {k}: {f}");
        assert_eq!(s.blocks().force[0], -f, "step {k}: action and reaction");
        if k < 41 {
            let [fn_, sigma] = bond_slots(&mut s, PairKind::BlockBlock, &["pb_fn", "pb_sigma"])[..]
            else {
                unreachable!()
            };
            assert!((fn_ - bond).abs() <= 1e-9 * bond.abs(), "step {k}");
            let stress = PB_KN * per_step * k as f64;
            assert!((sigma - stress).abs() <= 1e-9 * stress, "step {k}");
            let xc = s.snapshot().contacts().next().unwrap().xc;
            let moved = xc0 + Vec3::X * (0.5 * per_step * k as f64);
            assert!((xc - moved).length() <= 1e-12 * A, "step {k}: {xc}");
        }
    }
    assert_eq!(broke_at, Some(41));
}

/// Pressed along the normal, then sheared by moving the small cube
/// across at constant speed: the shear force is `-pb_ks A v dt k` along
/// the motion, the normal force the linear spring plus the pressed
/// bond's `pb_kn A u_p`; the bond breaks in shear in the step whose shear
/// stress first exceeds the cohesion plus the normal stress times
/// tan(phi). The location follows the bonded faces' mean, then, resolved
/// again after the break, the overlap.
#[test]
fn a_bonded_cube_pair_sheared_follows_its_spring_and_breaks_at_the_strength() {
    let (vp, vs, u0) = (0.02, 0.03, 2e-7);
    let press = 30u64;
    let fa = 25.0f64;
    let area = B * B;
    let pressed = vp * DT * press as f64;
    let sigma_n = PB_KN * pressed;
    let shear_step = PB_KS * vs * DT;
    // Half a step past step 70 of shearing.
    let coh = shear_step * 70.5 - sigma_n * fa.to_radians().tan();
    assert!(coh > 0.0);
    let mut s = cube_pair(props(1e30, coh, fa), u0, DT);
    s.blocks_mut().vel[1] = Vec3::new(-vp, 0.0, 0.0);
    for _ in 0..press {
        s.cycle().unwrap();
    }
    s.blocks_mut().vel[1] = Vec3::new(0.0, vs, 0.0);
    let mut broke_at = None;
    for k in 1..=100u64 {
        s.cycle().unwrap();
        for b in s.take_bond_breaks() {
            assert_eq!(b.mode, BreakMode::Shear);
            assert!(broke_at.is_none(), "one break");
            broke_at = Some(k);
        }
        let f = s.blocks().force[1];
        let linear = KN * (u0 + pressed);
        let (bond_n, bond_s) = if k < 71 {
            (sigma_n * area, -shear_step * k as f64 * area)
        } else {
            (0.0, 0.0)
        };
        // After the break the contact is resolved again, at the depth of
        // the small cube's face in the large one's (the same to rounding).
        let expected = Vec3::new(linear + bond_n, bond_s, 0.0);
        let tolerance = Vec3::new(1e-9 * (linear + bond_n), 1e-9 * bond_s.abs(), 0.0);
        let off = (f - expected).abs() - tolerance - Vec3::splat(1e-12 * linear);
        assert!(off.max_element() <= 0.0, "step {k}: {f} vs {expected}");
        // While bonded (up to the step it breaks in, which began bonded)
        // the location moves with the mean of the two faces' points, half
        // the small cube's way; once resolved again it is the overlap's
        // centroid, which moves with the small cube.
        let xc = s.snapshot().contacts().next().unwrap().xc;
        let across = vs * DT * k as f64 * if k <= 71 { 0.5 } else { 1.0 };
        let expected = Vec3::new(0.5 * (A - u0 - pressed), across, 0.0);
        assert!((xc - expected).length() <= 1e-12 * A, "step {k}: {xc}");
    }
    assert_eq!(broke_at, Some(71));
}

/// Both cubes moved together as one rigid body: turned a radian about
/// the line through their centroids (oblique to the contact normal, the
/// small cube sitting off the large one's face centre) while that line
/// moves at a constant velocity. The relative motion at the carried
/// location is nil, so the bond takes no force or moment (zero to 1e-12
/// of what the same motion of one cube alone would have made), the gap
/// keeps its value at bonding, and the normal and the location move with
/// the bodies. A location re-resolved, or a normal carried with the
/// wrong rotation, would load the bond at once.
#[test]
fn a_bonded_cube_pair_moved_rigidly_takes_no_increments() {
    let (u0, dt) = (4e-7, 1e-5);
    let offset = Vec3::new(0.0, 0.004, -0.004);
    let mut s = cube_pair_at(props(1e30, 1e30, 0.0), u0, offset, dt);
    let (x1, x2) = (s.blocks().pos[0], s.blocks().pos[1]);
    let w = (x2 - x1).normalize() * 100.0;
    let v = Vec3::new(0.3, -0.2, 0.1);
    let steps = (1.0 / (w.length() * dt)).round() as u64;
    let first = s.snapshot().contacts().next().map(|c| (c.xc, c.n, c.gap));
    let (xc0, n0, gap0) = first.unwrap();
    assert!((n0 - Vec3::X).length() < 1e-12, "{n0}");
    assert!((gap0 + u0).abs() < 1e-12, "{gap0}");
    {
        // The cubes' inertia is isotropic: the angular momentum that
        // turns each at `w` is `m a^2 / 6 w`, whatever its orientation.
        let mut b = s.blocks_mut();
        for (i, edge) in [A, B].into_iter().enumerate() {
            b.momentum[i] = w * (2000.0 * edge.powi(5) / 6.0);
            b.vel[i] = v;
        }
    }
    let slots = ["pb_fn", "pb_fs_s", "pb_fs_t", "pb_mt", "pb_mb_s", "pb_mb_t"];
    for k in 1..=steps {
        s.cycle().unwrap();
        let bond = bond_slots(&mut s, PairKind::BlockBlock, &slots);
        // What one cube alone moved at the other's speeds would have made.
        let travel = (w.length() * (x2 - x1).length() + v.length()) * dt * k as f64;
        let force_scale = PB_KN * B * B * travel;
        let moment_scale = PB_KN * B.powi(4) / (4.0 * PI) * w.length() * dt * k as f64;
        for (name, value) in slots.iter().zip(&bond) {
            let scale = if name.starts_with("pb_f") {
                force_scale
            } else {
                moment_scale
            };
            assert!(value.abs() <= 1e-12 * scale, "step {k}: {name} = {value}");
        }
        let c = s.snapshot().contacts().next().map(|c| (c.xc, c.n, c.gap));
        let (xc, n, gap) = c.unwrap();
        assert!((gap - gap0).abs() <= 1e-12 * travel, "step {k}: gap {gap}");
        let turn = Quat::from_scaled_axis(w * dt * k as f64);
        assert!((n - turn * n0).length() < 1e-12, "step {k}: n {n}");
        let moved = x1 + v * dt * k as f64 + turn * (xc0 - x1);
        assert!(
            (xc - moved).length() <= 1e-12 * (xc0 - x1).length(),
            "step {k}: xc {xc} vs {moved}"
        );
    }
    // The force is the linear spring on the overlap kept from bonding,
    // along the turned normal, beside what is left of the bond (the
    // bound above: the rounding of the positions, through the bond's
    // stiffness).
    let n = s.snapshot().contacts().next().unwrap().n;
    let f = s.blocks().force[1];
    let travel = (w.length() * (x2 - x1).length() + v.length()) * dt * steps as f64;
    let bound = 1e-9 * KN * u0 + 3e-12 * PB_KN * B * B * travel;
    assert!((f + n * (KN * gap0)).length() <= bound, "{f} vs {n}");
}

/// A ball bonded to a block face, pulled away along the normal: the bond
/// takes its section from the ball (`pb_rmul R`), and breaks on time.
#[test]
fn a_ball_bonded_to_a_block_pulled_apart_breaks_on_time() {
    let (v, u0, radius) = (0.05, 2e-7, 0.004);
    let per_step = v * DT;
    let ten = PB_KN * 30.5 * per_step;
    let mut s = sim(DT);
    let g = s.group("rock");
    let (big, qa) = cube(&mut s, "big", A);
    s.add_block(held_block(big, Vec3::ZERO, qa, g)).unwrap();
    s.add_ball(BallInit {
        pos: Vec3::new(0.0, 0.0, 0.5 * A + radius - u0),
        velocity: Vec3::ZERO,
        spin: Vec3::ZERO,
        radius,
        density: 2500.0,
        group: g,
        damping: 0.0,
        fixity: Fixity::from_flags([true; 6]),
    })
    .unwrap();
    linearbond(&mut s, g, props(ten, 1e30, 0.0));
    bond_at_start(&mut s, g, 0.0);
    let area = PI * radius * radius;
    // The ball moves away from the block (+z): end1 is the ball, the
    // normal points from it into the block (-z), and the force on the
    // block is along it.
    s.balls_mut().vel[0] = Vec3::new(0.0, 0.0, v);
    let mut broke_at = None;
    for k in 1..=60u64 {
        s.cycle().unwrap();
        for b in s.take_bond_breaks() {
            assert_eq!(b.mode, BreakMode::Tension);
            broke_at = Some(b.step);
        }
        let z = s.balls().pos[0].z - s.blocks().pos[0].z;
        let linear = KN * (0.5 * A + radius - z).max(0.0);
        let bond = if k < 31 {
            -PB_KN * area * per_step * k as f64
        } else {
            0.0
        };
        let f = s.blocks().force[0];
        let expected = -(linear + bond);
        let scale = linear.abs() + bond.abs() + 1e-300;
        assert!(
            (f.z - expected).abs() <= 1e-9 * scale,
            "step {k}: force on the block {}, closed form {expected}",
            f.z
        );
        assert_eq!(s.balls().force[0], -f, "step {k}");
    }
    assert_eq!(broke_at, Some(31));
}

/// A cube of edge `B`, every degree of freedom held, its lower face
/// `u0` into a floor in the plane z = 0 (one large facet, or 200 facets
/// of 2 mm squares of which the face covers parts of about 60), off the
/// floor's grid lines; bonded to the floor at step 0 with `props`.
fn cube_on_floor(props: Vec<f64>, u0: f64, many: bool) -> Simulation {
    let mut s = sim(DT);
    let g = s.group("rock");
    let (c, q) = cube(&mut s, "cube", B);
    let at = Vec3::new(0.0013, -0.0007, 0.5 * B - u0);
    s.add_block(held_block(c, at, q, g)).unwrap();
    let (v, t) = if many {
        common::flat_mesh(0.01, 10)
    } else {
        let big = vec![[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]];
        (big, vec![[0, 1, 2]])
    };
    s.add_wall(talus_core::Wall::new("floor", &v, &t, None).unwrap(), g);
    linearbond(&mut s, g, props);
    bond_at_start(&mut s, g, 0.0);
    s
}

/// The locations of the contacts of `s` that hold a bond (by the
/// model's `pb_state`).
fn bonded(s: &mut Simulation) -> Vec<Vec3> {
    let snap = s.snapshot();
    let model = snap.models().next().unwrap();
    let at = model
        .state_slots()
        .position(|x| x.name == "pb_state")
        .unwrap();
    let held = snap.contacts().filter(|c| c.state[at] == 1.0);
    held.map(|c| c.xc).collect()
}

/// A cube bonded to a floor, pulled off it along the normal, then (a
/// second run) pressed and sheared across it: the same closed forms as
/// between two cubes (the bond's section is the face's area `B^2`, the
/// location moves half the cube's way), the break in the step its stress
/// first exceeds the strength, and on a floor of many facets, whose
/// overlaps merge into one contact that carries the bond, the same force
/// and moment as on one facet, to 1e-9.
#[test]
fn a_cube_bonded_to_one_facet_or_two_hundred_follows_the_closed_forms() {
    let area = B * B;
    // Pulled off at constant speed.
    let (v, u0) = (0.05, 1e-7);
    let per_step = v * DT;
    let ten = PB_KN * 40.5 * per_step;
    let mut runs: Vec<Simulation> = [false, true]
        .map(|many| cube_on_floor(props(ten, 1e30, 0.0), u0, many))
        .into();
    for s in &mut runs {
        s.blocks_mut().vel[0] = Vec3::new(0.0, 0.0, v);
    }
    let x0 = runs[0].blocks().pos[0];
    let mut broke_at = [None, None];
    for k in 1..=70u64 {
        for (r, s) in runs.iter_mut().enumerate() {
            s.cycle().unwrap();
            for b in s.take_bond_breaks() {
                assert_eq!(b.mode, BreakMode::Tension);
                assert!(broke_at[r].is_none(), "one break");
                broke_at[r] = Some(b.step);
            }
            let linear = KN * (u0 - per_step * k as f64).max(0.0);
            let bond = if k < 41 {
                -PB_KN * area * per_step * k as f64
            } else {
                0.0
            };
            let f = s.blocks().force[0];
            let scale = linear.abs() + bond.abs();
            assert!(
                (f.z - (linear + bond)).abs() <= 1e-9 * scale,
                "run {r} step {k}: force {}, closed form {}",
                f.z,
                linear + bond
            );
            assert!(
                f.x.abs() + f.y.abs() <= 1e-12 * scale,
                "run {r} step {k}: {f}"
            );
            if k < 41 {
                // One bond, at the centre of the face's overlap, which
                // moves up half the cube's way.
                let held = bonded(s);
                assert_eq!(held.len(), 1, "run {r} step {k}: one bond");
                let z = -0.5 * u0 + 0.5 * per_step * k as f64;
                let expected = Vec3::new(x0.x, x0.y, z);
                assert!(
                    (held[0] - expected).length() <= 1e-12 * B,
                    "run {r} step {k}: {} vs {expected}",
                    held[0]
                );
            }
        }
        let (f1, f2) = (runs[0].blocks().force[0], runs[1].blocks().force[0]);
        let (m1, m2) = (runs[0].blocks().moment[0], runs[1].blocks().moment[0]);
        let scale = f1.length() + 1e-300;
        assert!((f1 - f2).length() <= 1e-9 * scale, "step {k}: {f1} vs {f2}");
        assert!(
            (m1 - m2).length() <= 1e-9 * scale * B,
            "step {k}: {m1} vs {m2}"
        );
    }
    assert_eq!(broke_at, [Some(41), Some(41)]);

    // Pressed, then sheared along y.
    let (vp, vs, u0) = (0.02, 0.03, 2e-7);
    let press = 30u64;
    let fa = 25.0f64;
    let pressed = vp * DT * press as f64;
    let sigma_n = PB_KN * pressed;
    let shear_step = PB_KS * vs * DT;
    let coh = shear_step * 70.5 - sigma_n * fa.to_radians().tan();
    let mut runs: Vec<Simulation> = [false, true]
        .map(|many| cube_on_floor(props(1e30, coh, fa), u0, many))
        .into();
    for s in &mut runs {
        s.blocks_mut().vel[0] = Vec3::new(0.0, 0.0, -vp);
        for _ in 0..press {
            s.cycle().unwrap();
        }
        s.blocks_mut().vel[0] = Vec3::new(0.0, vs, 0.0);
    }
    let mut broke_at = [None, None];
    for k in 1..=100u64 {
        for (r, s) in runs.iter_mut().enumerate() {
            s.cycle().unwrap();
            for b in s.take_bond_breaks() {
                assert_eq!(b.mode, BreakMode::Shear);
                assert!(broke_at[r].is_none(), "one break");
                broke_at[r] = Some(k);
            }
            let f = s.blocks().force[0];
            let linear = KN * (u0 + pressed);
            let (bond_n, bond_s) = if k < 71 {
                (sigma_n * area, -shear_step * k as f64 * area)
            } else {
                (0.0, 0.0)
            };
            let expected = Vec3::new(0.0, bond_s, linear + bond_n);
            let tolerance = Vec3::new(0.0, 1e-9 * bond_s.abs(), 1e-9 * (linear + bond_n));
            let off = (f - expected).abs() - tolerance - Vec3::splat(1e-12 * linear);
            assert!(
                off.max_element() <= 0.0,
                "run {r} step {k}: {f} vs {expected}"
            );
        }
        let (f1, f2) = (runs[0].blocks().force[0], runs[1].blocks().force[0]);
        let (m1, m2) = (runs[0].blocks().moment[0], runs[1].blocks().moment[0]);
        let scale = f1.length();
        assert!((f1 - f2).length() <= 1e-9 * scale, "step {k}: {f1} vs {f2}");
        assert!(
            (m1 - m2).length() <= 1e-9 * scale * B,
            "step {k}: {m1} vs {m2}"
        );
    }
    assert_eq!(broke_at, [Some(71), Some(71)]);
}

/// A bonded heap: 6 x 6 x 6 cubes overlapping their neighbours a little,
/// a ball on each top face, all bonded at step 0 (faces, edges and
/// corners: more than one chunk of block contacts) and thrown apart by
/// seeded random velocities and spins; strengths scatter, so bonds break
/// over the run. One and two threads give the same bits.
#[test]
fn a_bonded_block_heap_gives_the_same_bits_on_one_and_two_threads() {
    let run = |threads: usize| -> (Vec<u64>, Vec<(u64, u64)>) {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut s = Simulation::new(Settings {
                gravity: Vec3::new(0.0, 0.0, -9.81),
                timestep: Timestep::Auto { safety: 0.5 },
                seed: 7,
                ..Settings::default()
            });
            let g = s.group("rock");
            let (edge, overlap, n) = (0.01, 2e-5, 6);
            let (shape, q) = cube(&mut s, "cube", edge);
            let mut rng = ChaCha8Rng::seed_from_u64(11);
            let mut jitter = |scale: f64| {
                Vec3::new(
                    rng.random_range(-scale..scale),
                    rng.random_range(-scale..scale),
                    rng.random_range(-scale..scale),
                )
            };
            let pitch = edge - overlap;
            for i in 0..n {
                for j in 0..n {
                    for k in 0..n {
                        let at = Vec3::new(i as f64, j as f64, k as f64) * pitch;
                        s.add_block(BlockInit {
                            velocity: jitter(0.2),
                            spin: jitter(20.0),
                            fixity: Fixity::from_flags([false; 6]),
                            ..held_block(shape, at, q, g)
                        })
                        .unwrap();
                    }
                }
            }
            let r = 0.003;
            for i in 0..n {
                for j in 0..n {
                    let top = (n - 1) as f64 * pitch + 0.5 * edge + r - 1e-5;
                    s.add_ball(BallInit {
                        pos: Vec3::new(i as f64 * pitch, j as f64 * pitch, top),
                        velocity: jitter(0.2),
                        spin: Vec3::ZERO,
                        radius: r,
                        density: 2500.0,
                        group: g,
                        damping: 0.0,
                        fixity: Fixity::from_flags([false; 6]),
                    })
                    .unwrap();
                }
            }
            let mut p = props(2e6, 4e6, 30.0);
            p[1] = 4e5; // ks
            p[2] = 0.5; // friction
            p[3] = 0.2; // normal damping
            p[9] = 5e5; // pb_ten_sd
            p[11] = 1e6; // pb_coh_sd
            linearbond(&mut s, g, p);
            bond_at_start(&mut s, g, 0.0);
            let blocks = s.models[0].store(PairKind::BlockBlock).len();
            assert!(blocks > talus_core::BATCH, "{blocks}");
            let mut breaks = Vec::new();
            for _ in 0..150 {
                s.cycle().unwrap();
                breaks.extend(s.take_bond_breaks().iter().map(|b| (b.step, b.contact)));
            }
            let k = s.blocks();
            let mut bits = Vec::new();
            for i in 0..s.n_blocks() {
                for v in [k.pos[i], k.vel[i], k.spin[i], k.force[i], k.moment[i]] {
                    bits.extend(v.to_array().map(f64::to_bits));
                }
                bits.extend(k.orientation[i].to_array().map(f64::to_bits));
            }
            drop(k);
            let b = s.balls();
            for i in 0..b.pos.len() {
                bits.extend(b.pos[i].to_array().map(f64::to_bits));
                bits.extend(b.force[i].to_array().map(f64::to_bits));
            }
            (bits, breaks)
        })
    };
    let one = run(1);
    assert!(!one.1.is_empty(), "some bonds break");
    let held = one.1.len();
    assert!(held < 5000, "not every bond breaks at once: {held}");
    assert_eq!(run(2), one);
}
