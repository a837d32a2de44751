//! Builds a core [`Simulation`] from a validated run configuration and a
//! model registry. Every error names the place in the config it comes from.

use anyhow::Result;
use talus_config::{error_at, BallKind, BlockKind, BlockSource, RunConfig};
use talus_core::generate::{
    given_to_world, lattice_balls, lattice_block_spacing, lattice_blocks, random_balls,
    random_blocks, BlockMix, PlacedBlock, Template,
};
use talus_core::{
    BallInit, BlockInit, BlockShape, ClumpTemplate, Settings, Simulation, Vec3, Wall,
};
use talus_host::ModelRegistry;

use crate::origin;

fn v3(a: [f64; 3]) -> Vec3 {
    Vec3::from_array(a)
}

/// Creates the simulation ([`populate`]) and has the engine check it is
/// ready to run ([`Simulation::setup`]); a config that makes no body is
/// refused (there would be nothing to run).
pub fn build(cfg: &RunConfig, registry: &ModelRegistry) -> Result<Simulation> {
    let mut sim = populate(cfg, registry)?;
    if sim.n_balls() + sim.n_blocks() + sim.n_clumps() == 0 {
        return Err(error_at(
            &cfg.run.location,
            "the config makes no balls, blocks or clumps, so there is nothing to run; add a [[balls]], [[blocks]] or [[clumps]] table",
        )
        .into());
    }
    sim.setup().map_err(|e| origin::located(cfg, &e.into()))?;
    Ok(sim)
}

/// Creates the simulation: groups, balls, block shapes and blocks
/// (generators run here, balls first, so random block fills keep clear of
/// every ball), walls and model assignments for every pair of groups that
/// can touch; everything [`build`] does but the engine's final checks, for
/// tools and tests that look at what a config makes.
pub fn populate(cfg: &RunConfig, registry: &ModelRegistry) -> Result<Simulation> {
    let settings = Settings {
        gravity: v3(cfg.run.gravity),
        timestep: cfg.run.dt,
        cell_tolerance: cfg.run.cell_tolerance,
        block_resolution: cfg.run.block_resolution,
        seed: cfg.run.seed,
        blowup: cfg.run.blowup,
    };
    let mut sim = Simulation::new(settings);
    if let Some(c) = &cfg.cell {
        sim.set_cell(c.cell.clone());
    }

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

    // The config's shape order is the simulation's shape index.
    let shapes: Vec<BlockShape> = crate::plugin_shape::shapes(&cfg.shapes, registry)?;
    for s in &shapes {
        sim.add_shape(s.clone());
    }
    let rigid = Rigid {
        table: "blocks",
        sources: &cfg.blocks,
        shapes: &shapes,
    };
    rigid.add(&mut sim, &mut placed, Simulation::add_block)?;

    // Clumps come after every ball: their pebbles take the ball rows
    // after the balls'.
    for t in &cfg.templates {
        sim.add_template(t.template.clone());
    }
    let templates: Vec<ClumpTemplate> = cfg.templates.iter().map(|t| t.template.clone()).collect();
    let rigid = Rigid {
        table: "clumps",
        sources: &cfg.clumps,
        shapes: &templates,
    };
    rigid.add(&mut sim, &mut placed, Simulation::add_clump)?;

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

    // Every pair of groups that can touch needs a model: pairs of bodies
    // (balls and blocks) and body-wall pairs (walls never touch walls).
    let names: Vec<String> = sim.group_names().to_vec();
    let body_groups: Vec<String> = {
        let mut g: Vec<u16> = sim.balls().group.to_vec();
        g.extend(sim.blocks().group.iter());
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
    for (i, a) in body_groups.iter().enumerate() {
        for b in body_groups[i..].iter().chain(wall_groups.iter()) {
            pairs.push((a.clone(), b.clone()));
        }
    }
    for (a, b) in pairs {
        let Some(rule) = cfg.model_for(&a, &b) else {
            // At the table of the second group, naming the first's.
            let first = origin::group(cfg, &a).unwrap_or(&cfg.run.location);
            let second = origin::group(cfg, &b).unwrap_or(first);
            let from = if a == b {
                String::new()
            } else {
                format!(" (group '{a}' comes from the table at {first})")
            };
            return Err(error_at(
                second,
                format!(
                    "no [[models]] entry covers groups '{a}' and '{b}', which can touch{from}; add one with groups = [\"{a}\", \"{b}\"]"
                ),
            )
            .into());
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
        // Pairings of one model that choose different frames are
        // different runtimes of it (see `Simulation::add_model_with_frame`).
        let model = match sim.model_index_with_frame(&rule.model, rule.frame) {
            Some(m) => m,
            None => sim.add_model_with_frame(registered.entry.clone(), rule.frame),
        };
        let (ga, gb) = (sim.group(&a), sim.group(&b));
        sim.assign(ga, gb, model, values)
            .map_err(|e| error_at(&rule.location, e))?;
        if let Some(r) = rule.block_resolution {
            sim.set_block_resolution(ga, gb, r);
        }
    }
    for rule in &cfg.bonds {
        let mut ids = [0u16; 2];
        for (id, name) in ids.iter_mut().zip(&rule.groups) {
            let known = sim.group_names().iter().position(|g| g == name);
            *id = known.ok_or_else(|| {
                error_at(
                    &rule.location,
                    format!("[[bonds]]: no balls or walls are in group '{name}'"),
                )
            })? as u16;
        }
        let install = talus_core::BondInstall {
            groups: (ids[0], ids[1]),
            gap: rule.gap,
            at: rule.at,
        };
        sim.install_bonds(install)
            .map_err(|e| error_at(&rule.location, e))?;
    }
    Ok(sim)
}

/// A block to add: its pose, initial velocity (m/s) and spin (rad/s).
type BlockStart = (PlacedBlock, [f64; 3], [f64; 3]);

/// The rigid bodies of one kind's tables (`[[blocks]]` or `[[clumps]]`)
/// and the shapes they refer to.
struct Rigid<'a, S> {
    table: &'static str,
    sources: &'a [BlockSource],
    shapes: &'a [S],
}

impl<S: Template> Rigid<'_, S> {
    /// Makes every table's bodies with `add`, keeping clear of and adding
    /// to the `placed` bounding spheres.
    fn add(
        &self,
        sim: &mut Simulation,
        placed: &mut Vec<(Vec3, f64)>,
        add: fn(&mut Simulation, BlockInit) -> std::result::Result<u64, talus_core::SetupError>,
    ) -> Result<()> {
        for (k, src) in self.sources.iter().enumerate() {
            let table = self.table;
            let at = |e: String| error_at(&src.location, format!("[[{table}]] #{}: {e}", k + 1));
            let group = sim.group(&src.group);
            for (b, velocity, spin) in block_poses(src, self.shapes, placed).map_err(at)? {
                placed.push((b.pos, self.shapes[b.shape as usize].bounding_radius()));
                let init = BlockInit {
                    shape: b.shape,
                    pos: b.pos,
                    orientation: b.orientation,
                    velocity: v3(velocity),
                    spin: v3(spin),
                    density: src.density,
                    group,
                    damping: src.damping,
                    fixity: src.fix,
                };
                add(sim, init).map_err(|e| at(e.to_string()))?;
            }
        }
        Ok(())
    }
}

