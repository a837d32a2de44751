//! The block-block kernel. Each query works in end1's principal frame,
//! with end2 placed relative to it, so that only an overlapping pair pays
//! for a copy of a polyhedron (end2's, moved into that frame).
//!
//! - Apart: GJK, started along the contact's last normal (the warm start
//!   coherent pairs converge from in one or two support queries); the gap
//!   is the distance, the location halfway between the closest points.
//! - Overlapping: EPA from GJK's final simplex gives the depth (the gap is
//!   minus the depth) and the penetration normal. In full resolution the
//!   location is the centroid of the overlap polyhedron (half-space
//!   duality, started from the last centroid when it is still inside) and
//!   the normal that of the plane fitted to the line where the surfaces
//!   cross; in reduced resolution the plane halfway between the deepest
//!   points cuts both blocks and the location is the centroid of the area
//!   the two cuts share, along the penetration normal.
//!
//! The overlap volume and the contact area the kernel found stay in the
//! contact's cache for the optional model inputs; the area is the size of
//! the vector sum of end1's faces inside end2, the projection of the
//! surface where the blocks press on each other (the face area itself for
//! two faces pressed flat together). In reduced resolution the volume is
//! taken as the cut area times the depth, exact for two faces pressed
//! flat together.

use super::{add_block_end, plane_geometry, Found, Masses, PairKernel, Scene};
use crate::block::BlockShape;
use crate::contact::{Applied, Plane};
use crate::inputs::Geometry;
use crate::math::Vec3;
use crate::piece::{PairKind, Piece};
use crate::sums::{End, Sums};
use crate::wall::Resolution;
use talus_geometry::{
    epa_from_simplex, gjk_distance_from, overlap_polyhedron, reduced_from_penetration,
    ConvexPolyhedron, EpaOptions, GjkOptions, OverlapCache, Posed, Proximity, SupportMap,
};
use talus_sdk::ContactOutput;

/// Two blocks, the lower-numbered one end1.
pub(crate) struct BlockBlock;

/// Where each value sits in a block-block contact's cache (the first
/// [`slot::LEN`] values of a block-facet contact's too).
pub(super) mod slot {
    /// The last normal, in end1's frame (3 values).
    pub(in crate::narrow) const NORMAL: usize = 0;
    /// The last overlap centroid, in end1's frame (3 values).
    pub(in crate::narrow) const INTERIOR: usize = 3;
    /// How far that centroid lay inside both blocks (0: none kept).
    pub(in crate::narrow) const MARGIN: usize = 6;
    /// The overlap volume (m^3).
    pub(in crate::narrow) const VOLUME: usize = 7;
    /// The contact area (m^2).
    pub(in crate::narrow) const AREA: usize = 8;
    /// The resolution: 1 reduced, 0 full (set at creation).
    pub(in crate::narrow) const REDUCED: usize = 9;
    /// Values per contact.
    pub(in crate::narrow) const LEN: usize = 10;
}

/// What a query finds in end1's frame: the normal (end1 to end2), the gap,
/// the location, the overlap volume and the contact area.
pub(super) struct Local {
    pub(super) n: Vec3,
    pub(super) gap: f64,
    pub(super) xc: Vec3,
    pub(super) volume: f64,
    pub(super) area: f64,
    /// The overlap could not be trusted and the last normal was kept.
    pub(super) fell_back: bool,
}

pub(super) fn vec_at(cache: &[f64], at: usize) -> Vec3 {
    Vec3::new(cache[at], cache[at + 1], cache[at + 2])
}

pub(super) fn set_vec(cache: &mut [f64], at: usize, v: Vec3) {
    cache[at..at + 3].copy_from_slice(&v.to_array());
}

