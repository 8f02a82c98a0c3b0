//! `tailrate sweep`'s flags: the rates or a trace's speeds, the objectives, the search's
//! resolution and budget, the closed-loop points beside the steps, and the run groups a
//! step takes.

use std::path::PathBuf;
use std::time::Duration;

use super::{
    CapPacingArgs, ChecksArgs, ConnectionArgs, DurationArgs, EndpointArgs, HtmlArgs, KeepaliveArgs,
    MetricsArgs, OpenLoopArgs, ProgressArgs, RepeatArgs, RunArgs, TraceArgs, WorkloadArgs,
};
use crate::drive::plan::{MAX_CONNECTIONS, MAX_TIMEOUT};
use crate::units::{count_in, duration_in};

/// `tailrate sweep`: see docs/sweep.md.
///
/// Steps are open loops at the rates of `--rates`: `--rate`, `-n`, `-P`, `--workers`,
/// `-l`, `-I`, `--json` and `--hdr-log` are not its (it writes into `--out`).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  tailrate sweep -p 6379 -t get --rates 10k..100k:10k --out sweep-out
  tailrate sweep -p 6379 -t get --rates 5k,10k,20k,40k --slo 'p99<=1ms' --out sweep-out
  tailrate sweep -p 6379 -t set --rates 10%..100%:10% --out sweep-out   # of the closed-loop maximum
  tailrate sweep --replay capture.monitor --speeds 0.5..4:0.5 --slo 'p99<=1ms' -p 6379

Guide: docs/sweep.md")]
pub struct SweepArgs {
    /// Rates to step through: `10k..200k:10k`, `5k,10k,20k`, or `10%..120%:10%` of a measured closed-loop maximum.
    #[arg(
        long,
        value_name = "RATES",
        allow_hyphen_values = true,
        required_unless_present = "speeds"
    )]
    pub rates: Option<String>,
    /// Step through speeds of a recorded trace instead of rates of a test (docs/replay.md).
    #[arg(
        long,
        value_name = "FILE",
        requires = "speeds",
        help_heading = "Replay"
    )]
    pub replay: Option<PathBuf>,
    /// With --replay: the speeds to step through, in multiples of the recorded pace:
    /// `0.5..4:0.5`, `1,2,4`.
    #[arg(
        long,
        value_name = "SPEEDS",
        requires = "replay",
        conflicts_with = "rates",
        allow_hyphen_values = true,
        help_heading = "Replay"
    )]
    pub speeds: Option<String>,
    /// How the trace is read and sent (with --replay).
    #[command(flatten)]
    pub trace: TraceArgs,
    /// Service-level objective, repeatable: `p99<=1ms`, `p99.9<=5ms`.
    #[arg(long, value_name = "SLO")]
    pub slo: Vec<String>,
    /// Directory for the sweep JSON, CSV, .hlog files and SVG plots (a directory, so never
    /// `-`).
    #[arg(long, value_name = "DIR", default_value = "tailrate-out")]
    pub out: PathBuf,
    /// Pause between steps: `1s`, `200ms`, `0` [range: 0s to 1h].
    #[arg(long, value_parser = duration_in(Duration::ZERO, MAX_TIMEOUT, true, "a pause between two steps"), allow_hyphen_values = true, default_value = "1s", value_name = "DURATION")]
    pub settle: Duration,
    /// Stop once response-time p99 exceeds this [default: none] [range: 1us to 1h].
    #[arg(long = "stop-at", value_parser = duration_in(Duration::from_micros(1), MAX_TIMEOUT, false, "latencies are recorded up to an hour"), allow_hyphen_values = true, value_name = "DURATION")]
    pub stop_at: Option<Duration>,
    /// Most time the sweep spends measuring, warm-ups and pauses included: `4m`, `90s`;
    /// when it ends the sweep gives its best estimate and what more time would buy
    /// [default: none, the whole plan] [range: 1s to 24h].
    #[arg(long, value_parser = duration_in(Duration::from_secs(1), Duration::from_secs(24 * 3600), false, "a day at most"), allow_hyphen_values = true, value_name = "DURATION")]
    pub budget: Option<Duration>,
    /// Resolution of the SLO search, as a fraction of the rate [range: above 0 to 0.5].
    #[arg(
        long,
        default_value_t = 0.02,
        value_name = "FRACTION",
        allow_hyphen_values = true
    )]
    pub resolution: f64,
    /// Closed-loop connection counts to run beside the open-loop steps: `1,10,50`
    /// [default: none] [range: 1 to 100000].
    #[arg(
        long = "closed-loop-points",
        value_delimiter = ',',
        value_parser = count_in::<usize>(1, MAX_CONNECTIONS as u64, "each one is a socket"),
        value_name = "CONNS",
        allow_negative_numbers = true
    )]
    pub closed_loop_points: Vec<usize>,
    /// Also run, at every step's rate, a closed loop held to that rate (what rate-limited closed-loop tools report).
    #[arg(long = "rate-capped")]
    pub rate_capped: bool,
    /// How the --rate-capped loop holds its rate.
    #[command(flatten)]
    pub cap_pacing: CapPacingArgs,
    /// Order of the coarse steps: by rate, or shuffled with --seed (so a drift of the host is
    /// not read as a trend with load); results stay ordered by rate.
    #[arg(long, value_enum, default_value_t = SweepOrder::Ascending, value_name = "ORDER")]
    pub order: SweepOrder,
    /// Where the server is.
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    /// How each step connects.
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// `-k`.
    #[command(flatten)]
    pub keepalive: KeepaliveArgs,
    /// What each step sends.
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// How each step sends.
    #[command(flatten)]
    pub open_loop: OpenLoopArgs,
    /// Each step's length [default: 5s].
    #[command(flatten)]
    pub duration: DurationArgs,
    /// Runs of each step.
    #[command(flatten)]
    pub repeat: RepeatArgs,
    /// Warm-up, timeouts, seed, strictness.
    #[command(flatten)]
    pub checks: ChecksArgs,
    /// Progress line and server counters.
    #[command(flatten)]
    pub progress: ProgressArgs,
    /// Live Prometheus metrics of every step.
    #[command(flatten)]
    pub metrics: MetricsArgs,
    /// `--html FILE`: the sweep's page, rewritten with its other files.
    #[command(flatten)]
    pub html: HtmlArgs,
}

/// `tailrate sweep --order`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SweepOrder {
    /// Increasing rate; the steps end at the first past saturation.
    Ascending,
    /// A random permutation drawn from --seed; rates above one past saturation are skipped.
    Shuffle,
}

impl SweepArgs {
    /// The run every step starts from: the groups `sweep` takes, the others at their
    /// defaults.
    pub fn run_args(&self) -> RunArgs {
        RunArgs {
            endpoint: self.endpoint.clone(),
            connection: self.connection.clone(),
            keepalive: self.keepalive.clone(),
            workload: self.workload.clone(),
            open_loop: self.open_loop.clone(),
            duration: self.duration.clone(),
            repeat: self.repeat.clone(),
            checks: self.checks.clone(),
            progress: self.progress.clone(),
            metrics: self.metrics.clone(),
            ..RunArgs::default()
        }
    }
}
