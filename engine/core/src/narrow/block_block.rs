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
//!   the normal the direction of the area vector of end1's faces inside
//!   end2; potential resolution takes the same normal, puts the location
//!   on the line of action of the overlap volume's gradient and keeps the
//!   twist arm and the area's gradient for the models; in reduced
//!   resolution the plane halfway between the deepest points cuts both
//!   blocks and the location is the centroid of the area the two cuts
//!   share, along the penetration normal.
//!
//! The overlap volume and the contact area the kernel found stay in the
//! contact's cache for the optional model inputs; the area is the size of
//! the vector sum of end1's faces inside end2, the projection of the
//! surface where the blocks press on each other (the face area itself for
//! two faces pressed flat together). In reduced resolution the volume is
//! taken as the cut area times the depth, exact for two faces pressed
//! flat together.

use super::{
    add_block_end, plane_geometry, rigid_image, rigid_motion, Carried, Found, Masses, PairKernel,
    Scene,
};
use crate::block::BlockResolution;
use crate::block::BlockShape;
use crate::contact::{Applied, Plane};
use crate::inputs::{Geometry, Overlap};
use crate::math::Vec3;
use crate::piece::{PairKind, Piece};
use crate::sums::{End, Sums};
use talus_geometry::{
    epa_from_simplex, gjk_distance_from, overlap_polyhedron, reduced_from_penetration, AreaMoments,
    ConvexPolyhedron, EpaOptions, GjkOptions, OverlapCache, OverlapPolyhedron, Posed, Proximity,
    SupportMap,
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
    /// The contact area (m^2). While the contact is bonded nothing
    /// resolves it, and this keeps the area it had when it bonded, which
    /// gives the bond its section (see [`super::bond_radius`]).
    pub(in crate::narrow) const AREA: usize = 8;
    /// The resolution (set at creation): see [`mode_code`].
    pub(in crate::narrow) const MODE: usize = 9;
    /// The normal force's twist arm (m).
    pub(in crate::narrow) const TWIST: usize = 10;
    /// The contact area's gradient under a translation of end2, then under
    /// a rotation of end2 about the location, in end1's frame (6 values;
    /// NaN where not resolved).
    pub(in crate::narrow) const GRADIENT: usize = 11;
    /// The contact surface's moments about end1's centroid, in end1's
    /// frame (10 values, `AreaMoments::to_array`; zero while apart).
    pub(in crate::narrow) const MOMENTS: usize = 17;
    /// Values per contact.
    pub(in crate::narrow) const LEN: usize = 27;
}

/// What a query finds in end1's frame: the normal (end1 to end2), the gap,
/// the location, the overlap volume and the contact area, and in
/// potential resolution the twist arm and the area's gradient (see
/// [`slot`]).
pub(super) struct Local {
    pub(super) n: Vec3,
    pub(super) gap: f64,
    pub(super) xc: Vec3,
    pub(super) volume: f64,
    pub(super) area: f64,
    pub(super) twist: f64,
    pub(super) gradient: Option<[Vec3; 2]>,
    /// With `gradient`, when asked for: the gradients of the area vector's
    /// x, y and z components (each under a translation, then a rotation
    /// about the location).
    pub(super) jacobian: Option<[[Vec3; 2]; 3]>,
    /// The moments of the contact surface (see [`slot::MOMENTS`]).
    pub(super) moments: AreaMoments,
    /// The overlap could not be trusted and the last normal was kept.
    pub(super) fell_back: bool,
}

pub(super) fn vec_at(cache: &[f64], at: usize) -> Vec3 {
    Vec3::new(cache[at], cache[at + 1], cache[at + 2])
}

pub(super) fn set_vec(cache: &mut [f64], at: usize, v: Vec3) {
    cache[at..at + 3].copy_from_slice(&v.to_array());
}

/// End2 of a block contact as seen from end1's frame: a support map that
/// can be moved, and built as a polyhedron when the two overlap.
pub(super) trait Other: SupportMap + Sized {
    /// The same end moved by `by`.
    fn shifted(&self, by: Vec3) -> Self;
    /// The end as a polyhedron (`None` when it cannot be built).
    fn polyhedron(&self) -> Option<ConvexPolyhedron>;
}

impl Other for Posed<'_, ConvexPolyhedron> {
    fn shifted(&self, by: Vec3) -> Self {
        Posed {
            translation: self.translation + by,
            ..*self
        }
    }

    fn polyhedron(&self) -> Option<ConvexPolyhedron> {
        Some(self.shape.transformed(self.rotation, self.translation))
    }
}

