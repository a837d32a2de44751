//! `[run]`: run length, timestep, gravity, threads, seed and cell
//! tolerance.
//!
//! Guarantees of [`RunSettings`]: exactly one of `steps` (> 0) and `time`
//! (> 0 s); a fixed `dt` > 0 s, or `dt = "auto"` with `safety` in (0, 1]
//! (default 0.8, and only with auto); `threads` from 0 to
//! [`crate::limits::THREADS_PER_CPU`] per CPU; `seed` >= 0; a
//! `cell_tolerance` of 0 becomes `None` (auto); `blowup_fraction` >= 0 and
//! `blowup_energy_jump` 0 or > 1, where 0 turns the check off.

use serde_spanned::Spanned;

use super::{block_resolution, int_at_least, vec3_or, Ctx, Result};
use crate::spec::{DtSpec, RunSpec};
use crate::types::{Duration, RunSettings};
use talus_core::Timestep;
use talus_core::{BlockResolution, BlowUpLimits};

pub(super) fn run_settings(ctx: &Ctx<'_>, run: Spanned<RunSpec>) -> Result<RunSettings> {
    let run_span = run.span();
    let run = run.into_inner();

    let duration = match (&run.steps, &run.time) {
        (Some(_), Some(time)) => {
            return Err(ctx.invalid(
                &time.span(),
                "'steps' and 'time' are both given in [run]; give exactly one",
            ))
        }
        (None, None) => {
            return Err(ctx.missing(
                &run_span,
                "[run] needs exactly one of 'steps' (integer > 0) or 'time' (s, > 0)",
            ))
        }
        (Some(steps), None) => {
            Duration::Steps(int_at_least(ctx, steps, 1, "'steps' in [run]")? as u64)
        }
        (None, Some(time)) => {
            let t = time.get_ref().0;
            if t <= 0.0 {
                return Err(ctx.invalid(
                    &time.span(),
                    format!("'time' in [run] must be > 0 (s), got {t:?}"),
                ));
            }
            Duration::Time(t)
        }
    };

    let dt = match run.dt.as_ref().map(|d| (*d.get_ref(), d.span())) {
        None | Some((DtSpec::Auto, _)) => {
            let safety = match &run.safety {
                None => 0.8,
                Some(s) => {
                    let v = s.get_ref().0;
                    if !(v > 0.0 && v <= 1.0) {
                        return Err(ctx.invalid(
                            &s.span(),
                            format!("'safety' in [run] must be in (0, 1], got {v:?}"),
                        ));
                    }
                    v
                }
            };
            Timestep::Auto { safety }
        }
        Some((DtSpec::Fixed(v), span)) => {
            if v <= 0.0 {
                return Err(ctx.invalid(
                    &span,
                    format!("'dt' in [run] must be \"auto\" or a number > 0 (s), got {v:?}"),
                ));
            }
            if let Some(s) = &run.safety {
                return Err(ctx.invalid(
                    &s.span(),
                    "'safety' in [run] only applies with dt = \"auto\"; remove it or set dt = \"auto\"",
                ));
            }
            Timestep::Fixed(v)
        }
    };

    let threads = match &run.threads {
        Some(t) => {
            let n = int_at_least(ctx, t, 0, "'threads' in [run]")? as usize;
            ctx.machine
                .check_threads(n)
                .map_err(|why| ctx.invalid(&t.span(), format!("'threads' in [run] {why}")))?;
            n
        }
        None => 0,
    };
    let seed = match &run.seed {
        Some(s) => int_at_least(ctx, s, 0, "'seed' in [run]")? as u64,
        None => 1,
    };
    let cell_tolerance = match &run.cell_tolerance {
        None => None,
        Some(c) => {
            let v = c.get_ref().0;
            if v < 0.0 {
                return Err(ctx.invalid(
                    &c.span(),
                    format!("'cell_tolerance' in [run] must be >= 0 (m), got {v:?}"),
                ));
            }
            (v > 0.0).then_some(v)
        }
    };

    let defaults = BlowUpLimits::default();
    let fraction = match &run.blowup_fraction {
        None => defaults.fraction,
        Some(f) => {
            let v = f.get_ref().0;
            if v < 0.0 {
                return Err(ctx.invalid(
                    &f.span(),
                    format!(
                        "'blowup_fraction' in [run] must be >= 0 (a fraction of a body's size; \
                         0 turns the check off), got {v:?}"
                    ),
                ));
            }
            (v > 0.0).then_some(v)
        }
    };
    let energy_jump = match &run.blowup_energy_jump {
        None => defaults.energy_jump,
        Some(j) => {
            let v = j.get_ref().0;
            if !(v == 0.0 || v > 1.0) {
                return Err(ctx.invalid(
                    &j.span(),
                    format!(
                        "'blowup_energy_jump' in [run] must be a factor > 1, or 0 to turn the \
                         check off, got {v:?}"
                    ),
                ));
            }
            (v > 0.0).then_some(v)
        }
    };

    let block_resolution = run
        .block_resolution
        .as_ref()
        .map_or(BlockResolution::Full, |r| block_resolution(*r.get_ref()));

    Ok(RunSettings {
        location: ctx.loc(&run_span),
        duration,
        dt,
        gravity: vec3_or(&run.gravity, [0.0; 3]),
        threads,
        seed,
        cell_tolerance,
        block_resolution,
        blowup: BlowUpLimits {
            fraction,
            energy_jump,
        },
    })
}
