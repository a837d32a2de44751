//! Rigid blocks as bodies: their law of motion through the engine's cycle,
//! against the ball's and against closed forms.

use talus_core::math::Quat;
use talus_core::rigid::{PrincipalInertia, RigidRotation};
use talus_core::{BallInit, BlockInit, BlockShape, Fixity, Settings, Simulation, Timestep, Vec3};
use talus_geometry::box_block;

fn linear() -> talus_sdk::ModelEntry {
    let root = talus_plugin_linear::root_module();
    talus_sdk::ModelEntry::from_abi((root.models())()[0]).unwrap()
}

fn sim(dt: f64) -> Simulation {
    Simulation::new(Settings {
        gravity: Vec3::new(0.0, 0.0, -9.81),
        timestep: Timestep::Fixed(dt),
        cell_tolerance: None,
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
    s.group("g");
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
    s.group("g");
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
