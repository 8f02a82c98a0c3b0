//! The report models (serde): a run, its tests, their latencies, sweeps, tune searches,
//! comparisons, merged shards, the server's view and the verdict types.
//!
//! A [`TestReport`] is built once from a run's outcome (`app::build`); the numbers in it
//! come from `stats/`, its verdicts from `judge/`, and every printed or written form is
//! `export/`'s. This module holds data and the small facts derived from it, nothing
//! that prints.

pub mod compare;
pub mod contrast;
mod latency;
pub mod merged;
pub mod repeats;
pub mod server;
pub mod sweep;
pub mod tune;
pub mod verdict;

pub use verdict::{Bottleneck, Check, Judgement};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::RunConfig;
use crate::drive::ThreadCpu;
use crate::drive::{ArrivalProcess, Pacing};
use crate::drive::{Mode, Stop};
use crate::record::CommandRecord;
pub use latency::{Confidence, Latency, Percentile, decode_histogram, encode_histogram};

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
}

/// The settings that shape the numbers.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Settings {
    /// `closed` or `open`.
    pub mode: String,
    /// Connections.
    pub clients: usize,
    /// Generator threads.
    pub threads: usize,
    /// `-P` (closed loop).
    pub pipeline: Option<u32>,
    /// `-d`.
    pub data_size: usize,
    /// `-r`.
    pub keyspace: Option<u64>,
    /// Keep-alive (`-k`).
    pub keepalive: bool,
    /// Target rate (open loop).
    pub target_rate_per_sec: Option<f64>,
    /// Arrival process (open loop).
    pub arrival: Option<ArrivalProcess>,
    /// Pacing (open loop).
    pub pacing: Option<Pacing>,
    /// `--max-inflight` (open loop).
    pub max_inflight: Option<usize>,
    /// Requests per test (closed loop with `-n`).
    pub requests: Option<u64>,
    /// Seconds per test (with `--duration` or open loop).
    pub duration_secs: Option<f64>,
    /// Warm-up seconds (open loop).
    pub warmup_secs: f64,
    /// `--batch-latency`.
    pub batch_latency: bool,
    /// `--workers` (closed loop with logical clients); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<usize>,
    /// `--pipeline-size`, with `--workers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline_size: Option<usize>,
    /// `--pipeline-delay` in nanoseconds, with `--workers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline_delay_ns: Option<u64>,
    /// Which shard of one plan this run is (`--shard`, or the engine's index); absent for
    /// a whole plan. `clients`, `requests` and the target rate above are its share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardSettings>,
}

/// A shard's place in its plan.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct ShardSettings {
    /// Its index, from 0.
    pub index: u32,
    /// Shards of the plan.
    pub count: u32,
    /// `--start-at`: the common start, seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at_unix_secs: Option<f64>,
}

