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

/// Per step, the six-DOF displacements of the contact that carries a
/// ball pressed into `mesh` (full wall resolution) and dragged over it
/// while it spins, with friction enough that it never slides.
fn dragged_over(mesh: &(Vec<[f64; 3]>, Vec<[u32; 3]>), h: f64) -> Vec<[f64; 6]> {
    let dt = 1e-5;
    let mut sim = Simulation::new(Settings {
        gravity: Vec3::ZERO,
        timestep: Timestep::Fixed(dt),
        ..Settings::default()
    });
    let (g, w) = (sim.group("grain"), sim.group("wall"));
    let root = talus_plugin_linear::root_module();
    let entry = talus_sdk::ModelEntry::from_abi((root.models())()[0]).unwrap();
    let m = sim.add_model_with_frame(entry, SIX_DOF);
    for pair in [(g, w), (g, g)] {
        sim.assign(pair.0, pair.1, m, vec![KN, 0.5 * KN, 1e3, 0.0, 0.0])
            .unwrap();
    }
    let u0 = 1e-3 * RADIUS;
    let start = Vec3::new(-0.7 * h, -0.55 * h, RADIUS - u0);
    let end = Vec3::new(0.7 * h, 0.5 * h, RADIUS - u0);
    let steps = 20_000;
    let mut b = ball(start, (end - start) / (steps as f64 * dt), g);
    b.spin = Vec3::new(0.3, -0.2, 0.5);
    b.fixity = talus_core::Fixity::from_flags([true; 6]);
    sim.add_ball(b).unwrap();
    let mut wall = talus_core::Wall::new("w", &mesh.0, &mesh.1, None).unwrap();
    wall.resolution = talus_core::Resolution::Full;
    wall.cutoff_angle = 10f64.to_radians();
    sim.add_wall(wall, w);
    sim.prepare().unwrap();
    (0..steps)
        .map(|step| {
            sim.cycle().unwrap();
            let snap = sim.snapshot();
            let carrying: Vec<_> = snap
                .contacts()
                .filter(|c| c.force_local[0] > 0.0)
                .map(|c| c.dof.expect("six-DOF displacements"))
                .collect();
            assert_eq!(carrying.len(), 1, "step {step}: one contact carries");
            carrying[0]
        })
        .collect()
}

/// When the wall logic hands a ball's load to another facet's contact,
/// the six-DOF displacements go with the frame and the model's state: a
/// ball dragged and spun over 2 and over 200 facets has, at every step,
/// the displacements of the same ball on one facet (to 1e-9 of their
/// size). A carrier that started its own history would lose the shear
/// and the rotations accumulated before it took over.
#[test]
fn six_dof_displacements_follow_the_load_across_facets() {
    let h = 4.0 * RADIUS;
    let one = (
        vec![
            [-4.0 * h, -4.0 * h, 0.0],
            [4.0 * h, -4.0 * h, 0.0],
            [0.0, 6.0 * h, 0.0],
        ],
        vec![[0, 1, 2]],
    );
    let reference = dragged_over(&one, h);
    let last = reference.last().unwrap();
    // The shear path and the rolling and twist angles are all there.
    assert!(last[1].hypot(last[2]) > 0.5 * h, "{last:?}");
    assert!(
        last[3].abs() > 0.01 && last[4].hypot(last[5]) > 0.01,
        "{last:?}"
    );
    for n in [1, 10] {
        let over = dragged_over(&flat_mesh(h, n), h);
        for (step, (a, b)) in reference.iter().zip(&over).enumerate() {
            for k in 0..6 {
                let scale = if k < 3 { h } else { 1.0 };
                assert!(
                    (a[k] - b[k]).abs() <= 1e-9 * scale,
                    "{} facets, step {step}, component {k}: {} vs {}",
                    2 * n * n,
                    b[k],
                    a[k]
                );
            }
        }
    }
}
