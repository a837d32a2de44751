//! Shape plugins: a convex body kind described by its support function.
//!
//! A shape is a convex solid in its own frame, sized by property values
//! (semi-axes, exponents...). The engine needs four things from it, each
//! for one property set or a batch of queries:
//!
//! - its mass properties for unit density ([`MassProperties`]): volume,
//!   centroid, inertia tensor about the centroid and the radius of a
//!   sphere about the centroid that holds it; they also check the values;
//! - its support function: for a direction `d`, the point of the shape
//!   that lies furthest along `d` (what GJK and EPA need);
//! - optionally an exact closest-point routine for query points
//!   ([`ClosestPoint`]), which the engine then uses instead of GJK for
//!   ball contacts;
//! - optionally the feature (face, edge...) holding a surface point, for
//!   shapes whose contact state follows [`FeatureRule::ByModel`].
//!
//! A plugin author implements [`ShapeModel`]; the sdk builds the batched
//! `extern "C"` entry points around it (catching panics) and the exported
//! record ([`crate::abi::ShapeMod`]). Shapes were added in sdk 0.3.4.

use std::cell::Cell;

use abi_stable::std_types::{RResult, RSlice, RSliceMut, RString};
use abi_stable::StableAbi;

use crate::descriptor::PropertyDesc;
use crate::driver::{guard_batch, guard_call};
use crate::BatchError;

/// How a contact's state moves when the contact point passes from one
/// feature of the shape to another.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FeatureRule {
    /// The surface is one smooth feature: a contact keeps its state, as it
    /// is, wherever on the surface its point moves. The shape has no
    /// feature routine; every point is feature 0.
    #[default]
    Smooth,
    /// The surface has several features, numbered by the shape's
    /// [`ShapeModel::feature`]. When a contact's point moves to another
    /// feature, the engine treats the contact as a new one that takes over
    /// from the old, as when a ball's load moves from one wall facet to the
    /// next: each state slot follows its model's
    /// [`Propagation`](crate::Propagation) rule with the event
    /// [`StateEvent::TakeOver`](crate::StateEvent::TakeOver) (`None` starts
    /// from zero, `Copy` and `Add` carry the value, `Custom` asks the
    /// model), and the frame is carried when a slot moves.
    ByModel,
}

impl FeatureRule {
    /// Code of the rule in the exported record.
    pub const fn code(self) -> u32 {
        match self {
            FeatureRule::Smooth => 0,
            FeatureRule::ByModel => 1,
        }
    }

    /// The rule of a code, or `None` for a code this sdk does not know.
    pub const fn from_code(code: u32) -> Option<FeatureRule> {
        match code {
            0 => Some(FeatureRule::Smooth),
            1 => Some(FeatureRule::ByModel),
            _ => None,
        }
    }
}

/// Everything the engine and users need to know about a shape kind.
///
/// ```
/// use talus_sdk::{PropertyDesc, ShapeDescriptor};
///
/// let d = ShapeDescriptor::new("cuboid", "0.1.0")
///     .summary("A box with half-sizes hx, hy, hz.")
///     .property(PropertyDesc::new("hx", "m", "half-size along x").min(0.0));
/// assert_eq!(d.properties.len(), 1);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShapeDescriptor {
    /// Shape name used in configs, e.g. "superellipsoid".
    pub name: String,
    /// Shape version (semver).
    pub version: String,
    /// One-paragraph description.
    pub summary: String,
    /// Reference to the literature, or empty.
    pub citation: String,
    /// Properties in the order the shape receives them.
    pub properties: Vec<PropertyDesc>,
    /// How contact state moves between features (default
    /// [`FeatureRule::Smooth`]).
    pub features: FeatureRule,
}

impl ShapeDescriptor {
    /// A smooth shape without properties.
    pub fn new(name: &str, version: &str) -> Self {
        ShapeDescriptor {
            name: name.into(),
            version: version.into(),
            ..ShapeDescriptor::default()
        }
    }

    /// Sets the one-paragraph summary.
    pub fn summary(mut self, text: &str) -> Self {
        self.summary = text.into();
        self
    }

    /// Sets the citation.
    pub fn citation(mut self, text: &str) -> Self {
        self.citation = text.into();
        self
    }

    /// Appends a property.
    pub fn property(mut self, property: PropertyDesc) -> Self {
        self.properties.push(property);
        self
    }

