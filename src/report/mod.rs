//! The report models (serde): a run, its tests, their latencies, sweeps, tune searches,
//! comparisons, merged shards, the server's view and the verdict types.
//!
//! A [`TestReport`] is built once from a run's outcome (`app::build`); the numbers in it
//! come from `stats/`, its verdicts from `judge/`, and every printed or written form is
//! `export/`'s. This module holds data and the small facts derived from it, nothing
//! that prints.

pub mod chosen;
pub mod compare;
pub mod contrast;
mod counts;
mod events;
pub mod hdr_decode;
pub mod host;
mod latency;
pub mod merged;
pub mod plausible;
pub mod repeats;
pub mod scan;
pub mod server;
mod settings;
pub mod sweep;
pub mod tail;
pub mod tune;
pub mod verdict;

pub use counts::{Batches, CommandReport, Counts};
pub use events::{LayoutChangeReport, NodeReport, OutageReport};
pub use settings::{ReplaySettings, Settings, ShardSettings};
pub use verdict::{Bottleneck, Check, Judgement};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::drive::ThreadCpu;
use crate::record::Metric;
pub use latency::{
    Confidence, Latency, Percentile, Reported, ResponseWindows, decode_histogram, encode_histogram,
};

/// What a file that does not parse as JSON is, for a user who gave the wrong file: where
/// it stops being JSON and what to give instead, not the parser's own wording.
pub fn not_json(e: &serde_json::Error) -> String {
    let what = match e.classify() {
        serde_json::error::Category::Eof => "ends before its JSON does",
        _ => "is not JSON",
    };
    format!(
        "{what} (at line {}, column {}): give a report tailrate wrote with --json, or a \
         sweep's sweep.json",
        e.line(),
        e.column()
    )
}

/// Version of the JSON layout; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// What every report opens with: its layout version, the tool, the command line, the
/// seed and the server.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Header {
    /// JSON layout version.
    pub schema_version: u32,
    /// `tailrate <version>`.
    pub tool: String,
    /// The command line, with any password replaced by `***`.
    pub command_line: Vec<String>,
    /// Seed of every random choice.
    pub seed: u64,
    /// What the server said about itself.
    pub server: ServerFacts,
}

impl Header {
    /// The header of a report of layout `schema_version`, written by this build.
    pub fn new(
        schema_version: u32,
        command_line: Vec<String>,
        seed: u64,
        server: ServerFacts,
    ) -> Self {
        Header {
            schema_version,
            tool: format!("tailrate {}", env!("CARGO_PKG_VERSION")),
            command_line,
            seed,
            server,
        }
    }
}

/// A whole run: one report per test.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunReport {
    /// What every report of tailrate opens with.
    #[serde(flatten)]
    pub header: Header,
    /// The run's settings.
    pub settings: Settings,
    /// One entry per test, in the order run.
    pub tests: Vec<TestReport>,
    /// With `--contrast`: each test's open loop beside its two closed loops.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contrasts: Vec<contrast::Contrast>,
    /// With `--repeat`: each test's repeats summarised (the repeats themselves are in
    /// `tests`, each with its `repeat`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<repeats::RepeatSummary>,
    /// A report of `tailrate merge`: its shards and each one's own figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<merged::MergeSummary>,
}

/// Facts about the server, where it answers; absent facts are noted, not fatal.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ServerFacts {
    /// `host:port` or socket path.
    pub endpoint: String,
    /// `redis_version` from INFO server.
    pub version: Option<String>,
    /// `CONFIG GET save`.
    pub save: Option<String>,
    /// `CONFIG GET appendonly`.
    pub appendonly: Option<String>,
    /// What could not be asked and why (e.g. a proxy that refuses CONFIG).
    pub notes: Vec<String>,
    /// A cluster's masters, as requests were routed to them (empty for one server).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_nodes: Vec<String>,
    /// Keys written before the first test (`--prefill`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefilled_keys: Option<u64>,
}

