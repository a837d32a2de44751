//! Bonds on the real engine with the linearbond model: one bond loaded in
//! tension, shear, twist and bend against the closed forms of its springs
//! and strengths, and the step each break happens in.

use std::f64::consts::PI;

use talus_core::balls::Fixity;
use talus_core::{BondInstall, BreakMode, Settings, Simulation, Timestep, Vec3, When};

mod common;
use common::*;

const DT: f64 = 1e-7;
const PB_KN: f64 = 2e12;
const PB_KS: f64 = 8e11;

/// Properties of linearbond in descriptor order: the linear part, then
/// the bond's.
#[derive(Clone, Copy)]
struct Props {
    kn: f64,
    ks: f64,
    fric: f64,
    ten: f64,
    coh: f64,
    fa: f64,
    mcf: f64,
}

impl Props {
    fn values(&self) -> Vec<f64> {
        vec![
            self.kn, self.ks, self.fric, 0.0, 0.0, PB_KN, PB_KS, 1.0, self.ten, 0.0, self.coh, 0.0,
            self.fa, self.mcf,
        ]
    }
}

const STRONG: Props = Props {
    kn: KN,
    ks: 0.0,
    fric: 0.0,
    ten: 1e30,
    coh: 1e30,
    fa: 0.0,
    mcf: 1.0,
};

fn bond_sim(props: Props) -> (Simulation, u16, u16) {
    bond_sim_seeded(props.values(), 0)
}

/// A run of linearbond with property values `props` and seed `seed`.
fn bond_sim_seeded(props: Vec<f64>, seed: u64) -> (Simulation, u16, u16) {
    let mut sim = Simulation::new(Settings {
        gravity: Vec3::ZERO,
        timestep: Timestep::Fixed(DT),
        seed,
        ..Settings::default()
    });
    let g = sim.group("grain");
    let w = sim.group("wall");
    let root = talus_plugin_linearbond::root_module();
    add_plugin_model(&mut sim, root, &[(g, g), (g, w)], &props);
    (sim, g, w)
}

/// Bonds groups `g` and `h` where the gap is below `gap` before the first
/// step, and prepares the run.
fn bond_at_start(sim: &mut Simulation, g: u16, h: u16, gap: f64) {
    bond_at(sim, (g, h), gap, When::Step(0));
}

/// Bonds `groups` where the gap is below `gap` at `at`, and prepares the
/// run.
fn bond_at(sim: &mut Simulation, groups: (u16, u16), gap: f64, at: When) {
    sim.install_bonds(BondInstall { groups, gap, at }).unwrap();
    sim.prepare().unwrap();
}

/// Two balls along x overlapping by `u0`, every degree of freedom held (the
/// test sets their velocities), bonded at step 0.
fn pair(props: Props, u0: f64) -> Simulation {
    pair_bonded_at(props, u0, When::Step(0))
}

/// [`pair`] with the bond installed at `at`.
fn pair_bonded_at(props: Props, u0: f64, at: When) -> Simulation {
    let (mut sim, g, _) = bond_sim(props);
    for x in [-(RADIUS - 0.5 * u0), RADIUS - 0.5 * u0] {
        let mut b = ball(Vec3::new(x, 0.0, 0.0), Vec3::ZERO, g);
        b.fixity = Fixity::from_flags([true; 6]);
        sim.add_ball(b).unwrap();
    }
    // Touching balls (gap 0) bond too.
    bond_at(&mut sim, (g, g), 1e-12, at);
    sim
}

fn area() -> f64 {
    PI * RADIUS * RADIUS
}

fn second_moment() -> f64 {
    PI * RADIUS.powi(4) / 4.0
}

