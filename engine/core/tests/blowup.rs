//! Blow-ups: a timestep far above the critical one stops the run at the
//! first step where a body moves more than the set fraction of its size,
//! naming the body of lowest id; found independently by running the same
//! model with the checks off and scanning the positions. A settling run at
//! the automatic timestep never trips the checks, and the error is the
//! same on one thread and on two.

use talus_core::blowup::{BlowUp, Sign};
use talus_core::math::Quat;
use talus_core::snapshot::BodyKind;
use talus_core::{
    BallInit, BlockInit, BlockShape, BlowUpLimits, Fixity, Simulation, StepError, Timestep, Vec3,
    Wall,
};

mod common;
use common::*;

const FRACTION: f64 = 0.5;

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs()).max(f64::MIN_POSITIVE)
}

/// The auto rule's `sqrt(m / k)` of a ball of radius `r` with one linear
/// contact of stiffness [`KN`] (the model reports `max(kn, ks)`).
fn critical(r: f64) -> f64 {
    (DENSITY * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3) / KN).sqrt()
}

/// Balls at `centres` with radii `radii`, at rest, those in `fixed` held
/// in place, under `gravity`; the linear model without dashpots, a fixed
/// `dt` and blow-up `limits`.
fn balls(
    centres: &[Vec3],
    radii: &[f64],
    fixed: &[usize],
    gravity: Vec3,
    dt: f64,
    limits: BlowUpLimits,
) -> Simulation {
    let (mut sim, g, _) = linear_sim(dt, [KN, 0.0, 0.0, 0.0, 0.0]);
    sim.settings.blowup = limits;
    sim.settings.gravity = gravity;
    for (i, (&c, &r)) in centres.iter().zip(radii).enumerate() {
        let mut b = ball(c, Vec3::ZERO, g);
        b.radius = r;
        if fixed.contains(&i) {
            b.fixity = Fixity::from_flags([true; 6]);
        }
        sim.add_ball(b).unwrap();
    }
    sim.prepare().unwrap();
    sim
}

const OFF: BlowUpLimits = BlowUpLimits {
    fraction: None,
    energy_jump: None,
};

/// With the checks off: the first step at which some ball moves more than
/// `FRACTION` of its radius, the lowest such ball (index) and its move
/// over its radius, from the positions before and after each step.
fn first_exceeded(mut sim: Simulation, radii: &[f64]) -> (u64, usize, f64) {
    for _ in 0..1000 {
        let before: Vec<Vec3> = sim.balls().pos.to_vec();
        sim.cycle().expect("finite for this long");
        let after = sim.balls().pos;
        let moved = (0..radii.len())
            .map(|i| (i, (after[i] - before[i]).length() / radii[i]))
            .find(|&(_, m)| m > FRACTION);
        if let Some((i, m)) = moved {
            return (sim.step, i, m);
        }
    }
    panic!("the run does not blow up");
}

fn run_until_error(sim: &mut Simulation) -> StepError {
    for _ in 0..1000 {
        if let Err(e) = sim.cycle() {
            return e;
        }
    }
    panic!("the run did not stop");
}

fn blowup_of(e: &StepError) -> &BlowUp {
    match e {
        StepError::BlowUp(b) => b,
        other => panic!("not a blow-up: {other}"),
    }
}

