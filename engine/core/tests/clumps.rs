//! Clumps of pebbles as bodies: against the ball they reduce to, closed
//! forms of their mass properties, rest on a floor, free rotation and the
//! same bits on any thread count.

use talus_core::math::Quat;
use talus_core::snapshot::{BodyKind, PieceId};
use talus_core::{
    BallInit, ClumpInit, ClumpTemplate, Fixity, PairKind, Settings, Simulation, Timestep, Vec3,
    Wall,
};

fn linear() -> talus_sdk::ModelEntry {
    let root = talus_plugin_linear::root_module();
    talus_sdk::ModelEntry::from_abi((root.models())()[0]).unwrap()
}

fn sim(timestep: Timestep) -> Simulation {
    Simulation::new(Settings {
        gravity: Vec3::new(0.0, 0.0, -9.81),
        timestep,
        ..Settings::default()
    })
}

/// Groups "g" (bodies) and "w" (walls) with the linear model between
/// every pair, and a square floor of two facets at z = 0.
fn with_floor(s: &mut Simulation) -> u16 {
    let (g, w) = (s.group("g"), s.group("w"));
    let m = s.add_model(linear());
    let props = vec![1e5, 5e4, 0.5, 0.1, 0.1];
    s.assign(g, g, m, props.clone()).unwrap();
    s.assign(g, w, m, props).unwrap();
    let square = [
        [-1.0, -1.0, 0.0],
        [1.0, -1.0, 0.0],
        [1.0, 1.0, 0.0],
        [-1.0, 1.0, 0.0],
    ];
    let floor = Wall::new("floor", &square, &[[0, 1, 2], [0, 2, 3]], None).unwrap();
    s.add_wall(floor, w);
    g
}

fn ball(pos: Vec3, velocity: Vec3, spin: Vec3, damping: f64) -> BallInit {
    BallInit {
        pos,
        radius: 0.01,
        density: 2500.0,
        velocity,
        spin,
        group: 0,
        damping,
        fixity: Fixity::default(),
    }
}

fn clump(template: u32, pos: Vec3, orientation: Quat, damping: f64) -> ClumpInit {
    ClumpInit {
        shape: template,
        pos,
        orientation,
        velocity: Vec3::ZERO,
        spin: Vec3::ZERO,
        density: 2500.0,
        group: 0,
        damping,
        fixity: Fixity::default(),
    }
}

fn bits(v: Vec3) -> [u64; 3] {
    v.to_array().map(f64::to_bits)
}

#[test]
fn a_clump_of_one_pebble_moves_as_the_ball_it_replaces_bit_for_bit() {
    // Nine balls dropped on a floor, thrown and spun so that they hit
    // each other and the floor; the last one is then replaced by a clump
    // of one pebble of the same radius and state. Every body must follow
    // the same bits, with local damping on and off, for a fixed and an
    // automatic timestep.
    let layout = |k: usize| {
        let (i, j) = ((k % 3) as f64, (k / 3) as f64);
        (
            Vec3::new(0.019 * i, 0.021 * j, 0.012 + 0.004 * i),
            Vec3::new(0.3 - 0.2 * i, 0.1 * j - 0.1, -0.5),
            Vec3::new(3.0 * j, -2.0, 5.0 * i - 4.0),
        )
    };
    for (timestep, damping) in [
        (Timestep::Fixed(2e-5), 0.0),
        (Timestep::Auto { safety: 0.5 }, 0.3),
    ] {
        let run = |as_clump: bool| {
            let mut s = sim(timestep);
            with_floor(&mut s);
            for k in 0..9 {
                let (x, v, w) = layout(k);
                if k < 8 || !as_clump {
                    s.add_ball(ball(x, v, w, damping)).unwrap();
                } else {
                    let t = ClumpTemplate::new("one", &[(Vec3::new(1.0, 2.0, 3.0), 0.01)], 1e-6)
                        .unwrap();
                    let t = s.add_template(t);
                    let mut c = clump(t, x, Quat::IDENTITY, damping);
                    (c.velocity, c.spin) = (v, w);
                    s.add_clump(c).unwrap();
                }
            }
            s.prepare().unwrap();
            let (mut trace, mut most) = (Vec::new(), 0);
            for step in 0..6000 {
                s.cycle().unwrap();
                most = most.max(s.n_active());
                if step % 100 == 99 {
                    let b = s.balls();
                    for i in 0..8 {
                        trace.push((bits(b.pos[i]), bits(b.vel[i]), bits(b.spin[i])));
                    }
                    let last = if as_clump {
                        let c = s.clumps();
                        (bits(c.pos[0]), bits(c.vel[0]), bits(c.spin[0]))
                    } else {
                        (bits(b.pos[8]), bits(b.vel[8]), bits(b.spin[8]))
                    };
                    trace.push(last);
                }
            }
            (trace, most)
        };
        let (balls, n) = run(false);
        let (clumps, m) = run(true);
        assert!(n >= 6, "the bodies touch each other and the floor ({n})");
        assert_eq!(n, m);
        assert_eq!(balls.len(), clumps.len());
        for (k, (a, b)) in balls.iter().zip(&clumps).enumerate() {
            assert_eq!(a, b, "{timestep:?}, entry {k}");
        }
    }
}