/// The pair in end1's frame: end1 `a` at the origin unturned, end2 given
/// by its support map `b` in that frame and built as a polyhedron by
/// `build_b` only when the two overlap. `None` when a query fails (a
/// support point that is not finite, an iteration cap, no polyhedron):
/// the caller keeps the contact's last plane.
pub(super) fn query<S: SupportMap>(
    a: &ConvexPolyhedron,
    b: &S,
    build_b: impl FnOnce() -> Option<ConvexPolyhedron>,
    cache: &mut [f64],
) -> Option<Local> {
    let mode = if cache[slot::REDUCED] == 1.0 {
        Resolution::Reduced
    } else {
        Resolution::Full
    };
    let warm = vec_at(cache, slot::NORMAL);
    let simplex = match gjk_distance_from(a, b, warm, GjkOptions::default()).ok()? {
        Proximity::Separated(s) => {
            set_vec(cache, slot::NORMAL, s.normal);
            cache[slot::MARGIN] = 0.0;
            cache[slot::VOLUME] = 0.0;
            cache[slot::AREA] = 0.0;
            return Some(Local {
                n: s.normal,
                gap: s.distance,
                xc: 0.5 * (s.point_a + s.point_b),
                volume: 0.0,
                area: 0.0,
                fell_back: false,
            });
        }
        Proximity::Overlapping(simplex) => simplex,
        _ => return None,
    };
    let b = build_b()?;
    let pen = epa_from_simplex(a, &b, &simplex, EpaOptions::default()).ok()?;
    let depth = pen.depth.max(0.0);
    let reduced = |cache: &mut [f64]| {
        let r = reduced_from_penetration(a, &b, pen);
        cache[slot::MARGIN] = 0.0;
        Local {
            n: pen.normal,
            gap: -depth,
            xc: r.location,
            volume: r.area * depth,
            area: r.area,
            fell_back: false,
        }
    };
    let local = match mode {
        Resolution::Reduced => reduced(cache),
        Resolution::Full => {
            let mut oc = OverlapCache {
                interior: (cache[slot::MARGIN] > 0.0).then(|| vec_at(cache, slot::INTERIOR)),
                margin: cache[slot::MARGIN],
                ..Default::default()
            };
            match overlap_polyhedron(a, &b, &mut oc) {
                Ok(o) if !o.thin && sound(a, &b, o.volume, o.centroid) => {
                    match oc.interior {
                        Some(x) => {
                            set_vec(cache, slot::INTERIOR, x);
                            cache[slot::MARGIN] = oc.margin;
                        }
                        None => cache[slot::MARGIN] = 0.0,
                    }
                    // end1's faces inside end2, as one area vector.
                    let mut s = Vec3::ZERO;
                    for f in o.faces() {
                        if f.end == talus_geometry::End::End1 {
                            s += f.plane.normal * polygon_area(&o.vertices, &f.corners).length();
                        }
                    }
                    // The normal: the area vector's direction (the
                    // gradient of the overlap volume under a translation
                    // of end2), or the penetration normal for an overlap
                    // with no surface of end1 to speak of.
                    let area = s.length();
                    let n = if area > 1e-12 * a.surface_area() {
                        s / area
                    } else {
                        pen.normal
                    };
                    Local {
                        n,
                        gap: -depth,
                        xc: o.centroid,
                        volume: o.volume,
                        area,
                        fell_back: false,
                    }
                }
                // Too thin for a polyhedron of its own: the reduced answer.
                Ok(o) if o.thin => reduced(cache),
                // Not one the blocks can hold, or no polyhedron at all:
                // the reduced location along the last normal (when there
                // is one), so that a bad step cannot turn the force.
                _ => {
                    let last = vec_at(cache, slot::NORMAL);
                    fall_back(reduced(cache), last)
                }
            }
        }
    };
    set_vec(cache, slot::NORMAL, local.n);
    cache[slot::VOLUME] = local.volume;
    cache[slot::AREA] = local.area;
    Some(local)
}

/// The reduced answer `r` along the contact's `last` normal (when it has
/// one), marked as a fallback.
fn fall_back(r: Local, last: Vec3) -> Local {
    Local {
        n: if last == Vec3::ZERO { r.n } else { last },
        fell_back: true,
        ..r
    }
}

