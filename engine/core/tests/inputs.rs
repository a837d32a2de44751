//! Optional model inputs through the whole contact pass: a model that asks
//! for the overlap volume, the contact disc, both branch vectors and the
//! contact point gets,
//! for each of its contacts, the values the closed forms give for that
//! contact's geometry.

use std::f64::consts::PI;

use talus_core::{BallInit, Settings, Simulation, Timestep, Vec3, Wall};
use talus_sdk::{inputs, Contact, ContactModel, ContactOutput, ModelDescriptor, StateSlotDesc};

/// Stores every optional input it gets in its state slots and pushes with
/// `kv * overlap volume`.
struct Recorder {
    kv: f64,
}

/// The inputs the recorder asks for, in the order of its state slots.
const ASKED: [u32; 6] = [
    inputs::OVERLAP_VOLUME,
    inputs::CONTACT_AREA,
    inputs::CONTACT_RADIUS,
    inputs::BRANCH_1,
    inputs::BRANCH_2,
    inputs::CONTACT_POINT,
];

impl ContactModel for Recorder {
    fn descriptor() -> ModelDescriptor {
        let mut d = ModelDescriptor::new("recorder", "0.1.0").property(
            talus_sdk::PropertyDesc::new("kv", "N/m^3", "volume stiffness"),
        );
        let names = [
            "v", "area", "a", "b1n", "b1s", "b1t", "b2n", "b2s", "b2t", "x", "y", "z",
        ];
        for name in names {
            d = d.state(StateSlotDesc::new(name, "-", ""));
        }
        for id in ASKED {
            d = d.input(id);
        }
        d
    }

    fn prepare(props: &[f64], _dt: f64) -> Self {
        Recorder { kv: props[0] }
    }

    fn force_displacement(&mut self, c: &Contact<'_>, state: &mut [f64]) -> ContactOutput {
        let mut k = 0;
        for id in ASKED {
            for &v in c.get(id).expect("the engine gives every asked input") {
                state[k] = v;
                k += 1;
            }
        }
        if c.gap < 0.0 {
            ContactOutput::active([self.kv * state[0], 0.0, 0.0], [1e3, 0.0])
        } else {
            ContactOutput::could_be_active([1e3, 0.0])
        }
    }
}

fn ball(pos: Vec3, radius: f64, group: u16) -> BallInit {
    BallInit {
        pos,
        radius,
        density: 2500.0,
        velocity: Vec3::ZERO,
        spin: Vec3::ZERO,
        group,
        damping: 0.0,
        fixity: Default::default(),
    }
}

/// Radius of the circle where spheres of radii `r1`, `r2` at distance `d`
/// meet: the height over side `d` of the triangle (d, r1, r2), by Heron.
fn circle_radius(r1: f64, r2: f64, d: f64) -> f64 {
    let s = (d + r1 + r2) / 2.0;
    2.0 * (s * (s - d) * (s - r1) * (s - r2)).sqrt() / d
}

/// The lens of two spheres, textbook form (fine at large overlaps).
fn lens(r1: f64, r2: f64, d: f64) -> f64 {
    let h = r1 + r2 - d;
    PI * h * h * (d * d + 2.0 * d * (r1 + r2) - 3.0 * (r1 - r2).powi(2)) / (12.0 * d)
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1e-300)
}

