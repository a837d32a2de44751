//! Rounded blocks (seed 001's dilate and erode): a rounded block is its
//! core dilated by a ball, so every gap is the core's less the rounding
//! radii; where rounded surfaces overlap, the cores displaced towards each
//! other by the radii are resolved as sharp blocks are. Each test against
//! a brute-force distance or a closed form.

mod common;

use common::{pebble, random_direction};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_core::math::Quat;
use talus_core::{
    BallInit, BlockInit, BlockResolution, BlockShape, Fixity, PairKind, Settings, Simulation,
    Timestep, Vec3,
};
use talus_geometry::{
    box_block, closest_surface_point_scan, gjk_distance, ConvexPolyhedron, Proximity,
};

fn entry(root: talus_sdk::PluginModRef) -> talus_sdk::ModelEntry {
    talus_sdk::ModelEntry::from_abi((root.models())()[0]).unwrap()
}

fn linear(s: &mut Simulation, kn: f64) {
    let g = s.group("g");
    let m = s.add_model(entry(talus_plugin_linear::root_module()));
    s.assign(g, g, m, vec![kn, kn, 0.0, 0.0, 0.0]).unwrap();
}

fn volume(s: &mut Simulation, kn: f64) {
    let g = s.group("g");
    let m = s.add_model(entry(talus_plugin_volume::root_module()));
    s.assign(g, g, m, vec![kn, 0.5 * kn, 0.5, 1.0]).unwrap();
}

fn sim(gravity: f64, resolution: BlockResolution) -> Simulation {
    Simulation::new(Settings {
        gravity: Vec3::new(0.0, 0.0, -gravity),
        timestep: Timestep::Auto { safety: 0.5 },
        block_resolution: resolution,
        ..Settings::default()
    })
}

fn block(shape: u32, pos: Vec3, orientation: Quat, fixed: bool) -> BlockInit {
    BlockInit {
        damping: 0.7,
        fixity: Fixity::from_flags([fixed; 6]),
        ..common::block(shape, pos, orientation)
    }
}

/// Block `i`'s core in world axes.
fn core(s: &Simulation, i: usize) -> ConvexPolyhedron {
    let k = s.blocks();
    s.shapes()[k.shape[i] as usize]
        .polyhedron
        .transformed(k.orientation[i], k.pos[i])
}

/// A dilated box's volume and mass are the closed form's, and its centre
/// of mass stays the core's.
#[test]
fn a_dilated_box_has_the_volume_of_the_closed_form() {
    let (e, r) = (Vec3::new(0.3, 0.2, 0.1), 0.02);
    let shape = BlockShape::rounded("brick", &box_block(e).unwrap(), r).unwrap();
    let pi = std::f64::consts::PI;
    let volume = e.x * e.y * e.z
        + 2.0 * r * (e.x * e.y + e.y * e.z + e.z * e.x)
        + pi * r * r * (e.x + e.y + e.z)
        + 4.0 / 3.0 * pi * r.powi(3);
    assert!((shape.volume - volume).abs() < 1e-12 * volume);
    assert!(shape.input_centroid.length() < 1e-15);
    assert!((shape.radius - (0.5 * e.length() + r)).abs() < 1e-15);
    assert_eq!(shape.rounding, r);
}

/// Balls near a rounded block, fixed in place: each contact's gap is the
/// distance from the ball's centre to the core (by scanning every facet)
/// less the ball's radius and the rounding radius.
#[test]
fn a_ball_meets_a_rounded_block_at_its_core_distance_less_the_radii() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let r = 0.002;
    let mut s = sim(0.0, BlockResolution::Full);
    let sh = s.add_shape(BlockShape::rounded("pebble", &pebble(7), r).unwrap());
    s.add_block(block(sh, Vec3::ZERO, Quat::IDENTITY, true))
        .unwrap();
    let radius = 0.002;
    let mut placed = Vec::new();
    for _ in 0..60 {
        let u = random_direction(&mut rng);
        // From outside in along u, to a random distance near the surface.
        let poly = core(&s, 0);
        let mut t = 0.05;
        while closest_surface_point_scan(&poly, u * t).signed_distance > 0.0 {
            t -= 1e-4;
        }
        let pos = u * (t + rng.random_range(-0.001..0.0002) + r + radius);
        if placed
            .iter()
            .any(|&p: &Vec3| (p - pos).length() < 2.0 * radius)
        {
            continue;
        }
        placed.push(pos);
        s.add_ball(BallInit {
            pos,
            radius,
            density: 2000.0,
            velocity: Vec3::ZERO,
            spin: Vec3::ZERO,
            group: 0,
            damping: 0.0,
            fixity: Fixity::from_flags([true; 6]),
        })
        .unwrap();
    }
    linear(&mut s, 1e4);
    s.prepare().unwrap();
    s.cycle().unwrap();
    let poly = core(&s, 0);
    let snap = s.snapshot();
    let rows: Vec<_> = snap
        .contacts()
        .filter(|c| c.pair == PairKind::BallBlock)
        .collect();
    // Every ball is within reach of the block.
    assert!(placed.len() >= 20, "{}", placed.len());
    assert_eq!(rows.len(), placed.len());
    for c in rows {
        let talus_core::snapshot::PieceId::Ball { id } = c.end1 else {
            panic!("end1 {:?} is not a ball", c.end1);
        };
        let centre = placed[id as usize - 1];
        let d = closest_surface_point_scan(&poly, centre).signed_distance;
        assert!(
            (c.gap - (d - radius - r)).abs() < 1e-12,
            "gap {} vs {}",
            c.gap,
            d - radius - r
        );
    }
}