/// Marks a new contact's cache with the resolution of its pair of groups.
pub(super) fn init(cache: &mut [f64], resolution: Resolution) {
    cache[slot::REDUCED] = f64::from(u8::from(resolution == Resolution::Reduced));
}

/// Whether an overlap of `volume` at `centroid` is one the two blocks can
/// hold: finite, no larger than either block, its centroid inside both.
fn sound(a: &ConvexPolyhedron, b: &ConvexPolyhedron, volume: f64, centroid: Vec3) -> bool {
    let tol = a.tolerance().max(b.tolerance());
    volume.is_finite()
        && volume <= a.volume().min(b.volume()) * (1.0 + 1e-9)
        && centroid.is_finite()
        && a.contains(centroid, tol)
        && b.contains(centroid, tol)
}

/// The area vector (area times unit normal, by the corners' turn) of the
/// planar polygon `corners` of `vertices`.
fn polygon_area(vertices: &[Vec3], corners: &[u32]) -> Vec3 {
    let Some(&first) = corners.first() else {
        return Vec3::ZERO;
    };
    let o = vertices[first as usize];
    let mut s = Vec3::ZERO;
    for w in corners[1..].windows(2) {
        s += (vertices[w[0] as usize] - o).cross(vertices[w[1] as usize] - o);
    }
    0.5 * s
}

/// The plane of the contact between blocks `i` and `j` in world axes
/// (normal, gap, location), or `None` when the query failed.
#[inline]
fn resolve(scene: &Scene<'_>, cache: &mut [f64], i: usize, j: usize) -> Option<(Vec3, f64, Vec3)> {
    let k = &scene.blocks;
    let (sa, sb): (&BlockShape, &BlockShape) = (
        &k.shapes[k.shape[i] as usize],
        &k.shapes[k.shape[j] as usize],
    );
    let (qa, ca) = (k.orientation[i], k.pos[i]);
    let (qb, cb) = (k.orientation[j], k.pos[j]);
    let to_a = qa.conjugate();
    let (rotation, translation) = (to_a * qb, to_a * (cb - ca));
    let posed = Posed {
        shape: &sb.polyhedron,
        rotation,
        translation,
    };
    let build = || Some(sb.polyhedron.transformed(rotation, translation));
    let Some(l) = query(&sa.polyhedron, &posed, build, cache) else {
        k.guard
            .note(k.step, Piece::block(i as u32), Piece::block(j as u32));
        return None;
    };
    if l.fell_back {
        k.guard
            .note(k.step, Piece::block(i as u32), Piece::block(j as u32));
    }
    Some((qa * l.n, l.gap, qa * l.xc + ca))
}

impl PairKernel for BlockBlock {
    const PAIR: PairKind = PairKind::BlockBlock;
    const CACHE: usize = slot::LEN;

    fn init(cache: &mut [f64], resolution: Resolution) {
        init(cache, resolution);
    }

    #[inline(always)]
    fn find(
        scene: &Scene<'_>,
        plane: &mut Plane,
        cache: &mut [f64],
        a: Piece,
        b: Piece,
        released: bool,
    ) -> Option<Found> {
        let (i, j) = (a.index(), b.index());
        let k = &scene.blocks;
        if released {
            // Bounding spheres still apart: nothing changes for the model.
            let reach = k.shapes[k.shape[i] as usize].radius + k.shapes[k.shape[j] as usize].radius;
            if (k.pos[j] - k.pos[i]).length_squared() > reach * reach {
                return None;
            }
        }
        // A failed query keeps the last plane (never a NaN force).
        let (n, gap, xc) = resolve(scene, cache, i, j).unwrap_or((plane.n, plane.gap, plane.xc));
        if released && gap > 0.0 {
            return None;
        }
        Some(Found {
            n,
            gap,
            xc,
            end1: k.motion(i),
            end2: k.motion(j),
            region: 0,
            radius: [0.0, 0.0],
        })
    }

