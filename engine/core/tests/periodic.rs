//! The periodic cell: balls wrap round with their velocity and spin, a
//! pair across the boundary pushes as the same pair inside (and a bond
//! installed across it holds and breaks as inside), the cell
//! stress of a sheared lattice against its closed form, the broad phase
//! against brute force under shear, and the same bits on one and two
//! threads and after a checkpoint.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_core::checkpoint::Checkpoint;
use talus_core::math::Mat3;
use talus_core::{BallInit, Fixity, PairKind, Settings, Simulation, Timestep, Vec3};

mod common;
use common::*;

#[test]
fn a_ball_crossing_each_periodic_face_keeps_its_velocity_and_spin_bits() {
    // The same ball with and without the cell, under gravity (its
    // velocity changes every step) and local damping: the periodic one
    // must have the very same velocity and spin, and its centre must be
    // the free one's less whole edges.
    let side = 0.1;
    let run = |v0: Vec3, periodic: bool| -> Vec<(Vec3, Vec3, Vec3)> {
        let mut sim = Simulation::new(Settings {
            gravity: -2.0 * v0,
            timestep: Timestep::Fixed(1e-4),
            ..Settings::default()
        });
        let g = sim.group("grain");
        add_linear(&mut sim, &[(g, g)], &[KN, KN, 0.5, 0.0, 0.0]);
        let mut b = ball(Vec3::splat(0.5 * side), v0, g);
        b.spin = Vec3::new(3.0, -1.0, 0.25);
        b.damping = 0.1;
        sim.add_ball(b).unwrap();
        if periodic {
            sim.set_cell(cube(side, Mat3::ZERO));
        }
        sim.prepare().unwrap();
        (0..20_000)
            .map(|_| {
                sim.cycle().unwrap();
                let b = sim.balls();
                (b.pos[0], b.vel[0], b.spin[0])
            })
            .collect()
    };
    let mut crossed = [[0u32; 2]; 3];
    for v0 in [Vec3::new(1.1, 0.7, -0.9), Vec3::new(-0.8, -1.2, 1.0)] {
        let free = run(v0, false);
        let wrapped = run(v0, true);
        let mut last = Vec3::splat(0.5 * side);
        for ((xf, vf, wf), (xp, vp, wp)) in free.iter().zip(&wrapped) {
            for k in 0..3 {
                assert_eq!(vf[k].to_bits(), vp[k].to_bits());
                assert_eq!(wf[k].to_bits(), wp[k].to_bits());
                assert!((0.0..side).contains(&xp[k]), "{xp}");
                let edges = (xf[k] - xp[k]) / side;
                assert!((edges - edges.round()).abs() < 1e-9, "{edges}");
                // A jump of more than half the cell is a crossing.
                if xp[k] - last[k] > 0.5 * side {
                    crossed[k][0] += 1;
                } else if last[k] - xp[k] > 0.5 * side {
                    crossed[k][1] += 1;
                }
            }
            last = *xp;
        }
    }
    for (k, c) in crossed.iter().enumerate() {
        assert!(c[0] > 0 && c[1] > 0, "axis {k}: {c:?}");
    }
}

/// Two balls in contact in a cubic cell with velocity gradient `l`:
/// end1 at `x1`, its translation held, end2 pressed onto it by gravity and
/// sliding and rolling over it. Returns the force on each ball at every
/// step.
fn pair_forces(x1: Vec3, l: Mat3) -> Vec<[Vec3; 2]> {
    let side = 0.1;
    let (mut sim, g, _) = linear_sim(1e-5, [KN, 0.5 * KN, 0.3, 0.2, 0.2]);
    let d = Vec3::new(0.012, -0.009, 0.011);
    let d = d * (1.99 * RADIUS / d.length());
    sim.settings.gravity = d * (-5000.0 / d.length());
    let mut a = ball(x1, Vec3::ZERO, g);
    a.fixity = Fixity::from_flags([true, true, true, false, false, false]);
    a.spin = Vec3::new(1.0, 2.0, -3.0);
    let mut b = ball(x1 + d, Vec3::new(-0.04, 0.03, 0.02), g);
    b.spin = Vec3::new(-2.0, 0.5, 1.0);
    sim.add_ball(a).unwrap();
    sim.add_ball(b).unwrap();
    sim.set_cell(cube(side, l));
    sim.prepare().unwrap();
    (0..400)
        .map(|_| {
            sim.cycle().unwrap();
            let b = sim.balls();
            [b.force[0], b.force[1]]
        })
        .collect()
}

