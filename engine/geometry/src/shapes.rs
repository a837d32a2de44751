//! Named block shapes (box, regular tetrahedron and octahedron, regular
//! prism), seeded random convex blocks, and the principal frame of a block.
//!
//! Reads: a few sizes, or a random-shape description and a seed. Writes: a
//! [`ConvexPolyhedron`] built through the convex hull, centred on its
//! centroid (the random shape on the centre of its ellipsoid).
//! Invariant: the same arguments give the same bits; every shape is convex
//! and closed by construction (it is a hull).
//!
//! # Frames
//!
//! Box edges lie along x, y, z; the prism axis is z with a vertex of the
//! cross-section on +x; the tetrahedron has its corners on alternate
//! corners of a cube `(+-1, +-1, +-1) * s`, the octahedron on the axes.
//! [`principal_frame`] re-expresses any block about its centroid in the
//! axes of its principal moments, which is the frame the rotational law of
//! motion of the engine works in.
//!
//! # Random blocks
//!
//! [`random_block`] places points on an ellipsoid of semi-axes `a, b, c`:
//! a direction uniform on the unit sphere (height `z` uniform in
//! `[-1, 1]`, azimuth uniform in `[0, 2 pi)`: Archimedes' theorem makes the
//! pair uniform in area), scaled per axis by `(a, b, c)`, then by a radius
//! factor uniform in `[1 - roughness, 1]`. The points are thus uniform in
//! direction, not in area on a stretched ellipsoid. The vertex count `n` is
//! drawn uniform in the requested range first; `n` points are drawn and
//! hulled, and while the hull has fewer than `n` vertices (rough points
//! fall inside it) one more point is drawn and the hull rebuilt. Each new
//! point adds at most one vertex, so the block ends with exactly `n`
//! vertices. The generator is ChaCha8 seeded with the given seed.

use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::GeometryError;
use crate::polyhedron::ConvexPolyhedron;

/// A named block shape and its sizes (m).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// A rectangular box with these edge lengths along x, y, z.
    Box {
        /// Edge lengths (m), all > 0.
        edges: DVec3,
    },
    /// A regular tetrahedron.
    Tetrahedron {
        /// Edge length (m), > 0.
        edge: f64,
    },
    /// A regular octahedron.
    Octahedron {
        /// Edge length (m), > 0.
        edge: f64,
    },
    /// A right prism with a regular polygon as cross-section.
    Prism {
        /// Number of sides of the cross-section, >= 3.
        sides: u32,
        /// Distance from the axis to a vertex of the cross-section (m), > 0.
        circumradius: f64,
        /// Height along the axis (m), > 0.
        height: f64,
    },
    /// A seeded random convex block.
    Random {
        /// What to draw.
        spec: RandomBlock,
        /// Seed of the generator: the same seed gives the same block.
        seed: u64,
    },
}

impl Shape {
    /// The block of this shape.
    ///
    /// # Errors
    /// As the constructor of each kind.
    pub fn build(&self) -> Result<ConvexPolyhedron, GeometryError> {
        match *self {
            Shape::Box { edges } => box_block(edges),
            Shape::Tetrahedron { edge } => tetrahedron_block(edge),
            Shape::Octahedron { edge } => octahedron_block(edge),
            Shape::Prism {
                sides,
                circumradius,
                height,
            } => prism_block(sides, circumradius, height),
            Shape::Random { spec, seed } => random_block(&spec, seed),
        }
    }
}

/// What [`random_block`] draws (see the module docs for the distribution).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandomBlock {
    /// Semi-axes of the ellipsoid along x, y, z (m), all > 0.
    pub semi_axes: DVec3,
    /// Fewest hull vertices, >= 4.
    pub min_vertices: usize,
    /// Most hull vertices, >= `min_vertices`.
    pub max_vertices: usize,
    /// Radial scatter in `[0, 1)`: 0 puts every point on the ellipsoid,
    /// larger values let points fall up to that fraction inside it.
    pub roughness: f64,
}

