//! The flags of a run, by group: each group is a struct with its own `--help` heading, and
//! each subcommand flattens only the groups it takes, so clap refuses the others itself.
//! Which subcommand takes which group is said on each group; [`super::RunArgs`] takes them
//! all.

use std::path::PathBuf;
use std::time::Duration;

use super::WorkloadArgs;
// The output groups live in output.rs; replay.rs takes them from here with the others.
pub(super) use super::output::{HtmlArgs, JsonArgs, PrecisionArgs, ProgressArgs, RunOutputArgs};
use crate::drive::plan::{
    MAX_BACKLOG, MAX_CONNECTIONS, MAX_DEPTH, MAX_RUN, MAX_SHARDS, MAX_THREADS, MAX_TIMEOUT,
    MIN_TIME,
};
use crate::drive::{ArrivalProcess, CapPacing, MAX_RATE_PER_THREAD, Pacing};
use crate::units::{count_in, duration_in, rate_up_to};

/// A group's values when none of its flags is typed: clap's own defaults, so that each
/// default is written once, on its flag.
pub(super) fn defaults<T: clap::Args + clap::FromArgMatches>() -> T {
    let command = T::augment_args(clap::Command::new("defaults").disable_help_flag(true));
    command
        .try_get_matches_from(["defaults"])
        .and_then(|matches| T::from_arg_matches(&matches))
        .unwrap_or_else(|e| panic!("a flag group without required flags parses empty: {e}"))
}

/// `Default` from [`defaults`], for the groups a subcommand does not take.
macro_rules! default_from_clap {
    ($($group:ty),* $(,)?) => {
        $(impl Default for $group {
            fn default() -> Self {
                defaults()
            }
        })*
    };
}

default_from_clap!(
    EndpointArgs,
    ConnectionArgs,
    KeepaliveArgs,
    WorkloadArgs,
    BenchmarkArgs,
    WorkersArgs,
    RateArgs,
    OpenLoopArgs,
    ContrastArgs,
    DurationArgs,
    RepeatArgs,
    ObjectiveArgs,
    ChecksArgs,
    ScaleOutArgs,
);

/// Where the server is: `-h`/`-p`, `-s` or `-u` (not in `compare`, whose `--a` and `--b` say it).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Connection")]
pub struct EndpointArgs {
    /// Server hostname.
    #[arg(short = 'h', default_value = "127.0.0.1", value_name = "HOST")]
    pub host: String,
    /// Server port [range: 1 to 65535].
    #[arg(
        short = 'p',
        default_value_t = 6379,
        value_name = "PORT",
        value_parser = count_in::<u16>(1, 65535, "TCP ports are 16 bits"),
        allow_negative_numbers = true
    )]
    pub port: u16,
    /// Server socket (overrides host and port).
    #[arg(short = 's', value_name = "SOCKET")]
    pub socket: Option<PathBuf>,
    /// Server URI: redis://[user:pass@]host[:port][/db], rediss://... (TLS) or unix:///path.
    // The brackets are the help text's, not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(short = 'u', value_name = "URI")]
    pub uri: Option<String>,
}

