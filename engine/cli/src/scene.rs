//! Builds a core [`Simulation`] from a validated run configuration and a
//! model registry. Every error names the place in the config it comes from.

use anyhow::{anyhow, Result};
use talus_config::{error_at, BallKind, RunConfig};
use talus_core::generate::{lattice_balls, random_balls};
use talus_core::{BallInit, Settings, Simulation, Vec3, Wall};
use talus_host::ModelRegistry;

fn v3(a: [f64; 3]) -> Vec3 {
    Vec3::from_array(a)
}

/// Creates the simulation: groups, balls (generators run here), walls and
/// model assignments for every pair of groups that can touch.
pub fn build(cfg: &RunConfig, registry: &ModelRegistry) -> Result<Simulation> {
    let settings = Settings {
        gravity: v3(cfg.run.gravity),
        timestep: cfg.run.dt,
        cell_tolerance: cfg.run.cell_tolerance,
    };
    let mut sim = Simulation::new(settings);

    let mut placed: Vec<(Vec3, f64)> = Vec::new();
    for (k, src) in cfg.balls.iter().enumerate() {
        let group = sim.group(&src.group);
        let rows: Vec<(Vec3, f64, Option<[f64; 3]>)> = match &src.kind {
            BallKind::Random {
                count,
                radius,
                region,
                seed,
                max_attempts,
            } => random_balls(
                *count,
                *radius,
                *region,
                *seed,
                *max_attempts as usize,
                &placed,
            )
            .map_err(|e| error_at(&src.location, format!("[[balls]] #{}: {e}", k + 1)))?
            .into_iter()
            .map(|(p, r)| (p, r, None))
            .collect(),
            BallKind::Lattice {
                radius,
                spacing,
                region,
                counts,
            } => lattice_balls(*radius, *spacing, *region, *counts)
                .into_iter()
                .map(|(p, r)| (p, r, None))
                .collect(),
            BallKind::Explicit(rows) => rows
                .iter()
                .map(|r| (v3(r.pos), r.radius, r.velocity))
                .collect(),
        };
        for (pos, radius, velocity) in rows {
            placed.push((pos, radius));
            sim.add_ball(BallInit {
                pos,
                radius,
                density: src.density,
                velocity: v3(velocity.unwrap_or(src.velocity)),
                spin: v3(src.spin),
                group,
                damping: src.damping,
                fixity: src.fix,
            })
            .map_err(|e| error_at(&src.location, format!("[[balls]] #{}: {e}", k + 1)))?;
        }
    }

    for w in &cfg.walls {
        let group = sim.group(&w.group);
        let mut wall = Wall::new(&w.name, &w.mesh.vertices, &w.mesh.triangles, w.centre)
            .map_err(|e| error_at(&w.location, e))?;
        wall.resolution = w.resolution;
        wall.cutoff_angle = w.cutoff_angle_deg.to_radians();
        wall.deform.clone_from(&w.deform);
        wall.servo = w.servo;
        if !w.inactive.is_empty() {
            // The config's bits are the core's FRONT and BACK.
            wall.inactive.clone_from(&w.inactive);
        }
        if let Some(m) = w.motion {
            wall.motion = m;
        }
        sim.add_wall(wall, group);
    }

    // Every pair of groups that can touch needs a model: ball-ball pairs
    // and ball-wall pairs (walls never touch walls).
    let names: Vec<String> = sim.group_names().to_vec();
    let ball_groups: Vec<String> = {
        let mut g: Vec<u16> = sim.balls().group.to_vec();
        g.sort_unstable();
        g.dedup();
        g.into_iter().map(|i| names[i as usize].clone()).collect()
    };
    let wall_groups: Vec<String> = {
        let mut g: Vec<u16> = sim.walls().iter().map(|w| w.group).collect();
        g.sort_unstable();
        g.dedup();
        g.into_iter().map(|i| names[i as usize].clone()).collect()
    };
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (i, a) in ball_groups.iter().enumerate() {
        for b in ball_groups[i..].iter().chain(wall_groups.iter()) {
            pairs.push((a.clone(), b.clone()));
        }
    }
    for (a, b) in pairs {
        let Some(rule) = cfg.model_for(&a, &b) else {
            return Err(anyhow!(
                "{}: no [[models]] entry covers groups '{a}' and '{b}', which can touch; add one with groups = [\"{a}\", \"{b}\"]",
                cfg.source.display()
            ));
        };
        let registered = registry.get(&rule.model).ok_or_else(|| {
            let known: Vec<String> = registry
                .models()
                .iter()
                .map(|m| m.entry.descriptor.name.to_string())
                .collect();
            error_at(
                &rule.location,
                format!(
                    "unknown model '{}'; known models: {}",
                    rule.model,
                    known.join(", ")
                ),
            )
        })?;
        let given: Vec<(String, f64)> = rule
            .properties
            .iter()
            .map(|(k, v, _)| (k.clone(), *v))
            .collect();
        let values = registry
            .resolve_properties(&rule.model, &given)
            .map_err(|e| {
                // Point at the offending key when the message names one.
                let at = rule
                    .properties
                    .iter()
                    .find(|(k, _, _)| {
                        let m = e.to_string();
                        m.contains(&format!("'{k}'")) || m.contains(&format!("\"{k}\""))
                    })
                    .map(|(_, _, loc)| loc)
                    .unwrap_or(&rule.location);
                error_at(at, format!("model '{}': {e}", rule.model))
            })?;
        let model = match sim.model_index(&rule.model) {
            Some(m) => m,
            None => sim.add_model(registered.entry.clone()),
        };
        let (ga, gb) = (sim.group(&a), sim.group(&b));
        sim.assign(ga, gb, model, values)
            .map_err(|e| error_at(&rule.location, e))?;
    }
    sim.setup()
        .map_err(|e| anyhow!("{}: {e}", cfg.source.display()))?;
    Ok(sim)
}

// The config's inactive-side bits are the core's.
const _: () = assert!(talus_core::wall::FRONT == 1 && talus_core::wall::BACK == 2);