/// Pulled apart at constant speed: the normal force is the linear spring
/// (while the balls overlap) plus the bond's, `-pb_kn A v dt k` after k
/// steps; the bond breaks in the step whose tensile stress first exceeds
/// its strength, and from that step the force is the linear model's.
#[test]
fn a_bond_pulled_apart_follows_both_springs_and_breaks_on_time() {
    let (v, u0) = (0.05, 2e-7);
    let per_step = v * DT;
    // Half a step's stress past step 40: the break is due in step 41.
    let ten = PB_KN * 40.5 * per_step;
    let mut sim = pair(Props { ten, ..STRONG }, u0);
    sim.balls_mut().vel[1] = Vec3::new(v, 0.0, 0.0);
    let mut broke_at = None;
    for k in 1..=80u64 {
        sim.cycle().unwrap();
        let breaks = sim.take_bond_breaks();
        if let Some(b) = breaks.first() {
            assert_eq!(breaks.len(), 1);
            assert_eq!(b.mode, BreakMode::Tension);
            assert!(broke_at.is_none(), "one break");
            broke_at = Some(b.step);
        }
        let x = sim.balls().pos[1].x - sim.balls().pos[0].x;
        let overlap = 2.0 * RADIUS - x;
        let linear = KN * overlap.max(0.0);
        let bond = if k < 41 {
            -PB_KN * area() * per_step * k as f64
        } else {
            0.0
        };
        let f = sim.balls().force[1].x;
        let scale = linear.abs() + bond.abs();
        assert!(
            (f - (linear + bond)).abs() <= 1e-9 * scale + 1e-300,
            "step {k}: force {f}, closed form {} (linear {linear}, bond {bond})",
            linear + bond
        );
        assert_eq!(sim.balls().force[0].x, -f, "step {k}: action and reaction");
    }
    assert_eq!(broke_at, Some(41));
    // Apart and unbonded: the contact is dropped once the balls' extents
    // part, as any linear contact's.
    sim.balls_mut().vel[1] = Vec3::new(100.0, 0.0, 0.0);
    for _ in 0..400 {
        sim.cycle().unwrap();
    }
    assert_eq!(sim.n_contacts(), 0);
}

/// A bond holds its balls together however far it stretches below its
/// strength: the contact outlives the cell space's reach.
#[test]
fn a_holding_bond_keeps_its_contact_beyond_the_cell_reach() {
    let mut sim = pair(STRONG, 0.0);
    sim.balls_mut().vel[1] = Vec3::new(1.0, 0.0, 0.0);
    pull_far(&mut sim);
}

/// A bond installed after the model has run without holding anything
/// (the pass then sums its contacts without the bond bookkeeping) holds
/// as one installed at the start: at rest for ten steps, bonded at step
/// 10, then pulled as far as in the test above.
#[test]
fn a_bond_installed_later_holds_as_one_installed_at_the_start() {
    let mut sim = pair_bonded_at(STRONG, 0.0, When::Step(10));
    for _ in 0..10 {
        sim.cycle().unwrap();
    }
    assert_eq!(sim.balls().force[1].x, 0.0, "touching and unbonded");
    sim.balls_mut().vel[1] = Vec3::new(1.0, 0.0, 0.0);
    pull_far(&mut sim);
}

/// Moves ball 1 (at 1 m/s along x) 4 mm from ball 0, bonded to it: four
/// times the cell tolerance (a tenth of the radius), past where the cell
/// space drops the contact of two unbonded balls however their reference
/// points lag; then checks that the contact is there and carries the
/// bond's spring force.
fn pull_far(sim: &mut Simulation) {
    let steps = 40_000;
    for _ in 0..steps {
        sim.cycle().unwrap();
    }
    let gap = sim.balls().pos[1].x - sim.balls().pos[0].x - 2.0 * RADIUS;
    assert!(gap > 3.9e-3, "{gap}");
    assert_eq!(sim.n_contacts(), 1);
    let expected = -PB_KN * area() * steps as f64 * DT;
    let f = sim.balls().force[1].x;
    assert!(
        (f - expected).abs() < 1e-9 * expected.abs(),
        "{f} vs {expected}"
    );
}