#[test]
fn a_pair_at_100_times_the_critical_dt_stops_at_the_first_step_too_far() {
    // A ball resting under gravity on a larger fixed one, pressed twice
    // as far as its weight presses it: at 100 times the critical dt the
    // first step throws it up by 1e4 times the excess overlap (a tenth
    // of its radius), and it comes down harder than it went up.
    let radii = [2.0 * RADIUS, RADIUS];
    let g = Vec3::new(0.0, 0.0, -9.81);
    let rest = mass() * 9.81 / KN;
    let centres = [Vec3::ZERO, Vec3::new(0.0, 0.0, 3.0 * RADIUS - 2.0 * rest)];
    let dt = 100.0 * critical(RADIUS);
    let limits = BlowUpLimits {
        fraction: Some(FRACTION),
        ..Default::default()
    };
    let pair = |limits| balls(&centres, &radii, &[0], g, dt, limits);
    let (step, index, moved) = first_exceeded(pair(OFF), &radii);
    assert!(step > 1, "the test wants a blow-up that grows over steps");

    let mut sim = pair(limits);
    let e = run_until_error(&mut sim);
    let b = blowup_of(&e);
    assert_eq!(
        (b.kind, b.id, b.step),
        (BodyKind::Ball, index as u64 + 1, step)
    );
    assert_eq!(sim.step, step);
    match b.sign {
        Sign::Moved { ratio } => assert!(rel(ratio, moved) < 1e-9, "{ratio} vs {moved}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(b.dt, dt);
    // What dt = "auto" would take: the default safety times sqrt(m / k)
    // of the small ball, whose contact (or, apart, its probe) has kn.
    let stable = b.stable_dt.expect("the model reports a stiffness");
    assert!(rel(stable, 0.8 * critical(RADIUS)) < 1e-12, "{stable}");
    let msg = e.to_string();
    for part in [
        format!("step {step}"),
        format!("ball {}", index + 1),
        "times its radius".into(),
        "dt = ".into(),
        "stable timestep".into(),
    ] {
        assert!(msg.contains(&part), "{part:?} in {msg}");
    }
    assert!(!msg.contains('\n'), "one line: {msg}");
}

/// A row of 1000 balls along x between two fixed ones at its ends, those
/// from the 600th on each pressed into the next by a different overlap
/// below 1 nm (a fixed sequence), the others just touching: the balls
/// that blow up first lie far inside the row, in a later part of the law
/// of motion's loop than the first.
fn row(limits: BlowUpLimits) -> (Simulation, Vec<f64>) {
    let n = 1000;
    let radii = vec![RADIUS; n];
    let mut x = 0.0;
    let centres: Vec<Vec3> = (0..n)
        .map(|i| {
            let c = Vec3::new(x, 0.0, 0.0);
            let overlap = if i >= 600 {
                1e-9 * (((i * 7919) % 1000) as f64 / 1000.0)
            } else {
                0.0
            };
            x += 2.0 * RADIUS - overlap;
            c
        })
        .collect();
    let dt = 100.0 * critical(RADIUS);
    let sim = balls(&centres, &radii, &[0, n - 1], Vec3::ZERO, dt, limits);
    (sim, radii)
}

#[test]
fn the_first_body_is_the_lowest_id_on_one_thread_and_on_two() {
    let (sim, radii) = row(OFF);
    let (step, index, _) = first_exceeded(sim, &radii);
    assert!(index >= 256, "ball {} lies in the first block", index + 1);
    let errors: Vec<StepError> = [1, 2]
        .iter()
        .map(|&threads| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| run_until_error(&mut row(BlowUpLimits::default()).0))
        })
        .collect();
    let b = blowup_of(&errors[0]);
    assert_eq!((b.id, b.step), (index as u64 + 1, step));
    assert_eq!(errors[0], errors[1]);
    assert_eq!(errors[0].to_string(), errors[1].to_string());
}

/// An open box `[-l, l]^2 x [0, 2 l]` of five squares, two triangles each,
/// normals pointing in.
fn open_box(l: f64) -> Wall {
    let h = 2.0 * l;
    let squares = [
        [[-l, -l, 0.0], [l, -l, 0.0], [l, l, 0.0], [-l, l, 0.0]],
        [[-l, -l, 0.0], [-l, l, 0.0], [-l, l, h], [-l, -l, h]],
        [[l, -l, 0.0], [l, l, 0.0], [l, l, h], [l, -l, h]],
        [[-l, -l, 0.0], [l, -l, 0.0], [l, -l, h], [-l, -l, h]],
        [[-l, l, 0.0], [l, l, 0.0], [l, l, h], [-l, l, h]],
    ];
    let inside = Vec3::new(0.0, 0.0, l);
    let (mut v, mut t) = (Vec::new(), Vec::new());
    for sq in squares {
        let p: Vec<Vec3> = sq.iter().map(|&c| Vec3::from(c)).collect();
        let n = (p[1] - p[0]).cross(p[2] - p[0]);
        let k = v.len() as u32;
        v.extend(sq);
        if n.dot(inside - p[0]) > 0.0 {
            t.extend([[k, k + 1, k + 2], [k, k + 2, k + 3]]);
        } else {
            t.extend([[k, k + 2, k + 1], [k, k + 3, k + 2]]);
        }
    }
    Wall::new("box", &v, &t, None).unwrap()
}

