//! Closed triangle meshes (outward triangle soups) for the pebble-fill
//! tests and the cost example.
#![allow(dead_code)]

use glam::DVec3;

/// The twelve outward triangles of the box `[lo, hi]`.
pub fn box_mesh(lo: DVec3, hi: DVec3) -> Vec<[DVec3; 3]> {
    let corner = |i: usize| {
        DVec3::new(
            if i & 1 == 0 { lo.x } else { hi.x },
            if i & 2 == 0 { lo.y } else { hi.y },
            if i & 4 == 0 { lo.z } else { hi.z },
        )
    };
    // Corner i has bits (x, y, z); faces -x, +x, -y, +y, -z, +z, wound
    // outwards.
    let faces = [
        [0, 4, 6, 2],
        [1, 3, 7, 5],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 2, 3, 1],
        [4, 5, 7, 6],
    ];
    faces
        .iter()
        .flat_map(|f| {
            [
                [corner(f[0]), corner(f[1]), corner(f[2])],
                [corner(f[0]), corner(f[2]), corner(f[3])],
            ]
        })
        .collect()
}

/// An icosahedron inscribed in the unit sphere, each triangle split into
/// four `levels` times with the new vertices pushed onto the sphere:
/// `20 * 4^levels` outward triangles.
pub fn icosphere(levels: usize) -> Vec<[DVec3; 3]> {
    let phi = (1.0 + 5f64.sqrt()) / 2.0;
    let mut v = Vec::new();
    for (a, b) in [(1.0, phi), (-1.0, phi), (1.0, -phi), (-1.0, -phi)] {
        v.push(DVec3::new(0.0, a, b));
        v.push(DVec3::new(a, b, 0.0));
        v.push(DVec3::new(b, 0.0, a));
    }
    let v: Vec<DVec3> = v.into_iter().map(DVec3::normalize).collect();
    // The 20 faces: the triples of mutually nearest vertices (edge
    // length 2 before normalising), wound outwards.
    let edge = (v[0] - v[1]).length();
    let near = |i: usize, j: usize| ((v[i] - v[j]).length() - edge).abs() < 1e-9;
    let mut soup = Vec::new();
    for i in 0..12 {
        for j in i + 1..12 {
            for k in j + 1..12 {
                if near(i, j) && near(j, k) && near(i, k) {
                    let (a, b, c) = (v[i], v[j], v[k]);
                    if (b - a).cross(c - a).dot(a + b + c) > 0.0 {
                        soup.push([a, b, c]);
                    } else {
                        soup.push([a, c, b]);
                    }
                }
            }
        }
    }
    assert_eq!(soup.len(), 20);
    for _ in 0..levels {
        // The midpoint of an edge is the same bits from both sides
        // ((a + b) is (b + a)), so the refined mesh stays welded.
        let mid = |a: DVec3, b: DVec3| ((a + b) * 0.5).normalize();
        soup = soup
            .iter()
            .flat_map(|&[a, b, c]| {
                let (ab, bc, ca) = (mid(a, b), mid(b, c), mid(c, a));
                [[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]
            })
            .collect();
    }
    soup
}

/// Radius of the largest ball about the origin inside a closed convex
/// mesh around it: the nearest face plane.
pub fn inscribed_radius(mesh: &[[DVec3; 3]]) -> f64 {
    mesh.iter()
        .map(|[a, b, c]| (*b - *a).cross(*c - *a).normalize().dot(*a))
        .fold(f64::INFINITY, f64::min)
}

/// Enclosed volume by the divergence theorem.
pub fn volume(mesh: &[[DVec3; 3]]) -> f64 {
    mesh.iter().map(|[a, b, c]| a.dot(b.cross(*c)) / 6.0).sum()
}

/// A closed surface of revolution about the x axis: the profile `radius`
/// on `sections` equal steps of `[x0, x1]` (zero at both ends, where the
/// poles are), `sectors` around.
pub fn revolution(
    x0: f64,
    x1: f64,
    sections: usize,
    sectors: usize,
    radius: impl Fn(f64) -> f64,
) -> Vec<[DVec3; 3]> {
    let ring = |i: usize| -> Vec<DVec3> {
        let x = x0 + (x1 - x0) * i as f64 / sections as f64;
        let r = radius(x);
        (0..sectors)
            .map(|s| {
                let t = std::f64::consts::TAU * s as f64 / sectors as f64;
                DVec3::new(x, r * t.cos(), r * t.sin())
            })
            .collect()
    };
    let (south, north) = (DVec3::new(x0, 0.0, 0.0), DVec3::new(x1, 0.0, 0.0));
    let rings: Vec<Vec<DVec3>> = (1..sections).map(ring).collect();
    let mut soup = Vec::new();
    for s in 0..sectors {
        let t = (s + 1) % sectors;
        let first = &rings[0];
        soup.push([south, first[t], first[s]]);
        for w in rings.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            soup.push([a[s], a[t], b[t]]);
            soup.push([a[s], b[t], b[s]]);
        }
        let last = &rings[rings.len() - 1];
        soup.push([north, last[s], last[t]]);
    }
    if volume(&soup) < 0.0 {
        for t in &mut soup {
            t.swap(1, 2);
        }
    }
    soup
}

/// Profile of the dumbbell: balls of radius 1 at `x = +-1.5` joined by a
/// neck of radius 0.3, over `[-2.5, 2.5]`.
pub fn dumbbell_radius(x: f64) -> f64 {
    let lobe = |c: f64| (1.0 - (x - c) * (x - c)).max(0.0).sqrt();
    if x.abs() >= 2.5 {
        0.0
    } else {
        lobe(-1.5).max(lobe(1.5)).max(0.3)
    }
}

/// The dumbbell as a mesh of revolution (`2 * 24 * 39` triangles).
pub fn dumbbell() -> Vec<[DVec3; 3]> {
    revolution(-2.5, 2.5, 40, 24, dumbbell_radius)
}

/// A non-convex grain of 1280 triangles: the three-times refined
/// icosphere with each vertex moved along its radius by a smooth bump
/// (radii 0.75 to 1.3, star-shaped about the origin, so closed and
/// consistently wound).
pub fn bumpy_grain() -> Vec<[DVec3; 3]> {
    let bump = |p: DVec3| {
        p * (1.0 + 0.2 * (3.0 * p.x).sin() * (2.0 * p.y).cos() + 0.1 * (4.0 * p.z).cos())
    };
    icosphere(3).into_iter().map(|t| t.map(bump)).collect()
}
