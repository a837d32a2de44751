//! The talus command line as a library: load a run config and its plugins,
//! build the simulation, step it with a progress bar and write the Parquet
//! dataset. The `talus` binary is a thin clap front end over this.
//!
//! `anyhow` lives here only; the library crates below return typed errors.

pub mod origin;
pub mod plugin_shape;
pub mod record;
pub mod resume;
pub mod scene;
pub mod signals;
pub mod vtk;

use anyhow::{anyhow, Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::path::{Path, PathBuf};
use std::time::Instant;
use talus_config::{error_at, Duration, RunConfig};
use talus_core::Simulation;
use talus_host::{ModelRegistry, Origin};
use talus_output::{DatasetWriter, OutputSummary, RunState, Table, WriterOptions};

/// Overrides from the command line.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Output folder instead of the config's `[output] dir`.
    pub out: Option<PathBuf>,
    /// Number of steps instead of the config's duration.
    pub steps: Option<u64>,
    /// Worker threads instead of the config's `run.threads` (0 = all cores).
    pub threads: Option<usize>,
    /// Draw a progress bar (only when stderr is a terminal).
    pub progress: bool,
    /// Print the summary.
    pub quiet: bool,
    /// Continue the run whose dataset is in this folder from its
    /// checkpoint, instead of starting anew (the output goes there).
    pub resume: Option<PathBuf>,
    /// Stop cleanly on SIGINT and SIGTERM (the `talus` binary sets it; a
    /// library caller may not want its process's signals taken over).
    pub handle_signals: bool,
}

/// What a finished run reports.
#[derive(Clone, Debug)]
pub struct RunSummary {
    /// Cycles done.
    pub steps: u64,
    /// Simulated time (s).
    pub time: f64,
    /// Wall-clock seconds of the stepping loop.
    pub loop_seconds: f64,
    /// Balls.
    pub balls: usize,
    /// Blocks.
    pub blocks: usize,
    /// Clumps.
    pub clumps: usize,
    /// Contacts at the end.
    pub contacts: usize,
    /// Active contacts at the end.
    pub active: usize,
    /// Output folder.
    pub out: PathBuf,
    /// Rows and parts written.
    pub output: OutputSummary,
    /// Where the stepping loop's time went, by stage of the cycle.
    pub stages: talus_core::StageTimes,
    /// Block contacts that kept their last normal or plane.
    pub fallbacks: talus_core::BlockFallbacks,
    /// The signal that stopped the run before its end, if one did.
    pub interrupted: Option<signals::Interrupt>,
}

/// A registry with the embedded default models.
pub fn default_registry() -> Result<ModelRegistry> {
    let mut reg = ModelRegistry::new();
    reg.add_embedded(talus_plugin_linear::root_module())
        .map_err(|e| anyhow!("embedded plugin: {e}"))?;
    reg.add_embedded(talus_plugin_volume::root_module())
        .map_err(|e| anyhow!("embedded plugin: {e}"))?;
    reg.add_embedded(talus_plugin_linearbond::root_module())
        .map_err(|e| anyhow!("embedded plugin: {e}"))?;
    Ok(reg)
}

/// Loads and validates a config, then loads the plugins it names.
pub fn load(path: &Path) -> Result<(RunConfig, ModelRegistry)> {
    let cfg = talus_config::load(path).map_err(|e| anyhow!("{e}"))?;
    let mut reg = default_registry()?;
    for p in &cfg.plugins {
        reg.load_path(&p.path)
            .map_err(|e| anyhow!("{}: {e}", p.location))?;
    }
    Ok((cfg, reg))
}

/// Validates a config completely (plugins, properties, generators, walls)
/// and prepares it as a run would (cell space, first contacts and forces,
/// timestep), without stepping: what `run` would refuse before step 1,
/// `check` refuses.
pub fn check(path: &Path) -> Result<Simulation> {
    Ok(check_noted(path)?.0)
}

/// [`check`], with the notes a user should see about the config (see
/// [`notes`]).
pub fn check_noted(path: &Path) -> Result<(Simulation, Vec<String>)> {
    let (cfg, reg) = load(path)?;
    let mut sim = scene::build(&cfg, &reg)?;
    sim.prepare().map_err(|e| origin::located(&cfg, &e))?;
    let mut notes = notes(&cfg);
    notes.extend(setup_notes(&sim));
    Ok((sim, notes))
}