#[test]
fn a_settling_pack_at_the_automatic_dt_never_trips_the_checks() {
    // 400 balls on a lattice in an open box, falling from up to 12 radii
    // onto the floor and each other under gravity: impacts, a dense pack
    // coming to rest, every step's moves and every energy check with the
    // default limits.
    let (mut sim, g, w) = linear_sim(1.0, [KN, 0.5 * KN, 0.5, 0.2, 0.2]);
    sim.settings.timestep = Timestep::Auto { safety: 0.8 };
    sim.settings.gravity = Vec3::new(0.0, 0.0, -9.81);
    assert_eq!(sim.settings.blowup, BlowUpLimits::default());
    let l = 11.0 * RADIUS;
    sim.add_wall(open_box(l), w);
    for i in 0..10 {
        for j in 0..10 {
            for k in 0..4 {
                let p = Vec3::new(
                    -l + 1.1 * RADIUS + 2.2 * RADIUS * i as f64,
                    -l + 1.1 * RADIUS + 2.2 * RADIUS * j as f64,
                    RADIUS * (1.5 + 3.0 * k as f64),
                );
                sim.add_ball(ball(p, Vec3::ZERO, g)).unwrap();
            }
        }
    }
    sim.prepare().unwrap();
    for _ in 0..20_000 {
        sim.cycle().unwrap();
    }
    let b = sim.balls();
    assert!(b.pos.iter().all(|p| p.z > 0.0 && p.z < 12.0 * RADIUS));
    // Settled: well below the energy of a fall by one radius per ball.
    let e = b.kinetic_energy();
    assert!(e < 0.1 * 400.0 * mass() * 9.81 * RADIUS, "{e}");
}

fn cube() -> BlockShape {
    let c = talus_geometry::box_block(Vec3::splat(2.0 * RADIUS)).unwrap();
    BlockShape::new("cube", &c).unwrap()
}

/// A block of side 2 radii, fixed in place, spinning at `spin`; the
/// first step it turns more than the fraction, or the error.
fn spinning_block(spin: f64, dt: f64, limits: BlowUpLimits) -> Result<(), StepError> {
    let (mut sim, g, _) = linear_sim(dt, [KN, 0.0, 0.0, 0.0, 0.0]);
    sim.settings.blowup = limits;
    let k = sim.add_shape(cube());
    sim.add_block(BlockInit {
        shape: k,
        pos: Vec3::ZERO,
        orientation: Quat::IDENTITY,
        velocity: Vec3::ZERO,
        spin: Vec3::new(0.0, 0.0, spin),
        density: DENSITY,
        group: g,
        damping: 0.0,
        fixity: Fixity::default(),
    })
    .unwrap();
    sim.prepare().unwrap();
    for _ in 0..10 {
        sim.cycle()?;
    }
    Ok(())
}

#[test]
fn a_block_that_turns_or_moves_too_far_in_a_step_stops_the_run() {
    // A free cube spinning about a principal axis keeps its spin: it turns
    // spin * dt per step, just below and just above the fraction.
    let dt = 1e-3;
    let limits = BlowUpLimits::default();
    assert!(spinning_block(0.49 / dt, dt, limits).is_ok());
    let e = spinning_block(0.51 / dt, dt, limits).unwrap_err();
    let b = blowup_of(&e);
    assert_eq!((b.kind, b.id, b.step), (BodyKind::Block, 1, 1));
    match b.sign {
        Sign::Turned { angle } => assert!(rel(angle, 0.51) < 1e-9, "{angle}"),
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("block 1 turned"), "{e}");
    assert!(spinning_block(0.51 / dt, dt, OFF).is_ok());

    // A block moving just under and just over half its bounding radius
    // (the half diagonal, sqrt(3) radii) per step.
    let r = cube().radius;
    assert!(rel(r, 3f64.sqrt() * RADIUS) < 1e-12);
    for (speed, trips) in [(0.49 * r / dt, false), (0.51 * r / dt, true)] {
        let (mut sim, g, _) = linear_sim(dt, [KN, 0.0, 0.0, 0.0, 0.0]);
        let k = sim.add_shape(cube());
        let mut init = BlockInit {
            shape: k,
            pos: Vec3::ZERO,
            orientation: Quat::IDENTITY,
            velocity: Vec3::new(speed, 0.0, 0.0),
            spin: Vec3::ZERO,
            density: DENSITY,
            group: g,
            damping: 0.0,
            fixity: Fixity::default(),
        };
        sim.add_block(init).unwrap();
        init.pos = Vec3::new(0.0, 1.0, 0.0);
        init.velocity = Vec3::ZERO;
        sim.add_block(init).unwrap();
        sim.prepare().unwrap();
        let r = sim.cycle();
        assert_eq!(r.is_err(), trips, "{r:?}");
        if let Err(e) = r {
            let b = blowup_of(&e);
            assert_eq!((b.kind, b.id), (BodyKind::Block, 1));
            assert!(e.to_string().contains("bounding radius"), "{e}");
        }
    }
}