/// One test's results.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TestReport {
    /// Test name (`SET`, or the custom command).
    pub name: String,
    /// Target rate (open loop).
    pub target_rate_per_sec: Option<f64>,
    /// Requests written per second over the measured window.
    pub achieved_rate_per_sec: f64,
    /// Open loop: requests the schedule planned per second over the measured window. A
    /// Poisson draw offers more or less than the target by chance; the generator is judged
    /// against this, and the target against it says what the draw itself gave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_rate_per_sec: Option<f64>,
    /// Successful replies per second over the measured window.
    pub throughput_per_sec: f64,
    /// Bytes written to the server (RESP, for TLS the plaintext) by the writes that carried
    /// measured requests.
    #[serde(default)]
    pub sent_bytes: u64,
    /// Bytes read from the server by the reads that answered measured requests.
    #[serde(default)]
    pub received_bytes: u64,
    /// `sent_bytes` per second, over the window of `achieved_rate_per_sec`.
    #[serde(default)]
    pub sent_bytes_per_sec: f64,
    /// `received_bytes` per second, over the window of `throughput_per_sec`.
    #[serde(default)]
    pub received_bytes_per_sec: f64,
    /// Measured window in seconds (warm-up excluded).
    pub measured_secs: f64,
    /// Wall-clock time the test started, seconds since the Unix epoch (0 in reports
    /// written before it was recorded).
    #[serde(default)]
    pub started_at_unix_secs: f64,
    /// How every request ended.
    pub counts: Counts,
    /// Latency of successful replies, by metric (`response`, `service`, `lag`, `queue_wait`).
    pub latency: BTreeMap<Metric, Latency>,
    /// Per command, when the test sends more than one.
    pub commands: Vec<CommandReport>,
    /// Generator self-checks.
    pub checks: Vec<Check>,
    /// False when a self-check failed or requests were never sent.
    pub valid: bool,
    /// Why the test ended before its plan, if it did.
    pub stopped_early: Option<String>,
    /// Generator CPU per thread.
    pub generator_cpu: Vec<ThreadCpu>,
    /// Response-time summary per interval (latency over time).
    pub intervals: Vec<IntervalSummary>,
    /// Against a cluster: what each master saw.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeReport>,
    /// How `--workers` requests were batched; absent in other modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batches: Option<Batches>,
    /// Connections lost (closed, reset, timed out) and opened again; `-k 0`'s reconnect
    /// after every request is not counted.
    #[serde(default)]
    pub reconnects: u64,
    /// Times the server could not be reached, in order (at most 100; see
    /// `outages_left_out`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outages: Vec<OutageReport>,
    /// Outages past the 100 kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub outages_left_out: u64,
    /// Against a cluster: each change of its layout during the test, in order (at most
    /// 100; see `layout_changes_left_out`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layout_changes: Vec<LayoutChangeReport>,
    /// Layout changes past the 100 kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub layout_changes_left_out: u64,
    /// Against a cluster: how many times the generator read the layout again during the
    /// test (after a redirect or a lost node; each generator thread reads on its own).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub layout_reads: u64,
    /// Intended requests that are not in the latency percentiles: those that ended in an
    /// error, and unanswered ones not counted at their age (`Counts::excluded_from_latency`).
    #[serde(default)]
    pub excluded_from_latency: u64,
    /// The server's own view of the test (`INFO commandstats`, `INFO cpu`, `LATENCY
    /// HISTOGRAM` read before and after it), where it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<server::ServerView>,
    /// What held the test back, and the fact that says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<Judgement>,
    /// The replies over the objective's bound (or the response p99) attributed to what
    /// made them slow: what the bottleneck names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<tail::TailCauses>,
    /// With `--slo`: each objective judged on this test's response time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<sweep::SloVerdict>,
    /// With `--repeat`: which repeat this is, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    /// With `--start-at`: how long after the common start this process let its threads
    /// go, in nanoseconds (the overshoot of its wait, or its lateness).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_skew_ns: Option<i64>,
    /// A shard's Poisson arrivals, for `tailrate merge` to judge the shards' sends
    /// together: independent Poisson streams add up to one, so the merged `poisson_fit`
    /// tests the sum of every shard's windows (a shard's own check sees only its share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<ArrivalWindows>,
    /// Response time in consecutive windows of the measured span, coarsely: what runs
    /// are pooled from (a sweep's visits at one rate, `--repeat`'s repeats), so a
    /// decision can count host weather between runs and bursts inside them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_windows: Option<ResponseWindows>,
    /// The host's part: the generator's and the server's waits for a CPU, steal, CPU
    /// pressure and an idle thread's hiccups, and the slow replies among them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<host::HostReport>,
}

impl TestReport {
    /// The outage that lasted to the test's end with no reply in its last interval: the
    /// server was lost, and every time after the outage measured the reconnects. A test
    /// whose last interval still got replies kept a server (a cluster's killed master is
    /// unreachable to the end while its promoted replica answers in its place).
    pub fn lost_server(&self) -> Option<&OutageReport> {
        let outage = self.outages.iter().find(|o| o.until_end)?;
        let answered = self.intervals.last().is_some_and(|i| i.completed > 0);
        (!answered).then_some(outage)
    }

    /// The response-time summary (the latency of the test).
    pub fn response(&self) -> Option<&Latency> {
        self.latency.get(&Metric::Response)
    }

    /// "error_replies failed", "schedule_lag and generator_cpu failed", or why the run is
    /// invalid without a failed check.
    pub fn why_invalid(&self) -> String {
        let names: Vec<&str> = self
            .checks
            .iter()
            .filter(|c| c.verdict == verdict::Verdict::Fail)
            .map(|c| c.name.as_str())
            .collect();
        match names.as_slice() {
            [] => format!("{} requests not sent", self.counts.not_sent),
            [one] => format!("{one} failed"),
            [rest @ .., last] => format!("{} and {last} failed", rest.join(", ")),
        }
    }

    /// Its response windows in time order (none when it kept none).
    pub fn windows(&self) -> &[crate::stats::confidence::Batch] {
        self.response_windows
            .as_ref()
            .map_or(&[][..], |w| w.windows.as_slice())
    }
}

/// Sends per window over the whole windows of a test's measured span, summed over its
/// threads, in order from the span's start.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ArrivalWindows {
    /// The windows' length, in nanoseconds.
    pub window_ns: u64,
    /// Sends in each window.
    pub counts: Vec<u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Response-time summary of one interval.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IntervalSummary {
    /// Interval start, seconds from the test's start.
    pub start_secs: f64,
    /// Interval length in seconds.
    pub length_secs: f64,
    /// Successful replies in it.
    pub completed: u64,
    /// Errors in it.
    pub errors: u64,
    /// Response-time p50.
    pub p50_ns: u64,
    /// Response-time p99.
    pub p99_ns: u64,
    /// Response-time max.
    pub max_ns: u64,
}

#[cfg(test)]
pub(crate) mod fixtures;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn histograms_round_trip_through_base64() {
        let mut h = crate::record::new_histogram();
        for v in [1_000u64, 2_000, 3_000_000, 9_000_000_000] {
            h.record(v).unwrap();
        }
        let back = decode_histogram(&encode_histogram(&h)).unwrap();
        assert_eq!(back, h);
    }
}