/// The pair of rounded blocks in end1's frame: the cores `a` and `b`,
/// rounded by `radii` (seed 001's erode and dilate). The cores' query
/// gives the separation `g` and normal `n`; the rounded surfaces are
/// `g - r1 - r2` apart, between the points `r1` and `r2` off the cores'.
/// Where they overlap, the cores are displaced towards each other by
/// `(r1 + r2) / 2` each along `n`, so that they overlap by as much, and
/// resolved as sharp blocks are; the location is moved back halfway.
/// Without rounding, the sharp query.
pub(super) fn query_rounded<B: Other>(
    a: &ConvexPolyhedron,
    b: &B,
    radii: [f64; 2],
    cache: &mut [f64],
    jacobian: bool,
) -> Option<Local> {
    let s = radii[0] + radii[1];
    if s == 0.0 {
        return query(a, b, cache, jacobian);
    }
    // The cores' separation, keeping the interior point the displaced
    // query left (the cores' own query would clear it when apart).
    let kept = (vec_at(cache, slot::INTERIOR), cache[slot::MARGIN]);
    let core = query(a, b, cache, false)?;
    let gap = core.gap - s;
    if gap > 0.0 {
        return Some(Local {
            gap,
            xc: core.xc + core.n * (0.5 * (radii[0] - radii[1])),
            volume: 0.0,
            area: 0.0,
            twist: 0.0,
            gradient: None,
            jacobian: None,
            moments: AreaMoments::default(),
            ..core
        });
    }
    set_vec(cache, slot::INTERIOR, kept.0);
    cache[slot::MARGIN] = kept.1;
    let n = core.n;
    let l = query(a, &b.shifted(-s * n), cache, jacobian)?;
    Some(Local {
        gap,
        xc: l.xc + n * (0.5 * s),
        ..l
    })
}