#[test]
fn a_non_finite_velocity_is_a_blow_up_whatever_the_limits() {
    for limits in [BlowUpLimits::default(), OFF] {
        let centres = [
            Vec3::ZERO,
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(2.0, 0.0, 0.0),
        ];
        let radii = [RADIUS; 3];
        let mut sim = balls(&centres, &radii, &[], Vec3::ZERO, 1e-6, limits);
        sim.cycle().unwrap();
        sim.balls_mut().vel[2] = Vec3::new(f64::NAN, 0.0, 0.0);
        sim.balls_mut().vel[1] = Vec3::new(0.0, f64::INFINITY, 0.0);
        let e = sim.cycle().unwrap_err();
        let b = blowup_of(&e);
        assert_eq!((b.id, b.step, b.sign), (2, 2, Sign::NonFinite), "{e}");
        assert!(e.to_string().contains("ball 2 has a non-finite"), "{e}");
    }
}

#[test]
fn a_jump_of_the_kinetic_energy_stops_the_run_at_the_next_check() {
    // Free balls far apart: their energy only changes when set. Raised
    // a millionfold (and a bit) above the floor between two checks, it
    // trips at the next one; raised less, it does not.
    let centres = [Vec3::ZERO, Vec3::new(1.0, 0.0, 0.0)];
    let radii = [RADIUS; 2];
    let limits = BlowUpLimits {
        fraction: None,
        energy_jump: Some(1e6),
    };
    for (factor, trips) in [(0.9e6, false), (1.1e6, true)] {
        let dt = 1e-6;
        let mut sim = balls(&centres, &radii, &[], Vec3::ZERO, dt, limits);
        let floor = sim.energy_floor();
        // Without gravity the floor is, per ball, twice the kinetic energy
        // of moving a thousandth of the radius per step.
        assert!(rel(floor, 2.0 * mass() * (1e-3 * RADIUS / dt).powi(2)) < 1e-12);
        // Ball 2 takes the energy factor * floor.
        let v = (2.0 * factor * floor / mass()).sqrt();
        sim.balls_mut().vel[1] = Vec3::new(0.0, v, 0.0);
        let mut stopped = None;
        for _ in 0..250 {
            if let Err(e) = sim.cycle() {
                stopped = Some(e);
                break;
            }
        }
        assert_eq!(stopped.is_some(), trips, "{stopped:?}");
        if let Some(e) = stopped {
            let b = blowup_of(&e);
            assert_eq!((b.id, b.step), (2, 100));
            assert!(matches!(b.sign, Sign::Energy { since: 0, .. }), "{b:?}");
            assert!(e.to_string().contains("kinetic energy grew"), "{e}");
        }
    }
}

#[test]
fn a_fixed_step_past_one_contacts_limit_is_named_before_the_run() {
    // The limit is the automatic rule's step at safety 1 for a body on one
    // contact of its stiffest model, the dashpot's share included: for a
    // ball with the linear model at normal ratio b, sqrt(m f^2 / kn) with
    // f = sqrt(1 + b^2) - b.
    let r: f64 = 0.002;
    let m = DENSITY * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
    for b in [0.0f64, 0.5] {
        let f = (1.0 + b * b).sqrt() - b;
        let limit = (m * f * f / KN).sqrt();
        let setup = |timestep: Timestep| {
            let (mut s, g, _) = linear_sim(1.0, [KN, 0.5 * KN, 0.3, b, 0.0]);
            s.settings.timestep = timestep;
            s.add_ball(BallInit {
                radius: r,
                ..ball(Vec3::ZERO, Vec3::ZERO, g)
            })
            .unwrap();
            s.prepare().unwrap();
            s.fixed_step_over_limit()
        };
        let (dt, found) = setup(Timestep::Fixed(1.5 * limit)).expect("over the limit");
        assert_eq!(dt, 1.5 * limit);
        assert!(rel(found, limit) < 1e-12, "{found} vs {limit}");
        assert_eq!(setup(Timestep::Fixed(0.99 * limit)), None);
        assert_eq!(setup(Timestep::Auto { safety: 1.0 }), None);
    }
}