/// What a user should know about how the run was set up: the walls cut to
/// fit a periodic cell, and a fixed timestep above the automatic rule's
/// limit.
pub fn setup_notes(sim: &Simulation) -> Vec<String> {
    let cuts = sim.wall_cuts().iter().map(|(name, before, after)| {
        format!(
            "wall '{name}': its {before} facets cut into {after} so that each meets one \
             image of a body in the periodic cell (docs/physics.md, \"Walls in the cell\")"
        )
    });
    let step = sim.fixed_step_over_limit().map(|(dt, limit)| {
        format!(
            "dt = {dt:e} s is {:.2} times the largest step the automatic rule gives a body on \
             one contact ({limit:.3e} s at safety 1): contacts may gain energy in impacts \
             (docs/physics.md, \"Timestep\")",
            dt / limit
        )
    });
    cuts.chain(step).collect()
}

/// What a user should know about a valid config before running it: for
/// each clump shape filled from a mesh, how closely its pebbles fill the
/// solid.
pub fn notes(cfg: &RunConfig) -> Vec<String> {
    cfg.templates
        .iter()
        .filter_map(|t| {
            let fill = t.fill.as_ref()?;
            let f = &fill.fidelity;
            let n = t.template.pebbles.len();
            let short = if n < fill.asked {
                format!(" (of {} asked: the rest would cover less than a grid step)", fill.asked)
            } else {
                String::new()
            };
            Some(format!(
                "clump shape '{}': {n} pebbles{short} fill {}: volume {:.1} % of the solid's, \
                 Jaccard index {:.3}, surface up to {:.3e} m ({:.1} % of its size) outside the pebbles",
                t.template.name,
                fill.path.display(),
                100.0 * f.volume_ratio,
                f.jaccard,
                f.surface_gap,
                100.0 * f.surface_gap / f.size,
            ))
        })
        .collect()
}

fn thread_pool(n: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .context("cannot start the worker threads")
}

