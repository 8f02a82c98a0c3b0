//! What the user typed: clap derive definitions, nothing validated across flags.
//!
//! The flags of `redis-benchmark` keep their spelling and meaning (`-h` is the host,
//! `--help` the help); tailrate's own flags are long options. Every check that involves
//! more than one flag lives in `config/`, which turns [`Args`] into a checked command.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::drive::plan::{MAX_RUN, MAX_TIMEOUT, MIN_TIME};
use crate::units::{count_in, duration_in};

mod compare;
mod groups;
pub mod man;
mod metrics;
mod output;
mod replay;
mod sweep;
mod test_names;
mod typed;
mod workload;

pub use compare::CompareArgs;
pub use man::{MAN_PAGES, ManArgs};
pub use metrics::MetricsArgs;
pub use replay::{NOT_A_REPLAYS_FLAGS, ReplayArgs, ReplayConnectionArgs, TraceArgs};
pub use sweep::{SweepArgs, SweepOrder};
pub use typed::TypedConnection;

pub use groups::{
    BenchmarkArgs, CapPacingArgs, ChecksArgs, ConnectionArgs, ContrastArgs, DurationArgs,
    EndpointArgs, KeepaliveArgs, LinkArgs, ObjectiveArgs, OpenLoopArgs, RateArgs, RepeatArgs,
    ScaleOutArgs, SessionArgs, WorkersArgs,
};
pub use output::{HtmlArgs, JsonArgs, PrecisionArgs, ProgressArgs, RunOutputArgs};
pub use workload::WorkloadArgs;

/// A load generator and latency profiler for Redis-protocol servers: without --rate, a
/// closed loop that takes redis-benchmark's flags; with --rate, an open loop that times
/// each request from its intended send (no coordinated omission).
///
/// `tailrate --help` lists every flag with its default and range; `tailrate help` and
/// `tailrate help SUBCOMMAND` add the long explanations, as `tailrate man` does.
#[derive(Debug, Parser)]
#[command(
    name = "tailrate",
    version = env!("TAILRATE_VERSION"),
    disable_help_flag = true,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "Examples:\n  tailrate -t set,get -n 100000 -q\n  tailrate --rate 50k --duration 30s -t get\n  tailrate -n 1000 -r 100 SET k:__rand_int__ v\n\nEach flag's long explanation: `tailrate help` (`tailrate help sweep` a subcommand's), or `tailrate man`.\nGuide: docs/README.md"
)]
pub struct Args {
    /// Print help.
    #[arg(long, action = clap::ArgAction::HelpShort, global = true)]
    pub help: Option<bool>,

    /// Subcommands beyond a single run.
    #[command(subcommand)]
    pub subcommand: Option<Command>,

    /// Options shared by every run.
    #[command(flatten)]
    pub run: RunArgs,
}

impl Args {
    /// The login flags of the command given, when it connects to a server (a run, a
    /// sweep, a replay, a comparison, a tune): where `--askpass` puts what it read.
    pub fn link_mut(&mut self) -> Option<&mut LinkArgs> {
        match &mut self.subcommand {
            None => Some(&mut self.run.connection.link),
            Some(Command::Sweep(a)) => Some(&mut a.connection.link),
            Some(Command::Replay(a)) => Some(&mut a.connection.link),
            Some(Command::Compare(a)) => Some(&mut a.connection.link),
            Some(Command::Tune(a)) => Some(&mut a.connection.link),
            Some(_) => None,
        }
    }
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open-loop steps over a range of rates; capacity at an SLO; SVG plots.
    Sweep(Box<SweepArgs>),
    /// Replay recorded traffic (MONITOR output, JSON lines, CSV) at its own timing.
    ///
    /// Recorded traffic: redis-cli MONITOR output, JSON lines or CSV, at its recorded timing
    /// or --speed X of it, each command timed from when it was due.
    Replay(Box<ReplayArgs>),
    /// Re-render the plots of saved sweeps (several overlaid), or a run's heatmap.
    ///
    /// One sweep's JSON (or folder), several overlaid, or a run report's heatmap.
    Plot(PlotArgs),
    /// Compare two reports (A.json B.json), or two servers in turns (--live).
    ///
    /// Percentile by percentile, each difference with its 95% interval and a verdict.
    Compare(Box<CompareArgs>),
    /// Search --workers, --pipeline-size and --pipeline-delay for the most throughput.
    ///
    /// The highest closed-loop throughput on -c connections, in trials of --duration
    /// [default: 1s].
    Tune(Box<TuneArgs>),
    /// Add the reports of a plan's shards (JSON and .hlog files) into one, exactly.
    ///
    /// Histograms and counts are added, every percentile and interval derived again.
    Merge(MergeArgs),
    /// Show saved results again: the text the command printed, and its HTML page.
    ///
    /// The text (-q, --csv) and with --html a self-contained page, from a run's or a
    /// merge's JSON, a comparison's JSON, or a sweep (its folder or sweep.json).
    Report(ReportArgs),
    /// Print a shell completion script: `source <(tailrate completions bash)`.
    #[command(after_help = "Examples:
  tailrate completions bash > ~/.local/share/bash-completion/completions/tailrate
  source <(tailrate completions zsh)

Guide: docs/install.md")]
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `tailrate man | man -l -`.
    ///
    /// `tailrate man sweep` prints a subcommand's; `--out DIR` writes every page.
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
    /// however fast (more workers queue more) [default: none, the fastest wins] [range: 1us
    /// to 1h].
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

/// `tailrate report`: see docs/outputs.md (its text) and docs/html.md (its page).
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "Examples:
  tailrate report run.json                          # the text the run printed
  tailrate report run.json -q                       # its -q lines (--csv: its CSV)
  tailrate report merged/merged.json -q             # the lines merge printed
  tailrate report sweep-out/                        # a sweep's steps, capacity, closed loops
  tailrate report compare.json                      # the table compare printed
  tailrate report sweep-out/ --html sweep.html      # and the page (any kind)

Guide: docs/outputs.md (the text), docs/html.md (the page)")]
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
