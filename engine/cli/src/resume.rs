//! Checkpoint files of a run and continuing a run from one.
//!
//! Reads: `OUT/checkpoint.bin`. Writes: `OUT/checkpoint.bin`, atomically
//! (a hidden temporary file, synced, then renamed), the latest only.
//! Invariant: a checkpoint is written only after the dataset's writer has
//! closed every part holding the frames up to its step, and it records how
//! many parts each table had then; a run continued from it removes the
//! parts written after it and writes the same frames again, so the
//! continued dataset holds the rows of an uninterrupted run, each once.
//! The checkpoint carries the config's text, and a run continues only with
//! that same text.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use talus_config::RunConfig;
use talus_core::checkpoint::Checkpoint;
use talus_core::Simulation;
use talus_output::{DatasetWriter, PartCounts};

/// The checkpoint's name in the output folder.
pub const CHECKPOINT_FILE: &str = "checkpoint.bin";
const CHECKPOINT_TMP: &str = ".checkpoint.bin.tmp";

/// What the CLI stores in the core checkpoint's tag.
#[derive(serde::Serialize, serde::Deserialize)]
struct Tag {
    config: String,
    parts: PartCounts,
}

/// The checkpoint file of the dataset in `dir`.
pub fn path(dir: &Path) -> PathBuf {
    dir.join(CHECKPOINT_FILE)
}

/// Closes the dataset's parts and writes the simulation's checkpoint next
/// to them.
pub(crate) fn write(
    dir: &Path,
    cfg: &RunConfig,
    sim: &Simulation,
    writer: &DatasetWriter,
) -> Result<()> {
    let parts = writer.sync().map_err(|e| anyhow!("{e}"))?;
    let tag = serde_json::to_string(&Tag {
        config: cfg.text.clone(),
        parts,
    })
    .expect("the tag serialises");
    let bytes = sim.checkpoint(&tag);
    let tmp = dir.join(CHECKPOINT_TMP);
    let done = (|| -> std::io::Result<()> {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(&bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path(dir))
    })();
    done.with_context(|| format!("cannot write the checkpoint {}", path(dir).display()))
}

/// Reads the checkpoint of the dataset in `dir`, checking that it was
/// written by a run of `cfg`; returns it with the part counts to keep.
pub(crate) fn read(dir: &Path, cfg: &RunConfig) -> Result<(Checkpoint, PartCounts)> {
    let file = path(dir);
    let bytes = match fs::read(&file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "{} has no checkpoint ({CHECKPOINT_FILE}): a run writes one every \
             [output] checkpoint steps and when SIGINT or SIGTERM stops it",
            dir.display()
        ),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
    };
    let checkpoint = Checkpoint::read(&bytes).map_err(|e| anyhow!("{}: {e}", file.display()))?;
    let tag: Tag = serde_json::from_str(checkpoint.tag())
        .map_err(|e| anyhow!("{}: not a checkpoint of the talus CLI: {e}", file.display()))?;
    if tag.config != cfg.text {
        bail!(
            "{} was written by a run of another config (its text differs from {}); \
             continue it with the config it was started with",
            file.display(),
            cfg.source.display()
        );
    }
    Ok((checkpoint, tag.parts))
}

/// Removes the checkpoint of an earlier run in `dir`, if there is one.
pub(crate) fn remove_stale(dir: &Path) -> Result<()> {
    for name in [CHECKPOINT_FILE, CHECKPOINT_TMP] {
        match fs::remove_file(dir.join(name)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("cannot remove {}", dir.join(name).display()))
            }
        }
    }
    Ok(())
}
