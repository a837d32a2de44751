//! Clump templates from meshes (`src/pebble_fill/`) against closed forms.

mod solids;

use std::f64::consts::PI;

use glam::DVec3;
use solids::{box_mesh, bumpy_grain, dumbbell, icosphere, inscribed_radius, volume};
use talus_geometry::{
    fill_with_pebbles, sphere_union, FillError, FillOptions, MeshErrorKind, PebbleFill,
};

fn fill(mesh: &[[DVec3; 3]], count: usize) -> PebbleFill {
    fill_with_pebbles(mesh, count, &FillOptions::default()).unwrap()
}

fn ball(r: f64) -> f64 {
    4.0 / 3.0 * PI * r * r * r
}

#[test]
fn one_pebble_in_an_icosphere_is_its_inscribed_ball() {
    let mesh = icosphere(2);
    let r_in = inscribed_radius(&mesh);
    let f = fill(&mesh, 1);
    assert_eq!(f.pebbles.len(), 1);
    let (c, r) = f.pebbles[0];
    assert!(r <= r_in * (1.0 + 1e-12), "{r} > {r_in}");
    assert!(r >= 0.95 * r_in, "{r} < 0.95 {r_in}");
    assert!(c.length() <= f.spacing, "centre {c}, spacing {}", f.spacing);
    // The union is one ball: its volume over the mesh's (integrated along
    // lines, to a few 1e-4), and (the ball lying inside) the Jaccard
    // index, which integrates the same.
    let v_mesh = volume(&mesh);
    let fid = f.fidelity;
    assert!((fid.mesh_volume - v_mesh).abs() < 1e-12 * v_mesh);
    assert!((fid.union_volume / ball(r) - 1.0).abs() < 1e-3, "{fid:?}");
    assert!((fid.volume_ratio - ball(r) / v_mesh).abs() < 1e-3);
    assert!((fid.volume_ratio - ball(r_in) / v_mesh).abs() < 0.01);
    // The mesh volume is that of the unit ball within a few per cent, so
    // the ratio is about r_in^3.
    assert!((fid.volume_ratio / r_in.powi(3) - 1.0).abs() < 0.05);
    assert!((fid.jaccard - fid.volume_ratio).abs() < 2e-3, "{fid:?}");
    // The surface's farthest point from the ball: a vertex, at 1 - r.
    assert!((fid.surface_gap - (1.0 - r)).abs() < 1e-12, "{fid:?}");
}

#[test]
fn a_box_fills_better_with_more_pebbles_and_two_sit_at_the_ends() {
    let half = DVec3::new(1.0, 0.5, 0.5);
    let mesh = box_mesh(-half, half);
    let mut last = 0.0;
    for count in [1, 2, 8] {
        let f = fill(&mesh, count);
        let h = f.spacing;
        assert_eq!(f.pebbles.len(), count);
        for &(c, r) in &f.pebbles {
            let reach = c.abs() + DVec3::splat(r);
            assert!(reach.cmple(half + DVec3::splat(h)).all(), "{c} {r}");
            assert!(r <= 0.5 + 1e-12);
        }
        assert!(f.fidelity.jaccard > last, "{count}: {:?}", f.fidelity);
        last = f.fidelity.jaccard;
        if count == 2 {
            // On the long axis, one at each end.
            for &(c, r) in &f.pebbles {
                assert!(c.y.abs() <= h && c.z.abs() <= h, "{c}");
                assert!((c.x.abs() - 0.5).abs() <= h, "{c}");
                assert!((r - 0.5).abs() <= h, "{r}");
            }
            assert!(f.pebbles[0].0.x * f.pebbles[1].0.x < 0.0, "{:?}", f.pebbles);
            // Two balls of radius 0.5 that touch, in a box of volume 2:
            // 2 (4/3 pi / 8) / 2 = pi / 6.
            assert!((f.fidelity.volume_ratio - PI / 6.0).abs() < 2e-3);
        }
    }
}