#[test]
fn two_touching_pebbles_have_the_closed_form_mass_and_inertia() {
    // Equal pebbles of radius r touching at the origin: volume 2 (4/3 pi
    // r^3), centroid at the contact, moments 2 (2/5 m r^2) about the axis
    // and 2 (2/5 m r^2 + m r^2) across it, m one pebble's mass.
    let r = 0.3;
    let (a, b) = (Vec3::new(0.1, 0.2, 0.3), Vec3::new(0.1, 0.2, 0.3 + 2.0 * r));
    let t = ClumpTemplate::new("pair", &[(a, r), (b, r)], 1e-6).unwrap();
    let v1 = 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
    let close = |x: f64, y: f64| ((x - y) / y).abs() < 1e-4;
    assert!(close(t.volume, 2.0 * v1), "{} vs {}", t.volume, 2.0 * v1);
    let axial = 2.0 * 0.4 * v1 * r * r;
    let across = 2.0 * (0.4 * v1 * r * r + v1 * r * r);
    let m = t.unit_moments;
    assert!(
        close(m.x, axial) && close(m.y, across) && close(m.z, across),
        "{m}"
    );
    assert!((t.input_centroid - (a + b) * 0.5).length() < 1e-4 * r);
    // In the principal frame the pebbles sit on the axis of the least
    // moment (x), at +-r.
    for &(c, radius) in &t.pebbles {
        assert_eq!(radius, r);
        assert!(
            (c.x.abs() - r).abs() < 1e-4 * r && c.y.abs() < 1e-4 * r,
            "{c}"
        );
    }
    assert!((t.radius - 2.0 * r).abs() < 1e-4 * r);
    // The automatic step of the pair alone, on its probe contact (the
    // linear model without dashpots: kn): a force at a pebble centre,
    // r from the centroid, across the axis, meets the inverse mass
    // 1/M + r^2 / I_across = (1 + 5/7) / M, M the pair's mass.
    let mut s = sim(Timestep::Auto { safety: 1.0 });
    let g = s.group("g");
    let model = s.add_model(linear());
    let kn = 1e5;
    s.assign(g, g, model, vec![kn, 0.0, 0.0, 0.0, 0.0]).unwrap();
    let id = s.add_template(t.clone());
    s.add_clump(clump(id, Vec3::ZERO, Quat::IDENTITY, 0.0))
        .unwrap();
    s.prepare().unwrap();
    s.cycle().unwrap();
    let mass = 2500.0 * t.volume;
    let expected = (mass / (kn * (1.0 + 5.0 / 7.0))).sqrt();
    assert!(
        ((s.dt - expected) / expected).abs() < 1e-4,
        "{} vs {expected}",
        s.dt
    );

    // Unequal pebbles touching: radii 1 and 2 with centres 3 apart. The
    // union is exact without overlap: m = 4/3 pi (1 + 8), the parallel
    // axes about the centroid give the cross moment.
    let t = ClumpTemplate::new(
        "uneven",
        &[(Vec3::ZERO, 1.0), (Vec3::new(0.0, 3.0, 0.0), 2.0)],
        1e-6,
    )
    .unwrap();
    let (v1, v2) = (
        4.0 / 3.0 * std::f64::consts::PI,
        4.0 / 3.0 * std::f64::consts::PI * 8.0,
    );
    let y = (v2 * 3.0) / (v1 + v2);
    let axial = 0.4 * v1 + 0.4 * v2 * 4.0;
    let across = axial + v1 * y * y + v2 * (3.0 - y) * (3.0 - y);
    assert!(close(t.volume, v1 + v2));
    assert!((t.input_centroid - Vec3::new(0.0, y, 0.0)).length() < 1e-4);
    let m = t.unit_moments;
    assert!(
        close(m.x, axial) && close(m.y, across) && close(m.z, across),
        "{m}"
    );
}

