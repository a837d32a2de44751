//! Convex bodies of plugin shapes, with shapes written here as a plugin
//! would give them: a sphere of a convex shape against the ball it
//! replaces (with and without an exact closest point), on one facet and
//! on many, an ellipsoid at rest, a failing shape, and the same bits on
//! one and two threads.

use std::sync::Arc;
use talus_core::math::Quat;
use talus_core::{
    BallInit, BlockInit, BlockShape, ConvexShape, Fixity, Settings, ShapeMass, ShapePoint,
    Simulation, StepError, Timestep, Vec3, Wall,
};

fn linear() -> talus_sdk::ModelEntry {
    let root = talus_plugin_linear::root_module();
    talus_sdk::ModelEntry::from_abi((root.models())()[0]).unwrap()
}

/// An ellipsoid of semi-axes `a` (a sphere when they are equal), centred
/// on the origin of its frame but turned by `turn` in it, with an exact
/// closest point only for a sphere that asks for one.
struct Ellipsoid {
    a: Vec3,
    turn: Quat,
    exact: bool,
    /// Fails every query after this many support calls.
    fail_after: Option<usize>,
    calls: std::sync::atomic::AtomicUsize,
}

impl Ellipsoid {
    fn new(a: Vec3, turn: Quat, exact: bool) -> Ellipsoid {
        Ellipsoid {
            a,
            turn,
            exact,
            fail_after: None,
            calls: Default::default(),
        }
    }
}

impl ConvexShape for Ellipsoid {
    fn kind(&self) -> &str {
        "ellipsoid"
    }

    fn support(&self, dir: Vec3) -> Result<Vec3, String> {
        let n = self
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if self.fail_after.is_some_and(|k| n >= k) {
            return Err("the test shape gives up".to_string());
        }
        let d = self.turn.conjugate() * dir;
        let p = d * self.a * self.a / (d * self.a).length();
        Ok(self.turn * p)
    }

    fn has_closest_point(&self) -> bool {
        self.exact
    }

    fn closest_point(&self, q: Vec3) -> Result<ShapePoint, String> {
        let r = self.a.x;
        let normal = q / q.length();
        Ok(ShapePoint {
            point: normal * r,
            normal,
            distance: q.length() - r,
        })
    }
}

fn mass_of(a: Vec3, turn: Quat) -> ShapeMass {
    let volume = 4.0 / 3.0 * std::f64::consts::PI * a.x * a.y * a.z;
    let d = Vec3::new(
        a.y * a.y + a.z * a.z,
        a.x * a.x + a.z * a.z,
        a.x * a.x + a.y * a.y,
    ) * (volume / 5.0);
    let r = glam::DMat3::from_quat(turn);
    let t = r * glam::DMat3::from_diagonal(d) * r.transpose();
    ShapeMass {
        volume,
        centroid: Vec3::ZERO,
        inertia: t.transpose().to_cols_array_2d(),
        bounding_radius: a.max_element(),
    }
}

fn shape(name: &str, e: Ellipsoid) -> BlockShape {
    let mass = mass_of(e.a, e.turn);
    let values = e.a.to_array().to_vec();
    BlockShape::convex(name, Arc::new(e), values, mass).unwrap()
}

fn sim(timestep: Timestep) -> Simulation {
    Simulation::new(Settings {
        gravity: Vec3::new(0.0, 0.0, -9.81),
        timestep,
        ..Settings::default()
    })
}

/// Groups "g" (bodies) and "w" (walls) with the linear model between
/// every pair, and a square floor at z = 0 of `2 k^2` facets.
fn with_floor(s: &mut Simulation, k: usize) -> u16 {
    let (g, w) = (s.group("g"), s.group("w"));
    let m = s.add_model(linear());
    let props = vec![1e5, 5e4, 0.5, 0.1, 0.1];
    s.assign(g, g, m, props.clone()).unwrap();
    s.assign(g, w, m, props).unwrap();
    let mut vertices = Vec::new();
    for j in 0..=k {
        for i in 0..=k {
            let step = 2.0 / k as f64;
            vertices.push([-1.0 + step * i as f64, -1.0 + step * j as f64, 0.0]);
        }
    }
    let mut facets = Vec::new();
    let at = |i: usize, j: usize| (j * (k + 1) + i) as u32;
    for j in 0..k {
        for i in 0..k {
            facets.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
            facets.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
        }
    }
    let floor = Wall::new("floor", &vertices, &facets, None).unwrap();
    s.add_wall(floor, w);
    g
}

