//! Shapes whose surface has features (the sdk's `FeatureRule::ByModel`):
//! a contact whose point moves to another feature takes over from itself
//! as a new contact, by its model's propagation rules. The shape here is
//! a sphere, so the geometry is a ball's, split into two features by the
//! plane x = 0 of its own frame; it turns under a ball held still, and the
//! point of their contact crosses from one feature to the other.

use std::sync::Arc;
use talus_core::math::Quat;
use talus_core::{
    BallInit, BlockInit, BlockShape, ConvexShape, Fixity, PairKind, Settings, ShapeMass,
    ShapePoint, Simulation, Timestep, Vec3,
};
use talus_sdk::{
    flags, Activity, Contact, ContactModel, ContactOutput, ModelDescriptor, Propagation,
    PropertyDesc, StateEvent, StateSlotDesc, STATUS_ACTIVE,
};

/// A sphere of radius `r` with an exact closest point, whose features
/// are its halves x < 0 (0) and x >= 0 (1), or one smooth feature.
struct Halves {
    r: f64,
    features: bool,
}

impl ConvexShape for Halves {
    fn kind(&self) -> &str {
        "halves"
    }

    fn support(&self, dir: Vec3) -> Result<Vec3, String> {
        Ok(dir.normalize() * self.r)
    }

    fn has_closest_point(&self) -> bool {
        true
    }

    fn closest_point(&self, q: Vec3) -> Result<ShapePoint, String> {
        let normal = q.normalize();
        Ok(ShapePoint {
            point: normal * self.r,
            normal,
            distance: q.length() - self.r,
        })
    }

    fn has_features(&self) -> bool {
        self.features
    }

    fn feature(&self, p: Vec3) -> Result<u32, String> {
        Ok(u32::from(p.x >= 0.0))
    }
}

/// A model that sums its contacts' shear increments along s in its one
/// state slot, whose take-over rule is `RULE` (0 `None`, 1 `Copy`, 2
/// `Add`, 3 `Custom`: ten times the old value). It pushes the ends apart
/// by `kn` times the overlap and reports, as its force along t, 1 when
/// the engine flags the contact new.
struct Slip<const RULE: u8> {
    kn: f64,
}

impl<const RULE: u8> ContactModel for Slip<RULE> {
    fn descriptor() -> ModelDescriptor {
        let rule = [
            Propagation::None,
            Propagation::Copy,
            Propagation::Add,
            Propagation::Custom,
        ][RULE as usize];
        ModelDescriptor::new(&format!("slip{RULE}"), "0.1.0")
            .activity(Activity::Overlap, "while the ends overlap")
            .property(PropertyDesc::new("kn", "N/m", "normal stiffness"))
            .state(StateSlotDesc::new("slip", "m", "shear along s").propagation(rule))
    }

    fn prepare(props: &[f64], _dt: f64) -> Self {
        Slip { kn: props[0] }
    }

    fn force_displacement(&mut self, c: &Contact<'_>, state: &mut [f64]) -> ContactOutput {
        let i = c.input();
        state[0] += i.delta_s[0];
        let new = if i.flags & flags::NEW != 0 { 1.0 } else { 0.0 };
        ContactOutput {
            force: [self.kn * (-i.gap).max(0.0), 0.0, new],
            stiffness: [self.kn, 0.0],
            status: STATUS_ACTIVE,
            ..ContactOutput::default()
        }
    }

    fn custom_state(event: StateEvent, _props: &[f64], from: &[f64], to: &mut [f64]) {
        assert_eq!(event, StateEvent::TakeOver);
        to[0] = 10.0 * from[0];
    }
}

const R: f64 = 0.5;
/// The overlap of the ball and the body.
const OVERLAP: f64 = 1e-3;
const SPIN: f64 = 20.0;
const DT: f64 = 1e-5;
const STEPS: usize = 600;
/// The slip per step.
const RATE: f64 = (R - 0.5 * OVERLAP) * SPIN * DT;

fn sphere_mass(r: f64) -> ShapeMass {
    let volume = 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
    let i = 0.4 * volume * r * r;
    ShapeMass {
        volume,
        centroid: Vec3::ZERO,
        inertia: [[i, 0.0, 0.0], [0.0, i, 0.0], [0.0, 0.0, i]],
        bounding_radius: r,
    }
}