#[test]
fn a_template_is_refused_with_what_is_wrong() {
    let bad = [
        (vec![], "at least one pebble"),
        (vec![(Vec3::ZERO, 0.0)], "pebble 1"),
        (vec![(Vec3::ZERO, 1.0), (Vec3::NAN, 1.0)], "pebble 2"),
    ];
    for (pebbles, expected) in bad {
        let e = ClumpTemplate::new("t", &pebbles, 1e-4).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("clump template 't'") && text.contains(expected),
            "{text}"
        );
    }
    // Balls come before clumps.
    let mut s = sim(Timestep::Fixed(1e-5));
    s.group("g");
    let t = s.add_template(ClumpTemplate::new("one", &[(Vec3::ZERO, 0.01)], 1e-4).unwrap());
    s.add_clump(clump(t, Vec3::ZERO, Quat::IDENTITY, 0.0))
        .unwrap();
    let e = s
        .add_ball(ball(Vec3::X, Vec3::ZERO, Vec3::ZERO, 0.0))
        .unwrap_err();
    assert!(e.to_string().contains("before clumps"), "{e}");
}

/// Three pebbles in an L, unequal and overlapping: no symmetry at all.
fn ell() -> ClumpTemplate {
    let pebbles = [
        (Vec3::new(0.0, 0.0, 0.0), 0.012),
        (Vec3::new(0.015, 0.0, 0.0), 0.01),
        (Vec3::new(0.0, 0.013, 0.002), 0.008),
    ];
    ClumpTemplate::new("ell", &pebbles, 1e-6).unwrap()
}

#[test]
fn a_resting_clump_carries_its_weight_and_its_pebbles_never_touch() {
    // The L dropped on the floor, turned so that it lands on all three
    // pebbles, settles under local damping: its contact force balances
    // its weight, and the floor takes that load.
    let mut s = sim(Timestep::Auto { safety: 0.5 });
    let g = with_floor(&mut s);
    let t = s.add_template(ell());
    let q = s.templates()[t as usize].input_rotation;
    let mut c = clump(t, Vec3::new(0.01, -0.02, 0.02), q, 0.7);
    c.group = g;
    s.add_clump(c).unwrap();
    s.prepare().unwrap();
    for _ in 0..40_000 {
        s.cycle().unwrap();
    }
    let weight = s.clumps().mass[0] * 9.81;
    let f = s.clumps().force[0];
    assert!(((f.z - weight) / weight).abs() < 1e-9, "{f} vs {weight}");
    assert!(
        f.x.abs() < 1e-9 * weight && f.y.abs() < 1e-9 * weight,
        "{f}"
    );
    let m = s.clumps().moment[0];
    assert!(m.length() < 1e-9 * weight * 0.01, "{m}");
    let wall = s.walls()[0].force;
    assert!(((wall.z + weight) / weight).abs() < 1e-9, "{wall}");
    let snap = s.snapshot();
    let active: Vec<_> = snap.contacts().filter(|c| c.active).collect();
    // Each pebble rests on the floor; no contact between pebbles exists.
    assert_eq!(active.len(), 3);
    for c in snap.contacts() {
        assert_ne!(c.pair, PairKind::BallBall, "pebbles of one clump touched");
        assert!(matches!(c.end1, PieceId::Pebble { clump: 1, .. }));
    }
    let body: Vec<_> = snap.bodies().map(|b| (b.kind, b.id)).collect();
    assert_eq!(body, [(BodyKind::Clump, 1)]);
}