/// Checks that `x` is a finite positive size.
fn positive(x: f64, what: &'static str) -> Result<f64, GeometryError> {
    if !x.is_finite() {
        return Err(GeometryError::NonFinite);
    }
    if x <= 0.0 {
        return Err(GeometryError::InvalidArgument(what));
    }
    Ok(x)
}

/// A box with edge lengths `edges` along x, y, z, centred on the origin.
///
/// # Errors
/// [`GeometryError::InvalidArgument`] unless every edge is positive,
/// [`GeometryError::NonFinite`] for a NaN or infinite edge.
pub fn box_block(edges: DVec3) -> Result<ConvexPolyhedron, GeometryError> {
    ConvexPolyhedron::cuboid(edges * 0.5)
}

/// A regular tetrahedron of edge `edge`, centred on the origin.
///
/// # Errors
/// [`GeometryError::InvalidArgument`] unless `edge > 0`.
pub fn tetrahedron_block(edge: f64) -> Result<ConvexPolyhedron, GeometryError> {
    // Alternate corners of a cube of half side s are 2 sqrt(2) s apart.
    let s = positive(edge, "tetrahedron edge must be positive")? / (2.0 * 2f64.sqrt());
    let corners = [
        DVec3::new(1.0, 1.0, 1.0),
        DVec3::new(1.0, -1.0, -1.0),
        DVec3::new(-1.0, 1.0, -1.0),
        DVec3::new(-1.0, -1.0, 1.0),
    ];
    ConvexPolyhedron::from_points(&corners.map(|c| c * s))
}

/// A regular octahedron of edge `edge`, centred on the origin, corners on
/// the axes.
///
/// # Errors
/// [`GeometryError::InvalidArgument`] unless `edge > 0`.
pub fn octahedron_block(edge: f64) -> Result<ConvexPolyhedron, GeometryError> {
    let r = positive(edge, "octahedron edge must be positive")? / 2f64.sqrt();
    let corners = [
        DVec3::X,
        DVec3::NEG_X,
        DVec3::Y,
        DVec3::NEG_Y,
        DVec3::Z,
        DVec3::NEG_Z,
    ];
    ConvexPolyhedron::from_points(&corners.map(|c| c * r))
}

/// A right prism along z whose cross-section is the regular `sides`-gon of
/// circumradius `circumradius`, from `z = -height/2` to `height/2`.
///
/// # Errors
/// [`GeometryError::InvalidArgument`] for fewer than 3 sides or a size that
/// is not positive.
pub fn prism_block(
    sides: u32,
    circumradius: f64,
    height: f64,
) -> Result<ConvexPolyhedron, GeometryError> {
    if sides < 3 {
        return Err(GeometryError::InvalidArgument(
            "a prism needs at least 3 sides",
        ));
    }
    let r = positive(circumradius, "prism circumradius must be positive")?;
    let half = 0.5 * positive(height, "prism height must be positive")?;
    let mut points = Vec::with_capacity(2 * sides as usize);
    for k in 0..sides {
        let angle = std::f64::consts::TAU * f64::from(k) / f64::from(sides);
        let (s, c) = angle.sin_cos();
        points.push(DVec3::new(r * c, r * s, -half));
        points.push(DVec3::new(r * c, r * s, half));
    }
    ConvexPolyhedron::from_points(&points)
}