/// The pair in end1's frame: end1 `a` at the origin unturned, end2 `b`
/// in that frame, built as a polyhedron only when the two overlap. `None`
/// when a query fails (a support point that is not finite, an iteration
/// cap, no polyhedron): the caller keeps the contact's last plane. With
/// `jacobian` a potential resolution answer also carries the area
/// vector's whole gradient.
pub(super) fn query<B: Other>(
    a: &ConvexPolyhedron,
    b: &B,
    cache: &mut [f64],
    jacobian: bool,
) -> Option<Local> {
    let mode = mode_of(cache);
    let warm = vec_at(cache, slot::NORMAL);
    let simplex = match gjk_distance_from(a, b, warm, GjkOptions::default()).ok()? {
        Proximity::Separated(s) => {
            set_vec(cache, slot::NORMAL, s.normal);
            cache[slot::MARGIN] = 0.0;
            cache[slot::VOLUME] = 0.0;
            cache[slot::AREA] = 0.0;
            cache[slot::TWIST] = 0.0;
            cache[slot::GRADIENT..slot::GRADIENT + 6].fill(f64::NAN);
            cache[slot::MOMENTS..slot::MOMENTS + AreaMoments::LEN].fill(0.0);
            return Some(Local {
                n: s.normal,
                gap: s.distance,
                xc: 0.5 * (s.point_a + s.point_b),
                volume: 0.0,
                area: 0.0,
                twist: 0.0,
                gradient: None,
                jacobian: None,
                moments: AreaMoments::default(),
                fell_back: false,
            });
        }
        Proximity::Overlapping(simplex) => simplex,
        _ => return None,
    };
    let b = b.polyhedron()?;
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
            twist: 0.0,
            gradient: None,
            jacobian: None,
            moments: r.moments,
            fell_back: false,
        }
    };
    let local = match mode {
        BlockResolution::Reduced => reduced(cache),
        BlockResolution::Full | BlockResolution::Potential => {
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
                    Local {
                        gap: -depth,
                        ..pressed(a, &o, pen.normal, mode, jacobian)
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
    cache[slot::TWIST] = local.twist;
    let [du, dw] = local.gradient.unwrap_or([Vec3::NAN; 2]);
    set_vec(cache, slot::GRADIENT, du);
    set_vec(cache, slot::GRADIENT + 3, dw);
    cache[slot::MOMENTS..slot::MOMENTS + AreaMoments::LEN]
        .copy_from_slice(&local.moments.to_array());
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

/// The full or potential resolution answer for a sound overlap `o` of
/// end1 `a`.
///
/// The volume's gradient under a rigid motion of end2 is minus end1's
/// pressed surface (its faces inside end2): the area vector `S` for a
/// translation and its moment `M(c)` about the centroid `c` for a
/// rotation. Both resolutions take the normal `n = S / |S|` and the area
/// `|S|`. Full resolution puts the location at `c`. Potential resolution
/// puts it where a force along `n` whose moment about `c` is `M(c)` up to
/// a twist acts, on the line through `p = c + n x M(c) / |S|`, and keeps
/// the twist arm `M(c) . n / |S|` and the area's gradient about `p` for
/// the models. An overlap with no surface of end1 to speak of (end1
/// nearly inside end2) takes the penetration normal at the centroid.
fn pressed(
    a: &ConvexPolyhedron,
    o: &OverlapPolyhedron,
    penetration_normal: Vec3,
    mode: BlockResolution,
    jacobian: bool,
) -> Local {
    let mut local = Local {
        n: penetration_normal,
        gap: 0.0,
        xc: o.centroid,
        volume: o.volume,
        area: 0.0,
        twist: 0.0,
        gradient: None,
        jacobian: None,
        moments: AreaMoments::default(),
        fell_back: false,
    };
    let enough = |area: f64| area > 1e-12 * a.surface_area();
    if mode != BlockResolution::Potential {
        let (surface, moments) = o.pressed_with_moments(o.centroid);
        let s = surface.area_vector;
        local.area = s.length();
        if enough(local.area) {
            local.n = s / local.area;
            local.moments = moments;
        }
        return local;
    }
    let Some(p) = o.pressed_contact() else {
        return local;
    };
    let area = p.surface.area_vector.length();
    local.area = area;
    if !enough(area) {
        return local;
    }
    let n = p.surface.area_vector / area;
    local.moments = p.moments;
    // The gradient of n . S (linear in n) from the three components'.
    let j = p.jacobian;
    let gradient = [0, 1].map(|m| j[0][m] * n.x + j[1][m] * n.y + j[2][m] * n.z);
    let finite = j.iter().flatten().all(|g| g.is_finite());
    if p.location.is_finite() && finite {
        local.n = n;
        local.xc = p.location;
        local.twist = p.surface.moment.dot(n) / area;
        local.gradient = Some(gradient);
        local.jacobian = jacobian.then_some(j);
    }
    local
}

/// The overlap a contact's cache holds, turned from end1's frame to global
/// axes by end1's pose (orientation `q`, centroid `x1`); the contact
/// surface's moments per unit area about the location of `plane` along
/// its in-plane axes.
pub(super) fn overlap_of(
    cache: &[f64],
    (q, x1): (crate::math::Quat, Vec3),
    plane: &Plane,
) -> Overlap {
    let moments = AreaMoments::from_slice(&cache[slot::MOMENTS..]);
    let gyration = if moments.area > 0.0 {
        let to_local = q.conjugate();
        let j = moments.in_plane(
            to_local * (plane.xc - x1),
            to_local * plane.s,
            to_local * plane.t,
        );
        j.map(|v| v / moments.area)
    } else {
        [0.0; 3]
    };
    let (du, dw) = (
        vec_at(cache, slot::GRADIENT),
        vec_at(cache, slot::GRADIENT + 3),
    );
    Overlap {
        volume: cache[slot::VOLUME],
        area: cache[slot::AREA],
        twist_arm: cache[slot::TWIST],
        area_gradient: (du.is_finite() && dw.is_finite()).then(|| [q * du, q * dw]),
        gyration,
    }
}

/// The radius of each end in the model input of a bonded block contact:
/// that of the disc of the contact's area `A` when it bonded,
/// `sqrt(A / pi)`, for both ends (zero where the blocks did not overlap,
/// and then no bond forms).
pub(super) fn bond_radius(cache: &[f64]) -> [f64; 2] {
    let r = (cache[slot::AREA].max(0.0) / std::f64::consts::PI).sqrt();
    [r, r]
}

/// Readies a bonded contact's cache for the resolution that follows the
/// bond's break: the search starts along the carried normal `n` (world
/// axes; `q` is end1's orientation), and no interior point is kept (the
/// one of the bonding step may lie outside the blocks by then).
pub(super) fn hold_warm_start(cache: &mut [f64], q: crate::math::Quat, n: Vec3) {
    set_vec(cache, slot::NORMAL, q.conjugate() * n);
    cache[slot::MARGIN] = 0.0;
}

/// The code of a resolution in a contact's cache.
pub(super) fn mode_code(resolution: BlockResolution) -> f64 {
    match resolution {
        BlockResolution::Full => 0.0,
        BlockResolution::Reduced => 1.0,
        BlockResolution::Potential => 2.0,
    }
}

/// The resolution a contact's cache was marked with.
pub(super) fn mode_of(cache: &[f64]) -> BlockResolution {
    match cache[slot::MODE] {
        1.0 => BlockResolution::Reduced,
        2.0 => BlockResolution::Potential,
        _ => BlockResolution::Full,
    }
}

/// Marks a new contact's cache with the resolution of its pair of groups.
pub(super) fn init(cache: &mut [f64], resolution: BlockResolution) {
    cache[slot::MODE] = mode_code(resolution);
    cache[slot::GRADIENT..slot::GRADIENT + 6].fill(f64::NAN);
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

/// The plane of the contact between blocks `i` and `j` in world axes
/// (normal, gap, location), `j`'s centroid at `cb` (its image nearest
/// `i`), or `None` when the query failed.
#[inline]
fn resolve(
    scene: &Scene<'_>,
    cache: &mut [f64],
    i: usize,
    j: usize,
    cb: Vec3,
) -> Option<(Vec3, f64, Vec3)> {
    let k = &scene.blocks;
    let (sa, sb): (&BlockShape, &BlockShape) = (
        &k.shapes[k.shape[i] as usize],
        &k.shapes[k.shape[j] as usize],
    );
    let (qa, ca) = (k.orientation[i], k.pos[i]);
    let qb = k.orientation[j];
    let to_a = qa.conjugate();
    let (rotation, translation) = (to_a * qb, to_a * (cb - ca));
    let posed = Posed {
        shape: &sb.polyhedron,
        rotation,
        translation,
    };
    let radii = [sa.rounding, sb.rounding];
    let Some(l) = query_rounded(&sa.polyhedron, &posed, radii, cache, false) else {
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
    const SURFACE: bool = true;

    fn init(cache: &mut [f64], resolution: BlockResolution) {
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
        // In a periodic cell, end2's image nearest to end1.
        let (ca, cb) = (k.pos[i], rigid_image(scene, k.pos[i], j));
        if released {
            // Bounding spheres still apart: nothing changes for the model.
            let reach = k.shapes[k.shape[i] as usize].radius + k.shapes[k.shape[j] as usize].radius;
            if (cb - ca).length_squared() > reach * reach {
                return None;
            }
        }
        // A failed query keeps the last plane (never a NaN force).
        let (n, gap, xc) =
            resolve(scene, cache, i, j, cb).unwrap_or((plane.n, plane.gap, plane.xc));
        if released && gap > 0.0 {
            return None;
        }
        Some(Found {
            n,
            gap,
            xc,
            end1: rigid_motion(scene, i, ca),
            end2: rigid_motion(scene, j, cb),
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
        let x1 = scene.blocks.pos[a.index()];
        let x2 = rigid_image(scene, x1, b.index());
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
        let x1 = k.pos[a.index()];
        Geometry {
            overlap: Some(overlap_of(cache, (k.orientation[a.index()], x1), plane)),
            ..plane_geometry(plane, 0.0, None, x1, rigid_image(scene, x1, b.index()))
        }
    }

    fn refresh(scene: &Scene<'_>, plane: &mut Plane, cache: &mut [f64], a: Piece, b: Piece) {
        let (i, j) = (a.index(), b.index());
        let cb = rigid_image(scene, scene.blocks.pos[i], j);
        if let Some((n, gap, xc)) = resolve(scene, cache, i, j, cb) {
            (plane.n, plane.gap, plane.xc) = (n, gap, xc);
        }
    }

    fn effective_mass(masses: &Masses<'_>, a: Piece, b: Piece) -> f64 {
        let (ma, mb) = (masses.blocks[a.index()], masses.blocks[b.index()]);
        ma * mb / (ma + mb)
    }

    const CARRIES_BONDS: bool = true;

    #[inline(always)]
    fn carried(
        scene: &Scene<'_>,
        plane: &Plane,
        cache: &mut [f64],
        a: Piece,
        b: Piece,
    ) -> Option<Carried> {
        let k = &scene.blocks;
        let (i, j) = (a.index(), b.index());
        hold_warm_start(cache, k.orientation[i], plane.n);
        let (ca, cb) = (k.pos[i], rigid_image(scene, k.pos[i], j));
        Some(Carried {
            end1: rigid_motion(scene, i, ca),
            end2: rigid_motion(scene, j, cb),
            radius: bond_radius(cache),
        })
    }

    #[inline(always)]
    fn bond_radius(cache: &[f64], _radius: [f64; 2]) -> [f64; 2] {
        bond_radius(cache)
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
            twist: 0.0,
            gradient: None,
            jacobian: None,
            moments: AreaMoments::default(),
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
