//! Registered shapes: a shape plugin's entry with where it came from, and
//! safe calls into it.
//!
//! Reads the entry points of a validated [`ShapeEntry`]; every call checks
//! the slice lengths the plugin relies on before crossing, and mass
//! properties are checked on the way back (the engine divides by the
//! volume and inverts the inertia). Errors name the shape and its plugin.

use std::f64::consts::PI;
use std::fmt;

use abi_stable::std_types::{RResult, RSlice, RSliceMut};
use talus_sdk::{BatchError, ClosestPoint, FeatureRule, MassProperties, ShapeEntry, ShapeQuery};

use crate::{Origin, ShapeCallError};

/// A shape kind ready for use: its entry (descriptor and functions), the
/// plugin that provides it and where that plugin came from.
#[derive(Clone)]
pub struct RegisteredShape {
    /// The shape's descriptor and functions, as the plugin returned them.
    pub entry: ShapeEntry,
    /// Name of the plugin that provides the shape.
    pub plugin: String,
    /// The sdk version the plugin was built with.
    pub sdk_version: String,
    /// Where the plugin came from.
    pub origin: Origin,
}

impl fmt::Debug for RegisteredShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredShape")
            .field("descriptor", &self.entry.descriptor)
            .field("plugin", &self.plugin)
            .field("sdk_version", &self.sdk_version)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl RegisteredShape {
    /// The shape's name.
    pub fn name(&self) -> &str {
        self.entry.descriptor.name.as_str()
    }

    /// The property names, in the order the shape receives the values.
    pub fn property_names(&self) -> Vec<String> {
        let props = &self.entry.descriptor.properties;
        props.iter().map(|p| p.name.to_string()).collect()
    }

    /// Number of properties per property set.
    pub fn n_props(&self) -> usize {
        self.entry.descriptor.properties.len()
    }

    /// Whether the shape gives an exact closest-point routine
    /// ([`RegisteredShape::closest_points`]).
    pub fn has_closest_point(&self) -> bool {
        self.entry.closest_point.is_some()
    }

    /// Whether a contact's state follows its model's take-over rules when
    /// its point moves to another feature ([`FeatureRule::ByModel`]), the
    /// features given by [`RegisteredShape::features`].
    pub fn has_features(&self) -> bool {
        self.entry.descriptor.features == FeatureRule::ByModel && self.entry.feature.is_some()
    }

    fn error(&self, index: Option<u64>, message: impl Into<String>) -> ShapeCallError {
        ShapeCallError {
            shape: self.name().to_string(),
            plugin: self.plugin.clone(),
            index,
            message: message.into(),
        }
    }

    /// The mass properties (unit density, shape frame) of the shape with
    /// the property values `props` (one set, descriptor order, as checked
    /// against the declared ranges).
    ///
    /// Errors: the plugin refuses the values (its message), panics, or
    /// returns mass properties that are not finite, a volume or bounding
    /// radius that is not positive, a bounding sphere smaller than the
    /// volume, or an inertia tensor that is not symmetric with a positive
    /// diagonal.
    pub fn mass_properties(&self, props: &[f64]) -> Result<MassProperties, ShapeCallError> {
        if props.len() != self.n_props() {
            return Err(self.error(
                None,
                format!(
                    "{} property values given, {} declared",
                    props.len(),
                    self.n_props()
                ),
            ));
        }
        let mass = (self.entry.mass)(RSlice::from_slice(props))
            .into_result()
            .map_err(|message| self.error(None, message.as_str()))?;
        check_mass(&mass).map_err(|message| self.error(None, message))?;
        Ok(mass)
    }

    fn query<'a>(
        &self,
        props: &'a [f64],
        sets: &'a [u32],
        n: usize,
    ) -> Result<ShapeQuery<'a>, ShapeCallError> {
        if !sets.is_empty() && sets.len() != n {
            return Err(self.error(
                None,
                format!("{n} queries but {} property sets", sets.len()),
            ));
        }
        Ok(ShapeQuery {
            props: RSlice::from_slice(props),
            n_props: self.n_props() as u32,
            sets: RSlice::from_slice(sets),
        })
    }

    fn batch_result(&self, result: RResult<(), BatchError>) -> Result<(), ShapeCallError> {
        result
            .into_result()
            .map_err(|e| self.error(Some(e.index), e.message.as_str()))
    }

    /// Support points: `points[i]` becomes the point of the shape (shape
    /// frame, m) furthest along `directions[i]`, for property set
    /// `sets[i]` of `props` (row-major, `n_props` values per set; `sets`
    /// empty: every query uses set 0).
    ///
    /// Errors name the query: a direction that is zero or not finite, a
    /// property set out of range, values the shape refuses, a panic.
    pub fn support(
        &self,
        props: &[f64],
        sets: &[u32],
        directions: &[[f64; 3]],
        points: &mut [[f64; 3]],
    ) -> Result<(), ShapeCallError> {
        let query = self.query(props, sets, directions.len())?;
        self.batch_result((self.entry.support)(
            &query,
            RSlice::from_slice(directions),
            RSliceMut::from_mut_slice(points),
        ))
    }

    /// Exact closest points: `out[i]` becomes the surface point nearest to
    /// `points[i]` (shape frame, m), with the outward normal there and the
    /// signed distance (positive outside); sets as for
    /// [`RegisteredShape::support`].
    ///
    /// Errors as for [`RegisteredShape::support`], and for a shape without
    /// the routine ([`RegisteredShape::has_closest_point`]).
    pub fn closest_points(
        &self,
        props: &[f64],
        sets: &[u32],
        points: &[[f64; 3]],
        out: &mut [ClosestPoint],
    ) -> Result<(), ShapeCallError> {
        let Some(closest) = self.entry.closest_point else {
            return Err(self.error(None, "the shape has no closest-point routine"));
        };
        let query = self.query(props, sets, points.len())?;
        self.batch_result(closest(
            &query,
            RSlice::from_slice(points),
            RSliceMut::from_mut_slice(out),
        ))
    }

    /// The features of surface points: `out[i]` becomes the number of the
    /// feature holding `points[i]`. A shape whose rule is
    /// [`FeatureRule::Smooth`] has one feature, 0, and is not called.
    pub fn features(
        &self,
        props: &[f64],
        sets: &[u32],
        points: &[[f64; 3]],
        out: &mut [u32],
    ) -> Result<(), ShapeCallError> {
        let feature = match (self.entry.descriptor.features, self.entry.feature) {
            (FeatureRule::ByModel, Some(feature)) => feature,
            _ => {
                if out.len() != points.len() {
                    return Err(self.error(
                        None,
                        format!("{} points but {} outputs", points.len(), out.len()),
                    ));
                }
                out.fill(0);
                return Ok(());
            }
        };
        let query = self.query(props, sets, points.len())?;
        self.batch_result(feature(
            &query,
            RSlice::from_slice(points),
            RSliceMut::from_mut_slice(out),
        ))
    }
}