#[test]
fn a_pair_across_the_boundary_pushes_as_the_same_pair_inside() {
    for l in [Mat3::ZERO, shear(2.0)] {
        let inside = pair_forces(Vec3::splat(0.04), l);
        // End2 across the corner of the cell: across three faces at once.
        let across = pair_forces(Vec3::new(0.095, 0.005, 0.093), l);
        let mut touched = 0;
        for (fi, fa) in inside.iter().zip(&across) {
            let scale = fi[0].length().max(1e-12);
            if fi[0].length() > 0.0 {
                touched += 1;
            }
            for k in 0..2 {
                assert!(
                    (fi[k] - fa[k]).length() <= 1e-8 * scale,
                    "{l:?}: {} vs {}",
                    fi[k],
                    fa[k]
                );
            }
        }
        assert!(touched == inside.len(), "{touched}");
    }
}

/// Two balls a small gap apart in a cubic cell with velocity gradient
/// `l`, end1 at `x1`, bonded at step 0 (linearbond, installed at a gap
/// twice theirs), every degree of freedom held; end2 is moved away along
/// the line of centres and across it, and spun. Returns the force and
/// moment on end2 at every step and the step in which the bond broke.
fn bonded_pair(x1: Vec3, l: Mat3) -> (Vec<[Vec3; 2]>, Option<u64>) {
    let mut sim = Simulation::new(Settings {
        gravity: Vec3::ZERO,
        timestep: Timestep::Fixed(1e-5),
        ..Settings::default()
    });
    let g = sim.group("grain");
    // kn, ks, fric, dp_nratio, dp_sratio, pb_kn, pb_ks, pb_rmul, pb_ten,
    // pb_ten_sd, pb_coh, pb_coh_sd, pb_fa, pb_mcf
    let props = [
        KN,
        0.5 * KN,
        0.3,
        0.0,
        0.0,
        1e11,
        5e10,
        1.0,
        1e6,
        0.0,
        1e9,
        0.0,
        0.0,
        1.0,
    ];
    add_plugin_model(
        &mut sim,
        talus_plugin_linearbond::root_module(),
        &[(g, g)],
        &props,
    );
    let d = Vec3::new(0.012, -0.009, 0.011);
    let gap = 0.05 * RADIUS;
    let d = d * ((2.0 * RADIUS + gap) / d.length());
    let held = Fixity::from_flags([true; 6]);
    sim.add_ball(BallInit {
        fixity: held,
        ..ball(x1, Vec3::ZERO, g)
    })
    .unwrap();
    let away = d.normalize() * 0.01 + Vec3::new(0.003, 0.004, -0.002);
    sim.add_ball(BallInit {
        fixity: held,
        spin: Vec3::new(0.5, -0.3, 0.8),
        ..ball(x1 + d, away, g)
    })
    .unwrap();
    sim.set_cell(cube(0.1, l));
    sim.install_bonds(talus_core::BondInstall {
        groups: (g, g),
        gap: 2.0 * gap,
        at: talus_core::When::Step(0),
    })
    .unwrap();
    sim.prepare().unwrap();
    let mut broke = None;
    let forces = (0..600)
        .map(|_| {
            sim.cycle().unwrap();
            if let Some(b) = sim.take_bond_breaks().first() {
                broke = Some(b.step);
            }
            let b = sim.balls();
            [b.force[1], b.moment[1]]
        })
        .collect();
    (forces, broke)
}

/// A bond installed at a gap between two balls across the cell's faces
/// pulls, shears and twists as the same bond inside, and breaks in the
/// same step (the nearest image is found each step; the bond is carried
/// with it).
#[test]
fn a_bond_installed_across_the_boundary_holds_and_breaks_as_inside() {
    for l in [Mat3::ZERO, shear(0.5)] {
        let (inside, broke_inside) = bonded_pair(Vec3::splat(0.04), l);
        let (across, broke_across) = bonded_pair(Vec3::new(0.095, 0.005, 0.093), l);
        assert!(broke_inside.is_some(), "{l:?}: the bond breaks");
        assert_eq!(broke_inside, broke_across, "{l:?}");
        let k = broke_inside.unwrap() as usize;
        // The bond carried force before it broke.
        assert!(inside[k - 2][0].length() > 1.0, "{:?}", inside[k - 2]);
        for (step, (fi, fa)) in inside.iter().zip(&across).enumerate() {
            let scale = fi[0].length().max(1e-9);
            for j in 0..2 {
                assert!(
                    (fi[j] - fa[j]).length() <= 1e-8 * scale * if j == 0 { 1.0 } else { RADIUS },
                    "{l:?}, step {step}: {} vs {}",
                    fi[j],
                    fa[j]
                );
            }
        }
    }
}

