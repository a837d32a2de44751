//! Unit tests of the generators.

use super::*;
use crate::block::BlockShape;
use crate::math::Quat;

#[test]
fn random_balls_do_not_overlap_and_stay_inside() {
    let region = Aabb {
        min: Vec3::ZERO,
        max: Vec3::splat(0.02),
    };
    let balls = random_balls(500, RadiusDist::Uniform(5e-4, 1e-3), region, 3, 1000, &[]).unwrap();
    assert_eq!(balls.len(), 500);
    for (i, &(p, r)) in balls.iter().enumerate() {
        assert!(
            p.cmpge(region.min + Vec3::splat(r)).all()
                && p.cmple(region.max - Vec3::splat(r)).all()
        );
        for &(q, s) in &balls[..i] {
            assert!((p - q).length() >= r + s);
        }
    }
    let again = random_balls(500, RadiusDist::Uniform(5e-4, 1e-3), region, 3, 1000, &[]).unwrap();
    assert_eq!(balls, again);
}

#[test]
fn impossible_packing_is_refused() {
    let region = Aabb {
        min: Vec3::ZERO,
        max: Vec3::splat(0.01),
    };
    let err = random_balls(10_000, RadiusDist::Fixed(1e-3), region, 1, 50, &[]).unwrap_err();
    assert!(err.contains("cannot fit 10000 balls"), "{err}");
}

#[test]
fn lattice_fills_region() {
    let region = Aabb {
        min: Vec3::ZERO,
        max: Vec3::new(0.01, 0.01, 0.004),
    };
    let balls = lattice_balls(1e-3, 2e-3, region, None);
    assert_eq!(balls.len(), 5 * 5 * 2);
    assert!(balls.iter().all(|(p, r)| p.z + r <= 0.004 + 1e-15));
}

#[test]
fn lattice_fills_region_from_min_plus_half_spacing() {
    let region = Aabb {
        min: Vec3::ZERO,
        max: Vec3::new(1.0, 0.5, 0.3),
    };
    assert_eq!(lattice_counts(&region, 0.1, None), [10, 5, 3]);
    let c = lattice_balls(0.05, 0.1, region, None);
    assert_eq!(c.len(), 150);
    assert!((c[0].0.x - 0.05).abs() < 1e-15);
    assert!((c[1].0.x - 0.15).abs() < 1e-15);
    assert!((c[10].0.y - 0.15).abs() < 1e-15);
    let c = lattice_balls(0.05, 0.1, region, Some([2, 1, 1]));
    assert_eq!(c.len(), 2);
}
fn shapes() -> Vec<BlockShape> {
    use talus_geometry::{box_block, tetrahedron_block};
    vec![
        BlockShape::new("brick", &box_block(Vec3::new(0.1, 0.2, 0.4)).unwrap()).unwrap(),
        BlockShape::new("tet", &tetrahedron_block(0.15).unwrap()).unwrap(),
    ]
}

/// The world vertices of a placed block.
fn world(shapes: &[BlockShape], b: &PlacedBlock) -> Vec<Vec3> {
    let poly = &shapes[b.shape as usize].polyhedron;
    poly.vertices()
        .iter()
        .map(|&v| b.orientation * v + b.pos)
        .collect()
}

#[test]
fn random_blocks_keep_clear_of_each_other_and_of_balls_and_stay_inside() {
    let shapes = shapes();
    let region = Aabb {
        min: Vec3::ZERO,
        max: Vec3::new(3.0, 3.0, 4.0),
    };
    let balls = [(Vec3::new(1.5, 1.5, 2.0), 0.3)];
    let mix = BlockMix {
        shapes: &shapes,
        choices: &[(0, 1.0), (1, 3.0)],
        orientation: BlockOrientation::Random,
    };
    let blocks = random_blocks(&mix, 200, region, 7, 1000, &balls).unwrap();
    assert_eq!(blocks.len(), 200);
    let r = |b: &PlacedBlock| shapes[b.shape as usize].radius;
    for (i, b) in blocks.iter().enumerate() {
        assert!((b.orientation.length() - 1.0).abs() < 1e-15);
        for v in world(&shapes, b) {
            assert!(v.cmpge(region.min).all() && v.cmple(region.max).all());
        }
        let (c, rb) = balls[0];
        assert!((b.pos - c).length() >= r(b) + rb);
        for o in &blocks[..i] {
            assert!((b.pos - o.pos).length() >= r(b) + r(o));
        }
    }
    // Both shapes drawn, the tetrahedron about three times as often.
    let tets = blocks.iter().filter(|b| b.shape == 1).count();
    assert!((120..180).contains(&tets), "{tets} tetrahedra of 200");
    let again = random_blocks(&mix, 200, region, 7, 1000, &balls).unwrap();
    let bits = |v: &[PlacedBlock]| -> Vec<[u64; 7]> {
        v.iter()
            .map(|b| {
                let q = b.orientation.to_array();
                [b.pos.x, b.pos.y, b.pos.z, q[0], q[1], q[2], q[3]].map(f64::to_bits)
            })
            .collect()
    };
    assert_eq!(bits(&blocks), bits(&again));
    let other = random_blocks(&mix, 200, region, 8, 1000, &balls).unwrap();
    assert_ne!(bits(&blocks), bits(&other));
}