fn ball(pos: Vec3, velocity: Vec3, spin: Vec3, radius: f64) -> BallInit {
    BallInit {
        pos,
        radius,
        density: 2500.0,
        velocity,
        spin,
        group: 0,
        damping: 0.0,
        fixity: Fixity::default(),
    }
}

fn body(shape: u32, pos: Vec3, velocity: Vec3, spin: Vec3, damping: f64) -> BlockInit {
    BlockInit {
        shape,
        pos,
        orientation: Quat::IDENTITY,
        velocity,
        spin,
        density: 2500.0,
        group: 0,
        damping,
        fixity: Fixity::default(),
    }
}

/// The state of every body after each step: positions, velocities and
/// spins of the balls, then of the blocks.
fn states(s: &Simulation) -> Vec<[Vec3; 3]> {
    let b = s.balls();
    let mut out: Vec<[Vec3; 3]> = (0..b.pos.len())
        .map(|i| [b.pos[i], b.vel[i], b.spin[i]])
        .collect();
    let k = s.blocks();
    out.extend((0..k.pos.len()).map(|i| [k.pos[i], k.vel[i], k.spin[i]]));
    out
}

#[test]
fn a_sphere_of_a_convex_shape_moves_as_the_ball_it_replaces() {
    // A small ball thrown with spin at a larger one resting on a floor
    // of many facets, which it strikes obliquely; then the larger one is
    // a convex body of a spherical shape, answered through its exact
    // closest point, or through its support function only. Every body
    // follows the same path to 1e-9 of its scale, through the ball's
    // contacts with it and its contacts with the facets.
    let r = 0.02;
    let big = Vec3::new(0.001, 0.002, r - 1e-4);
    let small = (Vec3::new(-0.03, 0.004, 0.03), Vec3::new(1.5, 0.0, -0.5));
    let run = |kind: Option<bool>| {
        let mut s = sim(Timestep::Fixed(2e-6));
        with_floor(&mut s, 6);
        s.add_ball(ball(small.0, small.1, Vec3::new(0.0, 40.0, 10.0), 0.008))
            .unwrap();
        match kind {
            None => {
                s.add_ball(ball(big, Vec3::ZERO, Vec3::ZERO, r)).unwrap();
            }
            Some(exact) => {
                let e = Ellipsoid::new(Vec3::splat(r), Quat::IDENTITY, exact);
                let id = s.add_shape(shape("sphere", e));
                s.add_block(body(id, big, Vec3::ZERO, Vec3::ZERO, 0.0))
                    .unwrap();
            }
        }
        s.prepare().unwrap();
        let mut trace = Vec::new();
        for _ in 0..3000 {
            s.cycle().unwrap();
            trace.push(states(&s));
        }
        (trace, s.n_active())
    };
    let (reference, _) = run(None);
    // The ball was thrown hard enough to reach the sphere.
    let moved = reference.last().unwrap()[1][1].length();
    assert!(moved > 0.05, "the struck ball moves at {moved} m/s");
    for exact in [true, false] {
        let (trace, _) = run(Some(exact));
        for (step, (a, b)) in reference.iter().zip(&trace).enumerate() {
            for (x, y) in a.iter().zip(b) {
                let scales = [0.05, 2.0, 200.0];
                for k in 0..3 {
                    let err = (x[k] - y[k]).length() / scales[k];
                    assert!(
                        err < 1e-9,
                        "exact {exact}, step {step}: {:?} vs {:?} (err {err:e})",
                        x[k],
                        y[k]
                    );
                }
            }
        }
    }
}

