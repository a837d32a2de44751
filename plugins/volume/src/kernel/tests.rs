//! Unit and property tests of the volume-stiffness kernel.

use super::*;
use proptest::prelude::*;
use talus_sdk::{STATUS_ACTIVE, STATUS_COULD_BE_ACTIVE};

fn props(kn: f64, ks: f64, fric: f64, e: f64) -> VolumeProps {
    VolumeProps { kn, ks, fric, e }
}

fn overlapping(gap: f64, mass: f64) -> ContactInput {
    ContactInput {
        gap,
        mass,
        ..ContactInput::default()
    }
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(f64::MIN_POSITIVE)
}

#[test]
fn restitution_floor_is_exp_minus_two() {
    assert_eq!(RESTITUTION_MIN, (-2.0f64).exp());
}

#[test]
fn normal_force_is_kn_times_volume() {
    let kn = 3.7e10;
    let p = Prepared::new(&props(kn, 1e10, 0.5, 1.0), 1e-6);
    for (volume, area) in [(1e-15, 1e-8), (2.5e-9, 3e-5), (4e-6, 1e-3), (0.3, 2.0)] {
        let mut state = VolumeState::default();
        let input = ContactInput {
            delta_n: -1e-7,
            ..overlapping(-1e-4, 2.0)
        };
        let out = force_displacement(
            &p,
            &input,
            Overlap {
                volume,
                area,
                ..Overlap::default()
            },
            &mut state,
        );
        assert!(close(out.force[0], kn * volume, 1e-12), "{volume}");
        assert_eq!(state.fn_volume, out.force[0]);
        assert_eq!(out.status, STATUS_ACTIVE);
        // Timestep stiffness: the stiffer spring on this area.
        assert_eq!(out.stiffness, [kn * area, 0.0]);
    }
}

#[test]
fn open_contact_carries_nothing_and_keeps_nothing() {
    let p = Prepared::new(&props(1e9, 1e9, 0.5, 0.5), 1e-6);
    let mut state = VolumeState {
        fn_volume: 3.0,
        fs: [1.0, -2.0],
        slipping: 1.0,
    };
    for gap in [0.0, 1e-6, f64::NAN] {
        let overlap = Overlap {
            volume: 1e-9,
            area: 1e-4,
            ..Overlap::default()
        };
        let out = force_displacement(&p, &overlapping(gap, 1.0), overlap, &mut state);
        assert_eq!(out, ContactOutput::could_be_active([0.0; 2]), "{gap}");
        assert_eq!(out.status, STATUS_COULD_BE_ACTIVE);
        assert_eq!(state, VolumeState::default());
    }
}

/// Constant area: each step adds `-ks A ds` until the spring reaches
/// `fric kn V`, where it stays, sliding, whatever the further motion.
#[test]
fn shear_force_grows_by_ks_area_then_caps_at_coulomb() {
    let (kn, ks, fric) = (1e9, 5e8, 0.5);
    let overlap = Overlap {
        volume: 1e-6, // Fe = 1000 N, limit 500 N
        area: 2e-3,   // k_s = 1e6 N/m
        ..Overlap::default()
    };
    let p = Prepared::new(&props(kn, ks, fric, 1.0), 1e-6);
    let input = ContactInput {
        delta_s: [1e-5, 0.0], // -10 N per step
        ..overlapping(-1e-3, 1.0)
    };
    let mut state = VolumeState::default();
    for step in 1..=49 {
        let out = force_displacement(&p, &input, overlap, &mut state);
        let expected = -ks * overlap.area * 1e-5 * step as f64;
        assert!(close(state.fs[0], expected, 1e-12), "step {step}");
        assert_eq!(state.fs[1], 0.0);
        assert_eq!(state.slipping, 0.0);
        assert_eq!([out.force[1], out.force[2]], state.fs);
    }
    // Step 50 reaches the limit to rounding; the steps after it slide.
    let limit = fric * kn * overlap.volume;
    for step in 50..=55 {
        force_displacement(&p, &input, overlap, &mut state);
        assert!(close(state.fs[0], -limit, 1e-12), "step {step}");
        assert!(step == 50 || state.slipping == 1.0, "step {step}");
    }
    // A slide in another direction: the capped force opposes it.
    let oblique = ContactInput {
        delta_s: [-3e-3, 4e-3],
        ..input
    };
    let mut fresh = VolumeState::default();
    force_displacement(&p, &oblique, overlap, &mut fresh);
    assert!(close(fresh.fs[0], 0.6 * limit, 1e-12));
    assert!(close(fresh.fs[1], -0.8 * limit, 1e-12));
    assert_eq!(fresh.slipping, 1.0);
    // Moving back unloads the spring elastically from the cap.
    let back = ContactInput {
        delta_s: [-1e-4, 0.0],
        ..input
    };
    force_displacement(&p, &back, overlap, &mut state);
    assert!(close(state.fs[0], -limit + 100.0, 1e-12));
    assert_eq!(state.slipping, 0.0);
}