#[test]
fn random_block_fill_that_cannot_fit_says_why() {
    let shapes = shapes();
    let mix = BlockMix {
        shapes: &shapes,
        choices: &[(0, 1.0)],
        orientation: BlockOrientation::Random,
    };
    let small = Aabb {
        min: Vec3::ZERO,
        max: Vec3::splat(0.3),
    };
    let e = random_blocks(&mix, 1, small, 1, 10, &[]).unwrap_err();
    assert!(e.contains("shape 'brick'") && e.contains("at all"), "{e}");
    let room = Aabb {
        min: Vec3::ZERO,
        max: Vec3::splat(1.0),
    };
    let e = random_blocks(&mix, 500, room, 1, 20, &[]).unwrap_err();
    assert!(e.contains("cannot fit 500 blocks"), "{e}");
}

#[test]
fn shoemake_rotations_are_uniform() {
    // Over the Haar measure every entry of the rotation matrix has
    // mean 0 and mean square 1/3.
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let n = 40_000;
    let mut mean = [[0.0; 3]; 3];
    let mut square = [[0.0; 3]; 3];
    for _ in 0..n {
        let q = uniform_orientation(&mut rng);
        assert!((q.length() - 1.0).abs() < 1e-14);
        let m = crate::math::Mat3::from_quat(q);
        for c in 0..3 {
            for r in 0..3 {
                let x = m.col(c)[r];
                mean[c][r] += x / n as f64;
                square[c][r] += x * x / n as f64;
            }
        }
    }
    // Standard errors: 1/sqrt(3 n) for the means, about 0.0015 here.
    for c in 0..3 {
        for r in 0..3 {
            assert!(mean[c][r].abs() < 0.01, "mean {c}{r} = {}", mean[c][r]);
            assert!((square[c][r] - 1.0 / 3.0).abs() < 0.01);
        }
    }
}

#[test]
fn block_lattice_cells_hold_one_block_each() {
    let shapes = shapes();
    let turn = Quat::from_rotation_z(0.3);
    for orientation in [BlockOrientation::Fixed(turn), BlockOrientation::Random] {
        let mix = BlockMix {
            shapes: &shapes,
            choices: &[(0, 1.0), (1, 1.0)],
            orientation,
        };
        let spacing = lattice_block_spacing(&mix);
        let region = Aabb {
            min: Vec3::new(-1.0, 0.0, 0.0),
            max: Vec3::new(-1.0 + 3.0 * spacing, 2.0 * spacing, spacing),
        };
        let blocks = lattice_blocks(&mix, spacing, region, None, 5);
        assert_eq!(blocks.len(), 6);
        for (n, b) in blocks.iter().enumerate() {
            let ijk = Vec3::new((n % 3) as f64, (n / 3) as f64, 0.0);
            let lo = region.min + ijk * spacing;
            for v in world(&shapes, b) {
                let tol = 1e-12;
                assert!(v.cmpge(lo - tol).all() && v.cmple(lo + spacing + tol).all());
            }
        }
        if let BlockOrientation::Fixed(_) = orientation {
            // The brick keeps its edges as given, turned about z.
            let brick = blocks.iter().find(|b| b.shape == 0).unwrap();
            let x = given_to_world(&shapes[0], turn);
            assert!(brick.orientation.dot(x).abs() > 1.0 - 1e-15);
        }
    }
}

#[test]
fn given_frame_keeps_a_box_as_written() {
    // A 0.1 x 0.2 x 0.4 box: its principal x axis is along its longest
    // edge (z as written), but an identity turn leaves it as written.
    let shapes = shapes();
    let q = given_to_world(&shapes[0], Quat::IDENTITY);
    let (lo, hi) = shapes[0].turned_extent(q);
    assert!((hi - lo - Vec3::new(0.1, 0.2, 0.4)).abs().max_element() < 1e-14);
}
