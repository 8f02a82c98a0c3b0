//! Rate sweeps (placeholder until the sweep lands).
use crate::app::{Io, Status};
use crate::cli::{PlotArgs, SweepArgs};
use crate::config::RunConfig;
use crate::drive::Cancel;

/// Runs a sweep.
pub fn run(_args: &SweepArgs, _config: &RunConfig, _command_line: Vec<String>, _cancel: &Cancel, _io: Io<'_>) -> anyhow::Result<Status> {
    anyhow::bail!("sweep is not implemented yet")
}

/// Re-renders plots.
pub fn replot(_args: &PlotArgs, _out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    anyhow::bail!("plot is not implemented yet")
}
