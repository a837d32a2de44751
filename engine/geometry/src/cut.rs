//! Plane cuts: sections, splitting a block in two, and the reduced contact
//! resolution (the contact plane halfway between the deepest points).
//!
//! Reads: a [`ConvexPolyhedron`] and a [`Plane`]. Writes: the section
//! polygon (ordered, counter-clockwise about the plane normal), the two
//! pieces, or a [`ReducedContact`].
//! Invariant: section vertices lie on the plane; the piece below holds the
//! block's part with `signed_distance <= 0`, the piece above the rest; a
//! piece thinner than the hull tolerance is reported as absent.

use glam::{DVec2, DVec3};

use crate::area_moments::AreaMoments;
use crate::epa::{epa_penetration, Penetration};
use crate::error::GeometryError;
use crate::polyhedron::{ConvexPolyhedron, Plane};

/// A planar convex polygon: the cut of a block by a plane.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// Corners, counter-clockwise about `normal` (m).
    pub polygon: Vec<DVec3>,
    /// Unit normal of the cutting plane.
    pub normal: DVec3,
    /// Area (m^2).
    pub area: f64,
    /// Centroid of the area (m).
    pub centroid: DVec3,
}

/// An orthonormal frame of a plane, for 2D work inside it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PlaneFrame {
    pub origin: DVec3,
    pub u: DVec3,
    pub v: DVec3,
    pub n: DVec3,
}

impl PlaneFrame {
    pub fn new(plane: &Plane) -> Self {
        let n = plane.normal;
        let u = n.any_orthonormal_vector();
        let v = n.cross(u);
        Self {
            origin: n * plane.offset,
            u,
            v,
            n,
        }
    }
    #[inline]
    pub fn to_2d(self, p: DVec3) -> DVec2 {
        let r = p - self.origin;
        DVec2::new(r.dot(self.u), r.dot(self.v))
    }
    #[inline]
    pub fn to_3d(self, p: DVec2) -> DVec3 {
        self.origin + self.u * p.x + self.v * p.y
    }
}

/// Points where the block surface meets the plane (edge crossings and
/// vertices on the plane), in 2D plane coordinates.
fn section_points(poly: &ConvexPolyhedron, plane: &Plane, frame: &PlaneFrame) -> Vec<DVec2> {
    let tol = poly.tolerance();
    let s: Vec<f64> = poly
        .vertices()
        .iter()
        .map(|&v| plane.signed_distance(v))
        .collect();
    let mut pts = Vec::new();
    for (i, &v) in poly.vertices().iter().enumerate() {
        if s[i].abs() <= tol {
            pts.push(frame.to_2d(v - plane.normal * s[i]));
        }
    }
    for e in poly.edges() {
        let [i, j] = [e.vertices[0] as usize, e.vertices[1] as usize];
        if (s[i] < -tol && s[j] > tol) || (s[i] > tol && s[j] < -tol) {
            let t = s[i] / (s[i] - s[j]);
            let p = poly.vertices()[i].lerp(poly.vertices()[j], t);
            pts.push(frame.to_2d(p));
        }
    }
    pts
}

/// The cut of `poly` by `plane`, or `None` when the plane misses the block
/// or only touches it.
pub fn section(poly: &ConvexPolyhedron, plane: &Plane) -> Option<Section> {
    let frame = PlaneFrame::new(plane);
    let pts = section_points(poly, plane, &frame);
    let polygon = convex_hull_2d(pts);
    section_from_2d(&frame, &polygon)
}

fn section_from_2d(frame: &PlaneFrame, polygon: &[DVec2]) -> Option<Section> {
    let (area, c) = area_centroid_2d(polygon);
    if polygon.len() < 3 || area <= 0.0 {
        return None;
    }
    Some(Section {
        polygon: polygon.iter().map(|&p| frame.to_3d(p)).collect(),
        normal: frame.n,
        area,
        centroid: frame.to_3d(c),
    })
}