#[test]
fn a_model_gets_the_inputs_it_asks_for_contact_by_contact() {
    let mut sim = Simulation::new(Settings {
        gravity: Vec3::ZERO,
        timestep: Timestep::Fixed(1e-7),
        cell_tolerance: Some(1e-4),
        ..Settings::default()
    });
    let (g, w) = (sim.group("grain"), sim.group("wall"));
    let m = sim.add_model(talus_sdk::entry::<Recorder>());
    let kv = 3e9;
    sim.assign(g, g, m, vec![kv]).unwrap();
    sim.assign(g, w, m, vec![kv]).unwrap();
    // A rests 0.2 mm deep in a plate; B sits on A 0.3 mm deep; C touches
    // B from an oblique direction by 1 nm; D is alone.
    let (ra, rb, rc) = (0.005, 0.007, 0.004);
    let (ha, hab, hbc) = (2e-4, 3e-4, 1e-9);
    let pa = Vec3::new(0.0, 0.0, ra - ha);
    let pb = pa + Vec3::Z * (ra + rb - hab);
    let dir = Vec3::new(1.0, 1.0, 0.5).normalize();
    let pc = pb + dir * (rb + rc - hbc);
    for (p, r) in [(pa, ra), (pb, rb), (pc, rc), (Vec3::splat(1.0), rc)] {
        sim.add_ball(ball(p, r, g)).unwrap();
    }
    let centre = Vec3::new(0.1, -0.2, -0.05);
    let s = 0.1;
    let plate = [[-s, -s, 0.0], [s, -s, 0.0], [0.0, s, 0.0]];
    let wall = Wall::new("plate", &plate, &[[0, 1, 2]], Some(centre)).unwrap();
    sim.add_wall(wall, w);
    sim.prepare().unwrap();

    assert_eq!(sim.n_contacts(), 3, "contacts A-plate, A-B and B-C");
    let mut seen = 0;
    let lanes = sim.models[m].lanes.iter();
    for (st, k) in lanes.flat_map(|l| (0..l.store.len()).map(move |k| (&l.store, k))) {
        let v = st.state_of(k);
        let p = st.plane[k];
        let (a, b) = (st.end1[k], st.end2[k]);
        let balls = sim.balls();
        let (r1, x1) = (balls.radius[a.index()], balls.pos[a.index()]);
        let in_frame = |x: Vec3| [x.dot(p.n), x.dot(p.s), x.dot(p.t)];
        let (volume, disc, x2) = if b.is_facet() {
            // A spherical cap of height h on the plate.
            let h = -p.gap;
            assert!(close(h, ha, 1e-9), "{h}");
            let cap = PI * h * h * (3.0 * r1 - h) / 3.0;
            (cap, (h * (2.0 * r1 - h)).sqrt(), centre)
        } else {
            let (r2, x2) = (balls.radius[b.index()], balls.pos[b.index()]);
            let d = (x2 - x1).length();
            if -p.gap > 1e-6 {
                (lens(r1, r2, d), circle_radius(r1, r2, d), x2)
            } else {
                // 1 nm: the textbook forms lose every digit here; to first
                // order in h the lens is pi h^2 r1 r2 / (r1 + r2) and the
                // disc radius sqrt(2 h r1 r2 / (r1 + r2)).
                let (h, rr) = (-p.gap, r1 * r2 / (r1 + r2));
                assert!(close(h, hbc, 1e-4), "{h}");
                (PI * h * h * rr, (2.0 * h * rr).sqrt(), x2)
            }
        };
        assert!(
            close(v[0], volume, 1e-6),
            "contact {k}: {} vs {volume}",
            v[0]
        );
        assert!(close(v[2], disc, 1e-6), "contact {k}: {} vs {disc}", v[2]);
        assert!(close(v[1], PI * v[2] * v[2], 1e-15), "contact {k}");
        let (b1, b2) = (in_frame(p.xc - x1), in_frame(p.xc - x2));
        assert_eq!([v[3], v[4], v[5]], b1, "contact {k}");
        assert_eq!([v[6], v[7], v[8]], b2, "contact {k}");
        assert_eq!([v[9], v[10], v[11]], p.xc.to_array(), "contact {k}");
        // A branch vector of a ball runs along n, to the middle of the
        // overlap.
        assert!(close(v[3], r1 + p.gap / 2.0, 1e-12), "contact {k}");
        assert!(v[4].abs() < 1e-15 && v[5].abs() < 1e-15, "contact {k}");
        // The model's force is kv times the volume it was given.
        assert_eq!(st.output[k].force[0], kv * v[0]);
        seen += 1;
    }
    assert_eq!(seen, 3);
}
