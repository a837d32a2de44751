//! The rigid lanes of the contact pass run in small units that any thread
//! takes: the sums they leave must not depend on the thread count, and
//! every body's sum must be what its contacts apply, none lost or counted
//! twice.

mod common;
use common::{on_threads, push_bits};

use rand::{Rng, SeedableRng};
use talus_core::math::Quat;
use talus_core::snapshot::PieceId;
use talus_core::{BallInit, BlockShape, PairKind, Settings, Simulation, Timestep, Vec3, Wall};

/// Balls and random blocks thrown onto a floor of 128 facets, under a
/// gravity strong enough (and damping) that they make a heap within a
/// few thousand steps, where every pair kind of balls, blocks and facets
/// carries force.
fn scene() -> Simulation {
    let mut s = Simulation::new(Settings {
        gravity: Vec3::new(0.0, 0.0, -100.0),
        timestep: Timestep::Fixed(2e-5),
        ..Settings::default()
    });
    let g = s.group("g");
    common::add_linear(&mut s, &[(g, g)], &[2e5, 1e5, 0.4, 0.2, 0.2]);
    let (v, t) = common::flat_mesh(0.12, 8);
    s.add_wall(Wall::new("floor", &v, &t, None).unwrap(), g);
    let shapes: Vec<u32> = (0..4)
        .map(|k| s.add_shape(BlockShape::new("grain", &common::pebble(k)).unwrap()))
        .collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for i in 0..6 {
        for j in 0..6 {
            for k in 0..3 {
                let at = Vec3::new(i as f64 - 2.5, j as f64 - 2.5, 0.0) * 0.026
                    + Vec3::new(0.0, 0.0, 0.012 + 0.024 * k as f64);
                let fall = Vec3::new(0.0, 0.0, -0.5);
                if (i + j + k) % 3 == 0 {
                    let ball = BallInit {
                        radius: 0.006 + 0.004 * rng.random::<f64>(),
                        damping: 0.7,
                        ..common::ball(at, fall, g)
                    };
                    s.add_ball(ball).unwrap();
                } else {
                    let shape = shapes[rng.random_range(0..shapes.len())];
                    let q = Quat::from_scaled_axis(common::random_direction(&mut rng) * 2.0);
                    let block = talus_core::BlockInit {
                        damping: 0.7,
                        velocity: fall,
                        ..common::block(shape, at, q.normalize())
                    };
                    s.add_block(block).unwrap();
                }
            }
        }
    }
    s.prepare().unwrap();
    s
}

/// Contacts of a rigid pair kind, over every model.
fn stored(s: &Simulation, pair: PairKind) -> usize {
    s.models.iter().map(|m| m.store(pair).len()).sum()
}

#[test]
fn balls_blocks_and_a_floor_give_the_same_bits_on_one_two_and_three_threads() {
    let run = |threads: usize| -> (Vec<u64>, [usize; 3]) {
        on_threads(threads, || {
            let mut s = scene();
            for _ in 0..2500 {
                s.cycle().unwrap();
            }
            let counts = [
                stored(&s, PairKind::BallBlock),
                stored(&s, PairKind::BlockBlock),
                stored(&s, PairKind::BlockFacet),
            ];
            let mut bits = Vec::new();
            let k = s.blocks();
            for i in 0..s.n_blocks() {
                for v in [k.pos[i], k.vel[i], k.force[i], k.moment[i]] {
                    push_bits(&mut bits, v);
                }
            }
            let b = s.balls();
            for i in 0..s.n_balls() {
                for v in [b.pos[i], b.vel[i], b.spin[i]] {
                    push_bits(&mut bits, v);
                }
            }
            for w in s.walls().iter() {
                push_bits(&mut bits, w.force);
                push_bits(&mut bits, w.moment);
            }
            (bits, counts)
        })
    };
    let (one, counts) = run(1);
    // Every rigid lane holds several units.
    assert!(counts.iter().all(|&n| n > 32), "{counts:?}");
    assert!(run(2).0 == one, "two threads differ from one");
    assert!(run(3).0 == one, "three threads differ from one");
}

#[test]
fn every_body_sums_the_forces_of_its_contacts() {
    on_threads(2, || {
        let mut s = scene();
        let mut checked = 0;
        for step in 0..2500 {
            s.cycle().unwrap();
            if step < 1000 || step % 50 != 49 {
                continue;
            }
            // What each body's contacts apply, contact by contact: minus the
            // force on end1, plus it on end2; with the body's largest
            // contribution as its scale.
            let (n_balls, n_blocks) = (s.n_balls(), s.n_blocks());
            let mut want = vec![(Vec3::ZERO, 0.0f64); n_balls + n_blocks];
            let snap = s.snapshot();
            let mut rigid = 0;
            for c in snap.contacts().filter(|c| c.active) {
                rigid += usize::from(c.pair.is_rigid());
                for (end, sign) in [(c.end1, -1.0), (c.end2, 1.0)] {
                    let at = match end {
                        PieceId::Ball { id } => id as usize - 1,
                        PieceId::Block { id } => n_balls + id as usize - 1,
                        _ => continue,
                    };
                    want[at].0 += sign * c.force;
                    want[at].1 = want[at].1.max(c.force.length());
                }
            }
            drop(snap);
            checked += rigid;
            // The sums hold this step's contact forces (the law of motion
            // clears them as it uses them, at the start of the next).
            let mut got = s.balls().force.to_vec();
            got.extend_from_slice(&s.blocks().force);
            for (i, (f, (w, scale))) in got.iter().zip(&want).enumerate() {
                assert!(
                    (*f - *w).length() <= 1e-12 * scale.max(1e-300),
                    "step {step}, body {i}: sums {f}, contacts {w}"
                );
            }
        }
        // Rigid contacts that carry force, over every check.
        assert!(checked > 1000, "{checked}");
    });
}
