//! What the user typed: clap derive definitions, nothing validated across flags.
//!
//! The flags of `redis-benchmark` keep their spelling and meaning (`-h` is the host,
//! `--help` the help); tailrate's own flags are long options. Every check that involves
//! more than one flag lives in `config/`, which turns [`Args`] into a checked command.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::drive::plan::{
    MAX_BACKLOG, MAX_CONNECTIONS, MAX_DEPTH, MAX_RUN, MAX_SHARDS, MAX_THREADS, MAX_TIMEOUT,
    MIN_TIME,
};
use crate::drive::{ArrivalProcess, MAX_RATE_PER_THREAD, Pacing};
use crate::units::{count_in, duration_in, parse_count, rate_up_to};
use crate::workload::{KeyPattern, MAX_VALUE_SIZE};

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

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open-loop steps over a range of rates; capacity at an SLO; SVG plots.
    Sweep(Box<SweepArgs>),
    /// Re-render the plots of saved sweeps (one file, or several overlaid).
    Plot(PlotArgs),
    /// Compare two reports (A.json B.json), or two servers measured in turns (--live), percentile by percentile with 95% intervals.
    Compare(Box<CompareArgs>),
    /// Search --workers, --pipeline-size and --pipeline-delay for the highest closed-loop throughput on -c connections, in trials of --duration [default: 1s].
    Tune(Box<TuneArgs>),
    /// Add the reports of a plan's shards (JSON, and their .hlog files) into one, exactly: histograms and counts added, every percentile and interval derived again.
    Merge(MergeArgs),
    /// Print a shell completion script: `source <(tailrate completions bash)`.
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `tailrate man | man -l -`.
    Man,
}

/// `tailrate tune`: see README.
#[derive(Debug, clap::Args)]
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
    /// Options of each trial's run (--json FILE writes the whole search; --json - prints it
    /// at the end instead of the trial lines).
    #[command(flatten)]
    pub run: RunArgs,
}

/// `tailrate sweep`: see README.
#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// Rates to step through: `10k..200k:10k`, `5k,10k,20k`, or `10%..120%:10%` of a measured closed-loop maximum.
    #[arg(long, value_name = "RATES")]
    pub rates: String,
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
    /// Order of the coarse steps: by rate, or shuffled with --seed (so a drift of the host is
    /// not read as a trend with load); results stay ordered by rate.
    #[arg(long, value_enum, default_value_t = SweepOrder::Ascending, value_name = "ORDER")]
    pub order: SweepOrder,
    /// Options of each step's run.
    #[command(flatten)]
    pub run: RunArgs,
}

/// `tailrate compare`: see README.
///
/// The positional arguments are the two reports, A then B; with --live they are a custom
/// command, as for a run, and must follow `--`.
#[derive(Debug, clap::Args)]
#[command(mut_arg("command", |a| a
    .last(true)
    .trailing_var_arg(false)
    .value_name("COMMAND")
    .help("With --live: a custom command to run on both sides, after `--`")))]
pub struct CompareArgs {
    /// The two reports to compare, A then B: run reports (--json FILE) or sweeps (sweep.json).
    #[arg(value_name = "REPORT")]
    pub reports: Vec<PathBuf>,
    /// Measure two servers instead: rounds of --round-duration at --rate on --a and on --b in turns (AB, BA, AB, ...), so a drift of the host falls on both.
    #[arg(help_heading = "Compare", long)]
    pub live: bool,
    /// With --live: server A, as HOST:PORT or a URI (redis://, rediss://, unix://).
    #[arg(help_heading = "Compare", long = "a", value_name = "ENDPOINT")]
    pub a: Option<String>,
    /// With --live: server B, as HOST:PORT or a URI.
    #[arg(help_heading = "Compare", long = "b", value_name = "ENDPOINT")]
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
    /// With --live, each side's run (--json FILE writes the comparison, `-` prints it instead of the table).
    #[command(flatten)]
    pub run: RunArgs,
}

/// `tailrate sweep --order`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SweepOrder {
    /// Increasing rate; the steps end at the first past saturation.
    Ascending,
    /// A random permutation drawn from --seed; rates above one past saturation are skipped.
    Shuffle,
}