    /// Sets the rule for contact state across features.
    pub fn features(mut self, rule: FeatureRule) -> Self {
        self.features = rule;
        self
    }
}

/// Mass properties of a shape for unit density, in the shape's frame.
///
/// # Units
/// Volume in m^3, lengths in m, the inertia tensor in kg m^2 per kg/m^3
/// (that is m^5): multiply by the density to get kg m^2.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, Default, PartialEq)]
pub struct MassProperties {
    /// Volume (m^3), positive.
    pub volume: f64,
    /// Centroid in the shape's frame (m).
    pub centroid: [f64; 3],
    /// Inertia tensor about the centroid, axes of the shape's frame, for
    /// unit density (m^5); symmetric, row-major.
    pub inertia: [[f64; 3]; 3],
    /// Radius of the smallest sphere about the centroid that holds the
    /// shape (m), positive.
    pub bounding_radius: f64,
}

/// The point of a shape's surface nearest to a query point.
///
/// `query = point + distance * normal` holds up to rounding.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, Default, PartialEq)]
pub struct ClosestPoint {
    /// The surface point nearest to the query point (m, shape frame).
    pub point: [f64; 3],
    /// The outward unit normal of the surface at `point`.
    pub normal: [f64; 3],
    /// Signed distance of the query point from the surface (m): positive
    /// outside, negative inside.
    pub distance: f64,
}

/// The property sets of one batched shape call.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug)]
pub struct ShapeQuery<'a> {
    /// Property sets, row-major: `n_sets x n_props`, in descriptor order.
    pub props: RSlice<'a, f64>,
    /// Number of properties per set (length of the descriptor's list).
    pub n_props: u32,
    /// The property set of each query (direction or point), or empty when
    /// every query uses set 0.
    pub sets: RSlice<'a, u32>,
}

