//! talus-plugin-superquadric: the superellipsoid as a shape plugin.
//!
//! Built and loaded as a third party's plugin would be: the crate depends
//! on `talus-sdk` alone, the engine does not embed it, and a run loads its
//! library from disk (`[[plugins]] path = ...`; `talus plugins PATH` lists
//! it):
//!
//! ```text
//! cargo build --release -p talus-plugin-superquadric
//! ```
//!
//! Shape `superellipsoid`: semi-axes `a, b, c` (m) along x, y, z and
//! exponents `n1` (along z) and `n2` (across z), the surface
//! `(|x/a|^n2 + |y/b|^n2)^(n1/n2) + |z/c|^n1 = 1`. Both exponents 2 give the
//! ellipsoid, and equal semi-axes then the sphere. The closed forms live in
//! [`geometry`] (support map, bounding radius, volume, inertia) and
//! [`mod@distance`] (the exact closest point); this file is the glue to the
//! sdk.

#![warn(missing_docs)]

pub mod distance;
pub mod geometry;
mod special;

use talus_sdk::{
    ClosestPoint, FeatureRule, MassProperties, PropertyDesc, ShapeDescriptor, ShapeModel,
};

pub use geometry::Superellipsoid;

impl ShapeModel for Superellipsoid {
    fn descriptor() -> ShapeDescriptor {
        let axis = |name: &str, doc: &str| PropertyDesc::new(name, "m", doc).min(0.0);
        let exponent = |name: &str, doc: &str| {
            PropertyDesc::new(name, "-", doc)
                .default(2.0)
                .range(geometry::MIN_EXPONENT, geometry::MAX_EXPONENT)
        };
        ShapeDescriptor::new("superellipsoid", env!("CARGO_PKG_VERSION"))
            .summary(
                "Superellipsoid (|x/a|^n2 + |y/b|^n2)^(n1/n2) + |z/c|^n1 = 1: the ellipsoid \
                 at n1 = n2 = 2, squarer towards a box as the exponents grow. Semi-axes \
                 positive and within a factor 1000 of one another. Closed-form support map, \
                 volume and inertia; exact closest point for ball contacts.",
            )
            .citation(
                "Barr (1981), Superquadrics and angle-preserving transformations, IEEE CG&A \
                 1(1); Jaklic, Leonardis and Solina (2000), Segmentation and Recovery of \
                 Superquadrics, Kluwer, section 2.5",
            )
            .property(axis("a", "semi-axis along x"))
            .property(axis("b", "semi-axis along y"))
            .property(axis("c", "semi-axis along z"))
            .property(exponent(
                "n1",
                "exponent along z (sections through the z axis)",
            ))
            .property(exponent("n2", "exponent across z (sections normal to z)"))
            .features(FeatureRule::Smooth)
    }

    fn from_properties(props: &[f64]) -> Result<Self, String> {
        let &[a, b, c, n1, n2] = props else {
            return Err(format!("expected 5 property values, got {}", props.len()));
        };
        let shape = Superellipsoid::new(a, b, c, n1, n2)?;
        // Semi-axes so large or small that the volume or the moments leave
        // the range of f64 are refused here, not returned as inf or 0. For
        // exponents in [2, 10] the volume is a b c times a factor between
        // 4 pi / 3 and 8, and a moment that times a sum of two squared
        // semi-axes and a factor between 1/5 and 2/3: bounds cheap enough
        // for every call (the engine makes one per support query).
        let (lo, hi) = (a.min(b).min(c), a.max(b).max(c));
        let abc = a * b * c;
        let bounds = [
            4.0 * abc,
            8.0 * abc,
            0.8 * abc * lo * lo,
            11.0 * abc * hi * hi,
        ];
        if !bounds.iter().all(|v| v.is_finite() && *v > 0.0) {
            return Err(format!(
                "semi-axes {a}, {b}, {c} give a volume or inertia outside the range of numbers"
            ));
        }
        Ok(shape)
    }

    fn mass_properties(&self) -> MassProperties {
        let [ixx, iyy, izz] = self.principal_moments();
        MassProperties {
            volume: self.volume(),
            centroid: [0.0; 3],
            inertia: [[ixx, 0.0, 0.0], [0.0, iyy, 0.0], [0.0, 0.0, izz]],
            bounding_radius: self.bounding_radius(),
        }
    }

    fn support(&self, direction: [f64; 3]) -> [f64; 3] {
        Superellipsoid::support(self, direction)
    }

    const CLOSEST_POINT: bool = true;

    fn closest_point(&self, query: [f64; 3]) -> ClosestPoint {
        Superellipsoid::closest_point(self, query)
    }
}

talus_sdk::define_plugin!("talus-plugin-superquadric", shapes: [Superellipsoid]);
#[cfg(feature = "export")]
talus_sdk::export_plugin!();