/// Andrew's monotone chain: counter-clockwise hull without collinear points.
pub(crate) fn convex_hull_2d(mut pts: Vec<DVec2>) -> Vec<DVec2> {
    pts.retain(|p| p.is_finite());
    pts.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    pts.dedup();
    if pts.len() < 3 {
        return pts;
    }
    let cross = |o: DVec2, a: DVec2, b: DVec2| (a - o).perp_dot(b - o);
    let mut hull: Vec<DVec2> = Vec::with_capacity(2 * pts.len());
    for pass in 0..2 {
        let start = hull.len();
        let iter: Box<dyn Iterator<Item = &DVec2>> = if pass == 0 {
            Box::new(pts.iter())
        } else {
            Box::new(pts.iter().rev())
        };
        for &p in iter {
            while hull.len() >= start + 2
                && cross(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0
            {
                hull.pop();
            }
            hull.push(p);
        }
        hull.pop();
    }
    hull
}

/// Area and centroid of a counter-clockwise 2D polygon.
pub(crate) fn area_centroid_2d(polygon: &[DVec2]) -> (f64, DVec2) {
    if polygon.len() < 3 {
        return (0.0, polygon.first().copied().unwrap_or(DVec2::ZERO));
    }
    let o = polygon[0];
    let mut area2 = 0.0;
    let mut c = DVec2::ZERO;
    for i in 1..polygon.len() - 1 {
        let (a, b) = (polygon[i] - o, polygon[i + 1] - o);
        let t = a.perp_dot(b);
        area2 += t;
        c += (a + b) * t;
    }
    if area2 == 0.0 {
        return (0.0, o);
    }
    (0.5 * area2, o + c / (3.0 * area2))
}

/// Clips the convex counter-clockwise polygon `p` by the convex
/// counter-clockwise polygon `clip` (Sutherland–Hodgman).
pub(crate) fn clip_convex_2d(p: &[DVec2], clip: &[DVec2]) -> Vec<DVec2> {
    let mut out: Vec<DVec2> = p.to_vec();
    for i in 0..clip.len() {
        if out.is_empty() {
            break;
        }
        let (a, b) = (clip[i], clip[(i + 1) % clip.len()]);
        let side = |x: DVec2| (b - a).perp_dot(x - a);
        let input = std::mem::take(&mut out);
        for j in 0..input.len() {
            let (c, d) = (input[j], input[(j + 1) % input.len()]);
            let (sc, sd) = (side(c), side(d));
            if sc >= 0.0 {
                out.push(c);
            }
            if (sc >= 0.0) != (sd >= 0.0) {
                out.push(c + (d - c) * (sc / (sc - sd)));
            }
        }
    }
    out
}

/// The two pieces of a block cut by a plane, and the section between them.
#[derive(Debug, Clone, PartialEq)]
pub struct PlaneCut {
    /// The part on the inner side of the plane (`signed_distance <= 0`).
    pub below: Option<ConvexPolyhedron>,
    /// The part on the outer side.
    pub above: Option<ConvexPolyhedron>,
    /// The cut face shared by the two parts.
    pub section: Option<Section>,
}

/// Cuts `poly` by `plane` into two convex blocks.
pub fn cut_polyhedron(poly: &ConvexPolyhedron, plane: &Plane) -> PlaneCut {
    let frame = PlaneFrame::new(plane);
    let crossing: Vec<DVec3> = section_points(poly, plane, &frame)
        .into_iter()
        .map(|p| frame.to_3d(p))
        .collect();
    let tol = poly.tolerance();
    let mut below = crossing.clone();
    let mut above = crossing;
    for &v in poly.vertices() {
        let s = plane.signed_distance(v);
        if s < -tol {
            below.push(v);
        } else if s > tol {
            above.push(v);
        }
    }
    PlaneCut {
        below: ConvexPolyhedron::from_points(&below).ok(),
        above: ConvexPolyhedron::from_points(&above).ok(),
        section: section(poly, plane),
    }
}

/// Reduced-resolution contact of two blocks (PFC's reduced mode).
#[derive(Debug, Clone, PartialEq)]
pub struct ReducedContact {
    /// EPA penetration the plane is built from.
    pub penetration: Penetration,
    /// The contact plane, halfway between the deepest points, with its
    /// normal from A (end1) to B (end2).
    pub plane: Plane,
    /// Contact location: centroid of the common area of the two cuts, or the
    /// midpoint of the deepest points when that area is empty (m).
    pub location: DVec3,
    /// Area common to both cuts (m^2).
    pub area: f64,
    /// The moments of that common area (in the frame of A and B).
    pub moments: AreaMoments,
}

/// Reduced contact resolution of blocks A (end1) and B (end2).
///
/// # Errors
/// [`GeometryError::NotOverlapping`] and the EPA errors.
pub fn contact_rblock_rblock_reduced(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
) -> Result<ReducedContact, GeometryError> {
    let penetration = epa_penetration(a, b)?;
    Ok(reduced_from_penetration(a, b, penetration))
}

/// As [`contact_rblock_rblock_reduced`], from an already known penetration.
pub fn reduced_from_penetration(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
    penetration: Penetration,
) -> ReducedContact {
    let mid = 0.5 * (penetration.point_a + penetration.point_b);
    let plane = Plane::from_point_normal(mid, penetration.normal);
    let frame = PlaneFrame::new(&plane);
    let pa = convex_hull_2d(section_points(a, &plane, &frame));
    let pb = convex_hull_2d(section_points(b, &plane, &frame));
    let common = if pa.len() >= 3 && pb.len() >= 3 {
        clip_convex_2d(&pa, &pb)
    } else {
        Vec::new()
    };
    let (area, c) = area_centroid_2d(&common);
    let location = if area > 0.0 { frame.to_3d(c) } else { mid };
    let mut moments = AreaMoments::default();
    if area > 0.0 {
        moments.add_polygon(common.iter().map(|&p| frame.to_3d(p)), 1.0);
    }
    ReducedContact {
        penetration,
        plane,
        location,
        area: area.max(0.0),
        moments,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DQuat;

    #[test]
    fn cube_cut_in_half() {
        let c = ConvexPolyhedron::cuboid(DVec3::ONE).unwrap();
        let plane = Plane::from_point_normal(DVec3::new(0.0, 0.0, 0.5), DVec3::Z);
        let cut = cut_polyhedron(&c, &plane);
        assert!((cut.below.unwrap().volume() - 6.0).abs() < 1e-12);
        assert!((cut.above.unwrap().volume() - 2.0).abs() < 1e-12);
        let s = cut.section.unwrap();
        assert!((s.area - 4.0).abs() < 1e-12);
        assert!((s.centroid - DVec3::new(0.0, 0.0, 0.5)).length() < 1e-12);
        let miss = Plane::from_point_normal(DVec3::new(0.0, 0.0, 2.0), DVec3::Z);
        assert!(cut_polyhedron(&c, &miss).above.is_none());
    }

    #[test]
    fn reduced_contact_of_offset_boxes() {
        let a = ConvexPolyhedron::cuboid(DVec3::ONE).unwrap();
        let b = a.transformed(DQuat::IDENTITY, DVec3::new(1.8, 0.5, 0.0));
        let r = contact_rblock_rblock_reduced(&a, &b).unwrap();
        assert!((r.plane.normal - DVec3::X).length() < 1e-12);
        assert!((r.plane.offset - 0.9).abs() < 1e-12);
        assert!((r.area - 3.0).abs() < 1e-12);
        assert!((r.location - DVec3::new(0.9, 0.25, 0.0)).length() < 1e-12);
        // The common area is 1.5 m along y by 2 m along z.
        let [iyy, izz, iyz] = r.moments.in_plane(r.location, DVec3::Y, DVec3::Z);
        assert!((iyy - 2.0 * 1.5f64.powi(3) / 12.0).abs() < 1e-12, "{iyy}");
        assert!((izz - 1.5 * 8.0 / 12.0).abs() < 1e-12, "{izz}");
        assert!(iyz.abs() < 1e-12);
    }
}
