//! The validated run: [`RunConfig`] (the driver's [`Plan`] plus outputs and exit policy)
//! from `cli::RunArgs`, with defaults resolved and conflicts refused.

use std::path::PathBuf;
use std::time::Duration;

mod checks;

pub(super) use checks::check_rate_per_thread;
use checks::{
    check_batch_bytes, check_contrast_and_warmup, check_counts, check_outputs, check_shard,
    check_slots,
};

use super::ConfigError;
use super::endpoint::resolve_endpoint;
use super::shard;
use super::workers::workers_of;
use super::workload::workload_spec;
use crate::cli::RunArgs;
use crate::drive::{Mode, Plan, Shard, Stop, Workers};
use crate::resp::Limits;
use crate::workload;

/// Most bytes of requests a run may hold for writing at once over all its connections
/// (`-c` times the requests one write carries, times the largest request): each
/// connection's write buffer grows to its largest batch and keeps that memory.
pub const MAX_BATCH_BYTES: u64 = 4 << 30;

/// Everything the core needs to run, validated.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// What the driver runs.
    pub plan: Plan,
    /// Output selection.
    pub output: Output,
    /// Exit non-zero when a self-check fails.
    pub strict: bool,
    /// Loop the tests forever.
    pub loop_forever: bool,
    /// After each open-loop test, the rate-capped and the plain closed loop (`--contrast`).
    pub contrast: bool,
    /// Times each test runs (`--repeat`).
    pub repeat: u32,
    /// Only open connections and wait.
    pub idle: bool,
    /// `--cluster`: the server must be a cluster node.
    pub cluster: bool,
    /// `--slo`: objectives each test's response time is judged against.
    pub slos: Vec<super::slo::Slo>,
    /// How `--contrast`'s rate-capped loop holds its rate.
    pub cap_pacing: crate::drive::CapPacing,
    /// Write every key the tests read before the first test (`--prefill`).
    pub prefill: bool,
    /// `tailrate replay`: the trace and how it is replayed, for the report.
    pub replay: Option<std::sync::Arc<super::trace_plan::TracePlan>>,
}

/// Which outputs to produce.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// One line per test.
    pub quiet: bool,
    /// CSV on stdout.
    pub csv: bool,
    /// Decimal places for latencies in milliseconds.
    pub precision: usize,
    /// Whole report as JSON.
    pub json: Option<PathBuf>,
    /// HdrHistogram interval log.
    pub hdr_log: Option<PathBuf>,
    /// The run's HTML page (`--html`).
    pub html: Option<PathBuf>,
    /// Live progress on stderr when it is a terminal.
    pub progress: bool,
    /// Read the server's counters around each test (`--no-server-stats` turns it off).
    pub server_stats: bool,
    /// Measure the host beside each test (`--no-host-stats` turns it off).
    pub host_stats: bool,
    /// The server's latency monitor's threshold for each test (`--latency-monitor`).
    pub latency_monitor_ms: Option<u64>,
    /// Live Prometheus metrics (`--metrics-listen`).
    pub metrics: Option<super::MetricsConfig>,
    /// `--percentiles`, in percent, sorted (empty: the fixed ones).
    pub percentiles: Vec<f64>,
}

impl RunConfig {
    /// Validates `args`; `stdin_arg` is the last custom-command argument read from stdin for `-x`.
    pub fn from_args(args: &RunArgs, stdin_arg: Option<Vec<u8>>) -> Result<Self, ConfigError> {
        let (endpoint, handshake) = resolve_endpoint(args)?;
        check_counts(args, &handshake)?;
        let workers = workers_of(args)?;
        let shard = shard::shard_of(args, &|name| std::env::var(name).ok())?;
        let start_at = shard::start_at_of(args, std::time::SystemTime::now())?;
        let mode = mode_of(args, workers)?;
        check_contrast_and_warmup(args)?;
        let stop = stop_of(args, &mode, shard)?;
        check_shard(args, shard, start_at)?;
        let seed = seed_of(args, shard)?;
        let precision = args.precision.precision.unwrap_or(3);
        if precision > 9 {
            return Err(ConfigError::invalid(
                "--precision",
                "at most 9 decimal places (nanoseconds)",
            ));
        }
        check_slots(args, &mode)?;
        let spec = workload_spec(args, stdin_arg)?;
        // Before building, which makes the values (up to 512 MiB).
        check_batch_bytes(args, &mode, &spec)?;
        let workload = workload::Workload::build(spec, seed)?;
        if start_at.is_some() && workload.tests.len() != 1 {
            return Err(ConfigError::invalid(
                "--start-at",
                format!(
                    "it starts one test at one instant, and this run has {}: give one test \
                     (-t NAME or a command)",
                    workload.tests.len()
                ),
            ));
        }
        if args.workload.prefill {
            workload::Prefill::of(&workload)
                .map_err(|e| ConfigError::invalid("--prefill", e.to_string()))?;
        }
        // Last, as it touches the file system: every other flag is right by now.
        check_outputs(args)?;

        let plan = Plan {
            endpoint,
            handshake,
            mode,
            stop,
            warmup: args.checks.warmup.unwrap_or_default(),
            connections: shard.share_of(args.connection.clients as u64) as usize,
            threads: args
                .connection
                .link
                .threads
                .min(shard.share_of(args.connection.clients as u64) as usize),
            reconnect_each_request: args.keepalive.keepalive == 0,
            workload,
            seed,
            timeout: args.checks.timeout,
            connect_timeout: args.connection.session.connect_timeout,
            lost_server_wait: args.connection.session.lost_server_wait,
            limits: Limits {
                max_bulk_bytes: args.workload.max_reply_bytes,
                ..Limits::default()
            },
            exit_on_error: args.checks.exit_on_error,
            batch_latency: args.benchmark.batch_latency,
            shard,
            start_at,
        };
        Ok(RunConfig {
            plan,
            output: output_of(args, precision)?,
            strict: args.checks.strict,
            loop_forever: args.benchmark.loop_forever,
            contrast: args.contrast.contrast,
            repeat: args.repeat.repeat,
            idle: args.benchmark.idle,
            cluster: args.connection.cluster,
            slos: super::slo::parse_slos(&args.objectives.slo)?,
            prefill: args.workload.prefill,
            replay: None,
            cap_pacing: args.contrast.pacing.cap_pacing,
        })
    }