    #[inline(always)]
    fn lever(
        scene: &Scene<'_>,
        p: &Plane,
        _o: &ContactOutput,
        f: Vec3,
        a: Piece,
        b: Piece,
    ) -> (Vec3, Vec3) {
        let k = &scene.blocks;
        let (x1, x2) = (k.pos[a.index()], k.pos[b.index()]);
        ((p.xc - x1).cross(f), (p.xc - x2).cross(f))
    }

    #[inline(always)]
    fn add_end1(sums: &mut Sums<'_>, a: Piece, ap: &Applied) {
        add_block_end(sums, a, End::One, ap);
    }

    #[inline(always)]
    fn add_end2(sums: &mut Sums<'_>, _scene: &Scene<'_>, b: Piece, ap: &Applied, _carry: u8) {
        add_block_end(sums, b, End::Two, ap);
    }

    fn geometry(scene: &Scene<'_>, plane: &Plane, cache: &[f64], a: Piece, b: Piece) -> Geometry {
        let k = &scene.blocks;
        Geometry {
            overlap: Some([cache[slot::VOLUME], cache[slot::AREA]]),
            ..plane_geometry(plane, 0.0, None, k.pos[a.index()], k.pos[b.index()])
        }
    }

    fn refresh(scene: &Scene<'_>, plane: &mut Plane, cache: &mut [f64], a: Piece, b: Piece) {
        if let Some((n, gap, xc)) = resolve(scene, cache, a.index(), b.index()) {
            (plane.n, plane.gap, plane.xc) = (n, gap, xc);
        }
    }

    fn effective_mass(masses: &Masses<'_>, a: Piece, b: Piece) -> f64 {
        let (ma, mb) = (masses.blocks[a.index()], masses.blocks[b.index()]);
        ma * mb / (ma + mb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::narrow::GuardLog;
    use talus_geometry::box_block;

    #[test]
    fn an_overlap_the_blocks_cannot_hold_is_not_sound() {
        let a = box_block(Vec3::new(1.0, 1.0, 1.0)).unwrap();
        let b = box_block(Vec3::new(2.0, 2.0, 0.5)).unwrap();
        assert!(sound(&a, &b, 0.9, Vec3::ZERO));
        // Larger than the smaller block (1 m^3), not finite, outside one.
        assert!(!sound(&a, &b, 1.0 + 1e-6, Vec3::ZERO));
        assert!(!sound(&a, &b, f64::NAN, Vec3::ZERO));
        assert!(!sound(&a, &b, 0.1, Vec3::new(0.0, 0.0, 0.4)));
        assert!(!sound(&a, &b, 0.1, Vec3::new(f64::NAN, 0.0, 0.0)));
    }

    #[test]
    fn a_fallback_keeps_the_last_normal_when_there_is_one() {
        let r = Local {
            n: Vec3::X,
            gap: -0.1,
            xc: Vec3::Y,
            volume: 0.2,
            area: 0.3,
            fell_back: false,
        };
        let kept = fall_back(r, Vec3::Z);
        assert_eq!((kept.n, kept.gap, kept.xc), (Vec3::Z, -0.1, Vec3::Y));
        assert!(kept.fell_back);
        let r = Local {
            fell_back: false,
            ..kept
        };
        assert_eq!(fall_back(r, Vec3::ZERO).n, Vec3::Z);
    }

    #[test]
    fn the_guard_log_reports_the_first_fallback_whatever_the_order() {
        let notes = [
            (7, Piece::block(3), Piece::block(4)),
            (5, Piece::block(9), Piece::block(11)),
            (5, Piece::block(2), Piece::block(8)),
            (6, Piece::block(0), Piece::block(1)),
        ];
        for order in [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1]] {
            let log = GuardLog::new();
            for k in order {
                let (s, a, b) = notes[k];
                log.note(s, a, b);
            }
            assert_eq!(log.read(), (4, Some(notes[2])));
        }
    }
}
