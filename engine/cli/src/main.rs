//! `talus`: run, check and inspect DEM simulations.

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use talus_cli::{RunOptions, RunSummary};

#[derive(Parser)]
#[command(
    name = "talus",
    version,
    about = "talus: a discrete element method engine"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a simulation described by a TOML config.
    Run {
        /// The run config.
        config: PathBuf,
        /// Output folder (default: `dir` of the config's output table).
        #[arg(long, conflicts_with = "resume")]
        out: Option<PathBuf>,
        /// Continue the run whose output folder is DIR from its checkpoint
        /// (written every `checkpoint` steps of the output table and on SIGINT/SIGTERM),
        /// with the same config.
        #[arg(long, value_name = "DIR")]
        resume: Option<PathBuf>,
        /// Number of steps (overrides the config's steps or time).
        #[arg(long)]
        steps: Option<u64>,
        /// Worker threads (0 = all cores; overrides run.threads).
        #[arg(long)]
        threads: Option<usize>,
        /// No progress bar and no summary.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Validate a config (plugins, properties, generators, walls) without running it.
    Check {
        /// The run config.
        config: PathBuf,
    },
    /// List every contact model and shape found: embedded ones and those in PATHs.
    Plugins {
        /// Plugin libraries or folders of libraries.
        paths: Vec<PathBuf>,
    },
}

fn print_summary(s: &RunSummary) {
    let rate = s.steps as f64 / s.loop_seconds.max(1e-9);
    // Balls, blocks and clumps alike are the bodies a step moves.
    let bodies = s.balls + s.blocks + s.clumps;
    println!("steps           {}", s.steps);
    println!("simulated time  {:.6e} s", s.time);
    println!(
        "wall time       {:.2} s ({:.0} steps/s, {:.3e} body-steps/s)",
        s.loop_seconds,
        rate,
        rate * bodies as f64
    );
    // Like the timing breakdown of LAMMPS: the share of the loop's wall
    // time per stage; "other" is output, progress bar and bookkeeping.
    let share = |t: f64| 100.0 * t / s.loop_seconds.max(1e-9);
    let mut stages: Vec<String> = s
        .stages
        .named()
        .iter()
        .map(|(name, t)| format!("{name} {:.1} %", share(*t)))
        .collect();
    stages.push(format!(
        "other {:.1} %",
        share((s.loop_seconds - s.stages.total()).max(0.0))
    ));
    println!("time by stage   {}", stages.join(", "));
    println!("balls           {}", s.balls);
    if s.blocks > 0 {
        println!("blocks          {}", s.blocks);
    }
    if s.clumps > 0 {
        println!("clumps          {}", s.clumps);
    }
    println!(
        "contacts        {} ({} active, {:.3} active per body)",
        s.contacts,
        s.active,
        s.active as f64 / bodies.max(1) as f64
    );
    if let Some((step, a, b)) = s.fallbacks.first {
        let name = |p: talus_core::snapshot::PieceId| match p {
            talus_core::snapshot::PieceId::Ball { id } => format!("ball {id}"),
            talus_core::snapshot::PieceId::Block { id } => format!("block {id}"),
            talus_core::snapshot::PieceId::Pebble { clump, index } => {
                format!("pebble {index} of clump {clump}")
            }
            talus_core::snapshot::PieceId::Facet { wall, index } => {
                format!("facet {index} of wall {wall}")
            }
        };
        println!(
            "block overlaps  {} kept their last normal (an overlap larger than a block, a centroid outside one, or no overlap polyhedron); first at step {step}, {} and {}",
            s.fallbacks.count,
            name(a),
            name(b)
        );
    }
    if s.output.bonds.rows > 0 {
        println!(
            "bonds broken    {} (one row each in the bonds table)",
            s.output.bonds.rows
        );
    }
    let cell = match s.output.cell.rows {
        0 => String::new(),
        n => format!(", cell {n} rows"),
    };
    println!(
        "output          {} (contacts {} rows, bodies {} rows, walls {} rows{cell})",
        s.out.display(),
        s.output.contacts.rows,
        s.output.bodies.rows,
        s.output.walls.rows
    );
}

fn main_inner(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Run {
            config,
            out,
            resume,
            steps,
            threads,
            quiet,
        } => {
            let opts = RunOptions {
                out,
                steps,
                threads,
                progress: !quiet && std::io::stderr().is_terminal(),
                quiet,
                resume,
                handle_signals: true,
            };
            let summary = talus_cli::run(&config, &opts)?;
            if !quiet {
                print_summary(&summary);
            }
            if let Some(signal) = summary.interrupted {
                eprintln!(
                    "interrupted by {} after step {}: the dataset in {} is complete through that step; \
                     continue with `talus run {} --resume {}`",
                    signal.name(),
                    summary.steps,
                    summary.out.display(),
                    config.display(),
                    summary.out.display()
                );
                return Ok(ExitCode::from(signal.exit_status()));
            }
        }
        Command::Check { config } => {
            let (sim, notes) = talus_cli::check_noted(&config)?;
            let clumps = match sim.n_clumps() {
                0 => String::new(),
                n => format!(
                    ", {n} clumps of {} shapes ({} pebbles)",
                    sim.templates().len(),
                    sim.balls().len() - sim.n_balls()
                ),
            };
            println!(
                "{}: ok ({} balls, {} blocks of {} shapes{clumps}, {} walls, {} models)",
                config.display(),
                sim.n_balls(),
                sim.n_blocks(),
                sim.shapes().len(),
                sim.walls().len(),
                sim.models.len()
            );
            for note in notes {
                println!("{note}");
            }
        }
        Command::Plugins { paths } => {
            let mut reg = talus_cli::default_registry()?;
            for p in &paths {
                reg.load_path(p).map_err(|e| anyhow::anyhow!("{e}"))?;
            }
            for m in reg.models() {
                println!("{}", talus_host::describe(m));
            }
            for shape in reg.shapes() {
                println!("{}", talus_host::describe_shape(shape));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match main_inner(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
