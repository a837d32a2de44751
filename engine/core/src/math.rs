//! The one place that names the math library: f64 vectors, matrices and
//! quaternions from glam (no fast-math, so results are reproducible).

pub use glam::{DMat3 as Mat3, DQuat as Quat, DVec3 as Vec3};

/// Converts a plain array (as it crosses the plugin boundary or comes from
/// a config) into a vector.
#[inline]
pub fn v3(a: [f64; 3]) -> Vec3 {
    Vec3::from_array(a)
}

/// An axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Aabb {
    /// Lower corner (m).
    pub min: Vec3,
    /// Upper corner (m).
    pub max: Vec3,
}

impl Aabb {
    /// The empty box (inverted infinities), neutral for [`Aabb::include`].
    pub const EMPTY: Aabb = Aabb {
        min: Vec3::splat(f64::INFINITY),
        max: Vec3::splat(f64::NEG_INFINITY),
    };

    /// The box of a sphere.
    #[inline]
    pub fn of_sphere(centre: Vec3, radius: f64) -> Aabb {
        Aabb {
            min: centre - Vec3::splat(radius),
            max: centre + Vec3::splat(radius),
        }
    }

    /// Grows the box to contain `p`.
    #[inline]
    pub fn include(&mut self, p: Vec3) {
        self.min = self.min.min(p);
        self.max = self.max.max(p);
    }

    /// The box enlarged by `d` on every side.
    #[inline]
    pub fn enlarged(&self, d: f64) -> Aabb {
        Aabb {
            min: self.min - Vec3::splat(d),
            max: self.max + Vec3::splat(d),
        }
    }

    /// Whether two boxes overlap (touching counts).
    #[inline]
    pub fn overlaps(&self, o: &Aabb) -> bool {
        self.min.x <= o.max.x
            && o.min.x <= self.max.x
            && self.min.y <= o.max.y
            && o.min.y <= self.max.y
            && self.min.z <= o.max.z
            && o.min.z <= self.max.z
    }

    /// The centre of the box.
    #[inline]
    pub fn centre(&self) -> Vec3 {
        0.5 * (self.min + self.max)
    }

    /// The box moved by `d`.
    #[inline]
    pub fn translated(&self, d: Vec3) -> Aabb {
        Aabb {
            min: self.min + d,
            max: self.max + d,
        }
    }

    /// Whether `inner` lies inside this box.
    #[inline]
    pub fn contains(&self, inner: &Aabb) -> bool {
        self.min.cmple(inner.min).all() && inner.max.cmple(self.max).all()
    }
}
