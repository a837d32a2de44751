//! Rigid blocks as bodies: their law of motion through the engine's cycle,
//! against the ball's and against closed forms.

use talus_core::math::Quat;
use talus_core::rigid::{PrincipalInertia, RigidRotation};
use talus_core::snapshot::PieceId;
use talus_core::{
    BallInit, BlockInit, BlockShape, Fixity, PairKind, Settings, Simulation, Timestep, Vec3,
};
use talus_geometry::box_block;

fn linear() -> talus_sdk::ModelEntry {
    let root = talus_plugin_linear::root_module();
    talus_sdk::ModelEntry::from_abi((root.models())()[0]).unwrap()
}

/// Group "g" with the linear model between its bodies.
fn self_paired(s: &mut Simulation) {
    let g = s.group("g");
    let m = s.add_model(linear());
    s.assign(g, g, m, vec![1e5, 5e4, 0.5, 0.1, 0.1]).unwrap();
}

fn sim(dt: f64) -> Simulation {
    Simulation::new(Settings {
        gravity: Vec3::new(0.0, 0.0, -9.81),
        timestep: Timestep::Fixed(dt),
        ..Settings::default()
    })
}

fn block(shape: u32, pos: Vec3, spin: Vec3) -> BlockInit {
    BlockInit {
        shape,
        pos,
        orientation: Quat::from_rotation_x(0.3),
        velocity: Vec3::new(0.5, 0.0, 1.0),
        spin,
        density: 2000.0,
        group: 0,
        damping: 0.0,
        fixity: Fixity::default(),
    }
}

#[test]
fn a_falling_block_moves_as_a_ball_does_and_as_the_leapfrog_says() {
    let dt = 1e-4;
    let mut s = sim(dt);
    let g = s.group("g");
    let k = s.add_shape(
        BlockShape::new("brick", &box_block(Vec3::new(0.1, 0.2, 0.3)).unwrap()).unwrap(),
    );
    let x0 = Vec3::new(0.0, 0.0, 1.0);
    s.add_block(block(k, x0, Vec3::ZERO)).unwrap();
    // The ball beside it, in reach of nothing.
    let m = s.add_model(linear());
    s.assign(g, g, m, vec![1e5, 5e4, 0.5, 0.1, 0.1]).unwrap();
    s.add_ball(BallInit {
        pos: x0 + Vec3::Y,
        radius: 0.05,
        density: 2000.0,
        velocity: Vec3::new(0.5, 0.0, 1.0),
        spin: Vec3::ZERO,
        group: g,
        damping: 0.0,
        fixity: Fixity::default(),
    })
    .unwrap();
    s.prepare().unwrap();
    let n = 2000;
    for _ in 0..n {
        s.cycle().unwrap();
    }
    let (bv, kv, kx) = (s.balls().vel[0], s.blocks().vel[0], s.blocks().pos[0]);
    // The same translational velocity, to the bit, as the ball beside it.
    assert_eq!(
        kv.to_array().map(f64::to_bits),
        bv.to_array().map(f64::to_bits)
    );
    // The leap-frog's own closed form: x_n = x_0 + v n dt + g dt^2 n (n + 1) / 2.
    let nf = n as f64;
    let want = x0
        + Vec3::new(0.5, 0.0, 1.0) * (nf * dt)
        + Vec3::new(0.0, 0.0, -9.81) * (dt * dt * nf * (nf + 1.0) / 2.0);
    assert!((kx - want).length() < 1e-12, "{kx} vs {want}");
    // No moment: the orientation does not change.
    let q = s.blocks().orientation[0];
    assert!(q.abs_diff_eq(Quat::from_rotation_x(0.3), 1e-15), "{q}");
}