#[test]
fn dashpot_acts_on_the_tangent_stiffness_and_never_pulls() {
    let (kn, e, mass, dt) = (2e9, 0.5, 0.3, 1e-6);
    let overlap = Overlap {
        volume: 2e-9,
        area: 4e-4,
        ..Overlap::default()
    };
    let p = Prepared::new(&props(kn, 0.0, 0.0, e), dt);
    let beta = damping_ratio(e);
    let c = 2.0 * beta * (mass * kn * overlap.area).sqrt();
    let approach = ContactInput {
        delta_n: -1e-8,
        ..overlapping(-1e-5, mass)
    };
    let mut state = VolumeState::default();
    let out = force_displacement(&p, &approach, overlap, &mut state);
    assert!(close(
        out.force[0],
        kn * overlap.volume + c * 1e-8 / dt,
        1e-12
    ));
    // Parting fast: the dashpot would pull harder than the spring pushes.
    let part = ContactInput {
        delta_n: 1e-5,
        ..approach
    };
    let out = force_displacement(&p, &part, overlap, &mut state);
    assert_eq!(out.force[0], 0.0);
    assert_eq!(out.status, STATUS_ACTIVE);
    assert_eq!(state.fn_volume, kn * overlap.volume);
}

#[test]
fn damping_ratio_inverts_restitution() {
    assert_eq!(damping_ratio(1.0), 0.0);
    assert_eq!(damping_ratio(f64::NAN), 0.0);
    assert_eq!(damping_ratio(RESTITUTION_MIN), 1.0);
    assert_eq!(damping_ratio(0.0), 1.0);
    assert_eq!(restitution(0.0), 1.0);
    assert_eq!(restitution(1.0), RESTITUTION_MIN);
    for k in 1..1000 {
        let e = RESTITUTION_MIN + (1.0 - RESTITUTION_MIN) * k as f64 / 1000.0;
        let beta = damping_ratio(e);
        assert!((0.0..1.0).contains(&beta), "{e}: {beta}");
        assert!(close(restitution(beta), e, 1e-13), "{e}: {beta}");
    }
    // Light damping: the textbook ratio of a dashpot allowed to pull,
    // `-ln e / sqrt(pi^2 + ln^2 e)`, is smaller by a relative `2 beta / pi`
    // to first order (the clip ends the contact a little early, which
    // the exact ratio makes up for with more damping).
    let pi = std::f64::consts::PI;
    for e in [0.999, 0.99, 0.98] {
        let l = -f64::ln(e);
        let textbook = l / (pi * pi + l * l).sqrt();
        let beta = damping_ratio(e);
        let excess = beta / textbook - 1.0;
        assert!(close(excess, 2.0 * beta / pi, 0.05), "{e}: {excess}");
    }
}