impl Settings {
    /// The settings of `config`.
    pub fn of(config: &RunConfig) -> Self {
        let (pipeline, target, arrival, pacing, max_inflight) = match &config.plan.mode {
            Mode::Closed { pipeline, .. } => (Some(*pipeline), None, None, None, None),
            Mode::Open {
                rate_per_sec,
                arrival,
                pacing,
                max_inflight,
                ..
            } => (
                None,
                Some(*rate_per_sec),
                Some(*arrival),
                Some(*pacing),
                Some(*max_inflight),
            ),
        };
        let (requests, duration_secs) = match config.plan.stop {
            Stop::Requests(n) => (Some(n), None),
            Stop::After(d) => (None, Some(d.as_secs_f64())),
        };
        Settings {
            mode: if config.is_open_loop() {
                "open"
            } else {
                "closed"
            }
            .into(),
            clients: config.plan.connections,
            threads: config.plan.threads,
            pipeline,
            data_size: config.plan.workload.data_size,
            keyspace: config.plan.workload.keyspace,
            keepalive: !config.plan.reconnect_each_request,
            target_rate_per_sec: target,
            arrival,
            pacing,
            max_inflight,
            requests,
            duration_secs,
            warmup_secs: config.plan.warmup.as_secs_f64(),
            batch_latency: config.plan.batch_latency,
            workers: config.plan.mode.workers().map(|w| w.count),
            pipeline_size: config.plan.mode.workers().map(|w| w.pipeline_size),
            pipeline_delay_ns: config
                .plan
                .mode
                .workers()
                .map(|w| crate::record::nanos(w.pipeline_delay)),
            shard: (config.plan.shard.is_split() || config.plan.start_at.is_some()).then(|| {
                ShardSettings {
                    index: config.plan.shard.index,
                    count: config.plan.shard.count,
                    start_at_unix_secs: config.plan.start_at.map(|at| {
                        at.duration_since(std::time::UNIX_EPOCH)
                            .unwrap_or_default()
                            .as_secs_f64()
                    }),
                }
            }),
        }
    }
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
    pub latency: BTreeMap<String, Latency>,
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
    /// Intended requests that are not in the latency percentiles: never sent, timed out,
    /// ended in an error, or in flight at the end (`intended - completed`).
    #[serde(default)]
    pub excluded_from_latency: u64,
    /// The server's own view of the test (`INFO commandstats`, `INFO cpu`, `LATENCY
    /// HISTOGRAM` read before and after it), where it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<server::ServerView>,
    /// What held the test back, and the fact that says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<Judgement>,
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

/// A change of a cluster's layout during a test: slots that one master served are now
/// another's (a failover, a slot migration, a master added).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LayoutChangeReport {
    /// When a layout read first showed it, seconds from the test's start (warm-up
    /// included).
    pub at_secs: f64,
    /// The master that served the slots before (`None`: no master did).
    pub from: Option<String>,
    /// The master that serves them now.
    pub to: String,
    /// How many slots.
    pub slots: u32,
}

impl LayoutChangeReport {
    /// One line: `layout changed at 2.03 s: 127.0.0.1:7634 took over 5461 slots from
    /// 127.0.0.1:7631`.
    pub fn describe(&self) -> String {
        let from = match &self.from {
            Some(from) => format!(" from {from}"),
            None => " that no master served".into(),
        };
        format!(
            "layout changed at {:.2} s: {} took over {} slot{}{}",
            self.at_secs,
            self.to,
            self.slots,
            if self.slots == 1 { "" } else { "s" },
            from
        )
    }
}

/// A time the server could not be reached during a test.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OutageReport {
    /// When a connection was lost (or first failed to connect), seconds from the test's start.
    pub start_secs: f64,
    /// Seconds until a connection opened again (as late as the reconnect backoff, up to
    /// a second, makes it), or until the end.
    pub length_secs: f64,
    /// Seconds from the start of the outage to its last failed connect: it lasted at least
    /// this long.
    pub at_least_secs: f64,
    /// Why connecting failed, in the OS's or the server's words.
    pub cause: String,
    /// The server was still unreachable when the test ended.
    pub until_end: bool,
}

impl OutageReport {
    /// "1.28 s from 1.19 s (at least 0.81 s: a connect still failed then; could not
    /// connect to ...: Connection refused)", or "... from 1.19 s to the end (...)".
    pub fn describe(&self) -> String {
        format!(
            "{:.2} s from {:.2} s{} (at least {:.2} s: a connect still failed then; {})",
            self.length_secs,
            self.start_secs,
            if self.until_end { " to the end" } else { "" },
            self.at_least_secs,
            self.cause
        )
    }
}

/// What one cluster master saw of a test.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NodeReport {
    /// `host:port`.
    pub node: String,
    /// Requests written to it (a redirected request counts at every node it went to).
    pub sent: u64,
    /// Successful replies from it.
    pub completed: u64,
    /// Error replies and failures on its connections (redirects not included).
    pub errors: u64,
    /// `MOVED` replies it gave.
    pub moved: u64,
    /// `ASK` replies it gave.
    pub ask: u64,
    /// Response time of its successful replies.
    pub response: Latency,
}

