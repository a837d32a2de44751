//! Checks on model and shape descriptors (at registration) and on the
//! property values a run gives a model (before step 0).
//!
//! Invariant: a registered descriptor has snake_case model (or shape),
//! property and state names, unique property names and unique state names,
//! non-NaN ranges with `min <= max`, defaults inside their range and a
//! semver version; so `check_properties` can trust it.

use std::collections::HashSet;

use talus_sdk::{
    inputs, Activity, FeatureRule, ModelDescriptor, ModelEntry, PropertyDesc, ShapeEntry,
    SDK_VERSION,
};

use crate::error::range_text;
use crate::PropertyError;

/// Parses a semver-looking version `MAJOR.MINOR.PATCH[-pre][+build]` into
/// its three numbers.
pub(crate) fn parse_version(version: &str) -> Option<(u64, u64, u64)> {
    let (core, build) = match version.split_once('+') {
        Some((core, build)) => (core, Some(build)),
        None => (version, None),
    };
    let (core, pre) = match core.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (core, None),
    };
    let suffix_ok = |s: Option<&str>| {
        s.is_none_or(|s| {
            !s.is_empty()
                && s.split('.').all(|id| {
                    !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                })
        })
    };
    if !suffix_ok(pre) || !suffix_ok(build) {
        return None;
    }
    let mut numbers = core.split('.').map(|part| {
        let leading_zero = part.len() > 1 && part.starts_with('0');
        if part.is_empty() || leading_zero || !part.chars().all(|c| c.is_ascii_digit()) {
            None
        } else {
            part.parse::<u64>().ok()
        }
    });
    let version = (numbers.next()??, numbers.next()??, numbers.next()??);
    numbers.next().is_none().then_some(version)
}

/// Whether `name` is snake case: a lowercase letter, then lowercase
/// letters, digits and single underscores, not ending in an underscore.
pub(crate) fn is_snake_case(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    first.is_ascii_lowercase()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.contains("__")
        && !name.ends_with('_')
}

/// Checks the name and version of a model or shape (`kind`).
fn validate_name_version(kind: &str, name: &str, version: &str) -> Result<(), String> {
    if !is_snake_case(name) {
        return Err(format!("{kind} name {name:?} is not snake_case"));
    }
    if parse_version(version).is_none() {
        return Err(format!(
            "version {version:?} is not of the form major.minor.patch"
        ));
    }
    Ok(())
}

/// Checks a list of property declarations.
fn validate_properties(properties: &[PropertyDesc]) -> Result<(), String> {
    let mut seen = HashSet::new();
    for p in properties {
        let name = p.name.as_str();
        if !is_snake_case(name) {
            return Err(format!("property name {name:?} is not snake_case"));
        }
        if !seen.insert(name) {
            return Err(format!("property {name:?} is declared twice"));
        }
        if p.unit.is_empty() {
            return Err(format!(
                "property {name:?} has no unit (write \"-\" for dimensionless)"
            ));
        }
        if p.min.is_nan() || p.max.is_nan() || p.min > p.max {
            return Err(format!(
                "property {name:?} has an invalid range [{}, {}]",
                p.min, p.max
            ));
        }
        if let Some(default) = p.default {
            if !default.is_finite() || default < p.min || default > p.max {
                return Err(format!(
                    "property {name:?} has default {default} outside its range {}",
                    range_text(p.min, p.max)
                ));
            }
        }
    }
    Ok(())
}

/// Checks one shape entry; returns the broken rule.
pub(crate) fn validate_shape(entry: &ShapeEntry) -> Result<(), String> {
    let d = &entry.descriptor;
    validate_name_version("shape", &d.name, &d.version)?;
    validate_properties(&d.properties)?;
    if d.features == FeatureRule::ByModel && entry.feature.is_none() {
        return Err("its feature rule is by_model, but it gives no feature routine".to_string());
    }
    Ok(())
}