/// `tailrate plot`: re-render plots from saved sweep JSON files.
#[derive(Debug, clap::Args)]
pub struct PlotArgs {
    /// Sweep JSON files written by `tailrate sweep`; two or more are overlaid.
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

/// `tailrate merge`: see README, "Scale out".
#[derive(Debug, Clone, clap::Args)]
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
}

/// Options of a single run: redis-benchmark's flags plus tailrate's own.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Server hostname.
    #[arg(
        help_heading = "Connection",
        short = 'h',
        default_value = "127.0.0.1",
        value_name = "HOST"
    )]
    pub host: String,
    /// Server port [range: 1 to 65535].
    #[arg(
        help_heading = "Connection",
        short = 'p',
        default_value_t = 6379,
        value_name = "PORT",
        value_parser = count_in::<u16>(1, 65535, "TCP ports are 16 bits"),
        allow_negative_numbers = true
    )]
    pub port: u16,
    /// Server socket (overrides host and port).
    #[arg(help_heading = "Connection", short = 's', value_name = "SOCKET")]
    pub socket: Option<PathBuf>,
    /// Password for Redis AUTH (REDISCLI_AUTH in the environment is safer).
    #[arg(
        help_heading = "Connection",
        short = 'a',
        value_name = "PASSWORD",
        env = "REDISCLI_AUTH",
        hide_env_values = true
    )]
    pub password: Option<String>,
    /// ACL user for `AUTH user pass`; needs a password.
    #[arg(help_heading = "Connection", long, value_name = "USER")]
    pub user: Option<String>,
    /// Server URI: redis://[user:pass@]host[:port][/db], rediss://... (TLS) or unix:///path.
    // The brackets are the help text's, not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(help_heading = "Connection", short = 'u', value_name = "URI")]
    pub uri: Option<String>,
    /// Connect over TLS (a rediss:// URI implies it); the server's certificate is verified against --cacert or the system's roots.
    #[arg(help_heading = "TLS and cluster", long)]
    pub tls: bool,
    /// TLS: trust the CA certificates in this PEM file instead of the system's roots.
    #[arg(help_heading = "TLS and cluster", long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// TLS: client certificate (PEM, intermediates after it) for servers that ask for one (mutual TLS); needs --key.
    #[arg(help_heading = "TLS and cluster", long, value_name = "FILE")]
    pub cert: Option<PathBuf>,
    /// TLS: private key (PEM: PKCS#8, RSA or EC) of --cert.
    #[arg(help_heading = "TLS and cluster", long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// TLS: server name to send (SNI) and to check the certificate against [default: the host].
    #[arg(help_heading = "TLS and cluster", long, value_name = "NAME")]
    pub sni: Option<String>,
    /// TLS: do not verify the server's certificate; for tests only: the traffic is encrypted, but anyone in the path can pose as the server.
    #[arg(help_heading = "TLS and cluster", long)]
    pub insecure: bool,
    /// Number of parallel connections; the open-file limit is raised to the hard limit when
    /// they need it [range: 1 to 100000].
    #[arg(
        help_heading = "Closed loop (redis-benchmark)",
        short = 'c',
        default_value_t = 50,
        value_name = "CLIENTS",
        value_parser = count_in::<usize>(1, MAX_CONNECTIONS as u64, "each is a socket and its buffers"),
        allow_negative_numbers = true
    )]
    pub clients: usize,
    /// Total number of requests per test (closed loop) [range: 1 to 18446744073709551615].
    #[arg(help_heading = "Closed loop (redis-benchmark)", short = 'n', value_parser = count_in::<u64>(1, u64::MAX, "2^64-1"), allow_hyphen_values = true, value_name = "REQUESTS")]
    pub requests: Option<u64>,
    /// Data size of SET/GET values in bytes [range: 0 to 536870912].
    #[arg(help_heading = "Closed loop (redis-benchmark)", short = 'd', default_value_t = 3, value_name = "SIZE", value_parser = count_in::<usize>(0, MAX_VALUE_SIZE as u64, "512 MiB, Redis's default proto-max-bulk-len: a server refuses a larger value"), conflicts_with_all = ["data_size_range", "data_size_list"], allow_negative_numbers = true)]
    pub data_size: usize,
    /// SELECT this database number [range: 0 to 2147483647].
    #[arg(
        help_heading = "Connection",
        long,
        default_value_t = 0,
        value_name = "DB",
        value_parser = count_in::<u32>(0, i32::MAX as u64, "Redis numbers its databases with a C int"),
        allow_negative_numbers = true
    )]
    pub dbnum: u32,
    /// Start each session in RESP3 (HELLO 3).
    #[arg(help_heading = "Connection", short = '3')]
    pub resp3: bool,
    /// OS threads to spread connections over (at most one per connection) [range: 1 to
    /// 1000].
    #[arg(
        help_heading = "Closed loop (redis-benchmark)",
        long,
        default_value_t = 1,
        value_name = "NUM",
        value_parser = count_in::<usize>(1, MAX_THREADS as u64, "each is an OS thread with its own event loop"),
        allow_negative_numbers = true
    )]
    pub threads: usize,
    /// Send CLIENT TRACKING on before starting.
    #[arg(
        help_heading = "Closed loop (redis-benchmark)",
        long = "enable-tracking"
    )]
    pub enable_tracking: bool,
    /// Route requests over a Redis Cluster by key slot, following MOVED and ASK; each of
    /// the -c clients opens a connection to every master. Detected from the first node
    /// when not given; given, a node not in cluster mode is an error.
    #[arg(help_heading = "TLS and cluster", long)]
    pub cluster: bool,
    /// 1 = keep alive, 0 = reconnect for every request [range: 0 to 1].
    #[arg(help_heading = "Connection", short = 'k', default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=1), value_name = "BOOLEAN", allow_negative_numbers = true)]
    pub keepalive: u8,
    /// Random keys in a keyspace of this size: `__rand_int__` becomes a 12-digit number below
    /// it [range: 1 to 1000000000000].
    #[arg(help_heading = "Closed loop (redis-benchmark)", short = 'r', value_parser = parse_count, value_name = "KEYSPACELEN", allow_negative_numbers = true)]
    pub keyspace: Option<u64>,
    /// Pipeline this many requests per connection (closed loop) [range: 1 to 1000000].
    #[arg(
        help_heading = "Closed loop (redis-benchmark)",
        short = 'P',
        default_value_t = 1,
        value_name = "NUMREQ",
        value_parser = count_in::<u32>(1, MAX_DEPTH as u64, "a connection's queues for them are allocated up front"),
        allow_negative_numbers = true
    )]
    pub pipeline: u32,
    /// Closed loop: this many logical clients, each with one request in flight, dealt evenly over the -c connections; each connection batches its workers' requests (automatic pipelining) [range: 1 to 1000000].
    #[arg(
        help_heading = "Workers (many clients over few connections)",
        long,
        value_name = "W",
        allow_negative_numbers = true
    )]
    pub workers: Option<usize>,
    /// With --workers: a connection writes its waiting requests once this many wait [default: 100] [range: 1 to 1000000].
    #[arg(
        help_heading = "Workers (many clients over few connections)",
        long = "pipeline-size",
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub pipeline_size: Option<usize>,
    /// With --workers: ...or once the oldest has waited this long, or when every worker of the connection waits: `50us`, `1ms`, `0` [default: 0] [range: 0 to 1h].
    #[arg(help_heading = "Workers (many clients over few connections)", long = "pipeline-delay", value_parser = duration_in(Duration::ZERO, MAX_TIMEOUT, true, "an hour"), allow_hyphen_values = true, value_name = "DURATION")]
    pub pipeline_delay: Option<Duration>,
    /// Quiet: one line per test.
    #[arg(help_heading = "Output", short = 'q')]
    pub quiet: bool,
    /// Decimal places of latencies in the output (redis-benchmark's default is 3) [range: 0 to
    /// 9].
    #[arg(
        help_heading = "Output",
        long,
        value_name = "DIGITS",
        value_parser = count_in::<usize>(0, 9, "nanoseconds are the finest latency measured"),
        allow_negative_numbers = true
    )]
    pub precision: Option<usize>,
    /// Output in CSV.
    #[arg(help_heading = "Output", long)]
    pub csv: bool,
    /// Loop: run the tests forever (until Ctrl+C).
    #[arg(help_heading = "Closed loop (redis-benchmark)", short = 'l')]
    pub loop_forever: bool,
    /// Only run this comma-separated list of tests.
    #[arg(
        help_heading = "Closed loop (redis-benchmark)",
        short = 't',
        value_name = "TESTS"
    )]
    pub tests: Option<String>,
    /// Idle mode: open the connections and wait until Ctrl+C, or for --duration.
    #[arg(help_heading = "Closed loop (redis-benchmark)", short = 'I')]
    pub idle: bool,
    /// Read the last argument of the custom command from stdin.
    #[arg(help_heading = "Closed loop (redis-benchmark)", short = 'x')]
    pub stdin_last_arg: bool,
    /// Seed of every random choice (keys, values, arrivals); printed in reports [range: 0 to
    /// 18446744073709551615].
    #[arg(
        help_heading = "Workloads",
        long,
        value_name = "SEED",
        allow_negative_numbers = true
    )]
    pub seed: Option<u64>,

    /// Run for this long instead of a request count: `30s`, `2m` [range: 1ms to 30days].
    #[arg(help_heading = "Open loop", long, value_parser = duration_in(MIN_TIME, MAX_RUN, false, "a month"), allow_hyphen_values = true, value_name = "DURATION")]
    pub duration: Option<Duration>,
    /// Open loop: send this many requests per second in total (`50000`, `50k`, `1.5M`); one
    /// thread plans at most 5M a second, so a higher rate needs --threads (and -c) to match
    /// [range: above 0 to 5000000000].
    #[arg(help_heading = "Open loop", long, value_parser = rate_up_to(MAX_RATE_PER_THREAD * MAX_THREADS as f64, "5M per second on each of at most 1000 threads"), allow_hyphen_values = true, value_name = "RATE")]
    pub rate: Option<f64>,
    /// After each open-loop test, run it again as a rate-capped closed loop at --rate (what
    /// memtier's --rate-limiting and valkey-benchmark's --rps report) and as a plain
    /// closed loop on the same connections (what redis-benchmark reports), and print the
    /// three side by side.
    #[arg(help_heading = "Open loop", long)]
    pub contrast: bool,
    /// Run each test this many times, and summarise each percentile as the median of the
    /// repeats with an interval from their spread beside the interval within one run
    /// (in a sweep: every step and every re-measurement) [range: 1 to 1000].
    #[arg(long, default_value_t = 1, value_parser = count_in::<u32>(1, 1000, "every repeat's report is kept"), value_name = "N", allow_negative_numbers = true)]
    pub repeat: u32,
    /// Open-loop arrival process.
    #[arg(help_heading = "Open loop", long, value_enum, default_value_t = ArrivalProcess::Poisson)]
    pub arrival: ArrivalProcess,

    /// Run shard I of K of the plan (from 0): an open loop's arrivals at --rate are split
    /// into K streams, -c and -n into K shares; `tailrate merge` adds the shards' reports.
    /// Without it, the index and count come from the environment: JOB_COMPLETION_INDEX
    /// with --shards (a Kubernetes Indexed Job), or SLURM_PROCID and SLURM_NTASKS (srun).
    #[arg(
        help_heading = "Scale out",
        long,
        value_name = "I/K",
        allow_hyphen_values = true
    )]
    pub shard: Option<String>,
    /// Shards of the plan when the index comes from JOB_COMPLETION_INDEX (or, under srun,
    /// to check SLURM_NTASKS) [range: 1 to 10000].
    #[arg(help_heading = "Scale out", long, value_name = "K", value_parser = count_in::<u32>(1, MAX_SHARDS as u64, "each shard's share of the plan must be worth a process"), allow_negative_numbers = true)]
    pub shards: Option<u32>,
    /// Start the test's schedule at this wall-clock instant: RFC 3339
    /// (`2026-12-02T06:00:00Z`), Unix seconds (`1796191200`), or `+30s` for the next whole
    /// 30 s of the clock, so shards started within a few seconds of each other agree; a
    /// shard ready more than 1 s after it refuses to run.
    #[arg(
        help_heading = "Scale out",
        long = "start-at",
        value_name = "TIME",
        allow_hyphen_values = true
    )]
    pub start_at: Option<String>,
    /// Requests sent before measuring starts (sent, not recorded) [range: 0s to 30days].
    #[arg(help_heading = "Open loop", long, value_parser = duration_in(Duration::ZERO, MAX_RUN, false, "a month"), allow_hyphen_values = true, value_name = "DURATION")]
    pub warmup: Option<Duration>,
    /// Open-loop pacing: precision against CPU.
    #[arg(help_heading = "Open loop", long, value_enum, default_value_t = Pacing::Hybrid)]
    pub pacing: Pacing,
    /// Open loop: most requests in flight on one connection [range: 1 to 1000000].
    #[arg(
        help_heading = "Open loop",
        long = "max-inflight",
        default_value_t = 64,
        value_name = "N",
        value_parser = count_in::<usize>(1, MAX_DEPTH as u64, "a connection's queues for them are allocated up front"),
        allow_negative_numbers = true
    )]
    pub max_inflight: usize,
    /// Open loop: most requests waiting for a free connection before they are dropped as not sent [range: 0 to 10000000].
    #[arg(
        help_heading = "Open loop",
        long = "max-backlog",
        default_value_t = 1_000_000,
        value_name = "N",
        value_parser = count_in::<usize>(0, MAX_BACKLOG as u64, "the backlog is memory"),
        allow_negative_numbers = true
    )]
    pub max_backlog: usize,
    /// A request with no reply after this long is a timeout; its connection is reset [range:
    /// 1ms to 1h].
    #[arg(help_heading = "Open loop", long, value_parser = duration_in(MIN_TIME, MAX_TIMEOUT, false, "latencies are recorded up to an hour"), allow_hyphen_values = true, value_name = "DURATION")]
    pub timeout: Option<Duration>,
    /// Give up connecting after this long (Ctrl+C ends the wait at once) [range: 1ms to 1h].
    #[arg(help_heading = "Connection", long = "connect-timeout", value_parser = duration_in(MIN_TIME, MAX_TIMEOUT, false, "an hour"), allow_hyphen_values = true, default_value = "5s", value_name = "DURATION")]
    pub connect_timeout: Duration,
    /// Closed loop: end the run when the server (against a cluster, a master whose slots
    /// no other node took over) stays unreachable this long; the open loop waits out
    /// any outage [default: the --connect-timeout] [range: 1ms to 30days].
    #[arg(help_heading = "Connection", long = "lost-server-wait", value_parser = duration_in(MIN_TIME, MAX_RUN, false, "a month"), allow_hyphen_values = true, value_name = "DURATION")]
    pub lost_server_wait: Option<Duration>,
    /// Write the whole report as JSON to this file, rewritten after every test; `-` prints
    /// it on standard output when the run ends, instead of the text or CSV report.
    #[arg(help_heading = "Output", long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write an HdrHistogram interval log (.hlog) to this file; `-` prints it on standard
    /// output as the run goes, instead of the text or CSV report.
    #[arg(help_heading = "Output", long = "hdr-log", value_name = "FILE")]
    pub hdr_log: Option<PathBuf>,
    /// Exit non-zero when a self-check fails.
    #[arg(help_heading = "Output", long)]
    pub strict: bool,
    /// Stop at the first error reply, like redis-benchmark.
    #[arg(help_heading = "Output", long = "exit-on-error")]
    pub exit_on_error: bool,
    /// With -P, time every reply of a batch to its last reply, as redis-benchmark does.
    #[arg(help_heading = "Closed loop (redis-benchmark)", long = "batch-latency")]
    pub batch_latency: bool,
    /// Largest reply accepted before the connection is dropped as a protocol error [range: 16
    /// to 4294967296].
    #[arg(help_heading = "Workloads", long = "max-reply-bytes", value_parser = count_in::<u64>(16, 1 << 32, "a reply is buffered whole on its connection"), default_value = "536870912", value_name = "BYTES", allow_negative_numbers = true)]
    pub max_reply_bytes: u64,
    /// Show no live progress line.
    #[arg(help_heading = "Output", long = "no-progress")]
    pub no_progress: bool,
    /// Do not read the server's own counters (INFO commandstats, INFO cpu, LATENCY
    /// HISTOGRAM) before and after each test, nor open the connection they are read on.
    #[arg(help_heading = "Output", long = "no-server-stats")]
    pub no_server_stats: bool,

    /// Key distribution over --keyspace for `__key__` and `__rand_int__`: zipf ranks keys (index 0 hottest), gaussian centres them (mean N/2, sd N/6), sequential walks them in order.
    #[arg(
        help_heading = "Workloads",
        long = "key-pattern",
        value_enum,
        value_name = "PATTERN"
    )]
    pub key_pattern: Option<KeyPattern>,
    /// Number of distinct keys (indices 0..N); alone it means uniform keys, like -r N [range:
    /// 1 to 1000000000000].
    #[arg(help_heading = "Workloads", long = "keyspace", value_parser = parse_count, value_name = "N", allow_negative_numbers = true)]
    pub keyspace_size: Option<u64>,
    /// Exponent s of --key-pattern zipf: the key of rank r gets weight 1/r^s [default: 1.0]
    /// [range: above 0 to 100].
    #[arg(
        help_heading = "Workloads",
        long = "zipf-exponent",
        allow_hyphen_values = true,
        value_name = "S"
    )]
    pub zipf_exponent: Option<f64>,
    /// Prefix of the keys `__key__` becomes [default: key:] (the default tests keep their own key names).
    #[arg(help_heading = "Workloads", long = "key-prefix", value_name = "PREFIX")]
    pub key_prefix: Option<String>,
    /// Make every `__key__` this many bytes: the prefix, then the key index zero-padded
    /// [range: 1 to 536870912].
    #[arg(help_heading = "Workloads", long = "key-size", value_parser = count_in::<u64>(1, MAX_VALUE_SIZE as u64, "512 MiB, the largest key Redis accepts"), value_name = "BYTES", allow_negative_numbers = true)]
    pub key_size: Option<u64>,
    /// Value sizes drawn uniformly from MIN to MAX bytes, inclusive: `32-1024`.
    #[arg(
        help_heading = "Workloads",
        long = "data-size-range",
        value_name = "MIN-MAX",
        conflicts_with = "data_size_list"
    )]
    pub data_size_range: Option<String>,
    /// Value sizes drawn by weight, SIZE:WEIGHT,...: `32:7,1024:2,65536:1`.
    #[arg(
        help_heading = "Workloads",
        long = "data-size-list",
        value_name = "LIST"
    )]
    pub data_size_list: Option<String>,
    /// A SET/GET mix, memtier's spelling: `1:10` sends one `SET __key__ __data__` per ten `GET __key__`.
    #[arg(help_heading = "Workloads", long, value_name = "SET:GET")]
    pub ratio: Option<String>,
    /// A SET/GET mix, go-redis's spelling: the fraction of requests that are GETs (`0.8`)
    /// [range: 0 to 1].
    #[arg(
        help_heading = "Workloads",
        long = "read-ratio",
        allow_hyphen_values = true,
        value_name = "FRACTION"
    )]
    pub read_ratio: Option<f64>,
    /// A command of a custom mix, repeatable: `--command 'SET __key__ __data__'`; split on spaces ("..." groups); placeholders __key__, __data__, __rand_int__, __sha_N__.
    #[arg(help_heading = "Workloads", long = "command", value_name = "COMMAND")]
    pub mix_command: Vec<String>,
    /// Weights of the --command entries, in order: `1,10` (default: equal).
    #[arg(
        help_heading = "Workloads",
        long = "command-weights",
        value_name = "W,W,..."
    )]
    pub command_weights: Option<String>,
    /// A Lua script to SCRIPT LOAD before the run, repeatable; `__sha_1__`, `__sha_2__`, ... in commands are their SHA1s, for EVALSHA.
    #[arg(
        help_heading = "Workloads",
        long = "script-load",
        value_name = "SCRIPT"
    )]
    pub script_load: Vec<String>,

    /// A custom command to benchmark instead of the default tests.
    #[arg(trailing_var_arg = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[cfg(test)]
mod tests;
