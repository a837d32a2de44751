//! Optional model inputs: the columns of contact geometry a model asks for
//! beyond the base input (see `talus_sdk::inputs`).
//!
//! Reads a run of resolved contacts (plane, gap, the two ends); writes one
//! column per requested input id, `width` values per contact, in the run's
//! order. Models that ask for nothing cost nothing: the contact pass only
//! comes here for a model with requested inputs.
//! Invariants: the engine provides every id the sdk defines
//! ([`provides`] is true for all of `talus_sdk::inputs::ALL`), so the host
//! can refuse exactly the ids the sdk does not know; vector inputs are in
//! contact-frame components unless the sdk says otherwise; a ball-facet
//! contact treats the facet as its unbounded plane.

use std::f64::consts::PI;

use talus_sdk::abi_stable::std_types::RSlice;
use talus_sdk::{inputs, InputColumn};

use crate::contact::Plane;
use crate::math::Vec3;
use crate::piece::Piece;
use crate::wall::Wall;

/// The geometry of one contact from which every optional input follows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geometry {
    /// Gap (m); negative is overlap.
    pub gap: f64,
    /// Radius of end1 (m).
    pub r1: f64,
    /// Radius of end2 (m), or `None` for a facet (a plane).
    pub r2: Option<f64>,
    /// Reference point of end1: its centroid (m).
    pub x1: Vec3,
    /// Reference point of end2: a ball's centroid, or the wall's reference
    /// point for a facet (m).
    pub x2: Vec3,
    /// Contact location (m).
    pub xc: Vec3,
    /// The contact frame: normal (end1 to end2) and in-plane axes.
    pub frame: [Vec3; 3],
    /// The overlap the kernel found itself (blocks); `None` takes the
    /// volume and area from the radii.
    pub overlap: Option<Overlap>,
    /// [`talus_sdk::inputs::PAIR_RANDOM`] of the pair (the contact pass
    /// sets it; the kernels leave it at one half).
    pub random: [f64; 2],
}

/// What a block kernel finds of an overlap, beyond the contact plane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Overlap {
    /// Overlap volume (m^3).
    pub volume: f64,
    /// Contact area (m^2).
    pub area: f64,
    /// Twist arm of the normal force (m), see
    /// [`talus_sdk::inputs::TWIST_ARM`].
    pub twist_arm: f64,
    /// Gradient of the contact area under a translation and a rotation
    /// (about the contact location) of end2, global axes; `None` where the
    /// kernel does not resolve it.
    pub area_gradient: Option<[Vec3; 2]>,
    /// The contact surface's second moments per unit area about the
    /// location along the frame's in-plane axes, see
    /// [`talus_sdk::inputs::AREA_GYRATION`] (zero while apart).
    pub gyration: [f64; 3],
}

/// Height `h` of a spherical cap and radius `r` of its sphere: volume
/// `pi h^2 (3 r - h) / 3`.
fn cap_volume(h: f64, r: f64) -> f64 {
    PI * h * h * (3.0 * r - h) / 3.0
}

/// Cap heights `(h1, h2)` of two spheres of radii `r1`, `r2` that overlap
/// by `h = r1 + r2 - d > 0` (centre distance `d`), cut by their common
/// plane; `None` when one sphere lies inside the other, where there is no
/// common circle.
///
/// Written in terms of `h` rather than the textbook `x = (d^2 - r2^2 +
/// r1^2) / 2d`, which loses every digit to cancellation at the small
/// overlaps of DEM contacts.
fn cap_heights(r1: f64, r2: f64, h: f64) -> Option<(f64, f64)> {
    let d = r1 + r2 - h;
    if d <= (r1 - r2).abs() {
        return None;
    }
    Some((h * (d + r2 - r1) / (2.0 * d), h * (d + r1 - r2) / (2.0 * d)))
}