/// Mass properties of the shape with property values `props` (descriptor
/// order), or why the values do not make a shape.
pub type MassFn = extern "C" fn(props: RSlice<'_, f64>) -> RResult<MassProperties, RString>;

/// Batched support function: `points[i]` becomes the point of the shape
/// (shape frame, m) that lies furthest along `directions[i]` (any finite
/// non-zero vector, not necessarily unit), for the query's property set.
pub type SupportFn = extern "C" fn(
    query: &ShapeQuery<'_>,
    directions: RSlice<'_, [f64; 3]>,
    points: RSliceMut<'_, [f64; 3]>,
) -> RResult<(), BatchError>;

/// Batched closest point: `out[i]` becomes the surface point nearest to
/// `points[i]` (shape frame, m), with the normal there and the signed
/// distance.
pub type ClosestPointFn = extern "C" fn(
    query: &ShapeQuery<'_>,
    points: RSlice<'_, [f64; 3]>,
    out: RSliceMut<'_, ClosestPoint>,
) -> RResult<(), BatchError>;

/// Batched feature lookup: `features[i]` becomes the number of the feature
/// that holds the surface point `points[i]` (shape frame, m).
pub type FeatureFn = extern "C" fn(
    query: &ShapeQuery<'_>,
    points: RSlice<'_, [f64; 3]>,
    features: RSliceMut<'_, u32>,
) -> RResult<(), BatchError>;

/// A shape as the engine uses it: its descriptor and its entry points.
///
/// A plugin builds it with [`crate::shape_entry`]; the engine gets it back
/// from a loaded library with [`ShapeEntry::from_abi`].
#[derive(Clone, Debug)]
pub struct ShapeEntry {
    /// The shape's declaration.
    pub descriptor: ShapeDescriptor,
    /// Mass properties from property values.
    pub mass: MassFn,
    /// The batched support function.
    pub support: SupportFn,
    /// The exact closest-point routine, if the shape has one; without it
    /// the engine finds closest points with GJK on the support function.
    pub closest_point: Option<ClosestPointFn>,
    /// The feature routine; present exactly when the rule is
    /// [`FeatureRule::ByModel`].
    pub feature: Option<FeatureFn>,
}

/// A convex shape kind written as per-query functions.
///
/// The sdk generates the batched calls around it ([`crate::shape_entry`],
/// [`crate::define_plugin!`]). For each run of consecutive queries that
/// share a property set, the driver calls
/// [`ShapeModel::from_properties`] once, then the per-query function for
/// each query of the run. A panic anywhere becomes an error naming the
/// query, and the engine names the shape.
///
/// All positions and directions are in the shape's own frame, in m.
pub trait ShapeModel: Sized {
    /// The shape's declaration (see [`ShapeDescriptor`]).
    fn descriptor() -> ShapeDescriptor;

    /// The shape for one property set (descriptor order). The engine has
    /// checked the values against the declared ranges; refuse here, with a
    /// message, any combination the shape cannot take.
    fn from_properties(props: &[f64]) -> Result<Self, String>;

    /// Mass properties for unit density (see [`MassProperties`]).
    fn mass_properties(&self) -> MassProperties;

    /// The point of the shape furthest along `direction`, a finite
    /// non-zero vector (not necessarily unit). Where several points tie
    /// (a face), any of them.
    fn support(&self, direction: [f64; 3]) -> [f64; 3];

    /// Whether [`ShapeModel::closest_point`] is implemented: the sdk
    /// exports the closest-point routine only when this is `true`.
    const CLOSEST_POINT: bool = false;

    /// The surface point nearest to `query` (a finite point, inside or
    /// outside), the outward normal there and the signed distance. Exact,
    /// not approximate: the engine takes it instead of running GJK.
    /// Called only when [`ShapeModel::CLOSEST_POINT`] is `true`.
    fn closest_point(&self, query: [f64; 3]) -> ClosestPoint {
        let _ = query;
        panic!("closest_point is not implemented, but CLOSEST_POINT says it is")
    }

    /// The feature holding the surface point `point`, for shapes whose
    /// rule is [`FeatureRule::ByModel`]; the sdk exports it for those
    /// only. Number features from 0, the same way for every property set.
    fn feature(&self, point: [f64; 3]) -> u32 {
        let _ = point;
        0
    }
}

/// Builds the [`ShapeEntry`] of a [`ShapeModel`] (used by
/// [`crate::define_plugin!`], and by tests that hand a shape to the
/// engine directly).
pub fn shape_entry<S: ShapeModel>() -> ShapeEntry {
    let descriptor = S::descriptor();
    let by_model = descriptor.features == FeatureRule::ByModel;
    ShapeEntry {
        descriptor,
        mass: run_mass::<S>,
        support: run_support::<S>,
        closest_point: S::CLOSEST_POINT.then_some(run_closest_point::<S> as ClosestPointFn),
        feature: by_model.then_some(run_feature::<S> as FeatureFn),
    }
}

fn finite(v: [f64; 3]) -> bool {
    v.iter().all(|x| x.is_finite())
}

/// Runs `each` over the queries of a batch, one shape per run of queries
/// with the same property set, and catches panics. `each` gets the shape,
/// the query index and returns an error message for a bad query.
fn run_queries<S: ShapeModel, I, O>(
    query: &ShapeQuery<'_>,
    inputs: &[I],
    outputs: &mut [O],
    each: impl Fn(&S, &I, &mut O) -> Result<(), String>,
) -> RResult<(), BatchError> {
    let cursor = Cell::new(0usize);
    guard_batch(&cursor, || {
        let n = inputs.len();
        if outputs.len() != n {
            return Err(format!("{n} queries but {} outputs", outputs.len()));
        }
        let sets = query.sets.as_slice();
        if !sets.is_empty() && sets.len() != n {
            return Err(format!("{n} queries but {} property sets", sets.len()));
        }
        let n_props = query.n_props as usize;
        let props = query.props.as_slice();
        if n_props > 0 && !props.len().is_multiple_of(n_props) {
            return Err(format!(
                "{} property values do not form sets of {n_props}",
                props.len()
            ));
        }
        let n_sets = props.len().checked_div(n_props).unwrap_or(1);
        let set_of = |i: usize| sets.get(i).copied().unwrap_or(0);
        let mut lo = 0;
        while lo < n {
            cursor.set(lo);
            let set = set_of(lo);
            if set as usize >= n_sets {
                return Err(format!("property set {set} out of range ({n_sets} sets)"));
            }
            let hi = (lo + 1..n).find(|&i| set_of(i) != set).unwrap_or(n);
            let k = set as usize;
            let shape = S::from_properties(&props[k * n_props..(k + 1) * n_props])?;
            for i in lo..hi {
                cursor.set(i);
                each(&shape, &inputs[i], &mut outputs[i])?;
            }
            lo = hi;
        }
        Ok(())
    })
}

/// The mass-properties ABI entry point for shape `S` (see [`MassFn`]).
pub extern "C" fn run_mass<S: ShapeModel>(
    props: RSlice<'_, f64>,
) -> RResult<MassProperties, RString> {
    guard_call(|| S::from_properties(props.as_slice()).map(|shape| shape.mass_properties()))
}

/// The support ABI entry point for shape `S` (see [`SupportFn`]).
pub extern "C" fn run_support<S: ShapeModel>(
    query: &ShapeQuery<'_>,
    directions: RSlice<'_, [f64; 3]>,
    mut points: RSliceMut<'_, [f64; 3]>,
) -> RResult<(), BatchError> {
    run_queries::<S, _, _>(query, &directions, &mut points, |shape, &d, out| {
        if !finite(d) || d == [0.0; 3] {
            return Err(format!("direction {d:?} is not a finite non-zero vector"));
        }
        *out = shape.support(d);
        if !finite(*out) {
            return Err(format!(
                "support point {:?} along {d:?} is not finite",
                *out
            ));
        }
        Ok(())
    })
}

/// The closest-point ABI entry point for shape `S` (see
/// [`ClosestPointFn`]).
pub extern "C" fn run_closest_point<S: ShapeModel>(
    query: &ShapeQuery<'_>,
    points: RSlice<'_, [f64; 3]>,
    mut out: RSliceMut<'_, ClosestPoint>,
) -> RResult<(), BatchError> {
    run_queries::<S, _, _>(query, &points, &mut out, |shape, &q, out| {
        if !finite(q) {
            return Err(format!("query point {q:?} is not finite"));
        }
        *out = shape.closest_point(q);
        if !finite(out.point) || !finite(out.normal) || !out.distance.is_finite() {
            return Err(format!("closest point to {q:?} is not finite: {out:?}"));
        }
        Ok(())
    })
}

/// The feature ABI entry point for shape `S` (see [`FeatureFn`]).
pub extern "C" fn run_feature<S: ShapeModel>(
    query: &ShapeQuery<'_>,
    points: RSlice<'_, [f64; 3]>,
    mut features: RSliceMut<'_, u32>,
) -> RResult<(), BatchError> {
    run_queries::<S, _, _>(query, &points, &mut features, |shape, &p, out| {
        if !finite(p) {
            return Err(format!("point {p:?} is not finite"));
        }
        *out = shape.feature(p);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Contact, ContactModel, ContactOutput, ModelDescriptor};

    /// A sphere of radius `r`, with the exact closest point.
    struct Ball {
        r: f64,
    }

    impl ShapeModel for Ball {
        fn descriptor() -> ShapeDescriptor {
            ShapeDescriptor::new("ball", "0.1.0")
                .summary("a sphere")
                .citation("Euclid")
                .property(PropertyDesc::new("r", "m", "radius").min(0.0))
        }
        fn from_properties(props: &[f64]) -> Result<Self, String> {
            match props[0] {
                13.0 => panic!("unlucky radius"),
                r if r > 0.0 => Ok(Ball { r }),
                r => Err(format!("radius {r} is not positive")),
            }
        }
        fn mass_properties(&self) -> MassProperties {
            let volume = 4.0 / 3.0 * std::f64::consts::PI * self.r.powi(3);
            let i = 0.4 * volume * self.r * self.r;
            MassProperties {
                volume,
                centroid: [0.0; 3],
                inertia: [[i, 0.0, 0.0], [0.0, i, 0.0], [0.0, 0.0, i]],
                bounding_radius: self.r,
            }
        }
        fn support(&self, d: [f64; 3]) -> [f64; 3] {
            if d[2] == 13.0 {
                panic!("unlucky direction");
            }
            let n = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            d.map(|x| self.r * x / n)
        }
        const CLOSEST_POINT: bool = true;
        fn closest_point(&self, q: [f64; 3]) -> ClosestPoint {
            let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]).sqrt();
            let normal = q.map(|x| x / n);
            ClosestPoint {
                point: normal.map(|x| x * self.r),
                normal,
                distance: n - self.r,
            }
        }
    }

    /// A unit cube whose six faces are its features.
    struct Cube;

    impl ShapeModel for Cube {
        fn descriptor() -> ShapeDescriptor {
            ShapeDescriptor::new("cube", "0.1.0").features(FeatureRule::ByModel)
        }
        fn from_properties(_: &[f64]) -> Result<Self, String> {
            Ok(Cube)
        }
        fn mass_properties(&self) -> MassProperties {
            MassProperties::default()
        }
        fn support(&self, d: [f64; 3]) -> [f64; 3] {
            d.map(|x| 0.5f64.copysign(x))
        }
        fn feature(&self, p: [f64; 3]) -> u32 {
            let k = (0..3)
                .max_by(|&i, &j| p[i].abs().total_cmp(&p[j].abs()))
                .unwrap_or(0);
            2 * k as u32 + u32::from(p[k] < 0.0)
        }
    }

    fn query<'a>(props: &'a [f64], n_props: u32, sets: &'a [u32]) -> ShapeQuery<'a> {
        ShapeQuery {
            props: RSlice::from_slice(props),
            n_props,
            sets: RSlice::from_slice(sets),
        }
    }

    fn support<S: ShapeModel>(
        q: &ShapeQuery<'_>,
        directions: &[[f64; 3]],
    ) -> Result<Vec<[f64; 3]>, BatchError> {
        let mut points = vec![[f64::NAN; 3]; directions.len()];
        run_support::<S>(
            q,
            RSlice::from_slice(directions),
            RSliceMut::from_mut_slice(&mut points),
        )
        .into_result()
        .map(|()| points)
    }

    #[test]
    fn support_runs_per_property_set_and_names_bad_queries() {
        let props = [1.0, 2.0];
        let d = [[3.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 5.0]];
        let points = support::<Ball>(&query(&props, 1, &[1, 0, 1]), &d).unwrap();
        assert_eq!(points, [[2.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 2.0]]);
        // No sets: every query uses set 0.
        let points = support::<Ball>(&query(&props, 1, &[]), &d).unwrap();
        assert_eq!(points[0], [1.0, 0.0, 0.0]);

        let err = support::<Ball>(&query(&props, 1, &[0, 2, 0]), &d).unwrap_err();
        assert_eq!(err.index, 1);
        assert!(
            err.message.contains("property set 2 out of range"),
            "{err:?}"
        );
        let mut bad = d;
        bad[2] = [0.0; 3];
        let err = support::<Ball>(&query(&props, 1, &[]), &bad).unwrap_err();
        assert_eq!(err.index, 2);
        assert!(err.message.contains("not a finite non-zero"), "{err:?}");
        bad[2] = [0.0, f64::NAN, 1.0];
        assert_eq!(
            support::<Ball>(&query(&props, 1, &[]), &bad)
                .unwrap_err()
                .index,
            2
        );
        bad[2] = [0.0, 0.0, 13.0];
        let err = support::<Ball>(&query(&props, 1, &[]), &bad).unwrap_err();
        assert_eq!(
            (err.index, err.message.as_str()),
            (2, "panicked: unlucky direction")
        );
        // The shape refuses its values: the error names the first query of
        // the run, with the shape's message.
        let err = support::<Ball>(&query(&[1.0, -1.0], 1, &[0, 1, 1]), &d).unwrap_err();
        assert_eq!(
            (err.index, err.message.as_str()),
            (1, "radius -1 is not positive")
        );
        let err = support::<Ball>(&query(&props, 1, &[0, 0]), &d).unwrap_err();
        assert!(
            err.message.contains("3 queries but 2 property sets"),
            "{err:?}"
        );
    }

    #[test]
    fn mass_closest_point_and_features_go_through_the_abi() {
        let mass = run_mass::<Ball>(RSlice::from_slice(&[2.0])).unwrap();
        assert_eq!(mass.bounding_radius, 2.0);
        let err = run_mass::<Ball>(RSlice::from_slice(&[-1.0])).unwrap_err();
        assert_eq!(err.as_str(), "radius -1 is not positive");
        let err = run_mass::<Ball>(RSlice::from_slice(&[13.0])).unwrap_err();
        assert!(err.starts_with("panicked"), "{err}");

        let points = [[0.0, 3.0, 0.0], [0.0, 0.0, 0.5]];
        let mut out = [ClosestPoint::default(); 2];
        let q = query(&[1.0], 1, &[]);
        run_closest_point::<Ball>(
            &q,
            RSlice::from_slice(&points),
            RSliceMut::from_mut_slice(&mut out),
        )
        .unwrap();
        assert_eq!(out[0].point, [0.0, 1.0, 0.0]);
        assert_eq!(out[0].distance, 2.0);
        assert_eq!(out[1].normal, [0.0, 0.0, 1.0]);
        assert_eq!(out[1].distance, -0.5);

        let mut features = [99; 3];
        let points = [[0.5, 0.1, 0.2], [0.1, -0.5, 0.3], [0.0, 0.2, 0.5]];
        run_feature::<Cube>(
            &q,
            RSlice::from_slice(&points),
            RSliceMut::from_mut_slice(&mut features),
        )
        .unwrap();
        assert_eq!(features, [0, 3, 4]);
    }

    #[test]
    fn entries_export_the_optional_routines_they_have() {
        let ball = shape_entry::<Ball>();
        assert!(ball.closest_point.is_some());
        assert!(ball.feature.is_none());
        let cube = shape_entry::<Cube>();
        assert!(cube.closest_point.is_none());
        assert!(cube.feature.is_some());
        for entry in [ball, cube] {
            let back = ShapeEntry::from_abi(entry.to_abi()).unwrap();
            assert_eq!(back.descriptor, entry.descriptor);
            assert_eq!(back.closest_point.is_some(), entry.closest_point.is_some());
            assert_eq!(back.feature.is_some(), entry.feature.is_some());
        }
    }

    #[test]
    fn unknown_feature_rules_are_named() {
        use abi_stable::prefix_type::PrefixTypeTrait;
        let entry = shape_entry::<Cube>();
        let record = crate::abi::ShapeMod {
            name: "odd".into(),
            version: "0.1.0".into(),
            summary: "".into(),
            citation: "".into(),
            properties: RSlice::from_slice(&[]),
            features: 5,
            mass: entry.mass,
            support: entry.support,
            closest_point: None.into(),
            feature: None.into(),
        }
        .leak_into_prefix();
        let err = ShapeEntry::from_abi(record).unwrap_err();
        assert!(err.contains("feature rule code 5"), "{err}");
    }

    struct Spring;

    impl ContactModel for Spring {
        fn descriptor() -> ModelDescriptor {
            ModelDescriptor::new("spring", "0.1.0")
        }
        fn prepare(_: &[f64], _: f64) -> Self {
            Spring
        }
        fn force_displacement(&mut self, _: &Contact<'_>, _: &mut [f64]) -> ContactOutput {
            ContactOutput::default()
        }
    }

    mod both {
        use super::{Ball, Cube, Spring};
        crate::define_plugin!("both", models: [Spring], shapes: [Ball, Cube]);

        #[test]
        fn a_plugin_exports_models_and_shapes() {
            let root = root_module();
            let models = (root.models())();
            assert_eq!(models.len(), 1);
            let shapes = (root.shapes().expect("the root module has shapes"))();
            let names: Vec<&str> = shapes.iter().map(|s| s.name().as_str()).collect();
            assert_eq!(names, ["ball", "cube"]);
            // Built once: a second call hands out the same records.
            let again = (root.shapes().unwrap())();
            assert_eq!(again[0].name().as_ptr(), shapes[0].name().as_ptr());
        }
    }

    mod shapes_only {
        use super::Ball;
        crate::define_plugin!("shapes-only", shapes: [Ball]);

        #[test]
        fn a_plugin_may_export_shapes_alone() {
            let root = root_module();
            assert!((root.models())().is_empty());
            assert_eq!((root.shapes().unwrap())().len(), 1);
        }
    }

    /// A shape whose descriptor panics.
    struct Broken;

    impl ShapeModel for Broken {
        fn descriptor() -> ShapeDescriptor {
            panic!("no descriptor")
        }
        fn from_properties(_: &[f64]) -> Result<Self, String> {
            Ok(Broken)
        }
        fn mass_properties(&self) -> MassProperties {
            MassProperties::default()
        }
        fn support(&self, d: [f64; 3]) -> [f64; 3] {
            d
        }
    }

    mod broken {
        use super::{Broken, Spring};
        crate::define_plugin!("broken", models: [Spring], shapes: [Broken]);

        #[test]
        fn a_panicking_shape_descriptor_empties_both_lists() {
            let root = root_module();
            assert!((root.models())().is_empty());
            assert!((root.shapes().unwrap())().is_empty());
        }
    }
}