/// A random convex block drawn from `spec` with generator seed `seed`
/// (see the module docs for the distribution).
///
/// # Errors
/// [`GeometryError::InvalidArgument`] for a vertex range below 4 or empty,
/// a semi-axis that is not positive or a roughness outside `[0, 1)`;
/// [`GeometryError::IterationCap`] (stage `"random block"`) if the hull
/// keeps fewer vertices than drawn after many extra points or
/// [`RANDOM_BLOCK_WORK`] (rough shapes with many vertices, flat or
/// needle-like axes).
pub fn random_block(spec: &RandomBlock, seed: u64) -> Result<ConvexPolyhedron, GeometryError> {
    let RandomBlock {
        semi_axes,
        min_vertices,
        max_vertices,
        roughness,
    } = *spec;
    if !semi_axes.is_finite() || !roughness.is_finite() {
        return Err(GeometryError::NonFinite);
    }
    if semi_axes.min_element() <= 0.0 {
        return Err(GeometryError::InvalidArgument(
            "random block semi-axes must be positive",
        ));
    }
    if min_vertices < 4 || max_vertices < min_vertices {
        return Err(GeometryError::InvalidArgument(
            "random block vertex range must satisfy 4 <= min <= max",
        ));
    }
    if !(0.0..1.0).contains(&roughness) {
        return Err(GeometryError::InvalidArgument(
            "random block roughness must lie in [0, 1)",
        ));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let target = rng.random_range(min_vertices..=max_vertices);
    let draw = |rng: &mut ChaCha8Rng| random_point(rng, semi_axes, roughness);
    let mut points: Vec<DVec3> = (0..target).map(|_| draw(&mut rng)).collect();
    let extra_cap = 64 * target + 256;
    // The hull of `points` but the last, while it is short of the target.
    let mut short: Option<ConvexPolyhedron> = None;
    let mut work = 0usize;
    for _ in 0..=extra_cap {
        let last = points[points.len() - 1];
        let hull = match short.take() {
            // A point well inside the hull so far changes neither the
            // hull nor its tolerance (the bounding box stays): the hull
            // of all the points is that hull, bit for bit.
            Some(h)
                if h.facet_planes()
                    .iter()
                    .all(|p| p.signed_distance(last) < -2.0 * h.tolerance()) =>
            {
                Ok(h)
            }
            _ => {
                work += points.len();
                ConvexPolyhedron::from_points(&points)
            }
        };
        // Too few points in general position (flat or merged) is not an
        // error here: more points are coming.
        match hull {
            Ok(block) if block.vertices().len() >= target => return Ok(block),
            Ok(block) => {
                work += block.facet_planes().len();
                short = Some(block);
                points.push(draw(&mut rng));
            }
            Err(
                GeometryError::Coplanar
                | GeometryError::Collinear
                | GeometryError::TooFewPoints { .. },
            ) => points.push(draw(&mut rng)),
            Err(e) => return Err(e),
        }
        if work > RANDOM_BLOCK_WORK {
            break;
        }
    }
    Err(GeometryError::IterationCap {
        stage: "random block",
    })
}

/// A point of a random block: uniform in direction on the unit sphere,
/// its radius shrunk by up to `roughness`, stretched by `semi_axes`.
fn random_point(rng: &mut ChaCha8Rng, semi_axes: DVec3, roughness: f64) -> DVec3 {
    let z: f64 = rng.random_range(-1.0..=1.0);
    let azimuth: f64 = rng.random_range(0.0..std::f64::consts::TAU);
    let (s, c) = azimuth.sin_cos();
    let ring = (1.0 - z * z).max(0.0).sqrt();
    let radius = 1.0 - roughness * rng.random::<f64>();
    DVec3::new(ring * c, ring * s, z) * semi_axes * radius
}

/// Most work [`random_block`] spends (points hulled plus facets tested,
/// summed over its tries; a second or a few) before it gives up: shapes whose
/// hull keeps too few of the points drawn (many vertices with roughness,
/// very flat or needle-like axes) would otherwise take hours.
pub const RANDOM_BLOCK_WORK: usize = 10_000_000;

/// A block expressed about its centroid in the axes of its principal
/// moments.
#[derive(Debug, Clone, PartialEq)]
pub struct PrincipalFrame {
    /// The block in principal coordinates: centroid at the origin, inertia
    /// tensor diagonal with ascending moments.
    pub block: ConvexPolyhedron,
    /// Principal moments for unit density, ascending (m^5; times the
    /// density gives kg m^2).
    pub moments: DVec3,
    /// Rotation from principal coordinates to the original shape frame
    /// (right-handed).
    pub rotation: DQuat,
    /// Centroid in the original shape frame (m).
    pub centroid: DVec3,
}

/// `block` in its principal frame: a point `x` of `block` is
/// `rotation * y + centroid` with `y` the same point of the returned block.
pub fn principal_frame(block: &ConvexPolyhedron) -> PrincipalFrame {
    let mass = block.mass_properties();
    let rotation = mass.principal_rotation();
    let back = rotation.conjugate();
    PrincipalFrame {
        block: block.transformed(back, -(back * mass.centroid)),
        moments: mass.principal_moments,
        rotation,
        centroid: mass.centroid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DMat3;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    /// Volume and ascending principal moments match, to 1e-12 relative.
    fn check(block: &ConvexPolyhedron, volume: f64, moments: DVec3) {
        let m = block.mass_properties();
        assert!(
            rel(m.volume, volume) < 1e-12,
            "volume {} vs {volume}",
            m.volume
        );
        for k in 0..3 {
            assert!(
                rel(m.principal_moments[k], moments[k]) < 1e-12,
                "moment {k}: {} vs {}",
                m.principal_moments[k],
                moments[k]
            );
        }
        assert!(m.centroid.length() < 1e-12 * volume.cbrt());
    }

    #[test]
    fn box_volume_and_inertia() {
        let (a, b, c) = (0.5, 1.2, 2.0);
        let v = a * b * c;
        let i = |p: f64, q: f64| v * (p * p + q * q) / 12.0;
        let block = box_block(DVec3::new(a, b, c)).unwrap();
        // Ascending: the smallest moment is about the longest edge.
        check(&block, v, DVec3::new(i(a, b), i(a, c), i(b, c)));
        assert_eq!(block.vertices().len(), 8);
    }

    #[test]
    fn regular_solids_volume_and_inertia() {
        let a = 0.8;
        // Tetrahedron: V = a^3 / (6 sqrt 2), I = V a^2 / 20 about any axis.
        let v = a * a * a / (6.0 * 2f64.sqrt());
        let t = tetrahedron_block(a).unwrap();
        check(&t, v, DVec3::splat(v * a * a / 20.0));
        assert_eq!((t.vertices().len(), t.bounding_planes().len()), (4, 4));
        for e in t.edges() {
            let [p, q] = e.vertices.map(|i| t.vertices()[i as usize]);
            assert!(rel(p.distance(q), a) < 1e-14);
        }
        // Octahedron: V = sqrt(2) a^3 / 3, I = V a^2 / 10.
        let v = 2f64.sqrt() * a * a * a / 3.0;
        let o = octahedron_block(a).unwrap();
        check(&o, v, DVec3::splat(v * a * a / 10.0));
        assert_eq!((o.vertices().len(), o.bounding_planes().len()), (6, 8));
    }

    #[test]
    fn prism_matches_polygon_and_cylinder_closed_forms() {
        let (r, h) = (0.3, 1.1);
        for n in [3u32, 5, 6, 12] {
            // Polar moment of the regular n-gon about its centre:
            // J = n r^4 sin(2 pi/n) (2 + cos(2 pi/n)) / 12; area
            // A = n r^2 sin(2 pi/n) / 2; in-plane moments J/2 each.
            let t = std::f64::consts::TAU / f64::from(n);
            let area = 0.5 * f64::from(n) * r * r * t.sin();
            let j = f64::from(n) * r.powi(4) * t.sin() * (2.0 + t.cos()) / 12.0;
            let v = area * h;
            let side = h * j / 2.0 + v * h * h / 12.0;
            let axial = h * j;
            let mut expect = [side, side, axial];
            expect.sort_by(f64::total_cmp);
            let p = prism_block(n, r, h).unwrap();
            check(&p, v, DVec3::from_array(expect));
            assert_eq!(p.bounding_planes().len(), n as usize + 2);
        }
        // Many sides: the cylinder, V = pi r^2 h, I_axis = V r^2 / 2,
        // I_side = V (3 r^2 + h^2) / 12; the n-gon's error is O(1/n^2).
        let p = prism_block(512, r, h).unwrap();
        let m = p.mass_properties();
        let v = std::f64::consts::PI * r * r * h;
        let side = v * (3.0 * r * r + h * h) / 12.0;
        let axial = v * r * r / 2.0;
        // (Ascending: this prism is taller than wide, the axial moment is
        // the smallest.)
        let (e_v, e_side, e_axial) = (
            rel(m.volume, v),
            rel(m.principal_moments.y, side).max(rel(m.principal_moments.z, side)),
            rel(m.principal_moments.x, axial),
        );
        assert!(
            e_v < 1e-4 && e_side < 1e-4 && e_axial < 1e-4,
            "{e_v:e} {e_side:e} {e_axial:e}"
        );
        // And the error shrinks as 1/n^2.
        let coarse = rel(prism_block(128, r, h).unwrap().volume(), v);
        assert!((coarse / e_v - 16.0).abs() < 0.1, "{coarse} / {e_v}");
    }

    #[test]
    fn rotated_box_principal_axes_are_recovered() {
        let edges = DVec3::new(0.4, 1.0, 1.7);
        let turn = DQuat::from_scaled_axis(DVec3::new(0.9, -0.4, 1.3));
        let shift = DVec3::new(3.0, -1.0, 0.5);
        let block = box_block(edges).unwrap().transformed(turn, shift);
        let frame = principal_frame(&block);
        // Ascending moments go with descending edges across them: the
        // smallest moment is about the longest edge.
        let axes = DMat3::from_quat(frame.rotation);
        for (k, edge_axis) in [(0, DVec3::Z), (1, DVec3::Y), (2, DVec3::X)] {
            let expect = turn * edge_axis;
            assert!(
                axes.col(k).dot(expect).abs() > 1.0 - 1e-14,
                "axis {k}: {} vs {expect}",
                axes.col(k)
            );
        }
        assert!(axes.determinant() > 0.0);
        assert!((frame.centroid - shift).length() < 1e-13);
        // In its principal frame the block is the axis-aligned box again,
        // longest edge along x.
        let (lo, hi) = frame.block.extent();
        let size = hi - lo;
        assert!(
            (size - DVec3::new(1.7, 1.0, 0.4)).length() < 1e-13,
            "{size}"
        );
        let inertia = frame.block.mass_properties().inertia;
        let off = inertia.col(0).y.abs() + inertia.col(0).z.abs() + inertia.col(1).z.abs();
        assert!(off < 1e-14);
    }

    #[test]
    fn repeated_moments_still_give_a_rotation() {
        // A cube (three equal moments) and a square prism (two equal),
        // turned: any orthonormal right-handed frame is principal.
        let turn = DQuat::from_scaled_axis(DVec3::new(0.2, 1.1, -0.6));
        for block in [
            box_block(DVec3::ONE).unwrap(),
            box_block(DVec3::new(1.0, 1.0, 2.5)).unwrap(),
        ] {
            let block = block.transformed(turn, DVec3::ZERO);
            let frame = principal_frame(&block);
            assert!((frame.rotation.length() - 1.0).abs() < 1e-15);
            let m = block.mass_properties();
            let axes = DMat3::from_quat(frame.rotation);
            let back = axes * DMat3::from_diagonal(frame.moments) * axes.transpose();
            for c in 0..3 {
                assert!((back.col(c) - m.inertia.col(c)).length() < 1e-14);
            }
            assert_eq!(principal_frame(&block), frame, "deterministic");
        }
    }

    fn spec(min: usize, max: usize, roughness: f64) -> RandomBlock {
        RandomBlock {
            semi_axes: DVec3::new(1.0, 0.6, 0.4),
            min_vertices: min,
            max_vertices: max,
            roughness,
        }
    }

    #[test]
    fn random_blocks_are_convex_in_range_and_deterministic() {
        for (min, max, roughness) in [(4, 4, 0.0), (8, 20, 0.0), (10, 30, 0.5), (40, 60, 0.2)] {
            let s = spec(min, max, roughness);
            for seed in 0..20u64 {
                let block = random_block(&s, seed).unwrap();
                let n = block.vertices().len();
                assert!((min..=max).contains(&n), "{n} vertices");
                // Convex: every vertex on the inner side of every facet
                // plane, and every edge folds outwards.
                let tol = block.tolerance();
                for plane in block.facet_planes() {
                    for &v in block.vertices() {
                        assert!(plane.signed_distance(v) <= tol);
                    }
                }
                // Inside the ellipsoid, outside the shrunk one.
                for &v in block.vertices() {
                    let r = (v / s.semi_axes).length();
                    assert!(r <= 1.0 + 1e-12 && r >= 1.0 - roughness - 1e-12);
                }
                assert_eq!(random_block(&s, seed).unwrap(), block);
            }
            assert_ne!(random_block(&s, 1).unwrap(), random_block(&s, 2).unwrap());
        }
    }

    /// [`random_block`] as it was before it skipped points inside the hull
    /// and bounded its work: one hull per point drawn.
    fn random_block_one_hull_per_point(spec: &RandomBlock, seed: u64) -> Option<ConvexPolyhedron> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let target = rng.random_range(spec.min_vertices..=spec.max_vertices);
        let draw = |rng: &mut ChaCha8Rng| random_point(rng, spec.semi_axes, spec.roughness);
        let mut points: Vec<DVec3> = (0..target).map(|_| draw(&mut rng)).collect();
        for _ in 0..=64 * target + 256 {
            match ConvexPolyhedron::from_points(&points) {
                Ok(block) if block.vertices().len() >= target => return Some(block),
                Ok(_) => points.push(draw(&mut rng)),
                Err(_) => return None,
            }
        }
        None
    }

    #[test]
    fn skipping_points_inside_the_hull_changes_no_block() {
        for (min, max, roughness) in [(4, 12, 0.0), (10, 30, 0.5), (40, 60, 0.2), (20, 40, 0.9)] {
            let s = spec(min, max, roughness);
            for seed in 0..10u64 {
                let old = random_block_one_hull_per_point(&s, seed).unwrap();
                assert_eq!(
                    random_block(&s, seed).unwrap(),
                    old,
                    "{min} {max} {roughness} {seed}"
                );
            }
        }
    }

    #[test]
    fn random_blocks_that_cannot_be_drawn_fail_quickly() {
        // Many vertices on a rough or a flat ellipsoid: the hull keeps too
        // few of the points drawn, and each new point is rarely a corner.
        let rough = spec(2000, 2000, 0.5);
        let flat = RandomBlock {
            semi_axes: DVec3::new(1.0, 1.0, 1e-7),
            ..spec(5000, 5000, 0.0)
        };
        for s in [rough, flat] {
            let start = std::time::Instant::now();
            let e = random_block(&s, 1).unwrap_err();
            assert_eq!(
                e,
                GeometryError::IterationCap {
                    stage: "random block"
                }
            );
            let took = start.elapsed().as_secs_f64();
            assert!(took < 20.0, "gave up after {took} s");
        }
    }

    #[test]
    fn bad_sizes_are_refused() {
        assert!(box_block(DVec3::new(1.0, 0.0, 1.0)).is_err());
        assert_eq!(tetrahedron_block(f64::NAN), Err(GeometryError::NonFinite));
        assert!(octahedron_block(-1.0).is_err());
        assert!(prism_block(2, 1.0, 1.0).is_err());
        assert!(random_block(&spec(3, 10, 0.0), 0).is_err());
        assert!(random_block(&spec(10, 9, 0.0), 0).is_err());
        assert!(random_block(&spec(10, 20, 1.0), 0).is_err());
        let shape = Shape::Prism {
            sides: 6,
            circumradius: 0.5,
            height: 2.0,
        };
        assert_eq!(shape.build().unwrap().vertices().len(), 12);
    }
}