/// Overlap volume (m^3) of [`talus_sdk::inputs::OVERLAP_VOLUME`].
///
/// # Model
/// Two spheres: the lens, the sum of the two caps cut by the plane of the
/// intersection circle (the smaller sphere when one holds the other). A
/// sphere and a plane: the cap of height `h = -g` (at most the sphere).
pub fn overlap_volume(r1: f64, r2: Option<f64>, gap: f64) -> f64 {
    // A NaN gap fails this test: no overlap.
    let overlapping = gap < 0.0;
    if !overlapping {
        return 0.0;
    }
    let h = -gap;
    match r2 {
        None => cap_volume(h.min(2.0 * r1), r1),
        Some(r2) => match cap_heights(r1, r2, h) {
            Some((h1, h2)) => cap_volume(h1, r1) + cap_volume(h2, r2),
            None => 4.0 / 3.0 * PI * r1.min(r2).powi(3),
        },
    }
}

/// Radius (m) of the contact disc of [`talus_sdk::inputs::CONTACT_RADIUS`]:
/// the circle where the two surfaces meet; zero when apart or when one
/// sphere lies inside the other.
pub fn contact_radius(r1: f64, r2: Option<f64>, gap: f64) -> f64 {
    let overlapping = gap < 0.0;
    if !overlapping {
        return 0.0;
    }
    let h = -gap;
    // a^2 = h1 (2 r1 - h1) on end1's cap.
    let h1 = match r2 {
        None => h.min(2.0 * r1),
        Some(r2) => match cap_heights(r1, r2, h) {
            Some((h1, _)) => h1,
            None => return 0.0,
        },
    };
    (h1 * (2.0 * r1 - h1)).max(0.0).sqrt()
}

/// Whether input `id` depends on the contact's geometry (every input but
/// [`talus_sdk::inputs::PAIR_RANDOM`], which depends on the pair alone):
/// a model that asks only for pair inputs spares the contact pass the
/// geometry of every contact.
pub fn geometric(id: u32) -> bool {
    id != inputs::PAIR_RANDOM
}

/// Whether the engine computes input `id`.
pub fn provides(id: u32) -> bool {
    matches!(
        id,
        inputs::OVERLAP_VOLUME
            | inputs::CONTACT_AREA
            | inputs::CONTACT_RADIUS
            | inputs::BRANCH_1
            | inputs::BRANCH_2
            | inputs::CONTACT_POINT
            | inputs::TWIST_ARM
            | inputs::AREA_GRADIENT
            | inputs::PAIR_RANDOM
            | inputs::AREA_GYRATION
    )
}

/// Writes the values of input `id` for contact `g` into `out` (its width).
///
/// # Panics
/// If the engine does not provide `id` (the host refuses such models) or
/// `out` has the wrong length.
pub fn write(id: u32, g: &Geometry, out: &mut [f64]) {
    let in_frame = |v: Vec3| g.frame.map(|axis| v.dot(axis));
    match id {
        inputs::OVERLAP_VOLUME => {
            out[0] = match g.overlap {
                Some(o) => o.volume,
                None => overlap_volume(g.r1, g.r2, g.gap),
            }
        }
        inputs::CONTACT_AREA => {
            out[0] = match g.overlap {
                Some(o) => o.area,
                None => PI * contact_radius(g.r1, g.r2, g.gap).powi(2),
            }
        }
        inputs::CONTACT_RADIUS => {
            out[0] = match g.overlap {
                Some(o) => (o.area / PI).sqrt(),
                None => contact_radius(g.r1, g.r2, g.gap),
            }
        }
        inputs::BRANCH_1 => out.copy_from_slice(&in_frame(g.xc - g.x1)),
        inputs::BRANCH_2 => out.copy_from_slice(&in_frame(g.xc - g.x2)),
        inputs::CONTACT_POINT => out.copy_from_slice(&g.xc.to_array()),
        inputs::TWIST_ARM => out[0] = g.overlap.map_or(0.0, |o| o.twist_arm),
        inputs::AREA_GRADIENT => match g.overlap.and_then(|o| o.area_gradient) {
            Some([du, dw]) => {
                out[..3].copy_from_slice(&in_frame(du));
                out[3..].copy_from_slice(&in_frame(dw));
            }
            None => out.fill(f64::NAN),
        },
        inputs::PAIR_RANDOM => out.copy_from_slice(&g.random),
        inputs::AREA_GYRATION => match g.overlap {
            Some(o) => out.copy_from_slice(&o.gyration),
            // The contact disc of radius a: a^2 / 4 about either axis.
            None => {
                let a = contact_radius(g.r1, g.r2, g.gap);
                out.copy_from_slice(&[0.25 * a * a, 0.25 * a * a, 0.0]);
            }
        },
        _ => panic!("the engine does not provide input {}", inputs::name(id)),
    }
}