/// Two masses collide head-on through a contact of constant area
/// (`V = A overlap`, so the normal force is a linear spring of
/// stiffness `kn A`), integrated by leap-frog as the engine does: the
/// increments of a step come from the half-step velocities that moved
/// the pieces. The speed ratio after and before is the property `e`.
#[test]
fn constant_area_collision_rebounds_with_the_restitution_coefficient() {
    let (m1, m2) = (2.0, 3.0);
    let mass = m1 * m2 / (m1 + m2);
    let (kn, area) = (1e9, 1e-3); // k_n = 1e6 N/m: contact lasts ~3.4 ms
    let dt = 1e-7;
    for e in [1.0, 0.95, 0.8, 0.5, 0.3, 0.2, RESTITUTION_MIN] {
        let p = Prepared::new(&props(kn, 0.0, 0.0, e), dt);
        let (mut x1, mut x2) = (0.0, 1.0 + 1e-6);
        let (v1_0, v2_0) = (0.4, -0.6);
        let (mut v1, mut v2) = (v1_0, v2_0);
        let mut state = VolumeState::default();
        let mut force = 0.0;
        let mut touched = false;
        for _ in 0..1_000_000 {
            v1 -= force / m1 * dt;
            v2 += force / m2 * dt;
            x1 += v1 * dt;
            x2 += v2 * dt;
            let gap = x2 - x1 - 1.0;
            let input = ContactInput {
                gap,
                delta_n: (v2 - v1) * dt,
                mass,
                ..ContactInput::default()
            };
            let overlap = Overlap {
                volume: area * (-gap).max(0.0),
                area: if gap < 0.0 { area } else { 0.0 },
                ..Overlap::default()
            };
            let out = force_displacement(&p, &input, overlap, &mut state);
            force = out.force[0];
            touched |= gap < 0.0;
            if touched && gap > 0.0 {
                break;
            }
        }
        assert!(touched);
        let ratio = (v2 - v1) / -(v2_0 - v1_0);
        assert!((ratio - e).abs() < 1e-3, "e {e}: rebound ratio {ratio}");
    }
}

#[test]
fn broken_inputs_give_finite_zero_force() {
    let p = Prepared::new(&props(1e9, 1e9, 0.5, 0.3), 1e-6);
    let good = Overlap {
        volume: 1e-9,
        area: 1e-4,
        ..Overlap::default()
    };
    let bad = [f64::NAN, -1e-9, f64::INFINITY, f64::NEG_INFINITY];
    let mut cases: Vec<(ContactInput, Overlap)> = Vec::new();
    let base = ContactInput {
        delta_n: -1e-8,
        delta_s: [1e-8, 0.0],
        ..overlapping(-1e-4, 1.0)
    };
    for v in bad {
        cases.push((base, Overlap { volume: v, ..good }));
        cases.push((base, Overlap { area: v, ..good }));
        if v.is_finite() {
            continue; // a negative increment is ordinary motion
        }
        let mut input = base;
        input.delta_n = v;
        cases.push((input, good));
        input = base;
        input.delta_s[1] = v;
        cases.push((input, good));
    }
    for (input, overlap) in cases {
        let mut state = VolumeState {
            fn_volume: 1.0,
            fs: [2.0, 3.0],
            slipping: 0.0,
        };
        let out = force_displacement(&p, &input, overlap, &mut state);
        assert_eq!(
            out,
            ContactOutput::could_be_active([0.0; 2]),
            "{input:?} {overlap:?}"
        );
        assert_eq!(state, VolumeState::default());
    }
    // A broken mass only switches the dashpot off.
    for mass in [f64::NAN, -1.0, 0.0, f64::INFINITY] {
        let input = ContactInput { mass, ..base };
        let mut state = VolumeState::default();
        let out = force_displacement(&p, &input, good, &mut state);
        assert_eq!(out.force[0], 1e9 * good.volume, "{mass}");
    }
    // Finite inputs whose force overflows.
    let huge = Prepared::new(&props(1e300, 0.0, 0.0, 1.0), 1e-6);
    let mut state = VolumeState::default();
    let overlap = Overlap {
        volume: 1e10,
        area: 1.0,
        ..Overlap::default()
    };
    let out = force_displacement(&huge, &base, overlap, &mut state);
    assert_eq!(out, ContactOutput::could_be_active([0.0; 2]));
    // No timestep, no dashpot.
    for dt in [0.0, -1.0, f64::NAN, 1e-320] {
        assert_eq!(Prepared::new(&props(1.0, 1.0, 1.0, 0.5), dt).inv_dt, 0.0);
    }
}