/// Checks one model entry; returns the broken rule.
pub(crate) fn validate_entry(entry: &ModelEntry) -> Result<(), String> {
    let d = &entry.descriptor;
    validate_name_version("model", &d.name, &d.version)?;
    validate_properties(&d.properties)?;
    let mut seen = HashSet::new();
    for s in d.state.iter() {
        let name = s.name.as_str();
        if !is_snake_case(name) {
            return Err(format!("state slot name {name:?} is not snake_case"));
        }
        if !seen.insert(name) {
            return Err(format!("state slot {name:?} is declared twice"));
        }
        if s.unit.is_empty() {
            return Err(format!(
                "state slot {name:?} has no unit (write \"-\" for dimensionless)"
            ));
        }
    }
    if d.activity == Activity::Custom && d.activity_doc.trim().is_empty() {
        return Err("a custom activity rule needs an activity_doc saying how".to_string());
    }
    for (k, &id) in d.inputs.iter().enumerate() {
        if inputs::info(id).is_none() {
            return Err(format!(
                "it asks for input id {id}, which this engine (sdk {SDK_VERSION}) does not \
                 know; the plugin needs a newer talus"
            ));
        }
        if d.inputs[..k].contains(&id) {
            return Err(format!("input {} is asked for twice", inputs::name(id)));
        }
    }
    Ok(())
}

/// Checks the properties `given` for a model against its descriptor and
/// returns the full property set in descriptor order, defaults filled in.
///
/// Errors: an unknown name (listing the allowed ones), a name given twice,
/// a missing required property, a NaN or infinite value, a value outside
/// the declared range.
pub fn check_properties(
    descriptor: &ModelDescriptor,
    given: &[(String, f64)],
) -> Result<Vec<f64>, PropertyError> {
    check_values("model", &descriptor.name, &descriptor.properties, given)
}

/// [`check_properties`] for a shape kind's property values.
pub fn check_shape_properties(
    descriptor: &talus_sdk::ShapeDescriptor,
    given: &[(String, f64)],
) -> Result<Vec<f64>, PropertyError> {
    check_values("shape", &descriptor.name, &descriptor.properties, given)
}

/// The values `given` for the properties `props` of the model or shape
/// `model` (`noun` says which), in declared order, defaults filled in.
fn check_values(
    noun: &'static str,
    model: &str,
    props: &[talus_sdk::PropertyDesc],
    given: &[(String, f64)],
) -> Result<Vec<f64>, PropertyError> {
    let mut values: Vec<Option<f64>> = vec![None; props.len()];
    for (name, value) in given {
        let Some(idx) = props.iter().position(|p| p.name.as_str() == name) else {
            return Err(PropertyError::UnknownProperty {
                model: model.to_string(),
                noun,
                name: name.clone(),
                allowed: props.iter().map(|p| p.name.to_string()).collect(),
            });
        };
        if values[idx].is_some() {
            return Err(PropertyError::Duplicate {
                model: model.to_string(),
                noun,
                name: name.clone(),
            });
        }
        let p = &props[idx];
        if !value.is_finite() {
            return Err(PropertyError::NotFinite {
                model: model.to_string(),
                noun,
                name: name.clone(),
                value: *value,
            });
        }
        if *value < p.min || *value > p.max {
            return Err(PropertyError::OutOfRange {
                model: model.to_string(),
                noun,
                name: name.clone(),
                value: *value,
                min: p.min,
                max: p.max,
            });
        }
        values[idx] = Some(*value);
    }
    props
        .iter()
        .zip(values)
        .map(|(p, value)| {
            value.or(p.default).ok_or_else(|| PropertyError::Missing {
                model: model.to_string(),
                noun,
                name: p.name.to_string(),
                unit: p.unit.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("0.1.0"), Some((0, 1, 0)));
        assert_eq!(parse_version("12.0.3-alpha.1+build-5"), Some((12, 0, 3)));
        for bad in [
            "", "1", "1.2", "1.2.3.4", "01.2.3", "1.2.x", "1.2.3-", "v1.2.3", "1.2.3+",
        ] {
            assert_eq!(parse_version(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn snake_case() {
        for good in ["linear", "dp_nratio", "e2", "test_hooke", "a1_b2"] {
            assert!(is_snake_case(good), "{good}");
        }
        for bad in ["", "Linear", "_x", "x_", "a__b", "1a", "a-b", "a b", "kN"] {
            assert!(!is_snake_case(bad), "{bad}");
        }
    }
}
