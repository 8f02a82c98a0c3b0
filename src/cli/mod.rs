//! What the user typed: clap derive definitions, nothing validated across flags.
//!
//! The flags of `redis-benchmark` keep their spelling and meaning (`-h` is the host,
//! `--help` the help); tailrate's own flags are long options. Every check that involves
//! more than one flag lives in `config/`, which turns [`Args`] into a checked command.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::drive::plan::{MAX_CONNECTIONS, MAX_RUN, MAX_TIMEOUT, MIN_TIME};
use crate::units::{count_in, duration_in};

mod compare;
mod groups;
pub mod man;
mod metrics;
mod replay;
mod test_names;
mod typed;
mod workload;

pub use compare::CompareArgs;
pub use man::{MAN_PAGES, ManArgs};
pub use metrics::MetricsArgs;
pub use replay::{ReplayArgs, TraceArgs};
pub use typed::TypedConnection;

pub use groups::{
    BenchmarkArgs, CapPacingArgs, ChecksArgs, ConnectionArgs, ContrastArgs, DurationArgs,
    EndpointArgs, HtmlArgs, JsonArgs, KeepaliveArgs, ObjectiveArgs, OpenLoopArgs, PrecisionArgs,
    ProgressArgs, RateArgs, RepeatArgs, RunOutputArgs, ScaleOutArgs, WorkersArgs,
};
pub use workload::WorkloadArgs;

/// A load generator and latency profiler for Redis-protocol servers.
///
/// Without --rate it is a closed-loop benchmark that takes redis-benchmark's flags and
/// prints its formats. With --rate it sends at a fixed rate and times each request from
/// its intended send time (no coordinated omission).
#[derive(Debug, Parser)]
#[command(
    name = "tailrate",
    version = env!("TAILRATE_VERSION"),
    disable_help_flag = true,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "Examples:\n  tailrate -t set,get -n 100000 -q\n  tailrate --rate 50k --duration 30s -t get\n  tailrate -n 1000 -r 100 SET k:__rand_int__ v"
)]
pub struct Args {
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help, global = true)]
    pub help: Option<bool>,

    /// Subcommands beyond a single run.
    #[command(subcommand)]
    pub subcommand: Option<Command>,

    /// Options shared by every run.
    #[command(flatten)]
    pub run: RunArgs,
}

impl Args {
    /// The connection flags of the command given, when it connects to a server (a run,
    /// a sweep, a replay, a comparison, a tune): where `--askpass` puts what it read.
    pub fn connection_mut(&mut self) -> Option<&mut ConnectionArgs> {
        match &mut self.subcommand {
            None => Some(&mut self.run.connection),
            Some(Command::Sweep(a)) => Some(&mut a.connection),
            Some(Command::Replay(a)) => Some(&mut a.connection),
            Some(Command::Compare(a)) => Some(&mut a.connection),
            Some(Command::Tune(a)) => Some(&mut a.connection),
            Some(_) => None,
        }
    }
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open-loop steps over a range of rates; capacity at an SLO; SVG plots.
    Sweep(Box<SweepArgs>),
    /// Replay recorded traffic (redis-cli MONITOR output, JSON lines, CSV) at its recorded timing, or --speed X of it, timing each command from when it was due.
    Replay(Box<ReplayArgs>),
    /// Re-render the plots of saved sweeps (one file, or several overlaid), or a run report's heatmap.
    Plot(PlotArgs),
    /// Compare two reports (A.json B.json), or two servers measured in turns (--live), percentile by percentile with 95% intervals.
    Compare(Box<CompareArgs>),
    /// Search --workers, --pipeline-size and --pipeline-delay for the highest closed-loop throughput on -c connections, in trials of --duration [default: 1s].
    Tune(Box<TuneArgs>),
    /// Add the reports of a plan's shards (JSON, and their .hlog files) into one, exactly: histograms and counts added, every percentile and interval derived again.
    Merge(MergeArgs),
    /// Show saved results again: the text the command printed (-q, --csv), or with --html its self-contained page; a run's or a merge's JSON, a comparison's JSON, or a sweep (its folder or sweep.json).
    Report(ReportArgs),
    /// Print a shell completion script: `source <(tailrate completions bash)`.
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `tailrate man | man -l -`; `tailrate man sweep` a subcommand's.
    Man(ManArgs),
}

