//! Convex bodies of shapes that plugins add: the shape seen by the core.
//!
//! A shape plugin describes a convex solid by its support function, its
//! mass properties and, optionally, an exact closest point (see the sdk's
//! `shape` module). The core does not load plugins: the CLI adapts a
//! registered shape with its property values to [`ConvexShape`], and the
//! core keeps it in a [`BlockShape`] of the shape table. Such a body is a
//! rigid body of the block archetype (pose, half-step angular momentum,
//! principal inertia, law of motion, timestep and output are those of
//! blocks) whose piece is of kind convex, so its contacts are resolved by
//! the convex kernels (`narrow/convex*.rs`) from the support function
//! rather than by the polyhedral ones.
//!
//! Invariant: a shape's queries come in its own frame; [`ConvexGeometry`]
//! holds the rotation and the centroid that take the principal frame of
//! the body there, and `Posed` the whole map from world axes.

use crate::block::BlockShape;
use crate::error::SetupError;
use crate::math::{Quat, Vec3};
use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;
use talus_geometry::{symmetric_eigen, ConvexPolyhedron, SupportMap};

/// The surface point of a shape nearest to a query point, in the shape's
/// frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapePoint {
    /// The nearest surface point (m).
    pub point: Vec3,
    /// The outward unit normal there.
    pub normal: Vec3,
    /// The query point's signed distance from the surface (m), negative
    /// inside.
    pub distance: f64,
}

/// A convex solid with its property values set, as a plugin gives it: the
/// queries the convex kernels make, in the shape's own frame. Errors are
/// the plugin's messages; a run stops on the first, naming the shape and
/// the contact.
pub trait ConvexShape: Send + Sync {
    /// The shape kind's name (the plugin's), for messages and output.
    fn kind(&self) -> &str;

    /// The names of the property values the shape was made with, in
    /// their order (for output); none by default.
    fn property_names(&self) -> Vec<String> {
        Vec::new()
    }

    /// The point of the shape furthest along `dir` (not zero; need not
    /// be unit).
    fn support(&self, dir: Vec3) -> Result<Vec3, String>;

    /// Whether the shape answers [`ConvexShape::closest_point`].
    fn has_closest_point(&self) -> bool {
        false
    }

    /// The surface point nearest to `query`, exactly; called only when
    /// [`ConvexShape::has_closest_point`].
    fn closest_point(&self, query: Vec3) -> Result<ShapePoint, String> {
        let _ = query;
        Err("the shape has no closest-point routine".to_string())
    }

    /// Whether the shape's surface has features (faces, edges,
    /// vertices...) across which a contact's state follows its model's
    /// take-over rules (the sdk's `FeatureRule::ByModel`); a smooth shape
    /// (the default) has one feature.
    fn has_features(&self) -> bool {
        false
    }

    /// The number of the feature holding the surface point `point`;
    /// called only when [`ConvexShape::has_features`].
    fn feature(&self, point: Vec3) -> Result<u32, String> {
        let _ = point;
        Ok(0)
    }
}

/// Mass properties of a shape for unit density, in its own frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeMass {
    /// Volume (m^3).
    pub volume: f64,
    /// Centroid (m).
    pub centroid: Vec3,
    /// Inertia tensor about the centroid, rows (m^5).
    pub inertia: [[f64; 3]; 3],
    /// Radius of a sphere about the centroid that holds the shape (m).
    pub bounding_radius: f64,
}

/// A plugin shape placed in the principal frame of its solid.
#[derive(Clone)]
pub struct ConvexGeometry {
    /// The shape, in its own frame.
    pub shape: Arc<dyn ConvexShape>,
    /// The property values the shape was made with, in the order of its
    /// descriptor (for output).
    pub values: Vec<f64>,
    /// Rotation from the principal frame to the shape's frame.
    rotation: Quat,
    /// The centroid in the shape's frame (m).
    centroid: Vec3,
}

impl PartialEq for ConvexGeometry {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shape, &other.shape)
            && self.values == other.values
            && self.rotation == other.rotation
            && self.centroid == other.centroid
    }
}

impl fmt::Debug for ConvexGeometry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConvexGeometry")
            .field("kind", &self.shape.kind())
            .field("values", &self.values)
            .finish_non_exhaustive()
    }
}

/// Directions spread evenly over the sphere (a Fibonacci lattice), for the
/// outline of a shape.
fn directions(n: usize) -> impl Iterator<Item = Vec3> {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    (0..n).map(move |i| {
        let z = 1.0 - (2 * i + 1) as f64 / n as f64;
        let r = (1.0 - z * z).max(0.0).sqrt();
        let a = golden * i as f64;
        Vec3::new(r * a.cos(), r * a.sin(), z)
    })
}

/// Support points per shape in its outline polyhedron.
const OUTLINE_POINTS: usize = 256;