/// The rules of the interface for mass properties; returns the first one
/// broken.
fn check_mass(m: &MassProperties) -> Result<(), String> {
    let all = [m.volume, m.bounding_radius]
        .into_iter()
        .chain(m.centroid)
        .chain(m.inertia.into_iter().flatten());
    if all.clone().any(|x| !x.is_finite()) {
        return Err(format!("mass properties are not finite: {m:?}"));
    }
    if m.volume <= 0.0 || m.bounding_radius <= 0.0 {
        return Err(format!(
            "volume {} and bounding radius {} must be positive",
            m.volume, m.bounding_radius
        ));
    }
    // The bounding sphere holds the shape, so it holds its volume too
    // (with a margin for rounding).
    let sphere = 4.0 / 3.0 * PI * m.bounding_radius.powi(3);
    if sphere < m.volume * (1.0 - 1e-9) {
        return Err(format!(
            "a bounding radius of {} cannot hold a volume of {}",
            m.bounding_radius, m.volume
        ));
    }
    let scale = all.map(f64::abs).fold(0.0, f64::max);
    let i = &m.inertia;
    for (r, c) in [(0, 1), (0, 2), (1, 2)] {
        if (i[r][c] - i[c][r]).abs() > 1e-9 * scale {
            return Err(format!("the inertia tensor is not symmetric: {i:?}"));
        }
    }
    if (0..3).any(|k| i[k][k] <= 0.0) {
        return Err(format!(
            "the inertia tensor has a diagonal that is not positive: {i:?}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sphere() -> MassProperties {
        let volume = 4.0 / 3.0 * PI;
        let i = 0.4 * volume;
        MassProperties {
            volume,
            centroid: [0.0; 3],
            inertia: [[i, 0.0, 0.0], [0.0, i, 0.0], [0.0, 0.0, i]],
            bounding_radius: 1.0,
        }
    }

    #[test]
    fn mass_properties_are_checked() {
        assert_eq!(check_mass(&sphere()), Ok(()));
        type Breaker = fn(&mut MassProperties);
        let cases: [(Breaker, &str); 6] = [
            (|m| m.volume = -1.0, "must be positive"),
            (|m| m.bounding_radius = 0.0, "must be positive"),
            (|m| m.centroid[1] = f64::NAN, "not finite"),
            (|m| m.bounding_radius = 0.9, "cannot hold"),
            (|m| m.inertia[0][2] = 0.1, "not symmetric"),
            (|m| m.inertia[2][2] = 0.0, "not positive"),
        ];
        for (break_it, expected) in cases {
            let mut m = sphere();
            break_it(&mut m);
            let err = check_mass(&m).unwrap_err();
            assert!(err.contains(expected), "{err} (expected {expected:?})");
        }
    }
}