/// Sheared by equal spins about z (the contact point of each ball moves
/// the opposite way, the normal stays put): the shear force is `pb_ks A`
/// times the shear displacement; with the bond first pressed, it breaks in
/// shear once its shear stress exceeds the cohesion plus the normal stress
/// times tan(phi), in that step.
#[test]
fn a_bond_sheared_follows_its_spring_and_breaks_at_the_strength_for_its_normal_stress() {
    let (v, w) = (0.02, 3.0);
    let press = 30u64;
    let fa = 25.0f64;
    let sigma_n = PB_KN * v * DT * press as f64;
    // The centres' distance once pressed.
    let d = 2.0 * RADIUS - v * DT * press as f64;
    let shear_step = PB_KS * w * d * DT;
    // Half a step past step 70 of shearing.
    let coh = shear_step * 70.5 - sigma_n * fa.to_radians().tan();
    assert!(coh > 0.0);
    let mut sim = pair(Props { fa, coh, ..STRONG }, 0.0);
    // Press the bond (the linear part stays out: fric 0 keeps it from
    // shear, and its normal force is checked apart).
    sim.balls_mut().vel[1] = Vec3::new(-v, 0.0, 0.0);
    for _ in 0..press {
        sim.cycle().unwrap();
    }
    sim.balls_mut().vel[1] = Vec3::ZERO;
    for i in 0..2 {
        sim.balls_mut().spin[i] = Vec3::new(0.0, 0.0, w);
    }
    let x0 = sim.balls().pos[1].x - sim.balls().pos[0].x;
    let mut broke_at = None;
    for k in 1..=100u64 {
        sim.cycle().unwrap();
        if let Some(b) = sim.take_bond_breaks().first() {
            assert_eq!(b.mode, BreakMode::Shear);
            broke_at = Some(k);
        }
        let f = sim.balls().force[1];
        let linear = KN * (2.0 * RADIUS - x0);
        let (bond_n, bond_s) = if k < 71 {
            (sigma_n * area(), shear_step * k as f64 * area())
        } else {
            (0.0, 0.0)
        };
        assert!(
            (f.x - (linear + bond_n)).abs() <= 1e-9 * (linear + bond_n),
            "step {k}: normal {} vs {}",
            f.x,
            linear + bond_n
        );
        // Equal spins w about z: ball 2's contact point moves by -w d dt
        // along y relative to ball 1's; the bond pushes back along +y.
        assert!(
            (f.y - bond_s).abs() <= 1e-9 * bond_s.max(1e-300),
            "step {k}: shear {} vs {bond_s}",
            f.y
        );
        assert_eq!(f.z, 0.0);
    }
    assert_eq!(broke_at, Some(71));
}

