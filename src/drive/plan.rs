//! What one test's run is to do, as the driver reads it: the loop (closed or open),
//! when it stops, where it connects and what it sends. `config` builds a [`Plan`] from
//! the flags; the cluster layout, found at run time, is passed beside it.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::cap::RateCap;
use super::schedule::{ArrivalProcess, Pacing};
use super::trace::TraceSource;
use crate::net::{Endpoint, Handshake};
use crate::record::Timing;
use crate::resp::Limits;
use crate::workload::Workload;

/// Most connections of one run (`-c`): each is a socket and its buffers (about 15 KB when
/// idle, measured with `-c 8000`).
pub const MAX_CONNECTIONS: usize = 100_000;
/// Most OS threads of one run (`--threads`).
pub const MAX_THREADS: usize = 1000;
/// Most requests one connection may have in flight (`-P`, `--max-inflight`): its queues
/// for them are allocated when it starts.
pub const MAX_DEPTH: usize = 1_000_000;
/// Most request slots over every connection of a run (`-c` times `-P` or
/// `--max-inflight`), all allocated when the connections start; under a stall every one
/// of them may hold a request.
pub const MAX_SLOTS: u64 = 1 << 24;
/// Most requests waiting client-side for a free connection (`--max-backlog`): the
/// backlog grows to hold them.
pub const MAX_BACKLOG: usize = 10_000_000;

/// The longest run and warm-up (`--duration`, `--warmup`): a month.
pub const MAX_RUN: Duration = Duration::from_secs(30 * 24 * 3600);
/// The longest timeout (`--timeout`, `--connect-timeout`): the histograms hold latencies
/// up to an hour.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(3600);
/// The shortest run and timeout.
pub const MIN_TIME: Duration = Duration::from_millis(1);
/// Most shards of one plan (`--shard I/K`, `--shards K`).
pub const MAX_SHARDS: u32 = 10_000;
/// How late after `--start-at` a shard may still start. Later, its intended times would
/// lie that far in the past at its first wake-up and every early request would carry
/// the lateness as lag, so it refuses to run instead.
pub const MAX_START_LATENESS: Duration = Duration::from_secs(1);

/// Which part of one plan this process runs: shard `index` of `count` (0-based), each
/// started by an engine (a Kubernetes Indexed Job, `srun`) with its index. Shard 0 of 1
/// is the whole plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    /// This process's index, from 0.
    pub index: u32,
    /// Shards of the plan.
    pub count: u32,
}

impl Shard {
    /// The whole plan in one process.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Whether the plan is split at all.
    pub fn is_split(self) -> bool {
        self.count > 1
    }

    /// This shard's part of `total` things dealt round-robin (connections, requests):
    /// shard `i` gets `i, i + K, i + 2K, ...`.
    pub fn share_of(self, total: u64) -> u64 {
        let (i, k) = (u64::from(self.index), u64::from(self.count.max(1)));
        // Written so that `total` up to 2^64-1 (`-n`'s largest) cannot overflow.
        total / k + u64::from(total % k > i)
    }

    /// The index of this shard's thread `thread` of `threads` among the whole plan's
    /// `count * threads` arrival streams: thread `t` of shard `i` is stream `i + K t`, so
    /// that with one shard the streams are the threads, and the streams of every shard
    /// together interleave as one process's threads would.
    pub fn stream(self, thread: usize) -> usize {
        self.index as usize + self.count.max(1) as usize * thread
    }
}

/// What the driver needs to run the tests of one command line.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Where to connect.
    pub endpoint: Endpoint,
    /// What to send on connect.
    pub handshake: Handshake,
    /// Closed or open loop.
    pub mode: Mode,
    /// When each test ends.
    pub stop: Stop,
    /// Requests sent before recording starts (open loop).
    pub warmup: Duration,
    /// Connections per test.
    pub connections: usize,
    /// OS threads.
    pub threads: usize,
    /// Reconnect for every request (`-k 0`).
    pub reconnect_each_request: bool,
    /// The tests to run, in order.
    pub workload: Workload,
    /// Seed of every random choice.
    pub seed: u64,
    /// Per-request timeout.
    pub timeout: Option<Duration>,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Closed loop: how long the server may stay unreachable before the run gives up
    /// (`None`: the connect timeout). An open loop waits out any outage.
    pub lost_server_wait: Option<Duration>,
    /// Reply size limits.
    pub limits: Limits,
    /// Stop at the first error reply.
    pub exit_on_error: bool,
    /// redis-benchmark's batch latency with -P.
    pub batch_latency: bool,
    /// The part of the plan this process runs; the connections and `-n` above are already
    /// this shard's share, an open loop's rate is the whole plan's (this shard's:
    /// [`Plan::own_rate_per_sec`]).
    pub shard: Shard,
    /// `--start-at`: the wall-clock start of the first test.
    pub start_at: Option<SystemTime>,
}

impl Plan {
    /// True in open loop.
    pub fn is_open_loop(&self) -> bool {
        matches!(self.mode, Mode::Open { .. })
    }

