//! Shapes that plugins add, made for a run: a `[[shapes]]` table of kind
//! `"plugin"` resolved against the loaded plugins (its property values
//! checked against the shape's descriptor, its mass properties asked of
//! the plugin) and handed to the core as a [`ConvexShape`].

use std::sync::Arc;

use anyhow::Result;
use talus_config::{error_at, PluginShape, ShapeSource};
use talus_core::{BlockShape, ConvexShape, ShapeMass, ShapePoint, Vec3};
use talus_host::{ModelRegistry, RegisteredShape};
use talus_sdk::ClosestPoint;

/// A registered shape kind with one set of property values: what the
/// core's convex kernels query, one point at a time.
struct Bound {
    shape: RegisteredShape,
    values: Vec<f64>,
}

impl ConvexShape for Bound {
    fn kind(&self) -> &str {
        self.shape.name()
    }

    fn property_names(&self) -> Vec<String> {
        self.shape.property_names()
    }

    fn support(&self, dir: Vec3) -> Result<Vec3, String> {
        let mut out = [[0.0; 3]];
        self.shape
            .support(&self.values, &[], &[dir.to_array()], &mut out)
            .map_err(|e| e.to_string())?;
        Ok(Vec3::from_array(out[0]))
    }

    fn has_closest_point(&self) -> bool {
        self.shape.has_closest_point()
    }

    fn closest_point(&self, query: Vec3) -> Result<ShapePoint, String> {
        let mut out = [ClosestPoint::default()];
        self.shape
            .closest_points(&self.values, &[], &[query.to_array()], &mut out)
            .map_err(|e| e.to_string())?;
        let [p] = out;
        Ok(ShapePoint {
            point: Vec3::from_array(p.point),
            normal: Vec3::from_array(p.normal),
            distance: p.distance,
        })
    }

    fn has_features(&self) -> bool {
        self.shape.has_features()
    }

    fn feature(&self, point: Vec3) -> Result<u32, String> {
        let mut out = [0];
        self.shape
            .features(&self.values, &[], &[point.to_array()], &mut out)
            .map_err(|e| e.to_string())?;
        Ok(out[0])
    }
}

/// The shape of `source` (a `[[shapes]]` table of kind `"plugin"`,
/// described by `plugin`), made from the plugin that adds its kind.
/// Errors point at the table, its `shape` key or the property at fault.
pub fn make(
    source: &ShapeSource,
    plugin: &PluginShape,
    registry: &ModelRegistry,
) -> Result<BlockShape> {
    let name = &source.shape.name;
    let given: Vec<(String, f64)> = plugin
        .properties
        .iter()
        .map(|(k, v, _)| (k.clone(), *v))
        .collect();
    let values = registry
        .resolve_shape_properties(&plugin.kind, &given)
        .map_err(|e| {
            let text = e.to_string();
            let at = plugin
                .properties
                .iter()
                .find(|(k, _, _)| text.contains(&format!("\"{k}\"")))
                .map(|(_, _, loc)| loc)
                .unwrap_or(&plugin.kind_location);
            error_at(at, format!("shape '{name}': {text}"))
        })?;
    let Some(registered) = registry.shape(&plugin.kind) else {
        return Err(error_at(
            &plugin.kind_location,
            format!("shape '{name}': no shape kind '{}' loaded", plugin.kind),
        )
        .into());
    };
    let at = |e: String| error_at(&source.location, format!("shape '{name}': {e}"));
    let mass = registered
        .mass_properties(&values)
        .map_err(|e| at(e.to_string()))?;
    let mass = ShapeMass {
        volume: mass.volume,
        centroid: Vec3::from_array(mass.centroid),
        inertia: mass.inertia,
        bounding_radius: mass.bounding_radius,
    };
    let bound = Bound {
        shape: registered.clone(),
        values: values.clone(),
    };
    BlockShape::convex(name, Arc::new(bound), values, mass).map_err(|e| at(e.to_string()).into())
}

/// Every shape of the config in its order: polyhedra as the config made
/// them, shapes of plugins made from their plugins.
pub fn shapes(sources: &[ShapeSource], registry: &ModelRegistry) -> Result<Vec<BlockShape>> {
    sources
        .iter()
        .map(|s| match &s.plugin {
            Some(p) => make(s, p, registry),
            None => Ok(s.shape.clone()),
        })
        .collect()
}