#[test]
fn a_tumbling_block_keeps_its_angular_momentum_and_turns_as_the_rigid_step() {
    // Principal moments in ratio 1:2:3 (a brick), spun near its
    // intermediate axis: the engine's cycle must give exactly the rotation
    // of `RigidRotation::step`, and the world angular momentum must not
    // move.
    let dt = 1e-3;
    let mut s = sim(dt);
    s.settings.gravity = Vec3::ZERO;
    self_paired(&mut s);
    let k = s.add_shape(
        BlockShape::new("brick", &box_block(Vec3::new(0.1, 0.2, 0.3)).unwrap()).unwrap(),
    );
    let w0 = Vec3::new(0.01, 10.0, 0.02);
    s.add_block(block(k, Vec3::ZERO, w0)).unwrap();
    s.prepare().unwrap();
    let (l0, inertia, q0) = {
        let b = s.blocks();
        (b.momentum[0], b.inertia[0], b.orientation[0])
    };
    let moments = inertia.moments();
    assert!(moments.x < moments.y && moments.y < moments.z);
    let reference = PrincipalInertia::new(moments).unwrap();
    let mut rot = RigidRotation {
        orientation: q0,
        momentum: l0,
    };
    let e0 = reference.kinetic_energy(q0, l0);
    for _ in 0..20_000 {
        s.cycle().unwrap();
        rot.step(&reference, Vec3::ZERO, 0.0, false, dt);
    }
    let b = s.blocks();
    assert_eq!(b.momentum[0], l0, "angular momentum moved");
    assert_eq!(b.orientation[0], rot.orientation);
    let e = reference.kinetic_energy(b.orientation[0], b.momentum[0]);
    assert!(((e - e0) / e0).abs() < 1e-5, "energy {e} vs {e0}");
    // The recorded spin turns the pose of the last step exactly.
    assert!(b.spin[0].is_finite() && b.spin[0].length() > 9.0);
}

#[test]
fn a_block_with_its_rotation_fixed_keeps_its_spin() {
    let dt = 1e-3;
    let mut s = sim(dt);
    self_paired(&mut s);
    let k = s.add_shape(
        BlockShape::new("brick", &box_block(Vec3::new(0.1, 0.2, 0.3)).unwrap()).unwrap(),
    );
    let mut b = block(k, Vec3::ZERO, Vec3::ZERO);
    b.fixity = Fixity::from_flags([false, false, true, true, true, true]);
    s.add_block(b).unwrap();
    s.prepare().unwrap();
    for _ in 0..100 {
        s.cycle().unwrap();
    }
    let b = s.blocks();
    // z is fixed: it keeps its initial velocity; x moves freely.
    assert_eq!(b.vel[0].z, 1.0);
    assert!((b.pos[0].x - 0.5 * 100.0 * dt).abs() < 1e-12);
    assert!(b.orientation[0].abs_diff_eq(Quat::from_rotation_x(0.3), 1e-15));
}

/// A block of `size` fixed in place, rotated by `q`, in group "k"; balls
/// in group "b"; the linear model between every pair.
fn with_fixed_block(dt: Timestep, size: Vec3, q: Quat) -> Simulation {
    let mut s = Simulation::new(Settings {
        gravity: Vec3::new(0.0, 0.0, -9.81),
        timestep: dt,
        ..Settings::default()
    });
    let (b, k) = (s.group("b"), s.group("k"));
    let m = s.add_model(linear());
    for (g1, g2) in [(b, b), (b, k), (k, k)] {
        s.assign(g1, g2, m, vec![1e5, 5e4, 0.5, 0.2, 0.2]).unwrap();
    }
    let shape = s.add_shape(BlockShape::new("slab", &box_block(size).unwrap()).unwrap());
    s.add_block(BlockInit {
        shape,
        pos: Vec3::ZERO,
        orientation: q,
        velocity: Vec3::ZERO,
        spin: Vec3::ZERO,
        density: 2000.0,
        group: k,
        damping: 0.0,
        fixity: Fixity::from_flags([true; 6]),
    })
    .unwrap();
    s
}

fn grain(pos: Vec3, group: u16, damping: f64) -> BallInit {
    BallInit {
        pos,
        radius: 0.01,
        density: 2500.0,
        velocity: Vec3::ZERO,
        spin: Vec3::ZERO,
        group,
        damping,
        fixity: Fixity::default(),
    }
}