#[test]
fn an_ellipsoid_at_rest_carries_its_weight_on_one_facet_and_on_many() {
    // A turned ellipsoid dropped on a floor of 2 and of 200 facets
    // settles under local damping: the floor carries its weight, and the
    // two floors give the same rest.
    let a = Vec3::new(0.03, 0.02, 0.012);
    let turn = Quat::from_rotation_x(0.3) * Quat::from_rotation_z(0.2);
    let rest = |k: usize| {
        let mut s = sim(Timestep::Auto { safety: 0.5 });
        let g = with_floor(&mut s, k);
        let id = s.add_shape(shape("egg", Ellipsoid::new(a, turn, false)));
        let mut b = body(
            id,
            Vec3::new(0.011, -0.007, 0.04),
            Vec3::ZERO,
            Vec3::ZERO,
            0.7,
        );
        b.group = g;
        s.add_block(b).unwrap();
        s.prepare().unwrap();
        for _ in 0..30_000 {
            s.cycle().unwrap();
        }
        let weight = s.blocks().mass[0] * 9.81;
        let wall = s.walls()[0].force;
        // One contact carries the load, whatever the facets under it:
        // the carrier of the body, wall and plane.
        assert_eq!(s.n_active(), 1, "{k}");
        assert!(
            ((wall.z + weight) / weight).abs() < 1e-9,
            "{k}: floor force {wall} vs weight {weight}"
        );
        let k = s.blocks();
        (k.pos[0], k.orientation[0])
    };
    let (x1, q1) = rest(1);
    let (x2, q2) = rest(10);
    // Resting on its shortest axis: the centroid as high as that
    // semi-axis, less the overlap of the weight on the stiffness.
    assert!((x1.z - a.z).abs() < 1e-3 * a.z, "{x1}");
    assert!((x1 - x2).length() < 1e-7, "{x1} vs {x2}");
    assert!(q1.dot(q2).abs() > 1.0 - 1e-9, "{q1} vs {q2}");
}

#[test]
fn a_failing_shape_stops_the_run_naming_the_shape_and_the_contact() {
    let mut s = sim(Timestep::Fixed(1e-5));
    with_floor(&mut s, 1);
    let mut e = Ellipsoid::new(Vec3::splat(0.01), Quat::IDENTITY, false);
    e.fail_after = Some(1000);
    let id = s.add_shape(shape("pebble", e));
    s.add_block(body(
        id,
        Vec3::new(0.0, 0.0, 0.0101),
        Vec3::ZERO,
        Vec3::ZERO,
        0.0,
    ))
    .unwrap();
    s.prepare().unwrap();
    let e = (0..5000).find_map(|_| s.cycle().err()).unwrap();
    assert!(matches!(e, StepError::Shape { .. }), "{e:?}");
    let text = e.to_string();
    for needle in [
        "shape 'pebble' (ellipsoid)",
        "block 1",
        "wall 1",
        "gives up",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in {text}");
    }
}

#[test]
fn a_heap_of_ellipsoids_gives_the_same_bits_on_one_and_two_threads() {
    let run = |threads: usize| -> Vec<u64> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut s = sim(Timestep::Auto { safety: 0.5 });
            let g = with_floor(&mut s, 4);
            let a = Vec3::new(0.012, 0.009, 0.007);
            let id = s.add_shape(shape("egg", Ellipsoid::new(a, Quat::IDENTITY, false)));
            let sphere = Ellipsoid::new(Vec3::splat(0.008), Quat::IDENTITY, true);
            let round = s.add_shape(shape("round", sphere));
            for k in 0..60 {
                let (i, j, l) = ((k % 4) as f64, ((k / 4) % 4) as f64, (k / 16) as f64);
                let x = Vec3::new(0.027 * i - 0.04, 0.027 * j - 0.04, 0.015 + 0.025 * l);
                let v = Vec3::new(0.0, 0.0, -1.0);
                let mut b = body(if k % 3 == 0 { round } else { id }, x, v, Vec3::ZERO, 0.1);
                b.orientation =
                    Quat::from_rotation_y(0.4 * k as f64) * Quat::from_rotation_x(0.7 * i);
                b.group = g;
                s.add_block(b).unwrap();
            }
            s.prepare().unwrap();
            for _ in 0..4000 {
                s.cycle().unwrap();
            }
            // A layer landed on the floor, the others on it, none
            // through it.
            let zs: Vec<f64> = s.blocks().pos.iter().map(|p| p.z).collect();
            let low = zs.iter().filter(|&&z| z < 0.0125).count();
            assert!(zs.iter().all(|&z| z > 0.005), "{zs:?}");
            assert!((16..30).contains(&low), "{zs:?}");
            let k = s.blocks();
            (0..k.pos.len())
                .flat_map(|i| {
                    let p = k.pos[i].to_array();
                    let q = k.orientation[i].to_array();
                    p.into_iter().chain(q).map(f64::to_bits).collect::<Vec<_>>()
                })
                .collect()
        })
    };
    assert_eq!(run(1), run(2));
}
