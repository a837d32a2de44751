//! A block on a slope, the classic stability benchmark of blocky codes:
//! a 10 m wide block of density 2000 kg/m^3 under g = 10 m/s^2 stays,
//! slides or topples as the closed forms of rigid-body statics and
//! Coulomb friction say. The slope is a flat wall facet with gravity
//! turned by the slope angle (the same physics as a turned slope).

use talus_core::BlockResolution as Resolution;
use talus_core::{BlockInit, BlockShape, Fixity, Settings, Simulation, Timestep, Vec3, Wall};
use talus_geometry::box_block;

const G: f64 = 10.0;
const WIDTH: f64 = 10.0;

/// The contact law of a run: the linear model with its normal and shear
/// damping ratios, or the volume model with its restitution.
#[derive(Clone, Copy, Debug)]
enum Law {
    Linear { dn: f64, ds: f64 },
    Volume { e: f64 },
}

/// A `WIDTH` x `WIDTH` x `height` block resting on a slope of `slope`
/// degrees with friction angle `friction` degrees, in full resolution;
/// stiff contacts (the elastic shear displacement under the block's
/// weight is about 1e-7 m). `damping`: the block's local damping and the
/// linear contact's normal and shear damping ratios (the linear model's
/// shear dashpot also acts while the contact slips, so a sliding block
/// runs without it).
fn on_slope(slope: f64, friction: f64, height: f64, damping: [f64; 3]) -> Simulation {
    let law = Law::Linear {
        dn: damping[1],
        ds: damping[2],
    };
    on_slope_with(slope, friction, height, (damping[0], law), Resolution::Full)
}

/// [`on_slope`] with the block's local damping and the contact law
/// `(local, law)`, in `resolution`. The volume model's stiffness gives
/// the same normal stiffness on the block's face as the linear one's.
fn on_slope_with(
    slope: f64,
    friction: f64,
    height: f64,
    (local, law): (f64, Law),
    resolution: Resolution,
) -> Simulation {
    let start = Start {
        size: Vec3::new(WIDTH, WIDTH, height),
        stiffness: 1e14,
        sunk: 0.0,
        spin: Vec3::ZERO,
        timestep: Timestep::Auto { safety: 0.5 },
    };
    on_floor(slope, friction, (local, law), resolution, start)
}

/// How a block starts: its size, how deep its base starts below the
/// floor, its spin, the run's timestep, and the contact's normal
/// stiffness over the block's face (N/m).
struct Start {
    size: Vec3,
    stiffness: f64,
    sunk: f64,
    spin: Vec3,
    timestep: Timestep,
}

/// A block on a floor tilted by `slope` degrees (see [`on_slope_with`]).
fn on_floor(
    slope: f64,
    friction: f64,
    (local, law): (f64, Law),
    resolution: Resolution,
    start: Start,
) -> Simulation {
    let theta = slope.to_radians();
    let mut s = Simulation::new(Settings {
        gravity: G * Vec3::new(theta.sin(), 0.0, -theta.cos()),
        timestep: start.timestep,
        block_resolution: resolution,
        ..Settings::default()
    });
    let g = s.group("g");
    let k = start.stiffness;
    let fric = friction.to_radians().tan();
    let (root, props) = match law {
        Law::Linear { dn, ds } => (talus_plugin_linear::root_module(), vec![k, k, fric, dn, ds]),
        Law::Volume { e } => {
            let per_volume = k / (start.size.x * start.size.y);
            (
                talus_plugin_volume::root_module(),
                vec![per_volume, per_volume, fric, e],
            )
        }
    };
    let entry = talus_sdk::ModelEntry::from_abi((root.models())()[0]).unwrap();
    let m = s.add_model(entry);
    s.assign(g, g, m, props).unwrap();
    let shape = s.add_shape(BlockShape::new("block", &box_block(start.size).unwrap()).unwrap());
    let q = s.shapes()[shape as usize].input_rotation;
    s.add_block(BlockInit {
        shape,
        pos: Vec3::new(0.0, 0.0, 0.5 * start.size.z - start.sunk),
        orientation: q,
        velocity: Vec3::ZERO,
        spin: start.spin,
        density: 2000.0,
        group: g,
        damping: local,
        fixity: Fixity::default(),
    })
    .unwrap();
    let floor = [
        [-500.0, -500.0, 0.0],
        [500.0, -500.0, 0.0],
        [0.0, 500.0, 0.0],
    ];
    s.add_wall(Wall::new("slope", &floor, &[[0, 1, 2]], None).unwrap(), g);
    s.prepare().unwrap();
    s
}