/// `tailrate tune`: see docs/tune.md.
///
/// Trials are closed loops of `--workers` on -c connections: the open-loop flags, `-n`,
/// `-P`, `-k`, `--repeat` and the per-run outputs are not its.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  tailrate tune -p 6379 -c 8 -t get
  tailrate tune -p 6379 -c 8 -t set --duration 2s --max-trials 50 --json tune.json

Guide: docs/tune.md")]
pub struct TuneArgs {
    /// Most search trials (the baseline and the re-measurements come on top) [range: 1 to
    /// 10000].
    #[arg(
        long = "max-trials",
        default_value_t = 30,
        value_name = "N",
        value_parser = count_in::<usize>(1, 10_000, "each trial is a run of --duration"),
        allow_negative_numbers = true
    )]
    pub max_trials: usize,
    /// Runs of each of the two best settings after the search; the highest median is
    /// reported [range: 1 to 100].
    #[arg(
        long = "confirm-runs",
        default_value_t = 3,
        value_name = "N",
        value_parser = count_in::<usize>(1, 100, "each is a run of --duration per setting"),
        allow_negative_numbers = true
    )]
    pub confirm_runs: usize,
    /// Most workers tried (the search starts at 16 per connection) [range: 1 to 1000000].
    #[arg(
        long = "max-workers",
        default_value_t = 4096,
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub max_workers: usize,
    /// The most a setting's p99 response time may be: a setting over it is not chosen,
    /// however fast (more workers queue more). Without it the fastest wins [range: 1us to
    /// 1h].
    #[arg(long = "max-p99", value_parser = duration_in(Duration::from_micros(1), MAX_TIMEOUT, false, "an hour"), allow_hyphen_values = true, value_name = "DURATION")]
    pub max_p99: Option<Duration>,
    /// Where the server is.
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    /// How each trial connects.
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// What each trial sends.
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Each trial's length [default: 1s].
    #[command(flatten)]
    pub duration: DurationArgs,
    /// Warm-up, timeouts, seed, strictness.
    #[command(flatten)]
    pub checks: ChecksArgs,
    /// `--json FILE` writes the whole search; `--json -` prints it at the end instead of the trial lines.
    #[command(flatten)]
    pub json: JsonArgs,
    /// Progress line and server counters.
    #[command(flatten)]
    pub progress: ProgressArgs,
}

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
    /// Stop once response-time p99 exceeds this [range: 1us to 1h].
    #[arg(long = "stop-at", value_parser = duration_in(Duration::from_micros(1), MAX_TIMEOUT, false, "latencies are recorded up to an hour"), allow_hyphen_values = true, value_name = "DURATION")]
    pub stop_at: Option<Duration>,
    /// Most time the sweep spends measuring, warm-ups and pauses included: `4m`, `90s`;
    /// when it ends the sweep gives its best estimate and what more time would buy
    /// [range: 1s to 24h].
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
    /// Closed-loop connection counts to run beside the open-loop steps: `1,10,50` [range: 1
    /// to 100000].
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

/// `tailrate plot`: re-render plots from saved sweep JSON files, or a run's heatmap.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  tailrate plot sweep-out/sweep.json --out plots        # a sweep's folder works too
  tailrate plot a/sweep.json b/sweep.json --label A --label B --out overlay
  tailrate plot run.json --out plots                    # a run's --json: its heatmap

Guide: docs/sweep.md")]
pub struct PlotArgs {
    /// Sweep JSON files written by `tailrate sweep` (two or more are overlaid), or one
    /// run's `--json` report (its response-time heatmap).
    #[arg(required = true, value_name = "SWEEP_JSON")]
    pub inputs: Vec<PathBuf>,
    /// Directory for the SVG files (a directory, so never `-`).
    #[arg(long, value_name = "DIR", default_value = "tailrate-plots")]
    pub out: PathBuf,
    /// Name of a sweep on an overlay, repeatable, one per SWEEP_JSON in order [default:
    /// the file's stem, or its directory's name for sweep.json].
    #[arg(long = "label", value_name = "NAME")]
    pub labels: Vec<String>,
    /// Text put before every chart's own title.
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
}

/// `tailrate merge`: see docs/scale-out.md.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "Examples:
  tailrate merge shard-0.json shard-0.hlog shard-1.json shard-1.hlog --out merged
  tailrate merge shards/ --out merged --html merged.html