#[test]
fn zero_volume_under_overlap_is_active_without_force() {
    let p = Prepared::new(&props(1e9, 1e9, 0.5, 0.5), 1e-6);
    let mut state = VolumeState {
        fs: [5.0, 0.0],
        ..VolumeState::default()
    };
    let input = ContactInput {
        delta_s: [1e-6, 0.0],
        ..overlapping(-1e-15, 1.0)
    };
    let out = force_displacement(&p, &input, Overlap::default(), &mut state);
    assert_eq!(out, ContactOutput::active([0.0; 3], [0.0; 2]));
    // No normal force, no friction: the spring lets go.
    assert_eq!(state.fs, [0.0; 2]);
    assert_eq!(state.slipping, 1.0);
}

#[test]
fn new_contact_starts_from_zero_and_release_clears() {
    let p = Prepared::new(&props(1e9, 1e9, 1.0, 1.0), 1e-6);
    let mut state = VolumeState {
        fn_volume: 9.0,
        fs: [7.0, 7.0],
        slipping: 1.0,
    };
    let input = ContactInput {
        flags: flags::NEW,
        ..overlapping(-1e-4, 1.0)
    };
    let overlap = Overlap {
        volume: 1e-9,
        area: 1e-4,
        ..Overlap::default()
    };
    force_displacement(&p, &input, overlap, &mut state);
    assert_eq!(state.fs, [0.0; 2]);
    assert_eq!(state.fn_volume, 1.0);
    release(&mut state);
    assert_eq!(state, VolumeState::default());
}

#[test]
fn state_round_trips_through_slots() {
    let state = VolumeState {
        fn_volume: 1.0,
        fs: [2.0, 3.0],
        slipping: 1.0,
    };
    let mut slots = [0.0; VolumeState::SLOTS];
    state.store(&mut slots);
    assert_eq!(slots, [1.0, 2.0, 3.0, 1.0]);
    assert_eq!(VolumeState::load(&slots), state);
}

/// One step of a random contact history: gap, volume, area, normal
/// and shear increments.
fn any_step() -> impl Strategy<Value = (f64, Overlap, f64, [f64; 2])> {
    let overlap = (0.0..1e-6f64, 0.0..1e-3f64).prop_map(|(volume, area)| Overlap {
        volume,
        area,
        ..Overlap::default()
    });
    let increment = -1e-3..1e-3f64;
    (
        -1e-2..1e-2f64,
        overlap,
        increment.clone(),
        [increment.clone(), increment],
    )
}

proptest! {
    /// Over a few steps of any history (loaded springs included), the
    /// outputs stay finite, the normal force never pulls and the stored
    /// shear spring, which is the returned shear force, respects the
    /// Coulomb limit on the elastic normal force.
    #[test]
    fn outputs_are_finite_never_pull_and_respect_coulomb(
        (kn, ks, fric) in (0.0..1e12f64, 0.0..1e12f64, 0.0..5.0f64),
        e in RESTITUTION_MIN..=1.0f64,
        (mass, dt) in (1e-6..1e3f64, 1e-8..1e-2f64),
        history in proptest::collection::vec(any_step(), 1..5),
    ) {
        let p = Prepared::new(&VolumeProps { kn, ks, fric, e }, dt);
        let mut state = VolumeState::default();
        for (gap, overlap, delta_n, delta_s) in history {
            let input = ContactInput { gap, delta_n, delta_s, mass, ..ContactInput::default() };
            let out = force_displacement(&p, &input, overlap, &mut state);
            let outputs = out.force.iter().chain(&out.stiffness);
            prop_assert!(outputs.into_iter().all(|v| v.is_finite()));
            prop_assert!(out.force[0] >= 0.0);
            let limit = fric * state.fn_volume;
            prop_assert!(state.fs[0].hypot(state.fs[1]) <= limit * (1.0 + 1e-12));
            prop_assert_eq!([out.force[1], out.force[2]], state.fs);
        }
    }
}