/// How to connect: connections, threads, authentication, database, TLS, cluster, timeouts
/// (a run, a sweep, `compare --live`, `tune`). A replay takes [`LinkArgs`] and
/// [`SessionArgs`] alone: its connections and databases are the trace's.
///
/// The fields keep the order of the flags in `--help`: `-c`, the link, `--dbnum`, the
/// session, `--cluster`.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Connection")]
pub struct ConnectionArgs {
    /// Which of `-c`, `--dbnum` and `--cluster` were typed rather than left at their
    /// defaults (no flag of its own): a sweep of a replay refuses them. First: clap's
    /// derive takes each flag's value out of the matches as it reads the field, and this
    /// reads where theirs came from.
    #[command(flatten)]
    pub typed: super::typed::TypedConnection,
    /// Number of parallel connections [range: 1 to 100000].
    ///
    /// The open-file limit is raised to the hard limit when they need it.
    #[arg(
        short = 'c',
        default_value_t = 50,
        value_name = "CLIENTS",
        value_parser = count_in::<usize>(1, MAX_CONNECTIONS as u64, "each is a socket and its buffers"),
        allow_negative_numbers = true
    )]
    pub clients: usize,
    /// `--threads`, `-a`, `--askpass`, `--user`.
    #[command(flatten)]
    pub link: LinkArgs,
    /// SELECT this database number [range: 0 to 2147483647].
    #[arg(
        long,
        default_value_t = 0,
        value_name = "DB",
        value_parser = count_in::<u32>(0, i32::MAX as u64, "Redis numbers its databases with a C int"),
        allow_negative_numbers = true
    )]
    pub dbnum: u32,
    /// RESP3, tracking, timeouts, TLS.
    #[command(flatten)]
    pub session: SessionArgs,
    /// Route requests over a Redis Cluster by key slot [default: detected from the
    /// first node].
    ///
    /// Follows MOVED and ASK; each of the -c clients opens a connection to every
    /// master. Given, a node not in cluster mode is an error.
    #[arg(long)]
    pub cluster: bool,
}

/// The threads connections are spread over and how each logs in: `--threads`, `-a`,
/// `--askpass`, `--user` (every command that connects, a replay included).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Connection")]
pub struct LinkArgs {
    /// OS threads to spread connections over (at most one per connection) [range: 1 to
    /// 1000].
    #[arg(
        long,
        default_value_t = 1,
        value_name = "NUM",
        value_parser = count_in::<usize>(1, MAX_THREADS as u64, "each is an OS thread with its own event loop"),
        allow_negative_numbers = true
    )]
    pub threads: usize,
    /// Password for Redis AUTH; REDISCLI_AUTH in the environment or --askpass keeps it
    /// out of the process list.
    ///
    /// Given here (or in a -u URI) it shows in the process list for the whole run, and
    /// a warning says so.
    #[arg(
        short = 'a',
        value_name = "PASSWORD",
        env = "REDISCLI_AUTH",
        hide_env_values = true
    )]
    pub password: Option<String>,
    /// Ask for the password instead of -a or REDISCLI_AUTH.
    ///
    /// Typed at the terminal without echo, or the first line of standard input when it
    /// is not a terminal.
    #[arg(long)]
    pub askpass: bool,
    /// ACL user for `AUTH user pass`; needs a password.
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,
}

/// What each connection's session is: RESP3, tracking, timeouts, TLS (every command that
/// connects, a replay included).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Connection")]
pub struct SessionArgs {
    /// Start each session in RESP3 (HELLO 3).
    #[arg(short = '3')]
    pub resp3: bool,
    /// Send CLIENT TRACKING on before starting.
    #[arg(long = "enable-tracking")]
    pub enable_tracking: bool,
    /// Give up connecting after this long (Ctrl+C ends the wait at once) [range: 1ms to 1h].
    #[arg(long = "connect-timeout", value_parser = duration_in(MIN_TIME, MAX_TIMEOUT, false, "an hour"), allow_hyphen_values = true, default_value = "5s", value_name = "DURATION")]
    pub connect_timeout: Duration,
    /// Closed loop: end the run when the server stays unreachable this long [default:
    /// the --connect-timeout] [range: 1ms to 30days].
    ///
    /// Against a cluster, the server is a master whose slots no other node took over.
    /// The open loop waits out any outage.
    #[arg(long = "lost-server-wait", value_parser = duration_in(MIN_TIME, MAX_RUN, false, "a month"), allow_hyphen_values = true, value_name = "DURATION")]
    pub lost_server_wait: Option<Duration>,
    /// Connect over TLS (a rediss:// URI implies it).
    ///
    /// The server's certificate is verified against --cacert or the system's roots.
    #[arg(long)]
    pub tls: bool,
    /// TLS: trust the CA certificates in this PEM file instead of the system's roots.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// TLS: client certificate (PEM) for mutual TLS; needs --key.
    ///
    /// Intermediate certificates follow it in the file; for servers that ask for a
    /// client's certificate.
    #[arg(long, value_name = "FILE")]
    pub cert: Option<PathBuf>,
    /// TLS: private key (PEM: PKCS#8, RSA or EC) of --cert.
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// TLS: server name to send (SNI) and to check the certificate against [default:
    /// the host].
    #[arg(long, value_name = "NAME")]
    pub sni: Option<String>,
    /// TLS: do not verify the server's certificate (for tests only).
    ///
    /// The traffic is encrypted, but anyone in the path can pose as the server.
    #[arg(long)]
    pub insecure: bool,
}