/// The blocks of one `[[blocks]]` source with their initial velocity and
/// spin: fills run the engine's generators (keeping clear of the `placed`
/// bounding spheres), explicit rows turn their shape from the frame it was
/// given in and default to where it was given.
fn block_poses<S: Template>(
    src: &BlockSource,
    shapes: &[S],
    placed: &[(Vec3, f64)],
) -> std::result::Result<Vec<BlockStart>, String> {
    let common = |b: PlacedBlock| (b, src.velocity, src.spin);
    Ok(match &src.kind {
        BlockKind::Random {
            choices,
            orientation,
            count,
            region,
            seed,
            max_attempts,
        } => {
            let mix = BlockMix {
                shapes,
                choices,
                orientation: *orientation,
            };
            random_blocks(&mix, *count, *region, *seed, *max_attempts as usize, placed)?
                .into_iter()
                .map(common)
                .collect()
        }
        BlockKind::Lattice {
            choices,
            orientation,
            spacing,
            region,
            counts,
            seed,
        } => {
            let mix = BlockMix {
                shapes,
                choices,
                orientation: *orientation,
            };
            // The config checks the spacing against its shapes; a shape of
            // a plugin is sized only here, once its plugin has loaded.
            let least = lattice_block_spacing(&mix);
            if *spacing < least * (1.0 - 1e-9) {
                return Err(format!(
                    "the lattice spacing {spacing:e} m is below {least:e} m, the least that keeps these shapes apart (a shape of a plugin is sized once its plugin loads): give 'spacing' of at least that"
                ));
            }
            lattice_blocks(&mix, *spacing, *region, *counts, *seed)
                .into_iter()
                .map(common)
                .collect()
        }
        BlockKind::Explicit(rows) => rows
            .iter()
            .map(|r| {
                let shape = &shapes[r.shape as usize];
                let b = PlacedBlock {
                    shape: r.shape,
                    pos: r.pos.map_or(shape.input_centroid(), v3),
                    orientation: given_to_world(shape, r.orientation),
                };
                (
                    b,
                    r.velocity.unwrap_or(src.velocity),
                    r.spin.unwrap_or(src.spin),
                )
            })
            .collect(),
    })
}

// The config's inactive-side bits are the core's.
const _: () = assert!(talus_core::wall::FRONT == 1 && talus_core::wall::BACK == 2);