#[test]
fn the_jaccard_index_of_a_ball_in_a_cube_matches_the_closed_form() {
    let mesh = box_mesh(DVec3::splat(-1.0), DVec3::splat(1.0));
    let f = fill(&mesh, 1);
    assert_eq!(f.pebbles, vec![(DVec3::ZERO, 1.0)]);
    // Union inside the solid: Jaccard = ball / cube = pi / 6.
    let exact = PI / 6.0;
    assert!((f.fidelity.volume_ratio - exact).abs() < 1e-3);
    // Chords of the ball on lines 1/40 of its radius apart: the midpoint
    // rule across its rim is good to about 1e-4.
    assert!(
        (f.fidelity.jaccard - exact).abs() < 1e-3,
        "{} vs {exact}",
        f.fidelity.jaccard
    );
    // The corners are farthest from the ball.
    assert!((f.fidelity.surface_gap - (3f64.sqrt() - 1.0)).abs() < 1e-12);
}

#[test]
fn a_dumbbell_gets_pebbles_in_both_lobes() {
    let mesh = dumbbell();
    for count in [2, 5] {
        let f = fill(&mesh, count);
        let left = f.pebbles.iter().filter(|p| p.0.x < -0.75).count();
        let right = f.pebbles.iter().filter(|p| p.0.x > 0.75).count();
        assert!(left >= 1 && right >= 1, "{count}: {:?}", f.pebbles);
        if count == 2 {
            // The two lobes' balls, less the faceting of 24 sectors.
            for &(c, r) in &f.pebbles {
                assert!((c.x.abs() - 1.5).abs() <= f.spacing, "{c}");
                assert!(r > 0.95 && r <= 1.0, "{r}");
            }
        }
    }
}

#[test]
fn pebbles_of_a_non_convex_grain_stay_inside_and_fidelity_rises() {
    let mesh = bumpy_grain();
    let mut last = (0.0, f64::INFINITY);
    for count in [1, 5, 20] {
        let f = fill(&mesh, count);
        assert_eq!(f.pebbles.len(), count);
        // A pebble inside the solid holds no vertex of its surface.
        for &(c, r) in &f.pebbles {
            for t in &mesh {
                for v in t {
                    assert!((*v - c).length() >= r * (1.0 - 1e-12));
                }
            }
        }
        let fid = f.fidelity;
        assert!(fid.volume_ratio <= 1.0 + 1e-3, "{fid:?}");
        assert!(fid.jaccard > last.0 && fid.surface_gap <= last.1, "{fid:?}");
        last = (fid.jaccard, fid.surface_gap);
    }
    assert!(last.0 > 0.75, "20 pebbles: Jaccard {}", last.0);
}

#[test]
fn the_same_input_gives_the_same_bits() {
    let mesh = bumpy_grain();
    let bits = |f: &PebbleFill| {
        let fid = f.fidelity;
        let mut v: Vec<u64> = f
            .pebbles
            .iter()
            .flat_map(|(c, r)| [c.x, c.y, c.z, *r])
            .map(f64::to_bits)
            .collect();
        v.extend(
            [
                fid.mesh_volume,
                fid.union_volume,
                fid.volume_ratio,
                fid.jaccard,
                fid.surface_gap,
            ]
            .map(f64::to_bits),
        );
        v
    };
    let a = fill(&mesh, 12);
    let b = fill(&mesh, 12);
    assert_eq!(bits(&a), bits(&b));
}

#[test]
fn an_inside_out_surface_fills_the_same() {
    let mesh = dumbbell();
    let inverted: Vec<_> = mesh.iter().map(|&[a, b, c]| [a, c, b]).collect();
    assert_eq!(fill(&mesh, 4), fill(&inverted, 4));
}

