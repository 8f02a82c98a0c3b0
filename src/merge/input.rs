//! The inputs of `tailrate merge`: every report and log among the paths given (a
//! directory standing for its files), each report paired with the log of its shard.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::error::MergeError;
use super::hlog::{ShardLog, read_log};
use crate::report::RunReport;

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

/// Reports with the files they were read from.
type Reports = Vec<(PathBuf, RunReport)>;

/// Every report and log among `paths`, a directory standing for its `.json` and `.hlog`
/// files (not its subdirectories), by path.
pub(super) fn inputs(paths: &[PathBuf]) -> Result<(Reports, Vec<ShardLog>), MergeError> {
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
        let bytes = crate::input::read(&path).map_err(|e| MergeError::Read {
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
            if let Some(why) = report
                .tests
                .iter()
                .find_map(crate::report::plausible::implausible)
            {
                return Err(MergeError::Read { path, why });
            }
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
pub(super) fn pair(reports: Reports, logs: Vec<ShardLog>) -> Result<Vec<ShardInput>, MergeError> {
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