/// `-k`: whether connections stay open (not in `tune`, whose workers share long-lived ones).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Connection")]
pub struct KeepaliveArgs {
    /// 1 = keep alive, 0 = reconnect for every request [range: 0 to 1].
    #[arg(short = 'k', default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=1), value_name = "BOOLEAN", allow_negative_numbers = true)]
    pub keepalive: u8,
}

/// redis-benchmark's closed loop: a request count, fixed pipelines, looping, idling and `-x` (a single run only).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Closed loop (redis-benchmark)")]
pub struct BenchmarkArgs {
    /// Total number of requests per test (closed loop) [default: 100000] [range: 1 to
    /// 18446744073709551615].
    #[arg(short = 'n', value_parser = count_in::<u64>(1, u64::MAX, "2^64-1"), allow_hyphen_values = true, value_name = "REQUESTS")]
    pub requests: Option<u64>,
    /// Pipeline this many requests per connection (closed loop) [range: 1 to 1000000].
    #[arg(
        short = 'P',
        default_value_t = 1,
        value_name = "NUMREQ",
        value_parser = count_in::<u32>(1, MAX_DEPTH as u64, "a connection's queues for them are allocated up front"),
        allow_negative_numbers = true
    )]
    pub pipeline: u32,
    /// With -P, time every reply of a batch to its last reply, as redis-benchmark does.
    #[arg(long = "batch-latency")]
    pub batch_latency: bool,
    /// Loop: run the tests forever (until Ctrl+C).
    #[arg(short = 'l')]
    pub loop_forever: bool,
    /// Idle mode: open the connections and wait until Ctrl+C, or for --duration.
    #[arg(short = 'I')]
    pub idle: bool,
    /// Read the last argument of the custom command from stdin.
    #[arg(short = 'x')]
    pub stdin_last_arg: bool,
}

/// `--workers` and its batching (a single run only: `tune` searches them).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Workers (many clients over few connections)")]
pub struct WorkersArgs {
    /// Closed loop: this many logical clients over the -c connections [default: none,
    /// one client per connection] [range: 1 to 1000000].
    ///
    /// Each worker has one request in flight; they are dealt evenly over the
    /// connections, and each connection batches its workers' requests (automatic
    /// pipelining).
    // Ranges are config/workers.rs's, with their reasons; this parser reads the number
    // as every other count flag does (spaces trimmed, `10k`).
    #[arg(long, value_name = "W", value_parser = count_in::<usize>(0, u64::MAX, "the largest count"), allow_negative_numbers = true)]
    pub workers: Option<usize>,
    /// With --workers: a connection writes its waiting requests once this many wait [default: 100] [range: 1 to 1000000].
    #[arg(
        long = "pipeline-size",
        value_name = "N",
        value_parser = count_in::<usize>(0, u64::MAX, "the largest count"),
        allow_negative_numbers = true
    )]
    pub pipeline_size: Option<usize>,
    /// With --workers: ...or once the oldest has waited this long: `50us`, `1ms`, `0`
    /// [default: 0] [range: 0 to 1h].
    ///
    /// A connection also writes when every one of its workers waits.
    #[arg(long = "pipeline-delay", value_parser = duration_in(Duration::ZERO, MAX_TIMEOUT, true, "an hour"), allow_hyphen_values = true, value_name = "DURATION")]
    pub pipeline_delay: Option<Duration>,
}