#[test]
fn an_open_or_inconsistent_mesh_or_no_pebble_is_refused_with_the_reason() {
    let mut mesh = box_mesh(DVec3::splat(-1.0), DVec3::splat(1.0));
    let options = FillOptions::default();

    let e = fill_with_pebbles(&mesh, 0, &options).unwrap_err();
    assert_eq!(e, FillError::NoPebbles);
    assert!(e.to_string().contains("zero pebbles"), "{e}");

    let mut open = mesh.clone();
    open.remove(3);
    let e = fill_with_pebbles(&open, 4, &options).unwrap_err();
    assert!(
        matches!(e, FillError::Surface(MeshErrorKind::Open { edges: 3, .. })),
        "{e:?}"
    );
    assert!(e.to_string().contains("not closed: 3 open edge(s)"), "{e}");

    mesh[5].swap(1, 2);
    let e = fill_with_pebbles(&mesh, 4, &options).unwrap_err();
    assert!(
        matches!(
            e,
            FillError::Surface(MeshErrorKind::Inconsistent { edges: 3, .. })
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("inconsistent orientation"), "{e}");

    let e = fill_with_pebbles(&[], 4, &options).unwrap_err();
    assert_eq!(e, FillError::Surface(MeshErrorKind::Empty));

    let mut bad = box_mesh(DVec3::splat(-1.0), DVec3::splat(1.0));
    bad[0][0].x = f64::NAN;
    let e = fill_with_pebbles(&bad, 4, &options).unwrap_err();
    assert_eq!(e, FillError::NonFinite);

    let coarse = FillOptions {
        resolution: 1,
        ..options
    };
    let e = fill_with_pebbles(&open, 4, &coarse).unwrap_err();
    assert!(matches!(e, FillError::InvalidOption(_)), "{e:?}");
}

#[test]
fn a_solid_thinner_than_the_grid_is_refused() {
    // Two small tetrahedra (legs 0.04) at opposite corners of their unit
    // bounding box: no node of a 40-step grid falls strictly inside
    // either (the nearest would need three coordinates of 0.025 summing
    // to less than 0.04), but a 128-step grid has some.
    let s = 0.04;
    let tet = |o: DVec3, k: f64| {
        let (a, b, c) = (
            o + DVec3::X * s * k,
            o + DVec3::Y * s * k,
            o + DVec3::Z * s * k,
        );
        let t = [[o, c, b], [o, a, c], [o, b, a], [a, b, c]];
        if k > 0.0 {
            t.to_vec()
        } else {
            t.iter().map(|&[p, q, r]| [p, r, q]).collect()
        }
    };
    let mut mesh = tet(DVec3::ZERO, 1.0);
    mesh.extend(tet(DVec3::ONE, -1.0));
    assert!(volume(&mesh) > 0.0);
    let e = fill_with_pebbles(&mesh, 1, &FillOptions::default()).unwrap_err();
    assert_eq!(e, FillError::NoInteriorSample { resolution: 40 });
    assert!(e.to_string().contains("thinner than the grid"), "{e}");
    // A finer grid finds the inside.
    let fine = FillOptions {
        resolution: 128,
        refinement: 2,
    };
    let f = fill_with_pebbles(&mesh, 2, &fine).unwrap();
    assert_eq!(f.pebbles.len(), 2);
}

#[test]
fn the_union_volume_matches_the_power_cell_quadrature() {
    // Independent of the line integration: sphere_union cuts the union
    // into power cells and integrates along rays from the centres.
    for (mesh, count) in [(bumpy_grain(), 5), (dumbbell(), 5), (icosphere(2), 3)] {
        let f = fill(&mesh, count);
        let reference = sphere_union(&f.pebbles, 1e-6).mass.volume;
        let fid = f.fidelity;
        assert!(
            (fid.union_volume / reference - 1.0).abs() < 4e-3,
            "{} vs {reference}",
            fid.union_volume
        );
        assert!((fid.volume_ratio - reference / volume(&mesh)).abs() < 4e-3);
    }
}

#[test]
fn more_pebbles_than_the_grid_can_use_stops_when_all_is_covered() {
    let mesh = box_mesh(DVec3::splat(-1.0), DVec3::splat(1.0));
    let options = FillOptions {
        resolution: 6,
        refinement: 4,
    };
    let f = fill_with_pebbles(&mesh, 1000, &options).unwrap();
    assert!(f.pebbles.len() < 1000);
    // Every inside node is covered: each pebble added some.
    assert!(f.fidelity.jaccard > 0.7, "{:?}", f.fidelity);
}
