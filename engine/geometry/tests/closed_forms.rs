//! Mass properties against closed forms, under random rotation and
//! translation.

mod reference;

use glam::{DMat3, DQuat, DVec3};
use proptest::prelude::*;
use reference::{config, rotation, vector};
use talus_geometry::ConvexPolyhedron;

const PHI: f64 = 1.618_033_988_749_895;

/// Vertices, volume and body-frame inertia (unit density) of a solid.
struct Solid {
    vertices: Vec<DVec3>,
    volume: f64,
    inertia: DMat3,
}

fn cuboid(h: DVec3) -> Solid {
    let mut vertices = Vec::new();
    for i in 0..8 {
        let s = DVec3::new(
            if i & 1 == 0 { -1.0 } else { 1.0 },
            if i & 2 == 0 { -1.0 } else { 1.0 },
            if i & 4 == 0 { -1.0 } else { 1.0 },
        );
        vertices.push(s * h);
    }
    let m = 8.0 * h.x * h.y * h.z;
    Solid {
        vertices,
        volume: m,
        inertia: DMat3::from_diagonal(DVec3::new(
            m * (h.y * h.y + h.z * h.z) / 3.0,
            m * (h.x * h.x + h.z * h.z) / 3.0,
            m * (h.x * h.x + h.y * h.y) / 3.0,
        )),
    }
}

/// Regular tetrahedron of edge `2 sqrt(2) s`: V = a^3 / (6 sqrt 2),
/// I = m a^2 / 20.
fn tetrahedron(s: f64) -> Solid {
    let a = 2.0 * 2f64.sqrt() * s;
    let v = a.powi(3) / (6.0 * 2f64.sqrt());
    Solid {
        vertices: vec![
            DVec3::new(1.0, 1.0, 1.0) * s,
            DVec3::new(1.0, -1.0, -1.0) * s,
            DVec3::new(-1.0, 1.0, -1.0) * s,
            DVec3::new(-1.0, -1.0, 1.0) * s,
        ],
        volume: v,
        inertia: DMat3::IDENTITY * (v * a * a / 20.0),
    }
}

/// Regular octahedron of edge `sqrt(2) s`: V = sqrt(2)/3 a^3, I = m a^2 / 10.
fn octahedron(s: f64) -> Solid {
    let a = 2f64.sqrt() * s;
    let v = 2f64.sqrt() / 3.0 * a.powi(3);
    let mut vertices = Vec::new();
    for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
        vertices.push(axis * s);
        vertices.push(-axis * s);
    }
    Solid {
        vertices,
        volume: v,
        inertia: DMat3::IDENTITY * (v * a * a / 10.0),
    }
}

/// Regular icosahedron of edge `2 s`: V = 5 (3 + sqrt 5) / 12 a^3,
/// I = m phi^2 a^2 / 10.
fn icosahedron(s: f64) -> Solid {
    let a = 2.0 * s;
    let v = 5.0 * (3.0 + 5f64.sqrt()) / 12.0 * a.powi(3);
    let mut vertices = Vec::new();
    for p in [1.0, -1.0] {
        for q in [PHI, -PHI] {
            vertices.push(DVec3::new(0.0, p, q) * s);
            vertices.push(DVec3::new(p, q, 0.0) * s);
            vertices.push(DVec3::new(q, 0.0, p) * s);
        }
    }
    Solid {
        vertices,
        volume: v,
        inertia: DMat3::IDENTITY * (v * PHI * PHI * a * a / 10.0),
    }
}

fn check(solid: &Solid, r: DQuat, t: DVec3) -> Result<(), TestCaseError> {
    let pts: Vec<DVec3> = solid.vertices.iter().map(|p| r * *p + t).collect();
    let p = ConvexPolyhedron::from_points(&pts).unwrap();
    let m = p.mass_properties();
    prop_assert!((m.volume - solid.volume).abs() <= 1e-12 * solid.volume);
    let size = solid.volume.cbrt();
    prop_assert!((m.centroid - t).length() <= 1e-12 * (size + t.length()));
    let rm = DMat3::from_quat(r);
    let want = rm * solid.inertia * rm.transpose();
    let scale = solid
        .inertia
        .col(0)
        .abs()
        .max_element()
        .max(solid.inertia.col(1).abs().max_element())
        .max(solid.inertia.col(2).abs().max_element());
    for c in 0..3 {
        prop_assert!(
            (m.inertia.col(c) - want.col(c)).abs().max_element() <= 1e-12 * scale,
            "{} vs {}",
            m.inertia,
            want
        );
    }
    // Principal axes diagonalise the tensor.
    let back =
        m.principal_axes * DMat3::from_diagonal(m.principal_moments) * m.principal_axes.transpose();
    for c in 0..3 {
        prop_assert!((back.col(c) - m.inertia.col(c)).abs().max_element() <= 1e-12 * scale);
    }
    let mut want_moments = [
        solid.inertia.x_axis.x,
        solid.inertia.y_axis.y,
        solid.inertia.z_axis.z,
    ];
    want_moments.sort_by(f64::total_cmp);
    for (k, want) in want_moments.iter().enumerate() {
        prop_assert!((m.principal_moments[k] - want).abs() <= 1e-12 * scale);
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(500, 0x3a55))]

    #[test]
    fn box_mass_properties(
        h in (0.1..3.0f64, 0.1..3.0f64, 0.1..3.0f64), r in rotation(), t in vector(10.0),
    ) {
        check(&cuboid(DVec3::new(h.0, h.1, h.2)), r, t)?;
    }

    #[test]
    fn regular_solids_mass_properties(s in 0.1..3.0f64, r in rotation(), t in vector(10.0)) {
        check(&tetrahedron(s), r, t)?;
        check(&octahedron(s), r, t)?;
        check(&icosahedron(s), r, t)?;
    }
}