/// Twisted (ball 2 spins about the normal) and bent (the balls spin the
/// opposite ways about y): the moments on ball 2 are `-pb_ks J` and
/// `-pb_kn I` times the relative rotation; the twist stress `|Mt| R / J`
/// and the bend stress `|Mb| R / I` break the bond in shear and in tension,
/// in the step they pass the strength.
#[test]
fn twist_and_bend_follow_their_closed_forms_and_break_on_time() {
    let w = 4.0;
    let j = 2.0 * second_moment();
    let i = second_moment();
    // Twist: tau = pb_ks J (w dt k) R / J = pb_ks R w dt k.
    let twist_step = PB_KS * RADIUS * w * DT;
    let mut sim = pair(
        Props {
            coh: twist_step * 50.5,
            ..STRONG
        },
        0.0,
    );
    sim.balls_mut().spin[1] = Vec3::new(w, 0.0, 0.0);
    let mut broke_at = None;
    for k in 1..=80u64 {
        sim.cycle().unwrap();
        if let Some(b) = sim.take_bond_breaks().first() {
            assert_eq!(b.mode, BreakMode::Shear);
            broke_at = Some(k);
        }
        let m = sim.balls().moment[1];
        let expected = if k < 51 {
            -PB_KS * j * w * DT * k as f64
        } else {
            0.0
        };
        assert!(
            (m.x - expected).abs() <= 1e-9 * expected.abs() + 1e-300,
            "twist step {k}: {} vs {expected}",
            m.x
        );
        assert_eq!(sim.balls().force[1], Vec3::ZERO);
    }
    assert_eq!(broke_at, Some(51));

    // Bend: opposite spins about y, a relative rotation of 2 w dt a step;
    // sigma = pb_kn I (2 w dt k) R / I = pb_kn R 2 w dt k.
    let bend_step = PB_KN * RADIUS * 2.0 * w * DT;
    let mut sim = pair(
        Props {
            ten: bend_step * 30.5,
            ..STRONG
        },
        0.0,
    );
    sim.balls_mut().spin[0] = Vec3::new(0.0, -w, 0.0);
    sim.balls_mut().spin[1] = Vec3::new(0.0, w, 0.0);
    let mut broke_at = None;
    for k in 1..=60u64 {
        sim.cycle().unwrap();
        if let Some(b) = sim.take_bond_breaks().first() {
            assert_eq!(b.mode, BreakMode::Tension);
            broke_at = Some(k);
        }
        let m = sim.balls().moment[1];
        let expected = if k < 31 {
            -PB_KN * i * 2.0 * w * DT * k as f64
        } else {
            0.0
        };
        assert!(
            (m.y - expected).abs() <= 1e-9 * expected.abs() + 1e-300,
            "bend step {k}: {} vs {expected}",
            m.y
        );
        assert_eq!(sim.balls().moment[0].y, -m.y, "step {k}");
    }
    assert_eq!(broke_at, Some(31));
}