/// A simple cubic lattice of `n^3` balls of spacing `a`, spins held,
/// in a cubic periodic cell of side `n a` under velocity gradient `l`.
fn lattice(n: usize, a: f64, l: Mat3, props: [f64; 5], dt: f64) -> Simulation {
    let (mut sim, g, _) = linear_sim(dt, props);
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                let x = Vec3::new(i as f64 + 0.5, j as f64 + 0.5, k as f64 + 0.5) * a;
                let mut b = ball(x, Vec3::ZERO, g);
                b.fixity = Fixity::from_flags([false, false, false, true, true, true]);
                sim.add_ball(b).unwrap();
            }
        }
    }
    sim.set_cell(cube(n as f64 * a, l));
    sim
}

#[test]
fn simple_shear_of_a_cubic_lattice_gives_the_closed_form_stress() {
    // Balls of radius R on a cubic lattice of spacing a = 2R - delta:
    // every contact carries kn delta, so sigma_ii = -kn delta / a^2. A
    // small simple shear gamma (v_x = rate y) moves the lattice with the
    // cell (every ball's loads balance by symmetry); the contacts along
    // y slide by a gamma, which adds -ks a gamma along x to the force on
    // their upper ball, and their normal tilts by gamma. Per volume a^3:
    // sigma_xy = gamma / a (ks - kn delta / a), sigma_yx = -kn delta
    // gamma / a^2.
    let (kn, ks) = (1.0e6, 0.8e6);
    let delta = 1.0e-4;
    let a = 2.0 * RADIUS - delta;
    let (rate, dt, steps) = (1.0, 1.0e-6, 2000);
    let mut sim = lattice(4, a, shear(rate), [kn, ks, 10.0, 0.0, 0.0], dt);
    sim.prepare().unwrap();
    let at_rest = sim.cell_state().unwrap().stress;
    let iso = -kn * delta / (a * a);
    for k in 0..3 {
        assert!((at_rest.col(k)[k] / iso - 1.0).abs() < 1e-9, "{at_rest}");
    }
    for _ in 0..steps {
        sim.cycle().unwrap();
    }
    let gamma = rate * dt * steps as f64;
    let s = sim.cell_state().unwrap();
    // The cell itself sheared by gamma.
    let h = s.h;
    assert!((h.col(1).x / h.col(1).y - gamma).abs() < 1e-12);
    let xy = gamma / a * (ks - kn * delta / a);
    let yx = -kn * delta * gamma / (a * a);
    // (column j, row i) is sigma_ij.
    let (got_xy, got_yx) = (s.stress.col(1).x, s.stress.col(0).y);
    assert!((got_xy / xy - 1.0).abs() < 0.01, "{got_xy} vs {xy}");
    assert!((got_yx / yx - 1.0).abs() < 0.01, "{got_yx} vs {yx}");
    for k in 0..3 {
        assert!(
            (s.stress.col(k)[k] / iso - 1.0).abs() < 0.01,
            "{}",
            s.stress
        );
    }
    // The lattice moved with the cell: no fluctuating velocity beyond
    // round-off.
    let b = sim.balls();
    assert!(b.vel.iter().all(|v| v.length() < 1e-9));
    // Three contacts per ball, none lost across the faces.
    let st = sim.models[0].store(PairKind::BallBall);
    let active = (0..st.len())
        .filter(|&k| st.output[k].status == talus_sdk::STATUS_ACTIVE)
        .count();
    assert_eq!(active, 3 * 64);
}