/// Two rounded blocks at random, apart or with their rounded surfaces
/// overlapping while their cores stay apart: the gap is the cores'
/// distance (GJK) less both radii, along the cores' normal.
#[test]
fn rounded_blocks_are_apart_by_their_cores_distance_less_the_radii() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let (ra, rb) = (0.001, 0.0015);
    let mut overlapping = 0;
    for case in 0..60u64 {
        let mut s = sim(0.0, BlockResolution::Full);
        let sa = s.add_shape(BlockShape::rounded("a", &pebble(2 * case), ra).unwrap());
        let sb = s.add_shape(BlockShape::rounded("b", &pebble(2 * case + 1), rb).unwrap());
        let turn = Quat::from_scaled_axis(random_direction(&mut rng) * 2.0);
        s.add_block(block(sa, Vec3::ZERO, Quat::IDENTITY, true))
            .unwrap();
        // b along u, just far enough for its core to clear a's by `clear`.
        let u = random_direction(&mut rng);
        let clear = rng.random_range(0.2..4.0) * (ra + rb);
        let (wa, b0) = (
            core(&s, 0),
            s.shapes()[sb as usize]
                .polyhedron
                .transformed(turn, Vec3::ZERO),
        );
        let distance =
            |t: f64| match gjk_distance(&wa, &b0.transformed(Quat::IDENTITY, u * t)).unwrap() {
                Proximity::Separated(g) => g.distance,
                _ => 0.0,
            };
        let (mut lo, mut hi) = (0.0, 0.1);
        for _ in 0..80 {
            let mid = 0.5 * (lo + hi);
            if distance(mid) < clear {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        s.add_block(block(sb, u * hi, turn, true)).unwrap();
        linear(&mut s, 1e4);
        s.prepare().unwrap();
        s.cycle().unwrap();
        let Proximity::Separated(g) = gjk_distance(&core(&s, 0), &core(&s, 1)).unwrap() else {
            panic!("case {case}: cores overlap");
        };
        let snap = s.snapshot();
        let rows: Vec<_> = snap
            .contacts()
            .filter(|c| c.pair == PairKind::BlockBlock)
            .collect();
        assert_eq!(rows.len(), 1, "case {case}");
        let c = &rows[0];
        let expected = g.distance - ra - rb;
        assert!(
            (c.gap - expected).abs() < 1e-12,
            "case {case}: gap {} vs {expected}",
            c.gap
        );
        if expected < 0.0 {
            overlapping += 1;
            // Pushed apart along the cores' normal.
            assert!(c.force.dot(g.normal) > 0.0, "case {case}");
        } else {
            assert!((c.n - g.normal).length() < 1e-9, "case {case}");
            assert_eq!(c.force, Vec3::ZERO);
        }
    }
    assert!(overlapping >= 10, "{overlapping}");
}

/// A dilated cube (core edge a, radius r) settles on one large facet: the
/// floor carries its weight to 1e-9 and its centroid rests at
/// `a / 2 + r - d` above the floor, `d` the depth the law asks for: the
/// linear law's `m g / kn`, the volume law's `m g / (kn a^2)` (the cores
/// displaced by r overlap by a slab of the core's face).
#[test]
fn a_rounded_cube_rests_on_a_floor_at_its_law_s_depth() {
    let (a, r, g) = (0.2, 0.01, 9.81);
    for law in ["linear", "volume"] {
        let mut s = sim(g, BlockResolution::Full);
        let cube = s.add_shape(
            BlockShape::rounded("cube", &box_block(Vec3::splat(a)).unwrap(), r).unwrap(),
        );
        s.add_block(block(
            cube,
            Vec3::new(0.1, -0.05, 0.5 * a + r + 1e-4),
            Quat::IDENTITY,
            false,
        ))
        .unwrap();
        let floor = [[-3.0, -3.0, 0.0], [3.0, -3.0, 0.0], [0.0, 3.0, 0.0]];
        let grp = s.group("g");
        s.add_wall(
            talus_core::Wall::new("floor", &floor, &[[0, 1, 2]], None).unwrap(),
            grp,
        );
        let kn = if law == "linear" { 1e6 } else { 1e8 };
        if law == "linear" {
            linear(&mut s, kn);
        } else {
            volume(&mut s, kn);
        }
        s.prepare().unwrap();
        for _ in 0..30_000 {
            s.cycle().unwrap();
        }
        let k = s.blocks();
        let weight = k.mass[0] * g;
        assert!(
            ((k.force[0].z - weight) / weight).abs() < 1e-9,
            "{law}: {} vs {weight}",
            k.force[0]
        );
        let depth = if law == "linear" {
            weight / kn
        } else {
            weight / (kn * a * a)
        };
        let z = 0.5 * a + r - depth;
        assert!(
            (k.pos[0].z - z).abs() < 1e-9,
            "{law}: z {} vs {z}",
            k.pos[0].z
        );
    }
}