/// The bonds table's strengths scatter per pair, fixed by the seed: two
/// runs with one seed agree; another seed changes them; the mean and the
/// spread over many bonds are those asked for.
#[test]
fn strengths_scatter_by_pair_and_seed() {
    let strengths = |seed: u64| -> Vec<f64> {
        let mut props = STRONG.values();
        props[8] = 1e6;
        props[9] = 2e5;
        let (mut sim, g, _) = bond_sim_seeded(props, seed);
        // A chain of 400 touching balls: 399 bonds.
        for k in 0..400 {
            let mut b = ball(Vec3::new(2.0 * RADIUS * k as f64, 0.0, 0.0), Vec3::ZERO, g);
            b.fixity = Fixity::from_flags([true; 6]);
            sim.add_ball(b).unwrap();
        }
        bond_at_start(&mut sim, g, g, 1e-9);
        let snap = sim.snapshot();
        let slot = snap
            .models()
            .next()
            .unwrap()
            .state_slots()
            .position(|s| s.name == "pb_ten_c");
        let slot = slot.unwrap();
        let mut v: Vec<(u64, f64)> = snap
            .contacts()
            .map(|c| (c.end1.body(), c.state[slot]))
            .collect();
        v.sort_by_key(|x| x.0);
        v.into_iter().map(|x| x.1).collect()
    };
    let a = strengths(7);
    assert_eq!(a.len(), 399);
    assert_eq!(a, strengths(7));
    assert_ne!(a, strengths(8));
    let n = a.len() as f64;
    let mean = a.iter().sum::<f64>() / n;
    let sd = (a.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    // Standard errors: 2e5 / sqrt(399) = 1e4 for the mean, ~7e3 for the sd.
    assert!((mean - 1e6).abs() < 4e4, "mean {mean}");
    assert!((sd - 2e5).abs() < 3e4, "sd {sd}");
}

/// Per step, the force and moment on a ball bonded to `mesh` (pressed in
/// by a thousandth of its radius, full mode) and dragged over it at
/// constant velocity while it spins.
fn drag_bonded(mesh: &(Vec<[f64; 3]>, Vec<[u32; 3]>), h: f64) -> Vec<(Vec3, Vec3)> {
    let (mut sim, g, w) = bond_sim(Props {
        ks: 1e4,
        fric: 1e3,
        ..STRONG
    });
    let dt = 1e-5;
    sim.settings.timestep = Timestep::Fixed(dt);
    let u0 = 1e-3 * RADIUS;
    let start = Vec3::new(-0.7 * h, -0.55 * h, RADIUS - u0);
    let end = Vec3::new(0.7 * h, 0.5 * h, RADIUS - u0);
    let steps = 20_000;
    let v = (end - start) / (steps as f64 * dt);
    let mut b = ball(start, v, g);
    b.spin = Vec3::new(0.3, -0.2, 0.5);
    b.fixity = Fixity::from_flags([true; 6]);
    sim.add_ball(b).unwrap();
    let mut wall = talus_core::Wall::new("w", &mesh.0, &mesh.1, None).unwrap();
    wall.resolution = talus_core::Resolution::Full;
    wall.cutoff_angle = 10f64.to_radians();
    sim.add_wall(wall, w);
    bond_at_start(&mut sim, g, w, 0.0);
    (0..steps)
        .map(|_| {
            sim.cycle().unwrap();
            assert_eq!(sim.n_active(), 1, "one bond carries at a time");
            (sim.balls().force[0], sim.balls().moment[0])
        })
        .collect()
}

/// A bond follows the ball across facets in full mode (its force and
/// moment added to the facet contact that takes over): on 2 and on 200
/// facets the ball feels what it feels on one.
#[test]
fn a_bonded_ball_dragged_over_many_facets_feels_one_facet() {
    let h = 4.0 * RADIUS;
    let reference = drag_bonded(
        &(
            vec![
                [-4.0 * h, -4.0 * h, 0.0],
                [4.0 * h, -4.0 * h, 0.0],
                [0.0, 6.0 * h, 0.0],
            ],
            vec![[0, 1, 2]],
        ),
        h,
    );
    // The bond carries the shear and the moments all the way.
    let (f_end, m_end) = reference.last().unwrap();
    assert!(Vec3::new(f_end.x, f_end.y, 0.0).length() > 1e3, "{f_end}");
    assert!(m_end.length() > 1.0, "{m_end}");
    for n in [1, 10] {
        let facets = drag_bonded(&flat_mesh(h, n), h);
        for (step, ((fa, ma), (fb, mb))) in reference.iter().zip(&facets).enumerate() {
            assert!(
                (*fa - *fb).length() <= 1e-9 * fa.length(),
                "{} facets, step {step}: force {fb} vs {fa}",
                2 * n * n
            );
            assert!(
                (*ma - *mb).length() <= 1e-9 * ma.length().max(1e-12),
                "{} facets, step {step}: moment {mb} vs {ma}",
                2 * n * n
            );
        }
    }
}

/// A straight chain of 21 bonded balls (20 bonds) along x, held at one
/// end and pushed sideways at the other (its tip ball's z held at a
/// deflection `w`, everything else free and damped): at rest, the force
/// the tip needs is `w / C` with the compliance of the chain of bond beams
/// (docs/physics.md, "A chain of bonds"):
/// `C = L^2 (N^3 / 3 - N / 12) / (pb_kn I) + N / (pb_ks A)`.
#[test]
fn a_bonded_chain_deflects_as_its_closed_form() {
    let n = 20usize;
    let (mut sim, g, _) = bond_sim(Props { kn: 0.0, ..STRONG });
    let dt = 1e-6;
    sim.settings.timestep = Timestep::Fixed(dt);
    let l = 2.0 * RADIUS;
    for k in 0..=n {
        let mut b = ball(Vec3::new(l * k as f64, 0.0, 0.0), Vec3::ZERO, g);
        b.damping = 0.7;
        if k == 0 {
            b.fixity = Fixity::from_flags([true; 6]);
        } else if k == n {
            b.fixity = Fixity::from_flags([false, false, true, false, false, false]);
        }
        sim.add_ball(b).unwrap();
    }
    bond_at_start(&mut sim, g, g, 1e-12);
    assert_eq!(sim.n_active(), n);
    let (w, ramp) = (1e-5, 10_000);
    sim.balls_mut().vel[n] = Vec3::new(0.0, 0.0, w / (ramp as f64 * dt));
    for _ in 0..ramp {
        sim.cycle().unwrap();
    }
    sim.balls_mut().vel[n] = Vec3::ZERO;
    for _ in 0..200_000 {
        sim.cycle().unwrap();
    }
    let tip = sim.balls().pos[n].z;
    assert!((tip - w).abs() < 1e-12, "tip at {tip}");
    let p = -sim.balls().force[n].z;
    let nf = n as f64;
    let c =
        l * l * (nf.powi(3) / 3.0 - nf / 12.0) / (PB_KN * second_moment()) + nf / (PB_KS * area());
    let measured = tip / p;
    assert!(
        (measured - c).abs() < 1e-3 * c,
        "compliance {measured} vs closed form {c}"
    );
    // Long chains tend to Euler-Bernoulli with E = pb_kn L: the bending
    // part alone is within 1/(4 N^2) of F l^3 / (3 E I).
    let beam = (nf * l).powi(3) / (3.0 * PB_KN * l * second_moment());
    let bending = c - nf / (PB_KS * area());
    assert!((bending / beam - 1.0).abs() < 1.0 / (4.0 * nf * nf) + 1e-12);
}

/// A bonded cube of 1728 balls (about 5000 bonds, several chunks of
/// contacts, so two threads split the pass) thrown apart by random
/// velocities: the same bonds break in the same steps, and the balls end
/// with the same bits, on one and two threads.
#[test]
fn bond_breakage_gives_the_same_bits_on_one_and_two_threads() {
    use rand::{Rng, SeedableRng};
    let run = |threads: usize| {
        on_threads(threads, || {
            let mut props = STRONG.values();
            props[1] = 5e5; // ks
            props[2] = 0.5; // fric
            props[8] = 2e5; // pb_ten
            props[9] = 5e4;
            props[10] = 4e5; // pb_coh
            props[11] = 1e5;
            props[12] = 20.0;
            let (mut sim, g, _) = bond_sim_seeded(props, 11);
            sim.settings.timestep = Timestep::Auto { safety: 0.5 };
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
            for i in 0..12 {
                for j in 0..12 {
                    for k in 0..12 {
                        let p = Vec3::new(i as f64, j as f64, k as f64) * (2.0 * RADIUS);
                        let v = Vec3::new(
                            rng.random_range(-0.02..0.02),
                            rng.random_range(-0.02..0.02),
                            rng.random_range(-0.02..0.02),
                        );
                        sim.add_ball(ball(p, v, g)).unwrap();
                    }
                }
            }
            bond_at_start(&mut sim, g, g, 1e-9);
            let bonded = sim.n_active();
            let mut breaks = Vec::new();
            for _ in 0..300 {
                sim.cycle().unwrap();
                let log = sim.take_bond_breaks();
                breaks.extend(
                    log.into_iter()
                        .map(|b| (b.step, b.contact, b.mode, b.state)),
                );
            }
            let mut bits = Vec::new();
            for &v in sim.balls().pos.iter().chain(sim.balls().spin.iter()) {
                push_bits(&mut bits, v);
            }
            (bonded, breaks, bits)
        })
    };
    let one = run(1);
    let (bonded, breaks, _) = &one;
    assert_eq!(*bonded, 3 * 12 * 12 * 11);
    assert!(
        breaks.len() > 50 && breaks.len() < bonded / 2,
        "{} of {bonded} broke",
        breaks.len()
    );
    for mode in [BreakMode::Tension, BreakMode::Shear] {
        assert!(breaks.iter().any(|b| b.2 == mode), "none broke in {mode:?}");
    }
    let two = run(2);
    assert_eq!(two.1.len(), one.1.len());
    assert!(two == one, "1 and 2 threads differ");
}