#[test]
fn a_free_clump_keeps_its_angular_momentum_and_its_pebbles_follow() {
    let mut s = Simulation::new(Settings {
        timestep: Timestep::Fixed(1e-4),
        ..Settings::default()
    });
    let g = s.group("g");
    let m = s.add_model(linear());
    s.assign(g, g, m, vec![1e5, 5e4, 0.5, 0.1, 0.1]).unwrap();
    let t = s.add_template(ell());
    let mut c = clump(t, Vec3::ZERO, Quat::from_rotation_y(0.4), 0.0);
    c.spin = Vec3::new(3.0, -20.0, 7.0);
    c.velocity = Vec3::new(0.1, 0.0, 0.0);
    s.add_clump(c).unwrap();
    s.prepare().unwrap();
    let l0 = s.clumps().momentum[0];
    let e0 = s.clumps().kinetic_energy();
    for _ in 0..5000 {
        s.cycle().unwrap();
    }
    let cl = s.clumps();
    // The rigid step keeps a free body's world angular momentum exactly.
    assert_eq!(bits(cl.momentum[0]), bits(l0));
    assert!(((cl.kinetic_energy() - e0) / e0).abs() < 1e-3);
    // The pebbles sit where the pose puts them and move with the body.
    let b = s.balls();
    let tpl = &s.templates()[0];
    for (k, &(o, r)) in tpl.pebbles.iter().enumerate() {
        let arm = cl.orientation[0] * o;
        assert!((b.pos[k] - (cl.pos[0] + arm)).length() < 1e-15);
        assert!((b.vel[k] - (cl.vel[0] + cl.spin[0].cross(arm))).length() < 1e-12);
        assert_eq!(b.radius[k], r);
    }
    assert!((cl.pos[0] - Vec3::new(0.05, 0.0, 0.0)).length() < 1e-12);
}

#[test]
fn a_heap_of_clumps_gives_the_same_bits_on_one_and_two_threads() {
    let run = |threads: usize| -> Vec<u64> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut s = sim(Timestep::Auto { safety: 0.5 });
            let g = with_floor(&mut s);
            for i in 0..6 {
                s.add_ball(BallInit {
                    group: g,
                    ..ball(
                        Vec3::new(0.05 * i as f64 - 0.15, 0.0, 0.01),
                        Vec3::ZERO,
                        Vec3::ZERO,
                        0.0,
                    )
                })
                .unwrap();
            }
            let t = s.add_template(ell());
            for i in 0..10 {
                for j in 0..10 {
                    for k in 0..4 {
                        let p = Vec3::new(i as f64 - 4.5, j as f64 - 4.5, 0.0) * 0.04
                            + Vec3::new(0.0, 0.0, 0.04 + 0.04 * k as f64);
                        let q = Quat::from_rotation_z(0.3 * (i + j + k) as f64)
                            * Quat::from_rotation_x(0.7 * k as f64);
                        let mut c = clump(t, p, q, 0.1);
                        c.group = g;
                        s.add_clump(c).unwrap();
                    }
                }
            }
            s.prepare().unwrap();
            for _ in 0..2000 {
                s.cycle().unwrap();
            }
            assert!(s.n_active() > 20, "{}", s.n_active());
            let c = s.clumps();
            let mut bits: Vec<u64> = c
                .pos
                .iter()
                .chain(c.spin.iter())
                .flat_map(|p| p.to_array())
                .map(f64::to_bits)
                .collect();
            bits.extend(
                c.orientation
                    .iter()
                    .flat_map(|q| q.to_array())
                    .map(f64::to_bits),
            );
            bits.extend(s.balls().pos[..6].iter().flat_map(|p| bits_of(*p)));
            bits
        })
    };
    let one = run(1);
    assert_eq!(run(2), one);
}

fn bits_of(v: Vec3) -> [u64; 3] {
    bits(v)
}

