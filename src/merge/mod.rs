//! `tailrate merge`: reads the reports and interval logs of one plan's shards, refuses
//! what cannot be added (files of different plans, a shard twice, a shard missing
//! unless `--partial`), and writes the merged report and log into `--out`. Reading and
//! pairing the files is `input`'s, and which shards may be added `plan`'s. The adding
//! itself is `add`'s, pure, with the logs' shared clock in `clock` and the merged
//! test's self-checks in `checks`.
//!
//! The exact merge needs histograms, not percentiles. The JSON report already carries
//! each distribution's whole histogram (`hdr_v2_base64`), so the totals are added from
//! the JSON alone; the `.hlog` files add what the JSON does not keep, the per-interval
//! histograms, on the shared clock: they give the merged log, the latency over time and
//! the batches the percentiles' intervals are widened by. The logs are checked against
//! the reports (their intervals must add up to the report's histogram, value for value),
//! so a log of another run is refused rather than mixed in.

mod add;
mod checks;
mod clock;
mod error;
pub mod hlog;
mod input;
mod plan;

use std::io::Write;

use anyhow::Result;

use self::input::{inputs, pair};

pub use add::merge_reports;
pub use error::MergeError;
pub use hlog::{ShardLog, read_log};
pub use input::ShardInput;

use crate::config::MergeConfig;
use crate::export::outputs::Outputs;
use crate::export::report::Report;

/// Runs `tailrate merge`: reads, checks, adds, writes; on `stdout`, each merged test's
/// `-q` line and one line that says where it went (`export::merge_lines`).
pub fn run(config: &MergeConfig, stdout: &mut dyn Write) -> Result<()> {
    let (reports, logs) = inputs(&config.inputs)?;
    let shards = pair(reports, logs)?;
    let (merged, log_text) = merge_reports(&shards, config.partial)?;
    let mut outputs = Outputs::new(stdout, &config.destinations());
    // The merged result as a run's `-q` line per test, then where it went.
    let wrote = outputs.end(Report::Merged {
        report: &merged,
        log: log_text.as_deref(),
    })?;
    crate::export::merge_lines::merged(outputs.text(), &merged, &config.out, &wrote)?;
    Ok(())
}