/// Lays out the columns of inputs `ids` for `n` contacts whose geometry
/// `geometry(i)` gives: fills `values` (cleared first) column after column
/// and returns the columns, borrowing from it. Without `geometry` every
/// value is NaN (a run of contacts none of which has anything to read:
/// see [`talus_sdk::inputs::PAIR_RANDOM`]).
pub fn columns<'v>(
    ids: &[u32],
    n: usize,
    geometry: Option<impl Fn(usize) -> Geometry>,
    values: &'v mut Vec<f64>,
) -> Vec<InputColumn<'v>> {
    let widths: Vec<usize> = ids
        .iter()
        .map(|&id| inputs::width(id).unwrap_or(1) as usize)
        .collect();
    values.clear();
    values.resize(n * widths.iter().sum::<usize>(), f64::NAN);
    if let Some(geometry) = geometry {
        let mut rest = &mut values[..];
        let mut parts = Vec::with_capacity(ids.len());
        for &w in &widths {
            let (part, tail) = rest.split_at_mut(n * w);
            parts.push(part);
            rest = tail;
        }
        for i in 0..n {
            let g = geometry(i);
            for ((&id, &w), part) in ids.iter().zip(&widths).zip(parts.iter_mut()) {
                write(id, &g, &mut part[i * w..(i + 1) * w]);
            }
        }
    }
    let values = &values[..];
    let mut offset = 0;
    ids.iter()
        .zip(&widths)
        .map(|(&id, &w)| {
            let column = InputColumn {
                id,
                width: w as u32,
                values: RSlice::from_slice(&values[offset..offset + n * w]),
            };
            offset += n * w;
            column
        })
        .collect()
}

/// The geometry of a resolved contact of the store: end1 is the ball
/// `a`, end2 the ball or facet `b`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn geometry_of(
    pos: &[Vec3],
    radius: &[f64],
    walls: &[Wall],
    owner: &[(u32, u32)],
    plane: &Plane,
    a: Piece,
    b: Piece,
) -> Geometry {
    let (x2, r2) = if b.is_facet() {
        let (w, _) = owner[b.index()];
        (walls[w as usize].centre, None)
    } else {
        (pos[b.index()], Some(radius[b.index()]))
    };
    Geometry {
        gap: plane.gap,
        r1: radius[a.index()],
        r2,
        x1: pos[a.index()],
        x2,
        xc: plane.xc,
        frame: [plane.n, plane.s, plane.t],
        overlap: None,
        random: [0.5; 2],
    }
}

/// Two unit balls along x at `gap`: the probe of [`probe_geometry_of`].
pub fn probe_geometry(gap: f64) -> Geometry {
    probe_geometry_of(1.0, 1.0, gap)
}

