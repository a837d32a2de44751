//! The cell table: one row per recorded step for the periodic cell, its
//! matrix, volume, stage, velocity gradient and stress.

use super::{step_and_time, Recorder};
use talus_core::Snapshot;
use talus_output::{Column, Frame};

impl Recorder {
    /// One row for the periodic cell: its matrix (edge vectors as
    /// columns), volume and stress; `None` for a run without a cell.
    pub fn cell(&self, snap: &Snapshot<'_>) -> Option<Frame> {
        let c = snap.cell()?;
        let mut frame = step_and_time(snap, 1);
        let axes = ["x", "y", "z"];
        for (j, edge) in ["a", "b", "c"].iter().enumerate() {
            for (i, axis) in axes.iter().enumerate() {
                let name = format!("{edge}_{axis}");
                frame = frame.push(
                    name,
                    "m",
                    "cell edge vector (column of the cell matrix), component",
                    Column::F64(vec![c.h.col(j)[i]]),
                );
            }
        }
        frame = frame.push("volume", "m^3", "cell volume", Column::F64(vec![c.volume]));
        frame = frame.push(
            "stage",
            "-",
            "stages of [[cell.stages]] begun (0: the motion of [cell])",
            Column::U64(vec![c.stage as u64]),
        );
        for (i, a) in axes.iter().enumerate() {
            for (j, b) in axes.iter().enumerate() {
                frame = frame.push(
                    format!("l_{a}{b}"),
                    "1/s",
                    "velocity gradient of the last step, dv_i/dx_j (servo entries included)",
                    Column::F64(vec![c.velocity_gradient.col(j)[i]]),
                );
            }
        }
        for (i, a) in axes.iter().enumerate() {
            for (j, b) in axes.iter().enumerate() {
                let name = format!("stress_{a}{b}");
                frame = frame.push(
                    name,
                    "Pa",
                    "cell stress, tension positive: contacts and kinetic part over the volume",
                    Column::F64(vec![c.stress.col(j)[i]]),
                );
            }
        }
        Some(frame)
    }
}