impl BlockShape {
    /// The shape table entry of a plugin shape: its mass properties moved
    /// to the principal frame, and for output and the cell space an
    /// outline, the hull of the shape's support points along
    /// `OUTLINE_POINTS` directions and the principal axes (inscribed in
    /// the solid, with the solid's box in the principal frame).
    ///
    /// # Errors
    /// [`SetupError::Shape`] for mass properties without volume or
    /// positive moments, or a support query that fails.
    pub fn convex(
        name: &str,
        shape: Arc<dyn ConvexShape>,
        values: Vec<f64>,
        mass: ShapeMass,
    ) -> Result<BlockShape, SetupError> {
        let fail = |message: String| SetupError::Shape {
            shape: name.to_string(),
            message,
        };
        let rows = mass.inertia;
        let tensor = glam::DMat3::from_cols_array_2d(&rows).transpose();
        let (moments, axes) = symmetric_eigen(tensor);
        if !(mass.volume > 0.0 && mass.volume.is_finite() && moments.min_element() > 0.0) {
            return Err(fail(format!(
                "the {} has no volume or a moment that is not positive (volume {:e} m^3)",
                shape.kind(),
                mass.volume
            )));
        }
        let rotation = Quat::from_mat3(&axes).normalize();
        let geometry = ConvexGeometry {
            shape,
            values,
            rotation,
            centroid: mass.centroid,
        };
        let fault = RefCell::new(None);
        let posed = Posed::new(&geometry, Quat::IDENTITY, Vec3::ZERO, &fault);
        // The six axes too, so that the outline's box in the principal
        // frame is the shape's own.
        let axes = [Vec3::X, Vec3::Y, Vec3::Z]
            .into_iter()
            .flat_map(|a| [a, -a]);
        let points: Vec<Vec3> = directions(OUTLINE_POINTS)
            .chain(axes)
            .map(|d| posed.support_point(d))
            .collect();
        if let Some(message) = fault.into_inner() {
            return Err(fail(format!("support query failed: {message}")));
        }
        let outline = ConvexPolyhedron::from_points(&points)
            .map_err(|e| fail(format!("no outline from the support points: {e}")))?;
        Ok(BlockShape {
            name: name.to_string(),
            polyhedron: outline,
            rounding: 0.0,
            volume: mass.volume,
            unit_moments: moments,
            radius: mass.bounding_radius,
            input_rotation: rotation,
            input_centroid: mass.centroid,
            convex: Some(geometry),
        })
    }
}

/// A plugin shape in world axes, for one query: the body's orientation
/// `q` and centroid `c` with the shape's own placement. A failed query
/// gives NaN points (GJK and Newton stop on them) and leaves the first
/// message in `fault`.
pub(crate) struct Posed<'a> {
    shape: &'a dyn ConvexShape,
    /// From the shape's frame to world axes.
    turn: Quat,
    /// The shape frame's origin in world axes.
    origin: Vec3,
    centre: Vec3,
    fault: &'a RefCell<Option<String>>,
}

impl<'a> Posed<'a> {
    pub(crate) fn new(
        g: &'a ConvexGeometry,
        q: Quat,
        c: Vec3,
        fault: &'a RefCell<Option<String>>,
    ) -> Posed<'a> {
        // world = q * principal + c, principal = R^-1 (own - centroid).
        let turn = q * g.rotation.conjugate();
        Posed {
            shape: &*g.shape,
            turn,
            origin: c - turn * g.centroid,
            centre: c,
            fault,
        }
    }

    fn failed(&self, message: String) {
        let mut f = self.fault.borrow_mut();
        if f.is_none() {
            *f = Some(message);
        }
    }

    /// Whether the shape has an exact closest point.
    #[inline]
    pub(crate) fn has_closest_point(&self) -> bool {
        self.shape.has_closest_point()
    }

    /// The exact nearest surface point to `x` in world axes; `None` after
    /// a failure (noted in the fault).
    pub(crate) fn closest_point(&self, x: Vec3) -> Option<ShapePoint> {
        let local = self.turn.conjugate() * (x - self.origin);
        match self.shape.closest_point(local) {
            Ok(p) if p.point.is_finite() && p.normal.is_finite() && p.distance.is_finite() => {
                Some(ShapePoint {
                    point: self.turn * p.point + self.origin,
                    normal: (self.turn * p.normal).normalize(),
                    distance: p.distance,
                })
            }
            Ok(p) => {
                self.failed(format!(
                    "closest point to {local:?}: not finite ({:?}, {:?}, {:e})",
                    p.point, p.normal, p.distance
                ));
                None
            }
            Err(e) => {
                self.failed(e);
                None
            }
        }
    }
}

impl Posed<'_> {
    /// Whether the shape has features ([`ConvexShape::has_features`]).
    #[inline]
    pub(crate) fn has_features(&self) -> bool {
        self.shape.has_features()
    }

    /// The feature holding the surface point `x` (world axes); `None`
    /// after a failure (noted in the fault).
    pub(crate) fn feature(&self, x: Vec3) -> Option<u32> {
        let local = self.turn.conjugate() * (x - self.origin);
        match self.shape.feature(local) {
            Ok(f) => Some(f),
            Err(e) => {
                self.failed(format!("feature of {local:?}: {e}"));
                None
            }
        }
    }
}

impl SupportMap for Posed<'_> {
    #[inline]
    fn support_point(&self, dir: Vec3) -> Vec3 {
        match self.shape.support(self.turn.conjugate() * dir) {
            Ok(p) => self.turn * p + self.origin,
            Err(e) => {
                self.failed(e);
                Vec3::NAN
            }
        }
    }

    #[inline]
    fn interior_point(&self) -> Vec3 {
        self.centre
    }
}
