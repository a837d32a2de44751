//! Walls in a cell periodic at its sides: a floor that spans the cell
//! carries a body of every kind as a floor without end would, while the
//! body straddles a side face and after it crossed one (its contact
//! history kept); the floor is cut to fit the cell before step 0 and its
//! sides joined across the faces, and a wall that cannot be cut finely
//! enough is refused.

use talus_core::math::{Mat3, Quat};
use talus_core::{BlockShape, Cell, ClumpTemplate, Fixity, Vec3, Wall};
use talus_geometry::box_block;

mod common;
use common::*;

/// The cell's side along x and y (m).
const SIDE: f64 = 0.1;

/// The kinds of body that slide on the floor.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Ball,
    Block,
    Clump,
}

/// A flat floor at z = 0 over `[lo, hi]^2` of `n x n` squares.
fn floor(lo: f64, hi: f64, n: usize) -> Wall {
    let (v, t) = square_mesh(lo, hi, n);
    Wall::new("floor", &v, &t, None).unwrap()
}

/// A body of `kind` dropped from just above the floor near the corner of
/// the cell, sliding towards +x and +y and spinning, with friction; with
/// `periodic` in a cell periodic along x and y over a floor of two
/// triangles that spans it, else over a floor three cells wide meshed as
/// the cut one is. Returns the body's position, velocity, spin and
/// orientation at every step.
fn run(kind: Kind, periodic: bool, steps: usize) -> Vec<(Vec3, Vec3, Vec3, Quat)> {
    let (mut sim, g, w) = linear_sim(2e-5, [KN, KN, 0.3, 0.3, 0.0]);
    // Tilted: the ball rolls and the others come to stick, so their
    // contacts' shear springs carry load across the faces.
    sim.settings.gravity = Vec3::new(1.5, 0.7, -9.81);
    // A brick that lands flat and slides on a face.
    let brick = box_block(Vec3::new(0.024, 0.016, 0.01)).unwrap();
    let shape = sim.add_shape(BlockShape::new("brick", &brick).unwrap());
    let template = ClumpTemplate::new(
        "dumbbell",
        &[
            (Vec3::new(-0.006, 0.0, 0.0), 0.008),
            (Vec3::new(0.006, 0.0, 0.0), 0.008),
        ],
        1e-6,
    )
    .unwrap();
    let template = sim.add_template(template);
    let reach = match kind {
        Kind::Ball => RADIUS,
        Kind::Block => sim.shapes()[shape as usize].radius,
        Kind::Clump => sim.templates()[template as usize].radius,
    };
    // Just above the floor: the bottom of a ball, a brick and the
    // dumbbell's pebbles 1e-4 up.
    let low = match kind {
        Kind::Ball => RADIUS,
        Kind::Block => 0.005,
        Kind::Clump => 0.008,
    };
    let at = Vec3::new(SIDE - 0.4 * reach, SIDE - 0.2 * reach, low + 1e-4);
    let (v, spin) = (Vec3::new(0.8, 0.35, 0.0), Vec3::new(0.0, 0.0, 4.0));
    let q = Quat::from_scaled_axis(Vec3::new(0.0, 0.0, 0.4));
    let rigid = |shape: u32| talus_core::BlockInit {
        velocity: v,
        spin,
        group: g,
        fixity: Fixity::from_flags([false; 6]),
        ..block(shape, at, q)
    };
    match kind {
        Kind::Ball => {
            // Rolling without slip.
            let mut b = ball(at, v, g);
            b.spin = Vec3::Z.cross(v) / RADIUS;
            sim.add_ball(b).unwrap();
        }
        Kind::Block => {
            sim.add_block(rigid(shape)).unwrap();
        }
        Kind::Clump => {
            sim.add_clump(rigid(template)).unwrap();
        }
    }
    if periodic {
        sim.add_wall(floor(0.0, SIDE, 1), w);
        let top = Vec3::new(SIDE, SIDE, SIDE);
        sim.set_cell(Cell::from_box(Vec3::ZERO, top, [true, true, false], Mat3::ZERO).unwrap());
    } else {
        sim.add_wall(floor(-SIDE, 2.0 * SIDE, 24), w);
    }
    sim.prepare().unwrap();
    (0..steps)
        .map(|_| {
            sim.cycle().unwrap();
            match kind {
                Kind::Ball => {
                    let b = sim.balls();
                    (b.pos[0], b.vel[0], b.spin[0], Quat::IDENTITY)
                }
                Kind::Block => {
                    let b = sim.blocks();
                    (b.pos[0], b.vel[0], b.spin[0], b.orientation[0])
                }
                Kind::Clump => {
                    let b = sim.clumps();
                    (b.pos[0], b.vel[0], b.spin[0], b.orientation[0])
                }
            }
        })
        .collect()
}