#[test]
fn a_ball_resting_on_a_block_carries_its_weight() {
    // A slab 0.4 x 0.3 x 0.1 m turned about z (its top stays level), a
    // ball dropped on it settles under local damping: the contact force
    // equals the ball's weight, and the block's sum takes it.
    let mut s = with_fixed_block(
        Timestep::Auto { safety: 0.5 },
        Vec3::new(0.4, 0.3, 0.1),
        Quat::from_rotation_z(0.7),
    );
    let b = s.group("b");
    s.add_ball(grain(Vec3::new(0.05, -0.03, 0.0605), b, 0.7))
        .unwrap();
    s.prepare().unwrap();
    for _ in 0..20_000 {
        s.cycle().unwrap();
    }
    let weight = s.balls().mass[0] * 9.81;
    let snap = s.snapshot();
    let rows: Vec<_> = snap.contacts().filter(|c| c.active).collect();
    assert_eq!(rows.len(), 1);
    let c = &rows[0];
    assert_eq!(c.pair, PairKind::BallBlock);
    assert!(matches!(c.end2, PieceId::Block { id: 1 }));
    // The normal points down from the ball into the slab.
    assert!(
        (c.n - Vec3::new(0.0, 0.0, -1.0)).length() < 1e-12,
        "{}",
        c.n
    );
    assert!(
        ((c.force.z + weight) / weight).abs() < 1e-9,
        "{} vs {weight}",
        c.force.z
    );
    drop(snap);
    let k = s.blocks();
    assert!(((k.force[0].z + weight) / weight).abs() < 1e-9);
    assert!(s.balls().spin[0].length() < 1e-12);
    // Resting where it landed, 0.05 m + r above the slab's centre.
    let x = s.balls().pos[0];
    assert!((x.z - (0.06 - weight / 1e5)).abs() < 1e-9, "{x}");
}

#[test]
fn ball_block_contacts_match_the_brute_force_closest_point() {
    // Balls scattered around a tilted slab: every ball-block contact's gap,
    // normal and location against the kernel's brute-force scan of the
    // block's surface.
    use rand::{Rng, SeedableRng};
    let q = Quat::from_euler(glam::EulerRot::XYZ, 0.3, -0.5, 1.1);
    let size = Vec3::new(0.2, 0.12, 0.08);
    let mut s = with_fixed_block(Timestep::Fixed(1e-6), size, q);
    let b = s.group("b");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    for _ in 0..300 {
        let p = Vec3::new(
            rng.random_range(-0.14..0.14),
            rng.random_range(-0.14..0.14),
            rng.random_range(-0.14..0.14),
        );
        s.add_ball(grain(p, b, 0.0)).unwrap();
    }
    s.settings.gravity = Vec3::ZERO;
    s.prepare().unwrap();
    let shape = s.shapes()[0].polyhedron.clone();
    let balls: Vec<Vec3> = s.balls().pos.to_vec();
    let snap = s.snapshot();
    let mut seen = 0;
    for c in snap.contacts().filter(|c| c.pair == PairKind::BallBlock) {
        let PieceId::Ball { id } = c.end1 else {
            panic!()
        };
        let x = balls[id as usize - 1];
        let local = q.conjugate() * x;
        let sp = talus_geometry::closest_surface_point_scan(&shape, local);
        let gap = sp.signed_distance - 0.01;
        assert!((c.gap - gap).abs() < 1e-12, "ball {id}: {} vs {gap}", c.gap);
        let n = -(q * sp.normal);
        assert!((c.n - n).length() < 1e-9, "ball {id}: {} vs {n}", c.n);
        let xc = 0.5 * (x + n * 0.01 + q * sp.point);
        assert!((c.xc - xc).length() < 1e-12, "ball {id}");
        seen += 1;
    }
    // Inside, touching, near and apart all occur among 300 balls.
    assert!(seen > 50, "{seen} contacts");
}

#[test]
fn balls_on_a_block_give_the_same_bits_on_one_and_two_threads() {
    let run = |threads: usize| -> Vec<u64> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut s = with_fixed_block(
                Timestep::Auto { safety: 0.5 },
                Vec3::new(0.5, 0.5, 0.1),
                Quat::from_rotation_x(0.2),
            );
            let b = s.group("b");
            for i in 0..12 {
                for j in 0..12 {
                    for k in 0..3 {
                        let p = Vec3::new(i as f64 - 5.5, j as f64 - 5.5, 0.0) * 0.021
                            + Vec3::new(0.0, 0.0, 0.08 + 0.021 * k as f64);
                        s.add_ball(grain(p, b, 0.0)).unwrap();
                    }
                }
            }
            s.prepare().unwrap();
            for _ in 0..400 {
                s.cycle().unwrap();
            }
            let balls = s.balls();
            let k = s.blocks();
            let mut bits: Vec<u64> = balls
                .pos
                .iter()
                .flat_map(|p| p.to_array())
                .map(f64::to_bits)
                .collect();
            bits.extend(k.force[0].to_array().map(f64::to_bits));
            bits
        })
    };
    let one = run(1);
    assert_eq!(run(2), one);
    assert_eq!(run(3), one);
}
