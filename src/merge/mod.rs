//! `tailrate merge`: reads the reports and interval logs of one plan's shards, refuses
//! what cannot be added (files of different plans, a shard twice, a shard missing
//! unless `--partial`), and writes the merged report and log into `--out`. The adding
//! itself is `add`'s, pure.
//!
//! The exact merge needs histograms, not percentiles. The JSON report already carries
//! each distribution's whole histogram (`hdr_v2_base64`), so the totals are added from
//! the JSON alone; the `.hlog` files add what the JSON does not keep, the per-interval
//! histograms, on the shared clock: they give the merged log, the latency over time and
//! the batches the percentiles' intervals are widened by. The logs are checked against
//! the reports (their intervals must add up to the report's histogram, value for value),
//! so a log of another run is refused rather than mixed in.

mod add;
mod hlog;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

pub use add::merge_reports;
pub use hlog::{ShardLog, read_log};

use crate::config::MergeConfig;
use crate::report::RunReport;

/// The merged report's file in `--out`.
pub const JSON_FILE: &str = "merged.json";
/// The merged interval log's file in `--out`.
pub const HLOG_FILE: &str = "merged.hlog";

/// Inputs that cannot be merged: the user's to fix (exit 2), each one line.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// A file or directory cannot be read.
    #[error("cannot read {}: {why}", .path.display())]
    Read {
        /// As given or found.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// Nothing to merge.
    #[error("no tailrate report (.json) among the inputs")]
    NoReports,
    /// The shards are not of one plan, overlap, or are missing.
    #[error("{0}")]
    Refused(String),
}

/// One shard's files.
#[derive(Debug)]
pub struct ShardInput {
    /// The report's file.
    pub path: PathBuf,
    /// The report.
    pub report: RunReport,
    /// Its interval log, when one was given.
    pub log: Option<ShardLog>,
}

/// Runs `tailrate merge`: reads, checks, adds, writes; on `stdout`, each merged test's
/// `-q` line and one line that says where it went.
pub fn run(config: &MergeConfig, stdout: &mut dyn Write) -> Result<()> {
    let (reports, logs) = inputs(&config.inputs)?;
    let shards = pair(reports, logs)?;
    let (merged, log_text) = merge_reports(&shards, config.partial)?;
    std::fs::create_dir_all(&config.out)
        .with_context(|| format!("creating --out {}", config.out.display()))?;
    let json = serde_json::to_vec_pretty(&merged).context("encoding the merged report")?;
    crate::output::write_file(&config.out.join(JSON_FILE), &json)
        .context("writing the merged report")?;
    let mut wrote = vec![JSON_FILE];
    if let Some(text) = log_text {
        crate::output::write_file(&config.out.join(HLOG_FILE), &text)
            .context("writing the merged log")?;
        wrote.push(HLOG_FILE);
    }
    // The merged result as a run's `-q` line per test, then where it went.
    let mut quiet = crate::export::run_text::Text {
        quiet: true,
        precision: 3,
    };
    for test in &merged.tests {
        crate::export::Exporter::test_done(&mut quiet, stdout, &merged, test)?;
    }
    let summary = merged.merge.as_ref();
    writeln!(
        stdout,
        "merged {} of {} shards{} into {}: {}{}",
        summary.map_or(0, |m| m.parts.len()),
        summary.map_or(0, |m| m.shards),
        if summary.is_some_and(|m| m.partial) {
            " (partial)"
        } else {
            ""
        },
        config.out.display(),
        wrote.join(", "),
        match merged.tests.iter().find(|t| !t.valid) {
            Some(t) => format!("; INVALID: {}", t.why_invalid()),
            None => String::new(),
        }
    )?;
    Ok(())
}

/// Reports with the files they were read from.
type Reports = Vec<(PathBuf, RunReport)>;

/// Every report and log among `paths`, a directory standing for its `.json` and `.hlog`
/// files (not its subdirectories), by path.
fn inputs(paths: &[PathBuf]) -> Result<(Reports, Vec<ShardLog>), MergeError> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| MergeError::Read {
            path: path.clone(),
            why: e.to_string(),
        })?;
        if meta.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|e| MergeError::Read {
                path: path.clone(),
                why: e.to_string(),
            })?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && matches!(extension(p), "json" | "hlog"))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    let mut reports = Vec::new();
    let mut logs = Vec::new();
    for path in files {
        let bytes = std::fs::read(&path).map_err(|e| MergeError::Read {
            path: path.clone(),
            why: e.to_string(),
        })?;
        if extension(&path) == "hlog" || bytes.starts_with(b"#") {
            logs.push(read_log(&path, &bytes)?);
        } else {
            let report: RunReport =
                serde_json::from_slice(&bytes).map_err(|e| MergeError::Read {
                    path: path.clone(),
                    why: format!("not a tailrate run report ({e})"),
                })?;
            reports.push((path, report));
        }
    }
    if reports.is_empty() {
        return Err(MergeError::NoReports);
    }
    Ok((reports, logs))
}

fn extension(path: &Path) -> &str {
    path.extension().and_then(|e| e.to_str()).unwrap_or("")
}

/// Each report with the log of the same shard (by the index in the log's header); a log
/// no report claims, or two logs for one shard, is refused.
fn pair(reports: Reports, logs: Vec<ShardLog>) -> Result<Vec<ShardInput>, MergeError> {
    let mut by_index: BTreeMap<u32, ShardLog> = BTreeMap::new();
    for log in logs {
        if let Some(other) = by_index.get(&log.shard.index) {
            return Err(MergeError::Refused(format!(
                "{} and {} are both logs of shard {}",
                other.path.display(),
                log.path.display(),
                log.shard.index
            )));
        }
        by_index.insert(log.shard.index, log);
    }
    let mut shards: Vec<ShardInput> = reports
        .into_iter()
        .map(|(path, report)| {
            let index = report.settings.shard.map_or(0, |s| s.index);
            let log = by_index.remove(&index);
            ShardInput { path, report, log }
        })
        .collect();
    if let Some(log) = by_index.values().next() {
        return Err(MergeError::Refused(format!(
            "{}: a log of shard {} with no report of that shard among the inputs",
            log.path.display(),
            log.shard.index
        )));
    }
    shards.sort_by_key(|s| s.report.settings.shard.map_or(0, |s| s.index));
    Ok(shards)
}