Guide: docs/scale-out.md")]
pub struct MergeArgs {
    /// The shards' JSON reports (`--json`) and .hlog files (`--hdr-log`), or directories
    /// holding them.
    #[arg(required = true, value_name = "FILES_OR_DIRS")]
    pub inputs: Vec<PathBuf>,
    /// Directory for merged.json and merged.hlog (a directory, so never `-`).
    #[arg(long, value_name = "DIR", required = true)]
    pub out: PathBuf,
    /// Merge even when shards are missing; the result is marked partial and names them.
    #[arg(long)]
    pub partial: bool,
    /// `--html FILE`: the merged report's page.
    #[command(flatten)]
    pub html: HtmlArgs,
}

/// `tailrate report`: see docs/html.md.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "Examples:
  tailrate report run.json                          # the text the run printed
  tailrate report run.json -q                       # one line per test (--csv: CSV)
  tailrate report run.json --html run.html          # a run's --json, or a merge's merged.json
  tailrate report sweep-out/ --html sweep.html      # a sweep's folder, or its sweep.json
  tailrate report compare.json --html compare.html  # compare --json

Guide: docs/html.md")]
pub struct ReportArgs {
    /// A saved report: a run's or a merge's JSON (`--json`, merged.json), a comparison's
    /// JSON (`compare --json`), or a sweep's folder or its sweep.json.
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,
    /// Also write the report's page to this file (a regular file).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Quiet: one line per test of a run or a merge.
    #[arg(short = 'q', conflicts_with = "csv")]
    pub quiet: bool,
    /// The report as CSV: a run's or a merge's rows, a sweep's sweep.csv.
    #[arg(long)]
    pub csv: bool,
    /// `--precision`.
    #[command(flatten)]
    pub precision: PrecisionArgs,
}

impl TuneArgs {
    /// The run every trial starts from: the groups `tune` takes, the others at their
    /// defaults.
    pub fn run_args(&self) -> RunArgs {
        RunArgs {
            endpoint: self.endpoint.clone(),
            connection: self.connection.clone(),
            workload: self.workload.clone(),
            duration: self.duration.clone(),
            checks: self.checks.clone(),
            json: self.json.clone(),
            progress: self.progress.clone(),
            ..RunArgs::default()
        }
    }
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

/// Options of a single run: redis-benchmark's flags plus tailrate's own, every group.
///
/// The subcommands build one of these from the groups they take ([`SweepArgs::run_args`]
/// and the others), the rest at their defaults, so `config/` checks every run alike.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(
    mut_arg("rate", |a| a.conflicts_with_all(["requests", "batch_latency"])),
    mut_arg("workers", |a| a.conflicts_with_all(["rate", "batch_latency"])),
)]
pub struct RunArgs {
    /// `-h`, `-p`, `-s`, `-u`.
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    /// Connections, authentication, TLS, cluster.
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// `-k`.
    #[command(flatten)]
    pub keepalive: KeepaliveArgs,
    /// Tests, commands, keys, values.
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// `-n`, `-P`, `-l`, `-I`, `-x`, `--batch-latency`.
    #[command(flatten)]
    pub benchmark: BenchmarkArgs,
    /// `--workers` and its batching.
    #[command(flatten)]
    pub workers: WorkersArgs,
    /// `--rate`.
    #[command(flatten)]
    pub rate: RateArgs,
    /// Arrivals, pacing, in-flight and backlog bounds.
    #[command(flatten)]
    pub open_loop: OpenLoopArgs,
    /// `--contrast`.
    #[command(flatten)]
    pub contrast: ContrastArgs,
    /// `--duration`.
    #[command(flatten)]
    pub duration: DurationArgs,
    /// `--repeat`.
    #[command(flatten)]
    pub repeat: RepeatArgs,
    /// Warm-up, timeouts, seed, strictness.
    #[command(flatten)]
    pub checks: ChecksArgs,
    /// `--slo`.
    #[command(flatten)]
    pub objectives: ObjectiveArgs,
    /// `-q`, `--csv`, `--hdr-log`.
    #[command(flatten)]
    pub run_output: RunOutputArgs,
    /// `--precision`.
    #[command(flatten)]
    pub precision: PrecisionArgs,
    /// `--json`.
    #[command(flatten)]
    pub json: JsonArgs,
    /// `--html`.
    #[command(flatten)]
    pub html: HtmlArgs,
    /// `--no-progress`, `--no-server-stats`.
    #[command(flatten)]
    pub progress: ProgressArgs,
    /// `--metrics-listen`, `--metrics-listen-any`, `--metrics-linger`.
    #[command(flatten)]
    pub metrics: MetricsArgs,
    /// `--shard`, `--shards`, `--start-at`.
    #[command(flatten)]
    pub scale_out: ScaleOutArgs,
}

#[cfg(test)]
mod tests;