/// Two peanuts end to end along x, the touching pebbles bonded
/// (linearbond), pulled apart at constant speed with their rotation held:
/// the bond acts on the clumps as on two balls, its force the closed form
/// `-pb_kn A v dt k` after `k` steps until the step its tensile stress
/// passes the strength; no bond forms inside a clump.
#[test]
fn a_bond_between_pebbles_of_two_clumps_pulls_the_clumps() {
    use talus_core::{BondInstall, BreakMode, When};
    let (r, dt, v) = (0.01, 1e-7, 0.05);
    let (kn, pb_kn) = (1e6, 2e12);
    let per_step = v * dt;
    let area = std::f64::consts::PI * r * r;
    let ten = pb_kn * 40.5 * per_step;
    let mut s = Simulation::new(Settings {
        timestep: Timestep::Fixed(dt),
        ..Settings::default()
    });
    let g = s.group("g");
    let root = talus_plugin_linearbond::root_module();
    let entry = talus_sdk::ModelEntry::from_abi((root.models())()[0]).unwrap();
    let m = s.add_model(entry);
    let props = vec![
        kn, 0.0, 0.0, 0.0, 0.0, pb_kn, 8e11, 1.0, ten, 0.0, 1e30, 0.0, 0.0, 1.0,
    ];
    s.assign(g, g, m, props).unwrap();
    // Pebbles 1.5 r apart within a peanut (they overlap), the two
    // peanuts' inner pebbles just touching (gap 0).
    let peanut = [
        (Vec3::new(-0.75 * r, 0.0, 0.0), r),
        (Vec3::new(0.75 * r, 0.0, 0.0), r),
    ];
    let t = s.add_template(ClumpTemplate::new("peanut", &peanut, 1e-6).unwrap());
    let q = s.templates()[t as usize].input_rotation;
    for x in [-1.75 * r, 1.75 * r] {
        let mut c = clump(t, Vec3::new(x, 0.0, 0.0), q, 0.0);
        c.group = g;
        c.fixity = Fixity::from_flags([true; 6]);
        s.add_clump(c).unwrap();
    }
    s.install_bonds(BondInstall {
        groups: (g, g),
        gap: 1e-12,
        at: When::Step(0),
    })
    .unwrap();
    s.prepare().unwrap();
    // One contact: the two inner pebbles (none inside a clump).
    assert_eq!(s.n_contacts(), 1);
    s.clumps_mut().vel[1] = Vec3::new(v, 0.0, 0.0);
    let mut broke_at = None;
    for k in 1..=80u64 {
        s.cycle().unwrap();
        for b in s.take_bond_breaks() {
            assert_eq!(b.mode, BreakMode::Tension);
            assert!(
                matches!(b.end1, PieceId::Pebble { clump: 1, index: 1 }),
                "{:?}",
                b.end1
            );
            assert!(
                matches!(b.end2, PieceId::Pebble { clump: 2, index: 0 }),
                "{:?}",
                b.end2
            );
            broke_at = Some(b.step);
        }
        let c = s.clumps();
        let gap = (c.pos[1].x - c.pos[0].x) - 3.5 * r;
        let linear = kn * (-gap).max(0.0);
        let bond = if k < 41 {
            -pb_kn * area * per_step * k as f64
        } else {
            0.0
        };
        let f = c.force[1];
        let scale = linear.abs() + bond.abs();
        assert!(
            (f.x - (linear + bond)).abs() <= 1e-9 * scale + 1e-300,
            "step {k}: force {f}, closed form {}",
            linear + bond
        );
        // Along the line of centres: no moment about either centroid.
        assert!(c.moment[1].length() <= 1e-9 * scale * r && f.y.abs() <= 1e-9 * scale);
        assert_eq!(c.force[0].x, -f.x, "action and reaction");
    }
    assert_eq!(broke_at, Some(41));
}

/// The L dropped on a fixed slab (a block): its pebbles meet the block
/// through the ball-block kernel, and at rest the clump's contact force
/// balances its weight and the block takes it.
#[test]
fn a_clump_resting_on_a_block_carries_its_weight() {
    use talus_core::{BlockInit, BlockShape};
    let mut s = sim(Timestep::Auto { safety: 0.5 });
    let (g, k) = (s.group("g"), s.group("k"));
    let m = s.add_model(linear());
    for (a, b) in [(g, g), (g, k), (k, k)] {
        s.assign(a, b, m, vec![1e5, 5e4, 0.5, 0.1, 0.1]).unwrap();
    }
    let slab = talus_geometry::box_block(Vec3::new(0.3, 0.3, 0.1)).unwrap();
    let shape = s.add_shape(BlockShape::new("slab", &slab).unwrap());
    s.add_block(BlockInit {
        shape,
        pos: Vec3::new(0.0, 0.0, -0.05),
        orientation: Quat::IDENTITY,
        velocity: Vec3::ZERO,
        spin: Vec3::ZERO,
        density: 2000.0,
        group: k,
        damping: 0.0,
        fixity: Fixity::from_flags([true; 6]),
    })
    .unwrap();
    let t = s.add_template(ell());
    let q = s.templates()[t as usize].input_rotation;
    let mut c = clump(t, Vec3::new(0.01, -0.02, 0.02), q, 0.7);
    c.group = g;
    s.add_clump(c).unwrap();
    s.prepare().unwrap();
    for _ in 0..40_000 {
        s.cycle().unwrap();
    }
    let weight = s.clumps().mass[0] * 9.81;
    let f = s.clumps().force[0];
    assert!(((f.z - weight) / weight).abs() < 1e-9, "{f} vs {weight}");
    let on_block = s.blocks().force[0];
    assert!(((on_block.z + weight) / weight).abs() < 1e-9, "{on_block}");
    let snap = s.snapshot();
    let kinds: Vec<_> = snap
        .contacts()
        .filter(|c| c.active)
        .map(|c| c.pair)
        .collect();
    assert_eq!(kinds, [PairKind::BallBlock; 3], "each pebble on the slab");
}
