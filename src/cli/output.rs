//! The output flags a command takes: `-q`, `--csv` and `--hdr-log` (a single run),
//! `--precision`, `--json`, `--html`, and the progress line and the server's and host's
//! counters read beside each test. Each is a group of its own, as the subcommands take
//! different ones (see each group).

use std::path::PathBuf;

use crate::units::count_in;

/// `Default` from clap's own defaults, for the commands that do not take a group.
macro_rules! default_from_clap {
    ($($group:ty),* $(,)?) => {
        $(impl Default for $group {
            fn default() -> Self {
                super::groups::defaults()
            }
        })*
    };
}

default_from_clap!(
    RunOutputArgs,
    PrecisionArgs,
    JsonArgs,
    HtmlArgs,
    ProgressArgs
);

/// The outputs only a single run writes: the quiet, CSV and interval-log forms.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Output")]
pub struct RunOutputArgs {
    /// Quiet: one line per test.
    #[arg(short = 'q')]
    pub quiet: bool,
    /// Output in CSV.
    #[arg(long)]
    pub csv: bool,
    /// Write an HdrHistogram interval log (.hlog) to this file; `-` prints it on standard
    /// output as the run goes, instead of the text or CSV report.
    #[arg(long = "hdr-log", value_name = "FILE")]
    pub hdr_log: Option<PathBuf>,
    /// The percentiles to report, in percent: `50,99,99.9,99.99` (memtier's
    /// --print-percentiles), each with its 95% interval [default: 50,90,95,99,99.9,99.99].
    #[arg(long, value_name = "LIST", value_parser = crate::units::parse_percentiles)]
    pub percentiles: Option<crate::units::PercentileList>,
}

/// `--precision` of printed latencies (a single run and `compare`).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Output")]
pub struct PrecisionArgs {
    /// Decimal places of latencies in the output, as redis-benchmark's [default: 3] [range: 0
    /// to 9].
    #[arg(
        long,
        value_name = "DIGITS",
        value_parser = count_in::<usize>(0, 9, "nanoseconds are the finest latency measured"),
        allow_negative_numbers = true
    )]
    pub precision: Option<usize>,
}

/// `--json` (a single run, `tune` and `compare`; a sweep writes into `--out`).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Output")]
pub struct JsonArgs {
    /// Write the whole report as JSON to this file, rewritten after every test; `-` prints
    /// it on standard output when the run ends, instead of the text or CSV report.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// `--html` (a single run, `sweep`, `compare` and `merge`).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Output")]
pub struct HtmlArgs {
    /// Write the report as one self-contained HTML page to this file when the command
    /// ends.
    ///
    /// A regular file: inline style and plots, nothing loaded from anywhere. `tailrate
    /// report` makes one later from saved results.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// The live progress line and the server's own counters.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Output")]
pub struct ProgressArgs {
    /// Show no live progress line.
    #[arg(long = "no-progress")]
    pub no_progress: bool,
    /// Do not read the server's own counters (INFO, LATENCY HISTOGRAM) around each
    /// test.
    ///
    /// Nor open the connection they are read on: INFO commandstats, INFO cpu and
    /// LATENCY HISTOGRAM are read before and after each test.
    #[arg(long = "no-server-stats")]
    pub no_server_stats: bool,
    /// Set the server's latency monitor to MS for each test, to place its own stalls on
    /// the test's timeline [default: the server's own setting] [range: 1 to 10000].
    ///
    /// `latency-monitor-threshold` is set back after the test; the server's stalls over
    /// MS (fork, aof-fsync, expire-cycle...) are placed beside its slow log.
    #[arg(long = "latency-monitor", value_name = "MS", value_parser = count_in::<u64>(1, 10_000, "a stall the monitor would miss is ten seconds long"), allow_negative_numbers = true)]
    pub latency_monitor: Option<u64>,
    /// Do not measure the host beside each test (waits for a CPU, steal; docs/host.md).
    ///
    /// The host's figures: the generator's and the server's waits for a CPU, steal, CPU
    /// pressure, an idle thread's hiccups.
    #[arg(long = "no-host-stats")]
    pub no_host_stats: bool,
}