    /// The flag that set the connections, for a message about them: `-c`, or a replay's
    /// `--connections`.
    pub fn connections_flag(&self) -> &'static str {
        if self.replay.is_some() {
            "--connections"
        } else {
            "-c"
        }
    }

    /// True in open loop.
    pub fn is_open_loop(&self) -> bool {
        self.plan.is_open_loop()
    }
}

/// Open loop at `--rate` (the whole plan's: every shard's together), or the closed loop of
/// `-P` or `--workers`.
fn mode_of(args: &RunArgs, workers: Option<Workers>) -> Result<Mode, ConfigError> {
    Ok(match args.rate.rate {
        Some(rate_per_sec) => {
            check_rate_per_thread(args, rate_per_sec, "--rate")?;
            if args.benchmark.pipeline != 1 {
                return Err(ConfigError::Conflict {
                    a: "--rate",
                    b: "-P",
                    why: "open loop pipelines by itself (each request goes when it is due); use --max-inflight to cap requests in flight per connection",
                });
            }
            Mode::Open {
                rate_per_sec,
                arrival: args.open_loop.arrival.into(),
                pacing: args.open_loop.pacing,
                max_inflight: args.open_loop.max_inflight,
                max_backlog: args.open_loop.max_backlog,
            }
        }
        None => Mode::Closed {
            pipeline: args.benchmark.pipeline,
            rate_cap: None,
            workers,
        },
    })
}

/// When the run ends: `--duration`, this shard's share of `-n`, or the default of its loop.
fn stop_of(args: &RunArgs, mode: &Mode, shard: Shard) -> Result<Stop, ConfigError> {
    Ok(
        match (args.duration.duration, args.benchmark.requests, mode) {
            (Some(_), Some(_), _) => {
                return Err(ConfigError::Conflict {
                    a: "--duration",
                    b: "-n",
                    why: "a run ends by time or by count, not both",
                });
            }
            (Some(d), None, _) if d.is_zero() => {
                return Err(ConfigError::invalid(
                    "--duration",
                    "must be longer than zero",
                ));
            }
            (Some(d), None, _) => Stop::After(d),
            (None, Some(0), _) => {
                return Err(ConfigError::invalid("-n", "need at least one request"));
            }
            (None, Some(n), _) if shard.share_of(n) == 0 => {
                return Err(ConfigError::invalid(
                    "-n",
                    format!(
                        "{n} requests cannot be split into {} shards: give -n at least {}",
                        shard.count, shard.count
                    ),
                ));
            }
            (None, Some(n), _) => Stop::Requests(shard.share_of(n)),
            (None, None, Mode::Closed { .. }) => Stop::Requests(shard.share_of(100_000)),
            (None, None, Mode::Open { .. }) => Stop::After(Duration::from_secs(10)),
        },
    )
}

/// `--seed`, or a fresh one for a run that is not a shard.
fn seed_of(args: &RunArgs, shard: Shard) -> Result<u64, ConfigError> {
    // Shards of one plan share its seed; a fresh one would make each its own plan.
    Ok(match (args.checks.seed, shard.is_split()) {
        (Some(seed), _) => seed,
        (None, true) => {
            return Err(ConfigError::invalid(
                "--shard",
                "every shard of a plan needs the same --seed (each one's streams are \
                 derived from it): give --seed",
            ));
        }
        (None, false) => workload::fresh_seed(),
    })
}

/// The outputs `args` ask for, with `precision` already checked.
fn output_of(args: &RunArgs, precision: usize) -> Result<Output, ConfigError> {
    Ok(Output {
        quiet: args.run_output.quiet,
        csv: args.run_output.csv,
        precision,
        json: args.json.json.clone(),
        hdr_log: args.run_output.hdr_log.clone(),
        html: args.html.html.clone(),
        progress: !args.progress.no_progress,
        server_stats: !args.progress.no_server_stats,
        host_stats: !args.progress.no_host_stats,
        latency_monitor_ms: args.progress.latency_monitor,
        metrics: super::metrics::metrics_of(&args.metrics)?,
        percentiles: args
            .run_output
            .percentiles
            .clone()
            .map_or_else(Vec::new, |l| l.0),
    })
}

#[cfg(test)]
mod tests;
