//! The report of `tailrate tune`: every trial, the baseline and the best setting found.

use serde::{Deserialize, Serialize};

use super::Header;

/// Version of the tune JSON layout.
pub const TUNE_SCHEMA_VERSION: u32 = 1;

/// What a trial was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Plain closed loop on the same connections, no workers.
    Baseline,
    /// A step of the climb.
    Search,
    /// A re-measurement of one of the best settings.
    Confirm,
}

/// One trial's setting and result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// What it was for.
    pub phase: Phase,
    /// `--workers` (none for the baseline).
    pub workers: Option<usize>,
    /// `--pipeline-size`.
    pub pipeline_size: Option<usize>,
    /// `--pipeline-delay` in nanoseconds.
    pub pipeline_delay_ns: Option<u64>,
    /// Successful replies per second.
    pub throughput_per_sec: f64,
    /// Response-time median.
    pub response_p50_ns: u64,
    /// Response-time 99th percentile.
    pub response_p99_ns: u64,
    /// Requests per write, with workers.
    pub requests_per_write: Option<f64>,
    /// Error replies and failed requests.
    pub errors: u64,
}

/// The setting tune found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Best {
    /// `--workers`.
    pub workers: usize,
    /// `--pipeline-size`.
    pub pipeline_size: usize,
    /// `--pipeline-delay` in nanoseconds.
    pub pipeline_delay_ns: u64,
    /// Median throughput of its re-measurements, replies per second.
    pub throughput_per_sec: f64,
    /// Each re-measurement's throughput.
    pub runs_per_sec: Vec<f64>,
    /// Median p99 response time of its re-measurements (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_p99_ns: Option<u64>,
    /// The command line that runs it (passwords as `***`).
    pub command_line: Vec<String>,
}

/// The whole search, as `--json` writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneReport {
    /// What every report of tailrate opens with.
    #[serde(flatten)]
    pub header: Header,
    /// The test tuned.
    pub test: String,
    /// Connections of every trial (`-c`).
    pub connections: usize,
    /// Seconds per trial.
    pub trial_secs: f64,
    /// Every trial, in the order run.
    pub trials: Vec<Trial>,
    /// The plain closed loop's throughput, replies per second.
    pub baseline_per_sec: Option<f64>,
    /// The best setting, once re-measured.
    pub best: Option<Best>,
    /// `--max-p99`: the most the chosen setting's p99 could be, nanoseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_p99_ns: Option<u64>,
    /// Ctrl+C or SIGTERM ended the search.
    pub interrupted: bool,
    /// Every phase ran.
    pub complete: bool,
}