/// Runs `s` until `t` seconds.
fn run_to(s: &mut Simulation, t: f64) {
    while s.time < t {
        s.cycle().unwrap();
    }
}

/// How far the block's base turned from the slope (rad).
fn tilt(s: &Simulation) -> f64 {
    let k = s.blocks();
    let written = k.orientation[0] * s.shapes()[0].input_rotation.conjugate();
    (written * Vec3::Z).dot(Vec3::Z).clamp(-1.0, 1.0).acos()
}

#[test]
fn a_block_held_by_friction_stays() {
    // tan 40.1 > tan 40: friction holds the block on the slope. So close
    // to the limit, a block dropped on the slope at once would slip while
    // its contact loads up and then decelerate at only 0.023 m/s^2, so
    // gravity comes in smoothly over the first half second (a quasi-static
    // start, as the limit-equilibrium benchmark intends), with local
    // damping as for any static analysis.
    let mut s = on_slope(40.0, 40.1, 10.0, [0.7, 0.5, 0.5]);
    let full = s.settings.gravity;
    let ramp = 0.5;
    let x0 = s.blocks().pos[0];
    while s.time < ramp {
        let f = (0.5 * std::f64::consts::PI * s.time / ramp).sin();
        s.settings.gravity = full * (f * f);
        s.cycle().unwrap();
    }
    s.settings.gravity = full;
    let x1 = s.blocks().pos[0];
    run_to(&mut s, ramp + 2.0);
    let moved = (s.blocks().pos[0] - x1).length();
    assert!(moved < 1e-6 * WIDTH, "moved {moved} m in 2 s");
    let since_start = (s.blocks().pos[0] - x0).length();
    assert!(since_start < 1e-6 * WIDTH, "moved {since_start} m in all");
    assert!(tilt(&s) < 1e-6, "tilt {}", tilt(&s));
}

/// The acceleration of a block sliding on a 40 degree slope with a
/// friction angle of 20 degrees, relative to the closed form
/// `g (sin 40 - cos 40 tan 20)`, and the block's tilt at the end.
fn sliding(law: Law, resolution: Resolution) -> (f64, f64) {
    let (slope, friction) = (40f64.to_radians(), 20f64.to_radians());
    let mut s = on_slope_with(40.0, 20.0, 5.0, (0.0, law), resolution);
    // Past the start (the contact loads up within a few steps), the
    // distance slid grows as a t^2 / 2.
    run_to(&mut s, 0.2);
    let (t1, x1, v1) = (s.time, s.blocks().pos[0].x, s.blocks().vel[0].x);
    run_to(&mut s, 1.2);
    let (t2, x2) = (s.time, s.blocks().pos[0].x);
    let expected = G * (slope.sin() - slope.cos() * friction.tan());
    let dt = t2 - t1;
    let a = 2.0 * (x2 - x1 - v1 * dt) / (dt * dt);
    ((a - expected) / expected, tilt(&s))
}

#[test]
fn a_block_on_a_slope_steeper_than_its_friction_slides_at_the_closed_form_rate() {
    // Undamped, with the linear law's normal dashpot at half and 0.9 of
    // the critical ratio, and with the volume law's dashpot: each a
    // single contact for the whole face, whose dashpot acts over the
    // face (a rocking block would otherwise ride its one contact with the
    // no-pull clip biting, and slide 1.2-2 % slow).
    let cases = [
        (Law::Linear { dn: 0.0, ds: 0.0 }, Resolution::Full),
        (Law::Linear { dn: 0.5, ds: 0.0 }, Resolution::Full),
        (Law::Linear { dn: 0.9, ds: 0.0 }, Resolution::Reduced),
        (Law::Volume { e: 0.5 }, Resolution::Full),
    ];
    for (law, resolution) in cases {
        let (error, tilt) = sliding(law, resolution);
        assert!(
            error.abs() < 0.01,
            "{law:?} {resolution:?}: a off by {error:e}"
        );
        // Sliding, not toppling (its height is below the tipping limit).
        assert!(tilt < 1e-3, "{law:?} {resolution:?}: tilt {tilt}");
    }
}