/// The writes that carried `--workers` requests.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Batches {
    /// Writes (each one batch of requests).
    pub writes: u64,
    /// Requests written per write, on average.
    pub mean_requests_per_write: f64,
}

/// One command's results within a test.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CommandReport {
    /// Command name, lower case.
    pub command: String,
    /// Its counts.
    pub counts: Counts,
    /// Its latencies.
    pub latency: BTreeMap<String, Latency>,
}

/// Where every request ended:
/// `intended = completed + errors + timeouts + not_sent + in_flight_at_end`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Counts {
    /// Requests planned (open loop) or started (closed loop).
    pub intended: u64,
    /// Requests written to a socket.
    pub sent: u64,
    /// Successful replies.
    pub completed: u64,
    /// Successful replies to reads (`GET`, `HGET`, `LINDEX`, `ZSCORE`, `GETEX`) that held a
    /// value; absent when the test or command sends no read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hits: Option<u64>,
    /// Successful replies to reads that were null (nothing at the key); absent when the
    /// test or command sends no read. Counted per reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub misses: Option<u64>,
    /// Error replies and failed requests.
    pub errors: u64,
    /// Errors by kind (the first word of the reply; at most 64 kinds, then `other`).
    pub errors_by_kind: BTreeMap<String, u64>,
    /// The first error text of each kind, as the server sent it.
    #[serde(default)]
    pub error_examples: BTreeMap<String, String>,
    /// Requests with no reply within `--timeout`.
    pub timeouts: u64,
    /// Requests dropped by a full backlog or never written before the end.
    pub not_sent: u64,
    /// Requests written and unanswered when the run ended.
    pub in_flight_at_end: u64,
    /// Cluster redirects followed (`MOVED`, `ASK`); a redirected request is counted once above.
    #[serde(default)]
    pub redirects: u64,
}

impl Counts {
    /// The counts of `rec`, with its hits and misses when `reads` (it holds a read).
    pub(crate) fn of(rec: &CommandRecord, in_flight_at_end: u64, reads: bool) -> Self {
        Counts {
            intended: rec.intended,
            sent: rec.sent,
            completed: rec.completed,
            hits: reads.then_some(rec.hits),
            misses: reads.then_some(rec.misses),
            errors: rec.error_total(),
            errors_by_kind: rec.errors.clone(),
            error_examples: rec.error_examples.clone(),
            timeouts: rec.timeouts,
            not_sent: rec.not_sent,
            in_flight_at_end,
            redirects: rec.redirects,
        }
    }

    /// Whether every intended request is accounted for.
    pub fn balanced(&self) -> bool {
        self.intended
            == self.completed + self.errors + self.timeouts + self.not_sent + self.in_flight_at_end
    }
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

    #[test]
    fn counts_balance_when_every_request_is_accounted_for() {
        let c = Counts {
            intended: 10,
            sent: 9,
            completed: 6,
            errors: 1,
            timeouts: 1,
            not_sent: 1,
            in_flight_at_end: 1,
            ..Default::default()
        };
        assert!(c.balanced());
        assert!(!Counts { completed: 7, ..c }.balanced());
    }

    #[test]
    fn a_layout_change_reads_as_one_line_naming_both_masters() {
        let change = LayoutChangeReport {
            at_secs: 2.031,
            from: Some("127.0.0.1:7631".into()),
            to: "127.0.0.1:7634".into(),
            slots: 5461,
        };
        assert_eq!(
            change.describe(),
            "layout changed at 2.03 s: 127.0.0.1:7634 took over 5461 slots from 127.0.0.1:7631"
        );
        let unowned = LayoutChangeReport {
            from: None,
            slots: 1,
            ..change
        };
        assert_eq!(
            unowned.describe(),
            "layout changed at 2.03 s: 127.0.0.1:7634 took over 1 slot that no master served"
        );
    }
}
