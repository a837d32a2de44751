//! The six-DOF contact frame in whole runs: a sheared periodic packing
//! whose contacts carry their frame by seed 004's update gives the same
//! bits on one and two threads and after a checkpoint (displacements
//! included), and its ball forces approach those of the default update
//! as the step shrinks.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_core::checkpoint::Checkpoint;
use talus_core::math::Mat3;
use talus_core::{BallInit, Cell, ContactFrame, PairKind, Settings, Simulation, Timestep, Vec3};

mod common;
use common::*;

const SIX_DOF: ContactFrame = ContactFrame::SixDof { no_ratchet: false };
const NO_RATCHET: ContactFrame = ContactFrame::SixDof { no_ratchet: true };

/// A loose random packing of spinning balls pressed together in a
/// periodic cell sheared at 40 /s, its contacts with the linear model
/// (with rolling and twist moments off) carrying their frame as `frame`
/// says.
fn packing(frame: ContactFrame, dt: f64) -> Simulation {
    let mut sim = Simulation::new(Settings {
        gravity: Vec3::ZERO,
        timestep: Timestep::Fixed(dt),
        ..Settings::default()
    });
    let g = sim.group("grain");
    let root = talus_plugin_linear::root_module();
    let entry = talus_sdk::ModelEntry::from_abi((root.models())()[0]).unwrap();
    let m = sim.add_model_with_frame(entry, frame);
    sim.assign(g, g, m, vec![KN, 0.5 * KN, 0.4, 0.05, 0.05])
        .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let n = 11;
    let a = 2.0 * RADIUS;
    let mut random = |scale: f64| {
        Vec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        ) * scale
    };
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                let x = Vec3::new(i as f64 + 0.5, j as f64 + 0.5, k as f64 + 0.5) * a;
                sim.add_ball(BallInit {
                    radius: RADIUS * (1.0 + random(0.05).x),
                    spin: random(50.0),
                    ..ball(x + random(0.05 * a), random(0.2), g)
                })
                .unwrap();
            }
        }
    }
    let shear = Mat3::from_cols(Vec3::ZERO, Vec3::new(40.0, 0.0, 0.0), Vec3::ZERO);
    let side = n as f64 * a;
    sim.set_cell(Cell::from_box(Vec3::ZERO, Vec3::splat(side), [true; 3], shear).unwrap());
    sim
}

/// The bits of every ball's motion and sums, and of every contact's
/// plane and six-DOF displacements.
fn bits(sim: &Simulation) -> Vec<u64> {
    let b = sim.balls();
    let mut out = Vec::new();
    for i in 0..b.len() {
        for v in [b.pos[i], b.vel[i], b.spin[i], b.force[i], b.moment[i]] {
            out.extend(v.to_array().map(f64::to_bits));
        }
    }
    let st = sim.models[0].store(PairKind::BallBall);
    for (k, p) in st.plane.iter().enumerate() {
        for v in [p.xc, p.n, p.s, p.t] {
            out.extend(v.to_array().map(f64::to_bits));
        }
        out.extend(st.dof.get(k).into_iter().flatten().map(|x| x.to_bits()));
    }
    out
}

fn run(frame: ContactFrame, threads: usize, steps: usize) -> Vec<u64> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut sim = packing(frame, 2e-6);
        sim.prepare().unwrap();
        for _ in 0..steps {
            sim.cycle().unwrap();
        }
        let st = sim.models[0].store(PairKind::BallBall);
        assert!(st.len() > 2 * talus_core::BATCH, "{}", st.len());
        assert_eq!(st.dof.len(), st.len());
        bits(&sim)
    })
}

#[test]
fn a_six_dof_run_gives_the_same_bits_on_one_and_two_threads() {
    for frame in [SIX_DOF, NO_RATCHET] {
        assert!(run(frame, 1, 300) == run(frame, 2, 300), "{frame:?}");
    }
}

#[test]
fn a_six_dof_run_continues_from_a_checkpoint_to_the_same_bits() {
    let mut whole = packing(NO_RATCHET, 2e-6);
    whole.prepare().unwrap();
    for _ in 0..400 {
        whole.cycle().unwrap();
    }
    let mut first = packing(NO_RATCHET, 2e-6);
    first.prepare().unwrap();
    for _ in 0..200 {
        first.cycle().unwrap();
    }
    let bytes = first.checkpoint("six-dof");
    let mut second = packing(NO_RATCHET, 2e-6);
    second.prepare().unwrap();
    second.restore(Checkpoint::read(&bytes).unwrap()).unwrap();
    for _ in 0..200 {
        second.cycle().unwrap();
    }
    assert!(bits(&whole) == bits(&second));
    // A checkpoint of one frame does not restore into a run of the other.
    let mut other = packing(ContactFrame::Rotations, 2e-6);
    other.prepare().unwrap();
    let e = other
        .restore(Checkpoint::read(&bytes).unwrap())
        .unwrap_err();
    assert!(e.to_string().contains("six_dof"), "{e}");
}

#[test]
fn six_dof_forces_approach_those_of_the_default_update_as_the_step_shrinks() {
    // The two updates give the same increments to second order in the
    // step, so over a fixed simulated time the ball forces of the two
    // runs differ by O(dt): halving the step halves the difference. (Over
    // long times a dense packing amplifies any difference, so the time is
    // kept short.) The no-ratchet branch vectors are another relative
    // velocity, not another discretisation: their difference stays as
    // the step shrinks, bounded by the overlaps (a few percent of the
    // radius here) over the radius.
    let forces = |frame: ContactFrame, dt: f64| {
        let mut sim = packing(frame, dt);
        sim.prepare().unwrap();
        for _ in 0..(2e-5 / dt).round() as usize {
            sim.cycle().unwrap();
        }
        let b = sim.balls();
        (0..b.len()).map(|i| b.force[i]).collect::<Vec<_>>()
    };
    let differences = |frame: ContactFrame| -> Vec<f64> {
        [2e-6, 1e-6, 5e-7]
            .into_iter()
            .map(|dt| {
                let base = forces(ContactFrame::Rotations, dt);
                let other = forces(frame, dt);
                let scale = base.iter().map(|f| f.length()).fold(0.0, f64::max);
                let worst = base
                    .iter()
                    .zip(&other)
                    .map(|(a, b)| (*a - *b).length())
                    .fold(0.0, f64::max);
                worst / scale
            })
            .collect()
    };
    let six = differences(SIX_DOF);
    assert!(six[0] > 0.0 && six[0] < 1e-4, "{six:?}");
    for pair in six.windows(2) {
        assert!((1.8..2.2).contains(&(pair[0] / pair[1])), "{six:?}");
    }
    let no_ratchet = differences(NO_RATCHET);
    assert!(
        no_ratchet.iter().all(|&d| d > 1e-4 && d < 0.05),
        "{no_ratchet:?}"
    );
}
