//! The rotational step of rigid bodies (blocks and clumps): 1024 tumbling
//! bodies with a full inertia tensor, each turned one step by
//! `RigidRotation::step` and given its mean spin over the step, as the law
//! of motion does. The cost per body is what a block or a clump pays each
//! step beyond a ball's translation.

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use talus_core::math::Quat;
use talus_core::rigid::{mean_spin, PrincipalInertia, RigidRotation};
use talus_core::Vec3;

fn bodies() -> Vec<(PrincipalInertia, RigidRotation)> {
    (0..1024)
        .map(|k| {
            let f = k as f64;
            let inertia = PrincipalInertia::new(Vec3::new(1.0, 2.0 + 0.001 * f, 3.0)).unwrap();
            let q = Quat::from_scaled_axis(Vec3::new(0.3 + 0.001 * f, -0.7, 0.4));
            let w = Vec3::new(2.0, -1.0 + 0.01 * f, 0.5);
            (
                inertia,
                RigidRotation::start(&inertia, q, w, Vec3::ZERO, 1e-5),
            )
        })
        .collect()
}

fn rotation(c: &mut Criterion) {
    let mut all = bodies();
    let moment = Vec3::new(1e-3, -2e-3, 5e-4);
    c.bench_function("rigid step and mean spin, 1024 bodies", |b| {
        b.iter(|| {
            let mut sum = Vec3::ZERO;
            for (inertia, rot) in all.iter_mut() {
                let q0 = rot.orientation;
                rot.step(inertia, moment, 0.0, false, 1e-5);
                sum += mean_spin(q0, rot.orientation, 1e-5);
            }
            black_box(sum)
        })
    });
}

criterion_group!(benches, rotation);
criterion_main!(benches);