#[test]
fn a_rocking_block_decays_as_its_face_dashpot_says() {
    // A 10 x 10 x 2 m block seated on a frictionless floor by the volume
    // law (restitution 0.5), spun about y: it rocks about its centroid on
    // the whole face (the tilt, 2e-6 rad, stays below what lifts an
    // edge). Over a face of springs kn A with a dashpot c per area A the
    // rocking obeys J th'' + c (I/A) th' + (kn I - m g h / 2) th = 0, with
    // J = m (w^2 + h^2) / 12 about the centroid and I/A = w^2 / 12: the
    // spin's peaks fall by exp(-2 pi z / sqrt(1 - z^2)) per period, z the
    // rocking's damping ratio. A dashpot at the contact location alone
    // would leave this rocking undamped.
    let (w, h, rho, kn_face) = (WIDTH, 2.0, 2000.0, 1e11);
    let e = 0.5;
    let m = rho * w * w * h;
    let omega = ((kn_face * w * w / 12.0 - m * G * 0.5 * h) / (m * (w * w + h * h) / 12.0)).sqrt();
    let law = Law::Volume { e };
    let start = Start {
        size: Vec3::new(w, w, h),
        stiffness: kn_face,
        sunk: m * G / kn_face,
        spin: Vec3::new(0.0, 2e-6 * omega, 0.0),
        timestep: Timestep::Fixed(2e-3 / omega),
    };
    let mut s = on_floor(0.0, 0.0, (0.0, law), Resolution::Full, start);
    let beta = talus_plugin_volume::kernel::damping_ratio(e);
    let c = 2.0 * beta * (m * kn_face).sqrt();
    let j = m * (w * w + h * h) / 12.0;
    let k_rock = kn_face * w * w / 12.0 - m * G * 0.5 * h;
    let z = c * (w * w / 12.0) / (2.0 * (k_rock * j).sqrt());
    // The peaks of the spin about y over two periods.
    let period = 2.0 * std::f64::consts::PI / omega;
    let mut peaks = Vec::new();
    let mut last = [0.0f64; 2];
    while s.time < 2.6 * period {
        s.cycle().unwrap();
        let w_now = s.blocks().spin[0].y;
        if last[1] > last[0] && last[1] >= w_now {
            peaks.push(last[1]);
        }
        last = [last[1], w_now];
    }
    assert!(peaks.len() >= 3, "{peaks:?}");
    let ratio = peaks[2] / peaks[1];
    let expected = (-2.0 * std::f64::consts::PI * z / (1.0 - z * z).sqrt()).exp();
    assert!(
        (ratio.ln() / expected.ln() - 1.0).abs() < 0.02,
        "peak ratio {ratio} against {expected} (z = {z})"
    );
}

#[test]
fn a_block_too_tall_for_its_base_topples() {
    // tan 30 > width / height = 0.4: the weight falls outside the base
    // while friction (40 degrees) holds it from sliding.
    let mut s = on_slope(30.0, 40.0, 25.0, [0.0, 0.5, 0.0]);
    let x0 = s.blocks().pos[0];
    run_to(&mut s, 0.5);
    let early = tilt(&s);
    run_to(&mut s, 3.0);
    let late = tilt(&s);
    assert!(early > 1e-3 && late > 0.3, "tilt {early} then {late}");
    // It turns about its downhill edge rather than sliding off: the edge's
    // contact point stays put while the top falls.
    let moved = s.blocks().pos[0] - x0;
    assert!(moved.x > 0.0, "{moved}");
}