fn run_json(
    cfg: &RunConfig,
    reg: &ModelRegistry,
    sim: &Simulation,
    threads: usize,
) -> serde_json::Value {
    let models: Vec<serde_json::Value> = sim
        .models
        .iter()
        .map(|m| {
            let r = reg.get(&m.name);
            serde_json::json!({
                "name": m.name,
                "version": m.entry.descriptor.version.to_string(),
                "plugin": r.map(|r| r.plugin.clone()),
                "origin": r.map(|r| match &r.origin {
                    Origin::Embedded => "embedded".to_string(),
                    Origin::Library(p) => p.display().to_string(),
                }),
                "properties": m.entry.descriptor.properties.iter().map(|p| serde_json::json!({
                    "name": p.name.to_string(), "unit": p.unit.to_string()
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({
        "talus_version": env!("CARGO_PKG_VERSION"),
        "sdk_version": talus_sdk::SDK_VERSION,
        "config_path": cfg.source.display().to_string(),
        "config": cfg.text,
        "threads": threads,
        "seed": cfg.run.seed,
        "models": models,
        "units": {"length": "m", "time": "s", "mass": "kg", "force": "N", "moment": "N m", "energy": "J", "angle": "rad"},
    })
}

/// Runs a config to the end (or to `opts.steps`).
pub fn run(path: &Path, opts: &RunOptions) -> Result<RunSummary> {
    if let Some(n) = opts.threads {
        talus_config::Machine::this()
            .check_threads(n)
            .map_err(|why| anyhow!("--threads {why}"))?;
    }
    let (cfg, reg) = load(path)?;
    if !opts.quiet {
        for note in notes(&cfg) {
            eprintln!("note: {note}");
        }
    }
    let threads = opts.threads.unwrap_or(cfg.run.threads);
    let pool = thread_pool(threads)?;
    let n_threads = pool.current_num_threads();
    let cpus = talus_core::available_cpus();
    if n_threads > cpus && !opts.quiet {
        eprintln!(
            "note: {n_threads} threads on {cpus} CPUs; the threads will wait for each other \
             whenever one is descheduled, so fewer threads (0 = one per CPU) usually run faster"
        );
    }
    pool.install(|| run_loaded(&cfg, &reg, opts, n_threads))
}

fn run_loaded(
    cfg: &RunConfig,
    reg: &ModelRegistry,
    opts: &RunOptions,
    threads: usize,
) -> Result<RunSummary> {
    let mut sim = scene::build(cfg, reg)?;
    // Everything `check` refuses is refused here too, in the same words,
    // before the dataset exists.
    sim.prepare().map_err(|e| origin::located(cfg, &e))?;
    if !opts.quiet {
        for note in setup_notes(&sim) {
            eprintln!("note: {note}");
        }
    }
    let options = WriterOptions {
        overwrite: cfg.output.overwrite,
        max_part_age: Some(std::time::Duration::from_secs_f64(cfg.output.part_seconds)),
        ..Default::default()
    };
    let (out, writer) = match &opts.resume {
        Some(dir) => {
            let (checkpoint, parts) = resume::read(dir, cfg)?;
            sim.restore(checkpoint)
                .map_err(|e| anyhow!("{}: {e}", resume::path(dir).display()))?;
            let writer = DatasetWriter::resume(dir, options, parts).map_err(|e| anyhow!("{e}"))?;
            (dir.clone(), writer)
        }
        None => {
            let out = opts.out.clone().unwrap_or_else(|| cfg.output.dir.clone());
            // A folder the config names is reported at its 'dir' key.
            let at = match (&opts.out, &cfg.output.dir_location) {
                (None, Some(loc)) => Some(loc),
                _ => None,
            };
            let writer = DatasetWriter::create(&out, options).map_err(|e| match at {
                Some(loc) => anyhow::Error::from(error_at(loc, format!("[output] dir: {e}"))),
                None => anyhow!("{e}"),
            })?;
            resume::remove_stale(&out)?;
            (out, writer)
        }
    };
    let resumed = opts.resume.is_some();
    let interrupts = if opts.handle_signals {
        Some(signals::install()?)
    } else {
        None
    };
    writer
        .write_run_json(&run_json(cfg, reg, &sim, threads))
        .map_err(|e| anyhow!("{e}"))?;
    let recorder = record::Recorder::new(&sim.snapshot());
    let intervals = &cfg.output;
    let vtk = if resumed {
        vtk::Series::resume(&out, intervals.vtk, sim.step)?
    } else {
        vtk::Series::start(&out, intervals.vtk, intervals.overwrite)?
    };
    let record = |sim: &mut Simulation, writer: &DatasetWriter, force: bool| -> Result<()> {
        // Every broken bond is written, whatever the frame intervals.
        let breaks = sim.take_bond_breaks();
        if !breaks.is_empty() {
            writer
                .send(Table::Bonds, recorder.bonds(&breaks))
                .map_err(|e| anyhow!("{e}"))?;
        }
        let step = sim.step;
        let due = |every: u64| every > 0 && (force || step.is_multiple_of(every));
        let (contacts, bodies, walls) = (
            due(intervals.contacts),
            due(intervals.bodies),
            due(intervals.walls),
        );
        // The cell's row needs no snapshot: its stress reads the last
        // contact pass as it stands.
        if due(intervals.cell) {
            if let Some(frame) = recorder.cell(&sim.view()) {
                writer
                    .send(Table::Cell, frame)
                    .map_err(|e| anyhow!("{e}"))?;
            }
        }
        let vtk = vtk.as_ref().filter(|_| due(intervals.vtk));
        if !(contacts || bodies || walls) {
            // A VTK frame alone refreshes no contact: it cannot change the run.
            return vtk.map_or(Ok(()), |vtk| vtk.write(&sim.view()));
        }
        let snap = sim.snapshot();
        let send = |table, frame| writer.send(table, frame).map_err(|e| anyhow!("{e}"));
        if contacts {
            send(Table::Contacts, recorder.contacts(&snap))?;
        }
        if bodies {
            send(Table::Bodies, recorder.bodies(&snap))?;
        }
        if walls && snap.n_walls() > 0 {
            send(Table::Walls, recorder.walls(&snap))?;
        }
        if let Some(vtk) = vtk {
            vtk.write(&snap)?;
        }
        Ok(())
    };
    // After a step's frames are sent: the data is whole up to this step.
    let record = |sim: &mut Simulation, writer: &DatasetWriter, force: bool| -> Result<()> {
        record(sim, writer, force)?;
        writer.mark_complete(sim.step);
        Ok(())
    };

    // From here on, every failure still closes the dataset cleanly.
    let result = (|| -> Result<()> {
        if resumed {
            // Everything up to the checkpoint is in the parts kept.
            writer.mark_complete(sim.step);
            return Ok(());
        }
        // The block shapes never change: written once, up front.
        {
            let snap = sim.snapshot();
            if !snap.shapes().is_empty() {
                let send = |table, frame| writer.send(table, frame).map_err(|e| anyhow!("{e}"));
                send(Table::ShapeVertices, recorder.shape_vertices(&snap))?;
                send(Table::ShapeFaces, recorder.shape_faces(&snap))?;
            }
            if !snap.templates().is_empty() {
                let send = |table, frame| writer.send(table, frame).map_err(|e| anyhow!("{e}"));
                send(Table::ClumpPebbles, recorder.clump_pebbles(&snap))?;
            }
        }
        record(&mut sim, &writer, false)?;
        Ok(())
    })();
    if let Err(e) = result {
        let _ = writer.finish_as(RunState::Failed(format!("{e:#}")));
        return Err(e.context(format!(
            "the run stopped before step {}; the output written so far is in {}",
            sim.step + 1,
            out.display()
        )));
    }

    let total_steps = opts.steps.or(match cfg.run.duration {
        Duration::Steps(n) => Some(n),
        Duration::Time(_) => None,
    });
    let end_time = match cfg.run.duration {
        Duration::Time(t) if opts.steps.is_none() => Some(t),
        _ => None,
    };
    let estimate = |sim: &Simulation| -> u64 {
        total_steps.unwrap_or_else(|| {
            let left = end_time.unwrap_or(0.0) - sim.time;
            sim.step + (left / sim.dt.max(1e-300)).ceil().max(0.0) as u64
        })
    };
    let bar = if opts.progress {
        let pb = ProgressBar::with_draw_target(
            Some(estimate(&sim)),
            ProgressDrawTarget::stderr_with_hz(8),
        );
        pb.set_style(
            ProgressStyle::with_template(
                "{bar:30.cyan/blue} step {pos}/{len} | {msg} | {per_sec} | ETA {eta}",
            )
            .expect("the template is valid")
            .progress_chars("=> "),
        );
        pb
    } else {
        ProgressBar::hidden()
    };
    let start = Instant::now();
    let mut failure = None;
    let mut interrupted = None;
    let mut checkpointed = sim.step;
    let every = cfg.output.checkpoint;
    loop {
        let done = match (total_steps, end_time) {
            (Some(n), _) => sim.step >= n,
            (None, Some(t)) => sim.time >= t,
            (None, None) => true,
        };
        if done {
            break;
        }
        interrupted = interrupts.as_ref().and_then(signals::Interrupts::received);
        if interrupted.is_some() {
            break;
        }
        if let Err(e) = sim.cycle() {
            failure = Some(anyhow!("{}: {e}", cfg.source.display()));
            break;
        }
        let last =
            total_steps.is_some_and(|n| sim.step >= n) || end_time.is_some_and(|t| sim.time >= t);
        if let Err(e) = record(&mut sim, &writer, last) {
            failure = Some(e);
            break;
        }
        if every > 0 && sim.step.is_multiple_of(every) {
            if let Err(e) = resume::write(&out, cfg, &sim, &writer) {
                failure = Some(e);
                break;
            }
            checkpointed = sim.step;
        }
        if sim.step % 64 == 0 {
            bar.set_length(estimate(&sim));
            bar.set_position(sim.step);
            bar.set_message(format!(
                "t = {:.4e} s | {} contacts ({} active)",
                sim.time,
                sim.n_contacts(),
                sim.n_active()
            ));
        }
    }
    // An interrupted run can always be continued from where it stopped.
    if interrupted.is_some() && failure.is_none() && checkpointed != sim.step {
        if let Err(e) = resume::write(&out, cfg, &sim, &writer) {
            failure = Some(e);
        }
    }
    let loop_seconds = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let end = match (&failure, interrupted) {
        (Some(e), _) => RunState::Failed(format!("{e:#}")),
        (None, Some(signal)) => RunState::Interrupted(signal.name().to_owned()),
        (None, None) => RunState::Finished,
    };
    let output = writer.finish_as(end).map_err(|e| anyhow!("{e}"));
    drop(interrupts);
    if let Some(e) = failure {
        return Err(e.context(format!(
            "the run stopped at step {}; the output written so far is in {}",
            sim.step,
            out.display()
        )));
    }
    let output = output?;
    Ok(RunSummary {
        steps: sim.step,
        time: sim.time,
        loop_seconds,
        balls: sim.n_balls(),
        blocks: sim.n_blocks(),
        clumps: sim.n_clumps(),
        contacts: sim.n_contacts(),
        active: sim.n_active(),
        out,
        output,
        stages: sim.stage_times,
        fallbacks: sim.block_fallbacks(),
        interrupted,
    })
}