/// `--rate`: an open loop (a single run, and both sides of `compare --live`).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Open loop")]
pub struct RateArgs {
    /// Open loop: send this many requests per second in total: `50000`, `50k`, `1.5M`
    /// [default: none, a closed loop] [range: above 0 to 5000000000].
    ///
    /// One thread plans at most 5M a second, so a higher rate needs --threads (and -c)
    /// to match.
    #[arg(long, value_parser = rate_up_to(MAX_RATE_PER_THREAD * MAX_THREADS as f64, "5M per second on each of at most 1000 threads"), allow_hyphen_values = true, value_name = "RATE")]
    pub rate: Option<f64>,
}

/// How an open loop sends (a single run, each sweep step, `compare --live`).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Open loop")]
pub struct OpenLoopArgs {
    /// Open-loop arrival process.
    #[arg(long, value_enum, default_value_t = ArrivalProcess::Poisson)]
    pub arrival: ArrivalProcess,
    /// Open-loop pacing: precision against CPU.
    #[arg(long, value_enum, default_value_t = Pacing::Hybrid)]
    pub pacing: Pacing,
    /// Open loop: most requests in flight on one connection [range: 1 to 1000000].
    #[arg(
        long = "max-inflight",
        default_value_t = 64,
        value_name = "N",
        value_parser = count_in::<usize>(1, MAX_DEPTH as u64, "a connection's queues for them are allocated up front"),
        allow_negative_numbers = true
    )]
    pub max_inflight: usize,
    /// Open loop: most requests waiting for a free connection before they are dropped as not sent [range: 0 to 10000000].
    #[arg(
        long = "max-backlog",
        default_value_t = 1_000_000,
        value_name = "N",
        value_parser = count_in::<usize>(0, MAX_BACKLOG as u64, "the backlog is memory"),
        allow_negative_numbers = true
    )]
    pub max_backlog: usize,
}

/// `--contrast` (a single run only).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Open loop")]
pub struct ContrastArgs {
    /// After each open-loop test, run it again as a rate-capped and as a plain closed
    /// loop, and print the three side by side.
    ///
    /// The rate-capped closed loop at --rate is what memtier's --rate-limiting and
    /// valkey-benchmark's --rps report; the plain closed loop on the same connections,
    /// what redis-benchmark reports.
    #[arg(long)]
    pub contrast: bool,
    /// How the rate-capped closed loop holds its rate.
    #[command(flatten)]
    pub pacing: CapPacingArgs,
}

/// `--cap-pacing`: how a rate-capped closed loop (`--contrast`, `sweep --rate-capped`)
/// holds its rate.
#[derive(Debug, Clone, clap::Args)]
pub struct CapPacingArgs {
    /// How the rate-capped closed loop holds its rate.
    ///
    /// `connection`: each connection at R/c in ticks of up to 50 a second that all fall
    /// together (memtier's --rate-limiting); `shared`: one limiter for all, sends
    /// spread evenly.
    #[arg(long = "cap-pacing", value_enum, default_value_t = CapPacing::Connection, value_name = "HOW")]
    pub cap_pacing: CapPacing,
}

/// `--duration`: a run's, a sweep step's or a tune trial's length (`compare --live` has `--round-duration`).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Repeats and checks")]
pub struct DurationArgs {
    /// Run for this long instead of a request count: `30s`, `2m` [default: 10s in the open
    /// loop, 5s a sweep step, 1s a tune trial; a closed loop runs -n requests] [range: 1ms to
    /// 30days].
    #[arg(long, value_parser = duration_in(MIN_TIME, MAX_RUN, false, "a month"), allow_hyphen_values = true, value_name = "DURATION")]
    pub duration: Option<Duration>,
}

