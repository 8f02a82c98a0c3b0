//! `tailrate replay FILE`: the flags of a replay of recorded traffic (docs/replay.md).
//! The trace decides what is sent and when; the connection, open-loop, check and output
//! flags are a single run's.

use std::path::PathBuf;

use crate::drive::MAX_CONNECTIONS;
use crate::drive::schedule::MAX_RATE_PER_THREAD;
use crate::units::{count_in, rate_up_to};
use crate::workload::trace::TraceFormat;

use super::groups::{
    ChecksArgs, DurationArgs, EndpointArgs, HtmlArgs, JsonArgs, LinkArgs, ObjectiveArgs,
    OpenLoopArgs, PrecisionArgs, ProgressArgs, RepeatArgs, RunOutputArgs, SessionArgs,
};
use super::metrics::MetricsArgs;

/// Replays a trace at its recorded timing (or faster, slower, or at a rate), timing each
/// command from when it was due.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "Examples:
  redis-cli -p 6379 MONITOR > capture.monitor     # capture (see docs/replay.md first)
  tailrate replay capture.monitor -p 6380
  tailrate replay capture.monitor -p 6380 --speed 2 --slo 'p99<=1ms'
  tailrate replay trace.jsonl -p 6380 --rate 50k --connections 20 --json replay.json
  tailrate sweep --replay capture.monitor --speeds 0.5..4:0.5 --slo 'p99<=1ms' -p 6380

Guide: docs/replay.md")]
pub struct ReplayArgs {
    /// The trace: `redis-cli MONITOR` output, JSON lines or CSV (see docs/replay.md).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// How the trace is read and sent.
    #[command(flatten)]
    pub trace: TraceArgs,
    /// Replay at this many times the recorded pace: 2 sends in half the time [default: 1,
    /// the recorded pace] [range: above 0 to 1000000].
    #[arg(long, value_name = "X", help_heading = "Replay", value_parser = speed, allow_hyphen_values = true, conflicts_with = "replay_rate")]
    pub speed: Option<f64>,
    /// Replay at this mean rate instead, keeping the shape of the bursts (the speed that
    /// makes the recorded mean this rate) [default: none, --speed] [range: above 0 to
    /// 5000000000].
    #[arg(long = "rate", id = "replay_rate", help_heading = "Replay", value_name = "RATE", value_parser = rate_up_to(MAX_RATE_PER_THREAD * 1000.0, "5M per second on each of at most 1000 threads"), allow_hyphen_values = true)]
    pub rate: Option<f64>,

    /// Where the server is.
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    /// How to connect, without `-c`, `--dbnum` and `--cluster`.
    #[command(flatten)]
    pub connection: ReplayConnectionArgs,
    /// In-flight and backlog bounds, pacing.
    #[command(flatten)]
    pub open_loop: OpenLoopArgs,
    /// `--duration`: at most this long (with --loop, this long).
    #[command(flatten)]
    pub duration: DurationArgs,
    /// `--repeat`.
    #[command(flatten)]
    pub repeat: RepeatArgs,
    /// Warm-up, timeouts, strictness.
    #[command(flatten)]
    pub checks: ChecksArgs,
    /// `--slo`.
    #[command(flatten)]
    pub objectives: ObjectiveArgs,
    /// `-q`, `--csv`, `--hdr-log`, `--percentiles`.
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
    /// Progress line and server counters.
    #[command(flatten)]
    pub progress: ProgressArgs,
    /// Live Prometheus metrics.
    #[command(flatten)]
    pub metrics: MetricsArgs,
}

/// How a replay connects: a run's connection flags but `-c`, `--dbnum` and `--cluster`,
/// which clap then refuses as flags a replay does not have. Its connections are the
/// trace's clients (`--connections` folds them), each command runs in the database it
/// was recorded in, and a cluster would split a client's commands by key.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplayConnectionArgs {
    /// `--threads`, `-a`, `--askpass`, `--user`.
    #[command(flatten)]
    pub link: LinkArgs,
    /// RESP3, tracking, timeouts, TLS.
    #[command(flatten)]
    pub session: SessionArgs,
}

/// Why a replay has no `-c`, `--dbnum` or `--cluster`, and what to do instead: said beside
/// clap's refusal of each (`tailrate replay -c 50 ...`).
pub const NOT_A_REPLAYS_FLAGS: [(&str, &str); 3] = [
    (
        "-c",
        "a replay opens one connection per recorded client: fold them onto fewer with \
         --connections N",
    ),
    (
        "--dbnum",
        "a replay runs each command in the database it was recorded in (a SELECT goes \
         first where needed): replay against a server whose databases hold the data",
    ),
    (
        "--cluster",
        "a replay sends each client's commands in order on one connection, which a \
         cluster would split by key: replay against one node (or a proxy in front)",
    ),
];

/// How a trace is read and its commands laid on connections (a replay, and a sweep over
/// speeds).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Replay")]
pub struct TraceArgs {
    /// The trace's format [default: detected from its first line].
    #[arg(long = "format", value_enum, value_name = "FORMAT")]
    pub format: Option<TraceFormat>,
    /// Fold the recorded clients onto this many connections (client i on connection i mod
    /// N; never more connections than clients) [default: one per recorded client; 50 for a
    /// trace without clients] [range: 1 to 100000].
    #[arg(long, value_name = "N", value_parser = count_in::<usize>(1, MAX_CONNECTIONS as u64, "each is a socket and its buffers"), allow_negative_numbers = true)]
    pub connections: Option<usize>,
    /// Replay only these commands (comma-separated: `get,set`, or `config|get`).
    #[arg(long, value_delimiter = ',', value_name = "COMMANDS")]
    pub commands: Vec<String>,
    /// Leave these commands out (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "COMMANDS")]
    pub exclude: Vec<String>,
    /// Start the trace again when it ends, until --duration.
    #[arg(long = "loop")]
    pub repeat_trace: bool,
    /// Replay at most this many commands of the trace [default: all] [range: 1 to
    /// 18446744073709551615].
    #[arg(long, value_name = "N", value_parser = count_in::<u64>(1, u64::MAX, "the largest count"), allow_negative_numbers = true)]
    pub limit: Option<u64>,
    /// Count lines that do not parse and go on, instead of refusing the trace at the first.
    #[arg(long = "skip-bad-lines")]
    pub skip_bad_lines: bool,
    /// Replay commands that change the server beyond the trace's keys (FLUSHALL, FLUSHDB,
    /// CONFIG SET, DEBUG, CLIENT KILL, ACL SETUSER, REPLICAOF, SAVE, ...: docs/replay.md);
    /// without it a trace holding one is refused before anything is sent.
    #[arg(long = "allow-admin-commands")]
    pub allow_admin_commands: bool,
}

/// `--speed`: a positive finite factor, at most a million.
fn speed(text: &str) -> Result<f64, String> {
    let x: f64 = text
        .trim()
        .trim_end_matches(['x', 'X'])
        .parse()
        .map_err(|_| format!("'{text}' is not a number: give a factor such as 2 or 0.5"))?;
    if x.is_finite() && x > 0.0 && x <= 1e6 {
        Ok(x)
    } else {
        Err(format!("'{text}': a speed is above 0 and at most 1000000"))
    }
}