    /// An open loop's rate that this process sends: its shard's share of the whole plan's
    /// rate. What its reports, progress and checks call the target. `None` for a closed
    /// loop.
    pub fn own_rate_per_sec(&self) -> Option<f64> {
        self.mode
            .rate_per_sec()
            .map(|whole| whole / f64::from(self.shard.count.max(1)))
    }
}

/// Whether requests follow replies (closed) or a schedule (open).
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// Each connection keeps `pipeline` requests in flight; the next batch goes when all
    /// replies are in.
    /// With `workers`, logical clients share the connections instead (automatic pipelining).
    Closed {
        /// Requests per batch (`-P`).
        pipeline: u32,
        /// Hold sends to a rate, timing each from its actual send: what rate-limited
        /// closed-loop tools report (see `cap.rs`).
        rate_cap: Option<RateCap>,
        /// `--workers`: logical clients multiplexed over the connections, batched per connection.
        workers: Option<Workers>,
    },
    /// Requests go at `rate_per_sec` whatever the server does.
    Open {
        /// Target requests per second of the whole plan: over all connections of every
        /// shard. Each shard's schedule is cut from the whole plan's (see
        /// `Shard::stream`); this process's share is [`Plan::own_rate_per_sec`].
        rate_per_sec: f64,
        /// Where the requests come from: an arrival process, or a recorded trace.
        arrival: ArrivalSource,
        /// How the scheduler waits.
        pacing: Pacing,
        /// Most requests in flight on one connection.
        max_inflight: usize,
        /// Most requests waiting client-side for a free connection.
        max_backlog: usize,
    },
}

/// `--workers W`: W logical clients, each with one request in flight, dealt evenly over
/// the connections; a connection writes the requests its workers handed it in one batch
/// when the batch is full or its oldest request has waited `pipeline_delay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workers {
    /// Logical clients over all connections.
    pub count: usize,
    /// Most requests in one write (`--pipeline-size`).
    pub pipeline_size: usize,
    /// Longest the oldest buffered request waits for the batch to fill (`--pipeline-delay`).
    pub pipeline_delay: Duration,
}

impl Mode {
    /// An open loop's rate, the whole plan's (see [`Plan::own_rate_per_sec`]); `None` for
    /// a closed loop.
    pub fn rate_per_sec(&self) -> Option<f64> {
        match self {
            Mode::Open { rate_per_sec, .. } => Some(*rate_per_sec),
            Mode::Closed { .. } => None,
        }
    }

    /// Which times this mode's requests have apart from their reply.
    pub fn timing(&self) -> Timing {
        match self {
            Mode::Open { .. } => Timing::Open,
            Mode::Closed {
                workers: Some(_), ..
            } => Timing::Workers,
            Mode::Closed { .. } => Timing::Closed,
        }
    }

    /// The `--workers` settings, when requests come from logical clients.
    pub fn workers(&self) -> Option<&Workers> {
        match self {
            Mode::Closed { workers, .. } => workers.as_ref(),
            Mode::Open { .. } => None,
        }
    }

    /// The trace an open loop replays, when its arrivals are one's.
    pub fn trace(&self) -> Option<&Arc<dyn TraceSource>> {
        match self {
            Mode::Open { arrival, .. } => arrival.trace(),
            Mode::Closed { .. } => None,
        }
    }
}

/// Where an open loop's requests come from: each thread's source (`arrivals.rs`) is
/// built from it, and the scheduler's one hand-out loop takes from that source.
#[derive(Debug, Clone)]
pub enum ArrivalSource {
    /// An arrival process at the mode's rate (constant or Poisson gaps), each request
    /// one of the test's commands picked by its weights.
    Process(ArrivalProcess),
    /// A recorded trace (`tailrate replay`): each command at its recorded time over the
    /// speed, on its recorded client's connection, read while the run goes.
    Trace(Arc<dyn TraceSource>),
}

impl ArrivalSource {
    /// The arrival process the report names and the Poisson check tests. A trace's gaps
    /// are the recorded ones, with no process to test them against: it is named constant.
    pub fn process(&self) -> ArrivalProcess {
        match self {
            ArrivalSource::Process(process) => *process,
            ArrivalSource::Trace(_) => ArrivalProcess::Constant,
        }
    }

    /// The trace, when the arrivals are a trace's.
    pub fn trace(&self) -> Option<&Arc<dyn TraceSource>> {
        match self {
            ArrivalSource::Trace(trace) => Some(trace),
            ArrivalSource::Process(_) => None,
        }
    }
}

impl From<ArrivalProcess> for ArrivalSource {
    fn from(process: ArrivalProcess) -> Self {
        ArrivalSource::Process(process)
    }
}

/// Two traces are the same source when they are one trace, not when they read alike.
impl PartialEq for ArrivalSource {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ArrivalSource::Process(a), ArrivalSource::Process(b)) => a == b,
            (ArrivalSource::Trace(a), ArrivalSource::Trace(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// How long a run lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// After this many requests (closed loop `-n`).
    Requests(u64),
    /// After this long.
    After(Duration),
}