/// `--repeat` (a single run and a sweep; `compare --live` has `--rounds`).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Repeats and checks")]
pub struct RepeatArgs {
    /// Run each test this many times; each percentile is of the repeats pooled [range:
    /// 1 to 1000].
    ///
    /// Each percentile comes with the interval of the pooled test. In a sweep: runs of
    /// each coarse step; the search adds runs where a rate is undecided.
    #[arg(long, default_value_t = 1, value_parser = count_in::<u32>(1, 1000, "every repeat's report is kept"), value_name = "N", allow_negative_numbers = true)]
    pub repeat: u32,
}

/// Warm-up, timeouts, the seed, and what a failed check does.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Repeats and checks")]
pub struct ChecksArgs {
    /// Requests sent before measuring starts (sent, not recorded) [default: 0s; 1s before
    /// each sweep step, 0s over a replay] [range: 0s to 30days].
    #[arg(long, value_parser = duration_in(Duration::ZERO, MAX_RUN, false, "a month"), allow_hyphen_values = true, value_name = "DURATION")]
    pub warmup: Option<Duration>,
    /// A request with no reply after this long is a timeout; its connection is reset
    /// [default: none, a request waits for its reply] [range: 1ms to 1h].
    #[arg(long, value_parser = duration_in(MIN_TIME, MAX_TIMEOUT, false, "latencies are recorded up to an hour"), allow_hyphen_values = true, value_name = "DURATION")]
    pub timeout: Option<Duration>,
    /// Seed of every random choice (keys, values, arrivals); printed in reports [default: a
    /// fresh one per run] [range: 0 to 18446744073709551615].
    #[arg(long, value_name = "SEED", value_parser = count_in::<u64>(0, u64::MAX, "the largest count"), allow_negative_numbers = true)]
    pub seed: Option<u64>,
    /// Exit non-zero when a self-check fails.
    #[arg(long)]
    pub strict: bool,
    /// Stop at the first error reply, like redis-benchmark.
    #[arg(long = "exit-on-error")]
    pub exit_on_error: bool,
}

/// `--slo` on a single run (a sweep has its own, which searches the capacity at it).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Repeats and checks")]
pub struct ObjectiveArgs {
    /// Objective on each test's response time, repeatable: `p99<=1ms`; a failed one
    /// exits 1.
    ///
    /// Judged on the percentile's 95% interval: pass when it lies under the bound, fail
    /// (exit 1) when above, undecided otherwise (exit 1 with --strict).
    #[arg(long, value_name = "SLO")]
    pub slo: Vec<String>,
}

/// Shards of one plan (a single run only; see docs/scale-out.md).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Scale out")]
pub struct ScaleOutArgs {
    /// Run shard I of K of the plan (from 0) [default: from JOB_COMPLETION_INDEX or
    /// SLURM_PROCID, else none].
    ///
    /// An open loop's arrivals at --rate are split into K streams, -c and -n into K
    /// shares; `tailrate merge` adds the shards' reports. Without it, the index and
    /// count come from the environment: JOB_COMPLETION_INDEX with --shards (a
    /// Kubernetes Indexed Job), or SLURM_PROCID and SLURM_NTASKS (srun).
    #[arg(long, value_name = "I/K", allow_hyphen_values = true)]
    pub shard: Option<String>,
    /// Shards of the plan when the index comes from JOB_COMPLETION_INDEX (or, under srun,
    /// to check SLURM_NTASKS) [range: 1 to 10000].
    #[arg(long, value_name = "K", value_parser = count_in::<u32>(1, MAX_SHARDS as u64, "each shard's share of the plan must be worth a process"), allow_negative_numbers = true)]
    pub shards: Option<u32>,
    /// Start the test's schedule at this instant: `2026-12-02T06:00:00Z`, Unix seconds,
    /// or `+30s` [default: when ready].
    ///
    /// RFC 3339, Unix seconds (`1796191200`), or `+30s` for the next whole 30 s of the
    /// clock, so shards started within a few seconds of each other agree; a shard ready
    /// more than 1 s after it refuses to run.
    #[arg(long = "start-at", value_name = "TIME", allow_hyphen_values = true)]
    pub start_at: Option<String>,
}
