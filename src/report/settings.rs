//! The settings that shape a run's numbers, as every report records them.

use serde::{Deserialize, Serialize};

use crate::config::RunConfig;
use crate::config::trace_plan::TracePlan;
use crate::drive::{ArrivalProcess, Mode, Pacing, Stop};

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
    /// Target rate (open loop): this shard's share of the plan's.
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
    /// A replay: the trace and how it was replayed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<Box<ReplaySettings>>,
}

/// A replay's trace and how it was replayed (`tailrate replay`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReplaySettings {
    /// The trace's path as given.
    pub file: String,
    /// Its format (`monitor`, `json-lines`, `csv`).
    pub format: String,
    /// Recorded time over this is the schedule's (`--speed`, or what `--rate` made).
    pub speed: f64,
    /// Connections the recorded clients were folded onto.
    pub connections: usize,
    /// Clients in the trace (0: it names none).
    pub recorded_clients: u64,
    /// Commands replayed in one pass (after `--commands`, `--exclude`, `--limit`).
    pub commands: u64,
    /// From the first replayed command to the last, as recorded.
    pub recorded_span_secs: f64,
    /// The recorded mean rate.
    pub recorded_rate_per_sec: Option<f64>,
    /// Commands left out by name: the filters', and those never replayed (subscriptions,
    /// MONITOR, replication, session resets).
    pub left_out: std::collections::BTreeMap<String, u64>,
    /// Lines skipped by `--skip-bad-lines`.
    pub bad_lines: u64,
    /// The first skipped line's error.
    pub first_bad_line: Option<String>,
    /// Commands recorded before the one before them: sent at the latest time so far.
    pub out_of_order: u64,
    /// `--loop`: the trace started again until `--duration`.
    pub looped: bool,
}

impl ReplaySettings {
    /// The record of `trace`, replayed as planned.
    pub fn of(trace: &TracePlan) -> Self {
        ReplaySettings {
            file: trace.file.display().to_string(),
            format: trace.format_name(),
            speed: trace.options.speed,
            connections: trace.options.connections,
            recorded_clients: trace.shape.clients.len() as u64,
            commands: trace.shape.commands,
            recorded_span_secs: trace.shape.span_secs(),
            recorded_rate_per_sec: trace.shape.mean_rate_per_sec(),
            left_out: trace.shape.left_out.iter().cloned().collect(),
            bad_lines: trace.shape.bad_lines,
            first_bad_line: trace.shape.first_bad.clone(),
            out_of_order: trace.shape.out_of_order,
            looped: trace.options.repeat,
        }
    }
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
        let (pipeline, arrival, pacing, max_inflight) = match &config.plan.mode {
            Mode::Closed { pipeline, .. } => (Some(*pipeline), None, None, None),
            Mode::Open {
                arrival,
                pacing,
                max_inflight,
                ..
            } => (
                None,
                Some(arrival.process()),
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
            target_rate_per_sec: config.plan.own_rate_per_sec(),
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
            replay: config
                .replay
                .as_deref()
                .map(|trace| Box::new(ReplaySettings::of(trace))),
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