#[test]
fn a_body_sliding_across_the_side_faces_moves_as_on_a_floor_without_end() {
    let steps = 5000;
    for kind in [Kind::Ball, Kind::Block, Kind::Clump] {
        let free = run(kind, false, steps);
        let cell = run(kind, true, steps);
        let mut crossed = [false; 2];
        let mut worst = 0.0f64;
        for (step, (a, b)) in free.iter().zip(&cell).enumerate() {
            // The same place less whole cells along x and y.
            let cells = (a.0 - b.0) / SIDE;
            let off = cells - cells.round();
            assert!(cells.z.round() == 0.0, "{kind:?} step {step}: {cells}");
            for (k, c) in crossed.iter_mut().enumerate() {
                *c |= cells[k].round() != 0.0;
            }
            let q = a.3.dot(b.3).abs();
            worst = worst
                .max(off.length() * SIDE)
                .max((a.1 - b.1).length())
                .max((a.2 - b.2).length() * 0.01)
                .max(1.0 - q);
        }
        assert!(crossed[0] && crossed[1], "{kind:?}: crossed {crossed:?}");
        // It rests on the floor and slides: it moved off where it started.
        let (start, end) = (free[0].0, free[steps - 1].0);
        assert!((end - start).length() > 0.01, "{kind:?}: {start} {end}");
        // A brick on a faceted floor turns the round-off of where it is
        // into differences of about 1e-6 over the run on a floor without
        // a cell too (the same run moved by a whole cell); a ball and a
        // clump keep to round-off. Without the facets' images the brick
        // differs by about 1 m/s.
        let tolerance = if kind == Kind::Block { 1e-4 } else { 1e-9 };
        assert!(worst < tolerance, "{kind:?}: differs by {worst:e}");
    }
}

#[test]
fn a_floor_that_spans_the_cell_is_cut_to_fit_it() {
    let (mut sim, g, w) = linear_sim(1e-5, [KN, KN, 0.3, 0.0, 0.0]);
    sim.add_wall(floor(0.0, SIDE, 1), w);
    let top = Vec3::new(SIDE, SIDE, SIDE);
    sim.set_cell(Cell::from_box(Vec3::ZERO, top, [true, true, false], Mat3::ZERO).unwrap());
    sim.add_ball(ball(Vec3::new(0.05, 0.05, 0.02), Vec3::ZERO, g))
        .unwrap();
    sim.prepare().unwrap();
    let walls = sim.walls();
    let wall = &walls[0];
    // Two triangles of bounding radius 0.745 SIDE, cut three times: 128
    // of radius 0.093 SIDE, at most an eighth of the width.
    assert_eq!(wall.facets.len(), 128);
    assert!(wall.spheres.iter().all(|s| s.1 <= SIDE / 8.0));
    let area: f64 = (0..wall.facets.len())
        .map(|f| {
            let [a, b, c] = wall.corners(f);
            0.5 * (b - a).cross(c - a).length()
        })
        .sum();
    assert!((area - SIDE * SIDE).abs() < 1e-15, "{area}");
    assert!(wall.normals.iter().all(|n| (*n - Vec3::Z).length() < 1e-15));
    // 8 x 8 squares: every inner edge has its neighbour, and each of the
    // 32 border edges the one across the cell's face, its image.
    let open: usize = wall.neighbours.iter().flatten().filter(|&&n| n < 0).count();
    assert_eq!(open, 0);
    for f in 0..wall.facets.len() {
        let [a, b, c] = wall.corners(f);
        for (k, (p, q)) in [(a, b), (b, c), (c, a)].into_iter().enumerate() {
            let g = wall.neighbours[f][k] as usize;
            // The neighbour has the edge the other way round, moved by a
            // whole side or not at all.
            let found = (0..3).any(|j| {
                let [x, y] = [j, (j + 1) % 3].map(|i| wall.corners(g)[i]);
                let shift = x - q;
                let whole = (shift / SIDE).round() * SIDE;
                (shift - whole).length() < 1e-15 && (y - p - shift).length() < 1e-15
            });
            assert!(found, "facet {f} edge {k}");
        }
    }
}

#[test]
fn a_wall_too_large_for_the_cell_is_refused() {
    let (mut sim, g, w) = linear_sim(1e-5, [KN, KN, 0.3, 0.0, 0.0]);
    sim.add_wall(floor(-1e3, 1e3, 1), w);
    let top = Vec3::new(SIDE, SIDE, SIDE);
    sim.set_cell(Cell::from_box(Vec3::ZERO, top, [true, true, false], Mat3::ZERO).unwrap());
    sim.add_ball(ball(Vec3::new(0.05, 0.05, 0.02), Vec3::ZERO, g))
        .unwrap();
    let e = sim.prepare().unwrap_err().to_string();
    assert!(
        e.contains("floor") && e.contains("too large for the periodic cell"),
        "{e}"
    );
}