/// Per step: the contact's slip (positive along the body's surface
/// motion), whether the model saw it new, and the feature (0 or 1) under
/// the contact point from the body's pose. Above the body is a ball, or
/// (`pair` [`PairKind::ConvexConvex`]) a smooth convex sphere of its size.
fn run(entry: talus_sdk::ModelEntry, features: bool, pair: PairKind) -> Vec<(f64, bool, u32)> {
    let mut s = Simulation::new(Settings {
        gravity: Vec3::ZERO,
        timestep: Timestep::Fixed(DT),
        ..Settings::default()
    });
    let g = s.group("g");
    let m = s.add_model(entry);
    s.assign(g, g, m, vec![1e6]).unwrap();
    let mut shape = |r: f64, features: bool| {
        let halves = Arc::new(Halves { r, features });
        s.add_shape(BlockShape::convex("halves", halves, vec![r], sphere_mass(r)).unwrap())
    };
    let id = shape(R, features);
    let top = shape(0.1, false);
    let fixed = Fixity::from_flags([true; 6]);
    // The body spins about y under the ball; its point under the ball
    // starts at x > 0 of its frame and crosses x = 0 after 0.05 / SPIN s
    // (250 steps).
    s.add_block(BlockInit {
        shape: id,
        pos: Vec3::ZERO,
        orientation: Quat::from_rotation_y(-0.05),
        velocity: Vec3::ZERO,
        spin: Vec3::new(0.0, SPIN, 0.0),
        density: 1000.0,
        group: g,
        damping: 0.0,
        fixity: fixed,
    })
    .unwrap();
    let above = Vec3::new(0.0, 0.0, R + 0.1 - OVERLAP);
    if pair == PairKind::BallConvex {
        s.add_ball(BallInit {
            pos: above,
            radius: 0.1,
            density: 1000.0,
            velocity: Vec3::ZERO,
            spin: Vec3::ZERO,
            group: g,
            damping: 0.0,
            fixity: fixed,
        })
        .unwrap();
    } else {
        s.add_block(BlockInit {
            shape: top,
            pos: above,
            orientation: Quat::IDENTITY,
            velocity: Vec3::ZERO,
            spin: Vec3::ZERO,
            density: 1000.0,
            group: g,
            damping: 0.0,
            fixity: fixed,
        })
        .unwrap();
    }
    s.prepare().unwrap();
    (0..STEPS)
        .map(|_| {
            s.cycle().unwrap();
            let st = s.models[0].store(pair);
            assert_eq!(st.len(), 1);
            let p = st.plane[0];
            // The body's point: half the gap past the location, towards
            // end2; and the slip is end2's relative to end1.
            let end2 = pair == PairKind::BallConvex || st.end2[0].index() == 0;
            let side = if end2 { 1.0 } else { -1.0 };
            let q = s.blocks().orientation[0];
            let local = q.conjugate() * (p.xc + side * 0.5 * p.gap * p.n);
            let feature = u32::from(local.x >= 0.0);
            let slip = st.state_of(0)[0] * side * if p.s.x > 0.0 { 1.0 } else { -1.0 };
            (slip, st.output[0].force[2] == 1.0, feature)
        })
        .collect()
}

/// A ball, and a smooth convex body, on the body with features.
const PAIRS: [PairKind; 2] = [PairKind::BallConvex, PairKind::ConvexConvex];

/// The step at which the feature under the contact changes (once).
fn crossing(trace: &[(f64, bool, u32)]) -> usize {
    let k: Vec<usize> = (1..trace.len())
        .filter(|&k| trace[k].2 != trace[k - 1].2)
        .collect();
    assert_eq!(k.len(), 1, "the point crosses once: {k:?}");
    assert_eq!((trace[0].2, trace[k[0]].2), (1, 0));
    k[0]
}

#[test]
fn a_smooth_twin_and_carrying_rules_keep_the_contacts_history() {
    // The body's material point at the contact location (halfway into the
    // overlap) moves under the ball at SPIN times its distance from the
    // centre: the slip grows by that times the step, every step, through
    // the crossing.
    for pair in PAIRS {
        let smooth = run(talus_sdk::entry::<Slip<0>>(), false, pair);
        let rate = RATE;
        for (k, &(slip, new, _)) in smooth.iter().enumerate() {
            let expect = rate * (k + 1) as f64;
            assert!(
                (slip - expect).abs() < 1e-6 * expect,
                "step {k}: {slip} vs {expect}"
            );
            // (New to its model in the pass before step 0.)
            assert!(!new, "step {k}");
        }
        assert!(crossing(&smooth) > 100);
        // Copy and Add carry the slot whole into the fresh contact: the same
        // bits as the smooth shape.
        for trace in [
            run(talus_sdk::entry::<Slip<1>>(), true, pair),
            run(talus_sdk::entry::<Slip<2>>(), true, pair),
        ] {
            let same = trace
                .iter()
                .zip(&smooth)
                .all(|(a, b)| a.0.to_bits() == b.0.to_bits() && a.1 == b.1);
            assert!(same, "{pair:?}");
        }
    }
}

#[test]
fn a_contact_whose_point_changes_feature_starts_afresh_under_none() {
    for pair in PAIRS {
        let trace = run(talus_sdk::entry::<Slip<0>>(), true, pair);
        let k = crossing(&trace);
        let rate = RATE;
        // Before the crossing the slip grows from the first step; at the
        // crossing the contact is new to its model (its frame and state
        // fresh) and the slip restarts from that step's increment.
        assert!((trace[k - 1].0 - rate * k as f64).abs() < 1e-6 * rate * k as f64);
        for (j, &(slip, new, _)) in trace.iter().enumerate() {
            let from = if j < k { 0 } else { k };
            let expect = rate * (j + 1 - from) as f64;
            assert!(
                (slip - expect).abs() < 1e-6 * expect,
                "step {j}: {slip} vs {expect}"
            );
            assert_eq!(new, j == k, "{pair:?} step {j}");
        }
    }
}

#[test]
fn a_custom_rule_decides_the_state_the_new_feature_starts_with() {
    for pair in PAIRS {
        let trace = run(talus_sdk::entry::<Slip<3>>(), true, pair);
        let k = crossing(&trace);
        let rate = RATE;
        // Ten times the slip before the crossing, then that step's increment;
        // the frame went with the state, so the model does not see it new.
        let expect = 10.0 * trace[k - 1].0 + rate;
        assert!(
            (trace[k].0 - expect).abs() < 1e-9 * expect,
            "{} vs {expect}",
            trace[k].0
        );
        assert!(!trace[k].1);
    }
}