/// A loose random packing of balls pressed together in a periodic cell
/// sheared at `rate`.
fn packing(rate: f64) -> Simulation {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let n = 11;
    let a = 2.0 * RADIUS;
    let side = n as f64 * a;
    let (mut sim, g, _) = linear_sim(2e-6, [KN, 0.5 * KN, 0.4, 0.05, 0.05]);
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                let x = Vec3::new(i as f64 + 0.5, j as f64 + 0.5, k as f64 + 0.5) * a;
                let jitter = Vec3::new(
                    rng.random_range(-0.05..0.05),
                    rng.random_range(-0.05..0.05),
                    rng.random_range(-0.05..0.05),
                ) * a;
                let v = Vec3::new(
                    rng.random_range(-0.2..0.2),
                    rng.random_range(-0.2..0.2),
                    rng.random_range(-0.2..0.2),
                );
                sim.add_ball(BallInit {
                    radius: RADIUS * rng.random_range(0.95..1.05),
                    ..ball(x + jitter, v, g)
                })
                .unwrap();
            }
        }
    }
    sim.set_cell(cube(side, shear(rate)));
    sim
}

/// Every pair of balls that overlaps at its nearest image, by brute
/// force, has an active contact.
fn assert_overlaps_have_contacts(sim: &Simulation) {
    let cell = sim.cell().unwrap();
    let b = sim.balls();
    let st = sim.models[0].store(PairKind::BallBall);
    let mut pairs: std::collections::HashSet<(u32, u32)> = Default::default();
    for k in 0..st.len() {
        let (p, q) = (st.end1[k].index() as u32, st.end2[k].index() as u32);
        pairs.insert((p.min(q), p.max(q)));
    }
    let mut overlaps = 0;
    for i in 0..b.len() {
        for j in i + 1..b.len() {
            let xj = b.pos[j] + cell.image_shift(b.pos[i], b.pos[j]);
            if (xj - b.pos[i]).length() < b.radius[i] + b.radius[j] {
                overlaps += 1;
                assert!(pairs.contains(&(i as u32, j as u32)), "{i} {j}");
            }
        }
    }
    assert!(overlaps > 500, "{overlaps}");
}

#[test]
fn a_sheared_packing_has_a_contact_for_every_overlap() {
    let mut sim = packing(40.0);
    sim.prepare().unwrap();
    assert_overlaps_have_contacts(&sim);
    // 2000 steps at 2e-6 s: a shear of 0.16, so the cell space is laid
    // out again many times.
    for step in 0..2000 {
        sim.cycle().unwrap();
        if step % 250 == 0 {
            assert_overlaps_have_contacts(&sim);
        }
    }
    assert_overlaps_have_contacts(&sim);
}

fn bits(sim: &Simulation) -> Vec<u64> {
    let mut out = ball_bits(sim);
    push_cell_bits(&mut out, sim);
    out
}

#[test]
fn a_periodic_run_gives_the_same_bits_on_one_and_two_threads() {
    let run = |threads: usize| {
        on_threads(threads, || {
            let mut sim = packing(40.0);
            sim.prepare().unwrap();
            for _ in 0..300 {
                sim.cycle().unwrap();
            }
            let n = sim.models[0].store(PairKind::BallBall).len();
            assert!(n > 2 * talus_core::BATCH, "{n}");
            bits(&sim)
        })
    };
    assert!(run(1) == run(2));
}

#[test]
fn a_periodic_run_continues_from_a_checkpoint_to_the_same_bits() {
    let mut whole = packing(40.0);
    whole.prepare().unwrap();
    for _ in 0..400 {
        whole.cycle().unwrap();
    }
    let mut first = packing(40.0);
    first.prepare().unwrap();
    for _ in 0..200 {
        first.cycle().unwrap();
    }
    let bytes = first.checkpoint("periodic");
    let mut second = packing(40.0);
    second.prepare().unwrap();
    second.restore(Checkpoint::read(&bytes).unwrap()).unwrap();
    for _ in 0..200 {
        second.cycle().unwrap();
    }
    assert!(bits(&whole) == bits(&second));
}

#[test]
fn a_cell_too_thin_for_its_balls_is_refused() {
    let (mut sim, g, _) = linear_sim(1e-5, [KN, KN, 0.3, 0.0, 0.0]);
    sim.add_ball(ball(Vec3::splat(0.01), Vec3::ZERO, g))
        .unwrap();
    sim.set_cell(cube(3.0 * RADIUS, Mat3::ZERO));
    let e = sim.prepare().unwrap_err().to_string();
    assert!(e.contains("must exceed"), "{e}");
}

