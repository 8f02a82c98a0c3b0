//! `tailrate compare`'s flags: the two reports, or a live duet whose run flags each need
//! `--live`.

use super::*;

/// `tailrate compare`: see docs/compare.md.
///
/// The positional arguments are the two reports, A then B; with --live they are a custom
/// command, as for a run, and must follow `--`. Every run flag needs `--live`; a live
/// duet's endpoints are `--a` and `--b`, its length `--rounds` of `--round-duration`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:
  tailrate -t get --rate 20k --duration 30s --json a.json -p 6379   # then the same against B
  tailrate compare a.json b.json
  tailrate compare a.json b.json --fail-if-slower 5%                 # exit 1 in CI when B is slower
  tailrate compare a/sweep.json b/sweep.json                         # two sweeps, rate by rate
  tailrate compare --live --a 127.0.0.1:6379 --b 127.0.0.1:6380 -t get --rate 20k

Guide: docs/compare.md",
    mut_arg("command", |a| a
        .last(true)
        .trailing_var_arg(false)
        .value_name("COMMAND")
        .help("With --live: a custom command to run on both sides, after `--`")),
    mut_args(needs_live),
    mut_arg("rate", |a| a.required_if_eq("live", "true")),
)]
pub struct CompareArgs {
    /// The two reports to compare, A then B: run reports (--json FILE) or sweeps (sweep.json).
    #[arg(value_name = "REPORT")]
    pub reports: Vec<PathBuf>,
    /// Measure two servers instead: rounds of --round-duration at --rate on --a and on --b in turns (AB, BA, AB, ...), so a drift of the host falls on both.
    #[arg(help_heading = "Compare", long)]
    pub live: bool,
    /// With --live: server A, as HOST:PORT or a URI (redis://, rediss://, unix://).
    #[arg(
        help_heading = "Compare",
        long = "a",
        value_name = "ENDPOINT",
        required_if_eq("live", "true")
    )]
    pub a: Option<String>,
    /// With --live: server B, as HOST:PORT or a URI.
    #[arg(
        help_heading = "Compare",
        long = "b",
        value_name = "ENDPOINT",
        required_if_eq("live", "true")
    )]
    pub b: Option<String>,
    /// With --live: rounds; each measures A and B once [default: 10] [range: 1 to 10000].
    #[arg(
        help_heading = "Compare",
        long,
        value_parser = count_in::<usize>(1, 10_000, "every round's two runs are kept"),
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub rounds: Option<usize>,
    /// With --live: how long each side runs in a round [default: 1s] [range: 1ms to 30days].
    #[arg(help_heading = "Compare", long = "round-duration", value_parser = duration_in(MIN_TIME, MAX_RUN, false, "a month"), allow_hyphen_values = true, value_name = "DURATION")]
    pub round_duration: Option<Duration>,
    /// The latency compared: response, service, lag or queue_wait [default: response].
    #[arg(
        help_heading = "Compare",
        long,
        value_name = "METRIC",
        conflicts_with = "all_metrics"
    )]
    pub metric: Option<String>,
    /// Compare every latency metric both sides have.
    #[arg(help_heading = "Compare", long = "all-metrics")]
    pub all_metrics: bool,
    /// Exit 1 when B is slower than A by more than PCT (`5%`) at any percentile compared, with 95% confidence.
    #[arg(
        help_heading = "Compare",
        long = "fail-if-slower",
        value_name = "PCT",
        allow_hyphen_values = true
    )]
    pub fail_if_slower: Option<String>,
    /// Read B as equivalent to A only where the whole interval of B-A lies within PCT of A's value (default 5%).
    #[arg(help_heading = "Compare", long = "margin", value_name = "PCT")]
    pub margin: Option<String>,
    /// `--json FILE` writes the comparison, `-` prints it instead of the table.
    #[command(flatten)]
    pub json: JsonArgs,
    /// `--html FILE` writes the comparison's page.
    #[command(flatten)]
    pub html: HtmlArgs,
    /// Decimal places of the table.
    #[command(flatten)]
    pub precision: PrecisionArgs,
    /// With --live: how each side connects.
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// With --live: `-k`.
    #[command(flatten)]
    pub keepalive: KeepaliveArgs,
    /// With --live: what each side sends.
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// With --live: each side's rate.
    #[command(flatten)]
    pub rate: RateArgs,
    /// With --live: how each side sends.
    #[command(flatten)]
    pub open_loop: OpenLoopArgs,
    /// With --live: warm-up, timeouts, seed, strictness.
    #[command(flatten)]
    pub checks: ChecksArgs,
    /// With --live: progress line and server counters.
    #[command(flatten)]
    pub progress: ProgressArgs,
    /// With --live: live Prometheus metrics of every turn.
    #[command(flatten)]
    pub metrics: MetricsArgs,
}

/// The flags of `compare` that do not need `--live`: its own, the reports, and the two
/// outputs of a comparison; `password` too, as REDISCLI_AUTH in the environment sets it.
const WITHOUT_LIVE: [&str; 10] = [
    "reports",
    "live",
    "metric",
    "all_metrics",
    "fail_if_slower",
    "margin",
    "json",
    "html",
    "precision",
    "password",
];

/// Makes a flag of `compare` need `--live`, unless it is one of [`WITHOUT_LIVE`].
fn needs_live(arg: clap::Arg) -> clap::Arg {
    if WITHOUT_LIVE.contains(&arg.get_id().as_str()) {
        arg
    } else {
        arg.requires("live")
    }
}

impl CompareArgs {
    /// The run of each side of `--live`, before `--a` or `--b` is set: the groups
    /// `compare` takes, the others at their defaults.
    pub fn run_args(&self) -> RunArgs {
        RunArgs {
            connection: self.connection.clone(),
            keepalive: self.keepalive.clone(),
            workload: self.workload.clone(),
            rate: self.rate.clone(),
            open_loop: self.open_loop.clone(),
            checks: self.checks.clone(),
            json: self.json.clone(),
            precision: self.precision.clone(),
            progress: self.progress.clone(),
            metrics: self.metrics.clone(),
            ..RunArgs::default()
        }
    }
}