/// The geometry the engine shows a model for its probe contact (see
/// `Simulation::probe_models`): balls of radii `r1` and `r2` along x at
/// `gap`.
pub fn probe_geometry_of(r1: f64, r2: f64, gap: f64) -> Geometry {
    Geometry {
        gap,
        r1,
        r2: Some(r2),
        x1: Vec3::ZERO,
        x2: Vec3::X * (r1 + r2 + gap),
        xc: Vec3::X * (r1 + 0.5 * gap),
        frame: [Vec3::X, Vec3::Y, Vec3::Z],
        overlap: None,
        random: [0.5; 2],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * a.abs().max(b.abs())
    }

    #[test]
    fn the_engine_provides_every_input_the_sdk_defines() {
        // Two balls: every input finite but the area's gradient, which the
        // engine resolves for blocks only (NaN says so).
        for info in inputs::ALL {
            assert!(provides(info.id), "{}", info.name);
            let mut out = vec![f64::NAN; info.width as usize];
            write(info.id, &probe_geometry(-1e-3), &mut out);
            let finite = out.iter().all(|v| v.is_finite());
            assert_eq!(
                finite,
                info.id != inputs::AREA_GRADIENT,
                "{}: {out:?}",
                info.name
            );
        }
        assert!(!provides(0));
        // A block overlap that carries one: in contact-frame components.
        let g = Geometry {
            overlap: Some(Overlap {
                volume: 1.0,
                area: 2.0,
                twist_arm: 0.5,
                area_gradient: Some([Vec3::new(1.0, 2.0, 3.0), Vec3::new(4.0, 5.0, 6.0)]),
                gyration: [0.25, 0.5, -0.125],
            }),
            frame: [Vec3::Y, -Vec3::X, Vec3::Z],
            ..probe_geometry(-1e-3)
        };
        let mut out = [0.0; 6];
        write(inputs::AREA_GRADIENT, &g, &mut out);
        assert_eq!(out, [2.0, -1.0, 3.0, 5.0, -4.0, 6.0]);
        let mut arm = [0.0];
        write(inputs::TWIST_ARM, &g, &mut arm);
        assert_eq!(arm, [0.5]);
        let mut gyration = [0.0; 3];
        write(inputs::AREA_GYRATION, &g, &mut gyration);
        assert_eq!(gyration, [0.25, 0.5, -0.125]);
        // Two balls: the contact disc's a^2 / 4 about either axis.
        let a = contact_radius(1.0, Some(1.0), -1e-3);
        write(inputs::AREA_GYRATION, &probe_geometry(-1e-3), &mut gyration);
        assert_eq!(gyration, [0.25 * a * a, 0.25 * a * a, 0.0]);
    }

    /// Equal spheres: the lens is two equal caps of height h/2, and the
    /// disc radius follows from Pythagoras in the plane through both
    /// centres.
    #[test]
    fn equal_spheres_against_closed_forms() {
        let (r, h) = (2.0, 0.1);
        let v = overlap_volume(r, Some(r), -h);
        assert!(close(
            v,
            2.0 * PI * (h / 2.0).powi(2) * (3.0 * r - h / 2.0) / 3.0,
            1e-14
        ));
        let a = contact_radius(r, Some(r), -h);
        let half = r - h / 2.0;
        assert!(close(a, (r * r - half * half).sqrt(), 1e-14));
    }

    /// Unequal spheres: the lens volume of the textbook formula, and the
    /// disc radius from the height of the triangle of sides d, r1, r2.
    #[test]
    fn unequal_spheres_against_textbook_formulas() {
        let (r1, r2, h) = (1.0, 0.6, 0.3);
        let d: f64 = r1 + r2 - h;
        let lens = PI
            * h
            * h
            * (d * d + 2.0 * d * r2 - 3.0 * r2 * r2 + 2.0 * d * r1 + 6.0 * r1 * r2 - 3.0 * r1 * r1)
            / (12.0 * d);
        assert!(close(overlap_volume(r1, Some(r2), -h), lens, 1e-13));
        let s = (d + r1 + r2) / 2.0;
        let area = (s * (s - d) * (s - r1) * (s - r2)).sqrt();
        assert!(close(
            contact_radius(r1, Some(r2), -h),
            2.0 * area / d,
            1e-13
        ));
        // The caps are symmetric in the ends.
        assert_eq!(
            overlap_volume(r2, Some(r1), -h),
            overlap_volume(r1, Some(r2), -h)
        );
    }

    #[test]
    fn a_small_overlap_keeps_its_digits() {
        // Cap of a ball on a plane: V ~ pi r h^2 and a^2 ~ 2 r h for h << r.
        let (r, h) = (1e-3, 1e-12);
        assert!(close(overlap_volume(r, None, -h), PI * r * h * h, 1e-8));
        assert!(close(
            contact_radius(r, None, -h),
            (2.0 * r * h).sqrt(),
            1e-8
        ));
        // Two equal balls: each cap has height h/2.
        let a = contact_radius(r, Some(r), -h);
        assert!(close(a, (r * h).sqrt(), 1e-8), "{a}");
    }

    #[test]
    fn apart_nested_and_through_cases() {
        for gap in [0.0, 1e-6, f64::NAN] {
            assert_eq!(overlap_volume(1.0, Some(1.0), gap), 0.0);
            assert_eq!(contact_radius(1.0, None, gap), 0.0);
        }
        // A small ball inside a big one: its own volume, no disc.
        let small = 4.0 / 3.0 * PI * 0.1f64.powi(3);
        assert!(close(overlap_volume(1.0, Some(0.1), -1.5), small, 1e-14));
        assert_eq!(contact_radius(0.1, Some(1.0), -1.5), 0.0);
        // A ball through a plane: the whole ball, no disc.
        assert!(close(overlap_volume(0.1, None, -0.5), small, 1e-14));
        assert_eq!(contact_radius(0.1, None, -0.5), 0.0);
        // Half way: a hemisphere and a great circle.
        assert!(close(overlap_volume(0.1, None, -0.1), small / 2.0, 1e-14));
        assert!(close(contact_radius(0.1, None, -0.1), 0.1, 1e-14));
    }

    #[test]
    fn branch_vectors_are_in_contact_frame_components() {
        // A frame turned about z: n = (0, 1, 0), s = (-1, 0, 0), t = z.
        let g = Geometry {
            gap: -0.2,
            r1: 1.0,
            r2: Some(0.5),
            x1: Vec3::new(3.0, 0.0, 0.0),
            x2: Vec3::new(3.0, 1.3, 0.0),
            xc: Vec3::new(3.0, 0.9, 0.25),
            frame: [Vec3::Y, -Vec3::X, Vec3::Z],
            overlap: None,
            random: [0.5; 2],
        };
        let mut b = [0.0; 3];
        write(inputs::BRANCH_1, &g, &mut b);
        assert_eq!(b, [0.9, 0.0, 0.25]);
        write(inputs::BRANCH_2, &g, &mut b);
        assert!(
            close(b[0], -0.4, 1e-15) && b[1] == 0.0 && b[2] == 0.25,
            "{b:?}"
        );
    }

    #[test]
    fn columns_are_laid_out_one_after_the_other() {
        let ids = [inputs::BRANCH_1, inputs::OVERLAP_VOLUME];
        let mut values = Vec::new();
        let cols = columns(
            &ids,
            3,
            Some(|i: usize| probe_geometry(-0.1 * (i + 1) as f64)),
            &mut values,
        );
        assert_eq!(cols.len(), 2);
        assert_eq!(
            (cols[0].id, cols[0].width, cols[0].values.len()),
            (ids[0], 3, 9)
        );
        assert_eq!(
            (cols[1].id, cols[1].width, cols[1].values.len()),
            (ids[1], 1, 3)
        );
        for i in 0..3 {
            let g = probe_geometry(-0.1 * (i + 1) as f64);
            assert_eq!(cols[1].values[i], overlap_volume(1.0, Some(1.0), g.gap));
            assert_eq!(cols[0].values[3 * i], 1.0 + 0.5 * g.gap);
        }
        // Without geometry: the same layout, every value NaN.
        let none: Option<fn(usize) -> Geometry> = None;
        let ids = [inputs::PAIR_RANDOM, inputs::CONTACT_AREA];
        let cols = columns(&ids, 4, none, &mut values);
        assert_eq!(cols[0].values.len(), 8);
        assert_eq!(cols[1].values.len(), 4);
        assert!(cols.iter().all(|c| c.values.iter().all(|v| v.is_nan())));
    }
}