#[test]
fn a_servo_on_the_cell_holds_its_target_stress() {
    // A cubic lattice of touching balls, the cell servo-controlled along
    // z to a compression of 10 kPa: the lattice squeezes along z until
    // each contact along z carries kn delta = 10 kPa a^2.
    let kn = 1.0e6;
    let a = 2.0 * RADIUS;
    let target = -1.0e4;
    let dt = 1.0e-6;
    let mut sim = lattice(4, a, Mat3::ZERO, [kn, kn, 0.5, 0.1, 0.1], dt);
    // sigma_zz responds to the strain rate with the modulus kn / a: a
    // time constant of 200 steps.
    let modulus = kn / a;
    let servo = talus_core::CellServo {
        target: [None, None, Some(target)],
        gain: 1.0 / (modulus * 200.0 * dt),
        max_rate: 5.0,
    };
    let cell = sim.cell().unwrap().clone().with_servo(servo);
    sim.set_cell(cell);
    sim.prepare().unwrap();
    let mut worst: f64 = 0.0;
    for step in 0..6000 {
        sim.cycle().unwrap();
        let s = sim.cell_state().unwrap().stress;
        if step >= 3000 {
            worst = worst.max((s.col(2).z / target - 1.0).abs());
        }
    }
    assert!(worst < 0.01, "{worst}");
    // The strain the closed form needs, and nothing along x or y.
    let s = sim.cell_state().unwrap();
    let delta = -target * a * a / kn;
    let side_z = 4.0 * (a - delta);
    assert!(
        (s.h.col(2).z - side_z).abs() < 0.01 * delta * 4.0,
        "{}",
        s.h
    );
    assert_eq!(s.h.col(0).x, 4.0 * a);
    assert!(s.stress.col(0).x.abs() < 1e-6 * target.abs());
}

/// A lattice whose balls do not touch (spacing 3 R), in a still cell
/// that shears at `rate` from step 11 and stops at the first step that
/// starts at or after `20.5 dt`.
fn staged(rate: f64, dt: f64) -> Simulation {
    let a = 3.0 * RADIUS;
    let mut sim = lattice(2, a, Mat3::ZERO, [KN, KN, 0.3, 0.0, 0.0], dt);
    let stages = vec![
        talus_core::CellStage {
            at: talus_core::When::Step(11),
            velocity_gradient: shear(rate),
            servo: None,
        },
        talus_core::CellStage {
            at: talus_core::When::Time(20.5 * dt),
            velocity_gradient: Mat3::ZERO,
            servo: None,
        },
    ];
    let cell = sim.cell().unwrap().clone().with_stages(stages);
    sim.set_cell(cell);
    sim
}

#[test]
fn stages_of_the_cell_begin_at_their_step_and_time() {
    let (rate, dt) = (50.0, 1.0e-4);
    let side = 6.0 * RADIUS;
    let mut sim = staged(rate, dt);
    sim.prepare().unwrap();
    let mut tilt = Vec::new();
    for _ in 0..30 {
        sim.cycle().unwrap();
        let s = sim.cell_state().unwrap();
        tilt.push((s.h.col(1).x, s.stage));
    }
    // Steps 1-10 still; steps 11-21 shear (step 22 starts at 21 dt, the
    // first start at or after 20.5 dt); then still again. Simple shear
    // adds `rate dt side` to b_x per step, whatever the tilt.
    for (k, &(bx, stage)) in tilt.iter().enumerate() {
        let step = k + 1;
        let sheared = step.clamp(10, 21) - 10;
        let expected = sheared as f64 * rate * dt * side;
        assert!(
            (bx - expected).abs() <= 1e-12 * side,
            "step {step}: b_x {bx}, expected {expected}"
        );
        let begun = (step >= 11) as usize + (step >= 22) as usize;
        assert_eq!(stage, begun, "step {step}");
    }
    // A checkpoint between the stages carries which have begun.
    let mut first = staged(rate, dt);
    first.prepare().unwrap();
    for _ in 0..15 {
        first.cycle().unwrap();
    }
    let bytes = first.checkpoint("stages");
    let mut second = staged(rate, dt);
    second.prepare().unwrap();
    second.restore(Checkpoint::read(&bytes).unwrap()).unwrap();
    for _ in 0..15 {
        second.cycle().unwrap();
    }
    assert!(bits(&sim) == bits(&second));
}
